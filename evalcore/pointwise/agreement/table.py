"""The agreement table: every measure per group and judge, with bootstrap intervals and the flag test.

:func:`agreement` counts the units (:mod:`.units`) unless it is given them, applies the unit filter
(:mod:`.filter`), groups them (:mod:`.groups`), compresses each family of units into patterns with
resampled weights (:mod:`.resampling`), computes the measures on them (:mod:`.measures`) and assembles
the rows. Every row carries ``n``, the number of distinct items behind the estimate (what the bootstrap
resamples: for the humans, the items with a unit of two or more human ratings in the group; for a
judge, the items with a unit the judge and a human rated), ``n_units`` (the units the measure uses),
``n_ratings``, a percentile bootstrap interval (``ci_low``, ``ci_high``) and a ``note`` saying why an
estimate is "not defined" when it is. The one tested measure, ``pairwise_agreement_gap``, gets a
p-value, a Benjamini-Hochberg q-value across the table and a ``flagged`` mark
(:mod:`evalcore.pointwise.agreement.measures` says what it tests).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ...arguments import takes_table
from ...columns import RATINGS
from ...data.scales import NOMINAL
from ...errors import DataError
from ...labels import NO_MAJORITY, strict_majority
from ...stats.bootstrap import (
    cell_rng, check_level, check_resamples, percentile_interval, root_seed, z_p_value,
)
from ...stats.numeric import join_notes
from ...stats.results import ALPHA, CONSTANT_NOTE, SPARSE_NOTE, apply_fdr, check_alpha
from ..sections import test_of
from .filter import filter_units
from .groups import group_codes
from .measures import human_stats, judge_stats, measures_for
from .passes import WORKERS, factorize_keys, one_blas_thread
from .resampling import Family, family, unit_keys
from .units import Units, count_units

#: The columns after the ``by`` columns. ``n`` counts the items behind an estimate (what the bootstrap
#: resamples), ``n_units`` the units (an item on one criterion) its measure averages over, ``n_ratings`` the ratings.
RESULT_COLUMNS = ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_units", "n_ratings", "test",
                  "p_value", "q_value", "flagged", "opposite", "note")

_MAJORITY = ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1")


def _why_undefined(measure: str, n_units: float, judge: bool) -> str:
    if n_units == 0:
        if judge and measure in _MAJORITY:
            return "not defined: no unit has a strict human majority"
        if measure.startswith("pairwise") or not judge:
            return "not defined: no unit has two or more human ratings"
        return "not defined: no units"
    if measure in ("kendall_tau", "spearman_rho"):
        return "not defined: the judge's scores or the human means are constant"
    if measure in ("pabak", "gwet_ac1"):
        return "not defined: the scale has a single category"
    if "kappa" in measure or "alpha" in measure:
        return "not defined: every rating is the same score, so chance agreement is 1"
    return "not defined"


def _items_per_group(rows: np.ndarray, item: np.ndarray, group: np.ndarray, n_groups: int,
                     item_count: np.ndarray | None = None) -> np.ndarray:
    """Distinct items among the units ``rows`` (ascending), per group: the contract's ``n`` (what the bootstrap
    resamples).

    Each distinct (item, group) pair counts once for its group. :func:`.units.count_units` numbers the units
    in item order, and an item's units are either all in one group (``criterion`` not among the
    ``by`` columns) or each in a group of its own (it is): so a pair can repeat only on the next
    unit, and one comparison per unit finds the distinct pairs. Units in another order are
    factorized instead. Compressed units (``item_count``) count each distinct pair as the items it stands for.
    """
    if not len(rows):
        return np.zeros(n_groups, dtype=np.int64)
    it, g = item[rows], group[rows]
    if bool(np.all(it[1:] >= it[:-1])):
        new = np.ones(len(it), dtype=bool)
        new[1:] = (it[1:] != it[:-1]) | (g[1:] != g[:-1])
        first = np.flatnonzero(new)
    else:
        _, first = factorize_keys(it.astype(np.int64) * n_groups + g)
    if item_count is None:
        return np.bincount(g[first], minlength=n_groups)
    return np.bincount(g[first], weights=item_count[it[first]], minlength=n_groups).astype(np.int64)


def _records(stats: dict[str, np.ndarray], units: dict[str, np.ndarray] | None, n_ratings: np.ndarray,
             default_units: np.ndarray, n_items: np.ndarray, present: np.ndarray, *, judge: str | None,
             level: float, no_major: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """One family's rows as columns (measure by measure, groups in order within each)."""
    gs = np.flatnonzero(present)
    names = list(stats)
    M, G, g = len(names), len(present), len(gs)
    arr = np.stack([stats[m] for m in names])  # (M, G, R): every measure at once
    lo, hi, sparse_ci = (a.reshape(M, G) for a in percentile_interval(arr.reshape(M * G, -1)[:, 1:], level))
    n_units = np.stack([units[m][:, 0] if units and m in units else default_units for m in names])[:, gs]
    est = arr[:, gs, 0]
    ok = np.isfinite(est)
    notes = np.full((M, g), "", dtype=object)
    for mi, k in zip(*np.nonzero(~ok)):
        notes[mi, k] = _why_undefined(names[mi], float(n_units[mi, k]), judge is not None)
    if arr.shape[2] > 1:
        notes[ok & sparse_ci[:, gs]] = SPARSE_NOTE
    if judge and no_major is not None:
        for k in np.flatnonzero(no_major[gs] > 0):
            for mi in (i for i, m in enumerate(names) if m in _MAJORITY):
                notes[mi, k] = (notes[mi, k] + "; " if notes[mi, k] else "") + \
                    f"{int(no_major[gs[k]])} unit(s) without a strict human majority left out"
    low, high = np.where(ok, lo[:, gs], np.nan).ravel(), np.where(ok, hi[:, gs], np.nan).ravel()
    measure = np.repeat(np.asarray(names, dtype=object), g)
    testable = ok & ~sparse_ci[:, gs] & (arr.shape[2] > 1)
    test, p = _tests(names, arr[:, gs], testable, judge)
    constant = (testable.ravel() & pd.notna(test) & np.isnan(p)).reshape(M, g)
    notes[constant] = CONSTANT_NOTE
    return {
        "group": np.tile(gs, M), "judge": np.full(M * g, judge, dtype=object), "measure": measure,
        "estimate": np.where(ok, est, np.nan).ravel(), "ci_low": low, "ci_high": high,
        "n": np.tile(n_items[gs].astype(np.int64), M), "n_units": np.round(n_units).astype(np.int64).ravel(),
        "n_ratings": np.tile(np.round(n_ratings[gs]).astype(np.int64), M), "test": test, "p_value": p,
        "q_value": np.full(M * g, np.nan), "flagged": np.zeros(M * g, dtype=bool),
        "opposite": np.zeros(M * g, dtype=bool), "note": notes.ravel(),
    }


