"""The Bias page: the judges it opens on, the thresholds of a conditional distribution, one criterion's results,
and what a plot leaves out.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ...data.scales import NOMINAL, scale_by_criterion

__all__ = ["undrawn", "first_judges", "score_levels", "thresholds", "criterion_view", "flagged_judges",
           "nominal_criteria", "ordered_criteria", "category_rows", "not_applicable_note"]


def undrawn(records: pd.DataFrame, *, measure: str, y: str) -> str | None:
    """What an effect plot of ``measure`` leaves out (its rows without a value), as a sentence with the reasons;
    None when every row has a value. A plot that drops a judge or a group silently reads as if it were not
    there."""
    rows = records[(records["measure"] == measure) & records["estimate"].isna()]
    if rows.empty:
        return None
    names = [f"{'humans' if j != j or j is None else j}" + (f" / {v}" if y in rows and v == v else "")
             for j, v in zip(rows["judge"], rows[y] if y in rows else [None] * len(rows))]
    reasons = sorted({str(n) for n in rows["note"].fillna("") if str(n)}) if "note" in rows else []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return (f"Not drawn, no value: {shown}" + (f" ({'; '.join(reasons[:3])})" if reasons else "") + ".")


def first_judges(judges: Sequence[str], *, all_up_to: int = 6, first: int = 4) -> list:
    """The judges a page selects at first: all of them when there are at most ``all_up_to``, else the
    first ``first`` (many judges crowd every chart; the user adds more)."""
    return list(judges) if len(judges) <= all_up_to else list(judges[:first])


def score_levels(ratings: pd.DataFrame, criterion: str) -> list:
    """The distinct scores given on ``criterion``, sorted."""
    return sorted(ratings.loc[ratings["criterion"] == criterion, "score"].unique())


def thresholds(ratings: pd.DataFrame, criterion: str) -> list:
    """The thresholds a conditional distribution can split ``criterion`` at: every score but the highest
    (above vs at or below), or the only score there is."""
    scores = score_levels(ratings, criterion)
    return scores[:-1] or scores


def criterion_view(results: pd.DataFrame, criterion: str, *, grouped: bool) -> pd.DataFrame:
    """The bias results a grouped view shows for one criterion (with the rows that have none); all of
    them when the view is not grouped (its rows are the criteria)."""
    if not grouped:
        return results
    return results[(results["criterion"].astype(str) == criterion) | results["criterion"].isna()]


def flagged_judges(results: pd.DataFrame, measure: str) -> list[str]:
    """The judges with a flagged ``measure`` row, most flagged rows first (what a page should open on)."""
    rows = results[(results["measure"] == measure) & results["flagged"].fillna(False).astype(bool)]
    counts = rows["judge"].dropna().astype(str).value_counts()
    return list(counts.index)


def nominal_criteria(ratings: pd.DataFrame) -> list[str]:
    """The criteria of ``ratings`` whose labels are categories without an order (:mod:`evalcore.data.scales`)."""
    return [c for c, s in scale_by_criterion(ratings).items() if s == NOMINAL]


def ordered_criteria(ratings: pd.DataFrame, criteria: Sequence[str]) -> list[str]:
    """``criteria`` without the nominal ones: those a threshold or a correlation can be computed on."""
    nominal = set(nominal_criteria(ratings))
    return [c for c in criteria if str(c) not in nominal]


def category_rows(results: pd.DataFrame, *, measure: str, criterion: str, y: str | None = None) -> pd.DataFrame:
    """The rows of ``measure`` about the categories of ``criterion``, with a ``where`` label for an effect plot:
    the category, after the ``y`` group where the view is grouped (``language / pro``)."""
    if "category" not in results.columns:
        return results.iloc[:0].assign(where=pd.Series(dtype=object))
    rows = results[(results["measure"] == measure) & (results["criterion"].astype(str) == str(criterion))
                   & results["category"].notna()]
    group = rows[y].astype(str) + " / " if y and y in rows.columns and y != "criterion" else ""
    return rows.assign(where=group + rows["category"].astype(str))


def not_applicable_note(not_applicable, section: str, criterion: str) -> str | None:
    """The note saying what ``section`` does not compute on the nominal ``criterion`` and why
    (:attr:`evalcore.pointwise.bias_report.BiasReport.not_applicable`), or None."""
    return next((note for s, c, note in not_applicable if s == section and str(c) == str(criterion)), None)
