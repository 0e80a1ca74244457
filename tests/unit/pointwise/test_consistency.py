"""Self-consistency (evalcore.pointwise.consistency): Krippendorff's alpha across samples and prompt variants.

Checked against the krippendorff package to 1e-9 (missing values included, all three levels),
against the analytic alpha of simulated judges with a known sampling noise, for the false-alarm
rate of the judge-vs-humans difference over many simulated data sets, on the sample data's
documented inter-sample alpha, and on HANNA.
"""

from __future__ import annotations

import time
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest

import evalcore.pointwise.consistency as cons
from evalcore.errors import DataError
from evalcore.pointwise.consistency import (
    krippendorff_alpha,
    self_consistency,
    variant_agreement,
    variant_columns,
    variants_from_rater,
)
from tests.helpers import DATASETS, LAYOUT, SAMPLE
from tests.unit.hanna import hanna_preset_frame
from tests.helpers import row as _row

TOL = 1e-9


def _kripp(matrix: np.ndarray, metric: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=metric))
        except ValueError:  # the package refuses data with a single value
            return float("nan")


def _sim(seed: int, n_items: int, *, n_h: int = 3, n_s: int = 3, sd_h: float = 0.8, sd_u: float = 0.0,
         tau: float = 0.8, discrete: bool = False, tag: str = "") -> pd.DataFrame:
    """Item quality t ~ N(0,1); humans t + N(0, sd_h^2); a judge sampled n_s times:
    t + u_i + N(0, tau^2), u_i ~ N(0, sd_u^2) shared by the samples of an item."""
    rng = np.random.default_rng(seed)
    t = rng.standard_normal(n_items)
    H = t[:, None] + sd_h * rng.standard_normal((n_items, n_h))
    J = (t + sd_u * rng.standard_normal(n_items))[:, None] + tau * rng.standard_normal((n_items, n_s))
    if discrete:
        H, J = np.clip(np.round(H + 3), 1, 5), np.clip(np.round(J + 3), 1, 5)
    items = np.array([f"{tag}{seed}-{i}" for i in range(n_items)])
    ih, kh = np.nonzero(np.ones_like(H, dtype=bool))
    ij, sj = np.nonzero(np.ones_like(J, dtype=bool))
    return pd.concat([
        pd.DataFrame({"item_id": items[ih], "rater": [f"h{k}" for k in kh], "rater_kind": "human",
                      "criterion": "q", "score": H[ih, kh], "sample": 0}),
        pd.DataFrame({"item_id": items[ij], "rater": "J", "rater_kind": "judge", "criterion": "q",
                      "score": J[ij, sj], "sample": sj}),
    ], ignore_index=True)


# --------------------------------------------------------------------------- against the krippendorff package


@pytest.mark.parametrize("metric", ["interval", "ordinal", "nominal"])
def test_alpha_matches_krippendorff_with_missing_values(metric):
    rng = np.random.default_rng(0)
    checked = 0
    for t in range(150):
        R, U, q = rng.integers(2, 7), rng.integers(2, 40), rng.integers(1, 8)
        vals = np.sort(rng.choice(np.arange(-5, 120), q, replace=False)).astype(float) if t % 2 else np.arange(q) + 1.0
        X = vals[rng.integers(0, q, (R, U))]
        X[rng.random((R, U)) < 0.4] = np.nan
        if t % 5 == 0:
            X = X + np.round(rng.random(X.shape), 2)  # non-integer values, as in averaged judge scores
        ref, mine = _kripp(X, metric), krippendorff_alpha(X, metric=metric)
        assert np.isnan(ref) == np.isnan(mine), (t, ref, mine)
        if np.isfinite(ref):
            assert abs(ref - mine) < TOL, (t, ref, mine)
            checked += 1
    assert checked > 100
    # Krippendorff (2011)'s worked example with missing values (as in tests/test_agreement.py).
    n = np.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, n],
                     [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]])
    assert abs(krippendorff_alpha(data, metric=metric) - _kripp(data, metric)) < TOL
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}[metric]
    assert round(krippendorff_alpha(data, metric=metric), 3) == published


@pytest.mark.parametrize("metric", ["interval", "ordinal", "nominal"])
def test_sample_data_alphas_match_krippendorff(metric):
    ratings = pd.read_csv(SAMPLE)
    res = self_consistency(ratings, n_boot=0, metric=metric)
    assert list(res.columns) == LAYOUT and (res["section"] == "self_consistency").all()
    for crit in ratings["criterion"].unique():
        sub = ratings[ratings["criterion"] == crit]
        j = sub[sub["rater"] == "gpt-4/per-criterion"].pivot(index="sample", columns="item_id", values="score")
        h = sub[sub["rater_kind"] == "human"].pivot(index="rater", columns="item_id", values="score")
        a_j, a_h = _kripp(j.to_numpy(float), metric), _kripp(h.to_numpy(float), metric)
        assert abs(_row(res, "alpha_inter_sample", "gpt-4/per-criterion", criterion=crit)["estimate"] - a_j) < TOL
        assert abs(_row(res, "alpha_inter_annotator", None, criterion=crit)["estimate"] - a_h) < TOL
        d = _row(res, "alpha_difference", "gpt-4/per-criterion", criterion=crit)
        assert abs(d["estimate"] - (a_j - a_h)) < TOL


