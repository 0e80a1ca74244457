"""The self-contained HTML report: one file that opens offline and holds the whole audit.

Sections, in order: what the data is (:func:`evalcore.data.summary.summarize`); the judge report card
(:mod:`evalcore.report.card`); every analysis the data supports, as figures (:mod:`evalcore.report.plots`)
with their numbers printed in tables ("0.850 [0.820, 0.880]" cells and an ``n`` column); the parameters
and the CLI command that reproduces each section's numbers.

Offline: plotly.js is embedded once (:func:`plotly.offline.get_plotlyjs`) and every figure is written with
``include_plotlyjs=False``; nothing is loaded from the network (no CDN, no web font). Every string that comes
from the data (judge names, column values, notes) is escaped: with :func:`html.escape` in the report's text and
tables, and with :func:`evalcore.text.plot_text` in the figures (titles, axis and tick labels, legends, hover
text), where Plotly would otherwise draw a name's ``<a href>`` as a live link. No statistics here:
every number comes from an evalcore function, through :func:`evalcore.report.card.run_audit`.
"""

from __future__ import annotations

import html
import platform
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..text import plot_text
from .card import SUPERFICIAL_ALPHA, WINRATE_PRIOR, Audit, ReportCard, report_card, run_audit

__all__ = ["Report", "build_report", "html_report", "render", "write_report"]

#: How the report names the code names it prints.
MEASURE_NAMES = {
    "percent_agreement": "percent agreement", "cohen_kappa": "Cohen's kappa", "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)", "kendall_tau": "Kendall's tau",
    "pairwise_agreement_gap": "agreement gap: judge-human minus human-human",
    "tau_difference": "familiarity: tau(score, perplexity), judge minus humans",
    "r_difference": "anchoring: correlation between criteria, judge minus humans",
    "agreement_position_slope": "agreement by position of the criterion in the prompt (slope)",
    "top_share_difference": "share of top scores, judge minus humans", "mean_shift": "mean score, judge minus humans",
    "entropy_difference": "use of the scale (entropy), judge minus humans",
    "round_excess_5_difference": "excess of multiples of 5, judge minus humans",
    "round_excess_10_difference": "excess of multiples of 10, judge minus humans",
    "alpha_difference": "self-consistency: alpha across samples minus humans' alpha",
    "category_share_difference": "share of a category, judge minus humans",
    "mean_perplexity_difference": "familiarity: mean perplexity of a category's items, judge minus humans",
    "alpha_across_variants_difference": "alpha across prompt variants minus humans' alpha",
    "accuracy": "accuracy against the humans' majority"}
