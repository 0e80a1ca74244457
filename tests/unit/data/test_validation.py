"""Tests of evalcore.data.validation: canonical types, and a message naming the fix for every problem."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.data.export import csv_safe
from evalcore.data.validation import validate
from evalcore.errors import DataError


def test_validated_ratings_are_grouped_by_item_in_a_stable_order():
    """Rows of one item end up together, items in order of first appearance, each item's rows in file order."""
    raw = pd.DataFrame({"item_id": ["b", "a", "c", "a", "b", "c", "b"], "rater": ["h1", "h1", "h1", "h2", "h2", "h2", "j"],
                        "rater_kind": ["human"] * 6 + ["judge"], "score": [1, 2, 3, 4, 5, 6, 7]})
    out = validate(raw, table="ratings").frame
    assert list(zip(out["item_id"], out["rater"], out["score"])) == [
        ("b", "h1", 1), ("b", "h2", 5), ("b", "j", 7), ("a", "h1", 2), ("a", "h2", 4), ("c", "h1", 3), ("c", "h2", 6)]
    assert list(out.index) == list(range(7))
    grouped = validate(out, table="ratings").frame  # already grouped: unchanged
    pd.testing.assert_frame_equal(grouped, out)


def _ratings(**changes) -> pd.DataFrame:
    base = {"item_id": ["1", "1", "2", "2"], "rater": ["h", "j", "h", "j"],
            "rater_kind": ["human", "judge", "human", "judge"], "score": ["1", "2", "3", "4"]}
    base.update(changes)
    return pd.DataFrame(base)


@pytest.mark.parametrize("kinds", [
    ["Human", "LLM", " annotator ", "GPT"],
    ["crowd", "model", "expert", "judge"],
    [True, False, True, False],  # an is_human column
    [1, 0, 1, 0],
    [1.0, 0.0, 1.0, 0.0],  # the same read from Excel or Parquet with gaps
    ["yes", "no", "1", "0"],
])
def test_rater_kind_synonyms(kinds):
    out = validate(_ratings(rater_kind=kinds), file="f.csv").frame
    assert list(out["rater_kind"]) == ["human", "judge", "human", "judge"]


def test_scores_ids_and_criterion_are_normalised():
    out = validate(_ratings(score=["3,5", "4", "2", "1,25"], item_id=[7.0, 7.0, 8.0, 8.0]),
                          file="f.csv").frame
    assert list(out["score"]) == [3.5, 4.0, 2.0, 1.25]  # decimal comma, as no value uses a point
    assert list(out["item_id"]) == ["7", "7", "8", "8"]  # 7.0 -> '7', the id the user sees
    assert list(out["criterion"]) == ["overall"] * 4
    assert list(out.columns) == ["item_id", "rater", "rater_kind", "criterion", "score"]
    with pytest.raises(DataError, match=r"row 4, column 'score': score must be a number but is '1,5'"):
        validate(_ratings(score=["1.5", "2", "1,5", "3"]), file="f.csv")  # points and commas: ambiguous


def test_empty_scores_are_left_out_with_a_note():
    checked = validate(_ratings(score=["1", "", "3", "4"]).assign(rater=["h", "j", "h", "j"]), file="f.csv")
    assert len(checked.frame) == 3
    assert checked.notes == ("f.csv: 1 row(s) with an empty score were left out.",)


@pytest.mark.parametrize("changes,pattern", [
    ({"score": ["good", "bad", "1", "good"]},
     r"row 2, column 'score': criterion 'overall' mixes numbers \('1'\) and text labels \('good', 'bad': 3 "
     r"row\(s\)\) in its scores\. Fix: declare the criterion nominal"),
    ({"score": [None, None, None, None]}, r"column 'score': every score is empty"),
    ({"score": ["1", "2", "inf", "4"]}, r"row 4, column 'score': score must be a finite number"),
    ({"item_id": ["1", "  ", "2", "2"]}, r"row 3, column 'item_id': 1 row\(s\) have no item id"),
    ({"rater": ["h", None, "h", "j"]}, r"row 3, column 'rater': 1 row\(s\) have no rater"),
    ({"rater_kind": ["human", "robot", "cyborg", "judge"]},
     r"row 3, column 'rater_kind': rater_kind must be 'human' or 'judge' but is 'robot' \(2 such rows\)"),
    ({"rater": ["h", "h", "h", "j"]}, r"row 2, column 'rater_kind': rater 'h' is marked both human and judge"),
    ({"rater_kind": ["human"] * 4, "rater": ["h", "g", "h", "g"]}, r"there are no judge rows"),
    ({"item_id": ["1", "1", "1", "1"], "rater": ["h", "j", "h", "j"]},
     r"f\.csv: rows 2 and 4 are the same judgment \(item_id=1, rater=h, criterion=overall\); 4 rows are duplicates"),
])
def test_validate_errors(changes, pattern):
    with pytest.raises(DataError, match=pattern):
        validate(_ratings(**changes), file="f.csv")


