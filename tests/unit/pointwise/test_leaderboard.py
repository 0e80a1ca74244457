"""The judge leaderboard: the ranking, the paired comparison with the best judge and its coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from evalcore.errors import DataError
from evalcore.pointwise.leaderboard import LEADERBOARD_COLUMNS, judge_leaderboard
from evalcore.pointwise.meta import meta_correlations
from tests.helpers import needs_datasets
from tests.unit.hanna import hanna_frame

# Truth t ~ N(0, 1); the humans' score t + N(0, SH^2); judge A = t + N(0, SA^2) (good), B = t + N(0, SB^2) (poor).
SH, SA, SB = 0.6, 0.5, 1.5


def _population_tau(sigma: float) -> float:
    """Kendall's tau of a judge with the humans' score in the population: (2/pi) arcsin(rho) for normal scores."""
    rho = 1 / np.sqrt((1 + sigma**2) * (1 + SH**2))
    return float(2 / np.pi * np.arcsin(rho))


def _two_judges(rng: np.random.Generator, n: int) -> pd.DataFrame:
    t = rng.normal(size=n)
    scores = [t + rng.normal(0, SH, n), t + rng.normal(0, SA, n), t + rng.normal(0, SB, n)]
    return pd.DataFrame({"item_id": np.tile(np.arange(n), 3), "rater": np.repeat(["h", "A", "B"], n),
                         "rater_kind": np.repeat(["human", "judge", "judge"], n), "score": np.concatenate(scores)})


def test_the_population_difference_is_what_a_large_sample_gives():
    rng = np.random.default_rng(123)
    N = 400_000
    t = rng.normal(size=N)
    h = t + rng.normal(0, SH, N)
    big = (kendalltau(t + rng.normal(0, SB, N), h).statistic - kendalltau(t + rng.normal(0, SA, N), h).statistic)
    assert big == pytest.approx(_population_tau(SB) - _population_tau(SA), abs=0.005)


def test_the_better_judge_ranks_first_and_the_worse_is_claimed_worse():
    t = _two_judges(np.random.default_rng(0), 300)
    board = judge_leaderboard(t, measures=("kendall_tau", "spearman_rho"), n_boot=500, seed=1)
    assert list(board.columns) == ["criterion", *LEADERBOARD_COLUMNS]
    for m in ("kendall_tau", "spearman_rho"):
        sub = board[board.measure == m]
        assert sub.judge.tolist() == ["A", "B"] and sub["rank"].tolist() == [1, 2]
        best, worse = sub.iloc[0], sub.iloc[1]
        assert best.diff_to_best == 0 and not best.worse_than_best
        assert worse.worse_than_best and worse.diff_ci_high < 0
        assert worse.diff_to_best == pytest.approx(worse.estimate - best.estimate, abs=1e-12)
    h, a = t.score[t.rater == "h"].to_numpy(), t.score[t.rater == "A"].to_numpy()
    row = board[(board.measure == "kendall_tau") & (board.judge == "A")].iloc[0]
    assert row.estimate == pytest.approx(kendalltau(a, h).statistic, abs=1e-12) and row.n == 300
    row = board[(board.measure == "spearman_rho") & (board.judge == "A")].iloc[0]
    assert row.estimate == pytest.approx(spearmanr(a, h).statistic, abs=1e-12)


def test_two_judges_of_equal_quality_are_not_claimed_different():
    rng = np.random.default_rng(8)
    n = 200
    t = rng.normal(size=n)
    scores = [t + rng.normal(0, SH, n), t + rng.normal(0, SA, n), t + rng.normal(0, SA, n)]
    table = pd.DataFrame({"item_id": np.tile(np.arange(n), 3), "rater": np.repeat(["h", "A", "A2"], n),
                          "rater_kind": np.repeat(["human", "judge", "judge"], n), "score": np.concatenate(scores)})
    board = judge_leaderboard(table, measures="kendall_tau", n_boot=400, seed=0)
    assert not board.worse_than_best.any()
    assert board.diff_ci_low.iloc[1] < 0 <= board.diff_ci_high.iloc[1]


@pytest.mark.slow
def test_the_paired_difference_interval_covers_the_population_difference():
    """200 simulated datasets of 100 items, 200 resamples each: the 95% interval of (worse - best) should hold
    the population difference of taus in about 95% of them (binomial sd 1.5%). The datasets are the groups of one
    table, each ranked and resampled on its own: one call instead of 200 (measured: 0.955)."""
    true = _population_tau(SB) - _population_tau(SA)
    rng = np.random.default_rng(2024)
    K = 200
    table = pd.concat([_two_judges(rng, 100).assign(rep=k, item_id=lambda d, k=k: f"r{k}-" + d["item_id"].astype(str))
                       for k in range(K)], ignore_index=True)
    board = judge_leaderboard(table, by=["rep"], measures="kendall_tau", n_boot=200, seed=0)
    other = board[board["rank"] == 2]
    assert len(other) == K and set(other["rep"]) == set(range(K))
    d = np.where(other["judge"] == "B", true, -true)
    assert 0.89 <= np.mean((other["diff_ci_low"] <= d) & (d <= other["diff_ci_high"])) <= 0.99


def _systems(seed: int = 0) -> pd.DataFrame:
    """Six systems answering 30 inputs; judge 'good' tracks quality, 'noisy' barely."""
    rng = np.random.default_rng(seed)
    rows = []
    for s, q in enumerate(np.linspace(-1, 1, 6)):
        for d in range(30):
            truth = q + rng.normal(0, 1)
            item = f"S{s}/{d}"
            for rater, kind, v in (("h1", "human", truth + rng.normal(0, 0.5)), ("h2", "human", truth + rng.normal(0, 0.5)),
                                   ("good", "judge", truth + rng.normal(0, 0.5)), ("noisy", "judge", rng.normal(0, 1))):
                rows.append((item, f"S{s}", str(d), rater, kind, float(np.round(3 + v))))
    return pd.DataFrame(rows, columns=["item_id", "system", "input_id", "rater", "rater_kind", "score"])


def test_system_level_rows_are_meta_correlations_own_numbers():
    t = _systems()
    board = judge_leaderboard(t, measures=("kendall_tau_system", "pearson_r_input"), n_boot=300, seed=3)
    meta = meta_correlations(t, n_boot=300, seed=3)
    for _, r in board.iterrows():
        m = meta[(meta.judge == r.judge) & (meta.measure == r.measure)].iloc[0]
        assert (r.estimate, r.ci_low, r.ci_high, r.n, r.n_systems) == (m.estimate, m.ci_low, m.ci_high, m.n,
                                                                         m.n_systems)
    assert board[board.measure == "kendall_tau_system"].judge.tolist() == ["good", "noisy"]


def test_seeded_and_reproducible():
    t = _systems(1)
    a = judge_leaderboard(t, n_boot=200, seed=5)
    pd.testing.assert_frame_equal(a, judge_leaderboard(t, n_boot=200, seed=5))
    assert not np.allclose(a.diff_ci_low.fillna(0), judge_leaderboard(t, n_boot=200, seed=6).diff_ci_low.fillna(0))
    zero = judge_leaderboard(t, n_boot=0)
    assert zero.ci_low.isna().all() and not zero.worse_than_best.any()
    assert zero.note.str.contains("no interval").all()


def test_without_a_system_column_the_system_rows_say_why():
    t = _systems().drop(columns=["system"])
    board = judge_leaderboard(t, n_boot=100)
    sys_rows = board[board.measure == "kendall_tau_system"]
    assert sys_rows.estimate.isna().all() and sys_rows["rank"].isna().all() and not sys_rows.worse_than_best.any()
    assert sys_rows.note.str.startswith("not_available: needs a system column").all()
    assert board[board.measure == "kendall_tau"].estimate.notna().all()


def test_bad_options_raise_data_errors():
    t = _systems()
    with pytest.raises(DataError, match="unknown measure 'accuracy'") as err:
        judge_leaderboard(t, measures=("accuracy",))
    assert "kendall_tau_system" in err.value.fix
    with pytest.raises(DataError, match="no judge named"):
        judge_leaderboard(t, judges=["gpt-4"])
    with pytest.raises(DataError):
        judge_leaderboard(t, measures=())


@pytest.mark.slow
@needs_datasets
def test_hanna_leaderboard():
    f = hanna_frame()
    board = judge_leaderboard(f, n_boot=200, seed=0)
    assert len(board) == 6 * 2 * 20
    sub = f[f.criterion == "Coherence"]
    h = sub[sub.rater_kind == "human"].groupby("item_id").score.mean()
    j = sub[sub.rater == "ChatGPT/prompt1"].groupby("item_id").score.mean()
    row = board[(board.criterion == "Coherence") & (board.measure == "kendall_tau")
                & (board.judge == "ChatGPT/prompt1")].iloc[0]
    assert row.estimate == pytest.approx(kendalltau(j, h.reindex(j.index)).statistic, abs=1e-12)
    assert row.n == 96 and row.n_systems == 11
    for _, g in board.groupby(["criterion", "measure"]):
        assert (np.diff(g.estimate.to_numpy()) <= 1e-12).all() and g["rank"].iloc[0] == 1
        assert (g.diff_to_best <= 1e-12).all()
        assert (g.worse_than_best == (g.diff_ci_high < 0)).all()


def test_n_says_what_it_counts():
    """With input_id the bootstrap resamples inputs, so n counts inputs; n_unit says so and n_items
    counts the items (the issue saw n = 90 for 1,980 items)."""
    rng = np.random.default_rng(5)
    rows = [(f"{d}/{s}", f"S{s}", f"D{d}", r, k, float(s + rng.normal()))
            for d in range(12) for s in range(5) for r, k in (("h", "human"), ("j1", "judge"), ("j2", "judge"))]
    t = pd.DataFrame(rows, columns=["item_id", "system", "input_id", "rater", "rater_kind", "score"])
    board = judge_leaderboard(t, measures=("kendall_tau", "kendall_tau_system"), n_boot=20)
    assert (board["n"] == 12).all() and (board["n_unit"] == "inputs").all() and (board["n_items"] == 60).all()
    plain = judge_leaderboard(t.drop(columns=["input_id", "system"]), measures="kendall_tau", n_boot=20)
    assert (plain["n"] == 60).all() and (plain["n_unit"] == "items").all() and (plain["n_items"] == 60).all()
