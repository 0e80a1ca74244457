"""Benchmark: CalibraEval's NOA at scale, the previous solver beside the current one in one run.

Data (seeded), the ``(items, 3)`` P("A") under the prompts s0, s1 (positions swapped), s2 (IDs swapped):

* ``sample``: as the sample's CalibraEval judge (``evalcore/data/sample.py``): one latent preference per item
  (accuracies 0.88 / 0.84, position effect 0.06), logits ``l + 0.4 + 0.2``, ``l - 0.4 + 0.2``, ``-l + 0.4 + 0.2``,
  rounded to 4 decimals: at most 10,000 distinct values, so few knots and few distinct triples;
* ``floats``: full-precision probabilities as real logs hold them (every value distinct: three knots per item),
  logits ``l + 0.6``, ``l - 0.2``, ``-l + 0.6`` with ``l ~ N(0, 2)``;
* ``noisy``: the same with independent logit noise (sd 0.3) per prompt, a judge inconsistent across prompts
  (its fit collapses at lambda 0.05, so ``fit_noa_selected`` goes on to 0.1);
* ``inconsistent`` (not run by default; ``--kinds inconsistent``): logit noise sd 2.0, whose fits collapse at
  every lambda, the worst case of ``fit_noa_selected`` (all seven lambdas tried, then a refit).

Measured, in-process: ``fit_noa`` (lambda 0.05) and ``fit_noa_selected`` (lambda chosen on a held-out third) at
180, 3,000, 30,000 and 100,000 items, ours best-of-``--rounds`` beside the previous solver (kept below as the
reference: the loss and gradient term by term on every step, scikit-learn's PAVA, the tied-value system by a dense
Cholesky factorisation) once; wall and CPU (user + sys) time, and the largest difference in the loss and in the
calibrated values of every probability (goal 1e-8). Whole processes: ``python -m evalcore.cli position FILE
--calibrate noa --boot 0 --json`` on a 100,000-item comparisons file (gold plus one judge with ``noisy``
probabilities, through a CSV), with the default estimation share (0.2: 20,000 items fitted) and with
``--estimation-share 1`` (all 100,000), against the same command with the previous solver patched in
(``python -c``; the JSON records compared), and ``pandas.read_csv`` of the file alone as a yardstick.

Goals: ``fit_noa`` and ``fit_noa_selected`` at most 1 s for 3,000 items and at most 5 s for 100,000 items, to
the same optimum as before (1e-8).

Run: ``python benchmarks/bench_calibraeval.py`` (about ten minutes on 2 cores, most of it the previous solver);
smoke run: ``--quick``; ``--no-reference-above N`` skips the previous solver above N items.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.pairwise import calibraeval as ce  # noqa: E402

# --- the previous solver (the reference) ------------------------------------------------------------------------


# The previous solver lives in the test that checks the current one against it; the benchmark times the same code.
from tests.unit.pairwise.test_calibraeval_solver import old_fit_values  # noqa: E402


def old_compress(idx):
    uniq, counts = np.unique(idx, axis=0, return_counts=True)
    return uniq, counts / len(idx)


def use_reference():
    """Patch the previous solver into the package (this process only)."""
    ce._fit_values = old_fit_values
    ce._compress = old_compress


# --- data ------------------------------------------------------------------------------------------------------


def _latent(q: float, pi: float, threshold: float) -> tuple[float, float]:
    """Mean and sd of the latent preference giving per-order accuracies q + pi and q - pi (as the sample)."""
    z1, z2 = NormalDist().inv_cdf(q + pi), NormalDist().inv_cdf(q - pi)
    return threshold * (z1 + z2) / (z1 - z2), 2 * threshold / (z1 - z2)


def _round4(x: np.ndarray) -> np.ndarray:
    """As the sample: clipped to [1e-4, 1 - 1e-4], 4 decimals, never exactly 0.5."""
    r = np.round(np.clip(x, 1e-4, 1 - 1e-4), 4)
    return np.where(r == 0.5, np.where(x > 0.5, 0.5001, 0.4999), r)


def probabilities(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "sample":
        a_better = rng.random(n) < 0.5
        (m_a, s_a), (m_b, s_b) = _latent(0.88, 0.06, 0.6), _latent(0.84, 0.06, 0.6)
        eps = rng.standard_normal(n)
        lat = np.where(a_better, m_a + s_a * eps, -m_b + s_b * eps)
        return np.column_stack([_round4(expit(lat + 0.6)), _round4(expit(lat - 0.2)), _round4(expit(-lat + 0.6))])
    lat = rng.normal(0, 2, n)
    e = rng.normal(0, {"floats": 0.0, "noisy": 0.3, "inconsistent": 2.0}[kind], (3, n))
    return np.column_stack([expit(lat + 0.6 + e[0]), expit(lat - 0.2 + e[1]), expit(-lat + 0.6 + e[2])])


def comparisons_file(n: int, seed: int, folder: Path) -> Path:
    """Gold and one judge with ``noisy`` probabilities, as ``evalcore position`` reads them."""
    rng = np.random.default_rng(seed)
    p = probabilities("noisy", n, seed)
    a_better = rng.random(n) < 0.5
    ids = [f"q{i}" for i in range(n)]
    gold = pd.DataFrame({"item_id": ids, "rater": "gold", "rater_kind": "human",
                         "winner": np.where(a_better, "a", "b"), "swapped": False})
    first = pd.DataFrame({"item_id": ids, "rater": "judge", "rater_kind": "judge",
                          "winner": np.where(p[:, 0] > 0.5, "a", "b"), "swapped": False, "prob_a": p[:, 0],
                          "prob_a_swap_position": p[:, 1], "prob_a_swap_id": p[:, 2]})
    second = pd.DataFrame({"item_id": ids, "rater": "judge", "rater_kind": "judge",
                           "winner": np.where(p[:, 2] < 0.5, "a", "b"), "swapped": True})
    path = folder / f"comparisons_{n}.csv"
    pd.concat([gold, first, second], ignore_index=True).to_csv(path, index=False)
    return path


# --- timing ----------------------------------------------------------------------------------------------------


def timed(fn, *args, **kwargs):
    t0, c0 = time.perf_counter(), os.times()
    out = fn(*args, **kwargs)
    c1 = os.times()
    return out, time.perf_counter() - t0, (c1.user - c0.user) + (c1.system - c0.system)


def run_child(cmd: list[str], timeout: float) -> tuple[float, float, str]:
    """Wall and CPU (user + sys of the child) time of a whole process, and its output."""
    t0, c0 = time.perf_counter(), os.times()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=True)
    c1 = os.times()
    return time.perf_counter() - t0, (c1.children_user - c0.children_user) + (c1.children_system
                                                                               - c0.children_system), out.stdout


def compare(ours, ref, probs) -> tuple[float, float]:
    return abs(ours.loss - ref.loss), float(np.max(np.abs(ours.apply(probs) - ref.apply(probs))))


def in_process(sizes, kinds, rounds: int, ref_above: int) -> list[dict]:
    import sklearn.isotonic  # noqa: F401  (imports outside the timings, on both sides)
    import scipy.optimize  # noqa: F401
    import scipy.sparse.linalg  # noqa: F401

    rows = []
    saved = (ce._fit_values, ce._compress)
    for n in sizes:
        for kind in kinds:
            probs = probabilities(kind, n, seed=20261126)
            for name, call in (("fit_noa", lambda: ce.fit_noa(probs)),
                               ("fit_noa_selected", lambda: ce.fit_noa_selected(probs, seed=0))):
                best = min((timed(call) for _ in range(rounds)), key=lambda r: r[1])
                ours, wall, cpu = best
                row = {"n": n, "kind": kind, "fn": name, "wall": wall, "cpu": cpu, "lam": ours.lam,
                       "iterations": ours.iterations, "knots": len(ce.knots(probs)[0])}
                if n <= ref_above:
                    use_reference()
                    try:
                        ref, rwall, rcpu = timed(call)
                    finally:
                        ce._fit_values, ce._compress = saved
                    dloss, dval = compare(ours, ref, probs)
                    row.update(ref_wall=rwall, ref_cpu=rcpu, ratio=rwall / wall, dloss=dloss, dval=dval,
                               same_lam=ref.lam == ours.lam, ref_iterations=ref.iterations)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


REFERENCE_CLI = ("import sys; sys.path.insert(0, 'benchmarks'); import bench_calibraeval as b; b.use_reference(); "
                 "from evalcore.cli import main; sys.exit(main(sys.argv[1:]))")


def whole_process(n: int, timeout: float, shares) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = comparisons_file(n, 20261126, Path(tmp))
        rc = [sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(path)!r})"]
        wall, cpu, _ = min((run_child(rc, timeout) for _ in range(3)), key=lambda r: r[0])
        rows.append({"what": "read_csv", "n": n, "wall": wall, "cpu": cpu})
        print(json.dumps(rows[-1]), flush=True)
        for share in shares:
            args = ["position", str(path), "--calibrate", "noa", "--boot", "0", "--json", "--estimation-share",
                    str(share)]
            ours = min((run_child([sys.executable, "-m", "evalcore.cli", *args], timeout) for _ in range(2)),
                       key=lambda r: r[0])
            row = {"what": "evalcore position --calibrate noa --boot 0", "n": n, "share": share, "wall": ours[0],
                   "cpu": ours[1]}
            try:
                ref = run_child([sys.executable, "-c", REFERENCE_CLI, *args], timeout)
                a, b = json.loads(ours[2]), json.loads(ref[2])
                same = len(a) == len(b) and all(
                    x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x) for x, y in zip(a, b))
                row.update(ref_wall=ref[0], ref_cpu=ref[1], ratio=ref[0] / ours[0], same_records=same)
            except subprocess.TimeoutExpired:
                row.update(ref_wall=f"> {timeout:.0f} s (stopped)")
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _close(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= 1e-8 or (x != x and y != y)
    return x == y


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="180,3000,30000,100000")
    ap.add_argument("--kinds", default="sample,floats,noisy")
    ap.add_argument("--rounds", type=int, default=3, help="best-of rounds of ours (the reference runs once)")
    ap.add_argument("--no-reference-above", type=int, default=10 ** 9, metavar="N")
    ap.add_argument("--cli-items", type=int, default=100_000)
    ap.add_argument("--timeout", type=float, default=900.0, help="time limit of each whole process (s)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 180 and 3,000 items, CLI on 3,000")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this file")
    args = ap.parse_args(argv)
    sizes = [180, 3000] if args.quick else [int(s) for s in args.sizes.split(",")]
    cli_items = 3000 if args.quick else args.cli_items
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
          f"{np.__version__}; load average at start {os.getloadavg()}", flush=True)
    rows = in_process(sizes, args.kinds.split(","), 1 if args.quick else args.rounds, args.no_reference_above)
    rows += whole_process(cli_items, args.timeout, (0.2, 1.0))
    print(f"# load average at end {os.getloadavg()}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