def _tests(names: list[str], arr: np.ndarray, testable: np.ndarray, judge: str | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """The ``test`` (direction of harm, :data:`evalcore.pointwise.sections.TESTS`) and bootstrap p-value of
    each row, measure by measure (``arr``: (M, groups, 1 + resamples)); None and NaN on rows not tested
    (the humans' rows, descriptive measures, undefined estimates, no interval)."""
    M, g = arr.shape[:2]
    test = np.full((M, g), None, dtype=object)
    p = np.full((M, g), np.nan)
    for mi, name in enumerate(names):
        alt = test_of(name) if judge is not None else None
        if alt is None:
            continue
        test[mi] = alt
        if arr.shape[2] > 1:
            p[mi] = np.where(testable[mi], z_p_value(arr[mi, :, 0], arr[mi, :, 1:], alternative=alt), np.nan)
    return test.ravel(), p.ravel()


def _rngs(root: int, keys: Sequence[tuple], judge: str | None) -> list[np.random.Generator]:
    # A stable stream per cell: a cell's interval does not depend on which other cells exist.
    return [cell_rng(root, (k, judge)) for k in keys]


@takes_table(RATINGS)
def agreement(
    ratings: pd.DataFrame | Units,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    alpha: float = ALPHA,
    progress: Callable[[float], None] | None = None,
    min_raters: int | None = None,
    max_raters: int | None = None,
) -> pd.DataFrame:
    """Agreement among humans and of each judge with humans, per group, with bootstrap CIs.

    Parameters
    ----------
    ratings
        A validated ratings table, or its :func:`.units.count_units` result (reuse it across groupings).
    by
        Columns to group by: ``criterion``, ``language``, ``task`` or any per-item segment;
        empty (the default) for one overall row per measure, over the units of every criterion.
        :func:`.groups.default_by` gives the app's grouping (language and criterion).
    judges
        Judges to compare with humans (default: all).
    n_boot
        Bootstrap resamples of items per cell; 0 skips the intervals.
    seed
        Seed of the resampling (a whole number or a ``numpy.random.Generator``); the same inputs give
        the same numbers.
    level
        Confidence level of the percentile intervals.
    alpha
        False discovery rate of the flags: Benjamini-Hochberg across the table's tested rows
        (``pairwise_agreement_gap`` of every group and judge).
    progress
        Called with the fraction done, for progress bars.
    min_raters, max_raters
        Only units (an item on one criterion) with this many human ratings count, for every
        measure (:func:`.filter.filter_units`; ``3, 3``: the fully annotated units of a three-annotator
        study); None, the default, for no bound. When units are filtered (here or by passing
        :func:`.filter.filter_units`' result), every row's ``note`` says how many units of its group were
        kept and dropped; a group left without units has no rows. DataError when no unit is left.
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per group, judge (null for humans among themselves) and measure, with
        columns ``*by, judge, measure, estimate, ci_low, ci_high, n, n_units, n_ratings,
        test, p_value, q_value, flagged, opposite, note`` (:data:`RESULT_COLUMNS`): ``n`` counts
        the items behind the estimate, ``n_units`` the units (an item on one criterion) its
        measure uses; the test columns as in :mod:`evalcore.stats.results`. On a nominal criterion
        (:mod:`evalcore.data.scales`) the measures are those of its labels as categories: the ones that
        need an order are not computed (no rows), and where a group would pool a nominal criterion with
        numbers the table is grouped by ``criterion`` too; ``attrs["notes"]`` says both
        (:func:`scale_notes`).

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = agreement(ratings, by=["criterion"], n_boot=200, seed=0)
    >>> gap = table.query("measure == 'pairwise_agreement_gap' and criterion in ['LA', 'OCQ']")
    >>> print(gap[["criterion", "judge", "estimate", "ci_low", "ci_high", "flagged"]].round(2).to_string(index=False))
    criterion               judge  estimate  ci_low  ci_high  flagged
           LA gpt-4/per-criterion     -0.02   -0.07     0.04    False
           LA   gpt-4/single-call     -0.01   -0.06     0.03    False
          OCQ gpt-4/per-criterion      0.02   -0.04     0.07    False
          OCQ   gpt-4/single-call      0.02   -0.04     0.08    False

    A table whose columns have other names works by naming them:

    >>> mine = ratings.rename(columns={"item_id": "doc", "rater": "annotator", "score": "grade"})
    >>> same = agreement(mine, item="doc", rater="annotator", score="grade", by=["criterion"], n_boot=200, seed=0)
    >>> same["estimate"].equals(table["estimate"])
    True
    """
    units = ratings if isinstance(ratings, Units) else count_units(ratings)
    units = filter_units(units, min_raters=min_raters, max_raters=max_raters)
    asked = _check_by(units, list(by))
    by = scale_by(units, asked)
    n_boot, level, root, alpha = check_resamples(n_boot), check_level(level), root_seed(seed), check_alpha(alpha)
    chosen = list(units.judges) if judges is None else list(judges)
    bad = [j for j in chosen if j not in units.judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(units.judges))
    gcodes, keys = group_codes(units, by)
    tasks = []
    for part, rows, nominal in scale_parts(units):
        cells = _cells(part, gcodes if rows is None else gcodes[rows], keys, nominal=nominal, n_boot=n_boot,
                       level=level, root=root)
        tasks += [partial(_humans, cells), *(partial(_judge, cells, name) for name in chosen)]
    parts = []
    # Each family has its own random streams, so the families can run at once: the multinomial
    # draws and matrix products release the GIL, and two threads use both cores of a small machine.
    blas = one_blas_thread() if n_boot and len(tasks) > 1 else contextlib.nullcontext()
    with blas, ThreadPoolExecutor(max_workers=min(WORKERS, len(tasks))) as pool:
        for step, part in enumerate(pool.map(lambda task: task(), tasks), start=1):
            if part is not None:
                parts.append(part)
            if progress:
                progress(step / len(tasks))
    cols = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in ("group", *RESULT_COLUMNS)}
    # Rows by group, then family (humans first), then measure: a stable sort of the families in order.
    group = cols.pop("group").astype(np.int64)
    order = np.argsort(group, kind="stable")
    group = group[order]
    # Build the key columns from lists, as pandas would from records (same dtype inference).
    data = {c: pd.Series([keys[g][k] for g in group]) if len(group) else pd.Series([], dtype=object)
            for k, c in enumerate(by)}
    for c in RESULT_COLUMNS:
        data[c] = pd.Series(cols[c][order], dtype=object if c in ("judge", "test") else "str" if c in ("measure", "note")
                            else bool if c in ("flagged", "opposite") else None)
    table = apply_fdr(_filter_noted(pd.DataFrame(data, columns=[*by, *RESULT_COLUMNS]), units, by, keys, group),
                      alpha=alpha)
    table.attrs["notes"] = scale_notes(units, asked)
    return table


