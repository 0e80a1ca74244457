"""The bitmap passes of :mod:`evalcore.data.hashing`, compiled by numba.

Why compiled: on a million rows that mostly repeat an earlier row, these passes pick the few rows to
hash and copy the codes of the rest in a few milliseconds, where numpy needs an unpack, a cumulative
sum and two gathers. ``cache=True`` makes the compilation happen once per machine. The tests check
them against :mod:`evalcore.data.hashing`'s numpy versions and against :func:`pandas.factorize`.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["lag_heads", "expand_lagged", "warm_up"]


@numba.njit(cache=True, nogil=True)
def lag_heads(bits: np.ndarray, n: int, lag: int) -> np.ndarray:
    """Rows that differ from the row ``lag`` before them, and the first ``lag`` rows.

    ``bits`` is an Arrow-style bitmap (least significant bit first) whose bit ``j`` says that
    row ``j + lag`` differs from row ``j``.
    """
    first = min(lag, n)
    count = first
    for j in range(n - first):
        count += (bits[j >> 3] >> (j & 7)) & 1
    out = np.empty(count, np.int64)
    for i in range(first):
        out[i] = i
    k = first
    for j in range(n - first):
        if (bits[j >> 3] >> (j & 7)) & 1:
            out[k] = j + lag
            k += 1
    return out


@numba.njit(cache=True, nogil=True)
def expand_lagged(bits: np.ndarray, head_codes: np.ndarray, n: int, lag: int) -> np.ndarray:
    """Codes of all rows from the codes of :func:`lag_heads`' rows: any other row repeats row ``i - lag``."""
    out = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        if i < lag or (bits[(i - lag) >> 3] >> ((i - lag) & 7)) & 1:
            out[i] = head_codes[k]
            k += 1
        else:
            out[i] = out[i - lag]
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) both passes, for the bitmaps they are given."""
    bits_ro = np.frombuffer(b"\x00", dtype=np.uint8)  # pyarrow's bitmaps are read-only
    bits_rw = np.zeros(1, np.uint8)  # packed by numpy where a column has missing values
    for bits in (bits_ro, bits_rw):
        expand_lagged(bits, lag_heads(bits, 2, 1), 2, 1)
