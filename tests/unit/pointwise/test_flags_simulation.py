"""The flag rule on simulated judges: a judge drawn from the humans' own model is flagged nowhere,
injected biases are found in their section, and effects in the direction that is not a bias are marked
``opposite``, never flagged.

The generator: per item, a latent quality per criterion (4 criteria, correlated 0.4), a perplexity that
falls with quality (the same item property for everyone), 3 human annotators and a judge sampled 3
times, each rating = quality + noise of the same size for annotators and samples (sd 0.7), rounded to
ordinal scores (two criteria on 1-5, two on 1-10, one of them centred high so that a fifth of its
ratings pile up, clipped, on 10), the judge's prompt order of the criteria (``position``) and 3
languages of 100 items each. With ``wide=True`` the criteria are on 1-100.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.bias_report import BiasReport, bias_report

CRITERIA = {"fluency": (1, 5, 3.0, 1.0), "relevance": (1, 5, 3.3, 1.0), "coherence": (1, 10, 6.0, 2.0),
            "overall": (1, 10, 7.5, 2.0)}  # lowest, top, centre, scale units per latent unit
WIDE = {"story": (1, 100, 62.0, 15.0), "style": (1, 100, 58.0, 15.0)}
RHO, SIGMA = 0.4, 0.7  # correlation of the criteria's qualities; the noise of one rating
LANGUAGES = ("en", "de", "sw")
N_BOOT = 200


def _noise(rng: np.random.Generator, shape: tuple, K: int, shared: str | None = None) -> np.ndarray:
    """(*shape, K) rating noise of sd SIGMA; 'anchoring' shares 60% of its variance across the criteria,
    'decorrelated' makes it negatively correlated across them (-1/(K-1)); the spread stays the same."""
    z = rng.standard_normal((*shape, K))
    if shared == "anchoring":
        return SIGMA * (np.sqrt(0.4) * z + np.sqrt(0.6) * rng.standard_normal((*shape, 1)))
    if shared == "decorrelated":
        return SIGMA * (z - z.mean(axis=-1, keepdims=True)) / np.sqrt(1 - 1 / K)
    return SIGMA * z


def _judge(rng: np.random.Generator, Q: np.ndarray, v: np.ndarray, n_samples: int, inject: str | None) -> np.ndarray:
    """The judge's latent ratings (items, samples, criteria): the humans' model, or one injected departure."""
    N, K = Q.shape
    q = Q[:, None, :]
    if inject == "low_consistency":  # less signal, more noise between samples, the same spread
        a = 0.8
        return a * q + np.sqrt((1 + SIGMA ** 2 - a * a) / SIGMA ** 2) * _noise(rng, (N, n_samples), K)
    if inject == "high_consistency":  # as accurate as an annotator, but most of its error repeats across samples
        return q + np.sqrt(0.8) * _noise(rng, (N, 1), K) + np.sqrt(0.2) * _noise(rng, (N, n_samples), K)
    J = q + _noise(rng, (N, n_samples), K, inject if inject in ("anchoring", "decorrelated") else None)
    if inject == "familiarity":  # on fluency the judge follows what perplexity sees (v), not only quality
        beta = 0.45
        J[..., 0] = Q[:, None, 0] - beta * v[:, None] + np.sqrt(SIGMA ** 2 - beta ** 2) * rng.standard_normal(
            (N, n_samples))
    return J


def simulate(seed: int, *, inject: str | None = None, n_items: int = 100, wide: bool = False,
             n_humans: int = 3, n_samples: int = 3, judges: dict[str, str | None] | None = None) -> pd.DataFrame:
    """A ratings table: humans and a judge from the same model, or the judge with one injected bias
    (``anchoring``, ``familiarity``, ``mean_shift``, ``low_consistency``, ``round`` with ``wide``) or
    an effect that is not a bias (``high_consistency``, ``decorrelated``).

    ``judges`` (name -> injected departure or None) puts several judges beside the same humans, each drawn on its
    own; the default is one judge named ``judge`` with ``inject``. The first judge's draws come right after the
    humans', so its ratings are the same whatever judges follow."""
    rng = np.random.default_rng(seed)
    crits = WIDE if wide else CRITERIA
    judges = {"judge": inject} if judges is None else judges
    K, N = len(crits), n_items * len(LANGUAGES)
    Q = rng.multivariate_normal(np.zeros(K), np.full((K, K), RHO) + (1 - RHO) * np.eye(K), size=N)
    v = rng.standard_normal(N)  # what perplexity sees beyond quality
    ppl = np.exp(3.0 - 0.25 * Q.mean(axis=1) + 0.25 * v)
    H = Q[:, None, :] + _noise(rng, (N, n_humans), K)
    J, position = {}, {}
    for name, departure in judges.items():
        J[name] = _judge(rng, Q, v, n_samples, departure)
        position[name] = np.argsort(rng.random((N, K)), axis=1) + 1.0  # the criteria's order in its prompt
    items = np.array([f"s{seed}-{i}" for i in range(N)])
    parts = []
    for c, (name, (lo, hi, centre, unit)) in enumerate(crits.items()):
        hs = np.clip(np.round(centre + unit * H[:, :, c]), lo, hi)
        for k in range(n_humans):
            parts.append(pd.DataFrame({"item_id": items, "rater": f"h{k}", "rater_kind": "human", "criterion": name,
                                       "score": hs[:, k], "sample": 0, "position": np.nan}))
        for judge, departure in judges.items():
            shift = 0.7 if departure == "mean_shift" and hi == 5 else 0.0  # +0.7 on the 1-5 scales
            js = np.clip(np.round(centre + shift + unit * J[judge][:, :, c]), lo, hi)
            if departure == "round":  # a quarter of the judge's ratings moved to the nearest inner multiple of 5
                js = np.where(rng.random(js.shape) < 0.25, np.clip(np.round(js / 5) * 5, 5, hi - 5), js)
            for s in range(n_samples):
                parts.append(pd.DataFrame({"item_id": items, "rater": judge, "rater_kind": "judge",
                                           "criterion": name, "score": js[:, s], "sample": s,
                                           "position": position[judge][:, c]}))
    out = pd.concat(parts, ignore_index=True)
    out["language"] = np.tile(np.repeat(LANGUAGES, n_items), len(parts))
    out["perplexity"] = np.tile(ppl, len(parts))
    return out


