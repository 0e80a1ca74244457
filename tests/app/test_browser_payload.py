"""Hostile names in a real browser: what a dataset's names can do to the page, and whether the app works
offline.

One server, one browser, every page once (from a link, with fewer resamples: the names are under test), on the
payload dataset of :mod:`tests.hostile.test_markup` (names that are Markdown images and links, HTML links, bold,
line breaks and spreadsheet formulas), stored in the workspace before the server starts; then the HTML report of the same data opened from a file. On every page
and in the report:

- no request leaves 127.0.0.1 (a ``:material/`` favicon was fetched from fonts.gstatic.com on every page);
- no link or image from the data is live: no ``<a href>`` or ``<img>`` to the payload's host in the DOM,
  including inside Plotly's SVG;
- no Markdown or Plotly bold from the data renders (no ``<strong>``, ``<b>`` or bold ``<tspan>`` holding a
  payload's word);
- the tables' toolbar offers no "Download as CSV" (it handed out ``=HYPERLINK(...)`` cells unneutralised).

A screenshot of the Agreement page goes to ``tests/_artifacts/screenshots/payload_agreement.png``.
"""

from __future__ import annotations

import re

import pytest

from tests.app.browsing import FEW, PAGES, new_tab, shoot, visit
from tests.hostile.test_markup import EVIL, NAME, NOTE, payload_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Words the payload writes in bold (Markdown ``**...**``, HTML ``<b>``) or as a link's text.
BOLD_WORDS = ["PC", "ember", "judge2", "TQ", "ann3", "Natural", "sum", "gpt-4", "Bengali", "cirrus"]

#: What the DOM holds from the payload as markup: live links and images to its host, bold payload words.
LIVE_MARKUP = """(words) => {
  const evil = %r;
  const attr = (e, names) => names.map(n => e.getAttribute(n) || '').join(' ');
  const links = [...document.querySelectorAll('a')].map(a => attr(a, ['href', 'xlink:href']))
    .filter(h => h.includes(evil));
  const images = [...document.querySelectorAll('img, image, source')]
    .map(i => attr(i, ['src', 'srcset', 'href', 'xlink:href'])).filter(s => s.includes(evil));
  const bold = [...document.querySelectorAll('strong, b, tspan')]
    .filter(e => e.tagName.toLowerCase() !== 'tspan' || /font-weight:\\s*bold/.test(e.getAttribute('style') || ''))
    .filter(e => words.includes(e.textContent.trim())).map(e => e.outerHTML.slice(0, 200));
  return {links, images, bold};
}""" % EVIL


def _live_markup(page) -> dict:
    return page.evaluate(LIVE_MARKUP, BOLD_WORDS)


def _home_note_and_toolbar(page) -> None:
    """On the home page: the import note written out as text; the tables' own toolbar offers search and full
    screen, no download of raw cells."""
    assert page.get_by_text(NOTE[:40]).count()
    page.get_by_role("tab", name=re.compile("Saved datasets")).click()
    table = page.locator('[data-testid="stDataFrame"]').first
    table.hover()
    toolbar = page.locator('[data-testid="stElementToolbarButton"] button')
    toolbar.first.wait_for(timeout=10_000)
    labels = {toolbar.nth(i).get_attribute("aria-label") for i in range(toolbar.count())}
    assert "Search" in labels, labels  # the toolbar is there...
    assert not [x for x in labels if "download" in str(x).lower()], labels  # ...without its download


def test_payload_names_stay_text_on_every_page_and_in_the_report(app, browser, tmp_path):
    from evalcore.data.ingest import Ingested
    from evalcore.report.html import build_report

    server, ids = app
    did = ids[NAME]
    outside: list[str] = []
    page = new_tab(browser)
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
        (server.url, "data:", "blob:", "about:")) else None)
    seen = {}
    for path in PAGES.values():
        visit(page, server, path, dataset=did, **FEW)
        assert not page.query_selector_all('[data-testid="stException"]'), path
        # the dataset's name, written out (an invisible word joiner keeps its URL from being linked)
        assert page.get_by_text(re.compile(r"!\[name\]\(http")).count(), f"/{path}: the payload is not shown"
        seen[path or "home"] = _live_markup(page)
        if path == "Agreement":
            shoot(page, "payload_agreement.png")
        if not path:  # the home page, open now: its note and its tables' toolbar
            _home_note_and_toolbar(page)
    assert all(v == {"links": [], "images": [], "bold": []} for v in seen.values()), seen
    assert outside == [], sorted(set(outside))[:10]

    # The HTML report of the same data, from a file: nothing fetched, nothing live.
    for kind, frame in payload_tables().items():
        report = tmp_path / f"{kind}.html"
        report.write_text(build_report(Ingested(table=kind, frame=frame, source=NAME, notes=(NOTE,)),
                                       n_boot=30, seed=0, name=NAME).html, encoding="utf-8")
        page.goto(report.as_uri(), wait_until="load")
        page.wait_for_function("() => { const plots = [...document.querySelectorAll('.js-plotly-plot')];"
                               " return plots.length >= 3 && plots.every(p => p.querySelector('.main-svg')); }")
        assert _live_markup(page) == {"links": [], "images": [], "bold": []}, kind
        # the judge's name is drawn in a figure as written, tag and all
        assert page.locator("svg text", has_text='<a href="http://evil.example/judge">gpt-4</a>').count(), kind
    assert [u for u in outside if not u.startswith("file:")] == []