@dataclass(frozen=True)
class _Cells:
    """One scale's units with the table's groups: what its families (the humans, each judge) are computed from."""

    units: Units
    gcodes: np.ndarray
    keys: list[tuple]
    ukey: np.ndarray
    q_scale: np.ndarray  # per group, the categories of its scale (the q of AC1 and PABAK)
    nominal: bool  # measures that need an order are left out
    n_boot: int
    level: float
    root: int

    def family(self, rows: np.ndarray, judge_codes: np.ndarray | None, judge: str | None) -> Family:
        u, G = self.units, len(self.keys)
        return family(rows, self.ukey, u.counts, judge_codes, u.item, self.gcodes, G, u.values, n_boot=self.n_boot,
                      rngs=_rngs(self.root, self.keys, judge) if self.n_boot else [], item_count=u.item_count)

    def applicable(self, stats: dict[str, np.ndarray], *, judge: bool) -> dict[str, np.ndarray]:
        if not self.nominal:
            return stats
        keep = measures_for(NOMINAL, judge=judge)
        return {m: v for m, v in stats.items() if m in keep}


def _cells(units: Units, gcodes: np.ndarray, keys: list[tuple], *, nominal: bool, n_boot: int, level: float,
           root: int) -> _Cells:
    G = len(keys)
    ccode, cnames = units.codes["criterion"]
    crit_scale = np.array([units.scale.get(str(c), 0) for c in cnames], dtype=np.int64)[ccode]
    q_scale = np.zeros(G, dtype=np.int64)
    np.maximum.at(q_scale, gcodes, crit_scale)
    return _Cells(units, gcodes, keys, unit_keys(units.counts, gcodes, G), q_scale, nominal, n_boot, level, root)


