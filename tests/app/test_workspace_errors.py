"""An unusable workspace gives every page one clear message with its fix.

Each kind of unusable workspace is made inside the test run: a read-only (immutable) folder, a folder that
cannot be created, random bytes or a CSV where the database should be, and a database another process holds.
A read-only workspace that already holds a dataset still opens it, and a write that fails during an upload
says what is wrong with the workspace instead of "This is a bug in evalcore".
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.ingest import load_samples
from evalcore.data.store import Workspace
from evalcore.ui import cache
from evalcore.ui.cache import LOCK_TIMEOUT  # the value the app ships, before any test shortens it
from tests.app.apptest import HOME, PAGES, open_page
LONG_CSV = b"item,annotator,score\n1,ann1,2\n1,ann2,1\n1,gpt-4,2\n2,ann1,2\n2,ann2,2\n2,gpt-4,1\n"


@contextlib.contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """Make ``paths`` unwritable for this process: immutable (``chattr +i``) as root, who ignores modes."""
    done: list[Path] = []
    root = os.geteuid() == 0
    try:
        for p in paths:
            if root:
                res = subprocess.run(["chattr", "+i", str(p)], capture_output=True, text=True)
                if res.returncode:
                    pytest.skip(f"cannot make {p} immutable here (chattr: {res.stderr.strip()})")
            else:
                p.chmod(0o500 if p.is_dir() else 0o400)
            done.append(p)
        yield
    finally:
        for p in reversed(done):
            if root:
                subprocess.run(["chattr", "-i", str(p)], check=True)
            else:
                p.chmod(0o700 if p.is_dir() else 0o600)


_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("SELECT count(*) FROM datasets").fetchall()
print("holding", flush=True)
time.sleep(120)
"""


def _holder(path: Path) -> subprocess.Popen:
    """Another process that opens the workspace and keeps it open (and locked)."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_HOLDER), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding", proc.stderr.read()
    return proc


#: Each kind of unusable workspace: what to point EVALCORE_WORKSPACE at, what the message must name, and a
#: word of its fix.
KINDS = ["read-only-folder", "folder-cannot-be-created", "random-bytes", "csv", "locked"]


@pytest.fixture(params=KINDS)
def unusable(request, tmp_path, monkeypatch) -> Iterator[tuple[str, str, str]]:
    """An unusable workspace; yields (kind, the path the message names, a word of the fix)."""
    kind = request.param
    path = tmp_path / "ws.duckdb"
    if kind == "read-only-folder":
        folder = tmp_path / "ro"
        folder.mkdir()
        monkeypatch.setenv("EVALCORE_WORKSPACE", str(folder))
        with read_only(folder):
            yield kind, str(folder), "writable"
        return
    if kind == "folder-cannot-be-created":
        parent = tmp_path / "ro"
        parent.mkdir()
        monkeypatch.setenv("EVALCORE_WORKSPACE", str(parent / "sub" / "ws.duckdb"))
        with read_only(parent):
            yield kind, str(parent / "sub"), "writable"
        return
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    if kind == "random-bytes":
        path.write_bytes(os.urandom(1 << 16))
        yield kind, str(path), "move"
    elif kind == "csv":
        path.write_bytes(b"item_id,rater,score\n1,a,5\n" * 50)
        yield kind, str(path), "move"
    else:
        Workspace(path)  # a valid workspace that another program then holds open
        # The pages wait the whole timeout before they say so; a short one here tests the same message (which
        # states the wait it used), and test_the_pages_give_up_on_a_held_workspace_quickly checks the real one.
        monkeypatch.setattr(cache, "LOCK_TIMEOUT", 0.3)
        holder = _holder(path)
        try:
            yield kind, str(path), "close"
        finally:
            holder.kill()
            holder.wait(10)


def _plain(elements) -> list[str]:
    """The texts of these message elements as read on the page (the Markdown escapes of a path removed)."""
    return [e.value.replace("\\", "") for e in elements]


def _open(page: str, *, dataset: str | None = None) -> AppTest:
    return open_page(page, dataset=dataset, timeout=90)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_explains_an_unusable_workspace(unusable, page):
    kind, where, fix = unusable
    at = _open(page)
    assert not at.exception, [e.value for e in at.exception]  # not Streamlit's "This app has encountered an error"
    (message,) = _plain(at.error)  # one message, not one per section
    assert where in message, message
    assert "Fix:" in message and fix in message.split("Fix:", 1)[1].lower(), message
    assert "bug" not in message.lower() and "Traceback" not in message
    if kind == "locked":
        # Said after the app's wait (here shortened), not the library's 20 s: the message states the wait it gave
        # up after.
        assert f"after {cache.LOCK_TIMEOUT:g} s" in message and "after 20 s" not in message, message
    if kind in ("random-bytes", "csv"):
        assert Path(where).stat().st_size > 0  # never overwritten


def test_the_pages_give_up_on_a_held_workspace_quickly():
    # A page left blank for the library's default 20 s reads as a hang.
    assert 0 < LOCK_TIMEOUT <= 5 < Workspace.__init__.__kwdefaults__["lock_timeout"]


@pytest.fixture
def read_only_sample(ws) -> Iterator[str]:
    """The sample saved in a workspace whose folder and file then become read-only; yields the dataset id."""
    did = ws.save_dataset("Sample", {k: v.frame for k, v in load_samples().items()})
    before = ws.path.read_bytes()
    with read_only(ws.path, ws.path.parent):
        yield did
        assert ws.path.read_bytes() == before  # nothing was written


def test_a_read_only_workspace_still_opens_its_datasets(read_only_sample):
    did = read_only_sample
    home = _open(HOME, dataset=did)
    assert not home.exception, [e.value for e in home.exception]
    assert not home.error, [e.value for e in home.error]
    assert home.header[0].value == "Sample"
    notes = " ".join(_plain(home.sidebar.warning))
    assert "read-only" in notes and "EVALCORE_WORKSPACE" in notes
    # 200 resamples, not the pages' 1000: whether they open and draw is tested here, not their intervals.
    for page, boot in (("app_pages/1_Agreement.py", {"ag_boot": "200"}), ("app_pages/5_Position_bias.py",
                                                                          {"pb_boot": "200"})):
        at = open_page(page, dataset=did, timeout=90, **boot)
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, [e.value for e in at.error]
        assert at.title and len(at.dataframe) + len(at.get("plotly_chart")) > 0, page


def test_an_upload_into_a_read_only_workspace_is_explained(read_only_sample):
    at = _open(HOME, dataset=read_only_sample)
    shown = " ".join(w for w in _plain(at.warning) if "read-only" in w)
    assert "upload" in shown and "EVALCORE_WORKSPACE" in shown  # said where the uploader would be
    assert not at.file_uploader  # no uploader that could only fail


def test_a_write_that_fails_during_an_upload_names_the_workspace(ws):
    at = _open(HOME)
    assert not at.exception and not at.error
    with read_only(ws.path.parent):  # the folder becomes unwritable while the app runs
        at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
        assert not at.exception, [e.value for e in at.exception]
        (message,) = _plain(at.error)
    assert "bug" not in message.lower(), message
    assert "Fix:" in message and "writable" in message and "EVALCORE_WORKSPACE" in message, message
    assert ws.list_datasets() == []
