"""The one item bootstrap of evalcore: seeded streams per cell, resample counts, intervals, p-values.

Every analysis resamples **items** with replacement (an item carries all its ratings, by every
rater, sample and criterion), within each *cell* (one group of the result). A resample is a vector
of counts, how often each item was drawn: a Multinomial(n, 1/n, ..., 1/n) draw, so that each
statistic is a weighted sum over items and all resamples are one matrix product (Efron &
Tibshirani 1993, ch. 6; the "weights" view of the bootstrap). Cells have their own random stream,
derived from the seed and the cell's key, so that a cell's interval does not depend on which other
cells exist.

Intervals are percentile intervals: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
the resampled estimates, computed exactly as :func:`numpy.quantile` (its default 'linear' method,
Hyndman & Fan type 7) but for thousands of rows in one sort. A row whose estimate is undefined in
most resamples (finite in fewer than half, or fewer than 10) gets no interval.

Two bootstrap p-values are offered. :func:`z_p_value` is the one every flag uses: the normal
approximation with the bootstrap standard error, :math:`z = (\\hat\\theta - \\text{null}) / \\widehat{se}_B`
(Efron & Tibshirani 1993, §16.4), which resolves small p-values with a few hundred resamples, as
the Benjamini-Hochberg control across a report needs. :func:`p_value` counts the resamples
instead: for the alternative "the effect is above ``null``",
:math:`p = (1 + \\#\\{b: \\hat\\theta^*_b \\le \\text{null}\\}) / (1 + B)` over the finite resamples
(Davison & Hinkley 1997, eq. 4.11, with the usual +1 so that p is never 0); "below" is the mirror
image, and "two-sided" is twice the smaller of the two, capped at 1. It cannot go below
:math:`1/(1+B)`, so it is kept for single tests, not for a report's flags.
"""

from __future__ import annotations

import zlib
from typing import Literal

import numpy as np

from ..errors import DataError

Alternative = Literal["greater", "less", "two-sided"]
ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")
#: Memory bound of one block of resample draws (integers held at once).
_BLOCK_CELLS = 4_000_000


def check_resamples(n_boot: object) -> int:
    """``n_boot`` as an int, or a :class:`~evalcore.errors.DataError` naming the fix."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError(f"the number of bootstrap resamples must be a whole number, 0 or more, not {n_boot!r}",
                        fix="use e.g. 1000, or 0 to skip the intervals")
    return int(n_boot)


def check_level(level: object) -> float:
    """``level`` as a float in (0, 1), or a :class:`~evalcore.errors.DataError`."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < level < 1:
        raise DataError(f"the confidence level must be between 0 and 1, not {level!r}", fix="use e.g. 0.95")
    return float(level)


def root_seed(seed: int | np.random.Generator) -> int:
    """The integer root of every cell's stream: ``seed`` itself, or one draw from a Generator.

    >>> root_seed(7)
    7
    >>> root_seed(np.random.default_rng(0)) == root_seed(np.random.default_rng(0))
    True
    """
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"the seed must be a whole number, 0 or more, or a numpy Generator, not {seed!r}",
                        fix="use e.g. seed=0")
    return int(seed)


def cell_rng(root: int, key: object) -> np.random.Generator:
    """The random stream of one cell: ``default_rng([root, crc32(repr(key))])``.

    ``key`` is any value with a stable ``repr`` (a tuple of the cell's group values, the judge,
    the section). The same root and key always give the same stream.
    """
    return np.random.default_rng([int(root), zlib.crc32(repr(key).encode())])


