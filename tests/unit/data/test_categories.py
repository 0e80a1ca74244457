"""Text labels as categories, declared scales and orders (evalcore.data.categories), through validation,
ingest, the store and a real dataset whose labels are text."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.data import ingest, io
from evalcore.data.categories import MAX_CATEGORIES, declarations, label_kinds, near_duplicates, scale_report
from evalcore.data.mapping import suggest_mapping
from evalcore.data.scales import category_of
from evalcore.data.store import Workspace
from evalcore.data.validation import validate
from evalcore.errors import DataError
from tests.helpers import DATASETS, SAMPLES, needs_datasets


def _ratings(score, criterion=None, **extra) -> pd.DataFrame:
    """Two raters (an annotator and a judge) per item, one score each, in the order given."""
    n = len(score)
    frame = {"item_id": [f"q{i // 2}" for i in range(n)], "rater": ["ann", "gpt-4"] * (n // 2),
             "rater_kind": ["human", "judge"] * (n // 2), "score": score}
    if criterion is not None:
        frame["criterion"] = criterion
    frame.update(extra)
    return pd.DataFrame(frame)


def _err(frame: pd.DataFrame, **kw) -> str:
    with pytest.raises(DataError) as info:
        validate(frame, file="f.csv", **kw)
    return str(info.value)


# --------------------------------------------------------------------------- text labels are nominal categories


def test_text_labels_are_nominal_categories_kept_as_written():
    checked = validate(_ratings(["yes", "no", "Yes", "yes "]), file="f.csv")
    out = checked.frame
    assert out["category"].tolist() == ["yes", "no", "Yes", "yes "]  # never merged, never stripped
    assert out["score"].isna().all() and out["scale"].tolist() == ["nominal"] * 4
    assert list(out.columns) == ["item_id", "rater", "rater_kind", "criterion", "score", "category", "scale"]
    assert checked.notes == ("f.csv, criterion 'overall': labels that differ only in case or in spaces around them "
                             "are kept as different categories: 'yes' / 'Yes' / 'yes '. If they mean the same, "
                             "correct them in the file.",)
    assert category_of(out).tolist() == ["yes", "no", "Yes", "yes "]


def test_a_file_of_numbers_gets_no_scale_or_category_column():
    out = validate(_ratings(["1", "2", "3,5", "4"]), file="f.csv").frame
    assert list(out.columns) == ["item_id", "rater", "rater_kind", "criterion", "score"]
    assert out["score"].tolist() == [1.0, 2.0, 3.5, 4.0]
    sample = ingest.load(SAMPLES / "ratings_multilingual.csv").frame
    assert "scale" not in sample.columns and "category" not in sample.columns


def test_numbers_declared_nominal_keep_their_scores_and_get_categories():
    out = validate(_ratings(["1", "2.0", "3", "1"]), scale={"*": "nominal"}).frame
    assert out["score"].tolist() == [1.0, 2.0, 3.0, 1.0]
    assert out["category"].tolist() == ["1", "2", "3", "1"]  # the number as a label: 2.0 reads 2
    assert out["scale"].unique().tolist() == ["nominal"]


def test_a_declared_scale_for_numbers_is_a_scale_column_alone():
    out = validate(_ratings(["1", "2", "3", "4"]), scale="interval").frame
    assert out["scale"].unique().tolist() == ["interval"] and "category" not in out.columns


def test_text_labels_in_a_given_order_are_ordinal_positions():
    frame = _ratings(["bad", "ok", "good", "ok", "3", "4"], criterion=["q"] * 4 + ["len"] * 2)
    out = validate(frame, order={"q": "bad, ok, good"}).frame
    assert out["score"].tolist() == [1.0, 2.0, 3.0, 2.0, 3.0, 4.0]
    assert out["category"].tolist()[:4] == ["bad", "ok", "good", "ok"]
    assert out["category"].isna().tolist()[4:] == [True] * 2
    assert out["scale"].tolist() == ["ordinal"] * 6
    # '*' orders the text criteria only; an interval scale with an order keeps the positions
    assert validate(frame, order={"*": ["bad", "ok", "good"]}).frame["score"].tolist() == out["score"].tolist()
    assert validate(frame, order={"q": "bad,ok,good"}, scale={"q": "interval"}).frame["scale"].tolist()[0] == "interval"


def test_a_label_missing_from_the_order_is_named_with_the_fix():
    msg = _err(_ratings(["bad", "ok", "good", "Ok "]), order={"overall": "bad,ok,good"})
    assert msg == ("f.csv, row 5, column 'score': criterion 'overall' has the label 'Ok ', which is not in the order "
                   "given (bad, ok, good). Fix: add every label to the order, lowest first, or correct the cells; it "
                   "differs from 'ok' only in case or spaces, and labels are never merged: correct the cell.")
    assert "'great', which is not in the order" in _err(_ratings(["bad", "great", "good", "ok"]),
                                                         order={"overall": "bad,ok,good"})


@pytest.mark.parametrize("kw, phrase", [
    ({"scale": "ordinal"}, "criterion 'overall' is declared ordinal but holds text labels ('bad', 'ok', 'good') and "
                           "no order was given for them. Fix: give their order, lowest first (--order "
                           "'overall=LOWEST,...,HIGHEST'), or leave the criterion nominal"),
    ({"scale": {"overall": "interval"}}, "is declared interval but holds text labels"),
    ({"scale": {"overall": "nominal"}, "order": {"overall": "bad,ok,good"}},
     "criterion 'overall' is declared nominal and given an order"),
    ({"scale": {"stance": "nominal"}}, "the scale declared for criterion 'stance' names no criterion of the data. "
                                      "Fix: name one of the criteria: 'overall' (or * for every criterion)"),
    ({"order": {"stance": "a,b"}}, "the order declared for criterion 'stance' names no criterion of the data"),
    ({"scale": "nomnal"}, "'nomnal' is not a scale (declared for criterion '*')"),
    ({"order": {"overall": "bad,ok,bad"}}, "the order given for criterion 'overall' lists 'bad' twice"),
    ({"order": {"overall": "bad,,good"}}, "needs two or more labels, none of them empty"),
])
def test_declarations_that_cannot_be_applied_say_why(kw, phrase):
    assert phrase in _err(_ratings(["bad", "ok", "good", "ok"]), **kw)


def test_an_order_for_numbers_is_refused():
    assert "an order was given for criterion 'overall', whose labels are numbers" in _err(
        _ratings(["1", "2", "3", "4"]), order={"overall": "1,2,3,4"})
    assert "no criterion holds text labels to order" in _err(_ratings(["1", "2", "3", "4"]), order=["a", "b"])


def test_numbers_and_text_in_one_criterion_get_one_message_with_the_fix():
    frame = _ratings(["4", "3", "three", "5", "n/a?", "2"], criterion=["LA"] * 6)
    assert _err(frame) == (
        "f.csv, row 4, column 'score': criterion 'LA' mixes numbers ('4', '3', '5') and text labels ('three', 'n/a?': "
        "2 row(s)) in its scores. Fix: declare the criterion nominal to keep every label as a category (--scale "
        "'LA=nominal'), or correct the text cells if they are typos of numbers.")
    out = validate(frame, scale={"LA": "nominal"}).frame  # the fix works: every label a category
    assert out["category"].tolist() == ["4", "3", "three", "5", "n/a?", "2"] and out["score"].isna().all()


def test_criteria_are_read_each_on_its_own():
    frame = _ratings(["yes", "no", "4", "5", "no", "no"], criterion=["ok?", "ok?", "LA", "LA", "ok?", "ok?"])
    out = validate(frame).frame
    assert dict(zip(out["criterion"], out["scale"])) == {"ok?": "nominal", "LA": "ordinal"}
    assert out.loc[out["criterion"] == "LA", "score"].tolist() == [4.0, 5.0]
    assert out.loc[out["criterion"] == "LA", "category"].isna().all()


def test_empty_labels_are_left_out_and_missing_words_are_missing():
    checked = validate(_ratings(["yes", "", "NA", "no"]), file="f.csv")
    assert checked.frame["category"].tolist() == ["yes", "no"]
    assert "f.csv: 2 row(s) with an empty score were left out." in checked.notes


@pytest.mark.parametrize("kw", [{}, {"order": {"overall": "no,yes"}}, {"scale": "nominal"}])
def test_a_validated_table_validates_to_itself(kw):
    score = ["yes", "no", "no", "yes"] if kw.get("order") or not kw else ["1", "2", "2", "1"]
    once = validate(_ratings(score), **kw).frame
    pd.testing.assert_frame_equal(validate(once).frame, once)


def test_a_category_column_without_a_scale_column_is_a_segment():
    """MT-Bench's 'category' (writing, coding, ...) describes the items: it is no column of labels."""
    assert suggest_mapping(["question_id", "model", "category", "score"])["category"] == "task"
    checked = validate(_ratings(["1", "2", "3", "4"], category=["writing", "writing", "coding", "coding"]),
                       file="f.csv")
    assert checked.frame["category_in_file"].tolist() == ["writing", "writing", "coding", "coding"]
    assert "category" not in checked.frame.columns and "was kept as 'category_in_file'" in checked.notes[0]


