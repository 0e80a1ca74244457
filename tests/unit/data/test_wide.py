"""Tests of evalcore.data.wide: one column per annotator or judge, read as one row per judgment."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.data import ingest, io
from evalcore.data.strings import ROW
from evalcore.data.wide import WideSpec, suggest_wide, wide_to_long
from evalcore.errors import DataError


WIDE = pd.DataFrame({
    "Item": ["q1", "q2", "q3"],
    "language": ["de", "de", "fr"],
    "human_1": ["3", "2", "5"],
    "human_2": ["4", None, "5"],
    "gpt4_judge": ["5", "4", " "],
})


# A long table: rater and score columns.
LONG = pd.DataFrame({"id": ["q1", "q2"], "annotator": ["a", "b"], "grade": [1, 2], "score": [9, 9]})


def test_suggest_wide():
    spec = suggest_wide(WIDE)
    assert spec == WideSpec(id_columns=("Item", "language"), human_columns=("human_1", "human_2"),
                            judge_columns=("gpt4_judge",))
    assert suggest_wide(LONG) is None  # has rater and score columns: long
    assert suggest_wide(pd.DataFrame({"item_id": [1], "gpt4": [1]})) is None  # a single rater column


def test_wide_to_long_drops_empty_cells_and_keeps_row_numbers():
    spec = suggest_wide(WIDE)
    base = WIDE.assign(**{ROW: [2, 3, 4]})
    long = wide_to_long(base, spec, mapping={"Item": "item_id"}, file="wide.csv")
    assert list(long.columns) == ["item_id", "language", ROW, "rater", "score", "rater_kind"]
    got = sorted(zip(long["item_id"], long["rater"], long["score"], long["rater_kind"], long[ROW]))
    assert got == [
        ("q1", "gpt4_judge", "5", "judge", 2), ("q1", "human_1", "3", "human", 2), ("q1", "human_2", "4", "human", 2),
        ("q2", "gpt4_judge", "4", "judge", 3), ("q2", "human_1", "2", "human", 3),
        ("q3", "human_1", "5", "human", 4), ("q3", "human_2", "5", "human", 4),
    ]  # 9 cells, 2 empty (None and a blank)
    # Without a row column, rows are numbered as a spreadsheet shows them.
    long2 = wide_to_long(WIDE, spec, file="wide.csv")
    assert sorted(set(long2[ROW])) == [2, 3, 4]


def test_wide_errors_name_the_column():
    spec = suggest_wide(WIDE)
    with pytest.raises(DataError, match=r"wide\.csv, column 'human_3': the wide layout names a column"):
        wide_to_long(WIDE, WideSpec(("Item",), ("human_3",), ()), file="wide.csv")
    with pytest.raises(DataError, match=r"column 'human_1': a column is marked both as an annotator and as a judge"):
        wide_to_long(WIDE, WideSpec(("Item",), ("human_1",), ("human_1",)), file="wide.csv")
    with pytest.raises(DataError, match="no annotator or judge columns were chosen"):
        wide_to_long(WIDE, WideSpec(("Item",), (), ()), file="wide.csv")
    clash = WIDE.assign(score=["x", "y", "z"])
    with pytest.raises(DataError, match=r"column 'score': the column 'score' would clash with the 'score' column"):
        wide_to_long(clash, WideSpec((*spec.id_columns, "score"), spec.human_columns, spec.judge_columns),
                            file="wide.csv")


def test_prepare_reads_a_wide_file_and_reports_the_right_row():
    data = b"item_id,language,human_1,human_2,gpt4_judge\nq1,de,3,4,5\nq2,de,2,,4\nq3,fr,5,five,5\n"
    raw = io.read_table(data, name="wide.csv")
    with pytest.raises(DataError) as info:
        ingest.ingest_frame(raw, file="wide.csv")
    assert (info.value.row, info.value.column) == (4, "score")
    assert "mixes numbers ('3', '4', '5') and text labels ('five': 1 row(s))" in str(info.value)
    ok = ingest.ingest_frame(io.read_table(data.replace(b"five", b"4"), name="wide.csv"), file="wide.csv")
    assert ok.wide is not None and ok.table == "ratings"
    assert len(ok.frame) == 8
    assert ok.frame.groupby("rater_kind").size().to_dict() == {"human": 5, "judge": 3}
    # Each source row's raters come out together, in column order.
    assert list(zip(ok.frame["item_id"], ok.frame["rater"])) == [
        ("q1", "human_1"), ("q1", "human_2"), ("q1", "gpt4_judge"), ("q2", "human_1"), ("q2", "gpt4_judge"),
        ("q3", "human_1"), ("q3", "human_2"), ("q3", "gpt4_judge")]
