"""Tests of evalcore.data.sample: determinism, canonical layout, and the designed effects.

The effects are checked with plain pandas/numpy/scipy computations written here, not
with evalcore's analysis modules, so that these tests pin down the data themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalcore.columns import (
    COMPARISONS,
    HUMAN,
    JUDGE,
    RATER_KINDS,
    RATINGS,
    WINNERS,
    column_names,
    required_columns,
)
from evalcore.data import sample
from evalcore.data.validation import validate
from tests.helpers import REPO

SAMPLE_DIR = REPO / "sample_data"
THREE_LEVEL = ("LA", "OCQ", "TQ")
BINARY = ("PC", "H")


@pytest.fixture(scope="module")
def data() -> sample.SampleData:
    return sample.make_samples(seed=sample.DEFAULT_SEED)


@pytest.fixture(scope="module")
def ratings(data) -> pd.DataFrame:
    return data.ratings


@pytest.fixture(scope="module")
def comparisons(data) -> pd.DataFrame:
    return data.comparisons


@pytest.fixture(scope="module")
def truth(data) -> dict:
    return data.truth


@pytest.fixture(scope="module")
def lang_info(truth) -> pd.DataFrame:
    return pd.DataFrame(truth["ratings"]["languages"]).set_index("language")


def _group(lang_info: pd.DataFrame) -> pd.Series:
    """'latin-high' for Latin-script high-resource languages, 'other' for the rest."""
    latin_high = (lang_info["script"] == "latin") & (lang_info["resource"] == "high")
    return pd.Series(np.where(latin_high, "latin-high", "other"), index=lang_info.index)


# ----------------------------------------------------------------------------------
# Determinism, files, API
# ----------------------------------------------------------------------------------


def test_same_seed_same_frames():
    one, two = sample.make_samples(seed=7), sample.make_samples(seed=7)
    pd.testing.assert_frame_equal(one.ratings, two.ratings)
    pd.testing.assert_frame_equal(one.comparisons, two.comparisons)
    assert one.truth == two.truth


def test_different_seed_different_data():
    a, b = sample.make_ratings(seed=1), sample.make_ratings(seed=2)
    assert len(a) != len(b) or not a["score"].equals(b["score"])
    ca, cb = sample.make_comparisons(seed=1), sample.make_comparisons(seed=2)
    assert not ca["winner"].equals(cb["winner"])


def test_public_functions_agree_with_make_samples(data):
    pd.testing.assert_frame_equal(sample.make_ratings(), data.ratings)
    pd.testing.assert_frame_equal(sample.make_comparisons(), data.comparisons)
    assert sample.ground_truth() == data.truth


def test_written_files_are_byte_identical(tmp_path):
    first = sample.write_samples(tmp_path / "one", seed=11)
    second = sample.write_samples(tmp_path / "two", seed=11)
    assert [p.name for p in first] == [sample.RATINGS_FILE, sample.COMPARISONS_FILE, sample.TRUTH_FILE]
    for p, q in zip(first, second):
        assert p.read_bytes() == q.read_bytes()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> list[Path]:
    return sample.write_samples(tmp_path_factory.mktemp("sample_data"), seed=sample.DEFAULT_SEED)


def test_committed_sample_data_matches_generator(written):
    for path in written:
        committed = SAMPLE_DIR / path.name
        assert committed.exists(), f"{committed} is missing: run python -m evalcore.data.sample"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed} differs from the generator's output: run python -m evalcore.data.sample"
        )


def test_files_are_small_and_round_trip(written, data):
    for path in written:
        assert path.stat().st_size < 5_000_000
    r = pd.read_csv(written[0])
    c = pd.read_csv(written[1])
    pd.testing.assert_frame_equal(r, data.ratings, check_dtype=False)
    pd.testing.assert_frame_equal(c, data.comparisons, check_dtype=False)
    assert c["swapped"].dtype == bool
    assert json.loads(written[2].read_text(encoding="utf-8")) == data.truth


def test_main_writes_files(tmp_path, capsys):
    assert sample.main(["--out", str(tmp_path), "--seed", "3"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([sample.RATINGS_FILE, sample.COMPARISONS_FILE, sample.TRUTH_FILE])
    assert "wrote" in capsys.readouterr().out
    assert json.loads((tmp_path / sample.TRUTH_FILE).read_text())["seed"] == 3


def test_main_rejects_bad_seed(tmp_path):
    with pytest.raises(SystemExit) as exc:
        sample.main(["--out", str(tmp_path), "--seed", "-1"])
    assert exc.value.code == 2
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_bad_seed_raises(bad):
    with pytest.raises(ValueError, match="seed"):
        sample.make_ratings(seed=bad)


def test_seed_is_keyword_only():
    with pytest.raises(TypeError):
        sample.make_ratings(3)  # type: ignore[misc]


def test_sizes(ratings, comparisons):
    assert 30_000 <= len(ratings) <= 80_000
    assert 5_000 <= len(comparisons) <= 20_000


# ----------------------------------------------------------------------------------
# Canonical layout and valid values
# ----------------------------------------------------------------------------------


def test_ratings_columns_are_canonical(ratings):
    canonical = column_names(RATINGS)
    assert set(required_columns(RATINGS)) <= set(ratings.columns)
    assert list(ratings.columns) == [c for c in canonical if c in ratings.columns]
    assert {"criterion", "sample", "position", "perplexity", "language", "task"} <= set(ratings.columns)
    for col in required_columns(RATINGS) + ("criterion", "sample", "perplexity", "language", "task"):
        assert ratings[col].notna().all(), col


def test_comparisons_columns_are_canonical(comparisons):
    canonical = column_names(COMPARISONS)
    assert set(required_columns(COMPARISONS)) <= set(comparisons.columns)
    assert list(comparisons.columns) == [c for c in canonical if c in comparisons.columns]
    expected = {"system_a", "system_b", "swapped", "prob_a", "prob_a_swap_position", "prob_a_swap_id",
                "score_a", "score_b", "superficial_a", "superficial_b", "subset"}
    assert expected <= set(comparisons.columns)
    for col in required_columns(COMPARISONS) + ("system_a", "system_b", "swapped", "superficial_a",
                                                "superficial_b", "subset"):
        assert comparisons[col].notna().all(), col


def test_sample_data_passes_validation(ratings, comparisons):
    r = validate(ratings, table=RATINGS, file=sample.RATINGS_FILE)
    c = validate(comparisons, table=COMPARISONS, file=sample.COMPARISONS_FILE)
    assert len(r.frame) == len(ratings) and len(c.frame) == len(comparisons)


def test_rating_values_are_valid(ratings):
    assert set(ratings["rater_kind"]) == set(RATER_KINDS)
    assert set(ratings["criterion"]) == set(THREE_LEVEL + BINARY)
    for crit in THREE_LEVEL:
        assert set(ratings.loc[ratings["criterion"] == crit, "score"]) == {0, 1, 2}, crit
    for crit in BINARY:
        assert set(ratings.loc[ratings["criterion"] == crit, "score"]) == {0, 1}, crit
    assert ratings["score"].dtype.kind == "i"
    assert (ratings["perplexity"] > 1).all()
    assert (ratings.groupby("item_id")["perplexity"].nunique() == 1).all()
    for col in ("language", "task"):
        assert (ratings.groupby("item_id")[col].nunique() == 1).all()
    assert not ratings.duplicated(["item_id", "rater", "criterion", "sample"]).any()
    kinds = ratings.groupby("rater")["rater_kind"].nunique()
    assert (kinds == 1).all()


def test_sample_and_position_columns(ratings, truth):
    judges = truth["ratings"]["judges"]
    sampled = [name for name, j in judges.items() if j["samples"] > 1]
    assert sampled == [sample.PER_CRITERION_JUDGE]
    s = ratings.groupby("rater")["sample"].agg(["min", "max"])
    assert s.loc[sample.PER_CRITERION_JUDGE].tolist() == [0, 4]
    assert (s.drop(index=sample.PER_CRITERION_JUDGE)["max"] == 0).all()
    per_item = ratings[ratings["rater"] == sample.PER_CRITERION_JUDGE].groupby(["item_id", "criterion"]).size()
    assert (per_item == 5).all()

    single = ratings[ratings["rater"] == sample.SINGLE_CALL_JUDGE]
    assert single["position"].notna().all()
    assert ratings.loc[ratings["rater"] != sample.SINGLE_CALL_JUDGE, "position"].isna().all()
    orders = single.groupby("item_id")["position"].apply(lambda s: tuple(sorted(s)))
    assert (orders == (1, 2, 3, 4, 5)).all()
    # The order is randomised per item: every criterion comes first about a fifth of the time.
    first = single.loc[single["position"] == 1, "criterion"].value_counts(normalize=True)
    assert set(first.index) == set(THREE_LEVEL + BINARY)
    assert first.between(0.15, 0.25).all()


def test_languages_tasks_and_items(ratings, lang_info):
    assert ratings["language"].nunique() >= 8
    assert set(ratings["language"]) == set(lang_info.index)
    assert (lang_info["script"] == "non-latin").sum() >= 3
    assert (lang_info["resource"] == "low").sum() >= 2
    assert set(lang_info["script"]) == {"latin", "non-latin"}
    assert set(lang_info["resource"]) == {"high", "medium", "low"}
    assert ratings["task"].nunique() == 3
    per_cell = ratings.groupby(["language", "task"])["item_id"].nunique()
    assert per_cell.between(30, 50).all()


def test_human_annotators_per_item(ratings):
    humans = ratings[ratings["rater_kind"] == HUMAN]
    n = humans.groupby("item_id")["rater"].nunique()
    assert n.index.nunique() == ratings["item_id"].nunique()  # every item has a human
    counts = n.value_counts()
    assert set(counts.index) == {1, 2, 3}
    short = (n < 3).mean()
    assert 0.08 <= short <= 0.17
    assert counts[1] >= 30 and counts[2] >= 30
    # Annotators are language-specific and rate every criterion of the items they rate.
    lang_of_rater = humans.groupby("rater")["language"].nunique()
    assert (lang_of_rater == 1).all()
    assert (humans.groupby(["item_id", "rater"]).size() == 5).all()


def test_comparison_values_are_valid(comparisons, truth):
    assert set(comparisons["winner"]) <= set(WINNERS)
    assert set(comparisons["rater_kind"]) == set(RATER_KINDS)
    assert comparisons["swapped"].dtype == bool
    assert set(comparisons["subset"]) == {"Natural", "Adversarial"}
    assert (comparisons[["superficial_a", "superficial_b"]] > 0).all().all()
    assert not comparisons.duplicated(["item_id", "rater", "swapped"]).any()
    # Output properties are per item, identical on every row of the item.
    for col in ("system_a", "system_b", "superficial_a", "superficial_b", "subset"):
        assert (comparisons.groupby("item_id")[col].nunique() == 1).all(), col
    judges = comparisons[comparisons["rater_kind"] == JUDGE]
    assert set(judges["winner"]) == {"a", "b"}  # judges never tie
    rows = judges.groupby(["item_id", "rater"])["swapped"].agg(["size", "sum"])
    assert (rows["size"] == 2).all() and (rows["sum"] == 1).all()
    assert judges["rater"].nunique() == 3
    scored = judges[~judges["swapped"]]
    assert scored[["score_a", "score_b"]].notna().all().all()
    assert scored[["score_a", "score_b"]].stack().between(1, 10).all()
    assert judges.loc[judges["swapped"], ["score_a", "score_b"]].isna().all().all()


def test_comparison_humans(comparisons):
    humans = comparisons[comparisons["rater_kind"] == HUMAN]
    n = humans.groupby("item_id")["rater"].nunique()
    assert n.index.nunique() == comparisons["item_id"].nunique()
    assert set(n.unique()) == {1, 2, 3}
    tie = (humans["winner"] == "tie").mean()
    assert 0.01 <= tie <= 0.06
    assert humans[["prob_a", "score_a", "score_b"]].isna().all().all()


# ----------------------------------------------------------------------------------
# Ratings: the designed effects
# ----------------------------------------------------------------------------------


def _human_majority(ratings: pd.DataFrame) -> pd.DataFrame:
    """Strict majority of the humans of each (item, criterion) with 2+ annotators."""
    h = ratings[ratings["rater_kind"] == HUMAN]
    n = h.groupby(["item_id", "criterion"])["score"].size().rename("n")
    k = h.groupby(["item_id", "criterion", "score"]).size().rename("k").reset_index()
    k = k.join(n, on=["item_id", "criterion"])
    maj = k[(k["n"] >= 2) & (2 * k["k"] > k["n"])]
    return maj[["item_id", "criterion", "score"]].rename(columns={"score": "majority"})


def _judge_first_sample(ratings: pd.DataFrame) -> pd.DataFrame:
    return ratings[(ratings["rater_kind"] == JUDGE) & (ratings["sample"] == 0)]


def _top(frame: pd.DataFrame) -> pd.Series:
    return frame["score"] == np.where(frame["criterion"].isin(THREE_LEVEL), 2, 1)


def test_humans_skewed_to_top_and_judges_more(ratings):
    three = ratings[ratings["criterion"].isin(THREE_LEVEL)]
    h = three[three["rater_kind"] == HUMAN]
    share = h["score"].value_counts(normalize=True)
    assert share[2] > 0.5 and share[2] > share[1] > share[0]
    human_top = (h["score"] == 2).mean()
    for judge, g in _judge_first_sample(three).groupby("rater"):
        assert (g["score"] == 2).mean() > human_top + 0.15, judge
    # Binary criteria: 'no problem' (1) dominates; problematic content is rare.
    pc = ratings[(ratings["criterion"] == "PC") & (ratings["rater_kind"] == HUMAN)]["score"].mean()
    hal = ratings[(ratings["criterion"] == "H") & (ratings["rater_kind"] == HUMAN)]["score"].mean()
    assert pc > 0.95 and 0.7 < hal < pc


def test_judge_skew_is_larger_in_non_latin_and_low_resource(ratings, lang_info):
    group = _group(lang_info)
    d = ratings.assign(top=_top(ratings), group=ratings["language"].map(group))
    human_top = d[d["rater_kind"] == HUMAN].groupby("group")["top"].mean()
    for judge, g in _judge_first_sample(d).groupby("rater"):
        gap = g.groupby("group")["top"].mean() - human_top
        assert gap["other"] > gap["latin-high"] + 0.15, (judge, gap.to_dict())
    # Within each script, the skew grows as resources fall.
    per_lang = (_judge_first_sample(d).groupby("language")["top"].mean()
                - d[d["rater_kind"] == HUMAN].groupby("language")["top"].mean())
    info = lang_info.assign(gap=per_lang)
    for script, g in info.groupby("script"):
        by_res = g.groupby("resource")["gap"].mean()
        assert by_res["low"] > by_res["high"] + 0.1, (script, by_res.to_dict())
    nl = info.groupby("script")["gap"].mean()
    assert nl["non-latin"] > nl["latin"]


def test_judge_agreement_with_human_majority_is_lower_outside_latin_high(ratings, lang_info):
    maj = _human_majority(ratings)
    j = _judge_first_sample(ratings).merge(maj, on=["item_id", "criterion"])
    j["agree"] = j["score"] == j["majority"]
    j["group"] = j["language"].map(_group(lang_info))
    j["script"] = j["language"].map(lang_info["script"])
    j["resource"] = j["language"].map(lang_info["resource"])
    for judge, g in j.groupby("rater"):
        pa = g.groupby("group")["agree"].mean()
        assert pa["latin-high"] > 0.72, judge
        assert pa["latin-high"] - pa["other"] > 0.1, (judge, pa.to_dict())
        lh = g[g["group"] == "latin-high"]["agree"].mean()
        # both non-Latin high-resource (zh, ja) and Latin low-resource (sw) fall short
        nlh = g[(g["script"] == "non-latin") & (g["resource"] == "high")]["agree"].mean()
        llow = g[(g["script"] == "latin") & (g["resource"] == "low")]["agree"].mean()
        assert lh - nlh > 0.05 and lh - llow > 0.05, (judge, lh, nlh, llow)
    # The ground truth's realised agreement table says the same thing.


def test_realized_truth_matches_data(ratings, truth, lang_info):
    maj = _human_majority(ratings)
    j = _judge_first_sample(ratings).merge(maj, on=["item_id", "criterion"])
    pa = (j["score"] == j["majority"]).groupby([j["language"], j["rater"]]).mean()
    real = truth["ratings"]["realized"]["by_language"]
    for (lang, rater), v in pa.items():
        assert real[lang]["judge_majority_agreement"][rater] == pytest.approx(v, abs=1e-4)
    counts = ratings[ratings["rater_kind"] == HUMAN].groupby("item_id")["rater"].nunique().value_counts()
    assert {int(k): v for k, v in truth["ratings"]["realized"]["annotators_per_item"].items()} == counts.to_dict()


def _interval_alpha(values: np.ndarray) -> float:
    """Krippendorff's alpha (interval metric) for complete data: units x coders."""
    m = values.shape[1]
    within = ((values[:, :, None] - values[:, None, :]) ** 2).sum(axis=(1, 2)) / (m - 1)
    d_o = within.sum() / values.size
    flat = values.ravel()
    d_e = ((flat[:, None] - flat[None, :]) ** 2).sum() / (flat.size * (flat.size - 1))
    return 1.0 - d_o / d_e


