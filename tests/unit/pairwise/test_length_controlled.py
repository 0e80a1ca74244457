"""AlpacaEval's length-controlled win rate (``length_controlled_minimal``) against a transcription of their code.

The reference below is transcribed from ``tatsu-lab/alpaca_eval`` (``src/alpaca_eval/metrics/glm_winrate.py``:
``get_length_controlled_winrate``, ``_get_featurized_data``, ``make_dmatrix_for_model``, ``logloss``,
``logloss_continuous``, ``fit_LogisticRegressionCV``; commit cd543a1), with scikit-learn and patsy used directly.
Changed only where their code cannot run here: the hub download (it only feeds ``instruction_difficulty``, a
column the minimal formula does not use) is left out; metadata routing is switched on in a context instead of
globally; and scikit-learn 1.8 spells ``penalty="l1"`` as ``l1_ratios=(1.0,)``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

from evalcore.pairwise import superficial as sp
from evalcore.stats.bootstrap import cell_rng, item_weights
from tests.helpers import PANDALM, SAMPLE_PAIRS, needs_datasets

# --------------------------------------------------------------------------- the transcription

FORMULA = "np.tanh(std_delta_len) + not_gamed_baseline.astype(float) - 1"  # GLM_INFO["length_controlled_minimal"]


def _ref_logloss(y_true, y_pred, sample_weight=None):
    epsilon = 1e-15
    y_pred = np.clip(y_pred, epsilon, 1 - epsilon)
    all_logloss = y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred)
    if sample_weight is not None:
        all_logloss = all_logloss * sample_weight
    return -np.mean(all_logloss)


def _ref_logloss_continuous(y_true, y_pred, true_prob, true_sample_weight=None):
    y_true = np.where(y_true == 1, true_prob, 1 - true_prob)
    return _ref_logloss(y_true, y_pred, sample_weight=true_sample_weight)


def _penalty_deprecated() -> bool:
    from sklearn.linear_model import LogisticRegression

    return inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"


def _ref_fit_logistic_cv(data, col_y_true, n_splits=5):
    """``fit_LogisticRegressionCV(..., is_ytrue_proba=True, sample_weight=None)``."""
    import sklearn
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GroupKFold

    l1 = {"l1_ratios": (1.0,)} if _penalty_deprecated() else {"penalty": "l1"}
    dflt_kwargs = dict(random_state=123, dual=False, solver="liblinear", n_jobs=None, fit_intercept=False, **l1)
    data = data.reset_index(drop=True).reset_index(drop=False, names=["group"])
    data_1 = data.copy()
    data_1["y"] = 1
    data_0 = data.copy()
    data_0[col_y_true] = 1 - data_0[col_y_true]
    data_0["y"] = 0
    data_dup = pd.concat([data_1, data_0], axis=0).reset_index(drop=True)
    true_prob = data_dup[col_y_true]
    true_sample_weight = None
    sample_weight = true_prob
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = GroupKFold(n_splits=n_splits)
        scorer = make_scorer(_ref_logloss_continuous, response_method="predict_proba", greater_is_better=False
                             ).set_score_request(true_sample_weight=True, true_prob=True)
        model = LogisticRegressionCV(cv=cv, scoring=scorer, **dflt_kwargs)
        fit_kwargs = dict(groups=data_dup["group"], true_sample_weight=true_sample_weight, true_prob=true_prob)
        model.set_fit_request(sample_weight=True)
        model.fit(X=data_dup.drop(columns=[col_y_true, "y", "group"]), y=data_dup["y"], sample_weight=sample_weight,
                  **fit_kwargs)
    return model


def alpaca_reference(annotations: pd.DataFrame) -> float:
    """``get_length_controlled_winrate(annotations, glm_name="length_controlled_minimal")["length_controlled_winrate"]
    / 100`` for ``annotations`` with ``preference`` (1 baseline, 2 model, 1.5 or 0 tie), ``output_1`` (the
    baseline's text) and ``output_2`` (the model's)."""
    from patsy import build_design_matrices, dmatrix

    df = annotations.reset_index()
    len_1 = df["output_1"].str.len()
    len_2 = df["output_2"].str.len()
    std_delta_len = len_1 - len_2
    df = df[["preference", "index"]].copy()
    df["std_delta_len"] = std_delta_len / std_delta_len.std()
    df["preference"] = df["preference"].astype(float).replace({0.0: 1.5}) - 1
    df["not_gamed_baseline"] = True
    df_test = df[["not_gamed_baseline"]].copy()
    df_test["std_delta_len"] = 0
    df_XY_train = dmatrix(FORMULA, df, return_type="dataframe")
    df_X_test = build_design_matrices([df_XY_train.design_info], df_test, return_type="dataframe")[0]
    df_XY_train["preference"] = df["preference"]
    df_XY_train = df_XY_train[df_XY_train["preference"].notna()]
    model = _ref_fit_logistic_cv(df_XY_train, "preference", n_splits=5)
    predicted_preferences = model.predict_proba(df_X_test)[:, 1]
    return float(predicted_preferences.mean())


# --------------------------------------------------------------------------- helpers


def _simulated_annotations(seed: int) -> pd.DataFrame:
    """AlpacaEval-style annotations: a judge that likes the longer output, some ties in both codes."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 160))
    l1 = rng.integers(0, 900, n)
    l2 = np.maximum(rng.integers(0, 900, n) + int(rng.integers(-300, 300)), 0)
    eta = rng.normal() * 2 * (l2 - l1) / 300 + rng.normal()
    pref = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), 2.0, 1.0)
    pref[rng.random(n) < rng.uniform(0, 0.3)] = 1.5
    pref[rng.random(n) < 0.05] = 0.0  # AlpacaEval's older code for a tie
    return pd.DataFrame({"preference": pref, "output_1": ["x" * k for k in l1], "output_2": ["y" * k for k in l2]})


