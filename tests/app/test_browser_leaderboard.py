"""Browser test of the Leaderboard page: PandaLM's three files uploaded through the browser (its format detected;
the same files uploaded again open the dataset they made)
show the systems' scores by the humans and by each judge with intervals, and how far each judge moves the
ranking; ``evalcore leaderboard`` on the same files prints the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.app.browsing import act, choose_files, dataset_in_url, exceptions, new_tab, settle, shoot, visit
from tests.helpers import PANDALM, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The forest plot's traces as drawn (plotly's decoded ``_fullData``): source, scores, systems, intervals.
_TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')][0]._fullData.map(t => ({
  name: t.name, x: Array.from(t.x), system: Array.from(t.customdata, c => c[0]),
  lo: Array.from(t.customdata, c => +c[1]), hi: Array.from(t.customdata, c => +c[2])}))"""


def test_pandalm_uploaded_shows_each_sources_leaderboard_as_the_cli_does(browser, app):
    if not PANDALM.exists():
        pytest.skip("../shared/datasets/pandalm not found: this test uploads PandaLM's real files")
    server, _ = app
    files = sorted(str(p) for p in PANDALM.glob("*.json"))
    page = new_tab(browser)
    visit(page, server)
    choose_files(page, files)
    # The same files uploaded before on this server (the Win rates test does) open the dataset they made.
    button = page.get_by_role("button", name="Import")
    button.or_(page.get_by_text("were already imported as")).first.wait_for(timeout=90_000)
    settle(page)
    if button.count():
        act(page, button.click, timeout=120_000)
        settle(page)
    assert not exceptions(page), exceptions(page)
    dataset = dataset_in_url(page)

    visit(page, server, "Leaderboard", dataset=dataset)
    assert not exceptions(page), exceptions(page)
    shoot(page, "page_Leaderboard_pandalm_upload.png")
    verdict = page.locator('[data-testid="stAlert"]').first.inner_text()
    traces = page.evaluate(_TRACES)
    assert [t["name"] for t in traces] == ["humans", "gpt-3.5-turbo", "pandalm-7b"]

    cli = subprocess.run([sys.executable, "-m", "evalcore.cli", "leaderboard", *files, "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert cli.returncode == 0, cli.stderr
    records = pd.DataFrame(json.loads(cli.stdout))
    for t in traces:  # each source's five systems, Elo scale, with the CLI's intervals
        want = records[(records["rater"] == t["name"]) & (records["measure"] == "elo")].set_index("system")
        got = pd.DataFrame({k: t[k] for k in ("x", "lo", "hi")}, index=t["system"])
        assert len(got) == 5
        np.testing.assert_allclose(got["x"], want.loc[got.index, "estimate"], atol=1e-6)
        np.testing.assert_allclose(got["lo"], want.loc[got.index, "ci_low"], atol=1e-6)
        np.testing.assert_allclose(got["hi"], want.loc[got.index, "ci_high"], atol=1e-6)
    # How far each judge moves the ranking: the verdict quotes the CLI's tau for every judge.
    for judge in ("gpt-3.5-turbo", "pandalm-7b"):
        tau = records[(records["rater"] == judge) & (records["measure"] == "ranking_tau")]["estimate"].iloc[0]
        assert f"{judge} orders " in verdict and f"Kendall's tau {tau:.2f}" in verdict.split(f"{judge} orders ")[1]
    page.close()  # the browser serves the whole session
