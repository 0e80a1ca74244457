"""The combined bias report, its recommendations, the `evalcore bias` CLI and the Bias page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.pointwise.bias_report import (
    SECTIONS,
    BiasReport,
    bias_report,
)
from evalcore.pointwise.sections import NOT_AVAILABLE
from evalcore.pointwise.recommend import RULES, recommendations
from tests.helpers import SAMPLE


@pytest.fixture(scope="module")
def sample_report() -> BiasReport:
    return BiasReport(bias_report(pd.read_csv(SAMPLE), n_boot=300, seed=0))


def test_every_section_runs_on_the_sample(sample_report):
    res = sample_report.results
    assert set(res["section"]) == set(SECTIONS)
    assert sample_report.skipped == ()
    assert {"section", "judge", "criterion", "measure", "estimate", "ci_low", "ci_high", "n", "flagged", "note"} \
        <= set(res.columns)
    # Flags only on judge rows, never a silent NaN.
    assert not res.loc[res["judge"].isna(), "flagged"].any()
    assert (res.loc[res["estimate"].isna(), "note"].str.len() > 0).all()


def test_sample_findings_match_the_design(sample_report):
    rec = sample_report.recommendations.set_index("rule")
    # Familiarity is built into gpt-4/per-criterion, anchoring into gpt-4/single-call (sample_data/README.md).
    assert rec.loc["familiarity", "judges"].startswith("gpt-4/per-criterion")
    assert rec.loc["anchoring", "judges"] == "gpt-4/single-call (1)"
    assert "top_skew" in rec.index
    res = sample_report.results
    tau = res[(res["measure"] == "tau_difference") & res["flagged"]]
    assert set(tau["judge"]) == {"gpt-4/per-criterion"}
    r = res[(res["measure"] == "r_difference")].set_index("judge")
    assert r.loc["gpt-4/single-call", "flagged"] and not r.loc["gpt-4/per-criterion", "flagged"]


def test_skipped_sections_are_rows_with_reasons():
    df = pd.DataFrame({"item_id": ["a", "a", "b", "b", "a", "b"], "rater": ["h1", "h2", "h1", "h2", "J", "J"],
                       "rater_kind": ["human"] * 4 + ["judge"] * 2, "criterion": "x", "score": [1.0, 2, 2, 2, 2, 1]})
    rep = BiasReport(bias_report(df, n_boot=0))
    skipped = dict(rep.skipped)
    assert "familiarity" in skipped and "perplexity" in skipped["familiarity"]
    assert "anchoring" in skipped
    na = rep.records[rep.records["measure"] == NOT_AVAILABLE]
    assert len(na) == len(rep.skipped) and not na["flagged"].any()
    with pytest.raises(DataError, match="unknown bias section"):
        bias_report(df, sections=["vibes"])


def test_recommendations_follow_the_flags():
    def rec(section, measure, estimate, flagged=True, judge="J"):
        return {"section": section, "judge": judge, "criterion": "LA", "measure": measure, "estimate": estimate,
                "ci_low": estimate - 0.1, "ci_high": estimate + 0.1, "n": 100, "flagged": flagged, "note": ""}
    rows = pd.DataFrame([
        rec("anchoring", "r_difference", 0.4),
        rec("anchoring", "r_difference", 0.5, judge="K"),
        rec("familiarity", "tau_difference", 0.2),  # positive: not familiarity bias
        rec("score_distribution", "mean_shift", 0.3, flagged=False),  # not significant
        rec("score_distribution", "round_excess_10", 0.2, judge=None),  # humans are the reference
    ])
    out = recommendations(rows)
    assert list(out["rule"]) == ["anchoring"]
    assert out.iloc[0]["judges"] == "J (1), K (1)"
    assert "0.500" in out.iloc[0]["evidence"]
    assert recommendations(rows.iloc[0:0]).empty
    assert {r.section for r in RULES} <= set(SECTIONS)




def test_one_bh_family_across_the_whole_report(sample_report):
    """p in the direction of harm for every tested row; q = Benjamini-Hochberg over all of them at once (every
    section, judge and criterion); flagged = q <= 0.05 on the side of harm; opposite never flagged."""
    from statsmodels.stats.multitest import multipletests

    from evalcore.pointwise.sections import TESTS

    res = sample_report.results
    judges = res["judge"].notna()
    expected = res["measure"].map(TESTS).where(judges)
    assert (res["test"].fillna("-") == expected.fillna("-")).all()  # the registry, on judge rows only
    tested = res["p_value"].notna()
    assert tested.sum() > 40 and (res.loc[tested, "test"].notna()).all() and res.loc[~tested, "q_value"].isna().all()
    assert res.loc[tested, "section"].nunique() == 4
    q = multipletests(res.loc[tested, "p_value"], method="fdr_bh")[1]
    assert abs(res.loc[tested, "q_value"].to_numpy() - q).max() < 1e-12
    harm = np.select([res["test"] == "greater", res["test"] == "less"], [res["estimate"] > 0, res["estimate"] < 0],
                     res["estimate"] != 0)
    assert (res["flagged"] == (tested & (res["q_value"] <= 0.05) & harm)).all()
    assert not (res["flagged"] & res["opposite"]).any() and not res.loc[~tested, "opposite"].any()
    # The per-criterion judge is more self-consistent than the humans on three criteria: opposite, not a bias.
    alpha = res[(res["measure"] == "alpha_difference") & res["opposite"]]
    assert set(alpha["judge"]) == {"gpt-4/per-criterion"} and (alpha["estimate"] > 0).all()
    assert res[(res["measure"] == "alpha_difference") & res["flagged"]]["estimate"].lt(0).all()


def test_alpha_sets_the_false_discovery_rate():
    ratings = pd.read_csv(SAMPLE)
    strict = BiasReport(bias_report(ratings, n_boot=100, seed=0, alpha=1e-6, sections=["familiarity"])).results
    loose = BiasReport(bias_report(ratings, n_boot=100, seed=0, alpha=0.2, sections=["familiarity"])).results
    assert strict["flagged"].sum() < loose["flagged"].sum()
    assert (strict["p_value"].fillna(-1) == loose["p_value"].fillna(-1)).all()
    with pytest.raises(DataError, match="false discovery rate"):
        bias_report(ratings, n_boot=10, alpha=0)


def test_recommendation_evidence_gives_the_q_value(sample_report):
    rec = sample_report.recommendations.set_index("rule")
    assert rec["evidence"].str.contains(r"flagged result\(s\); largest: .* = -?\d\.\d{3} \[.*\], q (?:=|<) ").all()


def test_a_flag_whose_two_sided_interval_reaches_zero_says_what_it_rests_on():
    """One-sided at q <= 0.05 can hold while the two-sided 95% interval still touches 0: the evidence says so."""
    def rec(lo: float) -> str:
        rows = pd.DataFrame({"section": "anchoring", "judge": "J", "criterion": "fluency", "measure": "r_difference",
                             "estimate": 0.08, "ci_low": lo, "ci_high": 0.17, "n": 40, "q_value": 0.04,
                             "flagged": True, "note": ""}, index=[0])
        return recommendations(rows).set_index("rule").loc["anchoring", "evidence"]

    assert "r_difference = 0.080 [-0.004, 0.170], q = 0.04 for J, fluency" in rec(-0.004)
    assert "reaches 0" in rec(-0.004) and "one-sided test in the harmful direction" in rec(-0.004)
    assert "reaches 0" not in rec(0.01)
