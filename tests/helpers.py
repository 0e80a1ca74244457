"""Paths and small helpers shared by the tests, defined once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT
APP = ROOT / "app.py"
SAMPLES = ROOT / "sample_data"
SAMPLE = SAMPLES / "ratings_multilingual.csv"
SAMPLE_PAIRS = SAMPLES / "comparisons_pairwise.csv"
DATASETS = ROOT.parent / "shared" / "datasets"
TEST_DATA = ROOT / "tests" / "data"
BAD = TEST_DATA / "bad"
SMALL = TEST_DATA / "presets"
HANNA = DATASETS / "hanna" / "hanna_metric_scores_llm.csv"
PANDALM = DATASETS / "pandalm"
LLMBAR = DATASETS / "llmbar"

#: Marks a test that reads the real public data in ../shared/datasets.
needs_datasets = pytest.mark.skipif(not DATASETS.exists(),
                                    reason="../shared/datasets not found: this test reads the real public data")

# The bias tables' leading columns, written out here (not imported) so that the tests pin the contract.
LAYOUT = ["section", "judge", "criterion", "measure", "estimate", "ci_low", "ci_high", "n", "test", "p_value", "q_value",
          "flagged", "opposite", "note"]


def row(res: pd.DataFrame, measure: str, judge: str | None = None, **by) -> pd.Series:
    """The one row of ``res`` for ``measure``, ``judge`` (None: the humans) and the group values ``by``."""
    sel = (res["measure"] == measure) & (res["judge"].isna() if judge is None else res["judge"] == judge)
    for k, v in by.items():
        sel &= res[k] == v
    (i,) = np.flatnonzero(sel.to_numpy())
    return res.iloc[i]
