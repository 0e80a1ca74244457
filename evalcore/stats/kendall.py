"""Kendall's tau-b of weighted observations, for the data and every bootstrap resample at once.

The item bootstrap of :mod:`evalcore.stats.bootstrap` gives each item a weight per resample (how
often it was drawn). :func:`tau_b` computes Kendall's tau-b (Kendall 1945; variant 'b' of
``scipy.stats.kendalltau``) of observations that belong to items, for every column of an
``(items, resamples)`` weight matrix, exactly and without expanding the resampled data: from
weighted contingency tables (:func:`tau_b_table`) when the two variables take few distinct values,
else by a merge-sort count of concordant and discordant pairs (:func:`tau_merge`, Knight 1966).

>>> import numpy as np
>>> from scipy.stats import kendalltau
>>> x, y = np.array([1.0, 2.0, 2.0, 3.0, 1.0]), np.array([0.5, 0.7, 0.1, 0.9, 0.2])
>>> Wt = np.array([[1.0, 2.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # 5 items; data, one resample
>>> got = tau_b(Wt, np.arange(5), x, y)
>>> bool(abs(got[0] - kendalltau(x, y).statistic) < 1e-12)
True
>>> picked = np.repeat(np.arange(5), Wt[:, 1].astype(int))  # the resample written out
>>> bool(abs(got[1] - kendalltau(x[picked], y[picked]).statistic) < 1e-12)
True
"""

from __future__ import annotations

import numpy as np

from .numeric import codes, safe_div

__all__ = ["tau_b", "tau_b_table", "tau_merge"]

_CHUNK = 4_000_000  # cells of a bootstrap table handled at once (bounds memory)


def _cumsum(X: np.ndarray, axis: int) -> np.ndarray:
    """np.cumsum, but row by row when slices are long: numpy's cumsum over a leading axis is slow."""
    n = X.shape[axis]
    if n < 2 or X.size // n < 256:
        return np.cumsum(X, axis=axis)
    out = X.copy()
    v = np.moveaxis(out, axis, 0)
    for i in range(1, n):
        v[i] += v[i - 1]
    return out


def tau_b_table(T: np.ndarray) -> np.ndarray:
    """Kendall's tau-b from weighted contingency tables of two ordered variables.

    ``T`` has shape ``(A, B, R)``: ``T[a, b, r]`` is the (weighted) number of observations
    with the a-th smallest x and the b-th smallest y in resample r. Then

    .. math:: \\tau_b = (n_c - n_d) / \\sqrt{(n_0 - n_1)(n_0 - n_2)},

    :math:`n_c - n_d = \\sum_{ab} T_{ab} (\\sum_{a'<a, b'<b} T_{a'b'} - \\sum_{a'<a, b'>b} T_{a'b'})`,
    :math:`n_0 = N(N-1)/2`, :math:`n_1 = \\sum_a r_a(r_a-1)/2`, :math:`n_2 = \\sum_b c_b(c_b-1)/2`
    with row and column totals r, c (Kendall 1945; ``scipy.stats.kendalltau``, variant 'b').
    Cost O(A B R) through cumulative sums, with no loop over pairs of observations.
    """
    P = _cumsum(T, 0)
    cols = P[-1].copy()  # (B, R) column totals
    P -= T  # P[a, b] = sum over a' < a
    X = _cumsum(P, 1)
    total = X[:, -1:, :].copy()
    # sum_{a'<a, b'<b} - sum_{a'<a, b'>b} = (cumP - P) - (P_total - cumP)
    X *= 2
    X -= P
    X -= total
    del P
    S = np.einsum("abr,abr->r", T, X)
    rows = T.sum(axis=1)
    N = cols.sum(axis=0)
    n0 = N * (N - 1) / 2
    n1 = (rows * (rows - 1)).sum(axis=0) / 2
    n2 = (cols * (cols - 1)).sum(axis=0) / 2
    den = (n0 - n1) * (n0 - n2)
    return np.where(den > 0, safe_div(S, np.sqrt(np.where(den > 0, den, 1.0))), np.nan)


