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

import codecs
import csv
import io as _io
import json
import os
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, FileTooLargeError

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
#: Compressions read transparently: (name, first bytes, file name endings).
_COMPRESSIONS = (
    ("gzip", b"\x1f\x8b", (".gz", ".gzip")),
    ("zstd", b"\x28\xb5\x2f\xfd", (".zst", ".zstd")),
    ("bzip2", b"BZh", (".bz2",)),
)
_CHUNK = 1 << 20  # decompress this many input bytes at a time


def max_file_bytes() -> int:
    """The size limit for one file: ``EVALCORE_MAX_FILE_MB`` megabytes (default 200).

    A value that is not a positive number is ignored (the default applies).
    """
    raw = os.environ.get("EVALCORE_MAX_FILE_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    if not (mb > 0) or mb == float("inf"):
        mb = DEFAULT_MAX_MB
    return max(1, int(mb * 1024 * 1024))


def format_size(n: float) -> str:
    """``n`` bytes in words a user reads: '3.2 KB', '250 MB', '1.5 GB'."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:.1f} {unit}" if v < 100 and v != int(v) else f"{v:.0f} {unit}"
    return f"{int(n)} bytes"


def _check_size(size: int, name: str, limit: int | None) -> None:
    limit = max_file_bytes() if limit is None else limit
    if size > limit:
        have, cap = format_size(size), format_size(limit)
        if have == cap:  # e.g. both '1.0 KB': say it in bytes
            have, cap = f"{size:,} bytes", f"{limit:,} bytes"
        raise FileTooLargeError(
            f"is {have}, over the {cap} limit",
            file=name,
            fix="set EVALCORE_MAX_FILE_MB to a larger number of megabytes before starting evalcore, "
                "or convert the file to Parquet, which is several times smaller",
        )


def compression(data: bytes, name: str = "") -> str | None:
    """``'gzip'``, ``'zstd'`` or ``'bzip2'`` when ``data`` is compressed that way, else None.

    Decided by the first bytes (a ``.gz`` that is plain text is read as plain text); the
    name only says which inner name to use (see :func:`inner_name`).
    """
    for kind, magic, _ in _COMPRESSIONS:
        if data.startswith(magic):
            # 'BZh' could start a text file: a bzip2 stream goes on with the block size and a block magic.
            if kind == "bzip2" and not (data[3:4] in b"123456789" and data[4:10] in (
                    b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")):
                continue
            return kind
    return None


def inner_name(name: str) -> str:
    """The name without a compression ending (``x.csv.gz`` -> ``x.csv``), used to detect the format inside."""
    low = name.lower()
    for _, _, ends in _COMPRESSIONS:
        for end in ends:
            if low.endswith(end) and len(name) > len(end):
                return name[: -len(end)]
    return name


def _too_large_inflated(name: str, limit: int) -> FileTooLargeError:
    return FileTooLargeError(
        f"decompresses to more than the {format_size(limit)} limit",
        file=name,
        fix="set EVALCORE_MAX_FILE_MB to a larger number of megabytes before starting evalcore, "
            "or convert the file to Parquet, which is several times smaller",
    )


def _inflate_stdlib(data: bytes, kind: str, limit: int, name: str) -> list[bytes]:
    """gzip or bzip2 with the standard library, several members/streams in a row, at most ``limit + 1`` bytes."""
    import bz2
    import zlib

    def make():
        return zlib.decompressobj(wbits=31) if kind == "gzip" else bz2.BZ2Decompressor()

    out: list[bytes] = []
    total, pos, dec = 0, 0, make()
    view = memoryview(data)
    pending = b""  # input the decompressor has not consumed yet (zlib hands it back)
    while True:
        room = limit + 1 - total
        if kind == "gzip":
            feed = pending or view[pos:pos + _CHUNK]
            if not pending:
                pos += len(feed)
            chunk = dec.decompress(feed, room)
            pending = dec.unconsumed_tail
        else:
            feed = b"" if not dec.needs_input else view[pos:pos + _CHUNK]
            if dec.needs_input:
                pos += len(feed)
            chunk = dec.decompress(feed, room)
        out.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large_inflated(name, limit)
        if dec.eof:
            rest = bytes(dec.unused_data) + bytes(view[pos:])
            if not rest.strip(b"\x00"):  # trailing zero padding, as gzip tools allow
                return out
            if compression(rest) != kind:
                raise ValueError("trailing garbage after the compressed data")
            view, pos, pending, dec = memoryview(rest), 0, b"", make()
        elif pos >= len(view) and not pending and (kind == "gzip" or dec.needs_input) and not chunk:
            raise ValueError("the compressed data ends early")


def _inflate_zstd(data: bytes, limit: int, name: str) -> list[bytes]:
    """zstd through pyarrow's codec (no extra dependency), at most ``limit + 1`` bytes."""
    import pyarrow as pa

    out: list[bytes] = []
    total = 0
    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        while True:
            chunk = stream.read(min(_CHUNK * 8, limit + 1 - total))
            if not chunk:
                return out
            out.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large_inflated(name, limit)


def decompress(data: bytes, *, name: str = "the file", limit: int | None = None) -> bytes:
    """``data`` decompressed when it is gzip, zstd or bzip2 (see :func:`compression`), else ``data`` itself.

    Decompression streams and stops as soon as the output passes ``limit`` (default
    :func:`max_file_bytes`), so a decompression bomb costs at most the limit in memory.

    Raises
    ------
    FileTooLargeError
        When the decompressed data is larger than ``limit``.
    DataError
        When the compressed data is damaged or cut short.
    """
    kind = compression(data)
    if kind is None:
        return data
    limit = max_file_bytes() if limit is None else limit
    try:
        parts = _inflate_zstd(data, limit, name) if kind == "zstd" else _inflate_stdlib(data, kind, limit, name)
    except FileTooLargeError:
        raise
    except Exception as exc:  # zlib.error, OSError, EOFError, ArrowInvalid: a damaged archive
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"could not be decompressed as {kind} ({detail})", file=name,
                        fix="check that the file was copied completely, or decompress it yourself and choose "
                            "the file inside") from None
    return b"".join(parts)


