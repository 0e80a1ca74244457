"""Superficial quality: does the judge reward outputs that only look good? (Zhou et al. 2024; Dubois et al. 2024)

Each section, and the evalcore function that computes what it shows:

- :func:`controls`: the judges are :func:`evalcore.report.views.common.judge_names`, the superficial qualities
  :func:`evalcore.pairwise.superficial.q_options` or :func:`evalcore.pointwise.superficial.q_options`.
- :func:`curve_section`: :func:`evalcore.pairwise.superficial.superficial_table` (pairwise: accuracy against
  gold) or :func:`evalcore.pointwise.superficial.correlation_table` (pointwise: rank correlation with the
  humans) via ``ui.SUPERFICIAL_CURVE``, drawn by :func:`evalcore.report.plots.alpha_curve_figure`.
- :func:`at_alpha`: the curve's rows at the slider's alpha and, pairwise,
  :func:`evalcore.pairwise.superficial.flips` on the cached per-item arrays (``ui.superficial_data``): the only
  computation a slider move triggers; :func:`verdict_section` reads them first
  (:func:`evalcore.report.views.superficial_quality.superficial_reading`), :func:`at_alpha_section` lists them. Over 2 s the
  curve's points come first and its bands follow (``ui.SUPERFICIAL_CURVE.points_first``).
- :func:`flipped_section`: :func:`evalcore.pairwise.superficial.decisions` at the slider's alpha.
- :func:`evalcore.ui.superficial_sections.length_controlled_section`: :func:`evalcore.pairwise.superficial.length_controlled`
  (``ui.LENGTH_CONTROLLED``).
"""

from dataclasses import dataclass, replace

import streamlit as st

from evalcore import ui
from evalcore.ui import superficial_sections
from evalcore.columns import COMPARISONS, RATINGS
from evalcore.pairwise import superficial as sp
from evalcore.pointwise import superficial as ps
from evalcore.report import guide, plots
from evalcore.report.views import common, superficial_quality
from evalcore.text import md

ALPHAS = [round(0.05 * i, 2) for i in range(21)]
#: Where the slider opens when cross-validation gives no α.
OPENING_ALPHA = 0.5
Q_LABEL = {"superficial": "superficial score (superficial_a / superficial_b)", "length": "length in characters",
           "words": "length in words"}


@dataclass(frozen=True)
class Selection:
    """What the controls chose."""

    kind: str
    judge: str
    q: str
    by: tuple
    alpha: float
    n_boot: int
    seed: int
    rank_measure: str = "kendall_tau"

    @property
    def pairwise(self) -> bool:
        return self.kind == COMPARISONS

    @property
    def measure(self) -> str:
        return "accuracy" if self.pairwise else self.rank_measure

    @property
    def label(self) -> str:
        return {"accuracy": "accuracy against gold", "kendall_tau": "Kendall's tau with the humans",
                "spearman_rho": "Spearman's rho with the humans"}[self.measure]

    @property
    def group(self) -> tuple:
        return self.by if self.pairwise else ("criterion", *self.by)


def header():
    """The title and, returned, the place the verdict is written once computed: above the how-to-read note and
    the controls, so that it is on the first screen."""
    st.title("Superficial quality: does the judge reward outputs that only look good?")
    st.caption("Judges prefer outputs that are long, fluent or confident even when they do not follow the "
               "instruction. Zhou et al. (2024) subtract a superficial-quality score Q from the judge's score P: "
               "P̂ = Norm(P) − α·Norm(Q), with min-max Norm (the paper prints Normalize inverted; min-max keeps a "
               "higher score higher). Move α to see what the correction does, with 95% item-bootstrap intervals.")
    slot = st.container()
    ui.how_to_read("superficial")
    return slot


def table_kind(info) -> str:
    kinds = [k for k in (COMPARISONS, RATINGS) if k in info.tables]
    if len(kinds) == 1:
        return kinds[0]
    return st.radio("Judgments", **ui.in_url("sq_kind", kinds), horizontal=True,
                    format_func={COMPARISONS: "pairwise (which output is better)",
                                 RATINGS: "pointwise (a score per output)"}.get)


def _judges(frame, kind: str) -> list:
    judges = common.judge_names(frame)
    if kind == COMPARISONS:
        judges = superficial_quality.scoring_judges(frame, judges)
    return judges


