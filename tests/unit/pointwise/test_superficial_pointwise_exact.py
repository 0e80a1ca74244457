"""The pointwise superficial-quality curve's compiled pass against the general path it replaced.

The reference below is the previous implementation, kept here only: for every alpha,
:func:`evalcore.stats.tau_b` and :func:`evalcore.stats.spearman_rho` of the whole weight matrix. The
new path sorts each alpha's ``P_hat`` once and makes one pass per resample; every number must be the
same to the last bit (the tests assert equality, stricter than 1e-12), on seeded data with ties of
every kind and on HANNA.
"""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
import pandas as pd
import pytest

from evalcore.pairwise.superficial import cv_records
from evalcore.pointwise import superficial as ps
from evalcore.stats.bootstrap import cell_rng, item_weights, percentile_interval, root_seed
from evalcore.stats.kendall import tau_b
from evalcore.stats.spearman import spearman_rho
from tests.helpers import needs_datasets
from tests.unit.hanna import hanna_frame

ALPHAS = np.round(np.arange(21) * 0.05, 10)


# --------------------------------------------------------------------------- the previous path


def _old_group_rows(data, g, alphas, n_boot, root, level):
    sel = data.group == g
    n = int(sel.sum())
    W = item_weights(cell_rng(root, (data.judge, *data.keys[g])), n, n_boot).T
    p, q, h = data.p[sel], data.q[sel], data.human[sel]

    def both(x):
        return {"kendall_tau": tau_b(W, np.arange(len(x)), x, h), "spearman_rho": spearman_rho(W, x, h)}

    base = both(p)
    keys = dict(zip(data.by, data.keys[g]))
    note = (f"{data.n_dropped} unit(s) of this judge (all groups) without a score, Q or human score left out"
            if data.n_dropped else "")
    rows = []
    for a in alphas:
        cur = both(p - a * q)
        for m in ps.MEASURES:
            est, change = cur[m], cur[m] - base[m]
            lo, hi, _ = percentile_interval(est[None, 1:], level)
            clo, chi, _ = percentile_interval(change[None, 1:], level)
            rows.append({"judge": data.judge, **keys, "alpha": float(a), "measure": m, "estimate": est[0],
                         "ci_low": lo[0], "ci_high": hi[0], "n": n, "change": change[0], "change_ci_low": clo[0],
                         "change_ci_high": chi[0], "note": note})
    return rows


def _old_best(W, p, q, h, alphas):
    taus = np.array([tau_b(W, np.arange(len(p)), p - a * q, h)[0] for a in alphas])
    taus = np.where(np.isfinite(taus), taus, -np.inf)
    return int(np.flatnonzero(taus >= taus.max() - 1e-12)[0])


def _old_cv(data, group, alphas, folds, seed, n_boot, level):
    sel = data.group == group
    p, q, h = data.p[sel], data.q[sel], data.human[sel]
    n = len(p)
    k = min(folds, n)
    fold = np.random.default_rng(root_seed(seed)).permutation(np.arange(n) % k)
    W = item_weights(cell_rng(root_seed(seed), (data.judge, "cv", group)), n, n_boot).T
    held, chosen = np.zeros(W.shape[1]), []
    for f in range(k):
        train, test = fold != f, fold == f
        j = _old_best(train[:, None].astype(float), p, q, h, alphas)
        chosen.append(float(alphas[j]))
        idx = np.flatnonzero(test)
        tau = tau_b(W[idx], np.arange(len(idx)), p[idx] - alphas[j] * q[idx], h[idx])
        held += np.nan_to_num(tau) * len(idx) / n
    lo, hi, _ = percentile_interval(held[None, 1:], level)
    ones = np.ones((n, 1))
    raw = tau_b(ones, np.arange(n), p, h)[0]
    return ps.PointwiseCV(float(alphas[_old_best(ones, p, q, h, alphas)]), tuple(chosen), float(held[0]),
                          float(raw), float(lo[0]), float(hi[0]), n)


def _old_table(data, *, alphas=ALPHAS, folds=5, n_boot=1000, seed=0, level=0.95):
    alphas = np.asarray(alphas, dtype=float)
    root = root_seed(seed)
    curve = pd.DataFrame([r for g in range(len(data.keys)) for r in _old_group_rows(data, g, alphas, n_boot, root,
                                                                                     level)])
    rows = []
    for g, key in enumerate(data.keys):
        cv = _old_cv(data, g, alphas, folds, seed, n_boot, level)
        rows += cv_records(data.judge, dict(zip(data.by, key)), cv.alpha_all, cv.fold_alphas, cv.n,
                           held=("kendall_tau_cv", cv.tau_cv, cv.ci_low, cv.ci_high,
                                 f"held-out Kendall tau, mean over {folds} folds; raw {cv.tau_raw:.3f}"))
    return pd.concat([curve, pd.DataFrame(rows)], ignore_index=True)


