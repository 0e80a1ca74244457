"""Style control (evalcore.pairwise.style_control): the features, FastChat's contextual Bradley-Terry fit transcribed
here (to 1e-5), the raw scores back when the length covariate is zero, and a simulated judge that prefers longer
outputs: its coefficient and the humans' are recovered within their intervals, the ratio too, and the
style-controlled order is the true order."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from evalcore.errors import DataError
from evalcore.pairwise.bradley_terry import fit_bt
from evalcore.pairwise.battles import battle_resamples, battles
from evalcore.pairwise.leaderboard_systems import system_leaderboard
from evalcore.pairwise.style_control import markdown_counts, style_covariates, style_lengths, style_ratios
from tests.helpers import SAMPLE_PAIRS

SYSTEMS = ("s0", "s1", "s2", "s3")


# --- FastChat, transcribed (lm-sys/FastChat, fastchat/serve/monitor/add_markdown_info.py and rating_systems.py) ---

def _fastchat_markdown(text: str) -> dict[str, int]:
    """``count_markdown_elements`` after ``remove_pattern`` (the inside of each fenced block removed), summed per
    element as ``preprocess_for_style``'s ``extract_style_feature`` does."""
    for block in re.compile("```([^`]*)```").findall(text):
        text = text.replace(block, "")
    headers = sum(len(re.findall(rf"^#{{{i}}}\s", text, re.MULTILINE)) for i in range(1, 7))
    lists = len(re.findall(r"^\s*\d+\.\s", text, re.MULTILINE)) + len(re.findall(r"^\s*[-*+]\s", text, re.MULTILINE))
    bold = len(re.findall(r"\*\*[^*\n]+\*\*", text)) + len(re.findall(r"__[^_\n]+__", text))
    return {"header": headers, "list": lists, "bold": bold}


def _fastchat_features(counts_a: np.ndarray, counts_b: np.ndarray) -> np.ndarray:
    """``preprocess_for_style`` with ``apply_ratio=[1, 1, 1, 1]`` and ``add_one=True``: the difference over the
    sum plus one, then standardised by the mean and the (population) standard deviation over the battles."""
    diff = (counts_a - counts_b).astype(float)
    diff /= (counts_a + counts_b).astype(float) + 1.0
    return (diff - diff.mean(axis=0)) / diff.std(axis=0)


def _fastchat_contextual_bt(matchups: np.ndarray, features: np.ndarray, outcomes: np.ndarray, n_models: int,
                            reg: float = 0.0) -> np.ndarray:
    """``fit_contextual_bt`` with ``contextual_bt_loss_and_grad``: ratings (base 10, ``alpha = ln 10``) and feature
    parameters by L-BFGS-B from 0; ``reg=0`` for evalcore's unpenalised fit, and a tight tolerance."""
    alpha = math.log(10.0)

    def loss_and_grad(params):
        ratings, beta = params[:n_models], params[n_models:]
        r = ratings[matchups]
        probs = expit(alpha * (r[:, 0] - r[:, 1]) + features @ beta)
        loss = -(np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)).sum() + reg / 2 * params @ params
        error = outcomes - probs
        grad = reg * params
        np.add.at(grad[:n_models], matchups, (-alpha * error)[:, None] * np.array([1.0, -1.0]))
        grad[n_models:] -= features.T @ error
        return loss, grad

    x0 = np.zeros(n_models + features.shape[1])
    res = minimize(loss_and_grad, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15})
    return res.x


# --- simulated battles --------------------------------------------------------------------------------------------

def _text(rng: np.random.Generator, words: int, markdown: float) -> str:
    """A text of about ``words`` words; with probability ``markdown`` per element, a header, a list and bold."""
    body = " ".join("word" for _ in range(max(1, words)))
    parts = []
    if rng.random() < markdown:
        parts.append("# Title")
    parts.append(body)
    for _ in range(rng.integers(0, 4) if rng.random() < markdown else 0):
        parts.append(f"- item {'**key**' if rng.random() < markdown else 'plain'}")
    if rng.random() < 0.1:
        parts.append("```\n# not a header\n- not a list\n```")
    return "\n".join(parts)


