"""`evalcore.data.hashing` against independent references: pandas' factorize and groupby, pyarrow's take,
and plain Python loops over the rows.

The fast paths (hash only the rows that differ from the row ``lag`` before, copy the rest; numpy's or
numba's bitmap passes) must not change a code. Every column is checked in several layouts: runs, periodic,
shuffled, with missing values, in several Arrow chunks, sliced (an offset into the buffers), long strings,
object dtype.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalcore.data import codes as column_memo
from evalcore.data.hashing import (
    arrow_array, best_lag, column_codes, diff_bits, distinct, encode_rows, expand_lagged, first_bit, is_arrow_string,
    known_codes, lag_heads, take, take_sorted,
)

WORDS = np.array([f"w{k}" for k in range(50)], dtype=object)


def _chunked(values, sizes) -> pd.Series:
    """A text column made of several Arrow chunks (as read_csv and concat give them)."""
    parts, start = [], 0
    for size in sizes:
        parts.append(pd.Series(values[start:start + size], dtype="str"))
        start += size
    s = pd.concat(parts, ignore_index=True)
    assert s.array._pa_array.num_chunks == len(sizes)
    return s


def _columns() -> dict[str, pd.Series]:
    rng = np.random.default_rng(3)
    long_words = np.array([("item-" * 200) + str(k) for k in range(40)], dtype=object)
    return {
        "runs": pd.Series(np.repeat(WORDS[rng.integers(0, 50, 400)], rng.integers(1, 30, 400)), dtype="str"),
        "period 7": pd.Series(np.tile(WORDS[:7], 3000), dtype="str"),
        "shuffled": pd.Series(WORDS[rng.integers(0, 50, 20_000)], dtype="str"),
        "nulls in runs": pd.Series(np.repeat(np.append(WORDS[:20], [None] * 5)[rng.integers(0, 25, 400)], 9),
                                   dtype="str"),
        "nulls scattered": pd.Series(np.where(rng.random(20_000) < 0.2, None, WORDS[rng.integers(0, 3, 20_000)]),
                                     dtype="str"),
        "period 5 with nulls": pd.Series(np.tile(np.array(["a", None, "b", "a", None], dtype=object), 2000),
                                         dtype="str"),
        "all null": pd.Series([None] * 1000, dtype="str"),
        "one value": pd.Series(["x"] * 5000, dtype="str"),
        "one row": pd.Series(["x"], dtype="str"),
        "two rows": pd.Series(["x", None], dtype="str"),
        "empty": pd.Series([], dtype="str"),
        "three chunks": _chunked(np.tile(WORDS[:4], 6000), [7000, 8000, 9000]),
        "chunks with runs": _chunked(np.repeat(WORDS[rng.integers(0, 50, 300)], 11), [1000, 5, 2295]),
        "sliced": pd.Series(np.repeat(WORDS[rng.integers(0, 50, 500)], 5), dtype="str").iloc[3:].reset_index(drop=True),
        "long strings": pd.Series(np.repeat(long_words[rng.integers(0, 40, 300)], 13), dtype="str"),
        "pd.NA strings": pd.Series(pd.array(np.tile(np.array(["a", None, "b"], dtype=object), 700),
                                            dtype=pd.StringDtype("pyarrow"))),
        "object": pd.Series(np.tile(np.array(["a", None, "b", "b"], dtype=object), 500), dtype=object),
        "integers": pd.Series(np.repeat(rng.integers(0, 9, 300), 4)),
    }


COLUMNS = _columns()


def _same_values(got: tuple, want) -> bool:
    want = tuple(np.nan if pd.isna(v) else v for v in want)
    return len(got) == len(want) and all((pd.isna(a) and pd.isna(b)) or a == b for a, b in zip(got, want))


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "numba"])
@pytest.mark.parametrize("lag", [0, None, 1, 3, 7])
@pytest.mark.parametrize("name", list(COLUMNS))
def test_codes_are_pandas_factorize(name, lag, compiled):
    """Every way of computing the codes gives pandas.factorize's codes and distinct values, missing values
    included (as their own code)."""
    s = COLUMNS[name]
    codes, uniques = column_codes(s, lag=lag, compiled=compiled)
    want_codes, want_uniques = pd.factorize(s, use_na_sentinel=False)
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, want_codes)
    assert _same_values(distinct(uniques), want_uniques)


@pytest.mark.parametrize("name", [n for n in COLUMNS if len(COLUMNS[n])])
def test_equal_values_share_a_code_as_in_groupby(name):
    """Rows with the same code are exactly the rows of one groupby group (missing values one group of their own)."""
    s = COLUMNS[name]
    codes, _ = column_codes(s, lag=None, compiled=True)
    groups = s.groupby(s, dropna=False, sort=False).ngroup().to_numpy()
    # Two labellings of the rows are the same partition when each code maps to one group and back.
    pairs = pd.DataFrame({"code": codes, "group": groups}).drop_duplicates()
    assert pairs["code"].is_unique and pairs["group"].is_unique


def test_the_distinct_values_come_back_as_the_column():
    """take(distinct values, codes) rebuilds the column, with its dtype, for Arrow text and for object columns."""
    for name in ("nulls in runs", "three chunks", "long strings", "pd.NA strings", "object"):
        s = COLUMNS[name]
        codes, uniques = column_codes(s, lag=None)
        back = take(s.iloc[:0], uniques, codes)
        assert back.dtype == s.dtype
        # Missing stays missing (an object column's None comes back as NaN, as pandas.factorize gives it).
        np.testing.assert_array_equal(back.isna().to_numpy(), s.isna().to_numpy())
        assert back[back.notna()].tolist() == s[s.notna()].tolist()


def _bits_reference(values: list, lag: int) -> np.ndarray:
    """Row j + lag differs from row j, missing equal to missing and different from any value."""
    return np.array([(a is None) != (b is None) or (a is not None and a != b)
                     for a, b in zip(values[lag:], values[:max(len(values) - lag, 0)])], dtype=bool)


@pytest.mark.parametrize("name", ["runs", "nulls scattered", "period 5 with nulls", "three chunks", "sliced",
                                  "all null", "one row", "empty"])
@pytest.mark.parametrize("lag", [1, 2, 5])
def test_diff_bits_mark_the_rows_that_differ(name, lag):
    arr = arrow_array(COLUMNS[name])
    values = arr.to_pylist()
    want = _bits_reference(values, lag)
    got = np.unpackbits(diff_bits(arr, lag), count=len(want), bitorder="little").astype(bool)
    np.testing.assert_array_equal(got, want)
    m = len(want)
    assert first_bit(diff_bits(arr, lag), m) == (int(np.flatnonzero(want)[0]) if want.any() else -1)


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "numba"])
def test_lag_passes_match_a_loop(compiled):
    """lag_heads and expand_lagged against the definition, on random bitmaps, for lags longer and shorter than
    the column."""
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 8, 9, 64, 1000):
        for lag in (1, 2, 3, 8, 13):
            m = max(n - lag, 0)
            differs = rng.random(m) < 0.3
            bits = np.packbits(differs, bitorder="little")
            want_heads = [i for i in range(n) if i < lag or differs[i - lag]]
            heads = lag_heads(bits, n, lag, compiled=compiled)
            assert heads.tolist() == want_heads
            head_codes = rng.integers(0, 100, len(heads))
            want = []
            for i in range(n):
                want.append(head_codes[want_heads.index(i)] if i in want_heads else want[i - lag])
            assert expand_lagged(bits, head_codes, n, lag, compiled=compiled).tolist() == want


def test_best_lag_finds_the_period():
    assert best_lag(arrow_array(COLUMNS["period 7"])) == 7
    assert best_lag(arrow_array(COLUMNS["one value"])) == 1
    assert best_lag(arrow_array(COLUMNS["shuffled"])) == 0


def test_take_sorted_is_pyarrow_take_across_chunks():
    arr = arrow_array(COLUMNS["chunks with runs"])
    rng = np.random.default_rng(1)
    for idx in (np.array([], dtype=np.int64), np.array([0, 999, 1000, 1004, 1005, len(arr) - 1]),
                np.sort(rng.choice(len(arr), 500, replace=False))):
        assert take_sorted(arr, idx).to_pylist() == arr.take(pa.array(idx)).to_pylist()
        codes, uniques = encode_rows(arr, idx)
        want_codes, want_uniques = pd.factorize(pd.Series(arr.take(pa.array(idx)).to_pylist(), dtype=object),
                                                use_na_sentinel=False)
        np.testing.assert_array_equal(codes, want_codes)
        assert _same_values(distinct(uniques), want_uniques)


def test_known_codes_are_validations_when_they_are_column_codes():
    """Inside a shared_codes block, a column factorised by evalcore.data.codes is not hashed again; outside it,
    or with missing values (pandas' code -1 is not a code of its own), nothing is known."""
    s = COLUMNS["runs"]
    with column_memo.shared_codes():
        column_memo.factorize(s)
        got = known_codes(s)
        assert got is not None
        codes, uniques = got
        np.testing.assert_array_equal(codes, column_codes(s)[0])
        assert distinct(uniques) == distinct(column_codes(s)[1])
        gaps = COLUMNS["nulls in runs"]
        column_memo.factorize(gaps)
        assert known_codes(gaps) is None
    assert known_codes(s) is None


def test_only_arrow_text_is_hashed_from_buffers():
    assert is_arrow_string(COLUMNS["runs"]) and is_arrow_string(COLUMNS["pd.NA strings"])
    assert not is_arrow_string(COLUMNS["object"]) and not is_arrow_string(COLUMNS["integers"])
    assert arrow_array(COLUMNS["object"]) is None
    assert isinstance(arrow_array(COLUMNS["runs"]), pa.ChunkedArray)
