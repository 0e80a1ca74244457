"""The Leaderboard page (AppTest): on the sample, the scores and verdicts equal the library's and ``evalcore
leaderboard``'s; style control shows the raw scores beside the controlled ones and the style coefficients; a
dataset switch in the middle of the page; a dataset without comparisons says what the page needs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data.ingest import load_samples
from evalcore.pairwise.leaderboard_systems import system_leaderboard
from evalcore.report.views.systems import verdict_sentences
from evalcore.text import md
from tests.app.apptest import LEADERBOARD as PAGE, open_page
from tests.helpers import SAMPLE_PAIRS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def samples():
    return {kind: ing.frame for kind, ing in load_samples().items()}


def _scores(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "Elo-scale score" in d.value.columns)


def test_page_without_comparisons_says_what_it_needs(ws, samples):
    at = open_page(PAGE, dataset=ws.save_dataset("ratings only", {"ratings": samples["ratings"]}))
    assert not at.exception, [e.value for e in at.exception]
    assert any("needs" in i.value and "comparisons" in i.value.lower() for i in at.info), [i.value for i in at.info]


def test_sample_equals_the_library_and_the_cli(ws, samples, capsys):
    at = open_page(PAGE, dataset=ws.save_dataset("sample", samples))
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    board = system_leaderboard(samples["comparisons"], n_boot=1000, seed=0)
    lines = verdict_sentences(board)
    assert at.info[0].value == "  \n".join(md(line) for line in lines)
    shown = _scores(at)
    elo = board[board["measure"] == "elo"]
    assert list(shown["Elo-scale score"]) == list(elo["estimate"].round(0))
    # The CLI in this process (its process boundary is tested in tests/cli): the same command, its JSON output.
    capsys.readouterr()
    assert main(["leaderboard", str(SAMPLE_PAIRS), "--json"]) == 0
    records = pd.DataFrame(json.loads(capsys.readouterr().out))
    got = records[records["measure"] == "elo"]
    np.testing.assert_allclose(got["estimate"].to_numpy(float), elo["estimate"].to_numpy(float), atol=1e-9)
    np.testing.assert_allclose(got["ci_low"].to_numpy(float), elo["ci_low"].to_numpy(float), atol=1e-9)


def test_style_control_and_a_dataset_switch(ws, samples):
    did = ws.save_dataset("sample", samples)
    other = samples["comparisons"].copy()
    other["system_a"] = "x-" + other["system_a"].astype(str)
    other["system_b"] = "x-" + other["system_b"].astype(str)
    second = ws.save_dataset("renamed", {"comparisons": other})
    at = open_page(PAGE, dataset=did, lb_boot="200")  # the page's fewest resamples, as the library's below
    at.selectbox(key="lb_style").set_value("length").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = _scores(at)
    assert "raw Elo-scale score" in shown.columns
    board = system_leaderboard(samples["comparisons"], style="length", n_boot=200, seed=0)
    sc = board[board["measure"] == "sc_elo"]
    assert list(shown["Elo-scale score"]) == list(sc["estimate"].round(0))
    style = next(d.value for d in at.dataframe if "measure" in d.value.columns and "source" in d.value.columns)
    assert set(style["measure"]) >= {"style_length"}
    # Another dataset in the sidebar, in the middle of the page: its own systems, no error, style kept.
    at.selectbox(key="sidebar_dataset").set_value(second).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="lb_style").value == "length" and at.select_slider(key="lb_boot").value == 200
    systems = pd.concat([other["system_a"], other["system_b"]]).astype(str)
    assert set(_scores(at)["system"]) == set(systems)
