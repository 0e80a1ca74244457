"""PriDe: debiasing a judge's option-ID prior by permuting the options (Zheng et al. 2023).

Zheng, Zhou, Meng, Zhou, Huang, "Large language models are not robust multiple choice selectors"
(2023), the baseline of CalibraEval (Li et al. 2024); the formulas below are those of the
CalibraEval authors' ``src/Pride.py`` (github.com/CSHaitao/CalibraEval).

With two options the judge sees each item under two permutations of the contents over the IDs:
``s0`` (X labelled "A" at position 1) and ``s2`` (Y labelled "A" at position 1). Row ``r`` of an
item's observed matrix is the judge's distribution over the IDs ("A", "B") under permutation ``r``:
``[p0, 1 - p0]`` and ``[p2, 1 - p2]``. Content moves between IDs, the ID's own pull stays, so the
item's prior over the IDs is

.. math::

    \\pi^{(item)} = \\operatorname{softmax}\\Big(\\frac{1}{2} \\sum_r \\log P_r(\\text{ID})\\Big),

and the judge's prior :math:`\\pi` is the mean of the items' priors over an estimation subset.
Any observed P("A") is then debiased as

.. math::

    \\tilde P(\\text{A}) = \\operatorname{softmax}(\\log P - \\log \\pi)_{\\text{A}}
                        = \\frac{P / \\pi_A}{P / \\pi_A + (1 - P) / \\pi_B},

with the authors' :math:`10^{-10}` inside the logarithms.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = ["PrideCalibration", "fit_pride", "item_priors"]

_EPS = 1e-10


@dataclass(frozen=True)
class PrideCalibration:
    """A fitted PriDe prior over the option IDs ("A", "B").

    Attributes
    ----------
    prior_a
        :math:`\\pi_A`, the judge's prior for the ID "A" (0.5: no ID preference); :math:`\\pi_B = 1 - \\pi_A`.
    n_items
        Items of the estimation subset.
    judge
        The judge the prior belongs to.
    method
        Always ``"pride"``.

    Examples
    --------
    >>> cal = PrideCalibration(prior_a=0.6, n_items=10)
    >>> cal.apply([0.6, 0.5]).round(4).tolist()
    [0.5, 0.4]
    """

    prior_a: float
    n_items: int
    judge: str = ""
    method: str = "pride"

    def apply(self, p) -> np.ndarray:
        """Debiased P("A") of raw P("A") values ``p`` (NaN stays NaN)."""
        p = np.asarray(p, dtype=float)
        prior = np.log(np.array([self.prior_a, 1.0 - self.prior_a]) + _EPS)
        logits = np.stack([np.log(p + _EPS), np.log(1.0 - p + _EPS)], axis=-1) - prior
        from scipy.special import softmax  # here, not at import: the CLI's start-up does not need scipy

        return softmax(logits, axis=-1)[..., 0]

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> PrideCalibration:
        """The calibration saved by :meth:`to_dict`."""
        try:
            return cls(prior_a=float(data["prior_a"]), n_items=int(data["n_items"]), judge=str(data.get("judge", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"a saved PriDe calibration is incomplete or malformed ({exc})",
                            fix="save the calibration again with evalcore position --save-calibration") from None

    def to_frame(self, points: int = 101) -> pd.DataFrame:
        """The map on a grid of raw P("A"): ``raw`` and ``calibrated``."""
        raw = np.linspace(0.0, 1.0, int(points))
        return pd.DataFrame({"raw": raw, "calibrated": self.apply(raw)})


def item_priors(p0, p2) -> np.ndarray:
    """Each item's prior over the IDs ("A", "B"), ``(items, 2)``, from P("A") under ``s0`` and ``s2``.

    >>> item_priors([0.8], [0.4]).round(4).tolist()  # softmax of (log .8 + log .4, log .2 + log .6) / 2
    [[0.6202, 0.3798]]
    """
    p0, p2 = np.asarray(p0, dtype=float), np.asarray(p2, dtype=float)
    obs = np.stack([np.stack([p0, 1 - p0], axis=-1), np.stack([p2, 1 - p2], axis=-1)], axis=1)  # items x perm x ID
    from scipy.special import softmax  # here, not at import: the CLI's start-up does not need scipy

    obs = obs / (obs.sum(axis=-1, keepdims=True) + _EPS)
    return softmax(np.log(obs + _EPS).mean(axis=1), axis=-1)


def fit_pride(p0, p2, *, judge: str = "") -> PrideCalibration:
    """The judge's prior: the mean of :func:`item_priors` over the estimation subset.

    Parameters
    ----------
    p0, p2
        P("A") under ``s0`` and under ``s2`` (IDs swapped), one per item of the estimation subset.
    judge
        The judge's name, kept with the prior.
    """
    p0, p2 = np.asarray(p0, dtype=float), np.asarray(p2, dtype=float)
    ok = np.isfinite(p0) & np.isfinite(p2)
    if not ok.any() or (p0[ok] < 0).any() or (p0[ok] > 1).any() or (p2[ok] < 0).any() or (p2[ok] > 1).any():
        raise DataError("PriDe needs at least one item with P('A') between 0 and 1 in both prompts",
                        fix="give prob_a and prob_a_swap_id")
    prior = item_priors(p0[ok], p2[ok]).mean(axis=0)
    return PrideCalibration(prior_a=float(prior[0]), n_items=int(ok.sum()), judge=judge)
