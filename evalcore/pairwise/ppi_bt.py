"""The judge-corrected leaderboard: prediction-powered Bradley-Terry scores (Boyeau et al. 2024).

The judge gave a verdict on every item, the humans on a random subset. Boyeau, Angelopoulos, Yosef, Malik &
Jordan ("AutoEval Done Right: Using Synthetic Data for Model Evaluation", 2024, arXiv:2403.07008, §3) estimate
the humans' Bradley-Terry scores from both, by prediction-powered M-estimation (PPI++, Angelopoulos, Duchi & Zrnic
2023, arXiv:2311.01453): with the BT log-loss :math:`\\ell_s(x, y) = -y\\,x^\\top s + \\log(1 + e^{x^\\top s})` of a
battle (:math:`x = e_a - e_b`, :math:`y` the result for a: 1, 1/2 a tie, 0),

.. math:: \\hat s_\\lambda = \\arg\\min_s \\; \\frac{1}{n}\\sum_{i \\le n} \\ell_s(x_i, Y_i)
          + \\lambda \\Big( \\frac{1}{N}\\sum_{j \\le N} \\ell_s(\\tilde x_j, \\hat Y_j)
          - \\frac{1}{n}\\sum_{i \\le n} \\ell_s(x_i, \\hat Y_i) \\Big),

over the n labelled items (the humans' :math:`Y` and the judge's :math:`\\hat Y`) and the N unlabelled ones (the
judge's only): the losses averaged per set, as in the paper. The bracket has mean 0 whatever the judge's bias,
so the estimate targets the humans' scores; :math:`\\lambda = 0` is the humans alone, :math:`\\lambda = 1` plain
PPI. Scores are centred to mean 0, as every leaderboard score here.

Tuning. :math:`\\lambda` minimises the estimate's asymptotic variance (PPI++, the M-estimator case, as
``ppi_py``'s ``_calc_lam_glm`` computes it), for the centred scores:

.. math:: \\hat\\lambda = \\frac{\\operatorname{tr}(H^{+} (C + C^\\top) H^{+})}
          {2 (1 + n/N) \\operatorname{tr}(H^{+} V H^{+})}, \\quad \\text{clipped to } [0, 1],

with, at the plain-PPI estimate (:math:`\\lambda = 1`, as ``ppi_py.ppi_logistic_pointestimate`` does it),
:math:`C` the covariance over the labelled items of the gradients :math:`\\nabla\\ell(x_i, Y_i)` and
:math:`\\nabla\\ell(x_i, \\hat Y_i)` (divisor n), :math:`V` the covariance of :math:`\\nabla\\ell(x, \\hat Y)` over
all n + N items (divisor n + N - 1) and :math:`H` the Hessian :math:`\\frac{1}{n+N}\\sum p(1-p)\\,x x^\\top`.
:math:`H^{+}` is its pseudo-inverse: the BT Hessian is singular along the constant shift, and the
pseudo-inverse gives the variance of the centred scores. The estimate is then refitted at
:math:`\\hat\\lambda`. With no unlabelled item :math:`\\lambda = 0`: the humans' own estimate.

Items. An item (one system pair) is labelled when a human voted on it and the judge gave a verdict; Y is the
mean of the humans' votes on it (each vote 1, 1/2 or 0: the loss is linear in y, so this averages the votes'
losses, and equals the humans' leaderboard fit when every item has the same number of votes) and
:math:`\\hat Y` the judge's verdict (its rows swapped and summed). Items the humans judged and the judge did not
are left out (the rectifier needs both), and counted in the note.

Intervals. Percentile intervals of a bootstrap that resamples the labelled and the unlabelled items separately
(n from n, N from N), each resample refitted with its own tuned :math:`\\lambda`; they hold when the labelled items
are a random sample of the items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS, HUMANS_LABEL
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, resample_counts, root_seed
from ..stats.ppi_table import MIN_LABELED
from .battles import CORRECTED_PREFIX, LEADERBOARD_COLUMNS, battles, score_rows
from .bradley_terry import fit_bt

__all__ = ["PPIBTFit", "ppi_bt", "ppi_bt_lambda", "ppi_resamples", "ppi_leaderboard"]

#: The key of the resamples' random stream (:func:`evalcore.stats.bootstrap.cell_rng`), with the judge.
_STREAM = "prediction-powered systems leaderboard"


@dataclass(frozen=True)
class PPIBTFit:
    """Prediction-powered Bradley-Terry scores, one fit or many (:func:`ppi_bt`).

    Attributes
    ----------
    scores
        ``(k,)`` or ``(B, k)``: centred scores on the logit scale; NaN for a system without battles.
    lam
        The judge's weight :math:`\\lambda` of each fit.
    ridge
        The ridge penalty of each fit (0: none; see :func:`evalcore.pairwise.bradley_terry.fit_bt`).
    converged
        Whether each fit converged.
    notes
        For a single fit: what a reader must know.
    """

    scores: np.ndarray
    lam: np.ndarray | float
    ridge: np.ndarray | float
    converged: np.ndarray | bool
    notes: tuple[str, ...] = ()


def _check_units(a, b, y, yhat, n_systems: int):
    a, b = np.asarray(a, dtype=np.int64).ravel(), np.asarray(b, dtype=np.int64).ravel()
    y, yhat = np.asarray(y, dtype=float).ravel(), np.asarray(yhat, dtype=float).ravel()
    if not len(a) == len(b) == len(y) == len(yhat):
        raise DataError(f"the items' arrays differ in length ({len(a)}, {len(b)}, {len(y)}, {len(yhat)})",
                        fix="give one a, b, y and yhat per item")
    if not np.isfinite(yhat).all():
        raise DataError("the judge's verdict is missing on some items", fix="pass only the items the judge judged")
    labeled = np.isfinite(y)
    for name, v in (("human", y[labeled]), ("judge's", yhat)):
        if np.any((v < 0) | (v > 1)):
            raise DataError(f"a {name} result is not between 0 and 1", fix="use 1 (a wins), 0.5 (tie), 0 (b wins)")
    return a, b, np.where(labeled, y, 0.0), yhat, labeled


def _design(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """The +-1 design: row i is e_a - e_b."""
    D = np.zeros((len(a), k))
    D[np.arange(len(a)), a] = 1.0
    D[np.arange(len(a)), b] = -1.0
    return D


def ppi_bt_lambda(scores, a, b, y, yhat, labeled, *, n_systems: int, weight=None) -> np.ndarray:
    """PPI++'s variance-minimising :math:`\\lambda` for the centred Bradley-Terry scores, clipped to [0, 1].

    The formula is in the module docstring; the statistics are taken at ``scores``, the plain-PPI estimate.

    Parameters
    ----------
    scores
        ``(k,)`` or ``(B, k)``: the scores at which the gradients and the Hessian are taken.
    a, b, y, yhat, labeled
        Per item: the two systems, the humans' mean result (any value where not labelled), the judge's result,
        and whether the item is labelled.
    n_systems
        The number of systems.
    weight
        None, or ``(B, items)`` counts of each item (bootstrap resamples).

    Returns
    -------
    numpy.ndarray
        ``(B,)`` the tuned :math:`\\lambda` (0 where there is no unlabelled item or the judge's gradients do not
        vary).

    Examples
    --------
    A judge that agrees with the humans on every labelled item:

    >>> a, b = np.array([0, 0, 1, 1, 2, 0]), np.array([1, 2, 2, 2, 0, 1])
    >>> y = np.array([1, 0, 1, np.nan, np.nan, np.nan]); yhat = np.array([1, 0, 1, 1, 0, 1.0])
    >>> ppi_bt_lambda(np.zeros(3), a, b, y, yhat, np.isfinite(y), n_systems=3).round(3).tolist()
    [0.469]
    """
    k = int(n_systems)
    labeled = np.asarray(labeled, dtype=bool)
    y, yhat = np.where(labeled, np.asarray(y, dtype=float), 0.0), np.asarray(yhat, dtype=float)
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    c = np.ones((1, len(a))) if weight is None else np.atleast_2d(np.asarray(weight, dtype=float))
    s = np.broadcast_to(np.nan_to_num(s), (c.shape[0], k))
    D = _design(a, b, k)
    p = 1.0 / (1.0 + np.exp(-(s @ D.T)))  # (B, items)
    r, rhat = p - y[None, :], p - yhat[None, :]  # a gradient is (p - y) x
    cl, cu = c * labeled, c * ~labeled
    n, N = cl.sum(axis=1), cu.sum(axis=1)
    T = n + N

    # Why per pair: x x^T depends only on the item's pair, so sum_i w_i x_i x_i^T is a (B, pairs) matrix product.
    first, pair = np.unique(a * k + b, return_index=True, return_inverse=True)[1:]
    M = np.zeros((len(a), len(first)))
    M[np.arange(len(a)), pair.ravel()] = 1.0
    E = np.einsum("jp,jq->jpq", D[first], D[first]).reshape(len(first), k * k)

    def outer_sum(w):  # sum_i w_i x_i x_i^T, (B, k, k)
        return ((w @ M) @ E).reshape(len(w), k, k)

    def mean_grad(w, res, tot):
        return (w * res) @ D / np.maximum(tot, 1e-300)[:, None]

    g_mean, gh_mean = mean_grad(cl, r, n), mean_grad(cl, rhat, n)
    cross = outer_sum(cl * r * rhat) - n[:, None, None] * np.einsum("bp,bq->bpq", g_mean, gh_mean)
    C = (cross + cross.transpose(0, 2, 1)) / np.maximum(n, 1e-300)[:, None, None]
    m_all = mean_grad(c, rhat, T)
    V = (outer_sum(c * rhat * rhat) - T[:, None, None] * np.einsum("bp,bq->bpq", m_all, m_all)) / \
        np.maximum(T - 1, 1e-300)[:, None, None]
    # Why rcond 1e-10: the constant shift's eigenvalue is 0 up to rounding (1e-17), and numpy's default cut-off
    # (1e-15 of the largest) can keep it, blowing the pseudo-inverse up.
    H = outer_sum(c * p * (1 - p)) / np.maximum(T, 1e-300)[:, None, None]
    Hinv = np.linalg.pinv(H, rcond=1e-10, hermitian=True)
    num = np.einsum("bij,bjk,bki->b", Hinv, C, Hinv)
    den = 2 * (1 + n / np.maximum(N, 1e-300)) * np.einsum("bij,bjk,bki->b", Hinv, V, Hinv)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where((N > 0) & (den > 0), num / den, 0.0)
    return np.clip(np.nan_to_num(lam), 0.0, 1.0)


def _classes(a, b, y, yhat, labeled, c):
    """Items alike for the fit (the same pair, results and labelling) merged into one, their weights summed:
    every statistic is a weighted sum over items, so the fits are the same, on a few dozen columns."""
    key = np.column_stack([a, b, labeled, y, yhat])
    uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(inv.ravel(), kind="stable")
    starts = np.searchsorted(inv.ravel()[order], np.arange(len(uniq)))
    merged = np.add.reduceat(c[:, order], starts, axis=1) if len(order) else c
    return a[first], b[first], y[first], yhat[first], labeled[first], merged


def _fit(a, b, y, yhat, labeled, k, lam, counts, init, names):
    """One batch of PPI fits at the given lambdas (B,): the three battle sets with their signed weights."""
    c = counts
    n, N = (c * labeled).sum(axis=1), (c * ~labeled).sum(axis=1)
    L, U = np.flatnonzero(labeled), np.flatnonzero(~labeled)
    inv_n, inv_N = 1.0 / np.maximum(n, 1e-300), 1.0 / np.maximum(N, 1e-300)
    lam_u = np.where(N > 0, lam, 0.0)
    # Why signed weights: the rectifier subtracts the judge's loss on the labelled items.
    w = np.hstack([c[:, L] * inv_n[:, None], -c[:, L] * (lam_u * inv_n)[:, None], c[:, U] * (lam_u * inv_N)[:, None]])
    aa, bb = np.concatenate([a[L], a[L], a[U]]), np.concatenate([b[L], b[L], b[U]])
    out = np.concatenate([y[L], yhat[L], yhat[U]])
    # One set of weights as a 1-D array: the core fit then names what a reader must know (ridge, groups).
    return fit_bt(aa, bb, out, n_systems=k, weight=w[0] if len(w) == 1 else w, init=init, names=names)


def ppi_bt(a, b, y, yhat, *, n_systems: int, lam: float | None = None, weight=None, init=None,
           names: Sequence[str] | None = None) -> PPIBTFit:
    """Prediction-powered Bradley-Terry scores from the judge's verdicts on every item and the humans' on some.

    Minimises :math:`\\frac1n\\sum_L \\ell_s(Y) + \\lambda(\\frac1N\\sum_U \\ell_s(\\hat Y) - \\frac1n\\sum_L
    \\ell_s(\\hat Y))` with the core fit :func:`evalcore.pairwise.bradley_terry.fit_bt` (signed weights), and
    :math:`\\lambda` tuned as PPI++ does for M-estimators (:func:`ppi_bt_lambda`, at the plain-PPI estimate;
    Boyeau et al. 2024; Angelopoulos, Duchi & Zrnic 2023); module docstring.

    Parameters
    ----------
    a, b
        ``(items,)`` the two systems of each item, codes ``0 .. n_systems - 1``.
    y
        ``(items,)`` the humans' result for ``a`` (mean of their votes: 1 win, 1/2 tie, 0 loss); NaN on items
        without human votes (unlabelled).
    yhat
        ``(items,)`` the judge's result for ``a``, on every item.
    n_systems
        The number of systems.
    lam
        None: tuned per fit; a number in [0, 1]: that weight (0 the humans alone, 1 plain PPI).
    weight
        None (every item once), ``(items,)`` for one fit, or ``(B, items)`` counts of each item for ``B`` fits
        at once (:func:`ppi_resamples`).
    init
        Starting scores, ``(k,)`` (the point estimate, for resamples).
    names
        The systems' names, for the notes.

    Returns
    -------
    PPIBTFit

    Examples
    --------
    Three systems with true scores 0.5, 0 and -0.5; a judge right on 85% of 2000 items, the humans on 200:

    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 3, 2000); b = (a + rng.integers(1, 3, 2000)) % 3
    >>> truth = np.array([0.5, 0.0, -0.5])
    >>> y_all = (rng.random(2000) < 1 / (1 + np.exp(-(truth[a] - truth[b])))).astype(float)
    >>> yhat = np.where(rng.random(2000) < 0.85, y_all, 1 - y_all)
    >>> y = np.where(np.arange(2000) < 200, y_all, np.nan)
    >>> fit = ppi_bt(a, b, y, yhat, n_systems=3)
    >>> fit.scores.round(2).tolist(), round(float(fit.lam), 2)
    ([0.38, 0.12, -0.5], 0.61)
    >>> ppi_bt(a, b, y, yhat, n_systems=3, lam=0).scores.round(2).tolist()   # the humans alone
    [0.34, 0.15, -0.49]
    """
    k = int(n_systems)
    a, b, y, yhat, labeled = _check_units(a, b, y, yhat, k)
    single = weight is None or np.ndim(weight) == 1
    c = np.ones((1, len(a))) if weight is None else np.atleast_2d(np.asarray(weight, dtype=float))
    if c.shape[1] != len(a):
        raise DataError(f"the weights must be ({len(a)},) per fit, not {c.shape}", fix="one count per item")
    names = list(names) if names is not None else None
    a, b, y, yhat, labeled, c = _classes(a, b, y, yhat, labeled, c)
    if lam is None:
        plain = _fit(a, b, y, yhat, labeled, k, np.ones(len(c)), c, init, names)
        lam_b = ppi_bt_lambda(plain.scores, a, b, y, yhat, labeled, n_systems=k, weight=c)
        init = np.nan_to_num(plain.scores)  # (k,) or (B, k): each refit starts from its plain-PPI fit
    else:
        if not 0 <= float(lam) <= 1:
            raise DataError(f"lambda must be between 0 and 1, not {lam!r}", fix="use None (tuned), or 0 to 1")
        lam_b = np.full(len(c), float(lam))
    fit = _fit(a, b, y, yhat, labeled, k, lam_b, c, init, names)
    if single:
        return PPIBTFit(fit.scores, float(lam_b[0]), float(fit.ridge), bool(fit.converged), tuple(fit.notes))
    if len(c) == 1:  # one resample: the core fit returned a single fit
        return PPIBTFit(fit.scores[None], lam_b, np.atleast_1d(fit.ridge), np.atleast_1d(fit.converged))
    return PPIBTFit(fit.scores, lam_b, fit.ridge, fit.converged)


def ppi_resamples(labeled, *, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, items)`` counts: the labelled items resampled among themselves, and the unlabelled ones.

    >>> counts = ppi_resamples(np.array([True, True, False, False, False]), n_boot=3, rng=np.random.default_rng(0))
    >>> counts[:, :2].sum(axis=1).tolist(), counts[:, 2:].sum(axis=1).tolist()
    ([2.0, 2.0, 2.0], [3.0, 3.0, 3.0])
    """
    labeled = np.asarray(labeled, dtype=bool)
    out = np.zeros((n_boot, len(labeled)))
    for part in (np.flatnonzero(labeled), np.flatnonzero(~labeled)):
        out[:, part] = resample_counts(rng, len(part), n_boot)
    return out


