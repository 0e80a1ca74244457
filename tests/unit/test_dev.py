"""``dev.py test``: pytest's "no tests collected" is a failure, and ``--fast`` runs the quick part on every core."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from tests.helpers import ROOT


@pytest.fixture
def dev(monkeypatch):
    """dev.py loaded as a module, installing nothing, with pytest's run replaced: ``dev.calls`` holds each
    command and ``dev.status`` is the exit status it returns."""
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.calls, module.status = [], 0
    monkeypatch.setattr(module, "ensure", lambda extras=(): "python")
    monkeypatch.setattr(module, "_ensure_chromium", lambda: module.calls.append("chromium"))
    monkeypatch.setattr(module, "subprocess", SimpleNamespace(
        call=lambda args, cwd, env: module.calls.append(args) or module.envs.append(env) or module.status))
    module.envs = []
    return module


@pytest.mark.parametrize("status, code", [(0, 0), (1, 1), (2, 2), (5, 1)])
def test_the_exit_status_is_pytests_and_no_tests_is_a_failure(dev, status, code):
    dev.status = status
    assert dev.main(["test"]) == code


def test_the_whole_suite_runs_on_every_core_and_names_the_slowest(dev):
    assert dev.main(["test", "tests/unit", "-k", "agreement"]) == 0
    chromium, args = dev.calls
    assert chromium == "chromium"  # the browser tests need it
    assert args[:3] == ["python", "-m", "pytest"] and ["-n", "auto"] == args[3:5] and "--durations=15" in args
    assert "--ignore=tests/smoke" in args and args[-3:] == ["tests/unit", "-k", "agreement"]
    # One BLAS thread per worker (unless the caller chose): the workers already fill the cores.
    assert dev.envs[-1]["OPENBLAS_NUM_THREADS"] == "1"
    dev.main(["test", "-n", "1"])
    assert "auto" not in dev.calls[-1] and dev.calls[-1][-2:] == ["-n", "1"]


def test_bytecode_is_cached_outside_the_checkout_where_none_may_be_written_beside_it(dev, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    dev.main(["test", "--fast"])
    env = dev.envs[-1]
    assert "PYTHONDONTWRITEBYTECODE" not in env
    prefix = env["PYTHONPYCACHEPREFIX"]
    assert not prefix.startswith(str(ROOT)), prefix  # the checkout stays free of bytecode
    # A prefix the caller chose is kept; without the setting, Python's own default (beside the sources) is kept.
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/somewhere")
    dev.main(["test", "--fast"])
    assert dev.envs[-1]["PYTHONPYCACHEPREFIX"] == "/somewhere"
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    dev.main(["test", "--fast"])
    assert "PYTHONPYCACHEPREFIX" not in dev.envs[-1]


def test_fast_leaves_out_the_slow_browser_and_spark_tests(dev):
    assert dev.main(["test", "--fast", "-x"]) == 0
    (args,) = dev.calls  # no browser to install
    assert "--fast" not in args and args[-1] == "-x"
    marks = args[args.index("-m", 3) + 1]  # after "python -m pytest"
    assert marks == "not slow and not browser and not spark"
    assert {"tests/unit", "evalcore"} <= set(args) and "tests/app" not in args
