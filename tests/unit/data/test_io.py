"""Tests of evalcore.data.io.read_table: formats, encodings, delimiters, quoting, ids, row numbers."""

from __future__ import annotations

import io as _io
import json

import numpy as np
import pandas as pd
import pytest

from evalcore.data import files, ingest, io
from evalcore.errors import DataError

ROWS = [
    {"item_id": "007", "rater": "Zoë", "rater_kind": "human", "criterion": "LA", "score": 3,
     "comment": "fine, mostly"},
    {"item_id": "007", "rater": "José", "rater_kind": "human", "criterion": "LA", "score": 4,
     "comment": 'said "ok"'},
    {"item_id": "007", "rater": "gpt-4", "rater_kind": "judge", "criterion": "LA", "score": 4,
     "comment": "two\nlines"},
    {"item_id": "010", "rater": "Zoë", "rater_kind": "human", "criterion": "LA", "score": 1,
     "comment": "a; b | c\td"},
    {"item_id": "010", "rater": "José", "rater_kind": "human", "criterion": "LA", "score": 2,
     "comment": "ça va"},
    {"item_id": "010", "rater": "gpt-4", "rater_kind": "judge", "criterion": "LA", "score": 2,
     "comment": "plain"},
]
REF = pd.DataFrame(ROWS)
COLUMNS = list(REF.columns)


def _write(fmt: str) -> tuple[bytes, str]:
    if fmt == "csv":
        return REF.to_csv(index=False).encode("utf-8"), "data.csv"
    if fmt == "tsv":
        return REF.to_csv(index=False, sep="\t").encode("utf-8"), "data.tsv"
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS).encode("utf-8"), "data.jsonl"
    if fmt == "json":
        return json.dumps(ROWS, ensure_ascii=False, indent=1).encode("utf-8"), "data.json"
    buf = _io.BytesIO()
    if fmt == "parquet":
        REF.to_parquet(buf, index=False)
        return buf.getvalue(), "data.parquet"
    REF.to_excel(buf, index=False, sheet_name="judgments", engine="openpyxl")
    return buf.getvalue(), "data.xlsx"


