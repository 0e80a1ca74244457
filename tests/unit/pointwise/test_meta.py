"""System- and input-level correlation against scipy on hand-aggregated data, on simulated data and on HANNA."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from evalcore.columns import segment_columns
from evalcore.data.mapping import suggest_mapping
from evalcore.errors import DataError
from evalcore.pointwise.meta import (
    INPUT_MEASURES, META_MEASURES, SYSTEM_MEASURES, cell_weights, correlations, level_values, meta_correlations,
    meta_data,
)
from evalcore.stats.results import RESULT_COLUMNS
from tests.helpers import needs_datasets
from tests.unit.hanna import hanna_frame

SCIPY = {"kendall_tau": lambda x, y: kendalltau(x, y).statistic, "spearman_rho": lambda x, y: spearmanr(x, y).statistic,
         "pearson_r": lambda x, y: pearsonr(x, y).statistic}


def _simulated(seed: int = 0, n_systems: int = 6, n_inputs: int = 25) -> pd.DataFrame:
    """Systems of different quality answering the same inputs; 3 humans (1-5), judge 'j1' twice per item
    (samples), judge 'j2' once; system 'S5' never scored by j2; j2 constant on input 0."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1, 1, n_systems)
    rows = []
    for s in range(n_systems):
        for d in range(n_inputs):
            item, truth = f"S{s}/{d}", quality[s] + rng.normal(0, 1)
            for h in range(3):
                rows.append((item, f"S{s}", f"in{d}", f"h{h}", "human", 0,
                             float(np.clip(np.round(3 + truth + rng.normal(0, 0.8)), 1, 5))))
            for k in range(2):
                rows.append((item, f"S{s}", f"in{d}", "j1", "judge", k, float(np.round(3 + truth + rng.normal(0, 1)))))
            if s != 5:
                rows.append((item, f"S{s}", f"in{d}", "j2", "judge", 0,
                             3.0 if d == 0 else float(np.round(3 + 0.5 * truth + rng.normal(0, 1)))))
    return pd.DataFrame(rows, columns=["item_id", "system", "input_id", "rater", "rater_kind", "sample", "score"])


