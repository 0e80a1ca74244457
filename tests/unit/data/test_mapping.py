"""Tests of evalcore.data.mapping: suggesting and applying a column mapping."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.data.mapping import apply_mapping, detect_table, suggest_mapping
from evalcore.errors import DataError


# --------------------------------------------------------------------------- suggest_mapping


@pytest.mark.parametrize("columns,table,expected", [
    (["Item ID", "Annotator", "Rater Type", "Criterion", "Rating", "Lang"], None,
     {"Item ID": "item_id", "Annotator": "rater", "Rater Type": "rater_kind", "Criterion": "criterion",
      "Rating": "score", "Lang": "language"}),
    (["id", "model", "score", "perplexity", "response", "task_name"], "ratings",
     {"id": "item_id", "model": "rater", "score": "score", "perplexity": "perplexity", "response": "text",
      "task_name": "task"}),
    (["worker_id", "example_id", "grade", "Sample Index", "metric"], "ratings",
     {"worker_id": "rater", "example_id": "item_id", "grade": "score", "Sample Index": "sample",
      "metric": "criterion"}),
    (["question_id", "model_a", "model_b", "judge", "winner", "swapped", "p_a", "split"], "comparisons",
     {"question_id": "item_id", "model_a": "system_a", "model_b": "system_b", "judge": "rater",
      "winner": "winner", "swapped": "swapped", "p_a": "prob_a", "split": "subset"}),
    # An exact canonical name beats a synonym: 'task' is the segment when 'item_id' exists.
    (["task", "item_id", "rater", "score"], None,
     {"task": "task", "item_id": "item_id", "rater": "rater", "score": "score"}),
    # Each canonical name is used once: the exact 'score' wins over 'rating', which stays unmapped.
    (["rating", "score", "comment"], "ratings", {"score": "score"}),
    # Only the chosen table's columns: 'winner' is not a ratings column.
    (["winner", "verdict"], "ratings", {}),
    (["  ITEM_ID ", "Rater-Kind"], "ratings", {"  ITEM_ID ": "item_id", "Rater-Kind": "rater_kind"}),
])
def test_suggest_mapping(columns, table, expected):
    assert suggest_mapping(columns, table=table) == expected


def test_detect_table():
    assert detect_table(["item_id", "winner"]) == "comparisons"
    assert detect_table(["item_id", "score"]) == "ratings"
    assert detect_table(["item_id", "score", "winner"]) == "ratings"


# --------------------------------------------------------------------------- apply_mapping


RAW = pd.DataFrame({"id": ["q1", "q2"], "annotator": ["a", "b"], "grade": [1, 2], "score": [9, 9],
                    "dialect": ["x", "y"]})


def test_apply_mapping_renames_and_keeps_the_rest():
    out = apply_mapping(RAW, {"id": "item_id", "annotator": "rater", "grade": "score"}, file="f.csv")
    # 'score' (unmapped, but named like a mapped target) gives way to 'grade'; 'dialect' stays a segment.
    assert list(out.columns) == ["item_id", "rater", "score", "dialect"]
    assert list(out["score"]) == [1, 2]
    assert list(RAW.columns) == ["id", "annotator", "grade", "score", "dialect"]  # input untouched


def test_apply_mapping_unknown_source_has_a_did_you_mean():
    with pytest.raises(DataError) as info:
        apply_mapping(RAW, {"anotator": "rater"}, file="f.csv")
    msg = str(info.value)
    assert info.value.column == "anotator"
    assert msg.startswith("f.csv, column 'anotator': the mapping names a column 'anotator' that is not in the file.")
    assert "Fix: did you mean 'annotator'? use one of the file's columns: id, annotator, grade, score, dialect." in msg


def test_apply_mapping_unknown_target_and_two_sources_for_one_target():
    with pytest.raises(DataError, match=r"'scroe' is not a column evalcore knows\. Fix: did you mean 'score'\?"):
        apply_mapping(RAW, {"grade": "scroe"}, file="f.csv")
    with pytest.raises(DataError) as info:
        apply_mapping(RAW, {"grade": "score", "score": "score"}, file="f.csv")
    assert str(info.value) == ("f.csv, column 'score': both 'grade' and 'score' are mapped to 'score'. "
                               "Fix: map only one column to 'score'.")

