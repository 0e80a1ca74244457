"""Benchmark: the first Dawid-Skene fit and ``evalcore winrate`` from a cold start (a fresh process).

Goals (issue: compiled code cached on disk), in a fresh process on a machine where evalcore ran once before:
the first Dawid-Skene fit of a pair takes at most 2 s, and ``evalcore winrate sample_data/comparisons_pairwise.csv``
at most 5 s as a whole process.

Each case is a fresh interpreter, run in interleaved rounds so that drift on a shared machine hits all alike:

- ``import pandas``: a bare ``python -c "import pandas"``, the floor of any command;
- ``first fit``: read the bundled sample, then one ``dawid_skene`` fit of cirrus-70b vs atlas-7b (4 chains x
  (1000 + 1000) steps, the defaults), timed in-process (wall and CPU of that one call, imports it triggers
  included) and as the whole process;
- ``evalcore winrate``: the command on the bundled sample (6 pairs), whole process;

each three ways: **ours** (warm disk cache: ``EVALCORE_CACHE_DIR`` pointing at a folder filled by a first
run), **cold cache** (the same code, ``EVALCORE_CACHE_DIR`` an empty folder each round: numba compiles every
kernel, what a first run on a machine pays), and the **old path** (warm cache, but as the code ran before:
``nutpie.sample`` with ``import nutpie``, which imports ArviZ, matplotlib and xarray, and R-hat/ESS from
``arviz.rhat``/``arviz.ess``, whose numba helpers compile in every process). The three give the same numbers
(the tests check the draws and the diagnostics bit for bit); the script checks the printed tables are equal.

Reported: best-of and median wall time, and CPU time (user + system of the child, from ``getrusage``), which
other jobs on a shared machine disturb less; ratios are best ours / best reference.

Run: ``python benchmarks/bench_cold_start.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "comparisons_pairwise.csv"

#: the old path: nutpie.sample (ArviZ imported with nutpie) and ArviZ's R-hat and ESS
OLD_PATH = """
import numpy as np
from evalcore.pairwise import dawid_skene as dsm, nuts
nuts.core = lambda: None  # nutpie.sample, as before


def _arviz_diagnostics(chains):
    import arviz as az
    ds = az.convert_to_dataset({v: a for v, a in chains.items()})
    rh, es = az.rhat(ds), az.ess(ds)
    worst_r = max(float(np.nanmax(rh[v].values)) for v in chains)
    worst_e = min(float(np.nanmin(es[v].values)) for v in chains)
    return float(rh["p"].values), float(es["p"].values), worst_r, worst_e


dsm._diagnostics = _arviz_diagnostics
"""

FIRST_FIT = """
import json, sys, time
from evalcore.data import ingest
from evalcore.pairwise.pairs import pair_data
frame = ingest.load_samples()["comparisons"].frame
pair = pair_data(frame, "cirrus-70b", "atlas-7b")
from evalcore.pairwise.dawid_skene import dawid_skene
w, c = time.perf_counter(), time.process_time()
r = dawid_skene(pair)
print(json.dumps({"fit_wall": time.perf_counter() - w, "fit_cpu": time.process_time() - c,
                  "result": [r.p_mean, r.p_mode, r.ci_low, r.ci_high, r.rhat, r.ess]}))
"""

CLI = "import sys; from evalcore.cli import main; raise SystemExit(main(sys.argv[1:]))"


def commands(old: bool) -> dict[str, list[str]]:
    py, pre = sys.executable, (OLD_PATH if old else "")
    return {"import pandas": [py, "-c", "import pandas"],
            "first fit": [py, "-c", pre + FIRST_FIT],
            "evalcore winrate": [py, "-c", pre + CLI, "winrate", str(SAMPLE)]}


def run(cmd: list[str], cache: Path) -> dict:
    """One fresh process: wall and CPU time (user + system), and what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(EVALCORE_CACHE_DIR=str(cache), EVALCORE_WARMUP="0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rec = {"wall": wall, "cpu": cpu, "stdout": out.stdout}
    if out.stdout.startswith("{"):
        rec.update(json.loads(out.stdout))
    return rec


def table_of(stdout: str) -> str:
    """The command's table without its timing line."""
    return "\n".join(line for line in stdout.splitlines() if " pair(s) in " not in line)


def rounds(repeat: int, warm: Path, scratch: Path) -> dict[tuple[str, str], list[dict]]:
    """Every case of every way, interleaved, ``repeat`` rounds."""
    ways = {"ours": (False, False), "cold cache": (False, True), "old path": (True, False)}
    got: dict[tuple[str, str], list[dict]] = {}
    for r in range(repeat):
        for way, (old, cold) in ways.items():
            for case, cmd in commands(old).items():
                if case == "import pandas" and way != "ours":
                    continue
                cache = Path(tempfile.mkdtemp(dir=scratch, prefix=f"cold{r}-")) if cold else warm
                got.setdefault((case, way), []).append(run(cmd, cache))
        print(f"round {r + 1}/{repeat} done", file=sys.stderr)
    return got


def check_same(got: dict) -> None:
    """The three ways print the same numbers."""
    fits = {way: json.dumps(got[("first fit", way)][0]["result"]) for way in ("ours", "cold cache", "old path")}
    tables = {way: table_of(got[("evalcore winrate", way)][0]["stdout"]) for way in ("ours", "cold cache", "old path")}
    assert len(set(fits.values())) == 1, fits
    assert len(set(tables.values())) == 1, tables
    print("the same results every way: first fit", fits["ours"], "and the winrate table")


def report(got: dict) -> None:
    def best(case, way, key="wall"):
        return min(x[key] for x in got[(case, way)])

    def med(case, way, key="wall"):
        return statistics.median(x[key] for x in got[(case, way)])

    base = best("import pandas", "ours")
    print(f"\nimport pandas: best {base:.2f} s wall, {best('import pandas', 'ours', 'cpu'):.2f} s CPU\n")
    print("| case | way | best wall | median wall | best CPU | in-process first fit (wall / CPU) | "
          "ours / this (wall) | this / import pandas |")
    print("|---|---|---|---|---|---|---|---|")
    for case in ("first fit", "evalcore winrate"):
        for way in ("ours", "cold cache", "old path"):
            fit = ""
            if case == "first fit":
                fit = f"{best(case, way, 'fit_wall'):.2f} s / {best(case, way, 'fit_cpu'):.2f} s"
            print(f"| {case} | {way} | {best(case, way):.2f} s | {med(case, way):.2f} s | {best(case, way, 'cpu'):.2f} s"
                  f" | {fit} | {best(case, 'ours') / best(case, way):.2f} | {best(case, way) / base:.1f}x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory(prefix="evalcore-bench-cache-") as scratch:
        warm = Path(scratch) / "warm"
        for cmd in commands(False).values():  # fill the warm cache: "run once before"
            run(cmd, warm)
        got = rounds(args.repeat, warm, Path(scratch))
    check_same(got)
    report(got)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
