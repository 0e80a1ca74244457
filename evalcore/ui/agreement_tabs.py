"""The Agreement page's meta-evaluation tabs: which judge to use (the leaderboard), whether it ranks the systems
as the humans do (system level), and who agrees with whom (rater pairs). Kept here so that the page stays a list
of sections; each tab reads the current dataset through :mod:`evalcore.ui` and calls one cached analysis.
"""

from __future__ import annotations

import streamlit as st

from ..data.scales import NOMINAL
from ..report import guide, plots
from ..report.views import agreement, common
from ..text import md
from .analyses import LEADERBOARD, META, RATER_PAIRS, SYSTEM_MEANS
from .layout import figure
from .state import AuditOptions, choice, download_csv, in_url


def criterion_pick(key: str, units) -> str | None:
    """A criterion whose ratings are numbers, kept in the address bar under ``key``; None (and a message) when
    every criterion is nominal. These tabs rank, average and correlate scores: nominal labels have none."""
    crits = sorted(c for c in units.scale if units.scale_of(c) != NOMINAL)
    if not crits:
        st.info("Every criterion here is nominal (labels without an order or a number), and this tab ranks and "
                "correlates scores: it does not apply. The first tab's agreement and confusion matrix do.",
                icon=":material/category:")
        return None
    if units.nominal:
        st.caption(md(f"Not offered here, as nominal: {', '.join(units.nominal)}."))
    return st.selectbox("Criterion", **in_url(key, crits))


def leaderboard_tab(ratings, units, opts: AuditOptions) -> None:
    st.subheader("Which judge should I use?")
    if not opts.judges:
        st.info("Pick judges under **Judges** above to rank them.", icon=":material/info:")
        return
    has_system = "system" in ratings.columns
    measures = ["kendall_tau", "spearman_rho"] + (["kendall_tau_system", "spearman_rho_system"] if has_system else [])
    c1, c2 = st.columns(2)
    measure = c1.selectbox("Ranked by", **in_url("lb_measure", measures),
                           format_func=lambda m: agreement.MEASURE_LABELS.get(m, m))
    with c2:
        crit = criterion_pick("lb_crit", units)
    if crit is None:
        return
    board = LEADERBOARD.result(by=(), judges=tuple(opts.judges), measures=tuple(measures), n_boot=opts.n_boot,
                                  seed=opts.seed)
    shown = board[(board["measure"] == measure) & (board["criterion"] == crit)]
    label = agreement.MEASURE_LABELS.get(measure, measure)
    figure(plots.leaderboard_figure(shown, label=label), key="lb_fig")
    st.dataframe(agreement.leaderboard_view(shown), hide_index=True)
    st.caption(guide.CAPTIONS["agreement_leaderboard"])
    download_csv(board, file_name="leaderboard.csv", label="Download the leaderboard (CSV)", key="lb_dl")


def meta_tab(ratings, units, opts: AuditOptions) -> None:
    st.subheader("Does the judge rank the systems as humans do?")
    if "system" not in ratings.columns:
        st.info("System-level correlation needs a **system** column (the model that wrote each item's output; "
                "columns named model, system or generator are recognised), and the input level an **input_id** "
                "(the prompt or document several systems answered).", icon=":material/info:")
        return
    if not opts.judges:
        st.info("Pick judges under **Judges** above to compare their system rankings with the humans'.",
                icon=":material/info:")
        return
    by = tuple(c for c in opts.by if c != "criterion")  # the criterion is always a group here
    means = SYSTEM_MEANS.result(by=by, judges=tuple(opts.judges), n_boot=opts.n_boot, seed=opts.seed)
    c1, c2, *rest = st.columns(2 + len(by))
    judge = c1.selectbox("Judge", **in_url("meta_judge", list(opts.judges)))
    with c2:
        crit = criterion_pick("meta_crit", units)
    if crit is None:
        return
    group = {"criterion": crit}
    for col, extra in zip(rest, by):
        group[extra] = col.selectbox(md(extra), choice(f"meta_f_{extra}", common.levels(means, extra)),
                                     key=f"meta_f_{extra}")
    shown = common.rows_where(means, {"judge": judge, **group})
    figure(plots.system_means_figure(shown, judge=judge), key="meta_fig")
    st.caption(guide.CAPTIONS["agreement_system_means"])
    meta = META.result(by=by, judges=tuple(opts.judges), n_boot=opts.n_boot, seed=opts.seed)
    st.dataframe(agreement.meta_view(meta), hide_index=True)
    st.caption("System level: each system's mean human score against its mean judge score over the same items, "
               "correlated across systems (as SummEval and G-Eval report), per criterion"
               + (f" and {md(', '.join(by))}" if by else "") + ", following **Group by** above. Input level: the "
               "correlation across the systems' outputs for one input, averaged over inputs. 95% intervals "
               "resample inputs.")
    d1, d2 = st.columns(2)
    with d1:
        download_csv(meta, file_name="system_level.csv", label="Download the correlations (CSV)", key="meta_dl")
    with d2:
        download_csv(means, file_name="system_means.csv", label="Download the system means (CSV)",
                        key="meta_means_dl")


def pairs_tab(units, opts: AuditOptions) -> None:
    st.subheader("Who agrees with whom?")
    c1, c2 = st.columns(2)
    measure = c1.selectbox("Measure", **in_url("rp_measure", list(agreement.PAIR_MEASURES)),
                           format_func=agreement.PAIR_MEASURES.get)
    with c2:
        crit = criterion_pick("rp_crit", units)
    if crit is None:
        return
    pairs = RATER_PAIRS.result(by=(), judges=tuple(opts.judges), n_boot=0, seed=opts.seed)
    matrix, counts = agreement.pair_matrix(pairs, measure=measure, group={"criterion": crit})
    if matrix.empty:
        st.info("No two annotators rated the same unit on this criterion.", icon=":material/info:")
        return
    figure(plots.rater_pair_heatmap(matrix, counts, label=agreement.PAIR_MEASURES[measure]), key="rp_fig")
    st.caption(guide.CAPTIONS["agreement_rater_pairs"])
    download_csv(pairs, file_name="rater_pairs.csv", label="Download every pair (CSV)", key="rp_dl")
