"""``evalcore``: headless audits for pipelines.

Every subcommand prints a readable report, or JSON with ``--json``. Any problem with
the input prints one line on stderr (``evalcore: error: ...``) and exits with status 1;
a traceback never reaches the user.

One module per command (:mod:`.validate`, :mod:`.agreement`, :mod:`.bias`, :mod:`.winrate`,
:mod:`.superficial`, :mod:`.position`, :mod:`.report`, :mod:`.alt_test`, :mod:`.ppi`, :mod:`.leaderboard`),
each with ``add_parser(sub)`` and ``run(args)``; the input options, loading and output helpers
they share are in :mod:`.options`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..data import files
from ..errors import DataError, WorkspaceError

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not a usage dump
        sys.stderr.write(f"evalcore: error: {message} (see 'evalcore {self.prog.split()[-1]} --help')\n"
                         if " " in self.prog else f"evalcore: error: {message} (see 'evalcore --help')\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The ``evalcore`` argument parser with its subcommands."""
    # Imported here, not at the top: main() first starts reading the input (see _read_ahead).
    from . import agreement, alt_test, bias, leaderboard, position, ppi, report, superficial, validate, winrate

    parser = _Parser(prog="evalcore", description="Audit LLM judges against human annotators.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in (validate, agreement, alt_test, bias, winrate, superficial, position, report, ppi, leaderboard):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalcore`` console script; returns the exit status.

    Parameters
    ----------
    argv
        The arguments after ``evalcore``; None reads ``sys.argv``. Called with none as the program
        itself (the console script, ``python -m evalcore.cli``), it ends the process with the
        status instead of returning it (see :func:`_exit`); called with a list, it returns.
    """
    import warnings

    # ArviZ announces its refactor on import; it is not the user's concern.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"arviz(\..*)?$")
    program = argv is None and getattr(sys.modules.get("__main__"), "main", None) is main
    ahead = _read_ahead(list(sys.argv[1:] if argv is None else argv))
    if ahead is not None and "pandas" not in sys.modules:  # a fresh process: imports to overlap
        files.prefetch(ahead)
    if not program:
        try:
            return _run(argv)
        finally:
            files.drop_prefetched()
    try:
        status = _run(argv)
    except SystemExit as exc:  # argparse: --help, a bad option
        status = _exit_status(exc.code)
    except BrokenPipeError:  # the help piped into `head`: stop quietly, as _run does for the results
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    finally:
        files.drop_prefetched()
    _exit(status)


def _exit_status(code: object) -> int:
    """The process status :class:`SystemExit` ``code`` stands for, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _exit(status: int) -> None:
    """End the program with ``status``, without the interpreter's finalization.

    At finalization an Arrow I/O thread may still release a Python buffer (a Parquet read's
    read-ahead); taking the GIL then ends that thread through a C++ frame that may not unwind,
    and the process aborts with status 134 ("terminate called without an active exception")
    after printing the right message, in about 1 run in 100. So the output is flushed, the exit
    handlers run (temporary folders of the engines, the Spark JVM), and the process ends here.
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # no console (pythonw)
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # output piped into `head`: what was lost is what it did not read
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except (OSError, ValueError):  # a closed or full stream: nothing more can be said there
            if stream is sys.stdout and status == 0:
                status = 1
    import atexit

    atexit._run_exitfuncs()  # what the interpreter would run at exit: the public atexit has no other way
    os._exit(status)


#: The commands that read an input file with evalcore's readers.
_READERS = ("validate", "agreement", "alt-test", "bias", "winrate", "superficial", "position", "report", "ppi",
            "leaderboard")


def _read_ahead(argv: list[str]) -> str | None:
    """The input file to read in a background thread while the analyses import (files.prefetch), if any.

    A fresh process spends about half a second importing pandas on one core; reading and parsing
    the file meanwhile on the other shortens the command by the time the read takes. Only the plain
    case is read ahead (one file, the default delimiter, evalcore's own reader): the result is used
    only when the command reads that very file, so a wrong guess costs only some idle-core time.
    """
    if len(argv) < 2 or argv[0] not in _READERS:
        return None
    if any(a.split("=")[0] in ("--delimiter", "--engine", "--sheet") or a in ("-h", "--help") for a in argv):
        return None
    for k, a in enumerate(argv):  # a named preset reads its files its own way
        if a == "--preset" and k + 1 < len(argv):
            a = "--preset=" + argv[k + 1]
        if a.startswith("--preset=") and a.split("=", 1)[1] not in ("auto", "none"):
            return None
    return next((a for a in argv[1:] if not a.startswith("-") and os.path.isfile(a)), None)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        from .options import auto_engine

        auto_engine(args, args.command)  # a folder of Parquet files just works (through DuckDB)
        return args.func(args)
    except (DataError, WorkspaceError) as exc:
        sys.stderr.write(f"evalcore: error: {exc}\n")
        return 1
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("evalcore: interrupted\n")
        return 130
    except MemoryError:
        sys.stderr.write("evalcore: error: the file does not fit in memory. Fix: convert it to Parquet "
                         "or split it.\n")
        return 1
    except Exception as exc:  # the user must not see a traceback, but must see what broke
        if _engine_read_error(exc):
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            sys.stderr.write(f"evalcore: error: the engine could not read the input ({detail}). Fix: check that "
                             "every file it reads is a complete Parquet or CSV file (re-export the one named), or "
                             "run without --engine for the in-memory reader's diagnosis.\n")
            return 1
        sys.stderr.write(f"evalcore: error: unexpected {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
                         "(this is a bug in evalcore; please report it with the file's first lines)\n")
        return 1


def _engine_read_error(exc: Exception) -> bool:
    """Whether ``exc`` is DuckDB failing on the files it reads, which it opens only when the query runs (a
    damaged Parquet file among a folder's): the input's fault, not evalcore's."""
    duckdb = sys.modules.get("duckdb")  # never imported here: only a command that used the engine has it
    kinds = tuple(getattr(duckdb, n, None) for n in ("InvalidInputException", "IOException"))
    return duckdb is not None and all(isinstance(k, type) for k in kinds) and isinstance(exc, kinds)
