"""The command line reads its input file in a background thread while pandas imports
(``evalcore.data.files.prefetch``). A read-ahead must change nothing but the time: the same frame,
the same factorised columns, the same messages for bad files, and a file changed in between is
read again."""

from __future__ import annotations

import contextlib
import gzip
import io as _io
import threading
import time

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data import codes, files, ingest, io
from evalcore.errors import DataError
from tests.helpers import BAD, HANNA, SAMPLE, SAMPLE_PAIRS, needs_datasets


def _settled() -> None:
    """Wait until no read-ahead thread runs (the reader factorises columns only while nobody waits)."""
    deadline = time.monotonic() + 60
    while any(t.name == "evalcore-prefetch" for t in threading.enumerate()):
        if time.monotonic() > deadline:
            raise TimeoutError("the read-ahead thread did not finish")
        time.sleep(0.01)


def _read(path, *, ahead: bool, settle: bool = False):
    """``read_table(path)`` (the frame, or the message of its DataError), with or without a read-ahead."""
    if ahead:
        files.prefetch(path)
        if settle:
            _settled()
    try:
        return io.read_table(path)
    except DataError as exc:
        return str(exc)
    finally:
        files.drop_prefetched()


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a.dtypes) == list(b.dtypes) and a.attrs == b.attrs


def _gz(tmp_path, src):
    path = tmp_path / (src.name + ".gz")
    path.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    return path


@pytest.mark.parametrize("settle", [False, True], ids=["main waits", "reader done"])
@pytest.mark.parametrize("which", ["sample", "pairs", "gzip", "latin-1", "json"])
def test_a_read_ahead_gives_the_frame_a_plain_read_gives(tmp_path, which, settle):
    if which == "sample":
        path = SAMPLE
    elif which == "pairs":
        path = SAMPLE_PAIRS
    elif which == "gzip":
        path = _gz(tmp_path, SAMPLE)
    elif which == "latin-1":  # the pyarrow path leaves it to pandas: the read-ahead only brings the bytes
        path = tmp_path / "latin.csv"
        path.write_bytes("item_id,rater,score\ncaf\xe9,ann,1\nna\xefve,gpt-4,2\n".encode("latin-1"))
    else:
        path = tmp_path / "records.json"
        path.write_text('[{"item_id": "007", "rater": "ann", "score": 1}]')
    _same(_read(path, ahead=True, settle=settle), _read(path, ahead=False))


@needs_datasets
def test_a_read_ahead_of_hanna_gives_the_same_frame():
    _same(_read(HANNA, ahead=True, settle=True), _read(HANNA, ahead=False))


@pytest.mark.parametrize("path", [SAMPLE, HANNA], ids=["sample", "hanna"])
def test_columns_factorised_ahead_are_what_pandas_factorize_gives(path):
    if not path.exists():
        pytest.skip("../shared/datasets not found: this test reads the real public data")
    files.prefetch(path)
    _settled()  # the reader had time for every column
    with codes.shared_codes():
        frame = io.read_table(path)
        for col in frame.columns:
            arr = codes.data_of(frame[col])
            known = codes.memo_get((arr, "codes", id(arr)))
            assert known is not None, f"{col} was not factorised ahead"
            expected_codes, expected_uniques = pd.factorize(frame[col])
            np.testing.assert_array_equal(known[0], expected_codes)
            pd.testing.assert_index_equal(known[1], expected_uniques, exact=True)


def test_factorised_columns_feed_validation_and_the_result_is_unchanged():
    plain = ingest.load(SAMPLE)
    files.prefetch(SAMPLE)
    _settled()
    ahead = ingest.load(SAMPLE)
    pd.testing.assert_frame_equal(ahead.frame, plain.frame, check_exact=True)
    assert ahead.notes == plain.notes and ahead.table == plain.table


@pytest.mark.parametrize("name", ["binary.csv", "empty.csv", "header_only.csv", "semicolons.csv",
                                  "commas_named_tsv.tsv", "not_records.json"])
def test_bad_files_give_the_same_message_after_a_read_ahead(name):
    path = BAD / name
    _same(_read(path, ahead=True), _read(path, ahead=False))


