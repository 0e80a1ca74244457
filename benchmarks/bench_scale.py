"""Benchmark: the agreement table from a folder of Parquet files through DuckDB, as the data grows.

Data: the shape of ``bench_agreement.py`` scaled up: items x 5 criteria x (3 human annotators + 2
judges), 8 languages, criteria on {0,1,2}; 25 judgments per item, written as Parquet files of
1,000,000 judgments each (40,000 items), so nothing is ever held in memory whole.

Each measurement runs in a fresh child process (``--measure FOLDER``): connect DuckDB, read the
folder lazily, compute the per-unit counts and their patterns in the engine
(:func:`evalcore.engines.agreement.count_units_engine`), then the agreement table grouped by language
and criterion from the compressed counts. It reports the wall time of that work, the process' own
wall time from start (imports included) and its peak resident memory (``ru_maxrss`` of the child,
so the generator's memory is not counted).

Goals: 20M judgments, point estimates in at most 30 s with peak memory at most 3 GB on a
2-core machine; 100M judgments measured, with the time per row and the memory as the data grows.

Larger than memory, literally (``--cgroup-memory 2GB``): each child then runs in a fresh cgroup whose
memory cap (swap included) is that size, so the kernel kills it if it ever holds more; the cgroup's own
peak (``memory.max_usage_in_bytes`` on cgroup v1, ``memory.peak`` on v2; page cache included) is
reported beside ``ru_maxrss``, and a child that dies is reported as such (signal, OOM kills, failcnt)
instead of stopping the run. The two peaks differ both ways: ``ru_maxrss`` counts the pages of shared
libraries already cached (charged to whoever read them first), the cgroup counts the page cache the
child fills itself (DuckDB's spill files), which the kernel reclaims before it kills. Needs root and
a writable memory cgroup hierarchy. For each folder the size of the data decoded is given too: Arrow's
``nbytes`` and pandas' ``memory_usage(deep=True)`` per row of one file, times the rows. ``--path pandas``
measures the in-memory path instead (``pandas.read_parquet`` of the folder, then
:func:`evalcore.pointwise.agreement.units.count_units`), the one that a cap below the decoded size must kill.

Run: ``python benchmarks/bench_scale.py [--sizes 5 20 50 100] [--boot 1000] [--dir /tmp/evalcore-bench-scale]
[--memory-limit 1GB] [--cgroup-memory 2GB] [--path duckdb|pandas]``
(sizes in millions of judgments; the folders are kept in ``--dir`` and reused when present; sizes in
bytes as DuckDB reads them: ``GB`` is 10^9 bytes, ``GiB`` 2^30).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
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


def decoded_bytes(folder: Path) -> tuple[float, float]:
    """The folder's rows decoded: (Arrow bytes, pandas bytes), from one file's bytes per row times the rows.

    Every file has the same columns and widths (fixed-width item ids), so one file's bytes per row
    stand for all of them; reading the whole folder is what this avoids.
    """
    import pyarrow.parquet as pq

    table = pq.read_table(next(iter(sorted(folder.glob("*.parquet")))))
    frame = table.to_pandas()  # what pandas.read_parquet gives: the same conversion
    rows = int((folder / "_ROWS").read_text())
    return (table.nbytes / table.num_rows * rows,
            float(frame.memory_usage(deep=True).sum()) / len(frame) * rows)


def parse_bytes(text: str) -> int:
    """``2GB``, ``1.5GiB``, ``500MB``, ``2000000000`` as bytes (``GB`` = 10^9 as in DuckDB, ``GiB`` = 2^30)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?)(i?)B?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 2GB, 1.5GiB, 500MB)")
    power = " KMGT".index(m.group(2).upper() or " ")
    return int(float(m.group(1)) * (1024 if m.group(3) else 1000) ** power)


