"""The humans' label (strict majority, evalcore.labels), unparsed judge outputs, and judge accuracy
(evalcore.pairwise.accuracy): checked against plain-Python computations from the raw PandaLM and LLMBar
files, the PandaLM authors' published accuracies, and a numpy bootstrap drawn from the same stream."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evalcore.data import ingest
from evalcore.errors import DataError
from evalcore.labels import NO_MAJORITY, strict_majority
from evalcore.pairwise.accuracy import judge_accuracy
from evalcore.pairwise.pairs import pair_data
from evalcore.stats.bootstrap import cell_rng
from tests.helpers import LLMBAR, PANDALM, needs_datasets

TOL = 1e-12


# --------------------------------------------------------------------------- the strict majority


def _strict_majority_python(row) -> int:
    total = sum(row)
    for k, c in enumerate(row):
        if 2 * c > total:
            return k
    return -1


def test_strict_majority_equals_a_plain_python_count():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=(2000, 3))
    expect = [_strict_majority_python(list(r)) for r in counts]
    assert strict_majority(counts).tolist() == expect
    # the definition of the agreement module: the category with more than half of the unit's ratings
    c = counts.astype(float)
    has = c.max(axis=-1) > c.sum(axis=-1) / 2
    np.testing.assert_array_equal(strict_majority(c), np.where(has, c.argmax(axis=-1), NO_MAJORITY))
    # leading axes and weights
    assert strict_majority(counts.reshape(20, 100, 3)).shape == (20, 100)
    assert strict_majority([[0.4, 0.6]]).tolist() == [1] and strict_majority([[0.5, 0.5]]).tolist() == [-1]


def _rows(spec) -> pd.DataFrame:
    df = pd.DataFrame(spec, columns=["item_id", "rater", "rater_kind", "system_a", "system_b", "winner"])
    df["swapped"] = df.groupby(["item_id", "rater"]).cumcount() % 2 == 1
    return df


def test_pair_data_takes_the_humans_strict_majority():
    df = _rows([
        ("i1", "j", "judge", "A", "B", "a"),
        ("i1", "h1", "human", "A", "B", "b"), ("i1", "h2", "human", "A", "B", "tie"),
        ("i1", "h3", "human", "A", "B", "tie"),  # (b, tie, tie): a tie, not B (the vote sum said B)
        ("i2", "j", "judge", "A", "B", "a"),
        ("i2", "h1", "human", "A", "B", "a"), ("i2", "h2", "human", "A", "B", "tie"),  # (a, tie): no majority
        ("i3", "j", "judge", "A", "B", "b"),
        ("i3", "h1", "human", "A", "B", "b"), ("i3", "h2", "human", "B", "A", "a"),  # both B (one reversed)
        ("i3", "h3", "human", "A", "B", "a"),
        # i4: h1 judged both orders and says A twice: one voice, not two; h2 says B: no majority
        ("i4", "j", "judge", "A", "B", "a"),
        ("i4", "h1", "human", "A", "B", "a"), ("i4", "h1", "human", "B", "A", "b"),
        ("i4", "h2", "human", "A", "B", "b"),
    ])
    pair = pair_data(df, "A", "B")
    np.testing.assert_array_equal(pair.human, [-1, -1, 1, -1])
    assert pair.human_ties == 3 and pair.n_human == 1 and pair.p_human == 0.0
    rnd = pair_data(df, "A", "B", ties="random", seed=3)
    assert rnd.human[2] == 1 and set(rnd.human[[0, 1, 3]]) <= {0, 1}


def test_invalid_rows_are_missing_verdicts_for_win_rates():
    df = _rows([
        ("i1", "j", "judge", "A", "B", "a"), ("i1", "h", "human", "A", "B", "a"),
        ("i2", "j", "judge", "A", "B", None), ("i2", "h", "human", "A", "B", "b"),
        ("i3", "j", "judge", "A", "B", "b"), ("i3", "h", "human", "A", "B", "b"),
    ])
    df["invalid"] = [False, False, True, False, False, False]
    pair = pair_data(df, "A", "B")
    np.testing.assert_array_equal(pair.verdicts[:, 0], [0, -1, 1])
    same = pair_data(df[~df["invalid"]].drop(columns="invalid"), "A", "B")
    np.testing.assert_array_equal(pair.verdicts, same.verdicts)
    np.testing.assert_array_equal(pair.human, same.human)
    assert pair.judge_ties == (0,)  # an unparsed output is not a tie


def test_seed_must_be_a_whole_number_not_negative():
    df = _rows([("i1", "j", "judge", "A", "B", "a"), ("i1", "h", "human", "A", "B", "a")])
    with pytest.raises(DataError, match="the seed must be a whole number, 0 or more"):
        pair_data(df, "A", "B", seed=-1)


# --------------------------------------------------------------------------- PandaLM


def _pandalm_raw():
    test = json.loads((PANDALM / "testset-v1.json").read_text())
    gpt = {x["idx"]: x["gpt_result"] for x in json.loads((PANDALM / "gpt-3.5-turbo-testset-v1.json").read_text())}
    plm = {x["idx"]: x["pandalm_result"] for x in json.loads((PANDALM / "pandalm-7b-testset-v1.json").read_text())}
    return test, gpt, plm


def _majority3(labels: list[int]) -> int | None:
    """The label of at least 2 of the 3 annotators (0 tie, 1 response1, 2 response2), or None."""
    top, n = Counter(labels).most_common(1)[0]
    return top if 2 * n > len(labels) else None


@pytest.fixture(scope="module")
def pandalm_frame():
    if not (PANDALM / "testset-v1.json").exists():
        pytest.skip(f"the PandaLM test set is not at {PANDALM}")
    return ingest.load(PANDALM, preset="pandalm").frame


@needs_datasets
def test_pandalm_p_human_equals_the_strict_majority_computation(pandalm_frame):
    test, _, _ = _pandalm_raw()
    per_key: dict[str, list[int]] = {}
    moved = 0
    for x in test:
        labels = [x[f"annotator{i}"] for i in (1, 2, 3)]
        major = _majority3(labels)
        per_key.setdefault(x["cmp_key"], []).append(major)
        vote_sum = labels.count(1) - labels.count(2)
        old = 1 if vote_sum > 0 else 2 if vote_sum < 0 else 0
        moved += major != old
    # the authors' label distribution (their README) is the strict majority's; the vote sum moved 20 items
    assert Counter(m for ms in per_key.values() for m in ms) == {0: 105, 1: 422, 2: 472}
    assert moved == 20
    biggest = 0.0
    for key, majors in per_key.items():
        a, b = key.split("_")
        pair = pair_data(pandalm_frame, a, b)
        expect = majors.count(1) / (majors.count(1) + majors.count(2))
        assert pair.p_human == pytest.approx(expect, abs=TOL), key
        assert pair.n_human == majors.count(1) + majors.count(2) and pair.human_ties == majors.count(0)
        biggest = max(biggest, abs(pair.p_human - expect))
    assert biggest < TOL


@needs_datasets
def test_pandalm_accuracy_reproduces_the_authors_figures(pandalm_frame):
    test, gpt, plm = _pandalm_raw()
    major = {str(x["idx"]): _majority3([x[f"annotator{i}"] for i in (1, 2, 3)]) for x in test}
    gpt_code = {str(k): {"1": 1, "2": 2, "Tie": 0}.get(str(v)) for k, v in gpt.items()}
    right_gpt = sum(gpt_code[i] == m for i, m in major.items())
    right_plm = sum(plm[int(i)] == m for i, m in major.items())
    assert (right_gpt, right_plm) == (697, 667)

    wrong = judge_accuracy(pandalm_frame, invalid="wrong", n_boot=200, seed=1).set_index("judge")
    drop = judge_accuracy(pandalm_frame, invalid="drop", n_boot=200, seed=1).set_index("judge")
    g, p = wrong.loc["gpt-3.5-turbo"], wrong.loc["pandalm-7b"]
    assert g["estimate"] == pytest.approx(697 / 999, abs=TOL) and round(g["estimate"], 3) == 0.698  # authors: 69.8%
    assert (g["n"], g["n_units"], g["n_invalid"]) == (999, 999, 25)
    assert g["note"] == "25 unparsed output(s) counted as wrong"
    assert p["estimate"] == pytest.approx(667 / 999, abs=TOL) and round(p["estimate"], 3) == 0.668  # about 67%
    gd = drop.loc["gpt-3.5-turbo"]
    assert gd["estimate"] == pytest.approx(697 / 974, abs=TOL) and round(gd["estimate"], 3) == 0.716
    assert (gd["n"], gd["n_units"], gd["n_invalid"]) == (974, 974, 25)
    assert gd["note"] == "25 unparsed output(s) left out"
    assert drop.loc["pandalm-7b", "estimate"] == p["estimate"] and drop.loc["pandalm-7b", "n_invalid"] == 0
    for row in (g, p, gd):
        assert row["ci_low"] < row["estimate"] < row["ci_high"] and row["measure"] == "accuracy"
        assert not row["flagged"]


@needs_datasets
def test_pandalm_accuracy_by_task_adds_up(pandalm_frame):
    res = judge_accuracy(pandalm_frame, invalid="wrong", by=["task"], n_boot=0)
    gpt = res[res["judge"] == "gpt-3.5-turbo"]
    assert gpt["n"].sum() == 999 and gpt["n_invalid"].sum() == 25
    assert (gpt["estimate"] * gpt["n"]).sum() == pytest.approx(697, abs=1e-9)
    assert list(res.columns[:3]) == ["task", "judge", "measure"]
    assert res["task"].is_monotonic_increasing


# --------------------------------------------------------------------------- LLMBar: the authors' correct_both


@needs_datasets
def test_llmbar_accuracy_is_the_authors_correct_both():
    """Gold labels are never ties, and a judge's two orders that disagree sum to a tie: the three-class accuracy
    of the swap-and-sum verdict is the share of items right in both orders, the authors' correct_both."""
    frame = ingest.load(LLMBAR, preset="llmbar").frame
    res = judge_accuracy(frame, by=["subset"], n_boot=0)
    checked = 0
    for stats_path in sorted(LLMBAR.rglob("statistics.json")):
        parts = stats_path.relative_to(LLMBAR).parts
        ev = parts.index("evaluators")
        subset, judge = "/".join(parts[:ev]), f"{parts[ev + 1]}/{parts[ev + 2]}"
        stats = json.loads(stats_path.read_text())
        row = res[(res["subset"] == subset) & (res["judge"] == judge)]
        assert len(row) == 1, (subset, judge)
        right, n = (int(v) for v in stats["correct_both"].split("=")[0].split("/"))  # "92 / 100 = 92.0%"
        assert row["estimate"].iloc[0] == pytest.approx(right / n, abs=TOL), (subset, judge)
        assert row["n"].iloc[0] == n
        checked += 1
    assert checked == 20


