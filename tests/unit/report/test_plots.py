"""The plot builders, called on real results of the sample data: what each figure must show.

Every builder of :mod:`evalcore.report.plots` is called on a small result computed by the library
(few resamples), and the figure is checked for its trace types, titles, axis titles, number of
traces or facets, and hover text that carries the interval and n.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.data.ingest import load_samples
from evalcore.pairwise import winrate as wr
from evalcore.pairwise.pairs import pair_data
from evalcore.pointwise import anchoring, familiarity, scale_use
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from evalcore.pointwise.bias_report import BiasReport, bias_report
from evalcore.pointwise.distributions import class_distribution
from evalcore.report import display, plots

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


def _plot_height(fig: go.Figure) -> float:
    """Pixels of the plotting area: the figure's height less its top and bottom margins."""
    return fig.layout.height - fig.layout.margin.t - fig.layout.margin.b


def _labels_on_rows(fig: go.Figure, trace) -> None:
    """Every dot of ``trace`` has one annotation at its own y whose text starts with its value, placed beside
    it (vertically centred), never above or under it where it reads as the neighbouring row's."""
    notes = [a for a in fig.layout.annotations if a.xref in (None, "x") and a.yref in (None, "y")]
    assert len(notes) == len(trace.x)
    for a, x, y in zip(notes, trace.x, trace.y):
        assert a.y == y and a.yanchor == "middle" and a.xanchor in ("left", "right") and not a.showarrow
        assert a.text.startswith(f"{x:.2f}")


def _agreement_rows(cells: dict, *, judge: str = "J", flagged=()) -> pd.DataFrame:
    """A small agreement table: percent agreement of ``judge`` per cell ({(row, col): estimate}), with the
    pairwise agreement gap flagged on the cells in ``flagged``."""
    rows = []
    for (r, c), est in cells.items():
        base = {"judge": judge, "row": r, "col": c, "n": 40, "n_units": 40, "n_ratings": 120, "note": None,
                "p_value": np.nan, "q_value": np.nan}
        rows.append({**base, "measure": "percent_agreement", "estimate": est, "ci_low": est - 0.1,
                     "ci_high": est + 0.05, "flagged": False})
        rows.append({**base, "measure": "pairwise_agreement_gap", "estimate": -0.2, "ci_low": -0.3, "ci_high": -0.1,
                     "flagged": (r, c) in flagged})
    return pd.DataFrame(rows)


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
    assert isinstance(trace, go.Scatter) and trace.mode == "markers"
    assert fig.layout.title.text == "Fleiss' kappa: humans among themselves"
    assert fig.layout.xaxis.title.text == "Fleiss' kappa" and fig.layout.yaxis.title.text == "language"
    humans = table[table["judge"].isna() & (table["measure"] == "fleiss_kappa")]
    assert sorted(trace.y) == sorted(humans["language"].astype(str))
    assert len(trace.error_x.array) == len(humans) and trace.error_x.visible
    assert all("95% CI [" in h and "n = " in h for h in trace.customdata)
    _labels_on_rows(fig, trace)
    assert not any("▼" in a.text for a in fig.layout.annotations)  # the humans are never flagged against themselves


def test_agreement_heatmap_cells_are_readable(agreement_table, judges):
    """Each cell shows the estimate (with its ▼) on one line and its interval on the next, at one
    explicit size that fits the cell; left to plotly's automatic size the text was sized on its markup's
    characters, the estimate and ▼ a few pixels high and printed over the interval."""
    fig = plots.agreement_figure(agreement_table, measure="percent_agreement", judge=judges[0],
                                 by=["language", "criterion"])
    (trace,) = fig.data
    size = trace.textfont.size
    assert isinstance(size, (int, float)) and 10 <= size <= 13
    texts = [t for t in _flat(trace.text) if t]
    assert texts and not any("span" in t or "font-size" in t for t in texts)
    widest = 0
    for t in texts:
        first, second = t.split("<br>")
        assert re.fullmatch(r"<b>-?\d\.\d\d( ▼)?</b>", first), first
        assert re.fullmatch(r"\[-?\d\.\d\d, -?\d\.\d\d\]", second), second
        widest = max(widest, len(second))
    assert sum("▼" in t for t in texts) > 0
    # The text fits its cell in the narrowest plot, and a row holds both lines.
    n_rows, n_cols = np.asarray(trace.z).shape
    assert 0.6 * size * widest <= plots.PLOT_WIDTH / n_cols
    assert _plot_height(fig) / n_rows >= 2 * 1.3 * size + 8


