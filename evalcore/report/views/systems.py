"""The "Which system is best?" page: the systems leaderboard by source (humans, each judge, corrected), the rank
moves, the ranking agreement, and the style coefficients.

Pure functions of :func:`evalcore.pairwise.leaderboard_systems.system_leaderboard`'s table and the frames of
:func:`~evalcore.pairwise.leaderboard_systems.ranking_agreement` and
:func:`~evalcore.pairwise.leaderboard_systems.rank_moves` (no Streamlit, no statistics of their own): the page
calls them so that it holds no pandas code.
"""

from __future__ import annotations

import pandas as pd

from ...columns import HUMANS_LABEL
from ...pairwise.leaderboard_systems import rank_moves, ranking_sentences
from ..display import fmt_interval

__all__ = ["forest_rows", "sources", "verdict_sentences", "shown_agreement", "shown_moves", "style_rows",
           "shown_scores", "notes"]


def _prefix(style: bool) -> str:
    return "sc_" if style else ""


def sources(board: pd.DataFrame, *, style: bool = False) -> list[str]:
    """The sources of a leaderboard (humans first, then the judges, then the corrected ones), in its order."""
    rows = board[board["measure"] == _prefix(style) + "bt_score"]
    return list(dict.fromkeys(rows["rater"]))


def forest_rows(board: pd.DataFrame, *, measure: str = "elo", style: bool = False) -> pd.DataFrame:
    """The rows the forest plot draws: ``rater, system, estimate, ci_low, ci_high`` of ``measure`` (``elo`` or
    ``bt_score``; the style-controlled fit with ``style``), systems in the humans' order (best first), else the
    first source's."""
    m = _prefix(style) + measure
    rows = board[(board["measure"] == m) & (board["system"] != "")]
    ranks = board[(board["measure"] == _prefix(style) + "rank") & (board["system"] != "")]
    first = HUMANS_LABEL if HUMANS_LABEL in set(ranks["rater"]) else (ranks["rater"].iloc[0] if len(ranks) else None)
    order = list(ranks[ranks["rater"] == first].sort_values("estimate", kind="stable")["system"])
    rows = rows.assign(_o=rows["system"].map({s: i for i, s in enumerate(order)}))
    return rows.sort_values(["_o"], kind="stable")[["rater", "system", "estimate", "ci_low", "ci_high"]] \
        .reset_index(drop=True)


def verdict_sentences(board: pd.DataFrame, *, style: bool = False) -> list[str]:
    """One plain-text sentence per judge: would trusting it ship the humans' top system, then how far it moves the
    ranking (:func:`evalcore.pairwise.leaderboard_systems.ranking_sentences`, the CLI's sentence)."""
    moves = rank_moves(board, style=style)
    out = []
    for judge, sentence in ranking_sentences(board, style=style).items():
        m = moves[moves["judge"] == judge]
        top_h = sorted(m.loc[m["humans_rank"] == m["humans_rank"].min(), "system"]) if len(m) else []
        top_j = sorted(m.loc[m["judge_rank"] == m["judge_rank"].min(), "system"]) if len(m) else []
        if not top_h or not top_j:
            out.append(sentence)
        elif top_h == top_j:
            out.append(f"Trusting {judge} would ship the humans' top system ({', '.join(top_h)}). {sentence}")
        else:
            out.append(f"Trusting {judge} would ship {', '.join(top_j)} instead of the humans' top system "
                       f"({', '.join(top_h)}). {sentence}")
    return out


def shown_agreement(agreement: pd.DataFrame) -> pd.DataFrame:
    """The ranking agreement per judge as shown: tau with its interval, pairs in the same order, separability."""
    return pd.DataFrame({
        "judge": agreement["judge"],
        "Kendall's tau": agreement["ranking_tau"].round(3),
        "95% interval": [fmt_interval(lo, hi) for lo, hi in zip(agreement["tau_ci_low"], agreement["tau_ci_high"])],
        "pairs in the humans' order": agreement["pairs_ordered_same"].round(3),
        "separability (judge)": agreement["separability"].round(3),
        "separability (humans)": agreement["humans_separability"].round(3),
        "systems": agreement["n_systems"], "note": agreement["note"].fillna(""),
    })


def shown_moves(moves: pd.DataFrame, *, judge: str) -> pd.DataFrame:
    """One judge's rank per system against the humans', with the move's interval, in the humans' order."""
    m = moves[moves["judge"] == judge]
    return pd.DataFrame({
        "system": m["system"], "humans' rank": m["humans_rank"], "judge's rank": m["judge_rank"],
        "move": m["move"], "95% interval of the move": [
            fmt_interval(lo, hi, digits=0) for lo, hi in zip(m["move_ci_low"], m["move_ci_high"])],
    }).reset_index(drop=True)


def style_rows(board: pd.DataFrame) -> pd.DataFrame:
    """The style coefficients per source and the judges' ratios to the humans' (``style_*`` rows), as shown."""
    rows = board[board["measure"].str.startswith("style_")]
    return pd.DataFrame({
        "source": rows["rater"], "measure": rows["measure"], "estimate": rows["estimate"].round(3),
        "95% interval": [fmt_interval(lo, hi) for lo, hi in zip(rows["ci_low"], rows["ci_high"])],
        "items": rows["n"], "note": rows["note"].fillna(""),
    }).reset_index(drop=True)


def shown_scores(board: pd.DataFrame, *, style: bool = False) -> pd.DataFrame:
    """The scores table: one row per source and system with its Elo-scale score, interval and rank range (with
    ``style``: the style-controlled ones, the raw score beside them)."""
    p = _prefix(style)
    keys = ["rater", "system"]
    elo = board[board["measure"] == p + "elo"].set_index(keys)
    rank = board[board["measure"] == p + "rank"].set_index(keys)
    out = pd.DataFrame({
        "Elo-scale score": elo["estimate"].round(0),
        "95% interval": [fmt_interval(lo, hi, digits=0) for lo, hi in zip(elo["ci_low"], elo["ci_high"])],
        "rank": rank["estimate"].reindex(elo.index),
        "rank range": [fmt_interval(lo, hi, digits=0) for lo, hi in zip(rank["ci_low"].reindex(elo.index),
                                                                         rank["ci_high"].reindex(elo.index))],
        "items": elo["n"], "note": elo["note"].fillna(""),
    })
    if style:  # the raw score beside the style-controlled one
        raw = board[board["measure"] == "elo"].set_index(keys)["estimate"]
        out.insert(1, "raw Elo-scale score", raw.reindex(elo.index).round(0))
    return out.reset_index().rename(columns={"rater": "source"})


def notes(board: pd.DataFrame) -> list[str]:
    """The leaderboard's notes on its scores (a light ridge where a system won or lost every battle, a
    disconnected comparison graph, ...), each once, naming its source."""
    rows = board[board["measure"].isin(["bt_score", "sc_bt_score"]) & board["note"].fillna("").ne("")]
    seen = dict.fromkeys(f"{r}: {n}" for r, n in zip(rows["rater"], rows["note"]))
    return list(seen)