class MemoryCap:
    """A fresh cgroup with a memory cap (swap included) for one child process; removed by :meth:`close`.

    cgroup v1 (the ``memory`` controller at ``/sys/fs/cgroup/memory``) or v2 (``memory`` among
    ``/sys/fs/cgroup/cgroup.controllers``). The child enters the cgroup itself, before Python starts
    (:meth:`wrap`), so every page it ever holds is charged to it.

    Parameters
    ----------
    limit
        The cap in bytes: past it (and after the kernel has reclaimed what page cache it can) the
        kernel's OOM killer kills the child.

    Raises
    ------
    SystemExit
        With one message saying why, when no memory cgroup can be created here (not root, no
        memory controller, a read-only ``/sys/fs/cgroup``).
    """

    V1 = Path("/sys/fs/cgroup/memory")
    V2 = Path("/sys/fs/cgroup")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        name = f"evalcore-bench-{os.getpid()}-{time.monotonic_ns()}"
        if (self.V1 / "memory.limit_in_bytes").exists():
            self.version, self.path = 1, self.V1 / name
        elif "memory" in _read(self.V2 / "cgroup.controllers").split():
            self.version, self.path = 2, self.V2 / name
        else:
            raise SystemExit("--cgroup-memory: this machine has no memory cgroup controller to write "
                             "(neither /sys/fs/cgroup/memory nor memory in /sys/fs/cgroup/cgroup.controllers); "
                             "run without --cgroup-memory")
        try:
            self.path.mkdir()
        except OSError as exc:
            raise SystemExit(f"--cgroup-memory: cannot create the cgroup {self.path} ({exc.strerror}); "
                             "it needs root and a writable cgroup hierarchy; run without --cgroup-memory") from None
        try:
            if self.version == 1:
                (self.path / "memory.limit_in_bytes").write_text(str(limit))
                # Swap would let the child hold more than the cap in all: forbid it where the kernel can.
                if (self.path / "memory.memsw.limit_in_bytes").exists():
                    (self.path / "memory.memsw.limit_in_bytes").write_text(str(limit))
            else:
                if not (self.path / "memory.max").exists():
                    raise OSError(0, "the memory controller is not enabled for its children "
                                     f"(cgroup.subtree_control of {self.V2})")
                (self.path / "memory.max").write_text(str(limit))
                if (self.path / "memory.swap.max").exists():
                    (self.path / "memory.swap.max").write_text("0")
        except OSError as exc:
            self.close()
            raise SystemExit(f"--cgroup-memory: cannot set the cap of the cgroup {self.path} "
                             f"({exc.strerror}); run without --cgroup-memory") from None

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside the cgroup: a shell writes its own pid into it, then becomes ``cmd``."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *cmd]

    def stats(self) -> dict:
        """The cgroup's peak usage in MiB (page cache included), how often it hit the cap, its OOM kills."""
        if self.version == 1:
            peak = int(_read(self.path / "memory.max_usage_in_bytes") or 0)
            failcnt = int(_read(self.path / "memory.failcnt") or 0)
            oom = dict(line.split() for line in _read(self.path / "memory.oom_control").splitlines())
            kills = int(oom.get("oom_kill", 0))
        else:
            # memory.peak needs Linux 5.19; 0 stands for "not measured" where it is missing.
            peak = int(_read(self.path / "memory.peak") or 0)
            events = dict(line.split() for line in _read(self.path / "memory.events").splitlines())
            failcnt, kills = int(events.get("max", 0)), int(events.get("oom_kill", 0))
        return {"cgroup_peak_mb": peak / 2**20, "failcnt": failcnt, "oom_kills": kills}

    def close(self) -> None:
        """Remove the cgroup (its child has exited; v1 hands the leftover page-cache charges to the parent)."""
        for _ in range(50):  # a killed child's exit can take a moment to reach the cgroup
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        print(f"  (could not remove the cgroup {self.path}; rmdir it by hand)", file=sys.stderr)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def measure(folder: Path, *, boot: int, threads: int | None, memory_limit: str | None) -> dict:
    """In this (child) process: the agreement table of ``folder`` through DuckDB; times and peak memory."""
    t_start = time.perf_counter()
    from evalcore.pointwise.agreement.table import agreement
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import connect, read

    con = connect("duckdb")
    if threads:
        con.raw_sql(f"SET threads = {int(threads)}")
    if memory_limit:
        con.raw_sql(f"SET memory_limit = '{memory_limit}'")
    # DuckDB's default limit follows the memory it sees (a cgroup's cap included): record what it used.
    limit = con.raw_sql("SELECT current_setting('memory_limit')").fetchone()[0]
    t0 = time.perf_counter()
    units = count_units_engine(read(con, folder), by=["language", "criterion"])
    t_counts = time.perf_counter() - t0
    table = agreement(units, by=["language", "criterion"], n_boot=0)
    t_point = time.perf_counter() - t0
    out = {"rows": int((folder / "_ROWS").read_text()), "compressed_rows": len(units.item),
           "units": int(units.weight.sum()), "table_rows": len(table), "counts_s": t_counts, "point_s": t_point,
           "process_s": time.perf_counter() - t_start, "duckdb_memory_limit": limit}
    if boot:
        t1 = time.perf_counter()
        agreement(units, by=["language", "criterion"], n_boot=boot, seed=0)
        out["boot_s"] = time.perf_counter() - t1
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return out