FORMATS = ["csv", "tsv", "jsonl", "json", "parquet", "excel"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reads_to_the_same_frame(fmt, tmp_path):
    data, name = _write(fmt)
    path = tmp_path / name
    path.write_bytes(data)
    for source, kw in ((path, {}), (data, {"name": name})):  # a path, or the bytes of an upload
        raw = io.read_table(source, **kw)
        assert raw.attrs["format"] == fmt and raw.attrs["file"] == name
        assert list(raw.columns) == COLUMNS
        # Cell for cell the same as what was written (text stays text: '007' keeps its zeros).
        assert raw.astype(str).values.tolist() == REF.astype(str).values.tolist()
        assert list(raw["item_id"]) == ["007", "007", "007", "010", "010", "010"]
    # And the canonical table is identical whatever the format.
    got = ingest.ingest_frame(raw, file=name).frame
    want = ingest.ingest_frame(io.read_table(_write("csv")[0], name="data.csv"), file=name).frame
    pd.testing.assert_frame_equal(got, want)
    assert list(got["item_id"].unique()) == ["007", "010"]
    assert list(got["score"]) == [3.0, 4.0, 4.0, 1.0, 2.0, 2.0]


def test_format_comes_from_the_content_not_only_the_name():
    parquet, _ = _write("parquet")
    excel, _ = _write("excel")
    jsonl, _ = _write("jsonl")
    assert io.read_table(parquet, name="export.csv").attrs["format"] == "parquet"
    assert io.read_table(excel, name="export.csv").attrs["format"] == "excel"
    assert io.read_table(jsonl, name="export.txt").attrs["format"] == "jsonl"
    # JSON Lines saved as .json, and records under a single key, read too.
    assert len(io.read_table(jsonl, name="export.json")) == 6
    wrapped = io.read_table(json.dumps({"version": 2, "data": ROWS}).encode(), name="w.json")
    assert len(wrapped) == 6 and wrapped.attrs["notes"] == ["w.json: read the records under the key 'data'."]


# --------------------------------------------------------------------------- encodings

TEXT = "item_id,rater,score\n007,Zoë,3\n008,José,4\n009,Müller-Łukasz,5\n"
LATIN = "item_id,rater,score\n007,Zoë,3\n008,José,4\n009,Ångström,5\n"


@pytest.mark.parametrize("encoding,detected,text", [
    ("utf-8", "utf-8", TEXT),
    ("utf-8-sig", "utf-8-sig", TEXT),
    ("utf-16", "utf-16", TEXT),  # with a BOM (Python writes one)
    ("utf-16-le", "utf-16-le", TEXT),  # without a BOM
    ("utf-16-be", "utf-16-be", TEXT),
    ("cp1252", "cp1252", LATIN),
    ("latin-1", "cp1252", LATIN),  # Latin-1 letters have the same bytes in cp1252
])
def test_encodings_decode_right(encoding, detected, text):
    data = text.encode(encoding)
    assert files.detect_encoding(data) == detected
    frame = io.read_table(data, name="names.csv")
    expected = [line.split(",")[1] for line in text.splitlines()[1:]]
    assert list(frame["rater"]) == expected
    assert list(frame.columns) == ["item_id", "rater", "score"]  # no BOM glued to the first name
    assert list(frame["item_id"]) == ["007", "008", "009"]


def test_utf16_bom_detection_helpers():
    assert files.detect_encoding("a,b\n".encode("utf-16-le")) == "utf-16-le"
    assert files.detect_encoding(b"\xef\xbb\xbfa,b\n") == "utf-8-sig"
    assert files.detect_encoding("é".encode("utf-8")) == "utf-8"
    assert files.detect_encoding(b"\x81\x8d") == "latin-1"  # bytes cp1252 leaves undefined


# --------------------------------------------------------------------------- delimiters and quoting


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiter_is_sniffed(sep):
    data = REF.to_csv(index=False, sep=sep)
    assert files.sniff_delimiter(data) == sep
    frame = io.read_table(data.encode(), name="data.csv")
    assert frame.shape == (6, 6)
    # Quoted fields hold the delimiter, quotes and newlines intact.
    assert list(frame["comment"]) == list(REF["comment"])
    assert frame.attrs["notes"] == []


def test_forced_delimiter_and_its_names():
    data = REF.to_csv(index=False, sep="\t").encode()
    for d in ("\t", "\\t", "tab", "TAB"):
        assert io.read_table(data, name="d.csv", delimiter=d).shape == (6, 6)
    assert files.normalize_delimiter("semicolon") == ";" and files.normalize_delimiter(None) is None
    with pytest.raises(DataError, match=r"d\.csv: the delimiter '::' cannot be used\. Fix: give one character"):
        io.read_table(data, name="d.csv", delimiter="::")
    with pytest.raises(DataError, match="separated by tabs, not commas"):
        io.read_table(data, name="d.csv", delimiter=",")


def test_forced_delimiter_on_a_file_with_decimal_commas():
    # A ';' file with decimal commas forced to ',': the header has no comma, the rows do.
    data = b"item_id;rater;score\nq1;a;3,5\nq2;b;4,0\n"
    with pytest.raises(DataError, match=r"semi\.csv: every row landed in one column .* separated by semicolons"):
        io.read_table(data, name="semi.csv", delimiter=",")
    assert list(io.read_table(data, name="semi.csv")["score"]) == ["3,5", "4,0"]


def test_sniffing_ignores_delimiters_inside_quotes():
    data = 'id,text\n1,"a;b;c;d"\n2,"e;f;g;h"\n3,"x|y|z"\n'
    assert files.sniff_delimiter(data) == ","
    assert list(io.read_table(data.encode(), name="q.csv")["text"]) == ["a;b;c;d", "e;f;g;h", "x|y|z"]


def test_ids_keep_their_zeros_and_na_words_stay_text():
    data = b"item_id,rater,score,note\n007,0042,3,NA\n0.50,1e3,4,\n"
    frame = io.read_table(data, name="ids.csv")
    assert list(frame["item_id"]) == ["007", "0.50"]
    assert list(frame["rater"]) == ["0042", "1e3"]
    # Only the empty cell is missing when read; validation reads 'NA' as missing outside the name columns.
    assert frame["note"].iloc[0] == "NA" and pd.isna(frame["note"].iloc[1])


# --------------------------------------------------------------------------- row numbers and layout problems


def test_blank_rows_are_dropped_and_row_numbers_kept():
    data = b"\n\nitem_id,rater,rater_kind,score\nq1,a,human,1\n\nq1,gpt,judge,2\n,,,\nq2,a,human,x\n"
    frame = io.read_table(data, name="gaps.csv")
    assert len(frame) == 3
    assert list(io.row_numbers(frame)) == [4, 6, 8]
    assert (frame.attrs["first_row"], frame.attrs["skipped_rows"]) == (4, (5, 7))
    with pytest.raises(DataError) as info:
        ingest.ingest_frame(frame, file="gaps.csv")
    assert (info.value.row, info.value.column) == (8, "score")
    assert str(info.value).startswith("gaps.csv, row 8, column 'score': criterion 'overall' mixes numbers ('1', "
                                      "'2') and text labels ('x': 1 row(s))")


def test_excel_title_rows_blank_rows_and_text_ids():
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws["B1"] = "Annotation export"  # a title above the table, which starts in column B
    for r, row in enumerate([["item_id", "rater", "rater_kind", "score"], ["007", "ann", "human", 3],
                             [None, None, None, None], ["007", "gpt-4", "judge", 4.5],
                             ["008", "ann", "human", "n/a?"]], start=3):
        for c, v in enumerate(row, start=2):
            ws.cell(row=r, column=c, value=v)
    buf = _io.BytesIO()
    wb.save(buf)
    frame = io.read_table(buf.getvalue(), name="book.xlsx")
    assert list(frame.columns) == ["item_id", "rater", "rater_kind", "score"]
    assert list(frame["item_id"]) == ["007", "007", "008"]  # text cells stay text
    assert list(frame["score"]) == [3, 4.5, "n/a?"]  # numbers stay numbers
    assert list(io.row_numbers(frame)) == [4, 6, 7]  # the rows Excel shows
    assert frame.attrs["notes"] == ["book.xlsx: the table on sheet 'Sheet' starts at row 3; the rows above it "
                                    "were skipped."]
    with pytest.raises(DataError) as info:
        ingest.ingest_frame(frame, file="book.xlsx")
    assert (info.value.row, info.value.column) == (7, "score")
    assert "mixes numbers ('3', '4.5') and text labels ('n/a?': 1 row(s))" in str(info.value)
    # Without the title the header is row 1 and nothing is said about skipped rows.
    ws.delete_rows(1, 2)
    buf = _io.BytesIO()
    wb.save(buf)
    frame = io.read_table(buf.getvalue(), name="book.xlsx")
    assert list(io.row_numbers(frame)) == [2, 4, 5] and frame.attrs["notes"] == []


def test_excel_with_one_of_several_sheets_empty_needs_no_choice():
    buf = _io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as xl:
        pd.DataFrame().to_excel(xl, sheet_name="Empty", index=False)
        REF.to_excel(xl, sheet_name="Data", index=False)
    assert io.excel_sheets(buf.getvalue(), name="b.xlsx") == ["Data"]
    assert len(io.read_table(buf.getvalue(), name="b.xlsx")) == 6


def test_duplicate_header_names_are_refused():
    with pytest.raises(DataError, match=r"dup\.csv, row 1, column 'score': two columns have the same name"):
        io.read_table(b"item_id,score,score\n1,2,3\n", name="dup.csv")
    buf = _io.BytesIO()
    pd.DataFrame([[1, 2, 3]], columns=["item_id", "score", "x"]).rename(columns={"x": "score"}).to_excel(
        buf, index=False)
    with pytest.raises(DataError, match=r"dup\.xlsx, row 1, column 'score': two columns have the same name"):
        io.read_table(buf.getvalue(), name="dup.xlsx")


def test_trailing_delimiter_adds_no_column():
    frame = io.read_table(b"item_id,rater,score,\nq1,a,1,\nq2,b,2,\n", name="t.csv")
    assert list(frame.columns) == ["item_id", "rater", "score"]
    # Also when only the data rows end with a delimiter: nothing shifts.
    frame = io.read_table(b"item_id,rater,score\nq1,a,1,\nq2,b,2,\n", name="t.csv")
    assert frame.to_dict("list") == {"item_id": ["q1", "q2"], "rater": ["a", "b"], "score": ["1", "2"]}


def test_rows_wider_than_the_header_are_refused_not_shifted():
    # pandas would take 'q1' as the index and shift 'a' into item_id.
    with pytest.raises(DataError) as info:
        io.read_table(b"item_id,rater,score\nq1,a,3,extra\nq2,b,4,extra\n", name="w.csv")
    assert str(info.value) == ("w.csv, row 2: has 4 fields where the header has 3. Fix: put quotes around values "
                               "that contain commas, or add the missing column names to the header.")
    with pytest.raises(DataError, match=r"w\.csv, row 3: has 4 fields where the header has 3"):
        io.read_table(b"item_id,rater,score\nq1,a,3,\nq2,b,4,x\n", name="w.csv")


@pytest.mark.parametrize("data,name,pattern", [
    (b"a,b,c\n1,2,3\n4,5,6,7\n", "ragged.csv", r"ragged\.csv, row 3: has 4 fields where the header has 3\. Fix:"),
    (b'a,b\n1,2\n"open,3\n4,5\n', "quote.csv", r"quote\.csv, row 3: has a quote .* never closed\. Fix:"),
    (b"[1, 2]", "nums.json", r"nums\.json, row 1: record 1 is a number, not an object with named fields\. Fix:"),
    (b"null", "null.json", r"null\.json: holds null, not a list of records\. Fix:"),
    (b"[]", "none.json", r"none\.json: holds no records\. Fix:"),
    (b'[{"a": 1}, {"a": 2]', "broken.json", r"broken\.json, row 1: is not valid JSON .*Fix:"),
    (b'{"a": 1}\n{"a": \n', "broken.jsonl", r"broken\.jsonl, row 2: line 2 is not valid JSON .*Fix:"),
    (b"a,b\n1,2\n", "fake.xlsx", r"fake\.xlsx: is named like an Excel file but is not one\. Fix:"),
    (b"PAR1 not really", "fake.parquet", r"fake\.parquet: could not be read as Parquet .*Fix:"),
    (bytes(range(256)) * 4, "noise.csv", r"noise\.csv: is not a text file .*Fix:"),
    (b"\n \n\t\n", "blank.csv", r"blank\.csv: is empty\. Fix:"),
])
def test_unreadable_files_get_one_message(data, name, pattern):
    with pytest.raises(DataError, match=pattern) as info:
        io.read_table(data, name=name)
    assert "\n" not in str(info.value)


def test_missing_path_and_folder(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        io.read_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a folder, not a file"):
        io.read_table(tmp_path)


def test_size_is_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "x.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 600)
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "0.001")
    with pytest.raises(DataError, match=r"x\.csv: is 2\.3 KB, over the 1\.0 KB limit\. Fix: set EVALCORE_MAX_FILE_MB"):
        io.read_table(path)
    assert files.format_size(1048) == "1.0 KB" and files.format_size(200 * 2**20) == "200 MB"
    assert files.format_size(999) == "999 bytes"
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "0.002")  # 2097 bytes: just under the file's 2404
    with pytest.raises(DataError, match=r"is 2\.3 KB, over the 2\.0 KB limit"):
        io.read_table(path)
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", str(2404 / 2**20 * 0.9995))
    with pytest.raises(DataError, match=r"is 2,404 bytes, over the 2,\d{3} bytes limit"):
        io.read_table(path)


