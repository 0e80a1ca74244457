"""Ratings reduced to per-unit counts: :func:`count_units` and the :class:`Units` it returns.

Every agreement measure depends on the data only through, per *unit* (one item on one criterion),
the vector of human counts per score category and each judge's category. :func:`count_units` takes
one pass over the ratings: a dense unit index ``item * n_criteria + criterion``, so nothing is
sorted, and integer codes of the string columns (:mod:`evalcore.data.hashing`, which on large tables
hashes only the rows that differ from an earlier one). The counting is one compiled pass on large
tables and numpy on small ones (:mod:`evalcore.pointwise.agreement.passes`); the tests check both
against pandas in eight file layouts. A SQL GROUP BY gives the same counts:
:mod:`evalcore.engines.agreement` computes them in an engine (DuckDB, Spark...) for data larger than
memory, as compressed :class:`Units` whose rows stand for ``item_count`` items each.
"""

from __future__ import annotations

import dataclasses
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np
import pandas as pd

from ...arguments import takes_table
from ...columns import HUMAN, JUDGE, RATINGS, segment_columns
from ...data.hashing import (
    arrow_array, best_lag, column_codes, diff_bits, distinct, encode_heads, encode_rows, expand_lagged, first_bit,
    is_arrow_string, known_codes, take,
)
from ...data.scales import CATEGORY, DEFAULT_SCALE, NOMINAL, SCALE, category_of, format_number, scale_by_criterion
from ...errors import DataError, varying_within_item
from .passes import WORKERS, compiled, kernel, passes