@pytest.mark.parametrize("scale, phrase", [
    (["nominal", "nominal", "likert", "likert"], "the scale column says each criterion's scale, but holds 'likert'"),
    (["nominal", "ordinal", "nominal", "ordinal"], "criterion 'overall' has more than one scale in the scale column"),
])
def test_a_scale_column_is_checked(scale, phrase):
    assert phrase in _err(_ratings(["1", "2", "3", "4"], scale=scale))


def test_labels_with_an_invisible_character_or_too_many_categories_are_refused():
    nul = _ratings(["yes", "yes\x00", "no", "no"])
    assert "1 label(s) hold an invisible control character: 'yes\\x00'" in _err(nul)
    n = MAX_CATEGORIES + 2
    many = _ratings([f"label {i}" for i in range(n)])
    assert f"criterion 'overall' has {n:,} distinct labels ('label 0', 'label 1', 'label 2', ...)" in _err(many)


def test_comparisons_are_unaffected():
    pairs = ingest.load(SAMPLES / "comparisons_pairwise.csv").frame
    assert "scale" not in pairs.columns and "category" not in pairs.columns
    with pytest.raises(DataError, match="scales and orders are declared for the criteria of ratings"):
        validate(pairs, table="comparisons", scale="nominal")


def test_declarations_parse_strings_lists_and_one_scale_for_all():
    assert declarations("Nominal", None) == ({"*": "nominal"}, {})
    assert declarations(None, {" q ": " bad , ok "}) == ({}, {"q": ("bad", "ok")})
    assert declarations(None, {"q": ["a, b", "c"]})[1] == {"q": ("a, b", "c")}  # a list keeps commas in labels


