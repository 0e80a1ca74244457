"""A Dawid-Skene fit from a cold start: compiled code cached on disk where EVALCORE_CACHE_DIR says, nutpie driven
through its compiled core (no ArviZ), R-hat and ESS computed as ArviZ computes them.

The new paths are checked against the old ones on the same draws: nutpie's core against ``nutpie.sample`` draw for
draw (PandaLM's pairs, the bundled sample, a seeded simulation), ``evalcore.stats.convergence`` against
``arviz.rhat``/``arviz.ess`` bit for bit, and whole fits (every reported number) against the ``nutpie.sample``
route. Timings are benchmarks/bench_cold_start.py's business, not the tests'.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.data import ingest
from evalcore.pairwise import dawid_skene as dsm
from evalcore.pairwise import nuts
from evalcore.pairwise.dawid_skene import dawid_skene
from evalcore.pairwise.pairs import label_mask, pair_data, pairs
from evalcore.stats.convergence import ess_bulk, rhat
from tests.helpers import DATASETS, ROOT

PANDALM = DATASETS / "pandalm"


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return ingest.load_samples()["comparisons"].frame


@pytest.fixture(scope="module")
def pandalm() -> pd.DataFrame:
    if not (PANDALM / "testset-v1.json").exists():
        pytest.skip(f"the PandaLM test set is not at {PANDALM} (copy WeOpenML/PandaLM data/ there)")
    return ingest.load(PANDALM, preset="pandalm").frame


def _simulated_pair():
    """200 items, three judges of known accuracy, one perfect human per item (seeded)."""
    rng = np.random.default_rng(11)
    rows = []
    for i in range(200):
        a_better = rng.random() < 0.65
        rows.append({"item_id": f"it{i}", "system_a": "alpha", "system_b": "beta", "rater": "human1",
                     "rater_kind": "human", "winner": "a" if a_better else "b"})
        for e, (q0, q1) in enumerate(((0.65, 0.8), (0.7, 0.8), (0.75, 0.75))):
            right = rng.random() < (q0 if a_better else q1)
            rows.append({"item_id": f"it{i}", "system_a": "alpha", "system_b": "beta", "rater": f"judge{e}",
                         "rater_kind": "judge", "winner": "a" if right == a_better else "b"})
    return pair_data(pd.DataFrame(rows), "alpha", "beta")


def _both_routes(pair, labelled=None, *, seed=0, chains=4, draws=1000, tune=1000):
    """The draws of nutpie's core and of ``nutpie.sample``, each ``({name: (chains, draws, ...)}, divergences)``."""
    import nutpie

    data = dsm._ds_data(pair, labelled, *dsm._ds_priors(pair, None))
    k = dsm._kernel()
    args, initial_point, lay = dsm._kernel_inputs(pair, data)
    direct = nuts.sample(k.c_logp, k.c_expand, k.pack(*args), n_dim=k.n_dim(len(pair.judges)), initial_point=initial_point,
                         chains=chains, draws=draws, tune=tune, seed=seed, cores=2, **lay)
    idata = nutpie.sample(dsm._nutpie_model(pair, data), chains=chains, draws=draws, tune=tune, seed=seed,
                          progress_bar=False, cores=2)
    old = ({v: np.asarray(idata.posterior[v].values) for v in lay["names"]},
           int(np.asarray(idata.sample_stats["diverging"].values).sum()))
    return direct, old


def _assert_same_draws(direct, old):
    assert direct is not None, f"nutpie {nuts.core()} is not one the direct route was checked against"
    (d, d_div), (o, o_div) = direct, old
    assert d.keys() == o.keys() and d_div == o_div
    for v in d:
        assert d[v].shape == o[v].shape, v
        np.testing.assert_array_equal(d[v], o[v], err_msg=v)


@pytest.mark.slow
def test_nutpie_core_draws_what_nutpie_sample_draws_on_pandalm(pandalm):
    """Every PandaLM pair (two judges), with and without half of the human labels: the same draws, bit for bit."""
    for t in pairs(pandalm).itertuples():
        pair = pair_data(pandalm, t.system_a, t.system_b)
        for lab in (None, label_mask(pair, 0.5, seed=0)):
            _assert_same_draws(*_both_routes(pair, lab, seed=3, draws=300, tune=300))


