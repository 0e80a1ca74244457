"""CalibraEval's NOA: the exact gradient, convergence, and the released settings against the authors' update rule."""

from __future__ import annotations

import json
from math import exp

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from sklearn.isotonic import IsotonicRegression

from evalcore.errors import DataError
from evalcore.pairwise import calibraeval as ce


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _biased_probs(n: int, seed: int, pos: float = 0.5, id_: float = 0.3) -> np.ndarray:
    """P("A") under s0, s1, s2 of a judge with a position-1 pull ``pos`` and an "A" pull ``id_`` (logits)."""
    rng = np.random.default_rng(seed)
    lat = rng.normal(0, 2, n)
    return np.column_stack([_sigmoid(lat + pos + id_), _sigmoid(lat - pos + id_), _sigmoid(-lat + pos + id_)]).round(4)


# --- the authors' update rule, transcribed loop by loop from src/CalibraEval.py (their variable names) ---------

def _their_gradient(paras, batch_samples, lam):
    N = len(paras)
    exps = [exp(p) for p in paras]
    sums = [0.]
    for e in exps:
        sums.append(sums[-1] + e)
    total = sums[-1]
    grads = [0. for _ in range(N)]
    for s1, s2, s3 in batch_samples:
        grad1 = 2 * (sums[s1] / total + sums[s3] / total - 1.)
        grad2 = 2 * lam * (sums[s1] / total - sums[s2] / total)
        grad3 = 2 * lam * (sums[s1] / total - sums[s3] / total)
        for key, coef in ((s1, grad1 + grad2 + grad3), (s2, grad1 - grad2 - grad3), (s3, grad1 - grad2 - grad3)):
            for i in range(key):
                grads[i] += coef * (-exps[s1 - 1]) / (total ** 2)
            for i in range(key, N):
                grads[i] += coef * exps[s1 - 1] * (1. - sums[s1] / total) / total
    return grads


def _their_fit(probs, lam=0.05, lr=10, batch_size=64, epoch=1):
    yhats = [float(v) for row in probs for v in row]
    values = sorted(set(yhats + [-0.1, 1.1]))
    N = len(values) - 1
    index = {v: i for i, v in enumerate(values)}
    samples = [[index[yhats[3 * i]], index[yhats[3 * i + 1]], index[yhats[3 * i + 2]]] for i in range(len(yhats) // 3)]
    paras = [0. for _ in range(N)]
    for _ in range(epoch):
        for start in range(0, len(samples), batch_size):
            grads = _their_gradient(paras, samples[start:start + batch_size], lam)
            for i in range(N):
                paras[i] += lr * grads[i] / batch_size
        mean = sum(paras) / N
        paras = [p - mean for p in paras]
    exps = [exp(p) for p in paras]
    sums = [0.]
    for e in exps:
        sums.append(sums[-1] + e)
    return np.array(values), np.array(paras), np.array(sums) / sums[-1]


# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_matches_finite_differences(seed):
    probs = _biased_probs(40, seed)
    probs[:5, 1] = probs[:5, 0]  # repeated values share a knot
    values, idx = ce.knots(probs)
    d = np.random.default_rng(seed).normal(0, 1, len(values) - 1)
    for lam in (0.0, 0.05, 0.7):
        exact = ce.noa_gradient(d, idx, lam=lam)
        numeric = approx_fprime(d, lambda x: ce.noa_loss(x, idx, lam=lam), 1e-7)
        assert np.allclose(exact, numeric, rtol=1e-4, atol=1e-8)
        # central differences, tighter
        h = 1e-5
        central = np.array([(ce.noa_loss(d + h * e, idx, lam=lam) - ce.noa_loss(d - h * e, idx, lam=lam)) / (2 * h)
                            for e in np.eye(len(d))])
        assert np.max(np.abs(exact - central)) < 1e-9


def test_gradient_is_shift_invariant_and_sums_to_zero():
    values, idx = ce.knots(_biased_probs(30, 3))
    d = np.random.default_rng(3).normal(size=len(values) - 1)
    g = ce.noa_gradient(d, idx)
    assert abs(g.sum()) < 1e-12  # the loss does not change when every d_i moves together
    assert np.allclose(g, ce.noa_gradient(d + 5.0, idx), atol=1e-15)


def test_fit_noa_converges_to_a_stationary_point():
    probs = _biased_probs(150, 4)
    cal = ce.fit_noa(probs)
    assert cal.converged and cal.method == "noa" and cal.n_items == 150
    values, idx = ce.knots(probs)
    start = ce.noa_loss(np.zeros(len(values) - 1), idx)
    released = ce.fit_noa_released(probs)
    assert cal.loss < start and cal.loss < released.loss
    # the map is monotone, within [0, 1], and the calibrated probabilities are more consistent
    assert np.all(np.diff(cal.y) >= 0) and 0 <= cal.y[0] and cal.y[-1] <= 1
    c = cal.apply(probs)
    raw_gap = np.abs(probs[:, 0] + probs[:, 2] - 1).mean()
    assert np.abs(c[:, 0] + c[:, 2] - 1).mean() < raw_gap / 2


def test_released_gradient_equals_the_authors_loops():
    probs = _biased_probs(70, 5)
    values, idx = ce.knots(probs)
    d = np.random.default_rng(5).normal(0, 0.3, len(values) - 1)
    ours = ce.released_gradient(d, idx[:64], lam=0.05)
    theirs = np.array(_their_gradient(list(d), idx[:64].tolist(), 0.05))
    assert np.allclose(ours, theirs, rtol=1e-10, atol=1e-15)


def test_released_settings_reproduce_the_authors_update_rule():
    probs = _biased_probs(150, 6)  # three mini-batches, the last one short
    cal = ce.fit_noa_released(probs)
    values, _, g = _their_fit(probs)
    assert cal.method == "noa_released" and cal.iterations == 3 and not cal.converged
    assert np.allclose(cal.apply(values[1:-1]), g[1:-1], rtol=0, atol=1e-12)
    # their map: an isotonic regression through the interior points, clipped outside
    iso = IsotonicRegression(out_of_bounds="clip").fit(values[1:-1], g[1:-1])
    grid = np.linspace(-0.2, 1.2, 301)
    assert np.allclose(cal.apply(grid), iso.predict(grid), atol=1e-12)


def test_calibration_round_trips_through_json():
    cal = ce.fit_noa(_biased_probs(40, 7), judge="j")
    back = ce.NoaCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back == cal
    assert list(cal.to_frame().columns) == ["raw", "calibrated"]
    assert np.isnan(cal.apply([np.nan])[0])


def test_bad_probabilities_are_data_errors():
    with pytest.raises(DataError):
        ce.fit_noa(np.array([[0.2, 1.3, 0.5]]))
    with pytest.raises(DataError):
        ce.fit_noa(np.zeros((0, 3)))
    with pytest.raises(DataError):
        ce.NoaCalibration.from_dict({"method": "noa"})
