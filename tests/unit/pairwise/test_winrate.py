"""Calibrated win rates (evalcore.pairwise.winrate, Gao et al. 2024): the data path on simulated comparisons with known
truth, BWRS reproduced draw for draw with numpy and checked against the delta method, the marginalised Dawid-Skene
posterior against an exact enumeration of the discrete labels and against the discrete-label PyMC reference,
parameter recovery over seeded repetitions, PandaLM against a pandas computation from its raw JSON, and the
bundled sample against its ground truth.

Convention throughout: label 0 = system_a better, p = P(A better), q0 = P(judge says A | A better),
q1 = P(judge says B | B better).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.optimize import brentq
from scipy.special import betaln, logsumexp, roots_legendre

from evalcore.data import ingest
from evalcore.errors import DataError
from evalcore.pairwise import dawid_skene as dsm
from evalcore.pairwise import winrate as wr
from evalcore.pairwise.bwrs import bwrs
from evalcore.pairwise.dawid_skene import dawid_skene, dawid_skene_reference, is_compiled, warm_up
from evalcore.pairwise.pairs import Counts, NotApplicable, PairData, accuracy_counts, label_mask, pair_data, pairs
from evalcore.pairwise.result import JudgeAccuracy, WinRate, summarize_samples
from evalcore.pairwise.winrate import Prior
from tests.helpers import DATASETS, ROOT

PANDALM = DATASETS / "pandalm"
GROUND_TRUTH = ROOT / "sample_data" / "ground_truth.json"
TOL = 1e-12

# Judges well below perfect and asymmetric (q0 < q1), so the raw win rate k is pulled towards 1/2 and below p.
Q0 = (0.65, 0.70, 0.75)
Q1 = (0.80, 0.80, 0.75)
TRUE_PS = (0.3, 0.5, 0.7, 0.8)
FAST = {"chains": 2, "draws": 500, "tune": 500}  # ESS of p ~ 700 (asserted where used)


# --------------------------------------------------------------------------- simulation with known parameters


def simulate(n_items: int, p: float, q0, q1, seed: int, *, a: str = "alpha", b: str = "beta",
             reversed_share: float = 0.3, human: bool = True, prefix: str = "it") -> dict:
    """A comparisons table for one pair with known truth.

    Each item is truly won by ``a`` with probability ``p``; judge ``judge{e}`` is right with probability
    ``q0[e]`` when ``a`` is better and ``q1[e]`` when ``b`` is; one perfect human (``human1``) per item.
    Every row independently names the systems in reversed order (``system_a=b``) with probability
    ``reversed_share``, its ``winner`` then written for that order ('a' = the row's system_a).

    Returns the frame and the truth: ``a_better`` (items), ``says_a`` (items x judges), ``items``.
    """
    rng = np.random.default_rng(seed)
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    E = len(q0)
    a_better = rng.random(n_items) < p
    correct = rng.random((n_items, E)) < np.where(a_better[:, None], q0, q1)
    says_a = correct == a_better[:, None]
    items = np.array([f"{prefix}{i:05d}" for i in range(n_items)])

    def rows(idx: np.ndarray, rater, kind: str, content_a: np.ndarray) -> pd.DataFrame:
        rev = rng.random(len(idx)) < reversed_share
        return pd.DataFrame({
            "item_id": items[idx], "system_a": np.where(rev, b, a), "system_b": np.where(rev, a, b),
            "rater": rater, "rater_kind": kind,
            "winner": np.where(content_a != rev, "a", "b"),  # content A wins: 'a' if A is the row's system_a
            "swapped": rng.random(len(idx)) < 0.5})

    ii, ee = (x.ravel() for x in np.indices((n_items, E)))
    parts = [rows(ii, np.char.add("judge", ee.astype(str)), "judge", says_a[ii, ee])]
    if human:
        parts.append(rows(np.arange(n_items), "human1", "human", a_better))
    return {"frame": pd.concat(parts, ignore_index=True), "a_better": a_better, "says_a": says_a, "items": items}


def simulated_pair(n_items, p, q0, q1, seed, **kw) -> tuple[PairData, dict]:
    sim = simulate(n_items, p, q0, q1, seed, **kw)
    return pair_data(sim["frame"], kw.get("a", "alpha"), kw.get("b", "beta")), sim


def aligned(pair: PairData, sim: dict) -> np.ndarray:
    """Positions in the simulation of the pair's items (pair_data sorts item ids)."""
    pos = pd.Index(sim["items"]).get_indexer(pair.item_ids)
    assert (pos >= 0).all()
    return pos


def covered(res: WinRate, p: float) -> bool:
    return res.ci_low <= p <= res.ci_high


# --------------------------------------------------------------------------- 1. the data path


def test_simulated_table_round_trips_through_pair_data_with_reversed_rows():
    sim = simulate(400, 0.65, Q0, Q1, seed=11)
    df = sim["frame"]
    rev = (df["system_a"] == "beta").to_numpy()
    assert 0.25 < rev.mean() < 0.35, "the table must really contain rows naming the pair the other way round"

    pair = pair_data(df, "alpha", "beta")
    pos = aligned(pair, sim)
    assert pair.n_items == 400 and pair.judges == ("judge0", "judge1", "judge2")
    # verdicts and human labels in the pair's own orientation, whichever order each row was written in
    np.testing.assert_array_equal(pair.verdicts, np.where(sim["says_a"][pos], 0, 1))
    np.testing.assert_array_equal(pair.human, np.where(sim["a_better"][pos], 0, 1))
    # a reversed row's 'a' is a vote for beta: check one such row explicitly
    row = df[rev & (df["rater"] == "judge1")].iloc[0]
    i = list(pair.item_ids).index(row["item_id"])
    assert pair.verdicts[i, 1] == (1 if row["winner"] == "a" else 0)

    assert pair.k_observed == pytest.approx(sim["says_a"].mean(), abs=TOL)
    assert pair.p_human == pytest.approx(sim["a_better"].mean(), abs=TOL)
    np.testing.assert_allclose(pair.judge_k(), sim["says_a"].mean(axis=0), atol=TOL)

    # the other orientation is the mirror image, and so is PairData.flipped
    back = pair_data(df, "beta", "alpha")
    np.testing.assert_array_equal(back.verdicts, 1 - pair.verdicts)
    np.testing.assert_array_equal(back.human, 1 - pair.human)
    np.testing.assert_array_equal(pair.flipped().verdicts, back.verdicts)
    assert pair.flipped().p_human == pytest.approx(1 - pair.p_human, abs=TOL)

    # pairs(): oriented as most rows show it, with counts
    table = pairs(df)
    assert table[["system_a", "system_b", "n_items", "n_judge_rows", "n_human_rows"]].to_dict("records") == [
        {"system_a": "alpha", "system_b": "beta", "n_items": 400, "n_judge_rows": 1200, "n_human_rows": 400}]
    assert table["judges"].iloc[0] == "judge0, judge1, judge2"


def test_accuracy_counts_match_the_simulation_truth():
    pair, sim = simulated_pair(300, 0.6, Q0, Q1, seed=12)
    pos = aligned(pair, sim)
    mask = label_mask(pair, 0.4, seed=3)
    ab, sa = sim["a_better"][pos][mask], sim["says_a"][pos][mask]
    c = accuracy_counts(pair, mask)
    np.testing.assert_array_equal(c.n0, np.repeat(ab.sum(), 3))
    np.testing.assert_array_equal(c.s0, (ab[:, None] & sa).sum(axis=0))
    np.testing.assert_array_equal(c.n1, np.repeat((~ab).sum(), 3))
    np.testing.assert_array_equal(c.s1, (~ab[:, None] & ~sa).sum(axis=0))


def test_pair_data_errors():
    df = simulate(20, 0.5, Q0, Q1, seed=1)["frame"]
    with pytest.raises(NotApplicable) as e:
        pair_data(df, "alpha", "gamma")
    assert "alpha vs beta" in e.value.fix
    with pytest.raises(NotApplicable):
        pair_data(df, "alpha", "beta", judges=["judge9"])
    with pytest.raises(DataError):
        pair_data(df, "alpha", "beta", ties="coin")
    with pytest.raises(NotApplicable):
        pairs(df.drop(columns="system_b"))


# --------------------------------------------------------------------------- 6. ties and swap-and-sum


def _rows(spec) -> pd.DataFrame:
    """(item, rater, kind, system_a, system_b, winner) tuples -> a comparisons table."""
    df = pd.DataFrame(spec, columns=["item_id", "rater", "rater_kind", "system_a", "system_b", "winner"])
    df["swapped"] = df.groupby(["item_id", "rater"]).cumcount() % 2 == 1
    return df


def test_swap_and_sum_and_tie_handling():
    df = _rows([
        # i1: j says A in the forward order, and 'a' = B in the reversed order -> 1 - 1 = tie
        ("i1", "j", "judge", "A", "B", "a"), ("i1", "j", "judge", "B", "A", "a"),
        ("i1", "h1", "human", "A", "B", "a"), ("i1", "h2", "human", "B", "A", "a"),  # humans tie too
        # i2: j says A twice (once reversed: winner 'b' = A); humans 2:1 for B
        ("i2", "j", "judge", "A", "B", "a"), ("i2", "j", "judge", "B", "A", "b"),
        ("i2", "h1", "human", "A", "B", "b"), ("i2", "h2", "human", "A", "B", "b"),
        ("i2", "h3", "human", "B", "A", "b"),
        # i3: j says A once and 'tie' once -> A; one human says 'tie' -> human tie
        ("i3", "j", "judge", "A", "B", "a"), ("i3", "j", "judge", "B", "A", "tie"),
        ("i3", "h1", "human", "A", "B", "tie"),
        # i4: j says B in one order, tie in the other -> B; no human
        ("i4", "j", "judge", "B", "A", "a"), ("i4", "j", "judge", "A", "B", "tie"),
        # i5: j's only row is a tie; humans A (reversed row, 'b')
        ("i5", "j", "judge", "A", "B", "tie"), ("i5", "h1", "human", "B", "A", "b"),
    ])
    pair = pair_data(df, "A", "B")
    assert list(pair.item_ids) == ["i1", "i2", "i3", "i4", "i5"]
    np.testing.assert_array_equal(pair.verdicts[:, 0], [-1, 0, 0, 1, -1])
    np.testing.assert_array_equal(pair.human, [-1, 1, -1, -1, 0])
    assert pair.judge_ties == (2,) and pair.human_ties == 2
    assert pair.k_observed == pytest.approx(2 / 3, abs=TOL)
    assert pair.p_human == pytest.approx(1 / 2, abs=TOL)

    rnd = pair_data(df, "A", "B", ties="random", seed=5)
    tied_j, tied_h = np.array([0, 4]), np.array([0, 2])
    assert set(rnd.verdicts[tied_j, 0]) <= {0, 1} and set(rnd.human[tied_h]) <= {0, 1}
    np.testing.assert_array_equal(np.delete(rnd.verdicts[:, 0], tied_j), [0, 0, 1])  # untied verdicts unchanged
    np.testing.assert_array_equal(rnd.human[[1, 3, 4]], [1, -1, 0])
    again = pair_data(df, "A", "B", ties="random", seed=5)
    np.testing.assert_array_equal(again.verdicts, rnd.verdicts)
    np.testing.assert_array_equal(again.human, rnd.human)


def test_random_ties_are_seeded_fair_coins():
    # 300 items on which the judge says A in one order and B in the other, and two humans disagree
    n = 300
    spec = []
    for i in range(n):
        spec += [(f"t{i:03d}", "j", "judge", "A", "B", "a"), (f"t{i:03d}", "j", "judge", "A", "B", "b"),
                 (f"t{i:03d}", "h1", "human", "A", "B", "a"), (f"t{i:03d}", "h2", "human", "B", "A", "a")]
    df = _rows(spec)
    dropped = pair_data(df, "A", "B")
    assert (dropped.verdicts == -1).all() and (dropped.human == -1).all()
    assert dropped.judge_ties == (n,) and dropped.human_ties == n and math.isnan(dropped.p_human)

    r1 = pair_data(df, "A", "B", ties="random", seed=1)
    r2 = pair_data(df, "A", "B", ties="random", seed=2)
    assert set(np.unique(r1.verdicts)) == {0, 1} and set(np.unique(r1.human)) == {0, 1}
    assert (r1.verdicts != r2.verdicts).any() and (r1.human != r2.human).any()
    # fair coins: the share of A is within 3 binomial sd of 1/2 for each seed
    for r in (r1, r2):
        for share in (r.k_observed, r.p_human):
            assert abs(share - 0.5) < 3 * math.sqrt(0.25 / n)
    # the judge's and the humans' coins are not the same draws
    assert (r1.verdicts[:, 0] != r1.human).any()


# --------------------------------------------------------------------------- 5. priors and label subsets


def test_parse_prior():
    assert wr.parse_prior("none") == Prior("none")
    assert wr.parse_prior(" None ") == Prior("none")
    assert wr.parse_prior("ratio:0.3") == Prior("ratio", ratio=0.3)
    assert wr.parse_prior("ratio:1") == Prior("ratio", ratio=1.0)
    assert wr.parse_prior("ood:A, B") == Prior("ood", ood=("A", "B"))
    for p in (Prior("none"), Prior("ratio", ratio=0.25), Prior("ood", ood=("x-1", "y-2"))):
        assert wr.parse_prior(p.label) == p
    assert Prior("ratio", ratio=0.5).label == "ratio:0.5"
    for bad in ("", "ratio", "ratio:", "ratio:abc", "ratio:1.5", "ratio:-0.1", "ood:A", "ood:A,", "ood:A,B,C",
                "ratio:nan", "uniform", "none:3"):
        with pytest.raises(DataError) as e:
            wr.parse_prior(bad)
        assert e.value.fix, f"{bad!r}: the error must say how to fix it"
    with pytest.raises(DataError):
        Prior("ood")
    with pytest.raises(DataError):
        Prior("beta")


def test_label_mask_is_seeded_nested_and_uses_only_labelled_items():
    sim = simulate(200, 0.5, Q0, Q1, seed=4)
    df = sim["frame"]
    # take the human label away from 50 items
    unl = set(sim["items"][::4])
    df = df[~((df["rater_kind"] == "human") & df["item_id"].isin(unl))]
    pair = pair_data(df, "alpha", "beta")
    assert pair.n_human == 150
    prev = np.zeros(pair.n_items, bool)
    for r in np.round(np.arange(0.0, 1.01, 0.1), 2):
        m = label_mask(pair, r, seed=7)
        assert m.sum() == round(r * 150)
        assert (pair.human[m] >= 0).all()
        assert (m | ~prev).all(), f"ratio {r}: the items used at a lower ratio must stay in"
        np.testing.assert_array_equal(m, label_mask(pair, r, seed=7))
        prev = m
    assert prev.sum() == 150
    assert (label_mask(pair, 0.3, seed=7) != label_mask(pair, 0.3, seed=8)).any()


def test_ood_prior_is_eqs_12_13_with_concentration_two():
    pair, _ = simulated_pair(20, 0.5, Q0[:2], Q1[:2], seed=1)
    c = Counts(("judge1", "judge0", "other"), n0=np.array([4.0, 10.0, 9.0]), s0=np.array([1.0, 7.0, 9.0]),
               n1=np.array([0.0, 6.0, 9.0]), s1=np.array([0.0, 5.0, 9.0]), source="x vs y")
    a0, b0, a1, b1 = dsm._ds_priors(pair, c)  # reordered to the pair's judges (judge0, judge1)
    np.testing.assert_allclose(a0, [16 / 12, 4 / 6])  # (2 s0 + 2) / (n0 + 2)
    np.testing.assert_allclose(b0, [8 / 12, 8 / 6])  # (2 n0 - 2 s0 + 2) / (n0 + 2)
    np.testing.assert_allclose(a1, [12 / 8, 1.0])
    np.testing.assert_allclose(b1, [4 / 8, 1.0])
    np.testing.assert_allclose(a0 + b0, 2.0)
    np.testing.assert_allclose(a1 + b1, 2.0)
    none = dsm._ds_priors(pair, None)
    for got, want in zip(none, (2.0, 1.0, 2.0, 1.0)):
        np.testing.assert_array_equal(got, [want, want])


def test_prior_errors_and_ood_counts_through_estimate():
    one = simulate(120, 0.6, Q0[:2], Q1[:2], seed=21, a="alpha", b="beta", prefix="x")
    two = simulate(80, 0.4, Q0[:2], Q1[:2], seed=22, a="gamma", b="delta", prefix="y")
    df = pd.concat([one["frame"], two["frame"]], ignore_index=True)
    with pytest.raises(NotApplicable):
        wr.estimate(df, "alpha", "beta", method="bwrs", prior="none")
    with pytest.raises(NotApplicable):
        wr.estimate(df, "alpha", "beta", method="bwrs", prior="ratio:0")
    with pytest.raises(NotApplicable):
        wr.estimate(df, "alpha", "beta", method="bwrs", prior="ood:beta,alpha")
    with pytest.raises(DataError):
        wr.estimate(df, "alpha", "beta", method="em", prior="ratio:0.5")
    # OOD: the judges' counts are the other pair's agreements with its humans, counted here from the truth
    res = wr.estimate(df, "alpha", "beta", method="bwrs", prior="ood:gamma,delta", n_samples=2000)
    ab, sa = two["a_better"], two["says_a"]
    for e, j in enumerate(res.judges):
        assert (j.n0, j.s0) == (ab.sum(), (ab & sa[:, e]).sum())
        assert (j.n1, j.s1) == ((~ab).sum(), (~ab & ~sa[:, e]).sum())
    assert res.prior == "ood:gamma,delta" and res.n_human_labelled == 0


# --------------------------------------------------------------------------- 4. BWRS


def bwrs_by_hand(k_s, k_n, n0, s0, n1, s1, n_samples, seed):
    """Algorithm 1 with numpy, in bwrs's draw order: all q0, then all q1, then all k (judges x samples)."""
    rng = np.random.default_rng(seed)
    col = lambda v: np.asarray(v, float)[:, None]  # noqa: E731
    q0 = rng.beta(col(s0) + 1, col(n0) - col(s0) + 1, size=(len(k_s), n_samples))
    q1 = rng.beta(col(s1) + 1, col(n1) - col(s1) + 1, size=(len(k_s), n_samples))
    k = rng.beta(col(k_s) + 1, col(k_n) - col(k_s) + 1, size=(len(k_s), n_samples))
    p = (k + q1 - 1) / (q0 + q1 - 1)
    return q0, q1, p, (p > 0) & (p < 1)


def test_bwrs_reproduced_draw_for_draw():
    pair, sim = simulated_pair(250, 0.7, Q0, Q1, seed=31)
    pos = aligned(pair, sim)
    mask = label_mask(pair, 0.3, seed=2)
    res = bwrs(pair, labelled=mask, n_samples=4000, seed=9)
    ab, sa = sim["a_better"][pos][mask], sim["says_a"][pos][mask]
    n0, s0 = np.repeat(ab.sum(), 3), (ab[:, None] & sa).sum(axis=0)
    n1, s1 = np.repeat((~ab).sum(), 3), (~ab[:, None] & ~sa).sum(axis=0)
    k_s, k_n = sim["says_a"].sum(axis=0), np.repeat(250, 3)
    q0, q1, p, valid = bwrs_by_hand(k_s, k_n, n0, s0, n1, s1, 4000, seed=9)

    assert res.method == "bwrs" and res.prior == "ratio" and res.n_human_labelled == mask.sum()
    assert res.n_samples == 3 * 4000 and res.n_valid == valid.sum()
    for e, j in enumerate(res.judges):
        assert (j.n0, j.s0, j.n1, j.s1) == (n0[e], s0[e], n1[e], s1[e])
        assert j.k == pytest.approx(k_s[e] / 250, abs=TOL)
        assert j.q0_mean == pytest.approx(q0[e].mean(), abs=TOL)
        assert j.q1_high == pytest.approx(np.quantile(q1[e], 0.975), abs=TOL)
        pe = p[e, valid[e]]
        assert j.n_valid == pe.size
        assert j.p_mean == pytest.approx(pe.mean(), abs=TOL)
        assert (j.p_low, j.p_high) == pytest.approx(tuple(np.quantile(pe, [0.025, 0.975])), abs=TOL)
    pooled = p[valid]
    assert res.p_mean == pytest.approx(pooled.mean(), abs=TOL)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.quantile(pooled, [0.025, 0.975])), abs=TOL)
    assert res.k_observed == pytest.approx(sim["says_a"].mean(), abs=TOL)


