"""Agreement: can the judge be trusted, and where? (Hada et al. 2024; Gwet 2008; Krippendorff 2011)

Each section, and the evalcore function that computes what it shows:

- :func:`controls`: the groupings are :func:`evalcore.columns.segment_columns`, the judges those of
  :func:`evalcore.pointwise.agreement.units.count_units` (``ui.units()``).
- :func:`group_tab`: the first tab, the next four sections; intervals and flags after the point estimates
  when they take long (``ui.AGREEMENT.points_first``).
- :func:`verdict_section`: the page's first answer, :func:`evalcore.report.views.agreement.agreement_verdict` (each
  judge's pairwise agreement gap; the page opens on the judge closest to the humans).
- :func:`agreement_section`: :func:`evalcore.pointwise.agreement.table.agreement` (``ui.AGREEMENT``), drawn by
  :func:`evalcore.report.plots.agreement_figure`; the judges warned about are
  :func:`evalcore.pointwise.agreement.units.fractional_judges`.
- :func:`flags_section`: the agreement table's ``flagged`` rows, counted by
  :func:`evalcore.report.views.agreement.flagged_cells`.
- :func:`table_section`: the agreement table itself, every row.
- :func:`scales_section`: which measures apply to nominal criteria, :func:`evalcore.pointwise.agreement.table.scale_notes`.
- :func:`class_distribution_section`: :func:`evalcore.pointwise.distributions.class_distribution`
  (``ui.CLASS_DISTRIBUTION``), drawn by :func:`evalcore.report.plots.class_distribution_figure`.
- :func:`confusion_section`: :func:`evalcore.pointwise.confusion.confusion_matrix` (``ui.CONFUSION``) of the
  judge against the humans' majority label, drawn by :func:`evalcore.report.plots.confusion_heatmap`, for
  nominal criteria and those with few categories (:func:`evalcore.report.views.agreement.confusion_criteria`).
- :func:`unit_filter`: the units kept, :func:`evalcore.pointwise.agreement.filter.filter_units` (``ui.unit_filter``).
- :func:`evalcore.ui.agreement_tabs.leaderboard_tab`: :func:`evalcore.pointwise.leaderboard.judge_leaderboard` (``ui.LEADERBOARD``), drawn
  by :func:`evalcore.report.plots.leaderboard_figure`.
- :func:`evalcore.ui.agreement_tabs.meta_tab`: per criterion and the page's grouping, :func:`evalcore.pointwise.meta.system_means`
  (``ui.SYSTEM_MEANS``) drawn by :func:`evalcore.report.plots.system_means_figure`, and
  :func:`evalcore.pointwise.meta.meta_correlations` (``ui.META``) shown by :func:`evalcore.report.views.agreement.meta_view`.
- :func:`evalcore.ui.agreement_tabs.pairs_tab`: :func:`evalcore.pointwise.rater_pairs.rater_pair_matrix` (``ui.RATER_PAIRS``), drawn by
  :func:`evalcore.report.plots.rater_pair_heatmap`.
- :func:`measures_guide`: what the measures mean.
"""


import streamlit as st

from evalcore import ui
from evalcore.ui import agreement_tabs
from evalcore.columns import segment_columns
from evalcore.pointwise.agreement.measures import HUMAN_MEASURES, JUDGE_MEASURES
from evalcore.pointwise.agreement.table import scale_by, scale_notes
from evalcore.pointwise.agreement.units import fractional_judges
from evalcore.report import display, guide, plots
from evalcore.report.views import agreement, common
from evalcore.text import md


def header() -> None:
    st.title("Agreement: can the judge be trusted, and where?")
    st.caption("How often annotators agree with each other, and how often each judge agrees with them, per group, "
               "with 95% bootstrap intervals over items. " + ui.FLAG_RULE)
    ui.how_to_read("agreement")


def controls(ratings, units) -> ui.AuditOptions:
    """Grouping, judges, resamples and seed (the options re-derived from the dataset on every run)."""
    # A column that changes within an item (a timing, an annotation round) cannot group units: not offered.
    per_row = dict(units.varying)
    segs = [c for c in segment_columns(ratings) if c not in per_row]
    judges_all = list(units.judges)
    c1, c2, c3, c4 = st.columns([3, 3, 1, 1])
    by = c1.multiselect("Group by", ui.choices("ag_by", segs, [c for c in ("language", "criterion") if c in segs]),
                        key="ag_by", help="Two columns give a heatmap; one a dot plot; none a single overall value.")
    judges = c2.multiselect("Judges", ui.choices("ag_judges", judges_all, judges_all), key="ag_judges",
                            help=f"{len(judges_all)} judges in this dataset.")
    n_boot = c3.number_input("Resamples", 0, 10_000, 1000, step=200, key="ag_boot", bind="query-params",
                             help="Bootstrap resamples of items per cell; 0 skips the intervals.")
    seed = c4.number_input("Seed", 0, 2**31 - 1, 0, key="ag_seed", bind="query-params")
    if per_row:
        c1.caption(md(f"Not offered, as they change within an item: {', '.join(sorted(per_row))}."))
    if scale_by(units, by) != list(by):  # a nominal criterion is never pooled with numbers
        c1.caption("Grouped by criterion too: nominal labels and numbers are never pooled in one measure.")
        by = scale_by(units, by)
    if judges_all and not judges:
        st.info("Pick at least one judge under **Judges** to compare judges with the humans; the humans' agreement "
                "among themselves is shown below.", icon=":material/info:")
    return ui.AuditOptions(by, judges, int(n_boot), int(seed))


