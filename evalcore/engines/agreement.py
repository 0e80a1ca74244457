"""The agreement table from an ibis table: the sufficient statistics as GROUP BYs, written once.

Why
---
Every agreement measure depends on the ratings only through, per *unit* (an item on one
criterion), the human counts per score category and each judge's score
(:mod:`evalcore.pointwise.agreement`). Those are GROUP BYs, so any SQL engine computes them where
the data lives (DuckDB on a folder of Parquet files larger than memory, Spark on a cluster), and
only the compressed counts come back to Python. They become a compressed
:class:`~evalcore.pointwise.agreement.units.Units` (rows that stand for many units: ``item_count``), and
the table is computed by :func:`evalcore.pointwise.agreement.table.agreement`, the same code as for data
in memory: there is no second copy of the statistics.

The queries (the portable subset of ibis: filter, mutate, group_by, aggregate with ``where=``;
one window for the ``sample`` rule; no array aggregation)
---------------------------------------------------------------------------------------------
1. Small look-ups: the raters and their kind, the score values per criterion (which give the
   categories and each criterion's scale), and, with a ``sample`` column, whether it varies.
2. Units: ``GROUP BY item_id, criterion`` with, per human score value ``v``,
   ``count(*) WHERE rater_kind = 'human' AND score = v``, and per judge ``J``,
   ``max(score) WHERE rater = J``; per-item segments as ``max`` (with ``min`` and a count of
   missing values, to check that a segment is constant).
3. Then one of two compressions, both exact:

   - *per criterion* (the table is grouped by ``criterion``, the default, or there is one
     criterion): ``GROUP BY`` segments, criterion and the unit's statistics, counting units.
     Every group then holds one unit per item, so a unit is its item: ``n`` counts units, and the
     item bootstrap is a multinomial over these patterns with the unit counts as frequencies.
     Rows come back: about (segments x criteria x patterns), whatever the number of ratings.
   - *per item* (grouped without ``criterion``: an item's units move together in the bootstrap):
     ``GROUP BY item_id`` with, for each criterion ``k`` (few, known from step 1), the unit's
     statistics as ``max(x) WHERE criterion = k``; then ``GROUP BY`` all of those and the segments,
     counting items: the *item types*. The bootstrap is a multinomial over item types. Rows come
     back: the distinct item types, at most the number of items.

Both give the statistics of :func:`~evalcore.pointwise.agreement.units.count_units` on the same rows,
so the table has the same rows, counts and estimates as the in-process path (up to the last bits
of floating-point sums taken in another order). The intervals come from the same item bootstrap
with the same seed per cell; they are the same draws where the in-process path draws in the same
order (patterns and item types are ordered here by their content, there by the order of the rows
in the file), and otherwise the same distribution.

No engine returns a stable row order, so every result is sorted here before use.

Categories: a ``score`` column of text labels, and the declared scales and orders, are first read per
criterion as in memory (:func:`evalcore.engines.labels.read_labels_engine`), which gives the ``scale`` and
``category`` columns of a validated table. Where the ``scale`` column declares a criterion nominal, its
ratings are the strings of the ``category`` column (exactly as written). One small look-up reads the
criteria's scales; then every row gets a category code in the queries (a CASE over the numbers and the
labels), and the human counts and the judges' categories are GROUP BYs of that code, so that the labels
are compared as strings where the data is. A table without nominal criteria runs the queries above
unchanged; an ordered text criterion (numbers that are positions, ``category`` their labels) keeps its
labels for the output's names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..columns import HUMAN, JUDGE, NOT_SEGMENTS, RATER_KINDS
from ..errors import DataError, varying_within_item
from ..pointwise.agreement.filter import filter_units
from ..pointwise.agreement.table import agreement as _agreement
from ..data.scales import CATEGORY, NOMINAL, SCALE, format_number
from ..pointwise.agreement.units import Units, label_key
from ..stats.results import ALPHA
from .engine import fetch, require_ibis
from .labels import read_labels_engine

#: Segment columns that are floats with more distinct values than this are measurements, not segments
#: (as :func:`evalcore.columns.segment_columns`).
MAX_FLOAT_LEVELS = 50


@dataclass(frozen=True)
class _Plan:
    """What the small look-ups found: the prepared rows and the names the big queries need."""

    table: object  # ibis Table: item_id, criterion, rater, rater_kind, score, segments (sample rule applied)
    segments: list[str]
    criteria: list  # distinct criterion values, sorted by their text
    values: np.ndarray  # sorted distinct scores (all raters): the categories
    human_values: np.ndarray  # the categories some human used
    scale: dict[str, int]  # per criterion, distinct human scores
    judges: list  # judge rater values, in the order of their names
    judge_names: list[str]
    # With nominal criteria (a ``scale`` column): their labels after the numbers (``values`` NaN there), the
    # criteria's scales, and the categories some human used as codes (each row's ``_cat`` in the queries).
    labels: tuple[str, ...] = ()
    scales: dict[str, str] = dataclasses.field(default_factory=dict)
    human_codes: np.ndarray | None = None
    # Per criterion of ordered text labels, the label of each category code (the output's names).
    named: dict[str, dict[int, str]] = dataclasses.field(default_factory=dict)


def _missing_columns(table) -> None:
    """DataError naming the required columns the table lacks (``rater_kind`` and ``criterion`` have defaults)."""
    missing = [c for c in ("item_id", "rater", "score") if c not in table.columns]
    if missing:
        raise DataError(f"the ratings table lacks {', '.join(missing)}",
                        fix="name the columns item_id, rater, rater_kind, criterion, score (rename them in the "
                            "file, or with --map SOURCE=CANONICAL)")


def _rater_kinds(table, judge_raters: Sequence[str] | None):
    """The table with a ``rater_kind`` column: as given, or from the raters' names (one look-up over the raters).

    Without a ``rater_kind`` column, raters named like models are judges (:mod:`evalcore.data.raters`,
    the rule of every importer), or exactly the ``judge_raters`` when given.
    """
    ibis = require_ibis()
    if "rater_kind" in table.columns:
        return table
    from ..data.raters import looks_like_judge

    raters = fetch(table.select("rater").distinct())["rater"].tolist()
    chosen = set(judge_raters or [])
    judges = [r for r in raters if (str(r) in chosen if judge_raters else looks_like_judge(r))]
    kind = ibis.cases((table.rater.isin(judges), ibis.literal(JUDGE)), else_=ibis.literal(HUMAN)) if judges \
        else ibis.literal(HUMAN)
    return table.mutate(rater_kind=kind)


def _seen(table) -> tuple[pd.DataFrame, dict]:
    """One look-up for the scores each rater gave per criterion, and each rater's kind (checked).

    Grouped by criterion, score and rater (small: the raters times the score values), it gives the
    categories, each criterion's scale and the judges at once, in one pass over the rows.
    """
    keys = ["criterion", "score", "rater", *(c for c in ("_label", "_named") if c in table.columns)]
    seen = fetch(table.group_by(keys).aggregate(lo=table.rater_kind.min(), hi=table.rater_kind.max()))
    bad = sorted({str(v) for v in pd.concat([seen["lo"], seen["hi"]]).dropna()} - set(RATER_KINDS))
    if bad or seen["lo"].isna().any():
        raise DataError(f"rater_kind holds {bad[0] if bad else 'an empty value'}, not human or judge",
                        column="rater_kind", fix="mark every row human or judge")
    per_rater = seen.groupby("rater", sort=False).agg(lo=("lo", "min"), hi=("hi", "max"))
    mixed = per_rater[per_rater["lo"] != per_rater["hi"]]
    if len(mixed):
        raise DataError(f"rater '{mixed.index[0]}' is both a human and a judge", column="rater_kind",
                        fix="give each rater one kind")
    return seen, dict(zip(per_rater.index, per_rater["lo"]))


def _segment_columns(table) -> list[str]:
    """The per-item segment columns: every column not canonical, floats only with few distinct values."""
    own = ("criterion", "rater", "rater_kind", "_label", "_named")  # a rating's label (the plan's)
    cands = [c for c in table.columns if c not in NOT_SEGMENTS and c not in own]
    floats = [c for c in cands if table[c].type().is_floating()]
    if floats:
        levels = fetch(table.aggregate(**{f"c{i}": table[c].nunique() for i, c in enumerate(floats)})).iloc[0]
        too_many = {c for i, c in enumerate(floats) if int(levels[f"c{i}"]) > MAX_FLOAT_LEVELS}
        cands = [c for c in cands if c not in too_many]
    return cands


def _plan(table, *, judges: Sequence[str] | None, judge_raters: Sequence[str] | None, scale=None,
          order=None) -> _Plan:
    ibis = require_ibis()
    _missing_columns(table)
    if "criterion" not in table.columns:
        table = table.mutate(criterion=ibis.literal("overall"))
    # Text labels and the declarations, read by the in-memory reader's rules (a numeric table passes as it is).
    table = read_labels_engine(table, scale=scale, order=order)
    table = _rater_kinds(table, judge_raters)
    scales = _scales(table)
    if CATEGORY in table.columns:
        # The labels of the criteria whose scores are positions in an order: the output shows them, not numbers.
        nominal = (table[SCALE] == NOMINAL).fill_null(False) if SCALE in table.columns else ibis.literal(False)
        table = table.mutate(_named=ibis.cases((table[CATEGORY].notnull() & ~nominal,
                                                table[CATEGORY].cast("string")), else_=ibis.null("string")))
    if NOMINAL in scales.values():
        # A nominal criterion's rating is its label (text in the GROUP BYs), exactly as written.
        table = table.mutate(_label=ibis.cases((table.scale == NOMINAL, table.category.cast("string")),
                                               else_=ibis.null("string")))
        table = table.filter(table.score.notnull() | table._label.notnull())
    else:
        table = table.filter(table.score.notnull())
    if "sample" in table.columns:
        # The first sample per item, criterion and rater (count_units' rule); the other samples are the
        # subject of self-consistency, not of agreement. Applied only when the samples differ, as in memory.
        if int(fetch(table.aggregate(k=table["sample"].nunique()))["k"].iloc[0]) > 1:
            # A window in a mutate, then a filter: a window inside the filter does not compile for Spark.
            table = table.mutate(_first=table["sample"].min().over(group_by=[table.item_id, table.criterion,
                                                                             table.rater]))
            table = table.filter(table["sample"] == table["_first"]).drop("_first")
    segments = _segment_columns(table)
    seen, kinds = _seen(table)
    criteria = sorted(pd.unique(seen["criterion"]).tolist(), key=lambda v: (v is None, str(v)))
    if "_label" in table.columns:
        return _labelled_plan(table, segments, seen, kinds, criteria, scales, judges=judges)
    values = np.unique(seen["score"].to_numpy(dtype=float))
    human = seen[seen["lo"] == HUMAN]
    scale = {str(c): int(human.loc[human["criterion"].astype(object) == c, "score"].nunique()) for c in criteria}
    judge_raters_all, names = _judges(kinds, judges)
    hv = np.unique(human["score"].to_numpy(dtype=float))
    return _Plan(table, segments, criteria, values, hv, scale, judge_raters_all, names, scales=scales,
                 named=_named_labels(seen, values))


def _named_labels(seen: pd.DataFrame, numbers: np.ndarray) -> dict[str, dict[int, str]]:
    """Per criterion whose scores are positions in an order of text labels, the label of each of its categories
    (as :attr:`evalcore.pointwise.agreement.units.Units.criterion_labels`); ``numbers`` the sorted numeric
    categories."""
    if "_named" not in seen.columns:
        return {}
    rows = seen[seen["_named"].notna()].sort_values("_named", kind="mergesort")
    out: dict[str, dict[int, str]] = {}
    for crit, score, label in zip(rows["criterion"], rows["score"].to_numpy(dtype=float), rows["_named"]):
        out.setdefault(str(crit), {}).setdefault(int(np.searchsorted(numbers, score)), str(label))
    return out


def _judges(kinds: dict, judges: Sequence[str] | None) -> tuple[list, list[str]]:
    """The judge raters (all, or ``judges``, checked) in the order of their names, and the names."""
    judge_raters_all = sorted((r for r, k in kinds.items() if k == JUDGE), key=str)
    names = [str(r) for r in judge_raters_all]
    if judges is not None:
        bad = [j for j in judges if j not in names]
        if bad:
            raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(names))
        judge_raters_all = [r for r in judge_raters_all if str(r) in set(judges)]
        names = [str(r) for r in judge_raters_all]
    return judge_raters_all, names


def _scales(table) -> dict[str, str]:
    """Each criterion's scale from the ``scale`` column (one small look-up); empty without the column."""
    if SCALE not in table.columns:
        return {}
    found = fetch(table.group_by("criterion").aggregate(s=table[SCALE].min()))
    return {str(c): str(v) for c, v in zip(found["criterion"], found["s"]) if not _missing(v)}