def _simulate(seed: int, *, n_items: int, truth: np.ndarray, beta_judge: float, beta_humans: float,
              verbosity: np.ndarray, markdown: bool = False, twins: bool = False) -> pd.DataFrame:
    """Items between two random systems (``system_a`` the first in sorted order), one human vote and one judge
    verdict each. The outputs' lengths depend on the system (``verbosity``, median words); each rater's logit is
    ``truth[a] - truth[b] + beta * (l_a - l_b) / (l_a + l_b + 1)`` (no ties). ``twins``: every item also appears
    with the two texts swapped, so that the length differences are symmetric around 0."""
    rng = np.random.default_rng(seed)
    k = len(truth)
    a = rng.integers(0, k, n_items)
    b = (a + rng.integers(1, k, n_items)) % k
    a, b = np.minimum(a, b), np.maximum(a, b)
    # Lengths vary widely within a system too, so that length and system can be told apart.
    words_a = np.round(rng.lognormal(np.log(verbosity[a]), 0.8)).astype(int) + 1
    words_b = np.round(rng.lognormal(np.log(verbosity[b]), 0.8)).astype(int) + 1
    text_a = [_text(rng, w, 0.5 if markdown else 0.0) for w in words_a]
    text_b = [_text(rng, w, 0.5 if markdown else 0.0) for w in words_b]
    if twins:
        a, b = np.concatenate([a, a]), np.concatenate([b, b])
        text_a, text_b = text_a + text_b, text_b + text_a
    la = np.array([len(t) for t in text_a], dtype=float)
    lb = np.array([len(t) for t in text_b], dtype=float)
    f = (la - lb) / (la + lb + 1)
    rows = []
    for rater, kind, beta in (("ann", "human", beta_humans), ("judge", "judge", beta_judge)):
        win = rng.random(len(a)) < expit(truth[a] - truth[b] + beta * f)
        rows.append(pd.DataFrame({"item_id": np.arange(len(a)), "system_a": np.array(SYSTEMS)[a],
                                  "system_b": np.array(SYSTEMS)[b], "rater": rater, "rater_kind": kind,
                                  "winner": np.where(win, "a", "b"), "text_a": text_a, "text_b": text_b}))
    return pd.concat(rows, ignore_index=True)


def _rows(lb: pd.DataFrame, rater: str, measure: str) -> pd.DataFrame:
    return lb[(lb["rater"] == rater) & (lb["measure"] == measure)].set_index("system")


# --- the features -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "# One\n## Two\n####### seven\n#no space\n   # indented",
    "1. a\n2. b\n   - nested\n* star\n+ plus\n-not a list\n\n\n3. after blank lines",
    "**bold** and __also__ and **not\nbold** and ****",
    "```python\n# comment\n- x\n```\n# Real\n```\nunclosed # fence",
    "",
])
def test_markdown_counts_equal_fastchats_transcription(text):
    assert markdown_counts(text) == _fastchat_markdown(text)


def test_lengths_come_from_length_columns_then_texts_then_superficial():
    df = pd.DataFrame({"text_a": ["abcd"], "text_b": ["ab"], "length_a": [10], "length_b": [30],
                       "superficial_a": [1], "superficial_b": [2]})
    la, lb, source = style_lengths(df)
    assert (la.tolist(), lb.tolist(), source) == ([10.0], [30.0], "length_a/length_b")
    la, lb, source = style_lengths(df.drop(columns=["length_a", "length_b"]))
    assert (la.tolist(), lb.tolist(), source) == ([4.0], [2.0], "characters of text_a/text_b")
    la, lb, source = style_lengths(df[["superficial_a", "superficial_b"]])
    assert (la.tolist(), lb.tolist()) == ([1.0], [2.0]) and source.startswith("superficial_a")
    with pytest.raises(DataError, match="lengths"):
        style_lengths(pd.DataFrame({"x": [1]}))


def test_covariates_are_oriented_as_the_battle_and_scaled_by_the_sd_over_items():
    # item 2 names the pair the other way round; two raters on item 1 count it once in the sd
    df = pd.DataFrame({"item_id": [1, 1, 2, 3], "system_a": ["x", "x", "y", "x"], "system_b": ["y", "y", "x", "y"],
                       "rater": ["ann", "bob", "ann", "ann"], "rater_kind": "human", "winner": ["a", "b", "a", "b"],
                       "text_a": ["aaaa", "aaaa", "aaaaaaa", "a"], "text_b": ["a", "a", "aa", "aa"]})
    bt = battles(df)
    X, names = style_covariates(df, bt, style="length")
    assert names == ("length",)
    raw = {"1": (4 - 1) / 6, "2": (2 - 7) / 10, "3": (1 - 2) / 4}  # oriented x against y
    sd = np.std(list(raw.values()))
    expected = [raw[bt.items[i]] / sd for i in bt.item]
    np.testing.assert_allclose(X[:, 0], expected, rtol=1e-12)


