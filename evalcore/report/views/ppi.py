"""The "true scores" page: prediction-powered estimates shown per cell, the judge's worth in human labels, the
Bayesian win rates beside them, the budget and the what-if curve.

Pure functions of the tables of :mod:`evalcore.pointwise.ppi` and :mod:`evalcore.pairwise.ppi` (no Streamlit, no
statistics of their own): the page calls them so that it holds no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..display import PPI_METHOD_NAMES, fmt_interval

__all__ = ["key_columns", "cell_labels", "criteria", "forest_rows", "with_bayes", "shown_estimates",
           "worth_sentences", "cells", "what_if_cell", "what_if_sentence", "fully_labelled", "shown_budget",
           "shown_allocation"]

_FIRST = ("stratified", "judge", "measure")


def key_columns(table: pd.DataFrame) -> list[str]:
    """The columns that name a cell: what comes before ``stratified`` or ``judge`` (criterion, outcome and the
    ``by`` columns, or the pair and the ``by`` columns)."""
    cols = list(table.columns)
    end = next((i for i, c in enumerate(cols) if c in _FIRST), len(cols))
    return cols[:end]


def cell_labels(table: pd.DataFrame) -> pd.Series:
    """One readable label per row: ``"LA · Bengali"``, ``"atlas-7b vs dune-8x7b"``, ``"LA ≥ 4 · all (stratified)"``."""
    keys = key_columns(table)
    pair = "system_a" in keys
    out = []
    for _, row in table[keys + (["stratified"] if "stratified" in table else [])].iterrows():
        parts = []
        if pair:
            parts.append(f"{row['system_a']} vs {row['system_b']}")
        else:
            head = str(row["criterion"])
            if "outcome" in keys and pd.notna(row["outcome"]) and str(row["outcome"]):
                head += f" {row['outcome']}" if str(row["outcome"]).startswith((">", "<")) else f" = {row['outcome']}"
            parts.append(head)
        rest = [str(row[c]) for c in keys if c not in ("criterion", "outcome", "system_a", "system_b")
                and pd.notna(row[c])]
        if row.get("stratified", False):
            rest = ["all strata (stratified)"]
        parts += rest
        out.append(" · ".join(parts))
    return pd.Series(out, index=table.index, dtype=object)


def cells(table: pd.DataFrame) -> list[str]:
    """The cells' labels in the table's order (one per criterion/outcome/group, or pair/group)."""
    return list(dict.fromkeys(cell_labels(table)))


def criteria(table: pd.DataFrame) -> list[str]:
    """The criteria of a ratings estimates table, in its order (none for comparisons)."""
    return list(dict.fromkeys(table["criterion"].astype(str))) if "criterion" in table else []


def forest_rows(table: pd.DataFrame, *, judge: str, criterion: str | None = None) -> pd.DataFrame:
    """The rows one forest plot draws: per cell (of one ``criterion`` if given), the humans-only estimate and this
    judge's judge-only, (plain PPI) and PPI++ estimates, as ``label, method, estimate, ci_low, ci_high, n_labeled,
    effective_labels``."""
    keep = table["judge"].isna() | (table["judge"] == judge)
    if criterion is not None:
        keep &= table["criterion"].astype(str) == criterion
    rows = table[keep].assign(label=cell_labels(table[keep]))
    return rows[["label", "method", "estimate", "ci_low", "ci_high", "n_labeled", "effective_labels"]] \
        .reset_index(drop=True)


def with_bayes(rows: pd.DataFrame, results: Sequence, table: pd.DataFrame) -> pd.DataFrame:
    """The forest ``rows`` with Gao et al.'s calibrated win rates (``WinRate`` results of one judge) added on the
    cells of ``table`` (a :func:`evalcore.pairwise.ppi.ppi_win_rates` table without ``by``): a result oriented
    the other way round is flipped (p becomes 1 - p). The estimate is the posterior mode, as the Win rates page
    shows it."""
    labels = table.drop_duplicates(["system_a", "system_b"])
    out = []
    for r in results:
        for _, cell in labels.iterrows():
            same = (cell["system_a"], cell["system_b"]) == (r.system_a, r.system_b)
            if same or (cell["system_a"], cell["system_b"]) == (r.system_b, r.system_a):
                est, lo, hi = (r.p_mode, r.ci_low, r.ci_high) if same else (1 - r.p_mode, 1 - r.ci_high,
                                                                              1 - r.ci_low)
                out.append({"label": f"{cell['system_a']} vs {cell['system_b']}", "method": r.method,
                             "estimate": est, "ci_low": lo, "ci_high": hi, "n_labeled": r.n_human_labelled,
                             "effective_labels": np.nan})
    return pd.concat([rows, pd.DataFrame(out, columns=rows.columns)], ignore_index=True) if out else rows


def shown_estimates(table: pd.DataFrame) -> pd.DataFrame:
    """The estimates as the page's table shows them: cell, judge (humans named), method, estimate with its
    interval, labelled and unlabelled items, lambda, effective labels and the note."""
    out = pd.DataFrame({
        "cell": cell_labels(table), "judge": table["judge"].fillna("humans"),
        "method": table["method"].map(PPI_METHOD_NAMES).fillna(table["method"]),
        "estimate": table["estimate"].round(3),
        "95% interval": [fmt_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "labelled": table["n_labeled"], "unlabelled": table["n_unlabeled"], "lambda": table["lambda"].round(3),
        "worth (human labels)": table["effective_labels"].round(1), "note": table["note"].fillna(""),
    })
    return out.reset_index(drop=True)


def worth_sentences(table: pd.DataFrame) -> list[str]:
    """One plain-text sentence per judge: what its PPI++ estimates are worth in human labels, over the cells that
    have unlabelled items and an interval (the median ratio of effective to actual labels, and its range). When
    every item has human labels, one sentence saying so (the what-if curve then shows the judge's worth)."""
    rows = table[(table["method"] == "ppi++") & ~table["stratified"].astype(bool) & table["ci_low"].notna()
                 & (table["n_labeled"] > 0)]
    partial = rows[rows["n_unlabeled"] > 0]
    if partial.empty:
        return ["Every item here has human labels, so each estimate is the humans' own. To see what a judge would "
                "be worth with fewer labels, draw the what-if curve at the bottom of the page."] if len(rows) else []
    out = []
    for judge, g in partial.groupby("judge", sort=False):
        ratio = (g["effective_labels"] / g["n_labeled"]).to_numpy(dtype=float)
        med, lo, hi = float(np.median(ratio)), float(ratio.min()), float(ratio.max())
        best = g.iloc[int(np.argmax(ratio))]
        spread = f" (from {lo:.2f} to {hi:.2f} across {len(ratio)} cells)" if len(ratio) > 1 else ""
        out.append(f"{judge}: with its labels, each human label counts as {med:.2f}{spread}. At best, on "
                   f"{cell_labels(best.to_frame().T).iloc[0]}, {int(best['n_labeled'])} human labels give the "
                   f"precision of {best['effective_labels']:.0f}.")
    return out


def what_if_cell(curve: pd.DataFrame, *, label: str) -> pd.DataFrame:
    """The what-if rows of one cell (by its label), sorted by share."""
    picked = curve[cell_labels(curve) == label]
    return picked.sort_values("share").reset_index(drop=True)


def fully_labelled(table: pd.DataFrame) -> bool:
    """Whether every cell of an estimates table has human labels on all its items (no unlabelled item)."""
    cells = table[~table["stratified"].astype(bool)] if "stratified" in table else table
    return bool(len(cells)) and bool((cells["n_unlabeled"] == 0).all())


def what_if_sentence(cell: pd.DataFrame, *, share: float) -> str:
    """What one share of the what-if curve says, in a sentence: the labels, both widths, how often each held the
    full-data value."""
    row = cell.loc[(cell["share"] - share).abs().idxmin()]
    return (f"With {share:.0%} of the items labelled ({int(row['n_labeled']):,} human labels), the PPI++ interval is "
            f"{row['width_ppi']:.3f} wide on average against {row['width_human_only']:.3f} for humans only, and held "
            f"the value from all labels ({row['full_estimate']:.3f}) in {row['covered_ppi']:.0%} of "
            f"{int(row['repeats'])} random subsets (humans only: {row['covered_human_only']:.0%}).")


def shown_budget(budget: pd.DataFrame) -> pd.DataFrame:
    """The budget table as shown: cell, judge, items, labels now and the half-widths, the labels needed with
    humans only and with PPI++, how many more to buy, and (with costs) the cheapest mix."""
    out = pd.DataFrame({
        "cell": cell_labels(budget), "judge": budget["judge"], "items": budget["n_items"],
        "labelled now": budget["n_labeled"], "half-width now (humans only)": budget["half_width_human_only"].round(3),
        "half-width now (PPI++)": budget["half_width_ppi"].round(3),
        "labels needed (humans only)": budget["labels_human_only"],
        "labels needed (PPI++)": budget["labels_ppi"], "more to buy (PPI++)": budget["more_labels_ppi"],
    })
    if budget["cheapest_cost"].notna().any():
        out["cheapest: human labels"] = budget["cheapest_labeled"]
        out["cheapest: judge labels"] = budget["cheapest_unlabeled"]
        out["cheapest: cost"] = budget["cheapest_cost"].round(2)
    out["note"] = budget["note"].fillna("")
    return out.reset_index(drop=True)


def shown_allocation(allocation: pd.DataFrame) -> pd.DataFrame:
    """The allocation of the next labels as shown: the stratum (or pair), its items, labelled now, its weight and
    residual spread, and the new labels it gets."""
    names = {"n_items": "items", "n_labeled": "labelled now", "n_unlabeled": "unlabelled", "weight": "share of items",
             "residual_sd": "residual spread", "spread": "residual spread", "new_labels": "new labels"}
    out = allocation.rename(columns=names)
    for col in ("share of items", "residual spread"):
        if col in out:
            out[col] = out[col].astype(float).round(3)
    return out
