"""CalibraEval's non-parametric order-preserving algorithm (NOA): a label-free map of a judge's P("A").

Li et al., "CalibraEval: Calibrating prediction distribution to mitigate selection bias in
LLMs-as-judges" (2024), Section 3.3; the equations lost in our copy of the paper are restated below
from the authors' code (github.com/CSHaitao/CalibraEval, ``src/CalibraEval.py``).

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

an O(N) computation (:func:`noa_gradient`; checked against finite differences in the tests). That is
the released parametrisation's gradient; it cannot represent a flat segment (:math:`e^{d_i} > 0`), so an
optimiser on ``d`` stops above the minimum. :func:`fit_noa` therefore minimises :math:`\\mathcal{L}` over the
knot values themselves, :math:`0 = g(v_0) \\le \\dots \\le g(v_N) = 1` (accelerated projected gradient, the
projection being PAVA, then the exact solution of the tied-value structure found), on the distinct triples of
knot indices weighted by their counts, and fits an isotonic regression (PAVA,
:class:`sklearn.isotonic.IsotonicRegression` with clipping, the authors' Eqs. 16-18) through the interior
points :math:`(v_k, g(v_k))`, which makes :math:`g` a continuous, piecewise linear map of any probability.

**Collapse, and choosing lambda.** Run to its minimum, the objective prefers step-like maps, and when the
judge's probabilities disagree across the prompts more than one monotone map can reconcile (a strong position
effect, or plain inconsistency from prompt to prompt) the minimum at lambda 0.05 is the trivial map
:math:`g = 1/2`, loss 0, whose decisions are arbitrary. :func:`fit_noa_selected` chooses lambda without labels:
the smallest on :data:`LAMBDA_GRID` whose map, fitted on two thirds of the estimation items, keeps a spread of
verdicts on the other third (not collapsed, and no less position-consistent than no calibration, within one
standard error), refitted on all of them. A map that still collapses carries a ``reason`` built from
:func:`prompt_effects` (the mean and spread of :math:`p_0 - p_1`), and is never offered as a calibration.

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

from dataclasses import asdict, dataclass, replace
from functools import cache

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = [
    "LAMBDA",
    "LAMBDA_GRID",
    "NoaCalibration",
    "fit_noa",
    "fit_noa_released",
    "fit_noa_selected",
    "collapse_reason",
    "knots",
    "noa_gradient",
    "noa_loss",
    "noa_loss_values",
    "prompt_effects",
    "released_gradient",
]

#: The authors' lambda (``iso_regression(..., lam=0.05)`` in their script).
LAMBDA = 0.05
#: The lambdas :func:`fit_noa_selected` tries, smallest first.
LAMBDA_GRID = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
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
        when the position effect, or the judge's inconsistency across prompts, is too strong for lambda, and
        the decisions are then arbitrary.
    selection
        How lambda was chosen (:func:`fit_noa_selected`); empty when it was given.
    reason
        Why the map is not offered as a calibration (it collapses); empty when it is.

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
    selection: str = ""
    reason: str = ""

    @property
    def collapsed(self) -> bool:
        """Whether the map is not to be used as a calibration: most fitted probabilities are mapped to (almost)
        exactly 1/2 (the trivial solution), or the lambda selection found no lambda that avoids it (``reason``)."""
        return self.at_half > 0.5 or bool(self.reason)

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
                       at_half=float(data.get("at_half", 0.0)), selection=str(data.get("selection", "")),
                       reason=str(data.get("reason", "")))
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


def noa_loss_values(g, idx, *, lam: float = LAMBDA) -> float:
    """:math:`\\mathcal{L}` of the knot values ``g`` (:math:`g(v_0) .. g(v_N)`, any monotone map, flat segments
    included) for the knot indices ``idx``.

    >>> v, idx = knots([[0.7, 0.6, 0.2]])
    >>> noa_loss_values(np.full(len(v), 0.5), idx)
    0.0
    """
    return _loss_terms(np.asarray(g, dtype=float), np.asarray(idx), float(lam))[0]


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


def _map_knots(values: np.ndarray, g: np.ndarray,
               idx: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """:func:`_isotonic` without scikit-learn (whose import costs a command about a second): PAVA through the
    interior points (which only evens out the rounding of the tied-value solve, :math:`g` being monotone), then
    the points that end or start a flat run, as ``IsotonicRegression.X_thresholds_`` keeps them."""
    from scipy.optimize import isotonic_regression

    y = isotonic_regression(g[1:-1]).x
    keep = np.ones(len(y), dtype=bool)
    keep[1:-1] = (y[:-2] != y[1:-1]) | (y[1:-1] != y[2:])
    at_half = float(np.mean(np.abs(g[idx] - 0.5) < 1e-3))
    return tuple(map(float, values[1:-1][keep])), tuple(map(float, y[keep])), at_half


def _compress(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct knot triples, in lexicographic order, and their weights (count / items): the loss depends on
    nothing else."""
    base = int(idx.max()) + 1
    if base ** 3 >= 2 ** 63:
        uniq, counts = np.unique(idx, axis=0, return_counts=True)
        return uniq, counts / len(idx)
    # one integer per triple, in the same order as the rows, sorts several times faster than the rows
    key, counts = np.unique((idx[:, 0] * base + idx[:, 1]) * base + idx[:, 2], return_counts=True)
    uniq = np.column_stack([key // (base * base), key // base % base, key % base])
    return uniq, counts / len(idx)


@dataclass(frozen=True)
class _Compressed:
    """The probabilities as :func:`fit_noa` uses them: the knots, each probability's knot index and the weighted
    distinct triples (computed once for every lambda tried on the same items)."""

    values: np.ndarray
    idx: np.ndarray
    tri: np.ndarray
    w: np.ndarray

    @classmethod
    def of(cls, probs) -> _Compressed:
        values, idx = knots(probs)
        return cls(values, idx, *_compress(idx))


def _value_loss(g: np.ndarray, tri: np.ndarray, w: np.ndarray, lam: float) -> float:
    """:math:`\\mathcal{L}` of the knot values ``g`` on the weighted distinct triples, term by term (the accurate
    value reported; the solver works with the quadratic form of :class:`_Quadratic`)."""
    g0, g1, g2 = g[tri[:, 0]], g[tri[:, 1]], g[tri[:, 2]]
    a, b, c = g0 + g2 - 1, g0 - g1, g0 - g2
    return float(w @ (a * a + b * b - lam * c * c))


@dataclass(frozen=True)
class _Quadratic:
    """The loss as a quadratic, :math:`\\mathcal{L}(g) = \\tfrac12 g^T H g + q^T g + \\sum w`, built once from the
    weighted distinct triples: the sparse Hessian ``H`` (CSR), its entries ``row, col, val`` and ``q``.

    Each triple adds three weighted squares of a linear form :math:`u^T g`: :math:`u = e_{s_0} + e_{s_2}` (less 1;
    weight :math:`w`), :math:`e_{s_0} - e_{s_1}` (:math:`w`) and :math:`e_{s_0} - e_{s_2}` (:math:`-\\lambda w`),
    so :math:`H = 2 \\sum w_u u u^T` has four entries per form (summed where knots repeat) and
    :math:`q = -2 \\sum w (e_{s_0} + e_{s_2})`. The gradient is one sparse product, :math:`Hg + q`.
    """

    H: object
    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    q: np.ndarray

    @classmethod
    def of(cls, tri: np.ndarray, w: np.ndarray, lam: float, size: int) -> _Quadratic:
        from scipy import sparse

        s0, s1, s2 = tri[:, 0], tri[:, 1], tri[:, 2]
        first, second = np.concatenate([s0, s0, s0]), np.concatenate([s2, s1, s2])
        sign = np.repeat([1.0, -1.0, -1.0], len(tri))
        wt = 2 * np.concatenate([w, w, -lam * w])
        rows = np.concatenate([first, first, second, second])
        cols = np.concatenate([first, second, first, second])
        vals = np.concatenate([wt, wt * sign, wt * sign, wt])
        H = sparse.coo_matrix((vals, (rows, cols)), shape=(size, size)).tocsr()  # repeated entries are summed
        coo = H.tocoo()
        q = -2 * np.bincount(np.concatenate([s0, s2]), weights=np.concatenate([w, w]), minlength=size)
        return cls(H, coo.row, coo.col, coo.data, q)


def _rise(d: np.ndarray, grad: np.ndarray, dh: np.ndarray) -> float:
    """:math:`\\mathcal{L}(x + d) - \\mathcal{L}(x) = d^T (\\nabla\\mathcal{L}(x) + \\tfrac12 Hd)` from the gradient at
    :math:`x` and :math:`Hd`: exact for the quadratic, and free of the cancellation of subtracting two losses
    near 0. einsum rather than a BLAS dot: no thread start-up on every step of a long loop."""
    return float(np.einsum("i,i->", d, grad) + 0.5 * np.einsum("i,i->", d, dh))


def _project(y: np.ndarray) -> np.ndarray:
    """The Euclidean projection onto the monotone maps: :math:`0 = g_0 \\le g_1 \\le \\dots \\le g_N = 1`
    (PAVA of the interior values, then clipping to [0, 1], which is the exact projection onto the box-bounded
    monotone cone)."""
    from scipy.optimize import isotonic_regression

    out = np.empty_like(y)
    out[0], out[-1] = 0.0, 1.0
    if len(y) > 2:
        np.clip(isotonic_regression(y[1:-1]).x, 0.0, 1.0, out=out[1:-1])
    return out


def _positive_definite_solve(A, rhs: np.ndarray) -> np.ndarray | None:
    """The solution of :math:`Az = b` for a sparse symmetric :math:`A`, or None unless :math:`A` is positive
    definite: a sparse LU with symmetric ordering and diagonal pivots is :math:`LDL^T` (U = DL^T), and :math:`A`
    is positive definite exactly when every pivot is positive (Sylvester's law of inertia)."""
    from scipy.sparse.linalg import splu

    try:
        lu = splu(A.tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    except RuntimeError:  # exactly singular
        return None
    if not (np.array_equal(lu.perm_r, lu.perm_c) and np.all(lu.U.diagonal() > 0)):
        return None
    return lu.solve(rhs)


def _polish(g: np.ndarray, quad: _Quadratic) -> np.ndarray | None:
    """The exact stationary point with the blocks of equal values of ``g`` held tied (a reduced linear system);
    None when it is not a strictly monotone minimum of the reduced problem."""
    from scipy import sparse

    interior = g[1:-1]
    free = (interior > 1e-12) & (interior < 1 - 1e-12)
    if not free.any():
        return None
    where = np.flatnonzero(free) + 1  # the free knots, in order
    block = np.concatenate([[0], np.cumsum(np.abs(np.diff(interior)) > 1e-12)])[free]
    col = np.concatenate([[0], np.cumsum(block[1:] != block[:-1])])  # the blocks numbered 0..m-1 (sorted)
    m = int(col[-1]) + 1
    fixed = np.where(g > 1 - 1e-12, 1.0, 0.0)
    fixed[where] = 0.0
    # the reduced Hessian P^T H P (P: free knot -> its block), by renaming H's entries to blocks
    blk = np.full(len(g), -1)
    blk[where] = col
    r, c = blk[quad.row], blk[quad.col]
    both = (r >= 0) & (c >= 0)
    A = sparse.coo_matrix((quad.val[both], (r[both], c[both])), shape=(m, m))
    rhs = -np.bincount(col, weights=(quad.q + quad.H @ fixed)[where], minlength=m)
    z = _positive_definite_solve(A, rhs)
    if z is None:
        return None
    out = fixed
    out[where] = z[col]
    if not (np.all(np.diff(out) >= -1e-12) and out.min() >= -1e-12 and out.max() <= 1 + 1e-12):
        return None
    return np.clip(out, 0.0, 1.0)


def _kkt(g: np.ndarray, grad: np.ndarray, step: float) -> float:
    """The projected-gradient residual :math:`\\|g - \\Pi(g - t\\nabla)\\|_\\infty / t`: 0 exactly at a first-order
    stationary point of the constrained problem (flat segments and values at 0 or 1 included)."""
    return float(np.max(np.abs(g - _project(g - step * grad))) / step)


def _fit_values(tri: np.ndarray, w: np.ndarray, lam: float, start: np.ndarray, *, tol: float,
                max_iter: int) -> tuple[np.ndarray, float, int, bool]:
    """Minimise :math:`\\mathcal{L}` over the monotone values: accelerated projected gradient (FISTA with restart
    on any increase) to find which values are tied or at 0 and 1, then the exact stationary point of that
    structure (:func:`_polish`), accepted when it lowers the loss; converged when the residual (:func:`_kkt`)
    is below ``tol``. A step costs one sparse product :math:`Hg` (:class:`_Quadratic`) and one PAVA."""
    quad = _Quadratic.of(tri, w, lam, len(start))
    H, q = quad.H, quad.q
    step = 1.0 / max(float(abs(H).sum(axis=1).max()), 1e-12)  # 1 / Gershgorin bound on the curvature
    x = _project(start)
    hx = H @ x
    gx = hx + q
    y, gy, theta = x, gx, 1.0  # gy: the gradient at y
    for it in range(1, int(max_iter) + 1):
        z = gy * -step
        z += y
        xn = _project(z)  # the projected gradient step from y
        hxn = H @ xn
        d, dh = xn - x, hxn - hx
        if _rise(d, gx, dh) > 1e-15:  # momentum overshot: restart from the last iterate
            y, gy, theta = x, gx, 1.0
            continue
        theta_n = (1 + np.sqrt(1 + 4 * theta ** 2)) / 2
        mom = (theta - 1) / theta_n
        gxn = hxn + q
        y, gy = xn + mom * d, gxn + mom * dh  # H is linear: the gradient at y without another product
        x, hx, gx, theta = xn, hxn, gxn, theta_n
        if it % 25 == 0 or it == max_iter:
            exact = _polish(x, quad)
            if exact is not None:
                he = H @ exact
                if _rise(exact - x, gx, he - hx) <= 1e-15 and _kkt(exact, he + q, step) < tol:
                    return exact, _value_loss(exact, tri, w, lam), it, True
            if _kkt(x, gx, step) < tol:
                return x, _value_loss(x, tri, w, lam), it, True
    return x, _value_loss(x, tri, w, lam), int(max_iter), False


def fit_noa(probs, *, lam: float = LAMBDA, tol: float = 1e-9, max_iter: int = 20_000,
            judge: str = "") -> NoaCalibration:
    """Fit NOA to a stationary point of :math:`\\mathcal{L}` over every monotone map, then PAVA.

    The exponential parametrisation (module docstring) cannot make two knot values equal, since
    :math:`e^{d_i} > 0`: its optimiser stops, and reports convergence, at a loss above what a map with flat
    segments reaches (on the sample: 72 of 2,700 decisions and Fleiss' kappa 0.010 apart). So the fit works on
    the knot values themselves, :math:`0 = g_0 \\le g_1 \\le \\dots \\le g_N = 1`, a quadratic objective over
    a convex set: accelerated projected gradient, the projection being PAVA with clipping, then the exact
    minimiser of the tied-value structure it found (one sparse linear solve). The data enter only through the
    distinct triples of knot indices and their counts, so the cost grows with distinct values, not items: the
    loss is a quadratic :math:`\\tfrac12 g^T H g + q^T g + 1` whose sparse Hessian is built once from the triples,
    and a step costs one sparse product and one PAVA over the knots (with every probability distinct, three
    knots per item). Started from the identity map (the raw probabilities).

    Parameters
    ----------
    probs
        ``(items, 3)`` the judge's P("A") under ``s0``, ``s1`` (positions swapped) and ``s2`` (IDs swapped),
        on the estimation subset.
    lam
        Lambda, the weight of the term that keeps ``g`` from the constant (0.05, the authors' value; see
        :func:`fit_noa_selected` for the label-free choice).
    tol, max_iter
        The stationarity tolerance (projected-gradient residual, :math:`\\max_k |g_k - \\Pi(g - t\\nabla)_k| / t`)
        and the iteration cap.
    judge
        The judge's name, kept with the map.

    Returns
    -------
    NoaCalibration
        ``method="noa"``; ``converged`` when the residual is below ``tol``. The objective is not convex
        (the lambda term is concave), so this is a local minimum; the tests check that an independent
        constrained minimiser (SLSQP on the values) started from it or from the identity finds no lower loss.
    """
    return _fit_compressed(_Compressed.of(probs), lam=lam, tol=tol, max_iter=max_iter, judge=judge)


def _fit_compressed(data: _Compressed, *, lam: float, tol: float, max_iter: int, judge: str = "") -> NoaCalibration:
    """:func:`fit_noa` on probabilities already compressed."""
    g, loss, iterations, converged = _fit_values(data.tri, data.w, float(lam), np.clip(data.values, 0.0, 1.0),
                                                  tol=tol, max_iter=max_iter)
    x, y, at_half = _map_knots(data.values, g, data.idx)
    return NoaCalibration("noa", x=x, y=y, lam=float(lam), n_items=len(data.idx), iterations=int(iterations),
                          loss=float(loss), converged=bool(converged), judge=judge, at_half=at_half)


def _consistency(probs: np.ndarray, g=None) -> np.ndarray:
    """Per item, whether the verdicts in the original order (:math:`g(p_0)`) and the swapped order
    (:math:`1 - g(p_2)`) agree: both above 1/2, both below, or both exactly 1/2."""
    c0, c2 = (probs[:, 0], 1 - probs[:, 2]) if g is None else (g(probs[:, 0]), 1 - g(probs[:, 2]))
    return np.sign(c0 - 0.5) == np.sign(c2 - 0.5)


def _at_half(values: np.ndarray) -> float:
    return float(np.mean(np.abs(values - 0.5) < 1e-3))


def prompt_effects(probs) -> dict[str, float]:
    """What separates the judge's P("A") across the prompts, for the message of a fit that collapses.

    ``position_shift``: the mean of :math:`p_0 - p_1` (the same output labelled "A", moved from position 1
    to 2), the systematic position effect; ``prompt_noise``: its standard deviation across items, the part no
    single map can undo (the judge is inconsistent across prompts even where it has no position preference).

    >>> prompt_effects([[0.8, 0.6, 0.3], [0.6, 0.4, 0.5]])
    {'position_shift': 0.2, 'prompt_noise': 0.0}
    """
    p = _check_probs(probs)
    diff = p[:, 0] - p[:, 1]
    return {"position_shift": round(float(diff.mean()), 12), "prompt_noise": round(float(diff.std()), 12)}


def collapse_reason(probs, context: str) -> str:
    """The analyst's sentence for a NOA fit that collapsed on ``probs`` (its estimation subset): what the judge's
    probabilities show (:func:`prompt_effects`), whether a position effect or inconsistency across prompts
    dominates, and that the uncalibrated numbers stand. ``context`` says when it collapsed."""
    eff = prompt_effects(probs)
    shift, noise = abs(eff["position_shift"]), eff["prompt_noise"]
    cause = ("mostly a systematic position effect" if shift >= noise
             else "mostly inconsistency from prompt to prompt, not a position preference")
    return (f"NOA collapsed to the constant map g = 1/2 {context}: the judge's P('A') moves by "
            f"{eff['position_shift']:+.2f} on average when its outputs swap positions, with a spread of "
            f"{noise:.2f} across items ({cause}), more than one order-preserving map can reconcile; "
            "its decisions would be arbitrary, so the uncalibrated numbers stand")


def fit_noa_selected(probs, *, grid: tuple[float, ...] = LAMBDA_GRID, holdout: float = 1 / 3, seed: int = 0,
                     judge: str = "", tol: float = 1e-9, max_iter: int = 20_000) -> NoaCalibration:
    """Fit NOA with lambda chosen without labels on a held-out split; a fit that collapses is marked not offered.

    **The rule.** The items are split (seeded) into a fitting part and a held-out part (``holdout``, a third).
    For each lambda on ``grid``, smallest first, the map is fitted (:func:`fit_noa`) on the fitting part and
    applied to the held-out part. A lambda *keeps a spread of verdicts* when, on the held-out items,

    * at most half of the calibrated probabilities lie within 0.001 of 1/2 (the map has not collapsed to the
      constant :math:`g = 1/2`, whose decisions are arbitrary), and
    * the position consistency (the same verdict from :math:`g(p_0)` and :math:`1 - g(p_2)`) is at least
      the uncalibrated one less one standard error of the paired difference,
      :math:`\\bar c_g \\ge \\bar c_{raw} - \\mathrm{sd}(c_g - c_{raw}) / \\sqrt{m}`.

    The smallest such lambda is refitted on all the items. Why the smallest: the lambda term rewards spreading
    :math:`g(p_0)` and :math:`g(p_2)` apart whatever the content, so lambda should be no larger than what keeps
    the fit away from the trivial solution. If no lambda qualifies, or the refit collapses, the returned map
    has ``reason`` set (:attr:`NoaCalibration.collapsed` true) and is not to be used: callers report the
    uncalibrated numbers. No gold label is used anywhere. With fewer than six items there is no held-out part,
    and the smallest lambda whose fit does not collapse is used.

    Parameters
    ----------
    probs
        ``(items, 3)`` P("A") under s0, s1, s2 (the estimation subset).
    grid
        The lambdas tried, in increasing order (default :data:`LAMBDA_GRID`).
    holdout
        The share of items held out, in (0, 1).
    seed
        Seed of the split.
    judge, tol, max_iter
        As :func:`fit_noa`.

    Returns
    -------
    NoaCalibration
        ``method="noa"``; ``lam`` the chosen lambda, ``selection`` how it was chosen, ``reason`` why the map is
        not offered (empty when it is).
    """
    p = _check_probs(probs)
    grid = tuple(sorted(float(x) for x in grid))
    if not grid or min(grid) < 0 or not 0 < holdout < 1:
        raise DataError("the lambda grid must hold non-negative values and the held-out share lie in (0, 1)",
                        fix="use e.g. grid=(0.05, 0.1, 0.2) and holdout=1/3")
    n = len(p)
    m = int(round(holdout * n))
    split = n >= 6 and 1 <= m < n
    if split:
        order = np.random.default_rng(seed).permutation(n)
        fit_part, held = p[order[m:]], p[order[:m]]
        raw = _consistency(held)
        part_data = _Compressed.of(fit_part)
    whole = cache(lambda: _Compressed.of(p))  # compressed once, for every lambda refitted on all the items
    tried, cal, refit_collapsed = [], None, []
    for lam in grid:
        if split:
            part = _fit_compressed(part_data, lam=lam, tol=tol, max_iter=max_iter)
            cons = _consistency(held, part.apply)
            floor = raw.mean() - (cons.astype(float) - raw).std() / np.sqrt(m)
            tried.append(f"{lam:g}: {cons.mean():.2f}")
            if part.at_half > 0.5 or _at_half(part.apply(held)) > 0.5 or cons.mean() < floor:
                continue
        full = _fit_compressed(whole(), lam=lam, tol=tol, max_iter=max_iter, judge=judge)
        if not full.collapsed:
            cal = full
            break
        refit_collapsed.append(f"{lam:g}")
    if split:
        how = (f"lambda chosen on {m} held-out of {n} items (position consistency {raw.mean():.2f} uncalibrated; "
               f"calibrated, per lambda tried: {', '.join(tried)})")
    else:
        how = f"lambda the smallest of {', '.join(map(str, grid))} whose fit does not collapse ({n} items: none held out)"
    if refit_collapsed:
        how += f"; refitted on all items, lambda {', '.join(refit_collapsed)} collapsed"
    if cal is not None:
        return replace(cal, selection=how)
    cal = _fit_compressed(whole(), lam=grid[-1], tol=tol, max_iter=max_iter, judge=judge)
    reason = collapse_reason(p, f"or lost position consistency on held-out items at every lambda up to {grid[-1]:g}")
    return replace(cal, selection=how, reason=reason)


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