def _unit_means(bt, source: int) -> dict[int, float]:
    """The mean result of one source's battles per unit (item and system pair)."""
    m = bt.source == source
    k = len(bt.systems)
    unit = (bt.item[m].astype(np.int64) * k + bt.a[m]) * k + bt.b[m]
    codes, inv = np.unique(unit, return_inverse=True)
    mean = np.bincount(inv, weights=bt.outcome[m]) / np.bincount(inv)
    return dict(zip(codes.tolist(), mean.tolist()))


def _judge_units(bt, humans: dict[int, float], s: int):
    """The judge's units: systems a, b, the humans' mean (NaN: unlabelled), the judge's result; and how many
    units the humans judged without the judge."""
    k = len(bt.systems)
    judged = _unit_means(bt, s)
    codes = np.array(sorted(judged), dtype=np.int64)
    y = np.array([humans.get(c, np.nan) for c in codes.tolist()])
    yhat = np.array([judged[c] for c in codes.tolist()])
    unjudged = len(set(humans) - set(judged))
    return (codes // k) % k, codes % k, y, yhat, unjudged


#: The note of a judge-corrected leaderboard whose items all have human votes.
ALL_VOTED_NOTE = ("every item has human votes: lambda 0, the fit of the humans' own votes averaged per item (the "
                  "humans' row counts each vote as a battle, so the two differ where items have different numbers "
                  "of votes)")


def _ppi_note(lam: float, n: int, N: int, unjudged: int, judge: str, notes: Sequence[str]) -> str:
    parts = [f"prediction-powered (PPI++, lambda {lam:.2f}): {n} items with human votes and the judge's verdict, "
             f"{N} with the judge's only"]
    if N == 0:
        parts.append(ALL_VOTED_NOTE)
    if unjudged:
        parts.append(f"{unjudged} items with human votes and no verdict of {judge} left out")
    return "; ".join([*parts, *notes])


def _missing_rows(rater: str, systems: Sequence[str], order, note: str) -> pd.DataFrame:
    """Rows without estimates, every one saying why."""
    rows = [{"rater": rater, "system": systems[i], "measure": m, "estimate": np.nan, "ci_low": np.nan,
             "ci_high": np.nan, "n": 0, "note": note} for m in ("bt_score", "elo", "rank") for i in order]
    return pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))


