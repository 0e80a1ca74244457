"""Spearman's rho of items with bootstrap weights, for the data and every resample at once.

An item drawn ``w`` times in a resample holds ``w`` tied copies, so its midrank is the weight of the
items with a smaller value plus ``(w_v + 1) / 2`` with ``w_v`` the weight of all items sharing its
value (Spearman 1904; ties by midranks, as :func:`scipy.stats.spearmanr`). Rho is Pearson's r of
the weighted midranks. Cost O(n R) after one sort, with no resampled data written out.

>>> import numpy as np
>>> from scipy.stats import spearmanr
>>> x, y = np.array([1.0, 2.0, 2.0, 3.0, 1.5]), np.array([0.5, 0.7, 0.1, 0.9, 0.2])
>>> W = np.array([[1.0, 2.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # data, one resample
>>> got = spearman_rho(W, x, y)
>>> bool(abs(got[0] - spearmanr(x, y).statistic) < 1e-12)
True
>>> picked = np.repeat(np.arange(5), W[:, 1].astype(int))
>>> bool(abs(got[1] - spearmanr(x[picked], y[picked]).statistic) < 1e-12)
True
"""

from __future__ import annotations

import numpy as np

from .numeric import codes, safe_div

__all__ = ["spearman_rho", "weighted_midranks"]


def weighted_midranks(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(n, R)`` midranks of the items' values ``x`` in each column of the weights ``W`` (n, R)."""
    from scipy import sparse  # here, not at import: the CLI's start-up does not need scipy

    c, v = codes(x)
    S = np.asarray(sparse.csr_matrix((np.ones(len(x)), (c, np.arange(len(x)))), shape=(len(v), len(x))) @ W)
    below = np.cumsum(S, axis=0) - S
    return (below + (S + 1) / 2)[c]


def spearman_rho(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of ``(x, y)`` per column of the item weights ``W`` (n, R); NaN when undefined."""
    W = np.asarray(W, dtype=float)
    if len(x) < 2:
        return np.full(W.shape[1], np.nan)
    rx, ry = weighted_midranks(W, x), weighted_midranks(W, y)
    N = W.sum(axis=0)
    mx, my = safe_div((W * rx).sum(axis=0), N), safe_div((W * ry).sum(axis=0), N)
    dx, dy = rx - mx, ry - my
    cov = (W * dx * dy).sum(axis=0)
    return safe_div(cov, np.sqrt((W * dx * dx).sum(axis=0) * (W * dy * dy).sum(axis=0)))
