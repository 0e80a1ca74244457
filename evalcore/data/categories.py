"""Ratings' labels read criterion by criterion: numbers, categories kept as written, or text in a given order.

Validation reads the ``score`` column of a ratings table here (:func:`read_labels`), one criterion at a time,
into the columns of :mod:`evalcore.data.scales`:

- a criterion whose labels are all numbers keeps them in ``score``, on the ordinal scale unless declared
  otherwise; a file of numbers only gets no ``category`` or ``scale`` column, so it reads as it always did;
- a criterion of text labels is **nominal**: each label is a category, kept exactly as written in
  ``category`` (``Yes`` and ``yes `` are two categories, never merged; a note reports such look-alikes),
  and ``score`` is empty;
- text labels with an order (``order={"quality": ["bad", "ok", "good"]}``, CLI ``--order quality=bad,ok,good``)
  are ordinal: ``score`` is the position ``1..k`` of the label in the order, ``category`` the label;
- numbers declared nominal (``scale={"topic": "nominal"}``, CLI ``--scale topic=nominal``) keep ``score``
  and get the number as a category (:func:`evalcore.data.scales.format_number`: ``4.0`` reads ``4``).

Why per criterion: one file often holds a yes/no criterion beside a 1-5 one, and a measure that needs an
order (weighted kappa, ordinal alpha, correlations) must not be computed on the first (Stevens 1946;
Krippendorff 2011). A criterion that mixes numbers and text is refused with the fix, since which of them
is the typo only the analyst knows.

Declarations name criteria, or ``*`` for every criterion; an explicit criterion wins over ``*``, and both
win over a ``scale`` column in the file.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from .codes import factorize
from .numbers import numeric_column
from .scales import (CATEGORY, DEFAULT_SCALE, INTERVAL, NOMINAL, ORDINAL, SCALE, SCALES, format_number,
                     scale_by_criterion)
from .strings import (INVISIBLE, MISSING_WORDS, distinct_pairs, is_blank, row_of, show_invisible, strip_text,
                      take_text)

#: Most distinct labels one criterion may hold as categories: agreement counts a table of items by
#: categories, and more labels than this are free text or ids mapped to ``score`` by mistake.
MAX_CATEGORIES = 1000
#: How many labels a message or the summary names.
SHOWN = 5
#: Everything a declaration may name: one criterion, or every criterion.
ALL = "*"

SCORE_FIX = "use numbers for scores (e.g. 1-5), or leave the cell empty if there is no judgment"

#: What a row's label is: no label, a number, text, or text already coded by evalcore (a category with a score);
#: the columns of :func:`reading_modes`' counts.
BLANK, NUMBER, TEXT, CODED = 0, 1, 2, 3
#: How a criterion is read: as numbers, as text in an order, as categories kept with their scores, as text.
NUMBERS, ORDERED, KEPT, LABELS = "numbers", "ordered", "kept", "labels"
#: Digits with commas or a point: numbers as far as the reader can tell (numbers.numeric_column words the rest).
NUMBERISH = r"\s*[+-]?(?:(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf|infinity|nan))\s*"


def declarations(scale: str | Mapping[str, str] | None = None,
                 order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None,
                 ) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The declared scales and orders, checked: ``({criterion: scale}, {criterion: labels})``.

    Parameters
    ----------
    scale
        One scale for every criterion (``"nominal"``), or ``{criterion: scale}``; ``"*"`` stands for
        every criterion. Scales are ``nominal``, ``ordinal`` and ``interval``.
    order
        ``{criterion: labels}``, the labels lowest first, as a list or as one string ``"bad, ok, good"``
        (split at commas, spaces around each label dropped); a bare list is the order of every criterion.

    Examples
    --------
    >>> declarations({"stance": "Nominal"}, {"quality": "bad, ok ,good"})
    ({'stance': 'nominal'}, {'quality': ('bad', 'ok', 'good')})
    >>> declarations("interval", ["low", "high"])
    ({'*': 'interval'}, {'*': ('low', 'high')})
    """
    if isinstance(scale, str):
        scale = {ALL: scale}
    scales: dict[str, str] = {}
    for crit, value in (scale or {}).items():
        word = str(value).strip().lower()
        if word not in SCALES:
            raise DataError(f"'{value}' is not a scale (declared for criterion '{crit}')",
                            fix="declare nominal, ordinal or interval (--scale 'stance=nominal')")
        scales[str(crit).strip()] = word
    if order is not None and not isinstance(order, Mapping):
        order = {ALL: order}
    orders: dict[str, tuple[str, ...]] = {}
    for crit, labels in (order or {}).items():
        orders[str(crit).strip()] = _order_labels(str(crit).strip(), labels)
    return scales, orders