def test_a_damaged_gzip_gives_the_same_message(tmp_path):
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes())[:300])
    got = _read(path, ahead=True)
    assert isinstance(got, str) and "could not be decompressed as gzip" in got
    assert got == _read(path, ahead=False)


def test_the_size_limit_applies_to_a_read_ahead(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "0.001")  # about 1 KB
    got = _read(SAMPLE, ahead=True)
    assert isinstance(got, str) and "over the" in got and "limit" in got
    assert got == _read(SAMPLE, ahead=False)


def test_a_file_changed_after_the_read_ahead_is_read_again(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item_id,rater,score\na,ann,1\n")
    files.prefetch(path)
    _settled()
    path.write_text("item_id,rater,score\nb,ann,2\nc,ann,3\n")  # another size: another key
    assert io.read_table(path)["item_id"].tolist() == ["b", "c"]
    files.drop_prefetched()


def test_a_read_ahead_is_used_only_for_the_plain_read():
    files.prefetch(SAMPLE)
    # Another delimiter or size limit is another read: the read-ahead does not answer it.
    assert files.take_prefetched(SAMPLE, name=None, limit=None, delimiter=";") is None
    assert files.take_prefetched(SAMPLE, name=None, limit=10**9, delimiter=None) is None
    got = files.take_prefetched(SAMPLE, name=None, limit=None, delimiter=None)
    assert got is not None and got.fmt == "csv" and got.name == SAMPLE.name
    # The parsed table holds the data; the bytes were let go (they stay for a file pandas must read).
    assert got.parsed is not None and got.parsed.table.num_rows == len(pd.read_csv(SAMPLE)) and got.data == b""
    assert files.take_prefetched(SAMPLE, name=None, limit=None, delimiter=None) is None  # taken once
    files.prefetch(BAD.parent / "missing.csv")  # nothing to read: nothing starts
    assert not any(t.name == "evalcore-prefetch" for t in threading.enumerate())


def _cli(args) -> tuple[int, str]:
    out = _io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


#: A fresh ``evalcore`` process that reports on stderr whether its read of the file came from the read-ahead.
_PROBE = """
import sys
from evalcore.data import files
taken = []
take = files.take_prefetched
def probe(*a, **k):
    got = take(*a, **k)
    taken.append(got is not None)
    return got
files.take_prefetched = probe  # before evalcore.data.io imports it
from evalcore.cli import main
status = main(sys.argv[1:])
sys.stderr.write(f"read ahead: {taken}\\n")
raise SystemExit(status)
"""


def test_a_fresh_cli_process_reads_ahead_and_prints_what_it_printed_before():
    import subprocess
    import sys

    args = ["validate", str(SAMPLE), "--json"]
    fresh = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=True)
    assert "read ahead: [True]" in fresh.stderr
    # In a process that has imported pandas already there is nothing to overlap: no read-ahead, same output.
    assert _cli(args) == (0, fresh.stdout)
    assert not any(t.name == "evalcore-prefetch" for t in threading.enumerate())


def test_the_cli_reads_ahead_only_the_input_it_will_read(tmp_path):
    from evalcore.cli import _read_ahead

    s = str(SAMPLE)
    assert _read_ahead(["validate", s]) == s
    assert _read_ahead(["agreement", "--by", "language", "--boot", "0", s]) == s  # option values are not files
    assert _read_ahead(["validate", s, "--delimiter", ","]) is None  # another read than the plain one
    assert _read_ahead(["agreement", s, "--engine", "duckdb"]) is None  # the engine reads the file
    assert _read_ahead(["validate", s, "--help"]) is None
    assert _read_ahead(["validate", s, "--preset", "hanna"]) is None  # a preset reads the file its own way
    assert _read_ahead(["validate", s, "--preset=crowdkit"]) is None
    assert _read_ahead(["validate", "--preset", "none", s]) == s
    assert _read_ahead(["validate", str(tmp_path)]) is None  # a folder is for a preset
    assert _read_ahead(["validate", str(tmp_path / "missing.csv")]) is None
