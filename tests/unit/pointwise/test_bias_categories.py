"""The bias sections on nominal criteria: category shares and the mean perplexity per category, judge against
humans, checked against plain pandas; a shifted label prior is flagged and a judge drawn like the humans is not
(at a nominal rate); the measures that need an order are said not to apply, once per section and criterion."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy

import krippendorff

from evalcore.errors import DataError
from evalcore.pointwise.anchoring import anchoring, conditional_distribution, criterion_correlations
from evalcore.pointwise.bias_report import BiasReport, bias_report
from evalcore.pointwise.consistency import self_consistency
from evalcore.pointwise.familiarity import familiarity
from evalcore.pointwise.scale_use import round_number_bias, scale_use
from evalcore.pointwise.sections import MIN_CATEGORY_ITEMS, NOT_AVAILABLE, TESTS, BiasNotApplicable
from evalcore.stats.results import apply_fdr
from tests.helpers import LAYOUT

TOL = 1e-12
LABELS = ("con", "neutral", "pro")


def _table(seed: int = 0, n_items: int = 80, *, judge_p=(0.2, 0.3, 0.5), missing: float = 0.1) -> pd.DataFrame:
    """A nominal criterion ``stance`` (text labels) and a numeric ``fluency`` (1-5), three humans (each with a
    second sample that must not count), a judge ``gpt`` sampled twice per item and a judge ``llama`` once; some
    ratings missing; a perplexity per item."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        ppl = float(rng.gamma(4.0, 5.0))
        for h in ("h1", "h2", "h3"):
            if rng.random() < missing:
                continue
            for sample in (0, 1):
                rows.append({"item_id": f"i{i}", "rater": h, "rater_kind": "human", "criterion": "stance",
                             "scale": "nominal", "score": np.nan, "category": rng.choice(LABELS, p=[0.3, 0.4, 0.3]),
                             "sample": sample, "perplexity": ppl})
            rows.append({"item_id": f"i{i}", "rater": h, "rater_kind": "human", "criterion": "fluency",
                         "scale": "ordinal", "score": float(rng.integers(1, 6)), "category": None, "sample": 0,
                         "perplexity": ppl})
        for judge, samples in (("gpt", 2), ("llama", 1)):
            if rng.random() < missing:
                continue
            for sample in range(samples):
                rows.append({"item_id": f"i{i}", "rater": judge, "rater_kind": "judge", "criterion": "stance",
                             "scale": "nominal", "score": np.nan, "category": rng.choice(LABELS, p=judge_p),
                             "sample": sample, "perplexity": ppl})
            rows.append({"item_id": f"i{i}", "rater": judge, "rater_kind": "judge", "criterion": "fluency",
                         "scale": "ordinal", "score": float(rng.integers(1, 6)), "category": None, "sample": 0,
                         "perplexity": ppl})
    return pd.DataFrame(rows)


def _stance(frame: pd.DataFrame, *, first: str) -> pd.DataFrame:
    """The stance ratings that count: the humans' first sample, and every sample of a judge (``first="humans"``,
    as scale use) or every rater's first sample (``first="every rater"``, as familiarity)."""
    st = frame[frame["criterion"] == "stance"]
    keep = st["sample"] == 0 if first == "every rater" else (st["rater_kind"] == "judge") | (st["sample"] == 0)
    return st[keep]


def _pick(res: pd.DataFrame, measure: str, judge: str | None, category: str | None = None, *,
          criterion: str = "stance") -> pd.Series:
    """The one row of ``measure`` for ``judge`` (None: the humans), ``category`` (None: no category), ``criterion``."""
    sel = (res["measure"] == measure) & (res["judge"].isna() if judge is None else res["judge"] == judge)
    sel &= res["criterion"] == criterion
    sel &= res["category"].isna() if category is None else res["category"] == category
    (i,) = np.flatnonzero(sel.to_numpy())
    return res.iloc[i]


# --------------------------------------------------------------------------- against pandas


