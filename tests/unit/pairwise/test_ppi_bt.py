"""Prediction-powered Bradley-Terry (evalcore.pairwise.ppi_bt): the fit at a fixed lambda equals
``ppi_py.ppi_logistic_pointestimate`` on the +-1 design, the tuned lambda equals ppi_py's ``_calc_lam_glm`` for the
centred scores, and in simulation the 95% intervals cover the true scores in 93-97% of 300 seeds and are narrower
than the humans' alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py
import pytest
from ppi_py.ppi import _calc_lam_glm

from evalcore.errors import DataError
from evalcore.pairwise.bradley_terry import fit_bt
from evalcore.pairwise.battles import LEADERBOARD_COLUMNS
from evalcore.pairwise.leaderboard_systems import system_leaderboard
from evalcore.pairwise.ppi_bt import ppi_bt, ppi_bt_lambda, ppi_leaderboard, ppi_resamples
from evalcore.stats.bootstrap import percentile_interval
from tests.helpers import SAMPLE_PAIRS

K = 4
TRUTH = np.array([0.6, 0.2, -0.2, -0.6])
#: The judge's own bias: it favours the last system by 1.5 logits when it does not copy the humans.
BIAS = np.array([0.0, 0.0, 0.0, 1.5])


def _simulate(seed: int, *, items: int = 1000, labeled: int = 200, agree: float = 0.7, ties: float = 0.1):
    """Items between random system pairs. The humans' result has mean sigma(truth_a - truth_b) (a tie with
    probability ``ties``), so the population minimiser of their BT loss is the truth; the judge repeats the humans'
    result with probability ``agree``, else draws its own biased verdict. The labelled items are a random sample."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, K, items)
    b = (a + rng.integers(1, K, items)) % K
    p = 1 / (1 + np.exp(-(TRUTH[a] - TRUTH[b])))
    win = rng.random(items) < (p - ties / 2) / (1 - ties)
    y = np.where(rng.random(items) < ties, 0.5, win.astype(float))
    pj = 1 / (1 + np.exp(-(TRUTH[a] - TRUTH[b] + BIAS[a] - BIAS[b])))
    yhat = np.where(rng.random(items) < agree, y, (rng.random(items) < pj).astype(float))
    lab = rng.permutation(items) < labeled
    return a, b, np.where(lab, y, np.nan), yhat, lab, rng


def _design(a, b):
    D = np.zeros((len(a), K))
    D[np.arange(len(a)), a] = 1.0
    D[np.arange(len(a)), b] = -1.0
    return D


@pytest.mark.filterwarnings("ignore:'penalty' was deprecated:FutureWarning")  # inside ppi_py's scikit-learn call
@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_fixed_lambda_equals_ppi_py_logistic(lam):
    """ppi_py's prediction-powered logistic regression on the design without the last system (its score fixed at
    0), then centred: the same minimiser, so the same centred scores."""
    a, b, y, yhat, lab, _ = _simulate(0, ties=0.0)
    ours = ppi_bt(a, b, y, yhat, n_systems=K, lam=lam)
    X = _design(a, b)[:, :-1]
    theta = ppi_py.ppi_logistic_pointestimate(X[lab], y[lab], yhat[lab], X[~lab], yhat[~lab], lam=lam,
                                              optimizer_options={"ftol": 1e-15, "gtol": 1e-12})
    ref = np.r_[theta, 0.0]
    np.testing.assert_allclose(ours.scores, ref - ref.mean(), atol=1e-7)
    assert ours.lam == lam


