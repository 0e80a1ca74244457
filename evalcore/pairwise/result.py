"""The result of one win-rate fit: :class:`WinRate`, its judges' :class:`JudgeAccuracy`, and the
summary of posterior samples of ``p`` (mean, KDE mode, 95% interval, density) both methods share.

Its own module so that :mod:`.bwrs` and :mod:`.dawid_skene` can build results without importing
:mod:`.winrate`, which imports them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["JudgeAccuracy", "WinRate", "summarize_samples"]

_GRID = np.linspace(0.0, 1.0, 201)


def summarize_samples(samples: np.ndarray) -> dict[str, Any]:
    """Mean, KDE mode, 95% equal-tailed interval and a density curve of posterior samples of p.

    The mode is the maximum of a Gaussian KDE with Scott's bandwidth (statsmodels'
    FFT KDE), as Gao et al. estimate p by the KDE's mean and mode. The mean of a
    Gaussian KDE equals the sample mean.
    """
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return {"mean": math.nan, "mode": math.nan, "low": math.nan, "high": math.nan, "x": [], "density": []}
    low, high = np.quantile(x, [0.025, 0.975])
    if np.ptp(x) < 1e-12:
        mode, dens = float(x[0]), np.where(np.abs(_GRID - x[0]) < 0.0025, 200.0, 0.0)
    else:
        from statsmodels.nonparametric.kde import KDEUnivariate

        kde = KDEUnivariate(x)
        kde.fit(kernel="gau", bw="scott", fft=True, gridsize=2048)
        mode = float(kde.support[np.argmax(kde.density)])
        dens = np.interp(_GRID, kde.support, kde.density, left=0.0, right=0.0)
    return {"mean": float(x.mean()), "mode": mode, "low": float(low), "high": float(high),
            "x": _GRID.tolist(), "density": dens.tolist()}


@dataclass(frozen=True)
class JudgeAccuracy:
    """One judge's accuracies on the pair: counts on the labels used and posterior summaries."""

    judge: str
    k: float  # the judge's own observed win rate
    n_verdicts: int
    n0: float
    s0: float
    n1: float
    s1: float
    q0_mean: float
    q0_low: float
    q0_high: float
    q1_mean: float
    q1_low: float
    q1_high: float
    p_mean: float = math.nan  # BWRS: this judge's own estimate of p
    p_mode: float = math.nan
    p_low: float = math.nan
    p_high: float = math.nan
    n_valid: int = 0  # BWRS: samples that gave a p in (0, 1)


def _nan_to_none(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (np.floating,)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


@dataclass(frozen=True)
class WinRate:
    """A calibrated win rate of ``system_a`` over ``system_b``.

    ``p_mean``/``p_mode``/``ci_low``/``ci_high`` summarise the posterior (DS) or the valid
    samples (BWRS) of ``p``; ``k_observed`` is the raw judge win rate and ``p_human`` the
    humans' win rate over all their labels (None without labels). ``density`` is a KDE
    of ``p`` on a 0-1 grid, for plots.
    """

    system_a: str
    system_b: str
    method: str
    prior: str
    ties: str
    p_mean: float
    p_mode: float
    ci_low: float
    ci_high: float
    k_observed: float
    p_human: float
    n_items: int
    n_human_labelled: int
    rhat: float
    ess: float
    seconds: float
    judges: tuple[JudgeAccuracy, ...]
    n_samples: int = 0
    n_valid: int = 0
    divergences: int = 0
    warnings: tuple[str, ...] = ()
    density: tuple[tuple[float, ...], tuple[float, ...]] = field(default=((), ()), repr=False)

    def to_record(self, *, density: bool = False) -> dict[str, Any]:
        """The CLI's JSON record (NaN written as null)."""
        rec = {
            "system_a": self.system_a, "system_b": self.system_b, "method": self.method, "prior": self.prior,
            "ties": self.ties, "p_mean": self.p_mean, "p_mode": self.p_mode, "ci_low": self.ci_low,
            "ci_high": self.ci_high, "k_observed": self.k_observed, "p_human": self.p_human,
            "n_items": self.n_items, "n_human_labelled": self.n_human_labelled, "rhat": self.rhat,
            "ess": self.ess, "seconds": self.seconds, "n_samples": self.n_samples, "n_valid": self.n_valid,
            "divergences": self.divergences, "warnings": list(self.warnings),
            "judges": [{k: _nan_to_none(v) for k, v in j.__dict__.items()} for j in self.judges],
        }
        rec = {k: _nan_to_none(v) for k, v in rec.items()}
        if density:
            rec["density"] = {"x": list(self.density[0]), "y": list(self.density[1])}
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> "WinRate":
        """Rebuild from :meth:`to_record` (None back to NaN)."""
        f = lambda v: math.nan if v is None else v  # noqa: E731
        judges = tuple(JudgeAccuracy(**{k: f(v) for k, v in j.items()}) for j in rec["judges"])
        dens = rec.get("density") or {"x": [], "y": []}
        skip = {"judges", "density", "warnings"}
        kw = {k: f(v) for k, v in rec.items() if k not in skip}
        return cls(**kw, judges=judges, warnings=tuple(rec.get("warnings", ())),
                   density=(tuple(dens["x"]), tuple(dens["y"])))

    def to_frame(self) -> pd.DataFrame:
        """One row: the estimate with its interval, n and diagnostics."""
        rec = self.to_record()
        rec["warnings"] = "; ".join(rec["warnings"])
        rec.pop("judges")
        return pd.DataFrame([rec])

    def judges_frame(self) -> pd.DataFrame:
        """One row per judge: counts, posterior q0 and q1 (and BWRS's per-judge p)."""
        return pd.DataFrame([j.__dict__ for j in self.judges])
