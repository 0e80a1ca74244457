"""Byte-level column hashing: integer codes of a column, from its Arrow buffers, hashing as few strings as it can.

A column's *codes* number its distinct values in order of first appearance, as
:func:`pandas.factorize` does, except that a missing value gets a code of its own (as with
``use_na_sentinel=False``). Arrow-backed strings (pandas 3's default text dtype) are encoded by
pyarrow's ``dictionary_encode`` straight from the buffers, and their distinct values stay a pyarrow
array; other columns go through :func:`pandas.factorize` and give a pandas Index.

Long files repeat themselves: sorted by item, ``item_id`` repeats the previous row; with every
unit's raters in the same order, ``rater`` repeats the row one unit back. Comparing two rows costs a
fifth of hashing one, so :func:`column_codes` can hash only the rows that differ from the row ``lag``
before them (:func:`best_lag` finds such a lag) and copy the codes of the rest. The row selection and
the copy are bitmap passes, in numpy or, for large columns, compiled by numba
(:mod:`evalcore.data._hashkernel`; ``compiled=True``): the caller decides, since loading numba pays
only in some processes.

:func:`known_codes` takes the factorisation that validation already computed in a
:func:`evalcore.data.codes.shared_codes` block, when it is the one :func:`column_codes` would give.
:func:`distinct` and :func:`take` turn the distinct values back into Python values or a column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .codes import data_of, memo_get

__all__ = [
    "is_arrow_string", "arrow_array", "diff_bits", "first_bit", "take_sorted", "best_lag", "lag_heads",
    "expand_lagged", "encode_rows", "encode_heads", "column_codes", "known_codes", "distinct", "take", "warm_up",
]


def is_arrow_string(s: pd.Series) -> bool:
    """Whether ``s`` holds Arrow-backed strings (pandas 3's default ``str`` dtype)."""
    return isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"


def arrow_array(s: pd.Series):
    """The column as a pyarrow ChunkedArray, or None when it is not Arrow-backed text."""
    if not is_arrow_string(s):
        return None
    import pyarrow as pa

    arr = pa.array(s.array)  # read_csv gives several chunks; kept as they are (no copy)
    return arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])