def _judge_rows(bt, humans: dict[int, float], s: int, order, *, n_boot: int, root: int, level: float) -> pd.DataFrame:
    """The corrected rows of judge ``s``: the point fit, the stratified resamples' fits, then ``score_rows``."""
    judge, k = bt.sources[s], len(bt.systems)
    rater = CORRECTED_PREFIX + judge
    a, b, y, yhat, unjudged = _judge_units(bt, humans, s)
    labeled = np.isfinite(y)
    n, N = int(labeled.sum()), int((~labeled).sum())
    if n < MIN_LABELED:
        return _missing_rows(rater, bt.systems, order, f"{n} items have human votes and a verdict of {judge}; "
                             f"prediction-powered scores need at least {MIN_LABELED}")
    point = ppi_bt(a, b, y, yhat, n_systems=k, names=bt.systems)
    scores = np.full((1 + n_boot, k), np.nan)
    scores[0] = point.scores
    if n_boot:
        counts = ppi_resamples(labeled, n_boot=n_boot, rng=cell_rng(root, (_STREAM, judge)))
        scores[1:] = ppi_bt(a, b, y, yhat, n_systems=k, weight=counts, init=np.nan_to_num(point.scores)).scores
    items = np.array([np.sum((a == i) | (b == i)) for i in range(k)])
    note = _ppi_note(point.lam, n, N, unjudged, judge, point.notes)
    return score_rows(rater, bt.systems, scores, n=items, level=level, note=note, order=order)