def controls(frame, kind: str) -> tuple[Selection, object] | None:
    judges = _judges(frame, kind)
    if not judges:
        st.info("No judge in this dataset scores each output (pairwise: columns score_a and score_b, as LLMBar's "
                "Rating strategies write them). Subtracting superficial quality needs the judge's score of each "
                "output, not only its verdict."
                + (" The length-controlled win rate below needs only the verdicts."
                   if superficial_sections.verdicts_only(frame, kind) else ""), icon=":material/info:")
        return None
    qs = sp.q_options(frame) if kind == COMPARISONS else ps.q_options(frame)
    if not qs:
        st.info("This dataset has no superficial quality to subtract: pairwise it needs superficial_a/superficial_b "
                "or the outputs' texts (text_a, text_b); pointwise a 'text' column, a numeric per-item column such "
                "as text_length, or a second judge.", icon=":material/info:")
        return None
    segs = [c for c in ("subset", "language", "task") if c in frame.columns]
    # Pairwise, LLMBar's subsets are the point (Natural against Adversarial); pointwise, criteria already split.
    default_by = segs[:1] if kind == COMPARISONS else []
    c1, c2, c3 = st.columns([3, 3, 2])
    judge = c1.selectbox("Judge", **ui.in_url("sq_judge", judges))
    if kind == RATINGS:  # another judge's scores can be Q, never the judge's own
        qs = ps.q_options(frame, judge=judge)
    q = c2.selectbox("Superficial quality Q", **ui.in_url("sq_q", qs),
                     format_func=lambda v: Q_LABEL.get(v, v.replace("rater:", "scores of ")),
                     help="What is subtracted: a column of superficial scores, the outputs' length, or (pointwise) "
                          "another judge that rates only fluency and style.")
    by = c3.multiselect("Break down by", ui.choices(f"sq_by_{kind}", segs, default_by), key=f"sq_by_{kind}")
    slider = st.container()  # the α slider is drawn here once the curve says where to open it
    with st.expander("Options: measure, resamples, seed"):
        o1, o2, o3 = st.columns(3)
        rank = o1.radio("Pointwise measure", ["kendall_tau", "spearman_rho"], key="sq_rank", disabled=kind != RATINGS,
                        format_func={"kendall_tau": "Kendall's tau", "spearman_rho": "Spearman's rho"}.get)
        n_boot = int(o2.select_slider("Bootstrap resamples", [200, 500, 1000, 2000], value=1000, key="sq_boot",
                                      bind="query-params"))
        seed = int(o3.number_input("Seed", 0, 2**31 - 1, 0, key="sq_seed", bind="query-params"))
    return Selection(kind, judge, q, tuple(by), OPENING_ALPHA, n_boot, seed, rank), slider


def alpha_slider(sel: Selection, slider, table) -> Selection:
    """The α slider, which opens at the cross-validated α (the median over the groups, on the slider's grid)."""
    cv = superficial_quality.superficial_curve(table, by=sel.group, measure=sel.measure)[1]
    opening = superficial_quality.opening_alpha(cv, ALPHAS, default=OPENING_ALPHA)
    with slider:
        alpha = st.select_slider("α: how much of the superficial quality to subtract",
                                 **ui.in_url("sq_alpha", ALPHAS, opening, slider=True),
                                 help="0 is the raw judge; the page opens at the α cross-validation picks. The "
                                      "curve below is computed once; moving α only recounts the verdicts.")
    return replace(sel, alpha=float(alpha))


def curve_section(sel: Selection, table) -> None:
    curve, cv = superficial_quality.superficial_curve(table, by=sel.group, measure=sel.measure)
    ui.figure(plots.alpha_curve_figure(curve, label=sel.label, alpha=sel.alpha, cv=cv), key="sq_curve")
    st.caption(guide.CAPTIONS["superficial_curve"])


def at_alpha(sel: Selection, table):
    """The curve's rows at the slider's α (pairwise with the verdicts that flip)."""
    flips = None
    if sel.pairwise:
        data = ui.superficial_data(kind=sel.kind, judge=sel.judge, q=sel.q, by=sel.by)
        flips = sp.flips(data, sel.alpha)
    return superficial_quality.superficial_at(table, sel.alpha, by=sel.group, measure=sel.measure, flips=flips)


