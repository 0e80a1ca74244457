"""What the page tests (AppTest) share: a browser session of the app opened on one page, and finishing what a
page showed as point estimates first."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from evalcore.ui.analyses import PENDING_NOTE
from tests.helpers import APP

#: Every page, as ``AppTest.switch_page`` names it.
HOME = "app_pages/0_Home.py"
AGREEMENT = "app_pages/1_Agreement.py"
BIAS = "app_pages/2_Bias.py"
WIN_RATES = "app_pages/3_Win_rates.py"
SUPERFICIAL = "app_pages/4_Superficial_quality.py"
POSITION = "app_pages/5_Position_bias.py"
ALT_TEST = "app_pages/6_Alt_test.py"
TRUE_SCORES = "app_pages/7_True_scores.py"
LEADERBOARD = "app_pages/8_Leaderboard.py"
PAGES = [HOME, AGREEMENT, BIAS, WIN_RATES, SUPERFICIAL, POSITION, ALT_TEST, TRUE_SCORES, LEADERBOARD]


def open_page(page: str | None = None, *, dataset: str | None = None, timeout: int = 300, run: bool = True,
              **params: str) -> AppTest:
    """A new browser session of ``app.py`` on ``page`` (None: Home), its address bar holding ``?dataset=`` and
    ``params``, run once (``run=False``: not yet, to set its session state first).

    The session opens the page directly, as a link does: each page's URL path is its file's name, which is how
    AppTest finds a page before the first run, so no run of Home comes first.
    """
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if dataset is not None:
        at.query_params["dataset"] = dataset
    at.query_params.update(params)
    if page not in (None, HOME):
        at.switch_page(page)
    return at.run() if run else at


def finish(at: AppTest, *, timeout: float = 300) -> AppTest:
    """Rerun the page until nothing on it is shown as point estimates first: what the page's fragment does in a
    browser, twice a second, until its intervals are in."""
    deadline = time.monotonic() + timeout
    while any(PENDING_NOTE in i.value for i in at.info):
        assert time.monotonic() < deadline, "the intervals did not arrive"
        time.sleep(0.5)
        at.run()
    return at
