"""Tests of evalcore.data.ingest.ingest_frame: the mapping, rater kinds guessed from names, the analyst's
choices."""

from __future__ import annotations

import pytest

from evalcore.data import ingest, io
from evalcore.errors import DataError

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
