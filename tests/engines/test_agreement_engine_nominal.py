"""The engine path on categories: nominal labels are strings in the GROUP BYs, and give the in-process units and
agreement table (numbers beside them untouched)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evalcore.data.scales import format_number
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from tests.unit.pointwise.test_agreement_nominal import _mixed

from .helpers import assert_same_table


def _statistics(units) -> tuple[Counter, Counter]:
    """Per unit (weighted by the items it stands for) and per item: the segments, the human counts per category
    label and each judge's label (labels, not values: a nominal label's value is NaN)."""
    labels = units.category_labels

    def key(u: int) -> tuple:
        segs = tuple(str(units.codes[c][1][units.codes[c][0][u]]) for c in units.columns)
        counts = tuple((labels[k], int(n)) for k, n in enumerate(units.counts[u]) if n)
        return segs, counts, tuple((j, labels[c] if c >= 0 else None) for j, c in zip(units.judges,
                                                                                     units.judge_codes[:, u]))

    per_unit, per_item = Counter(), {}
    for u in range(len(units.item)):
        per_unit[key(u)] += int(units.weight[u])
        per_item.setdefault(int(units.item[u]), []).append(key(u))
    count = units.item_count
    items = Counter()
    for i, keys in per_item.items():
        items[tuple(sorted(keys, key=repr))] += 1 if count is None else int(count[i])
    return per_unit, items


def _engine(duck, frame: pd.DataFrame, tmp_path):
    from evalcore.engines.engine import read

    path = tmp_path / "labels.parquet"
    frame.to_parquet(path)
    return read(duck, path)


def _frames() -> dict[str, pd.DataFrame]:
    mixed = _mixed()
    # Numbers declared nominal beside text labels: their labels are the numbers as text.
    declared = mixed.assign(scale="nominal", category=np.where(mixed["criterion"] == "fluency",
                                                               mixed["score"].map(format_number, na_action="ignore"),
                                                               mixed["category"]))
    return {"mixed": mixed, "stance": mixed[mixed["criterion"] == "stance"], "declared": declared}


@pytest.mark.parametrize("name", ["mixed", "stance", "declared"])
@pytest.mark.parametrize("by", [["criterion"], []], ids=["criterion", "none"])
def test_engine_categories_equal_in_memory(duck, tmp_path, name, by):
    from evalcore.engines.agreement import count_units_engine
    from evalcore.pointwise.agreement.table import scale_by

    frame = _frames()[name]
    table = _engine(duck, frame, tmp_path)
    mem_units = count_units(frame)
    eng_units = count_units_engine(table, by=by)
    eng_units_stats, eng_items = _statistics(eng_units)
    mem_units_stats, mem_items = _statistics(mem_units)
    assert eng_units_stats == mem_units_stats
    if "criterion" not in by:
        assert eng_items == mem_items
    assert eng_units.category_labels == mem_units.category_labels and eng_units.scales == mem_units.scales
    assert eng_units.scale == mem_units.scale
    mem = agreement(frame, by=by, n_boot=0)
    eng = agreement(eng_units, by=scale_by(eng_units, by), n_boot=0)
    assert_same_table(mem, eng, draws=True)
