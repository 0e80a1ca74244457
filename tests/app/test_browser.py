"""Browser smoke test: the real server in headless Chromium, like a user.

Starts ``streamlit run Home.py`` on a free localhost port with a fresh workspace, loads the
sample data with one click, opens every page (the landing page and every file in
``pages/``) through the sidebar's navigation, and fails on any element with
``data-testid="stException"``. It also uploads a file through the browser, restarts the
server, and checks the upload is still there and that the tab's link reopens its dataset.
Two browser contexts (two people) each open their own dataset, switch it on every page, and
keep it across reloads.

Chromium is Debian's (``/usr/bin/chromium``) driven by Playwright through
``executable_path``: Playwright cannot download its own browser here. Screenshots go to
``tests/_artifacts/screenshots/`` for a human to look at.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.app.browsing import (SHOTS, Server, choose_dataset, dataset_in_url, exceptions,
                                  navigate, open_with_sample, page_paths, settle, sidebar)
from tests.helpers import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_every_page_with_sample_data_and_upload_survives_restart(browser, tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ws = tmp_path / "workspace.duckdb"
    server = Server(ws, tmp_path / "streamlit.log").start()
    try:
        page = open_with_sample(browser, server)
        assert not exceptions(page)
        assert page.get_by_text("What this data unlocks").first.is_visible()
        page.screenshot(path=str(SHOTS / "home_sample.png"), full_page=True)

        sample = dataset_in_url(page)
        assert sample  # the tab's dataset is in its address bar
        for path in page_paths():
            navigate(page, path.replace("_", " ") or "Home")
            errors = exceptions(page)
            page.screenshot(path=str(SHOTS / f"page_{path or 'home'}.png"), full_page=True)
            assert not errors, f"page /{path} shows an exception: {errors}"
            # The shared sidebar shows the tab's dataset on every page, and the address bar keeps it.
            assert page.locator('[data-testid="stSidebar"]').get_by_text("Current dataset").is_visible()
            assert dataset_in_url(page) == sample, page.url

        # Upload through the browser, map, import.
        page.goto(server.url, wait_until="domcontentloaded")
        settle(page)
        page.get_by_role("tab", name=re.compile("Upload a file")).click()
        csv = tmp_path / "my_judgments.csv"
        csv.write_text("item,annotator,criterion,score\n1,ann1,LA,2\n1,ann2,LA,1\n1,gpt-4,LA,2\n"
                       "2,ann1,LA,2\n2,ann2,LA,2\n2,gpt-4,LA,2\n")
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
        page.get_by_text("Map the columns of my_judgments.csv").wait_for(timeout=60_000)
        settle(page)
        page.screenshot(path=str(SHOTS / "home_mapping.png"), full_page=True)
        page.get_by_role("button", name="Import").click()
        page.get_by_role("heading", name="my_judgments", exact=True).wait_for(timeout=60_000)
        settle(page)
        assert not exceptions(page)

        # A real file: HANNA through its preset, then the Agreement page on it.
        hanna = ROOT.parent / "shared" / "datasets" / "hanna" / "hanna_metric_scores_llm.csv"
        if hanna.exists():
            page.get_by_role("tab", name=re.compile("Upload a file")).click()
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(hanna))
            page.get_by_text("Map the columns of hanna_metric_scores_llm.csv").wait_for(timeout=60_000)
            settle(page)
            page.get_by_role("button", name="Import").click()
            page.get_by_role("heading", name="hanna_metric_scores_llm", exact=True).wait_for(timeout=90_000)
            settle(page)
            hanna_id = dataset_in_url(page)
            page.goto(f"{server.url}/Agreement?dataset={hanna_id}", wait_until="domcontentloaded")
            settle(page, timeout=180_000)
            assert not exceptions(page)
            assert page.locator('[data-testid="stPlotlyChart"]').count() >= 2
            page.screenshot(path=str(SHOTS / "page_Agreement_hanna.png"), full_page=True)
            assert not page.evaluate(_LAYOUT_CHECK)["figs"]  # issue 23: labels on the wrong rows, overlapping
            # The meta-evaluation tabs, as a reviewer opens them one by one.
            for tab, expect, shot in (("Which judge?", "Judges ranked by", "leaderboard"),
                                      ("System level", "Does the judge rank the systems", "system_level"),
                                      ("Rater pairs", "for every pair of raters", "rater_pairs")):
                page.get_by_role("tab", name=tab).click()
                settle(page, timeout=180_000)
                assert not exceptions(page)
                page.get_by_text(expect).first.wait_for(timeout=60_000)
                page.screenshot(path=str(SHOTS / f"page_Agreement_hanna_{shot}.png"), full_page=True)
                # issue 23: the leaderboard's top label was cut off, the rater pairs' title ran into its labels
                assert not page.evaluate(_LAYOUT_CHECK)["figs"], shot
            page.goto(f"{server.url}/Bias?dataset={hanna_id}", wait_until="domcontentloaded")
            settle(page, timeout=180_000)
            assert not exceptions(page)
            assert page.get_by_role("heading", name="What we found").count() == 1
            page.screenshot(path=str(SHOTS / "page_Bias_hanna.png"), full_page=True)
            page.goto(f"{server.url}/?dataset={hanna_id}", wait_until="domcontentloaded")
            settle(page)

        # A bad file gets one message, not a traceback.
        bad = tmp_path / "picture.csv"
        bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
        page.get_by_role("tab", name=re.compile("Upload a file")).click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(bad))
        page.get_by_text("looks like a PNG image").wait_for(timeout=60_000)
        assert not exceptions(page)
        page.screenshot(path=str(SHOTS / "home_bad_file.png"), full_page=True)
        link = urlparse(page.url)._replace(scheme="", netloc="").geturl()  # the path and ?dataset=
        page.close()
    finally:
        server.stop()

    # Restart the server on the same workspace: both datasets are still there.
    server = Server(ws, tmp_path / "streamlit2.log").start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        # A fresh tab without a link: nobody's choice is imposed on it.
        page.goto(server.url, wait_until="domcontentloaded")
        settle(page)
        assert page.get_by_text("No dataset is chosen in this browser tab yet").count() == 1
        # The tab's link (a reload, a bookmark) reopens the dataset it had open, after the restart too.
        page.goto(server.url + link, wait_until="domcontentloaded")
        settle(page)
        page.get_by_role("tab", name=re.compile("Saved datasets")).click()
        rows = "145,728 rows" if (ROOT.parent / "shared" / "datasets").exists() else "6 rows"
        assert f"Pointwise ratings: {rows}" in page.locator('[data-testid="stSidebar"]').inner_text()
        n_saved = 3 if (ROOT.parent / "shared" / "datasets").exists() else 2
        assert page.get_by_text(f"Saved datasets ({n_saved})").count() == 1
        assert not exceptions(page)
        page.screenshot(path=str(SHOTS / "home_after_restart.png"), full_page=True)
        page.close()
    finally:
        server.stop()


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def test_win_rates_page_slider_all_pairs_and_pandalm(browser, tmp_path):
    """The analyst's path through Win rates: move the slider, calibrate every pair, the error curve, PandaLM."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = Server(tmp_path / "workspace.duckdb", tmp_path / "streamlit.log").start()
    try:
        page = open_with_sample(browser, server)
        # The pair named in the link (the page alone opens on the one where calibration moves most).
        page.goto(f"{server.url}/Win_rates?dataset={dataset_in_url(page)}&wr_pair=cirrus-70b%20vs%20atlas-7b",
                  wait_until="domcontentloaded")
        settle(page, timeout=240_000)  # the first Dawid-Skene fit of a server loads numba and nutpie
        assert not exceptions(page)
        assert _metric(page, "Raw judge win rate k") == "0.769"
        before = _metric(page, "Dawid-Skene p")
        page.screenshot(path=str(SHOTS / "page_Win_rates_sample.png"), full_page=True)

        # Move the prior-data-ratio slider with the keyboard: the estimates change, no error.
        thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
        thumb.focus()
        for _ in range(6):
            thumb.press("ArrowRight")
        settle(page, timeout=60_000)
        assert thumb.input_value() == "0.6"
        assert not exceptions(page)
        assert _metric(page, "Dawid-Skene p") != before
        assert page.get_by_text("85 of 141 human labels used").count() == 1

        page.get_by_role("tab", name="All pairs").click()
        page.get_by_role("button", name="Calibrate every pair").click()
        settle(page, timeout=180_000)
        assert not exceptions(page)
        assert page.get_by_text("Mean absolute error against the humans' p over pairs").count() == 1
        page.screenshot(path=str(SHOTS / "page_Win_rates_all_pairs.png"), full_page=True)

        page.get_by_role("tab", name="Error vs human labels").click()
        box = page.locator('[data-testid="stNumberInput"] input').filter(visible=True).last
        box.fill("2")
        box.press("Enter")
        settle(page)
        page.get_by_role("button", name="Compute the error curve").click()
        settle(page, timeout=240_000)
        assert not exceptions(page)
        assert page.get_by_text("The error should fall as the ratio rises").count() == 1
        page.screenshot(path=str(SHOTS / "page_Win_rates_error_curve.png"), full_page=True)

        # PandaLM: three JSON files uploaded together, then its pairs on the page.
        pandalm = sorted((ROOT.parent / "shared" / "datasets" / "pandalm").glob("*.json"))
        if pandalm:
            page.goto(server.url, wait_until="domcontentloaded")
            settle(page)
            page.get_by_role("tab", name=re.compile("Upload a file")).click()
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files([str(p) for p in pandalm])
            page.get_by_role("button", name="Import").wait_for(timeout=60_000)
            settle(page)
            page.get_by_role("button", name="Import").click()
            page.get_by_text("Pairwise comparisons:").first.wait_for(timeout=90_000)
            settle(page)
            page.goto(f"{server.url}/Win_rates?dataset={dataset_in_url(page)}", wait_until="domcontentloaded")
            settle(page, timeout=120_000)
            assert not exceptions(page)
            # A PandaLM pair (the one where calibration moves the win rate most), named in the address bar too
            pair = (parse_qs(urlparse(page.url).query).get("wr_pair") or [""])[0]
            assert " vs " in pair and pair.split(" vs ")[0] in {"bloom-7b", "opt-7b", "pythia-6.9b", "llama-7b",
                                                                 "cerebras-gpt-6.7B"}
            assert 0 <= float(_metric(page, "Raw judge win rate k")) <= 1
            page.screenshot(path=str(SHOTS / "page_Win_rates_pandalm.png"), full_page=True)
        page.close()
    finally:
        server.stop()