def test_inter_sample_alpha_below_perfect(ratings):
    j = ratings[(ratings["rater"] == sample.PER_CRITERION_JUDGE) & (ratings["criterion"] == "OCQ")]
    wide = j.pivot(index="item_id", columns="sample", values="score").to_numpy(dtype=float)
    assert wide.shape[1] == 5
    alpha = _interval_alpha(wide[:600])
    assert 0.5 < alpha < 0.9
    # and the samples really differ on a good share of items
    assert (wide.min(axis=1) != wide.max(axis=1)).mean() > 0.15


def test_interval_alpha_helper_against_known_values():
    perfect = np.array([[1, 1], [2, 2], [0, 0]], dtype=float)
    assert _interval_alpha(perfect) == pytest.approx(1.0)
    # By hand: D_o = (2 * 1^2 / 1 + 0) / 4 = 0.5; D_e = 2 * (1 + 4 + 4 + 1 + 1 + 0) / (4 * 3) = 11/6.
    v = np.array([[1, 2], [3, 3]], dtype=float)
    assert _interval_alpha(v) == pytest.approx(1 - 0.5 / (11 / 6))
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(0)
    w = rng.integers(0, 3, size=(40, 5)).astype(float)
    w[:20] = w[:20, :1]  # some agreement
    expected = krippendorff.alpha(reliability_data=w.T, level_of_measurement="interval")
    assert _interval_alpha(w) == pytest.approx(expected)


