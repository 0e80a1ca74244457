"""Bias: how is the judge biased, and what to do about it? (Stureborg et al. 2024; Hada et al. 2024)

Each section, and the evalcore function that computes what it shows:

- :func:`controls`: the breakdowns are :func:`evalcore.columns.segment_columns`, the judges
  :func:`evalcore.report.views.common.judge_names`.
- :func:`findings_section`: :func:`evalcore.pointwise.bias_report.bias_report` (``ui.BIAS``), its
  ``recommendations`` (:func:`evalcore.pointwise.recommend.recommendations`) and ``skipped`` sections.
- :func:`score_distribution_tab`: :func:`evalcore.pointwise.scale_use.score_frequencies` (``ui.SCORE_FREQUENCIES``)
  and the bias report's ``mean_shift`` (:func:`evalcore.pointwise.scale_use.scale_use`); on a nominal criterion
  (:func:`category_tab`) the report's ``category_share`` and ``category_share_difference``.
- :func:`familiarity_tab`, on a nominal criterion: the report's ``mean_perplexity`` and
  ``mean_perplexity_difference`` per category (:func:`evalcore.pointwise.familiarity.familiarity`).
- :func:`familiarity_tab`: the bias report's ``tau_difference`` (:func:`evalcore.pointwise.bias.familiarity`)
  and :func:`evalcore.pointwise.bias.perplexity_by_score` (``ui.PERPLEXITY_BY_SCORE``).
- :func:`anchoring_tab`: the bias report's ``r_difference`` (:func:`evalcore.pointwise.bias.anchoring`),
  :func:`evalcore.pointwise.bias.criterion_correlations` (``ui.CRITERION_CORRELATIONS``) and
  :func:`evalcore.pointwise.bias.conditional_distribution` (``ui.CONDITIONAL_DISTRIBUTION``).
- :func:`self_consistency_tab`: the bias report's ``alpha_difference``
  (:func:`evalcore.pointwise.consistency.self_consistency`).
- :func:`numbers_tab`: every row of the bias report.

The effect plots are :func:`evalcore.report.plots.effect_figure`, showing the rows that
:func:`evalcore.report.views.bias.criterion_view` keeps.
"""


import streamlit as st

from evalcore import ui
from evalcore.columns import segment_columns
from evalcore.pointwise.scale_use import stray_scores
from evalcore.report import plots
from evalcore.report.views import bias, common
from evalcore.text import md



def header() -> None:
    st.title("Bias: how is the judge biased, and what to do about it?")
    st.caption("Four ways LLM judges go wrong (Stureborg et al. 2024), each measured on your data, the judge next to "
               "the humans, with 95% bootstrap intervals over items. " + ui.FLAG_RULE)
    ui.how_to_read("bias")


def controls(ratings) -> ui.AuditOptions:
    """Breakdown, judges, resamples and seed (the options re-derived from the dataset on every run)."""
    judges_all = common.judge_names(ratings)
    c1, c2, c3, c4 = st.columns([2, 3, 1, 1])
    segs = [c for c in segment_columns(ratings) if c != "criterion"]
    by = c1.multiselect("Break down by", ui.choices("bi_by", segs, ["language"]), key="bi_by")
    # Many judges crowd every chart: start with a few, the user adds more.
    judges = c2.multiselect("Judges", ui.choices("bi_judges", judges_all, bias.first_judges(judges_all)),
                            key="bi_judges", help=f"{len(judges_all)} judges in this dataset.")
    n_boot = int(c3.number_input("Resamples", 0, 10_000, 1000, step=200, key="bi_boot", bind="query-params"))
    seed = int(c4.number_input("Seed", 0, 2**31 - 1, 0, key="bi_seed", bind="query-params"))
    return ui.AuditOptions(by, judges, n_boot, seed)


def findings_section(rep, ratings, n_boot: int, pending: bool) -> None:
    """What is flagged, what to do about it, and which sections the data could not support (nothing is
    claimed while the tests are ``pending``: the page shows point estimates until they have run). A score far
    outside the others of its criterion (:func:`evalcore.pointwise.scale_use.stray_scores`) is named first: it sets
    the scale every section reads from the data."""
    st.subheader("What we found")
    for criterion, note in stray_scores(ratings).items():
        st.warning(md(f"On {criterion}: {note}."), icon=":material/error:")
    if rep.recommendations.empty and not pending:
        st.success("No bias is flagged for the selected judges." if n_boot else
                   "Set resamples above 0 to test for biases.", icon=":material/check_circle:")
    for r in rep.recommendations.itertuples():
        # The finding, advice and source are evalcore's words; who, where and the evidence come from the data.
        st.warning(f"**{r.finding}** Found for {md(r.judges)}" + (f" on {md(r.criteria)}" if r.criteria else "")
                   + f".  \n**What to do:** {r.recommendation} *({r.source})*  \n{md(r.evidence)}.",
                   icon=":material/flag:")
    for section, reason in rep.skipped:
        st.info(f"{section.replace('_', ' ').capitalize()} was not run: {md(reason)}.", icon=":material/info:")


