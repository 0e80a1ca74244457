"""Score distribution, scale use and round-number bias (evalcore.pointwise.scale_use).

Checked three ways: numbers against scipy / direct pandas computations; injected effects of a
known size recovered within their intervals and flagged; no effect -> false-alarm rate near the
nominal 5% over many simulated data sets. Plus the sample data's designed skew by language and
a run on HANNA.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy, norm

import evalcore.pointwise.scale_use as scale_mod
from evalcore.errors import DataError
from evalcore.pointwise.scale_use import (
    ROUND_MEASURES,
    SCALE_MEASURES,
    round_excess,
    round_number_bias,
    scale_use,
    score_frequencies,
)
from tests.helpers import DATASETS, LAYOUT, ROOT, SAMPLE
from tests.unit.hanna import hanna_preset_frame
from tests.helpers import row as _row

TOL = 1e-12


def _frame(blocks: list[tuple[np.ndarray, np.ndarray, str, str, np.ndarray]], **extra) -> pd.DataFrame:
    """(item ids, scores, rater, kind, samples) blocks to a ratings table."""
    parts = []
    for items, scores, rater, kind, sample in blocks:
        parts.append(pd.DataFrame({"item_id": items, "rater": rater, "rater_kind": kind, "criterion": "q",
                                   "score": np.asarray(scores, dtype=float), "sample": sample}))
    out = pd.concat(parts, ignore_index=True)
    for k, v in extra.items():
        out[k] = v
    return out


# --------------------------------------------------------------------------- simulations

THR = np.array([-0.8, 0.3])  # 0-2 scale: score = number of thresholds the latent value exceeds
SD = 0.7


def _skew_sim(seed: int, n_items: int, skew: float, *, n_h: int = 3, n_j: int = 1, tag: str = "") -> pd.DataFrame:
    """Humans and a judge from the same model; the judge then gives the top score (2) with prob. `skew`."""
    rng = np.random.default_rng(seed)
    t = rng.standard_normal(n_items)
    H = (t[:, None, None] + SD * rng.standard_normal((n_items, n_h))[..., None] > THR).sum(-1)
    J = (t[:, None, None] + SD * rng.standard_normal((n_items, n_j))[..., None] > THR).sum(-1)
    J = np.where(rng.random(J.shape) < skew, 2, J)
    items = np.array([f"{tag}{seed}-{i}" for i in range(n_items)])
    ih, kh = np.nonzero(np.ones_like(H, dtype=bool))
    ij, sj = np.nonzero(np.ones_like(J, dtype=bool))
    return pd.concat([
        pd.DataFrame({"item_id": items[ih], "rater": [f"h{k}" for k in kh], "rater_kind": "human",
                      "criterion": "q", "score": H[ih, kh].astype(float), "sample": 0}),
        pd.DataFrame({"item_id": items[ij], "rater": "J", "rater_kind": "judge", "criterion": "q",
                      "score": J[ij, sj].astype(float), "sample": sj}),
    ], ignore_index=True)


def _skew_truth(skew: float) -> tuple[float, float]:
    """Exact top-share difference and mean shift of `_skew_sim`: pi (1 - p2) and pi (2 - E[score])."""
    sd = np.sqrt(1 + SD ** 2)
    above = norm.sf(THR / sd)  # P(latent > threshold k)
    p_top, mean0 = above[1], above.sum()
    return skew * (1 - p_top), skew * (2 - mean0)


GRID = np.arange(1, 101)


def _smooth_pmf(mu: float, sd: float) -> np.ndarray:
    p = norm.cdf(GRID + 0.5, mu, sd) - norm.cdf(GRID - 0.5, mu, sd)
    return p / p.sum()


def _to_round(v: np.ndarray, m: int) -> np.ndarray:
    r = np.floor(v / m + 0.5) * m
    return np.where((r >= 1) & (r <= 100), r, v)


def _heaped_pmf(p0: np.ndarray, r5: float, r10: float) -> np.ndarray:
    """The exact distribution after moving shares r5 / r10 of ratings to the nearest multiple of 5 / 10."""
    out = (1 - r5 - r10) * p0
    for rho, m in ((r5, 5), (r10, 10)):
        np.add.at(out, _to_round(GRID, m).astype(int) - 1, rho * p0)
    return out


def _round_sim(seed: int, n_items: int, r5: float = 0.0, r10: float = 0.0, *, n_s: int = 3) -> pd.DataFrame:
    """A judge scoring 1-100 (3 samples per item, smooth around 75, optional heaping) and 2 humans (no heaping)."""
    rng = np.random.default_rng(seed)
    x = rng.choice(GRID, size=(n_items, n_s), p=_smooth_pmf(75, 12)).astype(float)
    u = rng.random(x.shape)
    x = np.where(u < r5, _to_round(x, 5), np.where(u < r5 + r10, _to_round(x, 10), x))
    hx = rng.choice(GRID, size=(n_items, 2), p=_smooth_pmf(60, 18)).astype(float)
    items = np.array([f"{seed}-{i}" for i in range(n_items)])
    ij, sj = np.nonzero(np.ones_like(x, dtype=bool))
    ih, kh = np.nonzero(np.ones_like(hx, dtype=bool))
    return pd.concat([
        pd.DataFrame({"item_id": items[ij], "rater": "J", "rater_kind": "judge", "criterion": "q",
                      "score": x[ij, sj], "sample": sj}),
        pd.DataFrame({"item_id": items[ih], "rater": [f"h{k}" for k in kh], "rater_kind": "human",
                      "criterion": "q", "score": hx[ih, kh], "sample": 0}),
    ], ignore_index=True)


# --------------------------------------------------------------------------- against references


def _mixed(seed: int = 5) -> pd.DataFrame:
    """Two criteria, humans with 1-3 annotators, a judge sampled 3 times and a single-sample judge."""
    rng = np.random.default_rng(seed)
    rows = []
    for crit, q in (("a", 5), ("b", 3)):
        for i in range(80):
            for k in range(rng.integers(1, 4)):
                rows.append((f"i{i}", f"h{k}", "human", crit, int(rng.integers(1, q + 1)), 0))
            for s in range(3):
                rows.append((f"i{i}", "J3", "judge", crit, int(min(q, rng.integers(2, q + 2))), s))
            if i % 4:  # J1 skips every fourth item
                rows.append((f"i{i}", "J1", "judge", crit, int(rng.integers(1, q + 1)), 0))
    out = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score", "sample"])
    out["language"] = np.where(out["item_id"].str[1:].astype(int) % 2 == 0, "even", "odd")
    return out


def test_measures_match_scipy_and_direct_computation():
    data = _mixed()
    res = scale_use(data, by=["language"], n_boot=0)
    assert list(res.columns) == LAYOUT[:3] + ["language"] + LAYOUT[3:]
    assert set(res["measure"]) == set(SCALE_MEASURES) and (res["section"] == "score_distribution").all()
    for (crit, lang), cell in data.groupby(["criterion", "language"]):
        lo, top = data.loc[data["criterion"] == crit, "score"].agg(["min", "max"])
        hum = cell[cell["rater_kind"] == "human"]
        for judge, src in [(None, hum), ("J3", cell[cell["rater"] == "J3"]), ("J1", cell[cell["rater"] == "J1"])]:
            counts = src["score"].value_counts().to_numpy()
            kw = dict(criterion=crit, language=lang)
            assert abs(_row(res, "entropy", judge, **kw)["estimate"] - entropy(counts, base=2)) < 1e-9
            assert _row(res, "distinct_values", judge, **kw)["estimate"] == src["score"].nunique()
            span = (src["score"].max() - src["score"].min()) / (top - lo)
            assert abs(_row(res, "range_share", judge, **kw)["estimate"] - span) < TOL
            assert abs(_row(res, "top_share", judge, **kw)["estimate"] - (src["score"] == top).mean()) < TOL
            assert _row(res, "top_share", judge, **kw)["n"] == src["item_id"].nunique()
            if judge is None:
                continue
            common = set(src["item_id"]) & set(hum["item_id"])
            js, hs = src[src["item_id"].isin(common)], hum[hum["item_id"].isin(common)]
            shift = js["score"].mean() - hs["score"].mean()
            assert abs(_row(res, "mean_shift", judge, **kw)["estimate"] - shift) < TOL
            tsd = (js["score"] == top).mean() - (hs["score"] == top).mean()
            assert abs(_row(res, "top_share_difference", judge, **kw)["estimate"] - tsd) < TOL
            ed = entropy(js["score"].value_counts().to_numpy(), base=2) - entropy(
                hs["score"].value_counts().to_numpy(), base=2)
            assert abs(_row(res, "entropy_difference", judge, **kw)["estimate"] - ed) < 1e-9
            assert _row(res, "mean_shift", judge, **kw)["n"] == len(common)
    # n_boot=0: no intervals, nothing flagged, and the notes say why.
    assert res["ci_low"].isna().all() and not res["flagged"].any()
    assert res["note"].str.startswith("no interval (n_boot=0)").all()


def test_score_frequencies_count_every_score_of_the_scale():
    data = _mixed()
    f = score_frequencies(data, by=["language"])
    assert list(f.columns) == ["criterion", "language", "source", "score", "count", "share"]
    for (crit, lang, src), grp in f.groupby(["criterion", "language", "source"]):
        cell = data[(data["criterion"] == crit) & (data["language"] == lang)]
        rows = cell[cell["rater_kind"] == "human"] if src == "humans" else cell[cell["rater"] == src]
        expect = rows["score"].value_counts()
        got = grp.set_index("score")["count"]
        assert set(got.index) == set(data.loc[data["criterion"] == crit, "score"])  # zeros for unused scores
        assert (got[got > 0].sort_index() == expect.sort_index()).all()
        assert abs(grp["share"].sum() - 1) < TOL


def _duplicated(data: pd.DataFrame, weights: np.ndarray, order: np.ndarray) -> pd.DataFrame:
    """The resample that item weights describe, written out: item k repeated weights[k] times."""
    parts = []
    for k, item in enumerate(order):
        for r in range(int(weights[k])):
            parts.append(data[data["item_id"] == item].assign(item_id=f"{item}#{r}"))
    return pd.concat(parts, ignore_index=True)


def test_bootstrap_weights_are_item_resamples(monkeypatch):
    """Each replicate equals the statistic recomputed on the resampled items written out."""
    data = _mixed()
    data = data[data["criterion"] == "a"].reset_index(drop=True)
    order = pd.unique(data["item_id"])
    w = np.random.default_rng(3).multinomial(len(order), np.full(len(order), 1 / len(order)))

    def fixed(rng, n_items, n_boot):  # every resample is the same one: the interval collapses onto it
        assert n_items == len(order)
        return np.vstack([np.ones(n_items)] + [w] * n_boot).astype(float)

    monkeypatch.setattr(scale_mod, "item_weights", fixed)
    boot = scale_use(data, n_boot=12)
    again = scale_use(_duplicated(data, w, order), n_boot=0)
    for _, r in again.iterrows():
        b = _row(boot, r["measure"], r["judge"])
        assert abs(b["ci_low"] - r["estimate"]) < 1e-9 and abs(b["ci_high"] - r["estimate"]) < 1e-9, r["measure"]


def test_bootstrap_weights_have_the_multinomial_law():
    W = scale_mod.item_weights(np.random.default_rng(0), 50, 4000)
    assert (W[0] == 1).all() and (W[1:].sum(axis=1) == 50).all()
    # Multinomial(50, 1/50): mean 1, variance 1 - 1/50, covariance -1/50.
    assert abs(W[1:].mean() - 1) < 0.01
    assert abs(W[1:].var(axis=0).mean() - 0.98) < 0.03
    assert abs(np.cov(W[1:, :2].T)[0, 1] + 0.02) < 0.04


# --------------------------------------------------------------------------- injected effects


def test_top_score_skew_recovered_and_flagged_by_language():
    skews = {"low": 0.0, "mid": 0.15, "high": 0.35}
    data = pd.concat([_skew_sim(11 + k, 400, s, n_j=2, tag=lang).assign(language=lang)
                      for k, (lang, s) in enumerate(skews.items())], ignore_index=True)
    res = scale_use(data, by=["language"], n_boot=1000, seed=1)
    for lang, skew in skews.items():
        tsd_true, shift_true = _skew_truth(skew)
        for measure, truth in (("top_share_difference", tsd_true), ("mean_shift", shift_true)):
            r = _row(res, measure, "J", language=lang)
            assert r["ci_low"] <= truth <= r["ci_high"], (lang, measure, r["estimate"], truth)
            assert r["flagged"] == (skew > 0), (lang, measure)
    high, mid = _row(res, "top_share_difference", "J", language="high"), _row(res, "top_share_difference", "J", language="mid")
    assert high["estimate"] > mid["estimate"] > 0
    # The reference rows (humans) are never flagged.
    assert not res.loc[res["judge"].isna(), "flagged"].any()


@pytest.mark.slow
def test_no_false_alarms_without_skew():
    """200 data sets with a judge exchangeable with the humans: flags stay near the nominal 5%."""
    data = pd.concat([_skew_sim(s, 60, 0.0).assign(rep=s) for s in range(200)], ignore_index=True)
    res = scale_use(data, by=["rep"], n_boot=200, seed=7)
    rates = res[res["judge"].notna()].groupby("measure")["flagged"].mean()
    for m in ("top_share_difference", "mean_shift", "entropy_difference"):
        assert rates[m] <= 0.10, (m, rates[m])
    for m in ("distinct_values", "range_share", "entropy", "top_share"):  # descriptive
        assert rates[m] == 0
    print("false-alarm rates (200 data sets, 60 items, n_boot=200):", rates.round(3).to_dict())


def test_round_number_heaping_recovered_and_flagged():
    r5, r10 = 0.10, 0.15
    truth_pmf = _heaped_pmf(_smooth_pmf(75, 12), r5, r10)
    t5, t10 = round_excess(truth_pmf, lowest=1, base=5), round_excess(truth_pmf, lowest=1, base=10)
    # The excess is the heaped share: all heaping lands on multiples of 5; on 10s, r10 plus about half of r5.
    assert abs(t5 - (r5 + r10)) < 0.01 and abs(t10 - (r10 + r5 / 2)) < 0.01
    data = _round_sim(7, 500, r5, r10)
    res = round_number_bias(data, n_boot=1000, seed=1, scale={"q": (1, 100)})
    assert list(res.columns) == LAYOUT
    for m, truth in (("round_excess_5", t5), ("round_excess_10", t10)):
        r = _row(res, m, "J")  # the judge's own excess: recovered, descriptive (not a test)
        assert r["ci_low"] <= truth <= r["ci_high"] and r["test"] is None and not r["flagged"], (m, r["estimate"])
        h = _row(res, m, None)  # humans: no heaping, and reference rows are never tested
        assert not h["flagged"] and h["ci_low"] <= 0 <= h["ci_high"]
        d = _row(res, m + "_difference", "J")  # the test: the judge against the humans, one-sided
        assert d["test"] == "greater" and d["flagged"] and d["ci_low"] <= truth <= d["ci_high"]
    # round_share is the observed mass on the round numbers, among the inner scores (1 and 100 left out).
    js = data.loc[data["rater"] == "J", "score"]
    inside = js[(js > 1) & (js < 100)]
    assert abs(_row(res, "round_share_10", "J")["estimate"] - (inside % 10 == 0).sum() / len(inside)) < TOL


def test_round_excess_is_the_local_reference_contrast():
    """The estimate equals the sum over inner multiples of p_v - (-p_{v-2} + 4 p_{v-1} + 4 p_{v+1} - p_{v+2}) / 6,
    p the shares among the inner scores."""
    data = _round_sim(3, 200, 0.05, 0.05)
    data.loc[data.index[:40], "score"] = 100.0  # a pile-up at the top changes nothing: it is left out
    res = round_number_bias(data, n_boot=0, scale={"q": (1, 100)})
    js = data.loc[data["rater"] == "J", "score"].astype(int)
    inner = js[(js > 1) & (js < 100)]
    p = np.bincount(inner - 1, minlength=100) / len(inner)  # p[v-1] = share of score v among the inner scores
    for m in (5, 10):
        exc = sum(p[v - 1] - (-p[v - 3] + 4 * p[v - 2] + 4 * p[v] - p[v + 1]) / 6 for v in range(m, 100, m))
        assert abs(_row(res, f"round_excess_{m}", "J")["estimate"] - exc) < TOL
        assert abs(round_excess(np.bincount(js - 1, minlength=100), lowest=1, base=m) - exc) < TOL
    # A smooth distribution, however skewed, has (almost) no excess.
    for mu, sd in ((75, 12), (90, 6), (30, 25)):
        assert abs(round_excess(_smooth_pmf(mu, sd), lowest=1, base=5)) < 2e-3


def _ten_point(seed: int, n_items: int, mu: float, sd: float, rater: str, kind: str, n: int) -> pd.DataFrame:
    """``n`` ratings per item on a 1-10 scale: a normal latent rounded and clipped (a pile-up at 10 when mu is high)."""
    rng = np.random.default_rng(seed)
    x = np.clip(np.round(rng.normal(mu, sd, size=(n_items, n))), 1, 10)
    i, k = np.nonzero(np.ones_like(x, dtype=bool))
    return pd.DataFrame({"item_id": [f"i{v}" for v in i], "rater": [f"{rater}{v}" if kind == "human" else rater
                                                                   for v in k],
                         "rater_kind": kind, "criterion": "q", "score": x[i, k], "sample": k if kind == "judge" else 0})


@pytest.mark.parametrize("judge_mu, judge_sd", [(7.5, 2.4), (8.5, 1.5), (6.0, 1.5)])
def test_a_ceiling_on_a_ten_point_scale_is_not_a_round_number_bias(judge_mu, judge_sd):
    """Humans pile up on 10 (mean 7.5, sd 2.4: a fifth of their ratings); the judge as much, more, or narrower:
    no round-number preference anywhere, so no flag (10 is the top of the scale, 5 its one inner
    multiple of 5, whose local reference follows the shape of the distribution)."""
    data = pd.concat([_ten_point(1, 400, 7.5, 2.4, "h", "human", 3),
                      _ten_point(2, 400, judge_mu, judge_sd, "J", "judge", 3)], ignore_index=True)
    assert (data["score"] == 10).mean() > 0.1
    res = round_number_bias(data, n_boot=1000, seed=0)
    d = _row(res, "round_excess_5_difference", "J")
    assert not d["flagged"] and d["p_value"] > 0.05, (d["estimate"], d["p_value"])
    assert d["ci_low"] <= 0 <= d["ci_high"]
    # With 5 heaped on (a quarter of the judge's 4s and 6s moved to 5), it is found.
    heaped = data.copy()
    move = (heaped["rater"] == "J") & heaped["score"].isin([4.0, 6.0]) & (np.arange(len(heaped)) % 4 == 0)
    heaped.loc[move, "score"] = 5.0
    d = _row(round_number_bias(heaped, n_boot=1000, seed=0), "round_excess_5_difference", "J")
    assert d["flagged"] and d["estimate"] > 0


@pytest.mark.slow
def test_no_round_number_false_alarms():
    data = pd.concat([_round_sim(s, 100).assign(rep=s) for s in range(200)], ignore_index=True)
    res = round_number_bias(data, by=["rep"], n_boot=200, seed=3, scale={"q": (1, 100)})
    rates = res[res["judge"].notna()].groupby("measure")["flagged"].mean()
    for m in ("round_excess_5", "round_excess_10", "round_excess_5_difference", "round_excess_10_difference"):
        assert rates[m] <= 0.10, (m, rates[m])
    print("round-number false-alarm rates (200 data sets, 100 items x 3 samples):", rates.round(3).to_dict())


def test_round_number_not_defined_on_narrow_or_fractional_scales():
    res = round_number_bias(pd.read_csv(SAMPLE), n_boot=50)
    assert set(res["measure"]) == {m for m in ROUND_MEASURES if not m.endswith("difference")}
    assert res["estimate"].isna().all() and res["judge"].isna().all()
    assert res["note"].str.contains("needs a wide scale with 10 or more").all()
    # A judge whose 1-100 scores are averages of samples: a note, not a number.
    data = _round_sim(1, 50)
    data.loc[data["rater"] == "J", "score"] += 0.5
    res = round_number_bias(data, n_boot=50, scale={"q": (1, 101)})
    j = res[res["judge"] == "J"]
    assert j["estimate"].isna().all() and j["note"].str.contains("not whole numbers").all()
    assert _row(res, "round_excess_5", None)["estimate"] == _row(res, "round_excess_5", None)["estimate"]  # humans fine
    # A 1-10 scale has no multiple of 10 strictly inside it.
    small = _frame([(np.repeat([f"i{i}" for i in range(30)], 2), np.tile(np.arange(1, 11), 6), "J", "judge", 0)])
    small = pd.concat([small, small.assign(rater="h", rater_kind="human")], ignore_index=True)
    res = round_number_bias(small, n_boot=20)
    assert np.isfinite(_row(res, "round_excess_5", "J")["estimate"])
    assert "no multiple of 10 strictly inside" in _row(res, "round_excess_10", "J")["note"]


# --------------------------------------------------------------------------- sample data and HANNA


def test_sample_data_top_score_skew_grows_in_low_resource_and_non_latin_languages():
    ratings = pd.read_csv(SAMPLE)
    truth = json.loads((ROOT / "sample_data" / "ground_truth.json").read_text())["ratings"]["realized"]["by_language"]
    three = ratings[ratings["criterion"].isin(["LA", "OCQ", "TQ"])].assign(criterion="LA+OCQ+TQ")
    start = time.perf_counter()
    res = scale_use(three, by=["language"], n_boot=1000, seed=0)
    elapsed = time.perf_counter() - start
    # The documented realised top shares (humans, and the single-call judge, which has one sample).
    for lang, t in truth.items():
        assert abs(_row(res, "top_share", None, language=lang)["estimate"] - t["human_top_share"]) < 5e-5
        assert abs(_row(res, "top_share", "gpt-4/single-call", language=lang)["estimate"]
                   - t["judge_top_share"]["gpt-4/single-call"]) < 5e-5
    latin_high = ["English", "French", "German", "Spanish"]
    skewed = ["Swahili", "Chinese", "Japanese", "Hindi", "Bengali"]  # low-resource or non-Latin
    for judge in ("gpt-4/single-call", "gpt-4/per-criterion"):
        for measure in ("top_share_difference", "mean_shift"):
            est = {lang: _row(res, measure, judge, language=lang) for lang in truth}
            assert all(r["flagged"] and r["estimate"] > 0 for r in est.values())  # more lenient everywhere
            assert min(est[lang]["estimate"] for lang in skewed) > max(est[lang]["estimate"] for lang in latin_high)
            assert est["Bengali"]["ci_low"] > est["English"]["ci_high"]
    # Per criterion too (LA, OCQ, TQ separately), Bengali against English.
    per = scale_use(ratings, by=["language"], n_boot=200, seed=0)
    for crit in ("LA", "OCQ", "TQ"):
        b = _row(per, "mean_shift", "gpt-4/per-criterion", criterion=crit, language="Bengali")
        e = _row(per, "mean_shift", "gpt-4/per-criterion", criterion=crit, language="English")
        assert b["estimate"] > e["estimate"]
    print(f"scale_use on the sample data by language, n_boot=1000: {elapsed:.2f} s")


@pytest.mark.slow
def test_sample_data_timing_and_reproducibility():
    ratings = pd.read_csv(SAMPLE)
    start = time.perf_counter()
    a = scale_use(ratings, n_boot=1000, seed=4)
    elapsed = time.perf_counter() - start
    b = scale_use(ratings, n_boot=1000, seed=4)
    pd.testing.assert_frame_equal(a, b)
    c = scale_use(ratings, n_boot=1000, seed=np.random.default_rng(4))
    assert (c["estimate"].fillna(-9) == a["estimate"].fillna(-9)).all()
    assert not np.allclose(c["ci_low"].fillna(0), a["ci_low"].fillna(0)) or (a["ci_low"] == a["ci_high"]).all()
    print(f"scale_use on the sample data (53k rows), n_boot=1000: {elapsed:.2f} s")


@pytest.mark.slow
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA run needs it")
def test_hanna_runs():
    ratings = hanna_preset_frame()
    start = time.perf_counter()
    # 200 resamples, not the default 1,000: only the estimates and notes are checked here, and they take none.
    res = scale_use(ratings, n_boot=200, seed=0)
    elapsed = time.perf_counter() - start
    assert set(res["criterion"]) == {"Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"}
    assert res["judge"].nunique() == 20 and res["estimate"].notna().all()
    # Judges average 3 samples: many more distinct values than the humans' 5.
    dv = res[res["measure"] == "distinct_values"]
    assert (dv.loc[dv["judge"].isna(), "estimate"] == 5).all()
    assert dv.loc[dv["judge"].notna(), "estimate"].median() > 5
    rn = round_number_bias(ratings, n_boot=200)
    assert rn["estimate"].isna().all() and rn["note"].str.contains("wide scale").all()
    freq = score_frequencies(ratings)
    assert (freq.groupby(["criterion", "source"])["share"].sum().round(9) == 1).all()
    print(f"scale_use on HANNA (145k rows, 20 judges), n_boot=200: {elapsed:.2f} s")


# --------------------------------------------------------------------------- errors


def test_user_errors_raise_data_error():
    data = _mixed()
    with pytest.raises(DataError, match="no judge named 'X'"):
        scale_use(data, judges=["X"])
    with pytest.raises(DataError, match="cannot group by 'nope'"):
        scale_use(data, by=["nope"])
    with pytest.raises(DataError, match="different values within one item"):
        scale_use(data.assign(prompt=np.arange(len(data)) % 2), by=["prompt"])
    # One message for every analysis (evalcore.stats.check_resamples); it was "whole number >= 0".
    with pytest.raises(DataError, match="whole number, 0 or more"):
        scale_use(data, n_boot=-1)
    with pytest.raises(DataError, match="between 0 and 1"):
        scale_use(data, level=95)
    with pytest.raises(DataError, match="seed"):
        scale_use(data, seed="x")
    with pytest.raises(DataError, match="outside the scale"):
        round_number_bias(data, scale={"a": (2, 4)})
    with pytest.raises(DataError, match="lowest < highest"):
        round_number_bias(data, scale={"a": (5, 1)})
    with pytest.raises(DataError, match="lacks the column 'score'"):
        scale_use(data.drop(columns="score"))
    with pytest.raises(DataError, match="rater_kind"):
        scale_use(data.assign(rater_kind="robot"))


def test_groups_without_humans_or_shared_items_say_why():
    data = _mixed()
    only_judge = data[~((data["rater_kind"] == "human") & (data["language"] == "odd"))]
    res = scale_use(only_judge, by=["language"], n_boot=20)
    r = _row(res, "mean_shift", "J3", criterion="a", language="odd")
    assert np.isnan(r["estimate"]) and "no human rated" in r["note"] and not r["flagged"]
    res = scale_use(data, judges=[], n_boot=20)
    assert res["judge"].isna().all()
