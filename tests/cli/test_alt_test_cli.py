"""`evalcore alt-test`: JSON records in the result contract, the verdict sentences, text labels from a file,
the per-annotator table, and the messages."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.cli import main
from evalcore.pointwise.alt_test import ALT_TEST_COLUMNS, alt_test
from tests.helpers import SAMPLE, SAMPLE_PAIRS


def test_sample_records_equal_the_library_and_the_text_states_the_verdicts(capsys):
    assert main(["alt-test", str(SAMPLE), "--boot", "100", "--seed", "2", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert list(recs[0]) == ["judge", *ALT_TEST_COLUMNS]
    assert {r["measure"] for r in recs} == {"winning_rate", "advantage_probability", "min_passing_epsilon"}
    mine = alt_test(evalcore.read(SAMPLE), n_boot=100, seed=2)
    assert [r["judge"] for r in recs] == mine["judge"].tolist()
    assert np.allclose([r["estimate"] for r in recs], mine["estimate"], rtol=0, atol=0)
    rho = [r for r in recs if r["measure"] == "advantage_probability"]
    assert rho[0]["estimate"] >= rho[1]["estimate"] and all(r["ci_low"] < r["estimate"] < r["ci_high"] for r in rho)
    assert all(r["scoring"] == "neg_rmse" and r["epsilon"] == 0.2 for r in recs)

    assert main(["alt-test", str(SAMPLE), "--boot", "100", "--seed", "2", "--epsilon", "0.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Alt-Test of ratings_multilingual.csv (Calderon, Reichart & Dror 2025)")
    at01 = alt_test(evalcore.read(SAMPLE), n_boot=100, seed=2, epsilon=0.1)
    for judge in at01["judge"].unique():
        wr = at01[(at01["judge"] == judge) & (at01["measure"] == "winning_rate")].iloc[0]
        k = int(round(wr["estimate"] * wr["n_annotators"]))
        said = f"{judge} {'PASSES' if wr['passed'] else 'FAILS'} at epsilon 0.1: it beats {k} of {wr['n_annotators']}"
        assert said in " ".join(out.split())


def test_by_criterion_and_per_annotator_rows(capsys):
    assert main(["alt-test", str(SAMPLE), "--by", "criterion", "--judge", "gpt-4/single-call", "--boot", "0",
                 "--annotators", "--min-items", "10", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["criterion"] for r in recs} == {"LA", "OCQ", "TQ", "PC", "H"}
    ann = [r for r in recs if r["measure"] == "annotator_advantage"]
    assert ann and all(r["annotator"] and r["judge"] == "gpt-4/single-call" for r in ann)
    tested = [r for r in ann if r["p_value"] is not None]
    assert all(r["rejected"] in (True, False) and r["judge_win_share"] is not None for r in tested)
    assert all(r["ci_low"] is None for r in recs if r["measure"] == "advantage_probability")  # --boot 0


@pytest.fixture
def text_labels(tmp_path):
    """A CSV of text labels: three annotators and two judges, one close to the truth and one at chance."""
    rng = np.random.default_rng(4)
    labels = np.array(["yes", "no", "maybe"])
    truth = rng.integers(0, 3, 150)
    rows = []
    for rater, kind, acc in (("ann1", "human", 0.8), ("ann2", "human", 0.8), ("ann3", "human", 0.8),
                             ("gpt-4o", "judge", 0.85), ("coin-llm", "judge", 0.0)):
        keep = rng.random(150) < acc
        drawn = np.where(keep, truth, rng.integers(0, 3, 150))
        rows += [(f"i{i}", rater, kind, labels[d]) for i, d in enumerate(drawn)]
    path = tmp_path / "stance.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "score"]).to_csv(path, index=False)
    return path


def test_text_labels_from_a_file(text_labels, capsys):
    assert main(["alt-test", str(text_labels), "--epsilon", "0.15", "--boot", "200", "--annotators"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Scoring accuracy, epsilon 0.15" in out
    assert "gpt-4o PASSES at epsilon 0.15: it beats 3 of 3 annotators (winning rate 1.00)" in out
    assert "coin-llm FAILS at epsilon 0.15: it beats 0 of 3 annotators (winning rate 0.00, below 0.5)" in out
    assert out.index("gpt-4o PASSES") < out.index("coin-llm FAILS")  # ranked by the advantage probability
    assert "judge annotator n n_units judge_win_share annotator_win_share estimate" in out
    same = alt_test(evalcore.read(text_labels), epsilon=0.15, n_boot=200)
    rho = same[(same["judge"] == "gpt-4o") & (same["measure"] == "advantage_probability")].iloc[0]
    assert f"advantage probability {rho['estimate']:.2f} [{rho['ci_low']:.2f}, {rho['ci_high']:.2f}]" in out


def test_messages(text_labels, capsys):
    assert main(["alt-test", str(text_labels), "--scoring", "neg_rmse"]) == 1
    assert "neg_rmse needs numbers with distances, and criterion 'overall' is nominal" in capsys.readouterr().err
    assert main(["alt-test", str(text_labels), "--min-items", "500"]) == 1
    err = capsys.readouterr().err
    assert "too few items per annotator for the Alt-Test" in err and "ann1: 150, ann2: 150, ann3: 150" in err
    assert "--min-items" in err
    assert main(["alt-test", str(text_labels), "--epsilon", "2"]) == 1
    assert "epsilon must be a number from 0 to 1" in capsys.readouterr().err
    assert main(["alt-test", str(SAMPLE_PAIRS)]) == 1
    assert "needs pointwise ratings" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["alt-test", str(text_labels), "--scoring", "f1"])
    assert stop.value.code == 2
    assert "invalid choice: 'f1'" in capsys.readouterr().err
