"""What the browser tests share: Debian's Chromium, the app's server on a free port, and a user's moves.

Chromium is Debian's (``/usr/bin/chromium``) driven by Playwright through ``executable_path``: Playwright
cannot download its own browser here. Screenshots go to ``tests/_artifacts/screenshots/`` for a human to look
at.

Waiting is on the page's own state, not on fixed sleeps: :func:`settle` waits until the script has finished a
run (counted by a MutationObserver on Streamlit's ``data-test-script-state``, or, where the app drew a whole run as
one frame, seen in the server's messages), no result is still shown as
point estimates first, every element and figure is drawn, and all this has held for 250 ms.

Chromium draws every frame in software here, so a tab is only as tall as a laptop's screen (Playwright scrolls to
what it clicks; :func:`shoot` makes the window as tall as the page for a screenshot) and the shimmer of an element
still loading is kept still (:data:`STILL`): nothing the tests check moves.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from evalcore.ui.analyses import PENDING_NOTE
from tests.helpers import ROOT

SHOTS = ROOT / "tests" / "_artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]

#: A tab's size unless a test needs another: a laptop's screen. (A taller one made Chromium composite far more
#: pixels on every frame of an animation.)
TAB = {"width": 1400, "height": 900}

#: Keeps still the endless animations of what is loading (the skeleton's shimmer, the spinner): while the script
#: runs, each frame of them is drawn in software. Transitions and other animations are left alone (the app's own
#: behaviour, and events that wait for their end).
STILL = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '[data-testid="stSkeleton"], [data-testid="stSkeleton"] *, [data-testid="stSpinnerIcon"]'
    + ' { animation: none !important; }';
  document.head.appendChild(style);
});
// Counts the messages the server sends this document (see settle): a run whose start and end the app drew in
// one frame would leave no trace in the page's state attribute.
window.__evalcoreMessages = 0;
window.__evalcoreLastMessage = 0;
const NativeSocket = window.WebSocket;
window.WebSocket = class extends NativeSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', () => {
      window.__evalcoreMessages++;
      window.__evalcoreLastMessage = performance.now();
    });
  }
};"""

#: Fewer resamples, for a link to a page where only the drawing is under test (these controls are in the URL;
#: the last four are sliders whose fewest is 200, Alt-Test's above 0, which would skip its interval).
FEW = {"ag_boot": 50, "bi_boot": 50, "sq_boot": 200, "pb_boot": 200, "at_boot": 200, "lb_boot": 200}

#: Every page: its title in the navigation and its URL path (app.py declares them).
PAGES = {"Home": "", "Agreement": "Agreement", "Bias": "Bias", "Win rates": "Win_rates",
         "Superficial quality": "Superficial_quality", "Position bias": "Position_bias", "Alt-Test": "Alt_test",
         "True scores": "True_scores", "Leaderboard": "Leaderboard"}


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("EVALCORE_REQUIRE_BROWSER"):
        pytest.fail("Debian's chromium is not installed; .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")


def new_tab(browser, *, width: int = TAB["width"], height: int = TAB["height"]):
    """A new tab (a context of its own, as ``browser.new_page`` makes) of ``width`` x ``height``, animations of
    what is loading kept still (:data:`STILL`)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(STILL)
    return page


def new_session(browser):
    """A new browser context (another person: their own cookies and storage) of the :data:`TAB` size, animations
    of what is loading kept still (:data:`STILL`)."""
    context = browser.new_context(viewport=dict(TAB))
    context.add_init_script(STILL)
    return context


def shoot(page, name: str) -> None:
    """A screenshot of the whole page to ``SHOTS / name``. Streamlit scrolls its main area inside the window, so
    Playwright's ``full_page`` sees one window: the window is made as tall as the page for the shot (its width,
    hence every figure, unchanged; at most 6000 pixels), then given back."""
    size = page.viewport_size
    tall = min(6000, page.evaluate("""() => Math.max(...[...document.querySelectorAll(
        '[data-testid="stMain"], [data-testid="stSidebar"]')].map(e => e.scrollHeight), 0)"""))
    if tall > size["height"]:
        page.set_viewport_size({"width": size["width"], "height": tall})
    try:
        page.screenshot(path=str(SHOTS / name), full_page=True)
    finally:
        if tall > size["height"]:
            page.set_viewport_size(size)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` on a free port with its own workspace; ``env``: more environment variables."""

    def __init__(self, workspace: Path, log: Path, **env: str) -> None:
        self.workspace, self.log, self.env = workspace, log, env
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        env = dict(os.environ, EVALCORE_WORKSPACE=str(self.workspace), PYTHONUNBUFFERED="1", **self.env)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("streamlit did not start; log:\n" + self.log.read_text()[-3000:])

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def link(self, path: str = "", **params) -> str:
        """The URL of the page at ``path`` with these query parameters (``dataset=...``, a control's key)."""
        return f"{self.url}/{path}" + (f"?{urlencode(params)}" if params else "")


#: Installs (once per document) a counter of the script runs that have finished, and returns it with the count
#: of the server's messages so far (:data:`STILL` counts them).
_RUNS = """() => {
  if (window.__evalcoreRuns === undefined) {
    window.__evalcoreRuns = 0;
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver(records => records.forEach(r => {
      if (r.oldValue === 'running') window.__evalcoreRuns++;
    })).observe(app, {attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state']});
  }
  return [window.__evalcoreRuns, window.__evalcoreMessages];
}"""

