"""The one flag rule and the one result table (evalcore.stats.results)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from evalcore.errors import DataError
from evalcore.stats.bootstrap import z_p_value
from evalcore.stats.results import (
    apply_fdr, benjamini_hochberg, check_alpha, RESULT_COLUMNS, ResultTable, SPARSE_NOTE, tidy,
)

NAN = np.nan


# --------------------------------------------------------------------------- Benjamini-Hochberg


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_hochberg_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.random(200), rng.random(30) * 1e-4, [0.0, 1.0, 0.05, 0.05]])
    rng.shuffle(p)
    ref = multipletests(p, method="fdr_bh")
    assert np.allclose(benjamini_hochberg(p), ref[1], rtol=1e-12, atol=0)
    assert ((benjamini_hochberg(p) <= 0.05) == ref[0]).all()  # rejecting q <= alpha is the BH procedure


def test_benjamini_hochberg_leaves_nan_out_of_the_family():
    p = np.array([0.01, NAN, 0.04, 0.03, NAN])
    q = benjamini_hochberg(p)
    assert np.isnan(q[[1, 4]]).all()
    assert np.allclose(q[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="fdr_bh")[1])
    assert benjamini_hochberg(np.array([])).shape == (0,) and np.isnan(benjamini_hochberg([NAN])).all()


def _frame(tests, p, est, judge="J"):
    return pd.DataFrame({"judge": judge, "measure": [f"m{i}" for i in range(len(p))], "estimate": est,
                         "test": tests, "p_value": p})


def test_apply_fdr_flags_by_q_in_the_direction_of_harm_only():
    # p-values of tests in the direction of harm; the estimates' signs agree with them.
    tests = ["greater", "less", "two-sided", "two-sided", "greater", None, "less"]
    p = [1e-6, 1e-5, 1e-4, 0.5, 1 - 1e-6, NAN, NAN]
    est = [0.5, -0.4, -0.3, 0.01, -0.6, 0.9, -2.0]
    out = apply_fdr(_frame(tests, p, est))
    tested = np.isfinite(p)
    assert np.allclose(out["q_value"][tested], multipletests(np.array(p)[tested], method="fdr_bh")[1])
    assert out["q_value"][~tested].isna().all()
    assert out["flagged"].tolist() == [True, True, True, False, False, False, False]
    # The fifth row: one-sided "greater", but the estimate is far below 0: significant the other way.
    assert out["opposite"].tolist() == [False, False, False, False, True, False, False]
    assert (out["flagged"] & out["opposite"]).sum() == 0


def test_apply_fdr_alpha_and_the_family():
    p = np.array([0.001, 0.01, 0.02, 0.03, 0.2])
    est = np.ones(5)
    strict = apply_fdr(_frame(["greater"] * 5, p, est), alpha=0.01)
    loose = apply_fdr(_frame(["greater"] * 5, p, est), alpha=0.1)
    assert strict["flagged"].sum() == 1 and loose["flagged"].sum() == 4
    # A bigger family makes every q larger: the same row is not flagged among 100 null tests.
    big = _frame(["greater"] * 101, np.r_[0.02, np.linspace(0.1, 1, 100)], np.ones(101))
    assert not apply_fdr(big)["flagged"].iloc[0] and apply_fdr(big.iloc[:1])["flagged"].iloc[0]
    with pytest.raises(DataError, match="between 0 and 1"):
        apply_fdr(_frame(["greater"], [0.1], [1.0]), alpha=5)
    assert check_alpha(0.05) == 0.05


def test_rows_without_a_test_or_a_p_value_are_not_in_the_family():
    out = apply_fdr(_frame([None, "less", "less"], [0.001, NAN, 0.04], [1.0, -1.0, -1.0]))
    # The family has one row (p = 0.04): q = 0.04; the row without a test is not flagged.
    assert out["q_value"].tolist()[2] == pytest.approx(0.04) and np.isnan(out["q_value"].tolist()[0])
    assert out["flagged"].tolist() == [False, False, True]


# --------------------------------------------------------------------------- the result table


def _boot(center: float, B: int = 200, seed: int = 0) -> np.ndarray:
    return np.concatenate([[center], center + 0.1 * np.random.default_rng(seed).normal(size=B)])


def test_result_table_intervals_tests_flags_and_notes():
    B = 200
    t = ResultTable(["judge", "criterion"], n_boot=B, level=0.9)
    t.add({"judge": "J", "criterion": "a"}, "effect_up", _boot(1.0), 10, test="greater")
    t.add({"judge": "J", "criterion": "a"}, "effect_up_wrong_side", _boot(1.0), 10, test="less")
    t.add({"judge": "J", "criterion": "a"}, "effect_two", _boot(-1.0), 10, test="two-sided")
    t.add({"judge": "J", "criterion": "a"}, "descriptive", _boot(1.0), 10)
    t.add({"judge": None, "criterion": "a"}, "humans", _boot(1.0), 12, test="two-sided")
    t.add({"judge": "J", "criterion": "a"}, "undefined", NAN, 0, test="two-sided", undefined="not defined: no items",
          note="a caveat")
    sparse = _boot(0.5)
    sparse[1:150] = NAN
    t.add({"judge": "J", "criterion": "a"}, "sparse", sparse, 10, test="two-sided", note="a caveat")
    t.add({"judge": "J", "criterion": "a"}, "constant", np.full(B + 1, 0.3), 10, test="greater")
    out = t.frame().set_index("measure")
    assert list(t.frame().columns) == ["judge", "criterion", *RESULT_COLUMNS[1:]]
    assert out["flagged"].to_dict() == {"effect_up": True, "effect_up_wrong_side": False, "effect_two": True,
                                        "descriptive": False, "humans": False, "undefined": False, "sparse": False,
                                        "constant": False}
    assert out["opposite"].to_dict() == {**{k: False for k in out.index}, "effect_up_wrong_side": True}
    # The test column: the direction on tested judge rows, None on descriptive rows and the humans' rows.
    assert out["test"].to_dict() == {"effect_up": "greater", "effect_up_wrong_side": "less", "effect_two": "two-sided",
                                     "descriptive": None, "humans": None, "undefined": "two-sided",
                                     "sparse": "two-sided", "constant": "greater"}
    # p is the z test of the estimate against the resamples' standard error, in the row's direction.
    assert out.loc["effect_up", "p_value"] == z_p_value([1.0], _boot(1.0)[None, 1:], alternative="greater")[0]
    assert out[["p_value", "q_value"]].loc[["descriptive", "humans", "undefined", "sparse", "constant"]].isna().all().all()
    # The interval is numpy's quantile of the replicates.
    lo, hi = np.quantile(_boot(1.0)[1:], [0.05, 0.95])
    assert out.loc["effect_up", "ci_low"] == lo and out.loc["effect_up", "ci_high"] == hi
    assert out.loc["undefined", "note"] == "not defined: no items; a caveat"
    assert np.isnan(out.loc["undefined", ["estimate", "ci_low", "ci_high"]].astype(float)).all()
    assert out.loc["sparse", "note"] == f"a caveat; {SPARSE_NOTE}, so not tested"
    assert out.loc["constant", "note"] == "the resamples do not vary, so not tested"
    assert np.isnan(out.loc["sparse", "ci_low"]) and out.loc["sparse", "estimate"] == 0.5
    assert out.loc["effect_up", "note"] == "" and out.loc["descriptive", "note"] == ""
    frame = t.frame()
    assert frame["n"].dtype == np.int64 and frame["flagged"].dtype == bool and frame["opposite"].dtype == bool
    assert frame["p_value"].dtype == float and frame["q_value"].dtype == float
    assert frame.loc[frame["measure"] == "humans", "judge"].iloc[0] is None
    with pytest.raises(ValueError):
        t.add({"judge": "J"}, "bad", 1.0, 1, test="lower")


def test_result_table_without_resamples_says_so_and_tests_nothing():
    t = ResultTable(["judge"], n_boot=0, level=0.95)
    t.add({"judge": "J"}, "tested", 2.0, 5, test="two-sided")
    t.add({"judge": "J"}, "descriptive", 2.0, 5)
    out = t.frame().set_index("measure")
    assert out.loc["tested", "note"] == "no interval (n_boot=0), so not tested"
    assert out.loc["descriptive", "note"] == "no interval (n_boot=0)"
    assert not out["flagged"].any() and out["ci_low"].isna().all() and out["p_value"].isna().all()


def test_empty_result_table_has_the_columns():
    assert list(ResultTable(["section", "judge"], n_boot=10, level=0.95).frame().columns) == \
        ["section", "judge", *RESULT_COLUMNS[1:]]


def test_tidy_gives_the_contract_dtypes():
    out = tidy(pd.DataFrame({"judge": [NAN, "J"], "criterion": ["a", NAN], "n": [1.0, 2.0], "test": [NAN, "less"],
                             "p_value": [None, 0.1], "flagged": [0, 1], "opposite": [None, 0]}))
    assert out["judge"].tolist() == [None, "J"] and out["criterion"].tolist() == ["a", None]
    assert out["test"].tolist() == [None, "less"] and out["p_value"].dtype == float
    assert out["n"].dtype == np.int64 and out["flagged"].dtype == bool and out["opposite"].tolist() == [False, False]