def _order_labels(crit: str, labels: str | Sequence[str]) -> tuple[str, ...]:
    """One criterion's order as a tuple of distinct labels."""
    items = labels.split(",") if isinstance(labels, str) else [str(v) for v in labels]
    items = [v.strip() if isinstance(labels, str) else v for v in items]
    if len(items) < 2 or any(v == "" for v in items):
        raise DataError(f"the order given for criterion '{crit}' needs two or more labels, none of them empty "
                        f"(got {', '.join(repr(v) for v in items) or 'nothing'})",
                        fix=f"list the labels lowest first (--order '{crit}=bad,ok,good')")
    twice = [v for v in dict.fromkeys(items) if items.count(v) > 1]
    if twice:
        raise DataError(f"the order given for criterion '{crit}' lists '{twice[0]}' twice",
                        fix="list each label once, lowest first")
    return tuple(items)


def check_named(scales: Mapping[str, str], orders: Mapping[str, tuple], criteria: Sequence[str],
                file: str | None) -> None:
    """Every declared criterion is one of the data's, or ``*``."""
    known = set(criteria)
    for what, named in (("scale", scales), ("order", orders)):
        for crit in named:
            if crit != ALL and crit not in known:
                listed = ", ".join(f"'{c}'" for c in criteria[:20]) + (", ..." if len(criteria) > 20 else "")
                raise DataError(f"the {what} declared for criterion '{crit}' names no criterion of the data",
                                file=file, column="criterion",
                                fix=f"name one of the criteria: {listed} (or * for every criterion)")


def file_scales(df: pd.DataFrame, *, file: str) -> dict[str, str]:
    """The scale each criterion has in the file's ``scale`` column (none without the column), checked."""
    if SCALE not in df.columns:
        return {}
    words = df[SCALE].astype("string").str.strip().str.lower()
    bad = words.notna() & ~words.isin(SCALES)
    if bad.any():
        raise DataError(f"the scale column says each criterion's scale, but holds '{df[SCALE][bad].iloc[0]}'",
                        file=file, column=SCALE, row=row_of(df, bad),
                        fix="write nominal, ordinal or interval (or leave it empty), or rename the column if it "
                            "means something else")
    pairs = pd.DataFrame({"c": df["criterion"].astype(str), "s": words}).dropna().drop_duplicates()
    twice = pairs["c"][pairs["c"].duplicated()]
    if len(twice):
        crit = twice.iloc[0]
        raise DataError(f"criterion '{crit}' has more than one scale in the scale column "
                        f"({', '.join(pairs.loc[pairs['c'] == crit, 's'])})", file=file, column=SCALE,
                        fix="give every row of a criterion the same scale")
    return dict(zip(pairs["c"], pairs["s"]))


def _examples(labels: Sequence[str], limit: int = 3) -> str:
    """A few distinct labels, quoted, for a message."""
    return ", ".join(f"'{shown(v)}'" for v in list(labels)[:limit])


def _examples_of(label: pd.Series, kinds: np.ndarray, frame: pd.DataFrame):
    """The rows' examples for :func:`reading_modes`' messages: a function of a kind of label giving its first
    distinct labels, its number of rows and the first one's row number."""
    def examples(kind: int) -> tuple[list[str], int, int | None]:
        hit = kinds == kind
        return list(pd.unique(label[hit].dropna())[:SHOWN]), int(hit.sum()), row_of(frame, hit)
    return examples