def _one_judge_pair(n: int, n_a: int) -> PairData:
    """One judge with n verdicts, n_a of them for A, written half in each row order."""
    ids = np.array([f"k{i:05d}" for i in range(n)])
    rev = np.arange(n) % 2 == 1
    says_a = np.arange(n) < n_a
    df = pd.DataFrame({"item_id": ids, "system_a": np.where(rev, "B", "A"), "system_b": np.where(rev, "A", "B"),
                       "rater": "j", "rater_kind": "judge", "winner": np.where(says_a != rev, "a", "b"),
                       "swapped": False})
    return pair_data(df, "A", "B")


def _counts(n0, s0, n1, s1) -> Counts:
    return Counts(("j",), np.array([n0], float), np.array([s0], float), np.array([n1], float), np.array([s1], float),
                  "F")


def test_bwrs_with_large_counts_is_eq_11_at_the_point_values():
    pair = _one_judge_pair(10_000, 6_000)
    assert pair.k_observed == 0.6
    res = bwrs(pair, ood=_counts(1000, 800, 1000, 700), n_samples=20_000, seed=3)
    p_point = (0.6 + 0.7 - 1) / (0.8 + 0.7 - 1)  # Eq. 11: 0.6
    assert abs(res.p_mean - p_point) < 0.01
    assert abs(res.p_mode - p_point) < 0.01
    # delta-method sd of p = (k + q1 - 1) / (q0 + q1 - 1) with Beta posteriors of k, q0, q1
    D = 0.5
    var = (1 / D) ** 2 * 0.6 * 0.4 / 10_000 + ((D - 0.3) / D ** 2) ** 2 * 0.7 * 0.3 / 1000 \
        + (0.3 / D ** 2) ** 2 * 0.8 * 0.2 / 1000
    width = 2 * 1.959964 * math.sqrt(var)
    assert res.ci_high - res.ci_low == pytest.approx(width, rel=0.1)
    assert res.n_valid == res.n_samples and not res.warnings

    # the KDE mode agrees with scipy's Gaussian KDE maximised on a fine grid
    _, _, p, valid = bwrs_by_hand([6000], [10_000], [1000], [800], [1000], [700], 20_000, seed=3)
    grid = np.linspace(0.5, 0.7, 801)
    scipy_mode = grid[np.argmax(stats.gaussian_kde(p[valid])(grid))]
    assert abs(res.p_mode - scipy_mode) < 0.01