def test_familiarity_bias_only_for_per_criterion_judge(ratings, truth):
    assert truth["ratings"]["judges"][sample.PER_CRITERION_JUDGE]["familiarity_slope"] > 0
    three = ratings[ratings["criterion"].isin(THREE_LEVEL)]
    taus = {}
    for rater_kind, name in ((HUMAN, "humans"), (JUDGE, sample.SINGLE_CALL_JUDGE),
                             (JUDGE, sample.PER_CRITERION_JUDGE)):
        g = three[three["rater_kind"] == HUMAN] if name == "humans" else three[three["rater"] == name]
        taus[name] = stats.kendalltau(g["score"], g["perplexity"]).statistic
    # Perplexity is drawn independently of quality, so humans and the other judge only
    # pick up the sample's chance correlation (|tau| ~ 0.02-0.05 with 1,200 items).
    assert abs(taus["humans"]) < 0.06, taus
    assert abs(taus[sample.SINGLE_CALL_JUDGE]) < 0.06, taus
    assert taus[sample.PER_CRITERION_JUDGE] < -0.1, taus
    assert taus[sample.PER_CRITERION_JUDGE] < taus["humans"] - 0.12, taus
    # Mean perplexity of the texts a judge rated top vs bottom (Stureborg et al.'s view).
    j = three[three["rater"] == sample.PER_CRITERION_JUDGE]
    by_score = j.groupby("score")["perplexity"].mean()
    assert by_score[2] < by_score[0] - 2


