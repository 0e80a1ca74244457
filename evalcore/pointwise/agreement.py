"""Agreement between human annotators, and between a judge and the humans, with bootstrap intervals.

Methods (Hada et al. 2024 for PA, Fleiss' kappa and class distributions; Gwet 2008 for AC1;
Byrt, Bishop & Carlin 1993 for PABAK; Krippendorff 2011 for alpha; Stureborg et al. 2024 for
Kendall's tau against the human mean).

How it is computed, and why it is fast
--------------------------------------
Every measure here depends on the data only through, per *unit* (one item on one criterion),
the vector of human counts per score category ``c`` (and, for a judge, its category ``j``).
Units with the same ``(c, j)`` are compressed into one *pattern* with a weight, so a
measure costs O(patterns), not O(ratings). The bootstrap resamples *items* with
replacement (an item scored on several criteria moves as a whole); items that contribute
the same patterns are again compressed into *item types*, and a resample is a multinomial
draw of item-type counts. This is exactly the item bootstrap, at a cost independent of
the number of ratings (the sufficient-statistics idea of DESIGN.md).

The per-unit counts (:func:`count_units`) take one pass over the ratings. Strings are hashed by
pyarrow, and on large tables (:data:`COMPILED_FROM` rows on) only the rows that differ from an
earlier one are hashed: a file sorted by item repeats ``item_id`` from row to row, and with the
raters in the same order in every unit, ``rater`` repeats one unit back, so most rows cost a
comparison, not a hash. The counting is one compiled pass (numba, :mod:`evalcore.pointwise._agreekernel`)
on large tables and numpy on small ones, where loading numba would cost more than it saves;
the tests check both against pandas in eight file layouts. A SQL GROUP BY gives the same counts:
:mod:`evalcore.engines.agreement` computes them in an engine (DuckDB, Spark...) for data larger than
memory, as compressed :class:`Units` whose rows stand for ``item_count`` items each, and this module
computes the table from them with the same code.

Measures (``measure`` names are a stable contract; docs/cli.md lists them)
-------------------------------------------------------------------
Among humans (``judge`` is null), over units with at least two human ratings:

- ``percent_agreement``: :math:`\\bar P = \\operatorname{mean}_i P_i`,
  :math:`P_i = \\sum_k n_{ik}(n_{ik}-1) / (n_i(n_i-1))`, the share of agreeing annotator pairs
  (Fleiss 1971).
- ``full_agreement``: share of units where all annotators gave the same score.
- ``fleiss_kappa``: :math:`(\\bar P - P_e)/(1-P_e)`, :math:`P_e=\\sum_k \\pi_k^2`,
  :math:`\\pi_k = \\operatorname{mean}_i n_{ik}/n_i` over all units with a rating. With the same
  number of raters on every unit this is Fleiss (1971) exactly; with 1-3 raters it is the
  generalisation in Gwet (2014, Handbook of Inter-Rater Reliability, §2.5), as in irrCAC.
- ``gwet_ac1``: :math:`(\\bar P - P_e)/(1-P_e)` with :math:`P_e = \\sum_k \\pi_k(1-\\pi_k)/(q-1)`
  (Gwet 2008), q the number of categories of the scale.
- ``pabak``: :math:`(q \\bar P - 1)/(q-1)`, prevalence- and bias-adjusted kappa for q
  categories (Byrt et al. 1993).
- ``krippendorff_alpha_{nominal,ordinal,interval}``: :math:`1 - D_o/D_e` from the coincidence
  matrix (Krippendorff 2011), over pairable values.

Judge against humans (``judge`` names the judge), over units with the judge and a human:

- ``percent_agreement``, ``cohen_kappa``, ``cohen_kappa_quadratic``, ``weighted_f1``: the judge
  against the human *strict majority* (a score given by more than half of the unit's
  annotators); units without one are left out and counted in ``note``. Quadratic weights use
  the score values, :math:`w_{ab} = 1-(v_a-v_b)^2/(v_{max}-v_{min})^2`.
- ``kendall_tau`` (tau-b) and ``spearman_rho``: the judge's score against the mean human score.
- ``fleiss_kappa`` and ``krippendorff_alpha_*`` with the judge added as one more rater, and
  ``*_change``: that value minus the humans' own on the same units.
- ``pairwise_agreement``: mean share of the unit's annotators who gave the judge's score;
  ``pairwise_agreement_gap``: that minus the humans' ``percent_agreement`` on the same units.
  The one tested measure (harm direction ``"less"``, :data:`evalcore.pointwise.sections.TESTS`):
  its bootstrap p-value (:func:`evalcore.stats.z_p_value`) tests "the judge agrees with humans
  less than humans agree with each other"; the Benjamini-Hochberg q-values run across the gap rows
  of the whole table (every group and judge), and a row is ``flagged`` when q <= ``alpha``
  (:func:`evalcore.stats.apply_fdr`). A gap significantly above 0 is marked ``opposite``, never
  flagged.

Fully annotated units
---------------------
``min_raters`` / ``max_raters`` (:func:`filter_units`) keep only the units with that many human
ratings, for every measure above: ``min_raters=3, max_raters=3`` gives the units that papers report
Krippendorff's alpha on when three annotators rated each. The filtered :class:`Units` carry a
:class:`UnitFilter` with the units kept and dropped (in total and per group), and the rows' ``note``
repeats them for the row's group.

Every row carries ``n``, the number of distinct items behind the estimate (what the bootstrap
resamples: for the humans, the items with a unit of two or more human ratings in the group; for a
judge, the items with a unit the judge and a human rated), ``n_units`` (the units the measure
uses), ``n_ratings``, a percentile bootstrap interval (``ci_low``, ``ci_high``) and a ``note``
saying why an estimate is "not defined" when it is.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..columns import HUMAN, JUDGE, segment_columns
from ..labels import NO_MAJORITY, strict_majority
from ..errors import DataError, varying_within_item
from ..stats import (
    ALPHA, CONSTANT_NOTE, SPARSE_NOTE, apply_fdr, cell_rng, check_alpha, check_level, check_resamples, join_notes,
    percentile_interval, resample_counts, root_seed, safe_div, z_p_value,
)
from .sections import test_of

HUMAN_MEASURES = (
    "percent_agreement", "full_agreement", "fleiss_kappa", "gwet_ac1", "pabak",
    "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
)
JUDGE_MEASURES = (
    "percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1", "kendall_tau",
    "spearman_rho", "fleiss_kappa", "fleiss_kappa_change", "krippendorff_alpha_nominal",
    "krippendorff_alpha_nominal_change", "krippendorff_alpha_ordinal", "krippendorff_alpha_ordinal_change",
    "krippendorff_alpha_interval", "krippendorff_alpha_interval_change", "pairwise_agreement",
    "pairwise_agreement_gap",
)
#: The columns after the ``by`` columns. ``n`` counts the items behind an estimate (what the bootstrap
#: resamples), ``n_units`` the units (an item on one criterion) its measure averages over, ``n_ratings`` the ratings.
RESULT_COLUMNS = ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_units", "n_ratings", "test",
                  "p_value", "q_value", "flagged", "opposite", "note")
_METRICS = ("nominal", "ordinal", "interval")


# --------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class Units:
    """Ratings reduced to per-unit sufficient statistics (one unit = one item on one criterion).

    Built once per dataset by :func:`count_units`; every grouping is computed from it.

    Attributes
    ----------
    values
        Sorted distinct score values; categories are indices into it.
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
        Set by :func:`filter_units` on the units it returns: the filter, and the units it kept
        and dropped (:class:`UnitFilter`); None on the units of :func:`count_units`.
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
    """

    values: np.ndarray
    counts: np.ndarray
    judge_codes: np.ndarray
    judges: tuple[str, ...]
    item: np.ndarray
    scale: dict[str, int]
    codes: dict[str, tuple[np.ndarray, tuple]]
    sources: dict[str, tuple[pd.Series, object]]
    unit_filter: UnitFilter | None = None
    item_count: np.ndarray | None = None
    per_criterion: bool = False
    varying: tuple[tuple[str, str], ...] = ()

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
        return pd.DataFrame({c: _take(template, uniques, self.codes[c][0])
                             for c, (template, uniques) in self.sources.items()})


def _is_arrow_string(s: pd.Series) -> bool:
    return isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"


def _arrow(s: pd.Series):
    """The column as a pyarrow ChunkedArray, or None when it is not Arrow-backed text."""
    if not _is_arrow_string(s):
        return None
    import pyarrow as pa

    arr = pa.array(s.array)  # read_csv gives several chunks; kept as they are (no copy)
    return arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])


def _diff_bits(arr, lag: int) -> np.ndarray:
    """Bitmap (Arrow's layout) whose bit ``j`` says row ``j + lag`` differs from row ``j``; missing equals missing."""
    import pyarrow.compute as pc

    m = max(len(arr) - lag, 0)
    neq = pc.not_equal(arr.slice(lag), arr.slice(0, m)).combine_chunks()  # booleans: a cheap copy
    if neq.null_count == 0 and neq.offset == 0:
        return np.frombuffer(neq.buffers()[1], dtype=np.uint8)[: (m + 7) // 8]
    valid = np.asarray(arr.is_valid())
    return np.packbits(np.asarray(neq.fill_null(False)) | (valid[lag:] != valid[:m]), bitorder="little")


def _take_sorted(arr, idx: np.ndarray):
    """``arr.take(idx)`` for sorted ``idx``, chunk by chunk: about twice as fast as a take on the chunked array."""
    import pyarrow as pa

    bounds = np.cumsum([0] + [len(c) for c in arr.chunks])
    cut = np.searchsorted(idx, bounds)
    parts = [c.take(pa.array(idx[cut[k]:cut[k + 1]] - bounds[k])) for k, c in enumerate(arr.chunks)
             if cut[k + 1] > cut[k]]
    return pa.concat_arrays(parts) if parts else pa.array([], type=arr.type)


def _first_bit(bits: np.ndarray, m: int) -> int:
    """Index of the first set bit among the first ``m`` of a bitmap, or -1."""
    nz = np.flatnonzero(bits[: (m + 7) // 8])
    if not len(nz):
        return -1
    j = int(nz[0]) * 8 + int(np.flatnonzero(np.unpackbits(bits[nz[0]:nz[0] + 1], bitorder="little"))[0])
    return j if j < m else -1


def _best_lag(arr, *, probe: int = 4096, max_lag: int = 64) -> int:
    """A lag at which most rows repeat an earlier row (0 if none), judged on the first rows.

    Long files repeat themselves: sorted by item, ``item_id`` repeats the previous row (lag 1);
    with every unit's raters in the same order, ``rater`` repeats the row one unit back.
    """
    import pyarrow.compute as pc

    head = arr.slice(0, probe)
    n = len(head)
    for lag in range(1, min(max_lag, n - 1) + 1):
        changed = pc.sum(pc.not_equal(head.slice(lag), head.slice(0, n - lag))).as_py() or 0
        if changed * 16 <= n - lag:
            return lag
    return 0


def _codes(s: pd.Series, arr=None, *, lag: int | None = None, bits: np.ndarray | None = None):
    """Integer codes of a column and its distinct values, in order of first appearance.

    Missing values get a code of their own. Arrow-backed strings (pandas 3's default) are
    encoded by pyarrow and the distinct values stay a pyarrow array; otherwise they are a
    pandas Index. Where most rows repeat the row ``lag`` before them (see :func:`_best_lag`),
    only the other rows are hashed and the rest copy their codes: comparing two rows costs a
    fifth of hashing one.
    """
    arr = _arrow(s) if arr is None else arr
    if arr is not None:
        import pyarrow.compute as pc

        if lag is None:  # looking for repeats pays only where the compiled passes do
            lag = _best_lag(arr) if _compiled(len(arr)) else 0
        if lag:
            bits = _diff_bits(arr, lag) if bits is None else bits
            heads, head_codes, uniques = _encode_heads(arr, bits, lag)
            return _kernel().expand_lagged(bits, head_codes, len(arr), lag), uniques
        enc = pc.dictionary_encode(arr, null_encoding="encode").combine_chunks()
        return np.asarray(enc.indices, dtype=np.int64), enc.dictionary
    codes, uniques = pd.factorize(s, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


def _known_codes(s: pd.Series):
    """:func:`_codes` of ``s`` when validation already factorised it in this block (:mod:`evalcore.data.codes`), else None.

    They are :func:`_codes`'s when the column has no missing value and the codes number the values in
    order of first appearance (pandas' do; codes carried over a reordering do not). Call it in the thread
    that opened the block: the memo is a context variable.
    """
    from ..data import codes as column_codes

    arr = column_codes.data_of(s)
    hit = column_codes.memo_get((arr, "codes", id(arr))) if arr is not None else None
    if hit is None:
        return None
    code, uniques = hit  # type: ignore[misc]
    if not len(code) or len(code) != len(s) or int(code.min()) < 0:
        return None
    reached = np.maximum.accumulate(code)  # each value's first row comes after the previous value's
    if reached[0] != 0 or int(reached[-1]) != len(uniques) - 1 or bool((np.diff(reached) > 1).any()):
        return None
    if _is_arrow_string(s):
        import pyarrow as pa

        uniques = pa.array(uniques.array)
        if isinstance(uniques, pa.ChunkedArray):
            uniques = uniques.combine_chunks()
    return np.asarray(code, dtype=np.int64), uniques


def _encode_heads(arr, bits: np.ndarray, lag: int) -> tuple[np.ndarray, np.ndarray, object]:
    """The rows that differ from the row ``lag`` before them, their codes, and the distinct values."""
    import pyarrow.compute as pc

    heads = _kernel().lag_heads(bits, len(arr), lag)
    enc = pc.dictionary_encode(_take_sorted(arr, heads), null_encoding="encode")
    return heads, np.asarray(enc.indices, dtype=np.int64), enc.dictionary


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
        code, _ = known or _codes(df["item_id"], arr, lag=0)
        return _Items(code, _passes(len(code)).first_rows(code, int(code.max()) + 1 if len(code) else 0))
    bits = _diff_bits(arr, 1)
    starts, run_item, uniques = _encode_heads(arr, bits, 1)
    code = _kernel().expand_lagged(bits, run_item, len(arr), 1)
    first_run = _kernel().first_rows(run_item, len(uniques))  # an item's first row starts a run
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
        import pyarrow.compute as pc

        bad = _first_bit(bits & ~items.bits, len(items.code) - 1)
        bad = bad + 1 if bad >= 0 else -1
        per_item, uniques = None, None
        if bad < 0:
            sarr = _arrow(df[s])
            enc = pc.dictionary_encode(_take_sorted(sarr, items.starts), null_encoding="encode")
            run_codes, uniques = np.asarray(enc.indices, dtype=np.int64), enc.dictionary
            # An item in several places of the file: its runs must agree too.
            wrong = np.flatnonzero(run_codes != run_codes[items.first_run[items.run_item]])
            bad = int(items.starts[wrong[0]]) if len(wrong) else -1
            per_item = run_codes[items.first_run]
    else:
        rcode, uniques = known or _codes(df[s])
        bad = _passes(len(rcode)).first_mismatch(items.code, items.first_row, rcode)
        per_item = rcode[items.first_row]
    return (per_item, uniques, -1) if bad < 0 else (None, None, int(bad))


def _distinct(uniques) -> tuple:
    """The distinct values of :func:`_codes` as a tuple, missing values as NaN."""
    vals = uniques.to_pylist() if hasattr(uniques, "to_pylist") else list(uniques)
    return tuple(np.nan if v is None or (isinstance(v, float) and v != v) else v for v in vals)


def _take(s: pd.Series, uniques, codes: np.ndarray) -> pd.Series:
    """A column with ``s``'s dtype holding ``uniques[codes]`` (cheap: no strings are hashed or copied twice)."""
    if _is_arrow_string(s):
        import pyarrow as pa
        import pyarrow.compute as pc

        taken = pc.take(uniques, pa.array(codes))
        return pd.Series(type(s.array)(pa.chunked_array([taken]), dtype=s.dtype))
    return pd.Series(uniques.take(codes), dtype=s.dtype)


# From this many rows (or units) on, the passes are numba's (:mod:`evalcore.pointwise._agreekernel`) once they are
# loaded (the app loads them in the background for large datasets); below it, numpy's.
COMPILED_FROM = 200_000
# From this many rows a process loads numba for the compiled passes if they are not loaded yet. A long-lived
# process (the app, a notebook) loads them from COMPILED_FROM on and then gains on every table; a one-shot
# process (:func:`one_shot`, the CLI) only from ONE_SHOT_LOAD_FROM on: loading numba costs about 0.7 s, and on
# 1M rows the compiled passes save about 0.17 s (count_units 0.035 s against numpy's 0.2 s).
LOAD_FROM = COMPILED_FROM
ONE_SHOT_LOAD_FROM = 5_000_000


def one_shot() -> None:
    """Declare this process short-lived (one table, then exit, as a CLI command): below
    :data:`ONE_SHOT_LOAD_FROM` rows it counts with numpy rather than load numba, unless numba's passes are
    already loaded."""
    global LOAD_FROM
    LOAD_FROM = max(LOAD_FROM, ONE_SHOT_LOAD_FROM)


def _compiled(n: int) -> bool:
    """Whether ``n`` rows (or units) take the compiled passes: large enough, and numba already loaded or
    worth loading in this process (:data:`LOAD_FROM`)."""
    import sys

    return n >= COMPILED_FROM and (n >= LOAD_FROM or f"{__package__}._agreekernel" in sys.modules)


def _kernel():
    """The compiled passes (:mod:`evalcore.pointwise._agreekernel`), imported on first use: numba takes a moment."""
    from . import _agreekernel

    return _agreekernel


class _NumpyPasses:
    """The passes of :mod:`evalcore.pointwise._agreekernel` in numpy, with the same results, for small tables."""

    @staticmethod
    def first_rows(code: np.ndarray, n_codes: int) -> np.ndarray:
        # One unbuffered pass (np.minimum.at), not np.unique's sort: 10-25x faster on 1M rows.
        n = len(code)
        out = np.full(n_codes, n, np.int64)
        np.minimum.at(out, code, np.arange(n, dtype=np.int64))
        out[out == n] = -1
        return out

    @staticmethod
    def integer_scale(score: np.ndarray, max_span: int) -> tuple[int, np.ndarray]:
        if not len(score):
            return 0, np.zeros(0, np.int64)
        lo, hi = int(score.min()), int(score.max())
        if hi - lo >= max_span:
            return 0, np.zeros(0, np.int64)
        used = np.bincount(score - lo, minlength=hi - lo + 1) > 0
        return lo, np.where(used, np.cumsum(used) - 1, -1)

    @staticmethod
    def unit_counts(item, crit, rater, score, lo, table, slot, n_items, n_crit, q, n_judges):
        dense = item * n_crit + crit
        present = np.bincount(dense, minlength=n_items * n_crit) > 0
        unit_ids = np.flatnonzero(present)
        u = (np.cumsum(present) - 1)[dense]
        s, c = slot[rater], table[score - lo]
        h, j = s == -1, s >= 0
        counts = np.bincount(u[h] * q + c[h], minlength=len(unit_ids) * q).reshape(len(unit_ids), q)
        judge_codes = np.full((n_judges, len(unit_ids)), -1, np.int64)
        judge_codes[s[j], u[j]] = c[j]
        used = np.zeros((n_crit, q), dtype=bool)
        used[crit[h], c[h]] = True
        return unit_ids, counts, judge_codes, used

    @staticmethod
    def first_mismatch(item: np.ndarray, first_row: np.ndarray, code: np.ndarray) -> int:
        bad = np.flatnonzero(code != code[first_row[item]])
        return int(bad[0]) if len(bad) else -1

    @staticmethod
    def dense_factorize(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
        seen, first = np.unique(key, return_index=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(space, np.int64)
        rank[seen[order]] = np.arange(len(seen))
        return rank[key], first[order]

    @staticmethod
    def family_keys(ukey: np.ndarray, judge: np.ndarray, rows: np.ndarray, q1: int) -> np.ndarray:
        return ukey[rows] * q1 + judge[rows] + 1


def _passes(n: int):
    """numba's passes for ``n`` rows or units where :func:`_compiled` says so, numpy's otherwise."""
    return _kernel() if _compiled(n) else _NumpyPasses


def _scale(score: pd.Series) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Scores, and how to map them to categories (indices into the sorted distinct values).

    Returns ``(x, lo, table, values)`` with a rating's category ``table[x - lo]``. Integer scales
    (the usual case) keep the scores as they are, with no hashing or sorting; others are
    factorized and ``x`` is the category itself.
    """
    if pd.api.types.is_integer_dtype(score) and not score.hasnans:
        x = score.to_numpy(dtype=np.int64)
        lo, table = _passes(len(x)).integer_scale(x, 10_000)
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


def count_units(ratings: pd.DataFrame, *, segments: Sequence[str] | None = None) -> Units:
    """Reduce a validated ratings table to per-unit category counts.

    One pass of hashing (pyarrow or pandas) and counting over the ratings, with a dense unit
    index ``item * n_criteria + criterion`` so that nothing is sorted; the string columns are
    encoded in two threads (pyarrow's kernels release the GIL). Where a rater judged a unit
    several times (``sample``), the first sample is used: the other samples are the subject of
    self-consistency, not of agreement.

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
    strict = segments is not None
    segs = list(segments) if strict else segment_columns(df)
    segs = [s for s in segs if s != "criterion"]
    # Hashing the string columns is most of the cost, and pyarrow's kernels release the GIL:
    # two threads use both cores of a small machine.
    # Three streams of work on two workers and this thread: the items (then the segments, which
    # depend on them), the criteria and the per-segment comparisons, and the raters and scores.
    item_arr = _arrow(df["item_id"])
    sorted_by_item = item_arr is not None and _compiled(len(item_arr)) and _best_lag(item_arr) == 1
    # Columns validation factorised in the same block (the CLI's one-shot run) are not hashed again.
    known = {c: _known_codes(df[c]) for c in ("item_id", "criterion", "rater", *segs)}
    with ThreadPoolExecutor(max_workers=2) as pool:
        items_f = pool.submit(_items, df, item_arr, sorted_by_item, known["item_id"])
        seg_bits = {s: pool.submit(_diff_bits, _arrow(df[s]), 1) for s in segs
                    if sorted_by_item and _is_arrow_string(df[s])}
        crits = pool.submit(lambda: known["criterion"] or _codes(df["criterion"]))
        # Queued behind the items and the comparisons it waits for, so it cannot block them.
        segs_f = pool.submit(lambda: {s: _segment(df, s, items_f.result(), seg_bits[s].result() if s in seg_bits
                                                  else None, known[s]) for s in segs})
        rater_code, rater_uniques = known["rater"] or _codes(df["rater"])
        score, lo, table, values = _scale(df["score"])
        crit_code, crit_uniques = crits.result()
        items = items_f.result()
        seg_codes = segs_f.result()
    item_code = items.code
    crit_names = _distinct(crit_uniques)
    n_items, n_crit, q = int(item_code.max()) + 1, len(crit_names), len(values)
    # Each rater has one kind (validated), so kinds come from one row per rater.
    raters = _distinct(rater_uniques)
    first_of_rater = _passes(len(rater_code)).first_rows(rater_code, len(raters))
    kinds = df["rater_kind"].array
    kind_of_rater = np.asarray([kinds[int(r)] for r in first_of_rater] if len(first_of_rater) <= 64
                               else df["rater_kind"].to_numpy()[first_of_rater], dtype=object)
    judge_order = sorted(np.flatnonzero(kind_of_rater == JUDGE), key=lambda r: str(raters[r]))
    jnames = [str(raters[r]) for r in judge_order]
    slot = np.where(kind_of_rater == HUMAN, -1, -2).astype(np.int64)
    slot[judge_order] = np.arange(len(judge_order))
    unit_ids, counts, judge_codes, used = _passes(len(item_code)).unit_counts(
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
        unit_codes[s] = (per_item[unit_item], _distinct(suniques))
    scale = {str(name): int(used[ci].sum()) for ci, name in enumerate(crit_names)}
    return Units(values=values, counts=counts, judge_codes=judge_codes, judges=tuple(map(str, jnames)),
                 item=unit_item, scale=scale, codes=unit_codes, sources=sources, varying=tuple(varying))


def _sort_order(values: tuple) -> np.ndarray:
    """Positions of ``values`` in sorted order, missing last (pandas' ``groupby(sort=True, dropna=False)``)."""
    def missing(v) -> bool:
        return isinstance(v, float) and v != v

    idx = range(len(values))
    try:
        order = sorted(idx, key=lambda i: (missing(values[i]), 0 if missing(values[i]) else values[i]))
    except TypeError:  # mixed types in one object column: sort by their text
        order = sorted(idx, key=lambda i: (missing(values[i]), str(values[i])))
    return np.asarray(order, dtype=np.int64)


def group_codes(units: Units, by: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each unit's group (0..G-1, groups in sorted order of their keys) and the keys.

    The same groups and order as ``units.segments.groupby(by, sort=True, dropna=False)``,
    from the integer codes :func:`count_units` kept (no strings are hashed again).
    """
    n = len(units.item)
    if not by:
        return np.zeros(n, dtype=np.int64), [()]
    ranks, orders, sizes = [], [], []
    for c in by:
        ucodes, vals = units.codes[c]
        order = _sort_order(vals)
        rank = np.empty(len(vals), dtype=np.int64)
        rank[order] = np.arange(len(vals))
        ranks.append(rank[ucodes])
        orders.append(order)
        sizes.append(max(len(vals), 1))
    if float(np.prod(np.asarray(sizes, dtype=float))) < 2.0 ** 62:
        key = np.zeros(n, dtype=np.int64)
        for r, size in zip(ranks, sizes):
            key = key * size + r
        space = int(np.prod(np.asarray(sizes, dtype=float)))
        if space <= 4 * n + 1024:
            # Dense keys (a few languages times a few criteria): counting beats sorting.
            present = np.bincount(key, minlength=space) > 0
            uniq, inv = np.flatnonzero(present), (np.cumsum(present) - 1)[key]
        else:
            uniq, inv = np.unique(key, return_inverse=True)
        parts = []
        for size in reversed(sizes):
            parts.append(uniq % size)
            uniq = uniq // size
        combos = np.column_stack(parts[::-1])
    else:
        combos, inv = np.unique(np.column_stack(ranks), axis=0, return_inverse=True)
    keys = [tuple(units.codes[c][1][orders[k][r]] for k, (c, r) in enumerate(zip(by, row))) for row in combos]
    return inv.ravel().astype(np.int64), keys


def fractional_judges(units: Units) -> list[str]:
    """Judges that give non-integer scores while every human score is an integer.

    Such scores (e.g. averages over samples, as in HANNA) almost never equal the human
    majority, so exact-match measures (PA, kappa, F1) are low by construction; rank and
    interval measures (tau, rho, alpha interval) remain meaningful.
    """
    human_cats = units.counts.sum(axis=0) > 0
    if not np.all(units.values[human_cats] == np.round(units.values[human_cats])):
        return []
    frac = units.values != np.round(units.values)
    return [name for name, codes in zip(units.judges, units.judge_codes) if frac[codes[codes >= 0]].any()]


def default_by(units: Units) -> list[str]:
    """The default grouping: language and criterion, where the table has them."""
    return [c for c in ("language", "criterion") if c in units.codes]


# --------------------------------------------------------------------------- the unit filter


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
        ``*by, units_kept, units_dropped``; groups in the order of :func:`agreement`'s table."""
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
        """The note for each group key of ``by`` (as :func:`group_codes` gives them)."""
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
    the units with exactly three annotators, say), where :func:`agreement` uses every unit; with
    ``min_raters=3, max_raters=3`` it uses the same units as they do. Every measure, among humans
    and of a judge against them, then sees only the kept units; the bootstrap resamples items as
    before, an item carrying its kept units. The judges' ratings do not count towards the number of
    ratings, and the scale of each criterion (``Units.scale``, the ``q`` of AC1 and PABAK) stays the
    scale of all its ratings.

    Parameters
    ----------
    units
        The result of :func:`count_units` (or of an earlier filter).
    min_raters, max_raters
        Least and most human ratings of a kept unit, inclusive; None (the default) for no bound.
        With both None, ``units`` is returned unchanged.

    Returns
    -------
    Units
        The kept units, with :attr:`Units.unit_filter` saying how many units with a human rating
        were kept and dropped (``.kept``, ``.dropped``, per group ``.summary(by)``).

    Raises
    ------
    DataError
        When a bound is not a whole number 0 or more, when ``min_raters > max_raters``, or when no
        unit with a human rating is left.

    Examples
    --------
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
    return Units(values=units.values, counts=units.counts[rows], judge_codes=units.judge_codes[:, rows],
                 judges=units.judges, item=units.item[rows], scale=units.scale,
                 codes={c: (code[rows], vals) for c, (code, vals) in units.codes.items()}, sources=units.sources,
                 unit_filter=UnitFilter(lo, hi, units, keep), item_count=units.item_count,
                 per_criterion=units.per_criterion, varying=units.varying)


# --------------------------------------------------------------------------- patterns and resampling
#
# A *family* is the set of units one kind of measure uses in every group: units with a human
# rating (humans among themselves), or units with a human rating and judge J. Its units are
# compressed into patterns per group and laid out as (G, K) arrays, K the most patterns in
# any group (padded with zero weight). Weights are (G, R, K): R = 1 + B rows, the data then
# the bootstrap resamples. Every statistic is a batched product over K, so all groups and
# all resamples are computed at once.


@dataclass(frozen=True)
class _Family:
    counts: np.ndarray  # (G, K, q) human counts per category (categories used by the family only)
    judge: np.ndarray  # (G, K) judge category, -1 for humans-only
    weights: np.ndarray  # (G, R, K)
    present: np.ndarray  # (G,) the group has units in this family
    values: np.ndarray  # (q,) score values of the categories


def _factorize(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of non-negative integer keys in order of first appearance, and each code's first position.

    Where the keys are dense (the usual case: a few groups times a few count patterns), a
    direct-address table in one compiled pass replaces hashing: about 5x faster than
    ``pd.factorize``.
    """
    n = len(key)
    space = int(key.max()) + 1 if n else 0
    if space > 4 * n + 1024:
        code, _ = pd.factorize(key)
        first = np.full(int(code.max()) + 1 if n else 0, -1)
        first[code[::-1]] = np.arange(n)[::-1]
        return code, first
    return _passes(n).dense_factorize(key, space)


def _unit_keys(counts: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """A dense integer per unit identifying its (group, human counts): the families' patterns refine it.

    One integer per unit when the digits fit in 62 bits (a direct-address table, no hashing),
    else the rows' codes from ``np.unique``. Computed once per table, not once per family.
    """
    # Column by column: numpy's reductions along the short axis of an (n, q) array are ~15x slower.
    cols = [counts[:, k] for k in range(counts.shape[1])]
    hi = [int(c.max()) for c in cols] if counts.shape[1] <= 8 else counts.max(axis=0).tolist()
    digits = [(group, n_groups), *((cols[k], hi[k] + 1) for k in range(len(cols)) if hi[k] > 0)]
    if sum(np.log2(max(r, 1)) for _, r in digits) < 62:
        key = np.zeros(len(group), dtype=np.int64)
        for col, radix in digits:
            key *= radix
            key += col
        return _factorize(key)[0]
    _, code = np.unique(np.column_stack([group, counts]), axis=0, return_inverse=True)
    return code.ravel().astype(np.int64)


def _family(rows: np.ndarray, ukey: np.ndarray, counts: np.ndarray, judge: np.ndarray | None, item: np.ndarray,
            group: np.ndarray, n_groups: int, values: np.ndarray, *, n_boot: int,
            rngs: Sequence[np.random.Generator], item_count: np.ndarray | None = None) -> _Family:
    """Compress the units ``rows`` (with the judge's categories ``judge``, or humans only) into patterns.

    ``ukey`` is :func:`_unit_keys` of every unit; a pattern is a (group, counts, judge category).
    With ``item_count`` (compressed units, :attr:`Units.item_count`) each unit weighs the items its
    item stands for, and the bootstrap draws that many items (:func:`_weighted_draws`).
    """
    key = ukey[rows] if judge is None else _passes(len(rows)).family_keys(ukey, judge, rows, len(values) + 1)
    code, first_local = _factorize(key)
    first = rows[first_local]  # a unit of each pattern
    jfirst = judge[first] if judge is not None else np.full(len(first), -1)
    # Keep only the categories the family uses (the judge's averaged scores may add many).
    used = counts[first].any(axis=0)
    used[jfirst[jfirst >= 0]] = True
    idx = np.flatnonzero(used)
    remap = np.full(len(values), -1)
    remap[idx] = np.arange(len(idx))
    values = values[idx]
    q = len(idx)
    group = group[rows]
    n_pat = len(first)
    base = np.bincount(code, weights=None if item_count is None else item_count[item[rows]].astype(float),
                       minlength=n_pat).astype(float)
    pg = group[first_local]
    order = np.argsort(pg, kind="stable")
    per_group = np.bincount(pg, minlength=n_groups)
    K = max(int(per_group.max()), 1)
    start = np.concatenate([[0], np.cumsum(per_group)[:-1]])
    local = np.empty(n_pat, dtype=np.int64)
    local[order] = np.arange(n_pat) - start[pg[order]]
    R = 1 + max(n_boot, 0)
    C = np.zeros((n_groups, K, q))
    J = np.zeros((n_groups, K), dtype=np.int64)
    W = np.zeros((n_groups, R, K))
    C[pg, local] = counts[first][:, idx]
    J[pg, local] = np.maximum(remap[np.maximum(jfirst, 0)], 0)
    W[pg, 0, local] = base
    if n_boot > 0:
        item = item[rows]
        by_group = np.argsort(group, kind="stable")
        ends = np.cumsum(np.bincount(group, minlength=n_groups))
        for g in np.flatnonzero(per_group):
            rows_g = by_group[(ends[g - 1] if g else 0):ends[g]]
            pat = local[code[rows_g]]
            if item_count is not None:
                W[g, 1:, : per_group[g]] = _weighted_draws(rngs[g], item[rows_g], pat, item_count,
                                                           W[g, 0, : per_group[g]], n_boot)
                continue
            its, item_inv = np.unique(item[rows_g], return_inverse=True)
            n_items = len(its)
            if n_items == len(rows_g):
                # One unit per item (grouped by criterion): resampling items is resampling patterns.
                freq, types = W[g, 0, : per_group[g]], None
            else:
                # Items move as a whole: compress items with the same multiset of patterns.
                types, tinv = _item_types(item_inv.ravel(), pat, n_items, per_group[g])
                freq = np.bincount(tinv, minlength=types.shape[0]).astype(float)
            if types is not None and 8 * len(freq) > n_items:
                # Nearly every item is its own type (items rated on many criteria): drawing the items
                # themselves costs one integer per item, where a multinomial costs a binomial per type.
                W[g, 1:, : per_group[g]] = _draw_items(rngs[g], tinv.ravel(), types, n_boot)
                continue
            draws = rngs[g].multinomial(n_items, freq / freq.sum(), size=n_boot).astype(float)
            W[g, 1:, : per_group[g]] = draws if types is None else np.asarray(types.T.dot(draws.T).T)
    return _Family(C, np.where(W[:, 0, :] > 0, J, -1), W, per_group > 0, values)


def _weighted_draws(rng: np.random.Generator, item: np.ndarray, pat: np.ndarray, item_count: np.ndarray,
                    base: np.ndarray, n_boot: int) -> np.ndarray:
    """Pattern weights of ``n_boot`` item resamples of one group of compressed units.

    ``item`` and ``pat`` give each unit's item index and pattern; item index ``i`` stands for
    ``item_count[i]`` items. A resample draws the group's items with replacement, which is a
    multinomial over the item types (the distinct multisets of patterns an item carries) with the
    types' item counts as frequencies: the same distribution as the uncompressed bootstrap. Types are
    ordered by their content, not by a hash, so the draws do not depend on the process or on the
    order in which an engine returned the rows.
    """
    its, item_inv = np.unique(item, return_inverse=True)
    n_items = int(item_count[its].sum())
    if len(its) == len(item):
        # One unit per item (grouped by criterion): resampling items is resampling patterns.
        return rng.multinomial(n_items, base / base.sum(), size=n_boot).astype(float)
    types, tinv = _item_types(item_inv.ravel(), pat, len(its), len(base))
    freq = np.bincount(tinv, weights=item_count[its].astype(float), minlength=types.shape[0])
    draws = rng.multinomial(n_items, freq / freq.sum(), size=n_boot).astype(float)
    return np.asarray(types.T.dot(draws.T).T)


def _item_types(item_inv: np.ndarray, pat: np.ndarray, n_items: int, n_pat: int):
    """The distinct multisets of patterns the items carry (one sparse row per type), and each item's type.

    Types are ordered by their content (the bytes of the row), never by ``hash``: Python randomises the
    hash of bytes per process, which made the draws depend on the process.
    """
    from scipy import sparse  # here, not at import: a CLI run of the point estimates never needs scipy

    A = sparse.csr_matrix((np.ones(len(pat)), (item_inv, pat)), shape=(n_items, n_pat))
    A.sum_duplicates()
    A.sort_indices()
    key = np.empty(n_items, dtype=object)
    key[:] = [A.indices[A.indptr[i]:A.indptr[i + 1]].astype(np.int64).tobytes() + b"|"
              + A.data[A.indptr[i]:A.indptr[i + 1]].tobytes() for i in range(n_items)]
    _, tfirst, tinv = np.unique(key, return_index=True, return_inverse=True)
    return A[tfirst], tinv.ravel()


def _draw_items(rng: np.random.Generator, item_type: np.ndarray, types, n_boot: int) -> np.ndarray:
    """Pattern weights of ``n_boot`` item resamples, drawing item indices with replacement.

    The same distribution as a multinomial over item types (each resample is ``n`` items drawn
    uniformly): :func:`evalcore.stats.resample_counts` counts the types drawn, in blocks of
    resamples so that memory stays near 32 MB (its numbers do not depend on the block size).
    """
    n = len(item_type)
    n_types = types.shape[0]
    out = np.empty((n_boot, types.shape[1]))
    block = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        counts = resample_counts(rng, n, b, classes=item_type, n_classes=n_types)
        out[start:start + b] = np.asarray(types.T.dot(counts.T).T)
    return out


def _mm(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Weighted sums over patterns: (G, R, K) with (G, K) -> (G, R), or (G, K, m) -> (G, R, m)."""
    if X.ndim == 2:
        return np.matmul(W, X[:, :, None])[..., 0]
    return np.matmul(W, X)



# --------------------------------------------------------------------------- statistics


def _alphas(C: np.ndarray, W: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Krippendorff's alpha per metric, without forming the q x q coincidence matrix.

    :math:`\\alpha = 1 - (N-1) \\sum_{ck} o_{ck}\\delta^2_{ck} / \\sum_{ck} n_c n_k \\delta^2_{ck}` over
    pairable units. Nominal: :math:`\\sum o\\delta^2 = N - \\operatorname{tr} O`. Interval:
    :math:`\\delta_{ck} = v_c - v_k`. Ordinal: :math:`\\delta_{ck} = m_k - m_c` with the
    mid-cumulative frequency :math:`m_c = \\sum_{g<c} n_g + n_c/2`, which is Krippendorff's
    :math:`\\sum_{g=c}^{k} n_g - (n_c+n_k)/2`; so both are an interval metric on a position x and
    :math:`\\sum o\\delta^2 = 2\\sum_c n_c x_c^2 - 2 x^\\top O x`, with
    :math:`x^\\top O x = \\sum_u ((\\sum_c c_{uc} x_c)^2 - \\sum_c c_{uc} x_c^2)/(n_u-1)`. Cost O(patterns x q),
    which matters for judges whose averaged scores take a hundred distinct values.
    """
    n = C.sum(axis=-1)
    pair = (n >= 2)
    inv = np.where(pair, safe_div(np.ones_like(n), n - 1), 0.0)
    inv = np.nan_to_num(inv)
    Cp = C * pair[..., None]
    marg = _mm(W, Cp)  # (G, R, q) pairable value frequencies
    N = marg.sum(axis=-1)
    out = {}
    # nominal
    diag = ((C * (C - 1)).sum(axis=-1)) * inv
    do = N - _mm(W, diag)
    de = N ** 2 - (marg ** 2).sum(axis=-1)
    out["krippendorff_alpha_nominal"] = 1.0 - safe_div((N - 1) * do, de)
    # interval: positions are the values themselves (halved to a power of two when a stray score near 1e308
    # would overflow the squares: exact, and alpha is a ratio)
    top = float(np.abs(values).max()) if len(values) else 0.0
    v = values if top <= 1e150 else np.ldexp(values, -math.ceil(math.log2(top)))
    xox = (((C @ v) ** 2 - C @ v ** 2) * inv)
    do = 2 * (marg @ v ** 2) - 2 * _mm(W, xox)
    de = 2 * N * (marg @ v ** 2) - 2 * (marg @ v) ** 2
    out["krippendorff_alpha_interval"] = 1.0 - safe_div((N - 1) * do, de)
    # ordinal: positions are mid-cumulative frequencies, one set per resample
    m = np.cumsum(marg, axis=-1) - marg / 2.0  # (G, R, q)
    Cm = np.matmul(m, C.transpose(0, 2, 1))  # (G, R, K): sum_c c_uc m_c
    Cm2 = np.matmul(m ** 2, C.transpose(0, 2, 1))
    xox = ((Cm ** 2 - Cm2) * inv[:, None, :] * W).sum(axis=-1)
    s2 = (marg * m ** 2).sum(axis=-1)
    do = 2 * s2 - 2 * xox
    de = 2 * N * s2 - 2 * (marg * m).sum(axis=-1) ** 2
    out["krippendorff_alpha_ordinal"] = 1.0 - safe_div((N - 1) * do, de)
    return {f"krippendorff_alpha_{k}": out[f"krippendorff_alpha_{k}"] for k in _METRICS}


def _human_stats(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray) -> dict[str, np.ndarray]:
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    Pi = np.nan_to_num(safe_div((C * (C - 1)).sum(axis=-1), n * (n - 1))) * two
    full = (C.max(axis=-1) == n).astype(float) * two
    m2 = _mm(W, two)
    pa = safe_div(_mm(W, Pi), m2)
    pi = safe_div(_mm(W, np.nan_to_num(safe_div(C, n[..., None]))), _mm(W, (n >= 1).astype(float))[..., None])
    pe_f = (pi ** 2).sum(axis=-1)
    qs = q_scale[:, None].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pe_g = np.where(qs >= 2, (pi * (1 - pi)).sum(axis=-1) / (qs - 1), np.nan)
        pabak = np.where(qs >= 2, (qs * pa - 1) / (qs - 1), np.nan)
    out = {
        "percent_agreement": pa,
        "full_agreement": safe_div(_mm(W, full), m2),
        "fleiss_kappa": safe_div(pa - pe_f, 1 - pe_f),
        "gwet_ac1": safe_div(pa - pe_g, 1 - pe_g),
        "pabak": pabak,
    }
    out.update(_alphas(C, W, values))
    return out


def _kappas_f1(W: np.ndarray, major: np.ndarray, judge: np.ndarray, has_major: np.ndarray,
               values: np.ndarray) -> dict[str, np.ndarray]:
    """Cohen's kappa (unweighted and quadratic) and weighted F1 of the judge against the human majority.

    From per-pattern agreement and the two marginal distributions, without a q x q confusion
    matrix: :math:`\\kappa = (p_o - p_e)/(1 - p_e)`, :math:`p_e = \\sum_{ab} r_a c_b w_{ab} / N^2`;
    quadratic weights :math:`w_{ab} = 1-(v_a-v_b)^2/s^2` give
    :math:`\\sum r_a c_b w_{ab} = N^2 - (N\\sum r v^2 + N\\sum c v^2 - 2\\sum r v \\sum c v)/s^2`.
    """
    q = len(values)
    hm = has_major.astype(float)
    eye = np.eye(q)
    R1 = eye[major] * hm[..., None]  # (G, K, q) one-hot of the majority
    C1 = eye[judge] * hm[..., None]
    r, c = _mm(W, R1), _mm(W, C1)  # (G, R, q)
    tot = r.sum(axis=-1)
    same = (major == judge) * hm
    tp = _mm(W, R1 * same[..., None])
    po = safe_div(_mm(W, same), tot)
    pe = safe_div((r * c).sum(axis=-1), tot ** 2)
    out = {"cohen_kappa": safe_div(po - pe, 1 - pe)}
    span = float(values.max() - values.min())
    if span > 1e150:  # a stray score near 1e308: halve the scale to a power of two (exact; the weights are ratios)
        values = np.ldexp(values, -math.ceil(math.log2(span)))
        span = float(values.max() - values.min())
    span2 = span ** 2
    if span2 > 0:
        d = (values[major] - values[judge]) ** 2 / span2 * hm
        po_q = safe_div(tot - _mm(W, d), tot)
        rv, cv = r @ values, c @ values
        cross = tot ** 2 - (tot * (r @ values ** 2) + tot * (c @ values ** 2) - 2 * rv * cv) / span2
        pe_q = safe_div(cross, tot ** 2)
        out["cohen_kappa_quadratic"] = safe_div(po_q - pe_q, 1 - pe_q)
    else:
        out["cohen_kappa_quadratic"] = out["cohen_kappa"]
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(r + c > 0, 2 * tp / (r + c), 0.0)
    out["weighted_f1"] = safe_div((f1 * r).sum(axis=-1), r.sum(axis=-1))
    return out


def _pair_sum(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """sum_{k,l} W_k W_l S_kl per (group, row), with S (G, K, K): a batched BLAS product."""
    return (np.matmul(W, S) * W).sum(axis=-1)


def _tau_b(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Kendall's tau-b over weighted (x, y) patterns: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    N = W.sum(axis=-1)
    conc = _pair_sum(W, sx * sy) / 2.0
    n0 = N * (N - 1) / 2
    tx = (_pair_sum(W, (sx == 0).astype(float)) - N) / 2
    ty = (_pair_sum(W, (sy == 0).astype(float)) - N) / 2
    return safe_div(conc, np.sqrt((n0 - tx) * (n0 - ty)))


def _spearman(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Spearman's rho: Pearson's r of weighted midranks."""
    def ranks(v: np.ndarray) -> np.ndarray:
        lt = (v[:, None, :] < v[:, :, None]).astype(float)  # [k, l] = v_l < v_k
        eq = (v[:, None, :] == v[:, :, None]).astype(float)
        return np.matmul(W, lt.transpose(0, 2, 1)) + (np.matmul(W, eq) + 1) / 2

    rx, ry = ranks(x), ranks(y)
    N = W.sum(axis=-1, keepdims=True)
    mx = safe_div((W * rx).sum(axis=-1, keepdims=True), N)
    my = safe_div((W * ry).sum(axis=-1, keepdims=True), N)
    cov = (W * (rx - mx) * (ry - my)).sum(axis=-1)
    vx = (W * (rx - mx) ** 2).sum(axis=-1)
    vy = (W * (ry - my) ** 2).sum(axis=-1)
    return safe_div(cov, np.sqrt(vx * vy))


def _collapse(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge patterns with the same (x, y) within each group: rank statistics need only those points.

    Returns weights (G, R, Kc) and the points' x and y (G, Kc); this keeps the pairwise
    (Kc x Kc) products of tau and rho small when a judge's scores take many values.
    """
    G, K = x.shape
    g = np.repeat(np.arange(G), K)
    # One integer per (group, x, y) from the ranks of x and y: the order of np.unique on rows.
    xu, xi = np.unique(x.ravel(), return_inverse=True)
    yu, yi = np.unique(y.ravel(), return_inverse=True)
    nx, ny = len(xu), len(yu)
    uniq, inv = np.unique((g * nx + xi.ravel()) * ny + yi.ravel(), return_inverse=True)
    inv = inv.ravel()
    ug = uniq // (nx * ny)
    per = np.bincount(ug, minlength=G)
    start = np.concatenate([[0], np.cumsum(per)[:-1]])
    local = np.arange(len(uniq)) - start[ug]
    Kc = int(per.max())
    M = np.zeros((G, K, Kc))
    M[g, np.tile(np.arange(K), G), local[inv]] = 1.0
    xc, yc = np.zeros((G, Kc)), np.zeros((G, Kc))
    xc[ug, local], yc[ug, local] = xu[(uniq // ny) % nx], yu[uniq % ny]
    return np.matmul(W, M), xc, yc


def _judge_stats(f: _Family, q_scale: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Measures of one judge against the humans, (G, R) each, and the units each uses."""
    C, W, values = f.counts, f.weights, f.values
    j = np.maximum(f.judge, 0)
    q = len(values)
    n = C.sum(axis=-1)
    label = strict_majority(C)  # the one human label (evalcore.labels), shared with the pairwise analyses
    has_major = label != NO_MAJORITY
    major = np.maximum(label, 0)
    hm = has_major.astype(float)
    out: dict[str, np.ndarray] = {}
    units: dict[str, np.ndarray] = {}
    out["percent_agreement"] = safe_div(_mm(W, (j == major) * hm), _mm(W, hm))
    out.update(_kappas_f1(W, major, j, has_major, values))
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = _mm(W, hm)
    x = values[j]
    y = np.nan_to_num(safe_div(C @ values, n))
    Wc, xc, yc = _collapse(W, x, y)
    out["kendall_tau"] = _tau_b(xc, yc, Wc)
    out["spearman_rho"] = _spearman(xc, yc, Wc)
    units["kendall_tau"] = units["spearman_rho"] = W.sum(axis=-1)
    # The judge as one more rater, against the humans alone on the same units.
    Cj = C + np.eye(q)[j] * (n > 0)[..., None]
    sj, sh = _human_stats(Cj, W, values, q_scale), _human_stats(C, W, values, q_scale)
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = W.sum(axis=-1)
    two = (n >= 2).astype(float)
    share = np.nan_to_num(safe_div(np.take_along_axis(C, j[..., None], axis=-1)[..., 0], n))
    pair = safe_div(_mm(W, share * two), _mm(W, two))
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = _mm(W, two)
    return out, units


# --------------------------------------------------------------------------- the table


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

    Each distinct (item, group) pair counts once for its group. :func:`count_units` numbers the units
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
        _, first = _factorize(it.astype(np.int64) * n_groups + g)
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


def agreement(
    data: pd.DataFrame | Units,
    *,
    by: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = ALPHA,
    progress: Callable[[float], None] | None = None,
    min_raters: int | None = None,
    max_raters: int | None = None,
) -> pd.DataFrame:
    """Agreement among humans and of each judge with humans, per group, with bootstrap CIs.

    Parameters
    ----------
    data
        A validated ratings table, or its :func:`count_units` result (reuse it across groupings).
    by
        Columns to group by: ``criterion``, ``language``, ``task`` or any per-item segment;
        empty for one overall row per measure; default :func:`default_by`.
    judges
        Judges to compare with humans (default: all).
    n_boot
        Bootstrap resamples of items per cell; 0 skips the intervals.
    seed
        Seed of the resampling; the same inputs give the same numbers.
    level
        Confidence level of the percentile intervals.
    alpha
        False discovery rate of the flags: Benjamini-Hochberg across the table's tested rows
        (``pairwise_agreement_gap`` of every group and judge).
    progress
        Called with the fraction done, for progress bars.
    min_raters, max_raters
        Only units (an item on one criterion) with this many human ratings count, for every
        measure (:func:`filter_units`; ``3, 3``: the fully annotated units of a three-annotator
        study); None, the default, for no bound. When units are filtered (here or by passing
        :func:`filter_units`' result), every row's ``note`` says how many units of its group were
        kept and dropped; a group left without units has no rows. DataError when no unit is left.

    Returns
    -------
    pandas.DataFrame
        One row per group, judge (null for humans among themselves) and measure, with
        columns ``*by, judge, measure, estimate, ci_low, ci_high, n, n_units, n_ratings,
        test, p_value, q_value, flagged, opposite, note`` (:data:`RESULT_COLUMNS`): ``n`` counts
        the items behind the estimate, ``n_units`` the units (an item on one criterion) its
        measure uses; the test columns as in :mod:`evalcore.stats.results`.
    """
    units = data if isinstance(data, Units) else count_units(data)
    units = filter_units(units, min_raters=min_raters, max_raters=max_raters)
    by = _check_by(units, default_by(units) if by is None else list(by))
    n_boot, level, root, alpha = check_resamples(n_boot), check_level(level), root_seed(seed), check_alpha(alpha)
    chosen = list(units.judges) if judges is None else list(judges)
    bad = [j for j in chosen if j not in units.judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(units.judges))
    gcodes, keys = group_codes(units, by)
    G = len(keys)
    ccode, cnames = units.codes["criterion"]
    crit_scale = np.array([units.scale.get(str(c), 0) for c in cnames], dtype=np.int64)[ccode]
    q_scale = np.zeros(G, dtype=np.int64)
    np.maximum.at(q_scale, gcodes, crit_scale)
    hm = units.has_human
    ukey = _unit_keys(units.counts, gcodes, G)

    def humans() -> dict[str, np.ndarray] | None:
        if not hm.any():
            return None
        f = _family(np.flatnonzero(hm), ukey, units.counts, None, units.item, gcodes, G, units.values,
                    n_boot=n_boot, rngs=_rngs(root, keys, None) if n_boot else [], item_count=units.item_count)
        stats = _human_stats(f.counts, f.weights, f.values, q_scale)
        n = f.counts.sum(axis=-1)
        base = f.weights[:, 0, :]
        items = _items_per_group(np.flatnonzero(units.human_ratings >= 2), units.item, gcodes, G, units.item_count)
        return _records(stats, None, (base * n).sum(axis=-1), (base * (n >= 2)).sum(axis=-1), items, f.present,
                        judge=None, level=level)

    def judge(name: str) -> dict[str, np.ndarray] | None:
        jc = units.judge_codes[units.judges.index(name)]
        m = hm & (jc >= 0)
        if not m.any():
            return None
        rows = np.flatnonzero(m)
        f = _family(rows, ukey, units.counts, jc, units.item, gcodes, G, units.values, n_boot=n_boot,
                    rngs=_rngs(root, keys, name) if n_boot else [], item_count=units.item_count)
        stats, ucount = _judge_stats(f, q_scale)
        n = f.counts.sum(axis=-1)
        base = f.weights[:, 0, :]
        no_major = (base * (strict_majority(f.counts) == NO_MAJORITY)).sum(axis=-1)
        return _records(stats, ucount, (base * (n + 1)).sum(axis=-1), np.zeros(G),
                        _items_per_group(rows, units.item, gcodes, G, units.item_count), f.present, judge=name,
                        level=level,
                        no_major=no_major)

    tasks = [humans, *(partial(judge, name) for name in chosen)]
    parts = []
    # Each family has its own random streams, so the families can run at once: the multinomial
    # draws and matrix products release the GIL, and two threads use both cores of a small machine.
    with ThreadPoolExecutor(max_workers=min(2, len(tasks))) as pool:
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
    return apply_fdr(_filter_noted(pd.DataFrame(data, columns=[*by, *RESULT_COLUMNS]), units, by, keys, group),
                     alpha=alpha)


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


def warm_up() -> None:
    """Compile (or load from numba's cache) the compiled passes, e.g. in a background thread."""
    _kernel().warm_up()
