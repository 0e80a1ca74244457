"""The core Bradley-Terry fit (evalcore.pairwise.bradley_terry): weights as repeated battles, many fits at once equal
to one at a time, covariates equal to scikit-learn's unpenalised logistic regression, the ridge only where the
maximum-likelihood scores do not exist, disconnected graphs, and the messages for bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.errors import DataError
from evalcore.pairwise.bradley_terry import AUTO_RIDGE, ELO_PER_LOGIT, fit_bt, to_elo


def _battles(rng, k=5, n=400, covariate=0.0):
    """Random battles among ``k`` systems with true scores 0, 0.3, ..., ties in 10%, and one covariate."""
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    x = rng.normal(size=n)
    s = np.linspace(0, 0.3 * (k - 1), k)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + covariate * x)))
    y = (rng.random(n) < p).astype(float)
    y[rng.random(n) < 0.1] = 0.5
    return a, b, y, x


def test_weights_are_repeated_battles_and_a_tie_is_half_a_win():
    a, b, y, _ = _battles(np.random.default_rng(0))
    w = np.random.default_rng(1).integers(0, 4, len(a))
    weighted = fit_bt(a, b, y, n_systems=5, weight=w.astype(float))
    rep = np.repeat(np.arange(len(a)), w)
    repeated = fit_bt(a[rep], b[rep], y[rep], n_systems=5)
    np.testing.assert_allclose(weighted.scores, repeated.scores, atol=1e-10)
    # A tie as a win of a plus a win of b (FastChat's duplicated battles), each at half weight.
    tie = y == 0.5
    a2, b2 = np.concatenate([a, a[tie]]), np.concatenate([b, b[tie]])
    y2 = np.concatenate([np.where(tie, 1.0, y), np.zeros(tie.sum())])
    w2 = np.concatenate([np.where(tie, 0.5, 1.0), np.full(tie.sum(), 0.5)])
    np.testing.assert_allclose(fit_bt(a2, b2, y2, n_systems=5, weight=w2).scores, fit_bt(a, b, y, n_systems=5).scores,
                               atol=1e-10)
    assert abs(weighted.scores.sum()) < 1e-12


def test_many_fits_at_once_equal_one_at_a_time_whatever_the_start():
    a, b, y, x = _battles(np.random.default_rng(2), covariate=0.5)
    W = np.random.default_rng(3).poisson(1.0, size=(6, len(a))).astype(float)
    many = fit_bt(a, b, y, n_systems=5, weight=W, covariates=x[:, None], init=np.ones(6))
    for r in range(len(W)):
        one = fit_bt(a, b, y, n_systems=5, weight=W[r], covariates=x[:, None])
        np.testing.assert_allclose(many.scores[r], one.scores, atol=1e-9)
        np.testing.assert_allclose(many.coef[r], one.coef, atol=1e-9)
    assert many.converged.all() and (many.ridge == 0).all()


def test_covariates_equal_sklearn_and_zero_covariates_change_nothing():
    from sklearn.linear_model import LogisticRegression

    a, b, y, x = _battles(np.random.default_rng(4), covariate=0.8)
    fit = fit_bt(a, b, y, n_systems=5, covariates=x[:, None])
    # The +-1 design with the covariate, a tie as two half-weight battles, no intercept, no penalty.
    n = len(a)
    X = np.zeros((n, 6))
    X[np.arange(n), a], X[np.arange(n), b] = 1.0, -1.0
    X[:, 5] = x
    XX, Y = np.vstack([X, X]), np.concatenate([np.ones(n), np.zeros(n)])
    w = np.concatenate([y, 1 - y])
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=10_000).fit(XX, Y, sample_weight=w)
    s = lr.coef_[0][:5]
    np.testing.assert_allclose(fit.scores, s - s.mean(), atol=1e-6)
    assert fit.coef[0] == pytest.approx(lr.coef_[0][5], abs=1e-6)
    zero = fit_bt(a, b, y, n_systems=5, covariates=np.zeros((n, 1)))
    np.testing.assert_allclose(zero.scores, fit_bt(a, b, y, n_systems=5).scores, atol=1e-12)
    assert np.isnan(zero.coef[0])


def test_the_ridge_only_where_the_scores_would_be_infinite():
    a, b, y = [0, 0, 1, 2], [1, 2, 2, 1], [1.0, 1.0, 1.0, 1.0]  # x beats everyone; y and z split
    fit = fit_bt(a, b, y, n_systems=3, names=["x", "y", "z"])
    assert fit.ridge == AUTO_RIDGE and fit.converged and np.isfinite(fit.scores).all()
    assert fit.notes == ("the maximum-likelihood scores are infinite (x won every battle against the others), so a "
                         "ridge penalty of 0.1 was added",)
    # The penalised fit is the maximum of the penalised likelihood: its gradient is zero.
    s = fit.scores
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    grad = np.zeros(3)
    np.add.at(grad, a, np.array(y) - p)
    np.add.at(grad, b, p - np.array(y))
    np.testing.assert_allclose(grad - AUTO_RIDGE * s, 0, atol=1e-9)
    lost = fit_bt([0, 0, 1, 1], [1, 2, 2, 2], [0.0, 0.0, 1.0, 0.0], n_systems=3, names=["x", "y", "z"])
    assert "x lost every battle" in lost.notes[0]
    unforced = fit_bt(a, b, y, n_systems=3, ridge=0.0)
    assert not unforced.converged and "did not converge" in unforced.notes[-1]
    forced = fit_bt([0, 1, 2, 0], [1, 2, 0, 2], [1, 1, 1, 0.5], n_systems=3, ridge=1.0)
    assert forced.ridge == 1.0 and forced.notes == ()


def test_a_covariate_that_separates_the_outcomes_gets_the_ridge_on_every_parameter():
    a, b, y, x = _battles(np.random.default_rng(5))
    flag = np.zeros(len(a))
    flag[:3] = 1.0
    y = y.copy()
    y[:3] = 1.0  # the three flagged battles all won by a: the flag's coefficient is +infinity
    fit = fit_bt(a, b, y, n_systems=5, covariates=flag[:, None])
    assert fit.ridge == AUTO_RIDGE and np.isfinite(fit.coef).all() and fit.converged
    assert "the covariates separate the outcomes" in fit.notes[0]


def test_a_disconnected_graph_and_a_system_without_battles():
    a, b, y = [0, 1, 0, 2, 3, 2], [1, 0, 1, 3, 2, 3], [1.0, 1.0, 1.0, 1.0, 1.0, 0.5]
    fit = fit_bt(a, b, y, n_systems=5, names=list("vwxyz"))
    assert fit.component.tolist() == [0, 0, 2, 2, -1]
    assert np.isnan(fit.scores[4])
    assert fit.scores[0] + fit.scores[1] == pytest.approx(0) and fit.scores[2] + fit.scores[3] == pytest.approx(0)
    assert fit.scores[0] - fit.scores[1] == pytest.approx(math.log(2))  # 2 wins to 1
    assert fit.notes == ("the systems form 2 groups never compared with each other (v, w | x, y): scores are centred "
                         "within each group and comparable only within it",)


def test_elo_and_bad_input():
    assert to_elo(0.0) == 1000.0 and ELO_PER_LOGIT == pytest.approx(400 / math.log(10))
    with pytest.raises(DataError, match="with itself"):
        fit_bt([0], [0], [1.0], n_systems=2)
    with pytest.raises(DataError, match="between 0 and 1"):
        fit_bt([0], [1], [2.0], n_systems=2)
    with pytest.raises(DataError, match="outside 0..1"):
        fit_bt([0], [2], [1.0], n_systems=2)
    with pytest.raises(DataError, match="weights"):
        fit_bt([0, 1], [1, 0], [1.0, 1.0], n_systems=2, weight=[1.0])
    with pytest.raises(DataError, match="ridge"):
        fit_bt([0, 1], [1, 0], [1.0, 1.0], n_systems=2, ridge=-1.0)
