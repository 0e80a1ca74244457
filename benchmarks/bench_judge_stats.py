"""Benchmark: the measures of one judge over 1,000 resamples (``judge_stats``) on HANNA, per judge, one thread.

HANNA's Agreement page computes, per criterion and judge, every judge measure on the data and 1,000 item resamples:
weights (6 criteria, 1,001, about 400 patterns), judges whose averaged scores take up to 127 categories. This times
``evalcore.pointwise.agreement.measures.judge_stats`` alone on each of the 20 judges' patterns, with one BLAS thread
(as the table runs it), CPU time of the thread and wall time, best of ``--repeat``; ``--against DIR`` times a second
checkout (e.g. ``git archive <commit> | tar -x -C DIR``) in a fresh process in the same rounds, and prints the
ratios. The resamples' draws are the same in both (the families are built by each checkout's own code).

    python benchmarks/bench_judge_stats.py --repeat 5 --against /tmp/old
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

HANNA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "hanna" / "hanna_metric_scores_llm.csv"
#: Run in a fresh process with the checkout as its working directory: prints per-judge best CPU and wall seconds.
CHILD = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from evalcore.data.ingest import load
from evalcore.pointwise.agreement import passes as P, table as T
from evalcore.pointwise.agreement.groups import group_codes
from evalcore.pointwise.agreement.measures import judge_stats
from evalcore.pointwise.agreement.units import count_units
from evalcore.stats.bootstrap import root_seed
path, boot, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
P.LOAD_FROM = 0  # a long-lived process (the app): the compiled passes where the table is large enough
units = count_units(load(path, preset="hanna").frame)
gcodes, keys = group_codes(units, ["criterion"])
cells = T._cells(units, gcodes, keys, nominal=False, n_boot=boot, level=0.95, root=root_seed(0))
out = {"cpu": [], "wall": []}
with threadpool_limits(1, user_api="blas"):
    for k, name in enumerate(units.judges):
        jc = units.judge_codes[k]
        f = cells.family(np.flatnonzero(units.has_human & (jc >= 0)), jc, name)
        args = (f.counts, f.weights, f.judge, f.values, cells.q_scale)
        judge_stats(*args)  # numba's passes loaded (or compiled) once
        cpu, wall = [], []
        for _ in range(repeat):
            c, t = time.thread_time(), time.perf_counter()
            judge_stats(*args)
            cpu.append(time.thread_time() - c)
            wall.append(time.perf_counter() - t)
        out["cpu"].append(min(cpu))
        out["wall"].append(min(wall))
print(json.dumps(out))
"""


def run(tree: Path, boot: int, repeat: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    r = subprocess.run([sys.executable, "-c", CHILD, str(HANNA), str(boot), str(repeat)], cwd=tree, env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="timings per judge (best kept) and rounds")
    ap.add_argument("--against", type=Path, help="a second checkout timed in the same rounds")
    args = ap.parse_args()
    print(f"judge_stats on HANNA by criterion, {args.boot:,} resamples, one BLAS thread; {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    trees = {"this": Path(__file__).resolve().parents[1]}
    if args.against:
        trees["against"] = args.against.resolve()
    best: dict[str, dict[str, float]] = {name: {"cpu": np.inf, "wall": np.inf} for name in trees}
    for r in range(args.repeat):
        for name, tree in trees.items():
            t = run(tree, args.boot, args.repeat)
            cpu, wall = 1e3 * np.mean(t["cpu"]), 1e3 * np.mean(t["wall"])
            best[name] = {"cpu": min(best[name]["cpu"], cpu), "wall": min(best[name]["wall"], wall)}
            print(f"round {r + 1}: {name:<8} per judge: CPU {cpu:6.1f} ms, wall {wall:6.1f} ms "
                  f"(20 judges: CPU {sum(t['cpu']):.2f} s); load {os.getloadavg()[0]:.1f}", flush=True)
    for name, b in best.items():
        print(f"{name:<8} best per judge: CPU {b['cpu']:.1f} ms, wall {b['wall']:.1f} ms")
    if args.against:
        for what in ("cpu", "wall"):
            print(f"against / this, {what}: {best['against'][what] / best['this'][what]:.2f}x")


if __name__ == "__main__":
    main()