def _labelled_plan(table, segments: list[str], seen: pd.DataFrame, kinds: dict, criteria: list,
                   scales: dict[str, str], *, judges: Sequence[str] | None) -> _Plan:
    """The plan of a table with nominal criteria: the categories are the other criteria's numbers (sorted), then
    the nominal labels in :func:`evalcore.pointwise.agreement.units.count_units`' order, so that the units are
    the in-process ones."""
    labelled = seen["_label"].notna()
    numbers = np.unique(seen.loc[~labelled, "score"].to_numpy(dtype=float))
    labels = tuple(sorted({str(v) for v in seen.loc[labelled, "_label"]}, key=label_key))
    code = np.zeros(len(seen), dtype=np.int64)
    code[~labelled.to_numpy()] = np.searchsorted(numbers, seen.loc[~labelled, "score"].to_numpy(dtype=float))
    where = {lab: len(numbers) + i for i, lab in enumerate(labels)}
    code[labelled.to_numpy()] = [where[str(v)] for v in seen.loc[labelled, "_label"]]
    human = seen.assign(_code=code)[seen["lo"] == HUMAN]
    scale = {str(c): int(human.loc[human["criterion"].astype(object) == c, "_code"].nunique()) for c in criteria}
    judge_raters_all, names = _judges(kinds, judges)
    values = np.concatenate([numbers, np.full(len(labels), np.nan)])
    used = np.unique(human["_code"].to_numpy())
    return _Plan(table, segments, criteria, values, used.astype(float), scale, judge_raters_all, names,
                 labels=labels, scales=scales, human_codes=used, named=_named_labels(seen[~labelled], numbers))


