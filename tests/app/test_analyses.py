"""The analysis declarations of :mod:`evalcore.ui.analyses`: one key for the check and the run, kept in the
workspace across a cleared memory, one version per analysis."""

from __future__ import annotations

import dataclasses

import pandas as pd

from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load_samples
from evalcore.ui import analyses
from tests.app.apptest import finish


def _script() -> None:
    import streamlit as st

    from evalcore import ui

    opts = dict(by=("language",), judges=None, n_boot=0, seed=0)
    st.text(f"before {ui.AGREEMENT.ready(**opts)}")
    table = ui.AGREEMENT.result(**opts)
    st.text(f"after {ui.AGREEMENT.ready(**opts)} rows {len(table)}")
    dist = ui.CLASS_DISTRIBUTION.result(by=("language",))
    st.text(f"dist {ui.CLASS_DISTRIBUTION.ready(by=('language',))} rows {len(dist)}")
    st.cache_resource.clear()  # the memory is gone; the workspace keeps the stored result
    st.text(f"stored {ui.AGREEMENT.ready(**opts)} other seed {ui.AGREEMENT.ready(**{**opts, 'seed': 1})} "
            f"dist {ui.CLASS_DISTRIBUTION.ready(by=('language',))}")
    again = ui.AGREEMENT.result(**opts)
    st.text(f"same {list(again.columns) == list(table.columns) and len(again) == len(table)}")


def _run_on_sample(ws, script, *, timeout: int):
    """``script`` run once as a page on the sample ratings saved in the workspace: the AppTest, the ratings, their id."""
    ratings = load_samples()["ratings"].frame
    did = ws.save_dataset("sample ratings", {"ratings": ratings})
    at = AppTest.from_function(script, default_timeout=timeout)
    at.query_params["dataset"] = did
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, ratings, did


def test_ready_and_result_share_one_key_and_the_workspace_keeps_it(ws):
    at, _, did = _run_on_sample(ws, _script, timeout=120)
    texts = [t.value for t in at.text]
    assert texts[0] == "before False"
    assert texts[1].startswith("after True rows ") and int(texts[1].split()[-1]) > 0
    assert texts[2].startswith("dist True rows ")
    assert texts[3] == "stored True other seed False dist False"  # a plot table is kept in memory only
    assert texts[4] == "same True"
    # One result is stored, the one asked for (the plot table is not); a result of other options is another key.
    opts = dict(by=("language",), judges=None, n_boot=0, seed=0)
    assert ws.result_keys(did) == [analyses.AGREEMENT.key(**opts)] != [analyses.AGREEMENT.key(**{**opts, "seed": 1})]


def test_each_analysis_has_its_own_name_and_version():
    names = [a.name for a in analyses.ANALYSES.values()]
    assert len(names) == len(set(names))
    # every analysis the module declares is registered (the registry is what the workspace is checked against)
    declared = {v.name for v in vars(analyses).values() if isinstance(v, analyses.Analysis)}
    assert declared == set(names)


def test_a_key_changes_with_every_option_the_version_and_the_analysis():
    """A stored result is reused only for the same analysis, version and options: a changed option, or a
    version bumped because the results' meaning changed, never reads an old result."""
    bias = dict(by=("language",), judges=("j",), n_boot=5, seed=2)
    key = analyses.BIAS.key(**bias)
    assert analyses.BIAS.key(seed=2, n_boot=5, judges=("j",), by=("language",)) == key  # order does not matter
    for change in (dict(by=()), dict(by=("task",)), dict(judges=None), dict(judges=("j", "k")), dict(n_boot=6),
                   dict(seed=3)):
        assert analyses.BIAS.key(**{**bias, **change}) != key, change
    assert dataclasses.replace(analyses.BIAS, version=analyses.BIAS.version + 1).key(**bias) != key
    assert analyses.META.key(**bias) != key  # the same options, another analysis
    pair = dict(a="x", b="y", method="ds", prior="ratio:0.3", judges=None, ties="drop", seed=0)
    assert len({analyses.WINRATE.key(**{**pair, **c}) for c in (
        {}, dict(a="y", b="x"), dict(method="bwrs"), dict(prior="none"), dict(judges=("j",)), dict(ties="half"),
        dict(seed=1))}) == 7


def test_the_curve_over_every_pair_uses_every_judge_so_a_judge_pick_does_not_split_it():
    curve = analyses.WINRATE_CURVE
    every = dict(a=None, b=None, ties="drop", seed=0, repeats=5)
    assert curve.key(**every, judges=("j1",)) == curve.key(**every, judges=None)
    one = {**every, "a": "x", "b": "y"}
    assert curve.key(**one, judges=("j1",)) != curve.key(**one, judges=None)


def _points_first_script() -> None:
    import streamlit as st

    from evalcore import ui

    opts = dict(by=("language",), judges=None, n_boot=200, seed=0)
    table, pending = ui.AGREEMENT.points_first(budget=0.0, **opts)  # no time at all: points first
    history = st.session_state.setdefault("history", [])
    history.append((pending, bool(table["ci_low"].isna().all())))
    st.session_state["table"] = table


def test_points_first_shows_estimates_then_the_same_intervals_the_library_gives(ws):
    """Over budget, the page gets the point estimates (no interval, no flag) and, after the background
    resampling and a rerun (the fragment under the note asks for it), exactly the table the library computes in
    one go."""
    from evalcore.pointwise.agreement.table import agreement
    from evalcore.pointwise.agreement.units import count_units

    at, ratings, _ = _run_on_sample(ws, _points_first_script, timeout=300)
    assert at.session_state["history"] == [(True, True)]
    finish(at)
    history = at.session_state["history"]
    assert set(history[:-1]) == {(True, True)} and history[-1] == (False, False)
    expected = agreement(count_units(ratings), by=("language",), n_boot=200, seed=0)
    got = at.session_state["table"]
    cols = ["language", "judge", "measure", "estimate", "ci_low", "ci_high", "q_value", "flagged"]
    pd.testing.assert_frame_equal(got[cols].reset_index(drop=True), expected[cols].reset_index(drop=True))


def _confusion_script() -> None:
    import streamlit as st

    from evalcore import ui

    st.text(f"before {ui.CONFUSION.ready(judge='gpt-4/single-call', by=('criterion',))}")
    cm = ui.CONFUSION.result(judge="gpt-4/single-call", by=("criterion",))
    st.text(f"after {ui.CONFUSION.ready(judge='gpt-4/single-call', by=('criterion',))} "
            f"other judge {ui.CONFUSION.ready(judge='gpt-4/per-criterion', by=('criterion',))}")
    st.session_state["cm"] = cm


def test_the_confusion_matrix_is_computed_once_per_judge_and_grouping(ws):
    """The Agreement page's confusion matrix comes from memory on a rerun (a plot table: not stored), and is the
    library's own."""
    from evalcore.pointwise.confusion import confusion_matrix

    at, ratings, did = _run_on_sample(ws, _confusion_script, timeout=120)
    assert [t.value for t in at.text] == ["before False", "after True other judge False"]
    pd.testing.assert_frame_equal(at.session_state["cm"],
                                  confusion_matrix(ratings, judges=["gpt-4/single-call"], by=("criterion",)))
    assert ws.result_keys(did) == []
