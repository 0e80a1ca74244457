"""Session state and the current dataset: the workspace, which dataset this browser tab works on, its
tables, the shared sidebar, the selectors that follow the dataset, and the small helpers every page uses
(:func:`guard`, :func:`require_table`, :func:`download_csv`), and :func:`shell`, which ``app.py`` runs before
every page.

One dataset per browser session
-------------------------------
A session's dataset lives in its own ``st.session_state`` and in the page's URL (``?dataset=<id>``),
never in the workspace: choosing a dataset changes only this tab, a reload (or a shared link) restores
it from the URL, and another session never sees it. ``app.py`` writes the parameter back on each run (the
sidebar reads :func:`current_id`), because Streamlit's page navigation drops the query string. The parameter
is not a widget bound to the URL (``bind="query-params"``): it also names an upload still waiting for its
column mapping, which no selector offers, and the home page's buttons change it. A session that has chosen
nothing opens the workspace's only dataset when there is exactly one, and otherwise asks
(:func:`require_table`).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, NamedTuple, Sequence

import pandas as pd
import streamlit as st

from ..columns import COMPARISONS, RATINGS
from ..data.export import csv_safe, safe_file_name
from ..data.store import NEEDS_MAPPING, READY, DatasetInfo, Workspace, default_path
from ..errors import DataError, NotApplicable, WorkspaceError
from ..text import md
from . import cache
from .cache import Dataset
from .layout import figure_format_control
from .messages import app_message

_KEY = "evalcore_dataset_id"
#: The URL query parameter that holds this tab's dataset.
PARAM = "dataset"
_SEEN = "evalcore_options_of_"
_OPENING = "evalcore_opening_choice_of_"
TABLE_LABEL = {RATINGS: "pointwise ratings", COMPARISONS: "pairwise comparisons"}
#: The landing page's file (``app.py`` serves it at the root URL).
HOME = "app_pages/0_Home.py"


def workspace() -> Workspace:
    """The workspace of this server (``EVALCORE_WORKSPACE`` or the default location)."""
    return cache.workspace_at(str(default_path()))


@contextlib.contextmanager
def guard(what: str = "This step") -> Iterator[None]:
    """Show a user-caused problem as one message instead of a traceback."""
    try:
        yield
    except NotApplicable as exc:  # nothing is wrong with the data: the method does not apply to it
        st.info(md(app_message(exc)), icon=":material/info:")
    except (DataError, WorkspaceError) as exc:
        st.error(md(app_message(exc)), icon=":material/error:")
    except Exception as exc:  # a bug must not show a traceback, but must be visible
        st.error(f"{what} failed unexpectedly ({type(exc).__name__}: {md(str(exc)[:200])}). This is a bug in "
                 "evalcore; your data is safe in the workspace.", icon=":material/bug_report:")


def datasets() -> list[DatasetInfo]:
    return workspace().list_datasets()


def _ready() -> list[DatasetInfo]:
    return [d for d in datasets() if d.status == READY]


# --------------------------------------------------------------------------- this session's dataset


def chosen_id() -> str | None:
    """The dataset this session asked for: its own choice, else the URL's ``?dataset=`` (a reload or a
    shared link). It may name a dataset that no longer exists; :func:`current_id` checks."""
    did = st.session_state.get(_KEY)
    if did is None:
        did = st.query_params.get(PARAM) or None
        if did is not None:
            st.session_state[_KEY] = did
    return did


def current_id() -> str | None:
    """The ready dataset this session works on, or None (nothing chosen, or the choice is gone).

    With nothing chosen and exactly one ready dataset in the workspace, that one becomes this
    session's choice. The URL's query parameter is kept in step on every call.
    """
    ready = {d.id for d in _ready()}
    did = chosen_id()
    if did is None and len(ready) == 1:
        did = next(iter(ready))
        st.session_state[_KEY] = did
    if did not in ready:
        return None
    if st.query_params.get(PARAM) != did:
        st.query_params[PARAM] = did
    return did


def pending_upload() -> DatasetInfo | None:
    """The upload this session asked for (``?dataset=``) when it still awaits its column mapping."""
    did = chosen_id()
    return next((d for d in datasets() if d.id == did and d.status == NEEDS_MAPPING), None) if did else None


def missing_id() -> str | None:
    """The dataset this session asked for when it is not (or no longer) a ready dataset of the workspace."""
    did = chosen_id()
    return did if did is not None and did not in {d.id for d in _ready()} else None


def set_current(dataset_id: str | None) -> None:
    """Make ``dataset_id`` this session's dataset (None: none), here and in the URL; no other session sees it."""
    st.session_state[_KEY] = dataset_id
    if dataset_id is None:
        st.query_params.pop(PARAM, None)
    else:
        st.query_params[PARAM] = dataset_id


