"""Ratings sorted into cells: the shared machinery of :mod:`evalcore.pointwise.scale_use` and :mod:`.consistency`.

A *cell* is one criterion and one combination of the ``by`` columns. The item bootstrap resamples
items within each cell, and every statistic of a cell is a weighted sum over its items
(:func:`evalcore.stats.item_weights`). :func:`cell_ratings` keeps the rows of the humans (their
first ``sample``) and of the chosen judges (every sample), and sorts them into cells;
:func:`cell_items` numbers a cell's items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
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
