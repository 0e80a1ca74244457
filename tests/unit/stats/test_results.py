"""The one flag rule and the one result table (evalcore.stats.results)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.stats import RESULT_COLUMNS, SPARSE_NOTE, ResultTable, flag, tidy

NAN = np.nan


@pytest.mark.parametrize("lo, hi, less, greater", [
    (-2.0, -1.0, True, False),  # wholly below 0
    (1.0, 2.0, False, True),  # wholly above 0
    (-1.0, 1.0, False, False),  # straddles 0
    (0.0, 1.0, False, False),  # touches 0: not excluded
    (-1.0, 0.0, False, False),
    (NAN, NAN, False, False),  # no interval: never flagged
    (NAN, -1.0, False, False),
    (1.0, NAN, False, False),
])
def test_flag_truth_table(lo, hi, less, greater):
    assert bool(flag(lo, hi, alternative="less")) is less
    assert bool(flag(lo, hi, alternative="greater")) is greater
    assert bool(flag(lo, hi, alternative="two-sided")) is (less or greater)


def test_flag_is_vectorised_and_checks_its_alternative():
    lo, hi = np.array([-2.0, 1.0, -1.0, NAN]), np.array([-1.0, 2.0, 1.0, NAN])
    assert flag(lo, hi, alternative="two-sided").tolist() == [True, True, False, False]
    with pytest.raises(ValueError):
        flag(lo, hi, alternative="lower")


def _boot(center: float, B: int = 200, seed: int = 0) -> np.ndarray:
    return np.concatenate([[center], center + 0.1 * np.random.default_rng(seed).normal(size=B)])


def test_result_table_intervals_flags_and_notes():
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
    out = t.frame().set_index("measure")
    assert list(t.frame().columns) == ["judge", "criterion", *RESULT_COLUMNS[1:]]
    assert out["flagged"].to_dict() == {"effect_up": True, "effect_up_wrong_side": False, "effect_two": True,
                                        "descriptive": False, "humans": False, "undefined": False, "sparse": False}
    # The interval is numpy's quantile of the replicates.
    lo, hi = np.quantile(_boot(1.0)[1:], [0.05, 0.95])
    assert out.loc["effect_up", "ci_low"] == lo and out.loc["effect_up", "ci_high"] == hi
    assert out.loc["undefined", "note"] == "not defined: no items; a caveat"
    assert np.isnan(out.loc["undefined", ["estimate", "ci_low", "ci_high"]].astype(float)).all()
    assert out.loc["sparse", "note"] == f"a caveat; {SPARSE_NOTE}, so not tested"
    assert np.isnan(out.loc["sparse", "ci_low"]) and out.loc["sparse", "estimate"] == 0.5
    assert out.loc["effect_up", "note"] == "" and out.loc["descriptive", "note"] == ""
    frame = t.frame()
    assert frame["n"].dtype == np.int64 and frame["flagged"].dtype == bool
    assert frame.loc[frame["measure"] == "humans", "judge"].iloc[0] is None


def test_result_table_without_resamples_says_so_and_tests_nothing():
    t = ResultTable(["judge"], n_boot=0, level=0.95)
    t.add({"judge": "J"}, "tested", 2.0, 5, test="two-sided")
    t.add({"judge": "J"}, "descriptive", 2.0, 5)
    out = t.frame().set_index("measure")
    assert out.loc["tested", "note"] == "no interval (n_boot=0), so not tested"
    assert out.loc["descriptive", "note"] == "no interval (n_boot=0)"
    assert not out["flagged"].any() and out["ci_low"].isna().all()


def test_empty_result_table_has_the_columns():
    assert list(ResultTable(["section", "judge"], n_boot=10, level=0.95).frame().columns) == \
        ["section", "judge", *RESULT_COLUMNS[1:]]


def test_tidy_gives_the_contract_dtypes():
    out = tidy(pd.DataFrame({"judge": [NAN, "J"], "criterion": ["a", NAN], "n": [1.0, 2.0],
                             "flagged": [0, 1]}))
    assert out["judge"].tolist() == [None, "J"] and out["criterion"].tolist() == ["a", None]
    assert out["n"].dtype == np.int64 and out["flagged"].dtype == bool
