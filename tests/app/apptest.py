"""What the page tests (AppTest) share: a browser session of the app opened on one page, finishing what a
page showed as point estimates first, and a workspace that the tests of a module share."""

from __future__ import annotations

import functools
import shutil
import time
from pathlib import Path

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


@functools.cache
def _samples() -> dict:
    """The sample's tables, read and validated once per process (the workspace stores a copy of them)."""
    from evalcore.data.ingest import load_samples

    return load_samples()


def store_sample(path: Path) -> str:
    """Store the sample at ``path`` as the **Load the sample data** button does; its id."""
    from evalcore.data.store import Workspace
    from evalcore.ui.loading import SAMPLE_NAME
    from evalcore.ui.state import SAMPLE_SOURCE

    tables = _samples()
    return Workspace(path).save_dataset(SAMPLE_NAME, {k: v.frame for k, v in tables.items()}, source=SAMPLE_SOURCE,
                                        notes={k: list(v.notes) for k, v in tables.items()})


def use_workspace(monkeypatch, path: Path, *, copy_to: Path | None = None):
    """Point the app at the workspace ``path`` (or at a copy of it made at ``copy_to``) for this test; the
    :class:`~evalcore.data.store.Workspace` it uses.

    The tests of a module that only read the same datasets share one workspace, stored once, as the sessions of
    one server do: a result (or a table read, a count of units) one test computed answers the next from the
    app's caches, instead of every test computing the same numbers again. A test that changes the workspace
    (deletes, uploads) works on a copy: the same datasets, ids and stamps, so the results in memory still
    answer it, but its changes stay its own.
    """
    from evalcore.data.store import Workspace

    if copy_to is not None:
        shutil.copyfile(path, copy_to)
        path = copy_to
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    return Workspace(path)
