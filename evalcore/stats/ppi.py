"""Prediction-powered inference for a mean: PPI, PPI++, the humans-only and judge-only baselines, and label budgets.

An analyst has the judge's answer :math:`\\hat Y` on every item and the humans' answer :math:`Y` on a random
sample of them: n **labelled** items (both) and N **unlabelled** ones (the judge only). The humans' mean
:math:`\\theta = E[Y]` is estimated three ways:

``human_only`` (classical)
    :math:`\\bar Y` over the labelled items, standard error :math:`\\hat\\sigma_Y / \\sqrt n`.
``judge_only``
    :math:`\\bar{\\hat Y}` over all n + N items: tight, and biased by whatever the judge gets wrong.
``ppi`` and ``ppi++`` (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science* 2023; power-tuned PPI++,
Angelopoulos, Duchi & Zrnic, arXiv:2311.01453)
    .. math::

        \\hat\\theta_\\lambda = \\lambda\\, \\overline{\\hat Y}_{U} + \\overline{(Y - \\lambda \\hat Y)}_{L},
        \\qquad \\widehat{se}^2 = \\frac{\\widehat{Var}(\\lambda \\hat Y_U)}{N}
                                 + \\frac{\\widehat{Var}(Y - \\lambda \\hat Y)_L}{n}

    the judge's mean on the unlabelled items, corrected by its error measured on the labelled ones (the
    "rectifier"). Plain PPI takes :math:`\\lambda = 1`; PPI++ tunes it,

    .. math:: \\hat\\lambda = \\frac{\\widehat{Cov}(Y, \\hat Y)_L}{(1 + n/N)\\, \\widehat{Var}(\\hat Y)_{L \\cup U}}

    clipped to [0, 1], so that it is never worse than the humans alone (up to estimation noise): a useless
    judge gets :math:`\\lambda = 0`, which is the classical estimate. Boyeau et al. 2024 ("AutoEval Done Right")
    apply it to LLM evaluation.

Every number is computed exactly as the reference implementation ``ppi_py`` computes it
(``ppi_mean_pointestimate``, ``ppi_mean_ci`` with ``lam=None``, ``classical_mean_ci``): covariance and the
standard deviations with divisor n (``ddof=0``), the variance of the predictions over the labelled and unlabelled
items together with divisor n + N - 1 (``numpy.cov``), and the two-sided normal interval
:math:`\\hat\\theta \\pm z_{1-\\alpha/2}\\, \\widehat{se}` with :math:`\\alpha = 1 - \\text{level}`. The intervals are
valid when the labelled items are a **random sample** of all items.

Effective labels. An estimate with standard error :math:`se` is worth
:math:`n_{\\text{eff}} = n\\, se_{\\text{human}}^2 / se^2` human labels: the labels the humans-only estimate would
need for the same interval.

How many labels to buy (Broska, Howes & van Loon 2024, as ``ppi_py.ppi_power`` computes it). With the
"PPI correlation" :math:`\\rho` of Y and :math:`\\hat Y` on the labelled items (:func:`ppi_correlation`), n labels
and N further judged items give PPI++ the standard error of :math:`n_{\\text{eff}} = n (n + N) / (n + (1 - \\rho^2) N)`
human labels. :func:`cheapest_pair` finds the cheapest (n, N) for a target :math:`n_{\\text{eff}}` at given costs;
:func:`labels_needed` the labels for a target half-width on the items a file has. :func:`neyman_allocation` splits
m more labels across strata (Neyman 1934) on each stratum's residual spread, and :func:`stratified` combines
per-stratum estimates weighted by their share of items (stratified PPI, Fisch et al. 2024).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri  # the normal cdf and its inverse, as scipy.stats.norm computes them

from ..errors import DataError
from .bootstrap import check_level

__all__ = ["METHODS", "MeanInterval", "SplitIntervals", "PowerPair", "LabelsNeeded", "z_quantile", "tuned_lambda",
           "ppi_mean", "classical_mean", "judge_mean", "ppi_splits", "stratified", "ppi_correlation",
           "cheapest_pair", "labels_needed", "neyman_allocation", "mean_difference_test"]

#: The estimates of a mean, in the order they are reported.
METHODS = ("human_only", "judge_only", "ppi", "ppi++")
#: The note of a PPI estimate on data where every item has human labels.
ALL_LABELED_NOTE = "every item has human labels: the estimate is the humans' own (lambda 0)"
#: The note of a PPI++ estimate whose judge gives the same answer everywhere.
CONSTANT_JUDGE_NOTE = "the judge gives the same answer on every item, so it carries no information: lambda 0"


@dataclass(frozen=True)
class MeanInterval:
    """One estimate of a mean with its normal interval.

    Attributes
    ----------
    method
        One of :data:`METHODS`.
    estimate, ci_low, ci_high, std_error
        The estimate, its two-sided interval at ``level`` and its standard error.
    n_labeled, n_unlabeled
        The items with the humans' answer (and the judge's), and those with the judge's only.
    lam
        The weight of the judge, :math:`\\lambda` (NaN for the humans-only and judge-only estimates).
    level
        The confidence level.
    note
        Why the estimate took a special path (every item labelled, a constant judge), else empty.
    """

    method: str
    estimate: float
    ci_low: float
    ci_high: float
    std_error: float
    n_labeled: int
    n_unlabeled: int
    lam: float
    level: float
    note: str = ""

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.ci_high - self.ci_low) / 2

    def to_frame(self) -> pd.DataFrame:
        """One row: ``method, estimate, ci_low, ci_high, std_error, n_labeled, n_unlabeled, lambda, note``."""
        return pd.DataFrame([{"method": self.method, "estimate": self.estimate, "ci_low": self.ci_low,
                              "ci_high": self.ci_high, "std_error": self.std_error, "n_labeled": self.n_labeled,
                              "n_unlabeled": self.n_unlabeled, "lambda": self.lam, "note": self.note}])


def z_quantile(level: float) -> float:
    """The two-sided normal quantile of ``level``: :math:`z_{1-\\alpha/2}` with :math:`\\alpha = 1 - \\text{level}`,
    as statsmodels' ``_zconfint_generic`` (which ``ppi_py`` uses) computes it.

    >>> round(z_quantile(0.95), 6)
    1.959964
    """
    alpha = 1 - check_level(level)
    return float(ndtri(1 - alpha / 2.0))  # scipy.stats.norm.ppf, without its per-call overhead and import


def _vector(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(arr).all():
        raise DataError(f"{name} holds missing or infinite values", fix="pass only the items that have a value")
    return arr


def tuned_lambda(y, yhat, yhat_unlabeled) -> float:
    """PPI++'s weight of the judge, :math:`\\hat\\lambda = \\widehat{Cov}(Y, \\hat Y) / ((1 + n/N)\\,
    \\widehat{Var}(\\hat Y))` clipped to [0, 1] (``ppi_py``'s ``_calc_lam_glm`` for a mean, with ``clip=True``).

    The covariance is over the labelled items with divisor n, the variance over all n + N predictions with
    divisor n + N - 1. NaN when it is undefined: no unlabelled item, or predictions that do not vary.

    >>> round(tuned_lambda([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [2.0, 3.0]), 4)
    0.3788
    """
    y, yhat, u = _vector(y, "Y"), _vector(yhat, "Yhat"), _vector(yhat_unlabeled, "Yhat (unlabelled)")
    n, big_n = len(y), len(u)
    if n == 0 or big_n == 0 or n + big_n < 2:
        return math.nan
    cov = float(np.dot(y - y.mean(), yhat - yhat.mean())) / n
    var = float(np.var(np.concatenate([yhat, u]), ddof=1))
    if not var > 0:
        return math.nan
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def classical_mean(y, *, level: float = 0.95, method: str = "human_only", n_unlabeled: int = 0) -> MeanInterval:
    """The mean of ``y`` with its CLT interval, :math:`\\bar Y \\pm z\\, \\hat\\sigma / \\sqrt n` (divisor n), as
    ``ppi_py.baselines.classical_mean_ci``. ``method`` names it (``human_only``; ``judge_only`` for the judge's
    answers on every item).

    >>> r = classical_mean([3.0, 4.0, 5.0, 4.0], level=0.95)
    >>> round(r.estimate, 3), round(r.ci_low, 3), round(r.ci_high, 3)
    (4.0, 3.307, 4.693)
    """
    y = _vector(y, "Y")
    n = len(y)
    if n == 0:
        raise DataError("there is no value to average", fix="give at least one labelled item")
    z = z_quantile(level)
    se = float(y.std()) / math.sqrt(n)
    est = float(y.mean())
    return MeanInterval(method, est, est - z * se, est + z * se, se, n, int(n_unlabeled), math.nan, level)


def judge_mean(yhat_all, *, level: float = 0.95) -> MeanInterval:
    """The judge-only estimate: the mean of the judge's answers on every item with its CLT interval. It is
    biased by the judge's errors, and its interval does not cover them.

    >>> round(judge_mean([1.0, 0.0, 1.0, 1.0]).estimate, 2)
    0.75
    """
    r = classical_mean(yhat_all, level=level, method="judge_only")
    return replace(r, n_labeled=0, n_unlabeled=r.n_labeled)  # the judge's answers alone, on every item


def ppi_mean(y, yhat, yhat_unlabeled, *, lam: float | None = None, level: float = 0.95) -> MeanInterval:
    """The prediction-powered estimate of the humans' mean and its CLT interval (module docstring).

    Equal to ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled,
    alpha=1 - level)``, with the tuned :math:`\\lambda` by default.

    Parameters
    ----------
    y, yhat
        The humans' and the judge's answers on the n labelled items.
    yhat_unlabeled
        The judge's answers on the N unlabelled items.
    lam
        None: PPI++ (tuned, :func:`tuned_lambda`); 1: plain PPI; any other weight in [0, 1] as given.
    level
        The confidence level (0.95: ``alpha=0.05``).

    Returns
    -------
    MeanInterval
        Method ``ppi++`` (tuned) or ``ppi``. Without unlabelled items the estimate is the humans' own
        (:math:`\\lambda = 0`); with a judge whose answers do not vary, PPI++ takes :math:`\\lambda = 0`; both
        say so in ``note``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(3, 1, 1000)
    >>> judge = truth + rng.normal(0.5, 0.5, 1000)          # a biased but informative judge
    >>> r = ppi_mean(truth[:100], judge[:100], judge[100:])
    >>> round(r.lam, 3), round(r.estimate, 3), round(r.half_width, 3)
    (0.671, 2.979, 0.104)
    >>> round(classical_mean(truth[:100]).half_width, 3)    # the humans alone
    0.189
    """
    y, yhat, u = _vector(y, "Y"), _vector(yhat, "Yhat"), _vector(yhat_unlabeled, "Yhat (unlabelled)")
    if len(y) != len(yhat):
        raise DataError(f"Y has {len(y)} values and Yhat {len(yhat)}", fix="give both answers on the same items")
    if len(y) == 0:
        raise DataError("there is no labelled item (with both the humans' and the judge's answer)",
                        fix="add human labels to a random sample of the items")
    method = "ppi++" if lam is None else "ppi"
    n, big_n = len(y), len(u)
    if big_n == 0:
        own = classical_mean(y, level=level)
        return MeanInterval(method, own.estimate, own.ci_low, own.ci_high, own.std_error, n, 0, 0.0, level,
                            ALL_LABELED_NOTE)
    note = ""
    if lam is None:
        lam = tuned_lambda(y, yhat, u)
        if not np.isfinite(lam):
            lam, note = 0.0, CONSTANT_JUDGE_NOTE
    lam = float(lam)
    est = float((lam * u).mean() + (y - lam * yhat).mean())
    se = math.sqrt(float((lam * u).std()) ** 2 / big_n + float((y - lam * yhat).std()) ** 2 / n)
    z = z_quantile(level)
    return MeanInterval(method, est, est - z * se, est + z * se, se, n, big_n, lam, level, note)


@dataclass(frozen=True)
class SplitIntervals:
    """PPI++ and humans-only estimates on many labelled subsets of one set of items (:func:`ppi_splits`).

    Every attribute is an array with one value per subset (row of the mask).
    """

    n_labeled: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    lam: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    human_estimate: np.ndarray
    human_std_error: np.ndarray
    human_ci_low: np.ndarray
    human_ci_high: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row per subset."""
        return pd.DataFrame({k: getattr(self, k) for k in self.__dataclass_fields__})


def _masked_mean(values: np.ndarray, mask: np.ndarray, count: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mask, values, 0.0).sum(axis=1) / count


def ppi_splits(y, yhat, labeled, *, level: float = 0.95) -> SplitIntervals:
    """PPI++ and the humans-only estimate for many random labelled subsets at once (vectorised).

    ``y`` and ``yhat`` hold both answers on every item; each row of ``labeled`` (subsets x items, boolean)
    marks the items treated as labelled, the others as unlabelled. Each row's numbers equal
    :func:`ppi_mean` (tuned) and :func:`classical_mean` on that split; a row without unlabelled items gives
    the humans' own estimate, one whose judge does not vary :math:`\\lambda = 0`. Used by the "what if" curve
    and by the coverage tests.

    >>> y = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]); f = y + 0.5
    >>> s = ppi_splits(y, f, np.array([[True, True, True, False, False, False]]))
    >>> round(float(s.estimate[0]), 6) == round(ppi_mean(y[:3], f[:3], f[3:]).estimate, 6)
    True
    """
    y, f = _vector(y, "Y"), _vector(yhat, "Yhat")
    mask = np.atleast_2d(np.asarray(labeled, dtype=bool))
    if mask.shape[1] != len(y) or len(f) != len(y):
        raise DataError("the labelled mask must have one column per item", fix="give a subsets x items mask")
    n = mask.sum(axis=1).astype(float)
    big_n = len(y) - n
    with np.errstate(invalid="ignore", divide="ignore"):
        y_bar, f_bar = _masked_mean(y, mask, n), _masked_mean(f, mask, n)
        cov = _masked_mean((y - y_bar[:, None]) * (f - f_bar[:, None]), mask, n)
        var_all = float(np.var(f, ddof=1)) if len(f) > 1 else math.nan
        lam = np.clip(cov / ((1 + n / big_n) * var_all), 0.0, 1.0)
        lam = np.where(np.isfinite(lam) & (big_n > 0), lam, 0.0)
        u_mean = _masked_mean(f, ~mask, big_n)
        r = y - lam[:, None] * f
        r_mean = _masked_mean(r, mask, n)
        r_var = _masked_mean((r - r_mean[:, None]) ** 2, mask, n)
        u_var = _masked_mean((f - u_mean[:, None]) ** 2, ~mask, big_n)
        est = np.where(big_n > 0, lam * u_mean + r_mean, y_bar)
        se = np.sqrt(np.where(big_n > 0, lam ** 2 * u_var / big_n, 0.0) + r_var / n)
        h_se = np.sqrt(_masked_mean((y - y_bar[:, None]) ** 2, mask, n) / n)
    z = z_quantile(level)
    return SplitIntervals(n.astype(np.int64), est, se, lam, est - z * se, est + z * se, y_bar, h_se,
                          y_bar - z * h_se, y_bar + z * h_se)


def stratified(estimates, std_errors, weights, *, level: float = 0.95) -> tuple[float, float, float, float]:
    """The stratified estimate :math:`\\sum_h w_h \\hat\\theta_h` with
    :math:`se = \\sqrt{\\sum_h w_h^2 se_h^2}` and its normal interval, ``w`` normalised to sum to 1 (each
    stratum's share of the items; strata are estimated independently, Fisch et al. 2024).

    Returns ``(estimate, std_error, ci_low, ci_high)``; NaN where any stratum's part is.

    >>> [round(v, 4) for v in stratified([0.5, 0.7], [0.1, 0.2], [30, 10])]
    [0.55, 0.0901, 0.3733, 0.7267]
    """
    est, se, w = (np.asarray(v, dtype=float) for v in (estimates, std_errors, weights))
    if w.sum() <= 0:
        raise DataError("the strata hold no items", fix="give each stratum's number of items as its weight")
    w = w / w.sum()
    theta = float(np.sum(w * est))
    s = float(np.sqrt(np.sum(w ** 2 * se ** 2)))
    z = z_quantile(level)
    return theta, s, theta - z * s, theta + z * s


# --------------------------------------------------------------------------- how many labels


def ppi_correlation(y, yhat) -> float:
    """The PPI correlation of the humans' and the judge's answers on the labelled items (Broska, Howes &
    van Loon 2024): Pearson's correlation with divisor n, capped at :math:`1 - 1/n`, as ``ppi_py``'s
    ``_get_ppi_corr`` computes it for a mean. NaN when either answer does not vary.

    >>> round(ppi_correlation([1.0, 2.0, 3.0, 5.0], [1.0, 3.0, 2.0, 5.0]), 4)
    0.75
    """
    y, f = _vector(y, "Y"), _vector(yhat, "Yhat")
    n = len(y)
    if n < 2:
        return math.nan
    yc, fc = y - y.mean(), f - f.mean()
    denom = math.sqrt(float(yc @ yc / n) * float(fc @ fc / n))
    if not denom > 0:
        return math.nan
    return float(min(float(yc @ fc / n) / denom, 1 - 1 / n))


@dataclass(frozen=True)
class PowerPair:
    """A number of human labels ``labeled`` and of further judged items ``unlabeled``, what they cost, and the
    human labels they are worth (``effective_n``). ``reachable`` is False when the item limit cannot reach the
    target; the pair is then the limit itself, all labelled (as ``ppi_py`` returns it, with a warning)."""

    labeled: int
    unlabeled: int
    cost: float
    effective_n: int
    ppi_corr: float
    reachable: bool = True

    def to_frame(self) -> pd.DataFrame:
        """One row with the attributes as columns."""
        return pd.DataFrame([{k: getattr(self, k) for k in self.__dataclass_fields__}])


def _check_corr(rho: float) -> float:
    if not isinstance(rho, (int, float, np.floating)) or not -1 < rho < 1:
        raise DataError(f"the PPI correlation must be strictly between -1 and 1, not {rho!r}",
                        fix="compute it with ppi_correlation on at least two labelled items that vary")
    return float(rho)


def _optimal_pair(n0: float, rho: float, gamma: float, cost_label: float, cost_judge: float) -> PowerPair:
    """The pair with the standard error of n0 human labels at the least cost (``ppi_py``'s ``_optimal_pair``)."""
    r2 = rho ** 2
    n = n0 * (1 - r2 + math.sqrt(gamma * r2 * (1 - r2)))
    big_n = n * (n0 - n) / (n - (1 - r2) * n0) if rho != 0 else 0.0
    n, big_n = round(n), round(big_n)
    eff = round(n * (n + big_n) / (n + (1 - r2) * big_n))
    return PowerPair(n, big_n, n * cost_label + (n + big_n) * cost_judge, eff, rho)


def cheapest_pair(ppi_corr: float, *, effective_n: float, cost_label: float, cost_judge: float,
                  n_max: int | None = None) -> PowerPair:
    """The cheapest (n human labels, N more judged items) whose PPI++ estimate is as precise as ``effective_n``
    human labels alone, as ``ppi_py.ppi_power(ppi_corr, cost_X=0, cost_Y=cost_label, cost_Yhat=cost_judge,
    effective_n=effective_n, n_max=n_max)`` computes it.

    With :math:`\\rho` the PPI correlation and :math:`\\gamma` = ``cost_judge / cost_label``, the unconstrained
    optimum is :math:`n = n_0 (1 - \\rho^2 + \\sqrt{\\gamma \\rho^2 (1 - \\rho^2)})` and
    :math:`N = n (n_0 - n) / (n - (1 - \\rho^2) n_0)`; when humans alone are cheaper (or N < 0), n = n_0 and
    N = 0. With ``n_max`` (at most that many items), a pair above it is replaced by the pair with
    n + N = ``n_max`` that reaches :math:`n_0`, :math:`n = n_0\\, n_{max} (1 - \\rho^2) / (n_{max} - \\rho^2 n_0)`.
    A free judge (``cost_judge`` 0) needs ``n_max``: it would judge without end.

    >>> p = cheapest_pair(0.8, effective_n=400, cost_label=1.0, cost_judge=0.01)
    >>> p.labeled, p.unlabeled, p.effective_n
    (163, 2013, 400)
    """
    rho = _check_corr(ppi_corr)
    if not cost_label > 0 or not cost_judge >= 0:
        raise DataError("the cost of a human label must be above 0 and a judge label's 0 or more",
                        fix="give costs in one currency, e.g. cost_label=1.0, cost_judge=0.01")
    n0, r2 = float(effective_n), rho ** 2
    gamma = cost_judge / cost_label
    ppi_cost = cost_label * (1 - r2 + gamma * r2 + 2 * math.sqrt(gamma * r2 * (1 - r2)))
    if gamma == 0 and rho != 0:  # a free judge: the more items it judges the better, up to the limit
        if n_max is None:
            raise DataError("with a free judge the cheapest plan judges without end",
                            fix="give the number of items there are (n_max) or the judge's cost per item")
        best = PowerPair(0, 2 ** 62, 0.0, 0, rho)
    else:
        best = _optimal_pair(n0, rho, gamma, cost_label, cost_judge)
    if cost_label < ppi_cost or best.unlabeled < 0:
        best = PowerPair(round(n0), 0, round(n0) * cost_label, round(n0), rho)
    if n_max is None or best.labeled + best.unlabeled <= n_max:
        return best
    if n0 > n_max:
        return PowerPair(int(n_max), 0, n_max * cost_label, int(n_max), rho, reachable=False)
    n = round(n0 * n_max * (1 - r2) / (n_max - r2 * n0))
    big_n = int(n_max) - n
    eff = round(n * (n + big_n) / (n + (1 - r2) * big_n))
    return PowerPair(n, big_n, n * (cost_label + cost_judge) + big_n * cost_judge, eff, rho)


@dataclass(frozen=True)
class LabelsNeeded:
    """Human labels for a target half-width: with the humans alone, and with PPI++ on ``n_items`` items.

    ``ppi`` is None when the items cannot reach the width even all labelled (then the humans alone need more
    items than there are, too)."""

    half_width: float
    human_only: int
    ppi: int | None
    ppi_corr: float
    n_items: int

    def to_frame(self) -> pd.DataFrame:
        """One row with the attributes as columns."""
        return pd.DataFrame([{k: getattr(self, k) for k in self.__dataclass_fields__}])


def labels_needed(y, yhat, *, half_width: float, n_items: int, level: float = 0.95) -> LabelsNeeded:
    """How many human labels reach the interval half-width ``half_width``, from a labelled pilot.

    The humans alone need :math:`n_0 = \\lceil (z\\, \\hat\\sigma_Y / W)^2 \\rceil` (:math:`\\hat\\sigma_Y` with
    divisor n, as the classical interval). PPI++ on a file of ``n_items`` items, judged all (the judge's
    answers already paid for), needs the n with :math:`n_{\\text{eff}}(n, n_{items} - n) = n_0`: ``ppi_py``'s
    power analysis (:func:`cheapest_pair` with a free judge and ``n_max=n_items``), with the PPI correlation
    floored at 0, since PPI++ clips :math:`\\lambda` to [0, 1] and a judge that goes against the humans earns
    nothing.

    >>> rng = np.random.default_rng(1)
    >>> y = rng.normal(3, 1, 200); f = y + rng.normal(0, 0.6, 200)
    >>> r = labels_needed(y, f, half_width=0.05, n_items=5000)
    >>> r.human_only, r.ppi
    (1314, 399)
    """
    y, f = _vector(y, "Y"), _vector(yhat, "Yhat")
    if not half_width > 0:
        raise DataError(f"the target half-width must be above 0, not {half_width!r}", fix="use e.g. 0.05")
    n0 = max(1, math.ceil((z_quantile(level) * float(y.std()) / half_width) ** 2))
    rho = ppi_correlation(y, f)
    rho_use = max(rho, 0.0) if np.isfinite(rho) else 0.0
    if rho_use == 0.0:
        return LabelsNeeded(float(half_width), n0, n0 if n0 <= n_items else None, rho, int(n_items))
    pair = cheapest_pair(rho_use, effective_n=n0, cost_label=1.0, cost_judge=0.0, n_max=int(n_items))
    return LabelsNeeded(float(half_width), n0, pair.labeled if pair.reachable else None, rho, int(n_items))


def neyman_allocation(m: int, *, weights, spread, labeled=None, available=None) -> np.ndarray:
    """Split ``m`` more human labels across strata: Neyman's allocation (Neyman 1934), given the labels each
    stratum has and how many it can take.

    The stratified variance :math:`\\sum_h w_h^2 s_h^2 / n_h` (``w`` the stratum's share of items, ``s`` its
    residual spread, the standard deviation of :math:`Y - \\lambda \\hat Y`) is lowered label by label: each next
    label goes to the stratum where it lowers it most, :math:`w_h^2 s_h^2 (1/n_h - 1/(n_h + 1))`, among those
    with ``available`` items left (a stratum without labels first). This is the whole-number optimum; with no
    labels yet and no limits it is Neyman's :math:`n_h \\propto w_h s_h`. Strata that already hold more than
    their share get labels only once the others have caught up. Spreads that are all 0 (or unknown) fall back on the
    weights (proportional allocation).

    >>> neyman_allocation(100, weights=[0.5, 0.5], spread=[1.0, 3.0]).tolist()
    [25, 75]
    >>> neyman_allocation(100, weights=[0.5, 0.5], spread=[1.0, 3.0], labeled=[0, 90], available=[80, 80]).tolist()
    [48, 52]
    """
    import heapq

    w, s = np.asarray(weights, dtype=float), np.asarray(spread, dtype=float)
    k = len(w)
    have = np.zeros(k, dtype=np.int64) if labeled is None else np.asarray(labeled, dtype=np.int64).copy()
    room = np.full(k, np.iinfo(np.int64).max) if available is None else np.asarray(available, dtype=np.int64)
    if isinstance(m, bool) or int(m) != m or m < 0:
        raise DataError(f"the number of labels to plan must be a whole number, 0 or more, not {m!r}",
                        fix="use e.g. 200")
    score = (w * np.where(np.isfinite(s) & (s > 0), s, 0.0)) ** 2
    if not score.sum() > 0:
        score = w ** 2
    new = np.zeros(k, dtype=np.int64)

    def gain(h: int) -> float:
        n = have[h] + new[h]
        return math.inf if n == 0 else score[h] * (1 / n - 1 / (n + 1))

    heap = [(-gain(h), h) for h in range(k) if room[h] > 0]
    heapq.heapify(heap)
    for _ in range(int(m)):
        if not heap:
            break
        _, h = heapq.heappop(heap)
        new[h] += 1
        if new[h] < room[h]:
            heapq.heappush(heap, (-gain(h), h))
    return new


def mean_difference_test(a, b) -> tuple[float, float]:
    """The difference of the means of ``a`` and ``b`` and its two-sided p-value, Welch's z-test (unequal
    variances, divisor n - 1, normal reference). NaN with fewer than two values on either side.

    >>> d, p = mean_difference_test([1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0])
    >>> d, round(p, 4)
    (-2.0, 0.0285)
    """
    a, b = _vector(a, "the first sample"), _vector(b, "the second sample")
    if len(a) < 2 or len(b) < 2:
        return (float(a.mean() - b.mean()) if len(a) and len(b) else math.nan), math.nan
    d = float(a.mean() - b.mean())
    se = math.sqrt(float(a.var(ddof=1)) / len(a) + float(b.var(ddof=1)) / len(b))
    if not se > 0:
        return d, (1.0 if d == 0 else 0.0)
    return d, float(2 * ndtr(-abs(d) / se))
