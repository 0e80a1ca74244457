"""`evalcore leaderboard`: JSON records equal to the library with the issue's fields, one ranking row per judge with
system empty, the text report, --style and --judge, and the messages for bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

import evalcore
from evalcore.cli import main
from evalcore.pairwise.leaderboard_systems import system_leaderboard
from tests.helpers import SAMPLE, SAMPLE_PAIRS

FIELDS = ["rater", "system", "measure", "estimate", "ci_low", "ci_high", "n", "note"]


def test_records_equal_the_library(capsys):
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--boot", "100", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert all(list(r) == FIELDS for r in recs)
    mine = system_leaderboard(evalcore.read(SAMPLE_PAIRS), n_boot=100)
    assert len(recs) == len(mine)
    got = pd.DataFrame(recs)
    assert np.allclose(got["estimate"].astype(float), mine["estimate"], rtol=0, atol=1e-12, equal_nan=True)
    assert np.allclose(got["ci_low"].astype(float), mine["ci_low"], rtol=0, atol=1e-12, equal_nan=True)
    assert {"bt_score", "elo", "rank"} <= set(got["measure"])
    judges = sorted(set(got.loc[got["rater"] != "humans", "rater"]))
    for measure in ("ranking_tau", "pairs_ordered_same", "separability"):
        rows = got[(got["measure"] == measure) & (got["rater"] != "humans")]
        assert sorted(rows["rater"]) == judges and (rows["system"] == "").all()


def test_text_report_with_style_and_one_judge(capsys):
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--boot", "50", "--judge", "gpt-4/pairwise", "--style",
                 "length"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "Bradley-Terry" in flat and "Separability" in flat
    assert "gpt-4/pairwise orders" in flat and "of the system pairs as the humans do" in flat
    assert "llama-2-70b" not in out
    assert "Style-controlled (length)" in flat and "humans style_length" in flat
    assert max(len(line) for line in out.splitlines()) <= 120


def test_style_records_are_prefixed(capsys):
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--boot", "0", "--style", "length", "--json"]) == 0
    measures = {r["measure"] for r in json.loads(capsys.readouterr().out)}
    assert {"sc_bt_score", "sc_elo", "sc_rank", "style_length"} <= measures


def test_bad_input_is_one_line(capsys):
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--judge", "nobody", "--boot", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("evalcore: error:") and "nobody" in err and len(err.strip().splitlines()) == 1
    assert main(["leaderboard", str(SAMPLE), "--boot", "0"]) == 1
    assert "comparisons" in capsys.readouterr().err


def test_corrected_rows(capsys):
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--boot", "0", "--judge", "gpt-4/pairwise", "--corrected",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    ppi = [r for r in recs if r["rater"] == "ppi:gpt-4/pairwise"]
    assert {r["measure"] for r in ppi} == {"bt_score", "elo", "rank"} and all(list(r) == FIELDS for r in ppi)
