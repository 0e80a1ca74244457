"""Caching: every cache of the dashboard, keyed by a :class:`Dataset` (workspace path, id, stamp).

Two mechanisms:

- **Streamlit's caches** for what a page reads on every run and is cheap to rebuild: a dataset's
  tables (:func:`table`), the agreement units (:func:`units`), the system pairs (:func:`pairs`) and
  one pair's verdicts (:func:`pair`).
- **The result store** (:func:`cached_result`) for analyses (see :mod:`evalcore.ui.analyses`): a
  result is looked up in memory, then (for a stored analysis) in the workspace, and otherwise
  computed under a progress bar and stored. ``st.cache_data`` cannot do this: it cannot replay a
  progress bar drawn from inside the cached function, nor persist a result across restarts.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
import streamlit as st

from ..columns import COMPARISONS, RATINGS
from ..data.store import Workspace

#: Results kept in memory per store (stored analyses; plot tables kept in memory only).
MEMORY_ENTRIES = 32

Progress = Callable[[float], None]


@dataclass(frozen=True)
class Dataset:
    """One version of a stored dataset: its workspace, its id, and when it last changed.

    Every cache is keyed by these three strings, so a re-imported dataset is never served stale.
    """

    path: str
    id: str
    stamp: str


#: Seconds a page waits for a workspace another program holds before saying so. Sessions of this server never
#: wait on each other (they share one handle); only another process can hold the file, and a page left blank
#: for the library's default 20 s reads as a hang.
LOCK_TIMEOUT = 3.0


@st.cache_resource(show_spinner=False)
def workspace_at(path: str) -> Workspace:
    """The workspace at ``path``, opened once per server (an unusable one raises, and is tried again next run)."""
    return Workspace(path, lock_timeout=LOCK_TIMEOUT)


# --------------------------------------------------------------------------- Streamlit's caches


@st.cache_data(show_spinner="Reading the dataset...", max_entries=8)
def _table(path: str, dataset_id: str, kind: str, stamp: str) -> pd.DataFrame:
    return workspace_at(path).load_table(dataset_id, kind)


def table(data: Dataset, kind: str) -> pd.DataFrame:
    """The dataset's ``kind`` table (``ratings`` or ``comparisons``)."""
    return _table(data.path, data.id, kind, data.stamp)


@st.cache_resource(show_spinner="Counting ratings per item...", max_entries=4)
def _units(path: str, dataset_id: str, stamp: str):
    from ..pointwise.agreement.units import count_units

    # Per-unit sufficient statistics: built once per dataset, shared by every grouping. From the cached
    # table (the home page has read it), not the workspace again: that read was most of the first open.
    return count_units(_table(path, dataset_id, RATINGS, stamp))


def units(data: Dataset):
    """:func:`evalcore.pointwise.agreement.units.count_units` of the dataset's ratings (once per dataset)."""
    return _units(data.path, data.id, data.stamp)


@st.cache_data(show_spinner=False, max_entries=8)
def _pairs(path: str, dataset_id: str, stamp: str) -> pd.DataFrame:
    from ..pairwise.pairs import pairs as system_pairs

    return system_pairs(_table(path, dataset_id, COMPARISONS, stamp))


def pairs(data: Dataset) -> pd.DataFrame:
    """:func:`evalcore.pairwise.pairs.pairs` of the dataset's comparisons."""
    return _pairs(data.path, data.id, data.stamp)


@st.cache_resource(show_spinner=False, max_entries=64)
def _pair(path: str, dataset_id: str, stamp: str, a: str, b: str, judges: tuple | None, ties: str, seed: int):
    from ..pairwise.pairs import pair_data

    return pair_data(_table(path, dataset_id, COMPARISONS, stamp), a, b, judges=judges, ties=ties, seed=seed)


def pair(data: Dataset, a: str, b: str, *, judges: tuple | None, ties: str, seed: int):
    """:func:`evalcore.pairwise.pairs.pair_data` of the dataset (per pair and options)."""
    return _pair(data.path, data.id, data.stamp, a, b, judges, ties, seed)


@st.cache_resource(show_spinner="Preparing the judge's scores...", max_entries=16)
def _superficial(path: str, dataset_id: str, stamp: str, kind: str, judge: str, q: str, by: tuple):
    frame = _table(path, dataset_id, kind, stamp)
    if kind == COMPARISONS:
        from ..pairwise.superficial import superficial_data

        return superficial_data(frame, judge=judge, q=q, by=by)
    from ..pointwise.superficial import pointwise_data

    return pointwise_data(frame, judge=judge, q=q, by=by)


def superficial(data: Dataset, kind: str, *, judge: str, q: str, by: tuple):
    """:func:`evalcore.pairwise.superficial.superficial_data` (comparisons) or
    :func:`evalcore.pointwise.superficial.pointwise_data` (ratings): what the alpha slider recomputes from."""
    return _superficial(data.path, data.id, data.stamp, kind, judge, q, tuple(by))


# --------------------------------------------------------------------------- the result store


@st.cache_resource(show_spinner=False)
def _memory(stored: bool) -> "OrderedDict[tuple, Any]":
    return OrderedDict()


