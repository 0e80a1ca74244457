"""`evalcore agreement`: JSON records, --boot 0, grouping, and a ratings-only refusal."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from tests.helpers import ROOT

PAGE = str(ROOT / "app_pages" / "1_Agreement.py")


def test_cli_agreement_records_and_boot_zero(capsys):
    sample = ROOT / "sample_data" / "ratings_multilingual.csv"
    assert main(["agreement", str(sample), "--by", "criterion", "--judge", "gpt-4/single-call", "--boot", "0",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["judge"] for r in recs} == {None, "gpt-4/single-call"}
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in recs)
    # The test fields: the gap is the one test (one-sided, "less"); without resamples nothing is tested.
    assert {r["test"] for r in recs if r["measure"] == "pairwise_agreement_gap"} == {"less"}
    assert {r["test"] for r in recs if r["measure"] != "pairwise_agreement_gap"} == {None}
    assert all(r["p_value"] is None and r["q_value"] is None and not r["flagged"] and not r["opposite"] for r in recs)
    names = {r["measure"] for r in recs}
    assert {"percent_agreement", "full_agreement", "fleiss_kappa", "gwet_ac1", "pabak", "krippendorff_alpha_nominal",
            "krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "cohen_kappa", "cohen_kappa_quadratic",
            "weighted_f1", "kendall_tau", "spearman_rho"} <= names
    assert main(["agreement", str(sample), "--by", "none", "--boot", "50", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("agreement of ratings_multilingual.csv, grouped by nothing; 50 bootstrap resamples (seed 3)")
    assert "LOW = flagged: the judge agrees with humans less than humans agree with each other" in out
    assert "Benjamini-Hochberg q <= 0.05 across all 2 tests of this table" in out
    assert main(["agreement", str(sample), "--boot", "50", "--json"]) == 0
    gap = [r for r in json.loads(capsys.readouterr().out) if r["measure"] == "pairwise_agreement_gap"]
    assert all(r["q_value"] >= r["p_value"] if r["p_value"] is not None else
               r["note"] == "the resamples do not vary, so not tested" for r in gap)
    assert any(r["flagged"] for r in gap) and all(r["q_value"] <= 0.05 for r in gap if r["flagged"])
    assert main(["agreement", str(ROOT / "sample_data" / "comparisons_pairwise.csv")]) == 1
    assert "needs pointwise ratings" in capsys.readouterr().err


@pytest.mark.slow
def test_point_estimates_in_a_fresh_process_start_neither_numba_nor_scipy(tmp_path):
    """`agreement --boot 0` on 250,000 ratings (above the compiled passes' threshold) counts with numpy in a
    fresh process: loading numba would cost more than it saves below LOAD_FROM rows (benchmarks/RESULTS.md)."""
    import subprocess
    import sys

    import pandas as pd

    sample = pd.read_csv(ROOT / "sample_data" / "ratings_multilingual.csv")
    copies = [sample.assign(item_id=sample["item_id"].astype(str) + f"-{k}") for k in range(5)]
    path = tmp_path / "big.csv"
    pd.concat(copies, ignore_index=True).to_csv(path, index=False)
    code = ("import io, sys, json, contextlib\nfrom evalcore.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    status = main(['agreement', sys.argv[1], '--boot', '0', '--json'])\n"
            "heavy = ('scipy', 'numba', 'statsmodels', 'pymc', 'sklearn', 'streamlit', 'plotly')\n"
            "print(status, len(json.loads(out.getvalue())) > 100, sorted(m for m in heavy if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0 True []"


def test_text_output_is_a_summary_within_120_columns(capsys):
    """The text output was once 2,000 lines of up to 304 characters. By default it is the verdict and one
    line per group and judge (humans' agreement, the judge's, the flagged gap) within 120 columns, counts as
    integers; --all prints every measure."""
    import re

    sample = ROOT / "sample_data" / "ratings_multilingual.csv"
    assert main(["agreement", str(sample), "--boot", "100"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 120 and len(lines) < 130
    assert lines[3].startswith("gpt-4/per-criterion: its agreement with each human is on average")
    row = next(line for line in lines if line.split()[:3] == ["Bengali", "OCQ", "gpt-4/per-criterion"])
    assert row.split()[-2:] == ["LOW", "120"]  # flagged, and n a whole number
    assert "--all" in out and not re.search(r"\b\d+\.0\b", out)
    assert main(["agreement", str(sample), "--boot", "100", "--all"]) == 0
    full = capsys.readouterr().out
    assert "krippendorff_alpha_interval" in full and len(full.splitlines()) > 2000


def _text_labels(path):
    """A file with a nominal criterion of text labels beside a numeric one (the scale and category columns)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(4)
    rows = []
    for i in range(60):
        s, q = rng.choice(["pro", "con", "neutral"]), int(rng.integers(1, 6))
        for r, kind in (("h1", "human"), ("h2", "human"), ("h3", "human"), ("bot", "judge")):
            label = s if rng.random() < 0.75 else rng.choice(["pro", "con", "neutral"])
            rows.append((f"i{i}", r, kind, "stance", "nominal", None, label))
            rows.append((f"i{i}", r, kind, "fluency", "ordinal", float(np.clip(q + rng.integers(-1, 2), 1, 5)), None))
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "scale", "score", "category"])
    if str(path).endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return frame


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_cli_agreement_on_text_labels(tmp_path, capsys, suffix):
    from evalcore.pointwise.agreement.measures import ORDER_MEASURES
    from evalcore.pointwise.agreement.table import agreement

    path = tmp_path / f"labels.{suffix}"
    frame = _text_labels(path)
    assert main(["agreement", str(path), "--boot", "0", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    stance = [r for r in recs if r["criterion"] == "stance"]
    assert stance and not {r["measure"] for r in stance} & ORDER_MEASURES  # no rows of n/a
    assert {r["measure"] for r in recs if r["criterion"] == "fluency"} >= ORDER_MEASURES
    expected = agreement(frame, by=["criterion"], n_boot=0)
    got = {(r["criterion"], r["judge"], r["measure"]): r["estimate"] for r in recs}
    for row in expected.itertuples():
        assert got[(row.criterion, row.judge, row.measure)] == pytest.approx(row.estimate, nan_ok=True)
    # The text output says once which measures apply, and that a grouping without criterion gets one.
    assert main(["agreement", str(path), "--boot", "0", "--by", "none"]) == 0
    out = capsys.readouterr().out
    assert out.count("stance is nominal (categories without an order)") == 1
    assert "Grouped by criterion too" in out and "grouped by criterion;" in out
    # --confusion: the judge against the humans' majority, as JSON and as text.
    assert main(["agreement", str(path), "--confusion", "--json"]) == 0
    cm = json.loads(capsys.readouterr().out)
    labels = [r["human_category"] for r in cm if r["criterion"] == "stance" and r["judge_category"] == "con"]
    assert labels == ["con", "neutral", "pro"]
    assert main(["agreement", str(path), "--confusion"]) == 0
    out = capsys.readouterr().out
    assert "judge=bot, criterion=stance" in out and "humans" in out
