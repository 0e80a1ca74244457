"""The Win rates page (AppTest) and the `evalcore winrate` CLI, on the sample, PandaLM and bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.pairwise import winrate
from evalcore.pairwise.dawid_skene import dawid_skene
from tests.app.apptest import WIN_RATES as PAGE, open_page, store_sample, use_workspace
from tests.helpers import DATASETS, ROOT

JSON_FIELDS = {"system_a", "system_b", "method", "prior", "p_mean", "p_mode", "ci_low", "ci_high", "k_observed",
               "p_human", "n_items", "n_human_labelled", "rhat", "ess", "seconds", "judges"}

pytestmark = pytest.mark.slow


def _page(dataset: str | None = None, *, pair: str | None = None) -> AppTest:
    """The page opened from a link to ``dataset`` and ``pair``."""
    return open_page(PAGE, dataset=dataset, **({"wr_pair": pair} if pair else {}))


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory):
    """A workspace holding the sample, stored once for the module as its button stores it."""
    path = tmp_path_factory.mktemp("winrate") / "ws.duckdb"
    store_sample(path)
    return path


@pytest.fixture
def sample(sample_workspace, monkeypatch):
    """The sample, in the workspace that the tests of the sample share: the page's opening pair and the fits
    one test made answer the next from the app's caches (the test that counts the fits loads its own)."""
    return use_workspace(monkeypatch, sample_workspace)


def test_opens_on_the_pair_where_calibration_matters_most(sample):
    from evalcore.data.ingest import load_samples
    from evalcore.pairwise.winrate import estimate_all

    at = _page()
    assert not at.exception, [e.value for e in at.exception]
    results = estimate_all(load_samples()["comparisons"].frame, method="bwrs", prior="ratio:0.3", seed=0)
    moved = max(results, key=lambda r: abs(r.p_mode - r.k_observed))
    assert {moved.system_a, moved.system_b} == {"atlas-7b", "ember-34b"}
    assert at.selectbox(key="wr_pair").value == "atlas-7b vs ember-34b"
    # The judge table fits the page: each accuracy with its interval in one cell (q1 was cut off).
    table = at.dataframe[0].value
    assert list(table.columns) == ["method", "judge", "k", "verdicts", "agreed when atlas-7b is better",
                                   "agreed when ember-34b is better", "q0", "q1", "judge's own p (mode)"]
    bwrs = next(r for r in results if {r.system_a, r.system_b} == {"atlas-7b", "ember-34b"})
    row = bwrs.judges_frame().iloc[0]
    shown = table[(table["method"] == "BWRS") & (table["judge"] == row["judge"])].iloc[0]
    assert shown["q1"] == f"{row['q1_mean']:.3f} [{row['q1_low']:.3f}, {row['q1_high']:.3f}]"
    # A link (or a reload) naming a pair opens that one instead.
    assert _page(pair="cirrus-70b vs atlas-7b").selectbox(key="wr_pair").value == "cirrus-70b vs atlas-7b"


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_page_without_data_says_what_to_do(ws):
    at = _page()
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_page_on_ratings_only_dataset_says_it_needs_comparisons(ws):
    ratings = pd.DataFrame({"item_id": ["1", "1"], "rater": ["a", "gpt-4"], "rater_kind": ["human", "judge"],
                            "criterion": ["c", "c"], "score": [1.0, 2.0]})
    at = _page(ws.save_dataset("only ratings", {"ratings": ratings}))
    assert not at.exception
    assert any("needs pairwise comparisons" in i.value for i in at.info)


def test_page_on_comparisons_without_systems_names_the_fix(ws):
    comps = pd.DataFrame({"item_id": ["1", "1", "2", "2"], "rater": ["ann", "gpt-4"] * 2,
                          "rater_kind": ["human", "judge"] * 2, "winner": ["a", "b", "a", "a"]})
    at = _page(ws.save_dataset("no systems", {"comparisons": comps}))
    assert not at.exception
    assert not at.error  # nothing is wrong with the file: the method does not apply, and the page says why
    (err,) = [i.value for i in at.info if "'system_a'" in i.value]
    assert "Fix:" in err
    # The fix names what to do in the app (no 'Data page', no CLI option).
    assert "Upload a file" in err and "Data page" not in err and "--" not in err
    # A sentence (capitalised), and what a file without systems (LLMBar) can use instead.
    assert err.startswith("Win rates compare two systems") and "Position bias page" in err


