"""The one result table of evalcore, and the one flag rule.

Every analysis returns a tidy table, one row per group, judge and measure, with these columns
(:data:`RESULT_COLUMNS`, after the analysis's own group columns):

``judge``
    The judge's name, or null on rows that describe the humans (the reference). Displays spell
    the humans :data:`evalcore.columns.HUMANS_LABEL`.
``measure``
    A stable code name (the README lists them).
``estimate``, ``ci_low``, ``ci_high``
    The estimate and its percentile bootstrap interval at ``level``
    (:func:`evalcore.stats.bootstrap.percentile_interval`); NaN when not defined, with the reason
    in ``note``.
``n``
    The number of **items** behind the estimate: what the bootstrap resamples. An analysis whose
    estimate averages a finer unit adds a count of it beside ``n`` (agreement: ``n_units``, an
    item on one criterion, and ``n_ratings``).
``flagged``
    The verdict of :func:`flag`, on the rows an analysis declares as tests.
``note``
    Why an estimate or interval is not defined, and caveats. Never a silent NaN.

The flag rule (:func:`flag`): a tested row is flagged when its interval lies wholly on the side
of 0 that its test names: below 0 for ``"less"``, above for ``"greater"``, either for
``"two-sided"``. Descriptive rows are never flagged.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .bootstrap import ALTERNATIVES, Alternative, percentile_interval

RESULT_COLUMNS: tuple[str, ...] = ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "flagged", "note")
#: The note of a defined row whose interval could not be computed.
SPARSE_NOTE = "no interval: the measure is undefined in most resamples"


def flag(ci_low, ci_high, *, alternative: Alternative) -> np.ndarray:
    """The one flag rule: the interval excludes 0 on the side ``alternative`` names.

    >>> flag(np.array([-0.3, 0.1, np.nan]), np.array([-0.1, 0.4, np.nan]), alternative="less").tolist()
    [True, False, False]
    >>> flag(np.array([-0.3, 0.1]), np.array([-0.1, 0.4]), alternative="two-sided").tolist()
    [True, True]
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, not {alternative!r}")
    lo, hi = np.asarray(ci_low, dtype=float), np.asarray(ci_high, dtype=float)
    with np.errstate(invalid="ignore"):
        below, above = np.isfinite(hi) & (hi < 0), np.isfinite(lo) & (lo > 0)
    return {"less": below, "greater": above, "two-sided": below | above}[alternative] & np.isfinite(lo) & \
        np.isfinite(hi)


class ResultTable:
    """Collects result rows with their bootstrap replicates; :meth:`frame` adds intervals and flags.

    Parameters
    ----------
    leading
        The columns before ``measure``, in order (for example ``section, judge, criterion, *by``);
        must include ``judge``.
    n_boot, level
        The resamples each row carries, and the confidence level of the intervals.
    """

    def __init__(self, leading: Sequence[str], *, n_boot: int, level: float) -> None:
        self.leading, self.n_boot, self.level = list(leading), n_boot, level
        self._rows: list[dict] = []
        self._boot: list[np.ndarray] = []

    def add(self, keys: dict, measure: str, values, n: int, *, test: Alternative | None = None,
            undefined: str = "", note: str = "") -> None:
        """One row: ``values`` holds the estimate then the ``n_boot`` replicates (or is a scalar, NaN
        for an estimate that is not defined, with ``undefined`` saying why). ``test`` makes the
        row a test in that direction."""
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        if arr.size == 1 and self.n_boot > 0:
            arr = np.concatenate([arr, np.full(self.n_boot, np.nan)])
        est = float(arr[0])
        notes = [note] if note else []
        if not np.isfinite(est):
            est = np.nan
            notes.insert(0, undefined or "not defined")
        self._rows.append({**keys, "measure": measure, "estimate": est, "n": int(n), "_test": test, "_notes": notes})
        self._boot.append(arr[1:])

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self) -> pd.DataFrame:
        cols = [*self.leading, *RESULT_COLUMNS[1:]]
        if not self._rows:
            return pd.DataFrame(columns=cols)
        boot = np.vstack(self._boot) if self.n_boot > 0 else np.empty((len(self._rows), 0))
        lo, hi, sparse_ci = percentile_interval(boot, self.level)
        rows = []
        for r, l, h, sp in zip(self._rows, lo, hi, sparse_ci):
            r = dict(r)  # the table can be framed again
            notes, test = list(r.pop("_notes")), r.pop("_test")
            defined = np.isfinite(r["estimate"])
            if defined and self.n_boot == 0:
                notes.append("no interval (n_boot=0)" + (", so not tested" if test else ""))
            elif defined and sp:
                notes.append(SPARSE_NOTE + (", so not tested" if test else ""))
            l, h = (float(l), float(h)) if defined else (np.nan, np.nan)
            flagged = bool(test and r.get("judge") is not None and flag(l, h, alternative=test))
            rows.append({**r, "ci_low": l, "ci_high": h, "flagged": flagged, "note": "; ".join(notes)})
        return tidy(pd.DataFrame(rows, columns=cols))


def tidy(out: pd.DataFrame) -> pd.DataFrame:
    """The dtypes of the contract: ``judge`` (and ``criterion``) object with None, ``n`` int64,
    ``flagged`` bool."""
    for c in ("judge", "criterion"):
        if c in out.columns:
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    out["flagged"] = out["flagged"].astype(bool)
    out["n"] = out["n"].astype(np.int64)
    return out
