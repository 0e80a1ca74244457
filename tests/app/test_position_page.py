"""The Position bias page (AppTest): the sample (probabilities for one judge), LLMBar (verdicts only), a saved
calibration applied, and a dataset switch in the middle of the page."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load, load_samples
from evalcore.pairwise import position as pb
from tests.app.apptest import POSITION as PAGE, open_page, use_workspace
from tests.helpers import LLMBAR, needs_datasets

pytestmark = pytest.mark.slow


def _page(dataset: str | None = None) -> AppTest:
    return open_page(PAGE, dataset=dataset)


def _sample(ws) -> str:
    return ws.save_dataset("sample", {kind: ing.frame for kind, ing in load_samples().items()})


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory):
    """The sample, stored once for the module: the workspace's path and the dataset's id. The tests that open
    its page with the same options share its report through the app's caches (see ``use_workspace``)."""
    from evalcore.data.store import Workspace

    path = tmp_path_factory.mktemp("position") / "ws.duckdb"
    return path, _sample(Workspace(path))


def _readings(at: AppTest) -> list[str]:
    """The per-judge readings, which the page opens with (the verdict on the first screen)."""
    return [line for i in at.info for line in i.value.split("  \n") if "gives the same verdict in both orders" in line]


def test_page_without_data_says_what_to_do(ws):
    at = _page()
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_sample_numbers_match_the_library(sample_workspace, monkeypatch):
    path, sample = sample_workspace
    use_workspace(monkeypatch, path)
    at = _page(sample)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    frame = load_samples()["comparisons"].frame
    ref = pb.position_report(frame, n_boot=1000, seed=0).set_index(["judge", "method", "measure"])
    readings = _readings(at)
    assert len(readings) == 3 and all("Do not trust it in a single order" in r for r in readings)
    gpt4 = next(r for r in readings if r.startswith("**gpt-4/pairwise**"))
    cons = ref.loc[("gpt-4/pairwise", "none", "position_consistency"), "estimate"]
    assert f"on {cons:.0%} of items" in gpt4
    # Only a judge with probabilities is told to calibrate; the others are told why they cannot be
    assert gpt4.endswith("or calibrate it (below).")
    assert all("needs its probabilities" in r for r in readings if not r.startswith("**gpt-4/pairwise**"))
    # the before/after table opens on the judge with probabilities
    assert at.selectbox(key="pb_cal_judge").value == "gpt-4/pairwise"
    table = at.dataframe[0].value.set_index("measure")
    assert list(table.columns) == ["no calibration", "PriDe", "CalibraEval NOA (to convergence)",
                                   "CalibraEval NOA (released settings)"]
    noa = ref.loc[("gpt-4/pairwise", "noa", "position_consistency")]
    assert table.loc["same verdict in both orders", "CalibraEval NOA (to convergence)"].startswith(
        f"{noa['estimate']:.3f} [{noa['ci_low']:.3f}, {noa['ci_high']:.3f}]")
    assert len(at.get("download_button")) >= 1


def _apply_saved() -> None:
    """What the page asks for when a calibration file is uploaded (AppTest cannot upload files)."""
    import streamlit as st

    from evalcore import ui

    saved = st.session_state["saved_json"]
    report = ui.POSITION.result(judges=("gpt-4/pairwise",), by=(), methods=("none", "pride"), share=0.2, n_boot=0,
                                seed=0, saved=saved)
    rows = report[(report["method"] == "pride") & (report["measure"] == "position_consistency")]
    st.text(f"{rows['estimate'].item():.3f} {rows['note'].item()}")


def test_a_saved_calibration_is_applied_not_refitted(ws):
    frame = load_samples()["comparisons"].frame
    cals = pb.fit_calibrations(frame, judges=["gpt-4/pairwise"], methods=["pride"], seed=3, estimation_share=0.5)
    saved = pb.dumps_calibrations(cals)
    prior = json.loads(saved)["calibrations"][0]["prior_a"]
    assert 0.5 < prior < 1  # the sample's judge prefers "A"
    at = AppTest.from_function(_apply_saved, default_timeout=120)
    at.query_params["dataset"] = _sample(ws)
    at.session_state["saved_json"] = saved
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    expected = pb.position_report(frame, judges=["gpt-4/pairwise"], methods=["none", "pride"],
                                  calibrations=cals, n_boot=0)
    row = expected.query("method == 'pride' and measure == 'position_consistency'")
    assert at.text[0].value == f"{row['estimate'].item():.3f} {row['note'].item()}"
    assert "saved" in at.text[0].value or "applied" in at.text[0].value


@needs_datasets
def test_llmbar_verdicts_only_and_switching_datasets_mid_page(sample_workspace, tmp_path, monkeypatch):
    files = [LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json",
             LLMBAR / "Natural/evaluators/ChatGPT/Vanilla_NoRules/result.json"]
    path, sample = sample_workspace
    ws = use_workspace(monkeypatch, path, copy_to=tmp_path / "ws.duckdb")  # LLMBar goes into a copy of its own
    llmbar = ws.save_dataset("LLMBar", {"comparisons": load(files, preset="llmbar").frame})
    at = _page(sample)
    assert len(_readings(at)) == 3
    at.sidebar.selectbox(key="sidebar_dataset").set_value(llmbar).run()
    assert not at.exception, [e.value for e in at.exception]
    readings = _readings(at)
    assert len(readings) == 2  # the judges follow the dataset
    gpt4 = next(r for r in readings if r.startswith("**GPT-4/Vanilla_NoRules**"))
    assert "on 97% of items" in gpt4  # LLMBar's statistics.json: equal = 97 / 100
    assert any("has verdicts only" in i.value for i in at.info)


def test_a_collapsed_noa_is_not_offered_and_the_page_says_why(ws):
    from tests.unit.pairwise.test_position import simulated

    # an unbiased judge whose P("A") varies from prompt to prompt: NOA collapses at every lambda of the grid
    frame = simulated(600, position=0.0, id_=0.0, noise=2.0, seed=3)
    at = _page(ws.save_dataset("noisy", {"comparisons": frame}))
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert "CalibraEval NOA (to convergence)" not in table.columns  # no column of arbitrary decisions
    captions = [c.value for c in at.caption]
    assert any("is not offered" in c and "inconsistency from prompt to prompt" in c for c in captions), captions


@needs_datasets
def test_pandalm_says_one_thing_about_position_bias(ws):
    from tests.helpers import DATASETS

    folder = DATASETS / "pandalm"
    files = [folder / "testset-v1.json", folder / "gpt-3.5-turbo-testset-v1.json", folder / "pandalm-7b-testset-v1.json"]
    at = _page(ws.save_dataset("PandaLM", {"comparisons": load(files, preset="pandalm").frame}))
    assert not at.exception, [e.value for e in at.exception]
    infos = [i.value for i in at.info]
    assert any("Position bias is not available for this dataset" in i for i in infos), infos
    assert not _readings(at) and not at.get("plotly_chart")  # no 0.49 "first shown" figure beside it
    assert not any("cannot be measured" in m.value for m in [*at.markdown, *at.info])