@dataclass(frozen=True)
class Units:
    """Ratings reduced to per-unit sufficient statistics (one unit = one item on one criterion).

    Built once per dataset by :func:`count_units`; every grouping is computed from it.

    Attributes
    ----------
    values
        The number of each category (sorted distinct score values); categories are indices into it. A
        table with nominal criteria (a ``scale`` column, :mod:`evalcore.data.scales`) puts their categories
        after the numbers, in :attr:`labels` order, with a NaN value: a nominal label is not a number.
    counts
        ``(n_units, q)`` human ratings per category.
    judge_codes
        ``(n_judges, n_units)`` the judge's category, -1 where it did not rate the unit.
    judges
        Judge names, in the order of ``judge_codes``.
    item
        Item index of each unit (items are resampled as a whole).
    scale
        Per criterion, the number of categories of its scale (distinct human scores).
    codes
        Per segment column (``criterion`` first): each unit's code and the distinct values the
        codes index (missing values as NaN), so that grouping needs no hashing of strings.
    sources
        Per segment column: an empty column of the original dtype and the distinct values as
        encoded, from which :attr:`segments` is built.
    segments
        One row per unit: ``criterion`` and every segment column, with the ratings' dtypes.
        Built on first use: the agreement table itself needs only :attr:`codes`.
    unit_filter
        Set by :func:`evalcore.pointwise.agreement.filter.filter_units` on the units it returns: the filter,
        and the units it kept and dropped (:class:`evalcore.pointwise.agreement.filter.UnitFilter`); None on the
        units of :func:`count_units`.
    item_count
        Compressed units (:mod:`evalcore.engines.agreement`): how many items each item index stands
        for, so that a row of ``counts`` is that many units with the same statistics. None (the
        units of :func:`count_units`): one item each. Every count (``n``, ``n_units``,
        ``n_ratings``, the unit filter's) and the bootstrap's multinomial weigh the items by it, so
        the compressed units give the table of the uncompressed ones.
    per_criterion
        True when the items were compressed per group and criterion, not as a whole (an "item"
        then stands for items that share one unit's statistics): valid only for tables grouped by
        ``criterion``, where every group holds one unit per item.
    varying
        ``(column, item)`` for each candidate segment left out because it changes within an item
        (the first such item): a grouping by it is refused with that item named
        (:meth:`check_by`).
    labels
        The text of each category, where the table has nominal criteria: the numbers as
        :func:`evalcore.data.scales.format_number` writes them, then the nominal labels exactly as written
        (numbers in numeric order, then text in code-point order). Empty for numbers only
        (:attr:`category_labels` gives them either way).
    scales
        The scale of each criterion (``nominal``, ``ordinal``, ``interval``) from the ``scale`` column;
        empty without one, every criterion ordinal (:meth:`scale_of`).
    criterion_labels
        Per criterion whose numbers stand for labels (text declared ordinal with an order: ``score`` is
        the position, ``category`` the label), the label of each of its categories.
    """

    values: np.ndarray
    counts: np.ndarray
    judge_codes: np.ndarray
    judges: tuple[str, ...]
    item: np.ndarray
    scale: dict[str, int]
    codes: dict[str, tuple[np.ndarray, tuple]]
    sources: dict[str, tuple[pd.Series, object]]
    unit_filter: object | None = None  # a filter.UnitFilter (filter.py imports this module, not the reverse)
    item_count: np.ndarray | None = None
    per_criterion: bool = False
    varying: tuple[tuple[str, str], ...] = ()
    labels: tuple[str, ...] = ()
    scales: dict[str, str] = field(default_factory=dict)
    criterion_labels: dict[str, dict[int, str]] = field(default_factory=dict)

    def scale_of(self, criterion: str) -> str:
        """The scale of ``criterion``: declared in the ``scale`` column, else ordinal."""
        return self.scales.get(str(criterion), DEFAULT_SCALE)

    @property
    def nominal(self) -> tuple[str, ...]:
        """The nominal criteria, in the order of :attr:`scales`."""
        return tuple(c for c, s in self.scales.items() if s == NOMINAL)

    @cached_property
    def category_labels(self) -> tuple[str, ...]:
        """The text of every category: :attr:`labels`, or the numbers written as labels."""
        return self.labels or tuple(format_number(v) for v in self.values)

    def label(self, criterion: str | None, code: int) -> str:
        """The text of category ``code`` on ``criterion`` (None: pooled criteria, the category's own text)."""
        own = self.criterion_labels.get(str(criterion)) if criterion is not None else None
        return own.get(int(code), self.category_labels[code]) if own else self.category_labels[code]

    def take(self, rows: np.ndarray, *, categories: np.ndarray | None = None, values: np.ndarray | None = None,
             unit_filter: object | None = None) -> "Units":
        """The units ``rows`` only (and, with ``categories``, only those columns of :attr:`counts`, renumbered,
        with ``values`` as their numbers): what the unit filter keeps, or one scale's part of a table."""
        out = dataclasses.replace(
            self, counts=self.counts[rows], judge_codes=self.judge_codes[:, rows], item=self.item[rows],
            codes={c: (code[rows], vals) for c, (code, vals) in self.codes.items()}, unit_filter=unit_filter)
        if categories is None:
            return out
        new = np.full(len(self.values) + 1, -1, dtype=np.int64)  # the last slot keeps -1 (not rated) as -1
        new[categories] = np.arange(len(categories))
        labels = tuple(self.category_labels[k] for k in categories)
        named = {c: {int(new[k]): t for k, t in m.items() if new[k] >= 0} for c, m in self.criterion_labels.items()}
        return dataclasses.replace(out, counts=out.counts[:, categories], judge_codes=new[out.judge_codes],
                                   values=self.values[categories] if values is None else values, labels=labels,
                                   criterion_labels=named)

    @property
    def columns(self) -> list[str]:
        """The segment columns, ``criterion`` first."""
        return list(self.codes)

    def check_by(self, by: Sequence[str]) -> None:
        """A DataError for the first column of ``by`` these units cannot be grouped by: one that changes
        within an item (naming the item), or one that is not a segment column."""
        varying = dict(self.varying)
        for c in by:
            if c in varying:
                raise varying_within_item(c, varying[c])
            if c not in self.codes:
                raise DataError(f"cannot group by '{c}': it is not a segment column of this table",
                                column=c, fix="group by one of: " + ", ".join(self.columns))

    @cached_property
    def has_human(self) -> np.ndarray:
        """Units with at least one human rating."""
        return self.counts @ np.ones(self.counts.shape[1], dtype=np.int64) >= 1  # faster than sum(axis=1)

    @cached_property
    def human_ratings(self) -> np.ndarray:
        """Human ratings per unit."""
        return self.counts @ np.ones(self.counts.shape[1], dtype=np.int64)

    @cached_property
    def weight(self) -> np.ndarray:
        """Units each row stands for: 1 each, or the item count of compressed units (:attr:`item_count`)."""
        if self.item_count is None:
            return np.ones(len(self.item), dtype=np.int64)
        return self.item_count[self.item]

    @cached_property
    def segments(self) -> pd.DataFrame:
        return pd.DataFrame({c: take(template, uniques, self.codes[c][0])
                             for c, (template, uniques) in self.sources.items()})


def _codes(s: pd.Series, arr=None) -> tuple[np.ndarray, object]:
    """:func:`evalcore.data.hashing.column_codes` of a column, looking for repeated rows only where the
    compiled passes are used (:func:`evalcore.pointwise.agreement.passes.compiled`): only there does it pay."""
    fast = compiled(len(s))
    return column_codes(s, arr, lag=None if fast else 0, compiled=fast)


