"""What every command shares: the input options, loading the input, and writing results.

:func:`add_input_args` declares the file and mapping options, :func:`load_input` reads the file
(a preset, a plain table or a wide file) into a validated table, :func:`load_table` insists on
the table kind a command needs, and :func:`records` / :func:`text_table` turn a result into
JSON records or a terminal table.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from ..columns import TABLES
from ..data.wide import WideSpec
from ..errors import DataError


def _mapping(pairs: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        if "=" not in p:
            raise DataError(f"--map expects SOURCE=CANONICAL, got '{p}'",
                            fix="write e.g. --map annotator=rater --map grade=score")
        src, dst = p.split("=", 1)
        out[src.strip()] = dst.strip()
    return out


def _declared(pairs: Sequence[str] | None, option: str, example: str) -> dict[str, str]:
    """``--scale``/``--order`` values, ``CRITERION=VALUE`` each, as ``{criterion: value}``."""
    out: dict[str, str] = {}
    for p in pairs or []:
        crit, sep, value = p.partition("=")
        if not sep or not crit.strip() or not value.strip():
            raise DataError(f"{option} expects CRITERION=VALUE, got '{p}'",
                            fix=f"write e.g. {option} '{example}' (the criterion '*' stands for every criterion)")
        if crit.strip() in out:
            raise DataError(f"{option} names criterion '{crit.strip()}' twice", fix="give each criterion once")
        out[crit.strip()] = value.strip()
    return out


def declarations(args: argparse.Namespace) -> dict:
    """The ``scale`` and ``order`` keywords of :func:`evalcore.data.ingest.load` from ``--scale`` and
    ``--order`` (empty when neither was given)."""
    scale = _declared(getattr(args, "scale", None), "--scale", "stance=nominal")
    order = _declared(getattr(args, "order", None), "--order", "quality=bad,ok,good")
    return {k: v for k, v in (("scale", scale), ("order", order)) if v}


def add_input_args(p: argparse.ArgumentParser) -> None:
    """The input options of every command: the files, the preset, the column mapping, wide files."""
    from ..data.presets import PRESETS

    p.add_argument("files", nargs="+", metavar="FILE",
                   help="the data file (or, with a preset, several files or a folder)")
    p.add_argument("--preset", default="auto", choices=["auto", "none", *PRESETS],
                   help="a known format (default: detect one; 'none' for a plain table)")
    p.add_argument("--map", action="append", metavar="SRC=CANONICAL",
                   help="map a column of the file to a canonical name, e.g. --map annotator=rater")
    p.add_argument("--table", choices=TABLES, help="force the table kind (default: from the columns)")
    p.add_argument("--sheet", help="Excel sheet to read when the workbook has several")
    p.add_argument("--delimiter", help="force the CSV delimiter (default: detected)")
    p.add_argument("--wide-humans", nargs="+", metavar="COL",
                   help="wide file: the columns holding each human annotator's scores")
    p.add_argument("--wide-judges", nargs="+", metavar="COL",
                   help="wide file: the columns holding each judge's scores")
    p.add_argument("--judge-rater", action="append", metavar="RATER",
                   help="file without a rater_kind column: a rater that is an LLM judge (repeatable); "
                        "by default raters named like models (gpt, claude, llama, qwen, prometheus, judge, ...; "
                        "see evalcore.data.raters) are judges")
    p.add_argument("--scale", action="append", metavar="CRITERION=SCALE",
                   help="ratings: the scale of a criterion, nominal, ordinal or interval (repeatable; '*' for every "
                        "criterion); by default text labels are nominal categories and numbers ordinal")
    p.add_argument("--order", action="append", metavar="CRITERION=LOW,...,HIGH",
                   help="ratings: the order of a criterion's text labels, lowest first, e.g. quality=bad,ok,good "
                        "(repeatable; '*' for every criterion): the criterion is then ordinal")


def add_audit_args(p: argparse.ArgumentParser, *, by_help: str, judge_help: str, boot_help: str) -> None:
    """Options shared by the analysis commands: grouping, judges, bootstrap, output."""
    add_input_args(p)
    p.add_argument("--by", nargs="+", metavar="COL", help=by_help)
    p.add_argument("--judge", action="append", metavar="NAME", help=judge_help)
    p.add_argument("--boot", type=int, default=1000, metavar="N", help=boot_help)
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    p.add_argument("--json", action="store_true", help="print tidy JSON records")


def _engine(value: str) -> str:
    """An ``--engine`` value: a blank one (``--engine "$UNSET"``) would silently mean "no engine"."""
    if not value.strip():
        raise argparse.ArgumentTypeError(
            "is empty. Fix: give duckdb, spark, spark:MASTER or an ibis URL such as trino://host/catalog, "
            "or leave --engine out to compute in memory")
    return value.strip()


def add_engine_arg(p: argparse.ArgumentParser) -> None:
    """``--engine``: compute the statistics in an engine (:mod:`evalcore.engines`), for data larger than memory."""
    p.add_argument("--engine", metavar="ENGINE", type=_engine,
                   help="compute the counts in an engine instead of in memory: duckdb, spark (the master from the "
                        "usual Spark settings, or spark:MASTER) or an ibis URL (trino://..., bigquery://...); FILE is "
                        "then a Parquet or CSV file, a folder of Parquet files, or a table of the engine "
                        "(needs pip install 'evalcore[engines]')")


#: The files an engine reads as one table.
_PARQUET, _CSV = (".parquet", ".pq"), (".csv", ".tsv")


def table_files(given: Sequence[str]) -> list[str] | None:
    """The Parquet or CSV files that a folder (walked, hidden files skipped), a glob (``data/*.parquet``) or
    several named files stand for; None when ``given`` is one plain file or anything else (JSON, a preset's
    files, a missing path), which the in-memory readers handle and explain."""
    import glob
    from pathlib import Path

    if len(given) == 1 and Path(given[0]).is_file():
        return None
    found: list[str] = []
    for g in given:
        p = Path(g)
        if p.is_dir():
            found += sorted(str(f) for f in p.rglob("*") if f.is_file()
                            and not any(part.startswith(".") for part in f.relative_to(p).parts))
        elif any(c in g for c in "*?[") and "://" not in g:
            found += sorted(f for f in glob.glob(g, recursive=True) if Path(f).is_file())
        elif p.is_file():
            found.append(g)
        else:
            return None
    if not found or not (all(f.lower().endswith(_PARQUET) for f in found)
                         or all(f.lower().endswith(_CSV) for f in found)):
        return None
    return found


def auto_engine(args: argparse.Namespace, command: str) -> None:
    """A folder, a glob or several files of Parquet/CSV that no preset reads: the embedded DuckDB engine.

    The README promises that a folder of Parquet files just works. A command that computes its counts in an
    engine (it has ``--engine``) gets ``--engine duckdb`` and a one-line note on stderr; a command that needs
    the rows in memory says which command or option reads such a folder. Folders a preset recognises
    (LLMBar's, PandaLM's) are left to it.
    """
    from pathlib import Path

    if not hasattr(args, "files") or getattr(args, "engine", None) or args.wide_humans or args.wide_judges \
            or args.preset not in ("auto", "none"):
        return
    found = table_files(args.files)
    if found is None:
        return
    if args.preset == "auto":
        from ..data.presets import detect_preset

        if detect_preset([Path(f) for f in args.files if Path(f).exists()] or [Path(f) for f in found]):
            return
    kind = "Parquet" if found[0].lower().endswith(_PARQUET) else "CSV"
    what = f"{len(found):,} {kind} file{'s' if len(found) > 1 else ''}"
    label = " ".join(args.files) if len(args.files) <= 2 else f"{args.files[0]} ... ({len(args.files)} paths)"
    if hasattr(args, "engine"):
        import sys

        args.engine = "duckdb"
        sys.stderr.write(f"evalcore: note: {label} is {what}: read as one table by the embedded DuckDB engine "
                         "(--engine duckdb), without loading the rows\n")
        return
    raise DataError(f"is {what}, and evalcore {command} needs the rows in memory", file=label,
                    fix="run evalcore agreement or evalcore winrate on it (they read a folder through the DuckDB "
                        "engine), or give one file")


def engine_table(args: argparse.Namespace):
    """The one input of ``--engine`` as an ibis table on that engine, ``--map`` applied (:mod:`evalcore.engines`).

    The input is a file, a folder of Parquet files or a table of the engine (:func:`evalcore.engines.engine.read`),
    or, on DuckDB, a folder of CSV files, a glob or several files of one kind (:func:`table_files`). Its labels
    are read where they are used, with ``--scale`` and ``--order`` (:func:`declarations`), by
    :func:`evalcore.engines.labels.read_labels_engine`.
    """
    from pathlib import Path

    from ..engines.engine import connect, read, read_files

    if args.wide_humans or args.wide_judges or args.preset not in ("auto", "none"):
        raise DataError("--engine reads one ratings table in the canonical columns (no preset, no wide file)",
                        fix="give one Parquet or CSV file, a folder of Parquet files or a table; convert other "
                            "formats with evalcore validate first")
    con = connect(args.engine)
    found = table_files(args.files)
    single_parquet_folder = len(args.files) == 1 and Path(args.files[0]).is_dir() and found is not None \
        and found[0].lower().endswith(_PARQUET)
    if found is None or single_parquet_folder:  # what the engine reads itself (Spark too)
        if len(args.files) != 1:
            raise DataError("--engine reads one table: a file, a folder or a glob of Parquet or CSV files",
                            fix="give the folder that holds the files, or a quoted glob such as 'data/*.parquet'")
        table = read(con, args.files[0])
    elif getattr(con, "name", "") != "duckdb":
        raise DataError(f"the {con.name} engine reads one file or one folder of Parquet files here",
                        fix="give the folder of Parquet files, or use --engine duckdb")
    else:
        table = read_files(con, found)
    mapping = _mapping(args.map)
    unknown = [c for c in mapping if c not in table.columns]
    if unknown:
        raise DataError(f"--map names a column the table lacks: '{unknown[0]}'", column=unknown[0],
                        fix="choose from: " + ", ".join(table.columns))
    return table.rename({dst: src for src, dst in mapping.items()}) if mapping else table


def load_input(args: argparse.Namespace):
    """The input of a command, read and validated (an :class:`~evalcore.data.ingest.Ingested`)."""
    from ..data.ingest import load

    mapping = _mapping(args.map)
    wide = None
    if args.wide_humans or args.wide_judges:
        from ..data import io

        if len(args.files) != 1:
            raise DataError("--wide-humans/--wide-judges read one wide file", fix="give a single file")
        raw = io.read_table(args.files[0], sheet=args.sheet, delimiter=args.delimiter)
        raters = set(args.wide_humans or []) | set(args.wide_judges or [])
        value = "winner" if args.table == "comparisons" else "score"
        wide = WideSpec(id_columns=tuple(c for c in raw.columns if c not in raters),
                        human_columns=tuple(args.wide_humans or ()), judge_columns=tuple(args.wide_judges or ()),
                        value=value)
    preset = None if args.preset in ("none", None) else args.preset
    if wide is not None:
        preset = None
    elif preset == "auto":
        from ..data.presets import detect_preset
        from pathlib import Path

        preset = detect_preset([Path(f) for f in args.files])
    return load(args.files, preset=preset, mapping=mapping, table=args.table, sheet=args.sheet,
                delimiter=args.delimiter, wide=wide, judge_raters=args.judge_rater, **declarations(args))


_NEEDS = {
    "ratings": ("this command needs pointwise ratings", "pairwise comparisons",
                "give a ratings file (item_id, rater, rater_kind, criterion, score)"),
    "comparisons": ("win rates need pairwise comparisons", "pointwise ratings",
                    "give a comparisons file (item_id, system_a, system_b, rater, rater_kind, winner)"),
}


def load_table(args: argparse.Namespace, table: str):
    """Load the input and insist it is a ``table`` (one message naming the fix otherwise)."""
    ing = load_input(args)
    if ing.table != table:
        need, other, fix = _NEEDS[table]
        raise DataError(f"{need}, but {ing.source} holds {other}", fix=fix)
    return ing


def records(frame) -> list[dict]:
    """JSON-ready records: NaN becomes null, numpy scalars become Python ones."""
    import math

    out = []
    for rec in frame.to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and math.isnan(v):
                v = None
            clean[k] = v
        out.append(clean)
    return out


#: The columns :func:`text_table` shows to 3 decimals.
_ESTIMATES = ("estimate", "ci_low", "ci_high")


#: The width the text output keeps to.
WIDTH = 120


def wrap(text: str, *, width: int = WIDTH, indent: str = "") -> str:
    """``text`` broken between words into lines of at most ``width`` characters (its own line breaks kept),
    continuation lines starting with ``indent``."""
    import textwrap

    return "\n".join(textwrap.fill(line, width=width, break_on_hyphens=False, break_long_words=False,
                                    subsequent_indent=indent) if line else line for line in text.split("\n"))


def fit_width(frame, *, undefined: str = "", width: int = WIDTH):
    """``frame`` made to print within ``width`` columns by :func:`text_table` where it can be, giving up in this
    order: empty text columns, the ``note`` column's tails (cut with an ellipsis, or the column when under 12
    characters would be left), then the ``test`` column (the direction of each test; the rule printed above
    the table states it). Counts print as whole numbers. ``--json`` keeps everything."""
    def over(f) -> int:
        return max(map(len, text_table(f, undefined=undefined).splitlines())) - width

    frame = counts_as_integers(frame)
    empty = [c for c in frame.columns if frame[c].dtype == object and frame[c].fillna("").astype(str).eq("").all()]
    frame = frame.drop(columns=empty)
    excess = over(frame)
    if excess > 0 and "note" in frame.columns:
        notes = frame["note"].fillna("").astype(str)
        keep = int(notes.str.len().max()) - excess
        frame = (frame.drop(columns="note") if keep < 12 else
                 frame.assign(note=[n if len(n) <= keep else n[:keep - 1].rstrip() + "…" for n in notes]))
        excess = over(frame)
    if excess > 0 and "test" in frame.columns:
        frame = frame.drop(columns="test")
    return frame


def counts_as_integers(frame):
    """``frame`` with its count columns (``n``, ``n_*``) written as whole numbers: a column that a missing
    count turned into floats printed "360.0"; a missing count prints as nothing."""
    import numpy as np

    out = frame.copy()
    for c in out.columns:
        if (c == "n" or str(c).startswith("n_")) and out[c].dtype.kind == "f":
            v = out[c].to_numpy()
            out[c] = np.where(np.isnan(v), "", np.nan_to_num(v).astype(np.int64).astype(str)).astype(object)
    return out


def text_table(frame, *, undefined: str = "") -> str:
    """A result table for the terminal: numbers to 3 decimals; an undefined estimate shows ``undefined``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The result, with ``estimate``, ``ci_low`` and ``ci_high`` columns.
    undefined : str
        What an undefined (NaN) estimate shows; an undefined bound shows "".

    Returns
    -------
    str
        ``DataFrame.to_string(index=False)`` of the frame with those three columns formatted.

    Why plain ``to_string``: an earlier copy of it, built from pandas' private per-column formatter, saved
    about 20 ms on the sample's ``--leaderboard`` table, nothing on the default summary (no table) and about
    0.2 s on the 2,000-row ``agreement --all`` table of the sample, against seconds for the whole command.
    The public API is worth that; the output is the same.
    """
    shown = frame.copy()
    for c in _ESTIMATES:
        blank = undefined if c == "estimate" else ""
        shown[c] = shown[c].map(lambda v, blank=blank: blank if v != v else f"{v:.3f}")
    return shown.to_string(index=False)