def test_category_shares_match_pandas():
    frame = _table()
    res = scale_use(frame, n_boot=0)
    st = _stance(frame, first="humans")
    humans = st[st["rater_kind"] == "human"]
    for who, rows in (("humans", humans), ("gpt", st[st["rater"] == "gpt"]), ("llama", st[st["rater"] == "llama"])):
        judge = None if who == "humans" else who
        share = rows["category"].value_counts(normalize=True)
        for label in LABELS:
            assert abs(_pick(res, "category_share", judge, label)["estimate"] - share.get(label, 0.0)) < TOL
        assert abs(_pick(res, "entropy", judge)["estimate"] - entropy(share.to_numpy(), base=2)) < TOL
        assert _pick(res, "distinct_values", judge)["estimate"] == len(share)
        assert _pick(res, "category_share", judge, "pro")["n"] == rows["item_id"].nunique()
    for judge in ("gpt", "llama"):
        mine = st[st["rater"] == judge]
        shared = set(mine["item_id"]) & set(humans["item_id"])
        j = mine[mine["item_id"].isin(shared)]["category"].value_counts(normalize=True)
        h = humans[humans["item_id"].isin(shared)]["category"].value_counts(normalize=True)
        for label in LABELS:
            row = _pick(res, "category_share_difference", judge, label)
            assert abs(row["estimate"] - (j.get(label, 0.0) - h.get(label, 0.0))) < TOL
            assert row["n"] == len(shared) and row["test"] == "two-sided" == TESTS["category_share_difference"]
        ent = _pick(res, "entropy_difference", judge)
        assert abs(ent["estimate"] - (entropy(j.to_numpy(), base=2) - entropy(h.to_numpy(), base=2))) < TOL
    # The layout: the category after the groups, named only on the rows about one category.
    assert list(res.columns) == [*LAYOUT[:3], "category", *LAYOUT[3:]]
    assert set(res.loc[res["criterion"] == "stance", "category"].dropna()) == set(LABELS)
    assert res.loc[res["criterion"] == "fluency", "category"].isna().all()


def test_mean_perplexity_per_category_matches_pandas():
    frame = _table(seed=1)
    res = familiarity(frame, n_boot=0)
    res = res[res["criterion"] == "stance"]
    st = _stance(frame, first="every rater")
    humans = st[st["rater_kind"] == "human"]
    for judge in (None, "gpt", "llama"):
        rows = humans if judge is None else st[st["rater"] == judge]
        mean = rows.groupby("category")["perplexity"].mean()
        for label in LABELS:
            row = _pick(res, "mean_perplexity", judge, label)
            assert abs(row["estimate"] - mean[label]) < 1e-9
            assert row["n"] == rows.loc[rows["category"] == label, "item_id"].nunique()
    for judge in ("gpt", "llama"):
        mine = st[st["rater"] == judge]
        shared = set(mine["item_id"]) & set(humans["item_id"])
        j = mine[mine["item_id"].isin(shared)].groupby("category")["perplexity"].mean()
        h = humans[humans["item_id"].isin(shared)].groupby("category")["perplexity"].mean()
        for label in LABELS:
            row = _pick(res, "mean_perplexity_difference", judge, label)
            assert abs(row["estimate"] - (j[label] - h[label])) < 1e-9
            # A test when both means rest on 30 items or more; else shown with its interval, and said why not.
            few = min(mine[mine["item_id"].isin(shared) & (mine["category"] == label)]["item_id"].nunique(),
                      humans[humans["item_id"].isin(shared) & (humans["category"] == label)]["item_id"].nunique())
            if few >= MIN_CATEGORY_ITEMS:
                assert row["test"] == "two-sided" == TESTS["mean_perplexity_difference"]
            else:
                assert row["test"] is None and np.isnan(row["p_value"]) and "not tested" in row["note"]
    # tau and the top-score gap need an order: not computed on stance, said once.
    assert not res["measure"].isin(["kendall_tau", "tau_difference", "perplexity_gap_top_vs_rest"]).any()
    (note,) = res.loc[res["measure"] == NOT_AVAILABLE, "note"]
    assert note.startswith("'stance' is nominal") and "Kendall's tau" in note


def test_a_rare_category_is_shown_but_not_tested():
    """The bootstrap's z-test over-rejects with a category on a few items (simulated: 9-15% at p <= 0.05 on
    6-18 items): below 30 items the row keeps its interval and says why it is not tested."""
    frame = _simulate(25, 0, 0.0)
    res = scale_use(frame, n_boot=100, seed=0)
    rows = res[res["measure"] == "category_share_difference"]
    assert rows["test"].isna().all() and rows["p_value"].isna().all() and not rows["flagged"].any()
    assert rows["note"].str.contains(r"not tested: the judge or the humans give '\w' on \d+ of the items").all()
    assert rows["ci_low"].notna().all()
    many = scale_use(_simulate(150, 0, 0.0), n_boot=100, seed=0)
    assert (many.loc[many["measure"] == "category_share_difference", "test"] == "two-sided").all()


def test_numbers_give_the_same_results_beside_a_nominal_criterion():
    """The numeric criterion's rows do not depend on a nominal criterion beside it (only the BH family grows)."""
    frame = _table(seed=2)
    numbers = frame[frame["criterion"] == "fluency"].drop(columns=["scale", "category"])
    cols = ["judge", "measure", "estimate", "ci_low", "ci_high", "n", "p_value"]
    for run in (scale_use, familiarity, self_consistency):
        mixed = run(frame, n_boot=200, seed=3)
        alone = run(numbers, n_boot=200, seed=3)
        got = mixed[mixed["criterion"] == "fluency"][cols].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, alone[cols].reset_index(drop=True))
        assert "category" not in alone.columns


