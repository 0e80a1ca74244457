"""Regenerate the bad-input fixtures of tests/test_bad_input.py (deterministic).

Run from anywhere: ``python tests/data/bad/make_files.py``. Each file shows one problem a
user can cause; the files are small and committed, this script documents how they were made.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = ["item_id", "rater", "rater_kind", "criterion", "score"]
GOOD = [
    ["q1", "ann1", "human", "LA", "3"],
    ["q1", "ann2", "human", "LA", "2"],
    ["q1", "gpt-4", "judge", "LA", "3"],
    ["q2", "ann1", "human", "LA", "1"],
    ["q2", "ann2", "human", "LA", "1"],
    ["q2", "gpt-4", "judge", "LA", "2"],
]


def _csv(rows: list[list[str]], *, delimiter: str = ",") -> bytes:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def _edit(row: int, col: str, value: str) -> list[list[str]]:
    """GOOD with one cell changed; ``row`` is the spreadsheet row (data starts at 2)."""
    rows = [list(r) for r in GOOD]
    rows[row - 2][HEADER.index(col)] = value
    return [HEADER, *rows]


def _png() -> bytes:
    """A valid 1x1 PNG: a binary file a user might rename to .csv by mistake."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
            + chunk(b"IEND", b""))


def _xlsx_two_sheets() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "ratings"
    for r in [HEADER, *GOOD]:
        ws.append([int(v) if v.isdigit() else v for v in r])
    about = wb.create_sheet("about")
    about.append(["note"])
    about.append(["exported from the annotation tool"])
    stamp = dt.datetime(2024, 1, 1)
    wb.properties.created = wb.properties.modified = stamp
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def files() -> dict[str, bytes]:
    no_judge = [HEADER, *[r for r in GOOD if r[2] != "judge"]]
    no_human = [HEADER, *[r for r in GOOD if r[2] != "human"]]
    big = [HEADER] + [[f"q{i}", rater, kind, "LA", str(1 + i % 5)]
                      for i in range(1, 31) for rater, kind in (("ann1", "human"), ("gpt-4", "judge"))]
    html = [HEADER + ["text"]] + [r + [t] for r, t in zip(GOOD, [
        "<b>bold</b> answer", '=HYPERLINK("http://example.com","click")', "plain answer",
        "<script>alert(1)</script>", "@SUM(A1:A2)", "-1",
    ])]
    return {
        "misspelt_column.csv": _csv([["item_id", "rater", "rater_kind", "criterion", "scroe"], *GOOD]),
        "missing_column.csv": _csv([r[:4] for r in [HEADER, *GOOD]]),
        "empty.csv": b"",
        "header_only.csv": _csv([HEADER]),
        "semicolons.csv": _csv([HEADER, *GOOD], delimiter=";"),
        "commas_named_tsv.tsv": _csv([HEADER, *GOOD]),
        "non_numeric_score.csv": _csv(_edit(6, "score", "three")),
        "missing_id.csv": _csv(_edit(5, "item_id", "")),
        "duplicate_judgment.csv": _csv([HEADER, *GOOD, ["q2", "ann2", "human", "LA", "2"]]),
        "unknown_rater_kind.csv": _csv(_edit(4, "rater_kind", "robot")),
        "no_judge.csv": _csv(no_judge),
        "no_human.csv": _csv(no_human),
        "no_judge_by_name.csv": _csv([["item_id", "rater", "score"]] + [[r[0], r[1], r[4]] for r in GOOD if r[2] == "human"]),
        "too_large.csv": _csv(big),
        "binary.csv": _png(),
        "several_sheets.xlsx": _xlsx_two_sheets(),
        "not_records.json": b'{"judge": "gpt-4", "scores": {"q1": 3, "q2": 2}}\n',
        "html_formulas.csv": _csv(html),
    }


if __name__ == "__main__":
    for name, data in files().items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")
