"""The bytes of a data file, before pandas: size limit, decompression, format, encoding, delimiter,
and the pyarrow parse of clean CSV/TSV.

Nothing here imports pandas. :func:`prefetch` starts reading a file in a background thread while a
fresh command-line process is still importing pandas and the analyses (about half a second on one
core, with the other idle); :func:`evalcore.data.io.read_table` takes the result when it reads the
same file. Everything it prefetches is what :func:`read_bytes`, :func:`sniff_plain` and
:func:`arrow_csv` return in the main thread, so a prefetched read gives the same frame and the same
messages (any problem makes the main thread read the file again and report it).
"""

from __future__ import annotations

import codecs
import csv
import io as _io
import os
import re
import stat
import threading
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import DataError, FileTooLargeError

DEFAULT_MAX_MB = 200
FORMATS = ("csv", "tsv", "jsonl", "json", "parquet", "excel")
_EXT = {
    ".csv": "csv", ".txt": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".json": "json", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "excel", ".xlsm": "excel",
    ".xls": "excel",
}
NA_VALUES = ["", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "#N/A"]
DELIMITERS = [",", "\t", ";", "|"]
DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "pipes"}
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
_CHUNK = 1 << 20  # decompress this many input bytes at a time, and at most this many output bytes
#: One decompression at a time in a process: a command's read-ahead and its preset detection both inflate
#: the file, and a bomb inflated twice at once would cost twice the limit.
_INFLATE_LOCK = threading.Lock()
_SHOWN = 4  # member names a message lists
#: Most members a zip archive may hold: a folder of judge files has tens, a hostile archive millions of empty ones.
MAX_ZIP_MEMBERS = 10_000


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


def check_size(size: int, name: str, limit: int | None) -> None:
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


def _inflate_stdlib(data: bytes, kind: str, limit: int, name: str, out: _io.BytesIO) -> None:
    """gzip or bzip2 with the standard library, several members/streams in a row, into ``out``: at most
    ``limit + 1`` bytes, never more than :data:`_CHUNK` from one call (a bigger call builds its output
    in pieces and then copies it whole, twice the memory)."""
    import bz2
    import zlib

    def make():
        return zlib.decompressobj(wbits=31) if kind == "gzip" else bz2.BZ2Decompressor()

    pos, dec = 0, make()
    view = memoryview(data)
    pending = b""  # input the decompressor has not consumed yet (zlib hands it back)
    while True:
        room = min(_CHUNK, limit + 1 - out.tell())  # >= 1: 0 would mean "no limit" to zlib
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
        out.write(chunk)
        if out.tell() > limit:
            raise _too_large_inflated(name, limit)
        if dec.eof:
            # The next member starts where this one's unused input does; found by offset, not by copying
            # the rest of the file for each of thousands of tiny members.
            pos -= len(dec.unused_data)
            if compression(bytes(view[pos:pos + 10])) == kind:
                pending, dec = b"", make()
                continue
            if not bytes(view[pos:]).strip(b"\x00"):  # trailing zero padding, as gzip tools allow
                return
            raise ValueError("trailing garbage after the compressed data")
        if pos >= len(view) and not pending and (kind == "gzip" or dec.needs_input) and not chunk:
            raise ValueError("the compressed data ends early")


def _inflate_zstd(data: bytes, limit: int, name: str, out: _io.BytesIO) -> None:
    """zstd through pyarrow's codec (no extra dependency), into ``out``: at most ``limit + 1`` bytes."""
    import pyarrow as pa

    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        while True:
            chunk = stream.read(min(_CHUNK, limit + 1 - out.tell()))
            if not chunk:
                return
            out.write(chunk)
            if out.tell() > limit:
                raise _too_large_inflated(name, limit)