def test_category_intervals_are_paired_item_bootstrap():
    """The interval of a difference comes from the same item resamples as both shares (a judge equal to the
    humans on every item has a difference of exactly 0 in every resample)."""
    frame = _table(seed=3, missing=0.0)
    st = frame[(frame["criterion"] == "stance") & (frame["rater"] == "h1") & (frame["sample"] == 0)]
    twin = st.assign(rater="twin", rater_kind="judge")
    mirror = pd.concat([frame[(frame["rater_kind"] == "human") & (frame["criterion"] == "stance")
                              & (frame["rater"] == "h1")], twin])
    res = scale_use(mirror, n_boot=200, seed=0)
    diff = res[res["measure"] == "category_share_difference"]
    assert (diff["estimate"].abs() < TOL).all() and (diff["ci_low"].abs() < TOL).all() \
        and (diff["ci_high"].abs() < TOL).all() and not diff["flagged"].any()


# --------------------------------------------------------------------------- simulation


def _simulate(n_items: int, seed: int, judge_shift: float) -> pd.DataFrame:
    """Three humans and a judge label each item; an item's label distribution varies (Dirichlet around
    (0.5, 0.3, 0.2)), the judge draws from it after moving ``judge_shift`` of the mass of 'a' to 'c'."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.array([0.5, 0.3, 0.2]) * 4.0, size=n_items)
    q = p.copy()
    q[:, 2] += judge_shift * q[:, 0]
    q[:, 0] *= 1.0 - judge_shift
    cats = np.array(["a", "b", "c"])
    draw = lambda probs: cats[(rng.random((len(probs), 1)) > np.cumsum(probs, axis=1)).sum(axis=1)]  # noqa: E731
    frames = [pd.DataFrame({"item_id": np.arange(n_items), "rater": h, "rater_kind": "human",
                            "category": draw(p)}) for h in ("h1", "h2", "h3")]
    frames.append(pd.DataFrame({"item_id": np.arange(n_items), "rater": "judge", "rater_kind": "judge",
                                "category": draw(q)}))
    return pd.concat(frames, ignore_index=True).assign(criterion="label", scale="nominal", score=np.nan)


def _stacked(n_sims: int, first_seed: int, judge_shift: float) -> pd.DataFrame:
    """``scale_use`` of ``n_sims`` simulated data sets stacked as the groups (``rep``) of one table, each flagged as
    a report of its own. Each group is resampled on its own, so its p-values are those of a call on it alone; one
    call instead of ``n_sims`` saves the fixed cost of each (it was most of the time)."""
    d = pd.concat([_simulate(200, first_seed + s, judge_shift).assign(
        rep=s, item_id=lambda x, s=s: f"r{s}-" + x["item_id"].astype(str)) for s in range(n_sims)], ignore_index=True)
    res = scale_use(d, by=["rep"], n_boot=300, seed=first_seed)
    return pd.concat([apply_fdr(g) for _, g in res.groupby("rep")], ignore_index=True)


@pytest.mark.slow
def test_a_shifted_label_prior_is_flagged_and_a_faithful_judge_is_not():
    n_sims = 120
    shifted = _stacked(n_sims, 0, 0.4)
    a = shifted[(shifted["measure"] == "category_share_difference") & (shifted["category"] == "a")]
    assert len(a) == n_sims
    flagged_shift = int((a["flagged"] & (a["estimate"] < 0)).sum())
    null = _stacked(n_sims, 10_000, 0.0)
    rows = null[null["measure"] == "category_share_difference"]
    tests = len(rows)
    assert tests == 3 * n_sims
    rejected = int((rows["p_value"] <= 0.05).sum())
    covered = int(((rows["ci_low"] <= 0) & (rows["ci_high"] >= 0)).sum())
    print(f"\nshift flagged in {flagged_shift}/{n_sims}; null: p <= 0.05 in {rejected}/{tests}, "
          f"intervals cover 0 in {covered}/{tests}")
    assert flagged_shift >= 0.9 * n_sims
    # At the nominal rate: 5% of tests reject at p <= 0.05, and 95% intervals cover the true difference, 0
    # (binomial bounds over 360 dependent tests, wide enough for the dependence of a criterion's categories).
    assert 0.01 <= rejected / tests <= 0.10, rejected / tests
    assert 0.90 <= covered / tests <= 0.99, covered / tests


# --------------------------------------------------------------------------- what does not apply


def test_the_report_says_once_what_needs_an_order():
    frame = _table(seed=4)
    frame["position"] = np.where(frame["criterion"] == "stance", 1, 2)
    frame = pd.concat([frame, frame[frame["criterion"] == "fluency"].assign(criterion="coherence")])
    rep = BiasReport(bias_report(frame, n_boot=50, seed=0))
    records = rep.records
    assert list(records.columns) == [*LAYOUT[:3], "category", *LAYOUT[3:]]
    stance = records[records["criterion"] == "stance"]
    assert not stance["measure"].isin(["mean_shift", "top_share", "top_share_difference", "range_share",
                                       "round_share_5", "kendall_tau", "tau_difference"]).any()
    # One not_available row per section and nominal criterion, never one per measure.
    na = stance[stance["measure"] == NOT_AVAILABLE]
    assert sorted(na["section"]) == ["anchoring", "familiarity", "score_distribution"]
    assert sorted(s for s, c, _ in rep.not_applicable) == sorted(na["section"]) and rep.skipped == ()
    assert all(c == "stance" for _, c, _ in rep.not_applicable)
    # Anchoring correlates only the criteria with numbers; self-consistency uses nominal alpha on stance.
    anch = records[(records["section"] == "anchoring") & (records["measure"] == "mean_inter_criterion_r")]
    assert len(anch) and anch["criterion"].isna().all()
    alpha = stance[stance["measure"] == "alpha_inter_sample"]
    assert (alpha["note"].str.contains("nominal alpha")).all()
    gpt = _stance(frame, first="humans").query("rater == 'gpt'")
    wide = gpt.pivot(index="sample", columns="item_id", values="category")
    codes = wide.apply(lambda c: c.map({"con": 0.0, "neutral": 1.0, "pro": 2.0}))
    expected = krippendorff.alpha(reliability_data=codes.to_numpy(dtype=float), level_of_measurement="nominal")
    assert abs(_pick(alpha.assign(category=None), "alpha_inter_sample", "gpt")["estimate"] - expected) < 1e-9


def test_a_table_of_categories_only():
    frame = _table(seed=5)
    frame = frame[frame["criterion"] == "stance"]
    rep = BiasReport(bias_report(frame, n_boot=0))
    assert dict(rep.skipped)["anchoring"].startswith("anchoring correlates criteria scored with numbers")
    assert (rep.results["measure"] == "category_share").any()
    assert len(round_number_bias(frame, n_boot=0)) == 1
    with pytest.raises(BiasNotApplicable, match="every criterion here is nominal"):
        anchoring(frame)
    with pytest.raises(BiasNotApplicable, match="every criterion here is nominal"):
        criterion_correlations(frame)
    with pytest.raises(DataError, match="'stance' is nominal"):
        conditional_distribution(frame, given="stance", target="fluency", threshold=1)
    with pytest.raises(DataError, match="'stance' is nominal .* no lowest and top score"):
        scale_use(frame, scale={"stance": (1, 3)})


def test_numbers_declared_nominal_are_categories():
    """A numeric criterion declared nominal (``4`` as a category, the score kept): shares of its numbers, no mean."""
    frame = _table(seed=6)
    fl = frame[frame["criterion"] == "fluency"].assign(scale="nominal")
    fl["category"] = fl["score"].map(lambda v: f"{v:g}")
    res = scale_use(fl, n_boot=0)
    assert not res["measure"].isin(["mean_shift", "top_share"]).any()
    humans = fl[fl["rater_kind"] == "human"]
    share = humans["category"].value_counts(normalize=True)
    for label, value in share.items():
        assert abs(_pick(res, "category_share", None, label, criterion="fluency")["estimate"] - value) < TOL


def test_a_label_prior_shift_is_a_finding_with_its_category(tmp_path):
    """Through the importer: a CSV of text labels, a judge that says 'pro' far more often than the humans."""
    frame = _table(seed=7, n_items=150, judge_p=(0.05, 0.15, 0.8))
    path = tmp_path / "stance.csv"
    frame[frame["criterion"] == "stance"].drop(columns=["scale", "score"]).rename(columns={"category": "score"}) \
        .to_csv(path, index=False)
    from evalcore.data.ingest import read

    rep = BiasReport(bias_report(read(path), n_boot=300, seed=0))
    flagged = rep.results[rep.results["flagged"]]
    pro = flagged[(flagged["measure"] == "category_share_difference") & (flagged["category"] == "pro")]
    assert set(pro["judge"]) == {"gpt", "llama"} and (pro["estimate"] > 0.3).all()
    rec = rep.recommendations.set_index("rule")
    assert "label_prior" in rec.index and "('pro')" in rec.loc["label_prior", "evidence"]