# --------------------------------------------------------------------------- the function itself


def _table(n_items: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Items in sorted order, three humans with a clear majority, one judge right with probability 0.7."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(np.array(["a", "b", "tie"]), n_items)
    right = rng.random(n_items) < 0.7
    other = {"a": "b", "b": "tie", "tie": "a"}
    rows = []
    for i in range(n_items):
        item = f"i{i:04d}"
        for h in ("h1", "h2"):
            rows.append((item, h, "human", truth[i]))
        rows.append((item, "h3", "human", other[truth[i]]))
        rows.append((item, "j", "judge", truth[i] if right[i] else other[truth[i]]))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "winner"]), right


def test_interval_is_a_numpy_item_bootstrap_from_the_same_stream():
    df, right = _table(300, seed=4)
    res = judge_accuracy(df, n_boot=500, seed=9, level=0.9)
    (row,) = res.to_dict("records")
    assert row["estimate"] == pytest.approx(right.mean(), abs=TOL) and row["n"] == 300
    rng = cell_rng(9, ("j",))
    idx = rng.integers(0, 300, size=(500, 300))
    boot = right[idx].mean(axis=1)
    assert row["ci_low"] == pytest.approx(np.quantile(boot, 0.05), abs=TOL)
    assert row["ci_high"] == pytest.approx(np.quantile(boot, 0.95), abs=TOL)
    again = judge_accuracy(df, n_boot=500, seed=9, level=0.9)
    pd.testing.assert_frame_equal(res, again)


