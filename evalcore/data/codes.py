"""Column codes: a column factorised once (codes and distinct values, as :func:`pandas.factorize`)
and reused within a block.

Validation and the summary look at a million-row column through its distinct values: every string
operation runs on the few distinct values, and the answer is taken back by code. Within one
:func:`shared_codes` block (a validate or summarize call, the reading and validating of one file)
a column's factorisation is computed once; the reader (:mod:`evalcore.data.io`) can hand in one
that it already has (:func:`remember`), and the agreement table's counting takes it instead of hashing
the column again (:func:`evalcore.data.hashing.known_codes`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, Sequence, TypeVar

import numpy as np
import pandas as pd

_MEMO: ContextVar[dict | None] = ContextVar("evalcore_schema_codes", default=None)
T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def shared_codes() -> Iterator[None]:
    """Reuse each column's factorisation inside the block (validate, summarize, analyses of one frame).

    The memo holds the columns it describes and is dropped when the block ends.
    """
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def memo_get(key: tuple) -> object | None:
    memo = _MEMO.get()
    hit = memo.get(key[1:]) if memo is not None else None
    return hit[1] if hit is not None and hit[0] is key[0] else None


def memo_put(key: tuple, value: object) -> None:
    memo = _MEMO.get()
    if memo is not None:
        memo[key[1:]] = (key[0], value)  # keeps the keyed object alive, so its id is not reused


def data_of(s: pd.Series) -> object | None:
    """What identifies a column's contents: its Arrow data (immutable, and shared by the frames that
    reorder or subset columns of one another); None for other columns, which are not memoised."""
    # pandas' private attribute, on purpose: the memo needs the *same* object for every frame that shares the
    # column, and the public route (pyarrow.array(s.array)) unwraps a one-chunk column into a new object each
    # time. Should pandas rename it, getattr gives None and columns are just factorised again (no memo).
    return getattr(s.array, "_pa_array", None)


def factorize(s: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pandas.factorize(s)`` (codes, -1 for missing; distinct values in order of first appearance), memoised.

    Codes :func:`remember`-ed for a reordered column keep the original numbering, so they need not be in
    order of first appearance; they still map every row to its value.
    """
    arr = data_of(s)
    if arr is None:
        return pd.factorize(s)
    key = (arr, "codes", id(arr))
    hit = memo_get(key)
    if hit is None:
        hit = _factorize_now(s, arr)
        memo_put(key, hit)
    return hit  # type: ignore[return-value]


def _factorize_now(s: pd.Series, data) -> tuple[np.ndarray, pd.Index]:
    """What :func:`factorize` and :func:`prefactorize` compute for a column not yet in the memo."""
    return factorize_runs(s, data) or pd.factorize(s)


def prefactorize(columns: Sequence[pd.Series]) -> None:
    """Factorise these columns (as :func:`factorize`) on a few threads at once, into the block's memo.

    Arrow's hashing releases the GIL, so the text columns of a big file hash side by side: the five of a
    million-row shuffled CSV in 0.13 s on two threads against 0.23 s one after another. The codes are the same
    as :func:`factorize` computes, each column on its own. Outside a :func:`shared_codes` block, or with fewer
    than two columns to do or one core, nothing happens (the columns are factorised when asked, as before).
    Give the longest column to hash first (the item ids): it starts at once and the short ones fill the other
    threads.
    """
    if _MEMO.get() is None or _workers(2) < 2:
        return
    todo = {}
    for s in columns:
        arr = data_of(s)
        if arr is not None and id(arr) not in todo and memo_get((arr, "codes", id(arr))) is None:
            todo[id(arr)] = (s, arr)
    if len(todo) < 2:
        return
    done = on_threads(lambda job: _factorize_now(*job), list(todo.values()))
    for (_, arr), hit in zip(todo.values(), done):
        memo_put((arr, "codes", id(arr)), hit)  # here, in the block's own context: threads have their own


def _workers(jobs: int) -> int:
    """Threads for ``jobs`` jobs: one per core, at most 4."""
    return min(4, os.cpu_count() or 1, jobs)


def on_threads(fn: Callable[[T], R], jobs: Sequence[T]) -> list[R]:
    """``[fn(job) for job in jobs]``, on a thread per core (at most 4) where there are two or more of each.

    For work that releases the GIL (Arrow's hashing and ``take``, numpy's gathers): the columns of a big file
    side by side. One job, or one core, runs here as a plain loop.
    """
    workers = _workers(len(jobs))
    if workers < 2:
        return [fn(job) for job in jobs]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, jobs))


def factorize_runs(s: pd.Series, data) -> tuple[np.ndarray, pd.Index] | None:
    """``pandas.factorize(s)`` from the first row of each run of equal values; None when runs are short.

    An export sorted by item repeats each ``item_id`` on consecutive rows: factorising one row per
    run and repeating its code is exact and hashes a fraction of the strings.
    """
    import pyarrow.compute as pc

    n = len(data)
    probe = min(n, 4096)
    if n < 4096 or _run_starts(pc, data.slice(0, probe), probe).size > probe // 4:
        return None
    starts = _run_starts(pc, data, n)
    if starts.size > n // 4:
        return None
    codes, uniques = pd.factorize(s.iloc[starts])
    # int32: half the fresh memory of pandas' codes (first touches of memory are costly in a new process).
    return np.repeat(codes.astype(np.int32), np.diff(np.append(starts, n))), uniques


def _run_starts(pc, data, n: int) -> np.ndarray:
    """Rows where a new run of equal values starts (a missing value starts its own run)."""
    same = pc.fill_null(pc.equal(data.slice(1), data.slice(0, n - 1)), False).to_numpy(zero_copy_only=False)
    return np.flatnonzero(np.concatenate(([True], ~np.asarray(same, dtype=bool))))


def remember(s: pd.Series, codes: np.ndarray, uniques: pd.Index) -> pd.Series:
    """Record ``s``'s factorisation (known from the column it was derived from) and return ``s``."""
    arr = data_of(s)
    if arr is not None:
        memo_put((arr, "codes", id(arr)), (codes, uniques))
    return s


def same_codes(new: pd.Series, old: pd.Series) -> pd.Series:
    """``new``, which holds ``old``'s values in another dtype, with ``old``'s factorisation if it is known."""
    arr = data_of(old)
    hit = memo_get((arr, "codes", id(arr))) if arr is not None else None
    if hit is not None:
        codes, uniques = hit  # type: ignore[misc]
        remember(new, codes, pd.Index(pd.array(uniques, dtype=new.dtype)))
    return new