def test_near_duplicates_group_case_and_spaces_only():
    assert near_duplicates(["Yes", "yes", "YES ", "no", "No", "n o", "maybe"]) == [["Yes", "yes", "YES "], ["no", "No"]]


def test_scale_report_lists_scales_and_categories():
    frame = _ratings(["yes", "no", "Yes", "no", "bad", "good", "3", "4"],
                     criterion=["a"] * 4 + ["b"] * 2 + ["c"] * 2)
    report = scale_report(validate(frame, order={"b": "bad,ok,good"}).frame).set_index("criterion")
    assert report.loc["a"].tolist() == ["nominal", "categories", 3, ["no", "yes", "Yes"], [["yes", "Yes"]]]
    assert report.loc["b", "labels"] == "ordered categories" and report.loc["b", "categories"] == ["bad", "good"]
    assert report.loc["c"].tolist() == ["ordinal", "numbers", None, [], []]


def test_label_preview_lists_what_each_criterion_holds_before_validation():
    raw = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": ["ann", "gpt-4"] * 3,
                        "aspect": ["a", "a", "b", "b", "b", "b"], "label": ["yes", "no", "4", "five", "NA", "3"]})
    kinds = ingest.label_preview(raw)
    assert kinds[["criterion", "rows", "labels", "n_text"]].values.tolist() == [["a", 2, "text", 2],
                                                                              ["b", 4, "mixed", 1]]
    assert kinds["text_labels"].tolist() == [["yes", "no"], ["five"]]
    assert label_kinds(pd.DataFrame({"x": [1]})).empty  # nothing mapped to score yet


def test_load_and_read_take_the_declarations(tmp_path):
    path = tmp_path / "labels.csv"
    _ratings(["bad", "ok", "good", "ok"]).to_csv(path, index=False)
    assert evalcore.read(path)["scale"].unique().tolist() == ["nominal"]
    ing = ingest.load(path, order={"overall": ["bad", "ok", "good"]})
    assert ing.frame["score"].tolist() == [1.0, 2.0, 3.0, 2.0]
    raw = io.read_table(path)
    assert ingest.ingest_frame(raw, file="labels.csv", scale="nominal").frame["scale"].iloc[0] == "nominal"


