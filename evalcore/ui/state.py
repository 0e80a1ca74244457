"""Session state and the current dataset: the workspace, which dataset this session works on, its
tables, the shared sidebar, and the small helpers every page uses (:func:`page`, :func:`guard`,
:func:`require_table`, :func:`download_csv`)."""

from __future__ import annotations

import contextlib
from typing import Iterator

import pandas as pd
import streamlit as st

from ..columns import COMPARISONS, RATINGS
from ..data.schema import csv_safe
from ..data.store import READY, DatasetInfo, Workspace, default_path
from ..errors import DataError, WorkspaceError
from . import cache
from .cache import Dataset

_KEY = "evalcore_dataset_id"
TABLE_LABEL = {RATINGS: "pointwise ratings", COMPARISONS: "pairwise comparisons"}


def workspace() -> Workspace:
    """The workspace of this server (``EVALCORE_WORKSPACE`` or the default location)."""
    return cache.workspace_at(str(default_path()))


@contextlib.contextmanager
def guard(what: str = "This step") -> Iterator[None]:
    """Show a user-caused problem as one message instead of a traceback."""
    try:
        yield
    except (DataError, WorkspaceError) as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # a bug must not show a traceback, but must be visible
        st.error(f"{what} failed unexpectedly ({type(exc).__name__}: {str(exc)[:200]}). This is a bug in "
                 "evalcore; your data is safe in the workspace.", icon=":material/bug_report:")


def datasets() -> list[DatasetInfo]:
    return workspace().list_datasets()


def current_id() -> str | None:
    """The dataset this session works on: its own choice, else the last one opened on this server."""
    ready = {d.id for d in datasets() if d.status == READY}
    did = st.session_state.get(_KEY)
    if did in ready:
        return did
    last = workspace().get_setting("current_dataset")
    if last in ready:
        st.session_state[_KEY] = last
        return last
    return None


def set_current(dataset_id: str | None) -> None:
    st.session_state[_KEY] = dataset_id
    workspace().set_setting("current_dataset", dataset_id)


def current_info() -> DatasetInfo | None:
    did = current_id()
    if did is None:
        return None
    return next((d for d in datasets() if d.id == did), None)


def current() -> Dataset:
    """The current dataset's handle; a :class:`DataError` when none is loaded."""
    info = current_info()
    if info is None:
        raise DataError("no dataset is loaded", fix="load one on the home page")
    return _handle(info)


def _handle(info: DatasetInfo) -> Dataset:
    return Dataset(str(workspace().path), info.id, info.updated.isoformat())


def current_table(kind: str) -> pd.DataFrame | None:
    """The current dataset's ``kind`` table (cached), or None if it has none."""
    info = current_info()
    if info is None or kind not in info.tables:
        return None
    return cache.table(_handle(info), kind)


def require_table(kind: str) -> pd.DataFrame:
    """The current dataset's ``kind`` table, or a message and a stop when there is none."""
    frame = current_table(kind)
    if frame is None:
        info = current_info()
        if info is None:
            st.info("No dataset is loaded yet. Go to the **evalcore** home page and click "
                    "**Load the sample data**, or upload a file.", icon=":material/info:")
        else:
            st.info(f"This page needs {TABLE_LABEL[kind]}; the dataset '{info.name}' has none. "
                    "Load a dataset that has them on the home page.", icon=":material/info:")
        st.page_link("app.py", label="Go to the home page", icon=":material/home:")
        st.stop()
    return frame


def sidebar() -> None:
    """The sidebar every page shares: which dataset is loaded, and a switcher."""
    with st.sidebar:
        st.markdown("### Current dataset")
        ready = [d for d in datasets() if d.status == READY]
        info = current_info()
        if not ready:
            st.caption("None yet: load the sample data or upload a file on the home page.")
            return
        ids = [d.id for d in ready]
        names = {d.id: d.name for d in ready}
        # The widget follows the current dataset (which other controls may change), and a
        # pick in it changes the current dataset: sync before drawing, act in the callback.
        st.session_state["sidebar_dataset"] = info.id if info else None
        st.selectbox("Dataset", ids, format_func=names.get, key="sidebar_dataset",
                     placeholder="Choose a dataset", label_visibility="collapsed",
                     on_change=lambda: set_current(st.session_state["sidebar_dataset"]))
        if info:
            for kind, n in info.tables.items():
                st.caption(f"{TABLE_LABEL[kind].capitalize()}: {n:,} rows")
            st.caption(f"Source: {info.source}")


def page(title: str, icon: str = ":material/balance:") -> None:
    """Page config and the shared sidebar; call first on every page."""
    st.set_page_config(page_title=f"{title} · evalcore", page_icon=icon, layout="wide")
    sidebar()


def download_csv(frame: pd.DataFrame, *, file_name: str, label: str = "Download CSV", key: str | None = None) -> None:
    """A CSV download of ``frame`` with spreadsheet formulas neutralised."""
    st.download_button(label, csv_safe(frame).to_csv(index=False).encode("utf-8"), file_name=file_name,
                       mime="text/csv", key=key, icon=":material/download:")