def test_repeats_are_not_duplicates_when_numbered():
    frame = _ratings(item_id=["1"] * 4, rater=["h", "j", "j", "j"], rater_kind=["human", "judge", "judge", "judge"],
                     sample=["", "0", "1", "2"])
    out = validate(frame, file="f.csv").frame
    assert list(out["sample"]) == [0, 0, 1, 2] and out["sample"].dtype == "int64"
    with pytest.raises(DataError, match=r"rows 4 and 5 are the same judgment .*sample=1"):
        validate(frame.assign(sample=["", "0", "1", "1"]), file="f.csv")


def test_missing_and_misspelt_columns():
    with pytest.raises(DataError) as info:
        validate(_ratings().rename(columns={"score": "scroe"}), file="f.csv")
    assert str(info.value) == (
        "f.csv, column 'score': required column 'score' is missing. Fix: the column 'scroe' looks like a "
        "misspelling of 'score': rename it, or map it with --map scroe=score (CLI) or in the column mapping (app).")
    with pytest.raises(DataError, match=r"column 'rater_kind': required column 'rater_kind' is missing"):
        validate(_ratings().drop(columns="rater_kind"), file="f.csv")
    with pytest.raises(DataError, match="has no data rows"):
        validate(_ratings().iloc[:0], file="f.csv")


def _comparisons(**changes) -> pd.DataFrame:
    base = {"item_id": ["1", "1", "2", "2", "3"], "rater": ["h", "j", "h", "j", "j"],
            "rater_kind": ["human", "judge", "human", "judge", "judge"],
            "winner": ["A", "Model_B", "Tie (bothbad)", "2", "first"]}
    base.update(changes)
    return pd.DataFrame(base)


def test_winner_synonyms_and_swapped_parsing():
    out = validate(_comparisons(swapped=["TRUE", "no", "", None, "1"]), file="c.csv").frame
    assert list(out["winner"]) == ["a", "b", "tie", "b", "a"]
    assert list(out["swapped"]) == [True, False, False, False, True]
    assert out["swapped"].dtype == bool
    out = validate(_comparisons(winner=[1.0, 2.0, 1.0, 2.0, 1.0], swapped=[1.0, 0.0, np.nan, 1.0, 0.0]),
                          file="c.csv").frame
    assert list(out["winner"]) == ["a", "b", "a", "b", "a"]
    assert list(out["swapped"]) == [True, False, False, True, False]
    out = validate(_comparisons(), file="c.csv").frame  # no swapped column: shown in default order
    assert list(out["swapped"]) == [False] * 5
    assert validate(_comparisons(), file="c.csv").table == "comparisons"  # detected from 'winner'


@pytest.mark.parametrize("changes,pattern", [
    ({"winner": ["a", "x", "b", "a", "a"]}, r"row 3, column 'winner': winner must be 'a', 'b' or 'tie' but is 'x'"),
    ({"swapped": ["maybe", "no", "", None, "1"]}, r"row 2, column 'swapped': swapped must be true or false"),
    ({"prob_a": ["0.5", "1.5", "0.2", "0.1", "0"]}, r"row 3, column 'prob_a': prob_a must be a probability"),
    ({"item_id": ["1", "1", "1", "1", "3"], "rater": ["h", "j", "h", "j", "j"]},
     r"rows 2 and 4 are the same judgment \(item_id=1, rater=h, swapped=False\)"),
])
def test_comparison_errors(changes, pattern):
    with pytest.raises(DataError, match=pattern):
        validate(_comparisons(**changes), file="c.csv")


def test_formula_and_html_cells_are_notes():
    frame = _ratings(text=["=1+2", "<i>x</i>", "-3", "fine"], item_id=["=cmd", "=cmd", "2", "2"])
    checked = validate(frame, file="f.csv")
    assert checked.notes == (
        "f.csv, column 'item_id': 2 cell(s) start like a spreadsheet formula (first at row 2: '=cmd'). They are "
        "kept as plain text, and CSV downloads prefix them with ' so that Excel or Sheets will not run them.",
        "f.csv, column 'text': 1 cell(s) start like a spreadsheet formula (first at row 2: '=1+2'). They are kept "
        "as plain text, and CSV downloads prefix them with ' so that Excel or Sheets will not run them.",
        "f.csv, column 'text': 1 cell(s) hold HTML markup (first at row 3: '<i>x</i>'). They are shown as plain "
        "text and never rendered.",
    )
    assert list(checked.frame["text"]) == ["=1+2", "<i>x</i>", "-3", "fine"]
    assert list(csv_safe(checked.frame)["item_id"]) == ["'=cmd", "'=cmd", "2", "2"]

