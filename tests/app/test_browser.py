"""Browser tests: the real server in headless Chromium, like a user.

Most tests share one server (``app`` in ``conftest.py``), as people share a real one, and its cached results.
Every page is opened once per scenario and seen at both screen sizes (the window resized, as a user does); pages
that only need to draw are opened through a link with fewer resamples (``?ag_boot=50``), where the numbers
themselves are not under test. A test of one page opens that page from a link. A check on a page that a
screen-fit test has open (a figure's download, the calibration view, a switch of dataset) is made there: drawing a
page costs Chromium about two CPU-seconds, the largest share of these tests' time. Each test fails on any element
with ``data-testid="stException"``.

One test has a server of its own: it uploads files through the browser, restarts the server on the same
workspace and counts what is saved; its server shows point estimates first at once (a real one does after
2 s), so the fragment that brings the intervals in is exercised too (the shared server waits for them).

Chromium is Debian's (``/usr/bin/chromium``) driven by Playwright through ``executable_path``: Playwright
cannot download its own browser here. Screenshots go to ``tests/_artifacts/screenshots/`` for a human to look
at.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.app.browsing import (FEW, PAGES, SHOTS, Server, act, choose_dataset, choose_files, dataset_in_url,
                                exceptions, navigate, new_session, new_tab, open_with_sample, resize, settle, shoot,
                                sidebar, upload, visit)
from tests.helpers import DATASETS, LLMBAR

# With pytest-xdist, every test in a test_browser*.py file runs on one worker (``work_unit`` in tests/conftest.py):
# they share one server and its cached results. (The ``xdist_group`` mark does not group with pytest 9 and
# pytest-xdist 3.8: the group goes into a node id pytest 9 no longer reads.)
pytestmark = [pytest.mark.browser, pytest.mark.slow]

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

#: In one plotly figure: texts that overlap (title, axis titles, legend, annotations, value labels, a
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


#: The screen sizes every page must fit: a small laptop and a common desktop.
SIZES = ((1280, 720), (1920, 1080))


def _fits(page, label: str, problems: dict, shot: str) -> None:
    """No exception, and the layout check on the page shown; a screenshot; problems collected under ``label``."""
    assert not exceptions(page), (label, exceptions(page))
    found = page.evaluate(_LAYOUT_CHECK)
    page.screenshot(path=str(SHOTS / shot))
    if found["over"] or found["figs"]:
        problems[label] = found


def _both_sizes(i: int) -> tuple[tuple[int, int], ...]:
    """The screen sizes for the ``i``-th page: in turn small then large, large then small, so that each page is
    opened once, at one size, and seen at the other after the window is resized (a page opened at each size
    half the time)."""
    return SIZES if i % 2 == 0 else SIZES[::-1]


def test_every_page_on_the_sample_fits_the_screen(app, browser):
    """The sample loaded by its button, then every page through the sidebar's navigation at two common screen
    sizes (the window resized on each page: :func:`_both_sizes`): no exception, the shared sidebar and the
    address bar keep the tab's dataset, no text overflows its box, every figure has a title and a labelled x
    axis (heatmaps label theirs with categories). On the pages open along the way: a figure of the Agreement page
    saved from its camera button in each format, and the Position bias page's calibration of the sample's judge
    with probabilities."""
    server, _ = app
    width, height = SIZES[0]
    page = open_with_sample(browser, server, width=width, height=height)
    assert page.get_by_text("What this data unlocks").first.is_visible()
    sample = dataset_in_url(page)
    assert sample  # the tab's dataset is in its address bar
    problems: dict = {}
    for i, (title, path) in enumerate(PAGES.items()):
        navigate(page, title)
        for width, height in _both_sizes(i):
            resize(page, width, height)
            # The shared sidebar shows the tab's dataset on every page, and the address bar keeps it.
            assert sidebar(page).get_by_text("Current dataset").is_visible(), title
            assert dataset_in_url(page) == sample, page.url
            _fits(page, f"{width}x{height} {title}", problems, f"fit_sample_{width}x{height}_{path or 'home'}.png")
        if title == "Agreement":  # on the page open, as a user saves a figure
            _figures_download_as_chosen(page)
        if title == "Position bias":  # the sample's judge with probabilities: the calibration table and map
            assert page.get_by_text("Calibration: before and after").count() == 1
            assert page.get_by_text(re.compile(r"gpt-4/pairwise.*gives the same verdict")).count() == 1
            shoot(page, "page_Position_bias_sample.png")
    assert not problems, problems
    page.close()


def test_every_page_on_real_data_fits_the_screen(app, browser):
    """The same on HANNA with LLMBar's rating files (real names, 20 judges, fractional scores): every page
    opened from a link, with fewer resamples, and seen at both sizes; the Agreement page's meta-evaluation
    tabs at the larger size, as a reviewer opens them one by one (the leaderboard's top label was cut off, the
    rater pairs' title ran into its labels); and on every page with selectors, the dataset switched in the
    sidebar to one with other judges and systems: the page follows, its selectors stay filled."""
    server, ids = app
    if "HANNA + LLMBar" not in ids:
        pytest.skip("../shared/datasets is absent: the real-data pages, and the switch from them to another dataset, "
                    "need HANNA and LLMBar")
    page = new_tab(browser, width=SIZES[0][0], height=SIZES[0][1])
    problems: dict = {}
    for i, (title, path) in enumerate(PAGES.items()):
        visit(page, server, path, dataset=ids["HANNA + LLMBar"], **FEW)
        for width, height in _both_sizes(i):
            resize(page, width, height)
            _fits(page, f"{width}x{height} {title}", problems, f"fit_real_{width}x{height}_{path or 'home'}.png")
        if title == "Agreement":  # the tabs, on the page open, at the larger size
            resize(page, *SIZES[1])
            _meta_evaluation_tabs_fit(page, problems)
        if title in SWITCHES:
            _switch_keeps_the_page(page, title, ids)
    assert not problems, problems
    page.close()


#: The pages whose selectors a switch of dataset must refill, and what each shows of the second dataset ("Other":
#: other judges and systems), which names them. (The Agreement page stays on the tab it showed, whose text varies:
#: one of its judges, in the judges' selector and the figures, names the dataset.)
SWITCHES = {"Agreement": "gpt-4o/plain", "Bias": "What we found",
            "Win rates": re.compile(r"on which sys-\w is better than sys-\w"),
            "Superficial quality": re.compile(r"(Subtracting superficial quality|At alpha|Cross-validation picks)"),
            "Position bias": re.compile(r"other/gpt-4/pairwise gives the same verdict in both orders")}


def _switch_keeps_the_page(page, title: str, ids: dict) -> None:
    """The dataset switched in the sidebar on the page open: the page follows, its selectors stay filled."""
    choose_dataset(page, "Other")
    shoot(page, f"switch_{title.replace(' ', '_')}.png")
    assert dataset_in_url(page) == ids["Other"], (title, page.url)
    assert not exceptions(page), title
    assert page.get_by_text("failed unexpectedly").count() == 0, title
    assert page.get_by_text(SWITCHES[title]).count() >= 1, title
    assert page.get_by_text("Pick at least one judge").count() == 0, title
    assert page.get_by_text("no judge").count() == 0, title
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1, title


def _meta_evaluation_tabs_fit(page, problems: dict) -> None:
    """The Agreement page's meta-evaluation tabs opened one by one, each checked like a page."""
    for tab, expect, shot in (("Which judge?", "Judges ranked by", "leaderboard"),
                              ("System level", "Does the judge rank the systems", "system_level"),
                              ("Rater pairs", "for every pair of raters", "rater_pairs")):
        act(page, page.get_by_role("tab", name=tab).click, timeout=180_000)
        page.get_by_text(expect).first.wait_for(timeout=60_000)
        _fits(page, f"{tab} tab", problems, f"fit_real_1920x1080_Agreement_{shot}.png")


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def test_win_rates_page_slider_all_pairs_and_pandalm(app, browser):
    """The analyst's path through Win rates: move the slider, calibrate every pair, the error curve, PandaLM."""
    from evalcore.ui.loading import SAMPLE_NAME

    server, ids = app
    # The sample's page from a link (its button is tested in the screen-fit test), on the pair the link names (the
    # page alone opens on the one where calibration moves most).
    page = new_tab(browser)
    visit(page, server, "Win_rates", dataset=ids[SAMPLE_NAME], wr_pair="cirrus-70b vs atlas-7b",
          timeout=240_000)  # the first Dawid-Skene fit of a server loads numba and nutpie
    assert not exceptions(page)
    assert _metric(page, "Raw judge win rate k") == "0.769"
    before = _metric(page, "Dawid-Skene p")
    shoot(page, "page_Win_rates_sample.png")

    # Move the prior-data-ratio slider with the keyboard: the estimates change, no error.
    thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
    thumb.focus()
    for _ in range(5):
        thumb.press("ArrowRight")
    act(page, lambda: thumb.press("ArrowRight"), timeout=60_000)
    assert thumb.input_value() == "0.6"
    assert not exceptions(page)
    assert _metric(page, "Dawid-Skene p") != before
    assert page.get_by_text("85 of 141 human labels used").count() == 1
    # The slider is in the address bar: a reload (or the link shared) reopens the same estimates.
    assert parse_qs(urlparse(page.url).query).get("wr_ratio") == ["0.6"], page.url

    act(page, page.get_by_role("tab", name="All pairs").click)
    act(page, page.get_by_role("button", name="Calibrate every pair").click, timeout=180_000)
    assert not exceptions(page)
    assert page.get_by_text("Mean absolute error against the humans' p over pairs").count() == 1
    shoot(page, "page_Win_rates_all_pairs.png")

    act(page, page.get_by_role("tab", name="Error vs human labels").click)
    box = page.locator('[data-testid="stNumberInput"] input').filter(visible=True).last
    box.fill("1")  # one random subset per ratio: the curve is drawn, its smoothness is not under test
    act(page, lambda: box.press("Enter"))
    act(page, page.get_by_role("button", name="Compute the error curve").click, timeout=240_000)
    assert not exceptions(page)
    assert page.get_by_text("The error should fall as the ratio rises").count() == 1
    shoot(page, "page_Win_rates_error_curve.png")

    # PandaLM: three JSON files uploaded together, then its pairs on the page.
    pandalm = sorted((DATASETS / "pandalm").glob("*.json"))
    if pandalm:
        visit(page, server)
        choose_files(page, [str(p) for p in pandalm])
        page.get_by_role("button", name="Import").wait_for(timeout=60_000)
        settle(page)
        act(page, page.get_by_role("button", name="Import").click)
        page.get_by_text("Pairwise comparisons:").first.wait_for(timeout=90_000)
        visit(page, server, "Win_rates", dataset=dataset_in_url(page), timeout=120_000)
        assert not exceptions(page)
        # A PandaLM pair (the one where calibration moves the win rate most); the address bar leaves the opening
        # pair out, and a link without it opens that pair again.
        shown = page.get_by_text(re.compile(r"the share of items on which \S+ is better than")).inner_text()
        first = re.search(r"on which (\S+) is better than", shown).group(1)
        assert first in {"bloom-7b", "opt-7b", "pythia-6.9b", "llama-7b", "cerebras-gpt-6.7B"}, shown
        assert 0 <= float(_metric(page, "Raw judge win rate k")) <= 1
        shoot(page, "page_Win_rates_pandalm.png")
    page.close()


def test_superficial_quality_slider_on_llmbar_rating_files(app, browser):
    """LLMBar's Rating files: the alpha slider moved with the keyboard, the reading and table follow."""
    server, ids = app
    if "LLMBar Rating" not in ids:
        pytest.skip("../shared/datasets/llmbar is absent")
    page = new_tab(browser)
    visit(page, server, "Superficial_quality", dataset=ids["LLMBar Rating"], timeout=240_000)
    shoot(page, "page_Superficial_quality_llmbar.png")
    assert not exceptions(page)
    assert page.get_by_text(re.compile(r"helps on .*Adversarial/Neighbor by \+")).count() >= 1
    thumb = page.locator('[data-testid="stMain"] input[type="range"]').first
    opened = float(thumb.get_attribute("aria-valuetext"))  # the cross-validated alpha
    target = 0.7 if opened < 0.5 else 0.2
    thumb.focus()
    steps = round(abs(target - opened) / 0.05)
    key = "ArrowRight" if target > opened else "ArrowLeft"
    for _ in range(steps - 1):
        thumb.press(key)
    act(page, lambda: thumb.press(key), timeout=60_000)
    assert thumb.get_attribute("aria-valuetext") == f"{target:g}"
    assert not exceptions(page)
    assert page.get_by_text(re.compile(rf"at alpha = {target:g}")).count() >= 1
    # open a changed verdict: its outputs are shown as text
    assert page.locator('[data-testid="stText"]').count() == 2
    shoot(page, f"page_Superficial_quality_llmbar_{target:g}.png")
    # A reload (or the link shared) keeps the view: the slider's alpha is in the address bar.
    assert parse_qs(urlparse(page.url).query).get("sq_alpha") == [f"{target:g}"]
    page.reload(wait_until="domcontentloaded")
    settle(page, timeout=120_000)
    thumb = page.locator('[data-testid="stMain"] input[type="range"]').first
    assert thumb.get_attribute("aria-valuetext") == f"{target:g}"
    assert page.get_by_text(re.compile(rf"at alpha = {target:g}")).count() >= 1
    page.close()


def test_position_bias_from_an_uploaded_llmbar_result(app, browser):
    """A single LLMBar result.json uploaded in the browser (named by the user, as a bare result.json must be),
    then the Position bias page from the link the import offers. (The sample's judge with probabilities is seen
    on that page in the sample's screen-fit test.)"""
    server, _ = app
    result = LLMBAR / "Natural" / "evaluators" / "GPT-4" / "Vanilla_NoRules" / "result.json"
    if not result.exists():
        pytest.skip("../shared/datasets/llmbar is absent: this test uploads one of LLMBar's result files")
    page = new_tab(browser)
    upload(page, server, str(result), mapping="result.json")
    page.get_by_role("textbox", name="Judge").fill("GPT-4")
    act(page, lambda: page.get_by_role("textbox", name="Judge").press("Enter"))
    act(page, page.get_by_role("button", name="Import").click)
    page.get_by_text("Pairwise comparisons:").first.wait_for(timeout=90_000)
    act(page, page.get_by_role("link", name="Open Position bias").click, timeout=120_000)
    assert not exceptions(page)
    assert page.get_by_text(re.compile(r"GPT-4/Vanilla.*gives the same verdict in both orders on 97%")).count() == 1
    assert page.get_by_text("This file has verdicts only").count() == 1
    shoot(page, "page_Position_bias_llmbar_upload.png")
    page.close()


def test_two_people_keep_their_own_dataset(app, browser):
    """Two browser contexts (two people at once) open different datasets; each keeps its own across reloads,
    and one person's switch of dataset on a page leaves the other's view as it was. (A switch on every page with
    selectors is in the real-data screen-fit test.)"""
    from evalcore.ui.loading import SAMPLE_NAME

    server, ids = app
    contexts = [new_session(browser) for _ in range(2)]
    try:
        a, b = (c.new_page() for c in contexts)
        for page, name in ((a, SAMPLE_NAME), (b, "Other")):
            visit(page, server)
            assert page.get_by_text("No dataset is chosen in this browser tab yet").count() == 1
            choose_dataset(page, name)
            page.get_by_role("heading", name=name, exact=True).wait_for(timeout=60_000)
        rows = {name: _rows(page) for page, name in ((a, SAMPLE_NAME), (b, "Other"))}
        assert rows[SAMPLE_NAME] != rows["Other"]
        for page, name in ((a, SAMPLE_NAME), (b, "Other")):
            page.reload(wait_until="domcontentloaded")
            settle(page)
            page.get_by_role("heading", name=name, exact=True).wait_for(timeout=60_000)
            assert not exceptions(page)
            assert _rows(page) == rows[name]
        shoot(b, "home_second_session.png")

        # A opens a page and switches its dataset there, to the one B has open, then back to the sample.
        navigate(a, "Agreement")
        for to, shows in (("Other", SWITCHES["Agreement"]), (SAMPLE_NAME, re.compile(r"Humans next to \S+"))):
            choose_dataset(a, to)
            assert dataset_in_url(a) == ids[to], a.url
            assert not exceptions(a)
            assert a.get_by_text(shows).count() >= 1, to

        # B never saw A's switches: its reload still shows its own dataset, and A's its last choice.
        b.reload(wait_until="domcontentloaded")
        settle(b)
        b.get_by_role("heading", name="Other", exact=True).wait_for(timeout=60_000)
        assert _rows(b) == rows["Other"]
        a.reload(wait_until="domcontentloaded")
        settle(a, timeout=180_000)
        assert dataset_in_url(a) == ids[SAMPLE_NAME]
        assert "Agreement" in a.url
    finally:
        for c in contexts:
            c.close()


def _rows(page) -> str:
    """What the sidebar says of the tab's dataset: its tables' row counts."""
    return " ".join(re.findall(r"(?:Pointwise ratings|Pairwise comparisons): [\d,]+ rows", sidebar(page).inner_text()))


def _figures_download_as_chosen(page) -> None:
    """The camera button of a figure saves what the sidebar's Figure downloads says: PNG, or SVG (vector); the
    sidebar is left on PNG, as it opens."""
    got = {}
    for fmt in ("SVG", "PNG"):  # PNG is chosen at first: a click on it would change nothing
        act(page, sidebar(page).get_by_text(fmt, exact=True).click)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.hover()
        with page.expect_download(timeout=60_000) as info:
            chart.locator('.modebar-btn[data-title^="Download plot"]').click()
        download = info.value
        got[fmt] = (download.suggested_filename, Path(download.path()).read_bytes()[:300])
    assert got["PNG"][0] == "ag_fig.png" and got["PNG"][1].startswith(b"\x89PNG")
    assert got["SVG"][0] == "ag_fig.svg" and b"<svg" in got["SVG"][1]


def test_upload_import_and_a_restart_keep_the_datasets(browser, tmp_path):
    """A server of its own: the sample loaded, its Agreement page showing the point estimates first and the
    intervals after; a CSV uploaded and mapped; a bad file. Then a restart on the same workspace keeps every dataset
    (the sample's ratings and comparisons, the CSV's ratings), and the tab's link reopens its own. (A real file
    through its preset is uploaded on the shared server: LLMBar's in the Position bias test, PandaLM's in the Win
    rates and Leaderboard tests.)"""
    ws = tmp_path / "workspace.duckdb"
    # Point estimates first on every page that resamples: the fragment that brings the intervals in is tested.
    server = Server(ws, tmp_path / "streamlit.log", EVALCORE_POINTS_FIRST_AFTER="0.1").start()
    try:
        page = open_with_sample(browser, server)
        assert not exceptions(page)
        shoot(page, "home_sample.png")
        page.goto(server.link("Agreement", dataset=dataset_in_url(page)), wait_until="domcontentloaded")
        page.get_by_text("Point estimates first").wait_for(timeout=120_000)
        assert page.get_by_text("cell(s) where a judge agrees").count() == 0  # no flag before the tests
        settle(page, timeout=180_000)  # the note is gone: the fragment reran the page with the intervals
        assert page.get_by_text("cell(s) where a judge agrees").count() == 1
        assert not exceptions(page)
        visit(page, server, dataset=dataset_in_url(page))

        # Upload through the browser, map, import.
        csv = tmp_path / "my_judgments.csv"
        csv.write_text("item,annotator,criterion,score\n1,ann1,LA,2\n1,ann2,LA,1\n1,gpt-4,LA,2\n"
                       "2,ann1,LA,2\n2,ann2,LA,2\n2,gpt-4,LA,2\n")
        choose_files(page, str(csv))
        page.get_by_text("Map the columns of my_judgments.csv").wait_for(timeout=60_000)
        settle(page)
        shoot(page, "home_mapping.png")
        act(page, page.get_by_role("button", name="Import").click)
        page.get_by_role("heading", name="my_judgments", exact=True).wait_for(timeout=60_000)
        assert not exceptions(page)

        # A bad file gets one message, not a traceback.
        bad = tmp_path / "picture.csv"
        bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
        choose_files(page, str(bad))
        page.get_by_text("looks like a PNG image").wait_for(timeout=60_000)
        assert not exceptions(page)
        shoot(page, "home_bad_file.png")
        link = urlparse(page.url)._replace(scheme="", netloc="").geturl()  # the path and ?dataset=
        page.close()
    finally:
        server.stop()

    # Restart the server on the same workspace: every dataset is still there.
    server = Server(ws, tmp_path / "streamlit2.log").start()
    try:
        page = new_tab(browser)
        # A fresh tab without a link: nobody's choice is imposed on it.
        visit(page, server)
        assert page.get_by_text("No dataset is chosen in this browser tab yet").count() == 1
        # The tab's link (a reload, a bookmark) reopens the dataset it had open, after the restart too.
        page.goto(server.url + link, wait_until="domcontentloaded")
        settle(page)
        page.get_by_role("tab", name=re.compile("Saved datasets")).click()
        assert "Pointwise ratings: 6 rows" in sidebar(page).inner_text()  # my_judgments.csv, the last imported
        assert page.get_by_text("Saved datasets (2)").count() == 1
        assert not exceptions(page)
        shoot(page, "home_after_restart.png")
        page.close()
    finally:
        server.stop()
