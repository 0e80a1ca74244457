"""`evalcore agreement`: JSON records, --boot 0, grouping, and a ratings-only refusal."""

from __future__ import annotations

import json

from evalcore.cli import main
from tests.helpers import ROOT

PAGE = str(ROOT / "pages" / "1_Agreement.py")


def test_cli_agreement_records_and_boot_zero(capsys):
    sample = ROOT / "sample_data" / "ratings_multilingual.csv"
    assert main(["agreement", str(sample), "--by", "criterion", "--judge", "gpt-4/single-call", "--boot", "0",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["judge"] for r in recs} == {None, "gpt-4/single-call"}
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in recs)
    names = {r["measure"] for r in recs}
    assert {"percent_agreement", "full_agreement", "fleiss_kappa", "gwet_ac1", "pabak", "krippendorff_alpha_nominal",
            "krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "cohen_kappa", "cohen_kappa_quadratic",
            "weighted_f1", "kendall_tau", "spearman_rho"} <= names
    assert main(["agreement", str(sample), "--by", "none", "--boot", "50", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("agreement of ratings_multilingual.csv, grouped by nothing; 50 bootstrap resamples (seed 3)")
    assert main(["agreement", str(ROOT / "sample_data" / "comparisons_pairwise.csv")]) == 1
    assert "needs pointwise ratings" in capsys.readouterr().err