def _by_hand(t: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Per item: the system, input, mean human score and the judge's mean score (items with both)."""
    h = t[t.rater_kind == "human"].groupby("item_id").score.mean()
    j = t[t.rater == judge].groupby("item_id").score.mean()
    items = t.groupby("item_id")[["system", "input_id"]].first()
    return items.assign(h=h, j=j).dropna()


def _expected(t: pd.DataFrame, judge: str) -> dict[str, float]:
    d = _by_hand(t, judge)
    sysm = d.groupby("system")[["h", "j"]].mean()
    out = {f"{k}_system": f(sysm.h, sysm.j) for k, f in SCIPY.items()}
    for k, f in SCIPY.items():
        per = [f(g.h, g.j) if g.h.nunique() > 1 and g.j.nunique() > 1 else np.nan for _, g in d.groupby("input_id")]
        out[f"{k}_input"] = float(np.nanmean(per))
    return out


def _row(res: pd.DataFrame, judge: str, measure: str, **by) -> pd.Series:
    sel = (res.judge == judge) & (res.measure == measure)
    for k, v in by.items():
        sel &= res[k] == v
    (i,) = np.flatnonzero(sel.to_numpy())
    return res.iloc[i]


def test_system_and_input_levels_match_scipy_on_hand_aggregated_data():
    t = _simulated()
    res = meta_correlations(t, n_boot=0)
    assert list(res.columns) == ["criterion", "judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_systems",
                                 *RESULT_COLUMNS[6:]]
    for judge in ("j1", "j2"):
        want = _expected(t, judge)
        for m in META_MEASURES:
            assert _row(res, judge, m).estimate == pytest.approx(want[m], abs=1e-12), (judge, m)
    # j1 has every system, j2 misses S5: left out and counted; j2's constant input 0 left out and counted.
    assert _row(res, "j1", "kendall_tau_system").n_systems == 6
    j2 = _row(res, "j2", "kendall_tau_system")
    assert j2.n_systems == 5 and "1 system(s)" in j2.note and j2.n == 25
    j2i = _row(res, "j2", "kendall_tau_input")
    assert j2i.n == 24 and "1 input(s)" in j2i.note


def test_several_outputs_of_a_system_for_one_input_enter_with_their_mean():
    t = _simulated(seed=3, n_systems=4, n_inputs=8)
    dup = t[t.item_id.str.endswith("/1")].assign(item_id=lambda d: d.item_id + "b", input_id="in2")
    dup = dup.assign(score=np.where(dup.rater_kind == "human", dup.score, 6 - dup.score))
    t2 = pd.concat([t, dup], ignore_index=True)
    res = meta_correlations(t2, judges=["j1"], n_boot=0)
    d = _by_hand(t2, "j1")
    per_in = d.groupby(["input_id", "system"])[["h", "j"]].mean().reset_index()
    want = np.nanmean([kendalltau(g.h, g.j).statistic for _, g in per_in.groupby("input_id")])
    assert _row(res, "j1", "kendall_tau_input").estimate == pytest.approx(want, abs=1e-12)
    sysm = d.groupby("system")[["h", "j"]].mean()  # system level: the mean over the system's items
    assert _row(res, "j1", "pearson_r_system").estimate == pytest.approx(pearsonr(sysm.h, sysm.j).statistic, abs=1e-12)


def test_a_resample_is_the_inputs_drawn_with_replacement():
    t = _simulated(seed=1)
    data = meta_data(t)
    cell = data.cells[0]
    W = cell_weights(cell, 11, 5)
    sys_res = level_values(data, cell, "j1", W, "system")
    in_res = level_values(data, cell, "j1", W, "input")
    d = _by_hand(t, "j1")
    inputs = pd.factorize(pd.Series(sorted(d.input_id.unique())), sort=True)[1]
    for b in range(1, 6):
        counts = dict(zip(inputs, W[b]))
        drawn = pd.concat([d[d.input_id == i] for i, c in counts.items() for _ in range(int(c))])
        sysm = drawn.groupby("system")[["h", "j"]].mean()
        assert sys_res.values["kendall_tau_system"][b] == pytest.approx(kendalltau(sysm.h, sysm.j).statistic, abs=1e-12)
        per = [kendalltau(g.h, g.j).statistic for i, g in d.groupby("input_id") for _ in range(int(counts[i]))]
        assert in_res.values["kendall_tau_input"][b] == pytest.approx(np.nanmean(per), abs=1e-12)


def test_correlations_match_scipy_row_by_row_with_gaps_and_ties():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(40, 9)).astype(float)
    Y = X + rng.integers(-2, 3, size=X.shape)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[0, :] = 1.0  # constant: undefined
    got = correlations(X, Y)
    for r in range(len(X)):
        ok = np.isfinite(X[r])
        for k, f in SCIPY.items():
            if r == 0 or ok.sum() < 2 or np.unique(X[r, ok]).size < 2 or np.unique(Y[r, ok]).size < 2:
                assert np.isnan(got[k][r])
            else:
                assert got[k][r] == pytest.approx(f(X[r, ok], Y[r, ok]), abs=1e-12)


def test_seeded_and_reproducible():
    t = _simulated(seed=2)
    a = meta_correlations(t, n_boot=200, seed=4)
    pd.testing.assert_frame_equal(a, meta_correlations(t, n_boot=200, seed=4))
    pd.testing.assert_frame_equal(meta_correlations(t, n_boot=200, seed=np.random.default_rng(9)),
                                  meta_correlations(t, n_boot=200, seed=np.random.default_rng(9)))
    c = meta_correlations(t, n_boot=200, seed=5)
    assert not np.allclose(a.ci_low, c.ci_low)
    # a judge's interval does not depend on which other judges are asked for
    one = meta_correlations(t, judges=["j2"], n_boot=200, seed=4)
    pd.testing.assert_frame_equal(one.reset_index(drop=True), a[a.judge == "j2"].reset_index(drop=True))


def test_without_system_or_input_id_the_rows_say_why():
    t = _simulated(seed=1)
    no_input = meta_correlations(t.drop(columns="input_id"), n_boot=50)
    sys_row = _row(no_input, "j1", "kendall_tau_system")
    assert np.isfinite(sys_row.estimate) and "resamples items" in sys_row.note and sys_row.n == 150
    for m in INPUT_MEASURES:
        r = _row(no_input, "j1", m)
        assert np.isnan(r.estimate) and r.note.startswith("not_available: needs input_id")
    no_system = meta_correlations(t.drop(columns="system"), n_boot=50)
    assert len(no_system) == 2 * len(META_MEASURES)
    assert no_system.estimate.isna().all() and no_system.ci_low.isna().all()
    assert no_system.note.str.startswith("not_available: needs a system column").all()