def resample_counts(rng: np.random.Generator, n: int, n_boot: int, *, classes: np.ndarray | None = None,
                    n_classes: int | None = None) -> np.ndarray:
    """``(n_boot, n)`` counts of how often each of ``n`` items was drawn, ``n`` draws per resample.

    Each row is a Multinomial(n, 1/n, ..., 1/n) vector, drawn as uniform item indices and counted
    (numpy's multinomial draws one binomial per item, about five times slower for a thousand
    items). With ``classes`` (the class of each item, ``n_classes`` of them) the counts are summed
    per class instead: ``(n_boot, n_classes)``, the same distribution as drawing the items and
    counting their classes. Drawn in blocks of resamples, so that memory stays bounded; the
    numbers do not depend on the block size.
    """
    width = n if classes is None else int(n_classes)
    out = np.zeros((n_boot, width))
    if n_boot == 0 or n == 0:
        return out
    block = max(1, min(n_boot, _BLOCK_CELLS // max(n, 1)))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        picked = rng.integers(0, n, size=(b, n))
        if classes is not None:
            picked = classes[picked]
        picked += (np.arange(b) * width)[:, None]
        out[start:start + b] = np.bincount(picked.ravel(), minlength=b * width).reshape(b, width)
    return out


def item_weights(rng: np.random.Generator, n_items: int, n_boot: int) -> np.ndarray:
    """``(1 + n_boot, n_items)`` item weights: row 0 the data (all ones), rows 1.. the resamples.

    >>> W = item_weights(np.random.default_rng(0), 5, 3)
    >>> W.shape, W[0].tolist(), W[1:].sum(axis=1).tolist()
    ((4, 5), [1.0, 1.0, 1.0, 1.0, 1.0], [5.0, 5.0, 5.0])
    """
    W = np.ones((1 + n_boot, n_items))
    W[1:] = resample_counts(rng, n_items, n_boot)
    return W


def resample_blocks(rng: np.random.Generator, n_items: int, n_boot: int, *, cells: int = 20_000_000):
    """The rows of :func:`resample_counts` in blocks of at most ``cells`` numbers, for callers that reduce
    each block at once (a million items and a thousand resamples need 8 GB as one matrix).

    The same ``rng`` gives the same counts as one call of :func:`resample_counts`:

    >>> a = resample_counts(np.random.default_rng(3), 7, 10)
    >>> b = np.vstack(list(resample_blocks(np.random.default_rng(3), 7, 10, cells=21)))
    >>> bool((a == b).all())
    True
    """
    step = max(1, min(n_boot, cells // max(n_items, 1)))
    for start in range(0, n_boot, step):
        yield resample_counts(rng, n_items, min(step, n_boot - start))


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    # numpy.quantile's interpolation, to the last bit: from the nearer end point.
    d = b - a
    return np.where(t >= 0.5, b - d * (1 - t), a + d * t)


def percentile_interval(boot: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval of each row of ``boot`` (rows x resamples) over its finite values.

    Returns ``(low, high, sparse)``: ``sparse`` marks rows with too few finite resamples (fewer
    than 10, or than half), whose bounds are NaN. Equal to :func:`numpy.quantile` of each row's
    finite values, bit for bit:

    >>> boot = np.random.default_rng(1).normal(size=(3, 200))
    >>> lo, hi, sparse = percentile_interval(boot, 0.95)
    >>> bool(np.all(lo == np.quantile(boot, 0.025, axis=1))), bool(np.all(hi == np.quantile(boot, 0.975, axis=1)))
    (True, True)
    """
    boot = np.atleast_2d(np.asarray(boot, dtype=float))
    M, B = boot.shape
    if B == 0:
        nan = np.full(M, np.nan)
        return nan, nan.copy(), np.zeros(M, dtype=bool)
    finite = np.isfinite(boot)
    ok = finite.sum(axis=1)
    srt = np.sort(np.where(finite, boot, np.nan), axis=1)  # NaN sorts last
    last = np.maximum(ok - 1, 0)
    # 0.95 means the 2.5% and 97.5% quantiles exactly ((1 - 0.95) / 2 is 0.025000000000000022 in floats).
    a = round((1.0 - level) / 2.0, 12)

    def q(p: float) -> np.ndarray:
        pos = last * p
        i = np.floor(pos).astype(np.int64)
        j = np.minimum(i + 1, last)
        lo_v = np.take_along_axis(srt, i[:, None], axis=1)[:, 0]
        hi_v = np.take_along_axis(srt, j[:, None], axis=1)[:, 0]
        return _lerp(lo_v, hi_v, pos - i)

    enough = ok >= max(10, 0.5 * B)
    return np.where(enough, q(a), np.nan), np.where(enough, q(1 - a), np.nan), ~enough


def p_value(boot: np.ndarray, *, alternative: Alternative, null: float = 0.0) -> np.ndarray:
    """Bootstrap p-value of each row of ``boot`` (rows x resamples) against ``null``.

    ``alternative`` is the direction that means an effect: ``"greater"`` (above ``null``),
    ``"less"`` or ``"two-sided"``. Uses the finite resamples only; NaN where no resample is finite.

    >>> p_value(np.array([[1.0, 2.0, 3.0, -1.0]]), alternative="greater").tolist()
    [0.4]
    >>> p_value(np.array([[1.0, 2.0, 3.0, -1.0]]), alternative="less").tolist()
    [0.8]
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, not {alternative!r}")
    boot = np.atleast_2d(np.asarray(boot, dtype=float))
    finite = np.isfinite(boot)
    B = finite.sum(axis=1)
    with np.errstate(invalid="ignore"):
        at_or_below = (finite & (boot <= null)).sum(axis=1)
        at_or_above = (finite & (boot >= null)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        greater = (1 + at_or_below) / (1 + B)
        less = (1 + at_or_above) / (1 + B)
    p = {"greater": greater, "less": less,
         "two-sided": np.minimum(1.0, 2 * np.minimum(greater, less))}[alternative]
    return np.where(B > 0, p, np.nan)


def _check_alternatives(alternative) -> np.ndarray:
    alt = np.asarray(alternative, dtype=object)
    bad = [a for a in np.unique(alt.astype(str)) if a not in ALTERNATIVES]
    if bad:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, not {bad[0]!r}")
    return alt


def z_p_value(estimate, boot: np.ndarray, *, alternative, null: float = 0.0) -> np.ndarray:
    """Bootstrap p-value of each estimate by the normal approximation with the bootstrap standard error.

    For row r, :math:`z_r = (\\hat\\theta_r - \\text{null}) / \\widehat{se}_r`, with
    :math:`\\widehat{se}_r` the standard deviation (ddof 1) of the row's finite resamples
    (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, §16.4: the bootstrap test by the
    normal approximation). Then :math:`p = \\Phi(-z)` for ``"greater"`` (the effect is above
    ``null``), :math:`\\Phi(z)` for ``"less"``, and :math:`2\\Phi(-|z|)` for ``"two-sided"``. Unlike a
    count of resamples, this resolves p-values far below :math:`1/(1+B)`, which the
    Benjamini-Hochberg control over hundreds of tests needs to flag a strong effect.

    Parameters
    ----------
    estimate
        ``(rows,)`` the estimates on the data.
    boot
        ``(rows, resamples)`` the bootstrap replicates (NaN where undefined; only finite ones count).
    alternative
        ``"greater"``, ``"less"`` or ``"two-sided"``: one for all rows, or one per row.
    null
        The value of the estimate under the null hypothesis.

    Returns
    -------
    numpy.ndarray
        ``(rows,)`` p-values; NaN where the estimate is not finite, fewer than 2 resamples are
        finite, or the resamples do not vary (no standard error).

    >>> from scipy.special import ndtr
    >>> boot = np.array([[0.9, 1.1, 1.0, 0.8, 1.2]])
    >>> se = boot.std(ddof=1)
    >>> float(z_p_value([0.3], boot, alternative="greater")[0]) == float(ndtr(-0.3 / se))
    True
    >>> z_p_value([0.3, -0.3], np.vstack([boot, boot]), alternative=["less", "two-sided"]).round(4).tolist()
    [0.9711, 0.0578]
    """
    from scipy.special import ndtr  # here, not at import: the CLI's start-up does not need scipy

    alt = _check_alternatives(alternative)
    est = np.atleast_1d(np.asarray(estimate, dtype=float))
    boot = np.atleast_2d(np.asarray(boot, dtype=float))
    finite = np.isfinite(boot)
    B = finite.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(finite, boot, 0.0).sum(axis=1) / B
        dev = np.where(finite, boot - mean[:, None], 0.0)
        se = np.sqrt((dev * dev).sum(axis=1) / (B - 1))
        z = (est - null) / se
    # Resamples that do not vary (up to rounding) have no standard error.
    ok = np.isfinite(est) & (B >= 2) & (se > 1e-12 * np.abs(mean)) & (se > 0) & np.isfinite(z)
    z = np.where(ok, z, 0.0)
    greater, less, two = ndtr(-z), ndtr(z), np.minimum(1.0, 2.0 * ndtr(-np.abs(z)))
    p = np.where(alt == "greater", greater, np.where(alt == "less", less, two))
    return np.where(ok, p, np.nan)