def test_orientation_pairs_per_item_and_missing_majorities():
    df = pd.DataFrame([
        # item 1 compared as (X, Y) by the humans and as (Y, X) by the judge: its 'b' is X, the humans' 'a'
        ("1", "X", "Y", "h1", "human", "a"), ("1", "X", "Y", "h2", "human", "a"),
        ("1", "Y", "X", "j", "judge", "b"),
        # item 1 again, another pair on the same prompt: a second unit of the same item
        ("1", "X", "Z", "h1", "human", "tie"), ("1", "X", "Z", "h2", "human", "tie"),
        ("1", "X", "Z", "j", "judge", "a"),
        # item 2: humans split (a, b): no strict majority, left out and counted
        ("2", "X", "Y", "h1", "human", "a"), ("2", "X", "Y", "h2", "human", "b"),
        ("2", "X", "Y", "j", "judge", "a"),
    ], columns=["item_id", "system_a", "system_b", "rater", "rater_kind", "winner"])
    (row,) = judge_accuracy(df, n_boot=0).to_dict("records")
    assert row["estimate"] == 0.5 and row["n"] == 1 and row["n_units"] == 2
    assert row["note"].startswith("1 item(s) without a strict human majority left out")


def test_judge_choice_and_errors():
    df, _ = _table(20, seed=1)
    both = pd.concat([df, df[df["rater"] == "j"].assign(rater="k")], ignore_index=True)
    assert judge_accuracy(both, n_boot=0)["judge"].tolist() == ["j", "k"]
    assert judge_accuracy(both, judges=["k"], n_boot=0)["judge"].tolist() == ["k"]
    with pytest.raises(DataError, match="gpt-5 is not a judge in this table"):
        judge_accuracy(both, judges=["gpt-5"])
    with pytest.raises(DataError, match="unknown handling of unparsed outputs 'maybe'"):
        judge_accuracy(df, invalid="maybe")
    with pytest.raises(DataError, match="cannot group by 'language'"):
        judge_accuracy(df, by=["language"])
    with pytest.raises(DataError, match="has no 'winner' column"):
        judge_accuracy(df.drop(columns="winner"))
    with pytest.raises(DataError, match="the seed must be"):
        judge_accuracy(df, seed=-2)
    only_humans = df.copy()
    only_humans.loc[only_humans["rater"] == "j", "winner"] = None
    only_humans["invalid"] = only_humans["rater"] == "j"
    (row,) = judge_accuracy(only_humans, n_boot=10).to_dict("records")
    assert math.isnan(row["estimate"]) and row["n_invalid"] == 20 and row["n"] == 0
    assert row["note"].startswith("not defined: no item has both a human label and a verdict of the judge")
    (row,) = judge_accuracy(only_humans, invalid="wrong", n_boot=0).to_dict("records")
    assert row["estimate"] == 0.0 and row["n"] == 20


def test_invalid_wrong_equals_llmbar_correct_both_with_unparsed_outputs():
    """An item with one unparsed order is right in both orders for nobody: LLMBar's evaluate.py
    counts it wrong in ``correct_both``; --invalid wrong now does too (fixtures in LLMBar's format)."""
    import json

    from evalcore.data.ingest import load
    from tests.helpers import ROOT

    files = sorted((ROOT / "tests" / "data" / "llmbar_unparsed").glob("**/evaluators/*/*/result.json"))
    assert files
    for path in files:
        hits, items = (int(v) for v in json.loads((path.parent / "statistics.json").read_text())["correct_both"]
                       .split("=")[0].split("/"))
        res = judge_accuracy(load([path], preset="llmbar").frame, invalid="wrong", n_boot=0).iloc[0]
        assert (res["estimate"], res["n"]) == (hits / items, items), path
        drop = judge_accuracy(load([path], preset="llmbar").frame, invalid="drop", n_boot=0).iloc[0]
        assert drop["n"] < items  # leaving unparsed items out is another measure
