"""Ratings' labels read on an engine, criterion by criterion, by the rules of the in-memory reader.

Why
---
A ratings file often holds words, not numbers (``yes``/``no``, ``model_a``/``tie``), and a CSV whose ``score``
column holds words reaches an engine as a string column. In memory, :func:`evalcore.data.categories.read_labels`
reads such a column per criterion; this module applies the same rules where the data is, so that
``evalcore agreement FILE --engine duckdb`` gives the table the in-memory path gives:

- a criterion whose labels all read as numbers keeps them in ``score`` (ordinal unless declared otherwise);
- a criterion of text labels is nominal: ``category`` holds each label exactly as written, ``score`` is null;
- ``--order C=bad,ok,good`` makes ``score`` the position ``1..k`` of the label and keeps the label in
  ``category``; ``--scale C=nominal`` writes numbers as categories (``4.0`` reads ``4``);
- a criterion that mixes numbers and text, a label missing from its order, and the other cases the reader
  refuses get the reader's own messages (:func:`evalcore.data.categories.reading_modes`,
  :func:`~evalcore.data.categories.not_in_order`, :func:`~evalcore.data.categories.too_many_categories`).

How
---
Nothing is loaded: one small look-up (``GROUP BY criterion, kind of label``: the number of rows of each kind
and of distinct labels) decides each criterion's reading, as the in-memory reader decides it from its
counts; the columns are then ibis expressions (a CASE per criterion) that the agreement queries
(:mod:`evalcore.engines.agreement`) compute with everything else. Messages need a few labels: small queries
fetch them only when there is something to say. The engine has no row order, so a message names no row,
and its example labels are the first in sort order, not in the file's.

Not done here (the in-memory reader's notes and rarer checks): decimal commas (``3,5`` is refused with the
fix), look-alike labels (``evalcore validate`` reports them) and invisible characters in labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..data.categories import (BLANK, CODED, KEPT, LABELS, MAX_CATEGORIES, NUMBER, NUMBERISH, NUMBERS, ORDERED,
                               SHOWN, TEXT, check_named, declarations, not_in_order, reading_modes,
                               too_many_categories)
from ..data.scales import CATEGORY, DEFAULT_SCALE, NOMINAL, SCALE
from ..data.strings import MISSING_WORDS
from ..errors import DataError
from .engine import fetch, require_ibis


@dataclass(frozen=True)
class _Rows:
    """Each row's label as expressions: its kind (:data:`~evalcore.data.categories.BLANK`...), the label as
    written (the category where the row has one) and its score as a number (null where it is none)."""

    kind: object
    label: object
    value: object


def written_number(x):
    """A numeric expression as a label, written as :func:`evalcore.data.scales.format_number` writes it:
    whole numbers without a decimal point (``4.0`` reads ``4``), others as the engine writes a double."""
    ibis = require_ibis()
    whole = (x == x.floor()) & (x.abs() < 1e18)  # beyond, a 64-bit integer overflows
    return ibis.cases((whole, x.cast("int64").cast("string")), else_=x.cast("float64").cast("string"))


def _rows(table) -> _Rows:
    """The kinds, labels and numbers of the rows of ``table``, by the in-memory reader's rules: a cell is blank
    when empty, spaces or a word meaning "no value" (``NA``, ``null``...); a number when it reads as one."""
    ibis = require_ibis()
    s = table.score
    if s.type().is_string():
        blank = s.isnull() | (s.strip() == "") | s.isin(list(MISSING_WORDS))
        number = s.re_search(f"^{NUMBERISH}$")
        value, written = s.strip().try_cast("float64"), s
    else:
        blank = s.isnull() | (s.isnan() if s.type().is_floating() else ibis.literal(False))
        number = ~blank
        value = s.cast("float64")
        written = written_number(value)
    kind = ibis.cases((blank, BLANK), (number, NUMBER), else_=TEXT)
    if CATEGORY not in table.columns:
        return _Rows(kind, written, value)
    cat = table[CATEGORY].cast("string")
    has = cat.notnull() & (cat.strip() != "")
    # A category with a number is a label evalcore coded (an ordered label, a number declared nominal).
    kind = ibis.cases((has & value.notnull(), CODED), (has, TEXT), else_=kind)
    return _Rows(kind, ibis.cases((has, cat), else_=written), value)


def _criteria_in(col, crits: Sequence):
    """True on the rows of the criteria ``crits`` (None stands for a missing criterion)."""
    ibis = require_ibis()
    named = [c for c in crits if c is not None]
    cond = col.isin(named) if named else ibis.literal(False)
    return cond | col.isnull() if None in crits else cond


def _look_up(t) -> tuple[list, np.ndarray, np.ndarray]:
    """One pass over the rows: the criteria (sorted), their rows of each kind of label, their distinct labels."""
    found = fetch(t.group_by(["criterion", "_kind"]).aggregate(
        n=t.count(), labels=t._label.nunique(where=t._kind != NUMBER),
        numbers=t._value.nunique(where=t._kind == NUMBER),
        bad=t.count(where=(t._kind == NUMBER) & (t._value.isnull() | t._value.isinf()))))
    crits = sorted(dict.fromkeys(None if v is None or v != v else v for v in found["criterion"].astype(object)),
                   key=lambda v: (v is None, str(v)))
    index = {c: i for i, c in enumerate(crits)}
    counts = np.zeros((len(crits), 4), dtype=np.int64)
    distinct = np.zeros((len(crits), 4), dtype=np.int64)
    bad = np.zeros(len(crits), dtype=np.int64)
    for c, k, n, labels, numbers, b in found[["criterion", "_kind", "n", "labels", "numbers", "bad"]].itertuples(
            index=False):
        i = index[None if c is None or c != c else c]
        counts[i, int(k)] = int(n)
        distinct[i, int(k)] = int(numbers if int(k) == NUMBER else labels)
        bad[i] += int(b)
    return crits, counts, np.column_stack([distinct, bad])


def _labels(t, crit, kind: int | None = None, *, limit: int = SHOWN) -> list[str]:
    """The first ``limit`` distinct labels (in sort order) of criterion ``crit``'s rows, of one ``kind`` or not
    blank."""
    sel = t.filter(_criteria_in(t.criterion, [crit]) & (t._kind == kind if kind is not None else t._kind != BLANK))
    return [str(v) for v in fetch(sel.select("_label").distinct().order_by("_label").limit(limit))["_label"]]


def _known_scales(table) -> dict[str, str]:
    """The scales the table's own ``scale`` column gives its criteria (none without the column)."""
    if SCALE not in table.columns:
        return {}
    word = table[SCALE].cast("string").strip().lower()
    found = fetch(table.group_by("criterion").aggregate(s=word.min()))
    return {str(c): str(s) for c, s in zip(found["criterion"], found["s"]) if isinstance(s, str) and s}


