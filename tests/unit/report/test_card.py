"""The judge report card (:mod:`evalcore.report.card`): verdicts that name the sample's simulated biases,
findings that are exactly the library's flagged rows, mitigations from the papers, and its JSON."""

from __future__ import annotations

import json

import numpy as np
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
    assert "Anchored when scoring criteria together in " in single and "nchored" not in per
    assert "Favours familiar (low-perplexity) text on " in per
    # both judges are lenient everywhere, most in non-Latin and low-resource languages (agreement ~0.6 in Hindi, Bengali)
    for v in (single, per):
        assert v.startswith("Agrees with humans about as well as humans agree with each other in ")
        assert "(all 5 criteria pooled); less well in " in v and "Bengali" in v and "Hindi" in v
        assert "Scores too high on " in v and " in all 10 languages" in v
    assert "English" not in per.split("; less well in ")[1].split(".")[0]


def test_findings_are_the_librarys_flagged_rows(ratings_audit):
    card = _cards(ratings_audit)["gpt-4/single-call"]
    gap = ratings_audit.results["agreement_card"]
    bias = ratings_audit.results["bias"]
    flagged_gap = gap[(gap["judge"] == "gpt-4/single-call") & gap["flagged"]]
    flagged_bias = bias[(bias["judge"] == "gpt-4/single-call") & bias["flagged"]]
    assert len(card.findings) == len(flagged_gap) + len(flagged_bias) > 0
    assert all(f.q_value is not None and f.q_value <= 0.05 for f in card.findings)
    hindi = next(f for f in card.findings if f.section == "agreement"
                 and f.group == "Hindi / all criteria pooled")
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
        assert "Favours the output shown first" in c.verdict, judge
        assert c.verdict.startswith("Matches the humans' majority on ")
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
    assert set(recs[0]) == {"judge", "verdict", "sentences", "findings", "mitigations"}
    assert " ".join(recs[0]["sentences"]) == recs[0]["verdict"]
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


# --------------------------------------------------------------------------- a card that names its cells

CRITERIA = ("Fluency", "Coherence", "Consistency", "Relevance", "Informativeness")
LANGS = ("Spanish", "Basque")


def _two_language_frame(n: int = 80, seed: int = 0) -> pd.DataFrame:
    """Three annotators near a 1-5 truth; ``gpt-4o`` one point high on Fluency and one point low on the other
    four criteria (as the issue's Spanish/Basque summarisation file); ``polar`` gives 5 or 1, mostly 1, on
    Coherence (more top scores *and* a lower mean than the humans); ``fair`` follows the truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for lang in LANGS:
        for i in range(n):
            item = f"{lang[:2]}-{i}"
            for crit in CRITERIA:
                t = int(rng.integers(2, 5))
                for h in range(3):
                    rows.append((item, f"{lang}-h{h}", "human", crit, int(np.clip(t + rng.integers(-1, 2), 1, 5)),
                                 lang))
                shift = 1 if crit == "Fluency" else -1
                rows.append((item, "gpt-4o", "judge", crit, int(np.clip(t + shift, 1, 5)), lang))
                rows.append((item, "fair", "judge", crit, int(np.clip(t + rng.integers(-1, 2), 1, 5)), lang))
                polar = (5 if rng.random() < 0.3 else 1) if crit == "Coherence" else t
                rows.append((item, "polar", "judge", crit, polar, lang))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score", "language"])


@pytest.fixture(scope="module")
def two_language_cards():
    from evalcore.data.validation import validate

    frame = validate(_two_language_frame(), table="ratings").frame
    return _cards(run_audit(frame, table="ratings", n_boot=BOOT, seed=0))


def _sentences(card) -> list[str]:
    assert card.verdict == " ".join(card.sentences)
    assert all(s[0].isupper() and s.endswith(".") for s in card.sentences), card.sentences
    return list(card.sentences)


def test_the_card_names_the_criterion_and_never_contradicts_itself(two_language_cards):
    says = _sentences(two_language_cards["gpt-4o"])
    high = [s for s in says if "scores too high" in s.lower()]
    low = [s for s in says if "scores too low" in s.lower()]
    assert high == ["Scores too high on Fluency in both languages."], says
    assert len(low) == 1 and low[0].endswith("in both languages.") and "Fluency" not in low[0], says
    assert all(c in low[0] for c in CRITERIA[1:]), low
    for s in says:  # every sentence says which criteria and which languages it is about
        assert "all 2" not in s and "2 languages" not in s, s
        assert any(c in s for c in CRITERIA) or "criteria" in s, s
        assert "languages" in s or any(lang in s for lang in LANGS), s
    # the findings under the verdict name both the language and the criterion
    assert {f.group for f in two_language_cards["gpt-4o"].findings if f.measure == "mean_shift"} == {
        f"{lang} / {c}" for lang in LANGS for c in CRITERIA}


def test_more_top_scores_and_a_lower_mean_is_one_finding_not_two(two_language_cards):
    says = _sentences(two_language_cards["polar"])
    on_coherence = [s for s in says if "Coherence" in s]
    assert not any("scores too" in s.lower() for s in on_coherence), says
    assert any("more top scores" in s and "lower mean" in s and "both languages" in s for s in on_coherence), says
    assert not any("scores too" in s.lower() for s in _sentences(two_language_cards["fair"]))


def test_counts_read_as_english():
    from evalcore.report.card import places

    assert places(["Basque", "Spanish"], ["Basque", "Spanish"], "language") == "both languages"
    assert places(list("abcdefgh"), list("abcdefgh"), "language") == "all 8 languages"
    assert places(["Basque"], ["Basque"], "language") == "Basque"
    assert places(list("abcdef"), list("abcdefgh"), "criterion") == "6 of 8 criteria"
    assert places(["b", "a"], list("abc"), "criterion") == "a and b"
