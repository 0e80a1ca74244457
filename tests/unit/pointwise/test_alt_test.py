"""The Alt-Test (Calderon, Reichart & Dror 2025): hand-computed cases, the BY procedure, simulations, exclusions,
messages, categories and numbers; and, where a copy of the authors' repository is present, their 52 results."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control, ttest_1samp

from evalcore.errors import DataError
from evalcore.pointwise.alt_test import (ALT_TEST_COLUMNS, ANNOTATOR_MEASURE, MEASURES, alt_test, alt_test_verdicts,
                                         min_passing_epsilon, winning_rate_curve)
from tests.helpers import ROOT

MIRROR = Path("/work/.mirror/nitaytech+AltTest/repo")


def _table(labels: dict[str, list], judges: dict[str, list], *, nominal: bool = True) -> pd.DataFrame:
    """A ratings table from label lists per rater (None: not rated); text labels as nominal categories."""
    rows = [(i, r, kind, v) for kind, raters in (("human", labels), ("judge", judges))
            for r, vals in raters.items() for i, v in enumerate(vals) if v is not None]
    df = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "v"])
    if nominal:
        return df.assign(score=np.nan, category=df["v"].astype(str), scale="nominal").drop(columns="v")
    return df.assign(score=df["v"].astype(float)).drop(columns="v")


def _row(res: pd.DataFrame, measure: str, judge: str = "j", annotator: str | None = None) -> pd.Series:
    sel = (res["measure"] == measure) & (res["judge"] == judge)
    if annotator is not None:
        sel &= res["annotator"] == annotator
    (i,) = np.flatnonzero(sel.to_numpy())
    return res.iloc[i]


def _by_step_up(p, q):
    """Benjamini & Yekutieli (2001), Theorem 1.3: reject the k smallest p-values, k the largest i with
    p_(i) <= i q / (m sum_{j<=m} 1/j). Written from the paper, as the reference of the library call."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    thresholds = np.arange(1, m + 1) * q / (m * np.sum(1.0 / np.arange(1, m + 1)))
    below = np.flatnonzero(p[order] <= thresholds)
    out = np.zeros(m, dtype=bool)
    if len(below):
        out[order[:below[-1] + 1]] = True
    return out


# Four items, three annotators, one judge; by hand (S = agreement with the two remaining annotators):
#   leave out a: item 0 tie (0.5, 0.5), 1 judge wins (0 vs 1), 2 a wins (1 vs 0), 3 tie -> d = [0, -1, 1, 0]
#   leave out b: ties on 0, 1, 3; b wins 2 -> d = [0, 0, 1, 0]
#   leave out c: judge wins 0, ties 1 and 3, c wins 2 -> d = [-1, 0, 1, 0]
TINY = {"a": ["x", "x", "y", "x"], "b": ["x", "y", "y", "x"], "c": ["y", "y", "y", "x"]}
TINY_JUDGE = {"j": ["x", "y", "x", "x"]}
TINY_D = {"a": [0, -1, 1, 0], "b": [0, 0, 1, 0], "c": [-1, 0, 1, 0]}
TINY_WF = {"a": 0.75, "b": 0.75, "c": 0.75}
TINY_WH = {"a": 0.75, "b": 1.0, "c": 0.75}


