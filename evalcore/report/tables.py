"""What a page shows, as tidy tables: the selections, filters and counts the dashboard needs.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code. Each is named after what the page shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import pandas as pd

from ..columns import JUDGE

#: The name the humans' rows go by in what a page shows (their ``judge`` is missing in the results).
HUMANS = "(humans)"

# --------------------------------------------------------------------------- shared


def levels(frame: pd.DataFrame, column: str) -> list[str]:
    """The distinct non-missing values of ``column``, as text, sorted (e.g. the options of a filter)."""
    return sorted(map(str, frame[column].dropna().unique()))


def with_humans_named(table: pd.DataFrame, *, label: str = HUMANS) -> pd.DataFrame:
    """``table`` with the humans' rows (``judge`` missing) named ``label`` (for display and download)."""
    return table.assign(judge=table["judge"].fillna(label))


# --------------------------------------------------------------------------- agreement


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
    """Count the flagged rows of an agreement table (:func:`evalcore.pointwise.agreement.agreement`)
    by the first grouping column, or list their judges when there is no grouping."""
    flagged = table[table["flagged"]]
    if by:
        counts = flagged[by[0]].astype(str).value_counts()
        return FlaggedCells(len(flagged), by[0], tuple((str(k), int(v)) for k, v in counts.items()))
    return FlaggedCells(len(flagged), None, tuple((str(j), 1) for j in flagged["judge"].astype(str)))


def for_sources(dist: pd.DataFrame, sources: Iterable[str | None]) -> pd.DataFrame:
    """The rows of a distribution table whose ``source`` is one of ``sources`` (e.g. humans and one judge)."""
    return dist[dist["source"].isin(list(sources))]


# --------------------------------------------------------------------------- bias


def judge_names(ratings: pd.DataFrame) -> list:
    """The judges of a ratings table, sorted."""
    return sorted(ratings.loc[ratings["rater_kind"] == JUDGE, "rater"].unique())


def first_judges(judges: Sequence[str], *, all_up_to: int = 6, first: int = 4) -> list:
    """The judges a page selects at first: all of them when there are at most ``all_up_to``, else the
    first ``first`` (many judges crowd every chart; the user adds more)."""
    return list(judges) if len(judges) <= all_up_to else list(judges[:first])


def score_levels(ratings: pd.DataFrame, criterion: str) -> list:
    """The distinct scores given on ``criterion``, sorted."""
    return sorted(ratings.loc[ratings["criterion"] == criterion, "score"].unique())


def thresholds(ratings: pd.DataFrame, criterion: str) -> list:
    """The thresholds a conditional distribution can split ``criterion`` at: every score but the highest
    (above vs at or below), or the only score there is."""
    scores = score_levels(ratings, criterion)
    return scores[:-1] or scores


def criterion_view(results: pd.DataFrame, criterion: str, *, grouped: bool) -> pd.DataFrame:
    """The bias results a grouped view shows for one criterion (with the rows that have none); all of
    them when the view is not grouped (its rows are the criteria)."""
    if not grouped:
        return results
    return results[(results["criterion"].astype(str) == criterion) | results["criterion"].isna()]


# --------------------------------------------------------------------------- win rates


