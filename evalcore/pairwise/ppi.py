"""The humans' win rate from a few human labels: prediction-powered estimates on comparisons.

The judge compared every item of a system pair, the humans a random sample of them. Prediction-powered
inference (PPI++, Angelopoulos, Duchi & Zrnic 2023; for LLM evaluation, Boyeau et al. 2024) estimates the humans'
win rate of ``system_a`` over ``system_b`` on all the pair's items with an interval that holds whatever the
judge's bias (:mod:`evalcore.stats.ppi`): the frequentist counterpart of Gao et al.'s BWRS and Dawid-Skene
corrections (:mod:`evalcore.pairwise.winrate`), which need priors.

Per item of a pair (oriented as :func:`evalcore.pairwise.pairs.pairs` orients it; rows naming the pair the other
way round have their verdict flipped):

Y, the humans' verdict
    Each annotator's rows on the item give their verdict (swap and sum, :func:`evalcore.pairwise.pairs.rater_verdicts`);
    the item's label is the strict majority of those verdicts (:func:`evalcore.pairwise.pairs.human_labels`,
    :func:`evalcore.labels.strict_majority`), coded a = 1, tie = 1/2, b = 0. An item without a strict majority
    counts as a tie (``no_majority="tie"``, the default, as evalcore's win rates count it) or is left out
    (``"drop"``); the notes say which and how many.
:math:`\\hat Y`, the judge's verdict
    Its rows on the item, swap and sum, coded the same way; unparsed outputs (``invalid``) are no verdict.

The estimand is the humans' win rate with ties as halves, :math:`P(a) + P(\\text{tie})/2`, per pair (and ``by``
group). The intervals hold when the labelled items are a random sample of the pair's items
(:func:`win_rate_label_check` tests it).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS, HUMAN, JUDGE
from ..errors import DataError
from ..stats.numeric import join_notes
from ..stats.ppi_table import (MIN_LABELED, LabelPlan, allocation_plan, budget_table, estimate_table,
                               label_check_table, what_if_table)
from ..stats.results import ALPHA
from .pairs import INVALID, human_labels, invalid_mask, pairs, rater_verdicts, votes

__all__ = ["NO_MAJORITY", "ppi_pair_items", "ppi_win_rates", "win_rate_budget", "win_rate_what_if", "win_rate_plan",
           "win_rate_label_check"]

#: What an item whose humans have no strict majority becomes: a tie, or left out.
NO_MAJORITY = ("tie", "drop")
#: Y and Yhat of the verdict codes 0 (a), 1 (b), 2 (tie).
_CODED = np.array([1.0, 0.0, 0.5])


def _oriented(comparisons: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The rows of every pair in the pair's orientation (``pairs``), each row's vote flipped where it names the
    pair the other way round."""
    known = pairs(comparisons)
    unknown = [c for c in by if c not in comparisons.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(map(str, comparisons.columns[:12])))
    df = comparisons.dropna(subset=["system_a", "system_b"])
    df = df[df["system_a"].astype(str) != df["system_b"].astype(str)]
    sa, sb = df["system_a"].astype(str).to_numpy(), df["system_b"].astype(str).to_numpy()
    first = {frozenset((a, b)): a for a, b in zip(known["system_a"], known["system_b"])}
    lead = np.array([first[frozenset((a, b))] for a, b in zip(sa, sb)], dtype=object)
    flip = lead != sa
    out = pd.DataFrame({"system_a": np.where(flip, sb, sa), "system_b": np.where(flip, sa, sb),
                        "item_id": df["item_id"].to_numpy(), "rater": df["rater"].astype(str).to_numpy(),
                        "kind": df["rater_kind"].astype(str).to_numpy(), **{c: df[c].to_numpy() for c in by}})
    out["_vote"] = votes(df["winner"], flip)
    out["_invalid"] = invalid_mask(df)
    return out