def current_info() -> DatasetInfo | None:
    did = current_id()
    if did is None:
        return None
    return next((d for d in datasets() if d.id == did), None)


def current() -> Dataset:
    """The current dataset's handle; a :class:`DataError` when none is loaded."""
    info = current_info()
    if info is None:
        raise DataError("no dataset is chosen in this browser tab", fix="choose one in the sidebar or on the home page")
    return _handle(info)


def _handle(info: DatasetInfo) -> Dataset:
    return Dataset(str(workspace().path), info.id, info.updated.isoformat())


#: The source recorded for the bundled sample data (:func:`evalcore.ui.loading.sample_panel`).
SAMPLE_SOURCE = "sample_data/"


def is_sample() -> bool:
    """Whether this tab's dataset is the bundled sample, whose simulated truth is known."""
    info = current_info()
    return info is not None and info.source == SAMPLE_SOURCE


def current_table(kind: str) -> pd.DataFrame | None:
    """The current dataset's ``kind`` table (cached), or None if it has none."""
    info = current_info()
    if info is None or kind not in info.tables:
        return None
    return cache.table(_handle(info), kind)


def home_link(label: str = "Go to the home page") -> None:
    """A link to the landing page that keeps this tab's dataset."""
    did = current_id()
    if did is None and (pending := pending_upload()) is not None:
        did = pending.id  # the home page opens its column mapping
    st.page_link(HOME, label=label, icon=":material/home:", query_params={PARAM: did} if did else None)


def page_link(page: str, *, label: str, icon: str | None = None) -> None:
    """A link to another page (its file, as ``app.py`` declares it) that keeps this tab's dataset."""
    did = current_id()
    st.page_link(page, label=label, icon=icon, query_params={PARAM: did} if did else None)


def no_dataset_message(*, home: bool = False) -> str:
    """Why no dataset is open in this tab, and what to do (``home``: worded for the landing page)."""
    where = ("open one under **Saved datasets** or in the sidebar, or click **Load the sample data**" if home else
             "choose one in the sidebar, or open one on the home page")
    waiting = pending_upload()
    if waiting is not None:
        return (f"The upload this tab had open ('{md(waiting.name)}', id {waiting.id}) is still waiting for its column "
                "mapping. To go on, " + ("map its columns below and click **Import**." if home else
                                         "open the home page, map its columns and click **Import**."))
    gone = missing_id()
    if gone is not None:
        return (f"The dataset this tab had open (id {md(gone)}) is not in the workspace any more: it was deleted, or "
                f"the link is wrong. To go on, {where}.")
    if _ready():
        return f"No dataset is chosen in this browser tab yet: {where}."
    return ("No dataset is loaded yet. " + ("Start with **Load the sample data**: one click, and every page has "
            "something to show." if home else "Go to the **evalcore** home page and click **Load the sample "
            "data**, or upload a file."))


def require_table(kind: str) -> pd.DataFrame:
    """The current dataset's ``kind`` table, or a message and a stop when there is none."""
    try:
        frame = current_table(kind)
    except WorkspaceError as exc:
        stop_unusable(exc)
    if frame is None:
        info = current_info()
        if info is None:
            st.info(no_dataset_message(), icon=":material/info:")
        else:
            st.info(f"This page needs {TABLE_LABEL[kind]}; the dataset '{md(info.name)}' has none. "
                    "Choose a dataset that has them in the sidebar, or load one on the home page.",
                    icon=":material/info:")
        home_link()
        st.stop()
    return frame


