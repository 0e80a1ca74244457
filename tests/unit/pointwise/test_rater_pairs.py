"""The rater-pair matrix against sklearn's ``cohen_kappa_score`` and a direct count, pair by pair.

Weights are on the score values. Where a pair's scores lie on an evenly spaced integer scale (every
annotator pair; every pair of the sample) this is sklearn's linear and quadratic kappa with ``labels``
the whole scale. HANNA's judges give averaged scores (169 unevenly spaced values), where sklearn weights
label positions, so their weighted kappas are checked against sklearn's own computation (confusion
matrix, expected matrix) with value weights.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from evalcore.data.ingest import load
from evalcore.errors import DataError
from evalcore.pointwise.rater_pairs import MEASURES, NO_INTERVAL_NOTE, PAIR_COLUMNS, rater_pair_matrix
from tests.helpers import SAMPLE, needs_datasets
from tests.unit.hanna import hanna_frame


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return load(SAMPLE).frame


@pytest.fixture(scope="module")
def hanna() -> pd.DataFrame:
    return hanna_frame()


def _first(df: pd.DataFrame) -> pd.DataFrame:
    if "sample" in df.columns:
        df = df[df["sample"] == df.groupby(["item_id", "criterion", "rater"])["sample"].transform("min")]
    return df.drop_duplicates(["item_id", "criterion", "rater"])


def _value_weighted(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """sklearn's weighted kappa (confusion and expected matrices) with weights |v_i - v_j|^power on the values,
    for power 1 and 2 (one confusion matrix for both)."""
    labels, code = np.unique(np.concatenate([a, b]), return_inverse=True)  # sklearn takes no continuous labels
    O = confusion_matrix(code[:len(a)], code[len(a):], labels=np.arange(len(labels))).astype(float)
    E = np.outer(O.sum(axis=1), O.sum(axis=0)) / O.sum()
    d = np.abs(labels[:, None] - labels[None, :])
    return tuple(1.0 - (d ** power * O).sum() / (d ** power * E).sum() for power in (1, 2))


def _check_every_pair(df: pd.DataFrame, res: pd.DataFrame, by: list[str]) -> dict[str, int]:
    """Every row of ``res`` against sklearn on the two raters' common units; returns how many were checked.

    sklearn's checks of its arguments are skipped (they took most of the time: thousands of calls); its
    computation is the same."""
    with config_context(skip_parameter_validation=True, assume_finite=True):
        return _check_pairs(df, res, by)


def _check_pairs(df: pd.DataFrame, res: pd.DataFrame, by: list[str]) -> dict[str, int]:
    d = _first(df)
    wide = d.pivot_table(index=["item_id", "criterion", *by], columns="rater", values="score", aggfunc="first")
    kinds = d.drop_duplicates("rater").set_index("rater")["rater_kind"]
    est = res.set_index(["criterion", *by, "rater_a", "rater_b", "kind", "n", "measure"])["estimate"].unstack(
        "measure").reset_index()
    # Each group's units x raters as one array, split once (a lookup per pair took half of the time).
    groups = {k if isinstance(k, tuple) else (k,): g.to_numpy(float)
              for k, g in wide.groupby(level=["criterion", *by], sort=False)}
    column = {rater: j for j, rater in enumerate(wide.columns)}
    checked = {"exact_grid": 0, "value_weights": 0, "pairs": 0}
    for r in est.itertuples(index=False):
        sub = groups[tuple(getattr(r, c) for c in ["criterion", *by])]
        a, b = sub[:, column[r.rater_a]], sub[:, column[r.rater_b]]
        both = ~np.isnan(a) & ~np.isnan(b)  # the units both rated
        a, b = a[both], b[both]
        assert r.n == len(a) >= 1
        assert r.kind == ("judge-human" if kinds[r.rater_a] == "judge" else "human-human")
        assert kinds[r.rater_b] == "human"
        assert r.percent_agreement == pytest.approx(np.mean(a == b), abs=1e-12)
        if len(np.unique(np.concatenate([a, b]))) < 2:
            assert all(np.isnan(getattr(r, m)) for m in MEASURES[:3])
            continue
        code = np.unique(np.concatenate([a, b]), return_inverse=True)[1]  # the same kappa, labels sklearn takes
        assert r.cohen_kappa == pytest.approx(cohen_kappa_score(code[:len(a)], code[len(a):]), abs=1e-12)
        if np.all(a == np.round(a)) and np.all(b == np.round(b)):
            grid = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
            for m, w in (("cohen_kappa_linear", "linear"), ("cohen_kappa_quadratic", "quadratic")):
                assert getattr(r, m) == pytest.approx(cohen_kappa_score(a, b, weights=w, labels=grid), abs=1e-12)
            checked["exact_grid"] += 1
        else:  # on an evenly spaced grid the value weights are the ones just checked
            linear, quadratic = _value_weighted(a, b)
            assert r.cohen_kappa_linear == pytest.approx(linear, abs=1e-10)
            assert r.cohen_kappa_quadratic == pytest.approx(quadratic, abs=1e-10)
            checked["value_weights"] += 1
        checked["pairs"] += 1
    return checked


@pytest.mark.slow
def test_sample_every_pair_matches_sklearn(sample):
    res = rater_pair_matrix(sample, by=["language"])
    assert list(res.columns) == ["criterion", "language", *PAIR_COLUMNS]
    checked = _check_every_pair(sample, res, ["language"])
    assert checked["exact_grid"] == checked["pairs"] > 100
    # Every pair of annotators who rated a unit in common appears, and no other.
    d = _first(sample)
    h = d[d["rater_kind"] == "human"]
    m = h.merge(h, on=["item_id", "criterion"])
    m = m[m["rater_x"] < m["rater_y"]]
    ref = m.groupby(["criterion", "rater_x", "rater_y"]).size()
    ours = res[(res["kind"] == "human-human") & (res["measure"] == "cohen_kappa")]
    ours = ours.groupby(["criterion", "rater_a", "rater_b"])["n"].sum()
    assert ours.to_dict() == ref.to_dict()
    assert (res["note"] == NO_INTERVAL_NOTE).sum() == res["estimate"].notna().sum()
    assert res[["ci_low", "ci_high"]].isna().all().all()


@pytest.mark.slow
@needs_datasets
def test_hanna_every_pair_matches_sklearn(hanna):
    t = time.perf_counter()
    res = rater_pair_matrix(hanna)
    took = time.perf_counter() - t
    # 6 criteria x (3 annotator pairs + 20 judges x 3 annotators) x 4 measures, on all 1056 stories.
    assert len(res) == 6 * (3 + 20 * 3) * 4 and (res["n"] == 1056).all()
    checked = _check_every_pair(hanna, res, [])
    assert checked["exact_grid"] == 6 * 3 and checked["value_weights"] == 6 * 60
    assert took < 10


def test_a_crowd_of_annotators_each_rating_few_units():
    """Two hundred annotators, three per unit: only the pairs that met appear, each with its n, and fast."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(3000):
        for r in rng.choice(200, size=3, replace=False):
            rows.append((f"i{i}", "q", f"a{r:03d}", "human", int(rng.integers(1, 6))))
        rows.append((f"i{i}", "q", "judge", "judge", int(rng.integers(1, 6))))
    df = pd.DataFrame(rows, columns=["item_id", "criterion", "rater", "rater_kind", "score"])
    t = time.perf_counter()
    res = rater_pair_matrix(df)
    assert time.perf_counter() - t < 5
    h = df[df["rater_kind"] == "human"]
    m = h.merge(h, on="item_id")
    m = m[m["rater_x"] < m["rater_y"]]
    ref = m.groupby(["rater_x", "rater_y"]).agg(n=("score_x", "size"), pa=("score_x", "size"))
    ref["pa"] = (m["score_x"] == m["score_y"]).groupby([m["rater_x"], m["rater_y"]]).mean()
    ours = res[(res["kind"] == "human-human") & (res["measure"] == "percent_agreement")].set_index(
        ["rater_a", "rater_b"])
    assert len(ours) == len(ref) and (ours["n"] >= 1).all()
    assert (ours["n"] == ref["n"].reindex(ours.index)).all()
    np.testing.assert_allclose(ours["estimate"], ref["pa"].reindex(ours.index), atol=1e-12)
    assert ((res["kind"] == "judge-human") & (res["measure"] == "cohen_kappa")).sum() == 200


