"""Agreement measures against independent references, published worked examples and real data."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score, f1_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from evalcore.errors import DataError
from evalcore.pointwise.agreement.measures import HUMAN_MEASURES, JUDGE_MEASURES
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from evalcore.pointwise.distributions import class_distribution, top_score_share
from tests.helpers import DATASETS, ROOT
from tests.unit.hanna import hanna_preset_frame

TOL = 1e-9

# Fleiss (1971): 30 patients, 6 psychiatrists, 5 diagnoses (as in statsmodels' and R irr's tests; kappa 0.4302445).
FLEISS_1971 = np.array([
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
])
# Krippendorff (2011) reliability data = Gwet's Handbook "cac.raw4raters": 4 observers, 12 units, gaps missing.
n = np.nan
KRIPP = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, n],
    [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
])


def _long(matrix: np.ndarray, *, judge: np.ndarray | None = None, criterion: str = "x") -> pd.DataFrame:
    """Units x raters matrix (NaN = missing) to a ratings table; optional judge column."""
    rows = []
    for i, unit in enumerate(matrix):
        for r, v in enumerate(unit):
            if np.isfinite(v):
                rows.append((f"u{i}", f"h{r}", "human", criterion, float(v)))
        if judge is not None and np.isfinite(judge[i]):
            rows.append((f"u{i}", "J", "judge", criterion, float(judge[i])))
    if judge is None:
        rows.append(("u0", "J", "judge", criterion, float(matrix[0][np.isfinite(matrix[0])][0])))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score"])


def _est(res: pd.DataFrame, measure: str, judge: str | None = None) -> float:
    sel = res["judge"].isna() if judge is None else res["judge"] == judge
    (v,) = res.loc[sel & (res["measure"] == measure), "estimate"]
    return v


def _simulated(seed: int, n_items: int = 400, q: int = 3, crit: str = "LA") -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n_items)
    H = np.full((n_items, 3), np.nan)
    for i in range(n_items):
        k = rng.choice([1, 2, 3], p=[0.1, 0.2, 0.7])
        H[i, :k] = np.where(rng.random(k) < 0.7, truth[i], rng.integers(0, q, k))
    J = np.where(rng.random(n_items) < 0.6, truth, rng.integers(0, q, n_items)).astype(float)
    return _long(H, judge=J, criterion=crit), H, J


# --------------------------------------------------------------------------- published examples


def test_fleiss_1971_published_kappa():
    res = agreement(_long(FLEISS_1971.astype(float)), by=[], n_boot=0)
    assert abs(_est(res, "fleiss_kappa") - 0.4302445) < 5e-8  # R irr::kappam.fleiss, 7 digits
    table, _ = aggregate_raters(FLEISS_1971)
    assert abs(_est(res, "fleiss_kappa") - fleiss_kappa(table)) < TOL


def test_krippendorff_reliability_data_example():
    # Published: nominal 0.743, ordinal 0.815, interval 0.849 (Krippendorff 2011).
    res = agreement(_long(KRIPP.T), by=[], n_boot=0)
    for metric, published in (("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)):
        ours = _est(res, f"krippendorff_alpha_{metric}")
        assert round(ours, 3) == published
        ref = krippendorff.alpha(reliability_data=KRIPP, level_of_measurement=metric)
        assert abs(ours - ref) < TOL


def test_gwet_handbook_example_ac1_and_fleiss():
    # Gwet, Handbook of Inter-Rater Reliability (cac.raw4raters): AC1 0.7754, Fleiss' kappa 0.7612 (1-3 raters/unit).
    res = agreement(_long(KRIPP.T), by=[], n_boot=0)
    assert round(_est(res, "gwet_ac1"), 4) == 0.7754
    assert round(_est(res, "fleiss_kappa"), 4) == 0.7612
    assert abs(_est(res, "percent_agreement") - 9 / 11) < TOL  # 11 units with 2+ ratings


def test_kappa_paradox_pabak_and_ac1_two_raters():
    # 2 raters, 125 items: both '+' on 118, split on 7, never both '-': PA is high, kappa slightly negative.
    a = np.array([1] * 118 + [1] * 5 + [0] * 2)
    b = np.array([1] * 118 + [0] * 5 + [1] * 2)
    res = agreement(_long(np.column_stack([a, b]).astype(float)), by=[], n_boot=0)
    pa = 118 / 125
    pi = (123 + 120) / 250
    assert abs(_est(res, "percent_agreement") - pa) < TOL
    assert abs(_est(res, "pabak") - (2 * pa - 1)) < TOL
    assert abs(_est(res, "gwet_ac1") - (pa - 2 * pi * (1 - pi)) / (1 - 2 * pi * (1 - pi))) < TOL
    assert _est(res, "fleiss_kappa") < 0 < 0.9 < _est(res, "gwet_ac1")


# --------------------------------------------------------------------------- independent libraries


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judge_measures_match_sklearn_scipy_statsmodels(seed):
    df, H, J = _simulated(seed)
    res = agreement(df, by=[], n_boot=0)
    counts = [pd.Series(r[np.isfinite(r)]).value_counts() for r in H]
    major = np.array([c.index[0] if c.iloc[0] > c.sum() / 2 else np.nan for c in counts])
    ok = np.isfinite(major)
    assert abs(_est(res, "percent_agreement", "J") - np.mean(major[ok] == J[ok])) < TOL
    assert abs(_est(res, "cohen_kappa", "J") - cohen_kappa_score(major[ok], J[ok])) < TOL
    assert abs(_est(res, "cohen_kappa_quadratic", "J") - cohen_kappa_score(major[ok], J[ok], weights="quadratic")) < TOL
    conf = pd.crosstab(major[ok], J[ok]).to_numpy()
    assert abs(_est(res, "cohen_kappa", "J") - cohens_kappa(conf, return_results=False)) < TOL
    assert abs(_est(res, "weighted_f1", "J") - f1_score(major[ok], J[ok], average="weighted")) < TOL
    mean = np.nanmean(H, axis=1)
    assert abs(_est(res, "kendall_tau", "J") - kendalltau(J, mean).statistic) < TOL
    assert abs(_est(res, "spearman_rho", "J") - spearmanr(J, mean).statistic) < TOL
    note = res.loc[(res["judge"] == "J") & (res["measure"] == "cohen_kappa"), "note"].iloc[0]
    assert f"{int((~ok).sum())} unit(s) without a strict human majority" in note


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_krippendorff_with_missing_values_and_with_the_judge(metric):
    df, H, J = _simulated(5)
    res = agreement(df, by=[], n_boot=0)
    ref = krippendorff.alpha(reliability_data=H.T, level_of_measurement=metric)
    assert abs(_est(res, f"krippendorff_alpha_{metric}") - ref) < TOL
    with_j = krippendorff.alpha(reliability_data=np.column_stack([H, J]).T, level_of_measurement=metric)
    assert abs(_est(res, f"krippendorff_alpha_{metric}", "J") - with_j) < TOL
    assert abs(_est(res, f"krippendorff_alpha_{metric}_change", "J") - (with_j - ref)) < TOL


def test_fleiss_on_equal_counts_matches_statsmodels():
    df, H, J = _simulated(7)
    full = np.isfinite(H).all(axis=1)
    res = agreement(_long(H[full], judge=J[full]), by=[], n_boot=0)
    table, _ = aggregate_raters(H[full].astype(int))
    assert abs(_est(res, "fleiss_kappa") - fleiss_kappa(table)) < TOL
    table_j, _ = aggregate_raters(np.column_stack([H[full], J[full]]).astype(int))
    assert abs(_est(res, "fleiss_kappa", "J") - fleiss_kappa(table_j)) < TOL


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    df, _, _ = _simulated(3)
    a = agreement(df, by=[], n_boot=300, seed=11)
    b = agreement(df, by=[], n_boot=300, seed=11)
    c = agreement(df, by=[], n_boot=300, seed=12)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"], c["ci_low"], equal_nan=True)
    ok = a["ci_low"].notna()
    assert ok.sum() >= len(HUMAN_MEASURES) + len(JUDGE_MEASURES) - 2
    assert (a.loc[ok, "ci_low"] <= a.loc[ok, "estimate"] + 1e-12).all()
    assert (a.loc[ok, "estimate"] <= a.loc[ok, "ci_high"] + 1e-12).all()
    none = agreement(df, by=[], n_boot=0)
    assert none["ci_low"].isna().all() and none["ci_high"].isna().all()


@pytest.mark.slow
def test_pattern_bootstrap_matches_a_naive_item_bootstrap():
    """The compressed multinomial bootstrap has the spread of resampling items one by one.

    Items carry two criteria each and the grouping pools them, so items (not units) must move
    as a whole; a unit-level bootstrap would give a visibly narrower interval here.
    """
    rng = np.random.default_rng(0)
    n_items = 300
    quality = rng.integers(0, 3, n_items)
    rows = []
    for i in range(n_items):
        for crit in ("A", "B"):
            for r in range(3):
                v = quality[i] if rng.random() < 0.75 else rng.integers(0, 3)
                rows.append((f"i{i}", f"h{r}", "human", crit, float(v)))
            rows.append((f"i{i}", "J", "judge", crit, float(quality[i])))
    df = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score"])
    res = agreement(df, by=[], n_boot=2000, seed=1)
    ours = res.loc[res["judge"].isna() & (res["measure"] == "percent_agreement")]
    width = float(ours["ci_high"].iloc[0] - ours["ci_low"].iloc[0])
    # Naive: resample item ids, recompute PA from the rows.
    items = df["item_id"].unique()
    h = df[df["rater_kind"] == "human"]
    per_unit = h.groupby(["item_id", "criterion"])["score"].agg(lambda s: (s.value_counts() * (s.value_counts() - 1)).sum() / (len(s) * (len(s) - 1)))
    by_item = per_unit.groupby("item_id").agg(["sum", "count"])
    boot = []
    for _ in range(2000):
        pick = by_item.loc[rng.choice(items, len(items))]
        boot.append(pick["sum"].sum() / pick["count"].sum())
    naive = np.quantile(boot, 0.975) - np.quantile(boot, 0.025)
    assert abs(width - naive) / naive < 0.1
    assert abs(_est(res, "percent_agreement") - per_unit.mean()) < TOL


# --------------------------------------------------------------------------- undefined and invalid


def test_undefined_measures_say_why():
    # One annotator per item: no human agreement is defined; a constant judge has no tau.
    df = pd.DataFrame({"item_id": ["a", "b", "a", "b"], "rater": ["h", "h", "J", "J"],
                       "rater_kind": ["human", "human", "judge", "judge"], "criterion": "x", "score": [1.0, 2.0, 1.0, 1.0]})
    res = agreement(df, by=[], n_boot=50)
    hum = res[res["judge"].isna()]
    assert hum["estimate"].isna().all()
    assert (hum["note"] == "not defined: no unit has two or more human ratings").all()
    tau = res[(res["judge"] == "J") & (res["measure"] == "kendall_tau")].iloc[0]
    assert np.isnan(tau["estimate"]) and tau["note"] == "not defined: the judge's scores or the human means are constant"
    # Everyone gives the same score: PA is 1 but kappa is undefined.
    same = pd.DataFrame({"item_id": ["a", "a", "b", "b", "a"], "rater": ["h1", "h2", "h1", "h2", "J"],
                         "rater_kind": ["human"] * 4 + ["judge"], "criterion": "x", "score": [2.0] * 5})
    r2 = agreement(same, by=[], n_boot=0)
    assert _est(r2, "percent_agreement") == 1.0
    k = r2[r2["judge"].isna() & (r2["measure"] == "fleiss_kappa")].iloc[0]
    assert np.isnan(k["estimate"]) and "chance agreement is 1" in k["note"]
    # No NaN without a reason anywhere.
    for r in (res, r2):
        assert (r.loc[r["estimate"].isna(), "note"].str.startswith("not defined")).all()


def test_bad_options_raise_data_errors():
    df, _, _ = _simulated(0)
    with pytest.raises(DataError, match="cannot group by 'dialect'"):
        agreement(df, by=["dialect"])
    with pytest.raises(DataError, match="no judge named 'gpt-5'"):
        agreement(df, judges=["gpt-5"])
    # One message for every analysis (evalcore.stats.bootstrap.check_resamples), not a message of its own.
    with pytest.raises(DataError, match="whole number, 0 or more"):
        agreement(df, by=[], n_boot=-1)
    with pytest.raises(DataError, match="between 0 and 1"):
        agreement(df, by=[], level=1.5)
    with pytest.raises(DataError, match="seed"):
        agreement(df, by=[], seed=-1)


def test_grouping_and_sample_handling():
    df, H, J = _simulated(4)
    df["language"] = np.where(df["item_id"].str[1:].astype(int) % 2 == 0, "hi", "en")
    res = agreement(df, by=["language"], n_boot=0)
    assert set(res["language"]) == {"hi", "en"}
    for lang, sub in df.groupby("language"):
        alone = agreement(sub, by=[], n_boot=0)
        assert abs(_est(res[res["language"] == lang], "fleiss_kappa") - _est(alone, "fleiss_kappa")) < TOL
    # Extra samples of the judge are ignored: agreement uses the first sample.
    extra = df[df["rater"] == "J"].assign(sample=1, score=0.0)
    with_samples = pd.concat([df.assign(sample=0), extra], ignore_index=True)
    r2 = agreement(with_samples, by=["language"], n_boot=0)
    pd.testing.assert_series_equal(res["estimate"], r2["estimate"])


# --------------------------------------------------------------------------- class distributions


def test_class_distribution_counts():
    H = np.array([[2, 2, 2], [2, 2, 1], [0, 1, 2], [1, 1, np.nan], [2, np.nan, np.nan]], dtype=float)
    J = np.array([2, 2, 2, 0, 1], dtype=float)
    d = class_distribution(_long(H, judge=J), by=[])
    j = d[d["source"] == "J"].set_index(["agreement_class", "score"])["count"]
    assert j[("full", 2.0)] == 1 and j[("full", 0.0)] == 1  # units 0 and 3
    assert j[("partial", 2.0)] == 1 and j[("none", 2.0)] == 1
    h = d[d["source"] == "humans"].set_index(["agreement_class", "score"])["count"]
    assert h[("full", 2.0)] == 3 and h[("full", 1.0)] == 2 and h[("partial", 1.0)] == 1
    assert (d.groupby(["source", "agreement_class"], observed=True)["share"].sum().round(12) == 1).all()
    n_units = d.drop_duplicates("agreement_class").set_index("agreement_class")["n_units"]
    assert n_units.to_dict() == {"full": 2, "partial": 1, "none": 1}  # the single-rater unit is left out


# --------------------------------------------------------------------------- counts


def _n_reference(df: pd.DataFrame, by: list[str]) -> tuple[pd.Series, pd.Series]:
    """The contract's n by pandas: distinct items with a unit of 2+ human ratings (humans), or with a unit
    rated by the judge and a human (a judge), per group."""
    first = df.groupby(["item_id", "criterion", "rater"])["sample"].transform("min")
    df = df[df["sample"] == first]
    units = df[df["rater_kind"] == "human"].groupby(["item_id", "criterion"]).size().rename("n_h").reset_index()
    seg = df.drop_duplicates("item_id").set_index("item_id")[[c for c in by if c != "criterion"]]
    units = units.join(seg, on="item_id")
    keys = by or (lambda _: 0)
    humans = units[units["n_h"] >= 2].groupby(keys)["item_id"].nunique()
    judged = df[df["rater_kind"] == "judge"][["item_id", "criterion", "rater"]].drop_duplicates()
    judged = judged.merge(units, on=["item_id", "criterion"])
    judges = judged.groupby([*by, "rater"] if by else "rater")["item_id"].nunique()
    return humans, judges


@pytest.mark.parametrize("by", [[], ["criterion"], ["language"], ["language", "criterion"], ["task"]])
def test_n_counts_the_distinct_items_behind_each_estimate(by):
    """``n`` (items, what the bootstrap resamples) against pandas; ``n_units`` counts units (item x criterion)."""
    from evalcore.data.ingest import load

    df = load(ROOT / "sample_data" / "ratings_multilingual.csv").frame
    # A judge that rated a third of the items only, so that its n differs from the humans'.
    df = df[(df["rater"] != "gpt-4/single-call") | df["item_id"].isin(df["item_id"].unique()[::3])]
    res = agreement(df, by=by, n_boot=0)
    humans, judges = _n_reference(df, by)
    h = res[res["judge"].isna()]
    got_h = h.groupby(by)["n"].agg(["min", "max"]) if by else h["n"].agg(["min", "max"]).to_frame().T
    assert (got_h["min"] == got_h["max"]).all()  # one n per group and family, whatever the measure
    assert got_h["min"].tolist() == humans.sort_index().tolist()
    j = res[res["judge"].notna()]
    got_j = j.groupby([*by, "judge"])["n"].first()
    assert got_j.tolist() == judges.sort_index().tolist()
    assert list(res.columns) == [*by, "judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_units",
                                 "n_ratings", "test", "p_value", "q_value", "flagged", "opposite", "note"]
    if "criterion" not in by:  # several units (criteria) per item
        assert (res["n_units"] >= res["n"]).all() and (res["n_units"] > res["n"]).any()


def test_items_per_group_counts_distinct_item_group_pairs_in_any_unit_order():
    from evalcore.pointwise.agreement.table import _items_per_group

    rng = np.random.default_rng(2)
    # Units as count_units numbers them: each (item, criterion) once, in the order item * 4 + criterion.
    unit = np.flatnonzero(rng.random(50 * 4) < 0.6)
    item, crit = unit // 4, unit % 4
    n = len(unit)
    for group in (item % 3, (item % 3) * 4 + crit):  # by a segment; by the segment and the criterion
        rows = np.flatnonzero(rng.random(n) < 0.7)
        ref = pd.DataFrame({"i": item[rows], "g": group[rows]}).groupby("g")["i"].nunique()
        got = _items_per_group(rows, item, group, int(group.max()) + 1)
        assert got[ref.index].tolist() == ref.tolist() and got.sum() == ref.sum()
        perm = rng.permutation(n)  # units in another order: the general path
        inv = np.argsort(perm)
        assert (_items_per_group(np.sort(inv[rows]), item[perm], group[perm], int(group.max()) + 1) == got).all()


# --------------------------------------------------------------------------- real and sample data


@pytest.mark.slow
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA check needs it")
def test_hanna_fleiss_kappa_per_criterion():
    ratings = hanna_preset_frame()
    out = agreement(ratings, by=["criterion"], judges=[], n_boot=0)
    fk = out[out["measure"] == "fleiss_kappa"].set_index("criterion")
    # One unit per item when grouped by criterion: as many items as units.
    assert int(fk.loc["Relevance", "n_units"]) == 1056 and int(fk.loc["Relevance", "n"]) == 1056
    assert round(fk.loc["Relevance", "estimate"], 4) == 0.0587
    humans = ratings[ratings["rater_kind"] == "human"]
    for crit, sub in humans.groupby("criterion"):
        mat = sub.pivot(index="item_id", columns="rater", values="score").to_numpy().astype(int)
        table, _ = aggregate_raters(mat)
        assert abs(fk.loc[crit, "estimate"] - fleiss_kappa(table)) < TOL


def test_sample_data_shows_its_designed_effects():
    ratings = pd.read_csv(ROOT / "sample_data" / "ratings_multilingual.csv")
    units = count_units(ratings)
    res = agreement(units, by=["language"], n_boot=200, seed=0)
    pa = res[(res["measure"] == "percent_agreement") & res["judge"].notna()].groupby("language")["estimate"].mean()
    latin_high = ["English", "French", "German", "Spanish"]
    harder = ["Bengali", "Hindi", "Swahili"]
    assert pa[harder].max() < pa[latin_high].min()
    flagged = set(res.loc[res["flagged"], "language"])
    assert {"Bengali", "Hindi"} <= flagged and not (flagged & set(latin_high))
    d = class_distribution(units, by=["language"])
    top = top_score_share(d, by=["language"])
    skew = (top[top["source"] != "humans"].groupby("language")["top_share"].mean()
            - top[top["source"] == "humans"].groupby("language")["top_share"].mean())
    assert skew[["Bengali", "Hindi"]].min() > skew[latin_high].max()


def test_fractional_judges_are_named():
    from evalcore.pointwise.agreement.units import fractional_judges

    df = pd.DataFrame({"item_id": ["a", "a", "a", "a", "b", "b", "b", "b"],
                       "rater": ["h1", "h2", "avg", "int"] * 2, "rater_kind": ["human", "human", "judge", "judge"] * 2,
                       "criterion": "x", "score": [1.0, 2.0, 1.5, 2.0, 3.0, 3.0, 3.0, 3.0]})
    assert fractional_judges(count_units(df)) == ["avg"]
    assert fractional_judges(count_units(pd.read_csv(ROOT / "sample_data" / "ratings_multilingual.csv"))) == []


@pytest.mark.parametrize("by", [["language", "criterion"], ["task"], ["language"], ["criterion", "task", "language"]])
def test_group_codes_match_pandas_groupby(by):
    """The integer grouping :func:`group_codes` builds from count_units's codes is pandas' groupby(sort=True, dropna=False):
    same groups, same order, same keys, with missing values, numbers and text segments."""
    from evalcore.pointwise.agreement.groups import group_codes

    rng = np.random.default_rng(4)
    n_items = 300
    lang = np.array(["zh", "en", None, "fr", "ar"], dtype=object)[rng.integers(0, 5, n_items)]
    task = rng.choice([3, 1, 2], n_items)
    rows = []
    for i in range(n_items):
        for c in ("OCQ", "H", "LA"):
            for r, kind in (("a1", "human"), ("a2", "human"), ("J", "judge")):
                rows.append({"item_id": f"i{i}", "criterion": c, "rater": r, "rater_kind": kind,
                             "score": int(rng.integers(0, 3)), "language": lang[i], "task": task[i]})
    df = pd.DataFrame(rows)
    df["language"] = df["language"].astype("str")  # pandas 3's Arrow strings, missing as NaN
    units = count_units(df)
    for c in ("language", "criterion", "task"):
        assert units.segments[c].dtype == df[c].dtype
    codes, keys = group_codes(units, by)
    grouped = units.segments.groupby(by, sort=True, dropna=False)
    np.testing.assert_array_equal(codes, grouped.ngroup().to_numpy())
    ref = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    assert len(keys) == len(ref)
    for got, want in zip(keys, ref):
        assert all((pd.isna(g) and pd.isna(w)) or g == w for g, w in zip(got, want)), (got, want)
    if "language" in by:
        assert sum(pd.isna(k[by.index("language")]) for k in keys) >= 1  # the missing language is a group


def test_item_draws_have_the_distribution_of_the_multinomial_over_item_types():
    """The two exact ways the bootstrap resamples items (a multinomial over item types, or drawing items
    themselves when nearly every item is its own type) give pattern weights with the same mean and covariance."""
    from scipy import sparse as sp

    from evalcore.pointwise.agreement.resampling import _draw_items

    rng = np.random.default_rng(0)
    types = sp.csr_matrix(np.array([[2, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 3]], dtype=float))
    item_type = np.repeat(np.arange(4), [5, 3, 8, 4])  # 20 items of 4 types
    n, B = len(item_type), 40_000
    drawn = _draw_items(np.random.default_rng(1), item_type, types, B)
    freq = np.bincount(item_type) / n
    multi = np.asarray(types.T.dot(rng.multinomial(n, freq, size=B).T.astype(float)).T)
    # exact moments: mean n * f'A, covariance n * A'(diag f - f f')A
    A = types.toarray()
    mean = n * freq @ A
    cov = n * A.T @ (np.diag(freq) - np.outer(freq, freq)) @ A
    for w in (drawn, multi):
        np.testing.assert_allclose(w.mean(axis=0), mean, atol=float(4 * np.sqrt(np.diag(cov).max() / B)))
        np.testing.assert_allclose(np.cov(w.T), cov, atol=0.15 * np.abs(cov).max())
    assert drawn.shape == (B, 3) and np.all(drawn.sum(axis=1) == drawn.sum(axis=1).round())