def pair_labels(pairs: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``"a vs b"`` -> ``(a, b)`` for every pair of :func:`evalcore.pairwise.winrate.pairs`, in its order."""
    return {f"{a} vs {b}": (a, b) for a, b in zip(pairs["system_a"], pairs["system_b"])}


def _row(pairs: pd.DataFrame, label: str) -> pd.Series:
    return pairs.iloc[list(pair_labels(pairs)).index(label)]


def pair_judges(pairs: pd.DataFrame, label: str) -> list[str]:
    """The judges of the pair named ``label`` (``"a vs b"``)."""
    return [j.strip() for j in str(_row(pairs, label)["judges"]).split(",") if j.strip()]


def labelled_pairs(pairs: pd.DataFrame) -> list[str]:
    """The names (``"a vs b"``) of the pairs with human rows, in order."""
    return [name for name, n in zip(pair_labels(pairs), pairs["n_human_rows"]) if n > 0]


def systems(pairs: pd.DataFrame) -> list[str]:
    """Every system in the pairs, sorted."""
    return sorted(set(pairs["system_a"]) | set(pairs["system_b"]))


def verdict_count(pair) -> int:
    """The judge verdicts of a :class:`evalcore.pairwise.winrate.PairData` (items x judges with a verdict)."""
    return int((pair.verdicts >= 0).sum())


def labels_used(pair, ratio: float) -> int:
    """How many of the pair's human labels a prior data ratio uses (as
    :func:`evalcore.pairwise.winrate.label_mask` counts them)."""
    return int(round(float(ratio) * pair.n_human))


def mode_minus_humans(result, pair) -> float | None:
    """A win rate's posterior mode minus the humans' win rate; None when the pair has no human label."""
    if not math.isfinite(pair.p_human):
        return None
    return result.p_mode - pair.p_human


def judge_accuracy(results: Sequence) -> pd.DataFrame:
    """:func:`evalcore.pairwise.winrate.judges_table` with the methods by their display names."""
    from ..pairwise.winrate import judges_table
    from .plots import METHOD_LABEL  # plotly loads only on pages that draw

    acc = judges_table(results)
    acc["method"] = acc["method"].map(METHOD_LABEL)
    return acc


def with_warnings(frame: pd.DataFrame) -> int:
    """How many estimates of :func:`evalcore.pairwise.winrate.results_frame` came with a warning."""
    return int((frame["warnings"] != "").sum())


def curve_pairs(curve: pd.DataFrame) -> int:
    """Over how many pairs an error curve (:func:`evalcore.pairwise.winrate.error_curve`) was averaged."""
    return int(curve["n_pairs"].max())


# --------------------------------------------------------------------------- landing page


def saved_datasets(items: Sequence) -> pd.DataFrame:
    """One row per stored dataset (:class:`evalcore.data.store.DatasetInfo`), as the saved list shows it."""
    from ..data.store import READY

    return pd.DataFrame([{
        "name": d.name,
        "tables": ", ".join(f"{k}: {n:,} rows" for k, n in d.tables.items()) or "(not imported yet)",
        "status": "ready" if d.status == READY else "needs column mapping",
        "source": d.source, "updated (UTC)": d.updated.strftime("%Y-%m-%d %H:%M"),
    } for d in items])


#: Where each analysis of :func:`evalcore.data.schema.analyses` is shown: its dashboard page(s) and CLI command.
ANALYSIS_PAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "agreement_humans": (("Agreement",), "evalcore agreement"),
    "agreement_judge": (("Agreement",), "evalcore agreement"),
    "class_distribution": (("Agreement",), ""),
    "by_language": (("Agreement", "Bias"), "evalcore agreement, evalcore bias"),
    "score_distribution": (("Bias",), "evalcore bias"),
    "familiarity": (("Bias",), "evalcore bias"),
    "anchoring": (("Bias",), "evalcore bias"),
    "anchoring_position": (("Bias",), "evalcore bias"),
    "self_consistency": (("Bias",), "evalcore bias"),
    "win_rate": (("Win rates",), "evalcore winrate"),
}


def _where(analysis: str) -> str:
    pages, command = ANALYSIS_PAGES.get(analysis, ((), ""))
    return " · ".join([*(f"{p} page" for p in pages), *([f"CLI: {command}"] if command else [])])


def unlocked(analyses: pd.DataFrame, table: str) -> pd.DataFrame:
    """The analyses of one table (:func:`evalcore.data.schema.analyses`): available, title, where it is shown
    (page and command), what is missing."""
    shown = analyses[analyses["table"] == table]
    return shown.assign(where=[_where(a) for a in shown["analysis"]])[["available", "title", "where", "missing"]]


def unlocked_pages(analyses: pd.DataFrame, table: str) -> list[str]:
    """The pages (in :data:`ANALYSIS_PAGES` order) that show an analysis available on this table."""
    ready = set(analyses.loc[(analyses["table"] == table) & analyses["available"], "analysis"])
    pages = [p for name, (ps, _) in ANALYSIS_PAGES.items() if name in ready for p in ps]
    return list(dict.fromkeys(pages))


def raters_with_role(roles: pd.DataFrame, role: str) -> list[str]:
    """The raters of a role table (``rater``, ``role``, ...; :func:`evalcore.data.ingest.rater_roles`) with ``role``."""
    return [str(r) for r in roles.loc[roles["role"] == role, "rater"]]