def test_bootstrap_weights_are_item_resamples(monkeypatch):
    """A replicate equals krippendorff's alpha on the resampled items written out (duplicated units)."""
    data = _sim(4, 40, discrete=True)
    order = pd.unique(data["item_id"])
    w = np.random.default_rng(9).multinomial(len(order), np.full(len(order), 1 / len(order)))
    monkeypatch.setattr(cons, "item_weights", lambda rng, n, b: np.vstack([np.ones(n)] + [w] * b).astype(float))
    res = self_consistency(data, n_boot=12)
    dup = pd.concat([data[data["item_id"] == it].assign(item_id=f"{it}#{r}")
                     for k, it in enumerate(order) for r in range(int(w[k]))], ignore_index=True)
    j = dup[dup["rater"] == "J"].pivot(index="sample", columns="item_id", values="score").to_numpy(float)
    h = dup[dup["rater_kind"] == "human"].pivot(index="rater", columns="item_id", values="score").to_numpy(float)
    for measure, judge, truth in (("alpha_inter_sample", "J", _kripp(j, "interval")),
                                  ("alpha_inter_annotator", None, _kripp(h, "interval")),
                                  ("alpha_difference", "J", _kripp(j, "interval") - _kripp(h, "interval"))):
        r = _row(res, measure, judge)
        assert abs(r["ci_low"] - truth) < TOL and abs(r["ci_high"] - truth) < TOL


# --------------------------------------------------------------------------- injected effects


def test_injected_sampling_noise_recovered():
    """Judge samples t + u + e (sd_u 0.5, tau 0.6): interval alpha 1 - tau^2 / (1 + sd_u^2 + tau^2)."""
    sd_u, tau, sd_h = 0.5, 0.6, 0.8
    data = _sim(3, 600, n_s=5, sd_u=sd_u, tau=tau, sd_h=sd_h)
    res = self_consistency(data, n_boot=1000, seed=0)
    a_j = 1 - tau ** 2 / (1 + sd_u ** 2 + tau ** 2)  # 0.776
    a_h = 1 - sd_h ** 2 / (1 + sd_h ** 2)  # 0.610
    for measure, judge, truth in (("alpha_inter_sample", "J", a_j), ("alpha_inter_annotator", None, a_h),
                                  ("alpha_difference", "J", a_j - a_h)):
        r = _row(res, measure, judge)
        assert r["ci_low"] <= truth <= r["ci_high"], (measure, r["estimate"], truth)
    # A judge more self-consistent than the humans: significant, but in the direction that is not a bias.
    d = _row(res, "alpha_difference", "J")
    assert d["opposite"] and not d["flagged"] and d["test"] == "less" and d["p_value"] > 0.999
    # A noisier judge: less self-consistent than the humans, flagged with a negative difference.
    noisy = self_consistency(_sim(5, 600, tau=1.2, sd_h=0.6), n_boot=1000, seed=0)
    d = _row(noisy, "alpha_difference", "J")
    truth = (1 - 1.44 / 2.44) - (1 - 0.36 / 1.36)
    assert d["flagged"] and d["ci_high"] < 0 and d["ci_low"] <= truth <= d["ci_high"]


def test_discrete_scores_match_krippendorff_and_flag():
    data = _sim(8, 300, sd_u=0.3, tau=1.0, sd_h=0.5, discrete=True)
    res = self_consistency(data, n_boot=500, seed=2)
    j = data[data["rater"] == "J"].pivot(index="sample", columns="item_id", values="score").to_numpy(float)
    h = data[data["rater_kind"] == "human"].pivot(index="rater", columns="item_id", values="score").to_numpy(float)
    assert abs(_row(res, "alpha_inter_sample", "J")["estimate"] - _kripp(j, "interval")) < TOL
    assert abs(_row(res, "alpha_inter_annotator")["estimate"] - _kripp(h, "interval")) < TOL
    assert _row(res, "alpha_difference", "J")["flagged"] and _row(res, "alpha_difference", "J")["estimate"] < 0


