"""The Agreement page on a dataset with per-row columns (a timing, an annotation round): it opens with its results
and does not offer those columns as groupings."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load_samples
from tests.helpers import APP, ROOT


def test_the_agreement_page_leaves_per_row_columns_out_of_the_groupings(ws):
    ratings = load_samples()["ratings"].frame.copy()
    rng = np.random.default_rng(0)
    ratings["duration_ms"] = rng.integers(100, 9000, len(ratings))
    ratings["annotation_round"] = rng.integers(1, 4, len(ratings)).astype(str)
    did = ws.save_dataset("timed", {"ratings": ratings}, source="timed.csv")
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["dataset"] = did
    at = at.run().switch_page(str(ROOT / "app_pages" / "1_Agreement.py")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    by = at.multiselect(key="ag_by")
    assert by.value == ["language", "criterion"]
    assert "duration_ms" not in by.options and "annotation_round" not in by.options
    assert any("annotation_round, duration_ms." in c.value for c in at.caption)
    assert at.warning and "Bengali" in at.warning[0].value  # the sample's designed finding, as without the columns
