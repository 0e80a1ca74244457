"""Convergence diagnostics of MCMC draws: rank-normalised split-R-hat and bulk effective sample size.

Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021), "Rank-normalization, folding, and localization: an
improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2). Computed as ArviZ 0.23 computes
``arviz.rhat`` (``method="rank"``) and ``arviz.ess`` (``method="bulk"``) with numba installed, operation for
operation, so the numbers are the same to the last bit (the tests compare them with ArviZ's own). Why not call
ArviZ: importing it loads matplotlib, xarray and scipy.stats and compiles its numba helpers in every new process,
seconds a command-line fit does not need to wait for.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["rhat", "ess_bulk"]


def _valid(draws: np.ndarray, *, min_chains: int) -> bool:
    """ArviZ's shape and NaN checks: at least ``min_chains`` chains and 4 draws, no NaN."""
    return draws.shape[0] >= min_chains and draws.shape[1] >= 4 and not bool(np.isnan(draws).any())


def _sequential_var(x: np.ndarray, ddof: int) -> float:
    """ArviZ's numba variance: sums taken left to right (cumsum is sequential), ``E[x^2] - E[x]^2``."""
    n = x.shape[0]
    mean = np.cumsum(x)[-1] / n
    var = np.cumsum(x * x)[-1] / n - mean * mean
    return float(var * (n / (n - ddof)))


def _split(draws: np.ndarray) -> np.ndarray:
    """Each chain's first and last half as two chains (an odd middle draw is left out)."""
    half = draws.shape[1] // 2
    return np.vstack((draws[:, :half], draws[:, -half:]))


def _z_scale(draws: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks (ties averaged): ``Phi^-1((r - 3/8) / (S - 3/4 + 1))`` (Blom 1958)."""
    from scipy.special import ndtri

    flat = draws.ravel()
    order = np.argsort(flat, kind="mergesort")
    srt = flat[order]
    first = np.r_[True, srt[1:] != srt[:-1]]
    starts = np.r_[np.flatnonzero(first), srt.size]
    group = np.cumsum(first) - 1
    rank = np.empty(srt.size)
    rank[order] = 0.5 * (starts[group] + 1 + starts[group + 1])  # average of ranks start+1 .. next start
    c = 3 / 8
    return ndtri((rank - c) / (rank.size - 2 * c + 1)).reshape(draws.shape)


def _rhat(z: np.ndarray) -> float:
    n = z.shape[1]
    chain_var = np.array([_sequential_var(row, 1) for row in z])
    between = n * _sequential_var(np.mean(z, axis=1), 1)
    within = np.mean(chain_var)
    with np.errstate(invalid="ignore", divide="ignore"):  # constant draws: 0 / 0, NaN as in ArviZ
        return float(np.sqrt((between / within + n - 1) / n))


def rhat(draws: np.ndarray) -> float:
    """Rank-normalised split-R-hat of one scalar's draws, ``(chains, draws)``.

    The chains are split in halves; with ``z`` the normal scores of the pooled ranks and ``W``/``B`` the
    within- and between-chain variances of ``m`` chains of ``n`` draws,
    ``R-hat = sqrt(((n - 1) / n * W + B / n) / W)``, taken for ``z`` (bulk) and for the scores of
    ``|x - median(x)|`` (tails); the larger is returned (Vehtari et al. 2021, as ``arviz.rhat``).

    Parameters
    ----------
    draws
        ``(chains, draws)`` array; NaN (ArviZ's answer too) with fewer than 2 chains or 4 draws, or any NaN.

    Returns
    -------
    float
        The R-hat; near 1 when the chains agree (1.01 is the usual limit).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rhat(rng.normal(size=(4, 1000))) < 1.01
    True
    >>> round(rhat(rng.normal(size=(4, 1000)) + np.arange(4)[:, None]), 1)  # chains in different places
    1.5
    """
    x = np.asarray(draws, dtype=float)
    if not _valid(x, min_chains=2):
        return math.nan
    split = _split(x)
    bulk = _rhat(_z_scale(split))
    tail = _rhat(_z_scale(abs(split - np.median(split))))
    return max(bulk, tail)


def _next_regular(target: int) -> int:
    """The smallest ``2^a 3^b 5^c >= target`` (the FFT length ``scipy.fftpack.next_fast_len`` gives)."""
    best = 1 << max(0, (target - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            n = p35
            while n < target:
                n *= 2
            best = min(best, n)
            p35 *= 3
        p5 *= 5
    return best


def _autocov(x: np.ndarray) -> np.ndarray:
    """Each chain's autocovariance at every lag, by FFT (as ``arviz.stats.stats_utils.autocov``)."""
    n = x.shape[1]
    m = _next_regular(2 * n)
    x = x - x.mean(1, keepdims=True)
    f = np.fft.rfft(x, n=m, axis=1)
    f *= np.conjugate(f)
    cov = np.fft.irfft(f, n=m, axis=1)[:, :n]
    cov /= n
    return cov


def _geyer(acov: np.ndarray, mean_var: float, var_plus: float) -> tuple[np.ndarray, int]:
    """Autocorrelations truncated by Geyer's initial positive, then monotone, sequence (Geyer 1992)."""
    n = acov.shape[1]
    rho = np.zeros(n)
    even, odd = 1.0, 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[0], rho[1] = even, odd
    t = 1
    while t < n - 3 and even + odd > 0.0:
        even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if even + odd >= 0:
            rho[t + 1], rho[t + 2] = even, odd
        t += 2
    max_t = t - 2
    if even > 0:
        rho[max_t + 1] = even
    t = 1
    while t <= max_t - 2:
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    return rho, max_t


def _ess(z: np.ndarray) -> float:
    if np.max(z) - np.min(z) < np.finfo(float).resolution:
        return float(z.size)
    m, n = z.shape
    acov = _autocov(z)
    mean_var = np.mean(acov[:, 0]) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus += _sequential_var(z.mean(axis=1), 1)
    rho, max_t = _geyer(acov, mean_var, var_plus)
    if np.isnan(rho).any():
        return math.nan
    tau = -1.0 + 2.0 * np.sum(rho[:max_t + 1]) + np.sum(rho[max_t + 1:max_t + 2])
    tau = max(tau, 1 / np.log10(m * n))
    return float(m * n / tau)


def ess_bulk(draws: np.ndarray) -> float:
    """Bulk effective sample size of one scalar's draws, ``(chains, draws)``.

    The split chains' normal rank scores ``z`` (as in :func:`rhat`) give the autocorrelations ``rho_t``,
    summed by Geyer's initial monotone sequence: ``ESS = M N / tau``, ``tau = -1 + 2 sum_t rho_t``
    (Vehtari et al. 2021, as ``arviz.ess(method="bulk")``).

    Parameters
    ----------
    draws
        ``(chains, draws)`` array; NaN with fewer than 4 draws or any NaN.

    Returns
    -------
    float
        The effective number of independent draws for the mean and median; 400 is the usual floor for
        4 chains.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> 3000 < ess_bulk(rng.normal(size=(4, 1000))) < 5000  # independent draws: about all of them
    True
    >>> walk = np.cumsum(rng.normal(size=(4, 1000)), axis=1)  # a random walk: very few
    >>> ess_bulk(walk) < 100
    True
    """
    x = np.asarray(draws, dtype=float)
    if not _valid(x, min_chains=1):
        return math.nan
    return _ess(_z_scale(_split(x)))
