"""What a new AppTest session costs with Streamlit's component scan on every session (the reference) and once per
process (tests/conftest.py's ``pytest_collection_finish``), in-process and over whole page-test modules.

Run from the project root::

    .venv/bin/python benchmarks/bench_apptest_session.py            # the per-session cost, in one process
    .venv/bin/python benchmarks/bench_apptest_session.py --modules tests/app/test_sessions.py tests/app/test_workspace_errors.py

Each new ``AppTest`` reads the metadata of every installed distribution to find custom components; the installed
packages do not change during a test run. ``--modules`` runs the modules serially under pytest twice, with the
scan undone (the reference) and as the suite runs them, and prints CPU (user + sys) and wall time of each.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A pytest plugin that undoes the suite's one-scan-per-process (loaded with ``-p``; runs after conftest.py's hook).
UNDO = '''
import pytest
from streamlit.components.v2 import manifest_scanner
ORIGINAL = manifest_scanner.scan_component_manifests

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    manifest_scanner.scan_component_manifests = ORIGINAL
'''


def _script():
    import streamlit as st

    st.write("x")


def per_session(n: int = 20) -> tuple[float, float]:
    """CPU seconds of one new AppTest session of a one-line page: (scan every time, scan once)."""
    from streamlit.components.v2 import manifest_scanner
    from streamlit.testing.v1 import AppTest

    def cpu() -> float:
        AppTest.from_function(_script).run()
        start = time.process_time()
        for _ in range(n):
            AppTest.from_function(_script).run()
        return (time.process_time() - start) / n

    before = cpu()
    once = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda *a, **k: list(once(*a, **k))
    return before, cpu()


def run_modules(modules: list[str], undo: bool) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, pytest's last line) of the modules run serially."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "undo_scan_once.py").write_text(UNDO)
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "EVALCORE_WORKSPACE": str(Path(tmp, "ws.duckdb")),
               "PYTHONPATH": tmp}
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(["-p", "undo_scan_once"] * undo),
                *modules]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, (out.stdout.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="*", default=[], help="page-test modules to run with and without")
    args = parser.parse_args()
    before, after = per_session()
    print(f"one AppTest session, in-process: scan each time {before:.3f} s CPU, once {after:.3f} s "
          f"(saves {before - after:.3f} s per session; ratio {before / max(after, 1e-9):.0f}x); "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.modules:
        ref = run_modules(args.modules, undo=True)
        new = run_modules(args.modules, undo=False)
        for name, (cpu, wall, last) in (("scan every session", ref), ("scan once (suite)", new)):
            print(f"{name:>20}: {cpu:6.1f} s CPU, {wall:6.1f} s wall  ({last})")
        print(f"CPU saved: {ref[0] - new[0]:.1f} s ({new[0] / ref[0]:.2f} of before); "
              f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