def _tau_sparse(Wt: np.ndarray, M: sparse.csr_matrix, A: int, B: int) -> np.ndarray:
    """tau-b of tables ``T[:, :, r] = (M^T Wt[:, r]).reshape(A, B)``, in chunks of resamples."""
    out = np.empty(Wt.shape[1])
    MT = M.T.tocsr()
    step = max(1, _CHUNK // max(1, A * B))
    for s in range(0, Wt.shape[1], step):
        T = np.asarray(MT @ Wt[:, s:s + step]).reshape(A, B, -1)
        out[s:s + step] = tau_b_table(T)
    return out


def _tau_once(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """tau-b of one weighting with whole-number weights (the point estimate, a training fold):
    ``scipy.stats.kendalltau`` of the observations repeated by their weights. One scipy call (C,
    O(N log N)) replaces the table or merge machinery built for many resamples, which costs tens of times
    more for a single column: the point estimates of a curve over 21 alphas and the cross-validation folds
    are such calls. None for fractional or negative weights (the general path handles them)."""
    keep = np.rint(w)
    if not np.array_equal(keep, w) or (w < 0).any():
        return None
    from scipy.stats import kendalltau  # here, not at import: the CLI's start-up does not need scipy

    keep = keep.astype(np.int64)
    xs, ys = np.repeat(x, keep), np.repeat(y, keep)
    if len(xs) < 2 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return np.full(1, np.nan)
    return np.array([kendalltau(xs, ys, variant="b").statistic], dtype=float)


def tau_b(Wt: np.ndarray, local: np.ndarray, x: np.ndarray, y: np.ndarray,
           count: np.ndarray | None = None) -> np.ndarray:
    """Kendall's tau-b of weighted observations, for the data and every resample at once.

    Observation k is ``(x[k], y[k])``, belongs to item ``local[k]`` and is counted
    ``count[k] * Wt[local[k], r]`` times in resample r (``Wt`` is (items, R)). Exact, with
    one of two algorithms: a contingency table (:func:`tau_b_table`) when x and y take few
    distinct values, else a merge-sort count of concordant and discordant pairs
    (:func:`tau_merge`, O(R N log N)).
    """
    R = Wt.shape[1]
    if len(x) < 2:
        return np.full(R, np.nan)
    xc, xv = codes(x)
    yc, yv = codes(y)
    qx, qy = len(xv), len(yv)
    if qx < 2 or qy < 2:
        return np.full(R, np.nan)
    cnt = np.ones(len(x)) if count is None else np.asarray(count, dtype=float)
    once = _tau_once(Wt[:, 0][local] * cnt, x, y) if R == 1 else None
    if once is not None:
        return once
    N = len(x)
    # The table costs O(qx qy R), the merge O(N log N R) with a larger constant; measured on 1,000
    # resamples the merge wins once the table has more cells than about N log2 N.
    if qx * qy <= N * max(1.0, np.log2(N)):
        from scipy import sparse  # here, not at import: the CLI's start-up does not need scipy

        M = sparse.csr_matrix((cnt, (local, xc * qy + yc)), shape=(Wt.shape[0], qx * qy))
        return _tau_sparse(Wt, M, qx, qy)
    return tau_merge(Wt, local, xc, yc, cnt)


def _dominance_plan(x: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """Index plan to sum, for each position j, the weights of earlier positions i with x_i < x_j.

    Merge-sort levels: at level L, positions are in blocks of 2L, and each right half looks
    up the left half of its block (sorted by x). Every pair i < j meets at exactly one level.
    """
    N = len(x)
    xs = x - x.min()
    X = int(xs.max()) + 1
    p = np.arange(N)
    plan = []
    L = 1
    while L < N:
        block = p // (2 * L)
        right = (p // L) % 2 == 1
        li, ri = np.flatnonzero(~right), np.flatnonzero(right)
        keys = block[li] * X + xs[li]
        srt = np.argsort(keys, kind="stable")
        ls, keys = li[srt], keys[srt]
        g = np.searchsorted(keys, block[ri] * X + xs[ri], side="left")
        start = np.searchsorted(keys, block[ri] * X, side="left")
        plan.append((ls, ri, g, start))
        L *= 2
    return plan


def _dominance_sum(plan: list[tuple[np.ndarray, ...]], Wo: np.ndarray) -> np.ndarray:
    """sum_j w_j sum_{i<j, x_i<x_j} w_i per resample, Wo (r, N) in the plan's order."""
    S = np.zeros(Wo.shape[0])
    for ls, ri, g, start in plan:
        cum = np.zeros((Wo.shape[0], len(ls) + 1))
        np.cumsum(Wo[:, ls], axis=1, out=cum[:, 1:])
        S += np.einsum("rj,rj->r", Wo[:, ri], cum[:, g] - cum[:, start])
    return S


def tau_merge(Wt: np.ndarray, local: np.ndarray, xc: np.ndarray, yc: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """tau-b by counting, in y order, the earlier observations with smaller / larger x (Knight 1966).

    With observations sorted by y (ties broken by x descending), the weight of earlier
    observations with a smaller x is :math:`\\sum_{y_i<y_j, x_i<x_j} w_i` (tied y never count);
    sorted with ties by x ascending, the earlier ones with a larger x give the discordant
    pairs. Ties enter the denominator through the weight totals per x and per y value.
    """
    from scipy import sparse  # here, not at import: the CLI's start-up does not need scipy

    n_items, R = Wt.shape
    N = len(xc)
    of = np.lexsort((-xc, yc))
    ob = np.lexsort((xc, yc))
    plan_f, plan_b = _dominance_plan(xc[of]), _dominance_plan(-xc[ob])
    Mx = sparse.csr_matrix((cnt, (local, xc)), shape=(n_items, int(xc.max()) + 1)).T.tocsr()
    My = sparse.csr_matrix((cnt, (local, yc)), shape=(n_items, int(yc.max()) + 1)).T.tocsr()
    out = np.empty(R)
    step = max(1, _CHUNK // (4 * N))
    for s in range(0, R, step):
        Wc = Wt[:, s:s + step]
        Wo = np.ascontiguousarray((Wc[local] * cnt[:, None]).T)
        S = _dominance_sum(plan_f, Wo[:, of]) - _dominance_sum(plan_b, Wo[:, ob])
        tot = Wo.sum(axis=1)
        wx, wy = np.asarray(Mx @ Wc), np.asarray(My @ Wc)
        n0 = tot * (tot - 1) / 2
        n1 = (wx * (wx - 1)).sum(axis=0) / 2
        n2 = (wy * (wy - 1)).sum(axis=0) / 2
        den = (n0 - n1) * (n0 - n2)
        out[s:s + step] = np.where(den > 0, safe_div(S, np.sqrt(np.where(den > 0, den, 1.0))), np.nan)
    return out
