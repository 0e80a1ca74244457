"""Compressed files, the pyarrow CSV path and the factorised validation give what the
element-wise paths give, value for value, and every message stays as it was."""

from __future__ import annotations

import bz2
import gzip
import io as _io
import json
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from evalcore.data import codes, files, ingest, io, validation
from evalcore.data.summary import summarize, unlocks
from evalcore.errors import DataError, FileTooLargeError
from tests.helpers import DATASETS, HANNA, SAMPLE, SAMPLE_PAIRS

needs_data = pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data tests need it")
STR = pd.StringDtype("pyarrow", na_value=np.nan)


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    return pa.Codec("zstd").compress(data, asbytes=True)


# The fastest levels: what is read back does not depend on the level (gzip at 9 costs 20 times the CPU of 1).
COMPRESS = {".gz": lambda d: gzip.compress(d, compresslevel=1, mtime=0), ".bz2": lambda d: bz2.compress(d, 1),
            ".zst": _zstd}


def _slow(monkeypatch) -> None:
    """Force the pandas path: the reference the fast path must reproduce."""
    monkeypatch.setattr(io, "_arrow_delimited", lambda *a, **k: None)


def _both(monkeypatch, data: bytes, name: str, **kw) -> tuple[object, object, bool]:
    """``read_table`` by the fast path and by the pandas path (a frame or the DataError message each),
    and whether the fast path took the file."""
    fmt = "tsv" if name.endswith(".tsv") else "csv"
    took = io._arrow_delimited(data, name, fmt, kw.get("delimiter")) is not None

    def read():
        try:
            return io.read_table(data, name=name, **kw)
        except DataError as exc:
            return str(exc)

    fast = read()
    with monkeypatch.context() as m:
        _slow(m)
        slow = read()
    return fast, slow, took


def _same(fast, slow) -> None:
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    assert list(fast.dtypes) == list(slow.dtypes)
    assert fast.attrs == slow.attrs
    np.testing.assert_array_equal(io.row_numbers(fast), io.row_numbers(slow))


# --------------------------------------------------------------------------- compressed files


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_compressed_sample_reads_as_the_plain_file(ext):
    data = SAMPLE.read_bytes()
    plain = io.read_table(SAMPLE)
    packed = io.read_table(COMPRESS[ext](data), name=SAMPLE.name + ext)
    pd.testing.assert_frame_equal(packed, plain, check_exact=True)
    assert packed.attrs["format"] == "csv" and packed.attrs["file"] == SAMPLE.name + ext
    assert len(packed) == len(pd.read_csv(SAMPLE)) and packed["item_id"].dtype == STR


@pytest.fixture(scope="module")
def hanna_plain():
    """The plain HANNA file through ``read_table`` and its shape by pandas (the same for every compression)."""
    return io.read_table(HANNA), pd.read_csv(HANNA).shape


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_compressed_hanna_reads_as_the_plain_file(tmp_path, ext, hanna_plain):
    path = tmp_path / (HANNA.name + ext)
    path.write_bytes(COMPRESS[ext](HANNA.read_bytes()))
    plain, shape = hanna_plain
    packed = io.read_table(path)
    pd.testing.assert_frame_equal(packed, plain, check_exact=True)
    assert plain.shape == shape and packed.attrs["file"] == HANNA.name + ext


def test_compression_is_found_by_its_bytes_and_the_inner_name_sets_the_format():
    tsv = b"item_id\trater\tscore\n007\tann\t1\n"
    # A gzip upload named without .gz is still decompressed; x.tsv.gz is read as TSV.
    assert io.read_table(gzip.compress(tsv), name="upload").to_dict("list") == \
        {"item_id": ["007"], "rater": ["ann"], "score": ["1"]}
    frame = io.read_table(bz2.compress(b"a;b\n1;2\n"), name="x.tsv.bz2")
    assert frame.to_dict("list") == {"a": ["1"], "b": ["2"]}
    assert frame.attrs["notes"] == ["x.tsv.bz2 is separated by semicolons, not tabs; it was read that way."]
    # Named .gz but plain text: read as the text it is.
    assert io.read_table(b"a,b\n1,2\n", name="x.csv.gz").to_dict("list") == {"a": ["1"], "b": ["2"]}
    assert files.compression(b"BZh is a header,b\n1,2\n") is None  # bzip2's magic needs its block header too
    assert files.inner_name("judgments.CSV.GZ") == "judgments.CSV" and files.inner_name(".gz") == ".gz"