def _mean_criterion_correlation(frame: pd.DataFrame) -> float:
    wide = frame.pivot_table(index=["item_id", "rater", "sample"], columns="criterion", values="score")
    corr = wide[list(THREE_LEVEL)].dropna().corr().to_numpy()
    return float(corr[np.triu_indices(3, k=1)].mean())


def test_anchoring_raises_inter_criterion_correlation(ratings):
    humans = _mean_criterion_correlation(ratings[ratings["rater_kind"] == HUMAN])
    single = _mean_criterion_correlation(ratings[ratings["rater"] == sample.SINGLE_CALL_JUDGE])
    per = ratings[(ratings["rater"] == sample.PER_CRITERION_JUDGE) & (ratings["sample"] == 0)]
    per_crit = _mean_criterion_correlation(per)
    assert single > humans + 0.2, (single, humans)
    assert single > per_crit + 0.2, (single, per_crit)
    assert humans > 0.1  # criteria share real quality


def test_anchoring_pulls_later_criteria_toward_the_first(ratings):
    """Stureborg-style: a criterion's score given the first-scored criterion was low vs high."""
    s = ratings[ratings["rater"] == sample.SINGLE_CALL_JUDGE]
    first = s[(s["position"] == 1) & s["criterion"].isin(THREE_LEVEL)][["item_id", "criterion", "score"]]
    first = first.rename(columns={"criterion": "first", "score": "first_score"})
    later = s[(s["position"] > 1) & s["criterion"].isin(THREE_LEVEL)].merge(first, on="item_id")
    gap_judge = (later.loc[later["first_score"] == 2, "score"].mean()
                 - later.loc[later["first_score"] < 2, "score"].mean())
    # Same contrast for the per-criterion judge (no anchoring) on the same items and criteria.
    p = ratings[(ratings["rater"] == sample.PER_CRITERION_JUDGE) & (ratings["sample"] == 0)]
    pf = p.merge(first[["item_id", "first"]], left_on=["item_id", "criterion"], right_on=["item_id", "first"])
    pf = pf[["item_id", "score"]].rename(columns={"score": "first_score"})
    pl = p[p["criterion"].isin(THREE_LEVEL)].merge(later[["item_id", "criterion"]], on=["item_id", "criterion"])
    pl = pl.merge(pf, on="item_id")
    gap_free = pl.loc[pl["first_score"] == 2, "score"].mean() - pl.loc[pl["first_score"] < 2, "score"].mean()
    assert gap_judge > gap_free + 0.15, (gap_judge, gap_free)


