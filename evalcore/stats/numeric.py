"""Small numeric helpers every analysis shares: division that says "undefined" (or 0), category codes, notes."""

from __future__ import annotations

import numpy as np


def safe_div(a, b) -> np.ndarray:
    """``a / b`` as floats, with NaN (not inf, not a warning) wherever the ratio is undefined.

    >>> safe_div(np.array([1.0, 1.0, 0.0]), np.array([2.0, 0.0, 0.0])).tolist()
    [0.5, nan, nan]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.divide(a, b), dtype=float)  # a new array: safe to write into
    out[~np.isfinite(out)] = np.nan
    return out


def zero_div(a, b) -> np.ndarray:
    """``a / b`` as floats where ``b > 0``, and 0 elsewhere (sums over nothing that count as nothing).

    >>> zero_div(np.array([1.0, 1.0, 2.0]), np.array([2.0, 0.0, -1.0])).tolist()
    [0.5, 0.0, 0.0]
    """
    a = np.asarray(a, dtype=float)
    return np.divide(a, b, out=np.zeros(np.broadcast_shapes(a.shape, np.shape(b))), where=np.asarray(b) > 0)


def codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each value into its sorted distinct values, and those values.

    >>> c, u = codes(np.array([3.0, 1.0, 3.0, 2.0]))
    >>> c.tolist(), u.tolist()
    ([2, 0, 2, 1], [1.0, 2.0, 3.0])
    """
    uniq, inv = np.unique(values, return_inverse=True)
    return inv.ravel(), uniq


def join_notes(*notes: str) -> str:
    """Non-empty notes joined by '; ', each once, in order.

    >>> join_notes("a", "", "b", "a")
    'a; b'
    """
    return "; ".join(dict.fromkeys(n for n in notes if n))
