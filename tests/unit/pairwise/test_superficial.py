"""Superficial-quality subtraction (Zhou et al. 2024) and the length-controlled win rate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.pairwise import superficial as sp
from tests.helpers import LLMBAR, needs_datasets


def _simulated(n: int, leak: float, seed: int) -> pd.DataFrame:
    """Gold from a true quality; the judge scores true quality + leak * length (+ noise)."""
    rng = np.random.default_rng(seed)
    true_a, true_b = rng.normal(size=n), rng.normal(size=n)
    len_a, len_b = rng.uniform(0, 3, n), rng.uniform(0, 3, n)
    score_a = true_a + leak * len_a + rng.normal(scale=0.3, size=n)
    score_b = true_b + leak * len_b + rng.normal(scale=0.3, size=n)
    ids = [str(i) for i in range(n)]
    judge = pd.DataFrame({"item_id": ids, "rater": "j", "rater_kind": "judge",
                          "winner": np.where(score_a > score_b, "a", "b"), "score_a": score_a, "score_b": score_b,
                          "superficial_a": len_a, "superficial_b": len_b})
    human = pd.DataFrame({"item_id": ids, "rater": "h", "rater_kind": "human",
                          "winner": np.where(true_a > true_b, "a", "b")})
    return pd.concat([judge, human], ignore_index=True)


def test_min_max_keeps_direction():
    x = np.array([3.0, 7.0, 5.0, 10.0])
    y = sp.min_max(x)
    assert y.min() == 0.0 and y.max() == 1.0
    assert np.array_equal(np.argsort(x), np.argsort(y))  # a higher P stays higher (not the printed inverse)


def test_alpha_zero_is_raw_accuracy():
    df = _simulated(300, 0.8, 1)
    df.loc[df.index[:20], "score_b"] = df.loc[df.index[:20], "score_a"]  # some ties, half correct
    data = sp.superficial_data(df, judge="j", q="superficial")
    cur = sp.alpha_curve(data, alphas=[0.0, 0.5], n_boot=50)
    j = df[df.rater == "j"].set_index("item_id")
    h = df[df.rater == "h"].set_index("item_id")["winner"]
    raw = np.where(j.score_a == j.score_b, 0.5, (np.where(j.score_a > j.score_b, "a", "b") == h[j.index]).astype(float))
    assert cur.loc[cur.alpha == 0, "estimate"].item() == pytest.approx(raw.mean())
    assert cur.loc[cur.alpha == 0, "change"].item() == 0
    d = sp.decisions(data, 0.5)
    assert d["correct"].mean() == pytest.approx(cur.loc[cur.alpha == 0.5, "estimate"].item())
    assert d["correct_raw"].mean() == pytest.approx(raw.mean())


def test_leaky_judge_curve_peaks_near_true_alpha_and_cv_recovers_gain():
    # Norm(P) and Norm(Q) divide by the ranges; the leak in normalised units is leak * range(Q) / range(P).
    df = _simulated(3000, 1.0, 2)
    data = sp.superficial_data(df, judge="j", q="superficial")
    j = df[df.rater == "j"]
    p = np.concatenate([j.score_a, j.score_b])
    q = np.concatenate([j.superficial_a, j.superficial_b])
    true_alpha = 1.0 * np.ptp(q) / np.ptp(p)
    alphas = sp.alpha_grid(0, 1.5, 0.05)
    cur = sp.alpha_curve(data, alphas=alphas, n_boot=0)
    peak = cur.loc[cur.estimate.idxmax(), "alpha"]
    assert abs(peak - true_alpha) <= 0.15
    gain = cur.estimate.max() - cur.loc[cur.alpha == 0, "estimate"].item()
    assert gain > 0.05
    cv = sp.cross_validated_alpha(data, alphas=alphas, folds=5, n_boot=0)
    assert cv.accuracy_cv - cv.accuracy_raw >= 0.8 * gain
    assert abs(cv.alpha_all - true_alpha) <= 0.15


def test_judge_without_leak_loses_nothing_at_cv_alpha():
    df = _simulated(3000, 0.0, 3)
    data = sp.superficial_data(df, judge="j", q="superficial")
    cv = sp.cross_validated_alpha(data, folds=5, n_boot=0)
    assert cv.accuracy_cv >= cv.accuracy_raw - 0.01
    assert cv.alpha_all <= 0.1


def test_gold_and_errors():
    df = _simulated(10, 0.0, 4)
    with pytest.raises(Exception, match="no judge"):
        sp.superficial_data(df, judge="nobody", q="superficial")
    with pytest.raises(Exception, match="text_a"):
        sp.superficial_data(df, judge="j", q="length")


def _lc_table(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    systems = ["s1", "s2", "s3"]
    theta = {"s1": 0.0, "s2": 0.5, "s3": -0.4}
    rows = []
    for i in range(600):
        a, b = rng.choice(systems, 2, replace=False)
        la, lb = rng.integers(10, 400, 2)
        eta = theta[a] - theta[b] + 0.004 * (la - lb)
        win = "a" if rng.random() < 1 / (1 + np.exp(-eta)) else "b"
        rows.append({"item_id": str(i), "system_a": a, "system_b": b, "rater": "j", "rater_kind": "judge",
                     "winner": win, "text_a": "x" * la, "text_b": "y" * lb})
    return pd.DataFrame(rows)


def test_length_controlled_without_systems_is_not_available():
    df = _simulated(5, 0.0, 6)
    res = sp.length_controlled(df, judges="j")
    assert res.note.item().startswith("not_available")


@needs_datasets
def test_llmbar_rating_norules_end_to_end():
    from evalcore.data.ingest import load

    files = sorted(LLMBAR.glob("**/GPT-4/Rating_NoRules/result.json"))
    assert len(files) == 5
    frame = load(files, preset="llmbar").frame
    assert {"score_a", "score_b", "text_a", "text_b"} <= set(frame.columns)
    frame = frame.assign(group=np.where(frame.subset.astype(str).str.startswith("Adversarial"),
                                        "Adversarial", "Natural"))
    data = sp.superficial_data(frame, judge="GPT-4/Rating_NoRules", q="length", by=["group"])
    cur = sp.alpha_curve(data, n_boot=200)
    adv = cur[cur.group == "Adversarial"].set_index("alpha")
    nat = cur[cur.group == "Natural"].set_index("alpha")
    assert adv.loc[0.5, "change"] > 0.05 and adv.loc[0.5, "change_ci_low"] > 0  # longer wrong outputs penalised
    assert abs(nat.loc[0.5, "change"]) < 0.1
    assert len(cur) == 2 * 21


def test_length_controlled_subtracted_win_rate_with_scores():
    df = _lc_table()
    df["score_a"] = df["text_a"].str.len().astype(float)  # a judge that scores length only
    df["score_b"] = df["text_b"].str.len().astype(float)
    # The estimates are the subject: no resampling (1,000 resamples per pair took 5 s a call).
    res = sp.length_controlled(df, judges="j", alpha=1.0, n_boot=0)
    sub = res[res.measure == "subtracted_win_rate"]
    assert len(sub) == 3 and np.allclose(sub.estimate, 0.5)  # all length, all subtracted: every pair tied
    raw = sp.length_controlled(df, judges="j", alpha=0.0, n_boot=0)
    r = raw[(raw.measure == "subtracted_win_rate") & (raw.system_a == "s1") & (raw.system_b == "s2")].estimate.item()
    pair = df[df.system_a.isin(["s1", "s2"]) & df.system_b.isin(["s1", "s2"])]
    la, lb = pair.text_a.str.len(), pair.text_b.str.len()
    s1_longer = np.where(pair.system_a == "s1", la > lb, lb > la) + 0.5 * (la == lb)
    assert r == pytest.approx(s1_longer.mean())


@needs_datasets
def test_pandalm_keeps_texts():
    from evalcore.data.ingest import load
    from tests.helpers import PANDALM

    frame = load([PANDALM], preset="pandalm").frame
    assert {"text_a", "text_b"} <= set(frame.columns)
    assert frame["text_a"].notna().all()


@pytest.mark.slow
@needs_datasets
def test_length_controlled_intervals_and_human_win_rate_on_pandalm():
    from evalcore.data.ingest import load
    from tests.helpers import PANDALM

    frame = load(PANDALM, preset="pandalm").frame
    res = sp.length_controlled(frame, judges="pandalm-7b", n_boot=200)
    row = res[(res.system_a == "llama-7b") & (res.system_b == "opt-7b")].set_index("measure")
    assert (row["ci_low"] <= row["estimate"]).all() and (row["estimate"] <= row["ci_high"]).all()
    # the humans' win rate, independently: strict majority of the three annotators per item
    hum = frame[frame.rater_kind == "human"]
    items = frame[(frame.rater == "pandalm-7b") & frame.winner.isin(["a", "b", "tie"])  # the judge's ties are kept
                  & (((frame.system_a == "llama-7b") & (frame.system_b == "opt-7b"))
                     | ((frame.system_a == "opt-7b") & (frame.system_b == "llama-7b")))]
    wins = []
    for _, r in items.iterrows():
        v = hum[hum.item_id == r.item_id]["winner"].value_counts()
        if len(v) and v.iloc[0] > v.sum() / 2 and v.index[0] != "tie":
            wins.append(float(v.index[0] == ("a" if r.system_a == "llama-7b" else "b")))
    assert row.loc["human_win_rate", "estimate"] == pytest.approx(np.mean(wins))
    assert row.loc["win_rate", "n"] == items.item_id.nunique()
