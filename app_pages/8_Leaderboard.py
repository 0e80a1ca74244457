"""Which system is best? A systems leaderboard by the humans and by each judge (Bradley-Terry, as Chatbot Arena
computes it), with style control and a judge-corrected leaderboard

Each section, and the evalcore function that computes what it shows:

- :func:`verdict_section`: one sentence per judge, :func:`evalcore.report.views.systems.verdict_sentences` (the
  top system, then :func:`evalcore.pairwise.leaderboard_systems.ranking_sentences`) of
  :func:`~evalcore.pairwise.leaderboard_systems.system_leaderboard` (``ui.SYSTEMS``).
- :func:`forest_section`: the scores per source, drawn by :func:`evalcore.report.plots.systems_forest_figure`.
- :func:`moves_section`: each judge's ranks against the humans', and the ranking agreement per judge.
- :func:`style_section`: the style coefficients (``--style``).
"""

from dataclasses import dataclass

import streamlit as st

from evalcore import ui
from evalcore.columns import COMPARISONS
from evalcore.pairwise.leaderboard_systems import rank_moves, ranking_agreement
from evalcore.pairwise.style_control import available_styles
from evalcore.report import plots
from evalcore.report.views import common
from evalcore.report.views import systems as views
from evalcore.text import md

STYLES = {"none": "none", "length": "length", "length+markdown": "length and markdown (headers, lists, bold)"}


@dataclass(frozen=True)
class Selection:
    """What the controls chose."""

    judges: tuple
    style: str | None
    corrected: bool
    n_boot: int
    seed: int

    def opts(self) -> dict:
        return {"judges": self.judges, "style": self.style, "corrected": self.corrected, "n_boot": self.n_boot,
                "seed": self.seed}


def header():
    st.title("Which system is best?")
    st.caption("A leaderboard of the systems from every judgment, as Chatbot Arena builds one: each human vote and "
               "each judge verdict is a battle, a tie half a win to each side, and Bradley-Terry scores come from a "
               "logistic regression, with 95% intervals from resampling the items (the same resamples for every "
               "source, so their differences have intervals too). The question a stakeholder asks: would we ship "
               "the same system if we trusted the judge?")
    slot = st.container()
    ui.how_to_read("systems")
    return slot


def controls(frame) -> Selection | None:
    judges = common.judge_names(frame)
    if not judges:
        st.info("This dataset has no judge verdicts: the page compares the humans' leaderboard with each judge's.",
                icon=":material/info:")
        return None
    c1, c2 = st.columns([3, 2])
    picked = c1.multiselect("Judges", ui.choices("lb_judges", judges, judges), key="lb_judges")
    styles = ["none", *available_styles(frame)]
    style = c2.selectbox("Style control", **ui.in_url("lb_style", styles, "none"), format_func=STYLES.get,
                         disabled=len(styles) == 1,
                         help="As Chatbot Arena's style-controlled leaderboard: the normalised length difference of "
                              "the two outputs (and markdown counts) added to the regression, so the scores say "
                              "who wins at equal style. Length needs the outputs' texts or lengths (text_a/text_b, "
                              "length_a/length_b); markdown needs their texts.")
    with st.expander("Options: judge-corrected leaderboard, resamples, seed"):
        o1, o2, o3 = st.columns(3)
        corrected = o1.toggle("Judge-corrected leaderboard (prediction-powered)", key="lb_ppi",
                              help="Boyeau et al. 2024: the judge's verdicts on every item, corrected by the human "
                                   "votes on the items that have them. Useful when humans voted on a random subset.")
        n_boot = int(o2.select_slider("Bootstrap resamples", [200, 500, 1000, 2000], value=1000, key="lb_boot",
                                      bind="query-params"))
        seed = int(o3.number_input("Seed", 0, 2**31 - 1, 0, key="lb_seed", bind="query-params"))
    return Selection(tuple(picked), None if style == "none" else style, bool(corrected), n_boot, seed)


def verdict_section(board, sel: Selection, slot) -> None:
    lines = views.verdict_sentences(board, style=sel.style is not None)
    if lines:
        slot.info("  \n".join(md(line) for line in lines), icon=":material/trophy:")
    else:
        slot.info("No human votes here: each judge's leaderboard is shown, with nothing to compare it to.",
                  icon=":material/info:")


def forest_section(board, sel: Selection) -> None:
    style = sel.style is not None
    label = " (style-controlled)" if style else ""
    ui.figure(plots.systems_forest_figure(views.forest_rows(board, style=style),
                                          title=f"Each system's score by source{label}"), key="lb_forest")
    st.caption("One row per system, in the humans' order (best at the top); one marker per source with its 95% "
               "interval. Scores are on Chatbot Arena's Elo scale: 1000 is the average system, and 100 points "
               "mean the higher one wins about 64% of battles.")
    st.dataframe(views.shown_scores(board, style=style), hide_index=True)
    for note in views.notes(board):
        st.caption(md(note))


def moves_section(board, sel: Selection) -> None:
    style = sel.style is not None
    agreement = ranking_agreement(board, style=style)
    if agreement.empty:
        return
    st.subheader("How far each judge moves the ranking")
    st.dataframe(views.shown_agreement(agreement), hide_index=True)
    st.caption("Kendall's tau between the judge's and the humans' order of the systems (1: the same order), with an "
               "interval from the same resamples; the share of system pairs the judge orders as the humans do; and "
               "separability, the share of system pairs whose intervals do not overlap (Arena-Hard): a leaderboard "
               "that separates few pairs cannot be trusted to rank them.")
    moves = rank_moves(board, style=style)
    judges = list(agreement["judge"])
    judge = st.selectbox("Judge", **ui.in_url("lb_judge", judges, judges[0])) if len(judges) > 1 else judges[0]
    st.dataframe(views.shown_moves(moves, judge=judge), hide_index=True)
    st.caption("Each system's rank by the humans and by the judge (1 is best; tied scores share a rank); the move is "
               "the judge's rank minus the humans', with the range of moves over the resamples.")


def style_section(board, sel: Selection) -> None:
    if sel.style is None:
        return
    st.subheader("What style is worth to each source")
    st.dataframe(views.style_rows(board), hide_index=True)
    st.caption("The style coefficients on the log-odds scale, per standardised unit of each feature (positive: the "
               "longer output, or the one with more markdown, wins more often at equal quality), and the judge's "
               "coefficient as a multiple of the humans' ('this judge rewards length k times as much as the "
               "humans do').")


def main() -> None:
    slot = header()
    frame = ui.require_table(COMPARISONS)
    with ui.guard("Building the leaderboard"):
        sel = controls(frame)
        if sel is None:
            return
        if not sel.judges:
            st.info("Pick at least one judge under **Judges**.", icon=":material/info:")
            return
        board = ui.SYSTEMS.result(**sel.opts())
        verdict_section(board, sel, slot)
        forest_section(board, sel)
        moves_section(board, sel)
        style_section(board, sel)
        ui.download_csv(board, file_name="systems_leaderboard.csv", label="Download every number (CSV)",
                        key="lb_dl")


main()
