"""`evalcore agreement` as papers report it: system- and input-level correlation, the fully
annotated units, the judge leaderboard and the rater-pair matrix, on HANNA and the sample."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from evalcore.cli import main
from evalcore.data.ingest import load
from tests.helpers import HANNA, SAMPLE, needs_datasets


def _json(capsys, *args) -> list[dict]:
    assert main(["agreement", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@needs_datasets
def test_system_level_records_match_a_hand_aggregation(capsys):
    recs = _json(capsys, HANNA, "--preset", "hanna", "--by", "criterion", "--judge", "ChatGPT/prompt1",
                 "--boot", "50")
    got = next(r for r in recs if r["measure"] == "kendall_tau_system" and r["criterion"] == "Coherence")
    frame = load(HANNA, preset="hanna").frame
    coh = frame[frame["criterion"] == "Coherence"]
    human = coh[coh["rater_kind"] == "human"].groupby("item_id")["score"].mean()
    judge = coh[coh["rater"] == "ChatGPT/prompt1"].set_index("item_id")["score"]
    system = coh.groupby("item_id")["system"].first()
    per = pd.DataFrame({"h": human, "j": judge, "s": system}).dropna().groupby("s").mean()
    assert got["estimate"] == pytest.approx(kendalltau(per["h"], per["j"]).statistic, abs=1e-12)
    assert got["n_systems"] == 11 and got["n"] == 96  # inputs resampled
    assert got["ci_low"] <= got["estimate"] <= got["ci_high"]
    assert {r["measure"] for r in recs if r["judge"] == "ChatGPT/prompt1"} >= {
        "kendall_tau_system", "spearman_rho_system", "pearson_r_system", "kendall_tau_input", "spearman_rho_input",
        "pearson_r_input", "kendall_tau"}


def test_fully_annotated_units_match_krippendorff(capsys):
    recs = _json(capsys, SAMPLE, "--by", "criterion", "--boot", "0", "--min-raters", "3", "--max-raters", "3")
    got = {r["criterion"]: r for r in recs if r["judge"] is None and r["measure"] == "krippendorff_alpha_nominal"}
    frame = load(SAMPLE).frame
    humans = frame[frame["rater_kind"] == "human"]
    for crit, rec in got.items():
        rows = humans[humans["criterion"] == crit]
        sizes = rows.groupby("item_id")["rater"].transform("size")
        full = rows[sizes == 3]
        mat = full.pivot_table(index="rater", columns="item_id", values="score", aggfunc="first")
        ref = krippendorff.alpha(reliability_data=mat.to_numpy(float), level_of_measurement="nominal")
        assert rec["estimate"] == pytest.approx(ref, abs=1e-12)
        assert "unit(s) kept" in rec["note"]
    assert main(["agreement", str(SAMPLE), "--min-raters", "5", "--max-raters", "2"]) == 1
    assert "evalcore: error:" in capsys.readouterr().err


def test_text_output_says_how_many_units_were_kept(capsys):
    assert main(["agreement", str(SAMPLE), "--by", "criterion", "--boot", "0", "--min-raters", "3"]) == 0
    out = capsys.readouterr().out
    assert "unit(s) kept" in out and "dropped" in out.splitlines()[1]


def test_leaderboard_and_pairs(capsys):
    board = _json(capsys, SAMPLE, "--by", "criterion", "--boot", "100", "--leaderboard")
    assert {r["measure"] for r in board} == {"kendall_tau"}  # the sample names no systems
    for crit in {r["criterion"] for r in board}:
        rows = sorted((r for r in board if r["criterion"] == crit), key=lambda r: r["rank"])
        assert rows[0]["diff_to_best"] == 0 and not rows[0]["worse_than_best"]
        assert all(r["worse_than_best"] == (r["diff_ci_high"] < 0) for r in rows)
    pairs = _json(capsys, SAMPLE, "--by", "criterion", "--boot", "0", "--pairs")
    rec = next(r for r in pairs if r["kind"] == "judge-human" and r["measure"] == "cohen_kappa_quadratic")
    frame = load(SAMPLE).frame
    frame = frame[(frame["criterion"] == rec["criterion"]) & (frame["sample"].fillna(0) == 0)]
    a = frame[frame["rater"] == rec["rater_a"]].groupby("item_id")["score"].first()
    b = frame[frame["rater"] == rec["rater_b"]].groupby("item_id")["score"].first()
    both = pd.concat([a, b], axis=1, join="inner")
    labels = np.union1d(frame["score"].dropna().unique(), [])
    ref = cohen_kappa_score(both.iloc[:, 0], both.iloc[:, 1], weights="quadratic", labels=labels)
    assert rec["n"] == len(both) and rec["estimate"] == pytest.approx(ref, abs=1e-12)
