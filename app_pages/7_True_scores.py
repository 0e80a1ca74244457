"""True scores from a few human labels: prediction-powered inference (Angelopoulos et al., Science 2023; PPI++,
Angelopoulos, Duchi & Zrnic 2023; for LLM evaluation, Boyeau et al. 2024)

Each section, and the evalcore function that computes what it shows:

- :func:`estimates_section`: per cell (criterion and group, or system pair), the humans-only, judge-only and PPI++
  estimates, :func:`evalcore.pointwise.ppi.ppi_estimates` or :func:`evalcore.pairwise.ppi.ppi_win_rates`
  (``ui.PPI``), drawn by :func:`evalcore.report.plots.ppi_forest_figure`; on comparisons Gao et al.'s BWRS and
  Dawid-Skene beside them (:func:`evalcore.pairwise.winrate.estimate_all`, ``ui.WINRATE_ALL``).
- :func:`check_section`: the labelled items' judge mean against the unlabelled items',
  :func:`evalcore.pointwise.ppi.ppi_label_check` (``ui.PPI_CHECK``).
- :func:`budget_section`: labels needed for a target half-width, :func:`evalcore.pointwise.ppi.ppi_budget`
  (``ui.PPI_BUDGET``), and the next labels to buy, :func:`evalcore.pointwise.ppi.ppi_plan` (``ui.PPI_PLAN``).
- :func:`what_if_section`: the interval's width against the share of labels,
  :func:`evalcore.pointwise.ppi.ppi_what_if` (``ui.PPI_WHAT_IF``), drawn by :func:`evalcore.report.plots.ppi_width_figure`.
"""

from dataclasses import dataclass

import streamlit as st

from evalcore import ui
from evalcore.columns import COMPARISONS, RATINGS, segment_columns
from evalcore.report import plots
from evalcore.report.guide import PPI_METHOD
from evalcore.report.views import common
from evalcore.report.views import ppi as views
from evalcore.text import md

KINDS = {RATINGS: "Ratings", COMPARISONS: "Comparisons"}
RANDOM_SAMPLE = ("PPI assumes the items with human labels are a **random sample** of all items. If they were chosen "
                 "(the hard ones, one language first, the judge's doubtful cases), the intervals are not valid: see "
                 "the check below.")


@dataclass(frozen=True)
class Selection:
    """What the controls chose: the table, the judges, the strata and the estimand's options."""

    table: str
    judges: tuple
    by: tuple
    pass_at: float | None
    no_majority: str
    level: float
    plain: bool

    def opts(self) -> dict:
        return {"table": self.table, "by": self.by, "judges": self.judges, "pass_at": self.pass_at,
                "no_majority": self.no_majority, "level": self.level, "plain": self.plain}


def header() -> None:
    st.title("True scores from a few human labels")
    st.caption("Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi & Zrnic "
               "2023; for LLM evaluation, Boyeau et al. 2024): the judge labels every item, humans a few; the "
               "humans' labels measure the judge's error and subtract it. The estimate targets what the humans "
               "would have said on every item, with a valid 95% interval, narrower than the humans' alone when the "
               "judge tracks them.")
    st.info(RANDOM_SAMPLE, icon=":material/shuffle:")
    ui.how_to_read("ppi")
    with st.expander("The method: PPI++ in four lines"):
        st.markdown(PPI_METHOD)


def _table_kind() -> str | None:
    info = ui.current_info()
    kinds = [k for k in KINDS if info is not None and k in info.tables]
    if len(kinds) <= 1:
        return kinds[0] if kinds else RATINGS
    return st.radio("Estimate from", **ui.in_url("tp_table", kinds, kinds[0]), format_func=KINDS.get, horizontal=True,
                    help="Ratings: the mean human score (or pass rate) per criterion. Comparisons: the humans' win "
                         "rate per system pair.")


