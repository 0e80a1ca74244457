"""`evalcore bias`: JSON records, the text report, and a ratings-only refusal."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalcore.cli import main
from tests.helpers import ROOT, SAMPLE


@pytest.mark.slow
def test_cli_bias_json_and_text(capsys):
    assert main(["bias", str(SAMPLE), "--by", "language", "--boot", "100", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    frame = pd.DataFrame(recs)
    assert list(frame.columns[:4]) == ["section", "judge", "criterion", "language"]
    assert {"measure", "estimate", "ci_low", "ci_high", "n", "test", "p_value", "q_value", "flagged", "opposite"} \
        <= set(frame.columns)
    assert list(frame.columns[-6:]) == ["test", "p_value", "q_value", "flagged", "opposite", "note"]
    assert frame["language"].nunique() == 10 and frame["flagged"].any()
    tested = frame[frame["p_value"].notna()]
    assert set(tested["test"]) <= {"greater", "less", "two-sided"} and tested["q_value"].notna().all()
    assert frame.loc[frame["test"].isna(), ["p_value", "q_value"]].isna().all().all()
    assert (frame.loc[frame["flagged"], "q_value"] <= 0.05).all() and not (frame["flagged"] & frame["opposite"]).any()
    assert main(["bias", str(SAMPLE), "--boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "flagged result(s)" in out and "what to do:" in out and "Judge one criterion per call" in " ".join(out.split())
    # The rule, stated; the flagged table shows p and q; results significant the other way are listed apart.
    assert "flagged = a bias: a bootstrap test in the direction that means harm" in out
    assert "Benjamini-Hochberg q <= 0.05 across all" in out and "p_value" in out and "q_value" in out
    assert "significant in the other direction (not a bias)" in out
    assert max(map(len, out.splitlines())) <= 120  # once: lines of up to 368 characters
    assert main(["bias", str(SAMPLE), "--boot", "100", "--alpha", "0.01", "--json"]) == 0
    strict = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert (strict.loc[strict["flagged"], "q_value"] <= 0.01).all()
    assert main(["bias", str(ROOT / "sample_data" / "comparisons_pairwise.csv")]) == 1
    assert "needs pointwise ratings" in capsys.readouterr().err


def test_cli_bias_on_text_labels(tmp_path, capsys):
    """A file of text labels: category shares in the JSON records (a ``category`` field), the label-prior shift
    flagged with its category, and what needs an order said once per section."""
    from tests.unit.pointwise.test_bias_categories import _table

    frame = _table(seed=7, n_items=120, judge_p=(0.05, 0.15, 0.8))
    frame["score"] = frame["category"].where(frame["criterion"] == "stance", frame["score"])
    path = tmp_path / "stance.csv"
    frame.drop(columns=["scale", "category"]).to_csv(path, index=False)
    assert main(["bias", str(path), "--boot", "200", "--json"]) == 0
    recs = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert list(recs.columns[:4]) == ["section", "judge", "criterion", "category"]
    shares = recs[recs["measure"] == "category_share_difference"]
    assert set(shares["category"]) == {"con", "neutral", "pro"} and set(shares["test"]) == {"two-sided"}
    assert shares.set_index(["judge", "category"]).loc[("gpt", "pro"), "flagged"]
    na = recs[(recs["measure"] == "not_available") & recs["criterion"].notna()]
    assert sorted(na["section"]) == ["familiarity", "score_distribution"] and set(na["criterion"]) == {"stance"}
    assert main(["bias", str(path), "--boot", "200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "score_distribution: 'stance' is nominal (categories without an order)" in out
    assert "category_share_difference" in out and "shifted label prior" in out
    # Numbers declared nominal are counted as categories: no mean shift on them.
    assert main(["bias", str(path), "--scale", "fluency=nominal", "--boot", "0", "--json"]) == 0
    recs = pd.DataFrame(json.loads(capsys.readouterr().out))
    fluency = recs[recs["criterion"] == "fluency"]
    assert "mean_shift" not in set(fluency["measure"]) and set(fluency["category"].dropna()) == {"1", "2", "3", "4", "5"}
