"""Position bias: LLMBar's own statistics reproduced, calibration on simulated judges, references for kappa and ICC."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalcore.errors import DataError
from evalcore.pairwise import position as pos
from evalcore.pairwise.calibraeval import LAMBDA_GRID
from tests.helpers import LLMBAR, ROOT, needs_datasets, row

COLUMNS = ["judge", "method", "measure", "estimate", "ci_low", "ci_high", "n", "test", "p_value", "q_value",
           "flagged", "opposite", "note"]


def simulated(n: int = 600, *, position: float = 0.8, id_: float = 0.4, seed: int = 0, judge: str = "j",
              item_prefix: str = "q", noise: float = 0.0) -> pd.DataFrame:
    """Gold and one judge with P("A") under s0, s1, s2: logits ``l + position + id``, ``l - position + id``,
    ``-l + position + id`` where ``l`` is the judge's content preference (a if positive, mostly right), plus
    independent normal noise of sd ``noise`` per prompt (a judge inconsistent across prompts)."""
    rng = np.random.default_rng(seed)
    a_better = rng.random(n) < 0.5
    lat = np.where(a_better, 1.5, -1.5) + rng.normal(0, 1.5, n)
    e = rng.normal(0, noise, (3, n)) if noise else np.zeros((3, n))
    p0, p1, p2 = (expit(lat + position + id_ + e[0]), expit(lat - position + id_ + e[1]),
                  expit(-lat + position + id_ + e[2]))
    p0, p1, p2 = (np.round(p, 4) for p in (p0, p1, p2))
    ids = [f"{item_prefix}{i}" for i in range(n)]
    gold = pd.DataFrame({"item_id": ids, "rater": "gold", "rater_kind": "human",
                         "winner": np.where(a_better, "a", "b"), "swapped": False})
    first = pd.DataFrame({"item_id": ids, "rater": judge, "rater_kind": "judge", "winner": np.where(p0 > 0.5, "a", "b"),
                          "swapped": False, "prob_a": p0, "prob_a_swap_position": p1, "prob_a_swap_id": p2})
    second = pd.DataFrame({"item_id": ids, "rater": judge, "rater_kind": "judge",
                           "winner": np.where(p2 < 0.5, "a", "b"), "swapped": True})
    return pd.concat([gold, first, second], ignore_index=True)


def _estimates(res: pd.DataFrame, method: str) -> pd.Series:
    return res[res.method == method].set_index("measure")["estimate"]


# --- LLMBar's own statistics -----------------------------------------------------------------------------------

def _count(text: str) -> tuple[int, int]:
    a, b = re.match(r"\s*(\d+) / (\d+)", text).groups()
    return int(a), int(b)


@needs_datasets
def test_llmbar_statistics_reproduced_exactly():
    from evalcore.data.ingest import load

    stats = sorted(LLMBAR.glob("**/evaluators/*/*/statistics.json"))
    assert len(stats) == 20  # GPT-4 and ChatGPT, Vanilla_NoRules and Rating_NoRules, five subsets
    frame = load(sorted(LLMBAR.glob("**/result.json")), preset="llmbar").frame
    res = pos.position_report(frame, by=["subset"], methods=["none"], n_boot=50)
    # LLMBar's "swap = True" winner is already mapped back to the original output numbering: correct_False is
    # the original order, correct_True the swapped one.
    keys = {"correct_False": "accuracy_original_order", "correct_True": "accuracy_swapped_order",
            "correct_both": "accuracy_both_orders", "equal": "position_consistency"}
    checked = 0
    for path in stats:
        parts = path.relative_to(LLMBAR).parts
        at = parts.index("evaluators")
        judge, subset = f"{parts[at + 1]}/{parts[at + 2]}", "/".join(parts[:at])
        st = json.loads(path.read_text())
        for key, measure in keys.items():
            hits, items = _count(st[key])
            r = row(res, measure, judge, subset=subset, method="none")
            assert r.estimate == hits / items and r.n == items, (judge, subset, key)
            assert r.ci_low <= r.estimate <= r.ci_high
            checked += 1
        avg = row(res, "accuracy_average", judge, subset=subset, method="none").estimate
        assert avg * 100 == pytest.approx(float(st["correct_average"].rstrip("%")), abs=1e-9)
    assert checked == 80
    gpt4 = row(res, "accuracy_original_order", "GPT-4/Vanilla_NoRules", subset="Natural", method="none")
    assert gpt4.estimate == 0.92 and row(res, "position_consistency", "GPT-4/Vanilla_NoRules", subset="Natural",
                                         method="none").estimate == 0.97


@needs_datasets
def test_llmbar_verdict_only_gives_not_available_calibrations():
    from evalcore.data.ingest import load

    frame = load([LLMBAR / "Natural/evaluators/GPT-4/Vanilla_NoRules/result.json"], preset="llmbar").frame
    res = pos.position_report(frame, n_boot=100)
    assert list(res.columns) == COLUMNS
    none = res[res.method == "none"]
    assert set(none.measure) == set(pos.MEASURES)
    assert none.set_index("measure").loc[["icc2k", "icc3k"], "note"].str.startswith("not_available").all()
    na = res[res.method != "none"]
    assert sorted(na.method) == ["noa", "noa_released", "pride"]
    assert (na.measure == "not_available").all() and na.note.str.contains("prob_a_swap_id").all()


# --- simulated judges --------------------------------------------------------------------------------------------

def test_calibration_restores_consistency_without_losing_accuracy():
    # position-1 pull 0.4 and "A" pull 0.3 (logits): 24% of the verdicts flip with the order
    res = pos.position_report(simulated(position=0.4, id_=0.3), n_boot=200, seed=1)
    none = _estimates(res, "none")
    assert none["position_consistency"] < 0.8 and none["first_position_preference"] > 0.6
    assert not res.note.str.contains("collapsed").any()
    assert row(res, "first_position_preference", "j", method="none").flagged
    for method in ("pride", "noa"):
        after = _estimates(res, method)
        assert after["position_consistency"] > none["position_consistency"] + 0.1, method
        assert after["position_consistency"] > 0.9, method
        assert after["fleiss_kappa"] > none["fleiss_kappa"] and after["icc2k"] > none["icc2k"], method
        assert after["accuracy_average"] >= none["accuracy_average"] - 0.01, method
        assert after["accuracy_both_orders"] > none["accuracy_both_orders"], method
        assert abs(after["first_position_preference"] - 0.5) < 0.05, method
        assert after["rstd"] < none["rstd"], method
    released = _estimates(res, "noa_released")
    assert released["position_consistency"] > none["position_consistency"]


BIAS = {"strong": (0.8, 0.4), "moderate": (0.4, 0.3), "absent": (0.0, 0.0)}


@pytest.mark.parametrize("bias", list(BIAS))
def test_noa_with_lambda_chosen_without_labels_keeps_its_verdicts(bias):
    # at lambda 0.05, run to convergence, NOA took the strong judge's consistency from 0.47 to 0.01 and
    # its accuracy to 0.50 (the map collapsed to 1/2); lambda chosen on held-out items keeps a spread of verdicts
    position, id_ = BIAS[bias]
    res = pos.position_report(simulated(position=position, id_=id_), methods=["none", "noa"], n_boot=0)
    none, noa = _estimates(res, "none"), _estimates(res, "noa")
    assert "not_available" not in noa.index, res[res.method == "noa"].note.tolist()
    assert noa["position_consistency"] >= none["position_consistency"] - 0.01
    assert noa["position_consistency"] > 0.9
    assert noa["accuracy_average"] >= none["accuracy_average"] - 0.02 and noa["accuracy_average"] > 0.7
    assert res[res.method == "noa"].note.str.contains("chosen without labels on held-out items").all()
    cal = pos.fit_calibrations(simulated(position=position, id_=id_), methods=["noa"])[0]
    assert not cal.collapsed and cal.lam in LAMBDA_GRID and "held-out" in cal.selection


def test_a_collapsed_noa_fit_is_not_offered():
    # forced to the authors' lambda, the strong judge's fit collapses: it is not offered, the message blames the
    # position effect, and the uncalibrated numbers stand
    df = simulated(position=0.8, id_=0.4)
    res = pos.position_report(df, methods=["none", "pride", "noa"], lam=0.05, n_boot=0)
    assert _estimates(res, "pride")["position_consistency"] > 0.95
    noa = res[res.method == "noa"]
    assert noa.measure.tolist() == ["not_available"] and np.isnan(noa.estimate.item())
    assert "not offered" in noa.note.item() and "mostly a systematic position effect" in noa.note.item()
    alone = pos.position_report(df, methods=["none"], n_boot=0)
    pd.testing.assert_frame_equal(res[res.method == "none"].reset_index(drop=True), alone)
    cal = pos.fit_calibrations(df, methods=["noa"], lam=0.05)[0]
    assert cal.converged and cal.collapsed and cal.loss < 1e-3
    assert pos.fit_calibrations(df, methods=["noa"], lam=0.05, offered_only=True) == ()


def test_noa_on_a_judge_inconsistent_across_prompts_says_so():
    # no position effect, but P("A") varies from prompt to prompt: at lambda 0.05 the fit collapsed and the old
    # warning blamed "the position effect"
    df = simulated(position=0.0, id_=0.0, noise=1.0, seed=3)
    res = pos.position_report(df, methods=["none", "noa"], lam=0.05, n_boot=0)
    note = res[res.method == "noa"].note.item()
    assert "not offered" in note and "inconsistency from prompt to prompt, not a position preference" in note
    chosen = pos.position_report(df, methods=["none", "noa"], n_boot=0)
    noa = chosen[chosen.method == "noa"]
    if (noa.measure == "not_available").any():  # not offered at any lambda: then it says the same thing
        assert "inconsistency from prompt to prompt" in noa.note.item()
    else:
        assert _estimates(chosen, "noa")["position_consistency"] >= _estimates(chosen, "none")[
            "position_consistency"] - 0.05


def test_an_unbiased_judge_is_left_as_it_was():
    res = pos.position_report(simulated(position=0.0, id_=0.0, seed=2), n_boot=200, seed=1)
    none = _estimates(res, "none")
    assert none["position_consistency"] == 1.0
    assert not row(res, "first_position_preference", "j", method="none").flagged
    for method in ("pride", "noa", "noa_released"):
        after = _estimates(res, method)
        for measure in ("accuracy_original_order", "accuracy_swapped_order", "position_consistency"):
            assert after[measure] == pytest.approx(none[measure], abs=0.01), (method, measure)
    assert row(res, "icc2k", "j", method="pride").estimate == pytest.approx(none["icc2k"], abs=1e-6)


def test_the_same_resamples_serve_every_method_and_the_seed_fixes_everything():
    df = simulated(200)
    a = pos.position_report(df, n_boot=100, seed=3)
    b = pos.position_report(df, n_boot=100, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == COLUMNS
    assert set(a.method) == set(pos.METHODS) and set(a.measure) == set(pos.MEASURES)


def test_saved_calibration_applies_to_a_new_file_of_the_same_judge(tmp_path):
    fitted = pos.fit_calibrations(simulated(400, seed=4), methods=["pride", "noa", "noa_released"], seed=0)
    assert sorted(c.method for c in fitted) == ["noa", "noa_released", "pride"]
    path = pos.save_calibrations(tmp_path / "cal.json", fitted)
    loaded = pos.load_calibrations(path)
    assert loaded == fitted
    new = simulated(300, seed=5, item_prefix="new")
    res = pos.position_report(new, calibrations=loaded, n_boot=50)
    assert res[res.method == "noa"].note.str.contains("loaded from a saved calibration").all()
    # by hand: apply the loaded NOA map and count the consistent items
    probs = new.loc[new.prob_a.notna(), list(pos.PROB_COLUMNS)].to_numpy()
    c = pos.content_probabilities(probs, np.zeros(len(probs), bool), loaded[1])
    assert row(res, "position_consistency", "j", method="noa").estimate == pytest.approx(
        np.mean((c[:, 0] > 0.5) == (c[:, 1] > 0.5)))
    with pytest.raises(DataError, match="not a judge"):
        pos.position_report(new.replace({"rater": {"j": "other"}}), calibrations=loaded, n_boot=0)


def test_report_equals_the_fitted_calibrations():
    df = simulated(300, seed=6)
    fitted = pos.fit_calibrations(df, methods=["noa"], seed=7)
    a = pos.position_report(df, methods=["noa"], seed=7, n_boot=0)
    b = pos.position_report(df, methods=["noa"], calibrations=fitted, seed=7, n_boot=0)
    assert np.allclose(a.estimate, b.estimate, equal_nan=True)


def test_a_pair_named_the_other_way_round_is_the_swapped_order():
    df = pd.DataFrame({"item_id": ["1"] * 3 + ["2"] * 3, "system_a": ["x", "x", "y"] * 2,
                       "system_b": ["y", "y", "x"] * 2, "rater": ["gold", "j", "j"] * 2,
                       "rater_kind": ["human", "judge", "judge"] * 2,
                       "winner": ["a", "a", "b", "a", "a", "a"]})  # item 2: the judge picks whoever is first
    res = pos.position_report(df, methods=["none"], n_boot=0).set_index("measure")["estimate"]
    assert res["accuracy_original_order"] == 1.0 and res["accuracy_swapped_order"] == 0.5
    assert res["position_consistency"] == 0.5 and res["first_position_preference"] == 0.75


def test_groups_and_judges():
    df = pd.concat([simulated(200, seed=8), simulated(200, seed=9, judge="k", item_prefix="r")], ignore_index=True)
    df["subset"] = np.where(df.item_id.str[1:].astype(int) < 100, "s1", "s2")
    res = pos.position_report(df, by=["subset"], judges=["k"], methods=["none", "pride"], n_boot=50)
    assert set(res.judge) == {"k"} and set(res.subset) == {"s1", "s2"}
    assert row(res, "accuracy_original_order", "k", subset="s1", method="none").n == 100
    with pytest.raises(DataError, match="not a judge"):
        pos.position_report(df, judges=["zz"])
    with pytest.raises(DataError, match="unknown calibration"):
        pos.position_report(df, methods=["magic"])
    with pytest.raises(DataError, match="estimation share"):
        pos.position_report(df, estimation_share=0)
    with pytest.raises(DataError, match="no such column"):
        pos.position_report(df, by=["nope"])


# --- references: Fleiss' kappa (statsmodels) and ICC (pingouin) ----------------------------------------------

def test_fleiss_kappa_matches_statsmodels():
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    df = simulated(300, seed=10)
    res = pos.position_report(df, methods=["none"], n_boot=0)
    c = pos.content_probabilities(df.loc[df.prob_a.notna(), list(pos.PROB_COLUMNS)].to_numpy(), np.zeros(300, bool))
    table, _ = aggregate_raters((c > 0.5).astype(int))
    assert row(res, "fleiss_kappa", "j", method="none").estimate == pytest.approx(fleiss_kappa(table), abs=1e-12)
    # verdicts only: the two orders
    verdicts = df.drop(columns=list(pos.PROB_COLUMNS))
    res2 = pos.position_report(verdicts, methods=["none"], n_boot=0)
    table2, _ = aggregate_raters(np.column_stack([c[:, 0] > 0.5, c[:, 1] > 0.5]).astype(int))
    assert row(res2, "fleiss_kappa", "j", method="none").estimate == pytest.approx(fleiss_kappa(table2), abs=1e-12)


def test_weighted_kappa_is_kappa_of_the_resampled_items():
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(11)
    dec = rng.integers(0, 3, size=(50, 3))
    counts = rng.integers(0, 4, size=50)
    got = pos._fleiss(counts[None, :].astype(float), dec)[0]
    table, _ = aggregate_raters(np.repeat(dec, counts, axis=0), n_cat=3)
    assert got == pytest.approx(fleiss_kappa(table), abs=1e-12)


def _pingouin_icc(x: np.ndarray) -> dict:
    pg = pytest.importorskip("pingouin")
    long = pd.DataFrame(x).reset_index().melt(id_vars="index", var_name="rater", value_name="rating")
    icc = pg.intraclass_corr(data=long, targets="index", raters="rater", ratings="rating").set_index("Type")
    # pingouin 0.7 names them ICC(A,k) and ICC(C,k); earlier versions ICC2k and ICC3k
    two, three = ("ICC2k", "ICC3k") if "ICC2k" in icc.index else ("ICC(A,k)", "ICC(C,k)")
    return {"icc2k": icc.loc[two, "ICC"], "icc3k": icc.loc[three, "ICC"]}


def test_icc_matches_pingouin():
    df = simulated(250, seed=12)
    res = pos.position_report(df, n_boot=0, seed=0)
    probs = df.loc[df.prob_a.notna(), list(pos.PROB_COLUMNS)].to_numpy()
    for method, cal in (("none", None), *((c.method, c) for c in pos.fit_calibrations(df, seed=0))):
        ref = _pingouin_icc(pos.content_probabilities(probs, np.zeros(len(probs), bool), cal))
        for measure in ("icc2k", "icc3k"):
            assert row(res, measure, "j", method=method).estimate == pytest.approx(ref[measure], abs=1e-10)


def test_weighted_icc_is_icc_of_the_resampled_items():
    rng = np.random.default_rng(13)
    x = rng.random((40, 3))
    counts = rng.integers(0, 4, size=40)
    icc2, icc3 = pos._icc(counts[None, :].astype(float), x)
    ref = _pingouin_icc(np.repeat(x, counts, axis=0))
    assert icc2[0] == pytest.approx(ref["icc2k"], abs=1e-10) and icc3[0] == pytest.approx(ref["icc3k"], abs=1e-10)


def test_rstd_is_the_std_of_the_recalls():
    df = simulated(300, seed=14)
    res = pos.position_report(df, methods=["none"], n_boot=0)
    c = pos.content_probabilities(df.loc[df.prob_a.notna(), list(pos.PROB_COLUMNS)].to_numpy(), np.zeros(300, bool))
    gold = (df.loc[df.rater == "gold", "winner"] == "a").to_numpy()
    stds = [np.std([np.mean(c[gold, k] > 0.5), np.mean(c[~gold, k] < 0.5)]) for k in range(3)]
    assert row(res, "rstd", "j", method="none").estimate == pytest.approx(np.mean(stds), abs=1e-12)


def test_probabilities_on_a_row_naming_the_pair_the_other_way_round():
    df = simulated(100, position=0.4, id_=0.3, seed=15)
    df["system_a"], df["system_b"] = "x", "y"
    flipped = df.copy()
    judge_probs = flipped.prob_a.notna()
    # the judge's row names the pair (y, x): its s0 is the unit's s2 and its s2 the unit's s0
    flipped.loc[judge_probs, ["system_a", "system_b"]] = ["y", "x"]
    flipped.loc[judge_probs, "prob_a"] = df.loc[judge_probs, "prob_a_swap_id"]
    flipped.loc[judge_probs, "prob_a_swap_id"] = df.loc[judge_probs, "prob_a"]
    a = pos.position_report(df, methods=["none"], n_boot=0).set_index("measure")["estimate"]
    b = pos.position_report(flipped, methods=["none"], n_boot=0).set_index("measure")["estimate"]
    for measure in ("accuracy_original_order", "accuracy_swapped_order", "accuracy_both_orders",
                    "position_consistency", "first_position_preference"):
        assert a[measure] == b[measure], measure


def test_missing_order_and_partial_probabilities_are_noted():
    df = simulated(50, seed=16)
    only_first = df[~df.swapped]
    res = pos.position_report(only_first.drop(columns=list(pos.PROB_COLUMNS)), methods=["none"], n_boot=0)
    r = row(res, "accuracy_swapped_order", "j", method="none")
    assert np.isnan(r.estimate) and "no row with swapped true" in r.note
    part = df.copy()
    part.loc[part.index[part.prob_a.notna()][:5], "prob_a"] = np.nan
    res = pos.position_report(part, methods=["none"], n_boot=0)
    r = row(res, "position_consistency", "j", method="none")
    assert r.n == 45 and "5 item(s) without all three probabilities" in r.note


# --- unparsed judge outputs: LLMBar's count (--invalid wrong) ---------------------------------------------------

FIXTURES = ROOT / "tests" / "data" / "llmbar_unparsed"
LLMBAR_KEYS = {"correct_False": "accuracy_original_order", "correct_True": "accuracy_swapped_order",
               "correct_both": "accuracy_both_orders", "equal": "position_consistency"}


def _llmbar_mismatches(files, *, invalid: str) -> list[tuple]:
    """Every (file, statistic, ours, theirs) where the report differs from the file's statistics.json."""
    from evalcore.data.ingest import load

    out = []
    for path in files:
        st = json.loads((path.parent / "statistics.json").read_text())
        res = pos.position_report(load([path], preset="llmbar").frame, methods=["none"], n_boot=0,
                                  invalid=invalid).set_index("measure")
        for key, measure in LLMBAR_KEYS.items():
            hits, items = _count(st[key])
            if res.loc[measure, "estimate"] != hits / items or res.loc[measure, "n"] != items:
                out.append((str(path), key, res.loc[measure, "estimate"], hits / items))
        avg = float(st["correct_average"].rstrip("%"))
        if abs(res.loc["accuracy_average", "estimate"] * 100 - avg) > 1e-9:
            out.append((str(path), "correct_average", res.loc["accuracy_average", "estimate"] * 100, avg))
    return out


