"""Comparing statistics and tables of the engine path with the in-process path."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

#: Columns of the agreement table that come from the bootstrap draws.
DRAWN = ["ci_low", "ci_high", "p_value", "q_value", "flagged", "opposite"]


def _unit_key(units, u: int) -> tuple:
    """One unit's statistics: its segments, criterion, human counts per score value and each judge's score."""
    segs = tuple(str(units.codes[c][1][units.codes[c][0][u]]) for c in units.columns)
    counts = tuple((float(v), int(n)) for v, n in zip(units.values, units.counts[u]) if n)
    judges = tuple((name, float(units.values[c]) if c >= 0 else None)
                   for name, c in zip(units.judges, units.judge_codes[:, u]))
    return segs, counts, judges


def unit_statistics(units) -> Counter:
    """How many units have each statistics (weighted by the items a compressed unit stands for)."""
    out: Counter = Counter()
    w = units.weight
    for u in range(len(units.item)):
        out[_unit_key(units, u)] += int(w[u])
    return out


def item_statistics(units) -> Counter:
    """How many items carry each multiset of unit statistics (the item types the bootstrap resamples)."""
    per_item: dict[int, list] = {}
    for u in range(len(units.item)):
        per_item.setdefault(int(units.item[u]), []).append(_unit_key(units, u))
    count = units.item_count
    out: Counter = Counter()
    for i, keys in per_item.items():
        out[tuple(sorted(keys, key=repr))] += 1 if count is None else int(count[i])
    return out


def assert_same_table(mem: pd.DataFrame, eng: pd.DataFrame, *, draws: bool = False) -> None:
    """The same rows and counts, estimates equal to the last bits of a sum taken in another order.

    ``draws``: the bootstrap columns too (only where both sides drew in the same order).
    """
    assert list(mem.columns) == list(eng.columns)
    assert len(mem) == len(eng)
    exact = [c for c in mem.columns if c != "estimate" and (draws or c not in DRAWN)]
    if not draws and "note" in exact:
        exact.remove("note")  # "intervals rest on few distinct resamples" depends on the draws
        keep = ~mem["note"].str.contains("resample") & ~eng["note"].str.contains("resample")
        assert (mem["note"][keep] == eng["note"][keep]).all()
    pd.testing.assert_frame_equal(mem[exact].reset_index(drop=True), eng[exact].reset_index(drop=True),
                                  check_dtype=False)
    np.testing.assert_allclose(mem["estimate"].to_numpy(float), eng["estimate"].to_numpy(float),
                               rtol=1e-11, atol=1e-13, equal_nan=True)