def _tested(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["p_value"].notna()]


# --------------------------------------------------------------------------- the humans' own model


def test_the_generator_is_the_documented_model():
    d = simulate(0)
    assert len(d) == 300 * 4 * 6 and d["item_id"].nunique() == 300 and set(d["language"]) == set(LANGUAGES)
    top = d[d["criterion"] == "overall"].groupby("rater_kind")["score"].apply(lambda s: (s == 10).mean())
    assert (top > 0.15).all()  # the pile-up on 10, for humans and judge alike
    assert d.groupby("criterion")["score"].agg(["min", "max"]).to_dict("list") == \
        {"min": [1.0, 1.0, 1.0, 1.0], "max": [10.0, 5.0, 10.0, 5.0]}
    rep = BiasReport(bias_report(d, by=["language"], n_boot=N_BOOT, seed=0))
    assert rep.skipped == ()
    tested = set(_tested(rep.results)["measure"])
    assert tested == {"tau_difference", "top_share_difference", "mean_shift", "entropy_difference",
                      "round_excess_5_difference", "r_difference", "agreement_position_slope", "alpha_difference"}


@pytest.mark.slow
def test_a_judge_from_the_humans_model_is_flagged_nowhere():
    """10 seeds, each with two judges from the humans' own model: a bias report by language (about 84 tests per
    judge over every section) and an agreement table by language and criterion (12 tests per judge). Under this
    complete null, Benjamini-Hochberg at 5% allows a flag in at most about 5% of reports; measured over 100 seeds
    with one judge: 7% of bias reports and 2% of agreement tables had one, 0.11% of tested rows were flagged.

    Power: the 20 judge-reports hold the 1,680 bias and 240 agreement tests that 20 reports of one judge held, at
    about 70% of their cost (a report's cost is mostly fixed). If 7% of judge-reports had a flag, three or more
    of 20 would with probability 0.16; if 30% had one (a broken rule), two or fewer would with probability 0.04.
    If 1% of rows were flagged (nine times the measured rate), the bias rate would stay within 0.005 (8 flags of
    1,680) with probability 0.014, were the flags independent."""
    rows = []
    for seed in range(10):
        d = simulate(seed, judges={"judge": None, "judge2": None})
        bias = _tested(BiasReport(bias_report(d, by=["language"], n_boot=N_BOOT, seed=seed)).results)
        agr = _tested(agreement(d, by=["language", "criterion"], n_boot=N_BOOT, seed=seed))
        for judge in ("judge", "judge2"):
            b, a = bias[bias["judge"] == judge], agr[agr["judge"] == judge]
            rows.append({"seed": seed, "judge": judge, "bias_tests": len(b), "bias_flags": int(b["flagged"].sum()),
                         "agreement_tests": len(a), "agreement_flags": int(a["flagged"].sum()),
                         "flagged": ", ".join(b.loc[b["flagged"], "measure"])})
    runs = pd.DataFrame(rows)
    assert runs["bias_tests"].sum() >= 1600 and runs["agreement_tests"].sum() == 240
    with_flag = {k: int((runs[f"{k}_flags"] > 0).sum()) for k in ("bias", "agreement")}
    rate = {k: runs[f"{k}_flags"].sum() / runs[f"{k}_tests"].sum() for k in ("bias", "agreement")}
    print(f"\nfalse flags per tested row: bias {rate['bias']:.4f}, agreement {rate['agreement']:.4f}; "
          f"judge-reports with a flag: bias {with_flag['bias']}/20, agreement {with_flag['agreement']}/20")
    print(runs[runs["bias_flags"] + runs["agreement_flags"] > 0].to_string(index=False))
    assert with_flag["bias"] <= 2 and with_flag["agreement"] <= 2, runs
    assert rate["bias"] <= 0.005 and rate["agreement"] <= 0.01


