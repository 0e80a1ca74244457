"""The Position bias page (and its report section): one method's rows, before and after calibration, the page's
reading, and the calibration maps.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ...text import md
from ..display import METHOD_NAMES, POSITION_LABELS, fmt_interval
from .common import group_label

__all__ = ["position_rows", "before_after", "position_reading", "calibration_maps", "calibrated_judges"]


def position_rows(report: pd.DataFrame, *, by: Sequence[str], method: str = "none") -> pd.DataFrame:
    """One method's rows of a position report, with a ``label`` naming the judge and its group."""
    rows = report[report["method"] == method]
    group = group_label(rows, by)
    return rows.assign(label=rows["judge"].astype(str) + np.where(group != "", " · " + group, ""))


def before_after(report: pd.DataFrame, *, judge: str, by: Sequence[str]) -> pd.DataFrame:
    """One judge's measures (rows) by calibration method (columns), estimate and interval in each cell."""

    rows = report[(report["judge"] == judge) & (report["measure"] != "not_available")]
    cell = [("n/a" if e != e else f"{e:.3f} {fmt_interval(lo, hi)}") + (" ⚑" if f is True else "")
            for e, lo, hi, f in zip(rows["estimate"], rows["ci_low"], rows["ci_high"], rows["flagged"])]
    index = [*by, "measure"]
    wide = rows.assign(cell=cell).pivot_table(index=index, columns="method", values="cell", aggfunc="first",
                                              sort=False)
    wide = wide[[m for m in METHOD_NAMES if m in wide.columns]].rename(columns=METHOD_NAMES).reset_index()
    return wide.assign(measure=wide["measure"].map(lambda m: POSITION_LABELS.get(m, m)))


def position_reading(report: pd.DataFrame, *, judge: str, by: Sequence[str],
                     escape: Callable[[object], str] = md) -> str:
    """Whether a judge can be trusted to compare two outputs in a single order, in plain language.

    The rule, stated on the page: trusted when its first-position preference is not flagged and the
    lower end of its position consistency's 95% interval is at least 0.9 (the order changes at most
    one verdict in ten), in every group.

    The sentence is Markdown (the judge's name in bold) for the page; ``escape`` writes the names from the
    data into it (default :func:`evalcore.text.md`: shown as written, never as a link or an image).
    """
    rows = report[(report["judge"] == judge) & (report["method"] == "none")]
    cons = rows[rows["measure"] == "position_consistency"]
    pref = rows[rows["measure"] == "first_position_preference"]
    if cons.empty or cons["estimate"].isna().all():
        return f"**{escape(judge)}**: no item has its verdicts in both orders, so its position bias cannot be measured."
    worst = cons.loc[cons["ci_low"].fillna(cons["estimate"]).idxmin()]
    where = (" (" + escape(" / ".join(str(worst[c]) for c in by)) + ")") if by else ""
    flagged = pref[pref["flagged"].fillna(False).astype(bool)]
    text = (f"**{escape(judge)}** gives the same verdict in both orders on {worst['estimate']:.0%} of items{where} "
            f"(95% CI {worst['ci_low']:.0%} to {worst['ci_high']:.0%}).")
    if len(flagged):
        f = flagged.iloc[0]
        side = "first" if f["estimate"] > 0.5 else "second"
        text += (f" It favours the output shown {side}: {f['estimate']:.0%} of its decisive verdicts go to the first "
                 f"position (flagged, q = {f['q_value']:.2g}).")
    trusted = not len(flagged) and worst["ci_low"] >= 0.9
    others = report[(report["judge"] == judge) & (report["method"] != "none")]
    calibrated = bool(len(others)) and (others["measure"] != "not_available").any()
    text += (" It can be trusted to compare two outputs in a single order." if trusted else
             " Do not trust it in a single order: ask it in both orders and count a disagreement as a tie"
             + (", or calibrate it (below)." if calibrated else
                " (calibrating it needs its probabilities of \"A\", which this file does not have)."))
    return text


def calibration_maps(calibrations: Sequence, *, judge: str) -> pd.DataFrame:
    """``method, raw, calibrated`` of one judge's fitted calibrations (each one's ``to_frame``)."""
    parts = [c.to_frame().assign(method=c.method) for c in calibrations if c.judge == judge]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "raw", "calibrated"])


def calibrated_judges(report: pd.DataFrame) -> list[str]:
    """The judges of a position report that have calibrated rows (they gave probabilities)."""
    rows = report[(report["method"] != "none") & (report["measure"] != "not_available")]
    return list(dict.fromkeys(rows["judge"].astype(str)))
