"""Comparing statistics and tables of the engine path with the in-process path."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

#: Columns of the agreement table that come from the bootstrap draws.
DRAWN = ["ci_low", "ci_high", "p_value", "q_value", "flagged", "opposite"]


def _unit_keys(units) -> list[tuple]:
    """Each unit's statistics: its segments, criterion, human counts per score value and each judge's score.

    As Python values (str, float, int, None), so that keys from the two paths compare equal; converted once per
    array, not once per unit and cell (a third less time on HANNA's units)."""
    segs = [[names[k] for k in codes.tolist()] for codes, names in
            ((units.codes[c][0], [str(x) for x in units.codes[c][1]]) for c in units.columns)]
    values = [float(v) for v in units.values]
    counts = [tuple((values[j], n) for j, n in enumerate(row) if n) for row in units.counts.tolist()]
    judges = [tuple((name, values[c] if c >= 0 else None) for name, c in zip(units.judges, col))
              for col in units.judge_codes.T.tolist()]
    return list(zip(zip(*segs) if segs else [()] * len(counts), counts, judges))


def unit_statistics(units) -> Counter:
    """How many units have each statistics (weighted by the items a compressed unit stands for)."""
    out: Counter = Counter()
    for key, w in zip(_unit_keys(units), units.weight.tolist()):
        out[key] += int(w)
    return out


def item_statistics(units) -> Counter:
    """How many items carry each multiset of unit statistics (the item types the bootstrap resamples)."""
    per_item: dict[int, list] = {}
    for key, i in zip(_unit_keys(units), units.item.tolist()):
        per_item.setdefault(int(i), []).append(key)
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