def category_tab(rep, view, opts: ui.AuditOptions, crit: str, *, section: str, measure: str, value: str,
                 title: str, explain: str) -> None:
    """A nominal criterion in one section: the value per category, judge next to humans, and its difference."""
    row = opts.by[0] if opts.by else None
    note = bias.not_applicable_note(rep.not_applicable, section, crit)
    if note:
        st.info(md(note) + ".", icon=":material/info:")
    rows = bias.category_rows(view, measure=measure, criterion=crit)
    if row:  # one row of bars per group: a few groups at a time
        levels = common.levels(rows, row)
        keep = ui.paginate(levels, key=f"bi_{measure}_page", noun=row)
        rows = rows[rows[row].astype(str).isin(keep)] if len(keep) < len(levels) else rows
    ui.figure(plots.category_figure(rows, criterion=crit, row=row, value=value, title=title,
                                    percent=measure == "category_share"), key=f"bi_{measure}")
    st.caption(explain)
    diff = f"{measure}_difference"
    y = row or "criterion"
    ui.figure(plots.effect_figure(bias.category_rows(view, measure=diff, criterion=crit, y=y), measure=diff,
                                  y="where", title=plots.measure_title(diff).capitalize() + ", same items"),
              key=f"bi_{diff}")
    missing = bias.undrawn(bias.category_rows(view, measure=diff, criterion=crit, y=y), measure=diff, y="where")
    if missing:
        st.caption(md(missing))


def score_distribution_tab(rep, view, y: str, opts: ui.AuditOptions, crit: str, nominal: list) -> None:
    if crit in nominal:
        category_tab(rep, view, opts, crit, section="score_distribution", measure="category_share",
                     value="share of ratings", title="Share of each category",
                     explain="Share of each category with its 95% interval: bars of the judge far from the humans' "
                             "mean it gives that category more or less often than humans do on the same items (a "
                             "shifted label prior); outlined diamonds below are significant.")
        return
    row = opts.by[0] if opts.by else None
    freq = ui.SCORE_FREQUENCIES.result(by=[row] if row else [], judges=opts.judges)
    if row:  # one row of bars per group: a few groups at a time
        levels = common.levels(freq, row)
        keep = ui.paginate(levels, key="bi_freq_page", noun=row)
        freq = freq[freq[row].astype(str).isin(keep)] if len(keep) < len(levels) else freq
    ui.figure(plots.score_share_figure(freq, criterion=crit, row=row), key="bi_freq")
    st.caption("Share of each score. A judge skewed toward the top of the scale has taller bars on the right "
               "than the humans (Hada et al. report this for GPT-4, stronger in low-resource languages).")
    ui.figure(plots.effect_figure(view, measure="mean_shift", y=y, title="Judge mean minus human mean, "
                                        "same items"), key="bi_shift")
    st.caption("Mean shift with its 95% interval; outlined diamonds are significant. Entropy, top-score share and "
               "round-number excess are in 'All numbers'.")


def familiarity_tab(rep, view, y: str, opts: ui.AuditOptions, crit: str, nominal: list) -> None:
    if "familiarity" in dict(rep.skipped):
        st.info("Needs a 'perplexity' column, or a 'text' column for a local proxy.", icon=":material/info:")
        return
    if crit in nominal:
        category_tab(rep, view, opts, crit, section="familiarity", measure="mean_perplexity",
                     value="mean perplexity", title="Mean perplexity of the texts given each category",
                     explain="Mean perplexity of the texts given each category, with its 95% interval: a judge that "
                             "gives a category to more familiar (or less familiar) texts than humans do picks labels "
                             "by familiarity; outlined diamonds below are significant.")
        return
    ui.figure(plots.effect_figure(view, measure="tau_difference", y=y,
                                        title="Kendall's tau of score vs perplexity: judge minus humans"),
                    key="bi_tau")
    st.caption("Negative: the judge rewards low-perplexity (familiar) text more than humans do. Tau is "
               "computed per criterion, the difference on items both rated.")
    missing = bias.undrawn(view, measure="tau_difference", y=y)
    if missing:
        st.caption(md(missing))
    pbs = ui.PERPLEXITY_BY_SCORE.result(judges=opts.judges, n_boot=min(opts.n_boot, 500), seed=opts.seed)
    ui.figure(plots.perplexity_by_score_figure(pbs, criterion=crit), key="bi_pbs")
    st.caption("Stureborg et al.'s Fig. 2: a judge with familiarity bias gives its top scores to texts with "
               "clearly lower perplexity than the texts humans rate top.")


