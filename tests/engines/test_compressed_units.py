"""Compressed units (``Units.item_count``) in the one agreement computation, without any engine.

A row of compressed units stands for ``item_count`` items with the same statistics; the table must be the
table of the uncompressed items. And the item bootstrap must not depend on the process (it once ordered
item types by Python's per-process ``hash``).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.pointwise.agreement.filter import filter_units
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from tests.helpers import ROOT

from .helpers import assert_same_table


def _ratings(n_items: int, seed: int = 0) -> pd.DataFrame:
    """Two criteria, three annotators and a judge on {0, 1, 2}; few distinct items, so items repeat."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        lang = "en" if i % 3 else "de"
        for crit in ("fluency", "coherence"):
            base = rng.integers(0, 3)
            for r in ("a1", "a2", "a3", "gpt-4"):
                s = base if rng.random() < 0.7 else rng.integers(0, 3)
                if r == "a3" and i % 4 == 0:
                    continue  # some units with two annotators
                rows.append((f"i{i}", lang, crit, r, "judge" if r == "gpt-4" else "human", int(s)))
    return pd.DataFrame(rows, columns=["item_id", "language", "criterion", "rater", "rater_kind", "score"])


def _weighted_twice(units):
    """The same units, each item standing for two items."""
    return dataclasses.replace(units, item_count=np.full(int(units.item.max()) + 1, 2, dtype=np.int64))


@pytest.mark.parametrize("by", [["language", "criterion"], ["language"], []])
def test_item_count_two_is_every_item_twice(by):
    frame = _ratings(60)
    twice = pd.concat([frame, frame.assign(item_id=frame["item_id"] + "-copy")], ignore_index=True)
    mem = agreement(twice, by=by, n_boot=0)
    assert_same_table(mem, agreement(_weighted_twice(count_units(frame)), by=by, n_boot=0), draws=True)
    # with intervals: same rows and counts, the bootstrap drawing 2n items per cell
    assert_same_table(agreement(twice, by=by, n_boot=50, seed=1),
                      agreement(_weighted_twice(count_units(frame)), by=by, n_boot=50, seed=1))


def test_unit_filter_counts_weigh_the_items():
    frame = _ratings(60)
    units = filter_units(_weighted_twice(count_units(frame)), min_raters=3)
    plain = filter_units(count_units(frame), min_raters=3)
    assert units.unit_filter.kept == 2 * plain.unit_filter.kept
    assert units.unit_filter.dropped == 2 * plain.unit_filter.dropped
    summary = units.unit_filter.summary(["language"])
    assert (summary[["units_kept", "units_dropped"]].to_numpy()
            == 2 * plain.unit_filter.summary(["language"])[["units_kept", "units_dropped"]].to_numpy()).all()


def test_per_criterion_units_need_criterion_in_the_grouping():
    units = dataclasses.replace(count_units(_ratings(20)), per_criterion=True)
    with pytest.raises(DataError, match="compressed per criterion"):
        agreement(units, by=["language"], n_boot=0)
    agreement(units, by=["language", "criterion"], n_boot=0)


_PROBE = """
import numpy as np, pandas as pd
from evalcore.pointwise.agreement.table import agreement
rng = np.random.default_rng(0); n = 2000
df = pd.DataFrame({"item_id": np.repeat(np.arange(n), 4).astype(str), "criterion": np.tile(["a", "a", "b", "b"], n),
                   "rater": np.tile(["h1", "h2", "h1", "h2"], n), "rater_kind": "human",
                   "score": rng.integers(0, 2, 4 * n)})
print(agreement(df, by=[], n_boot=200, seed=7)[["ci_low", "ci_high"]].to_json())
"""


def test_item_type_bootstrap_does_not_depend_on_the_process():
    """Few item types (two binary criteria): the multinomial over types; its order once followed ``hash``."""
    outs = {subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, cwd=ROOT,
                           env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout for seed in ("1", "2")}
    assert len(outs) == 1