def _unit_query(p: _Plan):
    """``GROUP BY item_id, criterion``: human counts per value, each judge's score, the segments and their check."""
    ibis = require_ibis()
    t = p.table
    # Each row's human score and judge number, computed once: comparing strings once per row and not once
    # per aggregate halves DuckDB's time.
    judge_no = ibis.cases(*((t.rater == r, k) for k, r in enumerate(p.judges)), else_=-1) if p.judges \
        else ibis.literal(-1)
    if p.human_codes is not None:  # nominal labels: each row's category code, numbers and labels alike
        t = t.mutate(_cat=_category_code(t, p), _judge_no=judge_no)
        aggs = {f"h{k}": t.count(where=(t.rater_kind == HUMAN) & (t._cat == int(c)))
                for k, c in enumerate(p.human_codes)}
        aggs.update({f"j{k}": t._cat.max(where=t._judge_no == k) for k in range(len(p.judges))})
    else:
        t = t.mutate(_human_score=ibis.cases((t.rater_kind == HUMAN, t.score), else_=ibis.null(t.score.type())),
                     _judge_no=judge_no)
        aggs = {f"h{k}": t.count(where=t._human_score == float(v)) for k, v in enumerate(p.human_values)}
        aggs.update({f"j{k}": t.score.max(where=t._judge_no == k) for k in range(len(p.judges))})
    for k, s in enumerate(p.segments):
        aggs[f"s{k}"], aggs[f"s{k}_lo"] = t[s].max(), t[s].min()
        aggs[f"s{k}_nn"] = t[s].count()
    aggs["_rows"] = t.count()
    return t.group_by(["item_id", "criterion"]).aggregate(**aggs)