def test_superficial_quality_slider_on_llmbar_rating_files(browser, tmp_path):
    """LLMBar's Rating files: the alpha slider moved with the keyboard, the reading and table follow."""
    llmbar = ROOT.parent / "shared" / "datasets" / "llmbar"
    if not llmbar.exists():
        pytest.skip("../shared/datasets/llmbar is absent")
    from evalcore.data.ingest import load
    from evalcore.data.store import Workspace

    files = [llmbar / sub / "evaluators" / judge / "Rating_NoRules" / "result.json"
             for sub in ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
                         "Adversarial/Manual") for judge in ("GPT-4", "ChatGPT")]
    ws = tmp_path / "workspace.duckdb"
    did = Workspace(ws).save_dataset("LLMBar Rating", {"comparisons": load(files, preset="llmbar").frame})
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = Server(ws, tmp_path / "streamlit.log").start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        page.goto(f"{server.url}/Superficial_quality?dataset={did}", wait_until="domcontentloaded")
        settle(page, timeout=240_000)
        page.screenshot(path=str(SHOTS / "page_Superficial_quality_llmbar.png"), full_page=True)
        assert not exceptions(page)
        assert page.get_by_text(re.compile(r"helps on .*Adversarial/Neighbor by \+")).count() >= 1
        thumb = page.locator('[data-testid="stMain"] input[type="range"]').first
        opened = float(thumb.get_attribute("aria-valuetext"))  # the cross-validated alpha
        target = 0.7 if opened < 0.5 else 0.2
        thumb.focus()
        for _ in range(round(abs(target - opened) / 0.05)):
            thumb.press("ArrowRight" if target > opened else "ArrowLeft")
        settle(page, timeout=60_000)
        assert thumb.get_attribute("aria-valuetext") == f"{target:g}"
        assert not exceptions(page)
        assert page.get_by_text(re.compile(rf"at alpha = {target:g}")).count() >= 1
        # open a changed verdict: its outputs are shown as text
        assert page.locator('[data-testid="stText"]').count() == 2
        page.screenshot(path=str(SHOTS / f"page_Superficial_quality_llmbar_{target:g}.png"), full_page=True)
        # A reload (or the link shared) keeps the view: the slider's alpha is in the address bar.
        assert parse_qs(urlparse(page.url).query).get("sq_alpha") == [f"{target:g}"]
        page.reload(wait_until="domcontentloaded")
        settle(page, timeout=120_000)
        thumb = page.locator('[data-testid="stMain"] input[type="range"]').first
        assert thumb.get_attribute("aria-valuetext") == f"{target:g}"
        assert page.get_by_text(re.compile(rf"at alpha = {target:g}")).count() >= 1
        page.close()
    finally:
        server.stop()


