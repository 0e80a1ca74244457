"""Tests of evalcore.data.summary: what a validated table holds and what it unlocks."""

from __future__ import annotations

import pandas as pd

from evalcore.data.summary import UNLOCKS, summarize, unlocks
from evalcore.data.validation import validate


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
    return validate(frame, file="hand.csv").frame


def test_summarize_ratings_counts():
    s = summarize(_hand_made_ratings(), table="ratings")
    assert s.to_dict() == {
        "table": "ratings", "rows": 15, "items": 3, "human_raters": 2, "judges": 1,
        "criteria": ["LA", "OCQ"], "languages": ["de", "en"], "tasks": [], "systems": [],
        "max_humans_per_item": 2,
        "unlocks": ["agreement_humans", "agreement_judge", "class_distribution", "alt_test", "by_language",
                    "score_distribution", "anchoring", "self_consistency", "true_scores"],
    }
    assert s.to_frame().set_index("what").loc["criteria", "value"] == "LA, OCQ"


def test_analyses_say_what_is_missing():
    av = unlocks(_hand_made_ratings(), table="ratings").set_index("analysis")
    assert list(av.index) == [u.name for u in UNLOCKS] and av.index.is_unique  # one row per analysis offered
    assert av.loc["familiarity", "missing"] == "column 'perplexity' (or 'text' for a local proxy)"
    assert av.loc["anchoring_position", "missing"] == "column 'position'"
    assert av.loc["win_rate", "missing"] == ("a comparisons table (columns system_a, system_b and judge verdicts "
                                             "(human labels for calibration))")
    assert not av.loc["win_rate", "available"]
    # One human per item only: agreement among humans is no longer possible.
    one = _hand_made_ratings().query("rater != 'h2'")
    av1 = unlocks(one, table="ratings").set_index("analysis")
    assert av1.loc["agreement_humans", "missing"] == "at least 2 human raters on the same item"
    assert av1.loc["agreement_judge", "available"]
    assert av1.loc["alt_test", "missing"] == "a judge's rating of items that at least 2 human annotators rated"


def test_the_alt_test_needs_a_judge_on_an_item_two_annotators_rated():
    """Two annotators on one item and the judge on another is not enough: each item must have both."""
    frame = pd.DataFrame({"item_id": ["a", "a", "b", "b", "b"], "rater": ["h1", "h2", "h1", "h2", "j"],
                          "rater_kind": ["human"] * 4 + ["judge"], "score": [1, 2, 3, 4, 5]})
    assert unlocks(validate(frame).frame, table="ratings").set_index("analysis").loc["alt_test", "available"]
    frame.loc[3, "item_id"] = "c"  # item b keeps one annotator and the judge, item a two annotators
    av = unlocks(validate(frame).frame, table="ratings").set_index("analysis")
    assert av.loc[["agreement_humans", "agreement_judge"], "available"].all()
    assert not av.loc["alt_test", "available"]


def test_numbers_declared_nominal_are_no_scores_to_correlate():
    frame = pd.DataFrame({"item_id": ["a", "a", "b", "b"], "rater": ["h", "j"] * 2,
                          "rater_kind": ["human", "judge"] * 2, "system": ["s1", "s1", "s2", "s2"],
                          "score": [1, 2, 2, 1]})
    assert unlocks(validate(frame).frame, table="ratings").set_index("analysis").loc["meta_system", "available"]
    av = unlocks(validate(frame, scale="nominal").frame, table="ratings").set_index("analysis")
    assert av.loc["meta_system", "missing"] == "numeric scores of a criterion that is not nominal (correlations)"


def test_summarize_comparisons_counts():
    frame = pd.DataFrame({
        "item_id": ["p1", "p1", "p1", "p2", "p2", "p2"],
        "system_a": ["m1", "m1", "m1", "m2", "m2", "m2"], "system_b": ["m2", "m2", "m2", "m3", "m3", "m3"],
        "rater": ["ann", "gpt-4", "gpt-4", "ann", "gpt-4", "gpt-4"],
        "rater_kind": ["human", "judge", "judge", "human", "judge", "judge"],
        "winner": ["a", "a", "b", "tie", "b", "b"], "swapped": [False, False, True, False, False, True],
        "prob_a": [None, 0.7, 0.4, None, 0.2, 0.3],
    })
    checked = validate(frame, file="pairs.csv")
    s = summarize(checked.frame, table="comparisons")
    assert (s.rows, s.items, s.human_raters, s.judges, s.systems) == (6, 2, 1, 1, ("m1", "m2", "m3"))
    assert s.criteria == () and s.max_humans_per_item == 1
    # prob_a alone is not CalibraEval's three prompts
    assert s.unlocks == ("win_rate", "position_bias", "true_win_rates", "systems_leaderboard")
    av = unlocks(checked.frame, table="comparisons").set_index("analysis")
    assert av.loc["agreement_humans", "missing"] == "a ratings table (2+ human raters per item)"