def test_agreement_heatmap_with_many_columns_keeps_what_can_be_read():
    """Too many columns for the interval: the estimate alone; too many for that: the ▼ alone (hover has all)."""
    for n_cols, pattern in ((12, r"<b>0\.\d\d( ▼)?</b>"), (90, r"(▼)?")):
        cells = {(r, f"c{c:02d}"): 0.5 + 0.004 * c for r in ("a", "b") for c in range(n_cols)}
        table = _agreement_rows(cells, flagged={("a", "c00")})
        fig = plots.agreement_figure(table, measure="percent_agreement", judge="J", by=["row", "col"])
        (trace,) = fig.data
        texts = _flat(trace.text)
        assert all(re.fullmatch(pattern, t) for t in texts), texts[:3]
        assert sum("▼" in t for t in texts) == 1 and trace.textfont.size >= 10


def test_agreement_dot_plot_labels_each_row_with_its_own_value():
    """HANNA, by criterion: each label sat above its dot, under the row above; the top row's was cut
    off. Each label is now on its own dot's row, with its ▼ where flagged, and every row is inside the plot."""
    cells = {("x", c): e for c, e in zip(["Coherence", "Complexity", "Empathy", "Engagement"], [0.12, 0.18, 0.17, 0.5])}
    table = _agreement_rows(cells, flagged={("x", "Coherence"), ("x", "Complexity")}).drop(columns="row")
    fig = plots.agreement_figure(table, measure="percent_agreement", judge="J", by=["col"])
    (trace,) = fig.data
    _labels_on_rows(fig, trace)
    by_row = {a.y: a.text for a in fig.layout.annotations}
    assert by_row["Coherence"].startswith("0.12 ▼") and by_row["Complexity"].startswith("0.18 ▼")
    assert by_row["Engagement"].startswith("0.50") and "▼" not in by_row["Engagement"]
    assert "[0.02, 0.17]" in by_row["Coherence"]  # the interval printed beside it
    assert list(fig.layout.yaxis.range) == [len(cells) - 0.5, -0.5]  # first row on top, none cut off


def test_agreement_single_value_and_missing_measure(units, agreement_table):
    table = agreement(units, by=(), n_boot=20, seed=0)
    fig = plots.agreement_figure(table, measure="percent_agreement", judge=None, by=[])
    (trace,) = fig.data
    assert list(trace.y) == ["all"] and len(trace.x) == 1
    empty = plots.agreement_figure(agreement_table, measure="no_such_measure", judge=None, by=["language"])
    assert not empty.data and empty.layout.title.text == "No no_such_measure for this selection"


def _legend_between_title_and_panels(fig: go.Figure, *, facets: int = 26) -> None:
    """The legend above the panels sat over the title. The title is pinned to the figure's top (one
    44-pixel line), the legend's rows lie below it, and the column labels of the panels (``facets`` px) below
    the legend."""
    title, legend = fig.layout.title, fig.layout.legend
    assert (title.yref, title.y, title.yanchor) == ("container", 1, "top")
    assert legend.yanchor == "bottom" and (legend.yref or "paper") == "paper"
    above_plot = (legend.y - 1) * _plot_height(fig)  # px from the plot's top up to the legend's bottom
    assert above_plot >= facets
    assert fig.layout.margin.t - above_plot - plots.LEGEND_ROW >= 44


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
    _legend_between_title_and_panels(fig)
    empty = plots.class_distribution_figure(dist, row=None, filters={"criterion": "no such criterion"})
    assert not empty.data and "No units" in empty.layout.title.text


# --------------------------------------------------------------------------- bias


@pytest.fixture(scope="module")
def report(ratings):
    return BiasReport(bias_report(ratings, n_boot=20, seed=0))


