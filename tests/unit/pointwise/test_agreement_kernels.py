"""The measures' compiled passes (:mod:`evalcore.pointwise.agreement._kernel`: alpha's sums, the chance agreements,
F1, tau-b and rho) against numpy's (:class:`evalcore.pointwise.agreement.passes.NumpyPasses`, the numpy code they
replaced), to the last bit: pass by pass on seeded inputs, and the whole agreement table (every measure, estimate,
interval and p-value) on seeded ratings and on HANNA's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.pointwise.agreement import measures as M, passes as P, table as T
from evalcore.pointwise.agreement.passes import NumpyPasses
from evalcore.pointwise.agreement.units import count_units
from tests.helpers import DATASETS
from tests.unit.hanna import hanna_frame


def _both(monkeypatch, compute):
    """``compute()`` with numba's passes and with numpy's, whatever the table's size."""
    out = {}
    for mode, threshold in (("compiled", 0), ("numpy", 10**12)):
        monkeypatch.setattr(P, "COMPILED_FROM", threshold)
        monkeypatch.setattr(P, "LOAD_FROM", 0)
        out[mode] = compute()
    return out["compiled"], out["numpy"]


def _ratings(seed: int, *, n_items=70, humans=3, averaged=True) -> pd.DataFrame:
    """Integer human scores on two criteria, an integer judge and (``averaged``) a judge whose scores are means of
    three integer draws (fractional categories, as HANNA's); some ratings left out."""
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(n_items):
        for crit, top in (("coherence", 5), ("relevance", 3)):
            truth = rng.integers(1, top + 1)
            for h in range(humans):
                if rng.random() < 0.9:
                    score = float(np.clip(truth + rng.integers(-1, 2), 1, top))
                    rows.append((f"i{item}", crit, f"h{h}", "human", score))
            rows.append((f"i{item}", crit, "int_judge", "judge", float(rng.integers(1, top + 1))))
            if averaged:
                rows.append((f"i{item}", crit, "mean_judge", "judge", float(rng.integers(1, top + 1, 3).mean())))
    return pd.DataFrame(rows, columns=["item_id", "criterion", "rater", "rater_kind", "score"])


def test_pairwise_sum_is_numpys_sum_to_the_last_bit():
    kernel = P.kernel()
    rng = np.random.default_rng(0)
    frames, left = np.empty((64, 3), np.int64), np.empty(64)
    for n in [*range(0, 300), 511, 1024, 1031, 4099, 70_001]:
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)
        assert 0.0 + kernel._pairwise_sum(a, n, frames, left) == a.sum(), n


@pytest.mark.parametrize("seed", range(3))
def test_each_pass_equals_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    kernel = P.kernel()
    G, R, K, q = 3, 23, 150 + 40 * seed, 40  # K > 128: numpy's pairwise sums split the rows
    W = rng.integers(0, 4, (G, R, K)).astype(float)
    cols = np.array([1, 4, 6, 9])
    human = rng.integers(0, 3, (G, K, len(cols))).astype(float)
    extra = np.where(rng.random((G, K)) < 0.8, rng.integers(0, q, (G, K)), -1)
    n = human.sum(axis=-1) + (extra >= 0)
    inv = np.where(n >= 2, 1.0 / np.maximum(n - 1, 1), 0.0)
    marg = rng.integers(0, 30, (G, R, q)).astype(float)
    marg[0, 0] = 0.0  # a resample without pairable values
    for ex in (extra, np.full((G, K), -1)):
        np.testing.assert_array_equal(kernel.alpha_sums(W, marg, human, cols, ex, inv),
                                      NumpyPasses.alpha_sums(W, marg, human, cols, ex, inv))
    S, rated = rng.random((G, R, q)) * 7, rng.integers(0, 9, (G, R)).astype(float)  # rated 0: NaN shares
    np.testing.assert_array_equal(kernel.share_sums(S, rated), NumpyPasses.share_sums(S, rated))
    r, c = rng.integers(0, 5, (G, R, q)).astype(float), rng.integers(0, 5, (G, R, q)).astype(float)
    tp = np.minimum(r, c) * (rng.random((G, R, q)) < 0.5)
    np.testing.assert_array_equal(kernel.f1_sums(r, c, tp), NumpyPasses.f1_sums(r, c, tp))


@pytest.mark.parametrize("seed", range(3))
def test_rank_statistics_equal_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    G, K, R = 3, 200, 31
    x = rng.integers(0, 40, (G, K)) / 3.0  # a judge's averaged scores
    y = rng.integers(2, 16, (G, K)) / 3.0  # the human means
    W = rng.integers(0, 3, (G, R, K)).astype(float)
    W[1, :, 150:] = 0.0  # padding
    W[2, 4] = 0.0  # a resample without weight: NaN
    Wc, ax, ay = M._points(W, x, y)
    got, want = P.kernel().rank_stats(Wc, ax, ay), NumpyPasses.rank_stats(Wc, ax, ay)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("seed", range(3))
def test_the_table_is_the_same_with_either_passes_on_simulated_ratings(monkeypatch, seed):
    frame = _ratings(seed, averaged=seed != 1)
    compiled, numpy_ = _both(monkeypatch, lambda: T.agreement(frame, by=["criterion"], n_boot=200, seed=seed))
    assert {"ci_low", "ci_high", "p_value"} <= set(compiled.columns)
    pd.testing.assert_frame_equal(compiled, numpy_, check_exact=True)


@pytest.mark.slow  # real data: the full suite runs it, --fast does not
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA check needs it")
def test_hannas_table_with_200_resamples_is_the_same_with_either_passes(monkeypatch):
    units = count_units(hanna_frame())
    compiled, numpy_ = _both(monkeypatch, lambda: T.agreement(units, by=["criterion"], n_boot=200, seed=0))
    pd.testing.assert_frame_equal(compiled, numpy_, check_exact=True)
