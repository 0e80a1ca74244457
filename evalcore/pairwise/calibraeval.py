"""CalibraEval's non-parametric order-preserving algorithm (NOA): a label-free map of a judge's P("A").

Li et al., "CalibraEval: Calibrating prediction distribution to mitigate selection bias in
LLMs-as-judges" (2024), Section 3.3; the equations lost in our copy of the paper are restated in
``DESIGN.md`` from the authors' code (github.com/CSHaitao/CalibraEval, ``src/CalibraEval.py``).

Each item is shown to the judge three times: ``s0`` (X at position 1 labelled "A"), ``s1``
(positions swapped, X still "A") and ``s2`` (IDs swapped: "A" labels Y at position 1). The judge
gives :math:`p_0, p_1, p_2`, its normalised P("A") in each. One map :math:`g` of P("A") is
learnt so that an unbiased judge's identities hold, without labels:

.. math::

    \\mathcal{L}(g) = \\frac{1}{n} \\sum_{\\text{items}} [g(p_0) + g(p_2) - 1]^2 + [g(p_0) - g(p_1)]^2
                      - \\lambda [g(p_0) - g(p_2)]^2 .

The first term asks for consistency when the IDs are swapped, the second when the positions are,
and the third keeps :math:`g` away from the constant 1/2. **The monotone map.** Pool every observed
probability with the boundary points -0.1 and 1.1, sort the distinct values
:math:`v_0 < \\dots < v_N`, and with parameters :math:`d_0 .. d_{N-1}`

.. math::

    g(v_k) = \\frac{S_k}{T}, \\qquad S_k = \\sum_{i<k} e^{d_i}, \\quad T = S_N ,

so that :math:`g(v_0) = 0`, :math:`g(v_N) = 1` and :math:`g` is non-decreasing whatever ``d`` is.
**The exact gradient.** :math:`\\partial g(v_k) / \\partial d_i = (e^{d_i} / T)([i < k] - g(v_k))`, so
with :math:`c_k = \\partial \\mathcal{L} / \\partial g(v_k)`,

.. math::

    \\frac{\\partial \\mathcal{L}}{\\partial d_i} = \\frac{e^{d_i}}{T}
        \\Big(\\sum_{k > i} c_k - \\sum_k c_k\\, g(v_k)\\Big),

an O(N) computation (:func:`noa_gradient`; checked against finite differences in the tests).
:func:`fit_noa` minimises :math:`\\mathcal{L}` with it by L-BFGS to convergence, then fits an
isotonic regression (PAVA, :class:`sklearn.isotonic.IsotonicRegression` with clipping, the
authors' Eqs. 16-18) through the interior points :math:`(v_k, g(v_k))`, which makes :math:`g` a
continuous, piecewise linear map of any probability.

**What convergence shows.** Run to its minimum, the objective prefers step-like maps (the lambda term
rewards values near 0 and 1), and when the position effect is strong (s0 and s1 of one item far apart
for one monotone map to reconcile) the minimum is the trivial map :math:`g = 1/2`, loss 0: with
lambda 0.05 this happens in simulation from a position logit of about 0.6. The fitted map records the
share of fitted probabilities sent to 1/2 (:attr:`NoaCalibration.at_half`, :attr:`NoaCalibration.collapsed`)
and the report says so; the released single epoch stops long before, which is why it rarely collapses.

**The released settings** (:func:`fit_noa_released`) reproduce the authors' script: lambda 0.05,
learning rate 10, mini-batches of 64 items in file order, one epoch, ``d`` initialised at 0 and
centred after the epoch, ascending along *their* gradient. That gradient has copy-paste errors:
every term uses :math:`e^{d_{s_0 - 1}}` and :math:`g(p_0)` (the first prompt's index) instead of
:math:`e^{d_i}` and the term's own index; the two cases :math:`i < k` and :math:`i \\ge k` are
exchanged; the position term carries lambda while the regulariser's sign is flipped; and the
``s1`` and ``s2`` terms share one coefficient. :func:`released_gradient` computes it, vectorised,
and the tests check it against a line-by-line transcription of their loops.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = [
    "LAMBDA",
    "NoaCalibration",
    "fit_noa",
    "fit_noa_released",
    "knots",
    "noa_gradient",
    "noa_loss",
    "released_gradient",
]

#: The authors' lambda (``iso_regression(..., lam=0.05)`` in their script).
LAMBDA = 0.05
#: The boundary points appended to the observed probabilities.
BOUNDS = (-0.1, 1.1)


@dataclass(frozen=True)
class NoaCalibration:
    """A fitted NOA map: the isotonic fit's knots ``x`` (raw P("A")) and values ``y`` (calibrated).

    Attributes
    ----------
    method
        ``"noa"`` (exact gradient, run to convergence) or ``"noa_released"`` (the authors' settings).
    x, y
        The knots of the piecewise linear map; outside ``[x[0], x[-1]]`` it is clipped to the end values.
    lam
        The regularisation weight lambda.
    n_items
        Items of the estimation subset the map was fitted on.
    iterations
        Optimiser iterations (L-BFGS) or mini-batch steps (released settings).
    loss
        The objective :math:`\\mathcal{L}` at the end.
    converged
        Whether the optimiser met its tolerance (always False for the single released epoch).
    judge
        The judge the map belongs to.
    at_half
        The share of the estimation subset's probabilities the map sends within 0.001 of 1/2. Near 1, the
        fit has collapsed to the trivial constant map :math:`g = 1/2` (the loss is 0 there): this happens
        when the position effect is too strong for lambda, and the decisions are then arbitrary.

    Examples
    --------
    >>> cal = NoaCalibration("noa", x=(0.2, 0.8), y=(0.3, 0.6), lam=0.05, n_items=1, iterations=0, loss=0.0,
    ...                      converged=True)
    >>> cal.apply([0.0, 0.5, 1.0]).round(3).tolist()
    [0.3, 0.45, 0.6]
    >>> import json
    >>> NoaCalibration.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal
    True
    """

    method: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    lam: float
    n_items: int
    iterations: int
    loss: float
    converged: bool
    judge: str = ""
    at_half: float = 0.0

    @property
    def collapsed(self) -> bool:
        """Whether most fitted probabilities are mapped to (almost) exactly 1/2: the trivial solution."""
        return self.at_half > 0.5

    def apply(self, p) -> np.ndarray:
        """The calibrated probabilities of raw P("A") values ``p`` (NaN stays NaN)."""
        p = np.asarray(p, dtype=float)
        out = np.interp(p, np.asarray(self.x), np.asarray(self.y))  # clips outside the knots, as the isotonic fit
        return np.where(np.isnan(p), np.nan, out)

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {**asdict(self), "x": list(self.x), "y": list(self.y)}

    @classmethod
    def from_dict(cls, data: dict) -> NoaCalibration:
        """The calibration saved by :meth:`to_dict`."""
        try:
            return cls(method=str(data["method"]), x=tuple(map(float, data["x"])), y=tuple(map(float, data["y"])),
                       lam=float(data["lam"]), n_items=int(data["n_items"]), iterations=int(data["iterations"]),
                       loss=float(data["loss"]), converged=bool(data["converged"]), judge=str(data.get("judge", "")),
                       at_half=float(data.get("at_half", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"a saved NOA calibration is incomplete or malformed ({exc})",
                            fix="save the calibration again with evalcore position --save-calibration") from None

    def to_frame(self) -> pd.DataFrame:
        """The map's knots: ``raw`` and ``calibrated`` (for a plot of raw P against calibrated P)."""
        return pd.DataFrame({"raw": self.x, "calibrated": self.y})


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        raise DataError("NOA needs three probabilities per item (s0 default, s1 positions swapped, s2 IDs swapped)",
                        fix="give prob_a, prob_a_swap_position and prob_a_swap_id")
    if len(p) == 0 or not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise DataError("NOA needs at least one item, and every probability between 0 and 1",
                        fix="check prob_a, prob_a_swap_position and prob_a_swap_id")
    return p


def knots(probs) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values :math:`v_0..v_N` (with -0.1 and 1.1) and each probability's index into them.

    >>> v, idx = knots([[0.3, 0.3, 0.9]])
    >>> v.tolist(), idx.tolist()
    ([-0.1, 0.3, 0.9, 1.1], [[1, 1, 2]])
    """
    p = _check_probs(probs)
    values, inv = np.unique(np.concatenate([p.ravel(), BOUNDS]), return_inverse=True)
    return values, inv.ravel()[:p.size].reshape(p.shape)


def _g(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``g(v_0..v_N)``, ``exp(d)`` and ``T``, computed stably (shifted by ``max(d)``, which cancels)."""
    e = np.exp(d - d.max())
    s = np.concatenate([[0.0], np.cumsum(e)])
    return s / s[-1], e, float(s[-1])


def _loss_terms(g: np.ndarray, idx: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """The mean loss and :math:`c_k = \\partial \\mathcal{L} / \\partial g(v_k)`."""
    g0, g1, g2 = g[idx[:, 0]], g[idx[:, 1]], g[idx[:, 2]]
    n = len(idx)
    loss = float(np.mean((g0 + g2 - 1) ** 2 + (g0 - g1) ** 2 - lam * (g0 - g2) ** 2))
    d0 = 2 * (g0 + g2 - 1) + 2 * (g0 - g1) - 2 * lam * (g0 - g2)
    d1 = -2 * (g0 - g1)
    d2 = 2 * (g0 + g2 - 1) + 2 * lam * (g0 - g2)
    c = np.bincount(idx.ravel(), weights=np.column_stack([d0, d1, d2]).ravel(), minlength=len(g)) / n
    return loss, c


def noa_loss(d, idx, *, lam: float = LAMBDA) -> float:
    """:math:`\\mathcal{L}(d)` for the knot indices ``idx`` (items x 3, from :func:`knots`)."""
    g, _, _ = _g(np.asarray(d, dtype=float))
    return _loss_terms(g, np.asarray(idx), float(lam))[0]


def noa_gradient(d, idx, *, lam: float = LAMBDA) -> np.ndarray:
    """The exact gradient :math:`\\partial \\mathcal{L} / \\partial d_i` (module docstring), length N.

    >>> v, idx = knots([[0.7, 0.6, 0.5], [0.2, 0.4, 0.9]])
    >>> d = np.random.default_rng(0).normal(size=len(v) - 1)
    >>> h = 1e-6 * np.eye(len(d))[2]
    >>> fd = (noa_loss(d + h, idx) - noa_loss(d - h, idx)) / 2e-6
    >>> bool(abs(noa_gradient(d, idx)[2] - fd) < 1e-8)
    True
    """
    d = np.asarray(d, dtype=float)
    g, e, t = _g(d)
    _, c = _loss_terms(g, np.asarray(idx), float(lam))
    above = np.cumsum(c[::-1])[::-1]  # above[k] = sum_{j >= k} c_j
    return e / t * (above[1:] - c @ g)


def released_gradient(d, idx, *, lam: float = LAMBDA) -> np.ndarray:
    """The authors' (erroneous) gradient of one mini-batch, summed over its items, as their script computes it.

    For an item with knot indices :math:`(s_0, s_1, s_2)`, with :math:`G_1 = a + b + c` and
    :math:`G_2 = a - b - c` where :math:`a = 2(g_{s_0} + g_{s_2} - 1)`, :math:`b = 2\\lambda(g_{s_0} - g_{s_1})`,
    :math:`c = 2\\lambda(g_{s_0} - g_{s_2})`, every key :math:`k` in :math:`(s_0, G_1), (s_1, G_2), (s_2, G_2)` adds
    :math:`-G\\, e^{d_{s_0-1}} / T^2` to :math:`d_i` for :math:`i < k` and
    :math:`G\\, e^{d_{s_0-1}} (1 - g_{s_0}) / T` for :math:`i \\ge k`. Not shift-invariant: uses ``d`` as given.
    """
    d = np.asarray(d, dtype=float)
    idx = np.asarray(idx)
    n_par = len(d)
    e = np.exp(d)
    s = np.concatenate([[0.0], np.cumsum(e)])
    t = s[-1]
    g = s / t
    s0, s1, s2 = idx[:, 0], idx[:, 1], idx[:, 2]
    a = 2 * (g[s0] + g[s2] - 1.0)
    b = 2 * lam * (g[s0] - g[s1])
    c = 2 * lam * (g[s0] - g[s2])
    below_amt = -e[s0 - 1] / t ** 2  # what an index i < k receives, per unit of G
    above_amt = e[s0 - 1] * (1.0 - g[s0]) / t  # i >= k
    keys = np.concatenate([s0, s1, s2])
    coef = np.concatenate([a + b + c, a - b - c, a - b - c])
    lo = np.bincount(keys, weights=coef * np.tile(below_amt, 3), minlength=n_par + 1)
    hi = np.bincount(keys, weights=coef * np.tile(above_amt, 3), minlength=n_par + 1)
    # i < k: keys strictly above i; i >= k: keys at or below i
    strictly_above = np.cumsum(lo[::-1])[::-1][1:n_par + 1]
    at_or_below = np.cumsum(hi)[:n_par]
    return strictly_above + at_or_below


def _isotonic(values: np.ndarray, g: np.ndarray, idx: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """PAVA through the interior points ``(v_k, g(v_k))``, ``k = 1..N-1``, with clipping (the authors' fit);
    and the share of the fitted probabilities mapped within 0.001 of 1/2."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(out_of_bounds="clip").fit(values[1:-1], g[1:-1])
    at_half = float(np.mean(np.abs(g[idx] - 0.5) < 1e-3))
    return tuple(map(float, iso.X_thresholds_)), tuple(map(float, iso.y_thresholds_)), at_half


def fit_noa(probs, *, lam: float = LAMBDA, tol: float = 1e-12, max_iter: int = 20_000,
            judge: str = "") -> NoaCalibration:
    """Fit NOA with the exact gradient by L-BFGS to convergence, then PAVA.

    Parameters
    ----------
    probs
        ``(items, 3)`` the judge's P("A") under ``s0``, ``s1`` (positions swapped) and ``s2`` (IDs swapped),
        on the estimation subset.
    lam
        Lambda, the weight of the term that keeps ``g`` from the constant (0.05, the authors' value).
    tol, max_iter
        L-BFGS's tolerances (relative loss change and projected gradient) and its iteration cap.
    judge
        The judge's name, kept with the map.

    Returns
    -------
    NoaCalibration
        ``method="noa"``; ``converged`` and ``iterations`` from the optimiser.
    """
    from scipy.optimize import minimize

    values, idx = knots(probs)
    fun = lambda d: (noa_loss(d, idx, lam=lam), noa_gradient(d, idx, lam=lam))
    res = minimize(fun, np.zeros(len(values) - 1), jac=True, method="L-BFGS-B",
                   options={"maxiter": int(max_iter), "ftol": tol, "gtol": tol, "maxcor": 30})
    d = res.x - res.x.mean()  # the unique representative (g does not change)
    g, _, _ = _g(d)
    x, y, at_half = _isotonic(values, g, idx)
    return NoaCalibration("noa", x=x, y=y, lam=float(lam), n_items=len(idx), iterations=int(res.nit),
                          loss=float(res.fun), converged=bool(res.success), judge=judge, at_half=at_half)


def fit_noa_released(probs, *, lam: float = LAMBDA, lr: float = 10.0, batch_size: int = 64, epochs: int = 1,
                     judge: str = "") -> NoaCalibration:
    """Fit NOA as the authors' released script does (module docstring), then PAVA.

    ``d`` starts at 0; each mini-batch of ``batch_size`` items, in the given order, moves
    ``d += lr * released_gradient(d, batch) / batch_size`` (the last, shorter batch is also divided
    by ``batch_size``); ``d`` is centred after each epoch.
    """
    values, idx = knots(probs)
    d = np.zeros(len(values) - 1)
    steps = 0
    for _ in range(int(epochs)):
        for start in range(0, len(idx), int(batch_size)):
            d = d + lr * released_gradient(d, idx[start:start + batch_size], lam=lam) / batch_size
            steps += 1
        d = d - d.mean()
    g, _, _ = _g(d)
    x, y, at_half = _isotonic(values, g, idx)
    return NoaCalibration("noa_released", x=x, y=y, lam=float(lam), n_items=len(idx), iterations=steps,
                          loss=noa_loss(d, idx, lam=lam), converged=False, judge=judge, at_half=at_half)