def test_summarize_samples_against_scipy():
    x = np.random.default_rng(0).beta(3, 9, 10_000)  # skewed: mode 0.2, mean 0.25
    s = summarize_samples(x)
    assert s["mean"] == pytest.approx(x.mean(), abs=TOL)
    assert (s["low"], s["high"]) == pytest.approx(tuple(np.quantile(x, [0.025, 0.975])), abs=TOL)
    grid = np.linspace(0, 0.6, 1201)
    assert abs(s["mode"] - grid[np.argmax(stats.gaussian_kde(x)(grid))]) < 0.01
    assert abs(s["mode"] - 0.2) < 0.02
    # the density curve on the 0-1 grid integrates to ~1 and follows the Beta density
    dens = np.asarray(s["density"])
    assert np.trapezoid(dens, s["x"]) == pytest.approx(1.0, abs=0.01)
    assert np.max(np.abs(dens - stats.beta(3, 9).pdf(s["x"]))) < 0.25
    assert math.isnan(summarize_samples(np.array([0.3]))["mean"])
    assert summarize_samples(np.full(10, 0.4))["mode"] == 0.4


def test_bwrs_drops_invalid_samples_and_warns_near_chance():
    pair = _one_judge_pair(400, 220)
    res = bwrs(pair, ood=_counts(20, 11, 20, 10), n_samples=5000, seed=4)  # q0 + q1 ~ 1.0
    _, _, p, valid = bwrs_by_hand([220], [400], [20], [11], [20], [10], 5000, seed=4)
    assert res.n_samples == 5000
    assert res.n_valid == valid.sum() < 0.5 * res.n_samples
    assert res.judges[0].n_valid == res.n_valid
    assert 0 < res.ci_low < res.ci_high < 1
    assert res.p_mean == pytest.approx(p[valid].mean(), abs=TOL)
    assert any("of the samples gave a p between 0 and 1" in w for w in res.warnings)
    assert any("q0 + q1 may be near 1" in w for w in res.warnings)
    with pytest.raises(NotApplicable):
        bwrs(pair, labelled=np.zeros(pair.n_items, bool))


