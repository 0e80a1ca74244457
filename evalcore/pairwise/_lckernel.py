"""The L1-penalised soft-label logistic fits of AlpacaEval's length-controlled GLM, compiled by numba.

:func:`evalcore.pairwise.superficial.alpacaeval_lc_exact` fits the two-weight model
``P(model preferred) = sigmoid(w_len x_i + w_0)`` 51 times per bootstrap resample (ten C on each of five folds,
then the refit at the chosen C). Each fit is the exact minimiser of liblinear's objective
``|w_len| + |w_0| + sum_i cw_i (softplus(z_i) - p_i z_i)`` by proximal Newton steps: the 2x2 lasso subproblem
solved exactly over its nine sign patterns, then a backtracking (Armijo) line search.

:func:`cv_resamples` runs the whole cross-validation of each resample in compiled code: the copies of each
annotation in each fold, the fits along the ascending C grid (each started from the previous C's solution), the
held-out soft log loss, the choice of C and the refit, with no ``(resamples x folds, items)`` temporaries.
One pass over the items gives the objective, the gradient and the Hessian at a point together (one ``exp`` serves
the softplus and the sigmoid), so an accepted line-search point needs no second pass; and the last Newton step,
below rounding, is taken without evaluating the objective that nothing would read. The iterates are those of
the plain form (:func:`fit_rows`: a gradient pass, then objective passes), bit for bit. The resamples are
independent, so they are split over threads (``nogil``), each writing its own rows. ``cache=True``: compiled
once per machine.

Importing this module imports numba; the first call compiles (or loads) the functions.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

__all__ = ["cv_resamples", "fit_rows"]

# the stopping rules: a step or a predicted decrease below this (relative) is rounding
_TINY = 1e-13
# the held-out predictions are clipped as AlpacaEval's log loss clips them
_CLIP = 1e-15


@numba.njit(cache=True, nogil=True)
def _link(z):
    """``sigmoid(z)`` and ``softplus(z)`` from one exp, without overflow: ``e = exp(-|z|)``."""
    if z >= 0:
        e = math.exp(-z)
        return 1.0 / (1.0 + e), z + math.log1p(e)
    e = math.exp(z)
    return e / (1.0 + e), math.log1p(e)


@numba.njit(cache=True, nogil=True)
def _state(x, p, cw, w1, w2):
    """At ``(w1, w2)``, over the items with weight: the loss ``sum cw (softplus(z) - p z)``, its gradient
    ``sum cw (mu - p) (x, 1)`` and its Hessian ``sum cw mu (1 - mu) (x, 1)(x, 1)'``, ``mu = sigmoid(z)``."""
    s = g1 = g2 = H11 = H12 = H22 = 0.0
    # without a length weight every z is w2 (up to the sign of a zero, which changes none of the values below):
    # the exp and log1p once, not per item (the L1 penalty often zeroes w1; at w = 0 every fit starts)
    same = w1 == 0.0
    mu, sp = _link(w2)
    for i in range(x.shape[0]):
        if cw[i] == 0.0:
            continue
        z = w1 * x[i] + w2
        if not same:
            mu, sp = _link(z)
        s += cw[i] * (sp - p[i] * z)
        r = cw[i] * (mu - p[i])
        h = cw[i] * mu * (1.0 - mu)
        g1 += r * x[i]
        g2 += r
        H11 += h * x[i] * x[i]
        H12 += h * x[i]
        H22 += h
    return s, g1, g2, H11, H12, H22


@numba.njit(cache=True, nogil=True)
def _lasso2(H11, H12, H22, b1, b2):
    """The exact minimiser of ``u'Hu / 2 + b'u + |u_1| + |u_2|``: the best of the nine sign patterns' stationary
    points whose signs agree with their pattern (``u = 0`` always allowed)."""
    best1, best2, best_v = 0.0, 0.0, 0.0
    det = H11 * H22 - H12 * H12
    for k in range(8):
        if k < 2:  # u_2 = 0, u_1 free
            s1 = -1.0 if k == 0 else 1.0
            if H11 <= 0.0:
                continue
            u1, u2 = -(b1 + s1) / H11, 0.0
            if s1 * u1 <= 0.0:
                continue
        elif k < 4:  # u_1 = 0, u_2 free
            s2 = -1.0 if k == 2 else 1.0
            if H22 <= 0.0:
                continue
            u1, u2 = 0.0, -(b2 + s2) / H22
            if s2 * u2 <= 0.0:
                continue
        else:  # both free
            s1 = -1.0 if (k - 4) // 2 == 0 else 1.0
            s2 = -1.0 if (k - 4) % 2 == 0 else 1.0
            if det <= 0.0:
                continue
            r1, r2 = -(b1 + s1), -(b2 + s2)
            u1, u2 = (H22 * r1 - H12 * r2) / det, (H11 * r2 - H12 * r1) / det
            if s1 * u1 <= 0.0 or s2 * u2 <= 0.0:
                continue
        v = 0.5 * (H11 * u1 * u1 + 2.0 * H12 * u1 * u2 + H22 * u2 * u2) + b1 * u1 + b2 * u2 + abs(u1) + abs(u2)
        if math.isfinite(v) and v < best_v:
            best1, best2, best_v = u1, u2, v
    return best1, best2


