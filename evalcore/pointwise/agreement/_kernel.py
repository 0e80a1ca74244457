"""The row pass of :func:`evalcore.pointwise.agreement.units.count_units`, the factorisations behind the
patterns, and the measures' sums by category and gathers over resamples (:func:`cat_sums`, :func:`take`), compiled
by numba; :class:`evalcore.pointwise.agreement.passes.NumpyPasses` has the same in numpy.

Why hand-written: the same counts come from numpy as a dozen passes over the ratings
(bincounts, fancy assignment, first occurrences), about 30 ms on a million ratings; one
compiled pass does it in a few. On a million ratings that is the difference between the
agreement table taking longer than reading the file and not (docs/performance.md).
``cache=True`` makes the compilation (about a second) happen once per machine. The bitmap passes
that pick the rows to hash are :mod:`evalcore.data._hashkernel`'s.

The tests check :func:`unit_counts` against a pandas ``groupby`` and ``pivot`` of the same
ratings, and every pass against numpy's.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["integer_scale", "unit_counts", "first_rows", "first_mismatch", "dense_factorize", "family_keys",
           "cat_sums", "take", "warm_up"]


@numba.njit(cache=True, nogil=True)
def first_rows(code: np.ndarray, n_codes: int) -> np.ndarray:
    """First row of each code (0..n_codes-1), -1 for codes that never occur; stops once all are seen."""
    out = np.full(n_codes, -1, np.int64)
    left = n_codes
    for i in range(len(code)):
        c = code[i]
        if out[c] < 0:
            out[c] = i
            left -= 1
            if left == 0:
                break
    return out


@numba.njit(cache=True, nogil=True)
def integer_scale(score: np.ndarray, max_span: int):
    """For integer scores: the smallest, and a table from ``score - lo`` to the category index.

    The categories are the distinct scores in order. Returns ``lo = 0`` and an empty table when
    the scores span more than ``max_span`` values.
    """
    n = len(score)
    if n == 0:
        return 0, np.zeros(0, np.int64)
    lo = score[0]
    hi = score[0]
    for i in range(n):
        v = score[i]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    if hi - lo >= max_span:
        return 0, np.zeros(0, np.int64)
    table = np.zeros(hi - lo + 1, np.int64)
    for i in range(n):
        table[score[i] - lo] = 1
    k = 0
    for v in range(len(table)):
        if table[v]:
            table[v] = k
            k += 1
        else:
            table[v] = -1
    return lo, table


@numba.njit(cache=True, nogil=True)
def unit_counts(item: np.ndarray, crit: np.ndarray, rater: np.ndarray, score: np.ndarray, lo: int,
                table: np.ndarray, slot: np.ndarray, n_items: int, n_crit: int, q: int, n_judges: int):
    """Per-unit human counts per category and each judge's category, in one pass over the ratings.

    A unit is ``item * n_crit + crit``; units are numbered in that order (items, then criteria),
    keeping only those with a rating. A rating's category is ``table[score - lo]``. ``slot[r]``
    is -1 for a human rater, the judge's row for a judge, and -2 for anything else.

    Returns
    -------
    unit_ids, counts, judge_codes, used
        The dense id of each unit, ``(n_units, q)`` human counts, ``(n_judges, n_units)``
        judge categories (-1 where absent), and ``(n_crit, q)`` whether a human gave that
        category on that criterion.
    """
    n = len(item)
    space = n_items * n_crit
    unit_of = np.zeros(space, np.int64)
    for i in range(n):
        unit_of[item[i] * n_crit + crit[i]] = 1
    n_units = 0
    for d in range(space):
        if unit_of[d]:
            unit_of[d] = n_units
            n_units += 1
        else:
            unit_of[d] = -1
    unit_ids = np.empty(n_units, np.int64)
    for d in range(space):
        if unit_of[d] >= 0:
            unit_ids[unit_of[d]] = d
    counts = np.zeros((n_units, q), np.int64)
    judge_codes = np.full((n_judges, n_units), -1, np.int64)
    used = np.zeros((n_crit, q), np.bool_)
    for i in range(n):
        u = unit_of[item[i] * n_crit + crit[i]]
        s = slot[rater[i]]
        c = table[score[i] - lo]
        if s == -1:
            counts[u, c] += 1
            used[crit[i], c] = True
        elif s >= 0:
            judge_codes[s, u] = c
    return unit_ids, counts, judge_codes, used


@numba.njit(cache=True, nogil=True)
def first_mismatch(item: np.ndarray, first_row: np.ndarray, code: np.ndarray) -> int:
    """First row whose ``code`` differs from that of its item's first row, or -1."""
    for i in range(len(item)):
        if code[i] != code[first_row[item[i]]]:
            return i
    return -1


