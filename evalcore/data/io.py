"""Readers for the file formats analysts bring: CSV, TSV, JSON Lines, JSON, Parquet, Excel.

:func:`read_table` takes a path or the bytes of an upload and returns a DataFrame with
the file's own column names, every cell as it was (text columns stay text, so ids such
as ``007`` keep their zeros). It detects the format from the content as well as the
name, the text encoding (UTF-8, UTF-8 with BOM, UTF-16, Latin-1/cp1252) and the
delimiter. Files compressed with gzip, zstd or bzip2 (``.csv.gz``, ``.tsv.zst``,
``.parquet.bz2``, ...) are decompressed first, by their first bytes as well as their name,
within the same size limit. Clean UTF-8 CSV/TSV is parsed by :mod:`pyarrow.csv` (typed,
multi-threaded); anything unusual (other encodings, blank or ragged lines, an odd header)
falls back to the :func:`pandas.read_csv` path, which gives the same frame and the messages.
Anything wrong raises :class:`~evalcore.errors.DataError` with the fix.
"""

from __future__ import annotations

import io as _io
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError
from . import codes
# The byte-level half of reading (size limit, decompression, format, encoding, delimiter) lives in .files,
# which imports no pandas; import those names from there.
from .files import (
    DELIMITER_NAMES, DELIMITERS, arrow_csv, decode_text, header_fields, normalize_delimiter, read_bytes,
    sniff_delimiter, sniff_plain, take_prefetched,
)

#: What a reader takes as a missing cell: only an empty one. Words such as ``NA`` or ``null`` (:data:`NA_VALUES`)
#: stay text, for validation to decide by column: missing in a score, a name in a rater or item column.
CELL_NA = [""]


def _wrong_delimiter(name: str, sep: str, actual: str, header: str) -> DataError:
    return DataError(
        f"every row landed in one column ('{header[:40]}'): the file is separated by "
        f"{DELIMITER_NAMES[actual]}, not {DELIMITER_NAMES.get(sep, repr(sep))}",
        file=name,
        fix=f"read it with delimiter {actual!r} (CLI: --delimiter '{actual}') or leave the "
            "delimiter to be detected",
    )


def _skip_blank_head(text: str) -> tuple[str, int]:
    """``text`` without the blank lines before the header, and how many there were."""
    # Skip blank lines before the header, as a spreadsheet would show them as empty rows.
    lead = 0
    while True:
        line, nl, rest = text.partition("\n")
        if not nl or line.strip():
            break
        text, lead = rest, lead + 1
    return text, lead


def _parse_delimited(text: str, name: str, sep: str, lead: int) -> pd.DataFrame:
    """``pandas.read_csv`` of ``text`` (every cell as text), its parse errors as messages naming the row."""
    try:
        return pd.read_csv(
            _io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=CELL_NA,
            skipinitialspace=False, engine="c", skip_blank_lines=False,
        )
    except pd.errors.EmptyDataError:
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments") from None
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
        if m:
            raise DataError(
                f"has {m.group(3)} fields where the header has {m.group(1)}",
                file=name, row=int(m.group(2)) + lead,
                fix=f"put quotes around values that contain {DELIMITER_NAMES.get(sep, repr(sep))}, "
                    "or check that every row has as many fields as the header",
            ) from None
        m = re.search(r"EOF inside string starting at row (\d+)", msg)
        if m:
            raise DataError(
                "has a quote (\") that is opened but never closed", file=name, row=int(m.group(1)) + 1 + lead,
                fix='close the quote, or write a quote inside a quoted value as two quotes ("")',
            ) from None
        raise DataError(f"could not be read as a delimited text file ({msg.splitlines()[0]})",
                        file=name, fix="check the quoting and the delimiter") from None


def _extra_fields(frame: pd.DataFrame, text: str, name: str, sep: str, header: list[str],
                  lead: int) -> pd.DataFrame:
    """The frame when rows have more fields than the header: re-read when only a trailing delimiter
    is extra, a message naming the first long row otherwise."""
    # The rows have more fields than the header: pandas would silently take the first
    # field(s) as the index and shift every value one column to the left.
    extra = frame.index.nlevels
    last = frame.iloc[:, -1] if extra == 1 else None
    if last is not None and last.isna().all():
        # Only an empty field at the end of each row (a trailing delimiter): drop it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            return pd.read_csv(
                _io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=CELL_NA,
                skipinitialspace=False, engine="c", skip_blank_lines=False, index_col=False,
            )
    full = frame.iloc[:, -1].notna().to_numpy() if last is not None else np.ones(len(frame), bool)
    pos = int(np.flatnonzero(full)[0]) if full.any() else 0
    raise DataError(
        f"has {len(header) + extra} fields where the header has {len(header)}",
        file=name, row=pos + 2 + lead,
        fix=f"put quotes around values that contain {DELIMITER_NAMES.get(sep, repr(sep))}, or add the "
            "missing column names to the header",
    )


