"""The unit filter: agreement over the fully annotated units only.

``min_raters`` / ``max_raters`` (:func:`filter_units`) keep only the units (an item on one criterion) with
that many human ratings, for every measure: ``min_raters=3, max_raters=3`` gives the units that papers
report Krippendorff's alpha on when three annotators rated each. The filtered
:class:`~evalcore.pointwise.agreement.units.Units` carry a :class:`UnitFilter` with the units kept and
dropped (in total and per group), and the agreement table's ``note`` repeats them for the row's group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ...errors import DataError
from .groups import group_codes
from .units import Units


def _check_raters(name: str, value: object) -> int | None:
    """``value`` as a whole number of human ratings, 0 or more (None: no bound), or a DataError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise DataError(f"{name} must be a whole number of human ratings per unit, 0 or more, not {value!r}",
                        fix="use e.g. 3 for units with three annotators, or leave it unset for no bound")
    return int(value)


def _bounds_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and lo == hi:
        return f"exactly {lo} human rating(s)"
    if hi is None:
        return f"{lo} or more human ratings"
    return f"at most {hi} human rating(s)" if lo is None else f"{lo} to {hi} human ratings"


@dataclass(frozen=True)
class UnitFilter:
    """What :func:`filter_units` did: its bounds, and which of the ``source`` units it kept.

    Counts are of units with at least one human rating (the only units any agreement measure
    uses); units without one are never reported as dropped.

    Attributes
    ----------
    min_raters, max_raters
        The bounds on the number of human ratings of a unit (None: no bound).
    source
        The units before the filter.
    keep
        Per unit of ``source``, whether it was kept.
    """

    min_raters: int | None
    max_raters: int | None
    source: Units
    keep: np.ndarray

    @property
    def kept(self) -> int:
        """Units with a human rating that the filter kept."""
        return int(self.source.weight[self.keep & self.source.has_human].sum())

    @property
    def dropped(self) -> int:
        """Units with a human rating that the filter dropped."""
        return int(self.source.weight[~self.keep & self.source.has_human].sum())

    @property
    def description(self) -> str:
        """The filter in words, e.g. ``'units with exactly 3 human rating(s)'``."""
        return "units with " + _bounds_text(self.min_raters, self.max_raters)

    def summary(self, by: Sequence[str] = ()) -> pd.DataFrame:
        """Units kept and dropped per group of ``by`` (segment columns; empty: one row), columns
        ``*by, units_kept, units_dropped``; groups in the order of the agreement table
        (:func:`evalcore.pointwise.agreement.table.agreement`)."""
        by = list(by)
        self.source.check_by(by)
        gcodes, keys = group_codes(self.source, by)
        hm = self.source.has_human
        w = self.source.weight
        kept = np.bincount(gcodes[self.keep & hm], weights=w[self.keep & hm], minlength=len(keys)).astype(np.int64)
        dropped = np.bincount(gcodes[~self.keep & hm], weights=w[~self.keep & hm], minlength=len(keys)).astype(np.int64)
        out = pd.DataFrame([list(k) for k in keys], columns=by) if by else pd.DataFrame(index=range(1))
        out["units_kept"], out["units_dropped"] = kept, dropped
        return out

    def notes(self, by: Sequence[str], keys: Sequence[tuple]) -> list[str]:
        """The note for each group key of ``by`` (as :func:`.groups.group_codes` gives them)."""
        table = self.summary(by)
        counts = {_key(tuple(r[:len(by)])): (r[-2], r[-1]) for r in table.itertuples(index=False)}
        return [f"{self.description}: {counts[_key(k)][0]} unit(s) kept, {counts[_key(k)][1]} dropped in this group"
                for k in keys]


def _key(key: tuple) -> tuple:
    """A group key with missing values as None, so that keys compare equal."""
    return tuple(None if v is None or (isinstance(v, float) and v != v) else v for v in key)


def filter_units(units: Units, *, min_raters: int | None = None, max_raters: int | None = None) -> Units:
    """Only the units (an item on one criterion) with ``min_raters`` to ``max_raters`` human ratings.

    Papers often report agreement over the fully annotated units only (Krippendorff's alpha over
    the units with exactly three annotators, say), where the agreement table
    (:func:`evalcore.pointwise.agreement.table.agreement`) uses every unit; with
    ``min_raters=3, max_raters=3`` it uses the same units as they do. Every measure, among humans
    and of a judge against them, then sees only the kept units; the bootstrap resamples items as
    before, an item carrying its kept units. The judges' ratings do not count towards the number of
    ratings, and the scale of each criterion (``Units.scale``, the ``q`` of AC1 and PABAK) stays the
    scale of all its ratings.

    Parameters
    ----------
    units
        The result of :func:`evalcore.pointwise.agreement.units.count_units` (or of an earlier filter).
    min_raters, max_raters
        Least and most human ratings of a kept unit, inclusive; None (the default) for no bound.
        With both None, ``units`` is returned unchanged.

    Returns
    -------
    Units
        The kept units, with ``unit_filter`` saying how many units with a human rating
        were kept and dropped (``.kept``, ``.dropped``, per group ``.summary(by)``).

    Raises
    ------
    DataError
        When a bound is not a whole number 0 or more, when ``min_raters > max_raters``, or when no
        unit with a human rating is left.

    Examples
    --------
    >>> from evalcore.pointwise.agreement.units import count_units
    >>> df = pd.DataFrame({"item_id": ["a"] * 3 + ["b"] * 2, "criterion": "fluency",
    ...                    "rater": ["h1", "h2", "h3", "h1", "h2"], "rater_kind": "human", "score": [1, 2, 2, 3, 3]})
    >>> full = filter_units(count_units(df), min_raters=3, max_raters=3)
    >>> full.unit_filter.kept, full.unit_filter.dropped, full.counts.tolist()
    (1, 1, [[1, 2, 0]])
    """
    lo, hi = _check_raters("min_raters", min_raters), _check_raters("max_raters", max_raters)
    if lo is None and hi is None:
        return units
    if lo is not None and hi is not None and lo > hi:
        raise DataError(f"min_raters ({lo}) is larger than max_raters ({hi}): no unit can have both",
                        fix=f"use a minimum of at most {hi} human ratings, or a larger maximum")
    n = units.human_ratings
    keep = (n >= (lo or 0)) & ((n <= hi) if hi is not None else True)
    if not (keep & units.has_human).any():
        seen = n[units.has_human]
        have = f"they have {int(seen.min())} to {int(seen.max())}" if len(seen) else "there is none"
        raise DataError(f"no unit has {_bounds_text(lo, hi)} ({have} human ratings per unit)",
                        fix="ask for a number of human ratings per unit that the table has, or set no bound")
    rows = np.flatnonzero(keep)
    return units.take(rows, unit_filter=UnitFilter(lo, hi, units, keep))

