"""The Bradley-Terry fit of a systems leaderboard: one battle per judgment, many fits at once.

Model (Bradley & Terry 1952; the Chatbot Arena leaderboard, Chiang et al. 2024): system i has a score
:math:`s_i` on the logit scale, and battle k between systems :math:`a_k` and :math:`b_k` is won by
:math:`a_k` with probability

.. math:: P(a_k \\succ b_k) = \\sigma(s_{a_k} - s_{b_k} + x_k^\\top \\beta),

with optional per-battle covariates :math:`x_k` (style control) and their coefficients :math:`\\beta`.
The fit maximises the weighted log-likelihood

.. math:: \\ell(s, \\beta) = \\sum_k w_k \\,[y_k \\log \\sigma(z_k) + (1 - y_k) \\log(1 - \\sigma(z_k))]
          - \\tfrac{\\lambda}{2} \\lVert s \\rVert^2,

with :math:`y_k` 1 for a win of :math:`a_k`, 0 for a loss and 1/2 for a tie: a tie is half a win to each
side, which is exactly FastChat's ``compute_mle_elo`` (it duplicates every battle and counts a tie as a win
of A in one copy and of B in the other). With :math:`\\lambda = 0` this is the unpenalised logistic
regression on the :math:`\\pm 1` design.

Identification. Only differences of scores are identified: scores are centred to mean 0 within each
connected component of the comparison graph. Systems in different components were never compared,
directly or through others, so their scores are not comparable, and a note says so.

Existence. The maximum-likelihood scores are finite if and only if, within each component, every system
can be reached from every other along "beat or tied" edges (Zermelo 1929; Ford 1957): otherwise some
systems win (or lose) every battle against the rest and the unpenalised scores run off to infinity. Then,
and only then, a light ridge :data:`AUTO_RIDGE` is added (a Normal(0, 1/λ) prior on the scores) and
reported, never a silent infinity. With covariates the outcomes can also be separated by a covariate (a style
feature present on a few battles that all went one way); a fit in which a battle's logit runs past 30 is then
refitted with the ridge on every parameter, and reported the same way.

Computation. Battles with the same systems and covariates are merged (their weights and wins summed), then
all fits (the data and every bootstrap resample, rows of ``weight``) take damped Newton steps together
as batched linear solves, from ``init`` (the point estimate, for resamples) or from 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import DataError

__all__ = ["BTFit", "fit_bt", "to_elo", "ELO_ANCHOR", "ELO_PER_LOGIT", "AUTO_RIDGE"]

#: The Elo rating of a score of 0 (the mean system).
ELO_ANCHOR = 1000.0
#: Elo points per logit unit: 400 points are a factor 10 in the odds, as in Chatbot Arena.
ELO_PER_LOGIT = 400.0 / math.log(10.0)
#: The ridge penalty added when the maximum-likelihood scores do not exist (a Normal(0, 10) prior).
AUTO_RIDGE = 0.1
#: The largest Newton step on any parameter (logit units): keeps the first steps from overshooting.
_MAX_STEP = 4.0
#: A battle's logit beyond this (odds of 1e13) means the fit is running off to infinity.
_DIVERGED = 30.0


@dataclass(frozen=True)
class BTFit:
    """One or many Bradley-Terry fits (see :func:`fit_bt`).

    Attributes
    ----------
    scores
        ``(k,)`` or ``(B, k)``: scores on the logit scale, centred to mean 0 within each connected
        component; NaN for a system without battles in that fit.
    coef
        ``(f,)`` or ``(B, f)``: the covariates' coefficients (logit per unit of the covariate); NaN for a
        covariate that is 0 on every battle of that fit (it has no coefficient and is left out of the fit).
    ridge
        The penalty applied in each fit (0: the unpenalised maximum-likelihood fit).
    converged
        Whether each fit converged.
    component
        ``(k,)`` or ``(B, k)``: the connected component of each system (-1: no battles).
    notes
        For a single fit: what a reader must know (a ridge added, a disconnected graph, no convergence).
    """

    scores: np.ndarray
    coef: np.ndarray
    ridge: np.ndarray | float
    converged: np.ndarray | bool
    component: np.ndarray
    notes: tuple[str, ...] = ()


def to_elo(score):
    """Scores on the Elo scale: ``ELO_ANCHOR + ELO_PER_LOGIT * score``.

    >>> round(float(to_elo(math.log(10.0))), 6)
    1400.0
    """
    return ELO_ANCHOR + ELO_PER_LOGIT * np.asarray(score, dtype=float)


def _check(a, b, outcome, n_systems, weight, covariates):
    """The inputs as arrays, with a :class:`DataError` for anything malformed."""
    a, b = np.asarray(a, dtype=np.int64).ravel(), np.asarray(b, dtype=np.int64).ravel()
    y = np.asarray(outcome, dtype=float).ravel()
    n = len(a)
    if len(b) != n or len(y) != n:
        raise DataError(f"the battles' arrays differ in length ({len(a)}, {len(b)}, {len(y)})",
                        fix="give one system_a, system_b and outcome per battle")
    if n and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_systems):
        raise DataError(f"a battle names a system code outside 0..{n_systems - 1}", fix="code systems 0..n_systems-1")
    if n and (np.any(a == b)):
        raise DataError("a battle compares a system with itself", fix="leave such rows out")
    if not np.all((y >= 0) & (y <= 1)):
        raise DataError("a battle's outcome is not between 0 and 1", fix="use 1 (a wins), 0.5 (tie) or 0 (b wins)")
    w = np.ones((1, n)) if weight is None else np.asarray(weight, dtype=float)
    single = w.ndim == 1
    w = np.atleast_2d(w)
    if w.shape[1] != n or w.ndim != 2 or not np.all(np.isfinite(w)):
        raise DataError(f"the weights must be finite, of shape ({n},) or (B, {n}), not {w.shape}",
                        fix="give one weight per battle (per resample)")
    X = np.zeros((n, 0)) if covariates is None else np.asarray(covariates, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.shape[0] != n or not np.all(np.isfinite(X)):
        raise DataError(f"the covariates must be a finite ({n}, f) array, not of shape {X.shape}",
                        fix="give one row of covariates per battle")
    return a, b, y, w, X, single or weight is None


def _merge(a, b, y, w, X):
    """Battles with the same systems and covariates merged: their (B, m) weights and weighted wins."""
    key = np.column_stack([a, b, X]) if X.shape[1] else np.column_stack([a, b])
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    m = len(uniq)
    # One sparse sum per row of weights: the (n, m) one-hot is never built.
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(m))
    N = np.add.reduceat(w[:, order], starts, axis=1) if len(order) else np.zeros((w.shape[0], 0))
    Y = np.add.reduceat((w * y)[:, order], starts, axis=1) if len(order) else np.zeros((w.shape[0], 0))
    return uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64), uniq[:, 2:], N, Y


def _closure(adj: np.ndarray) -> np.ndarray:
    """Reachability (B, k, k) of directed graphs (B, k, k), by repeated squaring."""
    k = adj.shape[-1]
    R = (adj | np.eye(k, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        R = (R @ R > 0).astype(np.float64)
    return R > 0


def _graphs(a, b, N, Y, k):
    """Per fit: the component of each system (-1 without battles) and whether the MLE exists."""
    B = N.shape[0]
    # Weights and wins per ordered pair (a, b), summed over the merged battles: one product per fit.
    pair = np.zeros((len(a), k * k))
    pair[np.arange(len(a)), a * k + b] = 1.0
    Nk, Yk = (N @ pair).reshape(B, k, k), (Y @ pair).reshape(B, k, k)
    played = (Nk > 0) | (Nk > 0).transpose(0, 2, 1)
    won = (Nk > 0) & (Yk > 0)  # a won (or tied) at least once
    lost = (Nk > 0) & (Yk < Nk)  # b won (or tied) at least once
    beat = won | lost.transpose(0, 2, 1)
    reach = _closure(played)
    present = played.any(axis=2)
    comp = np.where(present, reach.argmax(axis=2), -1)  # the smallest system reachable: a component label
    strong = _closure(beat)
    exists = np.all(~reach | (strong & strong.transpose(0, 2, 1)), axis=(1, 2))
    return comp, exists


def _centre(s, comp):
    """Scores centred to mean 0 within each component (systems without battles stay 0)."""
    k = s.shape[1]
    onehot = (comp[:, :, None] == np.arange(k)[None, None, :])  # (B, k, labels)
    size = onehot.sum(axis=1)
    mean = np.einsum("bk,bkl->bl", s, onehot) / np.maximum(size, 1)
    return np.where(comp >= 0, s - np.einsum("bkl,bl->bk", onehot, mean), 0.0)


def _dead_covariates(X: np.ndarray, N: np.ndarray) -> np.ndarray:
    """(B, f): the covariates that are 0 on every battle with a weight in each fit."""
    return (N != 0).astype(float) @ (X != 0).astype(float) == 0


def _newton(a, b, X, N, Y, k, comp, ridge, theta, max_iter, tol, *, all_params=False):
    """Damped Newton steps for all fits at once (``ridge`` on the scores, or on every parameter with
    ``all_params``); returns the parameters, whether each fit converged and whether it ran off (diverged)."""
    m, f = len(a), X.shape[1]
    p = k + f
    D = np.zeros((m, p))
    D[np.arange(m), a] += 1.0
    D[np.arange(m), b] -= 1.0
    D[:, k:] = X
    DD = (D[:, :, None] * D[:, None, :]).reshape(m, p * p)  # the Hessian is one product with it
    onehot = (comp[:, :, None] == np.arange(k)[None, None, :]).astype(float)
    size = np.maximum(onehot.sum(axis=1), 1.0)
    # Why: the likelihood is flat along each component's mean; adding (1 1^T)/size per component (and 1 on a
    # system without battles) makes the system solvable without changing the step inside the centred space.
    C = np.zeros((len(N), p, p))
    C[:, :k, :k] = np.einsum("bil,bjl->bij", onehot / size[:, None, :], onehot)
    C[:, np.arange(k), np.arange(k)] += (comp < 0)
    # The same for a covariate that is 0 on every battle of a fit: it has no coefficient there (NaN after).
    C[:, np.arange(k, p), np.arange(k, p)] += _dead_covariates(X, N)
    pen = np.zeros(p)
    pen[:(p if all_params else k)] = 1.0
    C += ridge[:, None, None] * np.diag(pen)
    done, gone = np.zeros(len(N), dtype=bool), np.zeros(len(N), dtype=bool)
    todo = np.arange(len(N))
    last, steady = np.full(len(N), np.inf), np.zeros(len(N), dtype=int)
    for _ in range(max_iter):
        th, n_, y_ = theta[todo], N[todo], Y[todo]
        z = th @ D.T
        prob = 1.0 / (1.0 + np.exp(-z))
        g = (y_ - n_ * prob) @ D - ridge[todo, None] * th * pen
        H = ((n_ * prob * (1.0 - prob)) @ DD).reshape(-1, p, p) + C[todo]
        step = _solve(H, g)
        big = np.abs(step).max(axis=1, initial=0.0)
        step *= np.minimum(1.0, _MAX_STEP / np.maximum(big, 1e-300))[:, None]
        th = th + step
        th[:, :k] = _centre(th[:, :k], comp[todo])
        theta[todo] = th
        finished = big < tol
        # Why: when the outcomes are separated (by a covariate, say) the maximum-likelihood estimate is infinite
        # and Newton walks towards it by steps of about the same size (near 1 logit), where a converging fit's
        # steps shrink quadratically: three such steps in a row, or a battle's logit beyond _DIVERGED, end it.
        ratio = big / last[todo]
        steady[todo] = np.where((big < _MAX_STEP) & (ratio > 0.9) & (ratio < 1.1), steady[todo] + 1, 0)
        last[todo] = big
        off = ~finished & ((steady[todo] >= 3) |
                           (np.where(n_ != 0, np.abs(z), 0.0).max(axis=1, initial=0.0) > _DIVERGED))
        off &= not all_params  # the ridge on every parameter makes the optimum finite: walk on to it
        done[todo[finished]] = True
        gone[todo[off]] = True
        todo = todo[~finished & ~off]
        if not len(todo):
            break
    return theta, done, gone


def _solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Newton steps ``H^-1 g`` of a stack of systems; the pseudo-inverse where a system is singular (features
    that are collinear on a fit's battles), which gives the step of least norm."""
    try:
        return np.linalg.solve(H, g[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return (np.linalg.pinv(H) @ g[:, :, None])[:, :, 0]


def fit_bt(a, b, outcome, *, n_systems: int, weight=None, covariates=None, ridge: float | None = None,
           init=None, names: Sequence[str] | None = None, max_iter: int = 100, tol: float = 1e-10) -> BTFit:
    """Bradley-Terry scores of systems from battles, for one set of weights or many at once.

    Maximises :math:`\\sum_k w_k [y_k \\log \\sigma(z_k) + (1-y_k) \\log(1-\\sigma(z_k))] - \\lambda \\lVert s
    \\rVert^2 / 2` with :math:`z_k = s_{a_k} - s_{b_k} + x_k^\\top\\beta` (Bradley & Terry 1952; a tie is half a
    win to each side, as FastChat's ``compute_mle_elo``); see the module docstring.

    Parameters
    ----------
    a, b
        ``(n,)`` the two systems of each battle, codes ``0 .. n_systems - 1``.
    outcome
        ``(n,)`` the result for ``a``: 1 a win, 0.5 a tie, 0 a loss.
    n_systems
        The number of systems (codes).
    weight
        None (every battle once), ``(n,)`` for one fit, or ``(B, n)`` for ``B`` fits at once (bootstrap
        counts; signed weights are accepted, the caller keeps the objective concave).
    covariates
        ``(n, f)`` per-battle covariates (style features), with unpenalised coefficients.
    ridge
        None: 0 unless the maximum-likelihood scores do not exist in that fit, then :data:`AUTO_RIDGE`;
        a number: that penalty in every fit.
    init
        ``(k + f,)`` or ``(B, k + f)`` starting scores then coefficients (the point estimate, for resamples).
    names
        The systems' names, for the notes.
    max_iter, tol
        Newton steps at most, and the largest step that counts as converged.

    Returns
    -------
    BTFit
        Arrays with a leading ``B`` axis when ``weight`` is 2-D.

    Examples
    --------
    Three systems in a cycle of wins, where x also beats y again and ties with z:

    >>> fit = fit_bt([0, 1, 2, 0, 0], [1, 2, 0, 1, 2], [1, 1, 1, 1, 0.5], n_systems=3)
    >>> fit.scores.round(4).tolist(), fit.ridge, fit.notes
    ([0.3463, -0.4351, 0.0888], 0.0, ())

    A system that wins every battle gets the light ridge, and a note:

    >>> fit = fit_bt([0, 0, 1], [1, 2, 2], [1, 1, 0.5], n_systems=3, names=["x", "y", "z"])
    >>> bool(fit.scores[0] > 1), fit.ridge
    (True, 0.1)
    >>> print(fit.notes[0])
    the maximum-likelihood scores are infinite (x won every battle against the others), so a ridge penalty of 0.1 was added
    """
    k = int(n_systems)
    a, b, y, w, X, single = _check(a, b, outcome, k, weight, covariates)
    f = X.shape[1]
    am, bm, Xm, N, Y = _merge(a, b, y, w, X)
    comp, exists = _graphs(am, bm, N, Y, k)
    if ridge is None:
        lam = np.where(exists, 0.0, AUTO_RIDGE)
    else:
        if not np.isfinite(ridge) or ridge < 0:
            raise DataError(f"the ridge penalty must be 0 or more, not {ridge!r}", fix="use e.g. 0.1, or None")
        lam = np.full(len(N), float(ridge))
    theta = np.zeros((len(N), k + f))
    if init is not None:
        theta += np.asarray(init, dtype=float)
        theta[~np.isfinite(theta)] = 0.0
        theta[:, :k] = _centre(theta[:, :k], comp)
    start = theta.copy()
    theta, done, gone = _newton(am, bm, Xm, N, Y, k, comp, lam, theta, max_iter, tol)
    everything = np.zeros(len(N), dtype=bool)
    if ridge is None and gone.any():  # separated by the covariates: the ridge on every parameter
        r = np.flatnonzero(gone)
        lam[r], everything[r] = AUTO_RIDGE, True
        theta[r], done[r], _ = _newton(am, bm, Xm, N[r], Y[r], k, comp[r], lam[r], start[r], max_iter, tol,
                                       all_params=True)
    scores = np.where(comp >= 0, theta[:, :k], np.nan)
    coef = np.where(_dead_covariates(Xm, N), np.nan, theta[:, k:])
    if single:
        notes = _notes(am, bm, N[0], Y[0], comp[0], lam[0] if ridge is None else 0.0, bool(done[0]),
                       names or [str(i) for i in range(k)], everything=bool(everything[0]))
        return BTFit(scores[0], coef[0], float(lam[0]), bool(done[0]), comp[0], notes)
    return BTFit(scores, coef, lam, done, comp)


def _notes(a, b, N, Y, comp, lam, done, names, *, everything=False) -> tuple[str, ...]:
    """What a reader of one fit must know, in words."""
    notes = []
    labels = [c for c in dict.fromkeys(comp.tolist()) if c >= 0]
    if len(labels) > 1:
        groups = " | ".join(", ".join(names[i] for i in np.flatnonzero(comp == c)) for c in labels)
        notes.append(f"the systems form {len(labels)} groups never compared with each other ({groups}): scores are "
                     "centred within each group and comparable only within it")
    if lam > 0 and everything:
        notes.append(f"the maximum-likelihood estimate is infinite (the covariates separate the outcomes), so a "
                     f"ridge penalty of {lam:g} was added on every parameter")
    elif lam > 0:
        won, lost = [], []
        for i in np.flatnonzero(comp >= 0):
            as_a, as_b = a == i, b == i
            wins = Y[as_a].sum() + (N[as_b] - Y[as_b]).sum()
            total = N[as_a].sum() + N[as_b].sum()
            if total > 0 and wins >= total:
                won.append(names[i])
            elif total > 0 and wins <= 0:
                lost.append(names[i])
        who = "; ".join(p for p in (", ".join(won) + " won every battle" if won else "",
                                    ", ".join(lost) + " lost every battle" if lost else "") if p)
        why = f" ({who} against the others)" if who else " (a group of systems won every battle against the rest)"
        notes.append(f"the maximum-likelihood scores are infinite{why}, so a ridge penalty of {lam:g} was added")
    if not done:
        notes.append("the fit did not converge; the scores are the last iterate")
    return tuple(notes)
