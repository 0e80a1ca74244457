"""Agreement: can the judge be trusted, and where? (Hada et al. 2024; Gwet 2008; Krippendorff 2011)"""

import streamlit as st

from evalcore.report import plots
from evalcore import ui
from evalcore.columns import segment_columns
from evalcore.pointwise.agreement import HUMAN_MEASURES, JUDGE_MEASURES, fractional_judges

ui.page("Agreement", icon=":material/handshake:")
st.title("Agreement: can the judge be trusted, and where?")
st.caption("How often annotators agree with each other, and how often each judge agrees with them, per group, "
           "with 95% bootstrap intervals over items.")

ratings = ui.require_table("ratings")
with ui.guard("Computing agreement"):
    units = ui.units()
    segs = segment_columns(ratings)
    default_by = [c for c in ("language", "criterion") if c in segs]
    c1, c2, c3, c4 = st.columns([3, 3, 1, 1])
    by = c1.multiselect("Group by", segs, default=default_by, key="ag_by",
                        help="Two columns give a heatmap; one a dot plot; none a single overall value.")
    judges = c2.multiselect("Judges", list(units.judges), default=list(units.judges), key="ag_judges")
    n_boot = c3.number_input("Resamples", 0, 10_000, 1000, step=200, key="ag_boot",
                             help="Bootstrap resamples of items per cell; 0 skips the intervals.")
    seed = c4.number_input("Seed", 0, 2**31 - 1, 0, key="ag_seed")
    table = ui.agreement_table(by=tuple(by), judges=tuple(judges), n_boot=int(n_boot), seed=int(seed))

    st.subheader("Where does the judge agree with humans?")
    s1, s2 = st.columns(2)
    source = s1.selectbox("Whose agreement", [plots.HUMANS, *judges], index=1 if judges else 0, key="ag_source",
                          format_func=lambda j: "Humans among themselves" if j == plots.HUMANS else f"{j} vs humans")
    judge = None if source == plots.HUMANS else source
    measures = HUMAN_MEASURES if judge is None else JUDGE_MEASURES
    measure = s2.selectbox("Measure", measures, key=f"ag_measure_{judge is None}",
                           format_func=lambda m: m.replace("_", " "))
    frac = fractional_judges(units)
    if judge in frac:
        st.info(f"{judge} gives non-integer scores (e.g. averages of several samples) while humans use whole "
                "numbers, so its scores rarely equal the human majority: percent agreement, Cohen's kappa and F1 "
                "are low by construction. Read Kendall's tau, Spearman's rho and the interval alpha instead.",
                icon=":material/info:")
    st.plotly_chart(plots.agreement_figure(table, measure=measure, judge=judge, by=by), key="ag_fig")
    st.caption("Hover a cell for its estimate, 95% interval and n. ▼ marks cells where the judge agrees with humans "
               "significantly less than humans agree with each other (pairwise agreement gap, interval below 0). "
               "n counts units: an item rated on several criteria counts once per criterion.")

    flagged = table[table["flagged"]]
    if len(flagged):
        where = flagged[by[0]].astype(str).value_counts() if by else None
        cells = (", ".join(f"{k} ({v})" for k, v in where.items()) if where is not None
                 else ", ".join(flagged["judge"].astype(str)))
        st.warning(f"{len(flagged)} cell(s) where a judge agrees with humans significantly less than humans agree "
                   f"with each other" + (f", by {by[0]}: {cells}" if by else f": {cells}") + ". The table below "
                   "lists them (filter on 'flagged').", icon=":material/flag:")
    elif judges:
        st.success("No cell where a judge agrees significantly less with humans than humans with each other.",
                   icon=":material/check_circle:")

    with st.expander(f"All numbers ({len(table):,} rows)"):
        shown = table.assign(judge=table["judge"].fillna("(humans)"))
        st.dataframe(shown, hide_index=True, column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in ("estimate", "ci_low", "ci_high")})
        ui.download_csv(shown, file_name="agreement.csv", key="ag_dl")

    st.subheader("Where humans disagree, what does the judge say?")
    dist = ui.class_distribution(by=tuple(c for c in by))
    facet = by[0] if by and by[0] != "criterion" else None
    filters = {}
    if "criterion" in by:
        crits = sorted(units.scale)
        filters["criterion"] = st.selectbox("Criterion", crits, key="ag_crit")
    for extra in [c for c in by if c not in ("criterion", facet)]:
        filters[extra] = st.selectbox(extra, sorted(map(str, dist[extra].dropna().unique())), key=f"ag_f_{extra}")
    shown_judge = judge or (judges[0] if judges else None)
    shown_dist = dist[dist["source"].isin(["humans", shown_judge])]
    st.caption(f"Humans next to {shown_judge or 'no judge'} (choose the judge under 'Whose agreement' above).")
    st.plotly_chart(plots.class_distribution_figure(shown_dist, row=facet, filters=filters), key="cd_fig")
    st.caption("Units with 2+ annotators, split by whether all (full), some (partial) or none of them gave the same "
               "score. Bars are the share of each score: the humans' own ratings next to each judge's. A judge that "
               "gives the top score where humans disagree has tall top-score bars under 'partial' and 'none'.")
    ui.download_csv(dist, file_name="class_distribution.csv", label="Download the distributions (CSV)", key="cd_dl")

with st.expander("How to read this"):
    st.markdown("""
- **Percent agreement (PA)** is the share of annotator pairs that gave the same score, averaged over items
  (Fleiss' P_i). For a judge it is the share of items where the judge gives the human majority's score.
- **Kappa** (Fleiss, Cohen) rescales agreement by what chance would give: 0 is chance level, 1 perfect. Chance
  agreement comes from how the scores are spread. When almost every score is the top one, two raters agree by
  chance most of the time, so **kappa can be near 0 while PA is 90%**: this is the *kappa paradox* that Hada et
  al. warn about.
- **Gwet's AC1** and **PABAK** estimate chance agreement in a way that does not collapse on skewed scales, so
  they stay close to PA when raters really agree. Read PA and AC1 together; distrust a low kappa with a high PA.
- **Krippendorff's alpha** uses all pairable ratings, allows missing ones, and comes in nominal, ordinal and
  interval forms (the last two give partial credit to near misses).
- **Cohen's kappa (quadratic)**, **Kendall's tau-b** and **Spearman's rho** compare the judge with humans on
  the ordinal scale; tau and rho use the mean human score.
- Intervals are 95% percentile intervals from resampling items with replacement (seeded).
""")