def controls(frame, kind: str) -> Selection | None:
    judges = common.judge_names(frame)
    if not judges:
        st.info("This dataset has no judge labels: PPI corrects a judge's labels with a few human ones.",
                icon=":material/info:")
        return None
    segs = [c for c in segment_columns(frame) if c != "criterion"]
    c1, c2, c3 = st.columns([3, 2, 2])
    picked = c1.multiselect("Judges", ui.choices("tp_judges", judges, judges[:1]), key="tp_judges")
    by = c2.multiselect("Separately by (strata)", ui.choices("tp_by", segs, []), key="tp_by",
                        help="One estimate per group, and the stratified estimate over all groups, each weighted by "
                             "its share of items.")
    pass_at, no_majority = None, "tie"
    if kind == RATINGS:
        if c3.toggle("Pass rate instead of the mean", key="tp_pass",
                     help="The share of items whose score is at least a threshold (the humans' mean score per "
                          "item, against the judge's). Nominal criteria always give the share of each category."):
            pass_at = float(c3.number_input("Pass at (score at least)", value=4.0, step=0.5, key="tp_pass_at"))
    else:
        no_majority = c3.radio("Items without a strict human majority", ["tie", "drop"], key="tp_nomaj",
                               format_func={"tie": "count as ties (1/2)", "drop": "leave out"}.get)
    with st.expander("Options: interval level, plain PPI"):
        o1, o2 = st.columns(2)
        level = o1.select_slider("Interval level", [0.8, 0.9, 0.95, 0.99], value=0.95, key="tp_level")
        plain = o2.toggle("Show plain PPI (lambda 1) too", key="tp_plain",
                          help="PPI++ tunes lambda, the weight given to the judge, so that it is never worse than "
                               "the humans alone; plain PPI always uses 1.")
    return Selection(kind, tuple(picked), tuple(by), pass_at, no_majority, float(level), bool(plain))


def estimates_section(sel: Selection, table) -> None:
    """The answer first: what each judge is worth, then the forest plot and the table."""
    for line in views.worth_sentences(table):
        st.success(md(line), icon=":material/scale:")
    c1, c2 = st.columns(2)
    judge = c1.selectbox("Judge in the plot", **ui.in_url("tp_judge", list(sel.judges), sel.judges[0])) \
        if len(sel.judges) > 1 else sel.judges[0]
    criteria = views.criteria(table)
    # One criterion at a time once the groups make the plot long (HANNA by system: 6 x 12 rows).
    criterion = (c2 if len(sel.judges) > 1 else c1).selectbox("Criterion in the plot", **ui.in_url("tp_criterion", criteria, criteria[0])) \
        if sel.by and len(criteria) > 1 else None
    rows = views.forest_rows(table, judge=judge, criterion=criterion)
    if sel.table == COMPARISONS and not sel.by:
        rows = bayes_section(sel, judge, table, rows)
    measure = str(table["measure"].iloc[0])
    ui.figure(plots.ppi_forest_figure(rows, measure=measure, judge=judge), key="tp_forest")
    st.caption("Each row is a cell, each marker an estimate with its interval. **Humans only** uses the labelled "
               "items alone; **judge only** is the judge's own mean on every item (biased: it is what the judge "
               "says, not what humans would); **PPI++** is the judge's mean corrected by its error on the labelled "
               "items. 'Worth' is how many human labels the humans-only estimate would need for PPI++'s precision.")
    st.dataframe(views.shown_estimates(table), hide_index=True)
    ui.download_csv(table, file_name="true_scores.csv", label="Download the estimates (CSV)", key="tp_dl")


def bayes_section(sel: Selection, judge: str, table, rows):
    """Gao et al.'s Bayesian win rates on the same plot, on request (Dawid-Skene takes seconds per pair)."""
    if not st.toggle("Add Gao et al.'s BWRS and Dawid-Skene (Bayesian; all of each pair's human labels as the prior)",
                     key="tp_bayes", help="See the Win rates page for the method notes."):
        return rows
    bayes = [r for m in ("bwrs", "ds") for r in ui.WINRATE_ALL.result(
        method=m, prior="ratio:1", baseline=None, judges=(judge,), ties="drop", seed=0, ood_auto=False)]
    st.caption("BWRS and Dawid-Skene drop the humans' ties and estimate the share of non-tied items the first system "
               "wins; PPI counts a tie as 1/2, so the two can differ where ties are common.")
    ui.page_link("app_pages/3_Win_rates.py", label="Their method notes: the last tab of the Win rates page",
                 icon=":material/menu_book:")
    return views.with_bayes(rows, bayes, table)


def check_section(sel: Selection) -> None:
    check = ui.PPI_CHECK.result(**sel.opts())
    warned = check[check["warning"].astype(bool)]
    st.subheader("Were the labelled items a random sample?")
    if len(warned):
        st.warning(f"In {len(warned)} of {len(check)} cells the judge's mean on the labelled items differs from its "
                   "mean on the unlabelled ones (Welch z-test, Benjamini-Hochberg q 0.05 across cells): the "
                   "labelled items may not be a random sample there.", icon=":material/warning:")
    else:
        st.caption(f"No cell shows a difference between the judge's mean on labelled and unlabelled items "
                   f"({len(check)} cells tested; Welch z-test, Benjamini-Hochberg q 0.05). This cannot prove the "
                   "sample was random, only that nothing the judge sees tells them apart.")
    with st.expander("The check per cell"):
        st.dataframe(check.assign(cell=views.cell_labels(check)), hide_index=True)


