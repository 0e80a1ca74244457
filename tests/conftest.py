"""Shared test setup: no test ever touches the user's own workspace or size limit."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_workspace(tmp_path_factory, monkeypatch):
    """Point EVALCORE_WORKSPACE at a fresh folder and use the default file size limit.

    Tests that need their own workspace path set the variable again; the monkeypatch
    undoes everything after each test.
    """
    folder = tmp_path_factory.mktemp("workspace")  # not inside tmp_path, which tests may expect empty
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(folder))
    monkeypatch.delenv("EVALCORE_MAX_FILE_MB", raising=False)
    # No background warm-up threads: one outliving its test races with the next test's output capture.
    monkeypatch.setenv("EVALCORE_WARMUP", "0")
    yield folder


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A fresh workspace that the app under AppTest also uses (tests of the store define their own)."""
    from evalcore.data.store import Workspace

    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws.duckdb"))
    return Workspace(tmp_path / "ws.duckdb")
