"""Prediction-powered win rates (evalcore.pairwise.ppi): equal to ppi_py on PandaLM with a random labelled subset,
ties and items without a strict majority, orientation, the plan and the label check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.errors import DataError
from evalcore.pairwise.pairs import pairs
from evalcore.pairwise.ppi import (ppi_pair_items, ppi_win_rates, win_rate_budget, win_rate_label_check,
                                   win_rate_plan, win_rate_what_if)
from evalcore.stats.ppi_table import ESTIMATE_COLUMNS
from tests.helpers import PANDALM, SAMPLE_PAIRS, needs_datasets

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the test extra) is the reference implementation")


@pytest.fixture(scope="module")
def pandalm_half():
    """PandaLM with the annotators' verdicts kept on a seeded random half of the items."""
    if not PANDALM.exists():
        pytest.skip("../shared/datasets not found: this test reads the real public data")
    comparisons = evalcore.read(PANDALM)
    items = comparisons["item_id"].unique()
    keep = set(np.random.default_rng(5).choice(items, len(items) // 2, replace=False))
    return comparisons[(comparisons["rater_kind"] == "judge") | comparisons["item_id"].isin(keep)].reset_index(drop=True)


def _coded(frame: pd.DataFrame) -> pd.DataFrame:
    """Y and each judge's Yhat per item, computed here without evalcore: a = 1, tie = 1/2, b = 0 for the pair's
    first system; the humans' strict majority of three, a tie without one."""
    first = {frozenset((a, b)): a for a, b in zip(*pairs(frame)[["system_a", "system_b"]].T.values)}
    df = frame[~frame["invalid"]].copy()
    flip = [first[frozenset((a, b))] != a for a, b in zip(df["system_a"], df["system_b"])]
    vote = df["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    df["v"] = np.where(flip, 1 - vote, vote)
    df["pair"] = [tuple(sorted((a, b), key=lambda s: s != first[frozenset((a, b))])) for a, b in
                  zip(df["system_a"], df["system_b"])]
    human = df[df["rater_kind"] == "human"].groupby("item_id")["v"].agg(
        lambda v: next((x for x in (1.0, 0.0, 0.5) if (v == x).sum() * 2 > len(v)), 0.5))
    judge = df[df["rater_kind"] == "judge"].pivot_table(index="item_id", columns="rater", values="v")
    pair = frame.drop_duplicates("item_id").set_index("item_id")[["system_a", "system_b"]].apply(
        lambda r: tuple(sorted((r.system_a, r.system_b), key=lambda s: s != first[frozenset(r)])), axis=1)
    return judge.join(human.rename("y"), how="outer").join(pair.rename("pair"), how="left")


@needs_datasets
def test_equal_to_ppi_py_on_pandalm_win_rates(pandalm_half):
    table = ppi_win_rates(pandalm_half, level=0.95)
    assert list(table.columns) == ["system_a", "system_b", *ESTIMATE_COLUMNS]
    coded = _coded(pandalm_half)
    checked = 0
    for (a, b), part in coded.groupby("pair"):
        for judge in ("gpt-3.5-turbo", "pandalm-7b"):
            has_f = part[judge].notna()
            lab = part["y"].notna() & has_f
            y, f, u = part.loc[lab, "y"].to_numpy(), part.loc[lab, judge].to_numpy(), \
                part.loc[part["y"].isna() & has_f, judge].to_numpy()
            row = table[(table["system_a"] == a) & (table["system_b"] == b) & (table["judge"] == judge)
                        & (table["method"] == "ppi++")].iloc[0]
            lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
            assert row["estimate"] == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, u)[0]), abs=1e-9)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
            assert (row["n_labeled"], row["n_unlabeled"]) == (len(y), len(u)) and row["measure"] == "win_rate"
            checked += 1
    assert checked == 20