def test_tuned_lambda_equals_ppi_pys_formula_for_the_centred_scores():
    """At the plain-PPI estimate, lambda is ppi_py's ``_calc_lam_glm`` (clipped) with the gradients of the BT
    log-loss and the pseudo-inverse of its Hessian; the estimate is the fit at that lambda."""
    a, b, y, yhat, lab, _ = _simulate(1)
    plain = ppi_bt(a, b, y, yhat, n_systems=K, lam=1.0)
    D = _design(a, b)
    p = 1 / (1 + np.exp(-(D @ plain.scores)))
    grads = (p - np.nan_to_num(y))[lab, None] * D[lab]
    grads_hat = (p - yhat)[lab, None] * D[lab]
    grads_hat_unlabeled = (p - yhat)[~lab, None] * D[~lab]
    hessian = (D.T * (p * (1 - p))) @ D / len(a)
    expected = _calc_lam_glm(grads, grads_hat, grads_hat_unlabeled, np.linalg.pinv(hessian, rcond=1e-10), clip=True)
    tuned = ppi_bt(a, b, y, yhat, n_systems=K)
    assert 0 < tuned.lam < 1
    assert tuned.lam == pytest.approx(expected, abs=1e-9)
    assert ppi_bt_lambda(plain.scores, a, b, y, yhat, lab, n_systems=K)[0] == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(tuned.scores, ppi_bt(a, b, y, yhat, n_systems=K, lam=tuned.lam).scores, atol=1e-9)


def test_the_batched_fit_equals_one_fit_per_resample():
    a, b, y, yhat, lab, rng = _simulate(2, items=300, labeled=80)
    counts = ppi_resamples(lab, n_boot=5, rng=rng)
    many = ppi_bt(a, b, y, yhat, n_systems=K, weight=counts)
    for r in range(5):
        one = ppi_bt(a, b, y, yhat, n_systems=K, weight=counts[r])
        np.testing.assert_allclose(many.scores[r], one.scores, atol=1e-9)
        assert many.lam[r] == pytest.approx(one.lam, abs=1e-12)


def test_resamples_are_stratified():
    lab = np.array([True] * 30 + [False] * 70)
    counts = ppi_resamples(lab, n_boot=20, rng=np.random.default_rng(0))
    assert counts.shape == (20, 100)
    assert (counts[:, :30].sum(axis=1) == 30).all() and (counts[:, 30:].sum(axis=1) == 70).all()


@pytest.mark.slow  # a coverage simulation: the full suite runs it, --fast does not
def test_coverage_and_width_in_300_simulations():
    """95% percentile intervals (200 resamples) of the four systems' scores cover the truth in 93-97% of the
    300 x 4 intervals, and are narrower on average than the humans' alone on the same labelled resamples."""
    covered, width, humans_width = [], [], []
    for seed in range(300):
        a, b, y, yhat, lab, rng = _simulate(seed)
        point = ppi_bt(a, b, y, yhat, n_systems=K)
        counts = ppi_resamples(lab, n_boot=200, rng=rng)
        boot = ppi_bt(a, b, y, yhat, n_systems=K, weight=counts, init=point.scores).scores
        lo, hi, _ = percentile_interval(boot.T, 0.95)
        alone = ppi_bt(a, b, y, yhat, n_systems=K, lam=0.0, weight=counts, init=point.scores).scores
        lo0, hi0, _ = percentile_interval(alone.T, 0.95)
        covered.append((lo <= TRUTH) & (TRUTH <= hi))
        width.append(hi - lo)
        humans_width.append(hi0 - lo0)
    coverage = float(np.mean(covered))
    assert 0.93 <= coverage <= 0.97, coverage
    assert np.mean(width) < 0.9 * np.mean(humans_width), (np.mean(width), np.mean(humans_width))


def test_without_unlabelled_items_it_is_the_humans_fit():
    a, b, y, yhat, lab, _ = _simulate(3, items=200, labeled=200)
    fit = ppi_bt(a, b, y, yhat, n_systems=K)
    humans = fit_bt(a, b, y, n_systems=K)
    assert fit.lam == 0.0
    np.testing.assert_allclose(fit.scores, humans.scores, atol=1e-9)


