"""One dataset per browser session, and selectors that survive a dataset switch.

Each ``AppTest`` is its own browser session (its own ``st.session_state`` and URL) on one shared
server process and workspace, as two people using the app at once are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.validation import validate
from evalcore.data.ingest import load, load_samples
from tests.app.apptest import AGREEMENT, BIAS, WIN_RATES, open_page, use_workspace
from tests.app.test_agreement_page import unseen_file
UNSEEN_JUDGES = ["claude-3/cot", "claude-3/plain", "gpt-4o/cot", "gpt-4o/plain", "llama-3-70b", "qwen-2-72b"]
OTHER_JUDGES = ["judge-alpha", "judge-beta", "judge-gamma"]
SAMPLE_JUDGES = ["gpt-4/per-criterion", "gpt-4/single-call"]


def _comparisons(seed: int = 3) -> pd.DataFrame:
    """Pairwise verdicts on systems and judges the sample does not have: 3 humans, 3 judges, 2 pairs."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, b, p in (("sys-x", "sys-y", 0.7), ("sys-y", "sys-z", 0.4)):
        for i in range(40):
            truth = "a" if rng.random() < p else "b"
            for rater, kind, acc in [*((f"h{k}", "human", 0.85) for k in range(3)),
                                     *((j, "judge", 0.75) for j in OTHER_JUDGES)]:
                wrong = {"a": "b", "b": "a"}[truth]
                rows.append((f"{a}-{b}-{i}", a, b, rater, kind, truth if rng.random() < acc else wrong))
    frame = pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "rater", "rater_kind", "winner"])
    return validate(frame, table="comparisons", file="other.csv").frame


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, dict[str, pd.DataFrame]]:
    """The two datasets' tables, read and validated once for the module (each test stores them anew)."""
    ratings = load(unseen_file(tmp_path_factory.mktemp("unseen") / "unseen.csv")).frame
    return {"Sample": {k: v.frame for k, v in load_samples().items()},
            "Other": {"ratings": ratings, "comparisons": _comparisons()}}


@pytest.fixture(scope="module")
def stored(tables, tmp_path_factory) -> tuple[Path, tuple[str, str]]:
    """The sample (both tables) and a second dataset with other judges, criteria, languages and systems, stored
    once for the module: the workspace's path and the two ids."""
    from evalcore.data.store import Workspace

    path = tmp_path_factory.mktemp("sessions") / "ws.duckdb"
    ws = Workspace(path)
    return path, (ws.save_dataset("Sample", tables["Sample"]), ws.save_dataset("Other", tables["Other"]))


@pytest.fixture
def shared_ws(stored, monkeypatch):
    """The module's workspace, which the tests that only read its two datasets share (see ``use_workspace``)."""
    return use_workspace(monkeypatch, stored[0])


@pytest.fixture
def two_datasets(stored, shared_ws):
    """The two datasets' ids, in the module's shared workspace."""
    return stored[1]


def _session(dataset: str | None = None, page: str | None = None, timeout: int = 300, **params: str) -> AppTest:
    """A new browser session opened on ``page`` (the landing page by default), with ``?dataset=`` and the
    other query parameters ``params``."""
    return open_page(page, dataset=dataset, timeout=timeout, **params)


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _switch(at: AppTest, dataset: str) -> AppTest:
    """Pick ``dataset`` in the sidebar, as a user does."""
    return at.sidebar.selectbox(key="sidebar_dataset").set_value(dataset).run()


# --------------------------------------------------------------------------- one dataset per session


