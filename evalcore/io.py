"""Readers for the file formats analysts bring: CSV, TSV, JSON Lines, JSON, Parquet, Excel.

:func:`read_table` takes a path or the bytes of an upload and returns a DataFrame with
the file's own column names, every cell as it was (text columns stay text, so ids such
as ``007`` keep their zeros). It detects the format from the content as well as the
name, the text encoding (UTF-8, UTF-8 with BOM, UTF-16, Latin-1/cp1252) and the
delimiter. Anything wrong raises :class:`~evalcore.errors.DataError` with the fix.
"""

from __future__ import annotations

import csv
import io as _io
import json
import os
import re
from pathlib import Path

import pandas as pd

from .errors import DataError, FileTooLargeError

DEFAULT_MAX_MB = 200
FORMATS = ("csv", "tsv", "jsonl", "json", "parquet", "excel")
_EXT = {
    ".csv": "csv", ".txt": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".json": "json", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "excel", ".xlsm": "excel",
    ".xls": "excel",
}
_NA = ["", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "#N/A"]
_DELIMS = [",", "\t", ";", "|"]
_DELIM_NAME = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "pipes"}
_MAGIC = [
    (b"PK\x03\x04", "excel", None),
    (b"\xd0\xcf\x11\xe0", "excel", None),
    (b"PAR1", "parquet", None),
    (b"\x89PNG", None, "a PNG image"),
    (b"%PDF", None, "a PDF document"),
    (b"\xff\xd8\xff", None, "a JPEG image"),
    (b"GIF8", None, "a GIF image"),
    (b"\x1f\x8b", None, "a gzip archive"),
    (b"\x7fELF", None, "a program"),
    (b"MZ", None, "a Windows program"),
    (b"SQLite format 3", None, "an SQLite database"),
]
FIX_FORMAT = "export the data as CSV, TSV, JSON Lines, JSON (a list of records), Parquet or Excel"


