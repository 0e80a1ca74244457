"""The L1-penalised soft-label logistic fits of AlpacaEval's length-controlled GLM, compiled by numba.

:func:`evalcore.pairwise.superficial.alpacaeval_lc_exact` fits the two-weight model
``P(model preferred) = sigmoid(w_len x_i + w_0)`` about fifty times per bootstrap resample (ten C, five folds,
the refit). Each fit is the exact minimiser of liblinear's objective
``|w_len| + |w_0| + sum_i cw_i (softplus(z_i) - p_i z_i)`` by proximal Newton steps: the 2x2 lasso subproblem
solved exactly over its nine sign patterns, then a backtracking (Armijo) line search. Written as plain loops so
that one pass over the items gives the gradient and Hessian with no temporaries (numpy took about 5 s per
thousand resamples of a hundred items; this about a tenth of that). ``cache=True``: compiled once per machine.

Importing this module imports numba; the first call compiles (or loads) the functions.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["fit_rows"]


@numba.njit(cache=True)
def _softplus(z: float) -> float:
    # log(1 + e^z) without overflow
    if z > 0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@numba.njit(cache=True)
def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@numba.njit(cache=True)
def _loss(x, p, cw, w1, w2):
    s = 0.0
    for i in range(x.shape[0]):
        if cw[i] != 0.0:
            z = w1 * x[i] + w2
            s += cw[i] * (_softplus(z) - p[i] * z)
    return s


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def _fit_one(x, p, cw, w1, w2, max_iter):
    f = abs(w1) + abs(w2) + _loss(x, p, cw, w1, w2)
    for _ in range(max_iter):
        g1 = g2 = H11 = H12 = H22 = 0.0
        for i in range(x.shape[0]):
            if cw[i] == 0.0:
                continue
            mu = _sigmoid(w1 * x[i] + w2)
            r = cw[i] * (mu - p[i])
            h = cw[i] * mu * (1.0 - mu)
            g1 += r * x[i]
            g2 += r
            H11 += h * x[i] * x[i]
            H12 += h * x[i]
            H22 += h
        u1, u2 = _lasso2(H11, H12, H22, g1 - (H11 * w1 + H12 * w2), g2 - (H12 * w1 + H22 * w2))
        d1, d2 = u1 - w1, u2 - w2
        dec = g1 * d1 + g2 * d2 + abs(u1) + abs(u2) - abs(w1) - abs(w2)  # the model's decrease, <= 0
        t = 1.0
        done = False
        for _ls in range(50):
            c1, c2 = w1 + t * d1, w2 + t * d2
            fc = abs(c1) + abs(c2) + _loss(x, p, cw, c1, c2)
            # at the optimum the predicted decrease is below rounding: the Newton step is taken as it is
            if fc <= f + 1e-4 * t * dec or -dec <= 1e-13 * (1.0 + abs(f)):
                done = True
                break
            t *= 0.5
        if not done:
            break
        step = max(abs(c1 - w1), abs(c2 - w2))
        w1, w2, f = c1, c2, fc
        if step <= 1e-13 * (1.0 + max(abs(w1), abs(w2))):
            break
    return w1, w2


@numba.njit(cache=True)
def fit_rows(x, x_row, p, cw, w0, max_iter=100):
    """``(P, 2)`` weights ``(w_len, w_0)``: fit ``r`` on features ``x[x_row[r]]``, soft labels ``p`` and
    weights ``cw[r]`` (C times each item's count), started at ``w0[r]``."""
    P = cw.shape[0]
    out = np.empty((P, 2))
    for r in range(P):
        out[r, 0], out[r, 1] = _fit_one(x[x_row[r]], p, cw[r], w0[r, 0], w0[r, 1], max_iter)
    return out
