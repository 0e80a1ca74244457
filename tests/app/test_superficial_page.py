"""The Superficial quality page (AppTest): the alpha slider on the sample, LLMBar and a pointwise table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load, load_samples
from evalcore.pairwise import superficial as sp
from tests.app.apptest import SUPERFICIAL as PAGE, finish, open_page, use_workspace
from tests.helpers import LLMBAR, needs_datasets

pytestmark = pytest.mark.slow


def _page(dataset: str | None = None, **params: str) -> AppTest:
    """The page from a link to ``dataset``; 200 resamples (the page's default is 1000) unless ``params`` say
    otherwise: most tests here check what is drawn, not the intervals' last digit."""
    return open_page(PAGE, dataset=dataset, **{"sq_boot": "200", **params})


def _reading(at: AppTest) -> str:
    """The verdict the page opens with (an info box above the curve)."""
    (text,) = [m.value for m in at.info if "Subtracting superficial quality" in m.value or "At alpha" in m.value]
    return text


def _sample_tables() -> dict:
    return {kind: ing.frame for kind, ing in load_samples().items()}


def _sample(ws) -> str:
    return ws.save_dataset("sample", _sample_tables())


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory):
    """The sample, stored once for the module: the workspace's path and the dataset's id."""
    from evalcore.data.store import Workspace

    path = tmp_path_factory.mktemp("superficial") / "ws.duckdb"
    return path, _sample(Workspace(path))


@pytest.fixture
def shared_sample(sample_workspace, monkeypatch):
    """The sample's id, in the workspace that the tests which only read it share: the page's curve at the
    same options, computed by one test, answers the next from the app's caches (see ``use_workspace``)."""
    path, did = sample_workspace
    use_workspace(monkeypatch, path)
    return did


def test_page_without_data_says_what_to_do(ws):
    at = _page()
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_sample_numbers_match_the_library_and_the_slider_only_recounts(ws, monkeypatch):
    did = _sample(ws)
    frame = _sample_tables()["comparisons"]
    judge = sorted(set(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str)))[0]
    data = sp.superficial_data(frame, judge=judge, q="superficial", by=("subset",))
    # The page opens at the cross-validated alpha: the median of the subsets' alpha_cv, on the 0.05 grid.
    table = sp.superficial_table(data, folds=5, n_boot=200, seed=0)
    cv = table.loc[table["measure"] == "alpha_cv", "estimate"].astype(float)
    grid = np.round(np.arange(21) * 0.05, 2)
    opening = float(grid[np.argmin(np.abs(grid - np.median(cv)))])  # a tie goes to the smaller alpha
    calls = []
    real = sp.alpha_curve
    monkeypatch.setattr(sp, "alpha_curve", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = _page(did)
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="sq_judge").value == judge
    assert at.select_slider(key="sq_alpha").value == pytest.approx(opening)
    expected = sp.flips(data, opening).set_index("subset")
    shown = at.dataframe[0].value.set_index("subset")
    for subset in ("Adversarial", "Natural"):
        acc = float(shown.loc[subset, "accuracy at alpha"].split()[0])
        assert acc == pytest.approx(expected.loc[subset, "accuracy"], abs=5e-4)
        assert shown.loc[subset, "right → wrong"] == expected.loc[subset, "right_to_wrong"]
    assert "helps on Adversarial" in _reading(at)
    assert calls
    opened = len(calls)
    at.select_slider(key="sq_alpha").set_value(0.9).run()
    assert not at.exception
    assert "alpha = 0.9" in _reading(at)
    expected = sp.flips(data, 0.9).set_index("subset")
    shown = at.dataframe[0].value.set_index("subset")
    assert float(shown.loc["Adversarial", "accuracy at alpha"].split()[0]) == pytest.approx(
        expected.loc["Adversarial", "accuracy"], abs=5e-4)
    assert len(calls) == opened  # the curve was not recomputed
    lc = at.dataframe[-1].value
    assert list(lc.columns) == ["system", "against", "items", "raw win rate", "length-controlled (AlpacaEval)",
                                "after subtracting Q (α = 0.9)", "humans"]
    assert len(lc) == 6  # the sample's six system pairs
    caption = " ".join(c.value for c in at.caption)
    assert "length_controlled_minimal" in caption and "instruction-difficulty term" in caption


def test_alpha_zero_says_nothing_is_subtracted(shared_sample):
    at = _page(shared_sample)
    at.select_slider(key="sq_alpha").set_value(0.0).run()
    assert "nothing is subtracted" in _reading(at)


@needs_datasets
def test_llmbar_rating_files_adversarial_gain_and_no_systems(ws):
    files = [LLMBAR / "Natural/evaluators/GPT-4/Rating_NoRules/result.json",
             LLMBAR / "Adversarial/Neighbor/evaluators/GPT-4/Rating_NoRules/result.json"]
    ing = load(files, preset="llmbar")
    at = _page(ws.save_dataset("LLMBar rating", {"comparisons": ing.frame}))
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="sq_q").value == "length"
    text = _reading(at)
    assert "helps on Adversarial/Neighbor" in text
    assert any("does not name them" in i.value for i in at.info)
    # opening a flipped item shows its two outputs as plain text
    item = at.selectbox(key="sq_item").value
    row = ing.frame[ing.frame["item_id"].astype(str) == item].iloc[0]
    assert {t.value for t in at.text} >= {row["text_a"], row["text_b"]}