def shown(label: str, limit: int = 40) -> str:
    """A label as a message or a table names it: control characters escaped, cut to ``limit`` characters
    with an ellipsis; spaces kept, so that ``'yes '`` shows its space between the quotes.

    >>> shown("yes "), shown("x" * 50, 10)
    ('yes ', 'xxxxxxxxx…')
    """
    text = show_invisible(str(label)).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _distinct_as_written(uniq: pd.Index) -> pd.Series:
    """Distinct cells as the text the file wrote (a number that arrived as a number written by
    :func:`~evalcore.data.scales.format_number`)."""
    if isinstance(uniq.dtype, pd.StringDtype):  # CSV and TSV cells: text already, and no copy of a big column
        return pd.Series(uniq.array)
    return pd.Series([v if isinstance(v, str) else format_number(v) if isinstance(v, (int, float, np.number))
                      and not isinstance(v, (bool, np.bool_)) else str(v) for v in uniq], dtype="string")


def _distinct_kinds(score: pd.Series) -> tuple[np.ndarray, pd.Series, np.ndarray]:
    """``score``'s codes, its distinct cells as written, and the kind of label of each (blank, number, text).

    A number is what a reader can take for one (``4``, ``3,5``, ``1e6``, ``inf``):
    :func:`~evalcore.data.numbers.numeric_column` reads it, or words what is wrong with it.
    """
    codes, uniq = factorize(score)
    u = _distinct_as_written(uniq)
    blank = (u.str.strip() == "").fillna(True).to_numpy(bool)
    # pyarrow's regular expressions (RE2) on the distinct cells: pandas' str.fullmatch runs Python's re per cell.
    number = pc.fill_null(pc.match_substring_regex(pa.array(u.array), f"^{NUMBERISH}$"), False)
    number = np.asarray(number.to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(codes), u, np.where(blank, BLANK, np.where(number, NUMBER, TEXT))


def _row_kinds(df: pd.DataFrame, distinct: tuple[np.ndarray, pd.Series, np.ndarray],
               ) -> tuple[np.ndarray, pd.Series]:
    """Each row's kind of label (blank, number, text, coded) and its label as written (the ``category`` where a
    row has one, else the score cell), from the score's :func:`_distinct_kinds`."""
    codes, u, kind_u = distinct
    kinds = np.append(kind_u, BLANK)[codes]
    label = take_text(u, codes, df.index)
    if CATEGORY in df.columns:
        cat = df[CATEGORY].astype("string")
        has = (cat.notna() & (cat.str.strip() != "")).fillna(False).to_numpy(bool)
        scored = pd.to_numeric(df["score"], errors="coerce").notna().to_numpy(bool)
        kinds = np.where(has, np.where(scored, CODED, TEXT), kinds)
        label = cat.where(has, label.astype("string"))
    return kinds, label


def _mode(crit: str, counts: np.ndarray, declared: str | None, order: tuple | None, rows, file: str | None) -> str:
    """How criterion ``crit`` is read, from its rows' kinds of label and what was declared; a DataError for what
    cannot be read so. ``rows()`` gives the examples of the criterion's labels (:func:`reading_modes`)."""
    if order is not None:
        return ORDERED
    if counts[TEXT] and counts[NUMBER] and declared != NOMINAL:
        examples = rows()
        numbers, text = examples(NUMBER)[0], examples(TEXT)
        raise DataError(
            f"criterion '{crit}' mixes numbers ({_examples(numbers)}) and text labels "
            f"({_examples(text[0])}: {text[1]:,} row(s)) in its scores",
            file=file, column="score", row=text[2],
            fix=f"declare the criterion nominal to keep every label as a category (--scale '{crit}=nominal'), or "
                "correct the text cells if they are typos of numbers")
    if counts[TEXT] == 0:
        return KEPT
    if declared in (ORDINAL, INTERVAL):
        text = rows()(TEXT)
        raise DataError(
            f"criterion '{crit}' is declared {declared} but holds text labels ({_examples(text[0])}) "
            "and no order was given for them",
            file=file, column="score", row=text[2],
            fix=f"give their order, lowest first (--order '{crit}=LOWEST,...,HIGHEST'), or leave the criterion "
                "nominal")
    return LABELS


def reading_modes(crits: Sequence[str], counts: np.ndarray, scales: Mapping[str, str], orders: Mapping[str, tuple],
                  known: Mapping[str, str], rows, file: str | None) -> tuple[list[str], list[str], list[tuple | None]]:
    """Each criterion's reading mode, scale and order (None without one), in the order of ``crits``; a DataError,
    the one message for each case, for a criterion that cannot be read as declared.

    ``counts[i]`` counts criterion ``i``'s rows of each kind (:data:`BLANK`, :data:`NUMBER`, :data:`TEXT`,
    :data:`CODED`); ``scales`` and ``orders`` are the :func:`declarations`, ``known`` the scales the table says.
    ``rows(i)``, called only for a message, gives a function of a kind of label returning up to :data:`SHOWN` of
    the criterion's distinct labels of that kind, its number of rows and the first one's row number (None where
    rows have no order, as in a database engine). The modes are :data:`NUMBERS`, :data:`ORDERED`, :data:`KEPT`
    and :data:`LABELS`.
    """
    modes: list[str] = []
    scale_of: list[str] = []
    order_of: list[tuple | None] = []
    for i, crit in enumerate(crits):
        declared = scales[crit] if crit in scales else scales.get(ALL, known.get(crit))
        if counts[i, TEXT] == 0 and counts[i, CODED] == 0:
            if crit in orders:
                raise DataError(f"an order was given for criterion '{crit}', whose labels are numbers (ordered "
                                "already)", file=file, column="score",
                                fix=f"drop the order; to treat the numbers as categories declare '{crit}' nominal")
            modes.append(NUMBERS)
            scale_of.append(declared or DEFAULT_SCALE)
            order_of.append(None)
            continue
        order = orders.get(crit)
        if order is not None and declared == NOMINAL:
            raise DataError(f"criterion '{crit}' is declared nominal and given an order", file=file,
                            fix=f"drop the order to keep the labels unordered, or declare '{crit}' ordinal")
        if order is None and declared != NOMINAL:
            order = orders.get(ALL)  # '*' orders the text criteria not declared nominal
        mode = _mode(crit, counts[i], declared, order, lambda i=i: rows(i), file)
        modes.append(mode)
        scale_of.append(declared or (ORDINAL if mode == ORDERED else NOMINAL))
        order_of.append(order if mode == ORDERED else None)
    if ALL in orders and not any(o is not None for o in order_of):
        raise DataError("an order was given for every criterion ('*'), but no criterion holds text labels to "
                        "order", file=file, column="score", fix="drop the order: numbers are ordered already")
    return modes, scale_of, order_of


def read_labels(df: pd.DataFrame, *, file: str = "the file", notes: list[str] | None = None,
                scale: str | Mapping[str, str] | None = None,
                order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None) -> pd.DataFrame:
    """``df`` with its labels read criterion by criterion: ``score`` as floats, and ``category`` and ``scale``
    where a criterion has categories or a declared scale (see the module's docstring for the rules).

    Parameters
    ----------
    df
        A ratings table with canonical names, ``criterion`` filled; ``score`` as the file wrote it. A
        ``category`` and a ``scale`` column (a table evalcore wrote) are read back as they are.
    file
        The name messages give.
    notes
        Receives the notes for the analyst: decimal commas read, labels that look alike.
    scale, order
        The declarations (:func:`declarations`).

    Returns
    -------
    pandas.DataFrame
        ``df`` itself, changed in place. Rows without a label keep an empty ``score`` (and ``category``),
        for validation to leave out and count.

    Examples
    --------
    >>> df = pd.DataFrame({"criterion": ["stance", "stance", "quality", "quality", "len"],
    ...                    "score": ["agree", "Agree ", "ok", "good", "3"]})
    >>> out = read_labels(df, order={"quality": "bad,ok,good"})
    >>> out["category"].tolist()
    ['agree', 'Agree ', 'ok', 'good', <NA>]
    >>> out["score"].tolist(), out["scale"].tolist()
    ([nan, nan, 2.0, 3.0, 3.0], ['nominal', 'nominal', 'ordinal', 'ordinal', 'ordinal'])
    """
    scales, orders = declarations(scale, order)
    crit_codes, crits = factorize(df["criterion"])
    crit_codes, crits = np.asarray(crit_codes), [str(c) for c in crits]
    check_named(scales, orders, crits, file)
    known = file_scales(df, file=file)
    score = df["score"]
    # Numbers only (the usual file) are told by the dtype or by the distinct cells: nothing per row.
    distinct = None if pd.api.types.is_bool_dtype(score) or pd.api.types.is_numeric_dtype(score) else \
        _distinct_kinds(score)
    if CATEGORY not in df.columns and (distinct is None or (distinct[2] != TEXT).all()):
        df["score"] = numeric_column(df, "score", file=file, what="score", fix=SCORE_FIX, notes=notes)
        counts = np.zeros((len(crits), 4), dtype=np.int64)
        modes, scale_of, _ = reading_modes(crits, counts, scales, orders, known, None, file)
        category = None  # no categories, and no column of a million empty cells to say so
    else:
        kinds, label = _row_kinds(df, distinct if distinct is not None else _distinct_kinds(score))
        counts = np.bincount(crit_codes * 4 + kinds, minlength=len(crits) * 4).reshape(-1, 4)
        rows = (lambda i: _examples_of(label[crit_codes == i], kinds[crit_codes == i], df.loc[crit_codes == i]))
        modes, scale_of, order_of = reading_modes(crits, counts, scales, orders, known, rows, file)
        score, category = _read(df, crit_codes, crits, kinds, label, modes, order_of, file, notes)
        df["score"] = score
    category = _nominal_numbers(df["score"], category, crit_codes, modes, scale_of)
    _check_categories(df, crit_codes, crits, category, file, notes)
    return _with_columns(df, crit_codes, scale_of, category)


def _read(df: pd.DataFrame, crit_codes: np.ndarray, crits: Sequence[str], kinds: np.ndarray, label: pd.Series,
          modes: Sequence[str], order_of: Sequence[tuple | None], file: str, notes: list[str] | None,
          ) -> tuple[np.ndarray, pd.Series]:
    """The scores and categories of a table with text labels, by each criterion's mode."""
    mode = np.asarray(modes, dtype=object)[crit_codes]
    filled = kinds != BLANK
    score = np.full(len(df), np.nan)
    numbers = mode == NUMBERS
    if numbers.any():
        part = df if numbers.all() else df.loc[numbers]
        score[numbers] = numeric_column(part, "score", file=file, what="score", fix=SCORE_FIX,
                                        notes=notes).to_numpy(dtype=float)
    kept = (mode == KEPT) & filled
    if kept.any():  # categories with their scores (a table evalcore wrote); a bare number is its own category
        score[kept] = pd.to_numeric(df["score"][kept], errors="coerce").to_numpy(dtype=float)
        bare = kept & (kinds == NUMBER)
        if bare.any():
            label = label.copy()
            label[bare] = [format_number(v) if v == v else pd.NA for v in score[bare]]
    for order in dict.fromkeys(o for o in order_of if o is not None):
        which = np.isin(crit_codes, [i for i, o in enumerate(order_of) if o == order]) & filled
        pos = pd.Index(order).get_indexer(label[which].astype(object))
        if (pos < 0).any():
            _not_in_order(df.loc[which], label[which], pos, crit_codes[which], crits, order, file)
        score[which] = pos + 1
    category = label.where(filled & ~numbers, pd.NA).astype("string")
    return score, category


def _not_in_order(sub: pd.DataFrame, label: pd.Series, pos: np.ndarray, codes: np.ndarray, crits: Sequence[str],
                  order: tuple, file: str) -> None:
    """The message for labels missing from the order given: the first one, with its row, and the fix."""
    missing = pos < 0
    first = int(np.flatnonzero(missing)[0])
    raise not_in_order(crits[codes[first]], pd.unique(label[missing].astype(object)), order, file=file,
                       row=row_of(sub, missing))


def not_in_order(crit: str, labels: Sequence[str], order: Sequence[str], *, file: str | None = None,
                 row: int | None = None) -> DataError:
    """The one message for labels of criterion ``crit`` that are not in the ``order`` given: ``labels[0]`` named
    (with its look-alike in the order, if any), the number of the other ``labels``, and the fix.

    >>> error = not_in_order("quality", ["Good", "great"], ("bad", "ok", "good"))
    >>> print(error.problem)  # doctest: +NORMALIZE_WHITESPACE
    criterion 'quality' has the label 'Good', which is not in the order given (bad, ok, good);
    1 other label(s) are not either
    >>> "it differs from 'good' only in case or spaces" in error.fix
    True
    """
    value = str(labels[0])
    twin = next((o for o in order if o.strip().casefold() == value.strip().casefold()), None)
    hint = (f"; it differs from '{shown(twin)}' only in case or spaces, and labels are never merged: correct the "
            "cell" if twin is not None else "")
    return DataError(
        f"criterion '{crit}' has the label '{shown(value)}', which is not in the order given "
        f"({', '.join(shown(o) for o in order[:SHOWN])}{', ...' if len(order) > SHOWN else ''})"
        + (f"; {len(labels) - 1} other label(s) are not either" if len(labels) > 1 else ""),
        file=file, column="score", row=row,
        fix=f"add every label to the order, lowest first, or correct the cells{hint}")


def _nominal_numbers(score: pd.Series, category: pd.Series | None, crit_codes: np.ndarray, modes: Sequence[str],
                     scale_of: Sequence[str]) -> pd.Series | None:
    """``category`` with the numbers of the criteria declared nominal written as categories."""
    nominal = [i for i, (m, s) in enumerate(zip(modes, scale_of)) if m == NUMBERS and s == NOMINAL]
    if not nominal:
        return category
    rows = np.isin(crit_codes, nominal) & score.notna().to_numpy(bool)
    codes, uniq = pd.factorize(score[rows])
    written = pd.Series([format_number(v) for v in uniq], dtype="string")
    out = category.copy() if category is not None else pd.Series(pd.NA, index=score.index, dtype="string")
    out[rows] = take_text(written, codes, score.index[rows])
    return out


def _check_categories(df: pd.DataFrame, crit_codes: np.ndarray, crits: Sequence[str], category: pd.Series | None,
                      file: str, notes: list[str] | None) -> None:
    """No category holds an invisible character; no criterion has more than :data:`MAX_CATEGORIES`; a note
    for labels that differ only in case or surrounding spaces."""
    if category is None or not category.notna().any():
        return
    codes, uniq = factorize(category)
    codes = np.asarray(codes)
    u = pd.Series(uniq.array, dtype="string")
    bad = u.str.contains(INVISIBLE).fillna(False).to_numpy(bool)
    if bad.any():
        hit = np.isin(codes, np.flatnonzero(bad))
        raise DataError(f"{int(hit.sum())} label(s) hold an invisible control character: '{shown(u[bad].iloc[0])}' "
                        "would count as another category than the one it looks like",
                        file=file, column="score", row=row_of(df, hit),
                        fix="delete the character (it comes from a damaged export or a binary file), or export "
                            "the file again")
    has = codes >= 0
    pairs = distinct_pairs(crit_codes[has], len(crits), codes[has], len(uniq))
    per_crit = np.bincount(pairs // len(uniq), minlength=len(crits))
    if per_crit.max(initial=0) > MAX_CATEGORIES:
        i = int(np.argmax(per_crit))
        raise too_many_categories(crits[i], int(per_crit[i]), u[pairs[pairs // len(uniq) == i][:3] % len(uniq)],
                                  file=file)
    if notes is not None:
        notes.extend(_look_alike_notes(pairs, len(uniq), u, crits, file))


def too_many_categories(crit: str, n: int, labels: Iterable[str], *, file: str | None = None) -> DataError:
    """The one message for a criterion with ``n`` (more than :data:`MAX_CATEGORIES`) distinct labels, some of
    them ``labels``."""
    listed = ", ".join(f"'{shown(v)}'" for v in list(labels)[:3])
    return DataError(f"criterion '{crit}' has {n:,} distinct labels ({listed}, ...): more than "
                     f"{MAX_CATEGORIES:,} categories are free text or ids, not ratings",
                     file=file, column="score",
                     fix="map the column that holds the ratings to score; for numbers declared nominal, leave "
                         "them ordinal or declare them interval")


def near_duplicates(labels: Iterable[str]) -> list[list[str]]:
    """Groups of labels that differ only in case or in spaces around them, in order of first appearance.

    They are reported, never merged: which spelling is right, and whether they are one category, is the
    analyst's call.

    >>> near_duplicates(["Yes", "no", "yes ", "YES", "No", "maybe"])
    [['Yes', 'yes ', 'YES'], ['no', 'No']]
    """
    groups: dict[str, list[str]] = {}
    for v in dict.fromkeys(str(x) for x in labels):
        groups.setdefault(v.strip().casefold(), []).append(v)
    return [g for g in groups.values() if len(g) > 1]


def _look_alike_notes(pairs: np.ndarray, n_labels: int, uniq: pd.Series, crits: Sequence[str],
                      file: str) -> list[str]:
    """One note per criterion whose categories include look-alikes (:func:`near_duplicates`)."""
    notes = []
    by_crit = pd.Series(pairs % n_labels).groupby(pairs // n_labels, sort=True)
    for i, labels in by_crit:
        groups = near_duplicates(uniq.iloc[labels.to_numpy()])
        if not groups:
            continue
        listed = "; ".join(" / ".join(f"'{shown(v)}'" for v in g[:SHOWN]) for g in groups[:3])
        more = f"; and {len(groups) - 3} more such group(s)" if len(groups) > 3 else ""
        notes.append(f"{file}, criterion '{crits[int(i)]}': labels that differ only in case or in spaces around "
                     f"them are kept as different categories: {listed}{more}. If they mean the same, correct them "
                     "in the file.")
    return notes


def _with_columns(df: pd.DataFrame, crit_codes: np.ndarray, scale_of: Sequence[str],
                  category: pd.Series | None) -> pd.DataFrame:
    """``df`` with the ``category`` and ``scale`` columns a table needs: both when a criterion has categories,
    ``scale`` alone when a scale was declared, neither for numbers on the default scale (as before scales)."""
    has_categories = category is not None and bool(category.notna().any())
    if has_categories or any(s != DEFAULT_SCALE for s in scale_of):
        df[SCALE] = pd.Series(np.asarray(scale_of, dtype=object)[crit_codes], index=df.index, dtype="string")
    elif SCALE in df.columns:
        df = df.drop(columns=SCALE)
    if has_categories:
        df[CATEGORY] = category
    elif CATEGORY in df.columns:
        df = df.drop(columns=CATEGORY)
    return df


#: The columns of :func:`scale_report`.
REPORT_COLUMNS = ("criterion", "scale", "labels", "n_categories", "categories", "near_duplicates")


def scale_report(ratings: pd.DataFrame) -> pd.DataFrame:
    """Each criterion's scale and labels, as ``evalcore validate`` and the app's summary show them.

    Returns
    -------
    pandas.DataFrame
        One row per criterion, in order of first appearance: ``criterion``, ``scale``, ``labels``
        (``'numbers'``, ``'categories'``, or ``'ordered categories'`` for text in a given order),
        ``n_categories`` (None for numbers), ``categories`` (the first :data:`SHOWN`: in their order, or the
        most frequent first) and ``near_duplicates`` (:func:`near_duplicates` of all its categories).

    Examples
    --------
    >>> frame = pd.DataFrame({"criterion": ["stance"] * 4 + ["len"], "score": [None] * 4 + [3.0],
    ...                       "category": ["agree", "Agree", "agree", "no", None],
    ...                       "scale": ["nominal"] * 4 + ["ordinal"]})
    >>> report = scale_report(frame)
    >>> report.iloc[0].tolist()
    ['stance', 'nominal', 'categories', 3, ['agree', 'Agree', 'no'], [['agree', 'Agree']]]
    >>> report.iloc[1].tolist()
    ['len', 'ordinal', 'numbers', None, [], []]
    """
    scales = scale_by_criterion(ratings)
    counts: dict[str, pd.DataFrame] = {}
    if CATEGORY in ratings.columns:
        has = ratings[CATEGORY].notna()
        sub = pd.DataFrame({"c": ratings["criterion"][has].astype(str), "label": ratings[CATEGORY][has].astype(str),
                            "pos": ratings["score"][has]})
        grouped = sub.groupby(["c", "label"], sort=False).agg(n=("pos", "size"), pos=("pos", "first")).reset_index()
        counts = {c: g for c, g in grouped.groupby("c", sort=False)}
    rows = []
    for crit, scale in scales.items():
        g = counts.get(crit)
        if g is None:
            rows.append((crit, scale, "numbers", None, [], []))
            continue
        ordered = scale != NOMINAL and g["pos"].notna().all()
        g = g.sort_values("pos", kind="stable") if ordered else g.sort_values("n", ascending=False, kind="stable")
        rows.append((crit, scale, "ordered categories" if ordered else "categories", len(g),
                     g["label"].head(SHOWN).tolist(), near_duplicates(g["label"])))
    out = pd.DataFrame({c: pd.Series([r[k] for r in rows], dtype=object) for k, c in enumerate(REPORT_COLUMNS)})
    return out.astype({"criterion": str, "scale": str, "labels": str})


#: The columns of :func:`label_kinds`.
KIND_COLUMNS = ("criterion", "rows", "labels", "n_text", "text_labels")


def label_kinds(long: pd.DataFrame, *, listed: int = 200) -> pd.DataFrame:
    """What each criterion's labels are in a mapped table not yet validated: the app's scale choices.

    Parameters
    ----------
    long
        A ratings table with canonical names (``score`` as the file wrote it, ``criterion`` optional).
    listed
        How many distinct text labels to list per criterion.

    Returns
    -------
    pandas.DataFrame
        One row per criterion, in order of first appearance: ``criterion``, ``rows``, ``labels``
        (``'numbers'``, ``'text'``, ``'mixed'`` or ``'empty'``), ``n_text`` (distinct text labels) and
        ``text_labels`` (the first ``listed`` of them, as written, in order of first appearance).

    Examples
    --------
    >>> long = pd.DataFrame({"criterion": ["a", "a", "b", "b"], "score": ["yes", "no", "1", "NA"]})
    >>> label_kinds(long)[["criterion", "labels", "text_labels"]].values.tolist()
    [['a', 'text', ['yes', 'no']], ['b', 'numbers', []]]
    """
    if "score" not in long.columns or long.empty:
        return pd.DataFrame(columns=list(KIND_COLUMNS))
    crit = strip_text(long["criterion"]).fillna("overall") if "criterion" in long.columns else \
        pd.Series("overall", index=long.index, dtype="string")
    crit_codes, crits = pd.factorize(crit.mask(crit == "", "overall"))
    codes, u, kind_u = _distinct_kinds(long["score"])
    kind_u = np.where(u.isin(MISSING_WORDS).fillna(False).to_numpy(bool), BLANK, kind_u)
    has = codes >= 0
    # Distinct (criterion, label) pairs, in order of first appearance: a million rows, a few labels.
    pairs = pd.unique(crit_codes[has].astype(np.int64) * len(u) + codes[has])
    pc, pv = pairs // max(len(u), 1), pairs % max(len(u), 1)
    n_rows = np.bincount(crit_codes, minlength=len(crits))
    rows = []
    for i, c in enumerate(crits):
        labels_i = pv[pc == i]
        text = u.iloc[labels_i[kind_u[labels_i] == TEXT]]
        numbers = bool((kind_u[labels_i] == NUMBER).any())
        labels = "mixed" if len(text) and numbers else "text" if len(text) else "numbers" if numbers else "empty"
        rows.append((str(c), int(n_rows[i]), labels, len(text), [str(v) for v in text.iloc[:listed]]))
    return pd.DataFrame({c: pd.Series([r[k] for r in rows], dtype=object) for k, c in enumerate(KIND_COLUMNS)})
