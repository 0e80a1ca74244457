"""The row pass of :func:`evalcore.pointwise.agreement.units.count_units`, the factorisations behind the
patterns, and the measures' passes over resamples (sums by category and gathers, :func:`cat_sums`, :func:`take`;
alpha's sums, :func:`alpha_sums`; the chance agreements and F1, :func:`share_sums`, :func:`f1_sums`; tau-b and
rho, :func:`rank_stats`), compiled by numba;
:class:`evalcore.pointwise.agreement.passes.NumpyPasses` has the same in numpy.

Why hand-written: the same counts come from numpy as a dozen passes over the ratings
(bincounts, fancy assignment, first occurrences), about 30 ms on a million ratings; one
compiled pass does it in a few. On a million ratings that is the difference between the
agreement table taking longer than reading the file and not (docs/performance.md).
``cache=True`` makes the compilation (about a second) happen once per machine. The bitmap passes
that pick the rows to hash are :mod:`evalcore.data._hashkernel`'s.

The measures' passes replace numpy's dozen full passes over (groups, resamples, patterns) arrays (a temporary
of 19 MB each on HANNA's table) by one, each resample's row staying in the cache. They give numpy's numbers to the
last bit: the same operations on each element, and where numpy sums inexact terms along the last axis, its
pairwise summation (:func:`_pairwise_sum`); sums of whole and half numbers are exact in any order.

The tests check :func:`unit_counts` against a pandas ``groupby`` and ``pivot`` of the same
ratings, and every pass against numpy's.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["integer_scale", "unit_counts", "first_rows", "first_mismatch", "dense_factorize", "family_keys",
           "cat_sums", "take", "alpha_sums", "share_sums", "f1_sums", "rank_stats", "warm_up"]


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


@numba.njit(cache=True, nogil=True)
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """numpy's sum of at most 128 contiguous float64: 8 accumulators, combined pairwise, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def _pairwise_sum(a: np.ndarray, n: int, frames: np.ndarray, left: np.ndarray) -> float:
    """``a[:n].sum()`` as numpy sums a contiguous float64 row along the last axis (``pairwise_sum`` in numpy's
    ``loops_utils.h.src``): blocks of at most 128 (:func:`_block_sum`), and longer rows cut in two at a multiple
    of 8 near the middle, the halves' sums added. The same additions in the same order, so the same bits.

    The halves go on an explicit stack (``frames`` (64, 3) ints: start, length, state; ``left`` (64,) floats: a
    left half's sum), not recursion: numba's on-disk cache does not reload recursive functions safely.
    """
    if n <= 128:
        return _block_sum(a, 0, n)
    top = 0
    frames[0, 0], frames[0, 1], frames[0, 2] = 0, n, 0
    value = 0.0
    returning = False
    while True:
        lo, size = frames[top, 0], frames[top, 1]
        half = size // 2
        half -= half % 8
        if not returning:  # a new frame: its left half first
            frames[top, 2] = 1
            if half > 128:
                top += 1
                frames[top, 0], frames[top, 1], frames[top, 2] = lo, half, 0
                continue
            value = _block_sum(a, lo, half)
            returning = True
        elif frames[top, 2] == 1:  # value is the left half's sum: the right half next
            left[top] = value
            frames[top, 2] = 2
            if size - half > 128:
                top += 1
                frames[top, 0], frames[top, 1], frames[top, 2] = lo + half, size - half, 0
                returning = False
                continue
            value = left[top] + _block_sum(a, lo + half, size - half)
            top -= 1
        else:  # value is the right half's sum
            value = left[top] + value
            top -= 1
        if top < 0:
            return value


@numba.njit(cache=True, nogil=True)
def _count_types(C: np.ndarray, typ: np.ndarray, rows: np.ndarray) -> int:
    """Number the distinct rows of ``C`` (K, h) into ``typ`` (K,), their counts into ``rows``; returns how many.

    A row is looked up among the first 64 types only (a few raters on a few categories give a few dozen), so
    the cost stays O(K h) per group; a row past them is a type of its own, which only costs speed.
    """
    K, h = C.shape
    T = 0
    for k in range(K):
        found = -1
        for t in range(min(T, 64)):
            same = True
            for c in range(h):
                if rows[t, c] != C[k, c]:
                    same = False
                    break
            if same:
                found = t
                break
        if found < 0:
            found = T
            rows[T, :] = C[k, :]
            T += 1
        typ[k] = found
    return T


