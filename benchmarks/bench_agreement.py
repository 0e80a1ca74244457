"""Benchmark: the grouped agreement table on 1,000,000 judgments, as a ratio to reading the file.

Data: 40,000 items x 5 criteria x (3 human annotators + 2 judges) = 1,000,000 rows, 8 languages,
criteria on {0,1,2}. The reference is ``pandas.read_csv`` of the same CSV, timed in the same run.

Goals (issue 3): point estimates take no longer than reading the file (ratio <= 1); 1,000
bootstrap resamples take no longer than 10 times that (ratio <= 10).

Run: ``python benchmarks/bench_agreement.py [--items 40000] [--boot 1000] [--repeat 3]``.
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

from evalcore.agreement import agreement, prepare


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


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.csv"
        rows = make_file(path, n_items=args.items)
        size = path.stat().st_size / 2**20
        t_read, frame = best(lambda: pd.read_csv(path), args.repeat)
        by = ["language", "criterion"]
        t_prep, units = best(lambda: prepare(frame), args.repeat)
        t_point, table = best(lambda: agreement(units, by=by, n_boot=0), args.repeat)
        t_boot, table_b = best(lambda: agreement(units, by=by, n_boot=args.boot, seed=0), args.repeat)
    cells = len(table.drop_duplicates(by + ["judge"]))
    print(f"rows={rows:,} file={size:.1f} MB cells={cells} (language x criterion x source)")
    print(f"pandas.read_csv            {t_read:7.3f} s   (reference)")
    print(f"prepare (unit counts)      {t_prep:7.3f} s")
    print(f"point estimates (no boot)  {t_prep + t_point:7.3f} s   ratio {(t_prep + t_point) / t_read:5.2f}  (goal <= 1)")
    print(f"{args.boot} resamples          {t_prep + t_boot:7.3f} s   ratio {(t_prep + t_boot) / t_read:5.2f}  (goal <= 10)")
    print("from prepared units (what the app pays when only the grouping changes):")
    print(f"  point estimates          {t_point:7.3f} s   ratio {t_point / t_read:5.2f}")
    print(f"  {args.boot} resamples        {t_boot:7.3f} s   ratio {t_boot / t_read:5.2f}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
          f"numpy {np.__version__}, pandas {pd.__version__}")


if __name__ == "__main__":
    main()