@numba.njit(cache=True, nogil=True)
def _fit_one(x, p, cw, w1, w2, max_iter):
    """Proximal Newton from ``(w1, w2)`` on the items with weight ``cw > 0``; returns the minimiser."""
    s, g1, g2, H11, H12, H22 = _state(x, p, cw, w1, w2)
    f = abs(w1) + abs(w2) + s
    for _ in range(max_iter):
        u1, u2 = _lasso2(H11, H12, H22, g1 - (H11 * w1 + H12 * w2), g2 - (H12 * w1 + H22 * w2))
        d1, d2 = u1 - w1, u2 - w2
        dec = g1 * d1 + g2 * d2 + abs(u1) + abs(u2) - abs(w1) - abs(w2)  # the model's decrease, <= 0
        # at the optimum the predicted decrease is below rounding: the Newton step is taken as it is
        flat = -dec <= _TINY * (1.0 + abs(f))
        t = 1.0
        done = False
        for _ls in range(50):
            c1, c2 = w1 + t * d1, w2 + t * d2
            if flat and max(abs(c1 - w1), abs(c2 - w2)) <= _TINY * (1.0 + max(abs(c1), abs(c2))):
                return c1, c2  # accepted and the last step: its objective would never be read
            s, n1, n2, N11, N12, N22 = _state(x, p, cw, c1, c2)
            fc = abs(c1) + abs(c2) + s
            if flat or fc <= f + 1e-4 * t * dec:
                done = True
                break
            t *= 0.5
        if not done:
            break
        step = max(abs(c1 - w1), abs(c2 - w2))
        w1, w2, f = c1, c2, fc
        g1, g2, H11, H12, H22 = n1, n2, N11, N12, N22
        if step <= _TINY * (1.0 + max(abs(w1), abs(w2))):
            break
    return w1, w2


@numba.njit(cache=True, nogil=True)
def fit_rows(x, x_row, p, cw, w0, max_iter=100):
    """``(P, 2)`` weights ``(w_len, w_0)``: fit ``r`` on features ``x[x_row[r]]``, soft labels ``p`` and
    weights ``cw[r]`` (C times each item's count), started at ``w0[r]``."""
    P = cw.shape[0]
    out = np.empty((P, 2))
    for r in range(P):
        out[r, 0], out[r, 1] = _fit_one(x[x_row[r]], p, cw[r], w0[r, 0], w0[r, 1], max_iter)
    return out


@numba.njit(cache=True, nogil=True)
def _fold_copies(counts_r, fold, n_folds, out):
    """``out[k, i]``: the copies of annotation ``i`` in fold ``k`` when the data set lists annotation ``i``
    ``counts_r[i]`` times in order and its position ``j`` is in fold ``fold[j]``."""
    out[:, :] = 0.0
    j = 0
    for i in range(counts_r.shape[0]):
        for _ in range(int(counts_r[i])):
            out[fold[j], i] += 1.0
            j += 1


@numba.njit(cache=True, nogil=True)
def _held_out(x, p, test, w1, w2):
    """Minus the mean soft-label log loss over the held-out copies ``test`` (predictions clipped)."""
    num = den = 0.0
    same = w1 == 0.0  # every prediction the same: its logs once
    q = min(max(0.5 * (1.0 + math.tanh(0.5 * w2)), _CLIP), 1.0 - _CLIP)
    lq, lq1 = math.log(q), math.log(1.0 - q)
    for i in range(x.shape[0]):
        if test[i] == 0.0:
            continue
        if not same:
            q = min(max(0.5 * (1.0 + math.tanh(0.5 * (w1 * x[i] + w2))), _CLIP), 1.0 - _CLIP)
            lq, lq1 = math.log(q), math.log(1.0 - q)
        num += test[i] * -(p[i] * lq + (1.0 - p[i]) * lq1)
        den += test[i]
    return -num / den