@pytest.mark.slow
def test_bwrs_recovers_p_over_repetitions():
    """100 seeded simulations (300 items, 3 biased judges, 20% of the labels): coverage and error vs k."""
    rows = []
    for r in range(100):
        p = TRUE_PS[r % 4]
        pair, _ = simulated_pair(300, p, Q0, Q1, seed=5000 + r)
        res = bwrs(pair, labelled=label_mask(pair, 0.2, seed=r), n_samples=4000, seed=r)
        rows.append({"p": p, "mean": res.p_mean, "mode": res.p_mode, "k": pair.k_observed, "cover": covered(res, p),
                     "judge_cover": np.mean([j.p_low <= p <= j.p_high for j in res.judges])})
    t = pd.DataFrame(rows)
    err_mean, err_mode, err_k = (t["mean"] - t["p"]).abs().mean(), (t["mode"] - t["p"]).abs().mean(), \
        (t["k"] - t["p"]).abs().mean()
    print(f"BWRS: coverage {t['cover'].mean():.2f} (per judge {t['judge_cover'].mean():.2f}); "
          f"MAE mean {err_mean:.4f} mode {err_mode:.4f}; |k - p| {err_k:.4f}")
    assert t["cover"].mean() >= 0.9
    assert t["judge_cover"].mean() >= 0.9
    assert err_mean < 0.7 * err_k and err_mode < 0.7 * err_k
    # calibration removes most of k's bias (k sits below p as q0 < q1); BWRS keeps a little, from dropping
    # the samples above 1 (p = 0.8) and Eq. 11 being a ratio
    bias, bias_k = (t["mean"] - t["p"]).mean(), (t["k"] - t["p"]).mean()
    print(f"BWRS signed error {bias:.4f}, k {bias_k:.4f}; by p:", t.assign(d=t["mean"] - t["p"]).groupby("p")["d"]
          .mean().round(4).to_dict())
    assert bias_k < -0.05 and abs(bias) < 0.3 * abs(bias_k)


def test_bwrs_flipped_pair_gives_one_minus_p():
    pair, _ = simulated_pair(300, 0.7, Q0, Q1, seed=41)
    mask = label_mask(pair, 0.5, seed=1)
    fwd = bwrs(pair, labelled=mask, n_samples=20_000, seed=1)
    back = bwrs(pair.flipped(), labelled=mask, n_samples=20_000, seed=2)
    # (q0, q1, k) -> (q1, q0, 1 - k) maps Eq. 11's p to 1 - p, and the flipped counts draw exactly those
    assert back.p_mean == pytest.approx(1 - fwd.p_mean, abs=0.005)
    assert back.ci_low == pytest.approx(1 - fwd.ci_high, abs=0.01)
    for j, jb in zip(fwd.judges, back.judges):
        assert (jb.n0, jb.s0, jb.n1, jb.s1) == (j.n1, j.s1, j.n0, j.s0)


# --------------------------------------------------------------------------- 3. DS against exact answers


def exact_posterior(pair: PairData, labelled: np.ndarray, a0, b0, a1, b1) -> dict:
    """Model 1 with discrete labels, by enumerating every labelling of the free items.

    Given the labels h, p and each q are conjugate (Beta-Bernoulli), so the joint integrates in closed form:
    P(h | data) is proportional to B(nA + 1, nB + 1) * prod_e B(a0 + c0, b0 + d0) B(a1 + c1, b1 + d1) / prior
    normalisers, with nA items A-better, c0/d0 of them the judge says A/B, c1/d1 of B-better the judge says B/A.
    """
    n, E = pair.verdicts.shape
    lab = labelled & (pair.human >= 0)
    free = np.flatnonzero(~lab)
    H = np.empty((2 ** len(free), n), dtype=np.int8)
    H[:, lab] = pair.human[lab]
    H[:, free] = (np.arange(2 ** len(free))[:, None] >> np.arange(len(free))) & 1
    A = H == 0
    nA = A.sum(axis=1)
    logw = betaln(nA + 1, n - nA + 1)
    q0m, q1m = [], []
    for e in range(E):
        va, vb = pair.verdicts[:, e] == 0, pair.verdicts[:, e] == 1
        c0, d0, c1, d1 = (A & va).sum(1), (A & vb).sum(1), (~A & vb).sum(1), (~A & va).sum(1)
        logw = logw + betaln(a0[e] + c0, b0[e] + d0) - betaln(a0[e], b0[e]) \
            + betaln(a1[e] + c1, b1[e] + d1) - betaln(a1[e], b1[e])
        q0m.append((a0[e] + c0) / (a0[e] + b0[e] + c0 + d0))
        q1m.append((a1[e] + c1) / (a1[e] + b1[e] + c1 + d1))
    w = np.exp(logw - logsumexp(logw))

    def cdf(x):
        return float(np.sum(w * stats.beta.cdf(x, nA + 1, n - nA + 1)))

    return {"p_mean": float(np.sum(w * (nA + 1) / (n + 2))),
            "q0_mean": np.array([np.sum(w * q) for q in q0m]), "q1_mean": np.array([np.sum(w * q) for q in q1m]),
            "low": brentq(lambda x: cdf(x) - 0.025, 1e-9, 1 - 1e-9),
            "high": brentq(lambda x: cdf(x) - 0.975, 1e-9, 1 - 1e-9)}