def _check_values(t, crits: list, names: list[str], modes: list[str], scale_of: list[str],
                  distinct: np.ndarray) -> None:
    """Numbers the engine cannot read, and criteria with more categories than a rating has."""
    for i, crit in enumerate(crits):
        if modes[i] == NUMBERS and distinct[i, 4]:
            shown = _labels(t.filter((t._value.isnull() | t._value.isinf())), crit, NUMBER, limit=1)
            raise DataError(f"criterion '{names[i]}' has the score '{shown[0] if shown else '?'}' "
                            f"({int(distinct[i, 4]):,} such row(s)): an engine reads finite numbers written with "
                            "a decimal point", column="score",
                            fix="write decimal points (3.5, not 3,5) and finite numbers, or run without --engine, "
                                "whose reader takes decimal commas")
        categories = modes[i] in (KEPT, LABELS) or (modes[i] == NUMBERS and scale_of[i] == NOMINAL)
        n = int(distinct[i, :4].sum()) if categories else 0
        if n > MAX_CATEGORIES:
            raise too_many_categories(names[i], n, _labels(t, crit, limit=3))


def _check_orders(t, crits: list, names: list[str], order_of: list) -> None:
    """Every label of an ordered criterion is in its order, else the in-memory reader's message."""
    groups: dict[tuple, list] = {}
    for crit, order in zip(crits, order_of):
        if order is not None:
            groups.setdefault(order, []).append(crit)
    if not groups:
        return
    outside = None
    for order, members in groups.items():
        cond = _criteria_in(t.criterion, members) & (t._kind != BLANK) & ~t._label.isin(list(order))
        outside = cond if outside is None else outside | cond
    found = fetch(t.filter(outside).select("criterion", "_label").distinct().order_by(["criterion", "_label"])
                  .limit(10_000))
    if not len(found):
        return
    found_crits = [None if c is None or c != c else c for c in found["criterion"].astype(object)]
    first = crits.index(found_crits[0])
    members = [c for c, o in zip(crits, order_of) if o == order_of[first]]
    labels = list(dict.fromkeys(str(v) for c, v in zip(found_crits, found["_label"]) if c in members))
    raise not_in_order(names[first], labels, order_of[first])


def _has_categories(counts: np.ndarray, modes: list[str], scale_of: list[str]) -> bool:
    """Whether some row gets a category: as :func:`evalcore.data.categories.read_labels`, which then writes the
    ``category`` and ``scale`` columns (and neither for numbers on the default scale)."""
    for i, mode in enumerate(modes):
        rated = int(counts[i, NUMBER] + counts[i, TEXT] + counts[i, CODED])
        if rated and (mode in (ORDERED, LABELS, KEPT) or scale_of[i] == NOMINAL):
            return True
    return False