def test_compressed_parquet_and_json_lines_are_read():
    frame = pd.DataFrame({"item_id": ["007", "010"], "score": [1.5, 2.0]})
    buf = _io.BytesIO()
    frame.to_parquet(buf, index=False)
    back = io.read_table(_zstd(buf.getvalue()), name="t.parquet.zst")
    pd.testing.assert_frame_equal(back, frame)
    lines = b'{"item_id": "007", "score": 1}\n{"item_id": "010", "score": 2}\n'
    assert io.read_table(gzip.compress(lines), name="t.jsonl.gz")["item_id"].tolist() == ["007", "010"]
    assert files.sniff_format(gzip.compress(buf.getvalue()), "t.parquet.gz") == "parquet"


def test_several_gzip_members_and_bzip2_streams_are_read_whole():
    a, b = b"a,b\n1,2\n", b"3,4\n"
    assert io.read_table(gzip.compress(a) + gzip.compress(b), name="x.csv.gz")["a"].tolist() == ["1", "3"]
    assert io.read_table(bz2.compress(a) + bz2.compress(b), name="x.csv.bz2")["b"].tolist() == ["2", "4"]


def test_a_decompression_bomb_is_refused_without_inflating_it(monkeypatch):
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "1")
    bomb = gzip.compress(b"a,b\n" + b"1,2\n" * (12 * 2**20))  # 48 MB of CSV in ~50 KB
    assert len(bomb) < files.max_file_bytes()
    tracemalloc.start()
    try:
        with pytest.raises(FileTooLargeError, match=r"^bomb\.csv\.gz: decompresses to more than the 1 MB limit\. "
                                                    r"Fix: set EVALCORE_MAX_FILE_MB"):
            io.read_table(bomb, name="bomb.csv.gz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20  # it stopped near the limit instead of inflating 48 MB
    for ext, pack in COMPRESS.items():
        with pytest.raises(FileTooLargeError, match="decompresses to more than the 1 MB limit"):
            files.decompress(pack(b"0" * (3 * 2**20)), name="z" + ext)


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_a_damaged_archive_says_so(ext):
    packed = COMPRESS[ext](SAMPLE.read_bytes())
    with pytest.raises(DataError, match=rf"^r\.csv{ext}: could not be decompressed as (gzip|bzip2|zstd) \(.+\)\. "
                                        r"Fix: check that the file was copied completely"):
        io.read_table(packed[: len(packed) // 2], name="r.csv" + ext)


def test_load_and_validate_read_a_compressed_file(tmp_path):
    path = tmp_path / "ratings.csv.gz"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    packed, plain = ingest.load(path), ingest.load(SAMPLE)
    pd.testing.assert_frame_equal(packed.frame, plain.frame, check_exact=True)
    assert packed.summary() == plain.summary()


# --------------------------------------------------------------------------- the pyarrow CSV path

ODD = {
    # name: (bytes, whether the fast path takes it)
    "quoted.csv": (b'item_id,text,score\n007,"a, b",1\n008,"two\nlines ""q""",2\n009,plain,\n', True),
    "na_tokens.csv": (b"id,x,y\n1,NA,n/a\n2,null,#N/A\n3, NA ,nan\n4,,\n", True),
    "empty_rows.csv": (b"id,x\n1,a\n,\n2,b\n", True),
    "crlf.csv": (b"id,x\r\n007,a\r\n010,b\r\n", True),
    "bom.csv": (b"\xef\xbb\xbfid,x\n1,a\n", True),
    "spaces.csv": (b" id , x \n 1 , a \n", True),
    "tabs.tsv": (b"id\tx\n1\ta,b\n", True),
    "semicolons.csv": (b"id;x\n1;2,5\n", True),
    "trailing_delimiter.csv": (b"id,x,\n1,a,\n2,b,\n", False),
    "ragged.csv": (b"id,x\n1,a\n2,b,c\n", False),
    "short_row.csv": (b"id,x,y\n1,a\n2,b,c\n", False),
    "blank_lines.csv": (b"id,x\n1,a\n\n2,b\n", True),
    "space_line.csv": (b"id,x\n1,a\n \n2,b\n", False),
    "mid_quote.csv": (b'id,x\n1,a"b"c\n2,d\n', True),
    "odd_quotes.csv": (b'id,x\n1,a"b\n2,d\n', False),
    "blank_head.csv": (b"\n\nid,x\n1,a\n", False),
    "latin1.csv": ("id,x\n1,café\n".encode("latin-1"), False),
    "utf16.csv": ("id,x\n1,a\n".encode("utf-16"), False),
    "duplicate_names.csv": (b"id,id\n1,2\n", False),
    "one_column.csv": (b"id\n1\n2\n", False),
    "unclosed_quote.csv": (b'id,x\n1,"a\n2,b\n', False),
    "header_only.csv": (b"id,x\n", False),
    "quoted_header.csv": (b'"id","x y"\n"1","a"\n', True),
    "cr_only.csv": (b"id,x\r1,a\r2,b\r", False),
    "quoted_empty.csv": (b'id,x\n1,""\n2,"NA"\n3,a\n', True),
    "quote_space.csv": (b'id,x\n1,"a" \n2,b\n', True),
    "crlf_in_quotes.csv": (b'id,x\r\n1,"a\r\nb"\r\n2,c\r\n', True),
    "latin1_header_big.csv": ("id,caf\xe9\n".encode("latin-1") + b"1,a\n" * 40000, False),
    "trailing_blank.csv": (b"id,x\n1,a\n2,b\n\n", True),
    "pipes.csv": (b"id|x\n1|a\n", True),
    "control_chars.csv": (b"id,x\n1,a\x01b\n", False),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_fast_and_pandas_paths_agree(monkeypatch, name):
    data, fast_expected = ODD[name]
    fast, slow, took = _both(monkeypatch, data, name)
    assert took == fast_expected
    _same(fast, slow)


def test_fast_path_keeps_text_and_missing_cells():
    frame = io.read_table(ODD["na_tokens.csv"][0], name="na.csv")
    # Only empty cells are missing when read: 'NA' may be a rater's name (validation decides by column).
    assert frame["x"].isna().tolist() == [False, False, False, True]
    assert frame["x"].iloc[:3].tolist() == ["NA", "null", " NA "]
    assert frame["y"].iloc[:3].tolist() == ["n/a", "#N/A", "nan"] and frame["id"].tolist() == ["1", "2", "3", "4"]
    quoted = io.read_table(ODD["quoted.csv"][0], name="q.csv")
    assert quoted["text"].tolist() == ["a, b", 'two\nlines "q"', "plain"]
    assert quoted["item_id"].tolist() == ["007", "008", "009"] and quoted["item_id"].dtype == STR
    rows = io.read_table(ODD["empty_rows.csv"][0], name="e.csv")
    assert rows["id"].tolist() == ["1", "2"] and io.row_numbers(rows).tolist() == [2, 4]


def test_forced_delimiter_on_both_paths(monkeypatch):
    data = b"id;x\n1;a\n"
    for delimiter in (";", "semicolon", ","):
        fast, slow, _ = _both(monkeypatch, data, "d.csv", delimiter=delimiter)
        _same(fast, slow)
    assert isinstance(fast, str) and "separated by semicolons, not commas" in fast


@pytest.mark.parametrize("path", [SAMPLE, SAMPLE_PAIRS], ids=lambda p: p.name)
def test_fast_path_reproduces_the_sample_data(monkeypatch, path):
    fast, slow, took = _both(monkeypatch, path.read_bytes(), path.name)
    assert took
    _same(fast, slow)


@needs_data
def test_fast_path_reproduces_hanna(monkeypatch):
    fast, slow, took = _both(monkeypatch, HANNA.read_bytes(), HANNA.name)
    assert took and fast.shape == pd.read_csv(HANNA).shape
    _same(fast, slow)


@needs_data
@pytest.mark.parametrize("subset", ["Natural", "Adversarial/GPTInst"])
def test_fast_path_reproduces_llmbar_as_csv(monkeypatch, subset):
    # LLMBar ships JSON; as CSV its instructions and outputs hold quotes, commas and line breaks.
    records = json.loads((DATASETS / "llmbar" / subset / "dataset.json").read_text(encoding="utf-8"))
    data = pd.DataFrame(records).to_csv(index=False).encode("utf-8")
    fast, slow, took = _both(monkeypatch, data, "llmbar.csv")
    assert took and len(fast) == len(records)
    _same(fast, slow)
    assert fast["output_1"].tolist() == [str(r["output_1"]) if r["output_1"] != "" else np.nan
                                         for r in records][: len(fast)]


# --------------------------------------------------------------------------- factorised validation


def _object(frame: pd.DataFrame) -> pd.DataFrame:
    """The same cells as Python objects: validate's element-wise path, the reference."""
    return frame.astype(object).where(frame.notna(), None)


def _validate_both(frame: pd.DataFrame, **kw):
    out = []
    for f in (frame, _object(frame)):
        try:
            out.append(validation.validate(f, **kw))
        except DataError as exc:
            out.append(str(exc))
    return out


def _messy() -> pd.DataFrame:
    rows = {
        "item_id": [" 007", "007", "010 ", "010", "011", "011"],
        "rater": ["ann", "gpt-4 ", "ann", "gpt-4", " ann", "gpt-4"],
        "rater_kind": ["Human", " LLM", "human", "JUDGE", "annotator", "model"],
        "criterion": [" LA", None, "", "LA", "OCQ", "OCQ"],
        "score": ["1,5", " 2", "3", None, "4,25", "1"],
        "note": ["=SUM(A1)", "-1", "<b>x</b>", "a & b", "+", "ok"],
    }
    return pd.DataFrame({k: pd.array(v, dtype=STR) for k, v in rows.items()})


def test_factorised_validation_matches_the_element_wise_path():
    fast, ref = _validate_both(_messy(), table="ratings", file="m.csv")
    assert fast.notes == ref.notes and len(fast.notes) == 4  # decimal commas, empty score, formula, html
    canonical = ["item_id", "rater", "rater_kind", "criterion", "score"]
    pd.testing.assert_frame_equal(fast.frame[canonical], ref.frame[canonical], check_exact=True)
    assert fast.frame["item_id"].tolist() == ["007", "007", "010", "011", "011"]
    assert fast.frame["criterion"].tolist() == ["LA", "overall", "overall", "OCQ", "OCQ"]
    assert fast.frame["score"].tolist() == [1.5, 2.0, 3.0, 4.25, 1.0]
    assert fast.frame["rater_kind"].tolist() == ["human", "judge", "human", "human", "judge"]


@pytest.mark.parametrize("change, phrase", [
    ({"item_id": ["007", "", "010", "010"]}, "1 row(s) have no item id"),
    ({"rater_kind": ["human", "robot", "human", "judge"]}, "rater_kind must be 'human' or 'judge' but is 'robot'"),
    ({"rater_kind": ["human", "judge", "judge", "judge"]}, "rater 'ann' is marked both human and judge"),
    ({"score": ["1", "two", "3", "x"]},
     "criterion 'LA' mixes numbers ('1', '3') and text labels ('two', 'x': 2 row(s))"),
    ({"score": ["bad", "good\x01", "ok", "bad"]}, "1 label(s) hold an invisible control character: 'good\\x01'"),
    ({"score": ["1,000", "2,000", "3", "4"]}, "could use the comma as a thousands separator"),
    ({"score": ["1", "inf", "3", "4"]}, "score must be a finite number"),
    ({"rater": ["ann", "ann", "ann", "gpt"], "rater_kind": ["human", "human", "human", "judge"]},
     "rows 2 and 3 are the same judgment (item_id=007, rater=ann, criterion=LA)"),
])
def test_factorised_validation_gives_the_same_messages(change, phrase):
    base = {"item_id": ["007", "007", "010", "010"], "rater": ["ann", "gpt", "ann", "gpt"],
            "rater_kind": ["human", "judge", "human", "judge"], "criterion": ["LA"] * 4, "score": ["1", "2", "3", "4"]}
    base.update(change)
    frame = pd.DataFrame({k: pd.array(v, dtype=STR) for k, v in base.items()})
    fast, ref = _validate_both(frame, table="ratings", file="b.csv")
    assert isinstance(fast, str) and fast == ref
    assert phrase in fast


def test_summary_counts_match_plain_pandas():
    ing = ingest.load(SAMPLE)
    frame = ing.frame
    s = summarize(frame, table="ratings")
    humans = frame[frame["rater_kind"] == "human"]
    assert s.items == frame["item_id"].nunique() and s.rows == len(frame)
    assert s.human_raters == humans["rater"].nunique()
    assert s.judges == frame.loc[frame["rater_kind"] == "judge", "rater"].nunique()
    assert s.max_humans_per_item == humans.groupby(["item_id", "criterion"])["rater"].nunique().max()
    assert s.languages == tuple(sorted(frame["language"].unique()))
    with codes.shared_codes():
        av = unlocks(frame, table="ratings")
        assert summarize(frame, table="ratings", available=av) == s
    assert list(av.loc[av["available"], "analysis"]) == list(s.unlocks)


def test_shuffled_rows_are_grouped_by_item_as_before(monkeypatch):
    raw = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).sample(frac=1, random_state=1)
    data = raw.to_csv(index=False).encode()
    fast = ingest.ingest_frame(io.read_table(data, name="s.csv"), file="s.csv")
    with monkeypatch.context() as m:
        _slow(m)
        slow = ingest.ingest_frame(_object(io.read_table(data, name="s.csv")), file="s.csv")
    canonical = ["item_id", "rater", "rater_kind", "criterion", "score"]
    pd.testing.assert_frame_equal(fast.frame[canonical], slow.frame[canonical], check_exact=True)
    codes = pd.factorize(fast.frame["item_id"])[0]
    assert (np.diff(codes) >= 0).all()


def test_reordering_by_codes_equals_iloc(monkeypatch):
    raw = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).sample(frac=1, random_state=2)
    frame = io.read_table(raw.to_csv(index=False).encode(), name="s.csv")
    fast = ingest.ingest_frame(frame, file="s.csv")
    monkeypatch.setattr(validation, "_reorder", lambda df, order: df.iloc[order])
    slow = ingest.ingest_frame(frame, file="s.csv")
    pd.testing.assert_frame_equal(fast.frame, slow.frame, check_exact=True)
    assert fast.frame.attrs == slow.frame.attrs and fast.notes == slow.notes
    assert fast.frame["item_id"].iloc[0] == raw["item_id"].iloc[0]


def _first_appearance_by_hashing(codes_, uniques):
    """The renumbering as it was computed before the prefix scan: one hash of the whole column."""
    reached = np.maximum.accumulate(codes_) if len(codes_) else codes_
    if not len(codes_) or (reached[0] <= 0 and not (np.diff(reached) > 1).any()):
        return codes_, uniques
    seen = pd.unique(codes_)
    seen = seen[seen >= 0]
    if len(seen) != len(uniques):
        return codes_, uniques
    renumber = np.full(len(uniques) + 1, -1, dtype=codes_.dtype)
    renumber[seen] = np.arange(len(seen), dtype=codes_.dtype)
    return renumber[codes_], uniques.take(seen)


@pytest.mark.parametrize("case", ["few values", "many values", "missing values", "a late value", "in order",
                                  "an unused value", "short", "empty"])
def test_first_appearance_by_prefix_equals_hashing_the_column(case):
    """Renumbering from a growing prefix gives the codes and values that hashing the whole column gave."""
    rng = np.random.default_rng(7)
    n, k = 200_000, {"many values": 30_000, "short": 3}.get(case, 8)
    codes_ = rng.permutation(np.arange(n if case != "short" else 50) % k)  # every value used
    if case == "missing values":
        codes_[rng.choice(n, 5000, replace=False)] = -1
    if case == "a late value":  # a value first seen far beyond the first prefixes
        codes_[codes_ == 5] = 4
        codes_[180_000] = 5
    if case == "in order":
        codes_ = np.sort(codes_)
    if case == "an unused value":
        k += 1
    if case == "empty":
        codes_ = codes_[:0]
    uniques = pd.Index(pd.array([f"v{i}" for i in range(k)], dtype=STR))
    got_codes, got_uniques = validation._first_appearance(codes_, uniques)
    want_codes, want_uniques = _first_appearance_by_hashing(codes_, uniques)
    np.testing.assert_array_equal(got_codes, want_codes)
    assert got_uniques.equals(want_uniques) and got_codes.dtype == want_codes.dtype
    if case not in ("an unused value",):  # the renumbered codes are pandas' own
        np.testing.assert_array_equal(got_codes, pd.factorize(uniques.take(codes_, allow_fill=True))[0])


@pytest.mark.parametrize("layout", ["runs", "runs with gaps", "shuffled"])
def test_factorize_by_runs_equals_pandas(layout):
    rng = np.random.default_rng(0)
    values = np.repeat([f"it{i:05d}" for i in rng.permutation(3000)], 10).astype(object)
    if layout == "runs with gaps":
        values[rng.choice(len(values), 300, replace=False)] = None
        values[100:110] = values[5000]  # a value that comes back after other runs
    if layout == "shuffled":
        values = values[rng.permutation(len(values))]
    s = pd.Series(pd.array(values, dtype=STR))
    got, uniques = codes.factorize(s)
    expected_codes, expected_uniques = pd.factorize(s)
    np.testing.assert_array_equal(got, expected_codes)
    assert uniques.equals(expected_uniques) and uniques.dtype == expected_uniques.dtype
    used = codes.factorize_runs(s, s.array._pa_array) is not None
    assert used == (layout != "shuffled")
