"""Prediction-powered inference (evalcore.stats.ppi): equal to ppi_py, coverage in simulation, the power analysis,
the stratified combination and Neyman's allocation."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.stats.ppi import (cheapest_pair, classical_mean, judge_mean, labels_needed, neyman_allocation,
                                ppi_correlation, ppi_mean, ppi_splits, stratified, tuned_lambda, z_quantile)
from evalcore.stats.ppi_table import estimate_table

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the test extra) is the reference implementation")
from ppi_py.baselines import classical_mean_ci  # noqa: E402
from ppi_py.ppi_power_analysis import ppi_power  # noqa: E402


def _judges(rng, y):
    """A good, a poor and an anti-correlated judge of ``y``."""
    return {"good": y + rng.normal(0.4, 0.4, y.shape), "poor": 0.2 * y + rng.normal(0, 1.0, y.shape),
            "anti": -y + rng.normal(0, 0.5, y.shape)}


@pytest.mark.parametrize("n, big_n", [(50, 500), (200, 2000), (12, 5)])
def test_ppi_mean_equals_ppi_py(n, big_n):
    rng = np.random.default_rng(n)
    y = rng.normal(3, 1, n + big_n)
    for f in _judges(rng, y).values():
        args = (y[:n], f[:n], f[n:])
        for lam in (None, 1.0, 0.3):
            r = ppi_mean(*args, lam=lam, level=0.95)
            lo, hi = ppi_py.ppi_mean_ci(*args, alpha=0.05, lam=lam)
            assert r.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(*args, lam=lam)[0]), abs=1e-9)
            assert (r.ci_low, r.ci_high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
        lo, hi = classical_mean_ci(y[:n], alpha=0.1)
        assert (classical_mean(y[:n], level=0.9).ci_low, classical_mean(y[:n], level=0.9).ci_high) == \
            pytest.approx((lo, hi), abs=1e-12)
    assert z_quantile(0.95) == pytest.approx(1.959963984540054, abs=1e-12)


def test_lambda_is_clipped_and_a_constant_judge_gets_zero_with_a_note():
    rng = np.random.default_rng(0)
    y = rng.normal(size=300)
    assert tuned_lambda(y[:100], -y[:100], -y[100:]) == 0.0  # anti-correlated: clipped at 0
    assert tuned_lambda(y[:100], 3 * y[:100], 3 * y[100:]) == pytest.approx(1 / 3 / (1 + 100 / 200), rel=0.2)
    r = ppi_mean(y[:100], np.ones(100), np.ones(200))
    assert r.lam == 0.0 and "same answer" in r.note
    assert r.estimate == pytest.approx(y[:100].mean()) and r.ci_low == pytest.approx(classical_mean(y[:100]).ci_low)
    own = ppi_mean(y[:100], y[:100] + 1, [])  # every item labelled: the humans' own
    assert own.lam == 0.0 and "every item" in own.note and own.estimate == pytest.approx(y[:100].mean())
    assert judge_mean(y).estimate == pytest.approx(y.mean()) and judge_mean(y).n_labeled == 0
    with pytest.raises(DataError, match="no labelled item"):
        ppi_mean([], [], [1.0, 2.0])


def test_splits_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    y = rng.normal(size=120)
    f = y + rng.normal(0, 0.5, 120)
    masks = np.stack([rng.permutation(120) < m for m in (15, 40, 119, 120)])
    s = ppi_splits(y, f, masks)
    for i, mask in enumerate(masks):
        one = ppi_mean(y[mask], f[mask], f[~mask])
        assert (s.estimate[i], s.ci_low[i], s.ci_high[i], s.lam[i]) == pytest.approx(
            (one.estimate, one.ci_low, one.ci_high, one.lam), abs=1e-10)
        assert s.human_ci_high[i] == pytest.approx(classical_mean(y[mask]).ci_high, abs=1e-12)


@pytest.mark.slow  # a coverage simulation: the full suite runs it, --fast does not
@pytest.mark.parametrize("judge", ["good", "poor", "anti"])
def test_coverage_over_500_splits_and_never_wider_than_the_humans(judge):
    """95% PPI++ intervals hold the full-data value in 93-97% of 500 seeded random splits, and are never wider
    than the humans-only ones beyond Monte Carlo noise.

    Each split labels 250 random items of 50,000 and leaves the others unlabelled. (With a file not much larger
    than its labelled sample the intervals are conservative for the file's own mean: they also cover the
    randomness of the unlabelled items, which a fixed file does not have.)"""
    rng = np.random.default_rng(2024)
    y = rng.normal(3, 1, 50_000)
    f = _judges(rng, y)[judge]
    parts = []
    for _ in range(10):  # 10 x 50 splits: the masks of a block fit in memory
        mask = np.zeros((50, len(y)), dtype=bool)
        mask[np.arange(50)[:, None], np.stack([rng.choice(len(y), 250, replace=False) for _ in range(50)])] = True
        parts.append(ppi_splits(y, f, mask, level=0.95).to_frame())
    s = pd.concat(parts, ignore_index=True)
    truth = y.mean()
    coverage = np.mean((s["ci_low"] <= truth) & (truth <= s["ci_high"]))
    assert 0.93 <= coverage <= 0.97, coverage
    ratio = (s["ci_high"] - s["ci_low"]) / (s["human_ci_high"] - s["human_ci_low"])
    assert ratio.mean() <= 1.0 and ratio.max() <= 1.02, (ratio.mean(), ratio.max())
    if judge == "good":
        assert ratio.mean() < 0.6  # a good judge is worth many labels
    if judge == "anti":
        assert (s["lam"] == 0).mean() > 0.95


def test_power_analysis_equals_ppi_py():
    rng = np.random.default_rng(7)
    y = rng.normal(3, 1, 150)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in _judges(rng, y).values():
            rho = ppi_correlation(y, f)
            for n0, c_y, c_f, n_max in ((400, 1.0, 0.01, None), (1000, 2.0, 0.5, None), (300, 1.0, 0.05, 900),
                                        (300, 1.0, 0.001, 350), (2000, 1.0, 0.01, 800)):
                want = ppi_py.ppi_mean_power(y, f, c_y, c_f, effective_n=n0, n_max=n_max)
                got = cheapest_pair(rho, effective_n=n0, cost_label=c_y, cost_judge=c_f, n_max=n_max)
                assert (got.labeled, got.unlabeled, got.effective_n) == (want["n"], want["N"], want["effective_n"])
                assert got.cost == pytest.approx(want["cost"]) and got.ppi_corr == pytest.approx(want["ppi_corr"])
                assert got.reachable == (n_max is None or n0 <= n_max)
            assert ppi_power(rho, 0, 1.0, 0.02, effective_n=500)["n"] == \
                cheapest_pair(rho, effective_n=500, cost_label=1.0, cost_judge=0.02).labeled
            # labels for a half-width on a file of 3,000 items: the power analysis with a (nearly) free judge
            need = labels_needed(y, f, half_width=0.04, n_items=3000)
            assert need.human_only == int(np.ceil((z_quantile(0.95) * y.std() / 0.04) ** 2))
            if rho > 0:
                ref = ppi_py.ppi_mean_power(y, f, 1.0, 1e-12, effective_n=need.human_only, n_max=3000)
                assert need.ppi == ref["n"] and need.ppi <= need.human_only
            else:  # PPI++ clips lambda at 0: an anti-correlated judge earns nothing
                assert need.ppi == need.human_only
    with pytest.raises(DataError, match="free judge"):
        cheapest_pair(0.5, effective_n=100, cost_label=1.0, cost_judge=0.0)


def test_stratified_equals_the_hand_weighted_combination():
    rng = np.random.default_rng(11)
    sizes, rows = {"a": 600, "b": 300, "c": 100}, []
    for g, size in sizes.items():
        y = rng.normal({"a": 1, "b": 2, "c": 4}[g], 1, size)
        f = y + rng.normal(0.3, 0.5, size)
        labelled = rng.random(size) < 0.2
        rows.append(pd.DataFrame({"criterion": "q", "g": g, "judge": "j", "measure": "mean_score",
                                  "item_id": [f"{g}{i}" for i in range(size)], "y": np.where(labelled, y, np.nan),
                                  "yhat": f}))
    items = pd.concat(rows, ignore_index=True)
    table = estimate_table(items, by=["g"])
    est, se = [], []
    for g in sizes:
        part = items[items["g"] == g]
        lab = part["y"].notna()
        args = (part.loc[lab, "y"].to_numpy(), part.loc[lab, "yhat"].to_numpy(), part.loc[~lab, "yhat"].to_numpy())
        lo, hi = ppi_py.ppi_mean_ci(*args, alpha=0.05)
        est.append(float(ppi_py.ppi_mean_pointestimate(*args)[0]))
        se.append(float(hi[0] - lo[0]) / 2 / z_quantile(0.95))
        row = table[(table["g"] == g) & (table["method"] == "ppi++")].iloc[0]
        assert row["estimate"] == pytest.approx(est[-1], abs=1e-9)
    w = np.array(list(sizes.values())) / sum(sizes.values())
    theta, s = float(w @ est), float(np.sqrt(np.sum(w ** 2 * np.square(se))))
    overall = table[table["stratified"] & (table["method"] == "ppi++")].iloc[0]
    assert overall["g"] is None and overall["n_labeled"] == items["y"].notna().sum()
    assert overall["estimate"] == pytest.approx(theta, abs=1e-9)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((theta - 1.959963984540054 * s,
                                                                     theta + 1.959963984540054 * s), abs=1e-9)
    assert stratified(est, se, list(sizes.values()))[0] == pytest.approx(theta)


def test_neyman_allocation():
    # no labels yet, no limits: Neyman's m w s / sum(w s)
    got = neyman_allocation(1000, weights=[0.5, 0.3, 0.2], spread=[1.0, 2.0, 0.5])
    ws = np.array([0.5, 0.6, 0.1])
    assert got.sum() == 1000 and np.abs(got - 1000 * ws / ws.sum()).max() <= 1
    # a stratum past its share gets none; limits hold and the total is kept
    got = neyman_allocation(100, weights=[0.5, 0.5], spread=[1.0, 1.0], labeled=[200, 0], available=[500, 60])
    assert got.tolist() == [40, 60]
    got = neyman_allocation(100, weights=[0.5, 0.5], spread=[1.0, 3.0], labeled=[0, 30])
    assert got.tolist() == [33, 67]  # totals 33 and 97 of 130: Neyman's 32.5 and 97.5
    assert neyman_allocation(10, weights=[1.0], spread=[0.0], available=[4]).tolist() == [4]
    assert neyman_allocation(0, weights=[0.5, 0.5], spread=[1.0, 1.0]).tolist() == [0, 0]
    with pytest.raises(DataError, match="whole number"):
        neyman_allocation(-1, weights=[1.0], spread=[1.0])
