"""Plotly figure builders: pure functions of evalcore's result tables (no statistics here).

Plotly reads a small HTML subset (``<a href>``, ``<b>``, ``<br>``...) in every text it draws, so every name from
the data (judges, criteria, languages, systems, groups, column names) goes through
:func:`evalcore.text.plot_text` before it reaches a figure: once per figure, on the frame the figure is built
from (:func:`_inert`), and on the names a title or hover text is written with. The builders' own markup (the bold
estimate and the ▼ of a heatmap cell, the ``<br>`` of a hover text) is added after and stays markup.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from ..text import plot_text
from .display import METHOD_LABEL, METHOD_NAMES, POSITION_LABELS, PPI_METHOD_NAMES, fmt_number

RATES = {"percent_agreement", "full_agreement", "pairwise_agreement", "weighted_f1"}
PALETTE = px.colors.qualitative.Safe
CLASS_LABELS = {"full": "all annotators agree", "partial": "some agree", "none": "all disagree"}


#: Readable names of the agreement measures (the code names stay in the tables and downloads).
AGREEMENT_TITLES = {
    "percent_agreement": "percent agreement", "full_agreement": "all annotators agree",
    "fleiss_kappa": "Fleiss' kappa", "gwet_ac1": "Gwet's AC1", "pabak": "PABAK",
    "krippendorff_alpha_nominal": "Krippendorff's alpha (nominal)",
    "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)",
    "krippendorff_alpha_interval": "Krippendorff's alpha (interval)", "cohen_kappa": "Cohen's kappa",
    "cohen_kappa_quadratic": "Cohen's kappa (quadratic weights)", "weighted_f1": "weighted F1",
    "kendall_tau": "Kendall's tau", "spearman_rho": "Spearman's rho",
    "fleiss_kappa_change": "Fleiss' kappa with the judge, minus without",
    "krippendorff_alpha_nominal_change": "Krippendorff's alpha (nominal) with the judge, minus without",
    "krippendorff_alpha_ordinal_change": "Krippendorff's alpha (ordinal) with the judge, minus without",
    "krippendorff_alpha_interval_change": "Krippendorff's alpha (interval) with the judge, minus without",
    "pairwise_agreement": "share of annotators giving the judge's score",
    "pairwise_agreement_gap": "agreement gap (judge minus annotators among themselves)",
}


#: Readable names of the bias measures (Stureborg et al. 2024; Hada et al. 2024).
BIAS_TITLES = {
    "mean_shift": "judge mean minus human mean", "tau_difference": "tau(judge) minus tau(humans) with perplexity",
    "r_difference": "judge's criterion correlation minus humans'",
    "alpha_difference": "judge's self-consistency alpha minus humans'",
    "category_share_difference": "judge's share of the category minus humans'",
    "mean_perplexity_difference": "mean perplexity of the category's items, judge minus humans",
}


def measure_title(measure: str) -> str:
    """A measure's readable name (its code name when it has none)."""
    return AGREEMENT_TITLES.get(measure) or BIAS_TITLES.get(measure) or measure.replace("_", " ")


def _inert(frame: pd.DataFrame, columns: Sequence[str | None]) -> pd.DataFrame:
    """A copy of ``frame`` whose text in ``columns`` (those it has) Plotly shows as written: no link, no bold.

    Missing values stay missing (a builder fills them with its own words). Call it after the rows are selected
    by their real values and before the figure is built, so that every label of the figure comes from it.
    """
    out = frame.copy()
    for c in dict.fromkeys(c for c in columns if c is not None and c in out.columns):
        out[c] = out[c].map(plot_text, na_action="ignore")
    return out


def _facet_labels(fig: go.Figure) -> go.Figure:
    """Facet labels as values ('ko', not 'language=ko'); row labels horizontal, right of the panels, with
    room kept for them (rotated at the figure's edge they were clipped)."""
    # "column=value": the value is everything after the first "=" (a value may hold one: "=SUM(1)")
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    rows = [a for a in fig.layout.annotations if a.textangle == 90]
    for a in rows:
        a.update(textangle=0, xanchor="left", x=1.005)
    if rows:
        fig.update_layout(margin={"r": 16 + 7 * max(len(a.text) for a in rows)})
    return fig


#: Above this many distinct scores (a 0-100 scale, or a judge that averages samples: HANNA's give up to 127) the
#: score axis is a number line: one tick per score would print a wall of labels such as 1.66666666667.
SCORE_CATEGORIES_MAX = 12


def _score_axis(fig: go.Figure, scores) -> go.Figure:
    """Scores as categories in numeric order: one tick per score, none at 2.5 (scores arrive as labels); a number
    line where there are more than :data:`SCORE_CATEGORIES_MAX` distinct scores."""
    order = sorted({str(v) for v in scores}, key=float)
    if len(order) > SCORE_CATEGORIES_MAX:
        return fig.update_xaxes(type="linear")
    return fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)


def _hover(sub: pd.DataFrame) -> pd.Series:
    ci = [f"[{fmt_number(lo)}, {fmt_number(hi)}]" if np.isfinite(lo) else "no interval" for lo, hi in zip(sub["ci_low"], sub["ci_high"])]
    note = sub["note"].fillna("").map(lambda s: f"<br>{plot_text(s)}" if s else "")
    return ("estimate " + sub["estimate"].map(fmt_number) + "<br>95% CI " + pd.Series(ci, index=sub.index)
            + "<br>n = " + sub["n"].astype(str) + " items, " + sub["n_units"].astype(str) + " units, "
            + sub["n_ratings"].astype(str) + " ratings" + note)