def _category_code(t, p: _Plan):
    """Each row's category: the position of its number among the numbers, or of its label after them."""
    ibis = require_ibis()
    n = len(p.values) - len(p.labels)
    numbers = ((t._label.isnull() & (t.score == float(v)), k) for k, v in enumerate(p.values[:n]))
    labels = ((t._label == lab, n + i) for i, lab in enumerate(p.labels))
    return ibis.cases(*numbers, *labels, else_=-1)


def _stat_columns(p: _Plan) -> list[str]:
    return [f"h{k}" for k in range(len(p.human_values))] + [f"j{k}" for k in range(len(p.judges))]


def _segment_bad(u, k: int):
    """True where segment ``k`` is not constant: two values, or some rows missing it and some not."""
    nn, rows = u[f"s{k}_nn"], u["_rows"]
    return (u[f"s{k}"] != u[f"s{k}_lo"]).fill_null(False) | ((nn > 0) & (nn < rows))


def _per_criterion_query(p: _Plan):
    u = _unit_query(p)
    bad = {f"bad{k}": u.count(where=_segment_bad(u, k)) for k in range(len(p.segments))}
    keys = ["criterion", *(f"s{k}" for k in range(len(p.segments))), *_stat_columns(p)]
    return u.group_by(keys).aggregate(_count=u.count(), **bad)


