"""What the browser tests share: Debian's Chromium, the app's server on a free port, and a user's moves.

Chromium is Debian's (``/usr/bin/chromium``) driven by Playwright through ``executable_path``: Playwright
cannot download its own browser here. Screenshots go to ``tests/_artifacts/screenshots/`` for a human to look
at.
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
from urllib.parse import parse_qs, urlparse

import pytest

from tests.helpers import ROOT

SHOTS = ROOT / "tests" / "_artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'

def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("EVALCORE_REQUIRE_BROWSER"):
        pytest.fail("Debian's chromium is not installed; .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, workspace: Path, log: Path) -> None:
        self.workspace, self.log = workspace, log
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        env = dict(os.environ, EVALCORE_WORKSPACE=str(self.workspace), PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "Home.py"), "--server.port", str(self.port),
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
                time.sleep(0.3)
        raise RuntimeError("streamlit did not start; log:\n" + self.log.read_text()[-3000:])

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def page_paths() -> list[str]:
    """URL paths of every page: '' for Home.py and one per file in pages/ (Streamlit's naming)."""
    paths = [""]
    for f in sorted((ROOT / "pages").glob("*.py")):
        paths.append(re.sub(r"^[0-9]+[_ -]*", "", f.stem))
    return paths


def settle(page, timeout: float = 90_000) -> None:
    """Wait until the page has finished running, including the rerun that draws the intervals after a page
    showed point estimates first (between the two runs the page is briefly idle)."""
    deadline = time.monotonic() + timeout / 1000
    while True:
        page.wait_for_selector(DONE, timeout=timeout)
        page.wait_for_timeout(400)
        if page.locator(DONE).count() and page.get_by_text("Point estimates first").count() == 0:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the page did not finish: it still shows point estimates first")


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
    page.get_by_role("option", name=name, exact=True).click()
    settle(page, timeout=180_000)


def navigate(page, title: str) -> None:
    """Open a page through the sidebar's navigation (the same session, as a click does)."""
    sidebar(page).locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True).click()
    page.wait_for_timeout(500)
    settle(page, timeout=180_000)


def open_with_sample(browser, server: Server):
    """A new tall page on the home page, with the sample data loaded by its button."""
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(server.url, wait_until="domcontentloaded")
    settle(page)
    page.get_by_role("button", name="Load the sample data").click()
    page.get_by_role("heading", name=re.compile("Sample: multilingual ratings")).wait_for(timeout=90_000)
    settle(page)
    return page