#: Whether the page is idle: not running; (``since``: ``[runs, messages]`` from :func:`runs` before an action, or
#: null for any) a run finished since, or the server has sent messages since and none for 250 ms (a run the app drew as
#: one frame never shows "running": the suspected cause of one wait in vain for a run, with three workers on two
#: cores); nothing pending; every element drawn (no
#: skeleton of an element whose code is still loading, every figure's SVG there); and it has stayed so for 250 ms
#: (a run that calls ``st.rerun`` leaves the page idle for a moment in between).
_SETTLED = """([since, note]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMain"]');
  // the note is in an alert: its text, if shown (textContent and checkVisibility do not lay the page out, as
  // innerText of the whole page did on every poll)
  const pending = main && [...main.querySelectorAll('[data-testid="stAlert"]')]
    .some(a => a.textContent.includes(note) && a.checkVisibility());
  const answered = since === null || window.__evalcoreRuns > since[0]
    || (window.__evalcoreMessages > since[1] && performance.now() - window.__evalcoreLastMessage >= 250);
  const idle = app && app.getAttribute('data-test-script-state') === 'notRunning' && answered && !pending
    && !document.querySelector('[data-testid="stSkeleton"]')
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'));
  if (!idle) { window.__evalcoreIdle = null; return false; }
  window.__evalcoreIdle = window.__evalcoreIdle || performance.now();
  return performance.now() - window.__evalcoreIdle >= 250;
}"""


def runs(page) -> list[int]:
    """How many script runs this page has finished (counted from the first call on) and how many messages the
    server has sent it, since it was loaded."""
    return page.evaluate(_RUNS)


def settle(page, *, since: list[int] | None = None, timeout: float = 90_000) -> None:
    """Wait until the page is idle: its script not running, (``since``: what :func:`runs` said before an action) a
    run finished after the action, no result shown as point estimates first, every figure drawn.

    Right after a page load no ``since`` is needed: the state reads "initial" until the first run has started.
    """
    page.evaluate("() => { window.__evalcoreIdle = null; }")
    page.wait_for_function(_SETTLED, arg=[since, PENDING_NOTE], timeout=timeout, polling=50)


#: Whether every figure shown has been drawn again at its box's width (after a resize Plotly redraws a moment
#: later; a figure in a hidden tab has no width and is left out).
_REDRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')].every(g => g.clientWidth === 0
  || (g._fullLayout && Math.abs(g._fullLayout.width - g.clientWidth) <= 1))"""


def resize(page, width: int, height: int, *, timeout: float = 30_000) -> None:
    """Make the window ``width`` x ``height`` as a user does (no new run of the script), and wait until the page
    has laid itself out again: every figure redrawn at its new width, then idle as :func:`settle` says."""
    size = page.viewport_size or {}
    if (size.get("width"), size.get("height")) == (width, height):
        return
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(_REDRAWN, timeout=timeout, polling=50)
    settle(page, timeout=timeout)


def act(page, action: Callable[[], object], *, timeout: float = 90_000) -> None:
    """Do ``action`` (a click, a key press) and wait until the run it causes has finished. Not for what runs
    nothing (the home page's tabs, a widget set to ``on_change="ignore"``): it would wait in vain."""
    before = runs(page)
    action()
    try:
        settle(page, since=before, timeout=timeout)
    except Exception as exc:  # what the page was doing, for a failure that a loaded machine made
        state = page.evaluate("""() => [document.querySelector('[data-testid="stApp"]')
          ?.getAttribute('data-test-script-state'), window.__evalcoreRuns, window.__evalcoreMessages]""")
        raise AssertionError(f"no finished run after the action: before it (runs, messages) = {before}, now "
                             f"(state, runs, messages) = {state}") from exc


def exceptions(page) -> list[str]:
    return [e.inner_text()[:500] for e in page.query_selector_all('[data-testid="stException"]')]


def dataset_in_url(page) -> str | None:
    """The tab's dataset, as its address bar holds it (``?dataset=``)."""
    return (parse_qs(urlparse(page.url).query).get("dataset") or [None])[0]


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def choose_dataset(page, name: str) -> None:
    """Pick ``name`` in the sidebar's dataset selector, as a user does."""
    sidebar(page).locator('[data-testid="stSelectbox"]').first.click()
    act(page, lambda: page.get_by_role("option", name=name, exact=True).click(), timeout=180_000)


def navigate(page, title: str) -> None:
    """Open a page through the sidebar's navigation (the same session, as a click does); nothing when it is
    the page shown."""
    if urlparse(page.url).path.strip("/") == PAGES[title]:
        return
    link = sidebar(page).locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True)
    act(page, link.click, timeout=180_000)
    assert urlparse(page.url).path.strip("/") == PAGES[title], page.url


def visit(page, server: Server, path: str = "", *, timeout: float = 180_000, **params) -> None:
    """Open the page at ``path`` from a link with these query parameters (a new session, as a reload is)."""
    page.goto(server.link(path, **params), wait_until="domcontentloaded")
    settle(page, timeout=timeout)


def choose_files(page, files) -> None:
    """On the home page, ``files`` (a path or a list of them) chosen in the **Upload a file** tab."""
    page.get_by_role("tab", name=re.compile("Upload a file")).click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(files)


def upload(page, server: Server, files, *, mapping: str) -> None:
    """On the home page (opened from a link), ``files`` chosen in the **Upload a file** tab, until the form that
    maps the columns of ``mapping`` (a file's name) is shown and idle."""
    visit(page, server)
    choose_files(page, files)
    page.get_by_text(f"Map the columns of {mapping}").wait_for(timeout=60_000)
    settle(page)


def open_with_sample(browser, server: Server, *, width: int = TAB["width"], height: int = TAB["height"]):
    """A new tab on the home page, with the sample data loaded by its button."""
    page = new_tab(browser, width=width, height=height)
    visit(page, server)
    act(page, page.get_by_role("button", name="Load the sample data").click)
    page.get_by_role("heading", name=re.compile("Sample: multilingual ratings")).wait_for(timeout=90_000)
    return page