def test_score_share_bars_per_source_and_row(ratings, judges):
    freq = scale_use.score_frequencies(ratings, by=["language"], judges=judges)
    fig = plots.score_share_figure(freq, criterion="LA", row="language")
    assert all(isinstance(t, go.Bar) for t in fig.data)
    assert fig.layout.title.text == "Scores given on LA"
    assert {t.name for t in fig.data} == {"humans", *judges}
    assert {a.text for a in fig.layout.annotations} == set(freq["language"].astype(str))
    assert all("ratings" in t.hovertemplate for t in fig.data)
    flat = plots.score_share_figure(scale_use.score_frequencies(ratings, judges=judges), criterion="LA")
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


def _legend_under_axis_title(fig: go.Figure) -> None:
    """The horizontal legend starts at least 60 px under the plot (tick labels, then the axis title), and the
    bottom margin holds it."""
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.yanchor == "top"
    below = -legend.y * _plot_height(fig)
    assert below >= 60
    rows = plots._legend_rows(plots._legend_names(fig))
    assert fig.layout.margin.b >= below + rows * plots.LEGEND_ROW


def test_effect_figure_legend_stays_under_the_axis_title():
    """BASSE, mean shift: on a short plot the legend, placed as a fraction of the plotting area,
    slid up over the x axis's title. One row or six judges on five criteria: it stays under it."""
    one = pd.DataFrame({"judge": ["J", "J"], "criterion": ["a", "b"], "measure": "mean_shift",
                        "estimate": [0.1, 0.3], "ci_low": [0.0, 0.2], "ci_high": [0.2, 0.4], "n": 50,
                        "q_value": [0.3, 0.01], "flagged": [False, True]})
    many = pd.concat([one.assign(judge=j, criterion=c) for j in ("gpt-4o", "claude-3.5-sonnet", "llama-3.1-70b",
                                                                  "mixtral-8x22b", "qwen2-72b", "gemma-2-27b")
                      for c in ("Coherence", "Fluency", "Relevance")], ignore_index=True)
    for rows in (one, many):
        fig = plots.effect_figure(rows, measure="mean_shift", y="criterion")
        _legend_under_axis_title(fig)
    assert plots._legend_rows(plots._legend_names(fig)) >= 2  # the six judges take more than one row


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
    pbs = familiarity.perplexity_by_score(ratings, judges=judges, n_boot=20, seed=0)
    fig = plots.perplexity_by_score_figure(pbs, criterion="LA")
    assert len(fig.data) == 1 + len(judges)
    assert all(isinstance(t, go.Scatter) and t.mode == "lines+markers" and t.error_y.visible for t in fig.data)
    assert fig.layout.title.text == "Mean perplexity by score, LA"
    assert fig.layout.xaxis.title.text == "score" and fig.layout.yaxis.title.text == "mean perplexity"
    assert all("n=%{customdata[0]}" in t.hovertemplate for t in fig.data)


def test_correlation_heatmaps_side_by_side(ratings, judges):
    corr = anchoring.criterion_correlations(ratings, judges=judges, n_boot=0, seed=0)
    fig = plots.correlation_heatmaps(corr, sources=["humans", judges[0]])
    assert len(fig.data) == 2 and all(isinstance(t, go.Heatmap) for t in fig.data)
    assert [a.text for a in fig.layout.annotations] == ["humans", judges[0]]
    assert fig.layout.title.text == "Correlation between criteria across items"
    n_crit = ratings["criterion"].nunique()
    assert all(np.asarray(t.z).shape == (n_crit, n_crit) for t in fig.data)
    assert [t.showscale for t in fig.data] == [False, True]


def test_conditional_distribution_bars(ratings, judges):
    cond = anchoring.conditional_distribution(ratings, given="LA", target="OCQ", threshold=1.0, judges=judges, n_boot=0)
    fig = plots.conditional_figure(cond)
    assert fig.data and all(isinstance(t, go.Bar) for t in fig.data)
    assert {t.name for t in fig.data} == {"given above threshold", "given at or below"}
    assert {a.text for a in fig.layout.annotations} == {"humans", *judges}  # one facet per source
    assert all("of %{customdata[1]}" in t.hovertemplate for t in fig.data)


