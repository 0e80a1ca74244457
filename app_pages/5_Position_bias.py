"""Position bias: does the verdict depend on which output is shown first? (LLMBar; Li et al., CalibraEval; PriDe)

Each section, and the evalcore function that computes what it shows:

- :func:`controls`: the judges are :func:`evalcore.report.views.common.judge_names`.
- :func:`verdict_section`: first, each judge's reading, :func:`evalcore.report.views.position_bias.position_reading`.
- :func:`orders_section`: :func:`evalcore.pairwise.position.position_report` (``ui.POSITION``), method ``none``,
  drawn by :func:`evalcore.report.plots.position_figure`.
- :func:`calibration_section`: the same report's calibrated methods as a before/after table
  (:func:`evalcore.report.views.position_bias.before_after`), and the fitted maps
  (:func:`evalcore.pairwise.position.fit_calibrations`, ``ui.CALIBRATIONS``) drawn by
  :func:`evalcore.report.plots.calibration_map_figure`; the fits download as the JSON
  :func:`evalcore.pairwise.position.load_calibrations` reads, and a saved file can be applied.
"""

from dataclasses import dataclass

import streamlit as st

from evalcore import ui
from evalcore.columns import COMPARISONS
from evalcore.pairwise.position import METHODS, PROB_COLUMNS, dumps_calibrations
from evalcore.report import display, plots
from evalcore.report.views import common, position_bias
from evalcore.text import md

ORDER_MEASURES = ("position_consistency", "first_position_preference", "accuracy_original_order",
                  "accuracy_swapped_order", "accuracy_both_orders")


@dataclass(frozen=True)
class Selection:
    """What the controls chose."""

    judges: tuple
    by: tuple
    methods: tuple
    share: float
    n_boot: int
    seed: int
    saved: str | None


def header():
    """The title and, returned, the place the verdict is written once computed (above the how-to-read note
    and the controls: on the first screen)."""
    st.title("Position bias: does the verdict depend on which output is shown first?")
    st.caption("A pairwise judge that prefers the first position, or the option labelled \"A\", can give a different "
               "verdict when the same two outputs are swapped. Measured on verdicts in both orders (LLMBar asks every "
               "judge both ways), with 95% item-bootstrap intervals; with the judge's probabilities, calibrated by "
               "PriDe (Zheng et al. 2023) and CalibraEval's NOA (Li et al. 2024). " + ui.FLAG_RULE)
    slot = st.container()
    ui.how_to_read("position")
    return slot


def controls(frame) -> Selection | None:
    judges = common.judge_names(frame)
    if not judges:
        st.info("This dataset has no judge verdicts.", icon=":material/info:")
        return None
    has_probs = set(PROB_COLUMNS) <= set(frame.columns)
    segs = [c for c in ("subset", "language", "task") if c in frame.columns]
    c1, c2 = st.columns([3, 2])
    picked = c1.multiselect("Judges", ui.choices("pb_judges", judges, judges), key="pb_judges")
    by = c2.multiselect("Break down by", ui.choices("pb_by", segs, []), key="pb_by")
    methods = ("none",)
    share, saved = 0.2, None
    # The options sit in one expander so that the verdict is on the first screen.
    with st.expander("Options: calibrations, resamples, seed" if has_probs else "Options: resamples, seed"):
        if has_probs:
            m1, m2 = st.columns([3, 2])
            methods = ("none", *m1.multiselect("Calibrations", ui.choices("pb_methods", METHODS[1:], METHODS[1:]),
                                               key="pb_methods", format_func=display.METHOD_NAMES.get))
            share = m2.slider("Estimation share", 0.05, 1.0, 0.2, 0.05, key="pb_share",
                              help="The seeded share of each judge's items the calibrations are fitted on; they are "
                                   "then applied to every item (CalibraEval's setting: 20%).")
            upload = st.file_uploader("Apply a saved calibration instead of fitting (JSON from this page or "
                                      "`evalcore position --save-calibration`)", type=["json"], key="pb_saved")
            saved = upload.getvalue().decode("utf-8", errors="replace") if upload is not None else None
        o1, o2 = st.columns(2)
        n_boot = int(o1.select_slider("Bootstrap resamples", [200, 500, 1000, 2000], value=1000, key="pb_boot",
                                      bind="query-params"))
        seed = int(o2.number_input("Seed", 0, 2**31 - 1, 0, key="pb_seed", bind="query-params"))
    return Selection(tuple(picked), tuple(by), methods, float(share), n_boot, seed, saved)