def agreement_figure(table: pd.DataFrame, *, measure: str, judge: str | None, by: Sequence[str]) -> go.Figure:
    """The chosen measure for one source (humans or a judge) across the groups.

    Two grouping columns give a heatmap (rows = first column), one a dot plot with CIs,
    none a single dot. Cells where the judge agrees significantly less with humans than
    humans with each other carry a ▼.
    """
    by = list(by)
    src = table["judge"].isna() if judge is None else table["judge"] == judge
    sub = table[src & (table["measure"] == measure)].copy()
    if sub.empty:
        return go.Figure().update_layout(title=f"No {measure} for this selection", height=200)
    zmin, zmax, scale = (0, 1, "Blues") if measure in RATES else (-1, 1, "RdBu")
    if measure.endswith("_change") or measure.endswith("_gap"):
        zmin, zmax, scale = -0.5, 0.5, "RdBu"
    flags = pd.Series(False, index=sub.index)
    if judge is not None:
        gap = table[(table["judge"] == judge) & (table["measure"] == "pairwise_agreement_gap")]
        if by:
            flagged = set(map(tuple, gap.loc[gap["flagged"], by].astype(str).to_numpy()))
            flags = sub[by].astype(str).apply(tuple, axis=1).isin(flagged)
        else:
            flags[:] = bool(gap["flagged"].any())
    sub = _inert(sub, by)
    sub["hover"] = _hover(sub)
    estimate = sub["estimate"].map(lambda v: "n/a" if not np.isfinite(v) else f"{v:.2f}") + np.where(flags, " ▼", "")
    interval = pd.Series([_interval_text(lo, hi) for lo, hi in zip(sub["ci_low"], sub["ci_high"])], index=sub.index)
    who = "humans among themselves" if judge is None else f"{plot_text(judge)} vs humans"
    title = f"{measure_title(measure)}: {who}"
    if len(by) >= 2:
        r, c = by[0], by[1]
        r_name, c_name = plot_text(r), plot_text(c)
        # Two lines at one explicit size: the estimate (bold, with its ▼) and the interval under it, so that a
        # screenshot keeps the interval (n is in the hover and the table). Left to plotly's automatic size, the
        # text was sized on the characters of its markup and the two lines printed over each other.
        # Too many columns for the interval: the estimate alone; too many for that: the ▼ alone.
        z = sub.pivot_table(index=r, columns=c, values="estimate", aggfunc="first", dropna=False)
        size, lines = _cell_font_size(len(z.columns), max(len(t) for t in [*interval, *estimate])), 2
        sub["label"] = "<b>" + estimate + "</b>" + np.where(interval != "", "<br>" + interval, "")
        if size is None:
            size, lines = _cell_font_size(len(z.columns), max(len(t) for t in estimate)), 1
            sub["label"] = "<b>" + estimate + "</b>"
        if size is None:
            size, sub["label"] = 12, np.where(flags, "▼", "")
        text = sub.pivot_table(index=r, columns=c, values="label", aggfunc="first").reindex_like(z)
        hov = sub.pivot_table(index=r, columns=c, values="hover", aggfunc="first").reindex_like(z)
        fig = go.Figure(go.Heatmap(
            z=z.to_numpy(dtype=float), x=[str(x) for x in z.columns], y=[str(y) for y in z.index],
            text=text.fillna("").to_numpy(), texttemplate="%{text}", textfont={"size": size},
            customdata=hov.fillna("").to_numpy(),
            hovertemplate=f"{r_name}=%{{y}}<br>{c_name}=%{{x}}<br>%{{customdata}}<extra></extra>",
            colorscale=scale, zmin=zmin, zmax=zmax,
            colorbar={"title": "share" if measure in RATES else "value",
                      "tickformat": ".0%" if measure in RATES else ".1f"},
        ))
        # a row holds its lines of text with room above and below
        row = max(36, round(lines * 1.3 * size + 18))
        fig.update_layout(title=title, height=row * len(z.index) + 130, margin={"t": 110, "b": 20},
                          yaxis={"autorange": "reversed", "title": r_name, "type": "category"},
                          xaxis={"title": c_name, "side": "top", "type": "category"})
        return fig
    x = sub[by[0]].astype(str) if by else pd.Series(["all"], index=sub.index)
    err_hi = (sub["ci_high"] - sub["estimate"]).clip(lower=0)
    err_lo = (sub["estimate"] - sub["ci_low"]).clip(lower=0)
    fig = go.Figure(go.Scatter(
        x=sub["estimate"], y=x, mode="markers",
        error_x={"type": "data", "array": err_hi, "arrayminus": err_lo, "visible": True},
        customdata=sub["hover"], hovertemplate="%{y}<br>%{customdata}<extra></extra>",
        marker={"size": 10, "color": np.where(flags, "#c92a2a", "#3b5bdb")},
    ))
    # Each value on its own dot's row, beside the interval (a label above a dot reads as the row above's).
    _labels_beside(fig, y=list(x), low=sub["ci_low"], high=sub["ci_high"], estimate=sub["estimate"],
                   text=[e + (f"  {i}" if i else "") for e, i in zip(estimate, interval)], span=(zmin, zmax))
    n = len(x)
    fig.update_layout(title=title, height=max(260, 44 * n + 150), margin={"t": 60},
                      xaxis={"title": measure_title(measure), "range": [zmin, zmax]},
                      yaxis={"title": plot_text(by[0]) if by else "", "type": "category", "categoryorder": "array",
                             "categoryarray": list(dict.fromkeys(x)), "range": [n - 0.5, -0.5]})
    return fig


def _interval_text(lo: float, hi: float) -> str:
    """An interval as a figure prints it beside or under its estimate: ``[0.51, 0.68]`` (2 decimals)."""
    return f"[{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) and np.isfinite(hi) else ""


#: The narrowest plotting area a figure is drawn in: a page's main column at a 1280-pixel-wide screen,
#: less the axis labels and colour bar. Text sized for it fits wider screens too.
PLOT_WIDTH = 640


def _cell_font_size(n_columns: int, chars: int) -> int | None:
    """Font size (px), 10 to 13, at which ``chars`` characters fit across a heatmap cell of the narrowest
    plot; None when they do not fit even at 10 px (smaller text cannot be read: leave it to the hover).

    A character of the default font is about 0.6 of its size wide; a cell keeps one size of padding.
    """
    fit = PLOT_WIDTH / max(n_columns, 1) / (0.6 * max(chars, 1) + 1)
    return int(min(13, np.floor(fit))) if fit >= 10 else None


def _labels_beside(fig: go.Figure, *, y, low, high, estimate, text, span: tuple[float, float], size: int = 11) -> None:
    """Value labels as annotations at their own dot's ``y``, beside its interval on the side with more room.

    Text above or under a dot sits halfway to the next row and is read as that row's; beside the interval
    it cannot be. ``span`` is the x range drawn (the label goes left of the interval when there is less
    room on its right).
    """
    for yv, lo, hi, est, t in zip(y, low, high, estimate, text):
        if not np.isfinite(est):
            continue
        lo = lo if np.isfinite(lo) else est
        hi = hi if np.isfinite(hi) else est
        left = (lo - span[0]) > (span[1] - hi)
        fig.add_annotation(x=lo if left else hi, y=yv, text=t, showarrow=False, xanchor="right" if left else "left",
                           yanchor="middle", xshift=-8 if left else 8, font={"size": size})


#: The narrowest figure a legend is laid out in (a page's main column at a 1280-pixel-wide screen).
FIGURE_WIDTH = 760
LEGEND_ROW = 24  # px per row of a horizontal legend (12 px text)


def _legend_names(fig: go.Figure) -> list[str]:
    """The entries of a figure's legend: each shown trace's name once (facets repeat a name per panel)."""
    return list(dict.fromkeys(str(t.name) for t in fig.data if t.showlegend is not False and t.name))