def test_markdown_style_needs_the_texts_and_unknown_lengths_are_an_error():
    df = pd.DataFrame({"item_id": [1, 2], "system_a": ["x", "x"], "system_b": ["y", "y"], "rater": "ann",
                       "rater_kind": "human", "winner": ["a", "b"], "superficial_a": [3.0, 4.0],
                       "superficial_b": [5.0, np.nan]})
    with pytest.raises(DataError, match="text_a"):
        style_covariates(df.fillna(1.0), battles(df), style="length+markdown")
    with pytest.raises(DataError, match="unknown length"):
        style_covariates(df, battles(df), style="length")
    with pytest.raises(DataError, match="unknown style"):
        style_covariates(df, battles(df), style="emoji")


# --- the fit ------------------------------------------------------------------------------------------------------

def test_contextual_fit_equals_fastchats_transcription():
    """evalcore's style-controlled scores and coefficients equal FastChat's ``fit_contextual_bt`` (reg 0) on its
    ``preprocess_for_style`` features, to 1e-5. The items come in twins with the texts swapped, so that the mean
    FastChat subtracts is 0 and the two standardisations agree (module docstring of style_control)."""
    df = _simulate(3, n_items=400, truth=np.array([0.4, 0.1, -0.1, -0.4]), beta_judge=1.0, beta_humans=0.0,
                   verbosity=np.array([30.0, 60.0, 90.0, 120.0]), markdown=True, twins=True)
    judge = df[df["rater"] == "judge"].reset_index(drop=True)
    bt = battles(judge)
    X, names = style_covariates(judge, bt, style="length+markdown")
    ours = fit_bt(bt.a, bt.b, bt.outcome, n_systems=len(bt.systems), covariates=X)

    md_a = pd.DataFrame([_fastchat_markdown(t) for t in judge["text_a"]])
    md_b = pd.DataFrame([_fastchat_markdown(t) for t in judge["text_b"]])
    counts_a = np.column_stack([judge["text_a"].str.len(), md_a[["header", "list", "bold"]]])
    counts_b = np.column_stack([judge["text_b"].str.len(), md_b[["header", "list", "bold"]]])
    features = _fastchat_features(counts_a, counts_b)
    codes = {s: i for i, s in enumerate(bt.systems)}
    matchups = np.column_stack([judge["system_a"].map(codes), judge["system_b"].map(codes)])
    outcomes = (judge["winner"] == "a").to_numpy(dtype=float)
    params = _fastchat_contextual_bt(matchups, features, outcomes, len(bt.systems))

    assert names == ("length", "header", "list", "bold")
    ratings = params[:len(bt.systems)] * math.log(10.0)  # FastChat's base-10 ratings on the logit scale
    np.testing.assert_allclose(ours.scores, ratings - ratings.mean(), atol=1e-5)
    np.testing.assert_allclose(ours.coef, params[len(bt.systems):], atol=1e-5)


def test_a_zero_length_covariate_gives_the_raw_scores():
    df = _simulate(5, n_items=300, truth=np.array([0.5, 0.2, -0.2, -0.5]), beta_judge=0.0, beta_humans=0.0,
                   verbosity=np.full(4, 50.0))
    df["text_b"] = df["text_a"]  # every pair of outputs has the same length: the covariate is 0
    lb = system_leaderboard(df, style="length", n_boot=50, seed=1)
    for rater in ("humans", "judge"):
        raw, sc = _rows(lb, rater, "bt_score"), _rows(lb, rater, "sc_bt_score")
        np.testing.assert_allclose(sc["estimate"], raw["estimate"], atol=1e-9)
        np.testing.assert_allclose(sc[["ci_low", "ci_high"]], raw[["ci_low", "ci_high"]], atol=1e-9)
        coef = lb[(lb["rater"] == rater) & (lb["measure"] == "style_length")].iloc[0]
        assert np.isnan(coef["estimate"]) and coef["note"]


