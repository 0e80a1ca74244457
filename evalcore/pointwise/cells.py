"""Ratings sorted into cells: the shared machinery of :mod:`evalcore.pointwise.scale_use` and :mod:`.consistency`.

A *cell* is one criterion and one combination of the ``by`` columns. The item bootstrap resamples
items within each cell, and every statistic of a cell is a weighted sum over its items
(:func:`evalcore.stats.item_weights`). :func:`cell_ratings` keeps the rows of the humans (their
first ``sample``) and of the chosen judges (every sample), and sorts them into cells;
:func:`cell_items` numbers a cell's items. :func:`split_scales` cuts a table into its criteria with numbers
and its nominal ones, whose categories the analyses count (:mod:`evalcore.data.scales`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.scales import NOMINAL, SCALE, category_of, has_categories
from ..errors import DataError
from .agreement.units import label_key
from .coding import code_ratings


@dataclass(frozen=True)
class CellRatings:
    """The rows of the humans and the chosen judges, as codes, sorted into cells (criterion x by)."""

    by: list[str]
    judges: tuple[str, ...]  #: chosen judges; source code 1 + index
    item: np.ndarray  #: item code per row
    source: np.ndarray  #: 0 humans, 1 + j judge j
    rater: np.ndarray  #: rater code per row
    sample: np.ndarray  #: sample index per row (0 without a sample column)
    score: np.ndarray  #: float
    row: np.ndarray  #: position of the row in the caller's frame
    cell: np.ndarray  #: cell code per row
    keys: list[tuple]  #: (criterion, *by values) per cell
    order: np.ndarray  #: rows sorted by cell
    bounds: np.ndarray  #: cell c is order[bounds[c]:bounds[c+1]]
    scale: dict[str, tuple[float, float]]  #: per criterion: (lowest, top) score

    def rows(self, c: int) -> np.ndarray:
        """The rows of cell ``c``."""
        return self.order[self.bounds[c]:self.bounds[c + 1]]

    def source_name(self, s: int) -> str | None:
        """The ``judge`` of source ``s``: None for the humans."""
        return None if s == 0 else self.judges[s - 1]


def _scale_pair(c: str, rng_) -> tuple[float, float]:
    try:
        lo, hi = (float(rng_[0]), float(rng_[1]))
    except (TypeError, ValueError, IndexError):
        raise DataError(f"the scale of '{c}' must be a (lowest, highest) pair of numbers, not {rng_!r}",
                        fix="pass e.g. scale={'" + c + "': (1, 100)}") from None
    if not lo < hi:
        raise DataError(f"the scale of '{c}' must have lowest < highest, not {rng_!r}",
                        fix="pass e.g. scale={'" + c + "': (1, 100)}")
    return lo, hi


def criterion_scales(criterion: np.ndarray, score: np.ndarray,
                     scale: Mapping[str, tuple[float, float]] | None = None) -> dict[str, tuple[float, float]]:
    """``(lowest, top)`` score per criterion: the lowest and highest score given on it, or the caller's
    ``scale``, which must contain every score given."""
    lo_hi = pd.DataFrame({"c": criterion, "s": score}).groupby("c", sort=True)["s"].agg(["min", "max"])
    scales = {str(c): (float(r["min"]), float(r["max"])) for c, r in lo_hi.iterrows()}
    for c, rng_ in (scale or {}).items():
        c = str(c)
        lo, hi = _scale_pair(c, rng_)
        if c in scales and (scales[c][0] < lo or scales[c][1] > hi):
            raise DataError(f"scores of '{c}' run from {scales[c][0]:g} to {scales[c][1]:g}, outside the "
                            f"scale {lo:g}-{hi:g} you gave", column="score",
                            fix="widen the scale, or remove the out-of-range scores")
        if c in scales:
            scales[c] = (lo, hi)
    return scales


def cell_ratings(ratings: pd.DataFrame, *, by: Sequence[str], judges: Sequence[str] | None,
                 scale: Mapping[str, tuple[float, float]] | None = None) -> CellRatings:
    """Validate a ratings table (:func:`evalcore.pointwise.coding.code_ratings`, dropping only the humans'
    repeated samples) and sort the rows of the humans and the chosen judges into cells."""
    coded = code_ratings(ratings, by=by, judges=judges, first_sample="humans")
    crit = coded.criterion_names()
    scales = criterion_scales(crit, coded.score, scale)
    idx = np.flatnonzero(coded.source >= 0)
    key_df = pd.DataFrame({"criterion": crit[idx]})
    for b in coded.by:
        key_df[b] = coded.frame[b].to_numpy()[idx]
    grouped = key_df.groupby(list(key_df.columns), sort=True, dropna=False)
    cell = grouped.ngroup().to_numpy().astype(np.int64)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    order = np.argsort(cell, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=len(keys)))])
    return CellRatings(by=coded.by, judges=coded.judges, item=coded.item[idx], source=coded.source[idx],
                       rater=coded.rater[idx], sample=coded.sample[idx], score=coded.score[idx],
                       row=coded.row[idx], cell=cell, keys=keys, order=order, bounds=bounds, scale=scales)


def cell_items(prep: CellRatings, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's item numbered within the cell (in order of first appearance), and the number of items."""
    loc, uniq = pd.factorize(prep.item[rows])
    return loc.astype(np.int64), len(uniq)