def _humans(c: _Cells) -> dict[str, np.ndarray] | None:
    """The humans' rows of one scale's units."""
    units, G = c.units, len(c.keys)
    hm = units.has_human
    if not hm.any():
        return None
    f = c.family(np.flatnonzero(hm), None, None)
    stats = c.applicable(human_stats(f.counts, f.weights, f.values, c.q_scale), judge=False)
    n = f.counts.sum(axis=-1)
    base = f.weights[:, 0, :]
    items = _items_per_group(np.flatnonzero(units.human_ratings >= 2), units.item, c.gcodes, G, units.item_count)
    return _records(stats, None, (base * n).sum(axis=-1), (base * (n >= 2)).sum(axis=-1), items, f.present,
                    judge=None, level=c.level)


def _judge(c: _Cells, name: str) -> dict[str, np.ndarray] | None:
    """One judge's rows of one scale's units."""
    units, G = c.units, len(c.keys)
    jc = units.judge_codes[units.judges.index(name)]
    m = units.has_human & (jc >= 0)
    if not m.any():
        return None
    rows = np.flatnonzero(m)
    f = c.family(rows, jc, name)
    stats, ucount = judge_stats(f.counts, f.weights, f.judge, f.values, c.q_scale)
    stats = c.applicable(stats, judge=True)
    n = f.counts.sum(axis=-1)
    base = f.weights[:, 0, :]
    no_major = (base * (strict_majority(f.counts) == NO_MAJORITY)).sum(axis=-1)
    return _records(stats, ucount, (base * (n + 1)).sum(axis=-1), np.zeros(G),
                    _items_per_group(rows, units.item, c.gcodes, G, units.item_count), f.present, judge=name,
                    level=c.level, no_major=no_major)


