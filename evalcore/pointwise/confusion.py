"""The confusion matrix of each judge against the humans' label: which category the judge gives where the
humans gave which.

The humans' label of a unit (an item on one criterion) is their strict majority
(:func:`evalcore.labels.strict_majority`, the label more than half of the unit's annotators gave), the
label Cohen's kappa, percent agreement and weighted F1 of the agreement table compare the judge with:
the matrix is what those numbers summarise. Units without a strict majority are left out and counted
in ``note``. Cell :math:`(a, b)` counts the units whose majority is :math:`a` and whose judge label is
:math:`b`; ``row_share`` is :math:`n_{ab} / n_{a\\cdot}`, the share of the units the humans labelled
:math:`a` that the judge labelled :math:`b` (the diagonal is then each category's recall).

Categories come in the criterion's order: numbers in numeric order (a text criterion declared ordinal
is numbered in the user's order, and shows its labels), nominal labels with numbers first by value and
then text in code-point order, the order of :func:`evalcore.pointwise.agreement.units.count_units`. Every
category the humans or the judge gave in the group is a row and a column, zero counts included, so
each group's matrix is square.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import RATINGS
from ..errors import DataError
from ..labels import strict_majority
from .agreement.groups import group_codes
from .agreement.table import scale_by, scale_notes
from .agreement.units import Units, count_units

#: The columns after ``judge`` and the ``by`` columns.
CONFUSION_COLUMNS = ("human_category", "judge_category", "count", "row_share", "n_units", "note")


def _grid(counts: np.ndarray, used: np.ndarray, labels: list[str], missing: float) -> dict[str, list]:
    """One group's square matrix over the categories ``used``, as tidy columns."""
    cats = np.flatnonzero(used)
    sub = counts[np.ix_(cats, cats)]
    rows = sub.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(rows > 0, sub / np.where(rows > 0, rows, 1), np.nan)
    k = len(cats)
    note = f"{int(missing)} unit(s) without a strict human majority left out" if missing else ""
    return {"human_category": [labels[c] for c in cats for _ in range(k)],
            "judge_category": [labels[c] for _ in range(k) for c in cats],
            "count": np.round(sub).astype(np.int64).ravel().tolist(), "row_share": share.ravel().tolist(),
            "n_units": [int(round(sub.sum()))] * (k * k), "note": [note] * (k * k)}


def _per_group(values: np.ndarray, gcodes: np.ndarray, G: int, width: int, weights: np.ndarray) -> np.ndarray:
    """Sum of ``weights`` per (group, value): (G, width)."""
    return np.bincount(gcodes * width + values, weights=weights, minlength=G * width).reshape(G, width)


@takes_table(RATINGS)
def confusion_matrix(
    ratings: pd.DataFrame | Units,
    *,
    judges: Sequence[str] | None = None,
    by: Sequence[str] = (),
) -> pd.DataFrame:
    """Each judge's labels against the humans' strict-majority label, per group: a tidy confusion matrix.

    Parameters
    ----------
    ratings
        A validated ratings table, or its :func:`evalcore.pointwise.agreement.units.count_units` result.
    judges
        Judges to include (default: all).
    by
        Columns to group by (``criterion``, ``language``, any per-item segment); empty pools every
        unit. Categories of different criteria are pooled by their text, so a grouping by ``criterion``
        is the usual one; a nominal criterion is never pooled with numbers (``criterion`` is then added,
        as in :func:`evalcore.pointwise.agreement.table.agreement`).
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per judge, group, human category and judge category: columns ``judge, *by,
        human_category, judge_category, count, row_share, n_units, note``. ``count`` is the number of
        units whose human majority is ``human_category`` and whose judge label is ``judge_category``;
        ``row_share`` its share of the units of that human category (NaN where the humans never gave it
        as a majority); ``n_units`` the units of the group's matrix; ``note`` how many units without a
        strict majority were left out. Categories (both columns) in the criterion's order.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "item_id": [1, 1, 1, 2, 2, 2, 3, 3, 3], "criterion": "stance", "scale": "nominal", "score": None,
    ...     "rater": ["h1", "h2", "bot"] * 3, "rater_kind": ["human", "human", "judge"] * 3,
    ...     "category": ["pro", "pro", "pro", "con", "con", "pro", "pro", "con", "con"]})
    >>> cm = confusion_matrix(frame)
    >>> print(cm[["human_category", "judge_category", "count", "row_share"]].to_string(index=False))
    human_category judge_category  count  row_share
               con            con      0        0.0
               con            pro      1        1.0
               pro            con      0        0.0
               pro            pro      1        1.0
    >>> cm["note"].iloc[0]
    '1 unit(s) without a strict human majority left out'
    """
    units = ratings if isinstance(ratings, Units) else count_units(ratings)
    asked = list(by)
    units.check_by(asked)
    by = scale_by(units, asked)
    chosen = list(units.judges) if judges is None else list(judges)
    bad = [j for j in chosen if j not in units.judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(units.judges))
    gcodes, keys = group_codes(units, by)
    G, q = len(keys), units.counts.shape[1]
    major, w = strict_majority(units.counts), units.weight.astype(float)
    crit = by.index("criterion") if "criterion" in by else None
    labels = [[units.label(None if crit is None else keys[g][crit], c) for c in range(q)] for g in range(G)]
    parts = []
    for name in chosen:
        jc = units.judge_codes[units.judges.index(name)]
        rated = units.has_human & (jc >= 0)
        ok = rated & (major >= 0)
        cells = _per_group(major[ok] * q + jc[ok], gcodes[ok], G, q * q, w[ok]).reshape(G, q, q)
        missing = np.bincount(gcodes[rated & (major < 0)], weights=w[rated & (major < 0)], minlength=G)
        used = _per_group(jc[rated], gcodes[rated], G, q, w[rated]) > 0
        for k in range(q):  # the categories the humans gave on the units this judge rated
            used[:, k] |= np.bincount(gcodes[rated], weights=units.counts[rated, k], minlength=G) > 0
        for g in np.flatnonzero(np.bincount(gcodes[rated], minlength=G) > 0):
            grid = _grid(cells[g], used[g], labels[g], missing[g])
            n = len(grid["count"])
            parts.append(pd.DataFrame({"judge": [name] * n, **{c: [keys[g][i]] * n for i, c in enumerate(by)},
                                       **grid}))
    columns = ["judge", *by, *CONFUSION_COLUMNS]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    out = out[columns]
    out.attrs["notes"] = scale_notes(units, asked)
    return out