def unit_filter() -> tuple[int | None, int | None]:
    """Which units count: those with at least / at most so many human ratings (0: no bound)."""
    with st.expander("Units: how many human ratings each must have"):
        c1, c2 = st.columns(2)
        lo = int(c1.number_input("At least", 0, 1000, 0, key="ag_min_raters",
                                 help="0: no lower bound. Papers often report agreement over fully annotated units "
                                      "only: set both to the number of annotators."))
        hi = int(c2.number_input("At most", 0, 1000, 0, key="ag_max_raters", help="0: no upper bound."))
        bounds = (lo or None, hi or None)
        f = ui.unit_filter(min_raters=bounds[0], max_raters=bounds[1]) if any(bounds) else None
        if f is not None:
            st.caption(f"{f.description}: {f.kept:,} unit(s) kept, {f.dropped:,} dropped. Every measure on this "
                       "page's first tab uses only the kept units.")
    return bounds


def verdict_section(verdict: agreement.AgreementVerdict) -> None:
    """The answer first: each judge's agreement with the humans against theirs with each other."""
    if verdict.sentences:
        st.info("  \n".join(verdict.sentences), icon=":material/gavel:")


def agreement_section(table, units, opts: ui.AuditOptions, opening: str | None) -> str | None:
    """Whose agreement, which measure, and the heatmap or dot plot; returns the judge shown (None: humans)."""
    st.subheader("Where does the judge agree with humans?")
    s1, s2 = st.columns(2)
    source = s1.selectbox("Whose agreement", **ui.in_url("ag_source", [display.HUMANS, *opts.judges], opening),
                          format_func=lambda j: "Humans among themselves" if j == display.HUMANS else f"{j} vs humans")
    judge = None if source == display.HUMANS else source
    measures = agreement.measure_options(table, HUMAN_MEASURES if judge is None else JUDGE_MEASURES, judge=judge)
    fractional = judge in fractional_judges(units)
    # A judge with non-integer scores opens on a rank measure: the note below says why exact matches mislead.
    measure = s2.selectbox("Measure", ui.choice(f"ag_measure_{judge is None}", measures,
                                                default="kendall_tau" if fractional else None),
                           key=f"ag_measure_{judge is None}", format_func=plots.measure_title)
    if fractional:
        st.info(f"{md(judge)} gives non-integer scores (e.g. averages of several samples) while humans use whole "
                "numbers, so its scores rarely equal the human majority: percent agreement, Cohen's kappa and F1 "
                "are low by construction. Read Kendall's tau, Spearman's rho and the interval alpha instead.",
                icon=":material/info:")
    ui.figure(plots.agreement_figure(table, measure=measure, judge=judge, by=opts.by), key="ag_fig")
    st.caption(guide.CAPTIONS["agreement_heatmap"])
    return judge


def flags_section(table, opts: ui.AuditOptions) -> None:
    """Where a judge agrees with humans significantly less than humans with each other."""
    flags = agreement.flagged_cells(table, opts.by)
    if flags.n:
        cells = (", ".join(f"{md(k)} ({v})" for k, v in flags.places) if flags.by
                 else ", ".join(md(k) for k, _ in flags.places))
        st.warning(f"{flags.n} cell(s) where a judge agrees with humans significantly less than humans agree "
                   f"with each other" + (f", by {md(flags.by)}: {cells}" if flags.by else f": {cells}") + ". The "
                   "table below lists them (filter on 'flagged').", icon=":material/flag:")
    elif opts.judges:
        st.success("No cell where a judge agrees significantly less with humans than humans with each other.",
                   icon=":material/check_circle:")


def table_section(table) -> None:
    """Every number of the agreement table, with a download."""
    with st.expander(f"All numbers ({len(table):,} rows)"):
        shown = common.with_humans_named(table)
        st.dataframe(shown, hide_index=True, column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in ("estimate", "ci_low", "ci_high")})
        ui.download_csv(shown, file_name="agreement.csv", key="ag_dl")


