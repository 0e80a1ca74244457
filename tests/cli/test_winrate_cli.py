"""`evalcore winrate`: the JSON contract, one-line errors for bad options and wrong tables."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from tests.helpers import PANDALM, ROOT, SAMPLE_PAIRS, needs_datasets

PAGE = str(ROOT / "app_pages" / "3_Win_rates.py")

JSON_FIELDS = {"system_a", "system_b", "method", "prior", "p_mean", "p_mode", "ci_low", "ci_high", "k_observed",
               "p_human", "n_items", "n_human_labelled", "rhat", "ess", "seconds", "judges"}

pytestmark = pytest.mark.slow


def test_cli_winrate_json_contract(capsys):
    assert main(["winrate", str(SAMPLE_PAIRS), "--pair", "cirrus-70b", "atlas-7b", "--method", "bwrs", "--prior",
                 "ratio:0.5", "--seed", "3", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert JSON_FIELDS <= set(rec)
    assert rec["method"] == "bwrs" and rec["prior"] == "ratio:0.5" and rec["rhat"] is None
    # half of the 141 items with a strict human majority for A or B, rounded half to even
    assert rec["n_human_labelled"] == 70 and rec["n_items"] == 150
    assert rec["ci_low"] < rec["p_mean"] < rec["ci_high"]
    assert {j["judge"] for j in rec["judges"]} == {"gpt-4/pairwise", "gpt-3.5/pairwise", "llama-2-70b/pairwise"}
    assert {"q0_mean", "q0_low", "q0_high", "q1_mean", "q1_low", "q1_high"} <= set(rec["judges"][0])

    assert main(["winrate", str(SAMPLE_PAIRS), "--method", "ds", "--prior", "ood:cirrus-70b,borealis-13b", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert len(recs) == 5  # every pair except the prior's own
    assert all(r["prior"] == "ood:cirrus-70b,borealis-13b" for r in recs)
    # Without labels and with a concentration-2 prior, some fits mix poorly: each failure must be flagged.
    for r in recs:
        assert r["rhat"] <= 1.01 or any("R-hat" in w for w in r["warnings"])
        assert r["ess"] >= 400 or any("effective sample size" in w for w in r["warnings"])
        assert r["divergences"] == 0 or any("divergent" in w for w in r["warnings"])

    assert main(["winrate", str(SAMPLE_PAIRS), "--baseline", "atlas-7b", "--prior", "ratio:0.3"]) == 0
    out = capsys.readouterr().out
    assert "Bayesian Dawid-Skene, prior ratio:0.3" in out and "3 pair(s)" in out


@pytest.mark.parametrize("argv, message", [
    (["--prior", "ratio:abc"], "no number after ratio:"),
    (["--prior", "ratio:1.5"], "not between 0 and 1"),
    (["--prior", "ood:x"], "does not name two systems"),
    (["--method", "bwrs", "--prior", "none"], "footnote 4"),
    (["--pair", "cirrus-70b", "nobody"], "no comparisons of cirrus-70b against nobody"),
    (["--judge", "gpt-5", "--pair", "cirrus-70b", "atlas-7b"], "gpt-5 did not judge"),
    (["--seed", "-1"], "--seed -1 is negative"),
    (["--accuracy", "--seed", "-1"], "--seed -1 is negative"),
    (["--accuracy", "--by", "language"], "cannot group by 'language'"),
    (["--accuracy", "--pair", "cirrus-70b", "atlas-7b"], "--accuracy reports every item, not one pair"),
    (["--accuracy", "--boot", "-5"], "bootstrap resamples must be a whole number"),
    (["--accuracy", "--level", "1.5"], "confidence level must be between 0 and 1"),
])
def test_cli_winrate_bad_options_get_one_line(capsys, argv, message):
    assert main(["winrate", str(SAMPLE_PAIRS), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.startswith("evalcore: error:") and err.count("\n") == 1
    assert "Traceback" not in err


def test_cli_winrate_on_ratings_says_it_needs_comparisons(capsys):
    assert main(["winrate", str(ROOT / "sample_data" / "ratings_multilingual.csv")]) == 1
    assert "win rates need pairwise comparisons" in capsys.readouterr().err


ACCURACY_FIELDS = ["judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_units", "n_invalid"]


@needs_datasets
def test_cli_accuracy_reproduces_the_pandalm_authors(capsys):
    assert main(["winrate", str(PANDALM), "--accuracy", "--invalid", "wrong", "--boot", "200", "--json"]) == 0
    recs = {r["judge"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(recs["gpt-3.5-turbo"])[:8] == ACCURACY_FIELDS and "note" in recs["gpt-3.5-turbo"]
    gpt, plm = recs["gpt-3.5-turbo"], recs["pandalm-7b"]
    assert round(gpt["estimate"], 3) == 0.698 and gpt["n"] == 999 and gpt["n_invalid"] == 25
    assert round(plm["estimate"], 3) == 0.668 and plm["n_invalid"] == 0
    assert gpt["ci_low"] < gpt["estimate"] < gpt["ci_high"]

    assert main(["winrate", str(PANDALM), "--accuracy", "--boot", "0", "--json"]) == 0
    gpt = {r["judge"]: r for r in json.loads(capsys.readouterr().out)}["gpt-3.5-turbo"]
    assert round(gpt["estimate"], 3) == 0.716 and gpt["n"] == 974 and gpt["ci_low"] is None
    assert gpt["note"].startswith("25 unparsed output(s) left out")

    assert main(["winrate", str(PANDALM), "--accuracy", "--by", "task", "--boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "unparsed outputs left out (--invalid drop)" in out and "Wolfram alpha" in out


def test_cli_accuracy_on_the_sample(capsys):
    assert main(["winrate", str(SAMPLE_PAIRS), "--accuracy", "--by", "subset", "--boot", "100", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["judge"] for r in recs} == {"gpt-4/pairwise", "gpt-3.5/pairwise", "llama-2-70b/pairwise"}
    assert all(0 <= r["estimate"] <= 1 and r["n_invalid"] == 0 and "subset" in r for r in recs)