FLAG_RULE = ("A result is <b>flagged</b> when its bootstrap test in the direction that means harm is significant "
             "after controlling the false discovery rate at 5% across every test of its analysis "
             "(Benjamini-Hochberg q &le; 0.05). Anything else is <i>not flagged</i>: this report claims nothing "
             "that a flag or a 95% interval does not support.")
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1180px;
padding:1rem 1.5rem;color:#1f2430;line-height:1.45}
h1{font-size:1.7rem}h2{border-bottom:2px solid #dee2e6;padding-bottom:.2rem;margin-top:2.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.86rem}th,td{border:1px solid #dee2e6;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f1f3f5}td.num{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap}
.verdict{font-size:1.05rem;margin:.3rem 0 .6rem}.card{border:1px solid #ced4da;border-radius:6px;padding:.6rem 1rem;
margin:.8rem 0}.flag{color:#c92a2a;font-weight:600}code,pre{background:#f8f9fa;padding:.1rem .3rem;border-radius:3px;
font-size:.85rem}pre{padding:.6rem;overflow-x:auto;white-space:pre-wrap}.muted{color:#666}details{margin:.4rem 0}
.figure{margin:1rem 0}
"""


def _esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(v: object, digits: int = 3) -> str:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if not np.isfinite(f) else f"{f:.{digits}f}"


def cell(estimate: float, ci_low: float, ci_high: float) -> str:
    """An estimate with its interval as the report prints it.

    >>> cell(0.85, 0.82, 0.88), cell(0.5, float("nan"), float("nan")), cell(float("nan"), 0, 1)
    ('0.850 [0.820, 0.880]', '0.500 (no interval)', 'n/a')
    """
    if estimate is None or not np.isfinite(estimate):
        return "n/a"
    if ci_low is None or ci_high is None or not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return f"{estimate:.3f} (no interval)"
    return f"{estimate:.3f} [{ci_low:.3f}, {ci_high:.3f}]"


def _q(v: object) -> str:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    return "" if not np.isfinite(f) else ("< 0.0001" if f < 1e-4 else f"{f:.2g}")


def table_html(frame: pd.DataFrame, *, numeric: Sequence[str] = (), caption: str | None = None) -> str:
    """``frame`` as an HTML table, every cell escaped; ``numeric`` columns right-aligned."""
    head = "".join(f"<th>{_esc(c)}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False):
        tds = "".join(f'<td class="num">{_esc(v)}</td>' if c in numeric else f"<td>{_esc(v)}</td>"
                      for c, v in zip(frame.columns, rec))
        rows.append(f"<tr>{tds}</tr>")
    cap = f"<caption>{_esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def figure_html(fig, *, x_title: str = "", y_title: str = "") -> str:
    """One figure without plotly.js (the report embeds it once), with a title and labelled axes."""
    if not fig.layout.title.text:
        raise ValueError("every figure of the report needs a title")
    for axis, given in (("xaxis", x_title), ("yaxis", y_title)):
        ax = fig.layout[axis]
        if given or not (ax.title and ax.title.text):  # a given title replaces a builder's code name
            fig.layout[axis].title = {"text": given or ("value" if axis == "xaxis" else "group")}
    body = fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True})
    return f'<div class="figure">{body}</div>'


# --------------------------------------------------------------------------- sections


def _summary_section(ing, audit: Audit) -> str:
    from ..data.summary import summarize, unlocks

    s = summarize(ing.frame, table=ing.table)
    rows = [("table", s.table), ("source", ing.source), ("rows", f"{s.rows:,}"), ("items", f"{s.items:,}"),
            ("human raters", f"{s.human_raters} (up to {s.max_humans_per_item} per item)"), ("judges", s.judges),
            ("languages", ", ".join(s.languages) or "-"), ("criteria", ", ".join(s.criteria) or "-"),
            ("tasks", ", ".join(s.tasks) or "-")]
    if s.systems:
        rows.append(("systems", ", ".join(s.systems)))
    av = unlocks(ing.frame, table=ing.table)
    av = av[av["table"] == ing.table]
    shown = pd.DataFrame({"analysis": av["title"], "supported": av["available"].map({True: "yes", False: "no"}),
                          "would need": av["missing"]})
    from ..pointwise.scale_use import stray_scores

    # A score far outside its criterion's others (a typo such as 1e6 on 0-100) sets the scale every analysis reads.
    strays = [f"On {c}: {n}." for c, n in stray_scores(ing.frame).items()] if ing.table == "ratings" else []
    notes = "".join(f"<li>{_esc(n)}</li>" for n in [*ing.notes, *strays])
    return ("<h2 id='data'>2. The data</h2>" + table_html(pd.DataFrame(rows, columns=["what", "value"]))
            + (f"<p>Import notes:</p><ul>{notes}</ul>" if notes else "")
            + "<details><summary>Which analyses this table supports</summary>" + table_html(shown) + "</details>")


def _one_line(ing) -> str:
    """What the data is, in one sentence above the report card (the table is section 2)."""
    from ..data.summary import summarize

    s = summarize(ing.frame, table=ing.table)
    what = "ratings" if s.table == "ratings" else "pairwise verdicts"
    parts = [f"{s.rows:,} {what} of {s.items:,} items by {s.human_raters} human(s) and {s.judges} judge(s)"]
    for one, many, values in (("language", "languages", s.languages), ("criterion", "criteria", s.criteria),
                              ("system", "systems", s.systems)):
        if values:
            parts.append(f"{len(values)} {one if len(values) == 1 else many}")
    return "; ".join(parts) + "."


def _card_section(card: ReportCard) -> str:
    overview = pd.DataFrame({"judge": [c.judge for c in card.cards], "verdict": [c.verdict for c in card.cards],
                             "findings": [len(c.findings) for c in card.cards]})
    parts = ["<h2 id='card'>1. Judge report card: which judges can be trusted, for what</h2>", f"<p>{FLAG_RULE}</p>",
             table_html(overview, numeric=["findings"]) if len(overview) else
             "<p>No judge could be audited: the table has no judge rows that can be compared with humans.</p>"]
    for c in card.cards:
        mits = "".join(f"<li><b>{_esc(m.finding)}</b> {_esc(m.action)} <span class='muted'>({_esc(m.source)})</span>"
                       "</li>" for m in c.mitigations)
        found = pd.DataFrame([{"section": f.section, "measure": MEASURE_NAMES.get(f.measure, f.measure),
                               "where": f.group, "estimate [95% CI]": cell(f.estimate, f.ci_low, f.ci_high),
                               "n (items)": f.n, "q": _q(f.q_value)} for f in c.findings])
        said = "".join(f"<li>{_esc(x)}</li>" for x in (c.sentences or (c.verdict,)))
        parts.append(f"<div class='card'><h3>{_esc(c.judge)}</h3><ul class='verdict'>{said}</ul>"
                     + (f"<p>What to do:</p><ul>{mits}</ul>" if mits else "<p>Nothing flagged: no mitigation "
                                                                          "needed.</p>")
                     + (f"<details><summary>{len(found)} finding(s)</summary>"
                        + table_html(found, numeric=["estimate [95% CI]", "n (items)", "q"]) + "</details>"
                        if len(found) else "") + "</div>")
    return "".join(parts)


def _where(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a ``where`` label from the ``by`` columns (``all items`` without)."""
    by = [c for c in by if c in frame.columns]
    if not by or frame.empty:
        return frame.assign(where="all items")
    label = frame[by].astype(object).apply(lambda r: " / ".join(str(v) for v in r if pd.notna(v)) or "all items",
                                           axis=1)
    return frame.assign(where=label)


def _repro(commands: Sequence[str]) -> str:
    return "<p>Reproduce these numbers:</p><pre>" + "\n".join(_esc(c) for c in commands) + "</pre>"


@dataclass(frozen=True)
class _Ctx:
    """What every section needs: the input's command-line form and the run's parameters."""

    inputs: str
    n_boot: int
    seed: int

    def cmd(self, command: str, *extra: str, boot: bool = True) -> str:
        opts = [*extra, *(["--boot", str(self.n_boot)] if boot else []), "--seed", str(self.seed), "--json"]
        return f"evalcore {command} {self.inputs} " + shlex.join(opts)


# --------------------------------------------------------------------------- ratings

#: The agreement table's columns: measure -> header (humans' rows and judges' rows share the first).
AGREEMENT_COLUMNS = {"percent_agreement": "percent agreement", "cohen_kappa": "Cohen's kappa",
                     "fleiss_kappa": "Fleiss' kappa", "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)",
                     "pairwise_agreement_gap": "gap vs humans"}


def agreement_table(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """One row per group and rater (humans or a judge): the chosen measures as "est [lo, hi]" cells, n items,
    and ``flagged`` (the gap's flag and q-value)."""
    from .views.common import with_humans_named

    rows = with_humans_named(table[table["measure"].isin(list(AGREEMENT_COLUMNS))], label="humans")
    flag = np.where(rows["flagged"], "▼ flagged, q " + rows["q_value"].map(_q), "")
    rows = rows.assign(cell=[cell(e, lo, hi) for e, lo, hi in zip(rows["estimate"], rows["ci_low"], rows["ci_high"])],
                       flag=flag)
    keys = [*by, "judge"]
    wide = rows.pivot_table(index=keys, columns="measure", values="cell", aggfunc="first", sort=False)
    wide = wide[[m for m in AGREEMENT_COLUMNS if m in wide.columns]].rename(columns=AGREEMENT_COLUMNS)
    pa = rows[rows["measure"] == "percent_agreement"].set_index(keys)["n"]
    gap = rows[rows["measure"] == "pairwise_agreement_gap"].set_index(keys)["flag"]
    out = wide.assign(**{"n (items)": pa.reindex(wide.index).to_numpy(),
                         "flagged": gap.reindex(wide.index).fillna("").to_numpy()}).reset_index()
    return out.rename(columns={"judge": "rater"}).fillna("")


def _agreement_section(audit: Audit, ctx: _Ctx) -> str:
    from .plots import agreement_figure, effect_figure

    table, card_t = audit.results["agreement"], audit.results["agreement_card"]
    cells, group = list(audit.cells), list(card_t.columns[:list(card_t.columns).index("judge")])
    parts = ["<h3 id='agreement'>Agreement with humans</h3>",
             "<p>Each judge against the humans' strict majority, beside the humans among themselves; 95% item-"
             "bootstrap intervals. ▼: the judge agrees with humans less than humans agree with each other "
             "(pairwise_agreement_gap, flagged).</p>"]
    gap = _where(card_t, group)
    if (gap["measure"] == "pairwise_agreement_gap").any():
        fig = effect_figure(gap, measure="pairwise_agreement_gap", y="where",
                            title="Agreement gap: judge-human minus human-human agreement (below 0: worse)")
        parts.append(figure_html(fig, x_title="agreement gap", y_title=plot_text(" / ".join(group)) or "all items"))
    judges = sorted(table["judge"].dropna().astype(str).unique())
    for j in [None, *judges[:6]]:
        fig = agreement_figure(table, measure="percent_agreement", judge=j, by=cells)
        parts.append(figure_html(fig, x_title="percent agreement", y_title=plot_text(cells[0]) if cells else "all items"))
    if len(judges) > 6:
        parts.append(f"<p class='muted'>Figures for the first 6 of {len(judges)} judges; the table has all.</p>")
    shown = agreement_table(table, cells)
    parts.append(f"<details><summary>Agreement table ({len(shown)} rows: estimate [95% CI] and n per group and "
                 "rater)</summary><p>On the humans' rows the measures are among the annotators. On a judge's row, "
                 "percent agreement and Cohen's kappa are against the humans' strict majority; Fleiss' kappa and "
                 "Krippendorff's alpha are the humans' with the judge added as one more rater; the gap is the judge's "
                 "pairwise agreement with humans minus the humans' with each other.</p>"
                 + table_html(shown, numeric=[*AGREEMENT_COLUMNS.values(), "n (items)"]) + "</details>")
    cmds = [ctx.cmd("agreement", "--by", *(cells or ["none"]))]
    if group != cells:
        cmds.append(ctx.cmd("agreement", "--by", *(group or ["none"])) + "   # the report card's grouping")
    return "".join(parts) + _repro(cmds)


def bias_table(records: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The tested bias results as the report prints them: where, judge, measure, "est [lo, hi]", n, q, flag."""
    tested = records[records["test"].notna() & records["estimate"].notna()]
    return pd.DataFrame({
        "section": tested["section"], "judge": tested["judge"],
        "where": _where(tested, [*by, "criterion", "category"])["where"],
        "measure": tested["measure"].map(lambda m: MEASURE_NAMES.get(m, m)),
        "estimate [95% CI]": [cell(e, lo, hi) for e, lo, hi in zip(tested["estimate"], tested["ci_low"],
                                                                  tested["ci_high"])],
        "n (items)": tested["n"], "q": tested["q_value"].map(_q),
        "verdict": np.where(tested["flagged"], "flagged", np.where(tested["opposite"], "other direction (not a bias)",
                                                                   "not flagged"))})


def _bias_section(audit: Audit, ctx: _Ctx) -> str:
    from ..pointwise.bias_report import BiasReport
    from .plots import effect_figure

    rep = BiasReport(audit.results["bias"])
    by = list(audit.group)
    parts = ["<h3 id='bias'>Bias diagnostics</h3>",
             "<p>Familiarity, score distribution, anchoring and self-consistency (Stureborg et al. 2024; Hada et al. "
             "2024), judge minus humans, with 95% item-bootstrap intervals. Filled diamonds are flagged.</p>"]
    for section, reason in rep.skipped:
        parts.append(f"<p class='muted'>Not run: {_esc(section)}: {_esc(reason)}</p>")
    for section, _, reason in rep.not_applicable:
        parts.append(f"<p class='muted'>{_esc(section.replace('_', ' ').capitalize())}: {_esc(reason)}.</p>")
    rec = rep.recommendations
    if len(rec):
        parts.append("<p>What was found, and what to do:</p>" + table_html(
            rec[["finding", "recommendation", "judges", "evidence", "source"]]))
    res = _where(rep.results, [*by, "criterion", "category"])
    tested = [m for m in dict.fromkeys(res.loc[res["test"].notna() & res["estimate"].notna(), "measure"])]
    for m in tested:
        fig = effect_figure(res, measure=m, y="where", title=MEASURE_NAMES.get(m, m))
        parts.append(figure_html(fig, x_title=m.replace("_", " "), y_title=plot_text(" / ".join([*by, "criterion"]))))
    shown = bias_table(rep.results, by)
    flagged = shown[shown["verdict"] == "flagged"]
    parts.append(f"<details><summary>Flagged results ({len(flagged)})</summary>"
                 + table_html(flagged, numeric=["estimate [95% CI]", "n (items)", "q"]) + "</details>")
    parts.append(f"<details><summary>Every tested result ({len(shown)})</summary>"
                 + table_html(shown, numeric=["estimate [95% CI]", "n (items)", "q"]) + "</details>")
    return "".join(parts) + _repro([ctx.cmd("bias", *(["--by", *by] if by else []))])


#: How the report names the meta-evaluation measures.
META_NAMES = {"kendall_tau": "Kendall's tau (items)", "spearman_rho": "Spearman's rho (items)",
              "kendall_tau_system": "Kendall's tau (systems)", "spearman_rho_system": "Spearman's rho (systems)",
              "pearson_r_system": "Pearson's r (systems)", "kendall_tau_input": "Kendall's tau (per input, averaged)",
              "spearman_rho_input": "Spearman's rho (per input, averaged)",
              "pearson_r_input": "Pearson's r (per input, averaged)"}


def leaderboard_table(board: pd.DataFrame) -> pd.DataFrame:
    """One group's and measure's leaderboard as the report prints it: rank, judge, estimate [95% CI], the paired
    difference to the best [95% CI], n with what it counts (``n_unit``), the items and systems behind it, the
    verdict."""
    unit = str(board["n_unit"].iloc[0]) if len(board) else "items"
    best = board["rank"].fillna(0).astype(int).eq(1) & board["diff_to_best"].eq(0)
    diff = ["the best" if b else "" if not np.isfinite(d) else f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            for b, d, lo, hi in zip(best, board["diff_to_best"].astype(float), board["diff_ci_low"].astype(float),
                                    board["diff_ci_high"].astype(float))]
    out = pd.DataFrame({
        "rank": board["rank"].astype(object).where(board["rank"].notna(), ""), "judge": board["judge"],
        "estimate [95% CI]": [cell(e, lo, hi) for e, lo, hi in zip(board["estimate"], board["ci_low"],
                                                                  board["ci_high"])],
        "minus the best (paired) [95% CI]": diff, f"n ({unit} resampled)": board["n"], "items": board["n_items"]})
    if str(board["measure"].iloc[0]).endswith(("_system", "_input")):
        out["systems"] = board["n_systems"]
    out["verdict"] = np.where(board["worse_than_best"], "worse than the best", "")
    return out


def _board_reading(board: pd.DataFrame) -> str:
    """One group's and measure's leaderboard in a sentence: the best, and which judges are clearly worse."""
    ranked = board[board["rank"].notna()]
    if ranked.empty:
        return "No judge has a defined estimate here."
    top = ranked[ranked["rank"] == 1]
    worse = ranked[ranked["worse_than_best"]]["judge"].astype(str).tolist()
    close = [j for j in ranked["judge"].astype(str) if j not in worse and j not in set(top["judge"].astype(str))]
    text = ("Best" + (f" ({len(top)} tied)" if len(top) > 1 else "") + ": "
            + _names_list([f"{r['judge']} ({cell(r['estimate'], r['ci_low'], r['ci_high'])})"
                           for _, r in top.iterrows()]) + ".")
    if close:
        text += (" Not clearly worse (the paired 95% interval of the difference reaches 0): "
                 + (", ".join(close[:8]) + (f" and {len(close) - 8} more" if len(close) > 8 else "")) + ".")
    if worse:
        text += f" Clearly worse: {len(worse)} judge{'s' if len(worse) != 1 else ''}."
    undefined = board[board["rank"].isna()]
    if len(undefined):  # a judge left out of the ranking is named, with why
        text += " Not ranked: " + _names_list([f"{r['judge']} ({r['note'] or 'not defined'})"
                                               for _, r in undefined.head(5).iterrows()]) + (
            f" and {len(undefined) - 5} more" if len(undefined) > 5 else "") + "."
    return text


def _names_list(values: Sequence[str]) -> str:
    values = list(values)
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


#: The system- and input-level measures the report's table shows (the CLI prints all of META_MEASURES).
META_SHOWN = ("kendall_tau_system", "pearson_r_system", "kendall_tau_input")


def _judges_section(audit: Audit, ctx: _Ctx) -> str:
    """Which judge to use: the leaderboard per group and measure, and the system- (and input-) level table."""
    from .plots import leaderboard_figure
    from .views.agreement import meta_view

    parts = ["<h3 id='judges'>Which judge to use</h3>"]
    board, meta = audit.results.get("leaderboard"), audit.results.get("meta")
    by = list(audit.group)
    if board is not None and not board.empty:
        unit = str(board["n_unit"].iloc[0])
        parts.append(
            "<p>The judges ranked by their correlation with the humans' mean score, per criterion"
            + (" and " + " and ".join(by) if by else "") + ". The difference to the best judge comes from a paired "
            f"bootstrap (every judge on the same resamples of {unit}); a judge is <i>worse than the best</i> only "
            f"when that interval lies below 0. <b>n</b> counts the {unit} resampled"
            + (" (each input brings every system's output for it), <b>items</b> the outputs behind the estimate"
               if unit == "inputs" else "") + ".</p>")
        keys = ["criterion", *by]
        shown_figures = 0
        for key, g in board.groupby(keys, sort=True, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            where = " / ".join(str(k) for k in key)
            for measure, rows in g.groupby("measure", sort=False):
                label = META_NAMES.get(measure, measure)
                parts.append(f"<h4>{_esc(where)}: {_esc(label)}</h4><p>{_esc(_board_reading(rows))}</p>")
                if shown_figures < 6 and measure == "kendall_tau" and rows["estimate"].notna().any():
                    fig = leaderboard_figure(rows, label=label)
                    fig.update_layout(title=f"{plot_text(where)}: judges ranked by {plot_text(label)} (hollow: worse "
                                            "than the best)")
                    parts.append(figure_html(fig, x_title=label, y_title="judge"))
                    shown_figures += 1
                shown = leaderboard_table(rows)
                parts.append(f"<details><summary>{_esc(where)}, {_esc(label)}: the table ({len(shown)} judges)"
                             "</summary>" + table_html(shown, numeric=[c for c in shown.columns
                                                                       if c not in ("judge", "verdict")]) + "</details>")
    if meta is not None and not meta.empty:
        from ..pointwise.meta import ITEMS_RESAMPLED

        unit = "items" if meta["note"].astype(str).str.contains(ITEMS_RESAMPLED, regex=False).any() else "inputs"
        shown = meta[meta["measure"].isin(META_SHOWN) & meta["estimate"].notna()]
        wide = meta_view(shown if len(shown) else meta).rename(columns={**META_NAMES, "inputs": f"n ({unit})"})
        parts.append("<h4>System- and input-level correlation</h4><p>System level: each system's mean score over "
                     "its items, judge against humans, correlated across systems (SummEval, Fabbri et al. 2021; "
                     "G-Eval, Liu et al. 2023). Input level: the correlation across the systems' outputs for each "
                     f"input, averaged over inputs. 95% intervals from resampling {unit}; <b>n</b> counts the {unit} "
                     "behind an estimate, <b>systems</b> the systems. Spearman's rho at both levels and Pearson's r "
                     "per input: the second command below.</p>"
                     + table_html(wide, numeric=[c for c in wide.columns if c not in ("judge", "criterion", *by)]))
    cmd_by = ["--by", *by, "criterion"]
    cmds = [ctx.cmd("agreement", *cmd_by, "--leaderboard")] if board is not None and not board.empty else []
    if meta is not None and not meta.empty:
        cmds.append(ctx.cmd("agreement", *cmd_by) + "   # the system- and input-level rows")
    return "".join(parts) + _repro(cmds)


# --------------------------------------------------------------------------- comparisons


def _accuracy_section(audit: Audit, ctx: _Ctx) -> str:
    from .plots import effect_figure

    acc = audit.results["accuracy"]
    fig = effect_figure(acc, measure="accuracy", y="judge", zero=False,
                        title="Judge accuracy against the humans' strict majority (a / b / tie)")
    shown = pd.DataFrame({"judge": acc["judge"], "accuracy [95% CI]": [
        cell(e, lo, hi) for e, lo, hi in zip(acc["estimate"], acc["ci_low"], acc["ci_high"])],
        "n (items)": acc["n"], "unparsed outputs": acc.get("n_invalid", 0), "note": acc["note"]})
    return ("<h3 id='accuracy'>Judge accuracy</h3><p>Each judge's verdict (both orders combined) against the "
            "humans' strict majority; unparsed outputs left out.</p>" + figure_html(fig, x_title="accuracy")
            + table_html(shown, numeric=["accuracy [95% CI]", "n (items)", "unparsed outputs"])
            + _repro([ctx.cmd("winrate", "--accuracy")]))


def _position_section(audit: Audit, ctx: _Ctx) -> str:
    from .plots import position_figure
    from .views.position_bias import before_after, position_rows

    rep = audit.results["position"]
    rows = position_rows(rep, by=[])
    fig = position_figure(rows, measures=["position_consistency", "first_position_preference", "accuracy_average"])
    parts = ["<h3 id='position'>Position bias</h3>",
             "<p>Verdicts in both orders, before and after calibration (PriDe; CalibraEval NOA) where the judge gives "
             "P('A'). First-position preference is tested against 0.5 (⚑ flagged).</p>",
             figure_html(fig, x_title="share of items", y_title="judge")]
    for judge in dict.fromkeys(rep["judge"].astype(str)):
        shown = before_after(rep, judge=judge, by=[])
        n = rep[(rep["judge"] == judge) & (rep["method"] == "none") & (rep["measure"] == "position_consistency")]["n"]
        parts.append(f"<p><b>{_esc(judge)}</b> (n = {_esc(int(n.iloc[0]) if len(n) else 'n/a')} items)</p>"
                     + table_html(shown, numeric=[c for c in shown.columns if c != "measure"]))
    calibrate = [] if (rep["method"] != "none").any() else ["--calibrate", "none"]
    return "".join(parts) + _repro([ctx.cmd("position", *calibrate)])


def _superficial_section(audit: Audit, ctx: _Ctx) -> str:
    from .plots import alpha_curve_figure
    from .views.superficial_quality import superficial_at, superficial_curve, superficial_reading, superficial_shown

    table = audit.results["superficial"]
    by = [c for c in ("subset",) if c in table.columns and table[c].notna().any()]
    q = str(table["q"].iloc[0])
    parts = ["<h3 id='superficial'>Superficial quality</h3>",
             f"<p>P_hat = Norm(P) - alpha * Norm(Q), Q = {_esc(q)}, min-max Norm (Zhou et al. 2024): accuracy against "
             f"the humans' label at each alpha; the table reads alpha = {SUPERFICIAL_ALPHA:g}; a change counts only "
             "where its 95% interval excludes 0 (no flag).</p>"]
    for judge in dict.fromkeys(table["judge"].astype(str)):
        mine = table[table["judge"] == judge]
        curve, cv = superficial_curve(mine, by=by, measure="accuracy")
        fig = alpha_curve_figure(curve, label="accuracy", alpha=SUPERFICIAL_ALPHA, cv=cv)
        fig.update_layout(title=f"{plot_text(judge)}: accuracy by alpha")
        at = superficial_at(mine, SUPERFICIAL_ALPHA, by=by, measure="accuracy")
        parts.append(f"<h4>{_esc(judge)}</h4>" + figure_html(fig)
                     + f"<p>{_esc(superficial_reading(at, by=by, alpha=SUPERFICIAL_ALPHA, label='accuracy'))}</p>"
                     + table_html(superficial_shown(at, by=by, label="accuracy"), numeric=["items"]))
    extra = ["--q", q, *(["--by", *by] if by else [])]
    return "".join(parts) + _repro([ctx.cmd("superficial", *extra)])


def _winrate_section(audit: Audit, ctx: _Ctx) -> str:
    from .plots import forest_figure

    frame = audit.results["winrate"]
    fig = forest_figure(frame)
    shown = pd.DataFrame({
        "pair": frame["pair"], "raw judge win rate k": frame["k_observed"].map(_num),
        "calibrated p, mode [95% CI]": [cell(e, lo, hi) for e, lo, hi in zip(frame["p_mode"], frame["ci_low"],
                                                                           frame["ci_high"])],
        "humans' p": frame["p_human"].map(_num), "n (items)": frame["n_items"],
        "human labels used": frame["n_human_labelled"], "warnings": frame["warnings"]})
    return ("<h3 id='winrate'>Calibrated win rates</h3>"
            f"<p>BWRS (Gao et al. 2024), the judges' accuracies learnt from a seeded {WINRATE_PRIOR.split(':')[1]} "
            "share of each pair's human labels. Bayesian Dawid-Skene is left out of the report for speed; the "
            "second command below runs it.</p>"
            + figure_html(fig, y_title="system pair") + table_html(shown, numeric=list(shown.columns[1:6]))
            + _repro([ctx.cmd("winrate", "--method", "bwrs", "--prior", WINRATE_PRIOR, boot=False),
                      ctx.cmd("winrate", "--method", "ds", "--prior", WINRATE_PRIOR, boot=False)]))


def _alt_test_section(audit: Audit, ctx: _Ctx) -> str:
    from ..pointwise.alt_test import alt_test_verdicts
    from .card import ALT_TEST_EPSILON
    from .views.alt_test import left_out, ranking

    table = audit.results["alt_test"]
    shown = ranking(table)
    verdicts = "".join(f"<li>{_esc(v)}</li>" for v in alt_test_verdicts(table))
    notes = "".join(f"<p class='muted'>Not tested: {_esc(n.removesuffix(' left out'))}.</p>" for n in left_out(table))
    return ("<h3 id='alt_test'>Can the judge replace the annotators? (Alt-Test)</h3>"
            f"<p>The alternative annotator test (Calderon, Reichart &amp; Dror, ACL 2025) at epsilon "
            f"{ALT_TEST_EPSILON:g}, the paper's value for expert annotators (0.15 for skilled annotators, 0.1 for crowd "
            "workers): each annotator is left out in turn, and the judge passes when it is not worse than at least "
            "half of them by more than epsilon (one-sided t-tests, Benjamini-Yekutieli q 0.05). The advantage "
            "probability ranks the judges.</p>"
            f"<ul>{verdicts}</ul>" + table_html(shown, numeric=["winning rate", "items"]) + notes
            + _repro([ctx.cmd("alt-test", "--epsilon", f"{ALT_TEST_EPSILON:g}")]))


# --------------------------------------------------------------------------- the document

_SECTIONS = {"agreement": ("Agreement with humans", _agreement_section), "bias": ("Bias diagnostics", _bias_section),
             "accuracy": ("Judge accuracy", _accuracy_section), "position": ("Position bias", _position_section),
             "leaderboard": ("Which judge to use", _judges_section), "meta": ("System-level correlation", _judges_section),
             "alt_test": ("Can the judge replace the annotators?", _alt_test_section),
             "superficial": ("Superficial quality", _superficial_section),
             "winrate": ("Calibrated win rates", _winrate_section)}


#: Analyses of :func:`evalcore.data.summary.unlocks` the report shows; the others are named with where to find them.
COVERED = {"agreement_humans", "agreement_judge", "by_language", "score_distribution", "familiarity", "anchoring",
           "anchoring_position", "self_consistency", "win_rate", "superficial", "position_bias", "calibraeval",
           "meta_system", "meta_input", "leaderboard", "alt_test"}
ELSEWHERE = {"class_distribution": "the app's Agreement page",
             "superficial_ratings": "evalcore superficial FILE --q COLUMN (a numeric per-item column such as "
                                    "text_length), or the app's Superficial quality page"}


def _not_covered(ing) -> str:
    from ..data.summary import unlocks

    av = unlocks(ing.frame, table=ing.table)
    rest = av[av["available"] & ~av["analysis"].isin(list(COVERED))]
    return "".join(f"<p class='muted'>Also supported by this table, not in this report: {_esc(r.title)} "
                   f"({_esc(ELSEWHERE.get(r.analysis, 'see the app'))}).</p>" for r in rest.itertuples())


def _analyses_section(audit: Audit, ctx: _Ctx) -> tuple[str, list[str]]:
    """Every analysis that ran, in order, and the reasons of those that did not; and the section titles."""
    parts, titles = ["<h2 id='analyses'>3. The analyses</h2>"], []
    for name, (title, make) in _SECTIONS.items():
        t = audit.results.get(name)
        if name == "meta" and audit.results.get("leaderboard") is not None:
            continue  # the leaderboard's section shows the system-level table too
        if t is not None and not t.empty:
            parts.append(make(audit, ctx))
            titles.append(title)
    for name, reason in audit.skipped.items():
        parts.append(f"<p class='muted'>Not in this report: {_esc(_SECTIONS.get(name, (name,))[0])}: "
                     f"{_esc(reason)}</p>")
    return "".join(parts), titles


def _versions() -> list[tuple[str, str]]:
    import plotly

    import evalcore

    return [("evalcore", evalcore.__version__), ("numpy", np.__version__), ("pandas", pd.__version__),
            ("plotly", plotly.__version__), ("python", platform.python_version())]


def _parameters_section(audit: Audit, ctx: _Ctx, seconds: float) -> str:
    rows = [("input", ctx.inputs), ("seed", audit.seed), ("bootstrap resamples", audit.n_boot),
            ("confidence level", "95%"), ("false discovery rate of the flags", "0.05 (Benjamini-Hochberg)"),
            ("superficial-quality alpha read", f"{SUPERFICIAL_ALPHA:g}"), ("win-rate prior (BWRS)", WINRATE_PRIOR),
            *_versions(), ("built", time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())),
            ("build time", f"{seconds:.1f} s (" + ", ".join(f"{k} {v:.1f} s" for k, v in audit.seconds.items())
             + ")")]
    cmd = f"evalcore report {ctx.inputs} " + shlex.join(["--boot", str(audit.n_boot), "--seed", str(audit.seed)])
    return ("<h2 id='parameters'>4. Parameters and how to reproduce</h2>"
            + table_html(pd.DataFrame(rows, columns=["parameter", "value"]))
            + "<p>This report, and its judge report card as JSON:</p><pre>" + _esc(cmd + " --out report.html") + "\n"
            + _esc(cmd + " --json") + "</pre><p>Each section above ends with the command that prints its numbers.</p>")


def dataset_name(source: str) -> str:
    """The name a report is titled with when none is given: the source's file name without its folders.

    >>> dataset_name("/home/ana/uploads/ratings.csv"), dataset_name("a.csv, b.csv")
    ('ratings.csv', 'a.csv, b.csv')
    """
    parts = [p.strip() for p in str(source).split(",")]
    return ", ".join(p.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or p for p in parts)


def render(ing, audit: Audit, card: ReportCard, *, inputs: str, seconds: float = 0.0, name: str | None = None) -> str:
    """The HTML document of an audit (:func:`evalcore.report.card.run_audit`) and its card.

    ``inputs`` is the input part of the CLI commands printed in the report (the file and its options); ``name``
    the dataset's name in the title (default :func:`dataset_name` of the source; the full source is in section 2).
    """
    from plotly.offline import get_plotlyjs

    ctx = _Ctx(inputs, audit.n_boot, audit.seed)
    analyses, titles = _analyses_section(audit, ctx)
    toc = "".join(f"<li>{_esc(t)}</li>" for t in titles)
    title = f"evalcore report: {name or dataset_name(ing.source)}"
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{_esc(title)}</title><style>{CSS}</style>"
            f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body>"
            f"<h1>{_esc(title)}</h1><p>{_esc(_one_line(ing))}</p>"
            "<p class='muted'>An audit of LLM judges against human annotators. Contents: "
            "<a href='#card'>1. judge report card</a> · <a href='#data'>2. the data</a> · "
            f"<a href='#analyses'>3. the analyses</a> ({toc and ', '.join(_esc(t) for t in titles)}) · "
            "<a href='#parameters'>4. parameters</a>.</p>"
            + _card_section(card) + _summary_section(ing, audit) + analyses + _not_covered(ing)
            + _parameters_section(audit, ctx, seconds) + "</body></html>")


@dataclass(frozen=True, eq=False)
class Report:
    """A built report: the HTML text, the judge report card, the audit behind them and the time it took."""

    html: str
    card: ReportCard
    audit: Audit
    seconds: float


def build_report(ing, *, n_boot: int = 1000, seed: int = 0, inputs: Sequence[str] | None = None,
                 name: str | None = None) -> Report:
    """Run the audit of a loaded table and render it.

    Parameters
    ----------
    ing
        An :class:`~evalcore.data.ingest.Ingested` (:func:`evalcore.data.ingest.load`).
    n_boot, seed
        Bootstrap resamples over items and their seed, for every analysis.
    inputs
        The CLI arguments that load the same input (files and options), printed in the commands that
        reproduce each section; default the source's name.
    name
        The dataset's name in the report's title (the workspace dataset's name, or the file name); default
        :func:`dataset_name` of the source.

    Returns
    -------
    Report
    """
    t0 = time.perf_counter()
    audit = run_audit(ing.frame, table=ing.table, n_boot=n_boot, seed=seed)
    card = report_card(audit)
    args = shlex.join(list(inputs)) if inputs else shlex.quote(str(ing.source))
    text = render(ing, audit, card, inputs=args, seconds=time.perf_counter() - t0, name=name)
    return Report(text, card, audit, time.perf_counter() - t0)


def write_report(ing, path: str | Path, *, n_boot: int = 1000, seed: int = 0,
                 inputs: Sequence[str] | None = None, name: str | None = None) -> Report:
    """:func:`build_report`, written to ``path`` (UTF-8)."""
    rep = build_report(ing, n_boot=n_boot, seed=seed, inputs=inputs, name=name)
    Path(path).write_text(rep.html, encoding="utf-8")
    return rep


#: What the commands printed in a report of a table (not a file) read: the table saved under this name.
TABLE_FILE = "table.csv"


@takes_table(None)
def html_report(table: pd.DataFrame, *, path: str | Path | None = None, n_boot: int = 1000,
                seed: int | np.random.Generator = 0, name: str | None = None) -> str:
    """The self-contained HTML report of a ratings or a comparisons table, for a notebook.

    Parameters
    ----------
    table
        A validated ratings or comparisons table (:func:`evalcore.data.ingest.read`); which one is told by
        its columns.
    path
        Where to write the report (UTF-8); None, the default, writes nothing.
    n_boot, seed
        Bootstrap resamples over items for every analysis (0: point estimates only) and their seed (a whole
        number or a ``numpy.random.Generator``).
    name
        The dataset's name in the report's title (default ``"table"``).
    item, rater, kind, criterion, score, sample, winner, system_a, system_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    str
        The HTML document (:func:`build_report`). Its reproducing commands read the table saved as
        :data:`TABLE_FILE` (``table.to_csv("table.csv", index=False)``).

    Examples
    --------
    >>> table = pd.DataFrame({"item_id": [1, 1, 1, 2, 2, 2, 3, 3, 3], "rater": ["h1", "h2", "gpt"] * 3,
    ...                       "rater_kind": ["human", "human", "judge"] * 3, "criterion": "overall",
    ...                       "score": [1, 1, 2, 2, 2, 2, 3, 2, 3]})
    >>> page = html_report(table, n_boot=0)
    >>> page.startswith("<!DOCTYPE html>"), "evalcore report: table" in page
    (True, True)
    """
    from ..data.ingest import Ingested
    from ..data.mapping import detect_table

    kind = detect_table(table.columns)
    ing = Ingested(table=kind, frame=table, source=name or "table")
    text = build_report(ing, n_boot=n_boot, seed=seed, inputs=[TABLE_FILE], name=name or "table").html
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