def _ours(annotations: pd.DataFrame) -> dict:
    pref = annotations["preference"].replace({0.0: 1.5}).to_numpy(float) - 1
    delta = (annotations["output_1"].str.len() - annotations["output_2"].str.len()).to_numpy(float)
    return sp.alpacaeval_lc(delta, pref)


def _pair_annotations(frame: pd.DataFrame, judge: str, s: str, t: str, q: str) -> pd.DataFrame:
    """One AlpacaEval annotation per item of the pair, written independently of the package: ``s`` the model
    (``output_2``), ``t`` the baseline; the judge's verdicts on the item averaged (both orders, when it has them);
    the outputs as texts (for a numeric Q, strings of that many characters)."""
    rows = frame[(frame.rater == judge) & frame.winner.isin(["a", "b", "tie"])
                 & (((frame.system_a == s) & (frame.system_b == t)) | ((frame.system_a == t) & (frame.system_b == s)))]
    out = []
    for item, g in rows.groupby("item_id", sort=False):
        s_is_a = g.system_a.iloc[0] == s
        if q == "length":
            text_s, text_t = (g.text_a.iloc[0], g.text_b.iloc[0]) if s_is_a else (g.text_b.iloc[0], g.text_a.iloc[0])
        else:
            qa, qb = int(g[f"{q}_a"].iloc[0]), int(g[f"{q}_b"].iloc[0])
            text_s, text_t = ("s" * qa, "t" * qb) if s_is_a else ("s" * qb, "t" * qa)
        wins = [0.5 if w == "tie" else float((w == "a") == (a == s)) for w, a in zip(g.winner, g.system_a)]
        out.append({"preference": 1 + np.mean(wins), "output_1": text_t, "output_2": text_s})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- against the transcription


@pytest.mark.parametrize("seed", range(6))
def test_matches_their_code_on_simulated_annotations(seed):
    ann = _simulated_annotations(seed)
    ours = _ours(ann)
    assert ours["lc"] == pytest.approx(alpaca_reference(ann), abs=1e-6)
    assert not ours["exact"]


def test_ties_count_half_and_the_length_term_is_zeroed():
    # the same verdicts with the ties read as losses give another number: ties are not dropped
    rng = np.random.default_rng(11)
    l1, l2 = rng.integers(50, 900, 300), rng.integers(50, 900, 300)
    pref = rng.choice([2.0, 1.5, 1.0], 300, p=[0.4, 0.3, 0.3])  # ties half: 0.55; ties as losses: 0.40
    ann = pd.DataFrame({"preference": pref, "output_1": ["x" * k for k in l1], "output_2": ["y" * k for k in l2]})
    ours = _ours(ann)["lc"]
    assert ours == pytest.approx(alpaca_reference(ann), abs=1e-6)
    as_losses = ann.assign(preference=ann.preference.replace({1.5: 1.0}))
    assert _ours(as_losses)["lc"] < ours - 0.1
    # a judge that only follows length: its raw win rate is far from 0.5, its length-controlled one close to it
    rng = np.random.default_rng(3)
    l1, l2 = rng.integers(50, 900, 400), rng.integers(300, 1500, 400)
    d = (l1 - l2) / np.std(l1 - l2, ddof=1)
    pref = np.where(rng.random(400) < 1 / (1 + np.exp(2.5 * np.tanh(d))), 2.0, 1.0)  # no merit, only length
    ann = pd.DataFrame({"preference": pref, "output_1": ["x" * k for k in l1], "output_2": ["y" * k for k in l2]})
    ref = alpaca_reference(ann)
    assert _ours(ann)["lc"] == pytest.approx(ref, abs=1e-6)
    assert (pref == 2).mean() > 0.7 and abs(ref - 0.5) < abs((pref == 2).mean() - 0.5) - 0.1


