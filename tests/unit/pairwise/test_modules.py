"""The layout of evalcore.pairwise: each public name is defined in the module that lists it, and importing
the win rates loads no sampler."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalcore.pairwise import (
    accuracy, bwrs, calibraeval, dawid_skene, pairs, position, pride, result, superficial, winrate,
)
from tests.helpers import ROOT


@pytest.mark.parametrize("module", [accuracy, bwrs, calibraeval, dawid_skene, pairs, position, pride, result,
                                    superficial, winrate],
                         ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_public_functions_and_classes_are_defined_where_they_are_listed(module):
    """A name in ``__all__`` is the module's own: no second import path through a re-export."""
    foreign = [name for name in module.__all__
               if getattr(getattr(module, name), "__module__", module.__name__) != module.__name__]
    assert not foreign, foreign


def test_estimate_calls_the_dawid_skene_winrate_names(monkeypatch):
    """Patching ``winrate.dawid_skene`` reaches estimate (the page test and the page benchmark count fits so)."""
    calls = []

    def fake(pair, **kw):
        calls.append(kw)
        raise RuntimeError("stop")

    monkeypatch.setattr(winrate, "dawid_skene", fake)
    import pandas as pd

    frame = pd.DataFrame({"item_id": ["1", "1"], "system_a": "x", "system_b": "y", "rater": ["j", "h"],
                          "rater_kind": ["judge", "human"], "winner": ["a", "a"]})
    try:
        winrate.estimate(frame, "x", "y", method="ds", draws=10, tune=10, chains=1)
    except RuntimeError:
        pass
    assert len(calls) == 1


def test_importing_winrate_loads_no_bayesian_library():
    code = ("import sys, evalcore.pairwise.winrate; "
            "print(sorted(m for m in ('pymc', 'pytensor', 'arviz', 'nutpie', 'numba', 'statsmodels') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