@needs_datasets
def test_verdict_only_file_explains_what_is_needed(ws):
    ing = load([LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json"], preset="llmbar")
    at = _page(ws.save_dataset("vanilla", {"comparisons": ing.frame}))
    assert not at.exception
    assert any("score_a and score_b" in i.value for i in at.info)


def _pointwise(ws) -> str:
    """A pointwise dataset whose judge rewards length: 120 items, two humans, one criterion."""
    rng = np.random.default_rng(0)
    n = 120
    quality, length = rng.normal(size=n), rng.uniform(0, 3, n)
    ids = [f"i{k}" for k in range(n)]
    rows = [pd.DataFrame({"item_id": ids, "rater": "gpt-4", "rater_kind": "judge", "criterion": "overall",
                          "score": quality + length, "text_length": length})]
    rows += [pd.DataFrame({"item_id": ids, "rater": f"h{r}", "rater_kind": "human", "criterion": "overall",
                           "score": np.round(quality + rng.normal(scale=0.3, size=n), 1), "text_length": length})
             for r in range(2)]
    return ws.save_dataset("pointwise", {"ratings": pd.concat(rows, ignore_index=True)})


def test_pointwise_table_and_switching_datasets_mid_page(sample_workspace, tmp_path, monkeypatch):
    path, sample = sample_workspace
    pointwise = _pointwise(use_workspace(monkeypatch, path, copy_to=tmp_path / "ws.duckdb"))  # a dataset of its own
    at = _page(sample)
    assert "helps on Adversarial" in _reading(at)
    at.sidebar.selectbox(key="sidebar_dataset").set_value(pointwise).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="sq_q").value == "text_length"
    assert "helps on overall" in _reading(at) and "Kendall's tau" in _reading(at)


def test_a_shared_link_restores_the_view(shared_sample):
    """The address bar's sq_* parameters (a reload, a shared link) set the controls once."""
    at = _page(shared_sample, sq_alpha="0.9", sq_judge="llama-2-70b/pairwise")
    assert not at.exception, [e.value for e in at.exception]
    assert at.select_slider(key="sq_alpha").value == 0.9
    assert at.selectbox(key="sq_judge").value == "llama-2-70b/pairwise"
    assert "alpha = 0.9" in _reading(at)
    at.query_params["sq_alpha"] = "nonsense"  # a mangled link is ignored, never an error
    at.select_slider(key="sq_alpha").set_value(0.3).run()
    assert not at.exception and "alpha = 0.3" in _reading(at)


def test_a_slow_curve_shows_its_points_first_then_the_bands(ws, monkeypatch):
    """The pointwise curve once took up to two minutes behind a bare running indicator. Over 2 s the
    page draws the point estimates (n_boot=0) at once and the bands follow under a progress bar."""
    import time

    from evalcore.pointwise import superficial as ps

    asked = []
    real = ps.correlation_table

    def slow(data, **kw):
        asked.append(kw["n_boot"])
        if kw["n_boot"]:
            time.sleep(1.5)  # three times the page's budget, set to 0.5 s below
        return real(data, **kw)

    monkeypatch.setattr(ps, "correlation_table", slow)
    monkeypatch.setenv("EVALCORE_POINTS_FIRST_AFTER", "0.5")  # the app's 2 s, shortened: the flow is the same
    at = _page(_pointwise(ws))
    assert not at.exception, [e.value for e in at.exception]
    assert 0 in asked and 200 in asked  # the points at once, the intervals behind them
    assert "Whether any change is clear" in _reading(at)  # no claim before the bands
    assert at.get("progress")  # under a progress bar, which a fragment refreshes
    finish(at)
    assert "Whether any change is clear" not in _reading(at)  # the rerun shows the finished result
    assert not at.dataframe[0].value["change"].str.contains("no interval").any()  # the bands arrived


@needs_datasets
def test_verdicts_only_file_still_gets_the_length_controlled_win_rate(ws):
    """PandaLM's judges give verdicts, not scores: the page once stopped at 'No judge scores each output'
    although AlpacaEval's length control needs only the verdicts and the texts."""
    from evalcore.pairwise.superficial import length_controlled
    from tests.helpers import PANDALM

    frame = load([PANDALM], preset="pandalm").frame
    at = open_page(PAGE, dataset=ws.save_dataset("pandalm", {"comparisons": frame}), timeout=600, run=False)
    at.session_state["sq_boot"] = 200
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("needs only the verdicts" in i.value for i in at.info)
    judge, q = at.selectbox(key="sq_judge").value, at.selectbox(key="sq_q").value
    shown = at.dataframe[0].value
    lc = length_controlled(frame, judges=judge, alpha=None, q=q, n_boot=200, seed=0)
    row = lc[lc["measure"] == "lc_win_rate"].iloc[0]
    got = shown[(shown["system"] == row["system_a"]) & (shown["against"] == row["system_b"])]
    assert got["length-controlled (AlpacaEval)"].iloc[0].startswith(f"{row['estimate']:.3f}")


def test_a_judge_is_never_its_own_superficial_quality(ws):
    """Seen on a file with six judges and no per-item column: Q opened on the judge's own scores."""
    rng = np.random.default_rng(3)
    ids = [f"i{k}" for k in range(60)]
    quality = rng.normal(size=60)
    rows = [pd.DataFrame({"item_id": ids, "rater": name, "rater_kind": kind, "criterion": "overall",
                          "score": np.round(quality + rng.normal(scale=0.5, size=60), 1)})
            for name, kind in (("a-judge", "judge"), ("b-judge", "judge"), ("h1", "human"), ("h2", "human"))]
    at = _page(ws.save_dataset("two judges", {"ratings": pd.concat(rows, ignore_index=True)}))
    assert not at.exception, [e.value for e in at.exception]
    judge = at.selectbox(key="sq_judge").value
    assert at.selectbox(key="sq_q").value != f"rater:{judge}"
    assert at.selectbox(key="sq_q").options == ["scores of " + ("b-judge" if judge == "a-judge" else "a-judge")]
