"""Which passes count the agreement table, numba's or numpy's: the package's one process-wide setting.

The row pass of :func:`evalcore.pointwise.agreement.units.count_units`, the factorisations behind
the patterns and two sums of the measures over resamples (by category, and a gather) have two implementations
with the same results: numba's (:mod:`._kernel`), a few
milliseconds on a million ratings but about 0.7 s to load numba, and numpy's (:class:`NumpyPasses`),
free to start but several passes over the data. Which pays depends on the table's size *and on the
process*: whether numba is already loaded, and whether the process lives on to compute more tables.
That is why the choice is a module setting (:data:`LOAD_FROM`, lowered by :func:`one_shot`) and not an
argument: it describes the process, not a call, and it is read from the worker threads that hash the
columns. It is the package's only mutable state; the rest of this module is constants and functions.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
import pandas as pd

# From this many rows (or units) on, the passes are numba's once they are loaded (the app loads them in the
# background for large datasets); below it, numpy's.
COMPILED_FROM = 200_000
# From this many rows a process loads numba for the compiled passes if they are not loaded yet. A long-lived
# process (the app, a notebook) loads them from COMPILED_FROM on and then gains on every table; a one-shot
# process (:func:`one_shot`, the CLI) only from ONE_SHOT_LOAD_FROM on: loading numba costs about 0.7 s, and on
# 1M rows the compiled passes save about 0.17 s (count_units 0.035 s against numpy's 0.2 s).
LOAD_FROM = COMPILED_FROM
ONE_SHOT_LOAD_FROM = 5_000_000
#: Threads for the work that releases the GIL (pyarrow's hashing, numpy's draws and matrix products):
#: two use both cores of a small machine; more would only take turns on them.
WORKERS = 2


def one_shot() -> None:
    """Declare this process short-lived (one table, then exit, as a CLI command): below
    :data:`ONE_SHOT_LOAD_FROM` rows it counts with numpy rather than load numba, unless numba's passes are
    already loaded."""
    global LOAD_FROM
    LOAD_FROM = max(LOAD_FROM, ONE_SHOT_LOAD_FROM)


def compiled(n: int) -> bool:
    """Whether ``n`` rows (or units) take the compiled passes: large enough, and numba already loaded or
    worth loading in this process (:data:`LOAD_FROM`)."""
    return n >= COMPILED_FROM and (n >= LOAD_FROM or f"{__package__}._kernel" in sys.modules)


def kernel():
    """The compiled passes (:mod:`._kernel`), imported on first use: numba takes a moment."""
    from . import _kernel

    return _kernel


class NumpyPasses:
    """The passes of :mod:`._kernel` in numpy, with the same results, for small tables."""

    @staticmethod
    def first_rows(code: np.ndarray, n_codes: int) -> np.ndarray:
        # One unbuffered pass (np.minimum.at), not np.unique's sort: 10-25x faster on 1M rows.
        n = len(code)
        out = np.full(n_codes, n, np.int64)
        np.minimum.at(out, code, np.arange(n, dtype=np.int64))
        out[out == n] = -1
        return out

    @staticmethod
    def integer_scale(score: np.ndarray, max_span: int) -> tuple[int, np.ndarray]:
        if not len(score):
            return 0, np.zeros(0, np.int64)
        lo, hi = int(score.min()), int(score.max())
        if hi - lo >= max_span:
            return 0, np.zeros(0, np.int64)
        used = np.bincount(score - lo, minlength=hi - lo + 1) > 0
        return lo, np.where(used, np.cumsum(used) - 1, -1)

    @staticmethod
    def unit_counts(item, crit, rater, score, lo, table, slot, n_items, n_crit, q, n_judges):
        dense = item * n_crit + crit
        present = np.bincount(dense, minlength=n_items * n_crit) > 0
        unit_ids = np.flatnonzero(present)
        u = (np.cumsum(present) - 1)[dense]
        s, c = slot[rater], table[score - lo]
        h, j = s == -1, s >= 0
        counts = np.bincount(u[h] * q + c[h], minlength=len(unit_ids) * q).reshape(len(unit_ids), q)
        judge_codes = np.full((n_judges, len(unit_ids)), -1, np.int64)
        judge_codes[s[j], u[j]] = c[j]
        used = np.zeros((n_crit, q), dtype=bool)
        used[crit[h], c[h]] = True
        return unit_ids, counts, judge_codes, used

    @staticmethod
    def first_mismatch(item: np.ndarray, first_row: np.ndarray, code: np.ndarray) -> int:
        bad = np.flatnonzero(code != code[first_row[item]])
        return int(bad[0]) if len(bad) else -1

    @staticmethod
    def dense_factorize(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
        seen, first = np.unique(key, return_index=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(space, np.int64)
        rank[seen[order]] = np.arange(len(seen))
        return rank[key], first[order]

    @staticmethod
    def family_keys(ukey: np.ndarray, judge: np.ndarray, rows: np.ndarray, q1: int) -> np.ndarray:
        return ukey[rows] * q1 + judge[rows] + 1

    @staticmethod
    def cat_sums(W: np.ndarray, cat: np.ndarray, weight: np.ndarray, q: int) -> np.ndarray:
        G, R, _ = W.shape
        idx = np.arange(G * R, dtype=np.intp).reshape(G, R, 1) * q + np.where(cat >= 0, cat, 0)[:, None, :]
        return np.bincount(idx.ravel(), (W * weight[:, None, :]).ravel(), minlength=G * R * q).reshape(G, R, q)

    @staticmethod
    def take(m: np.ndarray, cat: np.ndarray, out: np.ndarray) -> np.ndarray:
        padded = np.concatenate([m, np.zeros((*m.shape[:2], 1))], axis=-1)  # category -1: the zero column
        for g in range(len(cat)):
            out[g] += padded[g][:, cat[g]]
        return out


def passes(n: int):
    """numba's passes for ``n`` rows or units where :func:`compiled` says so, numpy's otherwise."""
    return kernel() if compiled(n) else NumpyPasses


def factorize_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of non-negative integer keys in order of first appearance, and each code's first position.

    Where the keys are dense (the usual case: a few groups times a few count patterns), a
    direct-address table in one compiled pass replaces hashing: about 5x faster than
    ``pd.factorize``.
    """
    n = len(key)
    space = int(key.max()) + 1 if n else 0
    if space > 4 * n + 1024:
        code, _ = pd.factorize(key)
        first = np.full(int(code.max()) + 1 if n else 0, -1)
        first[code[::-1]] = np.arange(n)[::-1]
        return code, first
    return passes(n).dense_factorize(key, space)


def one_blas_thread():
    """A context in which BLAS (numpy's matrix products) runs on one thread: the agreement table's families
    already run on :data:`WORKERS` threads, and BLAS's own threads on top of them take turns on the same cores
    (measured on HANNA's table: twice the CPU time). ``threadpoolctl`` (a dependency of scikit-learn) sets it,
    for the whole process while the context lasts; without it, nothing changes."""
    try:
        from threadpoolctl import threadpool_limits  # here, not at import: only a table with resamples needs it
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def warm_up() -> None:
    """Compile (or load from numba's cache) the compiled passes, e.g. in a background thread."""
    from ...data.hashing import warm_up as warm_up_hashing

    kernel().warm_up()
    warm_up_hashing()
