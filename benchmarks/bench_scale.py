"""Benchmark: the agreement table from a folder of Parquet files through DuckDB, as the data grows.

Data: the shape of ``bench_agreement.py`` scaled up: items x 5 criteria x (3 human annotators + 2
judges), 8 languages, criteria on {0,1,2}; 25 judgments per item, written as Parquet files of
1,000,000 judgments each (40,000 items), so nothing is ever held in memory whole.

Each measurement runs in a fresh child process (``--measure FOLDER``): connect DuckDB, read the
folder lazily, compute the per-unit counts and their patterns in the engine
(:func:`evalcore.scale.agreement.count_units_engine`), then the agreement table grouped by language
and criterion from the compressed counts. It reports the wall time of that work, the process' own
wall time from start (imports included) and its peak resident memory (``ru_maxrss`` of the child,
so the generator's memory is not counted).

Goals (issue 17): 20M judgments, point estimates in at most 30 s with peak memory at most 3 GB on a
2-core machine; 100M judgments measured, with the time per row and the memory as the data grows.

Run: ``python benchmarks/bench_scale.py [--sizes 5 20 50 100] [--boot 1000] [--dir /tmp/evalcore-bench-scale]``
(sizes in millions of judgments; the folders are kept in ``--dir`` and reused when present).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROWS_PER_ITEM = 25
ITEMS_PER_FILE = 40_000


def _chunk(start: int, n_items: int, seed: int):
    """One file's rows: ``n_items`` items from item number ``start`` (bench_agreement's generator, per chunk)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng([seed, start])
    langs = np.array(["en", "fr", "de", "hi", "ja", "sw", "bn", "zh"])
    crits = np.array(["LA", "OCQ", "TQ", "PC", "H"])
    raters = np.array(["ann1", "ann2", "ann3", "gpt-4", "llama-3"])
    kinds = np.array(["human"] * 3 + ["judge"] * 2)
    n_r, n_c = len(raters), len(crits)
    item = np.repeat(np.arange(start, start + n_items), n_c * n_r)
    quality = rng.choice([0, 1, 2], size=n_items * n_c, p=[0.1, 0.3, 0.6])
    score = np.repeat(quality, n_r)
    noise = rng.random(len(score)) < 0.25
    score = np.where(noise, rng.integers(0, 3, len(score)), score)
    ids = pc.binary_join_element_wise("it", pc.utf8_lpad(pc.cast(pa.array(item), pa.string()), 9, "0"), "")
    return pa.table({
        "item_id": ids,
        "language": pa.array(langs[item % len(langs)]),
        "criterion": pa.array(np.tile(np.repeat(crits, n_r), n_items)),
        "rater": pa.array(np.tile(raters, n_items * n_c)),
        "rater_kind": pa.array(np.tile(kinds, n_items * n_c)),
        "score": pa.array(score.astype(np.int64)),
    })


def make_folder(folder: Path, *, rows: int, seed: int = 0) -> int:
    """Write ``rows`` judgments (a multiple of 25) as Parquet files in ``folder``; return the rows written."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    n_items = rows // ROWS_PER_ITEM
    done = 0
    for k, start in enumerate(range(0, n_items, ITEMS_PER_FILE)):
        n = min(ITEMS_PER_FILE, n_items - start)
        pq.write_table(_chunk(start, n, seed), folder / f"part-{k:05d}.parquet")
        done += n * ROWS_PER_ITEM
    (folder / "_ROWS").write_text(str(done))
    return done


def measure(folder: Path, *, boot: int, threads: int | None, memory_limit: str | None) -> dict:
    """In this (child) process: the agreement table of ``folder`` through DuckDB; times and peak memory."""
    t_start = time.perf_counter()
    from evalcore.pointwise.agreement import agreement
    from evalcore.scale.agreement import count_units_engine
    from evalcore.scale.engine import connect, read

    con = connect("duckdb")
    if threads:
        con.raw_sql(f"SET threads = {int(threads)}")
    if memory_limit:
        con.raw_sql(f"SET memory_limit = '{memory_limit}'")
    t0 = time.perf_counter()
    units = count_units_engine(read(con, folder), by=["language", "criterion"])
    t_counts = time.perf_counter() - t0
    table = agreement(units, by=["language", "criterion"], n_boot=0)
    t_point = time.perf_counter() - t0
    out = {"rows": int((folder / "_ROWS").read_text()), "compressed_rows": len(units.item),
           "units": int(units.weight.sum()), "table_rows": len(table), "counts_s": t_counts, "point_s": t_point,
           "process_s": time.perf_counter() - t_start}
    if boot:
        t1 = time.perf_counter()
        agreement(units, by=["language", "criterion"], n_boot=boot, seed=0)
        out["boot_s"] = time.perf_counter() - t1
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return out


def _child(folder: Path, args) -> dict:
    cmd = [sys.executable, __file__, "--measure", str(folder), "--boot", str(args.boot)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.memory_limit:
        cmd += ["--memory-limit", args.memory_limit]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[5, 20, 50, 100], help="millions of judgments")
    ap.add_argument("--boot", type=int, default=1000, help="also time this many resamples from the counts (0: no)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per size; the best is reported")
    ap.add_argument("--dir", default="/tmp/evalcore-bench-scale", help="where the Parquet folders are kept")
    ap.add_argument("--threads", type=int, help="DuckDB threads (default: DuckDB's, one per core)")
    ap.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 2GB (default: DuckDB's)")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), boot=args.boot, threads=args.threads,
                                 memory_limit=args.memory_limit)))
        return
    root = Path(args.dir)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}; "
          f"DuckDB threads {args.threads or 'default'}, memory_limit {args.memory_limit or 'default'}")
    print(f"{'judgments':>12} {'parquet MB':>10} {'counts s':>9} {'point s':>8} {'process s':>9} "
          f"{'ns/row':>7} {'peak RSS MB':>11} {'rows back':>9} {f'{args.boot} boot s':>11}")
    for size in args.sizes:
        rows = int(size * 1_000_000) // ROWS_PER_ITEM * ROWS_PER_ITEM
        folder = root / f"judgments-{rows}"
        if not (folder / "_ROWS").exists():
            t = time.perf_counter()
            make_folder(folder, rows=rows)
            print(f"  (wrote {rows:,} judgments to {folder} in {time.perf_counter() - t:.0f} s)", flush=True)
        mb = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 2**20
        runs = [_child(folder, args) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["point_s"])
        peak = max(r["peak_rss_mb"] for r in runs)
        boot = f"{min(r['boot_s'] for r in runs):11.2f}" if args.boot else ""
        print(f"{best['rows']:>12,} {mb:10.0f} {best['counts_s']:9.2f} {best['point_s']:8.2f} {best['process_s']:9.2f} "
              f"{1e9 * best['point_s'] / best['rows']:7.0f} {peak:11.0f} {best['compressed_rows']:9,} {boot}",
              flush=True)


if __name__ == "__main__":
    main()