@dataclass(frozen=True)
class _Items:
    """Item codes of the rows, each item's first row, and, for a file sorted by item, its runs."""

    code: np.ndarray
    first_row: np.ndarray
    bits: np.ndarray | None = None  # bit j: row j+1 starts another item
    starts: np.ndarray | None = None  # first row of each run of one item
    first_run: np.ndarray | None = None  # each item's first run
    run_item: np.ndarray | None = None  # the item of each run


def _items(df: pd.DataFrame, arr, sorted_by_item: bool, known=None) -> _Items:
    if not sorted_by_item:
        code, _ = known or column_codes(df["item_id"], arr)
        return _Items(code, passes(len(code)).first_rows(code, int(code.max()) + 1 if len(code) else 0))
    # Sorted by item is decided only where the compiled passes run (count_units), so they do here too.
    bits = diff_bits(arr, 1)
    starts, run_item, uniques = encode_heads(arr, bits, 1, compiled=True)
    code = expand_lagged(bits, run_item, len(arr), 1, compiled=True)
    first_run = kernel().first_rows(run_item, len(uniques))  # an item's first row starts a run
    return _Items(code, starts[first_run], bits, starts, first_run, run_item)


def _segment(df: pd.DataFrame, s: str, items: _Items, bits: np.ndarray | None,
             known=None) -> tuple[np.ndarray | None, object, int]:
    """A per-item segment's code per *item*, its distinct values, and the first row where it is not
    constant within its item (-1: constant; the codes are then None).

    For a file sorted by item (``bits``: where the segment changes), the segment may change only
    where the item does, and it is hashed once per run of an item, not once per row. Otherwise it
    is encoded row by row and checked against its item's first row.
    """
    if bits is not None and items.bits is not None:
        bad = first_bit(bits & ~items.bits, len(items.code) - 1)
        bad = bad + 1 if bad >= 0 else -1
        per_item, uniques = None, None
        if bad < 0:
            run_codes, uniques = encode_rows(arrow_array(df[s]), items.starts)
            # An item in several places of the file: its runs must agree too.
            wrong = np.flatnonzero(run_codes != run_codes[items.first_run[items.run_item]])
            bad = int(items.starts[wrong[0]]) if len(wrong) else -1
            per_item = run_codes[items.first_run]
    else:
        rcode, uniques = known or _codes(df[s])
        bad = passes(len(rcode)).first_mismatch(items.code, items.first_row, rcode)
        per_item = rcode[items.first_row]
    return (per_item, uniques, -1) if bad < 0 else (None, None, int(bad))