def scale_parts(units: Units) -> list[tuple[Units, np.ndarray | None, bool]]:
    """The units split by scale: ``(units, rows, nominal)`` for the nominal criteria and for the others.

    Each part has its own categories, so a measure never mixes nominal labels with numbers: the numbers'
    part is exactly the units of a table without nominal criteria (the same categories, so the same
    estimates and resamples), and the nominal part takes positions ``0..k-1`` as its values, read by no
    measure it computes. ``rows`` (None: every unit) are the part's units in ``units``.

    Examples
    --------
    >>> frame = pd.DataFrame({"item_id": [1, 1, 1, 1], "rater": ["a", "b", "a", "b"], "rater_kind": "human",
    ...                       "criterion": ["stance", "stance", "fluency", "fluency"],
    ...                       "scale": ["nominal", "nominal", "ordinal", "ordinal"],
    ...                       "score": [None, None, 4, 5], "category": ["pro", "con", None, None]})
    >>> [(part.category_labels, nominal) for part, rows, nominal in scale_parts(count_units(frame))]
    [(('con', 'pro'), True), (('4', '5'), False)]
    """
    if not units.nominal:
        return [(units, None, False)]
    ccode, cnames = units.codes["criterion"]
    nominal_crit = np.array([units.scale_of(str(c)) == NOMINAL for c in cnames], dtype=bool)[ccode]
    is_label = np.isnan(units.values)
    out = []
    for nominal in (True, False):
        rows = np.flatnonzero(nominal_crit == nominal)
        if not len(rows):
            continue
        cats = np.flatnonzero(is_label == nominal)
        values = np.arange(len(cats), dtype=float) if nominal else None
        out.append((units.take(rows, categories=cats, values=values), rows, nominal))
    return out


def scale_by(units: Units, by: Sequence[str]) -> list[str]:
    """``by``, with ``criterion`` added where a group would pool a nominal criterion with numbers.

    Nominal labels and numbers are never pooled in one measure: grouped by criterion, each group
    holds one scale (:func:`scale_notes` says so).
    """
    by = list(by)
    if "criterion" in by or not units.nominal:
        return by
    crits = [str(c) for c in units.codes["criterion"][1]]
    kinds = {units.scale_of(c) == NOMINAL for c in crits}
    return [*by, "criterion"] if len(kinds) > 1 else by


def scale_notes(units: Units, by: Sequence[str] = ()) -> list[str]:
    """What the criteria's scales change in an agreement table of ``units`` grouped by ``by``, in sentences:
    the nominal criteria and the measures not computed on them, and ``criterion`` added to the grouping.
    Empty for numbers only. The table keeps them in ``attrs["notes"]``; the page and the CLI say them once.

    >>> frame = pd.DataFrame({"item_id": [1, 1], "rater": ["a", "b"], "rater_kind": "human", "criterion": "stance",
    ...                       "scale": "nominal", "score": None, "category": ["pro", "con"]})
    >>> scale_notes(count_units(frame))[0][:82]
    'stance is nominal (categories without an order): the measures that need an order ('
    """
    crits = [str(c) for c in units.codes["criterion"][1]]
    nominal = [c for c in crits if units.scale_of(c) == NOMINAL]
    if not nominal:
        return []
    one = len(nominal) == 1
    names = nominal[0] if one else ", ".join(nominal[:-1]) + " and " + nominal[-1]
    notes = [f"{names} {'is' if one else 'are'} nominal (categories without an order): the measures that need an "
             "order (Cohen's kappa with quadratic weights, Krippendorff's ordinal and interval alpha, Kendall's tau, "
             f"Spearman's rho) are not computed on {'it' if one else 'them'}."]
    if scale_by(units, by) != list(by):
        notes.append("Grouped by criterion too: nominal labels and numbers are never pooled in one measure.")
    return notes


def _check_by(units: Units, by: list[str]) -> list[str]:
    """``by``, or a DataError when a column is not a segment or the units cannot be grouped by it."""
    units.check_by(by)
    if units.per_criterion and "criterion" not in by and len(units.codes["criterion"][1]) > 1:
        # Compressed per criterion, an "item" stands for the items sharing one unit's statistics.
        raise DataError("these units were compressed per criterion, so they give tables grouped by criterion only",
                        fix="add 'criterion' to the grouping, or compress the units per item")
    return by


def _filter_noted(table: pd.DataFrame, units: Units, by: list[str], keys: list[tuple], group: np.ndarray
                  ) -> pd.DataFrame:
    """The table with each row's note saying how many units of its group the unit filter kept and dropped."""
    if units.unit_filter is None or not len(table):
        return table
    notes = np.asarray(units.unit_filter.notes(by, keys), dtype=object)[group]
    table["note"] = pd.Series([join_notes(a, b) for a, b in zip(table["note"], notes)], dtype="str")
    return table