def _columns(t, rows: _Rows, crits: list, modes: list[str], scale_of: list[str], order_of: list) -> dict:
    """The ``score``, ``category`` and ``scale`` expressions, a CASE over the criteria by their reading."""
    ibis = require_ibis()

    def where(pick) -> list:
        return [c for i, c in enumerate(crits) if pick(i)]

    rated = rows.kind != BLANK
    numbers = _criteria_in(t.criterion, where(lambda i: modes[i] in (NUMBERS, KEPT)))
    score = [(numbers & rated, rows.value)]
    for order in dict.fromkeys(o for o in order_of if o is not None):
        position = ibis.cases(*((rows.label == lab, float(k + 1)) for k, lab in enumerate(order)),
                              else_=ibis.null("float64"))
        score.append((_criteria_in(t.criterion, where(lambda i: order_of[i] == order)) & rated, position))
    as_number = written_number(rows.value)
    nominal = _criteria_in(t.criterion, where(lambda i: modes[i] == NUMBERS and scale_of[i] == NOMINAL))
    kept = _criteria_in(t.criterion, where(lambda i: modes[i] == KEPT))
    labelled = _criteria_in(t.criterion, where(lambda i: modes[i] in (ORDERED, LABELS)))
    category = [(nominal & (rows.kind == NUMBER), as_number), (kept & (rows.kind == NUMBER), as_number),
                (kept & (rows.kind == CODED), rows.label), (labelled & rated, rows.label)]
    scale = [(_criteria_in(t.criterion, where(lambda i: scale_of[i] == s)), ibis.literal(s))
             for s in dict.fromkeys(scale_of)]
    return {"score": ibis.cases(*score, else_=ibis.null("float64")),
            CATEGORY: ibis.cases(*category, else_=ibis.null("string")),
            SCALE: ibis.cases(*scale, else_=ibis.null("string"))}


def read_labels_engine(table, *, scale: str | Mapping[str, str] | None = None,
                       order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None):
    """The ratings ``table`` (an ibis table) with its labels read criterion by criterion, on its engine.

    The rules, the declarations and the messages are those of :func:`evalcore.data.categories.read_labels`:
    ``score`` becomes a float column (the number, or the position of the label in its order, or null for a
    nominal label), and ``category`` (the label as written) and ``scale`` (the criterion's scale) are added
    where a criterion has categories or a declared scale.

    Parameters
    ----------
    table
        An ibis table with ``score`` (numbers or text) and ``criterion`` (a ``category`` and a ``scale``
        column, as evalcore writes a validated table, are read back).
    scale, order
        The declarations (:func:`evalcore.data.categories.declarations`): ``{"stance": "nominal"}``,
        ``{"quality": "bad,ok,good"}``, ``"*"`` for every criterion.

    Returns
    -------
    ibis Table
        ``table`` itself when ``score`` is numeric and nothing is declared (a validated table, read as it
        is); else ``table`` with ``score``, ``category`` and ``scale`` as expressions.

    Raises
    ------
    DataError
        The in-memory reader's messages (a criterion mixing numbers and text, a label outside its order, a
        declaration naming no criterion...), without a row: an engine has no row order. Numbers with a
        decimal comma are refused with the fix.

    Examples
    --------
    >>> import ibis, pandas as pd
    >>> t = ibis.memtable(pd.DataFrame({"criterion": ["stance", "stance", "quality", "quality"],
    ...                                 "score": ["agree", "Agree ", "ok", "good"]}))
    >>> out = read_labels_engine(t, order={"quality": "bad,ok,good"})
    >>> out = out.order_by(["criterion", "category"]).to_pyarrow().to_pandas()
    >>> out[["score", "category", "scale"]].values.tolist()
    [[3.0, 'good', 'ordinal'], [2.0, 'ok', 'ordinal'], [nan, 'Agree ', 'nominal'], [nan, 'agree', 'nominal']]
    """
    ibis = require_ibis()
    if table.score.type().is_boolean():
        table = table.mutate(score=table.score.cast("float64"))
    if not (table.score.type().is_numeric() or table.score.type().is_string()):
        raise DataError(f"column 'score' holds {table.score.type()}, not numbers or labels", column="score",
                        fix="give the ratings as numbers, or as text labels")
    scales, orders = declarations(scale, order)
    if table.score.type().is_numeric() and not scales and not orders:
        return table
    if "criterion" not in table.columns:
        table = table.mutate(criterion=ibis.literal("overall"))
    rows = _rows(table)
    t = table.mutate(_kind=rows.kind, _label=rows.label, _value=rows.value)
    crits, counts, distinct = _look_up(t)
    names = ["overall" if c is None else str(c) for c in crits]
    check_named(scales, orders, names, None)
    examples = (lambda i: lambda kind: (_labels(t, crits[i], kind), int(counts[i, kind]), None))
    modes, scale_of, order_of = reading_modes(names, counts, scales, orders, _known_scales(table), examples, None)
    _check_values(t, crits, names, modes, scale_of, distinct)
    _check_orders(t, crits, names, order_of)
    columns = _columns(table, rows, crits, modes, scale_of, order_of)
    if _has_categories(counts, modes, scale_of):
        return table.mutate(**columns)
    # Numbers only: a scale column where a scale was declared, no category column (as in memory).
    declared = any(s != DEFAULT_SCALE for s in scale_of)
    out = table.mutate(score=columns["score"], **({SCALE: columns[SCALE]} if declared else {}))
    drop = [c for c in (CATEGORY, *(() if declared else (SCALE,))) if c in out.columns]
    return out.drop(*drop) if drop else out
