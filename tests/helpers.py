"""Helpers shared by the bias-section tests (scale, consistency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
SAMPLE = ROOT / "sample_data" / "ratings_multilingual.csv"
# The bias tables' leading columns, written out here (not imported) so that the tests pin the contract.
LAYOUT = ["section", "judge", "criterion", "measure", "estimate", "ci_low", "ci_high", "n", "flagged", "note"]


def row(res: pd.DataFrame, measure: str, judge: str | None = None, **by) -> pd.Series:
    """The one row of ``res`` for ``measure``, ``judge`` (None: the humans) and the group values ``by``."""
    sel = (res["measure"] == measure) & (res["judge"].isna() if judge is None else res["judge"] == judge)
    for k, v in by.items():
        sel &= res[k] == v
    (i,) = np.flatnonzero(sel.to_numpy())
    return res.iloc[i]