def test_two_sessions_keep_their_own_dataset_across_reloads(two_datasets, shared_ws):
    ws = shared_ws
    sample, other = two_datasets
    a, b = _session(), _session()
    _switch(a, sample)
    _switch(b, other)
    assert a.query_params["dataset"] == sample and b.query_params["dataset"] == other
    assert a.header[0].value == "Sample" and b.header[0].value == "Other"
    # A reload is a new session with the same URL: each tab gets its own dataset back.
    a2, b2 = _session(a.query_params["dataset"]), _session(b.query_params["dataset"])
    assert a2.sidebar.selectbox(key="sidebar_dataset").value == sample and a2.header[0].value == "Sample"
    assert b2.sidebar.selectbox(key="sidebar_dataset").value == other and b2.header[0].value == "Other"
    # B's later switch does not move A, and nothing server-wide remembers either choice.
    _switch(b2, sample)
    assert a.run().header[0].value == "Sample" and _session(a.query_params["dataset"]).header[0].value == "Sample"
    assert ws.get_setting("current_dataset") is None
    # A third person, with no link: nobody's choice, the datasets to choose from.
    c = _session()
    _clean(c)
    assert c.sidebar.selectbox(key="sidebar_dataset").value is None
    assert any("No dataset is chosen in this browser tab yet" in i.value for i in c.info)
    assert not c.header  # no dataset summary
    c.switch_page(AGREEMENT).run()
    _clean(c)
    assert any("No dataset is chosen in this browser tab yet" in i.value for i in c.info)


def test_a_page_puts_the_dataset_back_in_the_url_after_navigation(two_datasets):
    sample, other = two_datasets
    at = _session(other, AGREEMENT, ag_boot="0")  # no resamples: the URL is tested, not the intervals
    # Streamlit's page navigation drops the query string; the page writes it back from the session.
    at.query_params.clear()
    at.session_state["bi_boot"] = 0
    at.switch_page(BIAS).run()
    _clean(at)
    assert at.query_params["dataset"] == other
    assert at.sidebar.selectbox(key="sidebar_dataset").value == other


def test_the_only_dataset_opens_without_a_choice(ws):
    did = ws.save_dataset("Only", {"ratings": load_samples()["ratings"].frame})
    at = _session()
    _clean(at)
    assert at.header[0].value == "Only" and at.query_params["dataset"] == did


def test_a_deleted_or_unknown_dataset_in_the_link_says_so(two_datasets):
    for page in (None, AGREEMENT, BIAS, WIN_RATES):
        at = _session("no-such-dataset", page)
        _clean(at)
        (info,) = [i.value for i in at.info]
        assert "(id no-such-dataset) is not in the workspace any more" in info
        assert at.sidebar.selectbox(key="sidebar_dataset").options  # the chooser is there
    # Choosing one from the sidebar recovers.
    at = _switch(at, two_datasets[0])
    _clean(at)
    assert at.query_params["dataset"] == two_datasets[0]


def test_deleting_this_tabs_dataset_goes_back_to_the_choice(stored, tmp_path, monkeypatch):
    ws = use_workspace(monkeypatch, stored[0], copy_to=tmp_path / "ws.duckdb")  # a deletion of its own
    sample, other = stored[1]
    at = _session(other)
    at.selectbox(key="saved_choice").set_value(other).run()
    at.checkbox(key=f"sure_{other}").check().run()
    at.button(key="saved_delete").click().run()
    _clean(at)
    assert at.header[0].value == "Sample"  # the only dataset left opens
    assert at.query_params["dataset"] == sample
    assert [d.id for d in ws.list_datasets()] == [sample]


# --------------------------------------------------------------------------- selectors survive a dataset switch


def test_agreement_page_after_a_dataset_switch(two_datasets):
    sample, other = two_datasets
    at = _session(sample, AGREEMENT, ag_boot="200")
    _clean(at)
    at.multiselect(key="ag_by").set_value(["task"]).run()  # a grouping the other dataset does not have
    _switch(at, other)
    _clean(at)
    assert at.multiselect(key="ag_judges").value == UNSEEN_JUDGES
    assert at.multiselect(key="ag_by").value == ["language", "criterion"]  # back to the default
    opened = at.selectbox(key="ag_source").value  # the judge closest to the humans on this dataset
    assert opened in UNSEEN_JUDGES and at.info[0].value.startswith(f"**{opened}**")
    assert len(at.get("plotly_chart")) >= 2
    captions = " ".join(c.value for c in at.caption)
    assert f"Humans next to {opened}" in captions and "no judge" not in captions
    table = at.dataframe[0].value
    assert set(table["judge"]) - {"(humans)"} == set(UNSEEN_JUDGES)
    # Back to the sample: its judges again, no exception.
    _switch(at, sample)
    _clean(at)
    assert at.multiselect(key="ag_judges").value == SAMPLE_JUDGES
    assert at.multiselect(key="ag_by").value == ["language", "criterion"]


