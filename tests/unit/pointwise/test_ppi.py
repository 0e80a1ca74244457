"""Prediction-powered estimates on ratings (evalcore.pointwise.ppi): equal to ppi_py on HANNA per criterion, pass
rates, nominal categories, the "what if" curve, the plan, the label check and the bad inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.errors import DataError
from evalcore.pointwise.ppi import (ppi_budget, ppi_estimates, ppi_items, ppi_label_check, ppi_plan, ppi_what_if)
from evalcore.stats.ppi_table import ESTIMATE_COLUMNS
from tests.helpers import HANNA, SAMPLE, needs_datasets
from tests.unit.hanna import hanna_frame

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the test extra) is the reference implementation")
from ppi_py.baselines import classical_mean_ci  # noqa: E402

JUDGE = "Mistral-7B/prompt1"


@pytest.fixture(scope="module")
def hanna_fifth():
    """HANNA with the humans' ratings kept on a seeded random fifth of the stories."""
    if not HANNA.exists():
        pytest.skip("../shared/datasets not found: this test reads the real public data")
    ratings = hanna_frame()
    items = ratings["item_id"].unique()
    keep = set(np.random.default_rng(27).choice(items, len(items) // 5, replace=False))
    return ratings[(ratings["rater_kind"] == "judge") | ratings["item_id"].isin(keep)].reset_index(drop=True)


@needs_datasets
def test_equal_to_ppi_py_on_hanna_per_criterion(hanna_fifth):
    table = ppi_estimates(hanna_fifth, judges=[JUDGE], level=0.95)
    assert list(table.columns) == ["criterion", "outcome", *ESTIMATE_COLUMNS]
    # Y and Yhat computed here from the table, independently of ppi_items
    scores = hanna_fifth.pivot_table(index=["criterion", "item_id"], columns="rater", values="score")
    humans = [c for c in scores.columns if c.startswith("Human")]
    for criterion in hanna_fifth["criterion"].unique():
        part = scores.loc[criterion]
        y_all, f_all = part[humans].mean(axis=1), part[JUDGE]
        lab = y_all.notna()
        y, f, u = y_all[lab].to_numpy(), f_all[lab].to_numpy(), f_all[~lab].to_numpy()
        assert len(y) == 211 and len(u) == 845
        rows = table[table["criterion"] == criterion].set_index("method")
        lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
        ppi = rows.loc["ppi++"]
        assert ppi["estimate"] == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, u)[0]), abs=1e-9)
        assert (ppi["ci_low"], ppi["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
        assert 0 <= ppi["lambda"] <= 1 and (ppi["n_labeled"], ppi["n_unlabeled"]) == (211, 845)
        assert ppi["effective_labels"] >= 211 * 0.99
        lo, hi = classical_mean_ci(y, alpha=0.05)
        human = rows.loc["human_only"]
        assert human["judge"] is None and (human["ci_low"], human["ci_high"]) == pytest.approx((lo, hi), abs=1e-9)
        assert rows.loc["judge_only", "estimate"] == pytest.approx(f_all.mean(), abs=1e-9)


@needs_datasets
def test_hanna_by_system_has_stratified_rows_and_a_budget(hanna_fifth):
    table = ppi_estimates(hanna_fifth, by=["system"], judges=[JUDGE])
    overall = table[table["stratified"]]
    assert len(overall) == 6 * 3 and overall["system"].isna().all()
    per = table[~table["stratified"] & (table["method"] == "ppi++") & (table["criterion"] == "Coherence")]
    assert len(per) == 11 and per["n_labeled"].sum() == 211
    budget = ppi_budget(hanna_fifth, half_width=0.1, judges=[JUDGE])
    assert (budget["labels_ppi"] <= budget["labels_human_only"]).all()
    assert (budget["more_labels_human_only"] == (budget["labels_human_only"] - 211).clip(lower=0)).all()


def _toy(n_items=200, labelled=60, seed=0, judge_noise=0.5, constant=False) -> pd.DataFrame:
    """Ratings of one criterion: two annotators on the first ``labelled`` items, a judge on every item."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n_items).astype(float)
    rows = []
    for i, t in enumerate(truth):
        group = "x" if i % 2 else "y"
        if i < labelled:
            rows += [(f"i{i}", f"ann{a}", "human", t + rng.choice([-1.0, 0.0, 0.0, 1.0]), group) for a in (1, 2)]
        judge = 3.0 if constant else float(np.clip(np.round(t + rng.normal(0.5, judge_noise)), 1, 5))
        rows.append((f"i{i}", "judge-a", "judge", judge, group))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "score", "group"]).assign(criterion="q")


def test_pass_rate_and_nominal_shares():
    ratings = _toy()
    items = ppi_items(ratings, pass_at=4)
    assert items["outcome"].unique().tolist() == [">= 4"] and set(items["y"].dropna()) <= {0.0, 1.0}
    mean_y = ratings[ratings["rater_kind"] == "human"].groupby("item_id")["score"].mean()
    assert items.set_index("item_id")["y"].dropna().sort_index().tolist() == \
        (mean_y >= 4).astype(float).sort_index().tolist()
    table = ppi_estimates(ratings, pass_at=4)
    assert set(table["measure"]) == {"pass_rate"} and table["estimate"].between(0, 1).all()
    labels = ratings.assign(score=np.where(ratings["score"] >= 4, "good", "bad"))
    labelled = evalcore.validate(labels).frame
    table = ppi_estimates(labelled)
    assert sorted(table["outcome"].unique()) == ["bad", "good"]
    share = table[(table["outcome"] == "good") & (table["method"] == "human_only")]["estimate"].iloc[0]
    want = (labels[labels["rater_kind"] == "human"].assign(g=lambda d: d["score"] == "good")
            .groupby("item_id")["g"].mean().mean())
    assert share == pytest.approx(want)
    assert ppi_estimates(labelled, category="good")["outcome"].unique().tolist() == ["good"]
    with pytest.raises(DataError, match="category 'great'"):
        ppi_estimates(labelled, category="great")


def test_bad_inputs():
    with pytest.raises(DataError, match="no item has human labels"):
        ppi_estimates(_toy(labelled=0))
    with pytest.raises(DataError, match="no judge"):
        ppi_estimates(_toy().query("rater_kind == 'human'"))
    with pytest.raises(DataError, match="not a judge"):
        ppi_estimates(_toy(), judges=["nobody"])
    # fewer than 10 labelled items in a stratum: a note and no interval, there and overall
    few = ppi_estimates(_toy(labelled=14), by=["group"])
    small = few[~few["stratified"] & (few["method"] == "ppi++")]
    assert small["ci_low"].isna().all() and small["estimate"].notna().all()
    assert small["note"].str.contains("fewer than 10").all()
    overall = few[few["stratified"] & (few["method"] == "ppi++")].iloc[0]
    assert np.isnan(overall["ci_low"]) and "too few labelled" in overall["note"]
    # every item labelled: the humans' own, and the what-if curve
    full = ppi_estimates(_toy(labelled=200)).set_index("method")
    assert full.loc["ppi++", "estimate"] == full.loc["human_only", "estimate"]
    assert full.loc["ppi++", "lambda"] == 0 and "every item has human labels" in full.loc["ppi++", "note"]
    # a judge with no variance: lambda 0 with a note
    flat = ppi_estimates(_toy(constant=True)).set_index("method")
    assert flat.loc["ppi++", "lambda"] == 0 and "same answer" in flat.loc["ppi++", "note"]
    assert flat.loc["ppi++", "estimate"] == pytest.approx(flat.loc["human_only", "estimate"])


def test_what_if_narrows_and_holds_the_full_value():
    ratings = _toy(n_items=400, labelled=400, judge_noise=0.3)
    curve = ppi_what_if(ratings, shares=[0.1, 0.25, 0.5, 1.0], repeats=30, seed=1)
    assert curve["share"].tolist() == [0.1, 0.25, 0.5, 1.0] and (curve["repeats"] == 30).all()
    assert curve["width_ppi"].is_monotonic_decreasing and (curve["width_ppi"] <= curve["width_human_only"]).all()
    assert (curve["covered_ppi"] >= 0.8).all()
    last = curve.iloc[-1]
    assert last["width_ppi"] == pytest.approx(last["full_width_human_only"]) and last["covered_ppi"] == 1.0
    assert curve["matching_share"].nunique() == 1 and curve["matching_share"].iloc[0] <= 1.0
    again = ppi_what_if(ratings, shares=[0.1, 0.25, 0.5, 1.0], repeats=30, seed=1)
    pd.testing.assert_frame_equal(curve, again)


def test_plan_is_random_within_strata_and_never_reads_the_judge():
    ratings = _toy(n_items=300, labelled=60)
    plan = ppi_plan(ratings, m=50, by=["group"], seed=3)
    assert plan.allocation["new_labels"].sum() == 50 and plan.judge == "judge-a"
    labelled = set(ratings.loc[ratings["rater_kind"] == "human", "item_id"])
    assert not set(plan.items["item_id"]) & labelled and plan.items["item_id"].is_unique
    counts = plan.items.groupby("group").size()
    assert counts.to_dict() == plan.allocation.set_index("group")["new_labels"].loc[counts.index].to_dict()
    # the judge's answers do not choose the items: other answers, same draw
    flipped = ratings.assign(score=np.where(ratings["rater_kind"] == "judge", 6 - ratings["score"], ratings["score"]))
    other = ppi_plan(flipped, m=50, by=["group"], seed=3)
    for g in ("x", "y"):
        a = set(plan.items.loc[plan.items["group"] == g, "item_id"])
        b = set(other.items.loc[other.items["group"] == g, "item_id"])
        assert a <= b or b <= a  # nested draws of the same random order
    assert ppi_plan(ratings, m=10, seed=3).items.columns.tolist() == ["item_id"]


def test_label_check_warns_when_the_labelled_items_are_not_random():
    ratings = _toy(n_items=300, labelled=100)
    assert not ppi_label_check(ratings)["warning"].any()
    # label only the items the judge scored high: not a random sample
    judge = ratings[ratings["rater_kind"] == "judge"].set_index("item_id")["score"]
    high = set(judge[judge >= 4].index)
    biased = ratings[(ratings["rater_kind"] == "judge") | ratings["item_id"].isin(high)]
    biased = pd.concat([biased, ratings[(ratings["rater_kind"] == "human")].head(0)])
    biased = pd.concat([biased, _toy(n_items=300, labelled=300).query("rater_kind == 'human'")
                        .loc[lambda d: d["item_id"].isin(high)]])
    check = ppi_label_check(biased)
    assert check["warning"].all() and check["q_value"].iloc[0] < 0.05
    table = ppi_estimates(biased)
    assert table.loc[table["method"] == "ppi++", "note"].str.contains("may not be a random sample").all()


def test_sample_data_runs_with_column_arguments():
    frame = pd.read_csv(SAMPLE).rename(columns={"rater": "who"})
    table = ppi_estimates(frame, rater="who", judges=["gpt-4/single-call"])
    assert set(table["criterion"]) == {"LA", "OCQ", "TQ", "PC", "H"}
