"""Spearman's rho of weighted items equals scipy's on the resample written out."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from evalcore.stats.bootstrap import item_weights
from evalcore.stats.spearman import spearman_rho


@pytest.mark.parametrize("seed", range(5))
def test_spearman_matches_scipy_on_every_resample(seed):
    rng = np.random.default_rng(seed)
    n = 40
    x = rng.integers(0, 6, n) / 2.0  # ties
    y = np.where(rng.random(n) < 0.5, rng.normal(size=n), rng.integers(0, 3, n))
    W = item_weights(rng, n, 30).T
    got = spearman_rho(W, x, y)
    for r in range(W.shape[1]):
        picked = np.repeat(np.arange(n), W[:, r].astype(int))
        assert got[r] == pytest.approx(spearmanr(x[picked], y[picked]).statistic, abs=1e-12)


def test_spearman_undefined_is_nan():
    W = np.ones((3, 1))
    assert np.isnan(spearman_rho(W, np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]))[0])
    assert np.isnan(spearman_rho(np.ones((1, 1)), np.array([1.0]), np.array([1.0]))[0])
