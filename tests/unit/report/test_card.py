"""The judge report card (:mod:`evalcore.report.card`): verdicts that name the sample's simulated biases,
findings that are exactly the library's flagged rows, mitigations from the papers, and its JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalcore.data.ingest import load
from evalcore.errors import DataError
from evalcore.report.card import judge_report_card, report_card, run_audit
from tests.helpers import SAMPLE, SAMPLE_PAIRS

BOOT = 300


@pytest.fixture(scope="module")
def ratings_audit():
    return run_audit(load(SAMPLE, table="ratings").frame, table="ratings", n_boot=BOOT, seed=0)


@pytest.fixture(scope="module")
def pairs_audit():
    return run_audit(load(SAMPLE_PAIRS, table="comparisons").frame, table="comparisons", n_boot=BOOT, seed=0)


def _cards(audit):
    return {c.judge: c for c in report_card(audit).cards}


def test_ratings_verdicts_name_the_simulated_biases(ratings_audit):
    cards = _cards(ratings_audit)
    assert set(cards) == {"gpt-4/single-call", "gpt-4/per-criterion"}
    single, per = cards["gpt-4/single-call"].verdict, cards["gpt-4/per-criterion"].verdict
    # ground truth: single-call anchors criteria at gamma 0.5; per-criterion has a familiarity slope of -0.8
    assert "anchored when scoring criteria together" in single and "anchored" not in per
    assert "favours familiar (low-perplexity) text in all 10 languages" in per
    # both judges are lenient everywhere, most in non-Latin and low-resource languages (agreement ~0.6 in Hindi, Bengali)
    for v in (single, per):
        assert v.startswith("agrees with humans about as well as humans agree with each other on ")
        assert "of 10 languages; less well in " in v and "Bengali" in v and "Hindi" in v
        assert "scores too high in all 10 languages" in v
    assert "English" not in per.split("; less well in ")[1].split(";")[0]


def test_findings_are_the_librarys_flagged_rows(ratings_audit):
    card = _cards(ratings_audit)["gpt-4/single-call"]
    gap = ratings_audit.results["agreement_card"]
    bias = ratings_audit.results["bias"]
    flagged_gap = gap[(gap["judge"] == "gpt-4/single-call") & gap["flagged"]]
    flagged_bias = bias[(bias["judge"] == "gpt-4/single-call") & bias["flagged"]]
    assert len(card.findings) == len(flagged_gap) + len(flagged_bias) > 0
    assert all(f.q_value is not None and f.q_value <= 0.05 for f in card.findings)
    hindi = next(f for f in card.findings if f.section == "agreement" and f.group == "Hindi")
    row = flagged_gap[flagged_gap["language"] == "Hindi"].iloc[0]
    assert (hindi.estimate, hindi.ci_low, hindi.ci_high, hindi.n) == (row["estimate"], row["ci_low"], row["ci_high"],
                                                                      row["n"])
    actions = " ".join(m.action for m in card.mitigations)
    assert "Judge one criterion per call" in actions and "native-speaker" in actions
    assert all(m.source for m in card.mitigations)


def test_comparisons_verdicts(pairs_audit):
    cards = _cards(pairs_audit)
    assert set(cards) == {"gpt-4/pairwise", "gpt-3.5/pairwise", "llama-2-70b/pairwise"}
    for judge, c in cards.items():
        # every judge favours the output shown first (pi = 0.06, 0.12, 0.18 in the ground truth)
        assert "favours the output shown first" in c.verdict, judge
        assert c.verdict.startswith("matches the humans' majority on ")
        # the worse output is longer on Adversarial items: subtracting length helps there
        assert "raises its accuracy on Adversarial" in c.verdict, judge
        assert any("both orders" in m.action for m in c.mitigations)
    pos = pairs_audit.results["position"]
    pref = pos[(pos["method"] == "none") & (pos["measure"] == "first_position_preference")].set_index("judge")
    assert pref.loc["llama-2-70b/pairwise", "estimate"] > pref.loc["gpt-4/pairwise", "estimate"]
    llama = cards["llama-2-70b/pairwise"].findings[0]
    assert llama.measure == "first_position_preference (no calibration)"
    assert llama.estimate == pref.loc["llama-2-70b/pairwise", "estimate"]


def test_card_json_and_frame(ratings_audit):
    card = report_card(ratings_audit)
    recs = json.loads(card.to_json())
    assert [r["judge"] for r in recs] == ["gpt-4/per-criterion", "gpt-4/single-call"]
    assert set(recs[0]) == {"judge", "verdict", "findings", "mitigations"}
    assert {"measure", "group", "estimate", "ci_low", "ci_high", "q_value"} <= set(recs[0]["findings"][0])
    assert set(recs[0]["mitigations"][0]) == {"finding", "action", "source"}
    frame = card.to_frame()
    assert list(frame.columns) == ["judge", "verdict", "findings", "mitigations"]
    assert frame["findings"].tolist() == [len(c.findings) for c in card.cards]


def test_no_resamples_no_flags_and_bad_options():
    df = pd.DataFrame({"item_id": list("112233"), "rater": ["h1", "j"] * 3, "rater_kind": ["human", "judge"] * 3,
                       "criterion": "overall", "score": [1, 1, 2, 2, 3, 1]})
    card = judge_report_card(df, table="ratings", n_boot=0)
    assert [c.judge for c in card.cards] == ["j"] and card.cards[0].findings == ()
    with pytest.raises(DataError, match="resamples"):
        run_audit(df, table="ratings", n_boot=-1)
    with pytest.raises(DataError, match="seed"):
        run_audit(df, table="ratings", seed=-2)
    with pytest.raises(DataError, match="table kind"):
        run_audit(df, table="pairs")
