"""The workspace under hostile use: uploads that stay private and go away, identical uploads at
once, a link to an upload still awaiting its mapping, and docs that say what the CLI shares.

Defects 8, 13 and part of 14. Every input is made here, in the test's own folders.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.store import NEEDS_MAPPING, READY, Workspace
from tests.helpers import ROOT

LONG_CSV = (b"item,annotator,criterion,score,lang\n1,ann1,LA,2,hi\n1,ann2,LA,1,hi\n1,gpt-4,LA,2,hi\n"
            b"2,ann1,LA,2,en\n2,ann2,LA,2,en\n2,gpt-4,LA,1,en\n")


@pytest.fixture
def system_temp(tmp_path_factory, monkeypatch) -> Path:
    """The system temp folder as the code under test sees it: a fresh one (outside the workspace's folder), to
    show what is left there."""
    folder = tmp_path_factory.mktemp("system-temp")
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _home(dataset: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if dataset is not None:
        at.query_params["dataset"] = dataset
    return at.run()


def _copies(folder: Path, name: str) -> list[Path]:
    """Every file called ``name`` under ``folder``."""
    return sorted(p for p in folder.rglob(name) if p.is_file())


def _plain(text: str) -> str:
    """A message as read on the page: the Markdown escapes of data-derived text removed."""
    return text.replace("\\", "")


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


# --------------------------------------------------------------------------- defect 8: private uploads


def test_an_upload_is_kept_owner_only_inside_the_workspace(ws, system_temp):
    at = _home()
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert pending.status == NEEDS_MAPPING
    (copy,) = _copies(ws.path.parent, "judgments.csv")  # the one copy the presets read, by the workspace
    assert copy.read_bytes() == LONG_CSV
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    folder = copy.parent
    while folder != ws.path.parent:  # every folder between the workspace and the file is the owner's only
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        folder = folder.parent
    assert not list(system_temp.rglob("*judgments*"))
    assert not (system_temp / "evalcore-uploads").exists()


def test_a_rejected_upload_leaves_no_file_behind(ws, system_temp):
    at = _home()
    at.file_uploader[0].set_value(("header-only.csv", b"item_id,rater,score\n", "text/csv")).run()
    _clean(at)
    (message,) = [_plain(e.value) for e in at.error]
    assert message.startswith("header-only.csv: has a header but no data rows"), message
    assert ws.list_datasets() == []  # nothing was stored ...
    assert _copies(ws.path.parent, "header-only.csv") == []  # ... and no copy of it is left anywhere
    assert _copies(system_temp, "header-only.csv") == []
    leftovers = [p for p in ws.path.parent.rglob("*") if p.is_file() and not p.name.startswith(ws.path.name)]
    assert leftovers == []


def test_discarding_importing_and_deleting_remove_the_uploaded_files(ws, system_temp):
    at = _home()
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    (pending,) = ws.list_datasets()
    assert len(_copies(ws.path.parent, "judgments.csv")) == 1
    at.button(key=f"discard_{pending.id}").click().run()
    _clean(at)
    assert ws.list_datasets() == []
    assert _copies(ws.path.parent, "judgments.csv") == []  # discarded: the copy goes with it

    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    (pending,) = ws.list_datasets()
    assert len(_copies(ws.path.parent, "judgments.csv")) == 1
    next(b for b in at.button if b.key == f"import_{pending.id}").click().run()
    _clean(at)
    assert ws.info(pending.id).status == READY
    assert _copies(ws.path.parent, "judgments.csv") == []  # imported: the raw bytes are dropped, so is the copy

    other = ws.save_upload([("other.csv", LONG_CSV)])
    (copy,) = ws.upload_paths(other, ws.upload(other))
    assert copy.is_file() and copy.name == "other.csv"
    ws.delete(other)
    assert not copy.exists() and not copy.parent.exists()  # deleted: nothing of it stays on disk
    assert list(system_temp.iterdir()) == []


@pytest.mark.parametrize("name", ["..", ".", "", "../../escape.csv", "a\0b.csv", "x" * 300 + ".csv"])
def test_a_hostile_file_name_stays_inside_the_upload_folder(ws, name):
    did = ws.save_upload([(name, LONG_CSV)])
    (copy,) = ws.upload_paths(did, ws.upload(did))
    base = ws.path.parent.resolve()
    assert base in copy.resolve().parents and copy.read_bytes() == LONG_CSV
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert not (ws.path.parent.parent / "escape.csv").exists()
    ws.delete(did)
    assert not copy.exists()


# --------------------------------------------------------------------------- defect 13: identical uploads at once


def test_identical_uploads_from_threads_at_once_make_one_dataset(tmp_path):
    path = tmp_path / "ws.duckdb"
    Workspace(path)
    files = [("same.csv", LONG_CSV)]
    n = 8
    start = threading.Barrier(n)
    ids: list[str] = []
    errors: list[BaseException] = []

    def session(k: int) -> None:
        try:
            ws = Workspace(path) if k % 2 else shared  # sessions share the server's object, and own ones too
            start.wait(30)
            ids.append(ws.save_upload(list(files)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    shared = Workspace(path)
    threads = [threading.Thread(target=session, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, [str(e) for e in errors]
    assert len(ids) == n and len(set(ids)) == 1
    (only,) = Workspace(path).list_datasets()
    assert only.id == ids[0] and only.name == "same" and only.status == NEEDS_MAPPING


_UPLOADER = """
import sys, time
from evalcore.data.store import Workspace
path, at, content = sys.argv[1], float(sys.argv[2]), sys.argv[3].encode()
ws = Workspace(path, lock_timeout=60)
while time.time() < at:
    pass
print(ws.save_upload([("same.csv", content)]), flush=True)
"""


def test_identical_uploads_from_processes_at_once_make_one_dataset(tmp_path):
    import time

    path = tmp_path / "ws.duckdb"
    Workspace(path)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    at = time.time() + 3  # every process starts importing first, then uploads at the same moment
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_UPLOADER), str(path), str(at),
                               LONG_CSV.decode()], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ids.append(out.strip())
    assert len(set(ids)) == 1, ids
    assert [d.id for d in Workspace(path).list_datasets()] == ids[:1]


# --------------------------------------------------------------------------- defect 14: a link to a pending upload


def test_a_link_to_an_upload_awaiting_its_mapping_says_so_and_opens_the_mapping(ws):
    did = ws.save_upload([("judgments.csv", LONG_CSV)])
    at = _home(dataset=did)
    at.switch_page("app_pages/1_Agreement.py").run()
    _clean(at)
    shown = " ".join(_plain(i.value) for i in at.info)
    assert "waiting for its column mapping" in shown and "judgments" in shown, shown
    assert "deleted" not in shown and "not in the workspace" not in shown, shown
    links = [link for link in at.page_link if link.proto.page.endswith("0_Home.py") or "home" in link.label.lower()]
    assert any(link.proto.query_string == f"dataset={did}" for link in links), [l.proto for l in links]
    # The home page opened from that link shows the upload's column mapping.
    home = _home(dataset=did)
    _clean(home)
    assert [_plain(s.value) for s in home.subheader] == ["Map the columns of judgments.csv"]
    assert home.selectbox(key=f"map_{did}_ratings_item_id").value == "item"
    assert not [i.value for i in home.info if "not in the workspace" in i.value]


# --------------------------------------------------------------------------- defect 14: what the CLI shares


def test_the_docs_do_not_say_the_cli_uses_the_workspace():
    """The CLI reads the files it is given; only the app keeps a workspace."""
    claim = re.compile(r"\(and the CLI\)|\(the CLI\)|\bCLI\b[^.]*\b(shares?|uses?|writes? to|reads? from)\b[^.]*\bworkspace\b"
                       r"|\bworkspace\b[^.]*\b(with|and|by) the CLI\b", re.IGNORECASE)
    said = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "evalcore" / "data" / "store.py"]:
        for sentence in re.split(r"(?<=[.;:])\s+", " ".join(doc.read_text(encoding="utf-8").split())):
            if "workspace" in sentence.lower() and claim.search(sentence) and "does not" not in sentence:
                said.append(f"{doc.name}: {sentence}")
    assert said == []