# --------------------------------------------------------------------------- win rates


def test_winrate_density_with_k_and_the_humans(comparisons):
    r = wr.estimate(comparisons, *PAIR, method="bwrs", prior="ratio:0.3", seed=0)
    pair = pair_data(comparisons, *PAIR)
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


def test_winrate_density_labels_do_not_meet():
    """Before: "simulated truth" and "k =" were both printed at the top, a few pixels apart. Each line's label
    is on its own row (at least a 12-px line apart in the plot), at its line's x."""

    class R:  # a posterior as the figure reads it
        method, p_mode, density = "bwrs", 0.8, (np.linspace(0, 1, 11), np.ones(11))

    fig = plots.winrate_density_figure([R()], k=0.769, p_human=0.787, truth=0.80)
    notes = list(fig.layout.annotations)
    assert {a.text: a.x for a in notes} == {"k = 0.769": 0.769, "simulated truth 0.80": 0.80, "humans 0.787": 0.787}
    assert sorted(s.x0 for s in fig.layout.shapes) == [0.769, 0.787, 0.80]
    ys = sorted(a.y * _plot_height(fig) for a in notes)
    assert all(b - a >= 16 for a, b in zip(ys, ys[1:]))
    assert all(a.yref == "paper" and a.yanchor == "top" for a in notes)


def test_forest_one_row_per_pair(comparisons):
    frame = wr.results_frame(wr.estimate_all(comparisons, method="bwrs", prior="ratio:0.3", seed=0))
    fig = plots.forest_figure(frame)
    names = [t.name for t in fig.data]
    assert names == ["BWRS", display.METHOD_LABEL["observed"], display.METHOD_LABEL["human"]]
    assert list(fig.layout.yaxis.ticktext) == list(frame["pair"])
    est = fig.data[0]
    assert est.error_x.visible and len(est.x) == len(frame)
    assert "95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]" in est.hovertemplate
    assert fig.layout.title.text == "Win rate of the first system, calibrated and raw"
    assert fig.layout.xaxis.title.text.startswith("p (share of items")


def test_error_curve_per_method_and_estimator(comparisons):
    pair = pair_data(comparisons, *PAIR)
    curve = wr.error_curve(pair, ratios=(0.3, 1.0), repeats=2, methods=("bwrs",), seed=0)
    fig = plots.error_curve_figure(curve)
    assert [t.name for t in fig.data] == ["BWRS (mean)", "BWRS (mode)", display.METHOD_LABEL["observed"]]
    assert all(len(t.x) == 2 for t in fig.data)
    assert [t.error_y.visible for t in fig.data] == [True, True, False]
    assert fig.layout.xaxis.title.text.startswith("prior data ratio")
    assert fig.layout.yaxis.title.text == "|estimate - humans' p|"
    assert fig.layout.title.text == "Estimation error against the share of human labels used"


# --------------------------------------------------------------------------- position bias, judges, rater pairs


def test_position_values_beside_their_own_markers(comparisons):
    """The values printed above the markers overlapped the next measure's (sub-rows 11 px apart).
    Each value is beside its own marker's interval, and the measures of a judge are a text line apart."""
    from evalcore.pairwise.position import position_report
    from evalcore.report.views.position_bias import position_rows

    measures = ("position_consistency", "first_position_preference", "accuracy_original_order",
                "accuracy_swapped_order", "accuracy_both_orders")
    rows = position_rows(position_report(comparisons, methods=("none",), n_boot=20, seed=0), by=[])
    fig = plots.position_figure(rows, measures=measures)
    traces = [t for t in fig.data if len(t.x)]
    assert traces and all(t.mode == "markers" for t in traces)
    notes = [a for a in fig.layout.annotations if a.yref in (None, "y")]
    assert len(notes) == sum(len(t.x) for t in traces)
    for t in traces:
        for x, y in zip(t.x, t.y):
            (a,) = [a for a in notes if np.isclose(a.y, y) and a.text == f"{x:.2f}"]
            assert a.yanchor == "middle" and a.xanchor in ("left", "right")
    labels = list(fig.layout.yaxis.ticktext)
    px_per_unit = _plot_height(fig) / (fig.layout.yaxis.range[0] - fig.layout.yaxis.range[1])
    ys = np.sort(np.concatenate([np.asarray(t.y, float) for t in traces]))
    assert np.diff(ys).min() * px_per_unit >= 16  # a 10-px line of text and a gap
    assert len(labels) == rows["label"].nunique()
    _legend_under_axis_title(fig)


