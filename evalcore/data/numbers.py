"""Numbers written as text: the one decimal-comma rule, and a column read as floats with messages.

Validation reads every numeric column (scores, samples, probabilities) through :func:`numeric_column`;
the crowd-kit preset reads its labels by :func:`decimal_comma`, so that both agree on ``'4,5'``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import DataError
from .codes import factorize
from .strings import by_code, is_blank, is_text, row_of

_DECIMAL_COMMA = r"[+-]?\d+,\d+"
_THOUSANDS = r"[+-]?[1-9]\d{0,2},\d{3}"


def decimal_comma(values: Iterable[object]) -> bool:
    """Whether text numbers use a decimal comma: the one rule for every numeric column.

    Yes when some value has a comma, none has a point, and every value with a comma is digits,
    one comma, digits (``'4,0'``, ``'-3,25'``): then ``','`` is read as ``'.'`` in every value,
    whatever the mix with plain integers. No when any value uses a point (``'1.5'`` beside
    ``'1,5'`` is ambiguous, and is refused cell by cell). Values that all look like a thousands
    separator (``'1,000'``, ``'12,500'``: 1-3 digits, not starting with 0, a comma, three digits)
    could mean either, and raise :class:`ValueError` for the caller to explain.

    >>> decimal_comma(["4,0", "3,5", "4"]), decimal_comma(["4", "3.5"]), decimal_comma(["0,125", "2"])
    (True, False, True)
    >>> decimal_comma(["1,5", "2.5"]), decimal_comma(["1,000,000"])
    (False, False)
    >>> decimal_comma(["1,000", "2,500"])
    Traceback (most recent call last):
    ...
    ValueError: 1,000
    """
    uniq = pd.Series(pd.unique(pd.Series(list(values), dtype="string").str.strip().dropna()), dtype="string")
    comma = uniq[uniq.str.contains(",", regex=False)]
    if comma.empty or uniq.str.contains(".", regex=False).any() or not comma.str.fullmatch(_DECIMAL_COMMA).all():
        return False
    if comma.str.fullmatch(_THOUSANDS).all():
        raise ValueError(str(comma.iloc[0]))
    return True


def _numeric_text(raw: pd.Series, *, file: str, col: str, notes: list[str] | None) -> pd.Series | None:
    """A string column as floats by :func:`decimal_comma`'s rule, computed on its distinct values.

    None when a value is not a number or the comma is ambiguous: the element-wise path in
    :func:`numeric_column` then finds the row and words the message.
    """
    codes, uniq = factorize(raw)
    text = pd.Series(uniq.array).astype("string").str.strip()
    try:
        comma = decimal_comma(pd.unique(text.dropna()))
    except ValueError:
        return None
    if comma:
        commas = text[text.str.contains(",", regex=False).fillna(False)]
        plain = commas[~commas.str.fullmatch(_THOUSANDS)]
        example = (plain if len(plain) else commas).iloc[0]
        text = text.str.replace(",", ".", regex=False)
    values = pd.to_numeric(text, errors="coerce").astype(float).to_numpy()
    blank = (text.str.strip() == "").fillna(True).to_numpy(dtype=bool)
    if (np.isnan(values) & ~blank).any():
        return None
    if comma and notes is not None:
        notes.append(f"{file}, column '{col}': decimal commas were read as decimal points "
                     f"('{example}' is {example.replace(',', '.')}).")
    return pd.Series(by_code(values, codes, np.nan), index=raw.index, name=raw.name)


def numeric_column(
    frame: pd.DataFrame, col: str, *, file: str, what: str, fix: str, allow_missing: bool = True,
    labels_fix: str | None = None, notes: list[str] | None = None,
) -> pd.Series:
    """``frame[col]`` as floats (empty cells NaN), text read by :func:`decimal_comma`'s rule.

    With ``labels_fix``, a column in which no value is a number gets one message saying it holds
    text labels, with that fix; ``notes`` receives a note when decimal commas were read.
    """
    raw = frame[col]
    if pd.api.types.is_bool_dtype(raw):
        return raw.astype(float)
    fast = _numeric_text(raw, file=file, col=col, notes=notes) if is_text(raw) else None
    if fast is not None:
        out = fast
    elif pd.api.types.is_numeric_dtype(raw):
        out = raw.astype(float)
    else:
        text = raw.astype("string").str.strip()
        try:
            comma = decimal_comma(pd.unique(text.dropna()))
        except ValueError as e:
            raise DataError(
                f"{what} holds '{e}', which could use the comma as a thousands separator or as a decimal comma",
                file=file, column=col, row=row_of(frame, (text == str(e)).fillna(False)),
                fix="write plain numbers: 1000 for a thousand, 1.0 or 1,0 for one",
            ) from None
        if comma:
            if notes is not None:
                commas = text[text.str.contains(",", regex=False).fillna(False)]
                plain = commas[~commas.str.fullmatch(_THOUSANDS)]
                example = (plain if len(plain) else commas).iloc[0]
                notes.append(f"{file}, column '{col}': decimal commas were read as decimal points "
                             f"('{example}' is {example.replace(',', '.')}).")
            text = text.str.replace(",", ".", regex=False)
        out = pd.to_numeric(text, errors="coerce").astype(float)
        bad = out.isna() & ~is_blank(raw)
        if bad.any() and labels_fix is not None and bad.sum() == (~is_blank(raw)).sum():
            levels = ", ".join(f"'{v}'" for v in pd.unique(text[bad])[:5])
            raise DataError(f"{what} holds text labels ({levels}), not numbers", file=file, column=col,
                            row=row_of(frame, bad), fix=labels_fix)
        if bad.any():
            first = np.flatnonzero(bad.to_numpy())[0]
            value = str(raw.iloc[first])[:40]
            n_bad = int(bad.sum())
            raise DataError(
                f"{what} must be a number but is '{value}'"
                + (f" ({n_bad} such rows)" if n_bad > 1 else ""),
                file=file,
                column=col,
                row=row_of(frame, bad),
                fix=fix,
            )
    if not np.isfinite(out.dropna()).all():
        bad = out.notna() & ~np.isfinite(out.fillna(0))
        raise DataError(
            f"{what} must be a finite number", file=file, column=col, row=row_of(frame, bad),
            fix="replace infinite values with real numbers or leave the cell empty",
        )
    if not allow_missing and out.isna().any():
        raise DataError(
            f"{what} is empty", file=file, column=col, row=row_of(frame, out.isna()), fix=fix
        )
    return out