@needs_datasets
def test_pandalm_budget_what_if_and_plan(pandalm_half):
    budget = win_rate_budget(pandalm_half, half_width=0.05, judges=["pandalm-7b"])
    assert len(budget) == 10 and (budget["labels_ppi"].fillna(np.inf) >= 0).all()
    full = evalcore.read(PANDALM)
    curve = win_rate_what_if(full, judges=["pandalm-7b"], shares=[0.3, 1.0], repeats=10, seed=0)
    assert len(curve) == 20 and (curve.loc[curve["share"] == 1.0, "covered_ppi"] == 1.0).all()
    plan = win_rate_plan(pandalm_half, m=100, judge="pandalm-7b", seed=2)
    assert plan.allocation["new_labels"].sum() == 100 and len(plan.allocation) == 10
    assert list(plan.items.columns) == ["system_a", "system_b", "item_id"]
    labelled = set(pandalm_half.loc[pandalm_half["rater_kind"] == "human", "item_id"])
    assert not set(plan.items["item_id"]) & labelled


def _pair_rows(verdicts: dict, judge: dict, *, reverse=()) -> pd.DataFrame:
    """A comparisons table of one pair: humans' verdicts per item (a list) and the judge's."""
    rows = []
    for item, vs in verdicts.items():
        a, b = ("y", "x") if item in reverse else ("x", "y")
        swap = {"a": "b", "b": "a", "tie": "tie"}
        for k, v in enumerate(vs):
            rows.append((item, a, b, f"ann{k}", "human", swap[v] if item in reverse else v))
    for item, v in judge.items():
        a, b = ("y", "x") if item in reverse else ("x", "y")
        rows.append((item, a, b, "judge-a", "judge", {"a": "b", "b": "a", "tie": "tie"}[v] if item in reverse else v))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "rater", "rater_kind", "winner"])


def test_coding_ties_no_majority_and_orientation():
    humans = {"i1": ["a", "a", "b"], "i2": ["b", "tie", "tie"], "i3": ["a", "b", "tie"], "i4": ["b", "b", "b"]}
    judge = {"i1": "a", "i2": "tie", "i3": "b", "i4": "b", "i5": "a"}
    frame = _pair_rows(humans, judge, reverse={"i4"})
    items = ppi_pair_items(frame).set_index("item_id")
    assert items["y"].to_dict() == pytest.approx({"i1": 1.0, "i2": 0.5, "i3": 0.5, "i4": 0.0, "i5": np.nan},
                                                 nan_ok=True)
    assert items["yhat"].to_dict() == {"i1": 1.0, "i2": 0.5, "i3": 0.0, "i4": 0.0, "i5": 1.0}
    assert items["no_majority"].to_dict()["i3"] and not items["no_majority"].to_dict()["i2"]
    dropped = ppi_pair_items(frame, no_majority="drop")
    assert "i3" not in set(dropped["item_id"])
    table = ppi_win_rates(frame, min_labeled=2)
    human = table[table["method"] == "human_only"].iloc[0]
    assert human["estimate"] == pytest.approx(2 / 4) and "1 item without a strict majority" in human["note"]
    assert "counted as ties" in human["note"]
    dropped = ppi_win_rates(frame, min_labeled=2, no_majority="drop")
    human = dropped[dropped["method"] == "human_only"].iloc[0]
    assert human["estimate"] == pytest.approx(1.5 / 3) and human["n_labeled"] == 3
    assert "1 item without a strict majority of the humans left out" in human["note"]
    with pytest.raises(DataError, match="strict majority"):
        ppi_pair_items(frame, no_majority="coin")


def test_bad_inputs_and_the_sample():
    frame = pd.read_csv(SAMPLE_PAIRS)
    with pytest.raises(DataError, match="no item has human labels"):
        ppi_win_rates(frame[frame["rater_kind"] == "judge"])
    with pytest.raises(DataError, match="not a judge"):
        ppi_win_rates(frame, judges=["nobody"])
    table = ppi_win_rates(frame, judges=["gpt-4/pairwise"], plain=True)
    assert table["method"].unique().tolist() == ["human_only", "judge_only", "ppi", "ppi++"]
    ppi = table[table["method"] == "ppi++"]
    assert ppi["note"].str.contains("every item has human labels").all() and (ppi["lambda"] == 0).all()
    assert not win_rate_label_check(frame, judges=["gpt-4/pairwise"])["warning"].any()
    by = ppi_win_rates(frame, by=["subset"], judges=["gpt-4/pairwise"])
    assert by["stratified"].any() and by.loc[by["stratified"], "subset"].isna().all()
