"""`evalcore winrate`: the JSON contract, one-line errors for bad options and wrong tables."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from tests.helpers import ROOT, SAMPLE_PAIRS

PAGE = str(ROOT / "pages" / "3_Win_rates.py")

JSON_FIELDS = {"system_a", "system_b", "method", "prior", "p_mean", "p_mode", "ci_low", "ci_high", "k_observed",
               "p_human", "n_items", "n_human_labelled", "rhat", "ess", "seconds", "judges"}

pytestmark = pytest.mark.slow


def test_cli_winrate_json_contract(capsys):
    assert main(["winrate", str(SAMPLE_PAIRS), "--pair", "cirrus-70b", "atlas-7b", "--method", "bwrs", "--prior",
                 "ratio:0.5", "--seed", "3", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert JSON_FIELDS <= set(rec)
    assert rec["method"] == "bwrs" and rec["prior"] == "ratio:0.5" and rec["rhat"] is None
    assert rec["n_human_labelled"] == 74 and rec["n_items"] == 150  # half of 147 labelled items, rounded
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
])
def test_cli_winrate_bad_options_get_one_line(capsys, argv, message):
    assert main(["winrate", str(SAMPLE_PAIRS), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.startswith("evalcore: error:") and err.count("\n") == 1
    assert "Traceback" not in err


def test_cli_winrate_on_ratings_says_it_needs_comparisons(capsys):
    assert main(["winrate", str(ROOT / "sample_data" / "ratings_multilingual.csv")]) == 1
    assert "win rates need pairwise comparisons" in capsys.readouterr().err