# --------------------------------------------------------------------------- scales


@dataclass(frozen=True)
class ScaleSplit:
    """A ratings table cut by scale: the criteria with numbers, and the nominal ones with their categories coded.

    ``numbers`` is the caller's table itself when no criterion is nominal (so everything runs as it always
    did), None when every criterion is. ``categories`` holds the rows of the nominal criteria with ``score``
    replaced by the position of the row's category in ``labels[criterion]`` (the categories in the order
    :func:`evalcore.pointwise.agreement.units.label_key` gives: numbers by value, then text by code point),
    None when no criterion is nominal. Codes are arbitrary numbers for counting: no analysis reads them as an
    order.
    """

    numbers: pd.DataFrame | None
    categories: pd.DataFrame | None
    labels: dict[str, tuple[str, ...]]

    @property
    def nominal(self) -> list[str]:
        """The nominal criteria, sorted."""
        return sorted(self.labels)

    def judges(self, part: pd.DataFrame, judges: Sequence[str] | None) -> list[str] | None:
        """``judges`` restricted to those who rated in ``part``; a name no judge of the whole table has stays,
        so that the part's analysis refuses it with the usual message."""
        if judges is None or self.categories is None:
            return None if judges is None else list(judges)
        whole = set(pd.concat([p["rater"] for p in (self.numbers, self.categories) if p is not None]).astype(str))
        here = set(part["rater"].astype(str))
        return [j for j in ([judges] if isinstance(judges, str) else judges) if j in here or j not in whole]


def split_scales(ratings: pd.DataFrame) -> ScaleSplit:
    """Cut a canonical ratings table into its criteria with numbers and its nominal criteria (:class:`ScaleSplit`).

    >>> frame = pd.DataFrame({"item_id": [1, 1, 2], "rater": "h", "rater_kind": "human",
    ...                       "criterion": ["stance", "fluency", "stance"], "scale": ["nominal", "ordinal", "nominal"],
    ...                       "score": [None, 4.0, None], "category": ["pro", None, "con"]})
    >>> split = split_scales(frame)
    >>> split.labels, split.categories["score"].tolist(), split.numbers["criterion"].tolist()
    ({'stance': ('con', 'pro')}, [1.0, 0.0], ['fluency'])
    """
    if not has_categories(ratings):
        return ScaleSplit(ratings, None, {})
    nominal = (ratings[SCALE] == NOMINAL).to_numpy(dtype=bool, na_value=False)
    cats = ratings[nominal].copy()
    label = category_of(cats).to_numpy(dtype=object, na_value=None)
    crit = (cats["criterion"].astype("string").fillna("overall").to_numpy(dtype=object) if "criterion" in cats.columns
            else np.full(len(cats), "overall", dtype=object))
    labels: dict[str, tuple[str, ...]] = {}
    score = np.full(len(cats), np.nan)
    for c in sorted(set(crit)):
        at = np.flatnonzero(crit == c)
        names = tuple(sorted({str(v) for v in label[at] if v is not None}, key=label_key))
        labels[str(c)] = names
        pos = {n: float(i) for i, n in enumerate(names)}
        score[at] = [np.nan if v is None else pos[str(v)] for v in label[at]]
    cats["score"] = score
    numbers = ratings[~nominal] if not nominal.all() else None
    return ScaleSplit(numbers, cats, labels)