@numba.njit(cache=True, nogil=True)
def _alpha_row(row: np.ndarray, m: np.ndarray, buf: np.ndarray, frames: np.ndarray, left: np.ndarray, out: np.ndarray,
               at: int) -> None:
    """One resample's sums over the q categories, as numpy computes them (``row`` = marg[g, r]): the
    mid-cumulative positions ``m`` (a running sum, as ``np.cumsum``), and into ``out[:, at]`` N = sum marg,
    sum marg**2, sum marg * m**2 and sum marg * m, each summed as numpy sums a row."""
    q = len(row)
    cum = 0.0
    for c in range(q):
        cum = row[c] if c == 0 else cum + row[c]
        m[c] = cum - row[c] / 2.0
    out[1, at] = 0.0 + _pairwise_sum(row, q, frames, left)
    for c in range(q):
        buf[c] = row[c] * row[c]
    out[2, at] = 0.0 + _pairwise_sum(buf, q, frames, left)
    for c in range(q):
        buf[c] = row[c] * (m[c] * m[c])
    out[3, at] = 0.0 + _pairwise_sum(buf, q, frames, left)
    for c in range(q):
        buf[c] = row[c] * m[c]
    out[4, at] = 0.0 + _pairwise_sum(buf, q, frames, left)


@numba.njit(cache=True, nogil=True)
def alpha_sums(W: np.ndarray, marg: np.ndarray, human: np.ndarray, cols: np.ndarray, extra: np.ndarray,
               inv: np.ndarray) -> np.ndarray:
    """The sums of Krippendorff's alpha over resamples (:func:`evalcore.pointwise.agreement.measures._alphas`),
    (5, G, R): the ordinal :math:`x^\\top O x = \\sum_k W_{grk} a_{gk} ((\\sum_c C_{gkc} m_{grc})^2 -
    \\sum_c C_{gkc} m_{grc}^2)`, then N, :math:`\\sum_c n_c^2`, :math:`\\sum_c n_c m_c^2` and
    :math:`\\sum_c n_c m_c` of the pairable values per category ``marg`` (G, R, q) and their mid-cumulative
    positions m (:func:`_alpha_row`).

    The counts are ``human`` (G, K, h) on the categories ``cols`` plus one rating of category ``extra`` (G, K)
    (-1: none); ``inv`` (G, K) is :math:`1/(n_u - 1)`. The inner sums over c are of whole and half numbers
    (exact), their human part computed once per distinct row of counts (:func:`_count_types`); each term is
    then ``((a * a - b) * inv) * W`` and the terms are summed as numpy sums a row: numpy's numbers to the last
    bit, in one pass over W without its six (G, R, K) temporaries, nor the (G, R, q) ones.
    """
    G, R, K = W.shape
    q = marg.shape[2]
    h = len(cols)
    out = np.empty((5, G, R))
    terms, m, buf = np.empty(K), np.empty(q), np.empty(q)
    frames, left = np.empty((64, 3), np.int64), np.empty(64)
    typ, rows = np.empty(K, np.int64), np.empty((K, h))
    a_of, b_of = np.empty(K), np.empty(K)
    for g in range(G):
        T = _count_types(human[g], typ, rows)
        for r in range(R):
            _alpha_row(marg[g, r], m, buf, frames, left, out[:, g], r)
            for t in range(T):
                a = 0.0
                b = 0.0
                for c in range(h):
                    a += rows[t, c] * m[cols[c]]
                    b += rows[t, c] * (m[cols[c]] * m[cols[c]])
                a_of[t] = a
                b_of[t] = b
            for k in range(K):
                a = a_of[typ[k]]
                b = b_of[typ[k]]
                e = extra[g, k]
                if e >= 0:
                    a += m[e]
                    b += m[e] * m[e]
                terms[k] = ((a * a - b) * inv[g, k]) * W[g, r, k]
            out[0, g, r] = 0.0 + _pairwise_sum(terms, K, frames, left)
    return out