def anchoring_tab(ratings, rep, view, opts: ui.AuditOptions, crits: list) -> None:
    if "anchoring" in dict(rep.skipped):
        st.info("Needs two or more criteria scored with numbers on the same items.", icon=":material/info:")
        return
    for section, _, note in rep.not_applicable:
        if section == "anchoring":
            st.caption(md(note) + ".")
    crits = bias.ordered_criteria(ratings, crits)
    ui.figure(plots.effect_figure(view, measure="r_difference", y=opts.by[0] if opts.by else "judge",
                                        title="Mean correlation between criteria: judge minus humans"),
                    key="bi_r")
    judges = opts.judges
    # Open on the judge whose anchoring is flagged: the one worth looking at first.
    flagged = bias.flagged_judges(rep.results, "r_difference")
    corr_judge = st.selectbox("Judge", ui.choice("bi_corr_judge", judges, flagged[0] if flagged else None),
                              key="bi_corr_judge")
    corr = ui.CRITERION_CORRELATIONS.result(judges=judges, n_boot=0, seed=opts.seed)
    ui.figure(plots.correlation_heatmaps(corr, sources=["humans", *([corr_judge] if corr_judge else [])]),
                    key="bi_corr")
    st.caption("A judge that anchors on the first criterion it scores makes its criteria far more correlated "
               "than humans' (Stureborg et al.: r = 0.979 for GPT-4 against 0.315 for humans).")
    a1, a2, a3 = st.columns(3)
    given = a1.selectbox("Given criterion", ui.choice("bi_given", crits), key="bi_given")
    target = a2.selectbox("Target criterion", ui.choice("bi_target", [c for c in crits if c != given]),
                          key="bi_target")
    thr = a3.selectbox("Threshold (above vs at or below)", ui.choice("bi_thr", bias.thresholds(ratings, given)),
                       key="bi_thr")
    cond = ui.CONDITIONAL_DISTRIBUTION.result(given=given, target=target, threshold=float(thr), judges=judges,
                                              n_boot=0, seed=opts.seed)
    ui.figure(plots.conditional_figure(cond), key="bi_cond")
    st.caption(f"Stureborg et al.'s Fig. 4: the {md(target)} scores when {md(given)} is high vs low. If the judge's "
               "two bar sets differ much more than the humans', its criteria are anchored.")


def self_consistency_tab(view, y: str, nominal: list) -> None:
    ui.figure(plots.effect_figure(view, measure="alpha_difference", y=y,
                                        title="Krippendorff's alpha across the judge's samples minus humans' "
                                              "inter-annotator alpha"), key="bi_alpha")
    st.caption("Negative: the judge disagrees with itself across repeated samples more than annotators disagree "
               "with each other (Stureborg et al. Table 4). Judges sampled once have no value here."
               + (" On nominal criteria the alpha is the nominal one (categories without an order)." if nominal
                  else ""))


def numbers_tab(results) -> None:
    shown = common.with_humans_named(results)
    st.dataframe(shown, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in ("estimate", "ci_low", "ci_high")})
    ui.download_csv(shown, file_name="bias.csv", key="bi_dl")


def main() -> None:
    header()
    ratings = ui.require_table("ratings")
    with ui.guard("Running the bias diagnostics"):
        opts = controls(ratings)
        if not opts.judges:
            st.info("Pick at least one judge under **Judges**: every diagnostic compares a judge with the humans."
                    if common.judge_names(ratings) else "This dataset has no judge ratings to diagnose.",
                    icon=":material/info:")
            return
        rep, pending = ui.BIAS.points_first(by=tuple(opts.by), judges=tuple(opts.judges), n_boot=opts.n_boot,
                                            seed=opts.seed)
        findings_section(rep, ratings, opts.n_boot, pending)
        crits = common.levels(ratings, "criterion")
        crit = st.selectbox("Criterion", **ui.in_url("bi_crit", crits),
                            help="Shown in every tab; without a breakdown the effect plots list all criteria.")
        # Grouped views show one criterion (rows = groups); ungrouped ones list the criteria as rows.
        view = bias.criterion_view(rep.results, crit, grouped=bool(opts.by))
        y = opts.by[0] if opts.by else "criterion"
        nominal = bias.nominal_criteria(ratings)
        ui.lazy_tabs("bi_tab", {
            "Score distribution": lambda: score_distribution_tab(rep, view, y, opts, crit, nominal),
            "Familiarity": lambda: familiarity_tab(rep, view, y, opts, crit, nominal),
            "Anchoring": lambda: anchoring_tab(ratings, rep, view, opts, crits),
            "Self-consistency": lambda: self_consistency_tab(view, y, nominal),
            "All numbers": lambda: numbers_tab(rep.results)})


main()
