"""Which passes count the agreement table, numba's or numpy's: the package's one process-wide setting.

The row pass of :func:`evalcore.pointwise.agreement.units.count_units`, the factorisations behind
the patterns and the measures' passes over resamples (sums by category, a gather, the ordinal alpha's pair sums,
tau-b and rho) have two implementations with the same results: numba's (:mod:`._kernel`), a few
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

from ...stats.kendall import tau_b_table
from ...stats.numeric import safe_div

# From this many rows (or units) on, the passes are numba's once they are loaded (the app loads them in the
# background for large datasets); below it, numpy's.
COMPILED_FROM = 200_000
# From this many rows a process loads numba for the compiled passes if they are not loaded yet. A long-lived
# process (the app, a notebook) loads them from COMPILED_FROM on and then gains on every table; a one-shot
# process (:func:`one_shot`, the CLI) only from ONE_SHOT_LOAD_FROM on: loading numba costs about 0.7 s, and on
# 1M rows the compiled passes save about 0.17 s (count_units 0.035 s against numpy's 0.2 s).
LOAD_FROM = COMPILED_FROM
ONE_SHOT_LOAD_FROM = 5_000_000
_TABLE_CELLS = 4_000_000  # cells of a rank table (points' x by y, per resample) handled at once: bounds memory
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
    """The passes of :mod:`._kernel` in numpy, with the same results, for small tables (and the tests' reference:
    the measures' passes are the numpy code the compiled ones replaced)."""

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

    @staticmethod
    def alpha_sums(W: np.ndarray, marg: np.ndarray, human: np.ndarray, cols: np.ndarray, extra: np.ndarray,
                   inv: np.ndarray) -> np.ndarray:
        m = np.cumsum(marg, axis=-1) - marg / 2.0  # (G, R, q)
        hT = human.transpose(0, 2, 1)
        Cm = np.matmul(m[..., cols], hT)  # (G, R, K): sum_c c_uc m_c (whole and half numbers: exact)
        Cm2 = np.matmul((m ** 2)[..., cols], hT)
        if (extra >= 0).any():
            NumpyPasses.take(m, extra, Cm)
            NumpyPasses.take(m ** 2, extra, Cm2)
        Cm *= Cm  # in place, the same operations as ((Cm ** 2 - Cm2) * inv * W): fewer passes over (G, R, K)
        Cm -= Cm2
        Cm *= inv[:, None, :]
        Cm *= W
        return np.stack([Cm.sum(axis=-1), marg.sum(axis=-1), (marg ** 2).sum(axis=-1), (marg * m ** 2).sum(axis=-1),
                         (marg * m).sum(axis=-1)])

    @staticmethod
    def share_sums(S: np.ndarray, rated: np.ndarray) -> np.ndarray:
        pi = safe_div(S, rated[..., None])
        return np.stack([(pi ** 2).sum(axis=-1), (pi * (1 - pi)).sum(axis=-1)])

    @staticmethod
    def f1_sums(r: np.ndarray, c: np.ndarray, tp: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(r + c > 0, 2 * tp / (r + c), 0.0)
        return np.stack([(f1 * r).sum(axis=-1), (r * c).sum(axis=-1), r.sum(axis=-1)])

    @staticmethod
    def rank_stats(Wc: np.ndarray, ax: np.ndarray, ay: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        G, R, Kc = Wc.shape
        tau = np.full((G, R), np.nan)
        for g in range(G):
            P = int((ax[g] >= 0).sum())
            if not P:
                continue
            a, b, w = ax[g, :P], ay[g, :P], Wc[g, :, :P]
            A, B = int(a.max()) + 1, int(b.max()) + 1
            step = max(1, _TABLE_CELLS // (A * B))
            for s in range(0, R, step):
                T = np.zeros((A, B, min(step, R - s)))
                T[a, b] = w[s:s + step].T
                tau[g, s:s + step] = tau_b_table(T)
        rx, ry = (_midranks(Wc, at) for at in (ax, ay))
        N = Wc.sum(axis=-1, keepdims=True)
        mx = safe_div((Wc * rx).sum(axis=-1, keepdims=True), N)
        my = safe_div((Wc * ry).sum(axis=-1, keepdims=True), N)
        dx, dy = rx - mx, ry - my
        cov = (Wc * dx * dy).sum(axis=-1)
        vx = (Wc * dx ** 2).sum(axis=-1)
        vy = (Wc * dy ** 2).sum(axis=-1)
        return tau, safe_div(cov, np.sqrt(vx * vy))


def _midranks(Wc: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Each point's midrank in each resample, (G, R, Kc), from its rank ``at`` among its group's distinct values:
    the weight of the smaller values plus half that of its own, plus 1/2 (0.5 on padding, weight 0)."""
    S = NumpyPasses.cat_sums(Wc, at, (at >= 0).astype(float), int(at.max()) + 1)  # the table's margin
    below = np.cumsum(S, axis=-1) - S
    out = NumpyPasses.take(below, at, np.zeros(Wc.shape))
    return out + (NumpyPasses.take(S, at, np.zeros(Wc.shape)) + 1) / 2


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