def decompress(data: bytes, *, name: str = "the file", limit: int | None = None) -> bytes:
    """``data`` decompressed when it is gzip, zstd or bzip2 (see :func:`compression`), else ``data`` itself.

    Decompression streams, :data:`_CHUNK` bytes at a time, into one growing buffer that becomes
    the result without a copy, and stops as soon as the output passes ``limit`` (default
    :func:`max_file_bytes`): a decompression bomb costs the limit in memory, plus the buffer's
    growth margin (an eighth) and a chunk. One decompression runs at a time in a process
    (:data:`_INFLATE_LOCK`), so two of them never hold twice that.

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
    out = _io.BytesIO()
    try:
        with _INFLATE_LOCK:
            if kind == "zstd":
                _inflate_zstd(data, limit, name, out)
            else:
                _inflate_stdlib(data, kind, limit, name, out)
    except FileTooLargeError:
        raise
    except Exception as exc:  # zlib.error, OSError, EOFError, ArrowInvalid: a damaged archive
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"could not be decompressed as {kind} ({detail})", file=name,
                        fix="check that the file was copied completely, or decompress it yourself and choose "
                            "the file inside") from None
    return out.getvalue()  # BytesIO hands over its buffer, trimmed in place, when nothing else holds it


def is_zip_archive(source: str | Path | bytes) -> bool:
    """Whether ``source`` (a path or bytes) is a zip archive that is not an Excel workbook (``.xlsx`` is a zip
    whose members are under ``xl/``)."""
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            if not bytes(source[:4]) == b"PK\x03\x04":
                return False
            with zipfile.ZipFile(_io.BytesIO(source)) as z:
                members = z.namelist()
        else:
            with open(source, "rb") as fh:
                if fh.read(4) != b"PK\x03\x04":
                    return False
            with zipfile.ZipFile(source) as z:
                members = z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return not any(m.startswith("xl/") for m in members)


def _zip_member(info: zipfile.ZipInfo, name: str) -> tuple[str, ...] | None:
    """The parts of a member's path to extract it to; None for what is not data (a folder entry, macOS's
    ``__MACOSX`` copies); a DataError for what could write outside the folder or is not a plain file."""
    raw = info.filename
    path = raw.replace("\\", "/")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise DataError(f"holds '{raw}', a member with an absolute path", file=name,
                        fix="zip the folder with relative paths (e.g. cd into its parent and zip -r it)")
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if ".." in parts:
        raise DataError(f"holds '{raw}', a member whose path leads out of the folder ('..')", file=name,
                        fix="zip the folder itself, with paths inside it")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise DataError(f"holds '{raw}', a symbolic link, not a file", file=name,
                        fix="zip the files themselves, not links to them")
    if info.flag_bits & 0x1:
        raise DataError(f"holds '{raw}', which is encrypted", file=name, fix="zip the folder without a password")
    if info.is_dir() or not parts or parts[0] == "__MACOSX":
        return None
    return parts


def unpack_zip(source: str | Path | bytes, dest: str | Path, *, name: str | None = None,
               limit: int | None = None) -> Path:
    """Extract a zip archive of a folder into ``dest`` (created), safely; returns ``dest``.

    What an archive can do to the machine that unpacks it is refused: a member with an absolute path, a
    ``..`` in its path or a symbolic link (each could write or point outside ``dest``), an encrypted member,
    more than :data:`MAX_ZIP_MEMBERS` members. The size limit (``limit``, default :func:`max_file_bytes`)
    applies to the unpacked data, all members together, counted while streaming: a zip bomb stops at the
    limit, whatever sizes its headers claim.

    Raises
    ------
    FileTooLargeError
        When the members together unpack to more than ``limit``.
    DataError
        For anything else above, and for a damaged archive; the message names the archive and the member.
    """
    limit = max_file_bytes() if limit is None else limit
    name = name or (Path(source).name if isinstance(source, (str, Path)) else "the upload")
    if not isinstance(source, (str, Path)):
        check_size(len(source), name, limit)
        source = _io.BytesIO(bytes(source))
    else:
        check_size(Path(source).stat().st_size, name, limit)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    total = 0
    try:
        with zipfile.ZipFile(source) as z:
            infos = z.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:
                raise DataError(f"holds {len(infos):,} members, more than the {MAX_ZIP_MEMBERS:,} a dataset needs",
                                file=name, fix="zip only the folder that holds the data files")
            for info in infos:
                parts = _zip_member(info, name)
                if parts is None:
                    continue
                target = dest.joinpath(*parts)
                if not target.resolve().is_relative_to(root):  # a second guard, whatever the path's spelling
                    raise DataError(f"holds '{info.filename}', a member whose path leads out of the folder",
                                    file=name, fix="zip the folder itself, with paths inside it")
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    out = open(target, "xb")
                except (FileExistsError, IsADirectoryError):
                    raise DataError(f"holds '{info.filename}' twice", file=name,
                                    fix="zip the folder again, so that each file is in it once") from None
                with out, z.open(info) as member:
                    while True:  # never more than the limit in total, whatever the header says
                        chunk = member.read(min(_CHUNK, limit + 1 - total))
                        if not chunk:
                            break
                        total += len(chunk)
                        if total > limit:
                            raise FileTooLargeError(
                                f"unpacks to more than the {format_size(limit)} limit", file=name,
                                fix="set EVALCORE_MAX_FILE_MB to a larger number of megabytes before starting "
                                    "evalcore, or zip only the files the dataset needs")
                        out.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"could not be unpacked as a zip archive ({detail})", file=name,
                        fix="check that the file was copied completely, or unzip it yourself and give the folder"
                        ) from None
    return dest


def read_bytes(source: str | Path | bytes, name: str | None, limit: int | None) -> tuple[bytes, str]:
    """The file's bytes (decompressed) and its name for messages."""
    data, name = _read_raw(source, name, limit)
    return decompress(data, name=name, limit=limit), name