def test_intervals_per_pair_do_not_depend_on_the_other_pairs(sample):
    full = rater_pair_matrix(sample, by=["language"], n_boot=200, seed=4)
    alone = rater_pair_matrix(sample, by=["language"], judges=[], n_boot=200, seed=4)
    hh = full[full["kind"] == "human-human"].reset_index(drop=True)
    pd.testing.assert_frame_equal(hh, alone)
    ok = full["estimate"].notna() & full["ci_low"].notna()
    assert ok.mean() > 0.9
    assert ((full.loc[ok, "ci_low"] <= full.loc[ok, "estimate"] + 1e-12)
            & (full.loc[ok, "estimate"] <= full.loc[ok, "ci_high"] + 1e-12)).mean() > 0.95
    assert full.equals(rater_pair_matrix(sample, by=["language"], n_boot=200, seed=4))
    assert not full["ci_low"].equals(rater_pair_matrix(sample, by=["language"], n_boot=200, seed=5)["ci_low"])


def test_constant_raters_are_undefined_with_a_note():
    df = pd.DataFrame({"item_id": [1, 1, 2, 2], "criterion": "c", "rater": ["h1", "h2"] * 2,
                       "rater_kind": "human", "score": [3, 3, 3, 3]})
    res = rater_pair_matrix(df).set_index("measure")
    assert res.loc[list(MEASURES[:3]), "estimate"].isna().all() and res.loc["percent_agreement", "estimate"] == 1.0
    assert res.loc["cohen_kappa", "note"].startswith("not defined: both raters gave one and the same score")


@pytest.mark.parametrize("kw, words", [
    ({"judges": ["nobody"]}, "no judge named"), ({"by": ["planet"]}, "cannot group by 'planet'"),
    ({"n_boot": -1}, "whole number"), ({"seed": -2}, "seed"), ({"by": ["task"]}, "different values within one item"),
])
def test_bad_options_are_data_errors(sample, kw, words):
    df = sample
    if kw.get("by") == ["task"]:
        df = sample.assign(task=np.where(sample["rater"].str.endswith("1"), "a", "b"))
    with pytest.raises(DataError, match=words) as e:
        rater_pair_matrix(df, **kw)
    assert e.value.fix