@pytest.mark.slow
@pytest.mark.parametrize("discrete", [False, True])
def test_no_false_alarms_when_judge_samples_behave_like_annotators(discrete):
    """200 data sets where the judge's samples are exchangeable with the annotators."""
    data = pd.concat([_sim(s, 60, discrete=discrete).assign(rep=s) for s in range(200)], ignore_index=True)
    res = self_consistency(data, by=["rep"], n_boot=200, seed=5)
    rate = res.loc[res["measure"] == "alpha_difference", "flagged"].mean()
    assert rate <= 0.10, rate
    assert not res.loc[res["measure"] != "alpha_difference", "flagged"].any()
    print(f"alpha_difference false-alarm rate (200 data sets, 60 items, discrete={discrete}): {rate:.3f}")


# --------------------------------------------------------------------------- variants


def _variant_sim(seed: int, n_items: int, *, sd_g: float, tau: float = 0.3, n_v: int = 3, n_s: int = 2,
                 sd_h: float = 0.8, tag: str = "") -> pd.DataFrame:
    """A judge under n_v prompts, n_s samples each: t + g_iv + e, g ~ N(0, sd_g^2) the prompt effect.
    Rows are numbered like a validated table: sample = variant * n_s + s. Scores are rounded to
    0.1 (the krippendorff package builds a units x values x values array: keep the values few)."""
    rng = np.random.default_rng(seed)
    t = rng.standard_normal(n_items)
    items = np.array([f"{tag}{seed}-{i}" for i in range(n_items)])
    hx = t[:, None] + sd_h * rng.standard_normal((n_items, 3))
    ih, kh = np.nonzero(np.ones_like(hx, dtype=bool))
    humans = pd.DataFrame({"item_id": items[ih], "rater": [f"h{k}" for k in kh], "rater_kind": "human",
                           "criterion": "q", "score": np.round(hx[ih, kh], 1), "sample": 0, "prompt": pd.NA})
    g = sd_g * rng.standard_normal((n_items, n_v))
    x = t[:, None, None] + g[:, :, None] + tau * rng.standard_normal((n_items, n_v, n_s))
    i, v, s = np.nonzero(np.ones_like(x, dtype=bool))
    judge = pd.DataFrame({"item_id": items[i], "rater": "J", "rater_kind": "judge", "criterion": "q",
                          "score": np.round(x[i, v, s], 1), "sample": v * n_s + s, "prompt": np.array(["A", "B", "C", "D"])[v]})
    return pd.concat([humans, judge], ignore_index=True)


def test_variant_agreement_recovers_prompt_sensitivity_and_matches_krippendorff():
    sd_g, tau, sd_h = 0.7, 0.3, 0.5
    data = _variant_sim(1, 500, sd_g=sd_g, tau=tau, sd_h=sd_h).assign(attempt=0, position=1)
    assert variant_columns(data) == ["prompt"]
    res = variant_agreement(data, variant_column="prompt", n_boot=1000, seed=0)
    assert list(res.columns) == LAYOUT
    # First sample of each prompt, prompts as raters:
    first = data[(data["rater"] == "J") & (data["sample"] % 2 == 0)]
    X = first.pivot(index="prompt", columns="item_id", values="score").to_numpy(float)
    r = _row(res, "alpha_across_variants", "J")
    assert abs(r["estimate"] - _kripp(X, "interval")) < TOL
    truth = 1 - (sd_g ** 2 + tau ** 2) / (1 + sd_g ** 2 + tau ** 2)  # 0.63
    assert r["ci_low"] <= truth <= r["ci_high"]
    d = _row(res, "alpha_across_variants_difference", "J")
    h_truth = 1 - sd_h ** 2 / (1 + sd_h ** 2)  # 0.80
    assert d["flagged"] and d["ci_high"] < 0 and d["ci_low"] <= truth - h_truth <= d["ci_high"]
    # Self-consistency on the same table warns that the samples mix prompts.
    sc = self_consistency(data, n_boot=0)
    assert "differ in 'prompt'" in _row(sc, "alpha_inter_sample", "J")["note"]


@pytest.mark.slow
def test_variant_agreement_no_false_alarms():
    """Prompts that matter no more than who the annotator is: sd_g^2 + tau^2 = sd_h^2."""
    data = pd.concat([_variant_sim(s, 60, sd_g=0.6, tau=0.529, sd_h=0.8, tag="v").assign(rep=s)
                      for s in range(150)], ignore_index=True)
    res = variant_agreement(data, variant_column="prompt", by=["rep"], n_boot=200, seed=1)
    rate = res.loc[res["measure"] == "alpha_across_variants_difference", "flagged"].mean()
    assert rate <= 0.10, rate
    print(f"alpha_across_variants_difference false-alarm rate (150 data sets, 60 items): {rate:.3f}")