def _read_raw(source: str | Path | bytes, name: str | None, limit: int | None) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = name or "the upload"
        check_size(len(data), name, limit)
        return data, name
    path = Path(source)
    name = name or path.name
    if not path.exists():
        raise DataError("file not found", file=str(path), fix="check the path")
    if path.is_dir():
        raise DataError("is a folder, not a file", file=str(path),
                        fix="give a file, or use a --preset that reads folders (llmbar, pandalm)")
    check_size(path.stat().st_size, name, limit)
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
    return sniff_plain(decompress(data, name=name) if compression(data) else data, name)


def sniff_plain(data: bytes, name: str) -> str:
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
            # Whole names (a name cut at a fixed width read 'statistics.jso'), at most a few of them.
            inside = [m for m in members if not m.endswith("/")]
            shown = ", ".join(inside[:_SHOWN]) + (f" and {len(inside) - _SHOWN} more" if len(inside) > _SHOWN else "")
            raise DataError(f"is a zip archive (holding {shown or 'nothing'}), not a data table", file=name,
                            fix="unzip it and choose the data file inside; a zip of a folder is read by the format "
                                "that reads the folder (llmbar, pandalm)")
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
    text = decode_text(data[:65536], name, probe=True)
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


def decode_text(data: bytes, name: str, *, probe: bool = False) -> str:
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
    for d in DELIMITERS:
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


def header_fields(text: str, sep: str) -> list[str]:
    try:
        return next(csv.reader(_io.StringIO(text), delimiter=sep), [])
    except csv.Error:
        return []



# --------------------------------------------------------------------------- the pyarrow parse

_FAST_HEAD = 1 << 16  # bytes decoded to sniff the delimiter and read the header on the fast path
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")  # control characters other than \t \n \f \r


@dataclass(frozen=True)
class ArrowCsv:
    """A delimited file parsed by :mod:`pyarrow.csv`, every cell as text.

    Attributes
    ----------
    table
        The ``pyarrow.Table`` (``large_string`` columns, null for the missing-value words).
    names
        The column names, stripped.
    keep
        Boolean numpy mask of the rows to keep (rows whose every field is empty are not
        judgments), or None to keep all.
    codes
        Per column, ``(codes, dictionary)`` or None: int32 codes in order of first appearance
        with -1 for missing, and the distinct values as a pyarrow array (what
        :func:`pandas.factorize` gives); the columns :func:`prefetch` factorised in its thread.
    """

    table: Any
    names: list[str]
    keep: Any
    codes: tuple | None = None


