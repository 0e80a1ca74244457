"""The layout of evalcore.pairwise: winrate re-exports its pieces, and importing it loads no sampler."""

from __future__ import annotations

import subprocess
import sys

from evalcore.pairwise import accuracy, bwrs, dawid_skene, pairs, result, winrate
from tests.helpers import ROOT


def test_winrate_re_exports_the_pieces_it_is_the_public_face_of():
    for name in winrate.__all__:
        assert hasattr(winrate, name), name
    for module in (pairs, result, accuracy, bwrs, dawid_skene):
        for name in module.__all__:
            assert getattr(winrate, name) is getattr(module, name), f"{module.__name__}.{name}"


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