#: A string column as :func:`pandas.read_csv` with ``dtype=str`` makes it (pyarrow-backed, NaN for missing).
_STR = pd.StringDtype("pyarrow", na_value=np.nan)
_UNSET = object()  # _arrow_delimited's ``parsed`` when the file has not been parsed yet


def _arrow_delimited(data: bytes, name: str, fmt: str, delimiter: str | None,
                     parsed: object = _UNSET) -> pd.DataFrame | None:
    """The frame :func:`_read_delimited` would return, parsed by :func:`~evalcore.data.files.arrow_csv`;
    None when that path leaves the file to pandas. ``parsed`` is its result when a prefetch already
    ran it. Columns factorised by the prefetch are remembered for validation (:mod:`.codes`)."""
    if parsed is _UNSET:
        parsed = arrow_csv(data, name, fmt, delimiter)
    if parsed is None:
        return None
    import pyarrow as pa

    frame = parsed.table.to_pandas(types_mapper=lambda t: _STR if t == pa.large_string() else None)
    rows = np.arange(len(frame)) + 2
    if parsed.keep is not None:
        frame, rows = frame.loc[parsed.keep].reset_index(drop=True), rows[parsed.keep]
    frame.columns = parsed.names
    for col, known in zip(parsed.names, parsed.codes or ()):
        if known is not None:
            codes.remember(frame[col], known[0], pd.Index(pd.array(known[1], dtype=_STR)))
    # Set last: every frame[col] above would deep-copy the attrs, a million row numbers each time.
    frame.attrs["row_numbers"] = rows
    return frame


def _read_delimited(data: bytes, name: str, fmt: str, delimiter: str | None,
                    parsed: object = _UNSET) -> tuple[pd.DataFrame, list[str]]:
    fast = _arrow_delimited(data, name, fmt, delimiter, parsed)
    if fast is not None:
        return fast, []
    text = decode_text(data, name)
    notes: list[str] = []
    if not text.strip():
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments")
    text = text.lstrip("\ufeff")
    delimiter = normalize_delimiter(delimiter, name=name)
    preferred = "\t" if fmt == "tsv" else ","
    sniffed = sniff_delimiter(text, preferred=preferred)
    sep = delimiter or sniffed or preferred
    if delimiter is None and sniffed and sniffed != preferred and fmt == "tsv":
        notes.append(f"{name} is separated by {DELIMITER_NAMES[sniffed]}, not tabs; it was read that way.")
    text, lead = _skip_blank_head(text)
    header = header_fields(text, sep)
    if delimiter is not None and len(header) <= 1 and sniffed and sniffed != sep:
        raise _wrong_delimiter(name, sep, sniffed, header[0] if header else "")
    frame = _parse_delimited(text, name, sep, lead)
    if frame.shape[1] == 1:
        head = str(frame.columns[0])
        others = [d for d in DELIMITERS if d != sep and d in head]
        if others:
            raise _wrong_delimiter(name, sep, others[0], head)
    if not isinstance(frame.index, pd.RangeIndex):
        frame = _extra_fields(frame, text, name, sep, header, lead)
    names = [h.strip() for h in header]
    if len(names) == frame.shape[1]:
        seen: set[str] = set()
        for h in names:
            if h and h in seen:
                raise DataError("two columns have the same name", file=name, column=h, row=1 + lead,
                                fix="rename one of them")
            seen.add(h)
    # Blank lines (and rows of empty fields) are not judgments: drop them, keeping the
    # row numbers a spreadsheet shows for the others.
    rows = np.arange(len(frame)) + 2 + lead
    keep = frame.notna().any(axis=1).to_numpy()
    if not keep.all():
        frame, rows = frame.loc[keep], rows[keep]
    if frame.empty:
        raise DataError("has a header but no data rows", file=name,
                        fix="add the judgments below the header row, or choose the full export")
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = _drop_empty_unnamed(frame)
    frame = frame.reset_index(drop=True)
    frame.attrs["row_numbers"] = rows
    return frame, notes