# --------------------------------------------------------------------------- injected biases


#: scenario -> (the section and measure that must be flagged where the bias was injected).
INJECTED = {
    "anchoring": ("anchoring", "r_difference"),
    "familiarity": ("familiarity", "tau_difference"),  # on fluency only
    "mean_shift": ("score_distribution", "mean_shift"),  # on the 1-5 criteria
    "low_consistency": ("self_consistency", "alpha_difference"),
    "round": ("score_distribution", "round_excess_5_difference"),  # on 1-100 criteria (``wide``)
}
#: The scenarios drawn together: four judges beside the same humans, one per injected bias.
TOGETHER = ("anchoring", "familiarity", "mean_shift", "low_consistency")


def _where_injected(scenario: str, rows: pd.DataFrame) -> pd.Series:
    if scenario == "familiarity":
        return rows["criterion"] == "fluency"
    if scenario == "mean_shift":
        return rows["criterion"].isin(["fluency", "relevance"])
    return pd.Series(True, index=rows.index)


@pytest.mark.slow
@pytest.mark.parametrize("scenarios", [TOGETHER, ("round",)], ids=["four_judges", "round"])
def test_injected_biases_are_found_in_their_section(scenarios):
    """20 data sets (300 items), one bias report each: four judges beside the same humans, each with one injected
    bias (the judge's name), as in an audit of several judges; round numbers on 1-100 criteria in reports of their
    own. Each injected bias is flagged every time. A judge's flags outside its section are chance flags:
    Benjamini-Hochberg bounds their expected share among a report's flags (the false discovery proportion) by 5%,
    not their number, and true discoveries (also the other judges') loosen the threshold for the others. One
    report of four judges costs about a third more than a report of one: 40 reports instead of 100.

    Measured (flags outside the judge's section in 20 reports, of all flags; the mean false discovery proportion
    of a report): four judges 15 of 257, 0.051 (anchoring 4, familiarity 8, low consistency 2, mean shift 1);
    round numbers 4 of 125, 0.026. Separately, one judge per report (100 reports), it was anchoring 3 of 24,
    familiarity 1 of 22, low consistency 4 of 84, mean shift 3 of 120, round numbers 4 of 129."""
    wide = scenarios == ("round",)
    found, total, stray, fdp = {s: [] for s in scenarios}, 0, [], []
    for seed in range(1000, 1020):
        res = BiasReport(bias_report(simulate(seed, judges={s: s for s in scenarios}, wide=wide), n_boot=N_BOOT,
                                     seed=seed)).results
        outside = []
        for scenario in scenarios:
            section, measure = INJECTED[scenario]
            mine = res[res["judge"] == scenario]
            target = mine[(mine["section"] == section) & (mine["measure"] == measure)]
            found[scenario] += target[_where_injected(scenario, target)]["flagged"].tolist()
            outside += [f"seed {seed}: {scenario}: {r.section}/{r.measure}/{r.criterion}"
                        for r in mine[mine["flagged"]].itertuples() if r.section != section]
        flags = int(res["flagged"].sum())
        assert res.loc[res["flagged"], "judge"].isin(scenarios).all()  # every flag is a judge's
        total, stray = total + flags, stray + outside
        fdp.append(len(outside) / max(flags, 1))
    print(f"\n{', '.join(f'{s}: {sum(f)}/{len(f)} flagged' for s, f in found.items())}; {total} flags in all, "
          f"{len(stray)} outside the judge's section (mean false discovery proportion {np.mean(fdp):.3f}): {stray}")
    for scenario, flagged in found.items():
        assert len(flagged) >= 20 and np.mean(flagged) >= 0.95, scenario
    assert np.mean(fdp) <= 0.1 and len(stray) <= 5 * len(scenarios), stray