def _legend_rows(names: Sequence[str], *, title: str = "") -> int:
    """Rows a horizontal legend of ``names`` takes in the narrowest figure.

    Plotly puts all entries on one row when they fit; otherwise it lays them out in columns as wide as the
    widest entry (an entry: symbol, gap and text, 7 px a character at 12 px).
    """
    widths = [46 + 7.0 * len(str(name)) for name in dict.fromkeys(names)]
    room = FIGURE_WIDTH - 7.0 * len(title)
    if not widths or sum(widths) <= room:
        return 1
    per_row = max(1, int(room // max(widths)))
    return -(-len(widths) // per_row)


def _legend_below(fig: go.Figure, *, plot_height: int, top: int, axis: int = 64) -> go.Figure:
    """A horizontal legend under the x axis's tick labels and title, with a bottom margin that holds both.

    The plotting area is ``plot_height`` pixels and the legend starts ``axis`` pixels below it, so the two never
    meet however few rows the plot has (placed as a fixed fraction of the plotting area, the legend slid up
    over the axis title on short plots).
    """
    bottom = axis + LEGEND_ROW * _legend_rows(_legend_names(fig)) + 12
    fig.update_layout(height=top + plot_height + bottom, margin={"t": top, "b": bottom},
                      legend={"orientation": "h", "yanchor": "top", "y": -axis / plot_height, "x": 0})
    return fig


def _legend_above(fig: go.Figure, *, plot_height: int, facets: bool = True,
                  title: str = "", bottom: int = 70) -> go.Figure:
    """The title at the top of the figure, a horizontal legend under it, then (``facets``) the column labels.

    The top margin is the sum of their heights and the legend's place is counted in pixels from the plotting
    area of ``plot_height`` pixels, so the legend never sits over the title (placed as a fraction that ignored
    the margins, it moved up into the title with the number of rows of panels).
    """
    rows = _legend_rows(_legend_names(fig), title=title)
    head, gap = 48, 30 if facets else 8  # the title's line; the column labels of the panels
    top = head + LEGEND_ROW * rows + gap
    fig.update_layout(height=top + plot_height + bottom, margin={"t": top, "b": bottom},
                      title={"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 14}},
                      # the legend's title on its left (Streamlit's theme puts it on a row of its own above)
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1 + gap / plot_height, "x": 0,
                              "title": {"text": title, "side": "left"}})
    return fig


def class_distribution_figure(dist: pd.DataFrame, *, row: str | None, filters: dict | None = None) -> go.Figure:
    """Score shares of humans and judges, one column per human agreement class (Hada et al. Figs. 6-7).

    ``row`` splits the figure into one row per value of that column (e.g. language);
    ``filters`` keeps only rows whose columns equal the given values (e.g. one criterion).
    """
    sub = dist
    for k, v in (filters or {}).items():
        sub = sub[sub[k].astype(str) == str(v)]
    sub = sub[sub["n_units"].fillna(0) > 0].copy()
    if sub.empty:
        return go.Figure().update_layout(title="No units with two or more human ratings here", height=200)
    # the categories' text, in the scale's order (nominal labels too); numbers go through _score_axis
    labelled = "category" in sub.columns and not pd.to_numeric(sub["score"], errors="coerce").notna().all()
    order = list(dict.fromkeys(sub["category"].map(plot_text))) if labelled else None
    sub = _inert(sub, ["source", row, "category"])
    sub["score"] = sub["category"] if labelled else sub["score"].map(lambda v: f"{v:g}")
    sub["agreement_class"] = sub["agreement_class"].astype(str).map(CLASS_LABELS)
    sub["hover"] = sub["count"].astype(str) + " of " + sub.groupby(
        [c for c in ([row] if row else []) + ["source", "agreement_class"]], dropna=False)["count"].transform("sum").astype(str)
    n_rows = sub[row].nunique() if row else 1
    fig = px.bar(
        sub, x="score", y="share", color="source", barmode="group", facet_col="agreement_class",
        facet_row=row, category_orders={"agreement_class": list(CLASS_LABELS.values()),
                                        "source": ["humans", *sorted(set(sub["source"]) - {"humans"})]},
        custom_data=["hover", "n_units"], color_discrete_sequence=PALETTE[1:],
        color_discrete_map={"humans": "#888888"},
        labels={"share": "share", "score": "score", "agreement_class": "humans agree"},
    )
    fig.update_traces(hovertemplate="score %{x}: %{y:.0%} (%{customdata[0]})<br>%{customdata[1]} units in this class<extra></extra>")
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title_text="")
    _facet_labels(fig)
    if labelled:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    else:
        _score_axis(fig, sub["score"])
    fig.update_layout(title="Scores given, by how much the annotators agree on the unit")
    return _legend_above(fig, plot_height=max(200, 170 * n_rows), title="ratings by ")


# --------------------------------------------------------------------------- bias


def _source_colors(sources) -> dict[str, str]:
    others = [s for s in sources if s != "humans"]
    return {"humans": "#888888", **{s: PALETTE[1 + i % (len(PALETTE) - 1)] for i, s in enumerate(others)}}


def score_share_figure(freq: pd.DataFrame, *, criterion: str, row: str | None = None) -> go.Figure:
    """Share of each score, humans next to each judge, for one criterion (optionally one row per group)."""
    sub = freq[freq["criterion"].astype(str) == str(criterion)].copy()
    if sub.empty:
        return go.Figure().update_layout(title=f"No scores for {plot_text(criterion)}", height=200)
    sub = _inert(sub, ["source", row])
    sub["score"] = sub["score"].map(lambda v: f"{v:g}")
    order = ["humans", *sorted(set(sub["source"]) - {"humans"})]
    n_rows = sub[row].nunique() if row else 1
    fig = px.bar(sub, x="score", y="share", color="source", barmode="group", facet_row=row,
                 category_orders={"source": order}, color_discrete_map=_source_colors(order),
                 custom_data=["count"], labels={"share": "share of ratings"})
    fig.update_traces(hovertemplate="score %{x}: %{y:.0%} (%{customdata[0]} ratings)<extra></extra>")
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title_text="")
    _facet_labels(fig)
    _score_axis(fig, sub["score"])
    fig.update_layout(title=f"Scores given on {plot_text(criterion)}")
    return _legend_above(fig, plot_height=max(180, 150 * n_rows), facets=False)


def category_figure(rows: pd.DataFrame, *, criterion: str, title: str, value: str, row: str | None = None,
                    percent: bool = True) -> go.Figure:
    """One value per category of a nominal criterion, humans next to each judge, with its 95% interval as an error
    bar (optionally one row per group): the bias report's ``category_share`` or ``mean_perplexity`` rows."""
    sub = rows[rows["estimate"].notna()].copy()
    if sub.empty:
        return go.Figure().update_layout(title=f"No {value} to show for {plot_text(criterion)}", height=200)
    sub["source"] = sub["judge"].fillna("humans").astype(str)
    sub = _inert(sub, ["source", "category", row])
    order = ["humans", *sorted(set(sub["source"]) - {"humans"})]
    n_rows = sub[row].nunique() if row else 1
    fig = px.bar(sub, x="category", y="estimate", color="source", barmode="group", facet_row=row,
                 category_orders={"source": order}, color_discrete_map=_source_colors(order),
                 error_y=(sub["ci_high"] - sub["estimate"]).clip(lower=0),
                 error_y_minus=(sub["estimate"] - sub["ci_low"]).clip(lower=0),
                 custom_data=["ci_low", "ci_high", "n"], labels={"estimate": value})
    fmt = ".0%" if percent else ".2f"
    fig.update_traces(hovertemplate=f"%{{x}}: %{{y:{fmt}}} [%{{customdata[0]:{fmt}}}, %{{customdata[1]:{fmt}}}] "
                                    "(n = %{customdata[2]} items)<extra></extra>")
    fig.update_yaxes(title_text="", **({"tickformat": ".0%", "rangemode": "tozero"} if percent else {}))
    fig.update_xaxes(type="category", title_text="")
    _facet_labels(fig)
    fig.update_layout(title=f"{title}, {plot_text(criterion)}")
    return _legend_above(fig, plot_height=max(200, 160 * n_rows), facets=False)


#: How the effect figure marks a test's verdict (:func:`evalcore.stats.apply_fdr`), and its legend entries.
FLAGGED_LABEL = "flagged: a bias (q <= 0.05)"
OPPOSITE_LABEL = "significant, not a bias (other direction)"
OPPOSITE_COLOR = "#868e96"


def _verdicts(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``flagged`` and ``opposite`` of the rows (False where a table has no such column)."""
    flagged = g["flagged"].fillna(False).astype(bool).to_numpy() if "flagged" in g else np.zeros(len(g), bool)
    opposite = g["opposite"].fillna(False).astype(bool).to_numpy() if "opposite" in g else np.zeros(len(g), bool)
    return flagged, opposite & ~flagged


def _verdict_text(g: pd.DataFrame, flagged: np.ndarray, opposite: np.ndarray) -> list[str]:
    """The hover line of each row's test: its verdict and q-value (nothing on rows not tested)."""
    q = pd.to_numeric(g["q_value"], errors="coerce").to_numpy(dtype=float) if "q_value" in g else \
        np.full(len(g), np.nan)
    out = []
    for f, o, v in zip(flagged, opposite, q):
        q_text = f", q = {v:.2g}" if np.isfinite(v) else ""
        verdict = "flagged: a bias" if f else "significant in the other direction: not a bias" if o else \
            "not significant" if q_text else ""
        out.append(f"<br>{verdict}{q_text}" if verdict else "")
    return out


def effect_figure(records: pd.DataFrame, *, measure: str, y: str, zero: bool = True,
                  title: str | None = None) -> go.Figure:
    """One measure with its 95% interval, one dot per ``y`` value and judge.

    Flagged results (a bias, :func:`evalcore.stats.apply_fdr`) are filled diamonds outlined in
    black; results significant in the direction that is not a bias (``opposite``) are hollow grey
    circles; each kind has a legend entry when present.
    """
    sub = records[(records["measure"] == measure) & records["estimate"].notna()].copy()
    if sub.empty:
        return go.Figure().update_layout(title=f"No {measure} to show", height=200)
    sub["judge"] = sub["judge"].fillna("humans")
    sub[y] = sub[y].fillna("all").astype(str)
    sub = _inert(sub, ["judge", y])
    fig = go.Figure()
    colors = _source_colors(sorted(sub["judge"].unique()))
    any_flag = any_opp = False
    for judge, g in sub.groupby("judge", sort=True):
        flagged, opposite = _verdicts(g)
        any_flag, any_opp = any_flag or flagged.any(), any_opp or opposite.any()
        fig.add_trace(go.Scatter(
            x=g["estimate"], y=g[y], mode="markers", name=judge,
            error_x={"type": "data", "array": (g["ci_high"] - g["estimate"]).clip(lower=0),
                     "arrayminus": (g["estimate"] - g["ci_low"]).clip(lower=0), "visible": True,
                     "color": colors[judge]},
            marker={"size": np.where(flagged, 13, np.where(opposite, 11, 9)),
                    "color": np.where(opposite, OPPOSITE_COLOR, colors[judge]),
                    "line": {"width": np.where(flagged | opposite, 2, 0),
                             "color": np.where(opposite, OPPOSITE_COLOR, "#1f2430")},
                    "symbol": np.where(flagged, "diamond", np.where(opposite, "circle-open", "circle"))},
            customdata=np.column_stack([g["ci_low"], g["ci_high"], g["n"], _verdict_text(g, flagged, opposite)]),
            hovertemplate=f"%{{y}} · {judge}<br>{measure_title(measure)} %{{x:.3f}} [%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}]"
                          "<br>n = %{customdata[2]} items%{customdata[3]}<extra></extra>",
        ))
    for shown, label, marker in (
            (any_flag, FLAGGED_LABEL, {"symbol": "diamond", "size": 13, "color": "#adb5bd",
                                       "line": {"width": 2, "color": "#1f2430"}}),
            (any_opp, OPPOSITE_LABEL, {"symbol": "circle-open", "size": 11, "color": OPPOSITE_COLOR,
                                       "line": {"width": 2, "color": OPPOSITE_COLOR}})):
        if shown:  # a legend entry only: no point of its own
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label, marker=marker,
                                     hoverinfo="skip"))
    if zero:
        fig.add_vline(x=0, line={"color": "#555", "dash": "dot"})
    n = sub[y].nunique()
    fig.update_layout(title=title or measure_title(measure),
                      yaxis={"autorange": "reversed", "title": plot_text(y), "type": "category"},
                      xaxis={"title": measure_title(measure)})
    return _legend_below(fig, plot_height=max(110, 38 * n), top=70)


