"""What every preset shares: the result and registry types, and the helpers that read files.

The helpers find the files to read (a folder is walked), read JSON and tables, parse ids and
labels, and put a table's canonical columns first. Every problem raises
:class:`evalcore.errors.DataError` naming the file and the fix.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from ... import columns
from ...errors import DataError
from .. import io
from ..strings import MISSING_WORDS

TABULAR_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq", ".xlsx", ".xls")


# ---------------------------------------------------------------------------------------
# Public types
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PresetResult:
    """What a preset read.

    Attributes
    ----------
    table
        ``columns.RATINGS`` or ``columns.COMPARISONS``.
    frame
        The long table with canonical column names (canonical columns first, in their
        documented order, then extra segment columns). ``item_id`` and ``rater`` are
        strings, ``rater_kind`` is ``'human'`` or ``'judge'``, ``score`` is float,
        ``winner`` is ``'a'``, ``'b'`` or ``'tie'`` and ``swapped`` is bool.
    source
        A human-readable description of what was read.
    notes
        Things the analyst should know (left-out verdicts, classification guesses...).
    """

    table: str
    frame: pd.DataFrame
    source: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Preset:
    """A known file layout and the function that reads it.

    Attributes
    ----------
    name
        Key in :data:`PRESETS`, e.g. ``"llmbar"``.
    title
        Short name to show, e.g. ``"LLMBar evaluator results"``.
    description
        One paragraph: where the format comes from and what it maps to.
    table
        The table it produces (``ratings`` or ``comparisons``).
    accepts
        What to give it ("file(s) or folder" and which files).
    read
        ``read(paths, **options) -> PresetResult``; options are keyword-only.
    """

    name: str
    title: str
    description: str
    table: str
    accepts: str
    read: Callable[..., PresetResult]

    @property
    def options(self) -> tuple[str, ...]:
        """Names of the keyword-only options ``read`` accepts."""
        sig = inspect.signature(self.read)
        return tuple(p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY)


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------


def as_path_list(paths: Any) -> list[Path]:
    """``paths`` (one path or several) as a list of :class:`Path`; a message for anything else."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    try:
        items = list(paths)
    except TypeError:
        raise DataError(
            f"expected a file, a folder or a list of them, got {type(paths).__name__}",
            fix="pass the paths of the files or folders to read",
        ) from None
    if not items:
        raise DataError("no file was given", fix="choose at least one file or folder")
    if any(not isinstance(p, (str, Path)) or not str(p).strip() for p in items):
        raise DataError("a path is empty or not text", fix="pass the paths of the files or folders to read")
    return [Path(p) for p in items]


def expand(paths: Any) -> list[tuple[Path, bool]]:
    """Files to read: ``(path, given_explicitly)``; folders are walked (hidden files skipped)."""
    out: list[tuple[Path, bool]] = []
    for p in as_path_list(paths):
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            out.extend((f, False) for f in found)
        elif p.is_file():
            out.append((p, True))
        else:
            raise DataError("file or folder not found", file=str(p), fix="check the path, or upload the file again")
    return out


def describe_paths(paths: Any) -> str:
    """``paths`` as text for a message."""
    try:
        return ", ".join(str(p) for p in as_path_list(paths))
    except DataError:
        return str(paths)


def load_json(path: Path) -> Any:
    """The parsed JSON of ``path``, read by :func:`evalcore.data.io.load_json` (size limit, encodings, and its
    messages for invalid or too deeply nested JSON), naming the file as given."""
    return io.load_json(path, name=str(path))


def read_table(path: Path, *, names: Iterable[str] = ()) -> pd.DataFrame:
    """One table file (CSV, TSV, JSON Lines, JSON records, Parquet, Excel) read by
    :func:`evalcore.data.io.read_table`: its formats, encodings, delimiters, size limit and messages.

    The reader keeps every cell as written, so that a worker or a task called ``NA`` keeps its name. As
    validation does, a word such as ``NA``, ``null`` or ``NaN`` (:data:`~evalcore.data.strings.MISSING_WORDS`)
    is a missing value in every other column (a label, a segment): ``names`` lists the columns that hold
    names (matched case-insensitively, as :func:`find_column` finds them).
    """
    frame = io.read_table(path, name=str(path))
    # The reader's row bookkeeping (first row, skipped rows, notes) is about this file, not the preset's table.
    frame.attrs = {}
    keep = {n.lower() for n in names}
    for col in frame.columns:
        s = frame[col]
        if col.lower() in keep or pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            continue
        words = s.isin(MISSING_WORDS).to_numpy(dtype=bool)
        if words.any():
            frame[col] = s.mask(words)
    return frame


