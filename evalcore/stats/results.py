"""The one result table of evalcore, and the one flag rule.

Every analysis returns a tidy table, one row per group, judge and measure, with these columns
(:data:`RESULT_COLUMNS`, after the analysis's own group columns):

``judge``
    The judge's name, or null on rows that describe the humans (the reference). Displays spell
    the humans :data:`evalcore.columns.HUMANS_LABEL`.
``measure``
    A stable code name (docs/cli.md lists them).
``estimate``, ``ci_low``, ``ci_high``
    The estimate and its percentile bootstrap interval at ``level``
    (:func:`evalcore.stats.bootstrap.percentile_interval`); NaN when not defined, with the reason
    in ``note``.
``n``
    The number of **items** behind the estimate: what the bootstrap resamples. An analysis whose
    estimate averages a finer unit adds a count of it beside ``n`` (agreement: ``n_units``, an
    item on one criterion, and ``n_ratings``).
``test``
    The direction that means harm, on the rows an analysis tests: ``"greater"`` (a bias is an
    estimate above 0), ``"less"`` (below 0) or ``"two-sided"``; null on descriptive rows and on
    rows describing the humans. The analyses declare it in one registry
    (:data:`evalcore.pointwise.sections.TESTS`).
``p_value``
    The bootstrap p-value of the test in that direction (:func:`evalcore.stats.bootstrap.z_p_value`);
    null on rows that are not tested (descriptive, undefined, no interval).
``q_value``
    The Benjamini-Hochberg adjusted p-value across every tested row of the report (:func:`apply_fdr`).
``flagged``
    The one flag rule (:func:`apply_fdr`): a bias.
``opposite``
    Significant in the other direction of a one-sided test: reported, never a bias.
``note``
    Why an estimate or interval is not defined, and caveats. Never a silent NaN.

The flag rule (:func:`apply_fdr`), with ``alpha`` 0.05 by default: a row is **flagged** when it is
tested, its q-value is at most ``alpha``, and its estimate lies on the side its test names (either
side for ``"two-sided"``). The q-values are Benjamini-Hochberg's over all tested rows of one
report, so that the expected share of false flags among the flags is at most ``alpha``
(Benjamini & Hochberg 1995). A one-sided row is marked **opposite** when the one-sided test in
the other direction, with the same rows in the BH family, has a q-value at most ``alpha``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from .bootstrap import ALTERNATIVES, Alternative, percentile_interval, z_p_value

RESULT_COLUMNS: tuple[str, ...] = ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "test", "p_value",
                                   "q_value", "flagged", "opposite", "note")
#: The columns the flag rule sets or reads, after the counts (``n`` and an analysis's own).
TEST_COLUMNS: tuple[str, ...] = ("test", "p_value", "q_value", "flagged", "opposite")
#: The false discovery rate at which results are flagged, unless a caller says otherwise.
ALPHA = 0.05
#: The note of a defined row whose interval could not be computed.
SPARSE_NOTE = "no interval: the measure is undefined in most resamples"
#: The note of a tested row whose resamples all have the same value (no standard error).
CONSTANT_NOTE = "the resamples do not vary, so not tested"


def check_alpha(alpha: object) -> float:
    """``alpha`` as a float in (0, 1), or a :class:`~evalcore.errors.DataError`."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise DataError(f"the false discovery rate must be between 0 and 1, not {alpha!r}", fix="use e.g. 0.05")
    return float(alpha)


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of the finite entries of ``p``; NaN stays NaN.

    :math:`q_{(i)} = \\min_{k \\ge i} \\min(1, m\\, p_{(k)} / k)` over the m finite p-values sorted
    ascending (Benjamini & Hochberg 1995); equal to ``statsmodels.stats.multitest.multipletests(p,
    method="fdr_bh")[1]``. Rejecting every hypothesis with :math:`q \\le \\alpha` is the BH step-up
    procedure at false discovery rate :math:`\\alpha`.

    >>> benjamini_hochberg([0.01, 0.04, np.nan, 0.03]).round(4).tolist()
    [0.03, 0.04, nan, 0.04]
    """
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    fin = np.flatnonzero(np.isfinite(p))
    m = len(fin)
    if m == 0:
        return out
    order = fin[np.argsort(p[fin], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def _harm_side(test: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Whether each estimate lies on the side its test calls harm (either side for two-sided)."""
    with np.errstate(invalid="ignore"):
        return np.where(test == "greater", estimate > 0, np.where(test == "less", estimate < 0, estimate != 0))


