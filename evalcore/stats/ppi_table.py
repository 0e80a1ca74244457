"""Prediction-powered estimates as tables: from one answer per item and rater side to the rows every view shows.

Ratings (:mod:`evalcore.pointwise.ppi`) and comparisons (:mod:`evalcore.pairwise.ppi`) both reduce to an **items
frame**: one row per cell, judge and item, with

``<keys>``
    The columns before ``judge``: what one estimate is about (a criterion and outcome, or a system pair), then
    the ``by`` groups (strata).
``judge``, ``measure``
    The judge, and the estimand's code name (``mean_score``, ``pass_rate``, ``win_rate``).
``item_id``, ``y``, ``yhat``
    The item, the humans' answer Y (NaN: not labelled) and the judge's answer :math:`\\hat Y` (NaN: none).

The functions here turn an items frame into the estimates (:func:`estimate_table`), the label budget
(:func:`budget_table`), the "what if" curve (:func:`what_if_table`), the check that the labelled items look like
the others (:func:`label_check_table`) and the allocation of more labels (:func:`allocation_plan`). The statistics
are :mod:`evalcore.stats.ppi`'s; this module only groups, counts and explains.

An item is **labelled** for a judge when it has both answers, **unlabelled** when it has the judge's only. The
intervals are valid when the labelled items are a random sample of the items (checked, not assumed:
:func:`label_check_table`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from .bootstrap import cell_rng, check_level, root_seed
from .numeric import join_notes
from .ppi import (cheapest_pair, classical_mean, judge_mean, labels_needed, mean_difference_test, neyman_allocation,
                  ppi_mean, ppi_splits, stratified, z_quantile)
from .results import ALPHA, benjamini_hochberg, check_alpha

__all__ = ["ITEM_COLUMNS", "ESTIMATE_COLUMNS", "BUDGET_COLUMNS", "WHAT_IF_COLUMNS", "CHECK_COLUMNS",
           "ALLOCATION_COLUMNS", "MIN_LABELED", "DEFAULT_SHARES", "RANDOM_SAMPLE_NOTE", "LabelPlan", "cell_keys",
           "estimate_table", "budget_table", "what_if_table", "label_check_table", "allocation_plan"]

#: The columns of an items frame after its keys.
ITEM_COLUMNS = ("judge", "measure", "item_id", "y", "yhat")
#: The columns of :func:`estimate_table` after the keys.
ESTIMATE_COLUMNS = ("stratified", "judge", "measure", "method", "estimate", "ci_low", "ci_high", "std_error",
                    "n_labeled", "n_unlabeled", "lambda", "effective_labels", "note")
BUDGET_COLUMNS = ("judge", "measure", "target_half_width", "n_items", "n_labeled", "half_width_human_only",
                  "half_width_ppi", "ppi_corr", "labels_human_only", "labels_ppi", "more_labels_human_only",
                  "more_labels_ppi", "effective_labels", "cheapest_labeled", "cheapest_unlabeled", "cheapest_cost",
                  "note")
WHAT_IF_COLUMNS = ("judge", "measure", "share", "n_labeled", "width_ppi", "width_human_only", "covered_ppi",
                   "covered_human_only", "full_estimate", "full_width_human_only", "matching_share", "repeats", "note")
CHECK_COLUMNS = ("judge", "measure", "n_labeled", "n_unlabeled", "judge_mean_labeled", "judge_mean_unlabeled",
                 "difference", "p_value", "q_value", "warning", "note")
ALLOCATION_COLUMNS = ("n_items", "n_labeled", "n_unlabeled", "weight", "spread", "new_labels", "note")
#: A cell with fewer labelled items has a point estimate and no interval: the normal approximation needs more.
MIN_LABELED = 10
#: The shares of the labels the "what if" curve uses.
DEFAULT_SHARES = tuple(round(0.05 * k, 2) for k in range(1, 21))
#: What every view of these estimates says beside them.
RANDOM_SAMPLE_NOTE = ("the intervals hold when the items with human labels are a random sample of all items; the "
                      "label check tests the judge's answers on labelled against unlabelled items")


def cell_keys(items: pd.DataFrame) -> list[str]:
    """The key columns of an items frame: those before ``judge``."""
    missing = [c for c in ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise DataError("not an items frame (no " + ", ".join(f"'{c}'" for c in missing) + " column)",
                        fix="build it with evalcore.pointwise.ppi.ppi_items or evalcore.pairwise.ppi.ppi_pair_items")
    return list(items.columns[:list(items.columns).index("judge")])


def _check_by(items: pd.DataFrame, by: Sequence[str]) -> list[str]:
    by = [by] if isinstance(by, str) else list(by or ())
    keys = cell_keys(items)
    unknown = [c for c in by if c not in keys]
    if unknown:
        raise DataError(f"cannot combine strata over '{unknown[0]}': it is not a key of the items",
                        fix="build the items with by=[...] naming it")
    return by


def _cells(items: pd.DataFrame, keys: list[str]):
    """(key values, judge, measure, y on labelled, yhat on labelled, yhat on unlabelled, labelled without the
    judge's answer) per cell, in the order the cells first appear."""
    cols = [*keys, "judge", "measure"]
    if not len(items):
        return
    # one sort and numpy slices: a pandas group per cell costs more than the cell's statistics
    code = items.groupby(cols, sort=False, dropna=False).ngroup().to_numpy()
    order = np.argsort(code, kind="stable")
    cuts = np.flatnonzero(np.diff(code[order])) + 1
    starts, ends = np.r_[0, cuts], np.r_[cuts, len(order)]
    y_all, f_all = items["y"].to_numpy(dtype=float)[order], items["yhat"].to_numpy(dtype=float)[order]
    heads = items[cols].iloc[order[starts]].itertuples(index=False, name=None)
    for (*kv, judge, measure), a, b in zip(heads, starts, ends):
        y, f = y_all[a:b], f_all[a:b]
        has_y, has_f = np.isfinite(y), np.isfinite(f)
        yield _norm(tuple(kv)), judge, measure, y[has_y & has_f], f[has_y & has_f], f[~has_y & has_f], \
            int((has_y & ~has_f).sum())


def _norm(kv: tuple) -> tuple:
    """Key values with every missing value as None, so that keys found by different groupings compare equal."""
    return tuple(None if (not isinstance(v, str) and pd.isna(v)) else v for v in kv)


def _check_labels(items: pd.DataFrame) -> None:
    if not np.isfinite(items["y"].to_numpy(dtype=float)).any():
        raise DataError("no item has human labels, so there is nothing to correct the judge with",
                        fix="add human labels (rater_kind 'human') to a random sample of the items; "
                            "prediction-powered estimates need a few hundred, at least 10 per group")


# --------------------------------------------------------------------------- estimates


def _human_rows(items: pd.DataFrame, keys: list[str], level: float, min_labeled: int) -> dict[tuple, dict]:
    """The humans-only row of every cell key (the humans' labels on the key's items, whichever judge)."""
    out = {}
    first = items.drop_duplicates([*keys, "item_id"])
    for kv, g in first.groupby(keys, sort=False, dropna=False):
        kv = _norm(kv if isinstance(kv, tuple) else (kv,))
        y = g["y"].to_numpy(dtype=float)
        lab = y[np.isfinite(y)]
        row = {"judge": None, "measure": g["measure"].iloc[0], "method": "human_only", "n_labeled": len(lab),
               "n_unlabeled": int(len(y) - len(lab)), "lambda": math.nan, "effective_labels": float(len(lab)),
               "_weight": len(y), "_se_h": math.nan}
        if len(lab) == 0:
            row.update(estimate=math.nan, ci_low=math.nan, ci_high=math.nan, std_error=math.nan,
                       note="no item here has human labels")
        else:
            r = classical_mean(lab, level=level)
            row.update(_interval(r, len(lab), min_labeled))
            row["_se_h"] = r.std_error
        out[kv] = row
    return out


def _interval(r, n: int, min_labeled: int) -> dict:
    """An estimate's numbers, without the interval when too few items are labelled."""
    few = n < min_labeled
    note = join_notes(r.note, f"only {n} labelled item{'s' if n != 1 else ''} (fewer than {min_labeled}): no "
                              "interval" if few else "")
    return {"estimate": r.estimate, "ci_low": math.nan if few else r.ci_low, "ci_high": math.nan if few else r.ci_high,
            "std_error": math.nan if few else r.std_error, "note": note}


def _judge_rows(judge, measure, y, f, u, dropped: int, *, plain: bool, level: float, min_labeled: int) -> list[dict]:
    """The judge-only, PPI and PPI++ rows of one cell."""
    n, big_n = len(y), len(u)
    base = {"judge": judge, "measure": measure, "n_labeled": n, "n_unlabeled": big_n, "_weight": n + big_n}
    left = f"{dropped} labelled item{'s' if dropped != 1 else ''} without this judge's answer left out" \
        if dropped else ""
    rows = []
    if n + big_n:
        j = judge_mean(np.concatenate([f, u]), level=level)
        rows.append({**base, "method": "judge_only", "estimate": j.estimate, "ci_low": j.ci_low, "ci_high": j.ci_high,
                     "std_error": j.std_error, "lambda": math.nan, "effective_labels": math.nan, "_se_h": math.nan,
                     "note": "biased: the judge's own mean, not corrected by the human labels"})
    for method, lam in ((("ppi", 1.0),) if plain else ()) + (("ppi++", None),):
        if n == 0:
            rows.append({**base, "method": method, "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                         "std_error": math.nan, "lambda": math.nan, "effective_labels": math.nan, "_se_h": math.nan,
                         "note": join_notes("no item has both the humans' and this judge's answer", left)})
            continue
        r, h = ppi_mean(y, f, u, lam=lam, level=level), classical_mean(y, level=level)
        eff = n * h.std_error ** 2 / r.std_error ** 2 if r.std_error > 0 and n >= min_labeled else math.nan
        row = {**base, "method": method, "lambda": r.lam, "effective_labels": eff, "_se_h": h.std_error,
               **_interval(r, n, min_labeled)}
        row["note"] = join_notes(row["note"], left)
        rows.append(row)
    return rows


def _stratified_rows(rows: pd.DataFrame, keys: list[str], by: list[str], level: float) -> pd.DataFrame:
    """The stratified overall row of every fixed key, judge and method: strata weighted by their items."""
    fixed = [k for k in keys if k not in by]
    out = []
    group = [*fixed, "_judge", "measure", "method"]
    frame = rows.assign(_judge=rows["judge"].astype(object).where(rows["judge"].notna(), ""))
    for kv, g in frame.groupby(group, sort=False, dropna=False):
        kv = dict(zip(group, kv))
        est, se, w = (g[c].to_numpy(dtype=float) for c in ("estimate", "std_error", "_weight"))
        names = [", ".join(map(str, t)) for t in g[by].itertuples(index=False)]
        theta, s, lo, hi = stratified(est, np.nan_to_num(se, nan=0.0), w, level=level)
        notes = [f"stratified over {len(g)} group{'s' if len(g) != 1 else ''} of {', '.join(by)}, each weighted by "
                 "its share of the items"]
        if not np.isfinite(est).all():
            theta = s = lo = hi = math.nan
            notes.append("no estimate in " + ", ".join(n for n, e in zip(names, est) if not np.isfinite(e)))
        elif not np.isfinite(se).all():
            s = lo = hi = math.nan
            notes.append("no interval: too few labelled items in " +
                         ", ".join(n for n, e in zip(names, se) if not np.isfinite(e)))
        eff = math.nan
        if kv["method"].startswith("ppi") and np.isfinite(s) and s > 0:
            _, s_h, _, _ = stratified(est, g["_se_h"].to_numpy(dtype=float), w, level=level)
            eff = float(g["n_labeled"].sum()) * s_h ** 2 / s ** 2
        elif kv["method"] == "human_only":
            eff = float(g["n_labeled"].sum())
        out.append({**{k: kv[k] for k in fixed}, **{b: None for b in by}, "stratified": True,
                    "judge": kv["_judge"] or None, "measure": kv["measure"], "method": kv["method"],
                    "estimate": theta, "ci_low": lo, "ci_high": hi, "std_error": s,
                    "n_labeled": int(g["n_labeled"].sum()), "n_unlabeled": int(g["n_unlabeled"].sum()),
                    "lambda": math.nan, "effective_labels": eff, "note": "; ".join(notes)})
    return pd.DataFrame(out)


def estimate_table(items: pd.DataFrame, *, by: Sequence[str] = (), plain: bool = False, level: float = 0.95,
                   min_labeled: int = MIN_LABELED, alpha: float = ALPHA) -> pd.DataFrame:
    """The humans-only, judge-only and prediction-powered estimates of every cell of an items frame.

    Parameters
    ----------
    items
        An items frame (module docstring).
    by
        Key columns that are strata: with any, each fixed key (criterion, pair) and judge also gets a
        stratified overall row (``stratified`` True, the ``by`` columns None), each stratum weighted by its
        share of the items (:func:`evalcore.stats.ppi.stratified`).
    plain
        Also plain PPI (:math:`\\lambda = 1`, method ``ppi``).
    level
        The confidence level of the intervals.
    min_labeled
        Cells with fewer labelled items get a point estimate and no interval (10: the normal approximation
        needs a few).
    alpha
        The false discovery rate of the label check, whose warnings are added to the notes.

    Returns
    -------
    pandas.DataFrame
        ``<keys>`` then :data:`ESTIMATE_COLUMNS`: per cell the humans-only row (``judge`` None), then per judge
        ``judge_only``, (``ppi``) and ``ppi++``; the stratified rows last.

    Raises
    ------
    DataError
        No item of the frame has human labels.
    """
    level = check_level(level)
    keys, by = cell_keys(items), _check_by(items, by)
    _check_labels(items)
    humans = _human_rows(items, keys, level, min_labeled)
    warned = _warnings(items, alpha)
    rows, seen = [], set()
    for (kv, judge, measure, y, f, u, dropped), warning in zip(_cells(items, keys), warned):
        key = dict(zip(keys, kv))
        if kv not in seen:
            seen.add(kv)
            rows.append({**key, "stratified": False, **humans[kv]})
        for r in _judge_rows(judge, measure, y, f, u, dropped, plain=plain, level=level, min_labeled=min_labeled):
            if r["method"] != "judge_only":
                r["note"] = join_notes(r["note"], warning)
            rows.append({**key, "stratified": False, **r})
    table = pd.DataFrame(rows)
    if by and len(table):
        table = pd.concat([table, _stratified_rows(table, keys, by, level)], ignore_index=True)
    table = table.drop(columns=[c for c in table.columns if c.startswith("_")])
    table = table.reindex(columns=[*keys, *ESTIMATE_COLUMNS])
    for c in [*keys, "judge"]:  # missing key values are None, as in every result table
        if table[c].dtype == object or c == "judge":
            table[c] = table[c].astype(object).where(table[c].notna(), None)
    for c in ("n_labeled", "n_unlabeled"):
        table[c] = table[c].astype(np.int64)
    table["stratified"] = table["stratified"].astype(bool)
    return table


# --------------------------------------------------------------------------- the label check


def label_check_table(items: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Do the labelled items look like the others? Per cell and judge, the judge's mean answer on the labelled
    and on the unlabelled items, Welch's z-test of their difference
    (:func:`evalcore.stats.ppi.mean_difference_test`), Benjamini-Hochberg q-values over the rows, and a
    ``warning`` where q is at most ``alpha``: the labelled items may not be a random sample, and the
    intervals may not hold. A cell whose every item is labelled has nothing to compare.

    Returns
    -------
    pandas.DataFrame
        ``<keys>`` then :data:`CHECK_COLUMNS`.
    """
    alpha = check_alpha(alpha)
    keys = cell_keys(items)
    rows = []
    for kv, judge, measure, y, f, u, _ in _cells(items, keys):
        d, p = mean_difference_test(f, u) if len(f) and len(u) else (math.nan, math.nan)
        note = "every item has human labels: nothing to compare" if not len(u) else \
            "no labelled item" if not len(f) else "fewer than 2 items on one side: not tested" if p != p else ""
        rows.append({**dict(zip(keys, kv)), "judge": judge, "measure": measure, "n_labeled": len(f),
                     "n_unlabeled": len(u), "judge_mean_labeled": float(f.mean()) if len(f) else math.nan,
                     "judge_mean_unlabeled": float(u.mean()) if len(u) else math.nan, "difference": d,
                     "p_value": p, "note": note})
    out = pd.DataFrame(rows, columns=[*keys, *CHECK_COLUMNS])
    out["q_value"] = benjamini_hochberg(out["p_value"].to_numpy(dtype=float)) if len(out) else []
    with np.errstate(invalid="ignore"):
        out["warning"] = (out["q_value"].to_numpy(dtype=float) <= alpha)
    for c in ("n_labeled", "n_unlabeled"):
        out[c] = out[c].astype(np.int64)
    return out


def _warnings(items: pd.DataFrame, alpha: float) -> list[str]:
    """The label check's warning text of every cell and judge, in the order of :func:`_cells` (empty where it
    does not warn)."""
    check = label_check_table(items, alpha=alpha)
    return [f"the judge's mean differs on labelled and unlabelled items ({lab:.3g} vs {unl:.3g}, q = {q:.2g}): "
            "the labelled items may not be a random sample" if warn else ""
            for lab, unl, q, warn in zip(check["judge_mean_labeled"], check["judge_mean_unlabeled"],
                                         check["q_value"], check["warning"])]


# --------------------------------------------------------------------------- how many labels


def budget_table(items: pd.DataFrame, *, half_width: float, level: float = 0.95, cost_label: float | None = None,
                 cost_judge: float | None = None, min_labeled: int = MIN_LABELED) -> pd.DataFrame:
    """How many human labels reach the interval half-width ``half_width``, per cell and judge, from the labels
    there are (:func:`evalcore.stats.ppi.labels_needed`).

    ``labels_human_only`` is :math:`\\lceil (z \\hat\\sigma_Y / W)^2 \\rceil`; ``labels_ppi`` the labels PPI++
    needs on the cell's items (its judged items, labelled or not), as ``ppi_py``'s power analysis gives them;
    ``more_*`` what is still to buy. ``effective_labels`` is the human labels the cell's labels and judged items
    are worth now, :math:`n (n + N) / (n + (1 - \\rho^2) N)`. With both costs (per human label, per judge
    label), ``cheapest_*`` is the cheapest (n, N) for the humans-only labels' precision without an item limit,
    ``ppi_py.ppi_mean_power(Y, Yhat, cost_label, cost_judge, effective_n=labels_human_only)``. Per stratum only:
    the stratified estimate needs at most about as many labels as the pooled items would.

    Returns
    -------
    pandas.DataFrame
        ``<keys>`` then :data:`BUDGET_COLUMNS`.
    """
    level = check_level(level)
    if (cost_label is None) != (cost_judge is None):
        raise DataError("the cheapest plan needs both costs", fix="give the cost of a human label and of a judge label")
    keys = cell_keys(items)
    _check_labels(items)
    rows = []
    for kv, judge, measure, y, f, u, _ in _cells(items, keys):
        rows.append({**dict(zip(keys, kv)), "judge": judge, "measure": measure,
                     **_budget_row(y, f, u, half_width=half_width, level=level, cost_label=cost_label,
                                   cost_judge=cost_judge, min_labeled=min_labeled)})
    out = pd.DataFrame(rows, columns=[*keys, *BUDGET_COLUMNS])
    for c in ("n_items", "n_labeled"):
        out[c] = out[c].astype(np.int64)
    return out


def _budget_row(y, f, u, *, half_width: float, level: float, cost_label, cost_judge, min_labeled: int) -> dict:
    n, big_n = len(y), len(u)
    row = {"target_half_width": float(half_width), "n_items": n + big_n, "n_labeled": n}
    if n < 2:
        return {**row, "note": "fewer than 2 labelled items: the spread cannot be estimated"}
    need = labels_needed(y, f, half_width=half_width, n_items=n + big_n, level=level)
    rho = need.ppi_corr
    r2 = max(rho, 0.0) ** 2 if np.isfinite(rho) else 0.0
    notes = []
    if n < min_labeled:
        notes.append(f"only {n} labelled items: a rough guess")
    if np.isfinite(rho) and rho < 0:
        notes.append("the judge's answers go against the humans': PPI++ gains nothing here (lambda 0)")
    if need.ppi is None:  # then the humans alone need more labels than there are items, too
        notes.append(f"the {n + big_n} items cannot reach this width even all labelled: more items are needed")
    row.update(half_width_human_only=classical_mean(y, level=level).half_width,
               half_width_ppi=ppi_mean(y, f, u, level=level).half_width, ppi_corr=rho,
               labels_human_only=float(need.human_only), labels_ppi=math.nan if need.ppi is None else float(need.ppi),
               more_labels_human_only=float(max(0, need.human_only - n)),
               more_labels_ppi=math.nan if need.ppi is None else float(max(0, need.ppi - n)),
               effective_labels=n * (n + big_n) / (n + (1 - r2) * big_n))
    if cost_label is not None:
        try:
            pair = cheapest_pair(math.sqrt(r2), effective_n=need.human_only, cost_label=float(cost_label),
                                 cost_judge=float(cost_judge), n_max=None if cost_judge > 0 else n + big_n)
            row.update(cheapest_labeled=float(pair.labeled), cheapest_unlabeled=float(pair.unlabeled),
                       cheapest_cost=float(pair.cost))
        except DataError as err:
            notes.append(err.problem)
    row["note"] = join_notes(*notes)
    return row


# --------------------------------------------------------------------------- what if


def what_if_table(items: pd.DataFrame, *, shares: Sequence[float] | None = None, repeats: int = 20,
                  level: float = 0.95, seed: int | np.random.Generator = 0) -> pd.DataFrame:
    """What if only a share of the human labels existed? Per cell and judge, on the items with both answers:
    for each share, ``repeats`` seeded random subsets are treated as labelled and the rest as unlabelled
    (:func:`evalcore.stats.ppi.ppi_splits`).

    Within a repeat the subsets are nested (a larger share adds labels). ``width_*`` is the mean interval
    width (``ci_high - ci_low``) over the repeats, ``covered_*`` the share of repeats whose interval holds
    ``full_estimate``, the humans' mean with every label. ``matching_share`` is the smallest share whose
    PPI++ width is at most ``full_width_human_only``, the humans-only width with every label: the share of
    the labels PPI++ needs to match them.

    Returns
    -------
    pandas.DataFrame
        ``<keys>`` then :data:`WHAT_IF_COLUMNS`, one row per cell, judge and share.
    """
    level = check_level(level)
    shares = np.asarray(DEFAULT_SHARES if shares is None else shares, dtype=float)
    if not len(shares) or (shares <= 0).any() or (shares > 1).any():
        raise DataError("the shares of labels must be above 0 and at most 1", fix="use e.g. shares=[0.1, 0.2, 0.5, 1]")
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise DataError(f"repeats must be a whole number, 1 or more, not {repeats!r}", fix="use e.g. 20")
    root, keys = root_seed(seed), cell_keys(items)
    _check_labels(items)
    rows = []
    for kv, judge, measure, y, f, u, _ in _cells(items, keys):
        base = {**dict(zip(keys, kv)), "judge": judge, "measure": measure, "repeats": int(repeats)}
        rows += _what_if_cell(base, y, f, len(u), shares, repeats, level, cell_rng(root, (*kv, judge)))
    out = pd.DataFrame(rows, columns=[*keys, *WHAT_IF_COLUMNS])
    out["n_labeled"] = out["n_labeled"].astype(np.int64)
    return out


#: Items x subsets the "what if" curve computes in one block (the masks and their float copies in memory).
_WHAT_IF_BLOCK = 2_000_000


def _what_if_cell(base: dict, y, f, n_unlabeled: int, shares: np.ndarray, repeats: int, level: float,
                  rng: np.random.Generator) -> list[dict]:
    """The "what if" rows of one cell: every share and repeat through :func:`ppi_splits`, a block of shares at a
    time; row ``k * repeats + r`` of a block is its share k and repeat r."""
    n = len(y)
    full = float(y.mean()) if n else math.nan
    full_width = 2 * z_quantile(level) * float(y.std()) / math.sqrt(n) if n else math.nan
    common = {"full_estimate": full, "full_width_human_only": full_width}
    note = f"the {n} items with both answers; {n_unlabeled} without human labels are not used" if n_unlabeled else ""
    ranks = np.argsort(np.stack([rng.permutation(n) for _ in range(repeats)]), axis=1) if n else None
    m = np.round(shares * n).astype(np.int64)
    stats = {}
    todo = np.flatnonzero(m >= 2)
    step = max(1, _WHAT_IF_BLOCK // max(1, repeats * n))
    for block in (todo[i:i + step] for i in range(0, len(todo), step)):
        s = ppi_splits(y, f, (ranks[None, :, :] < m[block][:, None, None]).reshape(-1, n), level=level)
        shape = (len(block), repeats)
        mean = lambda v: v.reshape(shape).mean(axis=1)  # noqa: E731
        for k, row in enumerate(zip(mean(s.ci_high - s.ci_low), mean(s.human_ci_high - s.human_ci_low),
                                    mean((s.ci_low <= full) & (full <= s.ci_high)),
                                    mean((s.human_ci_low <= full) & (full <= s.human_ci_high)))):
            stats[int(block[k])] = row
    cell = []
    for i, (share, mk) in enumerate(zip(shares, m)):
        row = {**base, "share": float(share), "n_labeled": int(mk), **common}
        if i not in stats:
            cell.append({**row, "note": join_notes("fewer than 2 labelled items: no interval", note)})
            continue
        w, hw, cov, hcov = stats[i]
        cell.append({**row, "width_ppi": float(w), "width_human_only": float(hw), "covered_ppi": float(cov),
                     "covered_human_only": float(hcov), "note": join_notes(
                         f"fewer than {MIN_LABELED} labelled items: rough" if mk < MIN_LABELED else "", note)})
    widths = np.array([c.get("width_ppi", math.nan) for c in cell])
    hit = np.flatnonzero(widths <= full_width * (1 + 1e-9))
    for c in cell:
        c["matching_share"] = float(shares[hit[0]]) if len(hit) else math.nan
    return cell


# --------------------------------------------------------------------------- which items to label next


@dataclass(frozen=True)
class LabelPlan:
    """Where the next ``m`` human labels go (:func:`allocation_plan`).

    Attributes
    ----------
    allocation
        One row per stratum: ``<by>`` then :data:`ALLOCATION_COLUMNS`.
    items
        The items to send to the annotators: ``<by>, <unit columns>`` (e.g. ``item_id``), drawn at random
        within each stratum among its items without human labels, never by the judge's answers.
    judge, m, seed
        The judge whose residual spread set the allocation, the labels planned and the seed of the draw.
    """

    allocation: pd.DataFrame
    items: pd.DataFrame
    judge: str
    m: int
    seed: int

    def __eq__(self, other: object) -> bool:  # frames compare by content, not by identity or element-wise
        return isinstance(other, LabelPlan) and (self.judge, self.m, self.seed) == (other.judge, other.m, other.seed) \
            and self.allocation.equals(other.allocation) and self.items.equals(other.items)

    __hash__ = None  # type: ignore[assignment]  # frames are not hashable

    def to_frame(self) -> pd.DataFrame:
        """The allocation table."""
        return self.allocation


def _spreads(items: pd.DataFrame, fixed: list[str], by: list[str]) -> pd.Series:
    """Each stratum's residual spread, the standard deviation of Y - lambda Yhat on its labelled items
    (lambda PPI++'s), relative to each fixed key's over all strata, root mean square over the fixed keys."""
    parts = []
    for _, g in (items.groupby(fixed, sort=False, dropna=False) if fixed else [((), items)]):
        lab = g[np.isfinite(g["y"]) & np.isfinite(g["yhat"])]
        unl = g[~np.isfinite(g["y"]) & np.isfinite(g["yhat"])]
        if len(lab) < 2:
            continue
        lam = ppi_mean(lab["y"], lab["yhat"], unl["yhat"]).lam
        pooled = float(np.std(lab["y"] - lam * lab["yhat"]))
        if not pooled > 0:
            continue
        for kv, s in lab.groupby(by, sort=False, dropna=False):
            if len(s) >= 2:
                parts.append((_norm(kv if isinstance(kv, tuple) else (kv,)),
                              float(np.std(s["y"] - lam * s["yhat"])) / pooled))
    frame = pd.DataFrame(parts, columns=["key", "r"])
    return frame.groupby("key", sort=False)["r"].apply(lambda r: float(np.sqrt(np.mean(np.square(r)))))


def allocation_plan(items: pd.DataFrame, *, m: int, by: Sequence[str] = (), unit: Sequence[str] = ("item_id",),
                    judge: str | None = None, seed: int | np.random.Generator = 0) -> LabelPlan:
    """Split ``m`` more human labels across the strata ``by`` (Neyman allocation on each stratum's residual
    spread, :func:`evalcore.stats.ppi.neyman_allocation`, given the labels each has) and draw the items.

    Parameters
    ----------
    items
        An items frame.
    m
        How many more items to label.
    by
        The strata (key columns); none: one stratum, the m items drawn from all.
    unit
        The columns that name what an annotator labels (``item_id``; a pair's ``system_a, system_b, item_id``).
    judge
        The judge whose residual spread guides the split (default: the first).
    seed
        Seeds the draw within each stratum.

    Returns
    -------
    LabelPlan
        The allocation and the drawn items. An item counts as labelled when any of its rows has a human label.
    """
    by, keys = _check_by(items, by), cell_keys(items)
    root = root_seed(seed)
    judges = list(dict.fromkeys(items["judge"]))
    if judge is None and judges:
        judge = judges[0]
    if judge not in judges:
        raise DataError(f"{judge} is not a judge of these items", fix="pick from: " + ", ".join(map(str, judges)))
    mine = items[items["judge"] == judge]
    fixed = [k for k in keys if k not in by and k not in unit]
    spread = _spreads(mine, fixed, by) if by else pd.Series({(): 1.0})
    per = mine.groupby([*by, *unit], sort=True, dropna=False).agg(
        labeled=("y", lambda v: bool(np.isfinite(v).any())), judged=("yhat", lambda v: bool(np.isfinite(v).any())))
    per = per.reset_index()
    strata = per.groupby(by, sort=True, dropna=False) if by else [((), per)]
    rows, pools = [], []
    for kv, g in strata:
        kv = _norm(kv if isinstance(kv, tuple) else (kv,))
        pool = g[~g["labeled"] & g["judged"]]
        s = spread.get(kv, math.nan)
        rows.append({**dict(zip(by, kv)), "n_items": len(g), "n_labeled": int(g["labeled"].sum()),
                     "n_unlabeled": len(pool), "spread": s,
                     "note": "" if np.isfinite(s) else "fewer than 2 labelled items: the average spread is used"})
        pools.append((kv, pool))
    alloc = pd.DataFrame(rows)
    alloc["weight"] = alloc["n_items"] / alloc["n_items"].sum()
    alloc["new_labels"] = neyman_allocation(m, weights=alloc["weight"], spread=alloc["spread"].fillna(1.0),
                                            labeled=alloc["n_labeled"], available=alloc["n_unlabeled"])
    if m > alloc["n_unlabeled"].sum():
        free = int(alloc["n_unlabeled"].sum())
        alloc["note"] = [join_notes(n, f"only {free} items lack human labels" if free else
                                    "every item has human labels: nothing to plan") for n in alloc["note"]]
    # a seeded random order of each stratum's unlabelled items, its first k taken: a larger plan adds items
    drawn = [pool.iloc[np.sort(cell_rng(root, ("plan", *kv)).permutation(len(pool))[:int(k)])]
             for (kv, pool), k in zip(pools, alloc["new_labels"])]
    chosen = pd.concat(drawn, ignore_index=True)[[*by, *unit]] if drawn else pd.DataFrame(columns=[*by, *unit])
    return LabelPlan(alloc[[*by, *ALLOCATION_COLUMNS]], chosen.reset_index(drop=True), str(judge), int(m), root)