def test_a_model_that_always_loses_is_not_reported_as_even():
    # Their code gives about 0.5 here (liblinear sees only the label-0 rows and flips the sign); ours fits the model.
    ann = _simulated_annotations(2).assign(preference=1.0)
    assert alpaca_reference(ann) == pytest.approx(0.5, abs=1e-3)
    ours = _ours(ann)
    assert ours["exact"] and ours["lc"] < 0.01
    # and the mirror image, where liblinear sees label 1 only, agrees with their code
    won = ann.assign(preference=2.0)
    assert _ours(won)["lc"] == pytest.approx(alpaca_reference(won), abs=1e-6) and _ours(won)["lc"] > 0.99


def test_too_few_items_for_five_folds():
    res = sp.alpacaeval_lc(np.array([1.0, -2.0, 3.0, 0.0]), np.array([1.0, 0.0, 0.5, 1.0]))
    assert np.isnan(res["lc"])


# --------------------------------------------------------------------------- the fast form for resamples


def test_exact_fit_minimises_liblinears_objective():
    from sklearn.linear_model import LogisticRegression

    ann = _simulated_annotations(4)
    pref = ann["preference"].replace({0.0: 1.5}).to_numpy(float) - 1
    delta = (ann["output_1"].str.len() - ann["output_2"].str.len()).to_numpy(float)
    x = np.tanh(delta / delta.std(ddof=1))
    X = np.column_stack([np.r_[x, x], np.ones(2 * len(x))])
    y, sw = np.r_[np.ones(len(x)), np.zeros(len(x))], np.r_[pref, 1 - pref]

    def objective(w, C):
        z = X @ w
        return np.abs(w).sum() + C * np.sum(sw * np.logaddexp(0, -np.where(y == 1, 1, -1) * z))

    from evalcore.pairwise import _lckernel

    for C in (0.36, 2.78, 21.5, 1e4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            l1 = {"l1_ratio": 1.0} if _penalty_deprecated() else {"penalty": "l1"}
            lib = LogisticRegression(C=C, solver="liblinear", fit_intercept=False, **l1).fit(
                X, y, sample_weight=sw).coef_[0]
        mine = _lckernel.fit_rows(x[None, :], np.array([0]), pref, C * np.ones((1, len(x))), np.zeros((1, 2)))[0]
        assert objective(mine, C) <= objective(lib, C) + 1e-9 * max(1.0, objective(lib, C))
        assert mine == pytest.approx(lib, abs=2e-3)


def test_exact_form_close_to_their_code_and_counts_mean_repeated_rows():
    ann = _simulated_annotations(5)
    pref = ann["preference"].replace({0.0: 1.5}).to_numpy(float) - 1
    delta = (ann["output_1"].str.len() - ann["output_2"].str.len()).to_numpy(float)
    assert sp.alpacaeval_lc_exact(delta, pref)["lc"][0] == pytest.approx(alpaca_reference(ann), abs=1e-4)
    # a row of counts is the data set that repeats each annotation that often, in order
    counts = item_weights(np.random.default_rng(0), len(delta), 3)[1:]
    fast = sp.alpacaeval_lc_exact(delta, pref, counts)
    for r, c in enumerate(counts):
        rep = np.repeat(np.arange(len(delta)), c.astype(int))
        one = sp.alpacaeval_lc_exact(delta[rep], pref[rep])
        assert fast["lc"][r] == pytest.approx(one["lc"][0], abs=1e-10)
        assert fast["C"][r] == one["C"][0]


# --------------------------------------------------------------------------- length_controlled, pair by pair


def _three_pairs(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta = {"s1": 0.0, "s2": 0.5, "s3": -0.4, "s4": 0.2}
    rows = []
    for i in range(480):
        a, b = rng.choice(["s1", "s2", "s3"], 2, replace=False)
        la, lb = rng.integers(10, 400, 2)
        eta = theta[a] - theta[b] + 0.004 * (la - lb)
        u = rng.random()
        win = "tie" if u < 0.1 else ("a" if u < 0.1 + 0.9 / (1 + np.exp(-eta)) else "b")
        rows.append({"item_id": f"i{i}", "system_a": a, "system_b": b, "rater": "j", "rater_kind": "judge",
                     "winner": win, "text_a": "x" * la, "text_b": "y" * lb})
    return pd.DataFrame(rows)


def _pair(res: pd.DataFrame, s: str, t: str) -> pd.DataFrame:
    return res[(res.system_a == s) & (res.system_b == t)].set_index("measure")


@pytest.mark.slow
def test_a_pairs_value_does_not_depend_on_the_other_pairs():
    df = _three_pairs()
    full = _pair(sp.length_controlled(df, judges="j", n_boot=100, seed=3), "s1", "s2")
    only = df[df.system_a.isin(["s1", "s2"]) & df.system_b.isin(["s1", "s2"])]
    alone = _pair(sp.length_controlled(only, judges="j", n_boot=100, seed=3), "s1", "s2")
    rng = np.random.default_rng(9)
    extra = pd.DataFrame({"item_id": [f"x{i}" for i in range(150)], "system_a": "s4", "system_b": "s3", "rater": "j",
                          "rater_kind": "judge", "winner": rng.choice(["a", "b"], 150),
                          "text_a": ["z" * k for k in rng.integers(10, 3000, 150)], "text_b": "w" * 40})
    more = _pair(sp.length_controlled(pd.concat([df, extra]), judges="j", n_boot=100, seed=3), "s1", "s2")
    cols = ["estimate", "ci_low", "ci_high", "n"]
    pd.testing.assert_frame_equal(full[cols], alone[cols])
    pd.testing.assert_frame_equal(full[cols], more[cols])


def test_length_controlled_rows_ties_and_intervals():
    df = _three_pairs()
    res = sp.length_controlled(df, judges="j", n_boot=200, seed=0)
    row = _pair(res, "s1", "s2")
    pair = df[df.system_a.isin(["s1", "s2"]) & df.system_b.isin(["s1", "s2"])]
    s1 = np.where(pair.winner == "tie", 0.5, np.where(pair.system_a == "s1", pair.winner == "a", pair.winner == "b"))
    assert row.loc["win_rate", "estimate"] == pytest.approx(s1.mean())  # ties count half
    assert row.loc["lc_win_rate", "n"] == len(pair)
    assert row.loc["lc_win_rate", "estimate"] == pytest.approx(alpaca_reference(_pair_annotations(
        df, "j", "s1", "s2", "length")), abs=1e-6)
    assert "instruction difficulty" in row.loc["lc_win_rate", "note"]
    for m in ("win_rate", "lc_win_rate"):
        assert row.loc[m, "ci_low"] < row.loc[m, "estimate"] < row.loc[m, "ci_high"]
    # the interval is the item bootstrap of the shared helper, seeded per judge and pair
    W = item_weights(cell_rng(0, ("j", "length_controlled", "s1", "s2")), len(pair), 200)
    assert (W[1:].sum(axis=1) == len(pair)).all()
    same = sp.length_controlled(df, judges="j", n_boot=200, seed=0)
    pd.testing.assert_frame_equal(res, same)


@pytest.mark.slow
def test_sample_pairs_match_their_code():
    from evalcore.data.ingest import load

    frame = load([SAMPLE_PAIRS]).frame
    judge = "gpt-4/pairwise"
    res = sp.length_controlled(frame, judges=judge, q="superficial", alpha=None, n_boot=0)
    lc = res[res.measure == "lc_win_rate"]
    assert len(lc) == 6
    for _, r in lc.iterrows():
        ann = _pair_annotations(frame, judge, r.system_a, r.system_b, "superficial")
        assert r.n == len(ann) == 150
        assert r.estimate == pytest.approx(alpaca_reference(ann), abs=1e-6), (r.system_a, r.system_b)


@pytest.mark.slow
@needs_datasets
def test_pandalm_pairs_match_their_code():
    from evalcore.data.ingest import load

    frame = load(PANDALM, preset="pandalm").frame
    judge = "pandalm-7b"
    res = sp.length_controlled(frame, judges=judge, alpha=None, n_boot=0)
    lc = res[res.measure == "lc_win_rate"]
    assert len(lc) == 10
    for _, r in lc.iterrows():
        ann = _pair_annotations(frame, judge, r.system_a, r.system_b, "length")
        assert r.n == len(ann)
        assert r.estimate == pytest.approx(alpaca_reference(ann), abs=1e-6), (r.system_a, r.system_b)


def test_a_half_made_by_the_penalty_says_so():
    # no merit and no length effect: the cross-validation keeps no weight, and the note says why it is 0.5
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"item_id": [f"i{i}" for i in range(60)], "system_a": "s1", "system_b": "s2", "rater": "j",
                       "rater_kind": "judge", "winner": rng.choice(["a", "b"], 60),
                       "text_a": ["x" * k for k in rng.integers(10, 400, 60)], "text_b": "y" * 200})
    row = sp.length_controlled(df, judges="j", alpha=None, n_boot=0).set_index("measure").loc["lc_win_rate"]
    assert row.estimate == 0.5 and "0.5 by construction" in row.note