def test_invalid_inputs_raise_data_errors():
    a, b, y, yhat, lab, _ = _simulate(4, items=50, labeled=20)
    with pytest.raises(DataError, match="lambda"):
        ppi_bt(a, b, y, yhat, n_systems=K, lam=1.5)
    with pytest.raises(DataError, match="judge's verdict is missing"):
        ppi_bt(a, b, y, np.where(lab, np.nan, yhat), n_systems=K)
    with pytest.raises(DataError, match="between 0 and 1"):
        ppi_bt(a, b, np.where(lab, 2.0, np.nan), yhat, n_systems=K)
    with pytest.raises(DataError, match="differ in length"):
        ppi_bt(a[:-1], b, y, yhat, n_systems=K)


# --- the table ----------------------------------------------------------------------------------------------------

def _thinned(frac_kept: float, seed: int = 0) -> pd.DataFrame:
    """The sample with the humans' rows kept on a random share of the items only."""
    comparisons = pd.read_csv(SAMPLE_PAIRS)
    items = comparisons["item_id"].unique()
    keep = set(np.random.default_rng(seed).choice(items, int(frac_kept * len(items)), replace=False))
    human = comparisons["rater_kind"] == "human"
    return comparisons[~human | comparisons["item_id"].isin(keep)].reset_index(drop=True)


def test_leaderboard_rows_on_the_sample_with_humans_on_a_third_of_the_items():
    thin = _thinned(1 / 3)
    lb = ppi_leaderboard(thin, judges=["gpt-4/pairwise", "gpt-3.5/pairwise"], n_boot=100, seed=0)
    assert list(lb.columns) == list(LEADERBOARD_COLUMNS)
    assert sorted(set(lb["rater"])) == ["ppi:gpt-3.5/pairwise", "ppi:gpt-4/pairwise"]
    assert len(lb) == 2 * 3 * 5 and lb["n"].dtype == np.int64
    rows = lb[(lb["rater"] == "ppi:gpt-4/pairwise") & (lb["measure"] == "bt_score")]
    assert rows["estimate"].sum() == pytest.approx(0.0, abs=1e-9)
    assert (rows["ci_low"] < rows["estimate"]).all() and (rows["estimate"] < rows["ci_high"]).all()
    note = rows["note"].iloc[0]
    assert "300 items with human votes" in note and "600 with the judge's only" in note
    lam = float(note.split("lambda ")[1].split(")")[0])
    assert 0 < lam <= 1
    # the humans' order, as the leaderboard writes it
    humans = system_leaderboard(thin, judges=["gpt-4/pairwise"], n_boot=0)
    order = humans[(humans["rater"] == "humans") & (humans["measure"] == "bt_score")]["system"].tolist()
    assert rows["system"].tolist() == order
    again = ppi_leaderboard(thin, judges=["gpt-4/pairwise"], n_boot=100, seed=0)
    pd.testing.assert_frame_equal(again, lb[lb["rater"] == "ppi:gpt-4/pairwise"].reset_index(drop=True))


def test_leaderboard_with_every_item_labelled_is_the_humans_estimate():
    comparisons = pd.read_csv(SAMPLE_PAIRS)
    lb = ppi_leaderboard(comparisons, judges=["gpt-4/pairwise"], n_boot=0)
    assert "lambda 0.00" in lb["note"].iloc[0] and "the humans' own" in lb["note"].iloc[0]
    assert lb["ci_low"].isna().all()


def test_leaderboard_without_enough_human_votes_says_why():
    comparisons = pd.read_csv(SAMPLE_PAIRS)
    judges_only = comparisons[comparisons["rater_kind"] == "judge"]
    lb = ppi_leaderboard(judges_only, judges=["gpt-4/pairwise"], n_boot=10)
    assert lb["estimate"].isna().all() and lb["note"].str.contains("no human votes").all()
    few = _thinned(5 / 900)
    lb = ppi_leaderboard(few, judges=["gpt-4/pairwise"], n_boot=10)
    assert lb["estimate"].isna().all() and lb["note"].str.contains("need at least 10").all()