def quadrature_p_mean(pair: PairData, labelled: np.ndarray, nodes: int = 10) -> float:
    """E[p | data] for Beta(1,1) on p and Beta(2,1) on every q, by Gauss-Legendre on [0,1]^(1 + 2E).

    The marginal likelihood (labels summed out) is written here directly. The integrand is a polynomial of
    degree <= n + 2 in each variable, so ``nodes`` >= (n + 3) / 2 makes the rule exact.
    """
    n, E = pair.verdicts.shape
    x, wt = roots_legendre(nodes)
    x, wt = (x + 1) / 2, wt / 2
    dims = 1 + 2 * E
    mesh = np.meshgrid(*([x] * dims), indexing="ij")
    W = np.prod(np.meshgrid(*([wt] * dims), indexing="ij"), axis=0)
    p, qs = mesh[0], mesh[1:]
    prior = np.prod([2 * q for q in qs], axis=0)  # Beta(2, 1) densities
    loglik = np.zeros_like(p)
    for i in range(n):
        la, lb = np.log(p), np.log1p(-p)
        for e in range(E):
            q0, q1 = qs[2 * e], qs[2 * e + 1]
            if pair.verdicts[i, e] == 0:
                la, lb = la + np.log(q0), lb + np.log1p(-q1)
            elif pair.verdicts[i, e] == 1:
                la, lb = la + np.log1p(-q0), lb + np.log(q1)
        if labelled[i] and pair.human[i] == 0:
            loglik += la
        elif labelled[i] and pair.human[i] == 1:
            loglik += lb
        else:
            loglik += np.logaddexp(la, lb)
    f = W * prior * np.exp(loglik - loglik.max())
    return float((f * p).sum() / f.sum())


@pytest.fixture(scope="module")
def tiny():
    """16 items, 2 judges with a few missing verdicts, human labels on 4 of them (12 free: 4096 labellings)."""
    sim = simulate(16, 0.6, (0.8, 0.7), (0.7, 0.85), seed=2024)
    df = sim["frame"]
    drop = (df["rater"] == "judge1") & df["item_id"].isin(["it00003", "it00011"])
    pair = pair_data(df[~drop], "alpha", "beta")
    assert (pair.verdicts == -1).sum() == 2
    lab = np.zeros(16, bool)
    lab[[0, 5, 9, 14]] = True
    return pair, lab


@pytest.mark.slow
def test_ds_matches_exact_enumeration_with_the_default_prior(tiny):
    pair, lab = tiny
    ones = np.ones(2)
    exact = exact_posterior(pair, lab, 2 * ones, ones, 2 * ones, ones)
    # two independent exact computations agree (enumeration of labels vs quadrature of the marginal likelihood)
    assert quadrature_p_mean(pair, lab) == pytest.approx(exact["p_mean"], abs=1e-9)
    res = dawid_skene(pair, labelled=lab, chains=4, draws=2000, tune=1000, seed=1)
    print(f"tiny, Beta(2,1): exact p_mean {exact['p_mean']:.4f} [{exact['low']:.4f}, {exact['high']:.4f}], "
          f"DS {res.p_mean:.4f} [{res.ci_low:.4f}, {res.ci_high:.4f}] ess {res.ess:.0f}")
    assert res.ess > 2000 and res.rhat < 1.01 and not res.warnings
    assert res.p_mean == pytest.approx(exact["p_mean"], abs=0.01)
    assert res.ci_low == pytest.approx(exact["low"], abs=0.02)
    assert res.ci_high == pytest.approx(exact["high"], abs=0.02)
    for e, j in enumerate(res.judges):
        assert j.q0_mean == pytest.approx(exact["q0_mean"][e], abs=0.01)
        assert j.q1_mean == pytest.approx(exact["q1_mean"][e], abs=0.01)
    assert res.n_human_labelled == 4 and res.prior == "ratio"


@pytest.mark.slow
def test_ds_matches_exact_enumeration_with_an_ood_prior(tiny):
    pair, lab = tiny
    ood = Counts(("judge0", "judge1"), n0=np.array([10.0, 4.0]), s0=np.array([9.0, 1.0]),
                 n1=np.array([6.0, 30.0]), s1=np.array([2.0, 27.0]), source="x vs y")
    a0, b0, a1, b1 = ((2 * ood.s0 + 2) / (ood.n0 + 2), (2 * (ood.n0 - ood.s0) + 2) / (ood.n0 + 2),
                      (2 * ood.s1 + 2) / (ood.n1 + 2), (2 * (ood.n1 - ood.s1) + 2) / (ood.n1 + 2))
    exact = exact_posterior(pair, lab, a0, b0, a1, b1)
    default = exact_posterior(pair, lab, *([2.0] * 2, [1.0] * 2, [2.0] * 2, [1.0] * 2))
    assert abs(exact["p_mean"] - default["p_mean"]) > 0.03, "the prior must matter here for the test to bite"
    res = dawid_skene(pair, labelled=lab, ood=ood, chains=4, draws=2000, tune=1000, seed=2)
    print(f"tiny, OOD prior: exact p_mean {exact['p_mean']:.4f}, DS {res.p_mean:.4f} (Beta(2,1): "
          f"{default['p_mean']:.4f})")
    assert res.ess > 1500 and res.rhat < 1.01
    assert res.p_mean == pytest.approx(exact["p_mean"], abs=0.01)
    assert res.ci_low == pytest.approx(exact["low"], abs=0.02)
    assert res.ci_high == pytest.approx(exact["high"], abs=0.02)
    for e, j in enumerate(res.judges):
        assert j.q0_mean == pytest.approx(exact["q0_mean"][e], abs=0.015)
        assert j.q1_mean == pytest.approx(exact["q1_mean"][e], abs=0.015)
        assert (j.n0, j.s0, j.n1, j.s1) == (ood.n0[e], ood.s0[e], ood.n1[e], ood.s1[e])
    assert res.prior == "ood:x vs y"


