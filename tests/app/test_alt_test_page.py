"""The Alt-Test page (AppTest): the sample's verdicts equal the library's and the CLI's, epsilon moves the verdict,
a file of text labels gets its test by accuracy, and a dataset switch in the middle of the page."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli import main
from evalcore.data.ingest import load, load_samples
from evalcore.pointwise.alt_test import alt_test, alt_test_verdicts
from tests.app.apptest import ALT_TEST as PAGE, open_page, use_workspace
from evalcore.text import md
from tests.helpers import ROOT

pytestmark = pytest.mark.slow


def _sample(ws) -> str:
    return ws.save_dataset("sample", {kind: ing.frame for kind, ing in load_samples().items()})


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory):
    """The sample, stored once for the module: the workspace's path and the dataset's id. The tests that open
    its page with the same options share the test's result through the app's caches (see ``use_workspace``)."""
    from evalcore.data.store import Workspace

    path = tmp_path_factory.mktemp("alt_test") / "ws.duckdb"
    return path, _sample(Workspace(path))


def _verdicts(at: AppTest) -> list[str]:
    return [line for i in at.info for line in i.value.split("  \n") if " at epsilon " in line]


def _text_labels(tmp_path, seed: int = 3):
    """A file of nominal text labels: 4 annotators and two judges on 80 items, one judge as good as an annotator
    and one at chance."""
    rng = np.random.default_rng(seed)
    labels = np.array(["yes", "no", "unsure"])
    truth = rng.integers(0, 3, 80)
    rows = []
    for i, t in enumerate(truth):
        for a in range(4):
            rows.append((f"i{i}", f"ann{a}", "human", labels[t if rng.random() < 0.8 else rng.integers(0, 3)]))
        rows.append((f"i{i}", "good-judge", "judge", labels[t if rng.random() < 0.8 else rng.integers(0, 3)]))
        rows.append((f"i{i}", "coin-judge", "judge", labels[rng.integers(0, 3)]))
    path = tmp_path / "stance.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "score"]).to_csv(path, index=False)
    return path


def test_page_without_data_says_what_to_do(ws):
    at = open_page(PAGE)
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_sample_verdicts_equal_the_library_and_the_cli(ws, capsys):
    at = open_page(PAGE, dataset=_sample(ws))
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    frame = load_samples()["ratings"].frame
    ref = alt_test(frame, annotators=True, n_boot=1000, seed=0)
    assert _verdicts(at) == [md(v) for v in alt_test_verdicts(ref)]
    # The CLI in this process (its process boundary is tested in tests/cli): the same command, its JSON output.
    capsys.readouterr()
    assert main(["alt-test", str(ROOT / "sample_data" / "ratings_multilingual.csv"), "--json"]) == 0
    records = pd.DataFrame(json.loads(capsys.readouterr().out))
    for judge in ref["judge"].unique():
        for measure in ("winning_rate", "advantage_probability"):
            ours = ref[(ref["judge"] == judge) & (ref["measure"] == measure)]["estimate"].item()
            theirs = records[(records["judge"] == judge) & (records["measure"] == measure)]["estimate"].item()
            assert ours == pytest.approx(theirs, abs=1e-12)
    ranking = at.dataframe[0].value
    assert list(ranking["judge"]) == list(ref[ref["measure"] == "advantage_probability"]["judge"])
    assert set(ranking["verdict"]) <= {"passes", "fails"}
    # the per-annotator table of the first judge: one row per annotator tested
    annotators = at.dataframe[1].value
    first = ref[(ref["judge"] == ref["judge"].iloc[0]) & (ref["measure"] == "annotator_advantage")]
    assert len(annotators) == len(first)
    assert len(at.get("download_button")) >= 1


def test_epsilon_moves_the_verdict_to_where_the_library_says(sample_workspace, monkeypatch):
    path, dataset = sample_workspace
    use_workspace(monkeypatch, path)
    frame = load_samples()["ratings"].frame
    ref = alt_test(frame, n_boot=0)
    judge = ref["judge"].iloc[0]
    threshold = ref[(ref["judge"] == judge) & (ref["measure"] == "min_passing_epsilon")]["estimate"].item()
    below = round(np.floor(threshold * 100) / 100 - 0.01, 2)
    at = open_page(PAGE, dataset=dataset, at_boot="0")
    at.slider(key="at_eps").set_value(below).run()
    assert not at.exception, [e.value for e in at.exception]
    line = next(v for v in _verdicts(at) if v.startswith(judge))
    assert f"{judge} FAILS at epsilon {below:g}" in line
    at.slider(key="at_eps").set_value(0.5).run()
    assert next(v for v in _verdicts(at) if v.startswith(judge)).startswith(f"{judge} PASSES at epsilon 0.5")


def test_text_labels_are_tested_by_accuracy_and_a_coin_fails(ws, tmp_path):
    ing = load(_text_labels(tmp_path))
    dataset = ws.save_dataset("stance", {"ratings": ing.frame})
    at = open_page(PAGE, dataset=dataset)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    verdicts = _verdicts(at)
    assert any(v.startswith("coin-judge FAILS") for v in verdicts), verdicts
    ref = alt_test(ing.frame, n_boot=1000, seed=0)
    assert set(ref["scoring"]) == {"accuracy"}
    assert verdicts == [md(v) for v in alt_test_verdicts(ref)]


def test_switching_datasets_mid_page_keeps_a_true_result(sample_workspace, tmp_path, monkeypatch):
    path, sample = sample_workspace
    ws = use_workspace(monkeypatch, path, copy_to=tmp_path / "ws.duckdb")  # the second dataset goes into a copy
    stance = ws.save_dataset("stance", {"ratings": load(_text_labels(tmp_path)).frame})
    at = open_page(PAGE, dataset=sample, at_boot="0")
    assert any(v.startswith("gpt-4/") for v in _verdicts(at))
    at.sidebar.selectbox(key="sidebar_dataset").set_value(stance).run()  # as a user picks it
    assert not at.exception, [e.value for e in at.exception]
    verdicts = _verdicts(at)
    assert verdicts and all(v.split()[0] in {"good-judge", "coin-judge"} for v in verdicts), verdicts
