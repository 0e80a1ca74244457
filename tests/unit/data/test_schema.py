"""Tests of evalcore.data.schema (mapping, wide-to-long, validation, summary) and ingest.ingest_frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.data import ingest, io, schema
from evalcore.data.schema import ROW, WideSpec
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
    assert schema.suggest_mapping(columns, table=table) == expected


def test_detect_table():
    assert schema.detect_table(["item_id", "winner"]) == "comparisons"
    assert schema.detect_table(["item_id", "score"]) == "ratings"
    assert schema.detect_table(["item_id", "score", "winner"]) == "ratings"


# --------------------------------------------------------------------------- apply_mapping


RAW = pd.DataFrame({"id": ["q1", "q2"], "annotator": ["a", "b"], "grade": [1, 2], "score": [9, 9],
                    "dialect": ["x", "y"]})


def test_apply_mapping_renames_and_keeps_the_rest():
    out = schema.apply_mapping(RAW, {"id": "item_id", "annotator": "rater", "grade": "score"}, file="f.csv")
    # 'score' (unmapped, but named like a mapped target) gives way to 'grade'; 'dialect' stays a segment.
    assert list(out.columns) == ["item_id", "rater", "score", "dialect"]
    assert list(out["score"]) == [1, 2]
    assert list(RAW.columns) == ["id", "annotator", "grade", "score", "dialect"]  # input untouched


def test_apply_mapping_unknown_source_has_a_did_you_mean():
    with pytest.raises(DataError) as info:
        schema.apply_mapping(RAW, {"anotator": "rater"}, file="f.csv")
    msg = str(info.value)
    assert info.value.column == "anotator"
    assert msg.startswith("f.csv, column 'anotator': the mapping names a column 'anotator' that is not in the file.")
    assert "Fix: did you mean 'annotator'? use one of the file's columns: id, annotator, grade, score, dialect." in msg


def test_apply_mapping_unknown_target_and_two_sources_for_one_target():
    with pytest.raises(DataError, match=r"'scroe' is not a column evalcore knows\. Fix: did you mean 'score'\?"):
        schema.apply_mapping(RAW, {"grade": "scroe"}, file="f.csv")
    with pytest.raises(DataError) as info:
        schema.apply_mapping(RAW, {"grade": "score", "score": "score"}, file="f.csv")
    assert str(info.value) == ("f.csv, column 'score': both 'grade' and 'score' are mapped to 'score'. "
                               "Fix: map only one column to 'score'.")


# --------------------------------------------------------------------------- wide to long


WIDE = pd.DataFrame({
    "Item": ["q1", "q2", "q3"],
    "language": ["de", "de", "fr"],
    "human_1": ["3", "2", "5"],
    "human_2": ["4", None, "5"],
    "gpt4_judge": ["5", "4", " "],
})


def test_suggest_wide():
    spec = schema.suggest_wide(WIDE)
    assert spec == WideSpec(id_columns=("Item", "language"), human_columns=("human_1", "human_2"),
                            judge_columns=("gpt4_judge",))
    assert schema.suggest_wide(RAW) is None  # has rater and score columns: long
    assert schema.suggest_wide(pd.DataFrame({"item_id": [1], "gpt4": [1]})) is None  # a single rater column


def test_wide_to_long_drops_empty_cells_and_keeps_row_numbers():
    spec = schema.suggest_wide(WIDE)
    base = WIDE.assign(**{ROW: [2, 3, 4]})
    long = schema.wide_to_long(base, spec, mapping={"Item": "item_id"}, file="wide.csv")
    assert list(long.columns) == ["item_id", "language", ROW, "rater", "score", "rater_kind"]
    got = sorted(zip(long["item_id"], long["rater"], long["score"], long["rater_kind"], long[ROW]))
    assert got == [
        ("q1", "gpt4_judge", "5", "judge", 2), ("q1", "human_1", "3", "human", 2), ("q1", "human_2", "4", "human", 2),
        ("q2", "gpt4_judge", "4", "judge", 3), ("q2", "human_1", "2", "human", 3),
        ("q3", "human_1", "5", "human", 4), ("q3", "human_2", "5", "human", 4),
    ]  # 9 cells, 2 empty (None and a blank)
    # Without a row column, rows are numbered as a spreadsheet shows them.
    long2 = schema.wide_to_long(WIDE, spec, file="wide.csv")
    assert sorted(set(long2[ROW])) == [2, 3, 4]


def test_wide_errors_name_the_column():
    spec = schema.suggest_wide(WIDE)
    with pytest.raises(DataError, match=r"wide\.csv, column 'human_3': the wide layout names a column"):
        schema.wide_to_long(WIDE, WideSpec(("Item",), ("human_3",), ()), file="wide.csv")
    with pytest.raises(DataError, match=r"column 'human_1': a column is marked both as an annotator and as a judge"):
        schema.wide_to_long(WIDE, WideSpec(("Item",), ("human_1",), ("human_1",)), file="wide.csv")
    with pytest.raises(DataError, match="no annotator or judge columns were chosen"):
        schema.wide_to_long(WIDE, WideSpec(("Item",), (), ()), file="wide.csv")
    clash = WIDE.assign(score=["x", "y", "z"])
    with pytest.raises(DataError, match=r"column 'score': the column 'score' would clash with the 'score' column"):
        schema.wide_to_long(clash, WideSpec((*spec.id_columns, "score"), spec.human_columns, spec.judge_columns),
                            file="wide.csv")


def test_prepare_reads_a_wide_file_and_reports_the_right_row():
    data = b"item_id,language,human_1,human_2,gpt4_judge\nq1,de,3,4,5\nq2,de,2,,4\nq3,fr,5,five,5\n"
    raw = io.read_table(data, name="wide.csv")
    with pytest.raises(DataError) as info:
        ingest.ingest_frame(raw, file="wide.csv")
    assert (info.value.row, info.value.column) == (4, "score")
    assert "score must be a number but is 'five'" in str(info.value)
    ok = ingest.ingest_frame(io.read_table(data.replace(b"five", b"4"), name="wide.csv"), file="wide.csv")
    assert ok.wide is not None and ok.table == "ratings"
    assert len(ok.frame) == 8
    assert ok.frame.groupby("rater_kind").size().to_dict() == {"human": 5, "judge": 3}
    # Each source row's raters come out together, in column order.
    assert list(zip(ok.frame["item_id"], ok.frame["rater"])) == [
        ("q1", "human_1"), ("q1", "human_2"), ("q1", "gpt4_judge"), ("q2", "human_1"), ("q2", "gpt4_judge"),
        ("q3", "human_1"), ("q3", "human_2"), ("q3", "gpt4_judge")]


def test_validated_ratings_are_grouped_by_item_in_a_stable_order():
    """Rows of one item end up together, items in order of first appearance, each item's rows in file order."""
    raw = pd.DataFrame({"item_id": ["b", "a", "c", "a", "b", "c", "b"], "rater": ["h1", "h1", "h1", "h2", "h2", "h2", "j"],
                        "rater_kind": ["human"] * 6 + ["judge"], "score": [1, 2, 3, 4, 5, 6, 7]})
    out = schema.validate(raw, table="ratings").frame
    assert list(zip(out["item_id"], out["rater"], out["score"])) == [
        ("b", "h1", 1), ("b", "h2", 5), ("b", "j", 7), ("a", "h1", 2), ("a", "h2", 4), ("c", "h1", 3), ("c", "h2", 6)]
    assert list(out.index) == list(range(7))
    grouped = schema.validate(out, table="ratings").frame  # already grouped: unchanged
    pd.testing.assert_frame_equal(grouped, out)