def test_leaderboard_labels_on_their_own_rows():
    """The top judge's value, printed above its dot, was cut off by the plot's edge."""
    board = pd.DataFrame({"rank": [1, 2, 3], "judge": ["A", "B", "C"], "estimate": [0.41, 0.35, 0.2],
                          "ci_low": [0.3, 0.3, 0.1], "ci_high": [0.5, 0.4, 0.3], "worse_than_best": [False, False, True],
                          "diff_to_best": [0, -0.06, -0.21], "diff_ci_low": [0, -0.1, -0.3],
                          "diff_ci_high": [0, 0.0, -0.1], "n": 90})
    fig = plots.leaderboard_figure(board, label="Kendall's tau")
    (trace,) = fig.data
    assert trace.mode == "markers"
    _labels_on_rows(fig, trace)
    # the best (right-most) is labelled on its left, inside the plot
    assert fig.layout.annotations[0].xanchor == "right" and fig.layout.annotations[0].x == 0.3


def test_rater_pair_heatmap_readable_at_thirty_annotators():
    """At 30 annotators the title ran into the column labels and the cells' text was 6 px. Text is
    printed only at a readable size that fits the cell; the column labels are angled and the top margin holds
    the title, the axis title and the labels."""
    rng = np.random.default_rng(0)
    for n in (4, 30):
        names = [f"annotator_{i:02d}" for i in range(n)]
        index = names + ["gpt-4o/score-only"]
        matrix = pd.DataFrame(rng.uniform(-0.2, 0.9, (n + 1, n)), index=index, columns=names)
        counts = pd.DataFrame(rng.integers(5, 400, (n + 1, n)), index=index, columns=names)
        fig = plots.rater_pair_heatmap(matrix, counts, label="Cohen's kappa")
        (trace,) = fig.data
        texts = [t for t in _flat(trace.text) if t]
        if texts:
            size = trace.textfont.size
            assert size is not None and size >= 10  # an explicit, readable size (plotly's own shrank it to 6 px)
            widest = max(len(line) for t in texts for line in t.split("<br>"))
            assert 0.6 * size * widest <= plots.PLOT_WIDTH / n
            assert _plot_height(fig) / len(index) >= 1.3 * size * max(t.count("<br>") + 1 for t in texts)
        assert "n = %{customdata} units" in trace.hovertemplate  # n is always in the hover
        title = fig.layout.title
        assert (title.yref, title.y, title.yanchor) == ("container", 1, "top")
        angled = fig.layout.xaxis.tickangle not in (None, 0)
        label_px = 7 * 0.7 * max(map(len, names)) if angled else 14
        assert fig.layout.margin.t >= 44 + 24 + label_px  # title, axis title, labels
    assert angled and not texts  # 30 columns: angled labels, values in the hover


def test_system_means_figure_one_point_per_system_named_in_the_legend():
    means = pd.DataFrame({"system": ["A", "B", "C"], "human": [1.0, 2.0, 3.0], "human_ci_low": [0.8, 1.8, 2.7],
                          "human_ci_high": [1.2, 2.2, 3.3], "judge_score": [2.0, 2.5, 4.0], "judge_ci_low": [1.9, 2.2, 3.6],
                          "judge_ci_high": [2.1, 2.8, 4.4], "n": [10, 10, 10]})
    fig = plots.system_means_figure(means, judge="j")
    assert [t.name for t in fig.data] == ["A", "B", "C"] and [t.x[0] for t in fig.data] == [1.0, 2.0, 3.0]
    assert all(t.mode == "markers" for t in fig.data)  # no text beside the points: names cannot collide
    assert fig.layout.showlegend