@numba.njit(cache=True, nogil=True)
def _gather(x, p, weight, xs, ps, ws):
    """Copy the items with ``weight > 0``, in order, into the fronts of ``xs, ps, ws``; returns how many. The
    fits and scores then pass over these only (the sums in the same order, so the same numbers)."""
    m = 0
    for i in range(x.shape[0]):
        if weight[i] > 0.0:
            xs[m], ps[m], ws[m] = x[i], p[i], weight[i]
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def _cv_rows(x, p, counts, fold, cs, n_folds, r0, r1, w_out, best_out, max_iter):
    """Rows ``r0:r1`` of :func:`cv_resamples`, written into ``w_out`` and ``best_out``."""
    n, n_c = x.shape[1], cs.shape[0]
    test = np.empty((n_folds, n))
    train = np.empty(n)
    xs, ps, ws, cw = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    xt, pt, wt = np.empty(n), np.empty(n), np.empty(n)
    total = np.empty(n_c)
    for r in range(r0, r1):
        _fold_copies(counts[r], fold, n_folds, test)
        total[:] = 0.0
        for k in range(n_folds):
            for i in range(n):
                train[i] = counts[r, i] - test[k, i]
            m = _gather(x[r], p, train, xs, ps, ws)
            mt = _gather(x[r], p, test[k], xt, pt, wt)
            w1 = w2 = 0.0
            for c in range(n_c):  # ascending C, each fit started from the previous one's solution
                for i in range(m):
                    cw[i] = cs[c] * ws[i]
                w1, w2 = _fit_one(xs[:m], ps[:m], cw[:m], w1, w2, max_iter)
                total[c] += _held_out(xt[:mt], pt[:mt], wt[:mt], w1, w2)
        best = 0
        for c in range(1, n_c):  # the first best, as numpy's argmax
            if total[c] > total[best]:
                best = c
        m = _gather(x[r], p, counts[r], xs, ps, ws)
        for i in range(m):
            cw[i] = cs[best] * ws[i]
        w_out[r, 0], w_out[r, 1] = _fit_one(xs[:m], ps[:m], cw[:m], 0.0, 0.0, max_iter)
        best_out[r] = best


def cv_resamples(x: np.ndarray, p: np.ndarray, counts: np.ndarray, fold: np.ndarray, cs: np.ndarray, *,
                 max_iter: int = 100, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The cross-validated fit of each data set: ``(R, 2)`` weights ``(w_len, w_0)`` refitted at the chosen C,
    and ``(R,)`` the chosen C's index in ``cs``.

    Data set ``r`` lists annotation ``i`` ``counts[r, i]`` times, in order, with feature ``x[r, i]`` and soft
    label ``p[i]``; its position ``j`` is held out in fold ``fold[j]``. Per fold, the training copies are fitted
    at every ``C`` of ``cs`` in ascending order (``cw = C x`` training copies), each C is scored by minus the
    held-out soft log loss summed over the folds, the first best C is kept and the data set refitted at it from
    zero. ``threads`` (default: numba's thread count, ``NUMBA_NUM_THREADS``) split the data sets; the numbers do
    not depend on it.
    """
    x, p = np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(p, dtype=float)
    counts, fold = np.ascontiguousarray(counts, dtype=float), np.ascontiguousarray(fold, dtype=np.int64)
    cs = np.ascontiguousarray(cs, dtype=float)
    R, n_folds = len(counts), int(fold.max()) + 1
    w, best = np.empty((R, 2)), np.empty(R, dtype=np.int64)
    threads = max(1, min(threads or numba.config.NUMBA_NUM_THREADS, os.cpu_count() or 1, R // 16))
    bounds = np.linspace(0, R, threads + 1).astype(np.int64)

    def run(part: int) -> None:
        _cv_rows(x, p, counts, fold, cs, n_folds, bounds[part], bounds[part + 1], w, best, max_iter)

    if threads == 1:
        run(0)
    else:  # the compiled rows release the GIL
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, range(threads)))
    return w, best
