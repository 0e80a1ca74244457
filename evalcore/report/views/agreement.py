"""The Agreement page (and the agreement section of the report and the CLI's summary): the page's first answer, the
flagged cells, the leaderboard, the system- and input-level correlations and the rater-pair matrix.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import pandas as pd

from ..display import HUMANS, fmt_interval

__all__ = [
    "FlaggedCells", "flagged_cells", "AgreementVerdict", "agreement_verdict", "agreement_summary",
    "for_sources", "leaderboard_view", "meta_view", "pair_matrix", "MEASURE_LABELS", "PAIR_MEASURES",
    "measure_options", "confusion_criteria", "CONFUSION_CAPTION", "MAX_CONFUSION_CATEGORIES",
]


@dataclass(frozen=True)
class FlaggedCells:
    """Where an agreement table is flagged.

    Attributes
    ----------
    n
        Flagged rows.
    by
        The column they are counted by (the first grouping column), or None without grouping.
    places
        With ``by``: ``(value, flagged rows)`` per value of ``by``, most flagged first (rows whose
        value is missing count in ``n`` only). Without: ``(judge, 1)`` per flagged row, in table order.
    """

    n: int
    by: str | None
    places: tuple[tuple[str, int], ...]


def flagged_cells(table: pd.DataFrame, by: Sequence[str]) -> FlaggedCells:
    """Count the flagged rows of an agreement table (:func:`evalcore.pointwise.agreement.table.agreement`)
    by the first grouping column, or list their judges when there is no grouping."""
    flagged = table[table["flagged"]]
    if by:
        counts = flagged[by[0]].astype(str).value_counts()
        return FlaggedCells(len(flagged), by[0], tuple((str(k), int(v)) for k, v in counts.items()))
    return FlaggedCells(len(flagged), None, tuple((str(j), 1) for j in flagged["judge"].astype(str)))


@dataclass(frozen=True)
class AgreementVerdict:
    """What the Agreement page says first: the judges in order, the one to open on, and the sentences."""

    ranked: tuple[str, ...]
    opening: str | None
    sentences: tuple[str, ...]


def _cell_name(row: pd.Series, by: Sequence[str]) -> str:
    return " / ".join(str(row[c]) for c in by) if by else "all items"


def agreement_verdict(table: pd.DataFrame, *, by: Sequence[str], judges: Sequence[str],
                      pending: bool = False, limit: int = 3,
                      escape: Callable[[object], str] = str) -> AgreementVerdict:
    """The page's first answer, from the ``pairwise_agreement_gap`` rows of an agreement table.

    The gap is a judge's agreement with each human minus the humans' agreement with each other on the same
    units (Hada et al. 2024): 0 means the judge agrees with the annotators as well as they agree among
    themselves. Judges are listed by their mean gap over the cells (weighted by units), closest to the
    humans first, and the page opens on the first: the order does not depend on the intervals, so it is
    the same while they are ``pending``. Each judge's sentence gives its mean gap, its lowest cell with that
    cell's 95% interval and, once the tests have run, how many cells are flagged; past ``limit`` judges, one
    sentence names the rest in order. Whether two judges differ is the leaderboard's question (a paired
    bootstrap), not this order's.

    The sentences are Markdown (each judge's name in bold); ``escape`` writes every name from the data into
    them: :func:`evalcore.text.md` where they are shown as Markdown (the app), so that a judge named
    ``[Log in](http://...)`` is not a link; the default leaves them as they are (the CLI prints plain text).
    ``ranked`` and ``opening`` keep the real names.
    """
    gap = table[(table["measure"] == "pairwise_agreement_gap") & table["judge"].isin(list(judges))]
    rows = []
    for judge, g in gap.groupby("judge", sort=False):
        est = g["estimate"].astype(float)
        if not est.notna().any():
            continue
        w = g["n"].astype(float).where(est.notna(), 0.0)
        mean = float((est.fillna(0) * w).sum() / w.sum())
        rows.append((str(judge), mean, g.loc[est.idxmin()], int(g["flagged"].fillna(False).astype(bool).sum()), len(g)))
    rows.sort(key=lambda r: (-r[1], r[0]))
    sentences = []
    for judge, mean, worst, flagged, n_cells in rows[:limit]:
        side = "below" if mean < 0 else "above"
        interval = "" if pending else " " + fmt_interval(worst["ci_low"], worst["ci_high"], signed=True)
        if n_cells > 1:
            text = (f"**{escape(judge)}**: its agreement with each human is on average {abs(mean):.3f} {side} the "
                    f"humans' agreement with each other (pairwise agreement gap, mean over {n_cells} cells); lowest "
                    f"in {escape(_cell_name(worst, by))}: {worst['estimate']:+.3f}{interval}")
            if not pending:
                text += f"; flagged in {flagged} of {n_cells} cells" if flagged else "; flagged in none"
        else:
            text = (f"**{escape(judge)}**: its agreement with each human is {abs(mean):.3f} {side} the humans' "
                    f"agreement with each other (pairwise agreement gap {mean:+.3f}{interval})")
            if not pending:
                text += "; flagged" if flagged else "; not flagged"
        sentences.append(text + ".")
    if len(rows) > limit:
        rest = [f"{escape(j)} ({m:+.3f}" + ("" if pending else f", {f} flagged") + ")"
                for j, m, _, f, _ in rows[limit:]]
        more = len(rest) - 2 * limit  # a long list is not read: the leaderboard tab ranks them all
        sentences.append(f"Then, by mean gap: {', '.join(rest[:2 * limit])}"
                         + (f", and {more} more (the judge leaderboard ranks them all)." if more > 0 else "."))
    if pending and rows:
        sentences.append("The 95% intervals and which cells are flagged follow.")
    ranked = tuple(r[0] for r in rows)
    return AgreementVerdict(ranked, ranked[0] if ranked else None, tuple(sentences))


def _short(v: float, lo: float, hi: float) -> str:
    """``0.73 [0.69, 0.79]``: two decimals, for a summary that fits a terminal."""
    if v != v:
        return "not defined"
    return f"{v:.2f}" + ("" if lo != lo or hi != hi else f" [{lo:.2f}, {hi:.2f}]")


def agreement_summary(table: pd.DataFrame, *, by: Sequence[str]) -> pd.DataFrame:
    """One row per group and judge: the humans' agreement with each other, the judge's with each human, the
    gap between them (the flagged measure, with its mark) and n; a group without judges gets the humans'
    row only. What ``evalcore agreement`` prints by default (``--all`` prints every measure).

    Columns: ``*by, judge, humans agree, judge agrees, gap, flag, n`` (estimates to 2 decimals with 95%
    intervals; ``flag`` is ``LOW`` when flagged, ``HIGH`` when significantly better, which is not a flag).
    """
    by = list(by)
    key = lambda r: tuple(r[c] for c in by)  # noqa: E731 - a row's group
    humans = {key(r): r for _, r in table[table["judge"].isna() & (table["measure"] == "percent_agreement")].iterrows()}
    judged = table[table["judge"].notna()]
    pair = {(key(r), r["judge"]): r for _, r in judged[judged["measure"] == "pairwise_agreement"].iterrows()}
    rows = []
    for _, g in judged[judged["measure"] == "pairwise_agreement_gap"].iterrows():
        h, j = humans.get(key(g)), pair.get((key(g), g["judge"]))
        flag = "HIGH" if bool(g.get("opposite", False)) else "LOW" if bool(g["flagged"]) else ""
        rows.append({**{c: g[c] for c in by}, "judge": str(g["judge"]),
                     "humans agree": "" if h is None else _short(h["estimate"], h["ci_low"], h["ci_high"]),
                     "judge agrees": "" if j is None else _short(j["estimate"], j["ci_low"], j["ci_high"]),
                     "gap": _short(g["estimate"], g["ci_low"], g["ci_high"]), "flag": flag, "n": int(g["n"])})
    seen = {tuple(r[c] for c in by) for r in rows}
    for k, h in humans.items():
        if k not in seen:
            rows.append({**dict(zip(by, k)), "judge": HUMANS, "humans agree": _short(h["estimate"], h["ci_low"],
                                                                                     h["ci_high"]),
                         "judge agrees": "", "gap": "", "flag": "", "n": int(h["n"])})
    cols = [*by, "judge", "humans agree", "judge agrees", "gap", "flag", "n"]
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values([*by, "judge"], kind="stable").reset_index(drop=True) if len(out) else out


def for_sources(dist: pd.DataFrame, sources: Iterable[str | None]) -> pd.DataFrame:
    """The rows of a distribution table whose ``source`` is one of ``sources`` (e.g. humans and one judge)."""
    return dist[dist["source"].isin(list(sources))]


def _cells(rows: pd.DataFrame) -> list[str]:
    return [("n/a" if e != e else f"{e:.3f} {fmt_interval(lo, hi)}") for e, lo, hi in
            zip(rows["estimate"], rows["ci_low"], rows["ci_high"])]


def leaderboard_view(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as the page prints it: rank, judge, estimate [interval], difference to the best [interval]."""
    diff = [("" if d != d else f"{d:+.3f} {fmt_interval(lo, hi, signed=True)}") for d, lo, hi in
            zip(board["diff_to_best"], board["diff_ci_low"], board["diff_ci_high"])]
    # n says what it counts: the inputs resampled (system and input levels with input_id) or the items
    unit = str(board["n_unit"].iloc[0]) if "n_unit" in board and len(board) else "items"
    out = board[["rank", "judge"]].assign(estimate=_cells(board), minus_best=diff, n=board["n"],
                                          worse=board["worse_than_best"].map({True: "worse than the best",
                                                                              False: ""}))
    if "n_items" in board and unit != "items":
        out.insert(list(out.columns).index("n") + 1, "items", board["n_items"])
    return out.rename(columns={"minus_best": "minus the best (paired)", "worse": "verdict", "n": f"n ({unit})"})


def meta_view(meta: pd.DataFrame) -> pd.DataFrame:
    """System- and input-level correlations, one row per criterion (and group) and judge, a column per measure."""
    keys = [c for c in meta.columns if c not in ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_systems",
                                                  "test", "p_value", "q_value", "flagged", "opposite", "note")]
    wide = meta.assign(cell=_cells(meta)).pivot_table(index=[*keys, "judge"], columns="measure", values="cell",
                                                      aggfunc="first", sort=False)
    counts = meta.groupby([*keys, "judge"], sort=False)[["n", "n_systems"]].first()
    return wide.join(counts).reset_index().rename(columns={"n": "inputs", "n_systems": "systems"})


def pair_matrix(pairs: pd.DataFrame, *, measure: str, group: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One group's rater-pair ``measure`` as a matrix (rows: annotators then judges; columns: annotators), and n.

    Annotator pairs are symmetric: each is written in both cells.
    """
    rows = pairs[pairs["measure"] == measure]
    for col, value in group.items():
        rows = rows[rows[col] == value]
    mirror = rows[rows["kind"] == "human-human"].rename(columns={"rater_a": "rater_b", "rater_b": "rater_a"})
    both = pd.concat([rows, mirror], ignore_index=True)
    humans = sorted(set(rows.loc[rows["kind"] == "human-human", "rater_a"]) |
                    set(rows.loc[rows["kind"] == "human-human", "rater_b"]) |
                    set(rows.loc[rows["kind"] == "judge-human", "rater_b"]))
    judges = sorted(set(rows.loc[rows["kind"] == "judge-human", "rater_a"]))
    order = humans + [j for j in judges if j not in humans]
    est = both.pivot_table(index="rater_a", columns="rater_b", values="estimate", aggfunc="first")
    n = both.pivot_table(index="rater_a", columns="rater_b", values="n", aggfunc="first")
    return est.reindex(index=order, columns=humans), n.reindex(index=order, columns=humans)


#: Readable names of the correlation measures.
MEASURE_LABELS = {"kendall_tau": "Kendall's tau (items)", "spearman_rho": "Spearman's rho (items)",
                  "kendall_tau_system": "Kendall's tau (systems)", "spearman_rho_system": "Spearman's rho (systems)",
                  "pearson_r_system": "Pearson's r (systems)", "kendall_tau_input": "Kendall's tau (per input)",
                  "spearman_rho_input": "Spearman's rho (per input)", "pearson_r_input": "Pearson's r (per input)"}


#: Readable names of the rater-pair measures.
PAIR_MEASURES = {"cohen_kappa": "Cohen's kappa", "cohen_kappa_linear": "Cohen's kappa (linear weights)",
                 "cohen_kappa_quadratic": "Cohen's kappa (quadratic weights)", "percent_agreement": "percent agreement"}


def measure_options(table: pd.DataFrame, measures: Sequence[str], *, judge: str | None) -> list[str]:
    """The ``measures`` the table has rows of for ``judge`` (None: the humans), in that order: a measure not
    computed (one that needs an order, on nominal criteria) is not offered. All of them when the table has none."""
    rows = table[table["judge"].isna()] if judge is None else table[table["judge"] == judge]
    present = set(rows["measure"])
    return [m for m in measures if m in present] or list(measures)


#: A criterion with at most this many categories gets a confusion matrix on the page (a nominal one always).
MAX_CONFUSION_CATEGORIES = 10


def confusion_criteria(scales: dict[str, str], categories: dict[str, int]) -> list[str]:
    """The criteria the page draws a confusion matrix for: the nominal ones, then those with few categories.

    >>> confusion_criteria({"stance": "nominal"}, {"fluency": 5, "stance": 3, "length": 40})
    ['stance', 'fluency']
    """
    nominal = [c for c in categories if scales.get(c) == "nominal"]
    return nominal + [c for c, k in categories.items() if c not in nominal and k <= MAX_CONFUSION_CATEGORIES]


#: What the confusion heatmap shows, in one sentence.
CONFUSION_CAPTION = ("Each row is a label the humans gave by strict majority (more than half of a unit's annotators), "
                     "each column the label the judge gave on the same units: a cell prints the share of the row's "
                     "units and their count, so the diagonal is how often the judge finds each label, and the "
                     "percent agreement, Cohen's kappa and weighted F1 above summarise this matrix.")
