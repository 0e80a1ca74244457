"""Benchmark: ``evalcore validate`` and ``evalcore agreement --boot 0`` on 1,000,000 judgments, as ratios to
``pandas.read_csv`` of the same file.

Data: the file of ``bench_agreement.py`` (40,000 items x 5 criteria x (3 human annotators + 2 judges) =
1,000,000 rows, 8 languages, scores on {0,1,2}) as exported (sorted by item), the same rows shuffled, and
the exported file gzip-compressed (``.csv.gz``, how judgment logs usually arrive).

Goals: the whole ``evalcore validate`` process costs at most 1.5 times a whole process that
runs a bare ``pandas.read_csv`` of the file; the whole ``evalcore agreement --boot 0`` at most 2 times.

Two measurements, each in interleaved rounds with its reference so that drift hits both alike; the
report gives the best-of ratio (best ours / best reference) and the median of the per-round ratios:

- whole process: ``python -c "import pandas as pd; pd.read_csv(f)"`` against ``python -m evalcore.cli
  validate f`` (and ``agreement f --boot 0``), each a fresh interpreter: start-up and imports count.
  The same two commands are also run with the read-ahead switched off (``files.prefetch`` replaced
  by a no-op), to show what reading the file while pandas imports saves;
- in process: ``pandas.read_csv(f)`` against the command's ``main([...])`` with its output discarded.

The whole-process runs are also reported in CPU time (user + system, from ``getrusage``), which other
jobs on a shared machine disturb less than wall-clock time; pyarrow's parser uses several threads, so
CPU time counts its work in full where wall-clock time would show it spread over the cores (and the
read-ahead shortens the wall-clock time only: it moves the read onto the core the import leaves idle).

Run: ``python benchmarks/bench_import.py [--items 40000] [--repeat 7] [--skip-shuffled] [--skip-gz]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_agreement import make_file  # noqa: E402  (the same 1M-row file as the agreement benchmark)

from evalcore.cli import main as cli_main  # noqa: E402

REFERENCE = "import sys, pandas as pd; pd.read_csv(sys.argv[1])"
#: Our command with the read-ahead switched off (files.prefetch does nothing): what the read-ahead saves.
NO_READ_AHEAD = ("import sys; from evalcore.data import files; files.prefetch = lambda path: None; "
                 "from evalcore.cli import main; raise SystemExit(main(sys.argv[1:]))")


def commands(path: Path) -> dict[str, list[str]]:
    """The reference and our two commands, each as a fresh interpreter."""
    py = sys.executable
    return {
        "read_csv": [py, "-c", REFERENCE, str(path)],
        "validate": [py, "-m", "evalcore.cli", "validate", str(path)],
        "agreement": [py, "-m", "evalcore.cli", "agreement", str(path), "--boot", "0"],
        "validate, no read-ahead": [py, "-c", NO_READ_AHEAD, "validate", str(path)],
        "agreement, no read-ahead": [py, "-c", NO_READ_AHEAD, "agreement", str(path), "--boot", "0"],
    }


#: The processes run as an installed package does: from bytecode. (This machine sets
#: PYTHONDONTWRITEBYTECODE, which would make every run compile evalcore's modules from source.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


CPU: dict[str, list[float]] = {}  # CPU seconds (user + system) of each whole-process run, by command


def run_process(cmd: list[str], name: str | None = None) -> float:
    """Wall-clock seconds of one process; its CPU seconds go to ``CPU[name]`` (steadier on a shared machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {res.stderr.decode()[-500:]}")
    if name is not None:
        CPU.setdefault(name, []).append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed


def run_inprocess(name: str, path: Path) -> float:
    t = time.perf_counter()
    if name == "read_csv":
        pd.read_csv(path)
    else:
        argv = ["validate", str(path)] if name == "validate" else ["agreement", str(path), "--boot", "0"]
        with contextlib.redirect_stdout(io.StringIO()):
            status = cli_main(argv)
        if status != 0:
            raise SystemExit(f"evalcore {' '.join(argv)} failed with status {status}")
    return time.perf_counter() - t


def rounds(names: list[str], repeat: int, runner) -> dict[str, list[float]]:
    """Interleaved rounds: the reference and the commands once per round, in a rotating order."""
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeat):
        k = r % len(names)
        order = names[k:] + names[:k]
        for n in order:
            times[n].append(runner(n))
    return times


def report(label: str, times: dict[str, list[float]], whole: bool) -> None:
    ref = np.asarray(times["read_csv"])
    print(f"  {label}: pandas.read_csv best {ref.min():.3f} s, median {np.median(ref):.3f} s (reference)")
    for name, goal in (("validate", 1.5), ("agreement", 2.0), ("validate, no read-ahead", None),
                       ("agreement, no read-ahead", None)):
        if name not in times:
            continue
        t = np.asarray(times[name])
        shown = name.replace("agreement", "agreement --boot 0")
        print(f"    {shown:34s} best {t.min():6.3f} s  ratio {t.min() / ref.min():5.2f}   median per-round ratio "
              f"{float(np.median(t / ref)):5.2f}" + (f"   (goal <= {goal:g})" if whole and goal else ""))


def measure(name: str, path: Path, repeat: int) -> None:
    cmds = commands(path)
    for n in cmds:  # warm: bytecode, numba's cache, the OS file cache
        run_process(cmds[n])
    print(f"{name} ({path.stat().st_size / 2**20:.1f} MB)")
    CPU.clear()
    report("whole process", rounds(list(cmds), repeat, lambda n: run_process(cmds[n], n)), whole=True)
    report("whole process, CPU time (user + system)", dict(CPU), whole=True)
    run_inprocess("agreement", path)
    report("in process", rounds(["read_csv", "validate", "agreement"], repeat, lambda n: run_inprocess(n, path)),
           whole=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--skip-shuffled", action="store_true")
    ap.add_argument("--skip-gz", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.csv"
        rows = make_file(path, n_items=args.items)
        print(f"rows={rows:,}; {args.repeat} interleaved rounds per measurement")
        measure("rows as exported (sorted by item)", path, args.repeat)
        if not args.skip_shuffled:
            shuffled = Path(tmp) / "shuffled.csv"
            pd.read_csv(path).sample(frac=1, random_state=0).to_csv(shuffled, index=False)
            measure("rows shuffled", shuffled, args.repeat)
        if not args.skip_gz:
            gz = Path(tmp) / "judgments.csv.gz"
            with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
            measure("gzip-compressed (.csv.gz; pandas.read_csv decompresses it too)", gz, args.repeat)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
          f"numpy {np.__version__}, pandas {pd.__version__}")


if __name__ == "__main__":
    main()