def test_hand_computed_accuracy_case():
    res = alt_test(_table(TINY, TINY_JUDGE), epsilon=0.2, min_items=4, annotators=True, n_boot=0)
    assert list(res.columns) == ["judge", *ALT_TEST_COLUMNS]
    for a, d in TINY_D.items():
        r = _row(res, ANNOTATOR_MEASURE, annotator=a)
        assert r["judge_win_share"] == TINY_WF[a] and r["annotator_win_share"] == TINY_WH[a]
        assert r["estimate"] == pytest.approx(np.mean(d))
        assert r["std_error"] == pytest.approx(np.std(d, ddof=1) / 2)
        assert r["p_value"] == pytest.approx(ttest_1samp(d, 0.2, alternative="less").pvalue)
        assert r["n"] == 4 and r["n_units"] == 4 and not r["rejected"]
    assert _row(res, "advantage_probability")["estimate"] == 0.75
    wr = _row(res, "winning_rate")
    assert wr["estimate"] == 0 and not wr["passed"] and wr["n_annotators"] == 3 and wr["scoring"] == "accuracy"
    # Ten copies of the items: the same shares, smaller p-values; at epsilon 0.6 all three are rejected.
    tiled = alt_test(_table({k: v * 10 for k, v in TINY.items()}, {"j": TINY_JUDGE["j"] * 10}), epsilon=0.6,
                     annotators=True, n_boot=0)
    assert _row(tiled, "advantage_probability")["estimate"] == 0.75
    assert _row(tiled, "winning_rate")["estimate"] == 1.0 and bool(_row(tiled, "winning_rate")["passed"])
    for a, d in TINY_D.items():
        assert _row(tiled, ANNOTATOR_MEASURE, annotator=a)["p_value"] == pytest.approx(
            ttest_1samp(d * 10, 0.6, alternative="less").pvalue)


def test_hand_computed_neg_rmse_case_with_ties():
    # a=1, b=2, c=4 on one item and judge 2: leave out a -> S(a) = -sqrt((1 + 9) / 2), S(j) = -sqrt((0 + 4) / 2):
    # judge wins; leave out b -> S(b) = -sqrt((1 + 4) / 2) = S(j): a tie; leave out c -> S(c) = -sqrt((9 + 4) / 2),
    # S(j) = -sqrt((1 + 0) / 2): judge wins. Twelve copies of the item, with a second pattern where c wins.
    labels = {"a": [1, 1] * 6, "b": [2, 3] * 6, "c": [4, 2] * 6}
    judge = {"j": [2, 5] * 6}
    # second pattern: a=1, b=3, c=2, judge 5: leave out a -> S(a)=-sqrt((4+1)/2), S(j)=-sqrt((4+9)/2): a wins;
    # leave out b -> S(b)=-sqrt((4+1)/2), S(j)=-sqrt((16+9)/2): b wins; leave out c -> S(c)=-sqrt((1+1)/2),
    # S(j)=-sqrt((16+4)/2): c wins.
    res = alt_test(_table(labels, judge, nominal=False), epsilon=0.2, min_items=12, annotators=True, n_boot=0)
    assert _row(res, "winning_rate")["scoring"] == "neg_rmse"
    expect_wf = {"a": 0.5, "b": 0.5, "c": 0.5}
    expect_wh = {"a": 0.5, "b": 1.0, "c": 0.5}
    for a in labels:
        r = _row(res, ANNOTATOR_MEASURE, annotator=a)
        assert (r["judge_win_share"], r["annotator_win_share"]) == (expect_wf[a], expect_wh[a])
    assert _row(res, "advantage_probability")["estimate"] == 0.5


def test_by_equals_the_step_up_procedure_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    for m in (1, 2, 3, 7, 13, 40):
        for _ in range(50):
            p = rng.beta(0.3, 2.0, m)
            ref = _by_step_up(p, 0.05)
            assert (false_discovery_control(p, method="by") <= 0.05).tolist() == ref.tolist()
            assert multipletests(p, alpha=0.05, method="fdr_by")[0].tolist() == ref.tolist()
    # And alt_test rejects exactly the annotators the step-up rejects, on its own p-values.
    labels, judge = _simulated(n_items=120, n_annotators=9, noise_annotators=0.3, noise_judge=0.3, seed=4)
    res = alt_test(_table(labels, judge), epsilon=0.15, annotators=True, n_boot=0)
    ann = res[res["measure"] == ANNOTATOR_MEASURE]
    assert ann["rejected"].astype(bool).tolist() == _by_step_up(ann["p_value"], 0.05).tolist()
    assert 0 < ann["rejected"].sum() < len(ann)  # a mixed case: the procedure decides


