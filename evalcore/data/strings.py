"""Cells of a table being imported: string columns seen through their codes, and the row numbers kept for messages.

Mapping, wide-to-long, validation and the summary look at every string column through its codes
(:mod:`evalcore.data.codes`: one factorisation per column within a ``shared_codes()`` block), so that a
string operation runs on a column's few distinct values rather than on its million rows. The helpers here
do that, and say which cells are empty, which words mean "no value" and which columns hold names.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .codes import factorize, remember
from .files import NA_VALUES

ROW = "__row__"  # spreadsheet row number of each record, kept through reshaping for messages

#: The columns that name things (items, raters, criteria, systems): a cell is missing there only when it is
#: empty, and ``NA`` or ``null`` is a name like any other.
NAME_COLUMNS = ("item_id", "rater", "criterion", "system_a", "system_b", "system", "input_id")
#: Words that mean "no value" in a cell outside :data:`NAME_COLUMNS` (the readers keep them as text).
MISSING_WORDS = tuple(w for w in NA_VALUES if w)


#: Characters nobody sees in a name or a label (C0 controls but tab and line breaks; DEL): a NUL byte in a rater's
#: name would make a second rater that looks like the first.
INVISIBLE = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def show_invisible(value: str) -> str:
    r"""``value`` with each :data:`INVISIBLE` character written as its escape, so that a message shows it.

    >>> show_invisible("yes\x00")
    'yes\\x00'
    """
    return re.sub(INVISIBLE, lambda m: f"\\x{ord(m.group(0)):02x}", value)


def distinct_pairs(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> np.ndarray:
    """The distinct ``a * nb + b`` of codes ``a`` in [0, na) and ``b`` in [0, nb): counted in a table when it
    is small, hashed otherwise."""
    pair = a.astype(np.int64) * nb + b
    if na * nb <= 4 * len(pair) + 1024:
        return np.flatnonzero(np.bincount(pair, minlength=na * nb))
    return pd.unique(pair)


def is_text(s: pd.Series) -> bool:
    """A string column (CSV/TSV cells): its distinct values stand for it in string operations.

    Object columns (JSON, Excel) are left to the element-wise path: factorising would merge
    values such as ``1`` and ``True`` whose text differs.
    """
    return isinstance(s.dtype, pd.StringDtype)


def by_code(values: np.ndarray, codes: np.ndarray, missing: object) -> np.ndarray:
    """``values[codes]`` with ``missing`` where the code is -1."""
    return np.append(values, np.asarray([missing], dtype=values.dtype))[codes]


def take_text(uniques: pd.Series, codes: np.ndarray, index: pd.Index) -> pd.Series:
    """The column whose row i is ``uniques[codes[i]]`` (missing for -1), with ``uniques``'s dtype."""
    return pd.Series(uniques.array.take(codes, allow_fill=True), index=index, name=uniques.name)


def strip_text(s: pd.Series) -> pd.Series:
    """``s.astype("string").str.strip()``, computed on the distinct values of a string column."""
    if not is_text(s):
        return s.astype("string").str.strip()
    codes, uniq = factorize(s)
    u = pd.Series(uniq.array).astype("string")
    stripped = u.str.strip()
    if bool((stripped == u).all()):  # nothing to strip (the usual case): the column as it is
        return remember(s.astype("string"), codes, pd.Index(stripped.array))
    out = take_text(stripped, codes, s.index).rename(s.name)
    new, merged = pd.factorize(stripped)  # ' a' and 'a' are one value now
    return remember(out, by_code(new.astype(codes.dtype), codes, -1), merged)


def row_of(frame: pd.DataFrame, mask: pd.Series) -> int | None:
    """The row number users see for the first row where ``mask`` holds (from :data:`ROW` when the frame has it),
    or None when it holds nowhere."""
    idx = np.flatnonzero(np.asarray(mask, dtype=bool))
    if len(idx) == 0:
        return None
    if ROW in frame.columns:
        return int(frame[ROW].iloc[idx[0]])
    return int(idx[0]) + 2


def is_blank(s: pd.Series) -> pd.Series:
    """Empty cells: missing, or only whitespace."""
    if not is_text(s):
        return s.isna() | (s.astype("string").str.strip() == "").fillna(True)
    codes, uniq = factorize(s)
    blank = (pd.Series(uniq.array).astype("string").str.strip() == "").fillna(True).to_numpy(dtype=bool)
    return pd.Series(by_code(blank, codes, True), index=s.index)


def distinct_text(s: pd.Series) -> pd.Series:
    """The distinct non-missing values of a text column, as strings, in order of first appearance."""
    if is_text(s):
        return pd.Series(factorize(s)[1].array, dtype="string")
    return pd.Series(pd.unique(s.astype("string").dropna()), dtype="string")