@takes_table(COMPARISONS)
def ppi_leaderboard(comparisons: pd.DataFrame, *, judges: Sequence[str] | None = None, n_boot: int = 1000,
                    seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    """The judge-corrected systems leaderboard: prediction-powered Bradley-Terry scores per judge.

    For each judge, the humans' Bradley-Terry scores estimated from the judge's verdicts on every item and the
    humans' votes on the items they judged (:func:`ppi_bt`; Boyeau et al. 2024, "AutoEval Done Right", with
    PPI++'s tuned :math:`\\lambda`), with percentile intervals from a bootstrap that resamples the labelled and
    the unlabelled items separately (module docstring). The battles are those of
    :func:`evalcore.pairwise.battles.battles`.

    Parameters
    ----------
    comparisons
        A canonical comparisons table with ``system_a`` and ``system_b``, human and judge rows.
    judges
        The judges to correct (default: all).
    n_boot, seed, level
        Bootstrap resamples (0: no intervals), their seed, and the intervals' confidence level.

    Returns
    -------
    pandas.DataFrame
        ``rater, system, measure, estimate, ci_low, ci_high, n, note`` (the leaderboard's layout):
        ``rater`` is ``ppi:<judge>``, ``measure`` ``bt_score``, ``elo`` or ``rank``, systems in the humans'
        order; ``n`` the items with the system; ``note`` gives lambda and the labelled and unlabelled counts.

    Examples
    --------
    The sample's humans voted on every item, so the corrected scores are the humans' own (lambda 0):

    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> lb = ppi_leaderboard(comparisons, judges=["gpt-4/pairwise"], n_boot=100)
    >>> sorted(set(lb["rater"])), sorted(set(lb["measure"]))
    (['ppi:gpt-4/pairwise'], ['bt_score', 'elo', 'rank'])
    >>> note = lb["note"].iloc[0]
    >>> note.split(":")[0], "900 items with human votes" in note, "the humans' own" in note
    ('prediction-powered (PPI++, lambda 0.00)', True, True)
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    root = root_seed(seed)
    bt = battles(comparisons, judges=judges)
    has_humans = bt.sources[:1] == (HUMANS_LABEL,)
    first = 1 if has_humans else 0
    k = len(bt.systems)
    if has_humans:
        h = bt.source == 0
        hp = fit_bt(bt.a[h], bt.b[h], bt.outcome[h], n_systems=k).scores
        order = np.argsort(-np.where(np.isfinite(hp), hp, -np.inf), kind="stable")
    else:
        order = np.arange(k)
    frames = []
    for s in range(first, len(bt.sources)):
        if not has_humans:
            frames.append(_missing_rows(CORRECTED_PREFIX + bt.sources[s], bt.systems, order, "no human votes: the "
                                        "judge-corrected scores need human votes on a random sample of the items"))
            continue
        frames.append(_judge_rows(bt, _unit_means(bt, 0), s, order, n_boot=n_boot, root=root, level=level))
    if not frames:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    out["n"] = out["n"].astype(np.int64)
    return out