# ----------------------------------------------------------------------------------
# Comparisons: the designed effects
# ----------------------------------------------------------------------------------


def test_true_win_rates_are_realised_exactly(truth):
    winners = truth["comparisons"]["true_winner"]
    for pair in truth["comparisons"]["pairs"]:
        assert pair["realized_share_a_better"] == pytest.approx(pair["p"], abs=1e-9)
        assert pair["n_items"] == sample.ITEMS_PER_PAIR
    assert len(winners) == len(truth["comparisons"]["pairs"]) * sample.ITEMS_PER_PAIR
    assert len({p["p"] for p in truth["comparisons"]["pairs"]}) == len(truth["comparisons"]["pairs"])


def test_human_win_rates_track_true_p(comparisons, truth):
    winners = pd.Series(truth["comparisons"]["true_winner"])
    humans = comparisons[(comparisons["rater_kind"] == HUMAN) & (comparisons["winner"] != "tie")]
    # Human accuracy against the true labels is the documented 0.95.
    acc = (humans["winner"] == humans["item_id"].map(winners)).mean()
    assert acc == pytest.approx(sample.HUMAN_ACCURACY, abs=0.02)
    rate = humans.assign(a=humans["winner"] == "a").groupby(["system_a", "system_b"])["a"].mean()
    for pair in truth["comparisons"]["pairs"]:
        expected = 0.95 * pair["p"] + 0.05 * (1 - pair["p"])
        got = rate[(pair["system_a"], pair["system_b"])]
        assert got == pytest.approx(expected, abs=0.06), pair
        assert got == pytest.approx(pair["p"], abs=0.08), pair


