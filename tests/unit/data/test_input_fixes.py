"""Bad input: decimal commas read by one rule, judges recognised by name (one rule for every
importer), the classification shown before import (ingest.rater_roles), and unparsed judge outputs kept as
rows marked ``invalid``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.data import ingest, io, raters
from evalcore.data.numbers import decimal_comma
from evalcore.data.validation import validate
from evalcore.data.wide import suggest_wide
from evalcore.data.presets.crowdkit import read_crowdkit
from evalcore.errors import DataError


def _ratings(scores) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame({"item_id": [str(i // 2) for i in range(n)], "rater": ["h", "j"] * (n // 2),
                         "rater_kind": ["human", "judge"] * (n // 2), "score": scores})


# --------------------------------------------------------------------------- decimal commas


@pytest.mark.parametrize("scores, expect", [
    (["4,0", "3,5", "2,0", "1,0"], [4.0, 3.5, 2.0, 1.0]),  # every value with a decimal comma (was: text labels)
    (["4,0", "4", "3,5", "2"], [4.0, 4.0, 3.5, 2.0]),  # mixed with integers: the same rule
    (["0,125", "0,250", "1", "2"], [0.125, 0.25, 1.0, 2.0]),  # three decimals after a 0: not thousands
    (["-1,5", "+2,0", "3", "4"], [-1.5, 2.0, 3.0, 4.0]),
    (["1,000", "2,5", "3", "4"], [1.0, 2.5, 3.0, 4.0]),  # a decimal-comma column: '1,000' is one
    (["4", "3.5", "2", "1"], [4.0, 3.5, 2.0, 1.0]),  # points: untouched
])
def test_decimal_commas_are_read_whatever_their_mix(scores, expect):
    checked = validate(_ratings(scores), file="f.csv")
    assert list(checked.frame["score"]) == expect
    if any("," in s for s in scores):
        assert any("decimal commas were read as decimal points" in n for n in checked.notes)


@pytest.mark.parametrize("scores, pattern", [
    (["1,000", "2,000", "3,500", "4,000"],
     r"row 2, column 'score': score holds '1,000', which could use the comma as a thousands separator or as a "
     r"decimal comma\. Fix: write plain numbers"),
    (["1,000,000", "2", "3", "4"], r"row 2, column 'score': score must be a number but is '1,000,000'"),
    (["4", "3.5", "4,5", "1"], r"row 4, column 'score': score must be a number but is '4,5'"),  # both marks
    (["4,0", "good", "3,5", "2,0"], r"row 3, column 'score': criterion 'overall' mixes numbers \('4,0', '3,5', "
                                    r"'2,0'\) and text labels \('good': 1 row\(s\)\)"),
])
def test_ambiguous_or_bad_numbers_get_one_message(scores, pattern):
    with pytest.raises(DataError, match=pattern):
        validate(_ratings(scores), file="f.csv")


def test_decimal_comma_files_read_end_to_end():
    semi = b"item_id;rater;rater_kind;score\nq1;h;human;4,0\nq1;j;judge;3,5\nq2;h;human;2,0\nq2;j;judge;1,0\n"
    ing = ingest.ingest_frame(io.read_table(semi, name="semi.csv"), file="semi.csv")
    assert list(ing.frame["score"]) == [4.0, 3.5, 2.0, 1.0]
    quoted = b'item_id,rater,rater_kind,score\nq1,h,human,"4,0"\nq1,j,judge,"3,5"\nq2,h,human,"2,0"\nq2,j,judge,4\n'
    ing = ingest.ingest_frame(io.read_table(quoted, name="q.csv"), file="q.csv")
    assert list(ing.frame["score"]) == [4.0, 3.5, 2.0, 4.0]
    # the same rule for the other numeric columns (here perplexity), without a note
    df = _ratings(["4", "3", "2", "1"]).assign(perplexity=["12,5", "12,5", "7,25", "7,25"])
    assert list(validate(df, file="f.csv").frame["perplexity"]) == [12.5, 12.5, 7.25, 7.25]


def test_decimal_comma_rule():
    assert decimal_comma(["4,0", "4"]) and not decimal_comma(["4", "5"])
    assert not decimal_comma(["4,0", "4.5"]) and not decimal_comma(["1,2,3"])
    assert decimal_comma(["12,50"]) and decimal_comma(["1,000", "0,5"])
    with pytest.raises(ValueError):
        decimal_comma(["12,500"])


def test_crowdkit_labels_follow_the_same_rule(tmp_path):
    path = tmp_path / "k.tsv"
    path.write_text("task\tworker\tlabel\nt1\talice\t4,5\nt1\tgpt-4\t4\nt2\talice\t2,0\nt2\tgpt-4\t1,5\n")
    res = read_crowdkit([path])
    assert list(res.frame["score"]) == [4.5, 4.0, 2.0, 1.5] and res.frame["score"].dtype == float


# --------------------------------------------------------------------------- judges by name


JUDGES = ["prometheus", "prometheus-8-7b", "selene", "Selene-1-Mini", "qwen2.5-72b", "gemma-2-9b", "phi-3",
          "deepseek-v3", "command-r-plus", "Phi3", "Mixtral-8x7B", "Llama-3.1-8B", "mistral-7b", "yi-34b",
          "falcon-7b", "OLMo-2-7B", "granite-3.1-8b", "glm-4-9b", "internlm2-20b", "nemotron-4-340b",
          "Skywork-Critic-Llama-3.1-8B", "atla-selene-mini", "flow-judge-v0.1", "PandaLM-7B", "JudgeLM-13B",
          "auto-j-13b", "zephyr-7b-beta", "vicuna-13b", "gpt-4o", "claude-3-5-sonnet", "gemini-1.5-pro",
          "c4ai-command-r-v01", "google/gemma-2b", "microsoft/Phi-4", "o3-mini"]
HUMANS = ["annotator_1", "alice", "Phil", "rater3", "expert_a", "Phillip", "Yi Wang", "Gemma", "Claudette",
          "Ellmann", "Abbott", "Palmer", "Olmo", "en_ann3", "worker_17", "A3KX9PQ2", "Geminiani", "Falconer"]


@pytest.mark.parametrize("name", JUDGES)
def test_open_and_closed_judges_are_recognised(name):
    assert raters.looks_like_judge(name) and ingest.guess_judges([name]) == [name]
    assert raters.judge_name_pattern().search(name)  # the one rule, compiled once


@pytest.mark.parametrize("name", HUMANS)
def test_people_and_rater_ids_stay_human(name):
    assert not raters.looks_like_judge(name) and raters.judge_name_match(name) is None


def test_the_match_says_why():
    assert raters.judge_name_match("prometheus-8-7b") == "prometheus"
    assert raters.judge_name_match("Selene-1-Mini") == "Selene"
    assert raters.judge_name_match("command-r-plus") == "command-r"


def test_wide_columns_use_the_same_rule():
    wide = pd.DataFrame({"item_id": [1, 2], "annotator_1": [3, 4], "annotator_2": [3, 5],
                         "prometheus-7b": [4, 4], "selene": [2, 3]})
    spec = suggest_wide(wide)
    assert spec.human_columns == ("annotator_1", "annotator_2") and spec.judge_columns == ("prometheus-7b", "selene")


# --------------------------------------------------------------------------- the classification before import


NO_KIND = pd.DataFrame({"item": ["1", "1", "1", "1", "2", "2", "2"],
                        "annotator": ["alice", "Phil", "prometheus-8-7b", "selene", "alice", "Phil", "selene"],
                        "score": ["4", "4", "5", "3", "2", "2", "1"]})


def test_rater_roles_by_name():
    roles = ingest.rater_roles(NO_KIND, file="k.csv")
    assert list(roles.columns) == ["rater", "rows", "role", "reason"]
    assert roles.to_dict("records") == [
        {"rater": "alice", "rows": 2, "role": "human", "reason": "default: human"},
        {"rater": "Phil", "rows": 2, "role": "human", "reason": "default: human"},
        {"rater": "prometheus-8-7b", "rows": 1, "role": "judge", "reason": "name looks like a model: matched 'prometheus'"},
        {"rater": "selene", "rows": 2, "role": "judge", "reason": "name looks like a model: matched 'selene'"},
    ]
    # the import classifies the same way
    ing = ingest.ingest_frame(NO_KIND, file="k.csv")
    kinds = ing.frame.drop_duplicates("rater").set_index("rater")["rater_kind"].to_dict()
    assert kinds == dict(zip(roles["rater"], roles["role"]))


def test_rater_roles_with_the_users_choice_goes_back_to_the_import():
    chosen = ["prometheus-8-7b"]  # the analyst says selene is a person here
    roles = ingest.rater_roles(NO_KIND, judge_raters=chosen)
    assert roles.set_index("rater")["reason"].to_dict() == {
        "alice": "chosen: human", "Phil": "chosen: human", "prometheus-8-7b": "chosen: judge",
        "selene": "chosen: human"}
    ing = ingest.ingest_frame(NO_KIND, file="k.csv", judge_raters=chosen)
    assert set(ing.frame.loc[ing.frame["rater_kind"] == "judge", "rater"]) == {"prometheus-8-7b"}


def test_rater_roles_from_a_rater_kind_column_a_wide_layout_and_an_unmapped_file():
    with_kind = NO_KIND.assign(kind=["Human", "human", "LLM", "judge", "human", "human", "robot"])
    roles = ingest.rater_roles(with_kind, {"kind": "rater_kind"})
    assert roles["reason"].eq("rater_kind column").all()
    assert roles["role"].tolist() == ["human", "human", "judge", "judge"]  # a rater's first readable value

    wide = pd.DataFrame({"item_id": ["1", "2"], "ann_1": [3, 4], "ann_2": [3, None], "gpt-4o": [4, 4]})
    roles = ingest.rater_roles(wide)
    assert roles.to_dict("list") == {"rater": ["ann_1", "ann_2", "gpt-4o"], "rows": [2, 1, 2],
                                     "role": ["human", "human", "judge"],
                                     "reason": ["wide layout: annotator column"] * 2 + ["wide layout: judge column"]}
    empty = ingest.rater_roles(pd.DataFrame({"x": [1], "y": [2]}))
    assert empty.empty and list(empty.columns) == list(ingest.ROLE_COLUMNS)


# --------------------------------------------------------------------------- unparsed outputs


def _comparisons(**cols) -> pd.DataFrame:
    base = {"item_id": ["1", "1", "2", "2"], "rater": ["h", "j", "h", "j"],
            "rater_kind": ["human", "judge", "human", "judge"], "winner": ["a", "b", "tie", "garbage"]}
    base.update(cols)
    return pd.DataFrame(base)


def test_invalid_rows_validate_with_an_empty_winner():
    out = validate(_comparisons(invalid=["", "no", "false", "TRUE"]), file="c.csv").frame
    assert out["invalid"].tolist() == [False, False, False, True]
    assert out["winner"].isna().tolist() == [False, False, False, True]
    assert list(out.columns[:6]) == ["item_id", "rater", "rater_kind", "winner", "swapped", "invalid"]
    with pytest.raises(DataError, match=r"row 5, column 'winner': winner must be 'a', 'b' or 'tie' but is 'garbage'"):
        validate(_comparisons(), file="c.csv")
    with pytest.raises(DataError, match=r"row 3, column 'invalid': invalid must be true or false but is 'maybe'"):
        validate(_comparisons(invalid=[False, "maybe", False, True]), file="c.csv")
    assert np.array_equal(validate(_comparisons(invalid=[0, 0, 0, 1]), file="c.csv").frame["invalid"],
                          [False, False, False, True])