def measurable(report) -> bool:
    """Whether any judge has an item judged in both orders; if none does, the page says so once, as Home does."""
    cons = report[(report["method"] == "none") & (report["measure"] == "position_consistency")]
    if cons["estimate"].notna().any():
        return True
    st.info("Position bias is not available for this dataset: it needs judge verdicts in both orders (rows with "
            "'swapped' true), and no judge here has an item judged both ways. A share of verdicts for the output "
            "shown first cannot tell position from content when each item is shown in one order only.",
            icon=":material/info:")
    return False


def verdict_section(sel: Selection, report, slot) -> None:
    """The answer first: can each judge be trusted in a single order, with the numbers."""
    slot.info("  \n".join(position_bias.position_reading(report, judge=j, by=sel.by) for j in sel.judges),
            icon=":material/gavel:")


def orders_section(sel: Selection, report) -> None:
    rows = position_bias.position_rows(report, by=sel.by)
    ui.figure(plots.position_figure(rows, measures=ORDER_MEASURES), key="pb_orders")
    st.caption("Per judge: how often its verdict survives swapping the two outputs, the share of its decisive "
               "verdicts that go to whichever output is shown first (0.5 is no preference; a diamond is flagged), "
               "and its accuracy against gold in each order and in both. Consistency and accuracy need no "
               "calibration; a judge that is right in one order only is guessing by position.")
    st.caption("Trusted in a single order (the sentences at the top) means: the first-position preference is not flagged and the lower end "
               "of the consistency interval is at least 0.9 in every group.")


def calibration_section(sel: Selection, frame, report) -> None:
    st.subheader("Calibration: before and after")
    if not set(PROB_COLUMNS) <= set(frame.columns):
        st.info("Calibration needs the judge's probability of \"A\" under three prompts: the default (prob_a), the "
                "outputs' positions swapped (prob_a_swap_position) and the labels swapped (prob_a_swap_id), as "
                "CalibraEval records them. This file has verdicts only, so the measures above are what applies.",
                icon=":material/info:")
        return
    calibrated = position_bias.calibrated_judges(report)
    opening = calibrated[0] if calibrated else None
    judge = st.selectbox("Judge", **ui.in_url("pb_cal_judge", list(sel.judges), opening),
                         help="Judges with probabilities can be calibrated; the others show their measures "
                              "without calibration and say why.")
    st.dataframe(position_bias.before_after(report, judge=judge, by=sel.by), hide_index=True)
    notes = report[(report["judge"] == judge) & (report["measure"] == "not_available")]["note"]
    for note in notes:
        st.caption(md(note.replace("not_available: ", "Not available: ")))
    st.caption("With probabilities every method decides by P(a better) > 0.5, so the columns compare like with "
               "like; the calibrations are fitted on the estimation share and the intervals hold the fit fixed.")
    if sel.saved is None and len(sel.methods) > 1:
        cals = ui.CALIBRATIONS.result(judges=sel.judges, methods=sel.methods, share=sel.share, seed=sel.seed)
        cals = tuple(c for c in cals if not getattr(c, "collapsed", False))  # a collapsed NOA is not offered
        maps = position_bias.calibration_maps(cals, judge=judge)
        if not maps.empty:
            ui.figure(plots.calibration_map_figure(maps), key="pb_maps")
            st.caption("Each line maps the judge's raw P(\"A\") to the calibrated one; the dotted diagonal is no "
                       "change. A NOA map that collapsed to 0.5 is not drawn or offered (the note above says why).")
        st.download_button("Download the fitted calibrations (JSON)", dumps_calibrations(cals),
                           file_name="calibrations.json", mime="application/json", key="pb_dl_cal",
                           icon=":material/download:")


def main() -> None:
    slot = header()
    frame = ui.require_table(COMPARISONS)
    with ui.guard("Measuring position bias"):
        sel = controls(frame)
        if sel is None:
            return
        if not sel.judges:
            st.info("Pick at least one judge under **Judges**.", icon=":material/info:")
            return
        report = ui.POSITION.result(judges=sel.judges, by=sel.by, methods=sel.methods, share=sel.share,
                                    n_boot=sel.n_boot, seed=sel.seed, saved=sel.saved)
        if measurable(report):
            verdict_section(sel, report, slot)
            orders_section(sel, report)
            calibration_section(sel, frame, report)
        ui.download_csv(report, file_name="position_bias.csv", label="Download every number (CSV)", key="pb_dl")


main()
