"""The landing page: the saved datasets, what each table unlocks and where it is shown, and what the data holds at
a glance.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

__all__ = ["saved_datasets", "ANALYSIS_PAGES", "unlocked", "unlocked_pages", "raters_with_role", "coverage"]


def saved_datasets(items: Sequence) -> pd.DataFrame:
    """One row per stored dataset (:class:`evalcore.data.store.DatasetInfo`), as the saved list shows it."""
    from ...data.store import READY

    return pd.DataFrame([{
        "name": d.name,
        "tables": ", ".join(f"{k}: {n:,} rows" for k, n in d.tables.items()) or "(not imported yet)",
        "status": "ready" if d.status == READY else "needs column mapping",
        "source": d.source, "updated (UTC)": d.updated.strftime("%Y-%m-%d %H:%M"),
    } for d in items])


#: Where each analysis of :func:`evalcore.data.summary.unlocks` is shown: its dashboard page(s) and CLI command.
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
    "superficial": (("Superficial quality",), "evalcore superficial"),
    "superficial_ratings": (("Superficial quality",), "evalcore superficial"),
    "alt_test": (("Alt-Test",), "evalcore alt-test"),
    "position_bias": (("Position bias",), "evalcore position"),
    "calibraeval": (("Position bias",), "evalcore position"),
    "meta_system": (("Agreement",), "evalcore agreement"),
    "meta_input": (("Agreement",), "evalcore agreement"),
    "leaderboard": (("Agreement",), "evalcore agreement --leaderboard"),
    "true_scores": (("True scores",), "evalcore ppi"),
    "true_win_rates": (("True scores",), "evalcore ppi"),
    "systems_leaderboard": (("Leaderboard",), "evalcore leaderboard"),
}


def _where(analysis: str) -> str:
    pages, command = ANALYSIS_PAGES.get(analysis, ((), ""))
    return " · ".join([*(f"{p} page" for p in pages), *([f"CLI: {command}"] if command else [])])


def unlocked(analyses: pd.DataFrame, table: str) -> pd.DataFrame:
    """The analyses of one table (:func:`evalcore.data.summary.unlocks`): available, title, where it is shown
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


def coverage(frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Judgments per group and rater kind (``rater_kind``), grouped by the first of language, subset, task and
    criterion the table has: what the data holds at a glance. Returns the counts and the grouping column.

    >>> frame = pd.DataFrame({"language": ["en", "en", "sw"], "rater_kind": ["human", "judge", "human"]})
    >>> coverage(frame)[0].to_dict("records")
    [{'language': 'en', 'rater_kind': 'human', 'judgments': 1}, {'language': 'en', 'rater_kind': 'judge', 'judgments': 1}, {'language': 'sw', 'rater_kind': 'human', 'judgments': 1}]
    """
    col = next((c for c in ("language", "subset", "task", "criterion") if c in frame.columns), None)
    keys = [c for c in (col, "rater_kind") if c is not None and c in frame.columns]
    if not keys:
        return pd.DataFrame(columns=["judgments"]), None
    counts = frame.groupby(keys, dropna=False, observed=True).size().rename("judgments").reset_index()
    return counts.astype({c: str for c in keys}), col