def test_position_bias_from_an_uploaded_llmbar_result_and_the_sample(browser, tmp_path):
    """A single LLMBar result.json uploaded in the browser (named by the user), then the Position bias page;
    the sample's judge with probabilities shows the calibration table and map."""
    result = ROOT.parent / "shared" / "datasets" / "llmbar" / "Natural" / "evaluators" / "GPT-4" / "Vanilla_NoRules"
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = Server(tmp_path / "workspace.duckdb", tmp_path / "streamlit.log").start()
    try:
        page = open_with_sample(browser, server)
        page.goto(f"{server.url}/Position_bias?dataset={dataset_in_url(page)}", wait_until="domcontentloaded")
        settle(page, timeout=240_000)
        assert not exceptions(page)
        assert page.get_by_text("Calibration: before and after").count() == 1
        assert page.get_by_text(re.compile(r"gpt-4/pairwise.*gives the same verdict")).count() == 1
        page.screenshot(path=str(SHOTS / "page_Position_bias_sample.png"), full_page=True)
        if (result / "result.json").exists():
            page.goto(server.url, wait_until="domcontentloaded")
            settle(page)
            page.get_by_role("tab", name=re.compile("Upload a file")).click()
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(result / "result.json"))
            page.get_by_text("Map the columns of result.json").wait_for(timeout=60_000)
            settle(page)
            page.get_by_role("textbox", name="Judge").fill("GPT-4")
            page.get_by_role("textbox", name="Judge").press("Enter")
            settle(page)
            page.get_by_role("button", name="Import").click()
            page.get_by_text("Pairwise comparisons:").first.wait_for(timeout=90_000)
            settle(page)
            page.get_by_role("link", name="Open Position bias").click()
            settle(page, timeout=120_000)
            assert not exceptions(page)
            assert page.get_by_text(re.compile(r"GPT-4/Vanilla.*gives the same verdict in both orders on 97%")).count() == 1
            assert page.get_by_text("This file has verdicts only").count() == 1
            page.screenshot(path=str(SHOTS / "page_Position_bias_llmbar_upload.png"), full_page=True)
        page.close()
    finally:
        server.stop()


