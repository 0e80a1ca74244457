"""Benchmark: AlpacaEval's length-controlled win rate on the bundled sample, beside the previous path.

Data: ``sample_data/comparisons_pairwise.csv`` (6 system pairs x 150 items), loaded with
``evalcore.data.ingest.load(path, table="comparisons")``; the judge is the first judge by name.

Measured, our path and the previous one (``tests/unit/pairwise/test_length_controlled_kernel.py``: the previous
``alpacaeval_lc_exact`` with its kernel, and liblinear through ``LogisticRegression``), in one run:

* in-process, warm: ``length_controlled(frame, judges=judge, alpha=0.5, q="superficial")`` (1,000 resamples per
  pair), best of ``--rounds`` interleaved rounds, wall and CPU (user + sys, all threads); the two tables are
  asserted equal to the last bit; and its parts: the point estimates (liblinear, 6 x 51 fits) and the resample
  fits (``alpacaeval_lc_exact`` on 6 x 1,000 resamples);
* in a fresh process with numba's cache filled: the first call (imports, numba's cache load, the call);
* whole processes, as a user runs it: ``python -m evalcore.cli superficial sample_data/comparisons_pairwise.csv
  --length-controlled --q superficial`` (every judge), and the same command with the previous path patched in.

Goal: the same numbers, and at most ~1.5 s warm for the sample's 6 pairs (it was 6.8 s).

Run: ``python benchmarks/bench_length_controlled.py`` (about two minutes on 2 cores); smoke run: ``--quick``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "comparisons_pairwise.csv"
PREVIOUS = ("import pytest; from tests.unit.pairwise.test_length_controlled_kernel import use_previous_path; "
            "mp = pytest.MonkeyPatch(); use_previous_path(mp); ")


def _load():
    from evalcore.data.ingest import load

    frame = load(str(SAMPLE), table="comparisons").frame
    judge = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())[0]
    return frame, judge


def _timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def _best(fns: dict, rounds: int) -> dict:
    """Best wall and CPU of each function over interleaved rounds."""
    best = {k: (float("inf"), float("inf")) for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            _, wall, cpu = _timed(fn)
            best[k] = (min(best[k][0], wall), min(best[k][1], cpu))
    return best


def _in_process(rounds: int, n_boot: int) -> None:
    import numpy as np
    import pandas as pd
    import pytest

    from evalcore.pairwise import superficial as sp
    from tests.unit.pairwise.test_length_controlled_kernel import _pairs, use_previous_path

    frame, judge = _load()
    pairs = list(_pairs(frame, judge, "superficial"))
    ours = {
        "length_controlled": lambda: sp.length_controlled(frame, judges=judge, alpha=0.5, q="superficial",
                                                          n_boot=n_boot),
        "point estimates (liblinear)": lambda: [sp.alpacaeval_lc(d, p) for _, d, p, _ in pairs],
        "resample fits": lambda: [sp.alpacaeval_lc_exact(d, p, W[1:n_boot + 1]) for _, d, p, W in pairs],
    }
    mp = pytest.MonkeyPatch()

    def previous(key):
        def run():
            use_previous_path(mp)
            try:
                return ours[key]()
            finally:
                mp.undo()
        return run

    fns = {}
    for k in ours:
        fns[("ours", k)], fns[("previous", k)] = ours[k], previous(k)
    new, old = fns[("ours", "length_controlled")](), fns[("previous", "length_controlled")]()  # warm up
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    for a, b in zip(fns[("ours", "resample fits")](), fns[("previous", "resample fits")]()):
        assert all(np.array_equal(a[k], b[k]) for k in a)
    best = _best(fns, rounds)
    print(f"in-process, warm, judge {judge}, {len(pairs)} pairs, {n_boot} resamples; best of {rounds} "
          "(wall / CPU user+sys):")
    print("| step | previous | ours | ratio (wall) | ratio (CPU) |\n|---|---|---|---|---|")
    for k in ours:
        (ow, oc), (nw, nc) = best[("previous", k)], best[("ours", k)]
        print(f"| {k} | {ow:.3f} s / {oc:.3f} s | {nw:.3f} s / {nc:.3f} s | {ow / nw:.1f}x | {oc / nc:.1f}x |")
    print("tables equal to the last bit: yes")


def _child(code: str) -> tuple[float, float, str]:
    """Wall and CPU (user + sys of the child) of ``python -c code``; its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


def _first_call(rounds: int) -> None:
    body = ("import time; t0 = time.perf_counter(); c0 = time.process_time(); "
            "from evalcore.pairwise import superficial as sp; from evalcore.data.ingest import load; "
            f"f = load({str(SAMPLE)!r}, table='comparisons').frame; "
            "j = sorted(f.loc[f.rater_kind == 'judge', 'rater'].astype(str).unique())[0]; "
            "t = time.perf_counter(); c = time.process_time(); "
            "sp.length_controlled(f, judges=j, alpha=0.5, q='superficial'); "
            "print(time.perf_counter() - t, time.process_time() - c, time.perf_counter() - t0)")
    _child(body)
    _child(PREVIOUS + body)  # fill numba's cache for both
    best = {}
    for _ in range(rounds):
        for name, code in (("ours", body), ("previous", PREVIOUS + body)):
            wall, cpu, total = (float(v) for v in _child(code)[2].split())
            prev = best.get(name, (float("inf"),) * 3)
            best[name] = (min(prev[0], wall), min(prev[1], cpu), min(prev[2], total))
    print(f"\nfirst call in a fresh process, numba's cache filled; best of {rounds}:")
    print("| path | the call: wall / CPU | imports + load + call (wall) |\n|---|---|---|")
    for name in ("previous", "ours"):
        w, c, tot = best[name]
        print(f"| {name} | {w:.3f} s / {c:.3f} s | {tot:.3f} s |")


def _whole_process(rounds: int) -> None:
    argv = ["superficial", str(SAMPLE), "--length-controlled", "--q", "superficial"]
    cli = f"import sys; from evalcore.cli import main; sys.exit(main({argv!r}))"
    outs = {name: _child(code)[2] for name, code in (("ours", cli), ("previous", PREVIOUS + cli))}
    assert outs["ours"] == outs["previous"], "the CLI's output differs from the previous path's"
    best = {}
    for _ in range(rounds):
        for name, code in (("ours", cli), ("previous", PREVIOUS + cli)):
            wall, cpu, _ = _child(code)
            prev = best.get(name, (float("inf"),) * 2)
            best[name] = (min(prev[0], wall), min(prev[1], cpu))
    print(f"\nwhole process: `evalcore superficial {SAMPLE.name} --length-controlled --q superficial` "
          f"(every judge); best of {rounds}; output identical:")
    print("| path | wall | CPU (user+sys) |\n|---|---|---|")
    for name in ("previous", "ours"):
        print(f"| {name} | {best[name][0]:.2f} s | {best[name][1]:.2f} s |")
    (ow, oc), (nw, nc) = best["previous"], best["ours"]
    print(f"| ratio | {ow / nw:.1f}x | {oc / nc:.1f}x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a smoke run: 100 resamples, 1 round")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    rounds, n_boot = (1, 100) if args.quick else (args.rounds, 1000)
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f} at the start")
    _in_process(rounds, n_boot)
    _first_call(rounds)
    _whole_process(max(1, rounds // 2 + 1))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
