"""Can the judge replace the annotators? The alternative annotator test (Calderon, Reichart & Dror, ACL 2025)

Each section, and the evalcore function that computes what it shows:

- :func:`controls`: the judges are :func:`evalcore.report.views.common.judge_names`; epsilon with the paper's
  guidance (:data:`evalcore.pointwise.alt_test.EPSILON_GUIDANCE`).
- :func:`verdict_section`: first, one sentence per judge, :func:`evalcore.pointwise.alt_test.alt_test_verdicts` of
  :func:`evalcore.pointwise.alt_test.alt_test` (``ui.ALT_TEST``).
- :func:`ranking_section`: the judges ranked by the advantage probability, :func:`evalcore.report.views.alt_test.ranking`.
- :func:`curve_section`: the winning rate against epsilon, :func:`evalcore.pointwise.alt_test.winning_rate_curve`
  (:func:`evalcore.report.views.alt_test.curve`), drawn by :func:`evalcore.report.plots.winning_rate_figure`.
- :func:`annotators_section`: one judge's test against each annotator,
  :func:`evalcore.report.views.alt_test.annotator_rows`.
"""

from dataclasses import dataclass

import streamlit as st

from evalcore import ui
from evalcore.columns import RATINGS, segment_columns
from evalcore.pointwise.alt_test import EPSILON_GUIDANCE, SCORINGS, alt_test_verdicts
from evalcore.report import plots
from evalcore.report.views import alt_test as views
from evalcore.report.views import common
from evalcore.text import md

GUIDANCE = "; ".join(f"{e:g} for {who}" for who, e in EPSILON_GUIDANCE)
SCORING_NAMES = {"auto": "automatic (accuracy for categories, -RMSE for numbers)", "accuracy": "accuracy",
                 "neg_rmse": "negative RMSE"}


@dataclass(frozen=True)
class Selection:
    """What the controls chose."""

    judges: tuple
    by: tuple
    epsilon: float
    scoring: str
    q: float
    min_annotators: int
    min_items: int
    n_boot: int
    seed: int


def header():
    """The title and, returned, the place the verdict is written once computed (on the first screen)."""
    st.title("Can the judge replace the annotators?")
    st.caption("The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): each annotator is left out in "
               "turn, and the judge and that annotator are scored against the remaining annotators on every item. "
               "The judge wins against an annotator when a one-sided t-test, corrected across annotators "
               "(Benjamini-Yekutieli, q 0.05), shows it is not worse by more than epsilon.")
    slot = st.container()
    ui.how_to_read("alt_test")
    return slot


def controls(frame) -> Selection | None:
    judges = common.judge_names(frame)
    if not judges:
        st.info("This dataset has no judge scores: the Alt-Test compares a judge with the annotators.",
                icon=":material/info:")
        return None
    segs = segment_columns(frame)
    c1, c2, c3 = st.columns([3, 2, 2])
    picked = c1.multiselect("Judges", ui.choices("at_judges", judges, judges), key="at_judges")
    by = c2.multiselect("Test separately by", ui.choices("at_by", segs, []), key="at_by",
                        help="One test per group, e.g. per criterion or language.")
    epsilon = c3.slider("Epsilon", 0.0, 0.5, 0.2, 0.01, key="at_eps", bind="query-params",
                        help=f"The judge's allowed disadvantage, priced by its lower cost. The paper's guidance: "
                             f"{GUIDANCE}.")
    c3.caption(md(f"Guidance: {GUIDANCE}."))
    with st.expander("Options: scoring, false discovery rate, thresholds, resamples, seed"):
        o1, o2, o3 = st.columns(3)
        scoring = o1.selectbox("Scoring", SCORINGS, key="at_scoring", format_func=SCORING_NAMES.get,
                               help="How the judge and the left-out annotator are scored against the others: "
                                    "agreement (accuracy) for categories, negative RMSE for numbers.")
        q = o2.select_slider("False discovery rate q", [0.01, 0.05, 0.1], value=0.05, key="at_q")
        n_boot = int(o3.select_slider("Bootstrap resamples", [0, 200, 500, 1000, 2000], value=1000, key="at_boot",
                                      bind="query-params",
                                      help="For the advantage probability's interval; 0 skips it."))
        min_annotators = o1.number_input("Fewest annotators per item", 2, 50, 2, key="at_min_ann",
                                         help="Items with fewer are left out (one must remain after leaving one out).")
        min_items = o2.number_input("Fewest items per annotator", 2, 10_000, 30, key="at_min_items",
                                    help="Annotators with fewer items are left out; the paper uses 30.")
        seed = int(o3.number_input("Seed", 0, 2**31 - 1, 0, key="at_seed", bind="query-params"))
    return Selection(tuple(picked), tuple(by), float(epsilon), scoring, float(q), int(min_annotators),
                     int(min_items), n_boot, seed)