def measure_pandas(folder: Path) -> dict:
    """In this (child) process: the in-memory path, ``pandas.read_parquet`` of the whole folder then
    :func:`evalcore.pointwise.agreement.units.count_units` and the table; times and peak memory."""
    t_start = time.perf_counter()
    import pandas as pd

    from evalcore.pointwise.agreement.table import agreement
    from evalcore.pointwise.agreement.units import count_units

    t0 = time.perf_counter()
    frame = pd.read_parquet(folder)
    units = count_units(frame, segments=["language"])
    t_counts = time.perf_counter() - t0
    table = agreement(units, by=["language", "criterion"], n_boot=0)
    t_point = time.perf_counter() - t0
    # "rows back" here: the units count_units holds in memory (one per item x criterion, not compressed).
    return {"rows": len(frame), "compressed_rows": len(units.item), "table_rows": len(table), "counts_s": t_counts,
            "point_s": t_point, "process_s": time.perf_counter() - t_start,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _child(folder: Path, args) -> dict:
    """One measurement in a fresh process (in a fresh capped cgroup with ``--cgroup-memory``).

    The child's peak RSS is taken from ``wait4`` here, so a child the kernel killed has one too;
    its spill and temporary files go to a folder of its own, removed afterwards even when it was killed.
    """
    cmd = [sys.executable, __file__, "--measure", str(folder), "--boot", str(args.boot), "--path", args.path]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.memory_limit:
        cmd += ["--memory-limit", args.memory_limit]
    cap = MemoryCap(args.cgroup_memory) if args.cgroup_memory else None
    scratch = tempfile.mkdtemp(prefix="evalcore-bench-child-")
    try:
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            t = time.perf_counter()
            proc = subprocess.Popen(cap.wrap(cmd) if cap else cmd, stdout=out, stderr=err,
                                    env={**os.environ, "TMPDIR": scratch})
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
            wall = time.perf_counter() - t
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
    finally:
        stats = cap.stats() if cap else {}
        if cap:
            cap.close()
        shutil.rmtree(scratch, ignore_errors=True)
    result = {"wall_s": wall, "rss_mb": usage.ru_maxrss / 1024, **stats}  # kB on Linux
    if proc.returncode == 0:
        return {**json.loads(stdout.strip().splitlines()[-1]), **result, "outcome": "ok"}
    if proc.returncode < 0:
        why = f"killed ({signal.Signals(-proc.returncode).name}"
        why += f", OOM kills {stats['oom_kills']}, failcnt {stats['failcnt']})" if cap else ")"
    else:
        lines = stderr.strip().splitlines()
        why = f"exit {proc.returncode}: {lines[-1] if lines else 'no message'}"
    return {**result, "outcome": f"{why} after {wall:.1f} s"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[5, 20, 50, 100], help="millions of judgments")
    ap.add_argument("--boot", type=int, default=1000, help="also time this many resamples from the counts (0: no)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per size; the best is reported")
    ap.add_argument("--dir", default="/tmp/evalcore-bench-scale", help="where the Parquet folders are kept")
    ap.add_argument("--threads", type=int, help="DuckDB threads (default: DuckDB's, one per core)")
    ap.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 2GB (default: DuckDB's)")
    ap.add_argument("--cgroup-memory", type=parse_bytes,
                    help="run each child in a fresh cgroup capped at this much memory, e.g. 2GB (needs root)")
    ap.add_argument("--path", choices=["duckdb", "pandas"], default="duckdb",
                    help="duckdb: the engine path (default); pandas: pandas.read_parquet of the folder, in memory")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        if args.path == "pandas":
            print(json.dumps(measure_pandas(Path(args.measure))))
        else:
            print(json.dumps(measure(Path(args.measure), boot=args.boot, threads=args.threads,
                                     memory_limit=args.memory_limit)))
        return
    if args.cgroup_memory:
        MemoryCap(args.cgroup_memory).close()  # fail now, with its message, not after writing the data
    root = Path(args.dir)
    cap = f"{args.cgroup_memory / 1e9:.2f} GB" if args.cgroup_memory else "none"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}; "
          f"path {args.path}; DuckDB threads {args.threads or 'default'}, memory_limit "
          f"{args.memory_limit or 'default'}; cgroup memory cap {cap}")
    print(f"{'judgments':>12} {'parquet MB':>10} {'arrow GB':>8} {'pandas GB':>9} {'counts s':>9} {'point s':>8} "
          f"{'process s':>9} {'ns/row':>7} {'peak RSS MB':>11} {'cgroup MB':>9} {'rows back':>9} "
          f"{f'{args.boot} boot s':>11}  outcome")
    for size in args.sizes:
        rows = int(size * 1_000_000) // ROWS_PER_ITEM * ROWS_PER_ITEM
        folder = root / f"judgments-{rows}"
        if not (folder / "_ROWS").exists():
            t = time.perf_counter()
            make_folder(folder, rows=rows)
            print(f"  (wrote {rows:,} judgments to {folder} in {time.perf_counter() - t:.0f} s)", flush=True)
        mb = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 2**20
        arrow, pandas_ = decoded_bytes(folder)
        runs = [_child(folder, args) for _ in range(args.repeat)]
        peak = max(r["rss_mb"] for r in runs)
        cgroup = f"{max(r['cgroup_peak_mb'] for r in runs):9.0f}" if args.cgroup_memory else f"{'':9}"
        failed = [r for r in runs if r["outcome"] != "ok"]
        decoded = f"{rows:>12,} {mb:10.0f} {arrow / 1e9:8.2f} {pandas_ / 1e9:9.2f}"
        if failed:  # a failed run is the finding: report it, not the best of the others
            print(f"{decoded} {'':9} {'':8} {'':9} {'':7} {peak:11.0f} {cgroup} {'':9} {'':11}  "
                  f"{failed[0]['outcome']} ({len(failed)} of {len(runs)} runs)", flush=True)
            continue
        best = min(runs, key=lambda r: r["point_s"])
        boot = f"{min(r['boot_s'] for r in runs):11.2f}" if args.boot and "boot_s" in best else f"{'':11}"
        limit = f", DuckDB memory_limit {best['duckdb_memory_limit']}" if "duckdb_memory_limit" in best else ""
        print(f"{decoded} {best['counts_s']:9.2f} {best['point_s']:8.2f} {best['process_s']:9.2f} "
              f"{1e9 * best['point_s'] / best['rows']:7.0f} {peak:11.0f} {cgroup} {best['compressed_rows']:9,} {boot}"
              f"  ok{limit}", flush=True)


if __name__ == "__main__":
    main()