@pytest.mark.slow
@pytest.mark.parametrize("use_ood", [False, True])
def test_numba_kernel_is_the_pymc_models_log_density_and_gradient(use_ood):
    """The kernel nutpie samples equals PyMC's compiled logp and dlogp of ``_ds_model`` (log-odds space,
    Jacobian included) at random points, with labelled and unlabelled items, missing verdicts and an OOD prior."""
    from scipy.special import betaln

    from evalcore.pairwise import _dskernel

    pair, _ = simulated_pair(60, 0.6, Q0, Q1, seed=5)
    pair = dataclasses.replace(pair, verdicts=np.where(np.random.default_rng(0).random(pair.verdicts.shape) < 0.1,
                                                       -1, pair.verdicts).astype(np.int8))
    lab = label_mask(pair, 0.3, seed=1)
    ood = (Counts(pair.judges, n0=np.array([10.0, 4, 7]), s0=np.array([9.0, 1, 5]), n1=np.array([6.0, 30, 3]),
                  s1=np.array([2.0, 27, 3]), source="x") if use_ood else None)
    data = dsm._ds_data(pair, lab, *dsm._ds_priors(pair, ood))
    assert 0 < data["H0"].sum() + data["H1"].sum() < data["w"].size  # both kinds of pattern present
    model = dsm._ds_model(data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    names = [v.name for v in model.value_vars]
    assert names == ["p_logodds__", "q0_logodds__", "q1_logodds__"]
    lbeta = betaln(data["a0"], data["b0"]) + betaln(data["a1"], data["b1"])
    E = len(pair.judges)
    rng = np.random.default_rng(3)
    for x in rng.normal(0.0, 2.0, (20, 1 + 2 * E)):
        point = {"p_logodds__": x[0], "q0_logodds__": x[1:1 + E], "q1_logodds__": x[1 + E:]}
        value, grad = _dskernel.logp_grad(x, data["T0"], data["T1"], data["H0"], data["H1"], data["w"],
                                          data["a0"], data["b0"], data["a1"], data["b1"], lbeta)
        assert value == pytest.approx(float(logp(point)), rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-10, atol=1e-9)
    # the C entry point nutpie calls reads the packed buffer the same way
    import ctypes

    buf = _dskernel.pack(data["T0"], data["T1"], data["H0"], data["H1"], data["w"], data["a0"], data["b0"],
                         data["a1"], data["b1"], lbeta)
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.POINTER(ctypes.c_double),
                          ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                          ctypes.c_void_p)(_dskernel.c_logp.address)
    x = rng.normal(0.0, 1.0, 1 + 2 * E)
    out, val = np.zeros_like(x), np.zeros(1)
    dp = ctypes.POINTER(ctypes.c_double)
    rc = fn(x.size, x.ctypes.data_as(dp), out.ctypes.data_as(dp), val.ctypes.data_as(dp), buf.ctypes.data)
    point = {"p_logodds__": x[0], "q0_logodds__": x[1:1 + E], "q1_logodds__": x[1 + E:]}
    assert rc == 0 and val[0] == pytest.approx(float(logp(point)), abs=1e-9)
    np.testing.assert_allclose(out, dlogp(point), rtol=1e-10, atol=1e-9)
    assert fn(x.size + 1, x.ctypes.data_as(dp), out.ctypes.data_as(dp), val.ctypes.data_as(dp),
              buf.ctypes.data) == -1  # wrong dimension is refused, not read past the end


@pytest.mark.slow
def test_three_samplers_give_the_same_posterior():
    """nutpie on the numba kernel, the same through nutpie's public Python route (draw for draw), and
    PyMC's own NUTS on the PyMC model (within Monte Carlo error). PyMC's sampler, in Python, is the slow one:
    500 tuning steps adapt it on this seven-parameter posterior (its effective sample size is about 1,500 of
    2,000 draws, as with 1,000), and the draws, which set the Monte Carlo error, are kept."""
    pair, _ = simulated_pair(200, 0.65, Q0, Q1, seed=9)
    lab = label_mask(pair, 0.2, seed=0)
    fast = dawid_skene(pair, labelled=lab, seed=4)
    slow = dawid_skene(pair, labelled=lab, seed=4, sampler="nutpie-pyfunc")
    ref = dawid_skene(pair, labelled=lab, seed=4, sampler="pymc", draws=1000, tune=500, chains=2)
    assert ref.ess > 1000 and ref.rhat < 1.01
    print(f"p_mean: kernel {fast.p_mean:.5f}, pyfunc {slow.p_mean:.5f}, pymc {ref.p_mean:.5f} (ess {ref.ess:.0f})")
    assert fast.p_mean == pytest.approx(slow.p_mean, abs=1e-12)
    assert fast.ci_low == pytest.approx(slow.ci_low, abs=1e-12)
    assert abs(fast.p_mean - ref.p_mean) < 0.01
    for jf, jr in zip(fast.judges, ref.judges):
        assert abs(jf.q0_mean - jr.q0_mean) < 0.02 and abs(jf.q1_mean - jr.q1_mean) < 0.02
    with pytest.raises(DataError, match="unknown sampler"):
        dawid_skene(pair, sampler="stan")


@pytest.mark.slow
def test_marginalised_ds_agrees_with_the_discrete_label_reference():
    """36 items, 3 judges, 9 labels: PyMC with Binary Gibbs-Metropolis labels vs the marginalised model.

    The posterior sd of p is ~0.12 and the reference's ESS 300-370 (asserted > 250), so its Monte Carlo error is
    ~0.007 and the 0.02 tolerance ~3 of it. The labels' Gibbs steps need no tuning and NUTS on p and q adapts
    in 200 steps: with 200 tuning steps and 600 draws per chain (two thirds of the sampler's work at 400 and 800)
    the ESS is as large as it was (seed 0: 368 now, 296 then). Over reference seeds 0-2 the differences seen were
    <= 0.014 (mean), 0.027 (interval ends), 0.015 (q means).
    """
    pair, _ = simulated_pair(36, 0.6, Q0, Q1, seed=77)
    lab = label_mask(pair, 0.25, seed=0)
    ref = dawid_skene_reference(pair, labelled=lab, chains=2, draws=600, tune=200, seed=0, cores=2)
    ds = dawid_skene(pair, labelled=lab, chains=4, draws=2000, tune=1000, seed=0)
    print(f"reference p_mean {ref.p_mean:.4f} (ess {ref.ess:.0f}), marginalised {ds.p_mean:.4f} (ess {ds.ess:.0f})")
    assert ref.method == "ds_reference" and ref.n_human_labelled == ds.n_human_labelled == 9
    assert ref.ess > 250 and ds.ess > 2000
    assert abs(ref.p_mean - ds.p_mean) < 0.02
    assert abs(ref.ci_low - ds.ci_low) < 0.04 and abs(ref.ci_high - ds.ci_high) < 0.04
    for jr, jd in zip(ref.judges, ds.judges):
        assert abs(jr.q0_mean - jd.q0_mean) < 0.03
        assert abs(jr.q1_mean - jd.q1_mean) < 0.03


# --------------------------------------------------------------------------- 2. DS parameter recovery


@pytest.mark.slow
def test_ds_recovers_p_over_repetitions():
    """30 seeded simulations (300 items, 3 biased judges, 20% of the labels): coverage and error vs k."""
    rows = []
    for r in range(30):
        p = TRUE_PS[r % 4]
        pair, _ = simulated_pair(300, p, Q0, Q1, seed=1000 + r)
        res = dawid_skene(pair, labelled=label_mask(pair, 0.2, seed=r), seed=r, **FAST)
        rows.append({"p": p, "mean": res.p_mean, "mode": res.p_mode, "k": pair.k_observed, "cover": covered(res, p),
                     "ess": res.ess, "rhat": res.rhat, "div": res.divergences})
    t = pd.DataFrame(rows)
    err_mean, err_mode, err_k = (t["mean"] - t["p"]).abs().mean(), (t["mode"] - t["p"]).abs().mean(), \
        (t["k"] - t["p"]).abs().mean()
    print(f"DS: coverage {t['cover'].mean():.3f}; MAE mean {err_mean:.4f} mode {err_mode:.4f}; |k - p| {err_k:.4f}; "
          f"min ESS {t['ess'].min():.0f}, max R-hat {t['rhat'].max():.4f}")
    assert t["ess"].min() > 400 and t["rhat"].max() < 1.02 and t["div"].sum() == 0
    assert t["cover"].mean() >= 0.9
    assert err_mean < 0.5 * err_k and err_mode < 0.5 * err_k
    assert abs((t["mean"] - t["p"]).mean()) < 0.02


