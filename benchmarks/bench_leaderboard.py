"""Benchmark: the systems leaderboard (Bradley-Terry per source with a paired item bootstrap) against the way
FastChat computes one, on the sample and on PandaLM.

The reference is a plain transcription of FastChat's ``compute_mle_elo`` bootstrap (``lm-sys/FastChat``,
``fastchat/serve/monitor/elo_analysis.py``): for every resample and every source, the battles are turned into a
+-1 design (a win counted twice and a tie once each way, so a tie is half a win) and fitted with scikit-learn's ``LogisticRegression`` (no
penalty), one fit after another. Ours is :func:`evalcore.pairwise.leaderboard_systems.system_leaderboard`: every
resample of a source fitted at once by a batched Newton method, warm-started from the point estimate. Both use the
same resamples of the items, and the script checks that the scores on the data agree (to 1e-6) before it reports times.

It reports, for each dataset, in-process seconds (best of ``--rounds``) for ours and for the reference and their
ratio, and the whole ``evalcore leaderboard --json`` process (what a user runs), and the page's compute
(``style="length"`` too). Run: ``python benchmarks/bench_leaderboard.py [--boot 1000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.data.ingest import load_samples  # noqa: E402
from evalcore.pairwise.battles import battle_resamples, battles  # noqa: E402
from evalcore.pairwise.leaderboard_systems import system_leaderboard  # noqa: E402

PANDALM = ROOT.parent / "shared" / "datasets" / "pandalm"


def reference_scores(bt, counts: np.ndarray) -> np.ndarray:
    """FastChat's way, transcribed: one unpenalised logistic regression per source and resample, centred.
    Returns (sources, resamples, systems) scores on the natural-log scale."""
    from sklearn.linear_model import LogisticRegression

    k = len(bt.systems)
    out = np.full((len(bt.sources), len(counts), k), np.nan)
    for s in range(len(bt.sources)):
        on = bt.source == s
        a, b, y, item = bt.a[on], bt.b[on], bt.outcome[on], bt.item[on]
        for r, c in enumerate(counts):
            w = c[item].astype(float)
            # FastChat counts a win twice and a tie once each way: a tie is half a win and half a loss
            tie = y == 0.5
            rows = np.r_[np.arange(len(a)), np.arange(len(a))[tie]]
            yy = np.r_[np.where(tie, 1.0, y), np.zeros(int(tie.sum()))]
            half = np.r_[np.where(tie, 0.5, 1.0), np.full(int(tie.sum()), 0.5)]
            X = np.zeros((len(rows), k))
            X[np.arange(len(rows)), a[rows]] = 1.0
            X[np.arange(len(rows)), b[rows]] = -1.0
            sw = w[rows] * half
            keep = sw > 0
            lr = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=1000)  # unpenalised
            lr.fit(X[keep], yy[keep], sample_weight=sw[keep])
            out[s, r] = lr.coef_[0] - lr.coef_[0].mean()
    return out


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run(name: str, comparisons, path: list[str], *, n_boot: int, rounds: int) -> None:
    bt = battles(comparisons)
    counts = battle_resamples(bt, n_boot=n_boot, seed=0)
    ours = system_leaderboard(comparisons, n_boot=n_boot, seed=0)
    # the same numbers: our point scores against the reference's on the data (all counts 1)
    point = reference_scores(bt, np.ones((1, len(bt.items)), dtype=np.int64))[:, 0]
    for s, src in enumerate(bt.sources):
        got = ours[(ours["rater"] == src) & (ours["measure"] == "bt_score")].set_index("system")["estimate"]
        diff = np.abs(got.reindex(bt.systems).to_numpy() - point[s]).max()
        assert diff < 1e-6, (name, src, diff)
    t_ours = best(lambda: system_leaderboard(comparisons, n_boot=n_boot, seed=0), rounds)
    t_ref50 = best(lambda: reference_scores(bt, counts[:50]), 1)
    t_ref = t_ref50 * n_boot / 50  # the reference is one fit after another: linear in the resamples
    t_style = best(lambda: system_leaderboard(comparisons, style="length", n_boot=n_boot, seed=0), rounds)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "evalcore.cli", "leaderboard", *path, "--boot", str(n_boot),
                          "--json"], capture_output=True, text=True, cwd=ROOT)
    t_cli = time.perf_counter() - t
    assert out.returncode == 0, out.stderr
    print(f"{name}: {len(bt.sources)} sources, {len(bt.systems)} systems, {len(bt.item):,} battles, "
          f"{n_boot} resamples; every source's scores equal FastChat's fit to 1e-6")
    print(f"  ours {t_ours:.2f} s in-process | reference {t_ref:.1f} s (50 resamples timed, x{n_boot // 50}) | "
          f"ratio {t_ref / t_ours:.0f}x | with style=length {t_style:.2f} s | evalcore leaderboard process "
          f"{t_cli:.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sample = load_samples()["comparisons"].frame
    run("sample", sample, [str(ROOT / "sample_data" / "comparisons_pairwise.csv")], n_boot=args.boot,
        rounds=args.rounds)
    if PANDALM.exists():
        import evalcore

        run("PandaLM", evalcore.read(PANDALM), [str(PANDALM)], n_boot=args.boot, rounds=args.rounds)
    else:
        print(f"PandaLM not found at {PANDALM}: skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