@pytest.mark.parametrize("kw", [{}, {"order": {"overall": "no,yes"}}, {"scale": "nominal"}])
def test_scales_and_categories_round_trip_through_the_workspace(tmp_path, kw):
    score = ["1", "2", "2", "1"] if kw.get("scale") else ["yes", "no", "no", "yes"]
    frame = validate(_ratings(score), **kw).frame
    ws = Workspace(tmp_path / "ws.duckdb")
    did = ws.save_dataset("labels", {"ratings": frame}, options={"ratings": kw})
    back = ws.load_table(did, "ratings")
    pd.testing.assert_frame_equal(back, frame)
    pd.testing.assert_frame_equal(validate(back).frame, frame)
    assert ws.table_meta(did, "ratings")["options"] == json.loads(json.dumps(kw))


def test_an_uploads_options_are_kept_until_it_is_imported(tmp_path):
    ws = Workspace(tmp_path / "ws.duckdb")
    did = ws.save_upload([("labels.csv", b"item_id,rater,score\n1,a,yes\n")])
    assert ws.upload_options(did) == {}
    ws.set_upload_options(did, {"order": {"overall": ["no", "yes"]}})
    assert Workspace(tmp_path / "ws.duckdb").upload_options(did) == {"order": {"overall": ["no", "yes"]}}
    ws.delete(did)
    with pytest.raises(DataError, match="no pending upload"):
        ws.set_upload_options(did, {})


# --------------------------------------------------------------------------- a real file of text labels


def _pandalm_as_text(path) -> pd.DataFrame:
    """PandaLM's test set as a ratings file of text labels: three annotators and two judges per comparison, each
    label written as a word (GPT-3.5's own 'Tie' and its unparsed 'garbage' kept as they are)."""
    words = {"0": "tie", "1": "response 1", "2": "response 2"}
    folder = DATASETS / "pandalm"
    rows = []
    for rec in json.loads((folder / "testset-v1.json").read_text()):
        rows += [(rec["idx"], f"annotator{k}", "human", words[str(rec[f"annotator{k}"])]) for k in (1, 2, 3)]
    for rec in json.loads((folder / "pandalm-7b-testset-v1.json").read_text()):
        rows.append((rec["idx"], "pandalm-7b", "judge", words[str(rec["pandalm_result"])]))
    gpt = {"1": "response 1", "2": "response 2"}
    for rec in json.loads((folder / "gpt-3.5-turbo-testset-v1.json").read_text()):
        rows.append((rec["idx"], "gpt-3.5-turbo", "judge", gpt.get(rec["gpt_result"], rec["gpt_result"])))
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "label"])
    frame.to_csv(path, index=False)
    return frame


@needs_datasets
def test_pandalm_text_labels_import_as_categories_and_round_trip(tmp_path):
    raw = _pandalm_as_text(tmp_path / "pandalm_text.csv")
    ing = ingest.load(tmp_path / "pandalm_text.csv")
    frame = ing.frame
    assert len(frame) == len(raw) == 999 * 5 and ing.mapping["label"] == "score"
    assert frame["scale"].unique().tolist() == ["nominal"] and frame["score"].isna().all()
    assert sorted(frame["category"].unique()) == ["Tie", "garbage", "response 1", "response 2", "tie"]
    assert any("'tie' / 'Tie'" in n for n in ing.notes)  # GPT-3.5's spelling is reported, not merged
    # The published label counts of the humans' strict majority: 105 ties, 422 and 472.
    humans = frame[frame["rater_kind"] == "human"]
    counts = pd.crosstab(humans["item_id"], humans["category"])
    majority = counts.idxmax(axis=1)[counts.max(axis=1) > counts.sum(axis=1) / 2]
    assert majority.value_counts().to_dict() == {"response 2": 472, "response 1": 422, "tie": 105}
    # The same table back from the workspace, and again through validation.
    ws = Workspace(tmp_path / "ws.duckdb")
    did = ws.save_dataset("pandalm text", {"ratings": frame})
    back = ws.load_table(did, "ratings")
    pd.testing.assert_frame_equal(back, frame)
    pd.testing.assert_frame_equal(validate(back).frame, frame)
    assert np.array_equal(category_of(back).to_numpy(), raw.set_index(["item_id", "rater"]).loc[
        list(zip(back["item_id"].astype(int), back["rater"])), "label"].to_numpy())
