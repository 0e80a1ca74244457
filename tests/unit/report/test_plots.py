"""The plot builders, called on real results of the sample data: what each figure must show.

Every builder of :mod:`evalcore.report.plots` is called on a small result computed by the library
(few resamples), and the figure is checked for its trace types, titles, axis titles, number of
traces or facets, and hover text that carries the interval and n.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.data.ingest import load_samples
from evalcore.pairwise import winrate as wr
from evalcore.pointwise import bias, scale
from evalcore.pointwise.agreement import agreement, count_units
from evalcore.pointwise.bias_report import bias_report
from evalcore.pointwise.distributions import class_distribution
from evalcore.report import plots

PAIR = ("cirrus-70b", "atlas-7b")


@pytest.fixture(scope="module")
def sample():
    tables = load_samples()
    return tables["ratings"].frame, tables["comparisons"].frame


@pytest.fixture(scope="module")
def ratings(sample):
    return sample[0]


@pytest.fixture(scope="module")
def comparisons(sample):
    return sample[1]


@pytest.fixture(scope="module")
def units(ratings):
    return count_units(ratings)


@pytest.fixture(scope="module")
def judges(ratings):
    return sorted(ratings.loc[ratings["rater_kind"] == "judge", "rater"].unique())


@pytest.fixture(scope="module")
def agreement_table(units):
    return agreement(units, by=("language", "criterion"), n_boot=20, seed=0)


def _flat(values) -> list[str]:
    return [str(v) for v in np.asarray(values, dtype=object).ravel()]


# --------------------------------------------------------------------------- agreement


def test_agreement_heatmap_for_a_judge(agreement_table, judges):
    judge = judges[0]
    fig = plots.agreement_figure(agreement_table, measure="percent_agreement", judge=judge,
                                 by=["language", "criterion"])
    (trace,) = fig.data
    assert isinstance(trace, go.Heatmap)
    assert fig.layout.title.text == f"percent agreement: {judge} vs humans"
    assert fig.layout.yaxis.title.text == "language" and fig.layout.xaxis.title.text == "criterion"
    sub = agreement_table[(agreement_table["judge"] == judge) & (agreement_table["measure"] == "percent_agreement")]
    assert np.asarray(trace.z).shape == (sub["language"].nunique(), sub["criterion"].nunique())
    assert (trace.zmin, trace.zmax) == (0, 1)
    hover = _flat(trace.customdata)
    assert all("95% CI [" in h and "n = " in h and " units" in h and " ratings" in h for h in hover if h)
    # One ▼ per cell whose pairwise agreement gap is flagged, and only there.
    gap = agreement_table[(agreement_table["judge"] == judge)
                          & (agreement_table["measure"] == "pairwise_agreement_gap") & agreement_table["flagged"]]
    assert len(gap) > 0  # the sample's designed low-resource cells
    assert sum("▼" in t for t in _flat(trace.text)) == len(gap)


def test_agreement_dot_plot_for_the_humans(units):
    table = agreement(units, by=("language",), n_boot=20, seed=0)
    fig = plots.agreement_figure(table, measure="fleiss_kappa", judge=None, by=["language"])
    (trace,) = fig.data
    assert isinstance(trace, go.Scatter) and trace.mode == "markers+text"
    assert fig.layout.title.text == "Fleiss' kappa: humans among themselves"
    assert fig.layout.xaxis.title.text == "Fleiss' kappa" and fig.layout.yaxis.title.text == "language"
    humans = table[table["judge"].isna() & (table["measure"] == "fleiss_kappa")]
    assert sorted(trace.y) == sorted(humans["language"].astype(str))
    assert len(trace.error_x.array) == len(humans) and trace.error_x.visible
    assert all("95% CI [" in h and "n = " in h for h in trace.customdata)
    assert not any("▼" in t for t in trace.text)  # the humans are never flagged against themselves


def test_agreement_single_value_and_missing_measure(units, agreement_table):
    table = agreement(units, by=(), n_boot=20, seed=0)
    fig = plots.agreement_figure(table, measure="percent_agreement", judge=None, by=[])
    (trace,) = fig.data
    assert list(trace.y) == ["all"] and len(trace.x) == 1
    empty = plots.agreement_figure(agreement_table, measure="no_such_measure", judge=None, by=["language"])
    assert not empty.data and empty.layout.title.text == "No no_such_measure for this selection"


def test_class_distribution_facets_by_class_and_row(units):
    dist = class_distribution(units, by=("language", "criterion"))
    fig = plots.class_distribution_figure(dist, row="language", filters={"criterion": "LA"})
    assert fig.data and all(isinstance(t, go.Bar) for t in fig.data)
    labels = {a.text for a in fig.layout.annotations}
    assert set(plots.CLASS_LABELS.values()) <= labels  # one column per human agreement class
    languages = set(dist["language"].astype(str))
    assert languages <= labels  # one row per language
    assert {t.name for t in fig.data} == {"humans", *dist["source"].unique()}
    assert all("units in this class" in t.hovertemplate for t in fig.data)
    assert fig.layout.yaxis.tickformat == ".0%"
    empty = plots.class_distribution_figure(dist, row=None, filters={"criterion": "no such criterion"})
    assert not empty.data and "No units" in empty.layout.title.text


# --------------------------------------------------------------------------- bias


@pytest.fixture(scope="module")
def report(ratings):
    return bias_report(ratings, n_boot=20, seed=0)


def test_score_share_bars_per_source_and_row(ratings, judges):
    freq = scale.score_frequencies(ratings, by=["language"], judges=judges)
    fig = plots.score_share_figure(freq, criterion="LA", row="language")
    assert all(isinstance(t, go.Bar) for t in fig.data)
    assert fig.layout.title.text == "Scores given on LA"
    assert {t.name for t in fig.data} == {"humans", *judges}
    assert {a.text for a in fig.layout.annotations} == set(freq["language"].astype(str))
    assert all("ratings" in t.hovertemplate for t in fig.data)
    flat = plots.score_share_figure(scale.score_frequencies(ratings, judges=judges), criterion="LA")
    assert len(flat.data) == 1 + len(judges) and not flat.layout.annotations
    assert plots.score_share_figure(freq, criterion="nope").layout.title.text == "No scores for nope"


def test_score_axes_have_one_tick_per_score_in_numeric_order():
    """A 0-10 scale: every score is a category, 10 after 9 (not after 1), nothing at 2.5."""
    freq = pd.DataFrame({"criterion": "c", "source": "humans", "score": np.arange(11.0), "share": 1 / 11,
                         "count": 1})
    fig = plots.score_share_figure(freq, criterion="c")
    axes = [fig.layout[a] for a in fig.layout if a.startswith("xaxis")]
    assert axes and all(ax.type == "category" for ax in axes)
    assert list(axes[0].categoryarray) == [str(v) for v in range(11)]


def test_effect_figure_one_trace_per_source_with_intervals(report):
    res = report.results
    fig = plots.effect_figure(res, measure="mean_shift", y="criterion", title="Judge mean minus human mean")
    rows = res[(res["measure"] == "mean_shift") & res["estimate"].notna()]
    assert all(isinstance(t, go.Scatter) for t in fig.data)
    # One trace per source, and a legend entry (no point of its own) for the flagged results.
    assert [t.name for t in fig.data[-1:]] == [plots.FLAGGED_LABEL] and list(fig.data[-1].x) == [None]
    legend_only = [t for t in fig.data if list(t.x) == [None]]
    fig.data = tuple(t for t in fig.data if list(t.x) != [None])
    assert len(legend_only) == 1
    assert {t.name for t in fig.data} == set(rows["judge"].fillna("humans"))
    assert fig.layout.title.text == "Judge mean minus human mean"
    assert fig.layout.xaxis.title.text == "judge mean minus human mean" and fig.layout.yaxis.title.text == "criterion"
    assert fig.layout.yaxis.type == "category"  # groups are categories, never a numeric axis
    assert sum(len(t.x) for t in fig.data) == len(rows)
    for t in fig.data:
        assert t.error_x.visible and len(t.error_x.array) == len(t.x)
        assert "n = %{customdata[2]}" in t.hovertemplate and "%{customdata[0]:.3f}" in t.hovertemplate
        lo, hi = np.asarray(t.customdata[:, 0], float), np.asarray(t.customdata[:, 1], float)
        assert np.all((lo <= np.asarray(t.x)) & (np.asarray(t.x) <= hi))
    # Flagged results are outlined diamonds (the sample's judges are skewed to the top).
    symbols = np.concatenate([np.asarray(t.marker.symbol) for t in fig.data])
    assert (symbols == "diamond").sum() == int(rows["flagged"].sum()) > 0
    assert all("flagged: a bias, q = " in h for t in fig.data for h, s in zip(t.customdata[:, 3], t.marker.symbol)
               if s == "diamond")
    assert any(s.type == "line" and s.x0 == 0 for s in fig.layout.shapes)  # the zero line
    assert plots.effect_figure(res, measure="no_such", y="criterion").layout.title.text == "No no_such to show"


def test_effect_figure_draws_the_other_direction_apart_from_flags():
    """Flagged: filled diamonds; significant in the direction that is not a bias: hollow grey circles, with a
    legend entry; not significant: plain dots. Tables without the test columns still draw."""
    rows = pd.DataFrame({"judge": ["J", "J", "J", None], "criterion": ["a", "b", "c", "a"],
                         "measure": "alpha_difference", "estimate": [-0.3, 0.2, 0.01, 0.4],
                         "ci_low": [-0.4, 0.1, -0.1, 0.3], "ci_high": [-0.2, 0.3, 0.1, 0.5], "n": 50,
                         "q_value": [0.001, 0.002, 0.6, np.nan], "flagged": [True, False, False, False],
                         "opposite": [False, True, False, False]})
    fig = plots.effect_figure(rows, measure="alpha_difference", y="criterion")
    j = next(t for t in fig.data if t.name == "J")
    assert list(j.marker.symbol) == ["diamond", "circle-open", "circle"]
    assert list(j.marker.color)[1] == plots.OPPOSITE_COLOR and list(j.marker.color)[0] != plots.OPPOSITE_COLOR
    assert list(j.customdata[:, 3]) == ["<br>flagged: a bias, q = 0.001",
                                        "<br>significant in the other direction: not a bias, q = 0.002",
                                        "<br>not significant, q = 0.6"]
    names = [t.name for t in fig.data]
    assert names[-2:] == [plots.FLAGGED_LABEL, plots.OPPOSITE_LABEL] == \
        ["flagged: a bias (q <= 0.05)", "significant, not a bias (other direction)"]
    humans = next(t for t in fig.data if t.name == "humans")
    assert list(humans.marker.symbol) == ["circle"] and list(humans.customdata[:, 3]) == [""]
    old = plots.effect_figure(rows.drop(columns=["q_value", "opposite"]), measure="alpha_difference", y="criterion")
    assert [t.name for t in old.data] == ["J", "humans", plots.FLAGGED_LABEL]


def test_perplexity_by_score_lines(ratings, judges):
    pbs = bias.perplexity_by_score(ratings, judges=judges, n_boot=20, seed=0)
    fig = plots.perplexity_by_score_figure(pbs, criterion="LA")
    assert len(fig.data) == 1 + len(judges)
    assert all(isinstance(t, go.Scatter) and t.mode == "lines+markers" and t.error_y.visible for t in fig.data)
    assert fig.layout.title.text == "Mean perplexity by score, LA"
    assert fig.layout.xaxis.title.text == "score" and fig.layout.yaxis.title.text == "mean perplexity"
    assert all("n=%{customdata[0]}" in t.hovertemplate for t in fig.data)


def test_correlation_heatmaps_side_by_side(ratings, judges):
    corr = bias.criterion_correlations(ratings, judges=judges, n_boot=0, seed=0)
    fig = plots.correlation_heatmaps(corr, sources=["humans", judges[0]])
    assert len(fig.data) == 2 and all(isinstance(t, go.Heatmap) for t in fig.data)
    assert [a.text for a in fig.layout.annotations] == ["humans", judges[0]]
    assert fig.layout.title.text == "Correlation between criteria across items"
    n_crit = ratings["criterion"].nunique()
    assert all(np.asarray(t.z).shape == (n_crit, n_crit) for t in fig.data)
    assert [t.showscale for t in fig.data] == [False, True]


def test_conditional_distribution_bars(ratings, judges):
    cond = bias.conditional_distribution(ratings, given="LA", target="OCQ", threshold=1.0, judges=judges, n_boot=0)
    fig = plots.conditional_figure(cond)
    assert fig.data and all(isinstance(t, go.Bar) for t in fig.data)
    assert {t.name for t in fig.data} == {"given above threshold", "given at or below"}
    assert {a.text for a in fig.layout.annotations} == {"humans", *judges}  # one facet per source
    assert all("of %{customdata[1]}" in t.hovertemplate for t in fig.data)


# --------------------------------------------------------------------------- win rates


def test_winrate_density_with_k_and_the_humans(comparisons):
    r = wr.estimate(comparisons, *PAIR, method="bwrs", prior="ratio:0.3", seed=0)
    pair = wr.pair_data(comparisons, *PAIR)
    fig = plots.winrate_density_figure([r], k=pair.k_observed, p_human=pair.p_human)
    (trace,) = fig.data
    assert isinstance(trace, go.Scatter) and trace.name == f"BWRS: mode {r.p_mode:.3f}"
    assert fig.layout.title.text == "Posterior of the true win rate p"
    assert fig.layout.xaxis.title.text == "p" and fig.layout.yaxis.title.text == "density"
    assert len(fig.layout.shapes) == 2  # k and the humans' p
    texts = {a.text for a in fig.layout.annotations}
    assert texts == {f"k = {pair.k_observed:.3f}", f"humans {pair.p_human:.3f}"}
    no_humans = plots.winrate_density_figure([r], k=pair.k_observed, p_human=float("nan"))
    assert len(no_humans.layout.shapes) == 1


def test_forest_one_row_per_pair(comparisons):
    frame = wr.results_frame(wr.estimate_all(comparisons, method="bwrs", prior="ratio:0.3", seed=0))
    fig = plots.forest_figure(frame)
    names = [t.name for t in fig.data]
    assert names == ["BWRS", plots.METHOD_LABEL["observed"], plots.METHOD_LABEL["human"]]
    assert list(fig.layout.yaxis.ticktext) == list(frame["pair"])
    est = fig.data[0]
    assert est.error_x.visible and len(est.x) == len(frame)
    assert "95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]" in est.hovertemplate
    assert fig.layout.title.text == "Win rate of the first system, calibrated and raw"
    assert fig.layout.xaxis.title.text.startswith("p (share of items")


def test_error_curve_per_method_and_estimator(comparisons):
    pair = wr.pair_data(comparisons, *PAIR)
    curve = wr.error_curve(pair, ratios=(0.3, 1.0), repeats=2, methods=("bwrs",), seed=0)
    fig = plots.error_curve_figure(curve)
    assert [t.name for t in fig.data] == ["BWRS (mean)", "BWRS (mode)", plots.METHOD_LABEL["observed"]]
    assert all(len(t.x) == 2 for t in fig.data)
    assert [t.error_y.visible for t in fig.data] == [True, True, False]
    assert fig.layout.xaxis.title.text.startswith("prior data ratio")
    assert fig.layout.yaxis.title.text == "|estimate - humans' p|"
    assert fig.layout.title.text == "Estimation error against the share of human labels used"
