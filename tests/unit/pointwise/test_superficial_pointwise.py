"""Superficial-quality subtraction for pointwise judges (Zhou et al. 2024): rank correlation with humans."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from evalcore.errors import DataError
from evalcore.pointwise import superficial as ps
from tests.helpers import HANNA, needs_datasets
from tests.unit.hanna import hanna_frame


def _ratings(n: int, leak: float, seed: int) -> pd.DataFrame:
    """Humans score true quality (two raters, rounded); the judge scores quality + leak * length + noise."""
    rng = np.random.default_rng(seed)
    quality, length = rng.normal(size=n), rng.uniform(0, 3, n)
    ids = [f"i{k}" for k in range(n)]
    judge = pd.DataFrame({"item_id": ids, "rater": "j", "rater_kind": "judge", "criterion": "overall",
                          "score": quality + leak * length + rng.normal(scale=0.3, size=n), "len": length})
    humans = [pd.DataFrame({"item_id": ids, "rater": f"h{r}", "rater_kind": "human", "criterion": "overall",
                            "score": np.round(quality + rng.normal(scale=0.3, size=n), 1), "len": length})
              for r in range(2)]
    return pd.concat([judge, *humans], ignore_index=True)


def test_alpha_zero_is_the_raw_correlation():
    df = _ratings(200, 0.8, 3)
    data = ps.pointwise_data(df, judge="j", q="len")
    cur = ps.correlation_curve(data, alphas=[0.0, 0.5], n_boot=50)
    j = df[df.rater == "j"].set_index("item_id")["score"]
    h = df[df.rater_kind == "human"].groupby("item_id")["score"].mean()[j.index]
    at0 = cur[cur.alpha == 0].set_index("measure")
    assert at0.loc["kendall_tau", "estimate"] == pytest.approx(kendalltau(j, h).statistic, abs=1e-12)
    assert at0.loc["spearman_rho", "estimate"] == pytest.approx(spearmanr(j, h).statistic, abs=1e-12)
    assert (at0["change"] == 0).all()
    # alpha 0.5 computed independently from min-max normalised scores
    p = (j - j.min()) / (j.max() - j.min())
    q = df[df.rater == "j"].set_index("item_id")["len"]
    q = (q - q.min()) / (q.max() - q.min())
    half = cur[(cur.alpha == 0.5) & (cur.measure == "kendall_tau")]["estimate"].item()
    assert half == pytest.approx(kendalltau(p - 0.5 * q, h).statistic, abs=1e-12)
    assert (cur["ci_low"] <= cur["estimate"]).all() and (cur["estimate"] <= cur["ci_high"]).all()


def test_leaky_judge_gains_and_honest_judge_keeps_its_correlation():
    leaky = ps.pointwise_data(_ratings(600, 1.0, 5), judge="j", q="len")
    cur = ps.correlation_curve(leaky, n_boot=100)
    tau = cur[cur.measure == "kendall_tau"].set_index("alpha")["estimate"]
    assert tau.idxmax() > 0.2 and tau.max() > tau[0.0] + 0.15
    cv = ps.cross_validated_alpha(leaky, group=0, n_boot=100)
    assert cv.alpha_all > 0.2 and cv.tau_cv > cv.tau_raw + 0.1
    honest = ps.pointwise_data(_ratings(600, 0.0, 6), judge="j", q="len")
    cv0 = ps.cross_validated_alpha(honest, group=0, n_boot=100)
    assert cv0.tau_cv >= cv0.tau_raw - 0.02


def test_q_from_another_rater_and_errors():
    df = _ratings(50, 0.5, 1)
    fluency = df[df.rater == "j"].assign(rater="fluency", score=lambda d: d["len"])
    data = ps.pointwise_data(pd.concat([df, fluency]), judge="j", q="rater:fluency")
    assert np.allclose(data.q, ps.pointwise_data(df, judge="j", q="len").q)
    with pytest.raises(DataError, match="text"):
        ps.pointwise_data(df, judge="j", q="length")
    with pytest.raises(DataError, match="no Q column"):
        ps.pointwise_data(df, judge="j", q="nope")
    with pytest.raises(DataError, match="no judge"):
        ps.pointwise_data(df, judge="x", q="len")


@pytest.mark.slow
@needs_datasets
def test_hanna_text_length_end_to_end():
    frame = hanna_frame()
    raw = pd.read_csv(HANNA)
    col = next(c for c in raw.columns if c.startswith("Text length"))
    gpt2 = raw[raw["Model"] == "GPT-2"].iloc[0]
    lengths = ast.literal_eval(gpt2[col])
    got = frame[(frame.item_id == "GPT-2/5")]["text_length"].unique()
    assert got.tolist() == [lengths[5]]
    data = ps.pointwise_data(frame, judge="ChatGPT/prompt1", q="text_length")
    assert len(data.p) == 6 * 1056 and data.n_dropped == 0
    cur = ps.correlation_curve(data, alphas=[0.0, 1.0], n_boot=100)
    coh = frame[frame.criterion == "Coherence"]
    j = coh[coh.rater == "ChatGPT/prompt1"].set_index("item_id")["score"]
    h = coh[coh.rater_kind == "human"].groupby("item_id")["score"].mean()[j.index]
    row = cur[(cur.criterion == "Coherence") & (cur.alpha == 0) & (cur.measure == "kendall_tau")]
    assert row["estimate"].item() == pytest.approx(kendalltau(j, h).statistic, abs=1e-12)
    # In HANNA, longer stories are rated better by humans too: subtracting length costs correlation,
    # and the cross-validated alpha is 0 (measured: tau 0.376 -> 0.084 at alpha 1 for Coherence).
    at1 = cur[(cur.criterion == "Coherence") & (cur.alpha == 1) & (cur.measure == "kendall_tau")]
    assert at1["change_ci_high"].item() < 0
    cv = ps.cross_validated_alpha(data, group=data.keys.index(("Coherence",)), n_boot=50)
    assert cv.alpha_all == 0.0