@numba.njit(cache=True, nogil=True)
def share_sums(S: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """With the shares :math:`\\pi = S / rated` (``safe_div``), :math:`\\sum_c \\pi_c^2` and
    :math:`\\sum_c \\pi_c (1 - \\pi_c)`, (2, G, R): Fleiss' and Gwet's chance agreement
    (:func:`evalcore.pointwise.agreement.measures._human_measures`), summed as numpy sums a row."""
    G, R, q = S.shape
    out = np.empty((2, G, R))
    sq, var = np.empty(q), np.empty(q)
    frames, left = np.empty((64, 3), np.int64), np.empty(64)
    for g in range(G):
        for r in range(R):
            d = rated[g, r]
            for c in range(q):
                p = S[g, r, c] / d if d != 0.0 else np.nan
                if not np.isfinite(p):
                    p = np.nan
                sq[c] = p * p
                var[c] = p * (1.0 - p)
            out[0, g, r] = 0.0 + _pairwise_sum(sq, q, frames, left)
            out[1, g, r] = 0.0 + _pairwise_sum(var, q, frames, left)
    return out


@numba.njit(cache=True, nogil=True)
def f1_sums(r: np.ndarray, c: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """:math:`\\sum_k F1_k r_k` with :math:`F1_k = 2 tp_k / (r_k + c_k)` (0 where both are 0), :math:`\\sum_k r_k
    c_k` and :math:`\\sum_k r_k`, (3, G, R): the weighted F1 and Cohen's chance agreement
    (:func:`evalcore.pointwise.agreement.measures._kappas_f1`), summed as numpy sums a row."""
    G, R, q = r.shape
    out = np.empty((3, G, R))
    f1r, rc = np.empty(q), np.empty(q)
    frames, left = np.empty((64, 3), np.int64), np.empty(64)
    for g in range(G):
        for i in range(R):
            for k in range(q):
                s = r[g, i, k] + c[g, i, k]
                f1 = 2.0 * tp[g, i, k] / s if s > 0.0 else 0.0
                f1r[k] = f1 * r[g, i, k]
                rc[k] = r[g, i, k] * c[g, i, k]
            out[0, g, i] = 0.0 + _pairwise_sum(f1r, q, frames, left)
            out[1, g, i] = 0.0 + _pairwise_sum(rc, q, frames, left)
            out[2, g, i] = 0.0 + _pairwise_sum(r[g, i], q, frames, left)
    return out


@numba.njit(cache=True, nogil=True)
def _tau_row(w: np.ndarray, a: np.ndarray, b: np.ndarray, P: int, B: int, below: np.ndarray, pre: np.ndarray
             ) -> float:
    """tau-b of one resample of a group's P points (weights ``w``, ranks ``a`` and ``b`` < B among the group's
    distinct x and y, in order of x as :func:`evalcore.pointwise.agreement.measures._points` gives them), as
    :func:`evalcore.stats.kendall.tau_b_table` computes it from their contingency table.

    The table's rows (one x) in order: each point adds its weight times that of the rows above with a smaller y,
    minus that with a larger y (from the columns' totals so far, ``below``, and their running sums, ``pre``).
    With whole-number weights every sum is exact, so this order gives tau_b_table's numbers.
    """
    below[:B] = 0.0
    S = 0.0
    above = 0.0
    n1 = 0.0
    p = 0
    while p < P:
        run = 0.0
        for j in range(B):
            pre[j] = run
            run += below[j]
        first = p
        row = 0.0
        while p < P and a[p] == a[first]:
            t = w[p]
            if t != 0.0:
                S += t * (2.0 * pre[b[p]] + below[b[p]] - above)
                row += t
            p += 1
        for i in range(first, p):
            below[b[i]] += w[i]
        above += row
        n1 += row * (row - 1.0)
    n2 = 0.0
    for j in range(B):
        n2 += below[j] * (below[j] - 1.0)
    n0 = above * (above - 1.0) / 2.0
    den = (n0 - n1 / 2.0) * (n0 - n2 / 2.0)
    if not den > 0.0:
        return np.nan
    tau = S / np.sqrt(den)
    return tau if np.isfinite(tau) else np.nan


@numba.njit(cache=True, nogil=True)
def _ratio(a: float, b: float) -> float:
    """:func:`evalcore.stats.numeric.safe_div` of two floats: a / b, NaN where that is not finite (b = 0
    included: numba's division by zero would raise)."""
    if b == 0.0:
        return np.nan
    out = a / b
    return out if np.isfinite(out) else np.nan


@numba.njit(cache=True, nogil=True)
def _midranks(w: np.ndarray, at: np.ndarray, S: np.ndarray, out: np.ndarray) -> None:
    """Each point's midrank: the weight of smaller values, plus half that of its own plus 1/2 (0.5 on padding)."""
    S[:] = 0.0
    for p in range(len(w)):
        if at[p] >= 0:
            S[at[p]] += w[p]
    below = 0.0
    for v in range(len(S)):
        s = S[v]
        S[v] = below + (s + 1.0) / 2.0  # exact: whole and half numbers
        below += s
    for p in range(len(w)):
        out[p] = S[at[p]] if at[p] >= 0 else 0.5


@numba.njit(cache=True, nogil=True)
def rank_stats(Wc: np.ndarray, ax: np.ndarray, ay: np.ndarray):
    """Kendall's tau-b and Spearman's rho (G, R) of weighted points (weights ``Wc`` (G, R, Kc), ranks ``ax``,
    ``ay`` (G, Kc) among the group's distinct x and y, -1 on padding), as
    :func:`evalcore.pointwise.agreement.measures._rank_stats` computes them in numpy, to the last bit.

    Per resample: the contingency table's sweep for tau-b (:func:`_tau_row`), the margins' midranks
    (:func:`_midranks`), then the weighted Pearson correlation of the midranks with numpy's operations and
    pairwise sums over the Kc points, padding included.
    """
    G, R, Kc = Wc.shape
    tau = np.full((G, R), np.nan)
    rho = np.empty((G, R))
    Ax, Ay = ax.max() + 1, ay.max() + 1
    below, pre, Sx, Sy = np.empty(max(Ay, 1)), np.empty(max(Ay, 1)), np.empty(Ax), np.empty(Ay)
    rx, ry = np.empty(Kc), np.empty(Kc)
    tc, tx, ty = np.empty(Kc), np.empty(Kc), np.empty(Kc)
    frames, left = np.empty((64, 3), np.int64), np.empty(64)
    for g in range(G):
        P = 0
        B = 0
        for p in range(Kc):
            if ax[g, p] >= 0:
                P += 1
                B = max(B, ay[g, p] + 1)
        for r in range(R):
            w = Wc[g, r]
            if P:
                tau[g, r] = _tau_row(w, ax[g], ay[g], P, B, below, pre)
            _midranks(w, ax[g], Sx, rx)
            _midranks(w, ay[g], Sy, ry)
            N = 0.0
            sx = 0.0
            sy = 0.0
            for p in range(Kc):  # exact sums
                N += w[p]
                sx += w[p] * rx[p]
                sy += w[p] * ry[p]
            mx, my = _ratio(sx, N), _ratio(sy, N)
            for p in range(Kc):
                dx = rx[p] - mx
                dy = ry[p] - my
                tc[p] = (w[p] * dx) * dy
                tx[p] = w[p] * (dx * dx)
                ty[p] = w[p] * (dy * dy)
            cov = 0.0 + _pairwise_sum(tc, Kc, frames, left)
            vx = 0.0 + _pairwise_sum(tx, Kc, frames, left)
            vy = 0.0 + _pairwise_sum(ty, Kc, frames, left)
            rho[g, r] = _ratio(cov, np.sqrt(vx * vy))
    return tau, rho


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
    alpha_sums(w3, np.zeros((1, 1, 1)), np.zeros((1, 2, 1)), np.zeros(1, np.int64), c2, f2)
    share_sums(np.zeros((1, 1, 1)), np.zeros((1, 1)))
    f1_sums(*(np.zeros((1, 1, 1)),) * 3)
    rank_stats(w3, c2, c2)