# --------------------------------------------------------------------------- 10. error curve


@pytest.mark.slow
def test_error_curve_falls_with_more_labels():
    pair, _ = simulated_pair(300, 0.75, Q0, Q1, seed=90)
    curve = wr.error_curve(pair, ratios=(0.1, 1.0), repeats=4, seed=10, **FAST)
    assert set(curve.columns) >= {"ratio", "method", "estimator", "error_mean", "error_sd", "repeats", "ci_width",
                                  "p_human"}
    assert (curve["p_human"] == pair.p_human).all()
    obs = curve[curve["method"] == "observed"]
    assert sorted(obs["ratio"]) == [0.1, 1.0] and (obs["estimator"] == "k").all()
    np.testing.assert_allclose(obs["error_mean"], abs(pair.k_observed - pair.p_human), atol=TOL)
    est = curve[curve["method"] != "observed"].set_index(["method", "estimator", "ratio"])
    assert (est["repeats"] == 4).all() and len(est) == 8
    # BWRS rows are |bwrs(...) - p_human| averaged over the repeats, recomputed here
    for ratio in (0.1, 1.0):
        errs = [abs(bwrs(pair, labelled=label_mask(pair, ratio, seed=10 + r), seed=10 + r).p_mean
                    - pair.p_human) for r in range(4)]
        assert est.loc[("bwrs", "mean", ratio), "error_mean"] == pytest.approx(np.mean(errs), abs=TOL)
    print(curve.to_string())
    for m in ("bwrs", "ds"):
        for e in ("mean", "mode"):
            assert est.loc[(m, e, 1.0), "error_mean"] < est.loc[(m, e, 0.1), "error_mean"], (m, e)
        assert est.loc[(m, "mean", 1.0), "ci_width"] < est.loc[(m, "mean", 0.1), "ci_width"]
    assert est.loc[("ds", "mean", 1.0), "error_mean"] < 0.02  # all labels used: p is pinned by them


# --------------------------------------------------------------------------- 9. estimate_all and records


@pytest.fixture(scope="module")
def sample():
    frame = ingest.load_samples()["comparisons"].frame
    truth = json.loads(GROUND_TRUTH.read_text())["comparisons"]["pairs"]
    return frame, truth


def test_estimate_all_with_a_baseline_orients_pairs_against_it(sample):
    frame, _ = sample
    out = wr.estimate_all(frame, method="bwrs", prior="ratio:0.5", baseline="atlas-7b", n_samples=2000)
    assert sorted((r.system_a, r.system_b) for r in out) == [
        ("cirrus-70b", "atlas-7b"), ("dune-8x7b", "atlas-7b"), ("ember-34b", "atlas-7b")]
    for r in out:
        other = pair_data(frame, "atlas-7b", r.system_a)
        assert r.p_human == pytest.approx(1 - other.p_human, abs=TOL)
        assert r.k_observed == pytest.approx(1 - other.k_observed, abs=TOL)
        assert r.prior == "ratio:0.5" and r.n_human_labelled == round(0.5 * other.n_human)
    everything = wr.estimate_all(frame, method="bwrs", prior="ratio:0.5", n_samples=2000)
    assert [(r.system_a, r.system_b) for r in everything] == list(
        pairs(frame)[["system_a", "system_b"]].itertuples(index=False, name=None))
    with pytest.raises(NotApplicable):
        wr.estimate_all(frame, method="bwrs", prior="ratio:0.5", baseline="nobody")


@pytest.mark.slow
def test_ood_auto_takes_the_pair_with_the_closest_observed_win_rate(sample):
    frame, _ = sample
    table = pairs(frame)
    k = {(r.system_a, r.system_b): pair_data(frame, r.system_a, r.system_b).k_observed for r in table.itertuples()}
    k.update({(b, a): 1 - v for (a, b), v in list(k.items())})  # either orientation of the other pair
    out = wr.estimate_all(frame, method="bwrs", prior="none", ood_auto=True, n_samples=2000)
    assert len(out) == 6
    for res in out:
        a, b = res.system_a, res.system_b
        others = {pq: v for pq, v in k.items() if set(pq) != {a, b}}
        near = min(others, key=lambda pq: abs(others[pq] - k[(a, b)]))
        assert wr.closest_pair(frame, a, b) == near
        assert res.prior == f"ood:{near[0]},{near[1]}"
        c = accuracy_counts(pair_data(frame, *near))
        assert [j.n0 for j in res.judges] == list(c.n0) and [j.s1 for j in res.judges] == list(c.s1)
        # orient_like reads any other pair in the direction whose k is closer to this pair's
        for other in others:
            want = other if abs(k[other] - k[(a, b)]) <= abs(1 - k[other] - k[(a, b)]) else other[::-1]
            assert wr.orient_like(frame, a, b, other) == want


RECORD_KEYS = {"system_a", "system_b", "method", "prior", "p_mean", "p_mode", "ci_low", "ci_high", "k_observed",
               "p_human", "n_items", "n_human_labelled", "rhat", "ess", "seconds", "judges"}
RECORD_EXTRAS = {"ties", "n_samples", "n_valid", "divergences", "warnings"}


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if isinstance(x, tuple) and isinstance(y, tuple):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if dataclasses.is_dataclass(x):
        return all(_same(getattr(x, f.name), getattr(y, f.name)) for f in dataclasses.fields(x))
    return x == y


def test_records_are_json_without_nan_and_round_trip():
    one = simulate(150, 0.6, Q0[:2], Q1[:2], seed=51, a="alpha", b="beta", prefix="x")
    two = simulate(150, 0.4, Q0[:2], Q1[:2], seed=52, a="gamma", b="delta", prefix="y", human=False)
    df = pd.concat([one["frame"], two["frame"]], ignore_index=True)
    # BWRS has no R-hat/ESS; gamma vs delta has no human labels: NaNs that must become null
    res = wr.estimate(df, "gamma", "delta", method="bwrs", prior="ood:alpha,beta", n_samples=3000)
    assert math.isnan(res.p_human) and math.isnan(res.rhat) and math.isnan(res.ess)
    rec = res.to_record()
    assert set(rec) == RECORD_KEYS | RECORD_EXTRAS
    assert rec["p_human"] is None and rec["rhat"] is None and rec["ess"] is None
    text = json.dumps(rec, allow_nan=False)  # raises on any NaN left, nested ones included
    assert set(rec["judges"][0]) == {f.name for f in dataclasses.fields(JudgeAccuracy)}
    back = WinRate.from_record(json.loads(text))
    assert _same(back, dataclasses.replace(res, density=((), ())))
    assert back.to_record() == rec
    dense = WinRate.from_record(json.loads(json.dumps(res.to_record(density=True), allow_nan=False)))
    assert _same(dense, res) and len(dense.density[0]) == 201
    frame = res.to_frame()
    assert len(frame) == 1 and "judges" not in frame.columns and frame.loc[0, "system_a"] == "gamma"


# --------------------------------------------------------------------------- 8. the bundled sample


