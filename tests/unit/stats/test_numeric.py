"""Small numeric helpers (evalcore.stats.numeric) and the weighted Kendall's tau kernel (evalcore.stats.kendall)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import kendalltau

from evalcore.stats.numeric import codes, join_notes, safe_div, zero_div
from evalcore.stats.kendall import tau_b, tau_b_table, tau_merge


def test_safe_div_gives_nan_where_the_ratio_is_undefined_without_warnings():
    a = np.array([1.0, 1.0, 0.0, np.inf, np.nan, -3.0])
    b = np.array([2.0, 0.0, 0.0, 1.0, 1.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = safe_div(a, b)
    assert out[0] == 0.5 and out[5] == -0.75 and np.isnan(out[1:5]).all()
    assert a[3] == np.inf  # inputs untouched


def test_safe_div_broadcasts_and_accepts_scalars():
    out = safe_div(np.array([[1.0], [2.0]]), np.array([1.0, 0.0, 4.0]))
    assert out.shape == (2, 3) and np.isnan(out[:, 1]).all() and out[1, 2] == 0.5
    assert np.isnan(safe_div(1.0, 0.0)) and safe_div(3, 4) == 0.75
    assert safe_div(np.array([1, 2]), np.array([2, 4])).dtype == float


def test_zero_div_gives_zero_where_the_denominator_is_not_positive():
    a, b = np.array([[1.0, 2.0, 3.0]]), np.array([4.0, 0.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert zero_div(a, b).tolist() == [[0.25, 0.0, 0.0]]
    assert zero_div(np.array([3, 3]), np.array([2, 0])).tolist() == [1.5, 0.0]  # integers give floats


def test_codes_index_the_sorted_distinct_values():
    x = np.array([2.5, 1.0, 2.5, -1.0, 1.0])
    c, u = codes(x)
    assert (u[c] == x).all() and (np.diff(u) > 0).all()


def test_join_notes_keeps_each_note_once_in_order():
    assert join_notes() == "" and join_notes("", "") == ""
    assert join_notes("b", "a", "b", "", "c") == "b; a; c"


@pytest.mark.parametrize("distinct", ["few", "many"])
def test_weighted_tau_b_equals_scipy_on_the_resampled_data(distinct):
    """Both algorithms (contingency table, merge sort), every resample, against scipy on the data written out."""
    rng = np.random.default_rng(4)
    n = 50
    local = np.repeat(np.arange(n), 3)  # three observations per item
    if distinct == "few":
        x, y = rng.integers(0, 5, 3 * n).astype(float), np.repeat(rng.integers(0, 3, n), 3).astype(float)
    else:
        x, y = rng.normal(size=3 * n).round(2), np.repeat(rng.normal(size=n).round(2), 3)
    Wt = np.column_stack([np.ones(n), rng.multinomial(n, np.full(n, 1 / n), size=4).T]).astype(float)
    got = tau_b(Wt, local, x, y)
    xc, yc = codes(x)[0], codes(y)[0]
    merged = tau_merge(Wt, local, xc, yc, np.ones(len(x)))
    for r in range(Wt.shape[1]):
        reps = Wt[local, r].astype(int)
        ref = kendalltau(np.repeat(x, reps), np.repeat(y, reps)).statistic
        assert abs(got[r] - ref) < 1e-12 and abs(merged[r] - ref) < 1e-12


def test_tau_b_table_of_a_contingency_table():
    T = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 2.0]])  # rows: x = 0, 1; columns: y = 0, 1, 2
    x = np.repeat([0, 0, 0, 1, 1, 1], T.ravel().astype(int))
    y = np.repeat([0, 1, 2, 0, 1, 2], T.ravel().astype(int))
    assert abs(tau_b_table(T[:, :, None])[0] - kendalltau(x, y).statistic) < 1e-12
    assert np.isnan(tau_b_table(np.array([[[2.0], [3.0]]]))[0])  # a single x value: undefined