def _simulated(*, n_items: int, n_annotators: int, noise_annotators: float, noise_judge: float, seed: int,
               n_categories: int = 4) -> tuple[dict, dict]:
    """The authors' simulation (their notebook's Simulation section, the paper's appendix C): Dirichlet(1)
    priors; a gold label per item; every rater draws the gold label with probability 1 - noise, else a label
    from the priors."""
    rng = np.random.default_rng(seed)
    priors = rng.dirichlet(np.ones(n_categories))
    gold = rng.choice(n_categories, size=n_items, p=priors)

    def draw(noise: float) -> list[str]:
        probs = np.tile(priors * noise, (n_items, 1))
        probs[np.arange(n_items), gold] += 1 - noise
        u = rng.random(n_items)[:, None]
        return [f"c{k}" for k in (u > np.cumsum(probs, axis=1)).sum(axis=1)]

    return {f"ann{a}": draw(noise_annotators) for a in range(n_annotators)}, {"j": draw(noise_judge)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_judge_as_good_as_a_human_passes_and_a_judge_at_chance_fails(seed):
    labels, good = _simulated(n_items=400, n_annotators=3, noise_annotators=0.3, noise_judge=0.3, seed=seed)
    _, chance = _simulated(n_items=400, n_annotators=3, noise_annotators=0.3, noise_judge=1.0, seed=seed)
    res = alt_test(_table(labels, {"good": good["j"], "chance": chance["j"]}), epsilon=0.1, n_boot=200, seed=seed)
    assert bool(_row(res, "winning_rate", "good")["passed"])
    assert not bool(_row(res, "winning_rate", "chance")["passed"])
    assert _row(res, "winning_rate", "chance")["estimate"] == 0
    assert res["judge"].iloc[0] == "good"  # ranked by the advantage probability
    rho = _row(res, "advantage_probability", "good")
    assert rho["ci_low"] < rho["estimate"] < rho["ci_high"] and 0.8 < rho["estimate"] < 1.0


def test_min_passing_epsilon_is_exact():
    labels, judge = _simulated(n_items=150, n_annotators=6, noise_annotators=0.3, noise_judge=0.4, seed=11)
    table = _table(labels, judge)
    res = alt_test(table, epsilon=0.1, annotators=True, n_boot=0)
    eps = _row(res, "min_passing_epsilon")["estimate"]
    assert 0 < eps < 1
    assert not bool(_row(alt_test(table, epsilon=eps - 1e-7, n_boot=0), "winning_rate")["passed"])
    assert bool(_row(alt_test(table, epsilon=eps + 1e-7, n_boot=0), "winning_rate")["passed"])
    # The curve: the winning rate at each epsilon equals a new run's.
    curve = winning_rate_curve(res, [0.0, 0.05, eps + 1e-7, 0.3])
    for e, w in zip(curve["epsilon"], curve["winning_rate"]):
        assert w == _row(alt_test(table, epsilon=float(e), n_boot=0), "winning_rate")["estimate"]
    # A judge far better than the annotators (the gold labels) passes from epsilon 0.
    labels, gold = _simulated(n_items=150, n_annotators=4, noise_annotators=0.6, noise_judge=0.0, seed=11)
    better = alt_test(_table(labels, gold), n_boot=0, epsilon=0.1)
    assert _row(better, "min_passing_epsilon")["estimate"] == 0.0


def test_min_passing_epsilon_by_bisection_on_p_values():
    rng = np.random.default_rng(2)
    d = [rng.choice([-1, 0, 1], size=n, p=[0.2, 0.5, 0.3]) for n in (40, 60, 80, 35, 90)]
    mean = [x.mean() for x in d]
    se = [x.std(ddof=1) / math.sqrt(len(x)) for x in d]
    n = [len(x) for x in d]

    def passes(eps):
        p = [ttest_1samp(x, eps, alternative="less").pvalue for x in d]
        return _by_step_up(p, 0.05).mean() >= 0.5

    lo, hi = -1.0, 2.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    assert min_passing_epsilon(mean, se, n) == pytest.approx(hi, abs=1e-9)


def test_exclusions_are_reported():
    labels, judge = _simulated(n_items=60, n_annotators=3, noise_annotators=0.2, noise_judge=0.2, seed=4)
    labels["late"] = [None] * 50 + labels["ann0"][50:]  # ten items: too few
    labels["ann1"] = labels["ann1"][:55] + [None] * 5  # items 55-59 now have ann0 and ann2
    labels["ann2"] = labels["ann2"][:57] + [None] * 3  # items 57-59: ann0 (and late) only
    judge["j"] = judge["j"][:59] + [None]  # the judge did not rate item 59
    res = alt_test(_table(labels, judge), annotators=True, n_boot=0)
    note = _row(res, "winning_rate")["note"]
    assert "annotator(s) with fewer than 30 item(s) left out: late (9)" in note
    assert "1 item(s) the judge did not rate left out" in note
    late = _row(res, ANNOTATOR_MEASURE, annotator="late")
    assert np.isnan(late["estimate"]) and pd.isna(late["rejected"]) and "fewer than min_items=30" in late["note"]
    assert _row(res, "winning_rate")["n_annotators"] == 3
    # An item with one annotator only.
    labels2 = {k: list(v) for k, v in labels.items()}
    for k in ("ann1", "ann2", "late"):
        labels2[k][0] = None
    res2 = alt_test(_table(labels2, judge), n_boot=0)
    assert "1 item(s) with fewer than 2 annotators left out" in _row(res2, "winning_rate")["note"]


def test_messages():
    labels, judge = _simulated(n_items=40, n_annotators=3, noise_annotators=0.2, noise_judge=0.2, seed=6)
    table = _table(labels, judge)
    with pytest.raises(DataError, match="has no judge's ratings.*rater_kind 'judge'"):
        alt_test(table[table["rater_kind"] == "human"])
    with pytest.raises(DataError, match="at least 2 human annotators, and the table has 1 \\(ann0\\)"):
        alt_test(table[table["rater"].isin(["ann0", "j"])])
    with pytest.raises(DataError) as err:
        alt_test(table, min_items=50)
    assert "too few items per annotator" in str(err.value) and "ann0: 40, ann1: 40, ann2: 40" in str(err.value)
    assert "lower min_items (--min-items" in str(err.value)
    mixed = table.assign(score=table["category"].where(table["rater"] != "ann0", "3"))
    with pytest.raises(DataError, match="mixed labels: the score column holds text"):
        alt_test(mixed.drop(columns=["category", "scale"]))
    with pytest.raises(DataError, match="neg_rmse needs numbers.*'overall' is nominal"):
        alt_test(table, scoring="neg_rmse")
    with pytest.raises(DataError, match="epsilon must be a number from 0 to 1.*0.2 for experts"):
        alt_test(table, epsilon=1.5)
    with pytest.raises(DataError, match="unknown scoring"):
        alt_test(table, scoring="f1")
    with pytest.raises(DataError, match="min_annotators must be a whole number, 2 or more"):
        alt_test(table, min_annotators=1)
    with pytest.raises(DataError, match="nope is not a judge"):
        alt_test(table, judges=["nope"])
    with pytest.raises(DataError, match="cannot group by 'language'"):
        alt_test(table, by="language")


def test_criteria_pooled_or_grouped():
    labels, judge = _simulated(n_items=80, n_annotators=3, noise_annotators=0.2, noise_judge=0.25, seed=8)
    nominal = _table(labels, judge).assign(criterion="stance")
    nums = {k: [int(v[1:]) + 1 for v in vals] for k, vals in labels.items()}
    numeric = _table(nums, {"j": [int(v[1:]) + 1 for v in judge["j"]]}, nominal=False).assign(
        criterion="quality", scale="ordinal")
    both = pd.concat([nominal, numeric], ignore_index=True)
    with pytest.raises(DataError, match="scored differently.*by=\\['criterion'\\]"):
        alt_test(both)
    per = alt_test(both, by="criterion", n_boot=0)
    assert per.groupby("criterion")["scoring"].first().to_dict() == {"quality": "neg_rmse", "stance": "accuracy"}
    alone = alt_test(nominal, n_boot=0)
    assert _row(per[per["criterion"] == "stance"], "advantage_probability")["estimate"] == \
        _row(alone, "advantage_probability")["estimate"]
    # accuracy on every criterion pools them: units are item x criterion, n counts the items
    pooled = alt_test(both, scoring="accuracy", n_boot=0)
    wr = _row(pooled, "winning_rate")
    assert (wr["n"], wr["n_units"]) == (80, 160)


def test_categories_equal_their_codes_and_by_groups_equal_subsets():
    labels, judge = _simulated(n_items=90, n_annotators=4, noise_annotators=0.3, noise_judge=0.3, seed=9)
    text = _table(labels, judge)
    codes = text.assign(score=text["category"].str[1:].astype(float)).drop(columns="category")
    a = alt_test(text, scoring="accuracy", n_boot=100, seed=1)
    b = alt_test(codes.drop(columns="scale"), scoring="accuracy", n_boot=100, seed=1)
    pd.testing.assert_frame_equal(a, b)
    text["language"] = np.where(text["item_id"] < 45, "de", "fr")
    grouped = alt_test(text, by="language", min_items=20, n_boot=0)
    for lang, part in grouped.groupby("language"):
        alone = alt_test(text[text["language"] == lang], min_items=20, n_boot=0)
        assert part.drop(columns="language").reset_index(drop=True).equals(alone)


def test_first_sample_column_arguments_and_seed():
    labels, judge = _simulated(n_items=50, n_annotators=3, noise_annotators=0.3, noise_judge=0.3, seed=10)
    nums = {k: [int(v[1:]) for v in vals] for k, vals in labels.items()}
    table = _table(nums, {"j": [int(v[1:]) for v in judge["j"]]}, nominal=False).assign(sample=0)
    noisy = table[table["rater"] == "j"].assign(sample=1, score=0.0)
    res = alt_test(table, n_boot=50)
    assert res.equals(alt_test(pd.concat([table, noisy], ignore_index=True), n_boot=50))
    mine = table.rename(columns={"item_id": "doc", "rater": "who", "score": "grade"})
    assert res.equals(alt_test(mine, item="doc", rater="who", score="grade", n_boot=50))
    assert res.equals(alt_test(table, n_boot=50, seed=0))
    one, two = (alt_test(table, n_boot=50, seed=np.random.default_rng(7)) for _ in range(2))
    assert one.equals(two) and np.isfinite(one["ci_low"]).any()


def test_verdict_sentences():
    labels, judge = _simulated(n_items=200, n_annotators=4, noise_annotators=0.3, noise_judge=0.3, seed=12)
    res = alt_test(_table(labels, judge), epsilon=0.15, n_boot=200)
    (sentence,) = alt_test_verdicts(res)
    wr, ap = _row(res, "winning_rate"), _row(res, "advantage_probability")
    k = int(round(wr["estimate"] * 4))
    assert sentence.startswith(f"j {'PASSES' if wr['passed'] else 'FAILS'} at epsilon 0.15: it beats {k} of 4 "
                               "annotators")
    assert f"advantage probability {ap['estimate']:.2f} [{ap['ci_low']:.2f}, {ap['ci_high']:.2f}]" in sentence
    assert list(res["measure"]) == list(MEASURES)


def _bench():
    spec = importlib.util.spec_from_file_location("bench_alt_test", ROOT / "benchmarks" / "bench_alt_test.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.skipif(not MIRROR.exists(), reason=f"no copy of the authors' nitaytech/AltTest repository at {MIRROR}")
def test_the_authors_52_results_are_reproduced():
    bench = _bench()
    results, _ = bench.compare(bench.Repo(MIRROR), interval=False)
    assert len(results) == 52
    assert bench.check(results) == []