@pytest.mark.slow
def test_ds_on_the_sample_covers_the_ground_truth(sample):
    frame, truth = sample
    assert len(truth) == 6
    hits, lines = 0, []
    for t in truth:
        res = wr.estimate(frame, t["system_a"], t["system_b"], method="ds", prior="ratio:0.5", draws=500, tune=500)
        hits += covered(res, t["p"])
        lines.append(f"{t['system_a']} vs {t['system_b']}: p {t['p']:.2f} p_human {res.p_human:.3f} "
                     f"k {res.k_observed:.3f} DS {res.p_mean:.3f} [{res.ci_low:.3f}, {res.ci_high:.3f}]")
        assert res.n_items == t["n_items"] and len(res.judges) == 3
    print("\n".join(lines))
    assert hits >= 5, "\n".join(lines)


# --------------------------------------------------------------------------- 7. PandaLM end to end


def strict_majority_label(labels: list) -> object:
    """The label given by more than half of the annotators, or None (plain Python, the reference)."""
    for lab in set(labels):
        if 2 * labels.count(lab) > len(labels):
            return lab
    return None


def pandalm_truth() -> pd.DataFrame:
    """Per cmp_key, from the raw JSON: the humans' win rate of response1 (their strict majority: a label
    given by at least 2 of the 3 annotators; 0 = tie, 1 = response1, 2 = response2) and the judges' pooled k."""
    test = json.loads((PANDALM / "testset-v1.json").read_text())
    gpt = {x["idx"]: x["gpt_result"] for x in json.loads((PANDALM / "gpt-3.5-turbo-testset-v1.json").read_text())}
    plm = {x["idx"]: x["pandalm_result"] for x in json.loads((PANDALM / "pandalm-7b-testset-v1.json").read_text())}
    rows = []
    for x in test:
        major = strict_majority_label([x[f"annotator{i}"] for i in (1, 2, 3)])
        judged = [str(gpt[x["idx"]]), str(plm[x["idx"]])]
        rows.append({"cmp_key": x["cmp_key"], "human_a": major == 1, "human_b": major == 2,
                     "judge_a": judged.count("1"), "judge_b": judged.count("2")})
    t = pd.DataFrame(rows).groupby("cmp_key").agg(
        n=("human_a", "size"), ha=("human_a", "sum"), hb=("human_b", "sum"), ja=("judge_a", "sum"),
        jb=("judge_b", "sum"))
    t["p_human"] = t["ha"] / (t["ha"] + t["hb"])
    t["k"] = t["ja"] / (t["ja"] + t["jb"])
    t[["system_a", "system_b"]] = t.index.to_series().str.split("_", expand=True).to_numpy()
    return t.reset_index()


@pytest.fixture(scope="module")
def pandalm():
    if not (PANDALM / "testset-v1.json").exists():
        pytest.skip(f"the PandaLM test set is not at {PANDALM} (copy WeOpenML/PandaLM data/ there)")
    return ingest.load(PANDALM, preset="pandalm").frame, pandalm_truth()


@pytest.fixture(scope="module")
def pandalm_fits(pandalm):
    """DS at prior ratios 0.5 and 1.0 and BWRS at 0.5 for each of the 10 pairs (20 DS fits, ~6 s)."""
    frame, truth = pandalm
    fits = {}
    for t in truth.itertuples():
        a, b = t.system_a, t.system_b
        fits[(a, b)] = {
            "ds05": wr.estimate(frame, a, b, method="ds", prior="ratio:0.5", draws=500, tune=500),
            "ds10": wr.estimate(frame, a, b, method="ds", prior="ratio:1.0", draws=500, tune=500),
            "bwrs05": wr.estimate(frame, a, b, method="bwrs", prior="ratio:0.5"),
        }
    return fits


def test_pandalm_pairs_and_human_win_rates_match_the_raw_json(pandalm):
    frame, truth = pandalm
    table = pairs(frame)
    assert len(table) == 10
    assert set(zip(table.system_a, table.system_b)) == set(zip(truth.system_a, truth.system_b))
    for t in truth.itertuples():
        pair = pair_data(frame, t.system_a, t.system_b)
        assert pair.n_items == t.n
        assert pair.judges == ("gpt-3.5-turbo", "pandalm-7b")
        assert pair.p_human == pytest.approx(t.p_human, abs=TOL), (t.system_a, t.system_b)
        assert pair.k_observed == pytest.approx(t.k, abs=TOL), (t.system_a, t.system_b)
        assert pair.n_human == t.ha + t.hb


@pytest.mark.slow
def test_pandalm_calibrated_estimates(pandalm, pandalm_fits):
    _, truth = pandalm
    fits = pandalm_fits
    rows = []
    for t in truth.itertuples():
        f = fits[(t.system_a, t.system_b)]
        for name, res in f.items():
            assert np.isfinite([res.p_mean, res.p_mode, res.ci_low, res.ci_high]).all(), (t.cmp_key, name)
            assert res.ci_low <= res.p_mean <= res.ci_high
            assert res.p_human == pytest.approx(t.p_human, abs=TOL)
        assert f["ds05"].rhat < 1.01 and f["ds05"].prior == "ratio:0.5"
        assert f["ds10"].n_human_labelled == t.ha + t.hb
        rows.append({"pair": t.cmp_key, "p_human": t.p_human, "k": t.k, "ds05_mean": f["ds05"].p_mean,
                     "ds05_mode": f["ds05"].p_mode, "bwrs05_mode": f["bwrs05"].p_mode, "ds10_mean": f["ds10"].p_mean})
    t = pd.DataFrame(rows)
    err_k = (t["k"] - t["p_human"]).abs().mean()
    err_ds = (t["ds05_mode"] - t["p_human"]).abs().mean()
    err_bwrs = (t["bwrs05_mode"] - t["p_human"]).abs().mean()
    worst_all = (t["ds10_mean"] - t["p_human"]).abs().max()
    print(t.round(3).to_string())
    print(f"mean |p_mode - p_human| at ratio 0.5: DS {err_ds:.4f}, BWRS {err_bwrs:.4f}; "
          f"mean |k - p_human| {err_k:.4f}; max |DS(ratio 1) - p_human| {worst_all:.4f}")
    assert worst_all < 0.05
    assert err_ds <= err_k + 0.02
    assert err_bwrs <= err_k + 0.02


def test_warm_up_loads_the_kernel_and_sampler():
    """The background warm-up the app starts: after it, a fit needs no compile or import."""
    warm_up()
    assert is_compiled()
    from evalcore.pairwise import _dskernel

    assert dsm._kernel() is _dskernel


def test_results_frame_judges_table_and_mean_errors(sample):
    """The tables the page shows and downloads: one row per pair and method, NaN (not None) when undefined."""
    sample, _ = sample
    a, b = "cirrus-70b", "atlas-7b"
    res = [wr.estimate(sample, a, b, method="bwrs", prior="ratio:0.5", seed=1),
           wr.estimate(sample, b, a, method="bwrs", prior="ratio:0.5", seed=1)]
    frame = wr.results_frame(res)
    assert list(frame["pair"]) == [f"{a} vs {b}", f"{b} vs {a}"]
    assert frame["rhat"].isna().all() and frame["rhat"].dtype == float
    assert frame["p_human"].iloc[0] == pytest.approx(1 - frame["p_human"].iloc[1])
    errs = wr.mean_errors(frame)
    expect = ((frame["p_mode"] - frame["p_human"]).abs().mean())
    assert errs["bwrs"] == pytest.approx(expect)
    assert errs["observed"] == pytest.approx(abs(frame["k_observed"].iloc[0] - frame["p_human"].iloc[0]))
    table = wr.judges_table(res)
    assert len(table) == 6 and list(table.columns[:2]) == ["method", "judge"]