def test_groups_by_criterion_and_by():
    t = _simulated(seed=4)
    t = pd.concat([t.assign(criterion="A"), t.assign(criterion="B", score=6 - t.score)], ignore_index=True)
    t["lang"] = np.where(t.input_id.str[2:].astype(int) % 2 == 0, "de", "en")
    res = meta_correlations(t, by=["lang", "criterion"], n_boot=0)
    assert list(res.columns[:3]) == ["criterion", "lang", "judge"]
    assert len(res) == 2 * 2 * 2 * len(META_MEASURES)
    sub = t[(t.criterion == "A") & (t.lang == "de")]
    assert _row(res, "j1", "spearman_rho_system", criterion="A", lang="de").estimate == pytest.approx(
        _expected(sub, "j1")["spearman_rho_system"], abs=1e-12)


@pytest.mark.parametrize("change, words", [
    (lambda t: t.assign(score="good"), "numeric scores"),
    (lambda t: t.drop(columns="rater_kind"), "rater_kind"),
    (lambda t: t.assign(system=np.where(t.rater == "j1", "X", t.system)), "more than one value of 'system'"),
])
def test_bad_tables_raise_a_data_error_with_a_fix(change, words):
    with pytest.raises(DataError, match=words) as err:
        meta_correlations(change(_simulated()), n_boot=0)
    assert err.value.fix


def test_bad_options_raise_data_errors():
    t = _simulated()
    with pytest.raises(DataError, match="no judge named 'gpt'"):
        meta_correlations(t, judges=["gpt"], n_boot=0)
    with pytest.raises(DataError, match="no such column"):
        meta_correlations(t, by=["domain"], n_boot=0)
    with pytest.raises(DataError, match="not a segment"):
        meta_correlations(t, by=["input_id"], n_boot=0)
    with pytest.raises(DataError):
        meta_correlations(t, n_boot=-1)


def test_the_two_columns_are_recognised_and_input_id_is_not_a_segment():
    mapping = suggest_mapping(["item_id", "annotator", "model", "score", "doc_id"], table="ratings")
    assert mapping["model"] == "system" and mapping["doc_id"] == "input_id" and mapping["annotator"] == "rater"
    assert suggest_mapping(["id", "rater", "generator", "prompt_id", "score"])["prompt_id"] == "input_id"
    # a lone doc_id is still the item, a lone model still the rater
    assert suggest_mapping(["doc_id", "model", "score"]) == {"doc_id": "item_id", "model": "rater", "score": "score"}
    t = _simulated()
    assert "system" in segment_columns(t) and "input_id" not in segment_columns(t)


@pytest.fixture(scope="module")
def hanna() -> pd.DataFrame:
    return hanna_frame()


@pytest.mark.slow
@needs_datasets
def test_hanna_has_96_inputs_answered_by_11_systems(hanna):
    items = hanna.groupby("item_id")[["system", "input_id"]].first()
    assert items.groupby("input_id").system.nunique().eq(11).all() and items.input_id.nunique() == 96
    assert (items.index == items.system + "/" + items.input_id).all()


@pytest.mark.slow
@needs_datasets
def test_hanna_system_and_input_level_match_scipy(hanna):
    res = meta_correlations(hanna, n_boot=300, seed=0)
    assert len(res) == 6 * 20 * len(META_MEASURES)
    for crit, judge in (("Coherence", "ChatGPT/prompt1"), ("Coherence", "Llama-13B/prompt1"),
                        ("Relevance", "Beluga-13B/prompt3")):
        want = _expected(hanna[hanna.criterion == crit], judge)
        for m in META_MEASURES:
            r = _row(res, judge, m, criterion=crit)
            assert r.estimate == pytest.approx(want[m], abs=1e-12), (crit, judge, m)
        r = _row(res, judge, "kendall_tau_system", criterion=crit)
        assert r.n == 96 and r.n_systems == 11
    assert _row(res, "ChatGPT/prompt1", "kendall_tau_system", criterion="Coherence").estimate == pytest.approx(
        43 / 55, abs=1e-12)  # 11 systems, 55 pairs: 49 concordant, 6 discordant
    defined = res[res.estimate.notna()]
    assert len(defined) == len(res)
    assert ((defined.ci_low <= defined.estimate) & (defined.estimate <= defined.ci_high)).all()
    assert set(res.measure[res.note.str.contains("input")]) <= set(INPUT_MEASURES)
    assert (res.loc[res.measure.isin(SYSTEM_MEASURES), "note"] == "").all()