def _crit_is(col, value):
    return col.isnull() if value is None else col == value


def _per_item_query(p: _Plan):
    ibis = require_ibis()
    u = _unit_query(p)
    u = u.mutate(**{f"bad{k}": ibis.cases((_segment_bad(u, k), 1), else_=0) for k in range(len(p.segments))})
    aggs = {}
    for ci, c in enumerate(p.criteria):
        here = _crit_is(u.criterion, c)
        aggs.update({f"{col}_{ci}": u[col].max(where=here) for col in _stat_columns(p)})
        aggs[f"has_{ci}"] = u.count(where=here)
    for k in range(len(p.segments)):
        aggs[f"s{k}"], aggs[f"s{k}_lo"] = u[f"s{k}"].max(), u[f"s{k}_lo"].min()
        aggs[f"s{k}_nn"], aggs[f"bad{k}"] = u[f"s{k}_nn"].sum(), u[f"bad{k}"].max()
    aggs["_rows"] = u["_rows"].sum()
    it = u.group_by("item_id").aggregate(**aggs)
    it = it.mutate(**{f"bad{k}": ibis.cases(((it[f"bad{k}"] > 0) | _segment_bad(it, k), 1), else_=0)
                      for k in range(len(p.segments))})
    keys = [*(f"s{k}" for k in range(len(p.segments))),
            *(f"{col}_{ci}" for ci in range(len(p.criteria)) for col in _stat_columns(p)),
            *(f"has_{ci}" for ci in range(len(p.criteria)))]
    bad = {f"bad{k}": it[f"bad{k}"].sum() for k in range(len(p.segments))}
    return it.group_by(keys).aggregate(_count=it.count(), **bad)


def _varying_segments(table, columns: Sequence[str]) -> dict[str, str]:
    """Of ``columns``, those that change within an item, each with one such item (one look-up per item).

    A per-row column (a timing, an annotation round, a comment) is no segment; left in the big
    queries' keys it would keep every unit apart, so it is found first and left out.
    """
    if not columns:
        return {}
    it = table.group_by("item_id").aggregate(
        _rows=table.count(), **{k: v for i, c in enumerate(columns) for k, v in
                                ((f"s{i}", table[c].max()), (f"s{i}_lo", table[c].min()), (f"s{i}_nn", table[c].count()))})
    found = fetch(it.aggregate(**{f"x{i}": it.item_id.min(where=_segment_bad(it, i)) for i in range(len(columns))}))
    return {c: str(found[f"x{i}"].iloc[0]) for i, c in enumerate(columns) if not _missing(found[f"x{i}"].iloc[0])}


def _check_segments(res: pd.DataFrame, p: _Plan) -> None:
    for k, s in enumerate(p.segments):
        if res[f"bad{k}"].sum() > 0:
            raise varying_within_item(s)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques, dtype=object)


def _sorted(res: pd.DataFrame) -> pd.DataFrame:
    """Rows in an order fixed by their content: engines return them in any order."""
    return res.sort_values(list(res.columns), na_position="last", kind="mergesort", ignore_index=True)


