"""How pages, figures and reports write things: the display names of the humans and of the methods, and
numbers to 3 decimals.

Its own small module (no plotting, no Streamlit) so that the figures (:mod:`evalcore.report.plots`) and the
page views (:mod:`evalcore.report.views`) write them alike without importing each other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HUMANS", "METHOD_LABEL", "METHOD_NAMES", "POSITION_LABELS", "PPI_METHOD_NAMES", "fmt_interval", "fmt_number"]

#: The name the humans' rows go by in what a page shows (their ``judge`` is missing in the results).
HUMANS = "(humans)"

#: The win-rate estimates as pages and figures name them (methods, and the two references drawn beside them).
METHOD_LABEL = {"ds": "Dawid-Skene", "bwrs": "BWRS", "observed": "raw judge win rate k", "human": "humans' p"}

#: The position-bias calibration methods as the page names them.
METHOD_NAMES = {"none": "no calibration", "pride": "PriDe", "noa": "CalibraEval NOA (to convergence)",
                "noa_released": "CalibraEval NOA (released settings)"}

#: The position-bias measures as the page names them.
POSITION_LABELS = {
    "position_consistency": "same verdict in both orders", "first_position_preference": "verdicts for the first shown",
    "accuracy_original_order": "accuracy, original order", "accuracy_swapped_order": "accuracy, swapped order",
    "accuracy_both_orders": "right in both orders", "accuracy_average": "accuracy, mean of the orders",
    "rstd": "RStd (spread of per-class recall)", "fleiss_kappa": "Fleiss' kappa across prompts",
    "icc2k": "ICC(2,k)", "icc3k": "ICC(3,k)"}


def fmt_number(v: float | None) -> str:
    """A number as pages, plots and tables show it: 3 decimals, ``n/a`` when undefined.

    >>> fmt_number(0.76923), fmt_number(float("nan")), fmt_number(None)
    ('0.769', 'n/a', 'n/a')
    """
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.3f}"


def fmt_interval(lo: float, hi: float, *, signed: bool = False, prefix: str = "", digits: int = 3) -> str:
    """An interval as ``prefix[lo, hi]`` to ``digits`` decimals (``signed``: with a sign), ``no interval`` when
    undefined.

    >>> fmt_interval(0.4, 0.61, prefix="95% "), fmt_interval(-0.02, 0.1, signed=True), fmt_interval(2, 5, digits=0)
    ('95% [0.400, 0.610]', '[-0.020, +0.100]', '[2, 5]')
    """
    if lo != lo or hi != hi:
        return "no interval"
    f = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return f"{prefix}[{f.format(lo)}, {f.format(hi)}]"


#: The prediction-powered page's methods as the page, its table and its figures name them, in the order shown.
PPI_METHOD_NAMES = {"human_only": "humans only", "judge_only": "judge only (biased)", "ppi": "PPI (lambda 1)",
                    "ppi++": "PPI++", "bwrs": "BWRS (Gao et al.)", "ds": "Dawid-Skene (Gao et al.)"}
