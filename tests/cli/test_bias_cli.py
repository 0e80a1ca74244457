"""`evalcore bias`: JSON records, the text report, and a ratings-only refusal."""

from __future__ import annotations

import json

import pandas as pd

from evalcore.cli import main
from tests.helpers import ROOT, SAMPLE


def test_cli_bias_json_and_text(capsys):
    assert main(["bias", str(SAMPLE), "--by", "language", "--boot", "100", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    frame = pd.DataFrame(recs)
    assert list(frame.columns[:4]) == ["section", "judge", "criterion", "language"]
    assert {"measure", "estimate", "ci_low", "ci_high", "n", "flagged"} <= set(frame.columns)
    assert frame["language"].nunique() == 10 and frame["flagged"].any()
    assert main(["bias", str(SAMPLE), "--boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "flagged result(s)" in out and "what to do:" in out and "Judge one criterion per call" in out
    assert main(["bias", str(ROOT / "sample_data" / "comparisons_pairwise.csv")]) == 1
    assert "needs pointwise ratings" in capsys.readouterr().err