# --------------------------------------------------------------------------- selectors that follow the dataset


def choices(key: str, options: Sequence, default: Sequence) -> list:
    """Fit a multiselect's state to ``options`` before the widget with ``key`` is drawn; returns the options.

    The user's choices that are still options are kept; when none is left because the options
    changed (another dataset, another grouping), ``default`` (those of its values that are options)
    is used. An empty selection the user made on these same options stays empty, so that the
    page can say "pick at least one". Draw the widget without ``default``: its state holds it.
    """
    opts = list(options)
    seen = st.session_state.get(_SEEN + key)
    st.session_state[_SEEN + key] = opts
    fallback = [v for v in default if v in opts]
    picked = st.session_state.get(key)
    if picked is None:
        st.session_state[key] = fallback
        return opts
    valid = [v for v in picked if v in opts]
    if not valid and (picked or seen != opts):
        st.session_state[key] = fallback
    elif len(valid) != len(picked):
        st.session_state[key] = valid
    return opts


def choice(key: str, options: Sequence, default: Any = None) -> list:
    """Fit a selectbox's (or radio's) state to ``options`` before the widget with ``key`` is drawn.

    The user's choice stays while it is an option; otherwise ``default`` (if it is one) or the first
    option is chosen. Returns the options; draw the widget without ``index``: its state holds it.
    """
    opts = list(options)
    if opts and st.session_state.get(key) not in opts:
        st.session_state[key] = default if default in opts else opts[0]
    return opts


def in_url(key: str, options: Sequence, default: Any = None, *, slider: bool = False) -> dict[str, Any]:
    """The options, opening choice and key of a selectbox or radio (``slider``: a select_slider) whose choice
    the address bar keeps: ``st.selectbox(label, **in_url(key, options, default))``. A reload or a shared link
    reopens that choice.

    The widget is bound to the query parameter ``key`` (Streamlit's ``bind="query-params"``): Streamlit reads
    the parameter when the page opens (a value that is not an option is dropped) and writes it on every
    change, leaving it out while the choice is the opening one, ``default`` (else the first option). Two
    cases Streamlit leaves to us, handled here by setting the widget's state: a choice that is no longer an
    option (another dataset, another grouping) becomes the opening one, as with :func:`choice` (Streamlit's
    own reset would leave the old value in the address bar); and when the opening choice moves (it follows
    the data or other controls) while the widget keeps its own, that choice is written to the address bar,
    which would otherwise reopen the new opening choice.
    """
    opts = list(options)
    index = opts.index(default) if default in opts else 0
    opening = opts[index] if opts else None
    opened = st.session_state.get(_OPENING + key, opening)
    st.session_state[_OPENING + key] = opening
    bound: dict[str, Any] = {"options": opts, "key": key, "bind": "query-params"}
    if opts and key in st.session_state:
        value = st.session_state[key]
        # Without ``index``/``value`` in this run: Streamlit warns when a widget gets both a default and a state.
        if value not in opts:
            st.session_state[key] = opening
            return bound
        if opened != opening:
            st.session_state[key] = value
            return bound
    return {**bound, "value": opening} if slider else {**bound, "index": index}


# --------------------------------------------------------------------------- sidebar and page


def _switch() -> None:
    set_current(st.session_state["sidebar_dataset"])


def sidebar() -> None:
    """The sidebar every page shares: which dataset this tab has open, and a switcher (this tab only)."""
    with st.sidebar:
        _dataset_panel()
        st.divider()
        figure_format_control()


