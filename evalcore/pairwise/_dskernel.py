"""The log density of the marginalised Dawid-Skene model and its gradient, compiled by numba.

:func:`evalcore.pairwise.dawid_skene.dawid_skene` samples this with nutpie. It is the same density as
the PyMC model ``dawid_skene._ds_model`` (Gao et al. 2024, Model 1 with the labels summed out), in the
same unconstrained coordinates (log-odds of p, q0 and q1, Jacobian included); the tests check
value and gradient against PyMC's compiled ``logp``/``dlogp`` to 1e-9.

Why hand-written: compiling the PyMC graph with numba (``nutpie.compile_pymc_model``) takes
14-27 s in every new process, because numba cannot cache PyTensor's generated code. These
functions are plain numba with ``cache=True``: about 3 s the first time on a machine, then a
fraction of a second to load, and each fit is faster (no PyTensor overhead per evaluation).

Importing this module imports numba and compiles (or loads) the functions.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["logp_grad", "c_logp", "c_expand", "pack", "n_dim"]


@numba.njit(cache=True)
def _log_sigmoid(y: float) -> float:
    # log(1 / (1 + e^-y)) without overflow for large |y|
    if y > 0:
        return -math.log1p(math.exp(-y))
    return y - math.log1p(math.exp(y))


@numba.njit(cache=True)
def logp_grad(x, T0, T1, H0, H1, w, a0, b0, a1, b1, lbeta):
    """Log density and gradient at ``x = [logit p, logit q0 (E), logit q1 (E)]``.

    With ``q = sigmoid(y)``, each ``Beta(a, b)`` prior plus its log-odds Jacobian is
    ``a log q + b log(1-q) - log B(a, b)``, whose derivative in ``y`` is ``a(1-q) - b q``
    (``p ~ Beta(1, 1)``). For pattern ``n`` with count ``w_n``::

        f0 = log p     + sum_e T0[n,e] log q0_e + T1[n,e] log(1-q0_e)    (A better)
        f1 = log (1-p) + sum_e T1[n,e] log q1_e + T0[n,e] log(1-q1_e)    (B better)
        ll_n = H0 f0 + H1 f1 + (1 - H0 - H1) logaddexp(f0, f1)

    ``T0``/``T1`` flag verdicts for A/B, ``H0``/``H1`` a used human label. The gradient
    of ``logaddexp`` weights ``f0`` by the posterior probability that A is better.
    """
    E = a0.shape[0]
    grad = np.zeros(x.shape[0])
    lp = _log_sigmoid(x[0])
    l1p = _log_sigmoid(-x[0])
    p = math.exp(lp)
    lq0 = np.empty(E)
    l1q0 = np.empty(E)
    lq1 = np.empty(E)
    l1q1 = np.empty(E)
    q0 = np.empty(E)
    q1 = np.empty(E)
    logp = lp + l1p
    grad[0] = 1.0 - 2.0 * p
    for e in range(E):
        y0 = x[1 + e]
        y1 = x[1 + E + e]
        lq0[e] = _log_sigmoid(y0)
        l1q0[e] = _log_sigmoid(-y0)
        lq1[e] = _log_sigmoid(y1)
        l1q1[e] = _log_sigmoid(-y1)
        q0[e] = math.exp(lq0[e])
        q1[e] = math.exp(lq1[e])
        logp += a0[e] * lq0[e] + b0[e] * l1q0[e] + a1[e] * lq1[e] + b1[e] * l1q1[e] - lbeta[e]
        grad[1 + e] = a0[e] * (1.0 - q0[e]) - b0[e] * q0[e]
        grad[1 + E + e] = a1[e] * (1.0 - q1[e]) - b1[e] * q1[e]
    for n in range(w.shape[0]):
        f0 = lp
        f1 = l1p
        for e in range(E):
            f0 += T0[n, e] * lq0[e] + T1[n, e] * l1q0[e]
            f1 += T1[n, e] * lq1[e] + T0[n, e] * l1q1[e]
        free = 1.0 - H0[n] - H1[n]
        if f0 > f1:
            t = math.exp(f1 - f0)
            m = f0 + math.log1p(t)
            r = 1.0 / (1.0 + t)  # P(A better | verdicts, theta)
        else:
            t = math.exp(f0 - f1)
            m = f1 + math.log1p(t)
            r = t / (1.0 + t)
        logp += w[n] * (H0[n] * f0 + H1[n] * f1 + free * m)
        g0 = w[n] * (H0[n] + free * r)
        g1 = w[n] * (H1[n] + free * (1.0 - r))
        grad[0] += g0 * (1.0 - p) - g1 * p
        for e in range(E):
            grad[1 + e] += g0 * (T0[n, e] * (1.0 - q0[e]) - T1[n, e] * q0[e])
            grad[1 + E + e] += g1 * (T1[n, e] * (1.0 - q1[e]) - T0[n, e] * q1[e])
    return logp, grad


def n_dim(n_judges: int) -> int:
    """Number of free parameters: p, and q0 and q1 per judge."""
    return 1 + 2 * int(n_judges)


def pack(T0, T1, H0, H1, w, a0, b0, a1, b1, lbeta) -> np.ndarray:
    """All data in one float64 buffer, the ``user_data`` that nutpie hands to :func:`c_logp`.

    Layout: ``[E, N, a0, b0, a1, b1, lbeta, H0, H1, w, T0 (N x E, row-major), T1]``.
    """
    T0 = np.asarray(T0, float)
    N, E = T0.shape
    parts = [np.array([E, N], float), a0, b0, a1, b1, lbeta, H0, H1, w, T0.ravel(), np.asarray(T1, float).ravel()]
    return np.ascontiguousarray(np.concatenate([np.asarray(v, float).ravel() for v in parts]))


@numba.njit(cache=True)
def _unpack(buf):
    E = int(buf[0])
    N = int(buf[1])
    prior = buf[2:2 + 5 * E].reshape((5, E))  # a0, b0, a1, b1, lbeta
    items = buf[2 + 5 * E:2 + 5 * E + 3 * N].reshape((3, N))  # H0, H1, w
    verdicts = buf[2 + 5 * E + 3 * N:2 + 5 * E + 3 * N + 2 * N * E].reshape((2, N, E))  # T0, T1
    return (verdicts[0], verdicts[1], items[0], items[1], items[2], prior[0], prior[1], prior[2], prior[3],
            prior[4])


# The C signatures nutpie calls (see nutpie.compile_pymc._make_c_logp_func): return 0 on
# success, 3 for a non-finite gradient and 4 for a non-finite density, as nutpie expects.
_SIG_LOGP = numba.types.int64(numba.types.uint64, numba.types.CPointer(numba.types.double),
                              numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double),
                              numba.types.voidptr)
_SIG_EXPAND = numba.types.int64(numba.types.uint64, numba.types.uint64, numba.types.CPointer(numba.types.double),
                                numba.types.CPointer(numba.types.double), numba.types.voidptr)


@numba.cfunc(_SIG_LOGP, cache=True)
def c_logp(dim, x_, out_, logp_, user_data_):
    head = numba.carray(user_data_, (2,), np.float64)
    E = int(head[0])
    N = int(head[1])
    if dim != 1 + 2 * E:
        return -1
    buf = numba.carray(user_data_, (2 + 5 * E + 3 * N + 2 * N * E,), np.float64)
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    res = numba.carray(logp_, (1,))
    T0, T1, H0, H1, w, a0, b0, a1, b1, lbeta = _unpack(buf)
    value, grad = logp_grad(x, T0, T1, H0, H1, w, a0, b0, a1, b1, lbeta)
    res[0] = value
    for i in range(dim):
        out[i] = grad[i]
        if not np.isfinite(grad[i]):
            return 3
    if not np.isfinite(value):
        return 4
    return 0


@numba.cfunc(_SIG_EXPAND, cache=True)
def c_expand(dim, expanded, x_, out_, user_data_):
    # the draws nutpie stores: p, q0, q1 on their own scale (inverse log-odds)
    if dim != expanded:
        return -1
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    for i in range(dim):
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))
    return 0
