"""The analysis declarations of :mod:`evalcore.ui.analyses`: one key for the check and the run, kept in the
workspace across a cleared memory, one version per analysis."""

from __future__ import annotations

import dataclasses

import pandas as pd

from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load_samples
from evalcore.ui import analyses
from evalcore.ui.cache import result_key


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
    key = 'agreement:v3:{"by": ["language"], "judges": null, "max_raters": null, "min_raters": null, "n_boot": 0, "seed": 0}'
    assert ws.result_keys(did) == [key]


def test_each_analysis_has_its_own_name_and_version():
    names = [a.name for a in analyses.ANALYSES.values()]
    assert len(names) == len(set(names))
    # every analysis the module declares is registered (the registry is what the workspace is checked against)
    declared = {v.name for v in vars(analyses).values() if isinstance(v, analyses.Analysis)}
    assert declared == set(names)
    opts = dict(a=None, b=None, judges=("j1",), ties="drop", seed=0, repeats=5)
    curve = analyses.WINRATE_CURVE
    assert curve.key(**opts) == result_key("winrate_curve", curve.version, {"a": None, "b": None, "judges": None,
                                                                 "ties": "drop", "seed": 0, "repeats": 5})
    bumped = dataclasses.replace(curve, version=curve.version + 1)
    assert bumped.key(**opts) != curve.key(**opts) and bumped.key(**opts).startswith(f"winrate_curve:v{curve.version + 1}:")
    bias = dict(by=(), judges=None, n_boot=10, seed=0)
    assert analyses.BIAS.key(**bias) == dataclasses.replace(analyses.BIAS).key(**bias)


def test_stored_keys_have_the_documented_format():
    """``name:v<version>:<sorted JSON>``. Version 2 of agreement and bias added p, q and the FDR flags, and
    version 2 of the win rates the strict-majority human label (issue 12): results stored as v1 are not reused."""
    assert analyses.WINRATE.key(a="x", b="y", method="ds", prior="ratio:0.3", judges=None, ties="drop", seed=0) == (
        'winrate:v2:{"a": "x", "b": "y", "judges": null, "method": "ds", "prior": "ratio:0.3", "seed": 0, '
        '"ties": "drop"}')
    assert analyses.WINRATE_ALL.key(method="bwrs", prior="none", baseline=None, judges=("j",), ties="drop",
                                    seed=1, ood_auto=False) == (
        'winrate_all:v2:{"baseline": null, "judges": ["j"], "method": "bwrs", "ood_auto": false, "prior": "none", '
        '"seed": 1, "ties": "drop"}')
    assert analyses.BIAS.key(by=("language",), judges=("j",), n_boot=5, seed=2) == (
        'bias:v2:{"by": ["language"], "judges": ["j"], "n_boot": 5, "seed": 2}')


def _points_first_script() -> None:
    import streamlit as st

    from evalcore import ui

    opts = dict(by=("language",), judges=None, n_boot=200, seed=0)
    table, pending = ui.AGREEMENT.points_first(budget=0.0, **opts)  # no time at all: points first
    history = st.session_state.setdefault("history", [])
    history.append((pending, bool(table["ci_low"].isna().all())))
    st.session_state["table"] = table
    ui.finish_pending()


def test_points_first_shows_estimates_then_the_same_intervals_the_library_gives(ws):
    """Over budget, the page gets the point estimates (no interval, no flag) and, after the background
    resampling and one rerun, exactly the table the library computes in one go."""
    from evalcore.pointwise.agreement import agreement, count_units

    at, ratings, _ = _run_on_sample(ws, _points_first_script, timeout=300)
    assert at.session_state["history"] == [(True, True), (False, False)]
    expected = agreement(count_units(ratings), by=("language",), n_boot=200, seed=0)
    got = at.session_state["table"]
    cols = ["language", "judge", "measure", "estimate", "ci_low", "ci_high", "q_value", "flagged"]
    pd.testing.assert_frame_equal(got[cols].reset_index(drop=True), expected[cols].reset_index(drop=True))