def _build(p: _Plan, crit: np.ndarray, counts_h: np.ndarray, judge_scores: np.ndarray, seg_values: dict,
           item: np.ndarray, item_count: np.ndarray, *, per_criterion: bool, varying: dict[str, str]) -> Units:
    """Compressed :class:`Units` from the per-unit statistics the engine returned."""
    q = len(p.values)
    coded = p.human_codes is not None  # the queries returned category codes, not scores
    counts = np.zeros((len(crit), q), dtype=np.int64)
    counts[:, p.human_codes if coded else np.searchsorted(p.values, p.human_values)] = counts_h
    judge_codes = np.full((len(p.judges), len(crit)), -1, dtype=np.int64)
    for k in range(len(p.judges)):
        x = judge_scores[:, k]
        ok = ~np.isnan(x)
        judge_codes[k, ok] = x[ok].astype(np.int64) if coded else np.searchsorted(p.values, x[ok])
    crit_names = tuple(np.nan if c is None else c for c in p.criteria)
    codes = {"criterion": (crit, crit_names)}
    sources = {"criterion": (pd.Series([], dtype=object), pd.Index(list(crit_names), dtype=object))}
    for s, vals in seg_values.items():
        scode, uniques = _codes(vals)
        codes[s] = (scode, tuple(np.nan if _missing(v) else v for v in uniques))
        sources[s] = (pd.Series([], dtype=object), uniques)
    return Units(values=p.values, counts=counts, judge_codes=judge_codes, judges=tuple(p.judge_names), item=item,
                 scale=p.scale, codes=codes, sources=sources, item_count=np.asarray(item_count, dtype=np.int64),
                 per_criterion=per_criterion, varying=tuple(varying.items()),
                 labels=(tuple(format_number(v) for v in p.values[:len(p.values) - len(p.labels)]) + p.labels
                         if p.labels else ()), scales=p.scales, criterion_labels=p.named)


def _no_rows_checked(res: pd.DataFrame) -> pd.DataFrame:
    """``res``, or the in-memory reader's message when the table has no rows (a header-only file): an empty
    agreement table with exit 0 would read as "nothing to flag"."""
    if not len(res):
        raise DataError("has no data rows", fix="export at least one judgment")
    return res