def _same(new: pd.DataFrame, old: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    a, b = new.select_dtypes("number").to_numpy(float), old.select_dtypes("number").to_numpy(float)
    assert np.array_equal(a, b, equal_nan=True)  # to the last bit, NaN where NaN


# --------------------------------------------------------------------------- seeded data with ties


def _tied_ratings(seed: int) -> pd.DataFrame:
    """Groups of several sizes (2 to 300 items): integer judge scores (many ties), humans' means of 1-3
    rounded scores (ties), lengths with repeats (ties in Q, so P_hat ties at some alphas), a group where
    the judge gives one score (tau undefined) and one where one human score only."""
    rng = np.random.default_rng(seed)
    frames = []
    for g, n in enumerate((2, 3, 7, 40, 300, 25, 60)):
        quality = rng.normal(size=n)
        length = rng.choice([10.0, 20.0, 35.0, 50.0, 80.0], size=n) if g % 2 else rng.integers(5, 400, n) * 1.0
        ids = [f"g{g}-{k}" for k in range(n)]
        judge = np.clip(np.round(3 + quality + 0.01 * length + rng.normal(0, 0.7, n)), 1, 5)
        if g == 5:
            judge[:] = 4.0
        frames.append(pd.DataFrame({"item_id": ids, "rater": "j", "rater_kind": "judge", "criterion": "overall",
                                    "score": judge, "len": length, "part": f"p{g}"}))
        humans = 1 if g == 6 else 3
        for r in range(humans):
            keep = rng.random(n) < 0.8 if r else np.ones(n, bool)  # some items with fewer humans: finer means
            frames.append(pd.DataFrame({"item_id": ids, "rater": f"h{r}", "rater_kind": "human",
                                        "criterion": "overall", "score": np.clip(np.round(3 + quality + rng.normal(
                                            0, 0.5, n)), 1, 5), "len": length, "part": f"p{g}"})[keep])
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("seed", [0, 1])
def test_curve_and_cv_equal_the_general_path_on_tied_data(seed):
    data = ps.pointwise_data(_tied_ratings(seed), judge="j", q="len", by=("part",))
    groups = [k for g, k in enumerate(data.keys) if (data.group == g).sum() >= 4]
    assert len(data.keys) == 7 and len(groups) == 5
    new = ps.correlation_curve(data, n_boot=200, seed=seed)
    _same(new, pd.DataFrame([r for g in range(7) for r in _old_group_rows(data, g, ALPHAS, 200, seed, 0.95)]))
    assert new["estimate"].isna().any() and new["estimate"].notna().any()  # the constant judge: undefined
    for g in range(len(data.keys)):
        if (data.group == g).sum() >= 4:
            for folds in (2, 5):
                got = ps.cross_validated_alpha(data, group=g, folds=folds, seed=seed, n_boot=200)
                want = _old_cv(data, g, ALPHAS, folds, seed, 200, 0.95)
                assert got.fold_alphas == want.fold_alphas
                assert np.array_equal(np.array(astuple(got)[2:], float), np.array(astuple(want)[2:], float),
                                      equal_nan=True), (got, want)


@pytest.mark.parametrize("n_boot", [0, 1, 33])
def test_few_resamples_and_one_weighting_take_the_same_formulas(n_boot):
    # No resample: the single weighting is scipy's formula in tau_b, and so here.
    df = _tied_ratings(3)
    data = ps.pointwise_data(df[df["part"].isin(["p3", "p4"])], judge="j", q="len")
    _same(ps.correlation_table(data, alphas=[0.0, 0.3, 1.0], n_boot=n_boot, folds=3, seed=2),
          _old_table(data, alphas=[0.0, 0.3, 1.0], n_boot=n_boot, folds=3, seed=2))


def test_rank_stats_equal_tau_b_and_spearman_rho_for_any_weights():
    rng = np.random.default_rng(7)
    n = 150
    x = np.round(rng.normal(size=(4, n)), 1)
    y = rng.integers(0, 6, n) / 2.0
    Wt = rng.integers(0, 4, size=(70, n)).astype(float)
    Wt[3] = 0.0  # a resample with no weight
    Wt[4, :] = 0.0
    Wt[4, 5] = 3.0  # one unit only: undefined
    got = ps._rank_stats(Wt, x, y)
    for a in range(len(x)):
        want_tau = tau_b(Wt.T, np.arange(n), x[a], y)
        want_rho = spearman_rho(Wt.T, x[a], y)
        assert np.array_equal(got["kendall_tau"][a], want_tau, equal_nan=True)
        assert np.array_equal(got["spearman_rho"][a], want_rho, equal_nan=True)
        one = ps._rank_stats(Wt[7:8], x[a:a + 1], y, spearman=False)["kendall_tau"][0]
        assert np.array_equal(one, tau_b(Wt[7:8].T, np.arange(n), x[a], y), equal_nan=True)


# --------------------------------------------------------------------------- HANNA


@pytest.mark.slow
@needs_datasets
@pytest.mark.parametrize("judge", ["ChatGPT/prompt1", "OrcaPlatypus/prompt1"])
def test_hanna_curve_equals_the_general_path(judge):
    frame = hanna_frame()
    data = ps.pointwise_data(frame, judge=judge, q="text_length")
    assert len(data.keys) == 6 and len(data.p) == 6 * 1056
    _same(ps.correlation_table(data, n_boot=200, seed=0), _old_table(data, n_boot=200, seed=0))
