"""The smoke subset: import, every CLI command on the sample, and every page of the app on the sample.

``python3 dev.py floors`` runs this file in an environment of the lowest versions ``pyproject.toml`` allows
(so that every floor is a version the code has run with); the whole suite runs it too. Each test checks a
real outcome (a table with the sample's pairs, the designed flags), so an old dependency that changes a
result, not only one that crashes, fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest import open_page
from tests.helpers import APP, ROOT, SAMPLE, SAMPLE_PAIRS

PAGES = sorted((ROOT / "app_pages").glob("*.py"))


def _cli(*args: str, tmp_path=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalcore.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path or ROOT, timeout=600)


def test_import_is_quiet_and_exports_every_name():
    code = ("import warnings, evalcore; warnings.simplefilter('error'); "
            "[getattr(evalcore, n) for n in evalcore.__all__]; print(len(evalcore.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) >= 20 and not out.stderr


def test_a_dawid_skene_fit_prints_no_dependency_warning():
    # A notebook user's view: Python's default warning filters, a fresh process, the Bayesian fit that imports ArviZ.
    code = ("import evalcore; c = evalcore.load_samples()['comparisons'].frame; "
            "fits = evalcore.estimate_all(c, method='ds', seed=0); "
            "print(len(fits), all(f.ci_low < f.p_mean < f.ci_high for f in fits))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["6", "True"]
    assert "Warning" not in out.stderr, out.stderr[-2000:]


@pytest.mark.parametrize("command, args, expect", [
    ("validate", [str(SAMPLE)], "[yes] agreement"),
    ("agreement", [str(SAMPLE), "--by", "language"], "Swahili"),
    ("bias", [str(SAMPLE)], "familiarity"),
    ("winrate", [str(SAMPLE_PAIRS)], "6 pair(s)"),
    ("position", [str(SAMPLE_PAIRS)], "first-position"),
])
def test_every_command_runs_on_the_sample(command, args, expect):
    out = _cli(command, *args)
    assert out.returncode == 0, out.stderr[-2000:]
    assert expect in out.stdout


def test_the_report_command_writes_a_report(tmp_path):
    out = _cli("report", str(SAMPLE), "--out", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "<html" in (tmp_path / "r.html").read_text()[:500].lower()


def test_json_output_parses():
    out = _cli("winrate", str(SAMPLE_PAIRS), "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(out.stdout)
    assert len(rows) == 6 and all(r["ci_low"] < r["p_mean"] < r["ci_high"] and r["rhat"] < 1.05 for r in rows)


def test_every_page_opens_on_the_sample(ws):
    home = AppTest.from_file(str(APP), default_timeout=300).run()
    home.button(key="load_sample").click().run()
    assert not home.exception, [e.value for e in home.exception]
    for page in PAGES:
        at = open_page(None if page.name == "0_Home.py" else str(page.relative_to(ROOT)))
        assert not at.exception, (page.name, [e.value for e in at.exception])
        assert not at.error, (page.name, [e.value for e in at.error])
        shown = len(at.markdown) + len(at.get("plotly_chart")) + len(at.dataframe)
        assert shown > 3, page.name
