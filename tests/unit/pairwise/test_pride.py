"""PriDe: the prior over option IDs and the debiased probabilities."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.special import expit, logit

from evalcore.errors import DataError
from evalcore.pairwise.pride import PrideCalibration, fit_pride, item_priors


def test_item_prior_is_the_softmax_of_the_mean_log_probability():
    p0, p2 = np.array([0.8, 0.3]), np.array([0.4, 0.9])
    a = np.sqrt(p0 * p2)
    b = np.sqrt((1 - p0) * (1 - p2))
    assert np.allclose(item_priors(p0, p2)[:, 0], a / (a + b), atol=1e-9)


@pytest.mark.parametrize("bias", [0.0, 0.4, -0.9])
def test_a_logit_shift_is_recovered_and_removed(bias):
    lat = np.random.default_rng(0).normal(0, 2, 300)
    p0, p2 = expit(lat + bias), expit(-lat + bias)  # "A" pulls by ``bias`` in both permutations
    cal = fit_pride(p0, p2, judge="j")
    assert cal.prior_a == pytest.approx(expit(bias), abs=1e-8)
    d0, d2 = cal.apply(p0), cal.apply(p2)
    assert np.allclose(d0 + d2, 1, atol=1e-7)  # consistent when the IDs are swapped
    assert np.allclose(logit(d0), lat, atol=1e-5)
    if bias == 0.0:
        assert np.allclose(d0, p0, atol=1e-8)  # an unbiased judge is left as it was


def test_round_trip_and_frame():
    cal = PrideCalibration(prior_a=0.7, n_items=12, judge="j")
    assert PrideCalibration.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal
    frame = cal.to_frame(points=11)
    assert list(frame.columns) == ["raw", "calibrated"] and frame["calibrated"].is_monotonic_increasing


def test_no_usable_item_is_a_data_error():
    with pytest.raises(DataError):
        fit_pride([np.nan], [0.3])
    with pytest.raises(DataError):
        PrideCalibration.from_dict({"n_items": 3})