@takes_table(COMPARISONS)
def ppi_pair_items(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                   no_majority: str = "tie") -> pd.DataFrame:
    """The humans' verdict Y and each judge's verdict :math:`\\hat Y` per item of every system pair (module
    docstring): the items frame of :mod:`evalcore.stats.ppi_table`.

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    by
        Per-item columns to group by (``subset``, ``language``, ...): the strata within each pair.
    judges
        The judges (default: every judge).
    no_majority
        ``"tie"``: an item whose annotators have no strict majority counts as a tie; ``"drop"``: it is left out.
    item, rater, kind, winner, system_a, system_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, <by>, judge, measure, item_id, y, yhat, no_majority``: one row per item of the
        pair and judge of the pair; ``y`` NaN where no human judged the item, ``yhat`` where the judge gave
        no verdict; ``no_majority`` marks items whose humans have no strict majority (counted as ties).

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> items = ppi_pair_items(comparisons, judges=["gpt-4/pairwise"])
    >>> items.columns.tolist()
    ['system_a', 'system_b', 'judge', 'measure', 'item_id', 'y', 'yhat', 'no_majority']
    >>> sorted(items["y"].dropna().unique().tolist())
    [0.0, 0.5, 1.0]
    """
    if no_majority not in NO_MAJORITY:
        raise DataError(f"unknown handling of items without a strict majority: {no_majority!r}",
                        fix="use 'tie' (they count as ties) or 'drop' (they are left out)")
    by = [c for c in dict.fromkeys([by] if isinstance(by, str) else (by or ()))]
    rows = _oriented(comparisons, by)
    have = sorted(set(rows.loc[rows["kind"] == JUDGE, "rater"]))
    if judges is not None:
        judges = [judges] if isinstance(judges, str) else list(dict.fromkeys(map(str, judges)))
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise DataError(f"{', '.join(unknown)} is not a judge in this table", fix="pick from: " + ", ".join(have))
        have = judges
    if not have:
        raise DataError("prediction-powered win rates correct a judge's verdicts, and the table has no judge's "
                        "verdicts", fix="give the judge's rows rater_kind 'judge' (CLI: --judge-rater NAME)")
    unit, units = pd.factorize(pd.MultiIndex.from_arrays([rows["system_a"], rows["system_b"], rows["item_id"]]))
    hm = (rows["kind"] == HUMAN).to_numpy()
    label, seen = human_labels(len(units), unit[hm], pd.factorize(rows["rater"][hm])[0], rows["_vote"][hm].to_numpy(),
                               rows["_invalid"][hm].to_numpy())
    y = np.where(label >= 0, _CODED[np.clip(label, 0, 2)], np.where(seen & (no_majority == "tie"), 0.5, np.nan))
    jm = (rows["kind"] == JUDGE).to_numpy() & rows["rater"].isin(have).to_numpy()
    jcode = pd.Categorical(rows["rater"][jm], categories=have).codes
    u, j, verdict = rater_verdicts(unit[jm], jcode, rows["_vote"][jm].to_numpy(), rows["_invalid"][jm].to_numpy())
    yhat = np.full((len(units), len(have)), np.nan)
    yhat[u, j] = np.where(verdict == INVALID, np.nan, _CODED[np.clip(verdict, 0, 2)])
    return _pair_frame(units, rows, unit, by, have, y, yhat, seen & (label < 0), no_majority, u, j)


def _pair_frame(units, rows, unit, by, have, y, yhat, tied, no_majority, u, j) -> pd.DataFrame:
    """The items frame: every unit of a pair with every judge that judged the pair."""
    first = np.unique(unit, return_index=True)[1]
    base = pd.DataFrame({"system_a": units.get_level_values(0), "system_b": units.get_level_values(1),
                         **{c: rows[c].to_numpy()[first] for c in by}, "item_id": units.get_level_values(2),
                         "y": y, "no_majority": tied})
    pair_of = pd.factorize(pd.MultiIndex.from_arrays([base["system_a"], base["system_b"]]))[0]
    judged = np.zeros((pair_of.max() + 1 if len(pair_of) else 0, len(have)), dtype=bool)
    judged[pair_of[u], j] = True
    frames = []
    for k, name in enumerate(have):
        keep = judged[pair_of, k]
        frames.append(base[keep].assign(judge=name, measure="win_rate", yhat=yhat[keep, k]))
    out = pd.concat(frames, ignore_index=True) if frames else base.assign(judge=[], measure=[], yhat=[])
    if no_majority == "drop":
        out = out[~out["no_majority"]]
    has_any = np.isfinite(out["y"].to_numpy(dtype=float)) | np.isfinite(out["yhat"].to_numpy(dtype=float))
    out = out[has_any]
    out = out.sort_values(["system_a", "system_b", *by], kind="stable", na_position="first")
    cols = ["system_a", "system_b", *by, "judge", "measure", "item_id", "y", "yhat", "no_majority"]
    return out[cols].reset_index(drop=True)