def verdict_section(table, slot) -> None:
    """The answer first, in sentences a stakeholder can repeat."""
    slot.info("  \n".join(md(v) for v in alt_test_verdicts(table)), icon=":material/gavel:")
    for note in views.left_out(table):
        slot.caption(md(f"Not tested: {note.removesuffix(' left out')}."))


def ranking_section(table) -> None:
    st.subheader("The judges, ranked by advantage probability")
    st.dataframe(views.ranking(table), hide_index=True)
    st.caption("The advantage probability is the chance that the judge is at least as good as a randomly chosen "
               "annotator on an item (the mean of its win shares over the annotators), with a 95% item-bootstrap "
               "interval: the paper ranks judges by it. 'Passes from epsilon' is the smallest epsilon at which the "
               "judge would pass, computed exactly.")


def curve_section(sel: Selection, table) -> None:
    st.subheader("Winning rate against epsilon")
    ui.figure(plots.winning_rate_figure(views.curve(table, q=sel.q), epsilon=sel.epsilon), key="at_curve")
    st.caption("Each line is the share of annotators a judge beats at each epsilon; it passes where the line reaches "
               "the dashed 0.5. The solid line is the epsilon chosen above, the dotted ones the paper's guidance. A "
               "judge that passes only at a large epsilon is cheaper, not as good.")


def annotators_section(sel: Selection, table) -> None:
    st.subheader("Against each annotator")
    c1, c2 = st.columns(2)
    judge = c1.selectbox("Judge", **ui.in_url("at_judge", list(table["judge"].drop_duplicates()), None))
    groups = views.group_names(table)
    group = c2.selectbox("Group", **ui.in_url("at_group", groups, groups[0])) if len(groups) > 1 else groups[0]
    st.dataframe(views.annotator_rows(table, judge=judge, group=group), hide_index=True)
    st.caption("Per annotator: the units both were scored on, the share of them on which the judge scored at least as "
               "well as the annotator (and the reverse; a tie counts for both), the one-sided p-value of "
               f"'the annotator is better by more than epsilon {sel.epsilon:g}', and whether it was rejected after "
               "the Benjamini-Yekutieli correction: a rejection is a win for the judge.")


def main() -> None:
    slot = header()
    frame = ui.require_table(RATINGS)
    with ui.guard("Running the Alt-Test"):
        sel = controls(frame)
        if sel is None:
            return
        if not sel.judges:
            st.info("Pick at least one judge under **Judges**.", icon=":material/info:")
            return
        table = ui.ALT_TEST.result(judges=sel.judges, by=sel.by, epsilon=sel.epsilon, scoring=sel.scoring, q=sel.q,
                                   min_annotators=sel.min_annotators, min_items=sel.min_items, n_boot=sel.n_boot,
                                   seed=sel.seed)
        verdict_section(table, slot)
        ranking_section(table)
        curve_section(sel, table)
        annotators_section(sel, table)
        ui.download_csv(table, file_name="alt_test.csv", label="Download every number (CSV)", key="at_dl")


main()