def test_numbers_from_typed_formats_stay_numbers():
    frame = pd.DataFrame({"item_id": [7, 8], "score": [1.5, np.nan], "ok": [True, False]})
    buf = _io.BytesIO()
    frame.to_parquet(buf)
    back = io.read_table(buf.getvalue(), name="t.parquet")
    assert back["item_id"].dtype.kind == "i" and back["score"].dtype.kind == "f" and back["ok"].dtype == bool


def test_archives_are_named_as_such():
    import gzip
    import zipfile

    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("ratings.csv", "a,b\n1,2\n")
    with pytest.raises(DataError, match=r"r\.csv: is a zip archive \(holding ratings\.csv\), not a data table\. "
                                        r"Fix: unzip it"):
        io.read_table(buf.getvalue(), name="r.csv")
    # gzip is read transparently; a gzip inside a gzip is still named as an archive.
    assert io.read_table(gzip.compress(b"a,b\n1,2\n", mtime=0), name="r.csv.gz").to_dict("list") == \
        {"a": ["1"], "b": ["2"]}
    with pytest.raises(DataError, match=r"r\.csv\.gz: is not a data table: it looks like a gzip archive\. "
                                        r"Fix: decompress it"):
        io.read_table(gzip.compress(gzip.compress(b"a,b\n1,2\n", mtime=0), mtime=0), name="r.csv.gz")


def test_parquet_index_becomes_a_column():
    buf = _io.BytesIO()
    pd.DataFrame({"item_id": ["q1", "q2"], "score": [1, 2]}).set_index("item_id").to_parquet(buf)
    frame = io.read_table(buf.getvalue(), name="i.parquet")
    assert frame.to_dict("list") == {"item_id": ["q1", "q2"], "score": [1, 2]}
