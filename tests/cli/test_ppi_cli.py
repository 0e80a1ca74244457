"""`evalcore ppi`: JSON records equal to the library, the budget fields, the plan file, comparisons, and the
messages for bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.cli import main
from evalcore.pointwise.ppi import ppi_estimates
from tests.helpers import SAMPLE, SAMPLE_PAIRS

FIELDS = ["judge", "measure", "method", "estimate", "ci_low", "ci_high", "n_labeled", "n_unlabeled", "lambda",
          "effective_labels", "note"]


@pytest.fixture(scope="module")
def fifth(tmp_path_factory):
    """The sample ratings with the humans' ratings on a seeded random fifth of the items."""
    ratings = evalcore.read(SAMPLE)
    items = ratings["item_id"].unique()
    keep = set(np.random.default_rng(0).choice(items, len(items) // 5, replace=False))
    path = tmp_path_factory.mktemp("ppi") / "fifth.csv"
    ratings[(ratings["rater_kind"] == "judge") | ratings["item_id"].isin(keep)].to_csv(path, index=False)
    return path


def test_records_equal_the_library_with_by_and_the_budget(fifth, capsys):
    assert main(["ppi", str(fifth), "--by", "language", "--judge", "gpt-4/single-call", "--target-width", "0.1",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert all(set(FIELDS) <= set(r) and "language" in r for r in recs)
    mine = ppi_estimates(evalcore.read(fifth), by=["language"], judges=["gpt-4/single-call"])
    assert len(recs) == len(mine)
    assert np.allclose([r["estimate"] for r in recs], mine["estimate"], rtol=0, atol=1e-12)
    assert {r["method"] for r in recs} == {"human_only", "judge_only", "ppi++"}
    overall = [r for r in recs if r["stratified"]]
    assert overall and all(r["language"] is None for r in overall)
    budget = [r for r in recs if r["method"] == "ppi++" and not r["stratified"]]
    assert all(r["labels_human_only"] is not None and r["target_half_width"] == 0.1 for r in budget)
    assert all(r["labels_human_only"] is None for r in recs if r["method"] != "ppi++")


def test_text_report_plan_file_and_plain(fifth, tmp_path, capsys):
    plan = tmp_path / "next.csv"
    assert main(["ppi", str(fifth), "--by", "language", "--plain", "--target-width", "0.1", "--cost-label", "1",
                 "--cost-judge", "0.01", "--plan", "40", "--plan-file", str(plan)]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "random sample of all items" in flat and "PPI++" in flat
    assert " ppi " in out and "overall" in out and "cheapest_cost" in out
    assert f"wrote 40 item ids to label next to {plan}" in out
    ids = pd.read_csv(plan)
    assert list(ids.columns) == ["language", "item_id"] and len(ids) == 40
    assert max(len(line) for line in out.splitlines()[:5]) <= 120


def test_comparisons(capsys, tmp_path):
    assert main(["ppi", str(SAMPLE_PAIRS), "--judge", "gpt-4/pairwise", "--no-majority", "drop", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["measure"] for r in recs} == {"win_rate"} and "system_a" in recs[0]
    plan = tmp_path / "p.csv"
    assert main(["ppi", str(SAMPLE_PAIRS), "--plan", "5", "--plan-file", str(plan), "--json"]) == 0
    captured = capsys.readouterr()
    assert "wrote 0 item ids" in captured.err  # every item has human labels: nothing to plan


def test_messages(tmp_path, capsys):
    ratings = evalcore.read(SAMPLE)
    judges_only = tmp_path / "judges.csv"
    ratings[ratings["rater_kind"] == "judge"].to_csv(judges_only, index=False)
    assert main(["ppi", str(judges_only)]) == 1  # the reader refuses a file without humans
    assert capsys.readouterr().err.startswith("evalcore: error: judges.csv, column 'rater_kind': there are no human")
    apart = tmp_path / "apart.csv"  # the humans rated one criterion, the judges another
    human = (ratings["rater_kind"] == "human") & (ratings["criterion"] == "LA")
    judge = (ratings["rater_kind"] == "judge") & (ratings["criterion"] == "OCQ")
    ratings[human | judge].to_csv(apart, index=False)
    assert main(["ppi", str(apart)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("evalcore: error: no item has human labels")
    assert main(["ppi", str(SAMPLE_PAIRS), "--pass-at", "3"]) == 1
    assert "--pass-at and --category apply to ratings" in capsys.readouterr().err
    assert main(["ppi", str(SAMPLE), "--judge", "nobody"]) == 1
    assert "nobody is not a judge" in capsys.readouterr().err