# --------------------------------------------------------------------------- validate


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
    out = schema.validate(_ratings(rater_kind=kinds), file="f.csv").frame
    assert list(out["rater_kind"]) == ["human", "judge", "human", "judge"]


def test_scores_ids_and_criterion_are_normalised():
    out = schema.validate(_ratings(score=["3,5", "4", "2", "1,25"], item_id=[7.0, 7.0, 8.0, 8.0]),
                          file="f.csv").frame
    assert list(out["score"]) == [3.5, 4.0, 2.0, 1.25]  # decimal comma, as no value uses a point
    assert list(out["item_id"]) == ["7", "7", "8", "8"]  # 7.0 -> '7', the id the user sees
    assert list(out["criterion"]) == ["overall"] * 4
    assert list(out.columns) == ["item_id", "rater", "rater_kind", "criterion", "score"]
    with pytest.raises(DataError, match=r"row 4, column 'score': score must be a number but is '1,5'"):
        schema.validate(_ratings(score=["1.5", "2", "1,5", "3"]), file="f.csv")  # points and commas: ambiguous


def test_empty_scores_are_left_out_with_a_note():
    checked = schema.validate(_ratings(score=["1", "", "3", "4"]).assign(rater=["h", "j", "h", "j"]), file="f.csv")
    assert len(checked.frame) == 3
    assert checked.notes == ("f.csv: 1 row(s) with an empty score were left out.",)