def arrow_csv(data: bytes, name: str, fmt: str, delimiter: str | None, *, threads: bool = True) -> ArrowCsv | None:
    """``data`` parsed by :mod:`pyarrow.csv` (typed, multi-threaded); None when unsure.

    The fast path covers the common file: UTF-8 (a BOM is fine), a delimiter that is detected
    or given and agrees with the header, no blank lines before the header, a header of two or
    more distinct non-empty names, and every row as wide as the header. Anything else (another
    encoding, ragged or blank lines, a parse error, an odd header) returns None and the pandas
    path of :mod:`evalcore.data.io` reads the file, so that every message and every edge case
    stays exactly as it was. ``threads``: let pyarrow parse on several cores.
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
    header = header_fields(text, sep)
    if header != header_fields(lines[0], sep) or len(header) < 2:
        return None  # a header over several lines, or one column
    names = [h.strip() for h in header]
    if any(not h for h in names) or len(set(names)) != len(names) or len(set(header)) != len(header):
        return None
    quoted = data.find(b'"') >= 0
    if quoted and data.count(b'"') % 2:
        return None  # a quote opened but never closed: pandas names the row, pyarrow would read on to the end
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)[start:] if start else pa.py_buffer(data)),
            read_options=pcsv.ReadOptions(use_threads=threads, column_names=header, skip_rows=1),
            # Without a quote in the file no value can hold a line break: the parser may split blocks freely.
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char='"', double_quote=True, escape_char=False,
                                            newlines_in_values=quoted, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                # Only an empty cell is missing: 'NA' or 'null' may be a rater's name (validation decides by column).
                column_types={h: pa.large_string() for h in header}, null_values=[""], strings_can_be_null=True,
                quoted_strings_can_be_null=True, check_utf8=True),
        )
    except Exception:  # ArrowInvalid (ragged rows, bad UTF-8, an unclosed quote) and the like
        return None
    if table.num_rows == 0:
        return None
    # Rows whose every field is empty are not judgments (the pandas path drops them too).
    keep = None
    if all(col.null_count for col in table.columns):
        empty = pc.is_null(table.column(0))
        for col in table.columns[1:]:
            empty = pc.and_(empty, pc.is_null(col))
        keep = ~np.asarray(empty.to_numpy(zero_copy_only=False), dtype=bool)
        if not keep.any():
            return None
        if keep.all():
            keep = None
    return ArrowCsv(table=table, names=names, keep=keep)


def _dictionary_codes(col) -> tuple:
    """``(codes, dictionary)`` of a text column, as pandas' ``ArrowExtensionArray.factorize`` computes them."""
    import numpy as np
    import pyarrow.compute as pc

    combined = pc.dictionary_encode(col, null_encoding="mask").combine_chunks()
    idx = combined.indices
    if idx.null_count:
        idx = pc.fill_null(idx, -1)
    return np.asarray(idx.to_numpy(zero_copy_only=False), dtype=np.int32), combined.dictionary


# --------------------------------------------------------------------------- reading ahead


@dataclass(frozen=True)
class Prefetched:
    """What :func:`read_bytes`, :func:`sniff_plain` and :func:`arrow_csv` gave for a prefetched file."""

    data: bytes  # empty once ``parsed`` holds the table: nothing reads the bytes again
    name: str
    fmt: str
    parsed: ArrowCsv | None  # None: not CSV/TSV, or a file the pyarrow path leaves to pandas