#: In the page: text that overflows its box, and figures without a title or labelled axes.
_LAYOUT_CHECK = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const over = [];
  for (const el of main.querySelectorAll('p, h1, h2, h3, label, [data-testid="stMetricValue"]')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && el.scrollWidth > el.clientWidth + 2 && getComputedStyle(el).overflowX !== 'auto')
      over.push(el.innerText.slice(0, 60));
  }
  const figs = [];
  for (const plot of main.querySelectorAll('.js-plotly-plot')) {
    const title = (plot.querySelector('.gtitle') || {}).textContent || '';
    const cartesian = plot.querySelector('.cartesianlayer .xy') !== null;
    const xt = plot.querySelector('.xtitle'), yt = plot.querySelector('.ytitle');
    const hm = plot.querySelector('.hm') !== null;
    if (!title.trim()) figs.push('untitled figure');
    else if (cartesian && !hm && !(xt && xt.textContent.trim()))
      figs.push('no x-axis title: ' + title.slice(0, 50));
    for (const p of figureTextProblems(plot)) figs.push(p + ' in: ' + title.slice(0, 50));
  }
  return {over, figs};
}"""

#: In one plotly figure (issue 23): texts that overlap (title, axis titles, legend, annotations, value labels, a
#: heatmap cell's lines, against each other and against the tick labels), a label drawn over a marker, text cut
#: off by the figure's or the plot's edge, and cell text too small to read.
_FIGURE_TEXT_CHECK = """function figureTextProblems(plot) {
  const problems = [];
  const svg = plot.querySelector('.main-svg').getBoundingClientRect();
  const box = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 ? r : null; };
  const name = (el) => (el.textContent || '').trim().slice(0, 30);
  const items = [];  // [kind, label, rect]
  const add = (kind, el, r) => { r = r || box(el); if (r && name(el)) items.push([kind, name(el), r]); };
  plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text').forEach(el => add('title', el));
  plot.querySelectorAll('.annotation-text').forEach(el => add('annotation', el));
  plot.querySelectorAll('.legend').forEach(el => add('legend', el, box(el.querySelector('.bg') || el)));
  plot.querySelectorAll('.textpoint text').forEach(el => add('value', el));
  plot.querySelectorAll('.heatmap-label text').forEach(el => {
    const lines = el.querySelectorAll('tspan.line');
    if (lines.length) lines.forEach(t => add('cell', t)); else add('cell', el);
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (name(el) && size < 9) problems.push(`cell text ${size}px high ("${name(el)}")`);
  });
  const marks = [...plot.querySelectorAll('.scatterlayer path.point')].map(box).filter(Boolean);
  items.filter(([k]) => k === 'value' || k === 'annotation').forEach(([k, t, r]) => {
    if (marks.some(m => Math.min(r.right, m.right) - Math.max(r.left, m.left) > 1 &&
                        Math.min(r.bottom, m.bottom) - Math.max(r.top, m.top) > 1))
      problems.push(`${k} "${t}" drawn over a marker`); });
  const ticks = [];
  plot.querySelectorAll('.xtick text, .ytick text').forEach(el => { const r = box(el); if (r) ticks.push([name(el), r]); });
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 &&
                         Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  for (let i = 0; i < items.length; i++) {
    const [k, t, r] = items[i];
    if (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1 || r.bottom > svg.bottom + 1)
      problems.push(`${k} "${t}" cut off by the figure's edge`);
    for (let j = i + 1; j < items.length; j++)
      if (meet(r, items[j][2]) && !(k === 'legend' && items[j][0] === 'legend'))
        problems.push(`${k} "${t}" overlaps ${items[j][0]} "${items[j][1]}"`);
    for (const [tt, tr] of ticks) if (meet(r, tr)) problems.push(`${k} "${t}" overlaps tick label "${tt}"`);
  }
  // value labels of a scatter are clipped to its plotting area: one reaching out of it is cut off
  const areas = [...plot.querySelectorAll('.bglayer .bg')].map(box).filter(Boolean);
  plot.querySelectorAll('.textpoint text').forEach(el => { const r = box(el);
    if (r && areas.length && !areas.some(a => r.top >= a.top - 1 && r.bottom <= a.bottom + 1 &&
                                             r.left >= a.left - 1 && r.right <= a.right + 1))
      problems.push(`value "${name(el)}" cut off by the plot's edge`); });
  return [...new Set(problems)];
}"""
_LAYOUT_CHECK = _LAYOUT_CHECK.replace("() => {", "() => {\n" + _FIGURE_TEXT_CHECK, 1)


def _real_dataset(workspace: Path) -> str:
    """HANNA's ratings (11 systems, 6 criteria, 5 LLM judges) with LLMBar's GPT-4 rating files (Natural and
    Adversarial/Neighbor: scores of both outputs, both orders), saved as one dataset; its name."""
    from evalcore.data.ingest import load
    from evalcore.data.store import Workspace
    from tests.helpers import DATASETS, HANNA, LLMBAR

    if not DATASETS.exists():
        pytest.skip("../shared/datasets is absent: the real-data screenshots need HANNA and LLMBar")
    rating = [LLMBAR / "Natural/evaluators/GPT-4/Rating_NoRules/result.json",
              LLMBAR / "Adversarial/Neighbor/evaluators/GPT-4/Rating_NoRules/result.json"]
    Workspace(workspace).save_dataset("HANNA + LLMBar", {"ratings": load(HANNA, preset="hanna").frame,
                                                         "comparisons": load(rating, preset="llmbar").frame})
    return "HANNA + LLMBar"


#: The screen sizes every page must fit: a small laptop and a common desktop.
SIZES = ((1280, 720), (1920, 1080))


@pytest.mark.parametrize("data", ["sample", "real"])
def test_every_page_fits_the_screen(browser, tmp_path, data):
    """At two common screen sizes, every page on the sample and on real data (HANNA + LLMBar): no text
    overflows its box, every figure has a title and a labelled x axis (heatmaps label theirs with
    categories). Screenshots for a reviewer. Both sizes in one session on one server: the second pass reads
    every result from the cache, so it costs only the drawing."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    workspace = tmp_path / "workspace.duckdb"
    name = _real_dataset(workspace) if data == "real" else None
    server = Server(workspace, tmp_path / "streamlit.log").start()
    try:
        if name is None:
            page = open_with_sample(browser, server)
        else:
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.goto(server.url, wait_until="domcontentloaded")
            settle(page)
            page.get_by_role("heading", name=name, exact=True).wait_for(timeout=120_000)  # the only dataset opens
        problems = {}
        for size in SIZES:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            for path in page_paths():
                navigate(page, path.replace("_", " ") or "Home")
                assert not exceptions(page), (size, path, exceptions(page))
                found = page.evaluate(_LAYOUT_CHECK)
                page.screenshot(path=str(SHOTS / f"fit_{data}_{size[0]}x{size[1]}_{path or 'home'}.png"))
                if found["over"] or found["figs"]:
                    problems[f"{size[0]}x{size[1]} {path or 'home'}"] = found
        assert not problems, problems
        page.close()
    finally:
        server.stop()


