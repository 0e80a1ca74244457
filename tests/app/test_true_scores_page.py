"""The True scores page (AppTest): on the sample with human labels on a fifth of its items, the page's estimates
equal the library's and ``evalcore ppi``'s; comparisons give the win rates; a fully labelled file gets the what-if
curve at once; a dataset switch in the middle of the page."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data.ingest import load_samples
from evalcore.pairwise.ppi import ppi_win_rates
from evalcore.pointwise.ppi import ppi_estimates, ppi_what_if
from tests.app.apptest import TRUE_SCORES as PAGE, open_page, use_workspace

pytestmark = pytest.mark.slow

JUDGE = "gpt-4/per-criterion"


def _fifth(frame: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """``frame`` with the human labels kept on a seeded random fifth of its items."""
    items = frame["item_id"].unique()
    keep = set(np.random.default_rng(seed).choice(items, len(items) // 5, replace=False))
    return frame[(frame["rater_kind"] != "human") | frame["item_id"].isin(keep)].reset_index(drop=True)


@pytest.fixture(scope="module")
def samples():
    return {kind: ing.frame for kind, ing in load_samples().items()}


@pytest.fixture(scope="module")
def fifth_workspace(samples, tmp_path_factory):
    """The sample with human labels on a fifth of its items, stored once for the module: the workspace's path,
    the dataset's id and its tables. Both tests open its page with the same options and share the result through
    the app's caches (see ``use_workspace``)."""
    from evalcore.data.store import Workspace

    part = {kind: _fifth(f) for kind, f in samples.items()}
    path = tmp_path_factory.mktemp("true_scores") / "ws.duckdb"
    return path, Workspace(path).save_dataset("fifth", part), part


def _table(at, column: str = "95% interval") -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _interval(lo: float, hi: float) -> str:
    return f"[{lo:.3f}, {hi:.3f}]"


def test_page_without_data_says_what_to_do(ws):
    at = open_page(PAGE)
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_a_fifth_labelled_equals_the_library_and_the_cli(fifth_workspace, tmp_path, monkeypatch, capsys):
    stored, fifth, part = fifth_workspace
    use_workspace(monkeypatch, stored)
    at = open_page(PAGE, dataset=fifth)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    ref = ppi_estimates(part["ratings"], judges=[JUDGE])
    shown = _table(at)
    tuned = ref[ref["method"] == "ppi++"]
    page = shown[shown["method"] == "PPI++"]
    assert list(page["estimate"]) == list(tuned["estimate"].round(3))
    assert list(page["95% interval"]) == [_interval(lo, hi) for lo, hi in zip(tuned["ci_low"], tuned["ci_high"])]
    assert any("each human label counts as" in s.value for s in at.success)
    # The same numbers from the CLI, on the same rows written to a file.
    path = tmp_path / "fifth.csv"
    part["ratings"].to_csv(path, index=False)
    # The CLI in this process (its process boundary is tested in tests/cli): the same command, its JSON output.
    capsys.readouterr()
    assert main(["ppi", str(path), "--judge", JUDGE, "--json"]) == 0
    records = pd.DataFrame(json.loads(capsys.readouterr().out))
    cli = records[(records["method"] == "ppi++") & (records["judge"] == JUDGE)]
    np.testing.assert_allclose(cli["estimate"].to_numpy(float), tuned["estimate"].to_numpy(float), atol=1e-12)
    np.testing.assert_allclose(cli["ci_low"].to_numpy(float), tuned["ci_low"].to_numpy(float), atol=1e-12)

    # Comparisons: the humans' win rate per pair, from the same page.
    at.radio(key="tp_table").set_value("comparisons").run()
    assert not at.exception, [e.value for e in at.exception]
    judge = at.multiselect(key="tp_judges").value[0]
    ref = ppi_win_rates(part["comparisons"], judges=[judge])
    tuned = ref[ref["method"] == "ppi++"]
    page = _table(at)
    page = page[page["method"] == "PPI++"]
    assert list(page["95% interval"]) == [_interval(lo, hi) for lo, hi in zip(tuned["ci_low"], tuned["ci_high"])]
    assert at.dataframe[-1].value["new labels"].sum() == 50  # the plan of the next 50 labels
    # Gao et al.'s Bayesian win rates on the same plot, on request: one marker per pair for each.
    at.toggle(key="tp_bayes").set_value(True).run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    traces = {t["name"]: t for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    assert {"PPI++", "BWRS (Gao et al.)", "Dawid-Skene (Gao et al.)"} <= set(traces)
    assert len(traces["PPI++"]["customdata"]) == len(traces["BWRS (Gao et al.)"]["customdata"])


def test_fully_labelled_draws_the_what_if_curve_and_switching_dataset_keeps_the_page(fifth_workspace, samples, tmp_path,
                                                                                       monkeypatch):
    path, part, _ = fifth_workspace
    ws = use_workspace(monkeypatch, path, copy_to=tmp_path / "ws.duckdb")  # the full sample goes into a copy
    full = ws.save_dataset("sample", samples)
    at = open_page(PAGE, dataset=full)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Every item here has human labels" in s.value for s in at.success)
    curve = ppi_what_if(samples["ratings"], judges=[JUDGE], repeats=20, seed=0)
    first = curve[curve["criterion"] == curve["criterion"].iloc[0]].sort_values("share")
    row = first.iloc[3]  # the slider opens at 20%
    sentence = next(m.value for m in at.markdown if "of the items labelled" in m.value)
    assert f"{row['width_ppi']:.3f} wide" in sentence and f"{int(row['n_labeled']):,} human labels" in sentence
    at.select_slider(key="tp_wi_share").set_value(0.5).run()
    row = first[np.isclose(first["share"], 0.5)].iloc[0]
    assert f"{row['width_ppi']:.3f} wide" in next(m.value for m in at.markdown if "of the items labelled" in m.value)
    # Another dataset, chosen in the sidebar in the middle of the page: its own numbers, no error.
    at.selectbox(key="sidebar_dataset").set_value(part).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("each human label counts as" in s.value for s in at.success)
    assert _table(at)["unlabelled"].max() > 0