def _majority_notes(table: pd.DataFrame, items: pd.DataFrame, no_majority: str) -> pd.DataFrame:
    """The notes of the humans-only and PPI rows say how many items without a strict majority count as ties or
    were left out (per group; a stratified row: over the pair). ``items`` holds every item (``no_majority="tie"``)."""
    keys = list(table.columns[:list(table.columns).index("stratified")])
    first = items.drop_duplicates([*keys, "item_id"])
    per_key = {tuple(None if pd.isna(v) else v for v in k): int(c)
               for k, c in first.groupby(keys, sort=False, dropna=False)["no_majority"].sum().items()}
    per_pair = first.groupby(["system_a", "system_b"])["no_majority"].sum()
    notes = []
    for row in table[[*keys, "stratified", "method", "note"]].itertuples(index=False, name=None):
        *kv, strat, method, note = row
        k = int(per_pair.get((kv[0], kv[1]), 0)) if strat else per_key.get(tuple(kv), 0)
        verb = "counted as ties (1/2)" if no_majority == "tie" else "left out"
        extra = f"{k} item{'s' if k != 1 else ''} without a strict majority of the humans {verb}" \
            if k and method != "judge_only" else ""
        notes.append(join_notes(note, extra))
    return table.assign(note=notes)


@takes_table(COMPARISONS)
def ppi_win_rates(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                  no_majority: str = "tie", plain: bool = False, level: float = 0.95,
                  min_labeled: int = MIN_LABELED) -> pd.DataFrame:
    """The humans' win rate of every system pair: humans only, the judge only (biased), and prediction-powered
    (PPI++, tuned :math:`\\lambda`; plain PPI with ``plain``) with their intervals, exactly as
    ``ppi_py.ppi_mean_ci`` on Y and :math:`\\hat Y` (module docstring); with ``by``, the stratified overall
    estimate of each pair too.

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    by, judges, no_majority
        As :func:`ppi_pair_items`.
    plain, level, min_labeled
        As :func:`evalcore.stats.ppi_table.estimate_table`.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, <by>, stratified, judge, measure, method, estimate, ci_low, ci_high, std_error,
        n_labeled, n_unlabeled, lambda, effective_labels, note``; ``measure`` is ``win_rate``, the humans' win
        rate of ``system_a`` (a tie counts a half).

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> table = ppi_win_rates(comparisons, judges=["gpt-4/pairwise"])
    >>> table.columns[:5].tolist()
    ['system_a', 'system_b', 'stratified', 'judge', 'measure']
    """
    if no_majority not in NO_MAJORITY:  # checked here too: every item is read with "tie", for the notes' counts
        ppi_pair_items(comparisons, no_majority=no_majority)
    items = ppi_pair_items(comparisons, by=by, judges=judges, no_majority="tie")
    use = items[~items["no_majority"]] if no_majority == "drop" else items
    table = estimate_table(use, by=list(by) if not isinstance(by, str) else [by], plain=plain, level=level,
                           min_labeled=min_labeled)
    return _majority_notes(table, items, no_majority)


@takes_table(COMPARISONS)
def win_rate_budget(comparisons: pd.DataFrame, *, half_width: float, by: Sequence[str] = (),
                    judges: Sequence[str] | None = None, no_majority: str = "tie", level: float = 0.95,
                    cost_label: float | None = None, cost_judge: float | None = None) -> pd.DataFrame:
    """How many human verdicts reach the half-width ``half_width`` on each pair's win rate, with PPI++ and with
    the humans alone (:func:`evalcore.stats.ppi_table.budget_table`).

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    half_width
        The target half-width W of the intervals (estimate +- W).
    by, judges, no_majority
        As :func:`ppi_pair_items`.
    level
        The confidence level.
    cost_label, cost_judge
        The cost of one human verdict and of one judge verdict (both or neither).

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, <by>`` then :data:`evalcore.stats.ppi_table.BUDGET_COLUMNS`.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> b = win_rate_budget(comparisons, half_width=0.05, judges=["gpt-4/pairwise"])
    >>> b.columns[:4].tolist()
    ['system_a', 'system_b', 'judge', 'measure']
    """
    items = ppi_pair_items(comparisons, by=by, judges=judges, no_majority=no_majority)
    return budget_table(items, half_width=half_width, level=level, cost_label=cost_label, cost_judge=cost_judge)