def test_judge_accuracy_per_order_matches_q0_q1(comparisons, truth):
    winners = pd.Series(truth["comparisons"]["true_winner"])
    j = comparisons[comparisons["rater_kind"] == JUDGE].copy()
    j["truth"] = j["item_id"].map(winners)
    n_a = int((winners == "a").sum())
    n_b = int((winners == "b").sum())
    for name, params in truth["comparisons"]["judges"].items():
        g = j[j["rater"] == name]
        q0, q1, pi = params["q0"], params["q1"], params["position_bias"]
        for swapped, sign in ((False, 1), (True, -1)):
            o = g[g["swapped"] == swapped]
            emp_q0 = (o.loc[o["truth"] == "a", "winner"] == "a").mean()
            emp_q1 = (o.loc[o["truth"] == "b", "winner"] == "b").mean()
            tol0 = 4 * np.sqrt((q0 + sign * pi) * (1 - q0 - sign * pi) / n_a)
            tol1 = 4 * np.sqrt((q1 - sign * pi) * (1 - q1 + sign * pi) / n_b)
            assert emp_q0 == pytest.approx(q0 + sign * pi, abs=tol0), (name, swapped, emp_q0)
            assert emp_q1 == pytest.approx(q1 - sign * pi, abs=tol1), (name, swapped, emp_q1)
            key = "b_shown_first" if swapped else "a_shown_first"
            assert params["accuracy_by_order"][key]["q0"] == pytest.approx(q0 + sign * pi)
            assert params["realized"][key]["q0"] == pytest.approx(emp_q0, abs=1e-4)
        both_q0 = (g.loc[g["truth"] == "a", "winner"] == "a").mean()
        both_q1 = (g.loc[g["truth"] == "b", "winner"] == "b").mean()
        assert both_q0 == pytest.approx(q0, abs=0.04) and both_q1 == pytest.approx(q1, abs=0.04)


