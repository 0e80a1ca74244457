"""Groups of units: the group of each unit for a ``by`` grouping, and the default grouping.

Groups come from the integer codes :func:`evalcore.pointwise.agreement.units.count_units` kept, in the
order and with the keys of ``groupby(by, sort=True, dropna=False)`` on the units' segments, without
hashing a string again.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .units import Units


def _sort_order(values: tuple) -> np.ndarray:
    """Positions of ``values`` in sorted order, missing last (pandas' ``groupby(sort=True, dropna=False)``)."""
    def missing(v) -> bool:
        return isinstance(v, float) and v != v

    idx = range(len(values))
    try:
        order = sorted(idx, key=lambda i: (missing(values[i]), 0 if missing(values[i]) else values[i]))
    except TypeError:  # mixed types in one object column: sort by their text
        order = sorted(idx, key=lambda i: (missing(values[i]), str(values[i])))
    return np.asarray(order, dtype=np.int64)


def group_codes(units: Units, by: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each unit's group (0..G-1, groups in sorted order of their keys) and the keys.

    The same groups and order as ``units.segments.groupby(by, sort=True, dropna=False)``,
    from the integer codes :func:`.units.count_units` kept (no strings are hashed again).
    """
    n = len(units.item)
    if not by:
        return np.zeros(n, dtype=np.int64), [()]
    ranks, orders, sizes = [], [], []
    for c in by:
        ucodes, vals = units.codes[c]
        order = _sort_order(vals)
        rank = np.empty(len(vals), dtype=np.int64)
        rank[order] = np.arange(len(vals))
        ranks.append(rank[ucodes])
        orders.append(order)
        sizes.append(max(len(vals), 1))
    if float(np.prod(np.asarray(sizes, dtype=float))) < 2.0 ** 62:
        key = np.zeros(n, dtype=np.int64)
        for r, size in zip(ranks, sizes):
            key = key * size + r
        space = int(np.prod(np.asarray(sizes, dtype=float)))
        if space <= 4 * n + 1024:
            # Dense keys (a few languages times a few criteria): counting beats sorting.
            present = np.bincount(key, minlength=space) > 0
            uniq, inv = np.flatnonzero(present), (np.cumsum(present) - 1)[key]
        else:
            uniq, inv = np.unique(key, return_inverse=True)
        parts = []
        for size in reversed(sizes):
            parts.append(uniq % size)
            uniq = uniq // size
        combos = np.column_stack(parts[::-1])
    else:
        combos, inv = np.unique(np.column_stack(ranks), axis=0, return_inverse=True)
    keys = [tuple(units.codes[c][1][orders[k][r]] for k, (c, r) in enumerate(zip(by, row))) for row in combos]
    return inv.ravel().astype(np.int64), keys


def default_by(units: Units) -> list[str]:
    """The default grouping: language and criterion, where the table has them."""
    return [c for c in ("language", "criterion") if c in units.codes]
