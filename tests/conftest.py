"""Shared test setup: no test ever touches the user's own workspace or size limit, and the longest tests
start first."""

from __future__ import annotations

import pytest

#: Markers of the longest tests, longest kind first: they start first, so that no worker is left with a
#: two-minute browser test when the others have finished.
LONGEST_FIRST = ("browser", "spark", "slow")


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # a hook of pytest-xdist, used only when it runs
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for ``-n`` (``--dist load``): each worker takes the next test when it has at most
    two waiting, and the Spark tests go to one worker together, which starts one Spark JVM for them all.

    xdist's own ``load`` sends each worker a quarter of its share as one block: with the longest tests first,
    one worker would get them all. Its ``xdist_group`` marker cannot group the Spark tests under pytest 9 (it
    renames the node IDs in a way pytest 9 ignores), so they are found by name: a test that uses the ``spark``
    fixture is named ``test_spark...`` (checked at collection).
    """
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneTestAtATime(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if nodeid.rpartition("::")[2].startswith("test_spark") else nodeid

    return OneTestAtATime(config, log)


def pytest_collection_modifyitems(config, items):
    """Put the tests marked ``browser``, ``spark`` and ``slow`` first, in that order; the sort is stable, so a
    module's tests stay together within each kind."""
    def rank(item) -> int:
        return next((i for i, m in enumerate(LONGEST_FIRST) if item.get_closest_marker(m)), len(LONGEST_FIRST))

    items.sort(key=rank)
    for item in items:  # the scheduler above finds the Spark tests by name
        if "spark" in getattr(item, "fixturenames", ()) and not item.name.startswith("test_spark"):
            raise pytest.UsageError(f"{item.nodeid} uses the spark fixture: name it test_spark... so that it runs "
                                    "on the worker that has the Spark session")


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
    # A page waits for its intervals instead of showing point estimates first (a loaded machine would otherwise
    # decide what a page test sees); the tests of points-first set it back.
    monkeypatch.setenv("EVALCORE_POINTS_FIRST_AFTER", "600")
    yield folder


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A fresh workspace that the app under AppTest also uses (tests of the store define their own)."""
    from evalcore.data.store import Workspace

    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws.duckdb"))
    return Workspace(tmp_path / "ws.duckdb")