def _read_bytes(source: str | Path | bytes, name: str | None, limit: int | None) -> tuple[bytes, str]:
    """The file's bytes (decompressed) and its name for messages."""
    data, name = _read_raw(source, name, limit)
    return decompress(data, name=name, limit=limit), name


def _read_raw(source: str | Path | bytes, name: str | None, limit: int | None) -> tuple[bytes, str]:
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

    Compressed data (gzip, zstd, bzip2) is decompressed and its content sniffed; the name's
    compression ending is ignored (``x.tsv.gz`` is named like TSV).

    Raises
    ------
    DataError
        For empty files and for binary files that are not Excel or Parquet
        (e.g. an image renamed ``.csv``).
    """
    return _sniff(decompress(data, name=name) if compression(data) else data, name)


def _sniff(data: bytes, name: str) -> str:
    """:func:`sniff_format` of data that is already decompressed (a compressed file inside is refused)."""
    blank = b" \t\r\n\x00\xef\xbb\xbf\xff\xfe"
    if not data[:4096].strip(blank) and not data.strip(blank):  # the prefix first: no copy of a big file
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments")
    if data.startswith(b"PK\x03\x04"):
        # .xlsx is a zip archive; so is a .zip of CSV files, which is not a workbook.
        try:
            with zipfile.ZipFile(_io.BytesIO(data)) as z:
                members = z.namelist()
        except (zipfile.BadZipFile, OSError, ValueError):
            return "excel"  # a damaged workbook: the Excel reader says so
        if not any(m.startswith("xl/") for m in members):
            shown = ", ".join(m for m in members if not m.endswith("/"))[:80] or "nothing"
            raise DataError(f"is a zip archive (holding {shown}), not a data table", file=name,
                            fix="unzip it and choose the data file inside")
        return "excel"
    for magic, fmt, what in _MAGIC:
        if data.startswith(magic):
            if fmt:
                return fmt
            fix = "decompress it (e.g. gunzip) and choose the file inside" if "archive" in what else FIX_FORMAT
            raise DataError(f"is not a data table: it looks like {what}", file=name, fix=fix)
    ext = _EXT.get(Path(inner_name(name)).suffix.lower())
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


_DELIM_WORDS = {
    ",": ",", "comma": ",", ";": ";", "semicolon": ";", "\t": "\t", "\\t": "\t", "tab": "\t",
    "|": "|", "pipe": "|",
}


def normalize_delimiter(delimiter: str | None, *, name: str = "the file") -> str | None:
    """A forced delimiter as one character: accepts ``','``, ``'\\t'`` as typed in a shell, ``'tab'``, ..."""
    if delimiter is None or delimiter == "":
        return None
    d = _DELIM_WORDS.get(delimiter, _DELIM_WORDS.get(delimiter.strip().lower()))
    if d is None and len(delimiter) == 1 and delimiter not in "\"\r\n":
        d = delimiter
    if d is None:
        raise DataError(
            f"the delimiter {delimiter!r} cannot be used", file=name,
            fix="give one character such as ',' ';' '|' or 'tab' (CLI: --delimiter ';'), or leave the "
                "delimiter to be detected",
        )
    return d


def _header_fields(text: str, sep: str) -> list[str]:
    try:
        return next(csv.reader(_io.StringIO(text), delimiter=sep), [])
    except csv.Error:
        return []


def _wrong_delimiter(name: str, sep: str, actual: str, header: str) -> DataError:
    return DataError(
        f"every row landed in one column ('{header[:40]}'): the file is separated by "
        f"{_DELIM_NAME[actual]}, not {_DELIM_NAME.get(sep, repr(sep))}",
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
            _io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=_NA,
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
                fix=f"put quotes around values that contain {_DELIM_NAME.get(sep, repr(sep))}, "
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
                _io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=_NA,
                skipinitialspace=False, engine="c", skip_blank_lines=False, index_col=False,
            )
    full = frame.iloc[:, -1].notna().to_numpy() if last is not None else np.ones(len(frame), bool)
    pos = int(np.flatnonzero(full)[0]) if full.any() else 0
    raise DataError(
        f"has {len(header) + extra} fields where the header has {len(header)}",
        file=name, row=pos + 2 + lead,
        fix=f"put quotes around values that contain {_DELIM_NAME.get(sep, repr(sep))}, or add the "
            "missing column names to the header",
    )


#: A string column as :func:`pandas.read_csv` with ``dtype=str`` makes it (pyarrow-backed, NaN for missing).
_STR = pd.StringDtype("pyarrow", na_value=np.nan)
_FAST_HEAD = 1 << 16  # bytes decoded to sniff the delimiter and read the header on the fast path
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")  # control characters other than \t \n \f \r


def _arrow_delimited(data: bytes, name: str, fmt: str, delimiter: str | None) -> pd.DataFrame | None:
    """The frame :func:`_read_delimited` would return, parsed by :mod:`pyarrow.csv`; None when unsure.

    The fast path covers the common file: UTF-8 (a BOM is fine), a delimiter that is detected
    or given and agrees with the header, no blank lines before the header, a header of two or
    more distinct non-empty names, and every row as wide as the header. Anything else (another
    encoding, ragged or blank lines, a parse error, an odd header) returns None and the pandas
    path reads the file, so that every message and every edge case stays exactly as it was.
    """
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    if start == 0 and _bom_or_utf16(data) is not None:
        return None
    if b"\x00" in data[:8192]:
        return None
    size = _FAST_HEAD
    while True:
        # The slow path sniffs the first 200 lines of the text: decode a prefix that holds them all.
        # Strictly (the header is not checked by pyarrow), except that a prefix may end inside a character.
        raw_head = data[start:start + size]
        whole = start + size >= len(data)
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(raw_head, final=whole)
        except UnicodeDecodeError:
            return None
        lines = text.splitlines()
        if whole or len(lines) > 200:
            break
        size *= 4
    if text.startswith("\ufeff") or not text.strip():
        return None
    if _CONTROL.search(text, 0, 8192):
        return None
    try:
        forced = normalize_delimiter(delimiter, name=name)
    except DataError:
        return None
    preferred = "\t" if fmt == "tsv" else ","
    sniffed = sniff_delimiter(text if whole else "\n".join(lines[:200]), preferred=preferred)
    sep = forced or sniffed or preferred
    if forced is None and sniffed and sniffed != preferred and fmt == "tsv":
        return None  # the slow path adds a note
    if not lines or not lines[0].strip():
        return None  # blank lines above the header: the slow path counts them
    header = _header_fields(text, sep)
    if header != _header_fields(lines[0], sep) or len(header) < 2:
        return None  # a header over several lines, or one column
    names = [h.strip() for h in header]
    if any(not h for h in names) or len(set(names)) != len(names) or len(set(header)) != len(header):
        return None
    quoted = data.find(b'"') >= 0
    if quoted and data.count(b'"') % 2:
        return None  # a quote opened but never closed: pandas names the row, pyarrow would read on to the end
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)[start:] if start else pa.py_buffer(data)),
            read_options=pcsv.ReadOptions(use_threads=True, column_names=header, skip_rows=1),
            # Without a quote in the file no value can hold a line break: the parser may split blocks freely.
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char='"', double_quote=True, escape_char=False,
                                            newlines_in_values=quoted, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={h: pa.large_string() for h in header}, null_values=_NA, strings_can_be_null=True,
                quoted_strings_can_be_null=True, check_utf8=True),
        )
    except Exception:  # ArrowInvalid (ragged rows, bad UTF-8, an unclosed quote) and the like
        return None
    if table.num_rows == 0:
        return None
    # Rows whose every field is empty are not judgments (the pandas path drops them too).
    keep = None
    if all(col.null_count for col in table.columns):
        import pyarrow.compute as pc

        empty = pc.is_null(table.column(0))
        for col in table.columns[1:]:
            empty = pc.and_(empty, pc.is_null(col))
        keep = ~np.asarray(empty.to_numpy(zero_copy_only=False), dtype=bool)
        if not keep.any():
            return None
    frame = table.to_pandas(types_mapper=lambda t: _STR if t == pa.large_string() else None)
    rows = np.arange(len(frame)) + 2
    if keep is not None and not keep.all():
        frame, rows = frame.loc[keep].reset_index(drop=True), rows[keep]
    frame.columns = names
    frame.attrs["row_numbers"] = rows
    return frame


def _read_delimited(data: bytes, name: str, fmt: str, delimiter: str | None) -> tuple[pd.DataFrame, list[str]]:
    fast = _arrow_delimited(data, name, fmt, delimiter)
    if fast is not None:
        return fast, []
    text = _decode(data, name)
    notes: list[str] = []
    if not text.strip():
        raise DataError("is empty", file=name, fix="choose the file that holds the judgments")
    text = text.lstrip("\ufeff")
    delimiter = normalize_delimiter(delimiter, name=name)
    preferred = "\t" if fmt == "tsv" else ","
    sniffed = sniff_delimiter(text, preferred=preferred)
    sep = delimiter or sniffed or preferred
    if delimiter is None and sniffed and sniffed != preferred and fmt == "tsv":
        notes.append(f"{name} is separated by {_DELIM_NAME[sniffed]}, not tabs; it was read that way.")
    text, lead = _skip_blank_head(text)
    header = _header_fields(text, sep)
    if delimiter is not None and len(header) <= 1 and sniffed and sniffed != sep:
        raise _wrong_delimiter(name, sep, sniffed, header[0] if header else "")
    frame = _parse_delimited(text, name, sep, lead)
    if frame.shape[1] == 1:
        head = str(frame.columns[0])
        others = [d for d in _DELIMS if d != sep and d in head]
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
        raise DataError(f"holds {_json_kind(obj)}, not a list of records", file=name,
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
    frame.attrs["row_numbers"] = np.asarray(lines, dtype=np.int64)
    return frame, []


def excel_sheets(source: str | Path | bytes, *, name: str | None = None) -> list[str]:
    """Names of the non-empty sheets of an Excel file."""
    data, name = _read_bytes(source, name, None)
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
        cells = pd.read_excel(book, sheet_name=sheet, header=None, dtype=object, na_values=_NA,
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
        Either may be compressed with gzip, zstd or bzip2 (:func:`decompress`); the size limit then
        applies to the compressed and to the decompressed size.
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
        see for the first record: 2 below a header, 1 for JSON), ``skipped_rows`` (blank
        rows that were dropped between records) and ``notes``. :func:`row_numbers` turns
        them into the row number of each record, for messages.
    """
    data, name = _read_bytes(source, name, max_bytes)
    fmt = _sniff(data, name)
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