def _scale(score: pd.Series) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Scores, and how to map them to categories (indices into the sorted distinct values).

    Returns ``(x, lo, table, values)`` with a rating's category ``table[x - lo]``. Integer scales
    (the usual case) keep the scores as they are, with no hashing or sorting; others are
    factorized and ``x`` is the category itself.
    """
    if pd.api.types.is_integer_dtype(score) and not score.hasnans:
        x = score.to_numpy(dtype=np.int64)
        lo, table = passes(len(x)).integer_scale(x, 10_000)
        if len(table):
            return x, int(lo), table, (np.flatnonzero(table >= 0) + lo).astype(float)
    x = score.to_numpy(dtype=float)
    if np.all(x == np.round(x)) and len(x) and x.max() - x.min() < 10_000:
        return _scale(pd.Series(x.astype(np.int64)))
    scode, svals = pd.factorize(x)
    order = np.argsort(svals)
    rank = np.empty(len(svals), dtype=np.int64)
    rank[order] = np.arange(len(svals))
    return rank[scode], 0, np.arange(len(svals), dtype=np.int64), np.asarray(svals, dtype=float)[order]


def _nominal_rows(df: pd.DataFrame) -> np.ndarray | None:
    """The rows of nominal criteria (a boolean mask), or None when no criterion is nominal: numbers only,
    counted exactly as before the scale column existed."""
    if SCALE not in df.columns:
        return None
    mask = (df[SCALE] == NOMINAL).to_numpy(dtype=bool, na_value=False)
    return mask if mask.any() else None


def label_key(label: str) -> tuple:
    """Nominal labels in order: numbers (declared nominal) by value, then text by code point."""
    try:
        value = float(label)
    except ValueError:
        return (1, 0.0, label)
    return (0, value, label) if math.isfinite(value) else (1, 0.0, label)


def _score_codes(df: pd.DataFrame, nominal: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray, np.ndarray,
                                                                          tuple[str, ...]]:
    """:func:`_scale` of the scores, and the categories' text (empty for numbers only).

    With nominal criteria, one category space serves the whole table: the numbers of the other
    criteria first (sorted), then the nominal labels (:func:`evalcore.data.scales.category_of`, exactly as
    written: ``Yes`` and ``yes`` are two categories), each with a NaN value.
    """
    if nominal is None:
        return (*_scale(df["score"]), ())
    x = np.zeros(len(df), dtype=np.int64)
    numbers = np.zeros(0)
    if not nominal.all():
        xs, lo, table, numbers = _scale(df["score"][~nominal])
        x[~nominal] = table[xs - lo]
    code, uniques = pd.factorize(category_of(df[nominal]).to_numpy(dtype=object))
    names = [str(u) for u in uniques]
    order = sorted(range(len(names)), key=lambda i: label_key(names[i]))
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    x[nominal] = len(numbers) + rank[code]
    values = np.concatenate([numbers, np.full(len(names), np.nan)])
    labels = tuple(format_number(v) for v in numbers) + tuple(names[i] for i in order)
    return x, 0, np.arange(len(values), dtype=np.int64), values, labels


def _criterion_labels(df: pd.DataFrame, nominal: np.ndarray | None, crit_code: np.ndarray, crit_names,
                      category: np.ndarray) -> dict[str, dict[int, str]]:
    """The labels of criteria whose scores are positions in an order of text labels (``category`` set on
    rows that are not nominal): criterion -> category -> label, the label first written for it."""
    text = df[CATEGORY].to_numpy(dtype=object)
    has = pd.notna(text) & (True if nominal is None else ~nominal)
    if not has.any():
        return {}
    pairs = pd.DataFrame({"c": crit_code[has], "k": category[has], "t": text[has]}).drop_duplicates(["c", "k"])
    out: dict[str, dict[int, str]] = {}
    for c, k, t in pairs.itertuples(index=False):
        out.setdefault(str(crit_names[c]), {})[int(k)] = str(t)
    return out


@takes_table(RATINGS)
def count_units(ratings: pd.DataFrame, *, segments: Sequence[str] | None = None) -> Units:
    """Reduce a validated ratings table to per-unit category counts.

    One pass of hashing (pyarrow or pandas) and counting over the ratings, with a dense unit
    index ``item * n_criteria + criterion`` so that nothing is sorted; the string columns are
    encoded in two threads (pyarrow's kernels release the GIL). Where a rater judged a unit
    several times (``sample``), the first sample is used: the other samples are the subject of
    self-consistency, not of agreement.

    A table with nominal criteria (a ``scale`` column, :mod:`evalcore.data.scales`) counts their labels as
    categories (:func:`evalcore.data.scales.category_of`, exactly as written) after the other criteria's
    numbers (:attr:`Units.labels`); a table of numbers only is counted exactly as without the column.

    Parameters
    ----------
    ratings
        A validated ratings table.
    segments
        The per-item columns to keep for grouping; a DataError when one of them changes within an
        item. None (the default): every candidate column (:func:`evalcore.columns.segment_columns`);
        one that changes within an item (a per-row timing, annotation round or comment) is then not
        a segment: it is left out and recorded in :attr:`Units.varying`, so that only grouping by it
        fails, with the item named.
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    Units
        The per-unit counts every agreement measure reads: pass them to
        :func:`evalcore.pointwise.agreement.table.agreement` (and
        :func:`evalcore.pointwise.distributions.class_distribution`) instead of the table, to count once
        for several groupings.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> units = count_units(ratings)
    >>> units.judges, units.counts.shape
    (('gpt-4/per-criterion', 'gpt-4/single-call'), (600, 3))
    """
    need = {"item_id", "rater", "rater_kind", "criterion", "score"}
    missing = need - set(ratings.columns)
    if missing:
        raise DataError(f"the ratings table lacks {', '.join(sorted(missing))}",
                        fix="load a validated ratings table")
    df = ratings
    if "sample" in df.columns and df["sample"].nunique() > 1:
        first = df.groupby(["item_id", "criterion", "rater"], sort=False)["sample"].transform("min")
        df = df[df["sample"] == first]
    nominal = _nominal_rows(df)
    if nominal is not None and not nominal.all():
        # A row without a rating (no category, no score) counts for nothing.
        rated = (nominal & category_of(df).notna().to_numpy()) | (~nominal & df["score"].notna().to_numpy())
        df, nominal = (df[rated], nominal[rated]) if not rated.all() else (df, nominal)
    strict = segments is not None
    segs = list(segments) if strict else segment_columns(df)
    segs = [s for s in segs if s != "criterion"]
    # Hashing the string columns is most of the cost, and pyarrow's kernels release the GIL:
    # two threads use both cores of a small machine.
    # Three streams of work on two workers and this thread: the items (then the segments, which
    # depend on them), the criteria and the per-segment comparisons, and the raters and scores.
    item_arr = arrow_array(df["item_id"])
    sorted_by_item = item_arr is not None and compiled(len(item_arr)) and best_lag(item_arr) == 1
    # Columns validation factorised in the same block (the CLI's one-shot run) are not hashed again.
    known = {c: known_codes(df[c]) for c in ("item_id", "criterion", "rater", *segs)}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        items_f = pool.submit(_items, df, item_arr, sorted_by_item, known["item_id"])
        seg_bits = {s: pool.submit(diff_bits, arrow_array(df[s]), 1) for s in segs
                    if sorted_by_item and is_arrow_string(df[s])}
        crits = pool.submit(lambda: known["criterion"] or _codes(df["criterion"]))
        # Queued behind the items and the comparisons it waits for, so it cannot block them.
        segs_f = pool.submit(lambda: {s: _segment(df, s, items_f.result(), seg_bits[s].result() if s in seg_bits
                                                  else None, known[s]) for s in segs})
        rater_code, rater_uniques = known["rater"] or _codes(df["rater"])
        score, lo, table, values, labels = _score_codes(df, nominal)
        crit_code, crit_uniques = crits.result()
        items = items_f.result()
        seg_codes = segs_f.result()
    item_code = items.code
    crit_names = distinct(crit_uniques)
    n_items, n_crit, q = int(item_code.max()) + 1, len(crit_names), len(values)
    # Each rater has one kind (validated), so kinds come from one row per rater.
    raters = distinct(rater_uniques)
    first_of_rater = passes(len(rater_code)).first_rows(rater_code, len(raters))
    kinds = df["rater_kind"].array
    kind_of_rater = np.asarray([kinds[int(r)] for r in first_of_rater] if len(first_of_rater) <= 64
                               else df["rater_kind"].to_numpy()[first_of_rater], dtype=object)
    judge_order = sorted(np.flatnonzero(kind_of_rater == JUDGE), key=lambda r: str(raters[r]))
    jnames = [str(raters[r]) for r in judge_order]
    slot = np.where(kind_of_rater == HUMAN, -1, -2).astype(np.int64)
    slot[judge_order] = np.arange(len(judge_order))
    unit_ids, counts, judge_codes, used = passes(len(item_code)).unit_counts(
        item_code, crit_code, rater_code, score, lo, table, slot, n_items, n_crit, q, len(jnames))
    unit_item = unit_ids // n_crit
    crit_of_unit = unit_ids % n_crit
    sources = {"criterion": (df["criterion"].iloc[:0], crit_uniques)}
    unit_codes = {"criterion": (crit_of_unit, crit_names)}
    varying = []
    for s in segs:
        per_item, suniques, bad = seg_codes[s]
        if bad >= 0:
            item = df["item_id"].iloc[bad]
            if strict:
                raise varying_within_item(s, item)
            varying.append((s, str(item)))  # a per-row column: it stops only a grouping by it
            continue
        sources[s] = (df[s].iloc[:0], suniques)
        unit_codes[s] = (per_item[unit_item], distinct(suniques))
    scale = {str(name): int(used[ci].sum()) for ci, name in enumerate(crit_names)}
    scales = scale_by_criterion(df) if SCALE in df.columns else {}
    named = _criterion_labels(df, nominal, crit_code, crit_names, table[score - lo]) if CATEGORY in df.columns else {}
    return Units(values=values, counts=counts, judge_codes=judge_codes, judges=tuple(map(str, jnames)),
                 item=unit_item, scale=scale, codes=unit_codes, sources=sources, varying=tuple(varying),
                 labels=labels, scales=scales, criterion_labels=named)


def fractional_judges(units: Units) -> list[str]:
    """Judges that give non-integer scores while every human score is an integer.

    Such scores (e.g. averages over samples, as in HANNA) almost never equal the human
    majority, so exact-match measures (PA, kappa, F1) are low by construction; rank and
    interval measures (tau, rho, alpha interval) remain meaningful.
    """
    human_cats = (units.counts.sum(axis=0) > 0) & np.isfinite(units.values)  # nominal labels are not numbers
    if not np.all(units.values[human_cats] == np.round(units.values[human_cats])):
        return []
    frac = np.isfinite(units.values) & (units.values != np.round(units.values))
    return [name for name, codes in zip(units.judges, units.judge_codes) if frac[codes[codes >= 0]].any()]