def test_injected_bias_sizes_and_the_rest_of_the_section():
    """What moves with each injected bias: the mean shift also moves the top share and (clipping) the entropy;
    round numbers on 1-100 also lower the entropy; sampling noise is found by alpha, not by the flags
    elsewhere (anchoring's r falls: marked opposite)."""
    shift = BiasReport(bias_report(simulate(1, inject="mean_shift"), n_boot=N_BOOT, seed=1)).results
    ms = shift[(shift["measure"] == "mean_shift") & shift["criterion"].isin(["fluency", "relevance"])]
    assert ms["flagged"].all() and ms["estimate"].between(0.4, 0.8).all()  # +0.7 before clipping at 5
    rnd = BiasReport(bias_report(simulate(1, inject="round", wide=True), n_boot=N_BOOT, seed=1)).results
    r10 = rnd[rnd["measure"] == "round_excess_10_difference"]
    assert r10["flagged"].all() and (r10["test"] == "greater").all()
    low = BiasReport(bias_report(simulate(1, inject="low_consistency"), n_boot=N_BOOT, seed=1)).results
    r = low[low["measure"] == "r_difference"].iloc[0]
    assert not r["flagged"] and r["estimate"] < 0


# --------------------------------------------------------------------------- effects that are not biases


#: Effects that are not biases: the judge (named by its effect) and the measure where the effect shows.
OTHER_WAY = {"decorrelated": "r_difference", "high_consistency": "alpha_difference"}


@pytest.mark.slow
def test_effects_in_the_other_direction_are_opposite_not_flagged():
    """A judge more self-consistent than the humans, and one whose criteria correlate less than theirs (two judges
    beside the same humans, 5 data sets, one report each): significant, reported as ``opposite``, never a flag;
    nothing else is flagged either. The decorrelated judge is drawn first, so its ratings are those it has alone
    (measured over 20 seeds: opposite in 20 of 20 reports; drawn second, on other draws, 19 of 20)."""
    opposite, flags = {j: [] for j in OTHER_WAY}, {j: 0 for j in OTHER_WAY}
    for seed in range(5):
        res = BiasReport(bias_report(simulate(seed, judges={j: j for j in OTHER_WAY}), n_boot=N_BOOT,
                                     seed=seed)).results
        for judge, measure in OTHER_WAY.items():
            rows = res[(res["judge"] == judge) & (res["measure"] == measure)]
            assert len(rows) and not rows["flagged"].any(), judge
            assert (rows["estimate"] > 0).all() == (measure == "alpha_difference"), judge
            opposite[judge] += rows["opposite"].tolist()
            flags[judge] += int(res.loc[res["judge"] == judge, "flagged"].sum())
        assert res.loc[res["flagged"], "judge"].isin(list(OTHER_WAY)).all()
    print(f"\nrows opposite: {({j: f'{sum(o)}/{len(o)}' for j, o in opposite.items()})}; flags in the reports: {flags}")
    for judge in OTHER_WAY:
        assert np.mean(opposite[judge]) >= 0.9 and flags[judge] <= 1, judge
