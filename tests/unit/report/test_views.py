"""The page views of :mod:`evalcore.report.views` (one module per page): small inputs written out, and the
sample's results."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from evalcore.data.ingest import load_samples
from evalcore.pairwise import winrate as wr
from evalcore.pairwise.pairs import label_mask, pair_data, pairs
from evalcore.report.views import agreement, bias, common, home, win_rates


@pytest.fixture(scope="module")
def sample():
    t = load_samples()
    return t["ratings"].frame, t["comparisons"].frame


def _agreement_rows() -> pd.DataFrame:
    return pd.DataFrame({
        "language": ["hi", "hi", "bn", "en", "bn", np.nan],
        "judge": [None, "j1", "j1", "j2", "j2", "j1"],
        "measure": ["percent_agreement"] + ["pairwise_agreement_gap"] * 5,
        "flagged": [False, True, True, False, True, True],
    })


def test_flagged_cells_counts_by_the_first_grouping_column():
    flags = agreement.flagged_cells(_agreement_rows(), ["language", "criterion"])
    assert flags.n == 4 and flags.by == "language"
    # Most flagged first; a row whose group value is missing counts in n but has no place to name.
    assert flags.places == (("bn", 2), ("hi", 1))


def test_flagged_cells_without_grouping_lists_the_judges():
    flags = agreement.flagged_cells(_agreement_rows(), [])
    assert flags.n == 4 and flags.by is None
    assert flags.places == (("j1", 1), ("j1", 1), ("j2", 1), ("j1", 1))


def test_flagged_cells_when_nothing_is_flagged():
    rows = _agreement_rows().assign(flagged=False)
    assert agreement.flagged_cells(rows, ["language"]) == agreement.FlaggedCells(0, "language", ())


def test_levels_sources_and_humans_named():
    frame = pd.DataFrame({"lang": ["hi", None, "en", "hi", 3], "judge": [None, "a", None, "b", "a"],
                          "source": ["humans", "a", "b", "humans", "a"]})
    assert common.levels(frame, "lang") == ["3", "en", "hi"]
    assert list(agreement.for_sources(frame, ["humans", "a"]).index) == [0, 1, 3, 4]
    assert list(agreement.for_sources(frame, ["humans", None]).index) == [0, 3]
    named = common.with_humans_named(frame)
    assert list(named["judge"]) == ["(humans)", "a", "(humans)", "b", "a"]
    assert frame["judge"].isna().sum() == 2  # the input is not changed


def test_bias_selections_on_the_sample(sample):
    ratings, _ = sample
    assert common.judge_names(ratings) == ["gpt-4/per-criterion", "gpt-4/single-call"]
    la = sorted(ratings.loc[ratings["criterion"] == "LA", "score"].unique())
    assert bias.score_levels(ratings, "LA") == la
    assert bias.thresholds(ratings, "LA") == la[:-1]
    one = pd.DataFrame({"criterion": ["c", "c"], "score": [2.0, 2.0]})
    assert bias.thresholds(one, "c") == [2.0]  # a single score can still be chosen


def test_criterion_view():
    res = pd.DataFrame({"criterion": ["LA", "OCQ", None, "LA"], "estimate": [1, 2, 3, 4]})
    assert list(bias.criterion_view(res, "LA", grouped=True)["estimate"]) == [1, 3, 4]
    assert bias.criterion_view(res, "LA", grouped=False) is res


def test_pair_selections_on_the_sample(sample):
    _, comparisons = sample
    table = pairs(comparisons)
    labels = win_rates.pair_labels(table)
    assert list(labels) == [f"{a} vs {b}" for a, b in zip(table["system_a"], table["system_b"])]
    assert labels["cirrus-70b vs atlas-7b"] == ("cirrus-70b", "atlas-7b")
    judges = win_rates.pair_judges(table, "cirrus-70b vs atlas-7b")
    assert judges == sorted(comparisons.loc[(comparisons["rater_kind"] == "judge"), "rater"].unique())
    assert win_rates.labelled_pairs(table) == [n for n, h in zip(labels, table["n_human_rows"]) if h > 0]
    assert win_rates.systems(table) == sorted(set(comparisons["system_a"]) | set(comparisons["system_b"]))


def test_pair_judges_and_labelled_pairs_written_out():
    pairs = pd.DataFrame({"system_a": ["x", "y"], "system_b": ["y", "z"], "judges": ["j2, j1", " "],
                          "n_human_rows": [0, 4]})
    assert win_rates.pair_judges(pairs, "x vs y") == ["j2", "j1"]
    assert win_rates.pair_judges(pairs, "y vs z") == []
    assert win_rates.labelled_pairs(pairs) == ["y vs z"]
    assert win_rates.systems(pairs) == ["x", "y", "z"]


def test_pair_counts():
    verdicts = np.array([[0, 1, -1], [-1, -1, 0], [1, 1, 1]], dtype=np.int8)
    pair = SimpleNamespace(verdicts=verdicts, n_human=147, p_human=0.789)
    assert win_rates.verdict_count(pair) == 6
    assert win_rates.labels_used(pair, 0.6) == 88 and win_rates.labels_used(pair, 0.0) == 0
    assert win_rates.labels_used(pair, 1.0) == 147
    assert win_rates.mode_minus_humans(SimpleNamespace(p_mode=0.8), pair) == pytest.approx(0.011)
    assert win_rates.mode_minus_humans(SimpleNamespace(p_mode=0.8), SimpleNamespace(p_human=math.nan)) is None


def test_labels_used_matches_label_mask(sample):
    _, comparisons = sample
    pair = pair_data(comparisons, "cirrus-70b", "atlas-7b")
    for ratio in (0.0, 0.05, 0.3, 0.6, 1.0):
        assert win_rates.labels_used(pair, ratio) == int(label_mask(pair, ratio, seed=3).sum())


def test_judge_accuracy_and_warnings_on_the_sample(sample):
    _, comparisons = sample
    r = wr.estimate(comparisons, "cirrus-70b", "atlas-7b", method="bwrs", prior="ratio:0.3", seed=0)
    acc = win_rates.judges_by_method([r])
    assert set(acc["method"]) == {"BWRS"}
    raw = wr.judges_table([r])
    assert acc.drop(columns="method").equals(raw.drop(columns="method"))
    frame = wr.results_frame([r])
    assert win_rates.with_warnings(frame) == int((frame["warnings"] != "").sum())
    assert win_rates.with_warnings(frame.assign(warnings=["near chance"])) == 1


def test_curve_pairs():
    curve = pd.DataFrame({"n_pairs": [6, 6, 5]})
    assert win_rates.curve_pairs(curve) == 6


def test_saved_datasets_and_unlocked():
    when = datetime(2026, 1, 2, 3, 4, tzinfo=timezone.utc)
    items = [SimpleNamespace(name="demo", tables={"ratings": 1200, "comparisons": 30}, status="ready",
                             source="sample_data/", updated=when),
             SimpleNamespace(name="upload", tables={}, status="needs_mapping", source="a.csv", updated=when)]
    saved = home.saved_datasets(items)
    assert list(saved.columns) == ["name", "tables", "status", "source", "updated (UTC)"]
    assert saved["tables"].tolist() == ["ratings: 1,200 rows, comparisons: 30 rows", "(not imported yet)"]
    assert saved["status"].tolist() == ["ready", "needs column mapping"]
    assert saved["updated (UTC)"].tolist() == ["2026-01-02 03:04"] * 2
    av = pd.DataFrame({"analysis": ["familiarity", "win_rate"], "table": ["ratings", "comparisons"],
                       "available": [True, False], "title": ["A", "B"], "missing": ["", "x"], "other": [1, 2]})
    assert home.unlocked(av, "comparisons").to_dict("records") == [
        {"available": False, "title": "B", "where": "Win rates page · CLI: evalcore winrate", "missing": "x"}]
    assert home.unlocked(av, "ratings")["where"].tolist() == ["Bias page · CLI: evalcore bias"]
    assert home.unlocked_pages(av, "ratings") == ["Bias"] and home.unlocked_pages(av, "comparisons") == []


def test_every_unlocked_analysis_has_a_page():
    """The landing page lists only analyses with a page: each one says where it is shown."""
    from evalcore.data.summary import unlocks

    ratings, comparisons = (v.frame for v in load_samples().values())
    listed = set()
    for kind, frame in (("ratings", ratings), ("comparisons", comparisons)):
        av = unlocks(frame, table=kind)
        listed |= set(av["analysis"])
        assert home.unlocked(av, kind)["where"].str.contains(" page").all()
    assert listed == set(home.ANALYSIS_PAGES)
    assert home.unlocked_pages(unlocks(ratings, table="ratings"), "ratings") == [
        "Agreement", "Bias", "Superficial quality", "Alt-Test", "True scores"]
    assert home.unlocked_pages(unlocks(comparisons, table="comparisons"), "comparisons") == [
        "Win rates", "Superficial quality", "Position bias", "True scores", "Leaderboard"]


def test_first_judges_and_raters_with_role():
    assert bias.first_judges(["a", "b"]) == ["a", "b"]
    assert bias.first_judges(list("abcdefg")) == list("abcd")
    roles = pd.DataFrame({"rater": ["ann", "gpt-4", "bob"], "rows": [2, 2, 1], "role": ["human", "judge", "human"]})
    assert home.raters_with_role(roles, "judge") == ["gpt-4"]
    assert home.raters_with_role(roles, "human") == ["ann", "bob"]


def _gap_rows(rows):
    return pd.DataFrame([{"language": lang, "judge": j, "measure": "pairwise_agreement_gap", "estimate": e,
                          "ci_low": e - 0.05, "ci_high": e + 0.05, "n": n, "flagged": f} for lang, j, e, n, f in rows])


def test_agreement_verdict_orders_by_mean_gap_and_claims_no_flag_while_pending():
    from evalcore.report.views.agreement import agreement_verdict

    table = _gap_rows([("en", "a-judge", -0.20, 100, True), ("fr", "a-judge", -0.02, 100, False),
                       ("en", "z-judge", -0.05, 300, False), ("fr", "z-judge", -0.01, 100, False)])
    v = agreement_verdict(table, by=["language"], judges=["a-judge", "z-judge"])
    assert v.ranked == ("z-judge", "a-judge") and v.opening == "z-judge"  # -0.04 beats -0.11, whatever the name
    assert v.sentences[0].startswith("**z-judge**") and "0.040 below" in v.sentences[0]
    assert "lowest in en: -0.050 [-0.100, +0.000]" in v.sentences[0] and "flagged in none" in v.sentences[0]
    assert "lowest in en: -0.200" in v.sentences[1] and "flagged in 1 of 2 cells" in v.sentences[1]
    pending = agreement_verdict(table, by=["language"], judges=["a-judge", "z-judge"], pending=True)
    assert pending.opening == "z-judge"  # the same judge before and after the intervals
    assert not any("flagged" in t or "[" in t for t in pending.sentences[:2])
    assert "follow" in pending.sentences[-1]
    many = agreement_verdict(table, by=["language"], judges=["a-judge", "z-judge"], limit=1)
    assert many.sentences[-1] == "Then, by mean gap: a-judge (-0.110, 1 flagged)."
    assert agreement_verdict(table.iloc[:0], by=["language"], judges=["a-judge"]).opening is None


def test_undrawn_names_what_an_effect_plot_leaves_out():
    """The familiarity plot dropped judge/language points without a value, silently."""
    recs = pd.DataFrame({"judge": ["j1", "j1", "j2"], "language": ["en", "sw", "sw"],
                         "measure": ["tau_difference"] * 3, "estimate": [0.1, np.nan, np.nan],
                         "note": ["", "no perplexity for these items", "no perplexity for these items"]})
    text = bias.undrawn(recs, measure="tau_difference", y="language")
    assert text == "Not drawn, no value: j1 / sw, j2 / sw (no perplexity for these items)."
    assert bias.undrawn(recs.iloc[:1], measure="tau_difference", y="language") is None


def test_leaderboard_view_says_what_n_counts():
    """'n' read 90 for 1,980 items because it counts the resampled inputs; the table says so."""
    board = pd.DataFrame({"rank": [1, 2], "judge": ["a", "b"], "estimate": [0.5, 0.4], "ci_low": [0.4, 0.3],
                          "ci_high": [0.6, 0.5], "n": [90, 90], "n_unit": ["inputs", "inputs"], "n_items": [1980, 1980],
                          "diff_to_best": [0.0, -0.1], "diff_ci_low": [0.0, -0.2], "diff_ci_high": [0.0, 0.0],
                          "worse_than_best": [False, False]})
    view = agreement.leaderboard_view(board)
    assert list(view.columns[4:6]) == ["n (inputs)", "items"] and view["items"].tolist() == [1980, 1980]
    items = agreement.leaderboard_view(board.assign(n_unit="items", n=1980))
    assert "n (items)" in items.columns and "items" not in items.columns


def test_agreement_verdict_keeps_a_long_list_short():
    from evalcore.report.views.agreement import agreement_verdict

    table = _gap_rows([("en", f"j{k:02d}", -0.01 * k, 100, False) for k in range(20)])
    v = agreement_verdict(table, by=["language"], judges=[f"j{k:02d}" for k in range(20)])
    assert len(v.sentences) == 4 and v.sentences[-1].endswith("and 11 more (the judge leaderboard ranks them all).")


def test_warning_lines_read_whole():
    frame = pd.DataFrame({"system_a": ["a", "c", "e"], "system_b": ["b", "d", "f"], "method": ["bwrs", "ds", "ds"],
                          "warnings": ["few labels", "", "R-hat 1.2"]})
    assert win_rates.warning_lines(frame) == ["a vs b (BWRS): few labels", "e vs f (Dawid-Skene): R-hat 1.2"]
    assert win_rates.warning_lines(frame, limit=1)[-1].startswith("... and 1 more")
