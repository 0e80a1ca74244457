"""Benchmark: the grouped agreement table on 1,000,000 judgments, as a ratio to reading the file.

Data: 40,000 items x 5 criteria x (3 human annotators + 2 judges) = 1,000,000 rows, 8 languages,
criteria on {0,1,2}. The reference is ``pandas.read_csv`` of the same CSV, timed in the same run.

Goals: point estimates take no longer than reading the file (ratio <= 1); 1,000
bootstrap resamples take no longer than 10 times that (ratio <= 10).

Each step is timed in interleaved rounds with the reference; the report gives the best-of ratio and
the median of the per-round ratios. The rows as exported (sorted by item, raters in the same order in
every unit) and the same rows shuffled (count_units's slowest case: nothing repeats) are both measured.

Run: ``python benchmarks/bench_agreement.py [--items 40000] [--boot 1000] [--repeat 7]``.

``--hanna`` times instead what HANNA's Agreement page computes (145,728 rows, 20 judges whose averaged scores take
up to 127 values): the table grouped by criterion with ``--boot`` resamples on the counted units, each round in a
fresh process (wall-clock and CPU time, the CPU time steadier on a shared machine); ``--against DIR`` times a
second checkout (e.g. the commit before a change, ``git archive <commit> | tar -x -C DIR``) in the same rounds:

    python benchmarks/bench_agreement.py --hanna --repeat 5 --against /tmp/old
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units


def make_file(path: Path, *, n_items: int, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    langs = np.array(["en", "fr", "de", "hi", "ja", "sw", "bn", "zh"])
    crits = np.array(["LA", "OCQ", "TQ", "PC", "H"])
    raters = ["ann1", "ann2", "ann3", "gpt-4", "llama-3"]
    kinds = ["human"] * 3 + ["judge"] * 2
    item = np.repeat(np.arange(n_items), len(crits) * len(raters))
    crit = np.tile(np.repeat(crits, len(raters)), n_items)
    rater = np.tile(raters, n_items * len(crits))
    kind = np.tile(kinds, n_items * len(crits))
    quality = rng.choice([0, 1, 2], size=n_items * len(crits), p=[0.1, 0.3, 0.6])
    score = np.repeat(quality, len(raters))
    noise = rng.random(len(score)) < 0.25
    score = np.where(noise, rng.integers(0, 3, len(score)), score)
    frame = pd.DataFrame({
        "item_id": [f"it{i:06d}" for i in item], "language": langs[item % len(langs)], "criterion": crit,
        "rater": rater, "rater_kind": kind, "score": score,
    })
    frame.to_csv(path, index=False)
    return len(frame)


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run(path: Path, *, repeat: int, boot: int) -> dict[str, list[float]]:
    """Interleaved rounds: the reference and each of our steps once per round, so drift hits all alike."""
    by = ["language", "criterion"]
    times: dict[str, list[float]] = {k: [] for k in ("read", "e2e", "e2e_boot", "count_units", "point", "boot")}
    frame = pd.read_csv(path)
    agreement(frame, by=by, n_boot=0)  # numba's compiled passes: loaded from its cache (or compiled) once
    for _ in range(repeat):
        t, frame = timed(lambda: pd.read_csv(path))
        times["read"].append(t)
        times["e2e"].append(timed(lambda: agreement(frame, by=by, n_boot=0))[0])
        times["e2e_boot"].append(timed(lambda: agreement(frame, by=by, n_boot=boot, seed=0))[0])
        t, units = timed(lambda: count_units(frame))
        times["count_units"].append(t)
        times["point"].append(timed(lambda: agreement(units, by=by, n_boot=0))[0])
        times["boot"].append(timed(lambda: agreement(units, by=by, n_boot=boot, seed=0))[0])
    return times


def report(name: str, times: dict[str, list[float]], boot: int) -> None:
    read = np.asarray(times["read"])

    def line(label: str, key: str, goal: str = "") -> None:
        t = np.asarray(times[key])
        ratio_best = t.min() / read.min()
        ratio_med = float(np.median(t / read))
        print(f"  {label:34s} best {t.min():6.3f} s  ratio {ratio_best:5.2f}   median per-round ratio "
              f"{ratio_med:5.2f}  {goal}")

    print(f"{name}: pandas.read_csv best {read.min():.3f} s, median {np.median(read):.3f} s (reference)")
    line("point estimates, end to end", "e2e", "(goal <= 1)")
    line(f"{boot} resamples, end to end", "e2e_boot", "(goal <= 10)")
    line("count_units (per-unit counts)", "count_units")
    line("point estimates from units", "point")
    line(f"{boot} resamples from units", "boot")


HANNA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "hanna" / "hanna_metric_scores_llm.csv"
#: One timed table in a fresh process (run with the checkout as its working directory): prints wall and CPU seconds.
HANNA_TABLE = """
import resource, sys, time
from evalcore.data.ingest import load
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
units = count_units(load(sys.argv[1], preset="hanna").frame)
agreement(units, by=["criterion"], n_boot=10, seed=0)  # numba's passes and scipy loaded, as in the app
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
t, c = time.perf_counter(), cpu()
agreement(units, by=["criterion"], n_boot=int(sys.argv[2]), seed=0)
print(time.perf_counter() - t, cpu() - c)
"""


def hanna(boot: int, repeat: int, against: Path | None) -> None:
    """HANNA's table by criterion in fresh processes, this checkout and ``against`` in turn."""
    import subprocess
    import sys

    trees = {"this": Path(__file__).resolve().parents[1], **({"against": against.resolve()} if against else {})}
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    for r in range(repeat):
        for name, tree in (list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]):
            out = subprocess.run([sys.executable, "-c", HANNA_TABLE, str(HANNA), str(boot)], cwd=tree,
                                 capture_output=True, text=True, check=True).stdout.split()
            times[name].append((float(out[0]), float(out[1])))
            print(f"round {r + 1}: {name:<8} wall {times[name][-1][0]:6.2f} s  CPU {times[name][-1][1]:6.2f} s  "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    for name, ts in times.items():
        wall, cpu = [t[0] for t in ts], [t[1] for t in ts]
        print(f"{name:<8} wall best {min(wall):.2f} s, median {np.median(wall):.2f} s; "
              f"CPU best {min(cpu):.2f} s, median {np.median(cpu):.2f} s")
    if against:
        for i, what in enumerate(("wall", "CPU")):
            new, old = [t[i] for t in times["this"]], [t[i] for t in times["against"]]
            print(f"this / against, {what}: best {min(new) / min(old):.2f}x, "
                  f"median {np.median(new) / np.median(old):.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--hanna", action="store_true", help="time HANNA's table by criterion instead")
    ap.add_argument("--against", type=Path, help="with --hanna: a second checkout timed in the same rounds")
    args = ap.parse_args()
    if args.hanna:
        print(f"HANNA by criterion, {args.boot:,} resamples; {platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}")
        hanna(args.boot, args.repeat, args.against)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.csv"
        rows = make_file(path, n_items=args.items)
        size = path.stat().st_size / 2**20
        # The same rows shuffled: nothing repeats, so count_units hashes every row (its slowest case).
        shuffled = Path(tmp) / "shuffled.csv"
        pd.read_csv(path).sample(frac=1, random_state=0).to_csv(shuffled, index=False)
        t0 = time.perf_counter()
        first = agreement(pd.read_csv(path), by=["language", "criterion"], n_boot=0)
        first_call = time.perf_counter() - t0
        print(f"rows={rows:,} file={size:.1f} MB cells={len(first.drop_duplicates(['language', 'criterion', 'judge']))}"
              f" (language x criterion x source); each step {args.repeat} rounds")
        print(f"first call in this process (read + table, numba passes loaded or compiled): {first_call:.3f} s")
        report("rows as exported (sorted by item)", run(path, repeat=args.repeat, boot=args.boot), args.boot)
        report("rows shuffled", run(shuffled, repeat=args.repeat, boot=args.boot), args.boot)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
          f"numpy {np.__version__}, pandas {pd.__version__}")


if __name__ == "__main__":
    main()
