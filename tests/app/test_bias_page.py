"""The Bias page (AppTest) on the sample and on HANNA."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest import BIAS, open_page, store_sample
from tests.helpers import DATASETS


def _bias_page(dataset: str | None = None) -> AppTest:
    # A link to this dataset, with 200 resamples: the sample's designed biases are flagged with these too.
    return open_page(BIAS, dataset=dataset, bi_boot="200")


def test_bias_page_on_sample(ws):
    store_sample(ws.path)  # as the sample's button stores it (the button itself: tests/app/test_app.py)
    at = _bias_page()
    assert not at.exception, [e.value for e in at.exception]
    findings = " ".join(w.value for w in at.warning)
    assert "familiar" in findings and "anchoring" in findings and "Judge one criterion per call" in findings
    # Only the open tab runs: the first one's figures are drawn, the anchoring tab's selector is not.
    assert at.selectbox(key="bi_crit") and not [w for w in at.selectbox if w.key == "bi_corr_judge"]
    at.session_state["bi_tab"] = "Anchoring"
    at.run()
    # The anchoring tab opens on the judge the sample anchors (sample_data/README.md), not the first in the list.
    assert at.selectbox(key="bi_corr_judge").value == "gpt-4/single-call"
    at.multiselect(key="bi_by").set_value([]).run()
    assert not at.exception
    at.selectbox(key="bi_given").set_value("OCQ").run()
    assert not at.exception
    at.number_input(key="bi_boot").set_value(0).run()
    assert not at.exception and any("Set resamples above 0" in s.value for s in at.success)


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA page test needs it")
def test_bias_page_on_hanna(ws):
    from evalcore.data.ingest import load

    ing = load(DATASETS / "hanna" / "hanna_metric_scores_llm.csv", preset="hanna")
    at = _bias_page(ws.save_dataset("HANNA", {"ratings": ing.frame}))
    assert not at.exception, [e.value for e in at.exception]
    assert any("Familiarity was not run" in i.value for i in at.info)


def test_bias_page_on_categories(ws):
    """A nominal criterion: its category shares (judge next to humans, with intervals) and their differences, the
    mean perplexity per category, and what needs an order said once, per tab."""
    import pandas as pd

    from tests.unit.pointwise.test_bias_categories import _table

    frame = _table(seed=7, judge_p=(0.05, 0.15, 0.8))
    frame = pd.concat([frame, frame[frame["criterion"] == "fluency"].assign(criterion="coherence")], ignore_index=True)
    at = open_page(BIAS, dataset=ws.save_dataset("Stance", {"ratings": frame}), bi_boot="200", bi_crit="stance")
    assert not at.exception, [e.value for e in at.exception]
    findings = " ".join(w.value for w in at.warning)
    assert "shifted label prior" in findings and "contextual calibration" in findings
    assert at.selectbox(key="bi_crit").value == "stance"
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Share of each category" in s for s in charts) and any("minus humans" in s for s in charts)
    assert any("'stance' is nominal" in i.value and "mean shift" in i.value for i in at.info)
    at.session_state["bi_tab"] = "Familiarity"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Mean perplexity of the texts given each category" in c.proto.spec for c in at.get("plotly_chart"))
    assert any("Kendall's tau" in i.value for i in at.info)
    at.session_state["bi_tab"] = "Anchoring"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # The criteria with numbers are correlated, and only they can be conditioned on; the nominal one is named.
    assert at.selectbox(key="bi_given").options == ["coherence", "fluency"]
    assert any("'stance' is nominal" in c.value and "correlations" in c.value for c in at.caption)
    at.session_state["bi_tab"] = "All numbers"
    at.run()
    assert not at.exception and "category" in at.dataframe[0].value.columns
