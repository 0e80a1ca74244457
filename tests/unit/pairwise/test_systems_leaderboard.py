"""The systems leaderboard (evalcore.pairwise.leaderboard_systems): the humans' and each judge's Bradley-Terry scores
equal an independent transcription of FastChat's ``compute_mle_elo`` (to 1e-6) and choix (to 1e-4) on PandaLM and on
the sample; Elo, ranks, the paired bootstrap, and the ranking comparison worked out by hand."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.errors import DataError
from evalcore.pairwise.battles import LEADERBOARD_COLUMNS, battle_resamples, battles
from evalcore.pairwise.leaderboard_systems import rank_moves, ranking_agreement, ranking_sentences, system_leaderboard
from tests.helpers import PANDALM, SAMPLE_PAIRS, needs_datasets


def _fastchat_battles(frame: pd.DataFrame) -> pd.DataFrame:
    """One battle per rater, item and system pair, written here without evalcore: the rater's votes on the item
    summed (+1 for the alphabetically first system, -1 for the other), as FastChat's ``model_a, model_b, winner``."""
    df = frame[~frame["invalid"].astype(bool)] if "invalid" in frame else frame
    df = df[df["winner"].isin(["a", "b", "tie"])]
    lo = np.minimum(df["system_a"].astype(str), df["system_b"].astype(str))
    hi = np.maximum(df["system_a"].astype(str), df["system_b"].astype(str))
    vote = df["winner"].map({"a": 1, "b": -1, "tie": 0}).to_numpy()
    vote = np.where(df["system_a"].astype(str).to_numpy() == lo, vote, -vote)
    g = pd.DataFrame({"item": df["item_id"].astype(str).to_numpy(), "rater": df["rater"].to_numpy(),
                      "kind": df["rater_kind"].astype(str).to_numpy(), "model_a": lo, "model_b": hi, "v": vote})
    s = g.groupby(["item", "kind", "rater", "model_a", "model_b"], as_index=False)["v"].sum()
    s["winner"] = np.where(s["v"] > 0, "model_a", np.where(s["v"] < 0, "model_b", "tie"))
    s["source"] = np.where(s["kind"] == "human", "humans", s["rater"])
    return s


def _compute_mle_elo(df: pd.DataFrame) -> pd.Series:
    """lm-sys/FastChat ``fastchat/serve/monitor/elo_analysis.py::compute_mle_elo``, transcribed: every battle
    duplicated, a tie a win of A in the first copy and of B in the second, an unpenalised logistic regression
    without intercept on the +-log(10) design, ``400 * coef + 1000``. Returned as centred natural-log scores."""
    from sklearn.linear_model import LogisticRegression

    scale, base, init = 400, 10, 1000
    models = pd.concat([df["model_a"], df["model_b"]]).unique()
    models = pd.Series(np.arange(len(models)), index=models)
    df = pd.concat([df, df], ignore_index=True)
    n, p = df.shape[0], len(models)
    X = np.zeros([n, p])
    X[np.arange(n), models[df["model_a"]].to_numpy()] = +math.log(base)
    X[np.arange(n), models[df["model_b"]].to_numpy()] = -math.log(base)
    Y = np.zeros(n)
    Y[(df["winner"] == "model_a").to_numpy()] = 1.0
    tie = (df["winner"] == "tie").to_numpy().copy()
    tie[len(tie) // 2:] = False
    Y[tie] = 1.0
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=10_000)
    lr.fit(X, Y)
    elo = scale * lr.coef_[0] + init
    logit = (elo - init) / scale * math.log(base)
    return pd.Series(logit - logit.mean(), index=models.index)


def _choix_scores(df: pd.DataFrame) -> pd.Series:
    """choix's maximum-likelihood Bradley-Terry scores (ILSR), a tie as one win to each side (the duplicated
    battles), centred."""
    choix = pytest.importorskip("choix", reason="choix (the test extra) is the reference implementation")
    names = sorted(set(df["model_a"]) | set(df["model_b"]))
    code = {m: i for i, m in enumerate(names)}
    data = []
    for a, b, w in zip(df["model_a"].map(code), df["model_b"].map(code), df["winner"]):
        data += [(a, b), (a, b)] if w == "model_a" else [(b, a), (b, a)] if w == "model_b" else [(a, b), (b, a)]
    s = choix.ilsr_pairwise(len(names), data, alpha=0.0, max_iter=10_000, tol=1e-12)
    return pd.Series(s - s.mean(), index=names)