@pytest.mark.slow
def test_nutpie_core_draws_what_nutpie_sample_draws_on_the_sample_and_a_simulation(sample):
    pair = _simulated_pair()
    _assert_same_draws(*_both_routes(pair, label_mask(pair, 0.2, seed=0), seed=4))
    _assert_same_draws(*_both_routes(pair_data(sample, "cirrus-70b", "atlas-7b"), seed=0, chains=3, draws=400))


@pytest.mark.slow
def test_a_fit_reports_what_the_nutpie_sample_route_reports(sample, monkeypatch):
    """Every number of the result (p, interval, mode, density, judges, R-hat, ESS, divergences, warnings) is the
    one the ArviZ route gives: nutpie.sample's InferenceData with arviz.rhat and arviz.ess."""
    import arviz as az

    pair = pair_data(sample, "atlas-7b", "ember-34b")
    lab = label_mask(pair, 0.3, seed=1)
    new = dawid_skene(pair, labelled=lab, seed=2)
    monkeypatch.setattr(nuts, "core", lambda: None)  # what a nutpie the direct route does not know gets
    import nutpie

    calls = []
    real = nutpie.sample
    monkeypatch.setattr(nutpie, "sample", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    old = dawid_skene(pair, labelled=lab, seed=2)
    assert calls == [1]
    skip = {"seconds"}
    for f in dataclasses.fields(new):
        if f.name not in skip:
            assert getattr(new, f.name) == getattr(old, f.name), f.name
    # and the route's own diagnostics are ArviZ's
    data = dsm._ds_data(pair, lab, *dsm._ds_priors(pair, None))
    idata = real(dsm._nutpie_model(pair, data), chains=4, draws=1000, tune=1000, seed=2, progress_bar=False,
                 cores=max(1, min(4, os.cpu_count() or 1)))
    assert float(az.rhat(idata, var_names=["p"])["p"]) == new.rhat
    assert float(az.ess(idata, var_names=["p"])["p"]) == new.ess


@pytest.mark.slow  # imports ArviZ (about 2 s): the full suite runs it, --fast does not
def test_convergence_diagnostics_are_arviz_bit_for_bit():
    """Seeded chains of every kind the fits meet (mixing, random walks, ties, a point mass, short, one chain)."""
    import arviz as az

    rng = np.random.default_rng(7)
    cases = [rng.normal(size=(4, 1000)), np.cumsum(rng.normal(size=(4, 1000)), axis=1),
             np.round(rng.normal(size=(4, 500)), 1), np.where(rng.random((4, 300)) < 0.3, 0.5, rng.random((4, 300))),
             rng.beta(2, 5, size=(2, 7)), rng.normal(size=(1, 800)), rng.normal(size=(3, 3)), np.full((4, 100), 0.25),
             rng.normal(size=(4, 999)) + np.arange(4)[:, None]]
    for i, x in enumerate(cases):
        for mine, theirs in ((rhat(x), az.rhat(x)), (ess_bulk(x), az.ess(x))):
            assert (np.isnan(mine) and np.isnan(theirs)) or mine == theirs, (i, mine, theirs)


def test_the_fft_length_is_scipys():
    from scipy.fftpack import next_fast_len

    from evalcore.stats import convergence

    assert all(convergence._next_regular(n) == next_fast_len(n) for n in range(1, 3000))


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "EVALCORE_CACHE_DIR")}
    env.update(extra)
    return env


_FIT = ("import sys\n"
        "from evalcore.data import ingest\n"
        "from evalcore.pairwise.pairs import pair_data\n"
        "from evalcore.pairwise.dawid_skene import dawid_skene\n"
        "frame = ingest.load_samples()['comparisons'].frame\n"
        "r = dawid_skene(pair_data(frame, 'cirrus-70b', 'atlas-7b'), draws=200, tune=200)\n"
        "import os, numba\n"
        "print(os.environ['NUMBA_CACHE_DIR'], numba.config.CACHE_DIR)\n"
        "print(sorted(m for m in ('arviz', 'matplotlib', 'xarray', 'pymc', 'pytensor', 'nutpie') "
        "if m in sys.modules))\n")


