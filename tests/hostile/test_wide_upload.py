"""A very wide upload in the app: the mapping form lists a bounded number of columns and reads the file once.

A column beyond the list is typed into the selectbox (Streamlit's ``accept_new_options``); AppTest cannot type a
value that is not an option, so that path is not tested here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from evalcore.data import io
from evalcore.ui import loading
from tests.helpers import APP


def _wide_csv(n_extra: int) -> bytes:
    rng = np.random.default_rng(0)
    rows = 40
    base = pd.DataFrame({"item_id": [f"i{i // 4}" for i in range(rows)], "rater": [f"r{i % 4}" for i in range(rows)],
                         "criterion": "q", "score": rng.integers(1, 6, rows)})
    extra = pd.DataFrame(rng.integers(0, 9, (rows, n_extra)), columns=[f"extra_{j}" for j in range(n_extra)])
    return pd.concat([base, extra], axis=1).to_csv(index=False).encode()


def test_a_wide_upload_is_read_once_and_lists_a_bounded_number_of_columns(ws, monkeypatch):
    reads = []
    real = io.read_table
    monkeypatch.setattr(io, "read_table", lambda *a, **k: reads.append(1) or real(*a, **k))
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.file_uploader[0].set_value(("wide.csv", _wide_csv(3000), "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    (pending,) = ws.list_datasets()
    box = at.selectbox(key=f"map_{pending.id}_ratings_score")
    assert box.value == "score"
    assert len(box.options) == loading.LISTED_COLUMNS + 1  # "(none)" and the first columns
    assert any("type the name of another column" in c.value for c in at.caption)
    assert len(reads) == 1, "the check before storing and the mapping form share one read"