def diff_bits(arr, lag: int) -> np.ndarray:
    """Bitmap (Arrow's layout) whose bit ``j`` says row ``j + lag`` differs from row ``j``; missing equals missing."""
    import pyarrow.compute as pc

    m = max(len(arr) - lag, 0)
    neq = pc.not_equal(arr.slice(lag), arr.slice(0, m)).combine_chunks()  # booleans: a cheap copy
    if neq.null_count == 0 and neq.offset == 0:
        return np.frombuffer(neq.buffers()[1], dtype=np.uint8)[: (m + 7) // 8]
    valid = np.asarray(arr.is_valid())
    return np.packbits(np.asarray(neq.fill_null(False)) | (valid[lag:] != valid[:m]), bitorder="little")


def first_bit(bits: np.ndarray, m: int) -> int:
    """Index of the first set bit among the first ``m`` of a bitmap, or -1."""
    nz = np.flatnonzero(bits[: (m + 7) // 8])
    if not len(nz):
        return -1
    j = int(nz[0]) * 8 + int(np.flatnonzero(np.unpackbits(bits[nz[0]:nz[0] + 1], bitorder="little"))[0])
    return j if j < m else -1


def take_sorted(arr, idx: np.ndarray):
    """``arr.take(idx)`` for sorted ``idx``, chunk by chunk: about twice as fast as a take on the chunked array."""
    import pyarrow as pa

    bounds = np.cumsum([0] + [len(c) for c in arr.chunks])
    cut = np.searchsorted(idx, bounds)
    parts = [c.take(pa.array(idx[cut[k]:cut[k + 1]] - bounds[k])) for k, c in enumerate(arr.chunks)
             if cut[k + 1] > cut[k]]
    return pa.concat_arrays(parts) if parts else pa.array([], type=arr.type)


def best_lag(arr, *, probe: int = 4096, max_lag: int = 64) -> int:
    """A lag at which most rows repeat an earlier row (0 if none), judged on the first ``probe`` rows.

    "Most" is 15 rows in 16: below that, comparing every row and hashing the rest costs more than
    hashing every row.
    """
    import pyarrow.compute as pc

    head = arr.slice(0, probe)
    n = len(head)
    for lag in range(1, min(max_lag, n - 1) + 1):
        changed = pc.sum(pc.not_equal(head.slice(lag), head.slice(0, n - lag))).as_py() or 0
        if changed * 16 <= n - lag:
            return lag
    return 0


def lag_heads(bits: np.ndarray, n: int, lag: int, *, compiled: bool = False) -> np.ndarray:
    """Rows that differ from the row ``lag`` before them (bit set in :func:`diff_bits`), and the first ``lag`` rows.

    ``compiled``: numba's pass (:mod:`evalcore.data._hashkernel`) instead of numpy's; the same rows.
    """
    if compiled:
        from ._hashkernel import lag_heads as kernel

        return kernel(bits, n, lag)
    first = min(lag, n)
    changed = np.unpackbits(bits, count=n - first, bitorder="little")
    return np.concatenate([np.arange(first, dtype=np.int64), np.flatnonzero(changed).astype(np.int64) + lag])


def expand_lagged(bits: np.ndarray, head_codes: np.ndarray, n: int, lag: int, *, compiled: bool = False
                  ) -> np.ndarray:
    """Codes of all ``n`` rows from those of :func:`lag_heads`' rows: any other row repeats row ``i - lag``.

    ``compiled``: numba's pass (:mod:`evalcore.data._hashkernel`) instead of numpy's; the same codes.
    """
    if compiled:
        from ._hashkernel import expand_lagged as kernel

        return kernel(bits, head_codes, n, lag)
    first = min(lag, n)
    head = np.ones(n, dtype=bool)
    head[first:] = np.unpackbits(bits, count=n - first, bitorder="little").astype(bool)
    # A row copies the last head at or before it among the rows i, i - lag, i - 2 lag...: laid out as a
    # (rows, lag) table, that is a running maximum of the heads' positions down each column.
    rows = -(-n // lag) if lag else 0
    src = np.zeros(rows * lag, dtype=np.int64)
    src[:n] = np.where(head, np.arange(n, dtype=np.int64), 0)
    src = np.maximum.accumulate(src.reshape(rows, lag), axis=0).ravel()[:n]
    return np.asarray(head_codes, dtype=np.int64)[np.cumsum(head)[src] - 1]


def encode_rows(arr, rows: np.ndarray) -> tuple[np.ndarray, object]:
    """Codes of the rows ``rows`` (ascending) of a ChunkedArray, and their distinct values (a pyarrow array)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(take_sorted(arr, rows), null_encoding="encode")
    return np.asarray(enc.indices, dtype=np.int64), enc.dictionary


def encode_heads(arr, bits: np.ndarray, lag: int, *, compiled: bool = False) -> tuple[np.ndarray, np.ndarray, object]:
    """The rows that differ from the row ``lag`` before them, their codes, and the distinct values."""
    heads = lag_heads(bits, len(arr), lag, compiled=compiled)
    codes, uniques = encode_rows(arr, heads)
    return heads, codes, uniques


def column_codes(s: pd.Series, arr=None, *, lag: int | None = 0, bits: np.ndarray | None = None,
                 compiled: bool = False) -> tuple[np.ndarray, object]:
    """Integer codes (int64) of a column and its distinct values, in order of first appearance.

    Parameters
    ----------
    s
        The column. Missing values get a code of their own.
    arr
        ``s`` as a ChunkedArray (:func:`arrow_array`), when the caller has it already.
    lag
        Hash only the rows that differ from the row ``lag`` before them and copy the codes of the
        others; 0 (the default) hashes every row; None looks for a lag (:func:`best_lag`). Used only
        for Arrow-backed text.
    bits
        :func:`diff_bits` of ``arr`` at ``lag``, when the caller has it already.
    compiled
        Copy the codes with numba's passes (loads numba) rather than numpy's; the same codes.

    Returns
    -------
    codes, uniques
        ``codes[i]`` indexes row ``i``'s value in ``uniques``: a pyarrow array for Arrow-backed
        text, else a pandas Index.
    """
    arr = arrow_array(s) if arr is None else arr
    if arr is not None:
        import pyarrow.compute as pc

        if lag is None:
            lag = best_lag(arr)
        if lag:
            bits = diff_bits(arr, lag) if bits is None else bits
            _, head_codes, uniques = encode_heads(arr, bits, lag, compiled=compiled)
            return expand_lagged(bits, head_codes, len(arr), lag, compiled=compiled), uniques
        enc = pc.dictionary_encode(arr, null_encoding="encode").combine_chunks()
        return np.asarray(enc.indices, dtype=np.int64), enc.dictionary
    codes, uniques = pd.factorize(s, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


def known_codes(s: pd.Series) -> tuple[np.ndarray, object] | None:
    """:func:`column_codes` of ``s`` when validation already factorised it in this block
    (:func:`evalcore.data.codes.shared_codes`), else None.

    They are :func:`column_codes`'s when the column has no missing value and the codes number the
    values in order of first appearance (pandas' do; codes carried over a reordering do not). Call it
    in the thread that opened the block: the memo is a context variable.
    """
    arr = data_of(s)
    hit = memo_get((arr, "codes", id(arr))) if arr is not None else None
    if hit is None:
        return None
    code, uniques = hit  # type: ignore[misc]
    if not len(code) or len(code) != len(s) or int(code.min()) < 0:
        return None
    reached = np.maximum.accumulate(code)  # each value's first row comes after the previous value's
    if reached[0] != 0 or int(reached[-1]) != len(uniques) - 1 or bool((np.diff(reached) > 1).any()):
        return None
    if is_arrow_string(s):
        import pyarrow as pa

        uniques = pa.array(uniques.array)
        if isinstance(uniques, pa.ChunkedArray):
            uniques = uniques.combine_chunks()
    return np.asarray(code, dtype=np.int64), uniques


def distinct(uniques) -> tuple:
    """The distinct values of :func:`column_codes` as a tuple, missing values as NaN."""
    vals = uniques.to_pylist() if hasattr(uniques, "to_pylist") else list(uniques)
    return tuple(np.nan if v is None or (isinstance(v, float) and v != v) else v for v in vals)


def take(s: pd.Series, uniques, codes: np.ndarray) -> pd.Series:
    """A column with ``s``'s dtype holding ``uniques[codes]`` (cheap: no strings are hashed or copied twice)."""
    if is_arrow_string(s):
        import pyarrow as pa
        import pyarrow.compute as pc

        taken = pc.take(uniques, pa.array(codes))
        return pd.Series(type(s.array)(pa.chunked_array([taken]), dtype=s.dtype))
    return pd.Series(uniques.take(codes), dtype=s.dtype)


def warm_up() -> None:
    """Compile (or load from numba's cache) the compiled bitmap passes, e.g. in a background thread."""
    from ._hashkernel import warm_up as kernel_warm_up

    kernel_warm_up()