def test_a_judge_that_prefers_long_outputs_is_caught_and_corrected():
    """The weakest systems write the longest outputs; the judge rewards length three times as much as the humans.
    The judge's raw order is wrong, the style-controlled order is the true one, and the coefficients (per sd of the
    normalised length difference) and their ratio are inside their 95% intervals."""
    truth = np.array([0.6, 0.2, -0.2, -0.6])
    df = _simulate(11, n_items=3000, truth=truth, beta_judge=6.0, beta_humans=2.0,
                   verbosity=np.array([20.0, 40.0, 80.0, 160.0]))
    lb = system_leaderboard(df, style="length", n_boot=200, seed=0)
    true_order = list(SYSTEMS)
    assert _rows(lb, "judge", "bt_score")["estimate"].sort_values(ascending=False).index.tolist() != true_order
    assert _rows(lb, "judge", "sc_bt_score")["estimate"].sort_values(ascending=False).index.tolist() == true_order
    assert _rows(lb, "humans", "sc_bt_score")["estimate"].sort_values(ascending=False).index.tolist() == true_order

    bt = battles(df)
    first = np.unique(np.column_stack([bt.item, bt.a, bt.b]), axis=0, return_index=True)[1]
    la, lb_ = style_lengths(df)[:2]
    f = (la - lb_) / (la + lb_ + 1)
    sd = np.std(f[bt.row[first]])
    for rater, beta in (("judge", 6.0), ("humans", 2.0)):
        coef = lb[(lb["rater"] == rater) & (lb["measure"] == "style_length")].iloc[0]
        assert coef["ci_low"] <= beta * sd <= coef["ci_high"], (rater, coef.to_dict(), beta * sd)
    ratio = lb[lb["measure"] == "style_ratio_length"].iloc[0]
    assert ratio["rater"] == "judge" and ratio["ci_low"] <= 3.0 <= ratio["ci_high"] and ratio["ci_low"] > 1
    assert ratio["note"] == ""


def test_the_style_rows_are_paired_with_the_raw_resamples():
    comparisons = pd.read_csv(SAMPLE_PAIRS)
    bt = battles(comparisons)
    counts = battle_resamples(bt, n_boot=30, seed=4)
    X, _ = style_covariates(comparisons, bt, style="length")
    m = bt.source == 0
    boot = fit_bt(bt.a[m], bt.b[m], bt.outcome[m], n_systems=len(bt.systems), covariates=X[m],
                  weight=counts[:, bt.item[m]])
    lb = system_leaderboard(comparisons, style="length", n_boot=30, seed=4)
    coef = lb[(lb["rater"] == "humans") & (lb["measure"] == "style_length")].iloc[0]
    lo, hi = np.quantile(boot.coef[:, 0], [0.025, 0.975])
    assert coef["ci_low"] == pytest.approx(lo, abs=1e-8) and coef["ci_high"] == pytest.approx(hi, abs=1e-8)


# --- the ratio ----------------------------------------------------------------------------------------------------

def test_ratio_rows_by_hand():
    rng = np.random.default_rng(0)
    coef = np.zeros((3, 41, 2))
    coef[0, :, 0] = np.r_[0.5, rng.normal(0.5, 0.05, 40)]   # humans, length: clearly positive
    coef[0, :, 1] = np.r_[0.1, rng.normal(0.1, 0.2, 40)]    # humans, header: interval includes 0
    coef[1, :, 0] = np.r_[1.0, rng.normal(1.0, 0.1, 40)]
    coef[1, :, 1] = np.r_[0.2, rng.normal(0.2, 0.1, 40)]
    coef[2] = np.nan
    out = style_ratios(["humans", "j1", "j2"], ["length", "header"], coef, n=[10, 8, 0], level=0.9)
    assert out["rater"].tolist() == ["j1", "j1", "j2", "j2"]
    assert out["measure"].tolist() == ["style_ratio_length", "style_ratio_header"] * 2
    r = out.iloc[0]
    boot = coef[1, 1:, 0] / coef[0, 1:, 0]
    assert r["estimate"] == pytest.approx(2.0) and r["n"] == 8 and r["note"] == ""
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(tuple(np.quantile(boot, [0.05, 0.95])))
    assert "not distinguishable from 0" in out.iloc[1]["note"]
    assert np.isnan(out.iloc[2]["estimate"]) and "no ratio" in out.iloc[2]["note"]
    assert style_ratios(["j1"], ["length"], coef[:1, :, :1], n=[1]).empty
    with pytest.raises(DataError, match="coefficients"):
        style_ratios(["humans"], ["length"], coef, n=[1])