def count_units_engine(table, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                       judge_raters: Sequence[str] | None = None, scale: str | dict[str, str] | None = None,
                       order: dict[str, str | Sequence[str]] | Sequence[str] | None = None) -> Units:
    """The compressed per-unit statistics of the ratings ``table`` (an ibis table), computed by its engine.

    Parameters
    ----------
    table
        An ibis table with ``item_id``, ``rater``, ``score`` and optionally ``rater_kind``,
        ``criterion`` (default ``overall``), ``sample`` and segment columns (``language``, ``task``...).
        ``score`` holds numbers or text labels, read per criterion as in memory
        (:func:`evalcore.engines.labels.read_labels_engine`: text labels are nominal categories); a
        ``category`` and a ``scale`` column (a table evalcore validated) are read as they are.
        Read it with :func:`evalcore.engines.engine.read`; it is never loaded.
    by
        The grouping the units are for: with ``criterion`` among them the units are compressed per
        criterion (fewest rows), else per item (item types); empty (the default) for one overall group.
    judges
        Only these judges (default: all); DataError naming the judges when one is unknown.
    judge_raters
        Without a ``rater_kind`` column: the raters that are judges (default: raters named like models).
    scale, order
        The criteria's declared scales and the orders of text labels, as for the in-memory reader
        (:func:`evalcore.data.categories.declarations`; CLI ``--scale`` and ``--order``).

    Returns
    -------
    Units
        With ``item_count`` set; :func:`evalcore.pointwise.agreement.table.agreement` takes them like
        :func:`~evalcore.pointwise.agreement.units.count_units`' result.

    Raises
    ------
    DataError
        A missing column (named, with the fix), labels the in-memory reader refuses (with its message: a
        criterion mixing numbers and text, a label outside its order...), a ``rater_kind`` other than
        human/judge or a rater of both kinds, a ``by`` column that varies within an item, an unknown judge.
        Another column that varies within an item (a per-row timing or comment) is no segment: it is left
        out of the units and recorded in their ``varying``.
    """
    p = _plan(table, judges=judges, judge_raters=judge_raters, scale=scale, order=order)
    by = list(by)
    unknown = [c for c in by if c not in ("criterion", *p.segments)]
    if unknown:  # before the big query, with agreement's message
        raise DataError(f"cannot group by '{unknown[0]}': it is not a segment column of this table",
                        column=unknown[0], fix="group by one of: " + ", ".join(["criterion", *p.segments]))
    # Only the grouping's columns may stop the table; the big queries check those (and name the column).
    varying = _varying_segments(p.table, [s for s in p.segments if s not in by])
    if varying:
        p = dataclasses.replace(p, segments=[s for s in p.segments if s not in varying])
    stats = _stat_columns(p)
    nh = len(p.human_values)
    per_criterion = "criterion" in by or len(p.criteria) <= 1
    if per_criterion:
        res = _no_rows_checked(fetch(_per_criterion_query(p)))
        _check_segments(res, p)
        res = _sorted(res.drop(columns=[c for c in res.columns if c.startswith("bad")]))
        crit_index = {(None if c is None else c): i for i, c in enumerate(p.criteria)}
        crit = np.asarray([crit_index[None if _missing(v) else v]
                           for v in res["criterion"].astype(object)], dtype=np.int64)
        counts_h = res[stats[:nh]].to_numpy(dtype=np.int64).reshape(len(res), nh)
        jscores = res[stats[nh:]].to_numpy(dtype=float).reshape(len(res), len(p.judges))
        segs = {s: res[f"s{k}"] for k, s in enumerate(p.segments)}
        return _build(p, crit, counts_h, jscores, segs, np.arange(len(res)), res["_count"].to_numpy(),
                      per_criterion=True, varying=varying)
    res = _no_rows_checked(fetch(_per_item_query(p)))
    _check_segments(res, p)
    res = _sorted(res.drop(columns=[c for c in res.columns if c.startswith("bad")]))
    has = np.column_stack([res[f"has_{ci}"].to_numpy(dtype=np.int64) > 0 for ci in range(len(p.criteria))])
    t_idx, c_idx = np.nonzero(has)  # item-type major, criteria in order: like count_units' item-major units
    counts_h = np.column_stack([res[[f"h{k}_{ci}" for ci in range(len(p.criteria))]].to_numpy(dtype=float)
                                [t_idx, c_idx] for k in range(nh)]).reshape(len(t_idx), nh).astype(np.int64) \
        if nh else np.zeros((len(t_idx), 0), dtype=np.int64)
    jscores = np.column_stack([res[[f"j{k}_{ci}" for ci in range(len(p.criteria))]].to_numpy(dtype=float)
                               [t_idx, c_idx] for k in range(len(p.judges))]).reshape(len(t_idx), len(p.judges)) \
        if p.judges else np.zeros((len(t_idx), 0))
    segs = {s: res[f"s{k}"].iloc[t_idx].reset_index(drop=True) for k, s in enumerate(p.segments)}
    return _build(p, c_idx.astype(np.int64), counts_h, jscores, segs, t_idx.astype(np.int64),
                  res["_count"].to_numpy(), per_criterion=False, varying=varying)


def agreement(table, *, by: Sequence[str] = (), judges: Sequence[str] | None = None, n_boot: int = 1000,
              seed: int = 0, level: float = 0.95, alpha: float = ALPHA, min_raters: int | None = None,
              max_raters: int | None = None, judge_raters: Sequence[str] | None = None,
              scale: str | dict[str, str] | None = None,
              order: dict[str, str | Sequence[str]] | Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`evalcore.pointwise.agreement.table.agreement` of an ibis table, its statistics computed by the engine.

    The options are those of the in-process function (default ``by``: none, one overall row per measure);
    ``judge_raters``, ``scale`` and ``order`` as in :func:`count_units_engine`. Returns the same table (a
    nominal criterion gets the measures its scale allows, as in memory).
    """
    units = count_units_engine(table, by=by, judges=judges, judge_raters=judge_raters, scale=scale, order=order)
    units = filter_units(units, min_raters=min_raters, max_raters=max_raters)
    return _agreement(units, by=by, n_boot=n_boot, seed=seed, level=level, alpha=alpha)
