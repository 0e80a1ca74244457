"""Familiarity and anchoring bias (evalcore.pointwise.bias): against scipy/numpy, on simulated data with known
effects (flagged when injected, size recovered within the CI, false alarms near 5% when absent),
on the bundled sample's designed effects, and on HANNA."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, pearsonr

from evalcore.errors import DataError
from evalcore.pointwise.anchoring import ANCHORING, anchoring, conditional_distribution, criterion_correlations
from evalcore.pointwise.anchoring import TESTED as ANCHORING_TESTED
from evalcore.pointwise.familiarity import TESTED as FAMILIARITY_TESTED
from evalcore.pointwise.familiarity import FAMILIARITY, PROXY_LABEL, familiarity, perplexity_by_score, perplexity_proxy
from evalcore.pointwise.sections import BiasNotApplicable
from evalcore.stats.bootstrap import cell_rng, item_weights
from evalcore.stats.numeric import codes
from evalcore.stats.results import apply_fdr
from evalcore.stats.kendall import tau_b, tau_merge
from tests.helpers import DATASETS, ROOT
from tests.unit.hanna import hanna_preset_frame

TOL = 1e-9
LEAD = ["section", "judge", "criterion"]
TAIL = ["measure", "estimate", "ci_low", "ci_high", "n", "test", "p_value", "q_value", "flagged", "opposite", "note"]

#: The tested rows of the two sections: ``flagged`` is False on every other row.
FLAG_MEASURES = (*FAMILIARITY_TESTED, *ANCHORING_TESTED)


# --------------------------------------------------------------------------- simulation with known effects

THRESHOLDS = np.array([-1.0, -0.3, 0.3, 1.0])  # a 5-point scale 0..4


def simulate(n_items: int, seed: int, *, beta: float = 0.0, gamma: float = 0.0, K: int = 3, n_humans: int = 3,
             rho: float = 0.4, sd_h: float = 0.6, sd_j: float = 0.6, sd_lp: float = 0.5,
             judge_continuous: bool = False, human_continuous: bool = False) -> pd.DataFrame:
    """Ratings with a known familiarity slope ``beta`` and anchoring weight ``gamma``.

    True quality t[i,c] ~ N(0,1), criteria correlated rho; log perplexity lp ~ N(0, sd_lp^2).
    Humans: t + N(0, sd_h^2). Judge: t + N(0, sd_j^2) - beta * lp (familiarity: lower perplexity,
    higher score), scoring the K criteria in one prompt in a random order (``position``);
    a criterion after the first is (1 - gamma) * own + gamma * first (anchoring).
    Scores are the latent values (continuous) or a 5-point scale.
    """
    rng = np.random.default_rng(seed)
    t = math.sqrt(rho) * rng.standard_normal((n_items, 1)) + math.sqrt(1 - rho) * rng.standard_normal((n_items, K))
    lp = rng.normal(0.0, sd_lp, n_items)
    hum = t[:, None, :] + sd_h * rng.standard_normal((n_items, n_humans, K))
    y = t + sd_j * rng.standard_normal((n_items, K)) - beta * lp[:, None]
    order = rng.permuted(np.tile(np.arange(K), (n_items, 1)), axis=1)
    pos = np.empty((n_items, K), dtype=np.int64)
    pos[np.arange(n_items)[:, None], order] = np.arange(1, K + 1)
    first = y[np.arange(n_items), order[:, 0]]
    y = np.where(pos == 1, y, (1 - gamma) * y + gamma * first[:, None])

    def disc(v: np.ndarray) -> np.ndarray:
        return (v[..., None] > THRESHOLDS).sum(axis=-1).astype(float)

    hs = hum if human_continuous else disc(hum)
    js = y if judge_continuous else disc(y)
    items = np.array([f"i{i:05d}" for i in range(n_items)])
    crits = np.array([f"c{k + 1}" for k in range(K)])
    ii, hh, cc = np.unravel_index(np.arange(n_items * n_humans * K), (n_items, n_humans, K))
    H = pd.DataFrame({"item_id": items[ii], "rater": np.char.add("h", hh.astype(str)), "rater_kind": "human",
                      "criterion": crits[cc], "score": hs[ii, hh, cc], "position": np.nan,
                      "perplexity": np.exp(3.0 + lp)[ii]})
    ii, cc = np.unravel_index(np.arange(n_items * K), (n_items, K))
    J = pd.DataFrame({"item_id": items[ii], "rater": "judge", "rater_kind": "judge", "criterion": crits[cc],
                      "score": js[ii, cc], "position": pos[ii, cc].astype(float), "perplexity": np.exp(3.0 + lp)[ii]})
    return pd.concat([H, J], ignore_index=True)


def familiarity_truth(beta: float, sd_j: float = 0.6, sd_lp: float = 0.5) -> float:
    """Population tau_judge - tau_humans for a continuous judge score: (2/pi) asin(corr) - 0.

    (score, log perplexity) is bivariate normal with corr = -beta sd_lp / sqrt(1 + sd_j^2 + beta^2 sd_lp^2);
    the humans' scores are independent of perplexity, so their tau is 0.
    """
    r = -beta * sd_lp / math.sqrt(1 + sd_j ** 2 + beta ** 2 * sd_lp ** 2)
    return 2 / math.pi * math.asin(r)


def anchoring_truth(gamma: float, *, K: int = 3, rho: float = 0.4, sd_h: float = 0.6, sd_j: float = 0.6,
                    n_humans: int = 3) -> dict[str, float]:
    """Population values of the anchoring measures for continuous scores (law of total covariance)."""
    C, V = rho, 1 + sd_j ** 2
    Vl = (1 - gamma) ** 2 * V + gamma ** 2 * V + 2 * gamma * (1 - gamma) * C  # variance after anchoring
    cov = (2 / K) * ((1 - gamma) * C + gamma * V) + ((K - 2) / K) * (
        (1 - gamma) ** 2 * C + 2 * gamma * (1 - gamma) * C + gamma ** 2 * V)
    r_judge = cov / (V / K + (K - 1) / K * Vl)
    r_humans = rho / (1 + sd_h ** 2)
    vh = 1 + sd_h ** 2 / n_humans  # variance of the human mean
    a = 2 / math.pi * math.asin(1 / math.sqrt(V * vh))  # tau at position 1
    b = 2 / math.pi * math.asin(((1 - gamma) + gamma * C) / math.sqrt(Vl * vh))  # at later positions
    return {"r_difference": r_judge - r_humans, "agreement_first_minus_later": a - b,
            "agreement_position_slope": 6 * (b - a) / (K * (K + 1))}


def _row(df: pd.DataFrame, measure: str, judge=None, criterion=None) -> pd.Series:
    m = df["measure"] == measure
    m &= df["judge"].isna() if judge is None else df["judge"] == judge
    m &= df["criterion"].isna() if criterion is None else df["criterion"] == criterion
    (i,) = np.flatnonzero(m.to_numpy())
    return df.iloc[i]


def _covers(row: pd.Series, value: float) -> bool:
    return bool(row["ci_low"] <= value <= row["ci_high"])


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(ROOT / "sample_data" / "ratings_multilingual.csv")


# --------------------------------------------------------------------------- against scipy / numpy


def test_kendall_tau_matches_scipy_on_sample(sample):
    out = familiarity(sample, n_boot=0)
    first = sample[sample["sample"] == 0]
    for crit in ["LA", "OCQ", "TQ", "PC", "H"]:
        d = first[first["criterion"] == crit]
        h = d[d["rater_kind"] == "human"]
        ref_h = kendalltau(h["score"], h["perplexity"]).statistic  # every human rating with its item's perplexity
        assert abs(_row(out, "kendall_tau", None, crit)["estimate"] - ref_h) < TOL
        for judge in ["gpt-4/per-criterion", "gpt-4/single-call"]:
            j = d[d["rater"] == judge]
            ref_j = kendalltau(j["score"], j["perplexity"]).statistic
            assert abs(_row(out, "kendall_tau", judge, crit)["estimate"] - ref_j) < TOL
            assert abs(_row(out, "tau_difference", judge, crit)["estimate"] - (ref_j - ref_h)) < TOL


@pytest.mark.parametrize("path", ["table", "merge"])
def test_weighted_tau_matches_scipy_on_expanded_resamples(path):
    """Both tau algorithms, with item weights (a bootstrap resample), equal scipy on the repeated data."""
    rng = np.random.default_rng(3)
    n = 60
    local = np.repeat(np.arange(n), 2)  # two observations per item (e.g. two annotators)
    x = rng.integers(0, 4, 2 * n).astype(float) if path == "table" else rng.normal(size=2 * n).round(1)
    y = np.repeat(rng.normal(size=n).round(1), 2)  # item-level, with ties
    count = rng.integers(1, 3, 2 * n).astype(float)
    Wt = np.column_stack([np.ones(n), rng.multinomial(n, np.full(n, 1 / n), size=5).T]).astype(float)
    if path == "merge":
        xc, _ = codes(x)
        yc, _ = codes(y)
        got = tau_merge(Wt, local, xc, yc, count)
    else:
        got = tau_b(Wt, local, x, y, count)
    for r in range(Wt.shape[1]):
        reps = (Wt[local, r] * count).astype(int)
        ref = kendalltau(np.repeat(x, reps), np.repeat(y, reps)).statistic
        assert abs(got[r] - ref) < TOL


def test_bootstrap_is_over_items_and_matches_an_explicit_loop():
    """The vectorised intervals equal resampling item ids in a loop and calling scipy/numpy."""
    d = simulate(80, 11, beta=0.4, gamma=0.3)
    B, seed = 40, 5
    items = pd.unique(d["item_id"])
    fam = familiarity(d, n_boot=B, seed=seed)
    anc = anchoring(d, n_boot=B, seed=seed)
    for crit, key, table in (("c1", (FAMILIARITY, "c1"), fam), (None, (ANCHORING,), anc)):
        W = item_weights(cell_rng(seed, key), len(items), B)
        vals = []
        for r in range(1, B + 1):
            picked = np.repeat(items, W[r].astype(int))
            rs = pd.DataFrame({"item_id": picked, "copy": np.arange(len(picked))}).merge(d, on="item_id")
            if crit:
                rs = rs[rs["criterion"] == crit]
                h, j = rs[rs["rater_kind"] == "human"], rs[rs["rater_kind"] == "judge"]
                vals.append(kendalltau(j["score"], j["perplexity"]).statistic
                            - kendalltau(h["score"], h["perplexity"]).statistic)
            else:
                wide = rs.pivot_table(index=["copy", "rater"], columns="criterion", values="score")
                is_judge = wide.index.get_level_values("rater") == "judge"
                rh = np.corrcoef(wide[~is_judge].to_numpy().T)  # humans: one unit per (draw, annotator)
                rj = np.corrcoef(wide[is_judge].to_numpy().T)
                iu = np.triu_indices(3, k=1)
                vals.append(rj[iu].mean() - rh[iu].mean())
        lo, hi = np.quantile(vals, [0.025, 0.975])
        row = _row(table, "tau_difference", "judge", "c1") if crit else _row(table, "r_difference", "judge")
        assert abs(row["ci_low"] - lo) < TOL and abs(row["ci_high"] - hi) < TOL


def test_correlations_match_numpy_and_scipy(sample):
    cc = criterion_correlations(sample, n_boot=0)
    first = sample[sample["sample"] == 0]
    humans = first[first["rater_kind"] == "human"].pivot(index=["item_id", "rater"], columns="criterion",
                                                          values="score")
    judge = first[first["rater"] == "gpt-4/single-call"].pivot(index="item_id", columns="criterion", values="score")
    crits = ["LA", "OCQ", "TQ", "PC", "H"]
    for source, wide in (("humans", humans), ("gpt-4/single-call", judge)):
        ref = np.corrcoef(wide[crits].to_numpy().T)
        got = cc[cc["source"] == source].pivot(index="criterion_a", columns="criterion_b", values="r")
        assert np.allclose(got.loc[crits, crits].to_numpy(), ref, atol=TOL, rtol=0)
    assert abs(_cc(cc, "humans", "LA", "OCQ") - pearsonr(humans["LA"], humans["OCQ"]).statistic) < TOL
    # The summary's mean r is the mean of the matrix's off-diagonal upper triangle.
    a = anchoring(sample, n_boot=0)
    ref = np.corrcoef(judge[crits].to_numpy().T)[np.triu_indices(5, k=1)].mean()
    assert abs(_row(a, "mean_inter_criterion_r", "gpt-4/single-call")["estimate"] - ref) < TOL


def _cc(cc: pd.DataFrame, source: str, a: str, b: str) -> float:
    m = (cc["source"] == source) & (cc["criterion_a"] == a) & (cc["criterion_b"] == b)
    return float(cc.loc[m, "r"].item())


def test_conditional_distribution_and_perplexity_by_score_match_pandas(sample):
    first = sample[sample["sample"] == 0]
    out = conditional_distribution(sample, given="LA", target="OCQ", threshold=1, n_boot=50)
    wide = first.pivot_table(index=["item_id", "rater", "rater_kind"], columns="criterion", values="score")
    wide = wide.reset_index()
    wide["source"] = np.where(wide["rater_kind"] == "human", "humans", wide["rater"])
    wide["condition"] = np.where(wide["LA"] > 1, "above", "at_or_below")
    ref = wide.groupby(["source", "condition"])["OCQ"].value_counts(normalize=True)
    got = out.set_index(["source", "condition", "score"])["share"]
    for (src, cond, score), share in ref.items():
        assert abs(got[(src, cond, float(score))] - share) < TOL
    assert np.allclose(out.groupby(["source", "condition"])["share"].sum(), 1.0)

    pbs = perplexity_by_score(sample, n_boot=50)
    first = first.assign(source=np.where(first["rater_kind"] == "human", "humans", first["rater"]))
    ref = first.groupby(["criterion", "source", "score"])["perplexity"].agg(["mean", "size"])
    got = pbs.set_index(["criterion", "source", "score"])
    for idx, r in ref.iterrows():
        assert abs(got.loc[idx, "mean_perplexity"] - r["mean"]) < TOL and got.loc[idx, "n"] == r["size"]
    assert (pbs["ci_low"] <= pbs["mean_perplexity"] + TOL).all()


# --------------------------------------------------------------------------- effects, injected and absent


@pytest.mark.slow
def test_familiarity_injected_is_flagged_and_recovered():
    truth = familiarity_truth(0.5)  # -0.134
    flagged, covered = [], []
    for seed in range(20):
        out = familiarity(simulate(400, 5000 + seed, beta=0.5, judge_continuous=True), n_boot=200, seed=seed)
        rows = out[out["measure"] == "tau_difference"]
        flagged += list(rows["flagged"])
        covered += [_covers(r, truth) for _, r in rows.iterrows()]
        assert (rows["estimate"] < 0).all()
    assert np.mean(flagged) >= 0.95  # measured: 1.0
    assert np.mean(covered) >= 0.85  # nominal 0.95; measured 0.95 (60 intervals)


@pytest.mark.slow
def test_anchoring_injected_is_flagged_and_recovered():
    truth = anchoring_truth(0.5)  # r_difference 0.475, slope -0.052, first - later 0.103
    res = {k: [] for k in ("r_flag", "r_cover", "slope_flag", "slope_cover", "fml_cover")}
    for seed in range(20):
        d = simulate(700, 9000 + seed, gamma=0.5, judge_continuous=True, human_continuous=True)
        out = anchoring(d, n_boot=200, seed=seed)
        r = _row(out, "r_difference", "judge")
        res["r_flag"].append(r["flagged"] and r["estimate"] > 0)
        res["r_cover"].append(_covers(r, truth["r_difference"]))
        s = _row(out, "agreement_position_slope", "judge")
        res["slope_flag"].append(s["flagged"] and s["estimate"] < 0)
        res["slope_cover"].append(_covers(s, truth["agreement_position_slope"]))
        res["fml_cover"].append(_covers(_row(out, "agreement_first_minus_later", "judge"),
                                        truth["agreement_first_minus_later"]))
    assert all(res["r_flag"])
    assert np.mean(res["slope_flag"]) >= 0.9  # measured: 1.0
    for k in ("r_cover", "slope_cover", "fml_cover"):
        assert np.mean(res[k]) >= 0.8, k  # nominal 0.95; measured 0.95, 0.95, 0.90 (0.95-0.975 over 80 seeds)


@pytest.mark.slow
def test_no_effect_false_alarm_rate_is_near_nominal():
    """Judge = one more annotator (same noise), no familiarity, no anchoring, 5-point scales: 150 data sets.

    They are stacked as the groups of one table, one call per analysis: each group is resampled on its own,
    so its p-values are those of a call on it alone, and each data set's rows are flagged as a report of their
    own (the flag rule over that data set's tested rows). One call instead of 150 saves the fixed cost of
    each."""
    n_seeds = 150
    d = pd.concat([simulate(150, 1000 + seed).assign(rep=seed, item_id=lambda x, seed=seed: f"r{seed}-" + x["item_id"])
                   for seed in range(n_seeds)], ignore_index=True)
    fam = familiarity(d, by=["rep"], n_boot=200, seed=0)
    anc = anchoring(d, by=["rep"], n_boot=200, seed=0)
    fam = pd.concat([apply_fdr(g) for _, g in fam.groupby("rep")], ignore_index=True)  # one report per data set
    anc = pd.concat([apply_fdr(g) for _, g in anc.groupby("rep")], ignore_index=True)
    judged = anc[(anc["judge"] == "judge") & anc["criterion"].isna()]  # over the criteria
    rows = {"tau_difference": fam[fam["measure"] == "tau_difference"],  # 3 criteria per data set
            "r_difference": judged[judged["measure"] == "r_difference"],
            "agreement_position_slope": judged[judged["measure"] == "agreement_position_slope"]}
    assert [len(r) for r in rows.values()] == [3 * n_seeds, n_seeds, n_seeds]
    rates = {m: float(r["p_value"].le(0.05).mean()) for m, r in rows.items()}
    flags = {m: float(r["flagged"].mean()) for m, r in rows.items()}
    # The one-sided p-values reject at their level: Binomial(150, 0.05) has mean 7.5, P(X > 15) < 0.005.
    # Measured: 0.053, 0.047, 0.040.
    assert all(0.01 <= r <= 0.10 for r in rates.values()), rates
    # Flags need a Benjamini-Hochberg q <= 0.05 over each report's tests: fewer still. Measured: 0.013, 0.007, 0.007.
    assert all(f <= 0.05 for f in flags.values()), flags
    print("p <= 0.05:", {m: round(r, 3) for m, r in rates.items()},
          "flagged:", {m: round(f, 3) for m, f in flags.items()})


# --------------------------------------------------------------------------- the bundled sample's designed effects


def test_sample_familiarity_designed_effect(sample):
    out = familiarity(sample, by=["language"], n_boot=200, seed=1)
    overall = familiarity(sample, n_boot=1000, seed=0)
    diff = overall[overall["measure"] == "tau_difference"].set_index(["judge", "criterion"])
    # gpt-4/per-criterion: latent shifted by -0.8 (ln ppl - ln 20): flagged, negative, on the 3-level criteria.
    for crit in ["LA", "OCQ", "TQ", "H"]:
        r = diff.loc[("gpt-4/per-criterion", crit)]
        assert r["flagged"] and r["ci_high"] < 0
    # The single-call judge and the humans have no perplexity effect.
    assert not diff.loc["gpt-4/single-call", "flagged"].any()
    humans = overall[(overall["measure"] == "kendall_tau") & overall["judge"].isna()]
    assert ((humans["ci_low"] < 0) & (humans["ci_high"] > 0)).all()
    assert overall.loc[overall["measure"] == "kendall_tau", "n"].eq(1200).all()
    # Per language (120 items): the per-criterion judge is flagged far more often than the single-call one.
    by_lang = out[out["measure"] == "tau_difference"].groupby("judge")["flagged"].mean()
    assert by_lang["gpt-4/per-criterion"] > 0.5 and by_lang["gpt-4/single-call"] < 0.15
    # Their Table 1 / Fig. 2: the familiar judge's top-scored texts have lower perplexity than the humans'.
    pbs = perplexity_by_score(sample, n_boot=0)
    top = pbs[(pbs["criterion"] == "LA") & (pbs["score"] == 2)].set_index("source")["mean_perplexity"]
    assert top["gpt-4/per-criterion"] < top["humans"] - 1


def test_sample_anchoring_designed_effect(sample):
    out = anchoring(sample, n_boot=1000, seed=0)
    single = _row(out, "r_difference", "gpt-4/single-call")
    assert single["flagged"] and single["estimate"] > 0.1  # gamma = 0.5, criteria in one prompt
    assert not _row(out, "r_difference", "gpt-4/per-criterion")["flagged"]  # one call per criterion
    # Only the single-call judge has positions; anchoring on the first criterion lowers later agreement.
    assert not out.loc[out["judge"] == "gpt-4/per-criterion", "measure"].str.startswith("agreement").any()
    fml = _row(out, "agreement_first_minus_later", "gpt-4/single-call")
    assert fml["ci_low"] > 0
    # ground_truth.json's mean inter-criterion correlation over LA, OCQ, TQ (humans: per annotator).
    three = anchoring(sample[sample["criterion"].isin(["LA", "OCQ", "TQ"])], n_boot=0)
    assert round(_row(three, "mean_inter_criterion_r")["estimate"], 4) == 0.2575
    assert round(_row(three, "mean_inter_criterion_r", "gpt-4/single-call")["estimate"], 4) == 0.5703


def test_sample_contract(sample):
    for fn in (familiarity, anchoring):
        out = fn(sample, by=["language"], n_boot=50, seed=0)
        assert list(out.columns) == [*LEAD, "language", *TAIL]
        assert out["flagged"].dtype == bool and out["n"].dtype == np.int64
        assert out["section"].eq(fn.__name__).all()
        assert out.loc[out["estimate"].isna(), "note"].str.startswith("not defined").all()
        assert not out.loc[~out["measure"].isin(FLAG_MEASURES), "flagged"].any()
        assert (out.loc[out["flagged"], "ci_low"] > 0).sum() + (out.loc[out["flagged"], "ci_high"] < 0).sum() \
            == out["flagged"].sum()
        assert out["judge"].map(type).isin([str, type(None)]).all()
    # Same seed, same numbers; n_boot=0: no intervals, no flags, and the note says so.
    a, b = familiarity(sample, n_boot=30, seed=4), familiarity(sample, n_boot=30, seed=4)
    pd.testing.assert_frame_equal(a, b)
    none = familiarity(sample, n_boot=0)
    assert none["ci_low"].isna().all() and not none["flagged"].any()
    assert none.loc[none["measure"] == "tau_difference", "note"].str.contains("n_boot=0").all()


# --------------------------------------------------------------------------- the perplexity proxy


def _proxy_reference(docs: list[str]) -> list[float]:
    """A plain-Python leave-one-out character-trigram model, written independently of the vectorised one."""
    padded = [["<s>", "<s>", *d, "</s>"] for d in docs]
    per_doc = []
    for p in padded:
        c = {k: Counter() for k in ("tri", "ctx2", "bi", "ctx1", "uni")}
        for t in range(2, len(p)):
            c["tri"][(p[t - 2], p[t - 1], p[t])] += 1
            c["ctx2"][(p[t - 2], p[t - 1])] += 1
            c["bi"][(p[t - 1], p[t])] += 1
            c["ctx1"][p[t - 1]] += 1
            c["uni"][p[t]] += 1
        per_doc.append(c)
    total = {k: sum((d[k] for d in per_doc), Counter()) for k in per_doc[0]}
    vocab = len({ch for d in docs for ch in d}) + 1
    n_all = sum(len(d) + 1 for d in docs)
    out = []
    for p, own in zip(padded, per_doc):
        loo = {k: total[k] - own[k] for k in total}
        logp = 0.0
        for t in range(2, len(p)):
            parts = [(0.1, (loo["uni"][p[t]] + 1) / (n_all - (len(p) - 2) + vocab))]
            if loo["ctx1"][p[t - 1]]:
                parts.append((0.3, loo["bi"][(p[t - 1], p[t])] / loo["ctx1"][p[t - 1]]))
            if loo["ctx2"][(p[t - 2], p[t - 1])]:
                parts.append((0.6, loo["tri"][(p[t - 2], p[t - 1], p[t])] / loo["ctx2"][(p[t - 2], p[t - 1])]))
            logp += math.log(sum(w * q for w, q in parts) / sum(w for w, _ in parts))
        out.append(math.exp(-logp / (len(p) - 2)))
    return out


def test_perplexity_proxy_matches_reference_and_is_labelled():
    docs = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "zqxj vkwp qqqz",
            "naïve café — 日本語", "the cat sat"]
    got = perplexity_proxy(pd.Series(docs + [docs[0], None, ""]))
    assert np.allclose(got.iloc[:6], _proxy_reference(docs), rtol=1e-12, atol=0)
    assert got.iloc[6] == got.iloc[0]  # identical texts count once: a text never makes itself familiar
    assert got.iloc[7:].isna().all()
    assert got.iloc[3] == got.iloc[:6].max()  # gibberish is the least familiar
    assert "PROXY" in PROXY_LABEL and "not an LLM's perplexity" in PROXY_LABEL
    assert "proxy" in perplexity_proxy.__doc__.lower()


def test_familiarity_uses_the_proxy_when_only_text_is_given():
    rng = np.random.default_rng(0)
    words = "the of and to in is was for that with as on by at from".split()
    texts = [" ".join(rng.choice(words, 12)) if i % 3 else "".join(rng.choice(list("xqzjkvw"), 40))
             for i in range(90)]
    d = simulate(90, 2).drop(columns=["perplexity"])
    d["text"] = np.array(texts)[d["item_id"].str[1:].astype(int)]
    out = familiarity(d, n_boot=50)
    assert out["note"].str.contains(PROXY_LABEL, regex=False).all()
    proxy = perplexity_proxy(pd.Series(texts))
    j = d[(d["rater_kind"] == "judge") & (d["criterion"] == "c1")]
    ref = kendalltau(j["score"], proxy.to_numpy()[j["item_id"].str[1:].astype(int)]).statistic
    assert abs(_row(out, "kendall_tau", "judge", "c1")["estimate"] - ref) < TOL
    assert perplexity_by_score(d, n_boot=0)["note"].str.contains("PROXY").all()


# --------------------------------------------------------------------------- edge cases and errors


def test_partial_coverage_missing_perplexity_and_continuous_scores():
    d = simulate(120, 9, judge_continuous=True)
    d.loc[d["item_id"].isin(["i00000", "i00001"]), "perplexity"] = np.nan
    d = d[~((d["rater_kind"] == "judge") & d["item_id"].isin([f"i{i:05d}" for i in range(100, 120)]))]
    out = familiarity(d, n_boot=20)
    assert out["note"].str.contains("2 item(s) without a perplexity left out", regex=False).all()
    assert _row(out, "tau_difference", "judge", "c1")["n"] == 98
    assert _row(out, "kendall_tau", None, "c1")["n"] == 118
    pbs = perplexity_by_score(d, n_boot=0, max_levels=10)
    judge = pbs[(pbs["source"] == "judge") & (pbs["criterion"] == "c1")]
    assert len(judge) <= 10 and judge["note"].str.contains("binned").all()


def test_undefined_values_are_explained():
    d = simulate(50, 4)
    d.loc[(d["rater_kind"] == "judge") & (d["criterion"] == "c2"), "score"] = 3.0  # a constant judge
    fam = familiarity(d, n_boot=20)
    r = _row(fam, "kendall_tau", "judge", "c2")
    assert np.isnan(r["estimate"]) and "every judge score is the same" in r["note"]
    anc = anchoring(d, n_boot=20)
    assert "mean over 1 of 3 criterion pairs" in _row(anc, "mean_inter_criterion_r", "judge")["note"]


def test_user_errors_raise_data_error(sample):
    small = sample[sample["item_id"].str.startswith("en-")]
    with pytest.raises(BiasNotApplicable, match="perplexity"):
        familiarity(small.drop(columns=["perplexity"]))
    with pytest.raises(DataError, match="no judge named"):
        familiarity(small, judges=["gpt-5"])
    with pytest.raises(DataError, match="at least two criteria"):
        anchoring(small[small["criterion"] == "LA"])
    with pytest.raises(DataError, match="cannot be split by criterion"):
        anchoring(small, by=["criterion"])
    with pytest.raises(DataError, match="no such column"):
        anchoring(small, by=["country"])
    bad = small.copy()
    bad.loc[bad.index[0], "perplexity"] = 1e6
    with pytest.raises(DataError, match="different values within one item"):
        familiarity(bad)
    bad = small.astype({"score": object})
    bad.loc[bad.index[0], "score"] = "good"
    with pytest.raises(DataError, match="not a number"):
        anchoring(bad)
    with pytest.raises(DataError, match="same criterion"):
        conditional_distribution(small, given="LA", target="LA", threshold=1)
    with pytest.raises(DataError, match="no criterion 'XX'"):
        conditional_distribution(small, given="XX", target="LA", threshold=1)
    with pytest.raises(DataError, match="bootstrap"):
        anchoring(small, n_boot=-1)
    assert issubclass(BiasNotApplicable, DataError)


# --------------------------------------------------------------------------- HANNA


@pytest.mark.slow
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA check needs it")
def test_hanna_runs():
    ratings = hanna_preset_frame()
    out = anchoring(ratings, n_boot=200, seed=0)
    judges = sorted(ratings.loc[ratings["rater_kind"] == "judge", "rater"].unique())
    assert len(judges) == 20
    assert sorted(out["judge"].dropna().unique()) == judges
    assert out["estimate"].notna().all() and out["n"].eq(1056).all()
    humans = _row(out, "mean_inter_criterion_r")
    assert 0.3 < humans["estimate"] < 0.8
    with pytest.raises(BiasNotApplicable):  # no perplexity and no text in HANNA
        familiarity(ratings)
    from evalcore.pointwise.bias_report import bias_report

    both = bias_report(ratings, n_boot=0, sections=("familiarity", "anchoring"))
    assert _row(both, "not_available")["section"] == "familiarity"
    cc = criterion_correlations(ratings, judges=judges[:2], n_boot=0)
    assert len(cc) == 3 * 36