@pytest.mark.parametrize("changes,pattern", [
    ({"score": ["good", "bad", "ok", "good"]},
     r"row 2, column 'score': score holds text labels \('good', 'bad', 'ok'\), not numbers\. Fix: recode"),
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
        schema.validate(_ratings(**changes), file="f.csv")


def test_repeats_are_not_duplicates_when_numbered():
    frame = _ratings(item_id=["1"] * 4, rater=["h", "j", "j", "j"], rater_kind=["human", "judge", "judge", "judge"],
                     sample=["", "0", "1", "2"])
    out = schema.validate(frame, file="f.csv").frame
    assert list(out["sample"]) == [0, 0, 1, 2] and out["sample"].dtype == "int64"
    with pytest.raises(DataError, match=r"rows 4 and 5 are the same judgment .*sample=1"):
        schema.validate(frame.assign(sample=["", "0", "1", "1"]), file="f.csv")


def test_missing_and_misspelt_columns():
    with pytest.raises(DataError) as info:
        schema.validate(_ratings().rename(columns={"score": "scroe"}), file="f.csv")
    assert str(info.value) == (
        "f.csv, column 'score': required column 'score' is missing. Fix: the column 'scroe' looks like a "
        "misspelling of 'score': rename it, or map it with --map scroe=score (CLI) or in the column mapping (app).")
    with pytest.raises(DataError, match=r"column 'rater_kind': required column 'rater_kind' is missing"):
        schema.validate(_ratings().drop(columns="rater_kind"), file="f.csv")
    with pytest.raises(DataError, match="has no data rows"):
        schema.validate(_ratings().iloc[:0], file="f.csv")


def _comparisons(**changes) -> pd.DataFrame:
    base = {"item_id": ["1", "1", "2", "2", "3"], "rater": ["h", "j", "h", "j", "j"],
            "rater_kind": ["human", "judge", "human", "judge", "judge"],
            "winner": ["A", "Model_B", "Tie (bothbad)", "2", "first"]}
    base.update(changes)
    return pd.DataFrame(base)


def test_winner_synonyms_and_swapped_parsing():
    out = schema.validate(_comparisons(swapped=["TRUE", "no", "", None, "1"]), file="c.csv").frame
    assert list(out["winner"]) == ["a", "b", "tie", "b", "a"]
    assert list(out["swapped"]) == [True, False, False, False, True]
    assert out["swapped"].dtype == bool
    out = schema.validate(_comparisons(winner=[1.0, 2.0, 1.0, 2.0, 1.0], swapped=[1.0, 0.0, np.nan, 1.0, 0.0]),
                          file="c.csv").frame
    assert list(out["winner"]) == ["a", "b", "a", "b", "a"]
    assert list(out["swapped"]) == [True, False, False, True, False]
    out = schema.validate(_comparisons(), file="c.csv").frame  # no swapped column: shown in default order
    assert list(out["swapped"]) == [False] * 5
    assert schema.validate(_comparisons(), file="c.csv").table == "comparisons"  # detected from 'winner'


@pytest.mark.parametrize("changes,pattern", [
    ({"winner": ["a", "x", "b", "a", "a"]}, r"row 3, column 'winner': winner must be 'a', 'b' or 'tie' but is 'x'"),
    ({"swapped": ["maybe", "no", "", None, "1"]}, r"row 2, column 'swapped': swapped must be true or false"),
    ({"prob_a": ["0.5", "1.5", "0.2", "0.1", "0"]}, r"row 3, column 'prob_a': prob_a must be a probability"),
    ({"item_id": ["1", "1", "1", "1", "3"], "rater": ["h", "j", "h", "j", "j"]},
     r"rows 2 and 4 are the same judgment \(item_id=1, rater=h, swapped=False\)"),
])
def test_comparison_errors(changes, pattern):
    with pytest.raises(DataError, match=pattern):
        schema.validate(_comparisons(**changes), file="c.csv")


def test_formula_and_html_cells_are_notes():
    frame = _ratings(text=["=1+2", "<i>x</i>", "-3", "fine"], item_id=["=cmd", "=cmd", "2", "2"])
    checked = schema.validate(frame, file="f.csv")
    assert checked.notes == (
        "f.csv, column 'item_id': 2 cell(s) start like a spreadsheet formula (first at row 2: '=cmd'). They are "
        "kept as plain text, and CSV downloads prefix them with ' so that Excel or Sheets will not run them.",
        "f.csv, column 'text': 1 cell(s) start like a spreadsheet formula (first at row 2: '=1+2'). They are kept "
        "as plain text, and CSV downloads prefix them with ' so that Excel or Sheets will not run them.",
        "f.csv, column 'text': 1 cell(s) hold HTML markup (first at row 3: '<i>x</i>'). They are shown as plain "
        "text and never rendered.",
    )
    assert list(checked.frame["text"]) == ["=1+2", "<i>x</i>", "-3", "fine"]
    assert list(schema.csv_safe(checked.frame)["item_id"]) == ["'=cmd", "'=cmd", "2", "2"]


# --------------------------------------------------------------------------- summary


def _hand_made_ratings() -> pd.DataFrame:
    rows = [
        ("q1", "h1", "human", "LA", 3, 0), ("q1", "h2", "human", "LA", 3, 0),
        ("q1", "gpt-4", "judge", "LA", 4, 0), ("q1", "gpt-4", "judge", "LA", 3, 1),
        ("q1", "h1", "human", "OCQ", 2, 0), ("q1", "h2", "human", "OCQ", 1, 0), ("q1", "gpt-4", "judge", "OCQ", 2, 0),
        ("q2", "h1", "human", "LA", 1, 0), ("q2", "h2", "human", "LA", 2, 0), ("q2", "gpt-4", "judge", "LA", 1, 0),
        ("q2", "h1", "human", "OCQ", 2, 0), ("q2", "h2", "human", "OCQ", 2, 0), ("q2", "gpt-4", "judge", "OCQ", 3, 0),
        ("q3", "h1", "human", "LA", 4, 0), ("q3", "gpt-4", "judge", "LA", 4, 0),
    ]
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score", "sample"])
    frame["language"] = frame["item_id"].map({"q1": "en", "q2": "en", "q3": "de"})
    return schema.validate(frame, file="hand.csv").frame


def test_summarize_ratings_counts():
    s = schema.summarize(_hand_made_ratings(), table="ratings")
    assert s.to_dict() == {
        "table": "ratings", "rows": 15, "items": 3, "human_raters": 2, "judges": 1,
        "criteria": ["LA", "OCQ"], "languages": ["de", "en"], "tasks": [], "systems": [],
        "max_humans_per_item": 2,
        "unlocks": ["agreement_humans", "agreement_judge", "class_distribution", "by_language",
                    "score_distribution", "anchoring", "self_consistency"],
    }
    assert s.to_frame().set_index("what").loc["criteria", "value"] == "LA, OCQ"


def test_analyses_say_what_is_missing():
    av = schema.analyses(_hand_made_ratings(), table="ratings").set_index("analysis")
    assert len(av) == len(schema.ANALYSES) == 17  # only analyses with a page or a command (issue 12)
    assert av.loc["familiarity", "missing"] == "column 'perplexity' (or 'text' for a local proxy)"
    assert av.loc["anchoring_position", "missing"] == "column 'position'"
    assert av.loc["win_rate", "missing"] == ("a comparisons table (columns system_a, system_b and judge verdicts "
                                             "(human labels for calibration))")
    assert not av.loc["win_rate", "available"]
    # One human per item only: agreement among humans is no longer possible.
    one = _hand_made_ratings().query("rater != 'h2'")
    av1 = schema.analyses(one, table="ratings").set_index("analysis")
    assert av1.loc["agreement_humans", "missing"] == "at least 2 human raters on the same item"
    assert av1.loc["agreement_judge", "available"]


def test_summarize_comparisons_counts():
    frame = pd.DataFrame({
        "item_id": ["p1", "p1", "p1", "p2", "p2", "p2"],
        "system_a": ["m1", "m1", "m1", "m2", "m2", "m2"], "system_b": ["m2", "m2", "m2", "m3", "m3", "m3"],
        "rater": ["ann", "gpt-4", "gpt-4", "ann", "gpt-4", "gpt-4"],
        "rater_kind": ["human", "judge", "judge", "human", "judge", "judge"],
        "winner": ["a", "a", "b", "tie", "b", "b"], "swapped": [False, False, True, False, False, True],
        "prob_a": [None, 0.7, 0.4, None, 0.2, 0.3],
    })
    checked = schema.validate(frame, file="pairs.csv")
    s = schema.summarize(checked.frame, table="comparisons")
    assert (s.rows, s.items, s.human_raters, s.judges, s.systems) == (6, 2, 1, 1, ("m1", "m2", "m3"))
    assert s.criteria == () and s.max_humans_per_item == 1
    assert s.unlocks == ("win_rate", "position_bias")  # prob_a alone is not CalibraEval's three prompts
    av = schema.analyses(checked.frame, table="comparisons").set_index("analysis")
    assert av.loc["agreement_humans", "missing"] == "a ratings table (2+ human raters per item)"


# --------------------------------------------------------------------------- ingest.ingest_frame


NO_KIND = b"item,annotator,criterion,score\n1,ann1,LA,2\n1,ann2,LA,1\n1,gpt-4o,LA,2\n2,ann1,LA,2\n2,Llama-3-judge,LA,1\n"


def test_prepare_guesses_rater_kind_from_names():
    raw = io.read_table(NO_KIND, name="k.csv")
    ing = ingest.ingest_frame(raw, file="k.csv")
    kinds = dict(zip(ing.frame["rater"], ing.frame["rater_kind"]))
    assert kinds == {"ann1": "human", "ann2": "human", "gpt-4o": "judge", "Llama-3-judge": "judge"}
    assert ing.notes == ("k.csv has no rater_kind column: 2 rater(s) whose names look like models were taken "
                         "as judges (gpt-4o, Llama-3-judge), the other 2 as humans.",)
    assert ing.mapping == {"item": "item_id", "annotator": "rater", "criterion": "criterion", "score": "score"}
    assert ingest.guess_judges(["ann1", "claude-3", "expert_7", "mistral", "Human 2"]) == ["claude-3", "mistral"]


def test_prepare_with_named_judges():
    raw = io.read_table(NO_KIND, name="k.csv")
    ing = ingest.ingest_frame(raw, file="k.csv", judge_raters=["ann2"])
    assert sorted(ing.frame.loc[ing.frame["rater_kind"] == "judge", "rater"].unique()) == ["ann2"]
    assert ing.notes == ()
    with pytest.raises(DataError) as info:
        ingest.ingest_frame(raw, file="k.csv", judge_raters=[])
    assert str(info.value).startswith("k.csv, column 'rater': there are no judge rows: the file has no rater_kind "
                                      "column and no rater was marked as a judge. Fix: say which raters")
    with pytest.raises(DataError, match="there are no human rows: .* every rater was taken as a judge"):
        ingest.ingest_frame(raw, file="k.csv", judge_raters=["ann1", "ann2", "gpt-4o", "Llama-3-judge"])


def test_prepare_without_auto_uses_only_the_mapping():
    data = b"item_id,rater,rater_kind,score,grade\n1,h,human,9,1\n1,j,judge,9,2\n"
    raw = io.read_table(data, name="m.csv")
    auto = ingest.ingest_frame(raw, file="m.csv")
    assert list(auto.frame["score"]) == [9.0, 9.0]  # the column named 'score'
    chosen = ingest.ingest_frame(raw, file="m.csv", mapping={"grade": "score"})  # the user's choice wins
    assert list(chosen.frame["score"]) == [1.0, 2.0]
    only = {"item_id": "item_id", "rater": "rater", "rater_kind": "rater_kind"}
    with pytest.raises(DataError, match=r"column 'score': required column 'score' is missing"):
        # 'score' left unmapped in the app: it must not be used behind the user's back.
        ingest.ingest_frame(raw, file="m.csv", mapping=only, table="ratings", auto=False)
    ing = ingest.ingest_frame(raw, file="m.csv", mapping={**only, "grade": "score"}, table="ratings", auto=False)
    assert list(ing.frame["score"]) == [1.0, 2.0]
    assert "m.csv: column(s) 'score' were not mapped and were left out." in ing.notes