def find_column(frame: pd.DataFrame, *names: str) -> str | None:
    """The first column of ``frame`` named like one of ``names`` (case-insensitive), or None."""
    lower = {c.lower(): c for c in frame.columns}
    for n in names:
        if n.lower() in lower:
            return lower[n.lower()]
    return None


def id_text(series: pd.Series) -> pd.Series:
    """Ids as text; integral floats (from missing-value upcasting) lose their '.0'."""
    def one(v: Any) -> Any:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        if isinstance(v, (bytes, bytearray)):
            return v.decode("utf-8", "replace").strip()
        return str(v).strip()

    return series.map(one).astype(object)


def is_missing(v: Any) -> bool:
    """Whether a cell is empty: None, NaN, blank text or a pandas missing value."""
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, str) and v.strip() == "":
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def label_int(v: Any) -> int | None:
    """An integer label from 0, 1.0, '2', ' 1 '; None when it is not an integral number."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return int(v) if float(v).is_integer() else None
    if isinstance(v, str):
        s = v.strip()
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def plural(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and the word, in the plural unless ``n`` is 1: '1 file', '2,000 files'."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def were(n: int) -> str:
    """'was' or 'were' for ``n`` things."""
    return "was" if n == 1 else "were"


def invalid_note(n: int, judge: str, *, counted_wrong_by: str = "") -> str:
    """The note for ``n`` unparseable outputs of ``judge`` kept as rows marked ``invalid``.

    >>> invalid_note(2, "gpt", counted_wrong_by="the authors").endswith("(--invalid wrong), as the authors do.")
    True
    """
    return (f"{plural(n, 'unparseable verdict')} of {judge} {were(n)} kept as rows marked invalid (winner empty): "
            "win rates treat them as missing; judge accuracy leaves them out by default, or counts them as wrong "
            "(--invalid wrong)" + (f", as {counted_wrong_by} do" if counted_wrong_by else "") + ".")


def short_list(names: Iterable[str], limit: int = 12) -> str:
    """Up to ``limit`` names joined by commas, then 'and N more'."""
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def finish(rows: pd.DataFrame, table: str) -> pd.DataFrame:
    """Canonical columns first (documented order), then the extra segment columns."""
    canonical = [c for c in columns.column_names(table) if c in rows.columns]
    extra = [c for c in rows.columns if c not in canonical]
    frame = rows[canonical + extra].reset_index(drop=True)
    for c in ("item_id", "rater"):
        if c in frame.columns:
            frame[c] = frame[c].astype(str)
    for c in ("swapped", "invalid"):
        if c in frame.columns:
            frame[c] = frame[c].astype(bool)
    for c in ("score_a", "score_b"):
        if c in frame.columns:
            frame[c] = frame[c].astype(float)
    return frame


def tabular_files(paths: Any, fix: str) -> list[Path]:
    """The table files among ``paths`` (a folder's ``.txt`` files are skipped; a given one is read)."""
    files = []
    for path, explicit in expand(paths):
        if path.suffix.lower() in TABULAR_SUFFIXES and path.suffix.lower() != ".txt":
            files.append(path)
        elif explicit:
            if path.suffix.lower() == ".txt":
                files.append(path)
            else:
                raise DataError(f"has an unsupported extension '{path.suffix or '(none)'}'", file=str(path),
                                fix="save the table as CSV, TSV, JSON Lines, Parquet or Excel")
    if not files:
        raise DataError("no table file (CSV, TSV, JSON Lines, Parquet, Excel) was found", file=describe_paths(paths), fix=fix)
    return files
