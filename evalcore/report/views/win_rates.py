"""The Win rates page: the pairs to choose from, the counts beside the estimates, the judges' accuracies per
method, the warnings, and the pair the page opens on.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from ...pairwise.winrate import judges_table
from ..display import METHOD_LABEL, fmt_interval, fmt_number

__all__ = [
    "pair_labels", "pair_judges", "labelled_pairs", "systems", "verdict_count", "labels_used",
    "mode_minus_humans", "judges_by_method", "judges_by_method_view", "with_warnings", "warning_lines",
    "curve_pairs", "largest_calibration",
]


def pair_labels(pairs: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``"a vs b"`` -> ``(a, b)`` for every pair of :func:`evalcore.pairwise.pairs.pairs`, in its order."""
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
    """The judge verdicts of a :class:`evalcore.pairwise.pairs.PairData` (items x judges with a verdict)."""
    return int((pair.verdicts >= 0).sum())


def labels_used(pair, ratio: float) -> int:
    """How many of the pair's human labels a prior data ratio uses (as
    :func:`evalcore.pairwise.pairs.label_mask` counts them)."""
    return int(round(float(ratio) * pair.n_human))


def mode_minus_humans(result, pair) -> float | None:
    """A win rate's posterior mode minus the humans' win rate; None when the pair has no human label."""
    if not math.isfinite(pair.p_human):
        return None
    return result.p_mode - pair.p_human


def judges_by_method(results: Sequence) -> pd.DataFrame:
    """Each method's judge accuracies (:func:`evalcore.pairwise.winrate.judges_table`), the methods by their
    display names: the table the page downloads."""
    acc = judges_table(results)
    acc["method"] = acc["method"].map(METHOD_LABEL)
    return acc


def judges_by_method_view(acc: pd.DataFrame, *, a: str, b: str) -> pd.DataFrame:
    """:func:`judges_by_method` as the page prints it, narrow enough for the screen: each accuracy with its
    interval in one cell, the label counts as "agreed of labels"."""
    def cell(m, lo, hi):
        return [f"{fmt_number(v)} {fmt_interval(l, h)}" for v, l, h in zip(acc[m], acc[lo], acc[hi])]

    return pd.DataFrame({
        "method": acc["method"], "judge": acc["judge"], "k": [fmt_number(v) for v in acc["k"]],
        "verdicts": acc["n_verdicts"].astype(int),
        f"agreed when {a} is better": [f"{int(s)} of {int(n)}" for s, n in zip(acc["s0"], acc["n0"])],
        f"agreed when {b} is better": [f"{int(s)} of {int(n)}" for s, n in zip(acc["s1"], acc["n1"])],
        "q0": cell("q0_mean", "q0_low", "q0_high"), "q1": cell("q1_mean", "q1_low", "q1_high"),
        "judge's own p (mode)": cell("p_mode", "p_low", "p_high")})


def with_warnings(frame: pd.DataFrame) -> int:
    """How many estimates of :func:`evalcore.pairwise.winrate.results_frame` came with a warning."""
    return int((frame["warnings"] != "").sum())


def warning_lines(frame: pd.DataFrame, *, limit: int = 8) -> list[str]:
    """The warnings of :func:`evalcore.pairwise.winrate.results_frame`, one line per estimate ("a vs b (method):
    warning"), at most ``limit`` and a line counting the rest: read in full where the table's last column is
    cut off by the screen."""
    rows = frame[frame["warnings"] != ""]
    lines = [f"{r.system_a} vs {r.system_b} ({METHOD_LABEL.get(r.method, r.method)}): {r.warnings}"
             for r in rows.head(limit).itertuples()]
    return lines + ([f"... and {len(rows) - limit} more (the 'warnings' column of the download)"]
                    if len(rows) > limit else [])


def curve_pairs(curve: pd.DataFrame) -> int:
    """Over how many pairs an error curve (:func:`evalcore.pairwise.winrate.error_curve`) was averaged."""
    return int(curve["n_pairs"].max())


def largest_calibration(results: Sequence, lookup: dict[str, tuple[str, str]]) -> str | None:
    """The pair (its label in ``lookup``) whose calibrated win rate moves furthest from the raw one: where
    calibration matters most, so what the Win rates page opens on. ``results`` are WinRate records."""
    by_pair = {frozenset(v): k for k, v in lookup.items()}
    best, size = None, -1.0
    for r in results:
        effect = abs(r.p_mode - r.k_observed)
        label = by_pair.get(frozenset((r.system_a, r.system_b)))
        if label is not None and effect == effect and effect > size:
            best, size = label, effect
    return best