def test_sample_slider_moves_refit_only_what_is_not_cached(ws, monkeypatch):
    fits = []
    real = dawid_skene

    def counting(*args, **kwargs):
        fits.append(kwargs.get("labelled").sum() if kwargs.get("labelled") is not None else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(winrate, "dawid_skene", counting)
    store_sample(ws.path)  # as the sample's button stores it (the button itself: tests/app/test_app.py)
    at = _page(pair="cirrus-70b vs atlas-7b")
    assert not at.exception, [e.value for e in at.exception]
    m = _metrics(at)
    truth = next(p for p in json.loads((ROOT / "sample_data" / "ground_truth.json").read_text())["comparisons"]["pairs"]
                 if p["system_a"] == "cirrus-70b" and p["system_b"] == "atlas-7b")
    assert m["Raw judge win rate k"] == "0.769"
    assert m["Humans' win rate"] == "0.787"  # the strict human majority: 141 labelled items
    assert abs(float(m["Dawid-Skene p (mode)"]) - truth["p"]) < 0.08
    # The sample's simulated truth is drawn as a reference line, read from ground_truth.json's value.
    assert any(f"true p ({truth['p']:.2f})" in c.value for c in at.caption)
    assert len(fits) == 1
    at.slider(key="wr_ratio").set_value(0.6).run()
    assert not at.exception
    assert len(fits) == 2 and fits[-1] == 85  # 60% of the 141 human labels (items with a strict human majority)
    assert _metrics(at)["Dawid-Skene p (mode)"] != m["Dawid-Skene p (mode)"]
    at.slider(key="wr_ratio").set_value(0.3).run()  # back to a cached ratio: no refit
    assert len(fits) == 2
    assert _metrics(at)["Dawid-Skene p (mode)"] == m["Dawid-Skene p (mode)"]
    # A ratio of 0 leaves BWRS without labels: it says so instead of failing.
    at.slider(key="wr_ratio").set_value(0.0).run()
    assert not at.exception
    assert _metrics(at)["BWRS p"] == "n/a"


def test_sample_prior_settings(sample):
    at = _page(pair="cirrus-70b vs atlas-7b")
    at.radio(key="wr_prior_kind").set_value("ood").run()
    assert not at.exception, [e.value for e in at.exception]
    # The default out-of-distribution pair is the one with the closest raw win rate (0.769 here): atlas-7b vs
    # ember-34b has k = 0.342, i.e. 0.658 read the other way, closer than cirrus-70b vs borealis-13b (0.647).
    assert at.selectbox(key="wr_ood_cirrus-70b vs atlas-7b").value == "atlas-7b vs ember-34b"
    assert any(c.value == "q0 and q1 from ember-34b vs atlas-7b" for c in at.caption)
    at.radio(key="wr_prior_kind").set_value("none").run()
    assert not at.exception
    assert _metrics(at)["BWRS p"] == "n/a"
    at.toggle(key="wr_swap").set_value(True).run()
    assert _metrics(at)["Raw judge win rate k"] == "0.231"


def test_sample_all_pairs_and_error_curve(sample, monkeypatch):
    # The error curve at one ratio instead of ten: the page's flow is under test here, the curve's numbers in
    # the library's tests (each ratio is a Dawid-Skene fit per pair and subset).
    real = winrate.error_curve
    monkeypatch.setattr(winrate, "error_curve", lambda pairs, **kw: real(pairs, **{**kw, "ratios": (1.0,)}))
    at = _page(pair="cirrus-70b vs atlas-7b")
    at.session_state["wr_tab"] = "All pairs"
    at.run()
    assert not at.exception
    at.button(key="wr_all_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frame = at.dataframe[0].value
    assert len(frame) == 12 and set(frame["method"]) == {"ds", "bwrs"}
    assert any("Mean absolute error" in c.value for c in at.caption)
    at.radio(key="wr_all_mode").set_value("1 vs n").run()
    at.selectbox(key="wr_baseline").set_value("ember-34b").run()
    at.button(key="wr_all_go").click().run()
    frame = at.dataframe[0].value
    assert set(frame["system_b"]) == {"ember-34b"} and len(frame) == 6  # three pairs, two methods

    at.session_state["wr_tab"] = "Error vs human labels"
    at.run()
    at.number_input(key="wr_repeats").set_value(1).run()
    at.button(key="wr_curve_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("error should fall" in c.value for c in at.caption)
    at.toggle(key="wr_curve_all").set_value(True).run()
    at.button(key="wr_curve_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("over 6 pairs" in c.value for c in at.caption)


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the PandaLM page test needs it")
def test_page_on_pandalm(ws):
    from evalcore.data.ingest import load

    ing = load(DATASETS / "pandalm", preset="pandalm")
    at = _page(ws.save_dataset("PandaLM", {"comparisons": ing.frame}))
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.selectbox(key="wr_pair").options) == 10
    m = _metrics(at)
    assert float(m["Humans' win rate"]) > 0
    at.slider(key="wr_ratio").set_value(1.0).run()
    m = _metrics(at)
    # With every human label used, Dawid-Skene lands on the humans' win rate.
    assert abs(float(m["Dawid-Skene p (mode)"]) - float(m["Humans' win rate"])) < 0.05


