"""Shared test setup: no test ever touches the user's own workspace or size limit, and the longest tests
start first."""

from __future__ import annotations

import functools
import sys

import pytest

#: Markers of the longest tests, longest kind first: their modules start first, so that no worker is left with a
#: two-minute browser test when the others have finished.
LONGEST_FIRST = ("browser", "spark", "slow")


def _module(nodeid: str) -> str:
    """The file a test (or doctest) is in: ``tests/unit/test_x.py::test_y[a]`` -> ``tests/unit/test_x.py``."""
    return nodeid.split("::", 1)[0]


def work_unit(nodeid: str) -> str:
    """What one worker runs together: every browser test (one server and one Chromium, whose cached results the
    next test reuses), every Spark test (one Spark JVM), else a whole module (its module-scoped fixtures are
    computed once, not once per worker that runs one of its tests)."""
    module = _module(nodeid)
    if module.rpartition("/")[2].startswith("test_browser"):
        return "browser"
    if nodeid.rpartition("::")[2].startswith("test_spark"):
        return "spark"
    return module


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # a hook of pytest-xdist, used only when it runs
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for ``-n`` (``--dist load``): a worker takes the next :func:`work_unit`, in the
    order :func:`pytest_collection_modifyitems` gives, when it has at most two tests waiting.

    xdist's own ``load`` sends each worker a quarter of its share as one block: with the longest tests first,
    one worker would get them all; and it splits a module's tests between the workers, so that both compute its
    module fixtures. Its ``xdist_group`` marker cannot group the Spark tests under pytest 9 (it renames the node
    IDs in a way pytest 9 ignores), so they are found by name: a test that uses the ``spark`` fixture is named
    ``test_spark...``, and a browser test lives in a ``test_browser*.py`` file (both checked at collection).
    """
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    # The order of the collection, longest modules first (xdist would reorder the units by their number of tests).
    config.option.loadscopereorder = False

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


def pytest_collection_modifyitems(config, items):
    """Run whole modules, the longest kinds first: a module that has a test marked ``browser``, ``spark`` or
    ``slow`` goes ahead, in that order; the others keep the collection's order (tests/app, tests/cli, ..., and
    the doctests of evalcore/ last, many small ones that fill the end of a run). The sort is stable and keeps
    each module's tests together and in their order, so its module-scoped fixtures are computed once, with or
    without pytest-xdist."""
    def rank(item) -> int:
        return next((i for i, m in enumerate(LONGEST_FIRST) if item.get_closest_marker(m)), len(LONGEST_FIRST))

    module_rank: dict[str, int] = {}
    for item in items:
        module = _module(item.nodeid)
        module_rank[module] = min(module_rank.get(module, len(LONGEST_FIRST)), rank(item))
    items.sort(key=lambda item: module_rank[_module(item.nodeid)])
    for item in items:  # the scheduler above finds the Spark and browser tests by their names
        if "spark" in getattr(item, "fixturenames", ()) and not item.name.startswith("test_spark"):
            raise pytest.UsageError(f"{item.nodeid} uses the spark fixture: name it test_spark... so that it runs "
                                    "on the worker that has the Spark session")
        if item.get_closest_marker("browser") and work_unit(item.nodeid) != "browser":
            raise pytest.UsageError(f"{item.nodeid} is marked browser: put it in a test_browser*.py file so that it "
                                    "runs on the worker that has the browser and the app's server")


def pytest_collection_finish(session):
    """Scan the installed packages for Streamlit components once per process, not once per page test.

    Each new ``AppTest`` session reads the metadata of every installed distribution to find custom components
    (0.2 to 0.4 s of CPU, up to a third of a short page test); the installed packages do not change during a
    run, so every session after the first gets the first one's list. Only when a collected module imported
    AppTest."""
    if "streamlit.testing.v1" not in sys.modules:
        return
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without custom components v2 (the floor CI installs) scans nothing
        return
    if not hasattr(manifest_scanner, "scan_component_manifests"):
        return

    once = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(once(*args, **kwargs))


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