def test_agreement_page_with_no_judge_picked_says_so(two_datasets):
    at = _session(two_datasets[1], AGREEMENT, ag_boot="200")
    at.multiselect(key="ag_judges").set_value([]).run()
    _clean(at)
    assert at.multiselect(key="ag_judges").value == []  # the user's own choice stays
    assert any("Pick at least one judge" in i.value for i in at.info)
    assert not any("No cell where a judge" in s.value for s in at.success)
    assert any("pick a judge under **Judges**" in c.value for c in at.caption)


def test_bias_page_after_a_dataset_switch(two_datasets):
    sample, other = two_datasets
    at = _session(sample, BIAS, bi_boot="200")
    _clean(at)
    assert at.multiselect(key="bi_judges").value
    at.session_state["bi_tab"] = "Anchoring"  # only the open tab runs
    at.run()
    at.selectbox(key="bi_given").set_value("OCQ").run()
    _switch(at, other)
    _clean(at)
    judges = at.multiselect(key="bi_judges").value
    assert judges == UNSEEN_JUDGES[:6]  # six judges: all of them
    assert at.selectbox(key="bi_given").value == "coherence"  # OCQ is gone: the first criterion
    assert at.selectbox(key="bi_crit").value in {"coherence", "consistency", "fluency", "helpfulness", "relevance"}
    assert len(at.get("plotly_chart")) >= 3  # the anchoring tab's figures, drawn for the new dataset
    # The findings are computed for those judges: every judge row of the report is one of them.
    at.session_state["bi_tab"] = "All numbers"
    at.run()
    _clean(at)
    results = at.dataframe[-1].value
    assert set(results["judge"]) - {"(humans)"} == set(judges)
    flagged = [w.value for w in at.warning if "Found for" in w.value]
    no_bias = [s.value for s in at.success if "No bias is flagged" in s.value]
    assert bool(flagged) != bool(no_bias)
    assert bool(flagged) == bool(results["flagged"].any())


def test_bias_page_with_no_judge_picked_says_so(two_datasets):
    at = _session(two_datasets[0], BIAS, bi_boot="0")
    at.multiselect(key="bi_judges").set_value([]).run()
    _clean(at)
    assert any("Pick at least one judge" in i.value for i in at.info)
    assert not [s for s in at.success if "No bias is flagged" in s.value]
    # Switching the dataset gives the new dataset's default judges.
    _switch(at, two_datasets[1])
    _clean(at)
    assert at.multiselect(key="bi_judges").value == UNSEEN_JUDGES


@pytest.mark.slow
def test_win_rates_page_after_a_dataset_switch(two_datasets):
    sample, other = two_datasets
    at = _session(sample, WIN_RATES)
    _clean(at)
    assert at.selectbox(key="wr_pair").value == "atlas-7b vs ember-34b"  # where calibration moves most
    _switch(at, other)
    _clean(at)
    assert at.selectbox(key="wr_pair").options == ["sys-x vs sys-y", "sys-y vs sys-z"]
    # The sample's pair is gone: the page opens on this dataset's own opening pair, as a link to it does.
    pair = at.selectbox(key="wr_pair").value
    assert pair == _session(other, WIN_RATES).selectbox(key="wr_pair").value
    assert at.multiselect(key=f"wr_judges_{pair}").value == OTHER_JUDGES
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Raw judge win rate k"] != "n/a" and metrics["Dawid-Skene p (mode)"] != "n/a"
