"""The pass behind :func:`evalcore.pointwise.superficial.correlation_curve`, compiled by numba: the sums of
Kendall's tau-b and Spearman's rho for every alpha and every bootstrap resample.

Why hand-written: the general :func:`evalcore.stats.tau_b` and :func:`evalcore.stats.spearman_rho`
rebuild a weighted contingency table (or a merge plan) and the midranks of all resamples for
each alpha, about 18 s per judge on HANNA (6 criteria x 21 alphas x 1,000 resamples). Here the
order of ``P_hat`` is sorted once per alpha (numpy, outside), and a resample is only a vector of
multiplicities over the same units: one pass in the order of ``P_hat`` with a Fenwick tree over
the humans' distinct scores (Knight 1966's count of concordant and discordant pairs, weighted)
gives :math:`n_c - n_d` and the weighted midranks, for a block of resamples side by side (the
inner loops run over resamples, contiguous, which the compiler vectorises). The concordance sums
are whole numbers, exact in floating point; the Spearman sums run unit by unit, the order in
which numpy sums them, so that every number equals the general path's to the last bit (the tests
check this on HANNA and on seeded data with ties). ``cache=True`` makes the compilation (a few
seconds) happen once per machine.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["curve_sums", "warm_up"]

#: Resamples handled side by side: the block's arrays (units x BLOCK) stay in the core's cache.
BLOCK = 32


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _ranked_pass(w, order, start, yc, ranks, tree, count, sums):
    """One pass over the units in x order (``order``; ``start`` marks each run of equal x) for the
    resamples side by side in ``w`` (units x B): the weighted midranks into ``ranks`` (units x B),
    and per resample into ``sums`` rows: 0 :math:`n_c - n_d` against the y codes ``yc``, 1 the
    total weight, 2 :math:`\\sum_v w_v (w_v - 1)` over the runs, 3 :math:`\\sum w \\cdot rank`.

    A run is compared with the units before it (the Fenwick tree ``tree``, qy + 1 rows, and
    ``count``, the weight so far per y code), then added: pairs tied in x are never compared,
    pairs tied in y count neither way. A unit drawn w times holds w tied copies, so its midrank
    is the weight below its value plus (w_v + 1) / 2.
    """
    n, B = w.shape
    qy = count.shape[0]
    tree[:] = 0.0
    count[:] = 0.0
    sums[:] = 0.0
    lower, g = np.empty(B), np.empty(B)
    k = 0
    while k < n:
        e = k + 1
        while e < n and not start[e]:
            e += 1
        g[:] = 0.0
        for j in range(k, e):
            u, c = order[j], yc[order[j]]
            lower[:] = 0.0  # weight before with a smaller y: Fenwick prefix of codes 0..c-1
            i = c
            while i > 0:
                for b in range(B):
                    lower[b] += tree[i, b]
                i -= i & -i
            for b in range(B):  # concordant minus discordant; whole numbers, exact
                sums[0, b] += w[u, b] * (lower[b] - (sums[1, b] - lower[b] - count[c, b]))
                g[b] += w[u, b]
        for j in range(k, e):
            u, c = order[j], yc[order[j]]
            for b in range(B):
                ranks[u, b] = sums[1, b] + (g[b] + 1.0) / 2.0
                count[c, b] += w[u, b]
            i = c + 1
            while i <= qy:
                for b in range(B):
                    tree[i, b] += w[u, b]
                i += i & -i
        for b in range(B):
            sums[3, b] += g[b] * (sums[1, b] + (g[b] + 1.0) / 2.0)
            sums[1, b] += g[b]
            sums[2, b] += g[b] * (g[b] - 1.0)
        k = e


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _moments(w, rx, mean, ry, my, out_cov, out_var):
    """``sum(w * dx * dy)`` and ``sum(w * dx * dx)`` with ``dx = rx - mean`` (and ``dy = ry - my``), unit by
    unit as numpy sums the rows of a (units x B) array."""
    n, B = w.shape
    out_cov[:] = 0.0
    out_var[:] = 0.0
    for i in range(n):
        for b in range(B):
            dx = rx[i, b] - mean[b]
            t = w[i, b] * dx
            out_cov[b] += t * (ry[i, b] - my[b])
            out_var[b] += t * dx


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fill_block(Wt, r0, w):
    """Resamples ``r0 .. r0 + B`` of ``Wt`` (R x units) as columns of ``w`` (units x B)."""
    n, B = w.shape
    for b in range(B):
        for i in range(n):
            w[i, b] = Wt[r0 + b, i]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def curve_sums(Wt, orders, starts, yorder, ystart, yc, qy, spearman):
    """Per x variant a (one alpha) and resample r (a row of ``Wt``, (R, n) weights):

    ``S[a, r]`` (:math:`n_c - n_d`), ``n0[r]`` (:math:`N(N-1)/2`), ``n1[a, r]`` and ``n2[r]`` (pairs tied
    in x, in y) of Kendall's tau-b, and with ``spearman`` the weighted-midrank sums ``cov[a, r]``,
    ``varx[a, r]``, ``vary[r]`` of Spearman's rho. ``orders[a]`` sorts the units by variant a,
    ``starts[a]`` marks its runs of equal values; ``yorder``, ``ystart`` the same for y, whose codes
    (0..qy-1) are ``yc``.
    """
    R, n = Wt.shape
    A = orders.shape[0]
    S, n1 = np.zeros((A, R)), np.zeros((A, R))
    cov, varx = np.full((A, R), np.nan), np.full((A, R), np.nan)
    n0, n2, vary = np.zeros(R), np.zeros(R), np.full(R, np.nan)
    nul = np.zeros(n, np.int64)
    my = np.empty(0)
    for r0 in range(0, R, BLOCK):
        B = min(BLOCK, R - r0)
        w, rx, ry = np.empty((n, B)), np.empty((n, B)), np.empty((n, B))
        tree, count, sums = np.empty((qy + 1, B)), np.empty((max(qy, 1), B)), np.empty((4, B))
        c, v = np.empty(B), np.empty(B)
        _fill_block(Wt, r0, w)
        # Variant -1 is y itself (its midranks and ties). Results are stored element by element: numba
        # compiles slice assignments slowly (about 4 s more on the first run on a machine).
        for a in range(-1, A):
            order, start, codes, ranks = (yorder, ystart, nul, ry) if a < 0 else (orders[a], starts[a], yc, rx)
            _ranked_pass(w, order, start, codes, ranks, tree, count, sums)
            mean = sums[3] / sums[1]
            if a < 0:
                my = mean
                for b in range(B):
                    n0[r0 + b] = sums[1, b] * (sums[1, b] - 1.0) / 2.0
                    n2[r0 + b] = sums[2, b] / 2.0
            else:
                for b in range(B):
                    S[a, r0 + b] = sums[0, b]
                    n1[a, r0 + b] = sums[2, b] / 2.0
            if spearman:
                _moments(w, ranks, mean, ry, my, c, v)
                for b in range(B):
                    if a < 0:
                        vary[r0 + b] = v[b]
                    else:
                        cov[a, r0 + b] = c[b]
                        varx[a, r0 + b] = v[b]
    return S, n0, n1, n2, cov, varx, vary


def warm_up() -> None:
    """Compile (or load from numba's cache) the pass, with the argument types the curve uses."""
    i64, flag = np.zeros(2, np.int64), np.ones(2, np.bool_)
    curve_sums(np.ones((1, 2)), i64[None, :], flag[None, :], i64, flag, i64, 1, True)