def max_file_bytes() -> int:
    """The size limit for one file: ``EVALCORE_MAX_FILE_MB`` megabytes (default 200)."""
    raw = os.environ.get("EVALCORE_MAX_FILE_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(mb * 1024 * 1024)


def _check_size(size: int, name: str, limit: int | None) -> None:
    limit = max_file_bytes() if limit is None else limit
    if size > limit:
        raise FileTooLargeError(
            f"is {size / 2**20:.1f} MB, over the {limit / 2**20:.0f} MB limit",
            file=name,
            fix="set EVALCORE_MAX_FILE_MB to a larger number of megabytes before starting evalcore, "
                "or convert the file to Parquet, which is several times smaller",
        )


def _read_bytes(source: str | Path | bytes, name: str | None, limit: int | None) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = name or "the upload"
        _check_size(len(data), name, limit)
        return data, name
    path = Path(source)
    name = name or path.name
    if not path.exists():
        raise DataError("file not found", file=str(path), fix="check the path")
    if path.is_dir():
        raise DataError("is a folder, not a file", file=str(path),
                        fix="give a file, or use a --preset that reads folders (llmbar, pandalm)")
    _check_size(path.stat().st_size, name, limit)
    try:
        return path.read_bytes(), name
    except OSError as exc:
        raise DataError(f"could not be read ({exc.strerror})", file=name, fix="check the file's permissions") from None


def sniff_format(data: bytes, name: str) -> str:
    """The file's format from its first bytes, falling back to its extension.

    Raises
    ------
    DataError
        For empty files and for binary files that are not Excel or Parquet
        (e.g. an image renamed ``.csv``).
    """
    if not data.strip(b" \t\r\n\x00\xef\xbb\xbf\xff\xfe"):
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments")
    for magic, fmt, what in _MAGIC:
        if data.startswith(magic):
            if fmt:
                return fmt
            raise DataError(f"is not a data table: it looks like {what}", file=name, fix=FIX_FORMAT)
    ext = _EXT.get(Path(name).suffix.lower())
    if ext in ("excel", "parquet"):
        # Named like a binary format but does not start like one.
        raise DataError(f"is named like {'an Excel' if ext == 'excel' else 'a Parquet'} file but is not one",
                        file=name, fix="re-export it, or give it the extension of its real format")
    text = _decode(data[:65536], name, probe=True)
    head = text.lstrip("\ufeff \t\r\n")
    if ext in ("json", "jsonl"):
        return ext
    if head.startswith("[") or (head.startswith("{") and not head.startswith("{\n") and "\n{" in head):
        return "jsonl" if head.startswith("{") else "json"
    if head.startswith("{"):
        return "json"
    return ext or "csv"


def _bom_or_utf16(data: bytes) -> str | None:
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    # UTF-16 without a BOM: ASCII text has a zero in every other byte.
    sample = data[:4096]
    even, odd = sample[0::2], sample[1::2]
    if sample and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if sample and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


def detect_encoding(data: bytes) -> str:
    """The encoding :func:`read_table` uses: a BOM, UTF-16, else UTF-8, cp1252, Latin-1 in turn."""
    enc = _bom_or_utf16(data)
    if enc:
        return enc
    for e in ("utf-8", "cp1252"):
        try:
            data.decode(e)
            return e
        except UnicodeDecodeError:
            pass
    return "latin-1"  # decodes any byte string


def _decode(data: bytes, name: str, *, probe: bool = False) -> str:
    """Decode text with :func:`detect_encoding`; refuse binary data.

    ``probe`` decodes a prefix that may end inside a multi-byte character.
    """
    enc = _bom_or_utf16(data)
    if enc is None and b"\x00" in data[:8192]:
        raise DataError("is not a text file (it holds binary data)", file=name, fix=FIX_FORMAT)
    if probe and enc is None:
        text = data.decode("utf-8", errors="ignore")
    else:
        text = data.decode(enc or detect_encoding(data), errors="replace")
    head = text[:8192]
    control = sum(1 for ch in head if ord(ch) < 32 and ch not in "\t\r\n\f")
    if control > 0.05 * max(1, len(head)):
        raise DataError("is not a text file (it holds binary data)", file=name, fix=FIX_FORMAT)
    return text


def sniff_delimiter(text: str, *, preferred: str | None = None) -> str | None:
    """The delimiter that splits the first lines into the most, equally many, fields.

    Written here rather than using :class:`csv.Sniffer`, which guesses letters as
    delimiters on short files and fails on quoted multi-line fields.
    """
    lines = text.splitlines()[:200]
    sample = "\n".join(lines)
    best, best_score = None, (0, 0)
    for d in _DELIMS:
        try:
            rows = [r for r in csv.reader(_io.StringIO(sample), delimiter=d) if r]
        except csv.Error:
            continue
        if len(rows) > 1 and len(lines) >= 200:
            rows = rows[:-1]  # the last sampled line may be cut
        if not rows:
            continue
        counts = [len(r) for r in rows]
        width = counts[0]
        if width < 2:
            continue
        consistent = sum(c == width for c in counts) / len(counts)
        score = (round(consistent, 2), width + (0.5 if d == preferred else 0))
        if score > best_score:
            best, best_score = d, score
    return best


def _read_delimited(data: bytes, name: str, fmt: str, delimiter: str | None) -> tuple[pd.DataFrame, list[str]]:
    text = _decode(data, name)
    notes: list[str] = []
    if not text.strip():
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments")
    preferred = "\t" if fmt == "tsv" else ","
    sniffed = sniff_delimiter(text, preferred=preferred)
    sep = delimiter or sniffed or preferred
    if delimiter is None and sniffed and sniffed != preferred and fmt == "tsv":
        notes.append(f"{name} is separated by {_DELIM_NAME[sniffed]}, not tabs; it was read that way.")
    try:
        frame = pd.read_csv(
            _io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=_NA,
            skipinitialspace=False, engine="c",
        )
    except pd.errors.EmptyDataError:
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments") from None
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
        if m:
            raise DataError(
                f"has {m.group(3)} fields where the header has {m.group(1)}",
                file=name, row=int(m.group(2)),
                fix=f"put quotes around values that contain {_DELIM_NAME.get(sep, repr(sep))}, "
                    "or check that every row has as many fields as the header",
            ) from None
        raise DataError(f"could not be read as a delimited text file ({msg.splitlines()[0]})",
                        file=name, fix="check the quoting and the delimiter") from None
    if frame.shape[1] == 1:
        header = str(frame.columns[0])
        others = [d for d in _DELIMS if d != sep and d in header]
        if others:
            raise DataError(
                f"every row landed in one column ('{header[:40]}'): the file is separated by "
                f"{_DELIM_NAME[others[0]]}, not {_DELIM_NAME.get(sep, repr(sep))}",
                file=name,
                fix=f"read it with delimiter {others[0]!r} (CLI: --delimiter '{others[0]}') or leave the "
                    "delimiter to be detected",
            )
    if frame.empty:
        raise DataError("has a header but no data rows", file=name,
                        fix="add the judgments below the header row, or choose the full export")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, notes


def _records_frame(records: list, name: str, *, line_numbers: list[int] | None = None) -> pd.DataFrame:
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            where = line_numbers[i] if line_numbers else i + 1
            raise DataError(
                f"record {where} is a {type(r).__name__}, not an object with named fields",
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
    text = _decode(data, name).lstrip("\ufeff")
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
        raise DataError(f"holds a single JSON {type(obj).__name__}, not a list of records", file=name,
                        fix='export a list of records, [{"item_id": ..., "rater": ..., "score": ...}, ...]')
    return _records_frame(obj, name), notes


def _read_jsonl(data: bytes, name: str) -> tuple[pd.DataFrame, list[str]]:
    text = _decode(data, name).lstrip("\ufeff")
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
    return frame, []


def excel_sheets(source: str | Path | bytes, *, name: str | None = None) -> list[str]:
    """Names of the non-empty sheets of an Excel file."""
    data, name = _read_bytes(source, name, None)
    return _excel_sheets(data, name)


def _excel_sheets(data: bytes, name: str) -> list[str]:
    try:
        book = pd.ExcelFile(_io.BytesIO(data))
    except Exception as exc:  # openpyxl/xlrd raise many types for a corrupt workbook
        raise DataError(f"could not be opened as an Excel workbook ({type(exc).__name__})",
                        file=name, fix="re-save it from Excel as .xlsx, or export CSV") from None
    sheets = []
    for s in book.sheet_names:
        try:
            if not book.parse(s, nrows=2, header=None).empty:
                sheets.append(str(s))
        except Exception:  # an unreadable sheet is not a candidate
            continue
    return sheets


def _read_excel(data: bytes, name: str, sheet: str | None) -> tuple[pd.DataFrame, list[str]]:
    sheets = _excel_sheets(data, name)
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
    frame = pd.read_excel(_io.BytesIO(data), sheet_name=sheet)
    frame = frame.dropna(how="all")
    if frame.empty:
        raise DataError("has a header but no data rows", file=name,
                        fix=f"add the judgments below the header on sheet '{sheet}'")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, [f"{name}: read sheet '{sheet}'."] if len(sheets) > 1 else []


def _read_parquet(data: bytes, name: str) -> tuple[pd.DataFrame, list[str]]:
    try:
        frame = pd.read_parquet(_io.BytesIO(data))
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DataError(f"could not be read as Parquet ({type(exc).__name__})", file=name,
                        fix="re-export the Parquet file, or export CSV") from None
    if frame.empty:
        raise DataError("has no data rows", file=name, fix="export at least one judgment")
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
    name
        The file name shown in messages; defaults to the path's name.
    sheet
        Excel sheet to read; required when the workbook has several sheets with data.
    delimiter
        Force a delimiter for CSV/TSV; by default it is detected.
    max_bytes
        Size limit; default :func:`max_file_bytes` (``EVALCORE_MAX_FILE_MB``).

    Returns
    -------
    pandas.DataFrame
        ``frame.attrs`` holds ``format``, ``file``, ``first_row`` (the row number users
        see for the first record: 2 below a header, 1 for JSON) and ``notes``.
    """
    data, name = _read_bytes(source, name, max_bytes)
    fmt = sniff_format(data, name)
    if fmt in ("csv", "tsv"):
        frame, notes = _read_delimited(data, name, fmt, delimiter)
        first = 2
    elif fmt == "json":
        frame, notes = _read_json(data, name)
        first = 1
    elif fmt == "jsonl":
        frame, notes = _read_jsonl(data, name)
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
    frame = frame.reset_index(drop=True)
    frame.attrs.update({"format": fmt, "file": name, "first_row": first, "notes": list(notes)})
    return frame