def perplexity_by_score_figure(table: pd.DataFrame, *, criterion: str) -> go.Figure:
    """Mean perplexity of the texts given each score, humans next to each judge (Stureborg et al. Fig. 2)."""
    sub = _inert(table[table["criterion"].astype(str) == str(criterion)], ["source"])
    fig = go.Figure()
    colors = _source_colors(sorted(sub["source"].unique()))
    for source, g in sub.groupby("source", sort=True):
        fig.add_trace(go.Scatter(
            x=g["score"], y=g["mean_perplexity"], mode="lines+markers", name=source, line={"color": colors[source]},
            error_y={"type": "data", "array": (g["ci_high"] - g["mean_perplexity"]).clip(lower=0),
                     "arrayminus": (g["mean_perplexity"] - g["ci_low"]).clip(lower=0), "visible": True},
            customdata=g[["n"]], hovertemplate="score %{x}: mean perplexity %{y:.2f} (n=%{customdata[0]})<extra></extra>",
        ))
    fig.update_layout(title=f"Mean perplexity by score, {plot_text(criterion)}", xaxis={"title": "score", "dtick": 1},
                      yaxis={"title": "mean perplexity"}, height=360,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return fig


def correlation_heatmaps(corr: pd.DataFrame, *, sources: Sequence[str]) -> go.Figure:
    """Correlation between criteria, one heatmap per source, side by side."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(sources), subplot_titles=[plot_text(s) for s in sources],
                        horizontal_spacing=0.08)
    for i, source in enumerate(sources, start=1):
        sub = _inert(corr[corr["source"] == source], ["criterion_a", "criterion_b"])
        m = sub.pivot_table(index="criterion_a", columns="criterion_b", values="r", aggfunc="first", dropna=False)
        fig.add_trace(go.Heatmap(z=m.to_numpy(dtype=float), x=list(map(str, m.columns)), y=list(map(str, m.index)),
                                 zmin=-1, zmax=1, colorscale="RdBu", showscale=i == len(sources),
                                 text=np.vectorize(lambda v: "" if not np.isfinite(v) else f"{v:.2f}")(m.to_numpy(dtype=float)),
                                 texttemplate="%{text}", hovertemplate="%{y} vs %{x}: r = %{z:.3f}<extra></extra>"),
                      row=1, col=i)
        fig.update_yaxes(autorange="reversed", row=1, col=i)
    fig.update_layout(height=380, title="Correlation between criteria across items")
    return fig


def conditional_figure(table: pd.DataFrame) -> go.Figure:
    """Distribution of a target criterion when another is above vs at or below a threshold (Stureborg Fig. 4)."""
    sub = _inert(table, ["source"])
    sub["score"] = sub["score"].map(lambda v: f"{v:g}")
    sub["condition"] = sub["condition"].map({"above": "given above threshold", "at_or_below": "given at or below"})
    fig = px.bar(sub, x="score", y="share", color="condition", barmode="group", facet_col="source",
                 custom_data=["count", "n"], color_discrete_sequence=["#3b5bdb", "#f08c00"])
    fig.update_traces(hovertemplate="score %{x}: %{y:.0%} (%{customdata[0]} of %{customdata[1]})<extra></extra>")
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title_text="")
    _facet_labels(fig)
    _score_axis(fig, sub["score"])
    fig.update_layout(title="The target criterion's scores when the given one is high vs low", height=400,
                      margin={"t": 110}, legend={"orientation": "h", "yanchor": "bottom", "y": 1.08, "x": 0, "title": ""})
    return fig


# --------------------------------------------------------------------------- win rates

WINRATE_COLORS = {"ds": PALETTE[0], "bwrs": PALETTE[1], "observed": "#7f7f7f", "human": "#1f2430"}


def winrate_density_figure(results: Sequence, *, k: float, p_human: float | None,
                           truth: float | None = None) -> go.Figure:
    """Posterior densities of p (one curve per method) with the raw k and the humans' p as lines, and ``truth``
    (the simulated p of the sample data) as a dotted line when known."""
    fig = go.Figure()
    for r in results:
        x, y = r.density
        if not len(x):
            continue
        m = r.method
        fig.add_trace(go.Scatter(
            x=list(x), y=list(y), mode="lines", name=f"{METHOD_LABEL.get(m, m)}: mode {fmt_number(r.p_mode)}",
            line={"color": WINRATE_COLORS.get(m, PALETTE[2]), "width": 2.5}, fill="tozeroy", opacity=0.5,
            hovertemplate="p = %{x:.3f}<br>density %{y:.2f}<extra>" + METHOD_LABEL.get(m, m) + "</extra>"))
    lines = [(k, f"k = {k:.3f}", {"color": WINRATE_COLORS["observed"], "dash": "dash", "width": 2})]
    if truth is not None:
        lines.append((truth, f"simulated truth {truth:.2f}", {"color": "#2b8a3e", "dash": "dot", "width": 2}))
    if p_human is not None and np.isfinite(p_human):
        lines.append((p_human, f"humans {p_human:.3f}", {"color": WINRATE_COLORS["human"], "width": 2}))
    # The lines are often a few hundredths apart: each label on its own row at the top of the plot, beside its
    # line on the side with more room, so that no two labels meet however close the lines are.
    for i, (x, text, line) in enumerate(lines):
        fig.add_vline(x=x, line=line)
        right = x < 0.5
        fig.add_annotation(x=x, y=1 - 0.12 * i, xref="x", yref="paper", text=text, showarrow=False,
                           xanchor="left" if right else "right", xshift=5 if right else -5, yanchor="top",
                           font={"color": line["color"]}, bgcolor="rgba(255,255,255,0.75)")
    fig.update_layout(title="Posterior of the true win rate p", xaxis={"title": "p", "range": [0, 1]},
                      yaxis={"title": "density"})
    return _legend_below(fig, plot_height=220, top=60)


def forest_figure(frame: pd.DataFrame) -> go.Figure:
    """Calibrated win rates with 95% intervals per pair, beside the raw k and the humans' p.

    ``frame`` has one row per pair and method: ``pair, method, p_mode, ci_low, ci_high,
    k_observed, p_human``.
    """
    frame = _inert(frame, ["pair"])
    fig = go.Figure()
    order = list(dict.fromkeys(frame["pair"]))
    methods = list(dict.fromkeys(frame["method"]))
    offsets = {m: (i - (len(methods) - 1) / 2) * 0.22 for i, m in enumerate(methods)}
    ypos = {p: i for i, p in enumerate(order)}
    for m in methods:
        g = frame[frame["method"] == m]
        y = [ypos[p] + offsets[m] for p in g["pair"]]
        fig.add_trace(go.Scatter(
            x=g["p_mode"], y=y, mode="markers", name=METHOD_LABEL.get(m, m),
            marker={"color": WINRATE_COLORS.get(m, PALETTE[2]), "size": 10},
            error_x={"type": "data", "array": (g["ci_high"] - g["p_mode"]).clip(lower=0),
                     "arrayminus": (g["p_mode"] - g["ci_low"]).clip(lower=0), "visible": True},
            customdata=np.column_stack([g["pair"], g["ci_low"], g["ci_high"], g["p_mean"]]),
            hovertemplate="%{customdata[0]}<br>mode %{x:.3f}, mean %{customdata[3]:.3f}"
                          "<br>95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]<extra>" + METHOD_LABEL.get(m, m)
                          + "</extra>"))
    first = frame.drop_duplicates("pair")
    fig.add_trace(go.Scatter(x=first["k_observed"], y=[ypos[p] for p in first["pair"]], mode="markers",
                             name=METHOD_LABEL["observed"],
                             marker={"symbol": "x", "size": 11, "color": WINRATE_COLORS["observed"]},
                             hovertemplate="%{x:.3f}<extra>raw k</extra>"))
    if first["p_human"].notna().any():
        h = first[first["p_human"].notna()]
        fig.add_trace(go.Scatter(x=h["p_human"], y=[ypos[p] for p in h["pair"]], mode="markers",
                                 name=METHOD_LABEL["human"],
                                 marker={"symbol": "line-ns-open", "size": 18, "line": {"width": 3},
                                         "color": WINRATE_COLORS["human"]},
                                 hovertemplate="%{x:.3f}<extra>humans' p</extra>"))
    fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"})
    height = max(300, 56 * len(order) + 160)
    fig.update_layout(title="Win rate of the first system, calibrated and raw", height=height,
                      xaxis={"title": "p (share of items on which the first system is better)", "range": [0, 1]},
                      yaxis={"tickvals": list(range(len(order))), "ticktext": order, "autorange": "reversed"},
                      legend={"orientation": "h", "y": -110 / height, "x": 0}, margin={"t": 60, "b": 120})
    return fig


def error_curve_figure(curve: pd.DataFrame) -> go.Figure:
    """|estimate - humans' p| against the prior data ratio, per method and estimator (Gao et al. Fig. 2)."""
    fig = go.Figure()
    dash = {"mean": "dot", "mode": "solid", "k": "dash"}
    for (m, est), g in curve.groupby(["method", "estimator"], sort=False):
        g = g.sort_values("ratio")
        name = METHOD_LABEL.get(m, m) + ("" if m == "observed" else f" ({est})")
        fig.add_trace(go.Scatter(
            x=g["ratio"], y=g["error_mean"], mode="lines+markers" if m != "observed" else "lines", name=name,
            line={"color": WINRATE_COLORS.get(m, PALETTE[2]), "dash": dash.get(est, "solid")},
            error_y={"type": "data", "array": g["error_sd"].fillna(0), "visible": m != "observed", "thickness": 1},
            hovertemplate="ratio %{x:.1f}<br>error %{y:.3f}<extra>" + name + "</extra>"))
    fig.update_layout(title="Estimation error against the share of human labels used", height=380,
                      xaxis={"title": "prior data ratio (share of the pair's human labels used)", "range": [0, 1.02]},
                      yaxis={"title": "|estimate - humans' p|", "rangemode": "tozero"},
                      legend={"orientation": "h", "y": -0.3, "x": 0}, margin={"t": 60, "b": 110})
    return fig


def alpha_curve_figure(curve: pd.DataFrame, *, label: str, alpha: float, cv: dict | None = None) -> go.Figure:
    """A judge's measure against alpha per group, with 95% bands; the slider's alpha and the CV alpha marked.

    ``curve`` has ``group`` (a label; empty for a single line), ``alpha, estimate, ci_low, ci_high, n``;
    ``cv`` maps a group label to its cross-validated alpha (drawn as a star on its line).
    """
    fig = go.Figure()
    cv = cv or {}
    label = plot_text(label)
    for i, key in enumerate(dict.fromkeys(curve["group"])):
        g = curve[curve["group"] == key].sort_values("alpha")
        color = PALETTE[i % len(PALETTE)]
        name = plot_text(key) or label  # cv is keyed by the group's real label
        fig.add_trace(go.Scatter(x=np.concatenate([g["alpha"], g["alpha"][::-1]]),
                                 y=np.concatenate([g["ci_high"], g["ci_low"][::-1]]), fill="toself",
                                 fillcolor=color, opacity=0.18, line={"width": 0}, hoverinfo="skip",
                                 showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(
            x=g["alpha"], y=g["estimate"], mode="lines+markers", name=name, legendgroup=name,
            line={"color": color}, marker={"size": 5},
            customdata=np.column_stack([g["ci_low"], g["ci_high"], g["n"]]),
            hovertemplate="alpha %{x:.2f}<br>" + label + " %{y:.3f}<br>95% [%{customdata[0]:.3f}, "
                          "%{customdata[1]:.3f}]<br>n = %{customdata[2]} items<extra>" + name + "</extra>"))
        a_cv = cv.get(key)
        if a_cv is not None and np.isfinite(a_cv):
            at = g[np.isclose(g["alpha"], a_cv)]
            if len(at):
                fig.add_trace(go.Scatter(x=[a_cv], y=at["estimate"], mode="markers", showlegend=i == 0,
                                         name="cross-validated alpha", legendgroup="cv",
                                         marker={"symbol": "star", "size": 15, "color": color,
                                                 "line": {"color": "black", "width": 1}},
                                         hovertemplate=f"cross-validated alpha {a_cv:g}<extra>{name}</extra>"))
    fig.add_vline(x=alpha, line={"color": "#444", "dash": "dash"},
                  annotation={"text": f"slider α = {alpha:g}", "yanchor": "bottom"})
    fig.update_layout(title=f"{label[0].upper() + label[1:]}, by alpha", height=420,
                      xaxis={"title": "alpha (weight of the superficial quality subtracted)", "range": [-0.02, 1.02],
                             "dtick": 0.1},
                      yaxis={"title": label},
                      legend={"orientation": "h", "y": -0.25, "x": 0}, margin={"t": 60, "b": 100})
    return fig


#: Pixels between two measures of one judge in the position figure: a line of 10 px text and a gap.
SUB_ROW = 20


def position_figure(rows: pd.DataFrame, *, measures: Sequence[str]) -> go.Figure:
    """Per judge (row) the chosen shares with 95% intervals, one marker per measure; 0.5 marked.

    ``rows`` has ``label`` (a judge, with its group), ``measure, estimate, ci_low, ci_high, n, flagged``.
    A flagged estimate is drawn as a filled diamond.
    """
    rows = _inert(rows, ["label"])
    fig = go.Figure()
    labels = list(dict.fromkeys(rows["label"]))
    ypos = {lab: i for i, lab in enumerate(labels)}
    # Each measure its own sub-row of the judge's row (at least SUB_ROW px), its value printed beside its interval.
    step = 0.8 / max(len(measures), 1)
    offsets = {m: (i - (len(measures) - 1) / 2) * step for i, m in enumerate(measures)}
    for i, m in enumerate(measures):
        g = rows[rows["measure"] == m]
        if g.empty:
            continue
        flagged = g["flagged"].fillna(False).astype(bool).to_numpy()
        fig.add_trace(go.Scatter(
            x=g["estimate"], y=[ypos[lab] + offsets[m] for lab in g["label"]], mode="markers",
            name=POSITION_LABELS.get(m, m), marker={"color": PALETTE[i % len(PALETTE)], "size": 11,
                                                    "symbol": np.where(flagged, "diamond", "circle")},
            error_x={"type": "data", "array": (g["ci_high"] - g["estimate"]).clip(lower=0),
                     "arrayminus": (g["estimate"] - g["ci_low"]).clip(lower=0), "visible": True},
            customdata=np.column_stack([g["label"], g["ci_low"], g["ci_high"], g["n"]]),
            hovertemplate="%{customdata[0]}<br>%{x:.3f}, 95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                          "<br>n = %{customdata[3]} items<extra>" + POSITION_LABELS.get(m, m) + "</extra>"))
        _labels_beside(fig, y=[ypos[lab] + offsets[m] for lab in g["label"]], low=g["ci_low"], high=g["ci_high"],
                       estimate=g["estimate"], text=[f"{e:.2f}" for e in g["estimate"]], span=(0, 1.02), size=10)
    fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"},
                  annotation={"text": "0.5: no preference for the first position", "yanchor": "bottom"})
    plot_height = max(150, round(SUB_ROW * len(measures) / 0.8 * len(labels)))
    fig.update_layout(title="Does the verdict depend on the order? (share of items, 95% intervals)",
                      xaxis={"title": "share of items", "range": [0, 1.02], "dtick": 0.1},
                      yaxis={"tickvals": list(range(len(labels))), "ticktext": labels, "range": [len(labels) - 0.5, -0.5]})
    return _legend_below(fig, plot_height=plot_height, top=80)


def calibration_map_figure(maps: pd.DataFrame) -> go.Figure:
    """Raw P("A") against calibrated P("A") per method (``maps``: ``method, raw, calibrated``), with the diagonal."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="no change", line={"color": "#bbb", "dash": "dot"},
                             hoverinfo="skip"))
    for i, (m, g) in enumerate(maps.groupby("method", sort=False)):
        g = g.sort_values("raw")
        fig.add_trace(go.Scatter(x=g["raw"], y=g["calibrated"], mode="lines", name=METHOD_NAMES.get(m, m),
                                 line={"color": PALETTE[(i + 1) % len(PALETTE)], "width": 2},
                                 hovertemplate="raw %{x:.3f} → %{y:.3f}<extra>" + METHOD_NAMES.get(m, m) + "</extra>"))
    fig.add_hline(y=0.5, line={"color": "#ddd"})
    fig.update_layout(title="The calibration map: the judge's P(\"A\") before and after", height=440,
                      xaxis={"title": "raw P(\"A\")", "range": [0, 1], "dtick": 0.1},
                      yaxis={"title": "calibrated P(\"A\")", "range": [0, 1], "dtick": 0.1},
                      legend={"orientation": "h", "y": -0.25, "x": 0}, margin={"t": 60, "b": 100})
    return fig


def leaderboard_figure(board: pd.DataFrame, *, label: str) -> go.Figure:
    """One measure's judges, best first, with 95% intervals; a judge significantly worse than the best is hollow.

    ``board``: rows of :func:`evalcore.pointwise.leaderboard.judge_leaderboard` for one group and measure.
    """
    b = _inert(board.sort_values("rank", na_position="last"), ["judge"])
    label = plot_text(label)
    worse = b["worse_than_best"].fillna(False).astype(bool).to_numpy()
    fig = go.Figure(go.Scatter(
        x=b["estimate"], y=b["judge"], mode="markers",
        marker={"size": 11, "color": np.where(worse, "white", PALETTE[0]), "line": {"color": PALETTE[0], "width": 2}},
        error_x={"type": "data", "array": (b["ci_high"] - b["estimate"]).clip(lower=0),
                 "arrayminus": (b["estimate"] - b["ci_low"]).clip(lower=0), "visible": True},
        customdata=np.column_stack([b["ci_low"], b["ci_high"], b["diff_to_best"], b["diff_ci_low"], b["diff_ci_high"],
                                    b["n"]]),
        hovertemplate="%{y}: %{x:.3f}, 95% [%{customdata[0]:.3f}, %{customdata[1]:.3f}]<br>minus the best: "
                      "%{customdata[2]:+.3f} [%{customdata[3]:+.3f}, %{customdata[4]:+.3f}]<br>n = %{customdata[5]}"
                      "<extra></extra>"))
    # Values beside the intervals on their own row: above the dot, the top row's was cut off by the plot's edge.
    lo = pd.to_numeric(b["ci_low"], errors="coerce").fillna(b["estimate"])
    hi = pd.to_numeric(b["ci_high"], errors="coerce").fillna(b["estimate"])
    span = (float(np.nanmin(lo)), float(np.nanmax(hi))) if len(b) and np.isfinite(lo).any() else (0.0, 1.0)
    _labels_beside(fig, y=list(b["judge"]), low=lo, high=hi, estimate=b["estimate"],
                   text=[f"{e:.3f}" for e in b["estimate"]], span=span, size=10)
    height = max(280, 34 * len(b) + 140)
    fig.update_layout(title=f"Judges ranked by {label} (hollow: significantly worse than the best)", height=height,
                      xaxis={"title": label}, yaxis={"title": "", "autorange": "reversed", "type": "category"},
                      margin={"t": 60, "l": 10}, showlegend=False)
    return fig


def rater_pair_heatmap(matrix: pd.DataFrame, counts: pd.DataFrame, *, label: str) -> go.Figure:
    """Raters (rows) against annotators (columns): ``label`` in each cell with its n printed below it.

    The text is printed at a size that can be read (:func:`_cell_font_size`): with too many annotators for
    ``0.53`` and ``n=120``, the value alone; with too many for that, none (the hover has both). Rows grow
    with the lines printed; long or many column labels are angled, and the top margin holds them under
    the title.
    """
    n_cols = max(len(matrix.columns), 1)
    label = plot_text(label)
    values, ns = matrix.to_numpy(dtype=float), counts.reindex_like(matrix).fillna(0).to_numpy()
    size, lines = _cell_font_size(n_cols, max(5, len(f"n={int(ns.max()) if ns.size else 0}"))), 2
    if size is None:
        size, lines = _cell_font_size(n_cols, 5), 1
    if size is None:
        lines = 0
    text = [[("" if v != v or not lines else f"{v:.2f}" + (f"<br>n={int(n)}" if lines == 2 else ""))
             for v, n in zip(vr, nr)] for vr, nr in zip(values, ns)]
    fig = go.Figure(go.Heatmap(z=values, x=[plot_text(c) for c in matrix.columns], y=[plot_text(i) for i in matrix.index],
                               text=text, texttemplate="%{text}", textfont={"size": size or 12}, customdata=ns,
                               colorscale="RdBu", zmid=0, zmin=-1, zmax=1, colorbar={"title": label},
                               hovertemplate="%{y} vs %{x}: %{z:.3f}<br>n = %{customdata} units<extra></extra>"))
    longest = max((len(str(c)) for c in matrix.columns), default=1)
    angled = longest * 7.0 > PLOT_WIDTH / n_cols - 4  # horizontal labels would run into each other
    labels = longest * 7.0 * 0.72 + 12 if angled else 22  # px the column labels take above the cells
    top = 44 + 24 + round(labels)  # the title's line, the axis title, the labels
    row = max(22, round(lines * 1.3 * (size or 12) + 16))
    fig.update_layout(title={"text": f"{label} for every pair of raters (on the units both rated)",
                             "yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 14}},
                      height=top + row * len(matrix) + 20,
                      xaxis={"title": "annotator", "type": "category", "side": "top", "tickangle": -45 if angled else 0},
                      yaxis={"title": "rater", "type": "category", "autorange": "reversed"},
                      margin={"t": top, "b": 20})
    return fig


def confusion_heatmap(cells: pd.DataFrame, *, judge: str) -> go.Figure:
    """One confusion matrix (:func:`evalcore.pointwise.confusion.confusion_matrix`, the rows of one judge and
    group): the humans' majority label (rows) against the judge's (columns), coloured by the row share, each
    cell printing its share and count. Categories in the table's order."""
    if cells.empty:
        return go.Figure().update_layout(title="No unit with a strict human majority that this judge rated",
                                         height=200)
    order = list(dict.fromkeys(cells["human_category"]))
    share = cells.pivot(index="human_category", columns="judge_category", values="row_share").reindex(
        index=order, columns=order)
    count = cells.pivot(index="human_category", columns="judge_category", values="count").reindex(
        index=order, columns=order).fillna(0)
    values, ns = share.to_numpy(dtype=float), count.to_numpy()
    size = _cell_font_size(len(order), max(5, len(f"{int(ns.max())}")))
    text = [[("" if size is None else ("-" if v != v else f"{v:.0%}") + f"<br>{int(n)}") for v, n in zip(vr, nr)]
            for vr, nr in zip(values, ns)]
    # numbers as a reader writes them (1.333, not 1.3333333333333333); labels as written
    names = [plot_text(f"{c:.3f}".rstrip("0").rstrip(".") if isinstance(c, float) else c) for c in order]
    fig = go.Figure(go.Heatmap(
        z=values, x=names, y=names, text=text, texttemplate="%{text}", textfont={"size": size or 12}, customdata=ns,
        colorscale="Blues", zmin=0, zmax=1, colorbar={"title": "share of row", "tickformat": ".0%"},
        hovertemplate="humans %{y}, judge %{x}: %{customdata} units (%{z:.0%} of the row)<extra></extra>"))
    fig.update_layout(title=f"{plot_text(judge)} against the humans' majority label",
                      # the margins hold the titles; each row gets room for its two lines (share, count)
                      height=60 + 80 + max(56, round(3.2 * (size or 12) + 16)) * len(order),
                      xaxis={"title": "judge's label", "type": "category"},
                      yaxis={"title": "humans' majority label", "type": "category", "autorange": "reversed"},
                      margin={"t": 60, "b": 80})
    return fig


def coverage_figure(counts: pd.DataFrame, *, by: str | None) -> go.Figure:
    """Judgments per group, humans next to judges (:func:`evalcore.report.views.home.coverage`): where the data is."""
    x = by or "rater_kind"
    counts = _inert(counts, [x, "rater_kind"])
    fig = px.bar(counts, x=x, y="judgments", color="rater_kind" if "rater_kind" in counts else None,
                 barmode="group", color_discrete_map={"human": "#888888", "judge": PALETTE[1]},
                 labels={"judgments": "judgments", "rater_kind": "rater", x: plot_text(x)})
    fig.update_xaxes(type="category")
    fig.update_layout(title=f"Judgments per {plot_text(x)}" if by else "Judgments", height=260, margin={"t": 50, "b": 40},
                      legend={"title": {"text": ""}})
    return fig


def system_means_figure(means: pd.DataFrame, *, judge: str) -> go.Figure:
    """One point per system: its mean human score (x) against the judge's mean score (y), with 95% intervals
    both ways (:func:`evalcore.pointwise.meta.system_means` of one group and judge). A judge that ranks the
    systems as the humans do puts the points on a rising line; the dashed line is x = y.

    Systems are told apart by the legend (colour and symbol), not by labels beside the points: systems with
    close means would print their names over each other."""
    m = _inert(means.sort_values("human"), ["system"])
    judge = plot_text(judge)
    fig = go.Figure()
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "star"]
    for k, r in enumerate(m.itertuples()):
        fig.add_trace(go.Scatter(
            x=[r.human], y=[r.judge_score], mode="markers", name=str(r.system),
            marker={"size": 10, "color": PALETTE[k % len(PALETTE)], "symbol": symbols[(k // len(PALETTE)) % 6]},
            error_x={"type": "data", "array": [max(r.human_ci_high - r.human, 0)],
                     "arrayminus": [max(r.human - r.human_ci_low, 0)], "visible": True, "thickness": 1},
            error_y={"type": "data", "array": [max(r.judge_ci_high - r.judge_score, 0)],
                     "arrayminus": [max(r.judge_score - r.judge_ci_low, 0)], "visible": True, "thickness": 1},
            customdata=[[r.human_ci_low, r.human_ci_high, r.judge_ci_low, r.judge_ci_high, r.n]],
            hovertemplate=f"{r.system}<br>humans %{{x:.3f}} [%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}]"
                          "<br>judge %{y:.3f} [%{customdata[2]:.3f}, %{customdata[3]:.3f}]<br>n = %{customdata[4]} "
                          "items<extra></extra>"))
    lo = float(np.nanmin(np.r_[m["human"], m["judge_score"]])) if len(m) else 0.0
    hi = float(np.nanmax(np.r_[m["human"], m["judge_score"]])) if len(m) else 1.0
    fig.add_shape(type="line", x0=lo, y0=lo, x1=hi, y1=hi, line={"dash": "dash", "color": "#adb5bd", "width": 1})
    fig.update_layout(title=f"System means: humans against {judge}", height=480, showlegend=True,
                      legend={"title": {"text": "system"}, "x": 1.02, "y": 1, "xanchor": "left"},
                      xaxis={"title": "mean human score"}, yaxis={"title": f"mean score by {judge}"},
                      margin={"t": 60})
    return fig


#: The paper's guidance for epsilon (Calderon et al. 2025), drawn as light vertical lines on the curve.
EPSILON_MARKS = ((0.1, "crowd"), (0.15, "skilled"), (0.2, "experts"))


def winning_rate_figure(curve: pd.DataFrame, *, epsilon: float) -> go.Figure:
    """The Alt-Test's winning rate against epsilon, one line per judge (and group): the judge passes where its
    line reaches 0.5 (dashed). The chosen epsilon is a solid vertical line, the paper's guidance dotted."""
    curve = _inert(curve, ["label"])
    fig = px.line(curve, x="epsilon", y="winning_rate", color="label", line_shape="hv",
                  color_discrete_sequence=PALETTE,
                  labels={"epsilon": "epsilon (the judge's allowed disadvantage)",
                          "winning_rate": "winning rate (share of annotators beaten)", "label": "judge"})
    fig.add_hline(y=0.5, line_dash="dash", line_color="#868e96", annotation_text="passes at 0.5",
                  annotation_position="top left")
    for x, who in EPSILON_MARKS:
        fig.add_vline(x=x, line_dash="dot", line_color="#ced4da", annotation_text=who,
                      annotation_position="bottom right", annotation_font_color="#868e96")
    fig.add_vline(x=epsilon, line_color="#1f2430", line_width=1.5)
    fig.update_yaxes(range=[-0.02, 1.02])
    fig.update_layout(title="Winning rate of each judge against epsilon", width=FIGURE_WIDTH)
    return _legend_below(fig, plot_height=300, top=60)



#: The prediction-powered page's methods' colours.
PPI_COLORS = {"human_only": "#1f2430", "judge_only": "#adb5bd", "ppi": PALETTE[4], "ppi++": PALETTE[2],
              "bwrs": WINRATE_COLORS["bwrs"], "ds": WINRATE_COLORS["ds"]}


def ppi_forest_figure(rows: pd.DataFrame, *, measure: str, judge: str) -> go.Figure:
    """The estimates per cell with their intervals, one marker per method (humans only, the judge alone, PPI++,
    and on comparisons Gao et al.'s BWRS and Dawid-Skene), cells top to bottom in the table's order.

    ``rows`` has ``label, method, estimate, ci_low, ci_high``; ``measure`` names the x-axis.
    """
    rows = _inert(rows, ["label"])
    order = list(dict.fromkeys(rows["label"]))
    methods = [m for m in PPI_METHOD_NAMES if m in set(rows["method"])]
    offsets = {m: (i - (len(methods) - 1) / 2) * min(0.16, 0.8 / max(len(methods), 1)) for i, m in enumerate(methods)}
    ypos = {p: i for i, p in enumerate(order)}
    fig = go.Figure()
    for m in methods:
        g = rows[rows["method"] == m]
        lo, hi = g["ci_low"].to_numpy(dtype=float), g["ci_high"].to_numpy(dtype=float)
        est = g["estimate"].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(
            x=est, y=[ypos[p] + offsets[m] for p in g["label"]], mode="markers", name=PPI_METHOD_NAMES[m],
            marker={"color": PPI_COLORS[m], "size": 9, "symbol": "diamond" if m == "ppi++" else "circle"},
            error_x={"type": "data", "array": np.nan_to_num(hi - est, nan=0).clip(0),
                     "arrayminus": np.nan_to_num(est - lo, nan=0).clip(0), "visible": True},
            customdata=np.column_stack([g["label"], lo, hi]),
            hovertemplate="%{customdata[0]}<br>%{x:.3f}, 95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                          "<extra>" + PPI_METHOD_NAMES[m] + "</extra>"))
    height = max(300, 44 * len(order) + 170)
    title = {"mean_score": "Mean human score", "pass_rate": "Humans' pass rate",
             "win_rate": "Humans' win rate of the first system"}.get(measure, measure)
    fig.update_layout(title=f"{title}: humans only, {judge} alone, and corrected", height=height, width=FIGURE_WIDTH,
                      xaxis={"title": {"mean_score": "mean score", "pass_rate": "share of items that pass",
                                       "win_rate": "win rate (a tie counts 1/2)"}.get(measure, "estimate")},
                      yaxis={"tickvals": list(range(len(order))), "ticktext": order, "autorange": "reversed"})
    if measure == "win_rate":
        fig.add_vline(x=0.5, line={"color": "#999", "dash": "dot"})
    return _legend_below(fig, plot_height=height - 170, top=60)


def ppi_width_figure(curve: pd.DataFrame, *, label: str, share: float | None = None) -> go.Figure:
    """The what-if curve of one cell: the 95% interval's width against the share of items given human labels, for
    PPI++ and for humans only (mean over random subsets), the humans-only width with every label as a dashed line,
    and the share at which PPI++ reaches it marked (dotted), as is the ``share`` chosen (solid)."""
    fig = go.Figure()
    for col, m in (("width_human_only", "human_only"), ("width_ppi", "ppi++")):
        cover = curve["covered_ppi" if m == "ppi++" else "covered_human_only"]
        fig.add_trace(go.Scatter(
            x=curve["share"], y=curve[col], mode="lines+markers", name=PPI_METHOD_NAMES[m],
            line={"color": PPI_COLORS[m]}, customdata=np.column_stack([curve["n_labeled"], cover]),
            hovertemplate="share %{x:.2f} (%{customdata[0]} labels)<br>width %{y:.3f}<br>"
                          "holds the full-data value in %{customdata[1]:.0%} of subsets<extra>" + PPI_METHOD_NAMES[m]
                          + "</extra>"))
    full = float(curve["full_width_human_only"].iloc[0]) if len(curve) else float("nan")
    if np.isfinite(full):
        fig.add_hline(y=full, line={"color": "#868e96", "dash": "dash"},
                      annotation_text="humans only, every label", annotation_position="bottom left")
    match = curve["matching_share"].iloc[0] if len(curve) else np.nan
    if pd.notna(match):
        fig.add_vline(x=float(match), line={"color": PPI_COLORS["ppi++"], "dash": "dot"},
                      annotation_text=f"PPI++ reaches it at {float(match):.0%}", annotation_position="top left")
    if share is not None:
        fig.add_vline(x=float(share), line={"color": "#1f2430", "width": 1})
    fig.update_layout(title=f"Interval width against the share of human labels: {label}", height=380,
                      width=FIGURE_WIDTH, xaxis={"title": "share of items with human labels", "range": [0, 1.02]},
                      yaxis={"title": "width of the 95% interval", "rangemode": "tozero"})
    return _legend_below(fig, plot_height=260, top=60)


def systems_forest_figure(rows: pd.DataFrame, *, measure: str = "elo", title: str) -> go.Figure:
    """The systems leaderboard per source: one row per system (the humans' order, best at the top), one marker per
    source (humans, each judge, corrected) with its 95% interval.

    ``rows`` has ``rater, system, estimate, ci_low, ci_high`` (:func:`evalcore.report.views.systems.forest_rows`).
    """
    rows = _inert(rows, ["rater", "system"])
    order = list(dict.fromkeys(rows["system"]))
    raters = list(dict.fromkeys(rows["rater"]))
    ypos = {s: i for i, s in enumerate(order)}
    step = min(0.16, 0.8 / max(len(raters), 1))
    colors = {r: ("#1f2430" if i == 0 and r == "humans" else PALETTE[i % len(PALETTE)]) for i, r in enumerate(raters)}
    fig = go.Figure()
    for i, r in enumerate(raters):
        g = rows[rows["rater"] == r]
        est, lo, hi = (g[c].to_numpy(dtype=float) for c in ("estimate", "ci_low", "ci_high"))
        fig.add_trace(go.Scatter(
            x=est, y=[ypos[s] + (i - (len(raters) - 1) / 2) * step for s in g["system"]], mode="markers", name=r,
            marker={"color": colors[r], "size": 9, "symbol": "diamond" if r.startswith("ppi") else "circle"},
            error_x={"type": "data", "array": np.nan_to_num(hi - est, nan=0).clip(0),
                     "arrayminus": np.nan_to_num(est - lo, nan=0).clip(0), "visible": True},
            customdata=np.column_stack([g["system"], lo, hi]),
            hovertemplate="%{customdata[0]}<br>%{x:.3f}, 95% [%{customdata[1]:.3f}, %{customdata[2]:.3f}]<extra>"
                          + str(r) + "</extra>"))
    height = max(300, 48 * len(order) + 170)
    axis = {"elo": "Elo-scale score (1000 = the average system; 400/ln 10 per logit)",
            "bt_score": "Bradley-Terry score (log-odds, mean 0)"}.get(measure, measure)
    fig.update_layout(title=title, width=FIGURE_WIDTH, xaxis={"title": axis},
                      yaxis={"tickvals": list(range(len(order))), "ticktext": order, "autorange": "reversed"})
    return _legend_below(fig, plot_height=height - 170, top=60)