@numba.njit(cache=True, nogil=True)
def dense_factorize(key: np.ndarray, space: int):
    """Codes of keys in ``[0, space)`` in order of first appearance, and each code's first position."""
    code_of = np.full(space, -1, np.int64)
    codes = np.empty(len(key), np.int64)
    first = np.empty(len(key), np.int64)
    k = 0
    for i in range(len(key)):
        c = code_of[key[i]]
        if c < 0:
            c = k
            code_of[key[i]] = k
            first[k] = i
            k += 1
        codes[i] = c
    return codes, first[:k].copy()


@numba.njit(cache=True, nogil=True)
def family_keys(ukey: np.ndarray, judge: np.ndarray, rows: np.ndarray, q1: int) -> np.ndarray:
    """``ukey[r] * q1 + judge[r] + 1`` for the rows ``r`` (one pass, no temporaries)."""
    out = np.empty(len(rows), np.int64)
    for k in range(len(rows)):
        r = rows[k]
        out[k] = ukey[r] * q1 + judge[r] + 1
    return out


@numba.njit(cache=True, nogil=True)
def cat_sums(W: np.ndarray, cat: np.ndarray, weight: np.ndarray, q: int) -> np.ndarray:
    """:math:`S_{grc} = \\sum_k W_{grk} w_{gk} [cat_{gk} = c]`, (G, R, q), in ``np.bincount``'s order: one pass, no
    index array, and without the GIL (numpy's bincount holds it, so two worker threads took turns).

    The same additions in the same order as ``np.bincount`` of :class:`.passes.NumpyPasses`, so the same sums to the
    last bit: ``cat`` -1 adds ``W * 0`` to category 0, as there.
    """
    G, R, K = W.shape
    out = np.zeros((G, R, q))
    for g in range(G):
        for r in range(R):
            for k in range(K):
                c = cat[g, k]
                out[g, r, c if c >= 0 else 0] += W[g, r, k] * weight[g, k]
    return out


@numba.njit(cache=True, nogil=True)
def take(m: np.ndarray, cat: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[g, r, k] += m[g, r, cat[g, k]]`` (0 where ``cat`` is -1), in place: numpy's gather and add, fused."""
    G, R, K = out.shape
    for g in range(G):
        for r in range(R):
            for k in range(K):
                c = cat[g, k]
                out[g, r, k] += m[g, r, c] if c >= 0 else 0.0
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) every pass, with the argument types count_units uses.

    The first time on a machine this takes about 2.5 s; after that, loading takes a fraction of
    a second. The landing page runs it in the background so that the Agreement page does not wait.
    """
    i64 = np.zeros(2, np.int64)
    ro64 = np.zeros(2, np.int64)
    ro64.flags.writeable = False  # pandas 3 hands out read-only views of integer columns
    first_rows(i64, 1)
    for score in (i64, ro64):
        lo, table = integer_scale(score, 10_000)
        unit_counts(i64, i64, i64, score, int(lo), table, np.full(1, -1, np.int64), 1, 1, 1, 1)
    first_mismatch(i64, np.zeros(1, np.int64), i64)
    dense_factorize(i64, 1)
    family_keys(i64, i64, i64, 2)
    w3, c2, f2 = np.zeros((1, 1, 2)), np.zeros((1, 2), np.int64), np.zeros((1, 2))
    cat_sums(w3, c2, f2, 1)
    take(w3, c2, np.zeros((1, 1, 2)))