def _drop_empty_unnamed(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop columns without a header and without data (a trailing delimiter on every line)."""
    drop = [c for c in frame.columns if re.fullmatch(r"Unnamed: \d+", str(c)) and frame[c].isna().all()]
    return frame.drop(columns=drop) if drop else frame


def _json_kind(value: object) -> str:
    """'a number', 'a list', ... for messages about JSON values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _records_frame(records: list, name: str, *, line_numbers: list[int] | None = None) -> pd.DataFrame:
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            where = line_numbers[i] if line_numbers else i + 1
            raise DataError(
                f"record {where} is {_json_kind(r)}, not an object with named fields",
                file=name, row=where,
                fix='make every record an object such as {"item_id": "q1", "rater": "gpt-4", "score": 3}',
            )
    if not records:
        raise DataError("holds no records", file=name, fix="export at least one judgment")
    frame = pd.DataFrame.from_records(records)
    for col in frame.columns:
        if frame[col].map(lambda v: isinstance(v, (dict, list))).any():
            frame[col] = frame[col].map(lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v)
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _read_json(data: bytes, name: str) -> tuple[pd.DataFrame, list[str]]:
    text = decode_text(data, name).lstrip("\ufeff")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            return _read_jsonl(data, name)
        raise DataError(f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                        file=name, row=exc.lineno, fix="check the file for a missing comma or bracket") from None
    notes: list[str] = []
    if isinstance(obj, dict):
        lists = [k for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1 and all(not isinstance(v, list) for k, v in obj.items() if k != lists[0]):
            notes.append(f"{name}: read the records under the key '{lists[0]}'.")
            return _records_frame(obj[lists[0]], name), notes
        keys = ", ".join(list(map(str, obj))[:5])
        raise DataError(
            f"is a JSON object (keys: {keys}), not a list of records",
            file=name,
            fix='export a list of records, [{"item_id": ..., "rater": ..., "score": ...}, ...], or JSON Lines',
        )
    if not isinstance(obj, list):
        raise DataError(f"holds {_json_kind(obj)}, not a list of records", file=name,
                        fix='export a list of records, [{"item_id": ..., "rater": ..., "score": ...}, ...]')
    return _records_frame(obj, name), notes


def _read_jsonl(data: bytes, name: str) -> tuple[pd.DataFrame, list[str]]:
    text = decode_text(data, name).lstrip("\ufeff")
    records, lines = [], []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(f"line {i} is not valid JSON ({exc.msg})", file=name, row=i,
                            fix="each line of a JSON Lines file must be one complete JSON object") from None
        lines.append(i)
    frame = _records_frame(records, name, line_numbers=lines)
    frame.attrs["row_numbers"] = np.asarray(lines, dtype=np.int64)
    return frame, []


def excel_sheets(source: str | Path | bytes, *, name: str | None = None) -> list[str]:
    """Names of the non-empty sheets of an Excel file."""
    data, name = read_bytes(source, name, None)
    return _excel_sheets(_open_book(data, name))


def _open_book(data: bytes, name: str) -> pd.ExcelFile:
    try:
        return pd.ExcelFile(_io.BytesIO(data))
    except Exception as exc:  # openpyxl/xlrd raise many types for a corrupt workbook
        raise DataError(f"could not be opened as an Excel workbook ({type(exc).__name__})",
                        file=name, fix="re-save it from Excel as .xlsx, or export CSV") from None


def _excel_sheets(book: pd.ExcelFile) -> list[str]:
    sheets = []
    for s in book.sheet_names:
        try:
            if not pd.read_excel(book, sheet_name=s, nrows=2, header=None).dropna(how="all").empty:
                sheets.append(str(s))
        except Exception:  # an unreadable sheet is not a candidate
            continue
    return sheets


def _column_letter(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


def _header_name(value: object, index: int) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return f"column {_column_letter(index)}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip() or f"column {_column_letter(index)}"


def _read_excel(data: bytes, name: str, sheet: str | None) -> tuple[pd.DataFrame, list[str]]:
    book = _open_book(data, name)
    sheets = _excel_sheets(book)
    if not sheets:
        raise DataError("is an Excel workbook with no data", file=name, fix="choose the workbook that holds the judgments")
    if sheet is None:
        if len(sheets) > 1:
            raise DataError(
                f"has {len(sheets)} sheets with data ({', '.join(sheets[:6])}) and it is not clear which to read",
                file=name, fix="choose a sheet (CLI: --sheet NAME; app: the sheet picker)",
            )
        sheet = sheets[0]
    elif sheet not in sheets:
        raise DataError(f"has no sheet named '{sheet}'", file=name, fix="choose one of: " + ", ".join(sheets))
    # Read every cell as it is (dtype=object: the text '007' stays text), then find the
    # header row ourselves, so that a title above the table and blank rows inside it
    # neither become data nor shift the row numbers in messages.
    try:
        cells = pd.read_excel(book, sheet_name=sheet, header=None, dtype=object, na_values=CELL_NA,
                              keep_default_na=False)
    except Exception as exc:
        raise DataError(f"sheet '{sheet}' could not be read ({type(exc).__name__})", file=name,
                        fix="re-save the workbook from Excel as .xlsx, or export the sheet as CSV") from None
    cells = cells.dropna(how="all", axis=1)
    counts = cells.notna().sum(axis=1).to_numpy()
    filled = counts > 0
    where = np.flatnonzero(filled)
    # The header is the first row filled about as wide as the table: a title or a note
    # above the table (one cell) is skipped.
    top = counts[where[:20]]
    need = max(2, int(np.ceil(0.5 * top.max()))) if top.max() >= 2 else 1
    head = int(where[np.flatnonzero(top >= need)[0]])
    notes = [f"{name}: the table on sheet '{sheet}' starts at row {head + 1}; the rows above it were skipped."] \
        if head > int(where[0]) else []
    cells = cells.iloc[:, [bool(v) for v in cells.iloc[head:].notna().any(axis=0)]]
    header = [_header_name(v, int(c)) for c, v in zip(cells.columns, cells.iloc[head])]
    seen: set[str] = set()
    for h in header:
        if h in seen:
            raise DataError("two columns have the same name", file=name, column=h, row=head + 1,
                            fix=f"rename one of them on sheet '{sheet}'")
        seen.add(h)
    body = cells.iloc[head + 1:]
    keep = filled[head + 1:]
    rows = np.arange(len(body))[keep] + head + 2  # spreadsheet row numbers
    body = body.loc[keep]
    if body.empty:
        raise DataError("has a header but no data rows", file=name,
                        fix=f"add the judgments below the header on sheet '{sheet}'")
    frame = pd.DataFrame({h: body[c].tolist() for h, c in zip(header, body.columns)})
    frame = frame.infer_objects()
    frame.attrs["row_numbers"] = rows
    if len(sheets) > 1:
        notes.insert(0, f"{name}: read sheet '{sheet}'.")
    return frame, notes


def _read_parquet(data: bytes, name: str) -> tuple[pd.DataFrame, list[str]]:
    try:
        frame = pd.read_parquet(_io.BytesIO(data))
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DataError(f"could not be read as Parquet ({type(exc).__name__})", file=name,
                        fix="re-export the Parquet file, or export CSV") from None
    if frame.empty:
        raise DataError("has no data rows", file=name, fix="export at least one judgment")
    if any(n is not None for n in frame.index.names):
        frame = frame.reset_index()  # a named index (pandas' to_parquet keeps it) is a column to the user
    frame.columns = [str(c) for c in frame.columns]
    return frame.reset_index(drop=True), []


def read_table(
    source: str | Path | bytes,
    *,
    name: str | None = None,
    sheet: str | None = None,
    delimiter: str | None = None,
    max_bytes: int | None = None,
) -> pd.DataFrame:
    """Read one file into a DataFrame with the file's own column names.

    Parameters
    ----------
    source
        A path, or the bytes of an upload (then give ``name``, used for the format and in messages).
        Either may be compressed with gzip, zstd or bzip2 (:func:`~evalcore.data.files.decompress`); the size limit then
        applies to the compressed and to the decompressed size.
    name
        The file name shown in messages; defaults to the path's name.
    sheet
        Excel sheet to read; required when the workbook has several sheets with data.
    delimiter
        Force a delimiter for CSV/TSV; by default it is detected.
    max_bytes
        Size limit; default :func:`~evalcore.data.files.max_file_bytes` (``EVALCORE_MAX_FILE_MB``).

    Returns
    -------
    pandas.DataFrame
        Only empty cells are missing: words such as ``NA``, ``null`` or ``NaN`` stay text (a rater may be
        named so); :func:`evalcore.data.validation.validate` reads them as missing outside the name columns.
        ``frame.attrs`` holds ``format``, ``file``, ``first_row`` (the row number users
        see for the first record: 2 below a header, 1 for JSON), ``skipped_rows`` (blank
        rows that were dropped between records) and ``notes``. :func:`row_numbers` turns
        them into the row number of each record, for messages.
    """
    ahead = take_prefetched(source, name=name, limit=max_bytes, delimiter=delimiter)
    if ahead is not None:  # read by files.prefetch while the command was starting
        data, name, fmt = ahead.data, ahead.name, ahead.fmt
    else:
        data, name = read_bytes(source, name, max_bytes)
        fmt = sniff_plain(data, name)
    if fmt in ("csv", "tsv"):
        frame, notes = (_read_delimited(data, name, fmt, delimiter, ahead.parsed) if ahead is not None
                        else _read_delimited(data, name, fmt, delimiter))
        first = 2
    elif fmt in ("json", "jsonl"):
        try:
            frame, notes = _read_json(data, name) if fmt == "json" else _read_jsonl(data, name)
        except RecursionError:  # json's parser (and json.dumps of a nested value) recurses once per level
            raise too_deep(name) from None
        first = 1
    elif fmt == "parquet":
        frame, notes = _read_parquet(data, name)
        first = 1
    else:
        frame, notes = _read_excel(data, name, sheet)
        first = 2
    if len(frame.columns) != len(set(frame.columns)):
        dup = [c for c in frame.columns if list(frame.columns).count(c) > 1][0]
        raise DataError("two columns have the same name", file=name, column=dup, fix="rename one of them")
    rows = frame.attrs.pop("row_numbers", None)
    skipped: tuple[int, ...] = ()
    if rows is not None and len(rows):
        rows = np.asarray(rows, dtype=np.int64)
        first = int(rows[0])
        # Only the gaps are kept (small, and plain ints: attrs must stay cheap to copy and compare).
        if rows[-1] - rows[0] + 1 != len(rows):  # no gap in the common case: skip the set difference
            skipped = tuple(int(r) for r in np.setdiff1d(np.arange(rows[0], rows[-1] + 1), rows))
    frame = frame.reset_index(drop=True)
    frame.attrs.update({"format": fmt, "file": name, "first_row": first, "skipped_rows": skipped,
                        "notes": list(notes)})
    return frame


def too_deep(name: str) -> DataError:
    """The message for JSON nested too deeply to be read: Python's JSON parser recurses once per level and
    stops with a RecursionError at about a thousand, which says nothing to an analyst."""
    return DataError("nests lists or objects too deeply to be read (hundreds of levels, one inside another)",
                     file=name, fix="flatten it: one record per row, each an object of plain values, "
                                    'such as {"item_id": "q1", "rater": "gpt-4", "score": 3}')


def load_json(source: str | Path | bytes, *, name: str | None = None, max_bytes: int | None = None) -> object:
    """One JSON document, parsed whole: for readers whose files are not tables (the LLMBar and PandaLM presets).

    The file is read as :func:`read_table` reads one: size limit, decompression, text encoding, and
    messages naming the file and the fix for invalid or too deeply nested JSON.

    Parameters
    ----------
    source
        A path, or the bytes of an upload (then give ``name``).
    name
        The file name shown in messages; defaults to the path's name.
    max_bytes
        Size limit; default :func:`~evalcore.data.files.max_file_bytes`.

    Returns
    -------
    object
        What :func:`json.loads` returns.

    >>> load_json(b'{"swap = False": {"winner": 1}}', name="result.json")
    {'swap = False': {'winner': 1}}
    """
    data, name = read_bytes(source, name, max_bytes)
    text = decode_text(data, name).lstrip("\ufeff")
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(name) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", file=name,
                        fix="choose the original JSON file; if you edited it, check it with a JSON validator") from None


def row_numbers(frame: pd.DataFrame) -> np.ndarray:
    """The row (line for JSON Lines, record for JSON and Parquet) users see for each record.

    Computed from ``frame.attrs`` set by :func:`read_table`: ``first_row`` and the
    ``skipped_rows`` (blank rows between records); 2, 3, ... for a frame without them.
    """
    n = len(frame)
    first = int(frame.attrs.get("first_row", 2))
    skipped = np.asarray(frame.attrs.get("skipped_rows", ()), dtype=np.int64)
    rows = np.arange(n + len(skipped), dtype=np.int64) + first
    if len(skipped):
        rows = rows[~np.isin(rows, skipped)]
    return rows[:n]