def test_variant_columns_guess_and_errors():
    data = _variant_sim(2, 20, sd_g=0.5)
    data["Temperature"] = np.where(data["rater_kind"] == "judge", data["sample"] % 2 * 0.7, np.nan)
    data["prompt_template"] = "same"  # does not vary: not a variant column
    data["attempt"] = data["sample"]  # varies, but the name is not a setting
    assert variant_columns(data) == ["prompt", "Temperature"]
    with pytest.raises(DataError, match="no column 'temp'"):
        variant_agreement(data, variant_column="temp")
    with pytest.raises(DataError, match="cannot be a variant column"):
        variant_agreement(data, variant_column="score")
    with pytest.raises(DataError, match="level of measurement"):
        self_consistency(data, metric="ratio")
    with pytest.raises(DataError, match="different values within one item"):
        self_consistency(data, by=["prompt"])
    one = variant_agreement(data[data["prompt"].isna() | (data["prompt"] == "A")], variant_column="prompt", n_boot=10)
    r = _row(one, "alpha_across_variants", "J")
    assert np.isnan(r["estimate"]) and "fewer than two values of 'prompt'" in r["note"]


def test_variants_from_rater_splits_judge_names():
    data = pd.DataFrame({"item_id": ["a", "a", "a", "b", "b", "b"], "rater": ["h1", "m/p1", "m/p2"] * 2,
                         "rater_kind": ["human", "judge", "judge"] * 2, "criterion": "q",
                         "score": [1.0, 2, 3, 2, 2, 3]})
    out = variants_from_rater(data)
    assert out["rater"].tolist() == ["h1", "m", "m"] * 2
    assert out["prompt"].isna().tolist() == [True, False, False] * 2
    assert variant_columns(out) == ["prompt"]
    with pytest.raises(DataError, match="already has a column"):
        variants_from_rater(out)


# --------------------------------------------------------------------------- sample data and HANNA


def test_sample_data_inter_sample_alpha_as_documented():
    """sample_data/README.md: per-criterion judge sampled 5 times, interval alpha ~0.75 on LA/OCQ/TQ, ~0.56 on H, ~0 on PC."""
    ratings = pd.read_csv(SAMPLE)
    start = time.perf_counter()
    res = self_consistency(ratings, n_boot=1000, seed=0)
    elapsed = time.perf_counter() - start
    judge = "gpt-4/per-criterion"
    for crit, doc, tol in (("LA", 0.75, 0.04), ("OCQ", 0.75, 0.04), ("TQ", 0.75, 0.04), ("H", 0.56, 0.05),
                           ("PC", 0.0, 0.02)):
        r = _row(res, "alpha_inter_sample", judge, criterion=crit)
        assert abs(r["estimate"] - doc) < tol, (crit, r["estimate"])
        assert r["ci_high"] < 1 and r["n"] == 1200  # clearly below perfect consistency
    single = res[res["judge"] == "gpt-4/single-call"]
    assert single["estimate"].isna().all() and single["note"].str.contains("one sample per item").all()
    by_lang = self_consistency(ratings, by=["language"], n_boot=200, seed=0)
    assert by_lang["language"].nunique() == 10
    print(f"self_consistency on the sample data, n_boot=1000: {elapsed:.2f} s")


@pytest.mark.slow
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA run needs it")
def test_hanna_runs():
    ratings = hanna_preset_frame()
    start = time.perf_counter()
    # 200 resamples, not the default 1,000: only the estimates and notes are checked here, and they take none.
    res = self_consistency(ratings, n_boot=200, seed=0)
    elapsed = time.perf_counter() - start
    hum = res[res["judge"].isna()]
    assert len(hum) == 6 and hum["estimate"].notna().all()
    for crit in hum["criterion"]:
        X = ratings[(ratings["rater_kind"] == "human") & (ratings["criterion"] == crit)] \
            .pivot(index="rater", columns="item_id", values="score").to_numpy(float)
        assert abs(_row(res, "alpha_inter_annotator", criterion=crit)["estimate"] - _kripp(X, "interval")) < TOL
    # HANNA's judges have one (averaged) score per item: no inter-sample alpha, and a note.
    j = res[res["judge"].notna()]
    assert j["estimate"].isna().all() and j["note"].str.contains("one sample per item").all()
    # Their names hold the prompt variant (<model>/prompt1..4): agreement across prompts.
    v = variants_from_rater(ratings)
    start = time.perf_counter()
    va = variant_agreement(v, variant_column="prompt", n_boot=200, seed=0)
    elapsed_v = time.perf_counter() - start
    assert va["judge"].nunique() == 5
    sub = v[(v["rater"] == "ChatGPT") & (v["criterion"] == "Coherence")]
    X = sub.pivot(index="prompt", columns="item_id", values="score").to_numpy(float)
    assert abs(_row(va, "alpha_across_variants", "ChatGPT", criterion="Coherence")["estimate"]
               - _kripp(X, "interval")) < TOL
    print(f"HANNA: self_consistency {elapsed:.2f} s, variant_agreement {elapsed_v:.2f} s (n_boot=200)")
