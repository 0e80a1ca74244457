"""The Bias page (AppTest) on the sample and on HANNA."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest import BIAS, open_page
from tests.helpers import DATASETS


def _bias_page(dataset: str | None = None) -> AppTest:
    # A link to this dataset, with 200 resamples: the sample's designed biases are flagged with these too.
    return open_page(BIAS, dataset=dataset, bi_boot="200")


def test_bias_page_on_sample(ws):
    open_page().button(key="load_sample").click().run()
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