def budget_section(sel: Selection, table) -> None:
    st.subheader("How many labels to buy")
    c1, c2, c3 = st.columns(3)
    half = c1.number_input("Target half-width of the interval", 0.001, 10.0, 0.05, 0.01, format="%.3f",
                           key="tp_half", help="The estimate plus or minus this, at the chosen level.")
    cost_label = c2.number_input("Cost of a human label (optional)", 0.0, value=0.0, key="tp_cost_h")
    cost_judge = c3.number_input("Cost of a judge label (optional)", 0.0, value=0.0, key="tp_cost_j")
    costs = (cost_label, cost_judge) if cost_label > 0 and cost_judge > 0 else (None, None)
    budget = ui.PPI_BUDGET.result(half_width=half, cost_label=costs[0], cost_judge=costs[1], **sel.opts())
    st.dataframe(views.shown_budget(budget), hide_index=True)
    st.caption("Per cell: the labels the humans-only estimate needs for this half-width, and those PPI++ needs with "
               "this judge on this file's items (ppi_py's power analysis). With both costs, the cheapest mix of "
               "human and judge labels that reaches it.")
    plan_section(sel)


def plan_section(sel: Selection) -> None:
    c1, c2 = st.columns(2)
    m = int(c1.number_input("Labels to buy next", 1, 100_000, 50, key="tp_m"))
    judge = c2.selectbox("For the judge", **ui.in_url("tp_plan_judge", list(sel.judges), sel.judges[0]))
    plan = ui.PPI_PLAN.result(m=m, judge=judge, seed=0, **{k: v for k, v in sel.opts().items() if k != "judges"})
    st.dataframe(views.shown_allocation(plan.allocation), hide_index=True)
    st.caption("Where strata are chosen, the next labels go where the judge's residual spread is largest (Neyman "
               "allocation). The items are a seeded random sample within each stratum, never chosen by the judge's "
               "answer, so the labels stay a random sample.")
    ui.download_csv(plan.items, file_name="items_to_label.csv", label="Download the items to label (CSV)",
                    key="tp_plan_dl")


def what_if_section(sel: Selection, table) -> None:
    st.subheader("What if only some items had human labels?")
    st.markdown("On items where every label is known, hide a random share of the human labels and estimate again: the "
                "curve shows how the interval narrows as labels are added, and how often it still holds the value "
                "from all labels.")
    opts = {**sel.opts(), "repeats": 20, "seed": 0}
    # Drawn at once where every item is labelled (the page's only view of the judge's worth there), else on request.
    if not (views.fully_labelled(table) or ui.PPI_WHAT_IF.ready(**opts)
            or st.button("Draw the curve", key="tp_whatif_go", icon=":material/show_chart:")):
        return
    curve = ui.PPI_WHAT_IF.result(**opts)
    c1, c2 = st.columns(2)
    judge = sel.judges[0] if len(sel.judges) == 1 else c2.selectbox(
        "Judge", **ui.in_url("tp_wi_judge", list(sel.judges), sel.judges[0]))
    curve = curve[curve["judge"] == judge]
    labels = views.cells(curve)
    if not labels:
        st.info("No cell has items with both the judge's and the humans' labels.", icon=":material/info:")
        return
    label = c1.selectbox("Cell", **ui.in_url("tp_wi_cell", labels, labels[0]))
    cell = views.what_if_cell(curve, label=label)
    shares = [float(x) for x in cell["share"]]
    share = st.select_slider("Share of the items given human labels", shares, value=shares[len(shares) // 5 - 1]
                             if len(shares) >= 5 else shares[0], key="tp_wi_share", format_func=lambda x: f"{x:.0%}")
    st.markdown(md(views.what_if_sentence(cell, share=share)))
    ui.figure(plots.ppi_width_figure(cell, label=label, share=share), key="tp_whatif")
    st.caption("Width of the 95% interval (mean over 20 random subsets per share) for PPI++ and for humans only. "
               "Hover a point for how often its intervals held the full-data value: about 95% is what a valid "
               "interval gives. The dotted line marks the share of labels at which PPI++ is as narrow as humans "
               "only with every label; the solid line is the share chosen above.")
    ui.download_csv(curve, file_name="what_if.csv", label="Download the curve (CSV)", key="tp_whatif_dl")


def main() -> None:
    header()
    kind = _table_kind()
    frame = ui.require_table(kind)
    with ui.guard("Computing the prediction-powered estimates"):
        sel = controls(frame, kind)
        if sel is None:
            return
        if not sel.judges:
            st.info("Pick at least one judge under **Judges**.", icon=":material/info:")
            return
        table = ui.PPI.result(**sel.opts())
        estimates_section(sel, table)
        check_section(sel)
        budget_section(sel, table)
        what_if_section(sel, table)


main()