@takes_table(COMPARISONS)
def win_rate_what_if(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                     no_majority: str = "tie", shares: Sequence[float] | None = None, repeats: int = 20,
                     level: float = 0.95, seed: int | np.random.Generator = 0) -> pd.DataFrame:
    """The "what if" curve of each pair's win rate: interval widths against the share of human verdicts kept
    (:func:`evalcore.stats.ppi_table.what_if_table`).

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    by, judges, no_majority
        As :func:`ppi_pair_items`.
    shares, repeats, level, seed
        As :func:`evalcore.stats.ppi_table.what_if_table`.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, <by>`` then :data:`evalcore.stats.ppi_table.WHAT_IF_COLUMNS`.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> w = win_rate_what_if(comparisons, judges=["gpt-4/pairwise"], shares=[0.5, 1.0], repeats=3)
    >>> w["share"].unique().tolist()
    [0.5, 1.0]
    """
    items = ppi_pair_items(comparisons, by=by, judges=judges, no_majority=no_majority)
    return what_if_table(items, shares=shares, repeats=repeats, level=level, seed=seed)


@takes_table(COMPARISONS)
def win_rate_plan(comparisons: pd.DataFrame, *, m: int, by: Sequence[str] = (), judge: str | None = None,
                  no_majority: str = "tie", seed: int | np.random.Generator = 0) -> LabelPlan:
    """Where to spend ``m`` more human verdicts across the pairs (and ``by`` groups): Neyman allocation on each
    stratum's residual spread, and a seeded random draw of unlabelled items within each, never chosen by the
    judge's verdicts (:func:`evalcore.stats.ppi_table.allocation_plan`; the strata are the pairs).

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    m
        How many more items to label.
    by
        Per-item columns that split the pairs further.
    judge
        The judge whose residual spread guides the split (default: the first).
    no_majority
        As :func:`ppi_pair_items`.
    seed
        Seeds the draw (a whole number or a Generator).

    Returns
    -------
    evalcore.stats.ppi_table.LabelPlan
        ``allocation`` (one row per pair and group) and ``items`` (``system_a, system_b, <by>, item_id``).

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> plan = win_rate_plan(comparisons, m=20, judge="gpt-4/pairwise")
    >>> plan.items.columns.tolist()
    ['system_a', 'system_b', 'item_id']
    """
    by = list(by) if not isinstance(by, str) else [by]
    items = ppi_pair_items(comparisons, by=by, judges=None if judge is None else [judge], no_majority=no_majority)
    return allocation_plan(items.drop(columns="no_majority"), m=m, by=["system_a", "system_b", *by],
                           unit=("item_id",), judge=judge, seed=seed)


@takes_table(COMPARISONS)
def win_rate_label_check(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                         no_majority: str = "tie", alpha: float = ALPHA) -> pd.DataFrame:
    """Are the human-labelled items of each pair a random sample? The judge's win rate on labelled against
    unlabelled items, Welch's z-test with Benjamini-Hochberg q-values (:func:`evalcore.stats.ppi_table.label_check_table`).

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    by, judges, no_majority
        As :func:`ppi_pair_items`.
    alpha
        The false discovery rate of the warnings.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, <by>`` then :data:`evalcore.stats.ppi_table.CHECK_COLUMNS`.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> win_rate_label_check(comparisons, judges=["gpt-4/pairwise"])["warning"].dtype
    dtype('bool')
    """
    items = ppi_pair_items(comparisons, by=by, judges=judges, no_majority=no_majority)
    return label_check_table(items, alpha=alpha)
