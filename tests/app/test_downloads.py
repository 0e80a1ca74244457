"""Download file names: a dataset or judge name once put ':' or '/' into the file name."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest


def _script() -> None:
    import pandas as pd

    from evalcore import ui

    ui.download_csv(pd.DataFrame({"a": [1]}), file_name="winrate_llama-2-70b/pairwise_vs_gpt-4: v2.csv", key="k")


def test_download_names_are_safe_on_every_system(monkeypatch):
    names = []
    real = st.download_button
    monkeypatch.setattr(st, "download_button", lambda *a, **k: names.append(k["file_name"]) or real(*a, **k))
    at = AppTest.from_function(_script).run()
    assert not at.exception, [e.value for e in at.exception]
    assert names == ["winrate_llama-2-70b_pairwise_vs_gpt-4_v2.csv", "winrate_llama-2-70b_pairwise_vs_gpt-4_v2.parquet"]