def test_position_flips_exist_and_favour_the_first_shown(comparisons, truth):
    j = comparisons[comparisons["rater_kind"] == JUDGE]
    wide = j.pivot(index=["item_id", "rater"], columns="swapped", values="winner")
    flips = wide[wide[False] != wide[True]]
    flip_rate = flips.groupby(level="rater").size() / wide.groupby(level="rater").size()
    biases = {n: p["position_bias"] for n, p in truth["comparisons"]["judges"].items()}
    # more position bias, more flips; every flip goes to the output shown first
    order = sorted(biases, key=biases.get)
    assert list(flip_rate[order]) == sorted(flip_rate[order])
    assert flip_rate.min() > 0.05
    assert ((flips[False] == "a") & (flips[True] == "b")).all()
    # first-position preference: share of verdicts for the output shown first
    shown_first = np.where(j["swapped"], j["winner"] == "b", j["winner"] == "a")
    pref = pd.Series(shown_first, index=j.index).groupby(j["rater"]).mean()
    for name, pi in biases.items():
        assert pref[name] > 0.5 + pi / 2, (name, pref[name])


def test_calibraeval_probabilities(comparisons, truth):
    cal = truth["comparisons"]["calibraeval"]
    probs = ["prob_a", "prob_a_swap_position", "prob_a_swap_id"]
    has = comparisons[probs].notna().all(axis=1)
    rows = comparisons[has]
    assert set(rows["rater"]) == {cal["judge"]} and not rows["swapped"].any()
    assert comparisons.loc[~has, probs].isna().all().all()
    assert rows["item_id"].is_unique and len(rows) == len(truth["comparisons"]["true_winner"])
    assert ((rows[probs] > 0) & (rows[probs] < 1)).all().all()
    # Consistency with the verdicts: default prompt -> swapped=false row; s2 -> swapped=true row.
    assert ((rows["prob_a"] > 0.5) == (rows["winner"] == "a")).all()
    swapped_rows = comparisons[(comparisons["rater"] == cal["judge"]) & comparisons["swapped"]]
    merged = rows[["item_id", "prob_a_swap_id"]].merge(swapped_rows[["item_id", "winner"]], on="item_id")
    assert ((merged["prob_a_swap_id"] < 0.5) == (merged["winner"] == "a")).all()
    # Selection bias: position-1 bias makes P('A') drop when 'A' moves to position 2;
    # position-1 and 'A'-token bias make P('A') for a plus P('A') for b exceed 1.
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    # Away from 0 and 1 the 4-decimal rounding moves a logit by less than 1e-3.
    inner = rows[(rows[probs] > 0.05).all(axis=1) & (rows[probs] < 0.95).all(axis=1)]
    assert len(inner) > 100
    pos = (logit(inner["prob_a"]) - logit(inner["prob_a_swap_position"])) / 2
    both = (logit(inner["prob_a"]) + logit(inner["prob_a_swap_id"])) / 2
    assert pos.to_numpy() == pytest.approx(cal["position_logit"], abs=2e-3)
    assert both.to_numpy() == pytest.approx(cal["position_logit"] + cal["id_logit"], abs=2e-3)
    token = (logit(inner["prob_a_swap_position"]) + logit(inner["prob_a_swap_id"])) / 2
    assert token.to_numpy() == pytest.approx(cal["id_logit"], abs=2e-3)
    assert pos.mean() > 0.2 and token.mean() > 0.1  # both biases are really there
    assert (rows["prob_a"] >= rows["prob_a_swap_position"]).all()
    assert (rows["prob_a"] + rows["prob_a_swap_id"]).mean() > 1.1