@pytest.fixture(scope="module")
def pandalm():
    if not PANDALM.exists():
        pytest.skip("../shared/datasets not found: this test reads the real public data")
    return evalcore.read(PANDALM, preset="pandalm")


@pytest.fixture(scope="module")
def sample():
    from evalcore.data.ingest import load_samples

    return load_samples()["comparisons"].frame


def _check_against_references(frame: pd.DataFrame) -> None:
    lb = system_leaderboard(frame, n_boot=0)
    ref = _fastchat_battles(frame)
    assert set(lb["rater"]) == set(ref["source"])
    for source, g in ref.groupby("source"):
        ours = lb[(lb["rater"] == source) & (lb["measure"] == "bt_score")].set_index("system")["estimate"]
        fastchat = _compute_mle_elo(g)
        assert np.max(np.abs(ours[fastchat.index] - fastchat)) < 1e-6, source
        assert np.max(np.abs(ours[fastchat.index] - _choix_scores(g)[fastchat.index])) < 1e-4, source
        elo = lb[(lb["rater"] == source) & (lb["measure"] == "elo")].set_index("system")["estimate"]
        assert np.allclose(elo, 1000 + 400 / math.log(10) * ours[elo.index], atol=1e-9)


@pytest.mark.slow
@needs_datasets
def test_pandalm_scores_equal_fastchat_and_choix(pandalm):
    _check_against_references(pandalm)


def test_sample_scores_equal_fastchat_and_choix(sample):
    _check_against_references(sample)


def test_layout_and_paired_intervals(sample):
    lb = system_leaderboard(sample, n_boot=200, seed=3)
    assert tuple(lb.columns) == LEADERBOARD_COLUMNS
    assert not lb.equals(system_leaderboard(sample, n_boot=200, seed=np.random.default_rng(7)))
    again = system_leaderboard(sample, n_boot=200, seed=3)
    pd.testing.assert_frame_equal(lb, again)
    sys_rows = lb[lb["system"] != ""]
    assert (sys_rows["ci_low"] <= sys_rows["estimate"] + 1e-12).all()
    assert (sys_rows["estimate"] <= sys_rows["ci_high"] + 1e-12).all()
    ranks = lb[lb["measure"] == "rank"]
    assert (ranks["ci_low"] % 1 == 0).all() and (ranks["ci_high"] % 1 == 0).all()
    # One row per judge for each ranking measure, with system empty; separability for every source.
    judges = sorted(set(sample.loc[sample["rater_kind"] == "judge", "rater"]))
    for measure in ("ranking_tau", "pairs_ordered_same", "separability"):
        got = lb[lb["measure"] == measure]
        assert (got["system"] == "").all()
        assert sorted(got["rater"]) == sorted(judges + (["humans"] if measure == "separability" else []))


def test_the_resamples_are_shared_by_every_source(sample):
    bt = battles(sample)
    counts = battle_resamples(bt, n_boot=50, seed=1)
    assert counts.shape == (50, len(bt.items))
    np.testing.assert_array_equal(counts, battle_resamples(bt, n_boot=50, seed=1))
    # A judge identical to the humans has the humans' intervals exactly, and moves nothing in any resample.
    humans = sample[sample["rater_kind"] == "human"].drop_duplicates("item_id")  # one annotator per item
    twin = humans.assign(rater="twin", rater_kind="judge")
    lb = system_leaderboard(pd.concat([humans, twin], ignore_index=True), n_boot=100)
    h = lb[(lb["rater"] == "humans") & (lb["measure"] == "bt_score")].reset_index(drop=True)
    t = lb[(lb["rater"] == "twin") & (lb["measure"] == "bt_score")].reset_index(drop=True)
    pd.testing.assert_frame_equal(h.drop(columns="rater"), t.drop(columns="rater"))
    moves = lb[lb["measure"] == "rank_move"]
    assert (moves[["estimate", "ci_low", "ci_high"]] == 0).all().all()
    tau = lb[lb["measure"] == "ranking_tau"].iloc[0]
    assert (tau["estimate"], tau["ci_low"], tau["ci_high"]) == (1.0, 1.0, 1.0)


def _table(verdicts: dict[str, list[tuple[str, str, str]]]) -> pd.DataFrame:
    """A comparisons table: per rater (``humans`` for one annotator), battles (winner, loser, or 'tie' a-b)."""
    rows = []
    for rater, battles_ in verdicts.items():
        for k, (a, b, w) in enumerate(battles_):
            rows.append({"item_id": f"i{k}", "system_a": a, "system_b": b, "rater": rater,
                         "rater_kind": "human" if rater == "ann" else "judge", "winner": w})
    return pd.DataFrame(rows)