def test_invalid_wrong_counts_unparsed_outputs_as_llmbar_does():
    # fixtures in LLMBar's format: unparsed in one order, in both, in either order; statistics.json as their
    # evaluate.py counts (every item in the denominator; None never equals the label, and None == None)
    files = sorted(FIXTURES.glob("**/evaluators/*/*/result.json"))
    assert len(files) == 2
    assert _llmbar_mismatches(files, invalid="wrong") == []
    assert len(_llmbar_mismatches(files, invalid="drop")) > 0  # leaving them out is another measure
    with pytest.raises(DataError, match="unparsed"):
        pos.position_report(simulated(50), invalid="maybe")


def test_unparsed_outputs_are_counted_per_group():
    from evalcore.data.ingest import load

    frame = load([FIXTURES], preset="llmbar").frame
    for rule, words in (("drop", "left out"), ("wrong", "counted as wrong verdicts")):
        res = pos.position_report(frame, by=["subset"], methods=["none"], n_boot=0, invalid=rule)
        natural = row(res, "position_consistency", "Judge/Vanilla_NoRules", subset="Natural", method="none")
        neighbor = row(res, "position_consistency", "Judge/Vanilla_NoRules", subset="Adversarial/Neighbor",
                       method="none")
        assert f"5 unparsed output(s) {words}" in natural.note, natural.note
        assert f"3 unparsed output(s) {words}" in neighbor.note, neighbor.note
    drop = pos.position_report(frame, by=["subset"], methods=["none"], n_boot=0)
    r = row(drop, "accuracy_original_order", "Judge/Vanilla_NoRules", subset="Natural", method="none")
    assert r.n == 5 and r.estimate == 3 / 5  # three of the five parsed verdicts in the original order are right


def _real_llmbar_folders() -> list:
    """The shared LLMBar files, and a full checkout of LLMBar's Dataset/LLMBar named by EVALCORE_LLMBAR_FULL."""
    import os
    from pathlib import Path

    folders = [LLMBAR] if LLMBAR.exists() else []
    if os.environ.get("EVALCORE_LLMBAR_FULL"):
        folders.append(Path(os.environ["EVALCORE_LLMBAR_FULL"]))
    return folders


def test_every_real_llmbar_file_with_unparsed_outputs_matches_its_statistics():
    files = []
    for folder in _real_llmbar_folders():
        for path in sorted(folder.glob("**/evaluators/*/*/result.json")):
            text = path.read_text()
            if '"winner": null' in text and (path.parent / "statistics.json").exists():
                files.append(path)
    if not files:
        pytest.skip("no LLMBar result.json with unparsed outputs here: the shared copy holds none; set "
                    "EVALCORE_LLMBAR_FULL to a checkout of princeton-nlp/LLMBar's Dataset/LLMBar to run this")
    assert _llmbar_mismatches(files, invalid="wrong") == [], f"of {len(files)} files"