class _Reader(threading.Thread):
    """The background read of one file (see :func:`prefetch`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="evalcore-prefetch", daemon=True)
        self.path = path
        self.result: Prefetched | None = None
        self.imported = threading.Event()  # set once the main thread has imported pyarrow
        self.wanted = threading.Event()  # set when the main thread waits for the result

    def run(self) -> None:
        try:
            raw, name = _read_raw(self.path, None, None)
            if compression(raw) == "zstd":
                self.imported.wait()  # pyarrow's codec
            data = decompress(raw, name=name)
            del raw
            fmt = sniff_plain(data, name)
            self.imported.wait()
            # One parser thread: the main thread is busy importing on the other core.
            parsed = arrow_csv(data, name, fmt, None, threads=False) if fmt in ("csv", "tsv") else None
            if parsed is not None:
                data = b""  # the table holds the data: let the bytes go (a new process pays for fresh memory)
                # Not for thousands of columns: validation keeps at most a few hundred, and encoding each
                # column would cost seconds (20,000 columns: 2.5 s).
                if parsed.keep is None and len(parsed.names) <= 1000:
                    parsed = replace(parsed, codes=self._factorise(parsed.table.columns))
            self.result = Prefetched(data=data, name=name, fmt=fmt, parsed=parsed)
        except Exception:  # the main thread reads the file itself and reports the problem
            self.result = None

    def _factorise(self, cols: list) -> tuple:
        """Each column's :func:`_dictionary_codes` for validation: one at a time while the main thread
        imports, then the rest on two threads once it waits (its core is idle; the kernels release the GIL)."""
        done: list = [None] * len(cols)

        def encode(ks: list[int]) -> None:
            for k in ks:
                done[k] = _dictionary_codes(cols[k])

        k = 0
        while k < len(cols) and not self.wanted.is_set():
            encode([k])
            k += 1
        rest = list(range(k, len(cols)))
        if rest:
            other = threading.Thread(target=encode, args=(rest[1::2],), name="evalcore-prefetch-codes", daemon=True)
            other.start()
            encode(rest[::2])
            other.join()
        return tuple(done)


_PENDING: dict[tuple, _Reader] = {}
_PENDING_LOCK = threading.Lock()


def _key(path: Path) -> tuple | None:
    """What identifies the file's contents for reading ahead: its real path, size and modification time."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return os.path.realpath(path), st.st_size, st.st_mtime_ns, max_file_bytes()


def prefetch(path: str | Path) -> None:
    """Start reading ``path`` in a background thread: its bytes, decompressed, and the pyarrow parse.

    For the command line: a fresh process spends about half a second importing pandas and the
    analyses on one core while the other is idle, and pyarrow's parser, the decompressors and
    its compute kernels release the GIL. :func:`take_prefetched` joins the thread. A file that
    is missing, not a regular file, or fails in any way is simply read again by the main thread,
    which reports the problem as usual.
    """
    key = _key(Path(path))
    if key is None:
        return
    import bz2  # noqa: F401  (the reader imports nothing itself: see below)
    import zlib  # noqa: F401

    reader = _Reader(Path(path))
    with _PENDING_LOCK:
        if key in _PENDING:
            return
        _PENDING[key] = reader
    reader.start()  # reads and decompresses the bytes meanwhile
    # Imported here, in the calling thread, so that the reader never imports a module the main
    # thread may be importing at the same time.
    try:
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    finally:
        reader.imported.set()


def take_prefetched(source: object, *, name: str | None, limit: int | None,
                    delimiter: str | None) -> Prefetched | None:
    """The prefetched read of ``source`` when :func:`prefetch` read that very file with these options, else None.

    Only a path read with the default name, size limit and delimiter matches (that is how
    :func:`prefetch` read it), and only while the file's size and modification time are unchanged.
    """
    if not _PENDING or name is not None or limit is not None or delimiter is not None \
            or not isinstance(source, (str, Path)):
        return None
    key = _key(Path(source))
    with _PENDING_LOCK:
        reader = _PENDING.pop(key, None) if key is not None else None
    if reader is None:
        return None
    reader.wanted.set()
    reader.join()
    return reader.result


def drop_prefetched() -> None:
    """Wait for the reads nobody took and forget them (none outlives the command that started it)."""
    with _PENDING_LOCK:
        pending = list(_PENDING.values())
        _PENDING.clear()
    for reader in pending:
        reader.wanted.set()
        reader.join()