def test_ranking_comparison_by_hand():
    # The humans: w > x > y > z (each pair once, the better one wins, twice over with one upset per pair so
    # that every score is finite). The judge: swaps x and y, keeps w first and z last.
    order_h, order_j = ["w", "x", "y", "z"], ["w", "y", "x", "z"]

    def battles_for(order):
        out = []
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                out += [(a, b, "a"), (a, b, "a"), (a, b, "b")]
        return out

    frame = _table({"ann": battles_for(order_h), "judge": battles_for(order_j)})
    lb = system_leaderboard(frame, n_boot=0)
    agree = ranking_agreement(lb).iloc[0]
    # 6 pairs, one discordant (x, y): tau = (5 - 1) / 6, pairs ordered the same 5/6.
    assert agree["ranking_tau"] == pytest.approx(4 / 6)
    assert agree["pairs_ordered_same"] == pytest.approx(5 / 6)
    assert (agree["n_systems"], agree["moved"], agree["largest_move"]) == (4, 2, 1.0)
    moves = rank_moves(lb).set_index("system")
    assert moves.loc[["w", "x", "y", "z"], "move"].tolist() == [0, 1, -1, 0]
    assert moves.loc["x", "humans_rank"] == 2 and moves.loc["x", "judge_rank"] == 3
    assert "moves 2 of 4 systems: x down 1 (2 -> 3), y up 1 (3 -> 2)" in ranking_sentences(lb)["judge"]
    notes = lb.loc[lb["measure"].isin(["bt_score", "ranking_tau"]), "note"]
    assert notes.str.contains("n_boot=0").all()


def test_separability_is_the_share_of_pairs_whose_intervals_do_not_overlap(sample):
    lb = system_leaderboard(sample, n_boot=200)
    for source, g in lb[lb["measure"] == "bt_score"].groupby("rater"):
        lo, hi = g["ci_low"].to_numpy(), g["ci_high"].to_numpy()
        apart = [lo[i] > hi[j] or lo[j] > hi[i] for i in range(len(g)) for j in range(i + 1, len(g))]
        got = lb[(lb["rater"] == source) & (lb["measure"] == "separability")]["estimate"].item()
        assert got == pytest.approx(np.mean(apart))


def test_a_system_that_wins_everything_and_a_disconnected_graph_get_notes():
    wins = [("w", "x", "a"), ("w", "y", "a"), ("x", "y", "a"), ("y", "x", "a"), ("w", "x", "a")]
    lb = system_leaderboard(_table({"ann": wins}), n_boot=50)
    w = lb[(lb["measure"] == "bt_score") & (lb["system"] == "w")].iloc[0]
    assert np.isfinite(w["estimate"]) and w["estimate"] > 1
    assert "ridge penalty of 0.1" in w["note"] and "w won every battle" in w["note"]
    apart = [("a", "b", "a"), ("b", "a", "a"), ("c", "d", "a"), ("d", "c", "a")]
    lb = system_leaderboard(_table({"ann": apart}), n_boot=0)
    note = lb.loc[lb["measure"] == "bt_score", "note"].iloc[0]
    assert "2 groups never compared with each other (a, b | c, d)" in note


def test_judges_choice_and_errors(sample):
    lb = system_leaderboard(sample, judges=["gpt-4/pairwise"], n_boot=0)
    assert set(lb["rater"]) == {"humans", "gpt-4/pairwise"}
    with pytest.raises(DataError, match="no battle was judged by 'nobody'"):
        system_leaderboard(sample, judges=["nobody"], n_boot=0)
    with pytest.raises(DataError, match="unknown style control"):
        system_leaderboard(sample, style="color", n_boot=0)
    with pytest.raises(DataError, match="system_a"):
        system_leaderboard(sample.drop(columns=["system_a"]), n_boot=0)
    judges_only = system_leaderboard(sample[sample["rater_kind"] == "judge"], n_boot=0)
    assert "humans" not in set(judges_only["rater"]) and "ranking_tau" not in set(judges_only["measure"])


@pytest.mark.slow
@needs_datasets
def test_pandalm_is_fast(pandalm):
    start = time.perf_counter()
    lb = system_leaderboard(pandalm, n_boot=1000)
    assert time.perf_counter() - start < 3.0
    assert lb.loc[lb["measure"] == "bt_score", "ci_low"].notna().all()