def test_superficial_bias_hurts_on_adversarial(comparisons, truth):
    winners = pd.Series(truth["comparisons"]["true_winner"])
    base = comparisons.drop_duplicates("item_id").set_index("item_id")
    truth_a = winners.reindex(base.index) == "a"
    longer_a = base["superficial_a"] > base["superficial_b"]
    adv = base["subset"] == "Adversarial"
    assert 0.2 < adv.mean() < 0.4
    # In Adversarial the worse output is usually the longer one; in Natural the better one.
    longer_is_better = longer_a == truth_a
    assert longer_is_better[adv].mean() < 0.2
    assert longer_is_better[~adv].mean() > 0.5
    betas = {n: p["superficial_beta"] for n, p in truth["comparisons"]["judges"].items()}
    gaps = {}
    for name in betas:
        s = comparisons[(comparisons["rater"] == name) & ~comparisons["swapped"]].set_index("item_id")
        right = np.where(truth_a.reindex(s.index), s["score_a"] > s["score_b"], s["score_b"] > s["score_a"])
        right = pd.Series(right, index=s.index)
        sub = s["subset"]
        gaps[name] = right[sub == "Natural"].mean() - right[sub == "Adversarial"].mean()
        assert gaps[name] > 0.1, (name, gaps[name])
        # beta recovered by least squares on the score difference (quality unobserved: only
        # the sign is checked, plus ordering across judges below)
    order = sorted(betas, key=betas.get)
    assert [gaps[n] for n in order] == sorted(gaps[n] for n in order)


def test_ground_truth_documents_the_parameters(truth):
    r, c = truth["ratings"], truth["comparisons"]
    assert truth["seed"] == sample.DEFAULT_SEED
    assert r["judges"][sample.SINGLE_CALL_JUDGE]["anchoring_weight"] == sample.ANCHORING_WEIGHT
    assert r["judges"][sample.PER_CRITERION_JUDGE]["familiarity_slope"] == sample.FAMILIARITY_SLOPE
    assert r["judges"][sample.PER_CRITERION_JUDGE]["samples"] == 5
    for lang in r["languages"]:
        assert lang["script"] in ("latin", "non-latin") and lang["resource"] in ("high", "medium", "low")
    lh = [l["judge_leniency"] for l in r["languages"] if l["script"] == "latin" and l["resource"] == "high"]
    rest = [l["judge_leniency"] for l in r["languages"] if not (l["script"] == "latin" and l["resource"] == "high")]
    assert max(lh) < min(rest)
    for name, j in c["judges"].items():
        assert 0.5 < j["q0"] - j["position_bias"] and j["q0"] + j["position_bias"] < 1
        assert j["accuracy_by_order"]["a_shown_first"]["q1"] == pytest.approx(j["q1"] - j["position_bias"])
    assert set(c["true_winner"].values()) == {"a", "b"}