def apply_fdr(frame: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """The one flag rule: Benjamini-Hochberg q-values over a report's tested rows, ``flagged`` and ``opposite``.

    The BH family is every row of ``frame`` with a ``test`` and a finite ``p_value`` (call it once
    on everything one report returns). Sets ``q_value`` (null on rows not tested), ``flagged``
    (q-value at most ``alpha`` and the estimate on the side of harm) and ``opposite`` (a one-sided
    row whose test in the other direction, p-value ``1 - p``, reaches a q-value at most ``alpha``
    when it takes the place of the row's p-value in the same family: significant, not a bias).

    Parameters
    ----------
    frame
        A result table with ``test``, ``p_value`` and ``estimate``.
    alpha
        The false discovery rate, 0.05 by default.

    Returns
    -------
    pandas.DataFrame
        A copy of ``frame`` with ``q_value``, ``flagged`` and ``opposite`` set.
    """
    alpha = check_alpha(alpha)
    out = frame.copy()
    test = out["test"].to_numpy(dtype=object) if "test" in out else np.full(len(out), None, dtype=object)
    p = pd.to_numeric(out["p_value"], errors="coerce").to_numpy(dtype=float) if "p_value" in out else \
        np.full(len(out), np.nan)
    est = pd.to_numeric(out["estimate"], errors="coerce").to_numpy(dtype=float)
    tested = pd.notna(test) & np.isfinite(p)
    test = np.where(tested, test, "")
    q = np.where(tested, benjamini_hochberg(np.where(tested, p, np.nan)), np.nan)
    harm = _harm_side(test, est)
    one_sided = tested & (test != "two-sided")
    q_other = benjamini_hochberg(np.where(tested, np.where(one_sided, 1.0 - p, p), np.nan))
    with np.errstate(invalid="ignore"):
        out["q_value"] = q
        out["flagged"] = tested & (q <= alpha) & harm
        out["opposite"] = one_sided & (q_other <= alpha) & ~harm & (est != 0)
    return out


class ResultTable:
    """Collects result rows with their bootstrap replicates; :meth:`frame` adds intervals and flags.

    Parameters
    ----------
    leading
        The columns before ``measure``, in order (for example ``section, judge, criterion, *by``);
        must include ``judge``.
    n_boot, level
        The resamples each row carries, and the confidence level of the intervals.
    alpha
        The false discovery rate of the flags when the table is its own report (:meth:`frame`);
        a report made of several tables applies :func:`apply_fdr` again over all of them.
    """

    def __init__(self, leading: Sequence[str], *, n_boot: int, level: float, alpha: float = ALPHA) -> None:
        self.leading, self.n_boot, self.level, self.alpha = list(leading), n_boot, level, alpha
        self._rows: list[dict] = []
        self._boot: list[np.ndarray] = []

    def add(self, keys: dict, measure: str, values, n: int, *, test: Alternative | None = None,
            undefined: str = "", note: str = "") -> None:
        """One row: ``values`` holds the estimate then the ``n_boot`` replicates (or is a scalar, NaN
        for an estimate that is not defined, with ``undefined`` saying why). ``test`` makes the
        row a test in that direction (the direction that means harm); rows whose ``judge`` is
        None (the humans) are never tests."""
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        if arr.size == 1 and self.n_boot > 0:
            arr = np.concatenate([arr, np.full(self.n_boot, np.nan)])
        est = float(arr[0])
        notes = [note] if note else []
        if not np.isfinite(est):
            est = np.nan
            notes.insert(0, undefined or "not defined")
        if test is not None and test not in ALTERNATIVES:
            raise ValueError(f"test must be one of {ALTERNATIVES}, not {test!r}")
        test = test if keys.get("judge") is not None else None
        self._rows.append({**keys, "measure": measure, "estimate": est, "n": int(n), "_test": test, "_notes": notes})
        self._boot.append(arr[1:])

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self) -> pd.DataFrame:
        """The rows with their intervals, p-values (:func:`evalcore.stats.bootstrap.z_p_value` in the
        direction of each row's test) and flags (:func:`apply_fdr` over this table)."""
        cols = [*self.leading, *RESULT_COLUMNS[1:]]
        if not self._rows:
            return pd.DataFrame(columns=cols)
        boot = np.vstack(self._boot) if self.n_boot > 0 else np.empty((len(self._rows), 0))
        lo, hi, sparse_ci = percentile_interval(boot, self.level)
        tests = np.array([r["_test"] or "two-sided" for r in self._rows], dtype=object)
        p_all = z_p_value([r["estimate"] for r in self._rows], boot, alternative=tests)
        rows = []
        for r, l, h, sp, p in zip(self._rows, lo, hi, sparse_ci, p_all):
            r = dict(r)  # the table can be framed again
            notes, test = list(r.pop("_notes")), r.pop("_test")
            defined = np.isfinite(r["estimate"])
            if defined and self.n_boot == 0:
                notes.append("no interval (n_boot=0)" + (", so not tested" if test else ""))
            elif defined and sp:
                notes.append(SPARSE_NOTE + (", so not tested" if test else ""))
            elif defined and test and not np.isfinite(p):
                notes.append(CONSTANT_NOTE)
            l, h = (float(l), float(h)) if defined else (np.nan, np.nan)
            p = float(p) if test and defined and not sp and self.n_boot > 0 else np.nan
            rows.append({**r, "ci_low": l, "ci_high": h, "test": test, "p_value": p, "q_value": np.nan,
                         "flagged": False, "opposite": False, "note": "; ".join(notes)})
        return apply_fdr(tidy(pd.DataFrame(rows, columns=cols)), alpha=self.alpha)


def tidy(out: pd.DataFrame) -> pd.DataFrame:
    """The dtypes of the contract: ``judge``, ``criterion`` and ``test`` object with None, ``n`` int64,
    ``p_value`` and ``q_value`` float, ``flagged`` and ``opposite`` bool."""
    for c in ("judge", "criterion", "test"):
        if c in out.columns:
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    for c in ("p_value", "q_value"):
        if c in out.columns:
            out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c in ("flagged", "opposite"):
        if c in out.columns:
            out[c] = out[c].astype("boolean").fillna(False).astype(bool)
    out["n"] = out["n"].astype(np.int64)
    return out