def verdict_section(sel: Selection, at, slot) -> None:
    """The answer first: what subtracting Q at the slider's α does, with the numbers."""
    q = Q_LABEL.get(sel.q, sel.q.replace('rater:', 'scores of '))
    slot.info(f"**{md(sel.judge)}, Q = {md(q)}.** "
              + md(superficial_quality.superficial_reading(at, by=sel.group, alpha=sel.alpha, label=sel.label)),
              icon=":material/balance:")


def at_alpha_section(sel: Selection, table, at) -> None:
    st.subheader(f"At α = {sel.alpha:g}")
    st.dataframe(superficial_quality.superficial_shown(at, by=sel.group, label=sel.measure.replace("_", " ")), hide_index=True)
    d1, d2 = st.columns(2)
    with d1:
        ui.download_csv(at, file_name="superficial_at_alpha.csv", label="Download this table (CSV)", key="sq_dl_at")
    with d2:
        ui.download_csv(table, file_name="superficial_curve.csv", label="Download the whole curve (CSV)",
                        key="sq_dl_curve")
    held = table[table["measure"].isin(["accuracy_cv", "kendall_tau_cv"])]
    with st.expander("Cross-validated alpha: held-out results"):
        st.dataframe(held, hide_index=True)
        st.caption(guide.CAPTIONS["superficial_cv"])


def flipped_section(sel: Selection, frame) -> None:
    data = ui.superficial_data(kind=sel.kind, judge=sel.judge, q=sel.q, by=sel.by)
    dec = sp.decisions(data, sel.alpha)
    flipped = dec[dec["flipped"]]
    st.subheader(f"Verdicts that changed at α = {sel.alpha:g}")
    if flipped.empty:
        st.caption("No verdict changed.")
        return
    st.caption(guide.CAPTIONS["superficial_flipped"])
    st.dataframe(flipped.drop(columns="flipped"), hide_index=True, column_config={
        "decision_raw": "judge's verdict", "decision": f"verdict at α = {sel.alpha:g}", "correct_raw": "right before",
        "correct": "right now"})
    ui.download_csv(flipped, file_name="superficial_flipped.csv", label="Download the changed verdicts (CSV)",
                    key="sq_dl_flip")
    if {"text_a", "text_b"} <= set(frame.columns):
        item = st.selectbox("Open an item", ui.choice("sq_item", list(flipped["item_id"])), key="sq_item")
        texts = frame[frame["item_id"].astype(str) == item].iloc[0]
        c1, c2 = st.columns(2)
        for col, side in ((c1, "a"), (c2, "b")):
            with col:
                st.markdown(f"**Output {side}**" + (" (gold)" if dec.set_index("item_id").loc[item, "gold"] == side
                                                     else ""))
                st.text(str(texts[f"text_{side}"]))  # plain text: nothing in it is rendered


def main() -> None:
    slot = header()
    info = ui.current_info()
    if info is None or not ({COMPARISONS, RATINGS} & set(info.tables)):
        ui.require_table(COMPARISONS)
    with ui.guard("Subtracting superficial quality"):
        kind = table_kind(info)
        frame = ui.require_table(kind)
        picked = controls(frame, kind)
        if picked is None:
            if superficial_sections.verdicts_only(frame, kind):
                superficial_sections.verdicts_only_section(frame, q_label=Q_LABEL, alphas=ALPHAS, alpha=OPENING_ALPHA)
            return
        sel, slider = picked
        # Over 2 s (a pointwise curve, a large file) the points come first and the bands follow.
        table, _ = ui.SUPERFICIAL_CURVE.points_first(kind=sel.kind, judge=sel.judge, q=sel.q, by=sel.by,
                                                           n_boot=sel.n_boot, seed=sel.seed)
        sel = alpha_slider(sel, slider, table)
        at = at_alpha(sel, table)
        verdict_section(sel, at, slot)
        curve_section(sel, table)
        at_alpha_section(sel, table, at)
        if sel.pairwise:
            flipped_section(sel, frame)
            superficial_sections.length_controlled_section(frame, judge=sel.judge, q=sel.q, n_boot=sel.n_boot,
                                                          seed=sel.seed, alpha=sel.alpha, alphas=ALPHAS)


main()
