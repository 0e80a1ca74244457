"""``evalcore position`` end to end: LLMBar verdicts, and probabilities with saved and applied calibrations."""

from __future__ import annotations

import json

import pandas as pd

from evalcore.cli import main
from tests.helpers import LLMBAR, needs_datasets
from tests.unit.pairwise.test_position import simulated

FIELDS = {"judge", "method", "measure", "estimate", "ci_low", "ci_high", "n", "note"}


def _records(capsys, argv) -> list[dict]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@needs_datasets
def test_llmbar_json_records(capsys):
    files = [str(LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json"),
             str(LLMBAR / "Adversarial/Neighbor/evaluators/GPT-4/Vanilla_NoRules/result.json")]
    recs = _records(capsys, ["position", *files, "--preset", "llmbar", "--by", "subset", "--boot", "100", "--json"])
    assert FIELDS | {"subset"} <= set(recs[0])
    pick = {(r["subset"], r["method"], r["measure"]): r for r in recs}
    # LLMBar's statistics.json: Natural 92/100 right in the original order, 97/100 the same in both orders
    assert pick[("Natural", "none", "accuracy_original_order")]["estimate"] == 0.92
    assert pick[("Natural", "none", "position_consistency")]["estimate"] == 0.97
    assert pick[("Adversarial/Neighbor", "none", "accuracy_both_orders")]["estimate"] == 79 / 134
    for method in ("pride", "noa", "noa_released"):
        r = pick[("Natural", method, "not_available")]
        assert r["estimate"] is None and r["note"].startswith("not_available") and "prob_a" in r["note"]


@needs_datasets
def test_llmbar_text_table(capsys):
    path = str(LLMBAR / "Natural/evaluators/ChatGPT/Vanilla_NoRules/result.json")
    assert main(["position", path, "--preset", "llmbar", "--calibrate", "none", "--boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "position_consistency" in out and "first_position_preference" in out


def test_save_then_apply_calibration(tmp_path, capsys):
    fit_file, new_file, cal = tmp_path / "fit.csv", tmp_path / "new.csv", tmp_path / "cal.json"
    simulated(300, position=0.4, id_=0.3, seed=1).to_csv(fit_file, index=False)
    simulated(200, position=0.4, id_=0.3, seed=2, item_prefix="n").to_csv(new_file, index=False)
    common = ["--preset", "none", "--table", "comparisons", "--boot", "50", "--json"]
    fitted = _records(capsys, ["position", str(fit_file), *common, "--save-calibration", str(cal)])
    saved = json.loads(cal.read_text())
    assert sorted(c["method"] for c in saved["calibrations"]) == ["noa", "noa_released", "pride"]
    assert {r["method"] for r in fitted} == {"none", "pride", "noa", "noa_released"}
    # What was just fitted (and saved) is said to be fitted, not "loaded from a saved calibration"
    calibrated = [r for r in fitted if r["method"] != "none"]
    assert all("fitted on" in r["note"] and "loaded" not in r["note"] for r in calibrated)
    from evalcore.data.ingest import load as _load
    from evalcore.pairwise.position import position_report as _report

    same = _report(_load(fit_file, table="comparisons").frame, n_boot=50)
    assert (same["estimate"].fillna(-1).to_numpy() == pd.DataFrame(fitted)["estimate"].fillna(-1).to_numpy()).all()
    applied = _records(capsys, ["position", str(new_file), *common, "--apply-calibration", str(cal)])
    assert {r["method"] for r in applied} == {"none", "pride", "noa", "noa_released"}
    assert all("loaded from a saved calibration" in r["note"] for r in applied if r["method"] != "none")
    # the same calibrations, applied through the library, give the same numbers
    from evalcore.data.ingest import load
    from evalcore.pairwise.position import load_calibrations, position_report

    lib = position_report(load(new_file, table="comparisons").frame, calibrations=load_calibrations(cal), n_boot=50)
    cli = pd.DataFrame(applied)
    assert (lib["estimate"].fillna(-1).to_numpy() == cli["estimate"].fillna(-1).to_numpy()).all()


@needs_datasets
def test_saving_without_probabilities_is_an_error(tmp_path, capsys):
    path = str(LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json")
    assert main(["position", path, "--preset", "llmbar", "--save-calibration", str(tmp_path / "c.json")]) == 1
    assert "prob_a" in capsys.readouterr().err


def test_unknown_method_is_refused(capsys):
    try:
        main(["position", "x.csv", "--calibrate", "magic"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "magic" in capsys.readouterr().err


FIXTURES = "tests/data/llmbar_unparsed"


def test_invalid_wrong_reproduces_llmbar_statistics(capsys):
    from tests.helpers import ROOT

    recs = _records(capsys, ["position", str(ROOT / FIXTURES), "--preset", "llmbar", "--by", "subset",
                             "--calibrate", "none", "--invalid", "wrong", "--boot", "0", "--json"])
    pick = {(r["subset"], r["measure"]): r for r in recs}
    for subset in ("Natural", "Adversarial/Neighbor"):
        st = json.loads((ROOT / FIXTURES / subset / "evaluators/Judge/Vanilla_NoRules/statistics.json").read_text())
        for key, measure in (("correct_False", "accuracy_original_order"), ("correct_True", "accuracy_swapped_order"),
                             ("correct_both", "accuracy_both_orders"), ("equal", "position_consistency")):
            hits, items = (int(x) for x in st[key].split(" = ")[0].split(" / "))
            assert pick[(subset, measure)]["estimate"] == hits / items and pick[(subset, measure)]["n"] == items
    # each subset counts its own unparsed outputs
    assert "5 unparsed output(s) counted as wrong" in pick[("Natural", "position_consistency")]["note"]
    assert "3 unparsed output(s) counted as wrong" in pick[("Adversarial/Neighbor", "position_consistency")]["note"]
    default = _records(capsys, ["position", str(ROOT / FIXTURES), "--preset", "llmbar", "--calibrate", "none",
                                "--boot", "0", "--json"])
    assert next(r for r in default if r["measure"] == "position_consistency")["note"].count("8 unparsed output(s) "
                                                                                           "left out") == 1


def test_json_has_the_documented_fields_and_the_text_summarises_what_is_not_available(capsys):
    from tests.helpers import ROOT

    recs = _records(capsys, ["position", str(ROOT / FIXTURES), "--preset", "llmbar", "--by", "subset", "--boot", "0",
                             "--json"])
    assert {"opposite", "test", "p_value", "q_value", "flagged"} <= set(recs[0])
    assert sum(r["measure"] == "not_available" for r in recs) == 6  # 3 methods x 2 subsets, all kept in JSON
    assert main(["position", str(ROOT / FIXTURES), "--preset", "llmbar", "--by", "subset", "--boot", "0"]) == 0
    out = capsys.readouterr().out
    assert " not_available " not in out  # no table row per judge, group and method
    assert out.count("pride, noa, noa_released for Judge/Vanilla_NoRules (2 groups): no P('A')") == 1