@pytest.mark.slow
def test_the_kernels_cache_in_evalcore_cache_dir_and_a_fit_loads_no_arviz(tmp_path):
    """A fresh process with EVALCORE_CACHE_DIR set: numba writes the Dawid-Skene kernel's cache there (nothing
    copied, the source tree's own cache untouched), a second process loads it, and neither imports ArviZ,
    matplotlib, PyMC or nutpie's Python package."""
    cache = tmp_path / "evalcore-cache"
    for attempt in ("compiles", "loads"):
        r = _run(_FIT, _env(EVALCORE_CACHE_DIR=str(cache)))
        assert r.returncode == 0, r.stderr
        folder, imported = r.stdout.splitlines()
        assert folder.split() == [str(cache / "numba")] * 2, attempt
        assert imported == "[]", attempt
        files = {p.name for p in cache.rglob("*") if p.is_file()}
        assert any(n.startswith("_dskernel.c_logp") and n.endswith(".nbi") for n in files), sorted(files)
        assert any(n.startswith("_dskernel.logp_grad") and n.endswith(".nbc") for n in files), sorted(files)
        if attempt == "compiles":
            stamps = {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbc")}
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbc")} == stamps  # loaded, not compiled again


def test_a_numba_cache_dir_the_user_set_is_kept(tmp_path):
    r = _run("import os, evalcore; print(os.environ['NUMBA_CACHE_DIR'])",
             _env(NUMBA_CACHE_DIR=str(tmp_path / "mine"), EVALCORE_CACHE_DIR=str(tmp_path / "ours")))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "mine")


def test_without_the_variable_the_cache_is_the_user_cache_folder():
    r = _run("import os, evalcore; print(os.environ['NUMBA_CACHE_DIR'])", _env())
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip())
    assert folder.name == "numba" and folder.parent.name == "evalcore"
    assert Path.home() in folder.parents or "XDG_CACHE_HOME" in os.environ


@pytest.mark.slow  # a fresh process: the full suite runs it, --fast does not
def test_importing_nutpie_after_its_core_was_loaded_alone():
    """The core loaded first is the one nutpie's package then uses; nutpie.sample still works."""
    code = ("import sys\n"
            "from evalcore.pairwise import nuts\n"
            "lib = nuts.core()\n"
            "assert 'nutpie' not in sys.modules and 'arviz' not in sys.modules\n"
            "import nutpie\n"
            "assert nutpie._lib is lib, (nutpie._lib, lib)\n"
            "print(nutpie.__version__)\n")
    r = _run(code, _env())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()


def test_every_numba_kernel_caches_on_disk():
    """Every ``numba.njit``/``numba.cfunc``/``numba.jit`` in evalcore says ``cache=True`` (the folder is the one
    above: every such module is imported after ``evalcore/__init__`` set it)."""
    missing = []
    for path in (ROOT / "evalcore").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "numba"
                    and node.func.attr in ("njit", "jit", "cfunc", "vectorize", "guvectorize")):
                if not any(k.arg == "cache" and isinstance(k.value, ast.Constant) and k.value.value is True
                           for k in node.keywords):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not missing, missing


def test_the_app_starts_the_warm_ups_the_current_dataset_needs_from_any_page(monkeypatch):
    """``app.py`` calls ``warm_up_at_start`` before every page: from the row counts alone, the Dawid-Skene sampler
    for comparisons, the agreement passes for large ratings, the superficial curve's pass for any ratings; nothing
    when warm-ups are off."""
    from types import SimpleNamespace

    from evalcore.pointwise.agreement.passes import COMPILED_FROM
    from evalcore.ui import warmup

    started = []
    for name in ("_warm_figures", "_warm_agreement", "_warm_winrate", "_warm_superficial",
                 "_warm_length_controlled"):
        monkeypatch.setattr(warmup, name, lambda name=name: started.append(name))
    monkeypatch.setenv("EVALCORE_WARMUP", "1")
    for tables, expected in (({"comparisons": 10}, ["_warm_figures", "_warm_winrate", "_warm_length_controlled"]),
                             ({"ratings": COMPILED_FROM}, ["_warm_figures", "_warm_agreement", "_warm_superficial"]),
                             ({"ratings": COMPILED_FROM - 1}, ["_warm_figures", "_warm_superficial"]),
                             ({}, ["_warm_figures"])):
        started.clear()
        monkeypatch.setattr(warmup, "current_info", lambda tables=tables: SimpleNamespace(tables=tables))
        warmup.warm_up_at_start()
        assert started == expected, tables
    started.clear()
    monkeypatch.setenv("EVALCORE_WARMUP", "0")
    warmup.warm_up_at_start()
    assert started == []
    assert "ui.warm_up_at_start()" in (ROOT / "app.py").read_text()