def result_key(name: str, version: int, params: dict) -> str:
    """The key of one result: ``name:v<version>:`` and the parameters as sorted JSON."""
    return f"{name}:v{version}:" + json.dumps(params, sort_keys=True, default=str)


def has_result(data: Dataset, key: str, *, stored: bool = True) -> bool:
    """Whether :func:`cached_result` would answer without computing (from memory or the workspace)."""
    with _MEMORY_LOCK:
        if (data.id, data.stamp, key) in _memory(stored):
            return True
    return stored and key in workspace_at(data.path).result_keys(data.id)


def _with_progress(compute: Callable[[Progress], Any], label: str) -> Any:
    bar = st.progress(0.0, text=label)
    try:
        return compute(lambda f: bar.progress(min(max(f, 0.0), 1.0), text=label))
    finally:  # a failed computation's message is shown alone, not under a bar left half-way
        bar.empty()


def _with_spinner(compute: Callable[[Progress], Any], label: str | None) -> Any:
    with st.spinner(label) if label else contextlib.nullcontext():
        return compute(lambda f: None)


#: The in-memory results are shared by every session and by the background threads: a lookup's test and
#: read, and an insertion with its evictions, each happen under this lock (an eviction between another
#: thread's ``in`` and its read raised KeyError).
_MEMORY_LOCK = threading.Lock()
_MISSING = object()


def _recall(data: Dataset, key: str, *, stored: bool) -> Any:
    """The remembered result (marked most recently used), or ``_MISSING``."""
    mem = _memory(stored)
    slot = (data.id, data.stamp, key)
    with _MEMORY_LOCK:
        out = mem.get(slot, _MISSING)
        if out is not _MISSING:
            mem.move_to_end(slot)
        return out


def _remember(data: Dataset, key: str, out: Any, *, stored: bool) -> None:
    mem = _memory(stored)
    with _MEMORY_LOCK:
        mem[(data.id, data.stamp, key)] = out
        while len(mem) > MEMORY_ENTRIES:
            mem.popitem(last=False)


class Background:
    """A result being computed in a background thread: its progress, and its outcome when done.

    The thread stores the result like :func:`cached_result` does, so a page rerun (or another session)
    that asks for it later finds it ready even if the session that started it has moved on.
    """

    def __init__(self, future: Future, progress: list) -> None:
        self.future, self._progress = future, progress

    @property
    def fraction(self) -> float:
        return self._progress[0]

    def done(self) -> bool:
        return self.future.done()

    def wait(self, timeout: float | None = None) -> Any:
        """The result (re-raising the computation's error), waiting up to ``timeout`` seconds."""
        return self.future.result(timeout=timeout)


_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalcore-result")
_RUNNING: dict[tuple, Background] = {}
_RUNNING_LOCK = threading.Lock()


def compute_in_background(data: Dataset, key: str, compute: Callable[[Progress], Any], *,
                          stored: bool = True) -> Background:
    """Start computing the result ``key`` in a background thread (or join the thread already computing it,
    from this session or another), and store it when done."""
    from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

    slot = (data.path, data.id, data.stamp, key)
    ctx = get_script_run_ctx()
    with _RUNNING_LOCK:
        running = _RUNNING.get(slot)
        if running is not None:
            return running
        progress = [0.0]

        def run() -> Any:
            # Streamlit's caches (the units, the tables) need the session's context in this thread.
            add_script_run_ctx(threading.current_thread(), ctx)
            try:
                out = compute(lambda f: progress.__setitem__(0, min(max(float(f), 0.0), 1.0)))
                if stored:
                    _keep(data, key, out)
                _remember(data, key, out, stored=stored)
                return out
            finally:
                with _RUNNING_LOCK:
                    _RUNNING.pop(slot, None)

        job = Background(_POOL.submit(run), progress)
        _RUNNING[slot] = job
        return job


def cached_result(data: Dataset, key: str, compute: Callable[[Progress], Any], *,
                  label: Callable[[], str] | None, stored: bool = True) -> Any:
    """The result ``key`` of the dataset: from memory, else from the workspace, else computed.

    ``compute(progress)`` gets a callback taking the fraction done. A stored result (a DataFrame
    or a JSON-able dict) is computed under a progress bar reading ``label()`` and saved in the
    workspace; one kept in memory only is computed under a spinner (none without a label).
    """
    out = _recall(data, key, stored=stored)
    if out is not _MISSING:
        return out
    ws = workspace_at(data.path)
    out = ws.load_result(data.id, key) if stored else None
    if out is None:
        text = label() if label else None
        out = _with_progress(compute, text or "Computing...") if stored else _with_spinner(compute, text)
        if stored:
            _keep(data, key, out)
    _remember(data, key, out, stored=stored)
    return out


def _keep(data: Dataset, key: str, out: Any) -> None:
    """Store a result in the workspace, unless it is read-only: then it is kept in memory only."""
    ws = workspace_at(data.path)
    if not ws.read_only:
        ws.save_result(data.id, key, out, meta={"stamp": data.stamp})
