"""Browser test of the True scores page: HANNA with the annotators' labels on a fifth of its stories shows each
system's PPI++ estimate with its interval, and ``evalcore ppi`` on the same rows prints the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.app.browsing import act, exceptions, new_tab, shoot, visit
from tests.app.conftest import HANNA_FIFTH, HANNA_FIFTH_JUDGES, hanna_fifth
from tests.helpers import DATASETS, HANNA, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The forest plot's traces as drawn (plotly's decoded ``_fullData``): name, x (the estimates), and per point its label and interval.
_TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')][0]._fullData.map(t => ({
  name: t.name, x: Array.from(t.x), label: Array.from(t.customdata, c => c[0]),
  lo: Array.from(t.customdata, c => +c[1]), hi: Array.from(t.customdata, c => +c[2])}))"""


@pytest.mark.skipif(not DATASETS.exists(), reason="the shared datasets (../shared/datasets) are not here")
def test_hanna_a_fifth_labelled_shows_each_systems_ppi_estimate_as_the_cli_does(app, browser, tmp_path):
    server, ids = app
    page = new_tab(browser)
    visit(page, server, "True_scores", dataset=ids[HANNA_FIFTH])
    by = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Separately by")
    by.click()
    act(page, lambda: page.get_by_role("option", name="system", exact=True).click())
    page.keyboard.press("Escape")
    assert not exceptions(page), exceptions(page)
    shoot(page, "true_scores_hanna_fifth.png")
    traces = {t["name"]: t for t in page.evaluate(_TRACES)}
    ppi = pd.DataFrame({k: traces["PPI++"][k] for k in ("label", "x", "lo", "hi")})

    from evalcore.data.ingest import load

    path = tmp_path / "hanna_fifth.csv"
    hanna_fifth(load(HANNA, preset="hanna").frame).to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "evalcore.cli", "ppi", str(path), "--by", "system", "--judge",
                          HANNA_FIFTH_JUDGES[0], "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    cli = pd.DataFrame(json.loads(out.stdout))
    # The plot shows one criterion at a time (the first, Relevance): each system's PPI++ estimate and interval,
    # and the stratified estimate over the systems, equal to the CLI's.
    cli = cli[(cli["method"] == "ppi++") & (cli["criterion"] == "Relevance")]
    assert len(ppi) == len(cli) == 11 + 1
    assert set(cli["system"].dropna()) <= {lab.split(" · ")[1] for lab in ppi["label"]}
    np.testing.assert_allclose(np.sort(ppi["x"].to_numpy(float)), np.sort(cli["estimate"].to_numpy(float)), atol=1e-9)
    np.testing.assert_allclose(np.sort(ppi["hi"] - ppi["lo"]), np.sort(cli["ci_high"] - cli["ci_low"]), atol=1e-9)
    assert page.get_by_text(f"{HANNA_FIFTH_JUDGES[0]}: with its labels, each human label counts as").count() == 1
    page.close()  # the browser serves the whole session