def _dataset_panel() -> None:
    """Which dataset this tab has open, and a switcher (this tab only)."""
    st.markdown("### Current dataset")
    if workspace().read_only:
        st.warning(md(workspace().read_only_message()), icon=":material/lock:")
    ready = _ready()
    info = current_info()
    if not ready:
        st.caption("None yet: load the sample data or upload a file on the home page.")
        return
    names = {d.id: d.name for d in ready}
    # The widget follows this tab's dataset (which other controls may change), and a pick in it
    # changes this tab's dataset: sync before drawing, act in the callback.
    st.session_state["sidebar_dataset"] = info.id if info else None
    st.selectbox("Dataset", list(names), format_func=names.get, key="sidebar_dataset",
                 placeholder="Choose a dataset", label_visibility="collapsed", on_change=_switch,
                 help="Changes the dataset of this browser tab only; the link in the address bar keeps it.")
    if info:
        for kind, n in info.tables.items():
            st.caption(f"{TABLE_LABEL[kind].capitalize()}: {n:,} rows")
        if info.source:
            st.caption(f"Source: {md(info.source)}")


def stop_unusable(exc: WorkspaceError) -> None:
    """Say why the workspace cannot be used, with the fix, and end this run: nothing on the page can work."""
    st.error(md(app_message(exc)), icon=":material/database:")
    # The sidebar's "Current dataset" heading is drawn before the workspace is opened: say why nothing follows.
    st.sidebar.caption("None: the workspace cannot be opened (the message on the page says why and what to do).")
    st.stop()


def shell(title: str, *, icon: str = "⚖️") -> None:
    """Page config and the shared sidebar: ``app.py`` calls it on every run, before the page.

    The sidebar is the first to open the workspace: when it cannot be used (locked by another program,
    unreadable, in a folder that cannot be written), every page shows that one message and its fix, here,
    instead of Streamlit's "This app has encountered an error", and the page does not run.
    """
    # ``icon`` is an emoji: Streamlit draws it in the browser, while a ":material/..." favicon is fetched from
    # fonts.gstatic.com on every page (the app must work offline).
    st.set_page_config(page_title=title, page_icon=icon, layout="wide")
    try:
        sidebar()
    except WorkspaceError as exc:
        stop_unusable(exc)


def _parquet(frame: pd.DataFrame) -> bytes:
    """``frame`` as Parquet bytes; a column of mixed objects (no Parquet type) is written as text."""
    import io

    buf = io.BytesIO()
    try:
        frame.to_parquet(buf, index=False)
    except (ValueError, TypeError, NotImplementedError):  # pyarrow's errors subclass these
        mixed = [c for c in frame.columns if frame[c].dtype == object]
        buf = io.BytesIO()
        frame.astype({c: "string" for c in mixed}).to_parquet(buf, index=False)
    return buf.getvalue()


def download_csv(frame: pd.DataFrame, *, file_name: str, label: str = "Download CSV", key: str | None = None) -> None:
    """Downloads of ``frame``: CSV with spreadsheet formulas neutralised, and Parquet (typed, for code).

    The files are made when a button is clicked, not on every run: on a large table the CSV's formula check
    alone took seconds per rerun. The file name is made safe for every system (no ``:`` or ``/`` from a
    dataset or judge name).
    """
    file_name = safe_file_name(file_name)
    st.download_button(label, lambda: csv_safe(frame).to_csv(index=False).encode("utf-8"), file_name=file_name,
                       mime="text/csv", key=key, icon=":material/download:", on_click="ignore")
    st.download_button("… as Parquet", lambda: _parquet(frame), file_name=file_name.rsplit(".", 1)[0] + ".parquet",
                       mime="application/vnd.apache.parquet", key=None if key is None else f"{key}_parquet",
                       icon=":material/download:", type="tertiary", on_click="ignore")


#: The flag rule, as the pages state it (docs/flag-rule.md).
FLAG_RULE = ("A result is flagged when its test in the direction that means harm is significant after controlling "
             "the false discovery rate at 5% across every test in this report (Benjamini-Hochberg q ≤ 0.05); an "
             "effect in the other direction is shown, not flagged.")


class AuditOptions(NamedTuple):
    """The controls an audit page (Agreement, Bias) reads before asking for its analysis."""

    by: list
    judges: list
    n_boot: int
    seed: int