def class_distribution_section(units, opts: ui.AuditOptions, judge: str | None) -> None:
    """The scores humans and the judge give, split by how much the humans agree (Hada et al. Figs. 6-7)."""
    st.subheader("Where humans disagree, what does the judge say?")
    by = opts.by
    dist = ui.CLASS_DISTRIBUTION.result(by=tuple(by))
    facet = by[0] if by and by[0] != "criterion" else None
    filters = {}
    if "criterion" in by:
        filters["criterion"] = st.selectbox("Criterion", ui.choice("ag_crit", sorted(units.scale)), key="ag_crit")
    for extra in [c for c in by if c not in ("criterion", facet)]:
        filters[extra] = st.selectbox(md(extra), ui.choice(f"ag_f_{extra}", common.levels(dist, extra)),
                                      key=f"ag_f_{extra}")
    shown_judge = judge or (opts.judges[0] if opts.judges else None)
    shown = agreement.for_sources(dist, ["humans", shown_judge])
    if facet:  # ten languages would make ten rows of panels: a few at a time
        levels = common.levels(shown, facet)
        keep = ui.paginate(levels, key="cd_page", noun=facet)
        shown = shown[shown[facet].astype(str).isin(keep)] if len(keep) < len(levels) else shown
    if shown_judge is None:
        st.caption("The humans only: pick a judge under **Judges** above to see its scores next to theirs.")
    else:
        st.caption(f"Humans next to {md(shown_judge)} (choose the judge under 'Whose agreement' above).")
    ui.figure(plots.class_distribution_figure(shown, row=facet, filters=filters), key="cd_fig")
    st.caption(guide.CAPTIONS["agreement_classes"])
    ui.download_csv(dist, file_name="class_distribution.csv", label="Download the distributions (CSV)", key="cd_dl")


def scales_section(units, by) -> None:
    """Once, where criteria are nominal: which measures apply to them, and why (the grouping's own note is under
    **Group by**)."""
    for note in scale_notes(units, by):
        st.info(md(note), icon=":material/category:")


def confusion_section(units, opts: ui.AuditOptions, judge: str | None) -> None:
    """The judge's label against the humans' majority label, as a heatmap with counts and row shares."""
    shown_judge = judge or (opts.judges[0] if opts.judges else None)
    crits = agreement.confusion_criteria(units.scales, units.scale)
    if shown_judge is None or not crits:
        return
    st.subheader("Which label does the judge give where the humans agree on one?")
    if shown_judge in fractional_judges(units):  # its averages are not labels: a matrix of near-empty rows
        st.caption(f"Not drawn for {md(shown_judge)}: its scores are not whole numbers, so they are not labels to "
                   "set against the humans' majority label. Its rank agreement with the humans is above "
                   "(Kendall's tau, Spearman's rho).")
        return
    by = tuple(opts.by) if "criterion" in opts.by else (*opts.by, "criterion")  # one criterion's labels at a time
    cm = ui.CONFUSION.result(judge=shown_judge, by=by)
    cols = st.columns(len(by))
    group = {"criterion": cols[0].selectbox("Criterion", ui.choice("cm_crit", crits), key="cm_crit")}
    for col, extra in zip(cols[1:], [c for c in by if c != "criterion"]):
        group[extra] = col.selectbox(md(extra), ui.choice(f"cm_f_{extra}", common.levels(cm, extra)),
                                     key=f"cm_f_{extra}")
    ui.figure(plots.confusion_heatmap(common.rows_where(cm, group), judge=shown_judge), key="cm_fig")
    st.caption(agreement.CONFUSION_CAPTION)
    ui.download_csv(cm, file_name="confusion_matrix.csv", label="Download the confusion matrices (CSV)", key="cm_dl")


def measures_guide() -> None:
    with st.expander("How to read this"):
        st.markdown(guide.AGREEMENT)


def group_tab(units, opts: ui.AuditOptions, lo: int | None, hi: int | None) -> None:
    """The agreement table by group: the figure, the flags (once the tests have run), the numbers, the classes."""
    table, pending = ui.AGREEMENT.points_first(by=tuple(opts.by), judges=tuple(opts.judges), n_boot=opts.n_boot,
                                               seed=opts.seed, min_raters=lo, max_raters=hi)
    verdict = agreement.agreement_verdict(table, by=opts.by, judges=opts.judges, pending=pending, escape=md)
    verdict_section(verdict)
    scales_section(units, opts.by)
    judge = agreement_section(table, units, opts, verdict.opening)
    if not pending:  # no flag is claimed before the tests have run
        flags_section(table, opts)
    table_section(table)
    class_distribution_section(units, opts, judge)
    confusion_section(units, opts, judge)


def main() -> None:
    header()
    ratings = ui.require_table("ratings")
    with ui.guard("Computing agreement"):
        units = ui.units()
        opts = controls(ratings, units)
        lo, hi = unit_filter()
        ui.lazy_tabs("ag_tab", {
            "Agreement by group": lambda: group_tab(units, opts, lo, hi),
            "Which judge?": lambda: agreement_tabs.leaderboard_tab(ratings, units, opts),
            "System level": lambda: agreement_tabs.meta_tab(ratings, units, opts),
            "Rater pairs": lambda: agreement_tabs.pairs_tab(units, opts)})
    measures_guide()


main()