def test_two_people_keep_their_own_dataset_and_pages_follow_a_switch(browser, tmp_path):
    """Two browser contexts (two people at once) open different datasets; each keeps its own across reloads,
    and switching the dataset in the sidebar on every page keeps the selectors filled."""
    from evalcore.data.ingest import load, load_samples
    from evalcore.data.store import Workspace
    from tests.app.test_agreement_page import unseen_file

    SHOTS.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "workspace.duckdb"
    ws = Workspace(path)
    sample = {k: v.frame for k, v in load_samples().items()}
    # Other judges and systems with everything the pairwise pages use (scores, both orders, probabilities):
    # the sample's comparisons under new names, so that every selector's options change on a switch.
    comparisons = sample["comparisons"].copy()
    for col in ("system_a", "system_b"):
        comparisons[col] = "sys-" + comparisons[col].astype(str).str[0]
    judge = comparisons["rater_kind"] == "judge"
    comparisons["rater"] = comparisons["rater"].astype(str).where(~judge, "other/" + comparisons["rater"].astype(str))
    other = {"ratings": load(unseen_file(tmp_path / "unseen.csv")).frame, "comparisons": comparisons}
    ws.save_dataset("Sample", sample)
    ws.save_dataset("Other", other)
    rows = {"Sample": f"Pointwise ratings: {len(sample['ratings']):,} rows",
            "Other": f"Pointwise ratings: {len(other['ratings']):,} rows"}
    server = Server(path, tmp_path / "streamlit.log").start()
    contexts = [browser.new_context(viewport={"width": 1400, "height": 2400}) for _ in range(2)]
    try:
        a, b = (c.new_page() for c in contexts)
        for page, name in ((a, "Sample"), (b, "Other")):
            page.goto(server.url, wait_until="domcontentloaded")
            settle(page)
            assert page.get_by_text("No dataset is chosen in this browser tab yet").count() == 1
            choose_dataset(page, name)
            page.get_by_role("heading", name=name, exact=True).wait_for(timeout=60_000)
        for page, name in ((a, "Sample"), (b, "Other")):
            page.reload(wait_until="domcontentloaded")
            settle(page)
            page.get_by_role("heading", name=name, exact=True).wait_for(timeout=60_000)
            assert not exceptions(page)
            assert rows[name] in sidebar(page).inner_text()
        b.screenshot(path=str(SHOTS / "home_second_session.png"), full_page=True)

        # A switches the dataset on every page; the page follows, its selectors stay filled.
        checks = {"Agreement": re.compile(r"Humans next to \S+"), "Bias": "What we found",
                  "Win rates": re.compile(r"on which sys-\w is better than sys-\w"),
                  "Superficial quality": re.compile(r"(Subtracting superficial quality|At alpha|Cross-validation picks)"),
                  "Position bias": re.compile(r"other/gpt-4/pairwise gives the same verdict in both orders")}
        for title, expected in checks.items():
            navigate(a, title)
            choose_dataset(a, "Other")
            a.screenshot(path=str(SHOTS / f"switch_{title.replace(' ', '_')}.png"), full_page=True)
            assert not exceptions(a), title
            assert a.get_by_text("failed unexpectedly").count() == 0, title
            assert a.get_by_text(expected).count() >= 1, title
            assert a.get_by_text("Pick at least one judge").count() == 0, title
            assert a.get_by_text("no judge").count() == 0, title
            assert a.locator('[data-testid="stPlotlyChart"]').count() >= 1, title
            choose_dataset(a, "Sample")
            assert not exceptions(a), title

        # B never saw A's switches: its reload still shows its own dataset.
        b.reload(wait_until="domcontentloaded")
        settle(b)
        b.get_by_role("heading", name="Other", exact=True).wait_for(timeout=60_000)
        assert rows["Other"] in sidebar(b).inner_text()
        a.reload(wait_until="domcontentloaded")
        settle(a, timeout=180_000)
        assert rows["Sample"] in sidebar(a).inner_text()
    finally:
        for c in contexts:
            c.close()
        server.stop()


def test_figures_download_as_png_or_svg_from_their_own_button(browser, tmp_path):
    """The camera button of a figure saves what the sidebar's Figure downloads says: PNG, or SVG (vector)."""
    server = Server(tmp_path / "workspace.duckdb", tmp_path / "streamlit.log").start()
    try:
        page = open_with_sample(browser, server)
        navigate(page, "Agreement")
        got = {}
        for fmt in ("PNG", "SVG"):
            sidebar(page).get_by_text(fmt, exact=True).click()
            settle(page)
            chart = page.locator('[data-testid="stPlotlyChart"]').first
            chart.hover()
            with page.expect_download(timeout=60_000) as info:
                chart.locator('.modebar-btn[data-title^="Download plot"]').click()
            download = info.value
            got[fmt] = (download.suggested_filename, Path(download.path()).read_bytes()[:300])
        assert got["PNG"][0] == "ag_fig.png" and got["PNG"][1].startswith(b"\x89PNG")
        assert got["SVG"][0] == "ag_fig.svg" and b"<svg" in got["SVG"][1]
        page.close()
    finally:
        server.stop()
