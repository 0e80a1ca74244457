"""Pairwise sufficient statistics as ibis expressions: the same query on DuckDB, Spark or any ibis backend.

The in-process path (:mod:`evalcore.pairwise`) reads a comparisons table held in memory. Here the
same statistics are written once as ibis expressions over a table that lives in an engine; only the
compressed counts come back to Python. Every expression keeps to the portable subset (filter, mutate,
group_by, aggregate with ``where=``, joins, cases, least/greatest; no array aggregation, no window, no
row order: no engine returns a stable one).

Conventions are those of the in-process path (Gao et al. 2024 for the verdicts; see
:mod:`evalcore.pairwise.pairs`): a row votes +1 for the pair's ``a``, -1 for ``b``, 0 for a tie;
a row naming the pair the other way round has its vote flipped; a rater's verdict on an item is the
sign of the sum of its votes ("swap and sum", Gao et al. App. B); rows marked ``invalid`` (unparsed
judge outputs) do not vote; the humans' label is the **strict majority** of the annotators' own
verdicts over ``(a, b, tie)`` (:func:`evalcore.labels.strict_majority`).

What reduces to counts, and is here: :func:`verdict_patterns`, per system pair, the distinct patterns
(each judge's verdict, the humans' label) and how many items show each. With the labels marginalised
the Dawid-Skene likelihood (Gao et al. Model 1) depends on the data only through these counts
(:mod:`evalcore.pairwise.dawid_skene`); BWRS's accuracy counts follow from them too.
:func:`engine_pair_data` expands them (with :func:`pair_item_counts`) into each pair's
:class:`~evalcore.pairwise.pairs.PairData`, which ``evalcore winrate --engine`` fits with the
in-process BWRS and Dawid-Skene. The measures are computed in one place, in memory, from that data.

What is not here: judge accuracy (``evalcore winrate --accuracy``) and position bias (``evalcore
position``) report item-bootstrap intervals, which resample items and so need them in memory; their
decisions from the CalibraEval probabilities and calibrated maps (PriDe, NOA) are fitted on the
probabilities themselves. Superficial-quality subtraction (Zhou et al. 2024) decides at ``alpha`` by
the sign of ``dP - alpha * dQ`` per item, so the sufficient statistic of its accuracy curve is the list
of per-item ``(dP, dQ, gold)`` itself, no smaller than the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = [
    "PairPatterns", "engine_pair_data", "pair_item_counts", "pair_judges", "verdict_patterns", "verdict_patterns_expr",
]


def _ibis():
    """The ibis module, or a DataError saying how to install it."""
    try:
        import ibis
    except ImportError:
        raise DataError("statistics on SQL engines need the ibis package, which is not installed",
                        fix="pip install 'evalcore[engines]'") from None
    return ibis


def _check(table, need: Sequence[str], what: str) -> None:
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise DataError(f"{what} needs a comparisons table, and this one has no "
                        + ", ".join(f"'{c}'" for c in missing) + " column",
                        fix="give a validated comparisons table (" + ", ".join(need) + ")")


def _rows(table):
    """Each row with ``sa, sb`` (systems, '' when missing), ``lo, hi``, ``vote`` (as the row names the pair),
    ``valid`` (not an unparsed output) and ``is_judge``."""
    ibis = _ibis()
    cols = table.columns
    has_sys = {"system_a", "system_b"} <= set(cols)
    sa = table.system_a.cast("string").fill_null("") if has_sys else ibis.literal("")
    sb = table.system_b.cast("string").fill_null("") if has_sys else ibis.literal("")
    vote = ibis.cases((table.winner == "a", 1), (table.winner == "b", -1), else_=0)
    valid = ~table.invalid.fill_null(False) if "invalid" in cols else ibis.literal(True)
    return table.mutate(sa=sa, sb=sb, lo=ibis.least(sa, sb), hi=ibis.greatest(sa, sb), vote=vote.cast("int64"),
                        valid=valid, is_judge=table.rater_kind == "judge",
                        item=table.item_id.cast("string"))


def _majority(na, nb, ntie, n):
    """The strict majority of the annotators' verdicts: 0, 1, 2 (tie) or -1 (none has more than half)."""
    ibis = _ibis()
    return ibis.cases((2 * na > n, 0), (2 * nb > n, 1), (2 * ntie > n, 2), else_=-1).cast("int64")


# --------------------------------------------------------------------------- per system pair (Gao et al.)


def _pair_rows(table):
    """The parsed rows of every system pair, with ``system_a, system_b`` as :func:`pairs` orients the pair
    (the order most rows show; ties: alphabetical) and each row's vote for that ``system_a``."""
    _check(table, ("item_id", "system_a", "system_b", "rater", "rater_kind", "winner"), "a per-pair statistic")
    t = _rows(table).filter(lambda r: r.system_a.notnull() & r.system_b.notnull() & (r.system_a != r.system_b))
    # invalid rows count towards the orientation, as in pairs()
    orient = t.group_by(["lo", "hi"]).aggregate(n_lo=(t.sa == t.lo).cast("int64").sum(), n=t.count())
    orient = orient.mutate(pa=(2 * orient.n_lo >= orient.n).ifelse(orient.lo, orient.hi))
    orient = orient.mutate(pb=(orient.pa == orient.lo).ifelse(orient.hi, orient.lo)).select("lo", "hi", "pa", "pb")
    j = t.filter(t.valid).join(orient, ["lo", "hi"])
    return j.mutate(pvote=(j.sa == j.pa).ifelse(j.vote, -j.vote))


def _pair_raters(table, flag: str | None = None):
    """Per pair, item and rater: the sum of the rater's votes, whether it is a judge, and (``flag``) whether
    any of its rows has the boolean column ``flag`` true (``use``, 0 or 1)."""
    r = _pair_rows(table)
    extra = {} if flag is None else {"use": r[flag].fill_null(False).cast("int64").max()}
    return r.group_by(["pa", "pb", "item", "rater", "is_judge"]).aggregate(total=r.pvote.sum(), **extra)


def _pair_labels(raters):
    """Per pair and item, the humans' label: 0, 1, or -1 (no strict majority, a tie, or no human)."""
    h = raters.filter(~raters.is_judge)
    c = h.group_by(["pa", "pb", "item"]).aggregate(
        na=h.count(where=h.total > 0), nb=h.count(where=h.total < 0), ntie=h.count(where=h.total == 0), n=h.count())
    label = _majority(c.na, c.nb, c.ntie, c.n)
    return c.select("pa", "pb", "item", human=(label == 2).ifelse(-1, label))  # ties="drop": a tie is no label


def pair_judges(table) -> pd.DataFrame:
    """The judges of every system pair: those with a parsed row on it (``system_a, system_b, judge``).

    The order of ``judge`` within a pair is alphabetical, as :func:`evalcore.pairwise.pairs.pair_data`
    orders a pair's judges.
    """
    r = _pair_rows(table)
    r = r.filter(r.is_judge)
    out = r.select(system_a=r.pa, system_b=r.pb, judge=r.rater).distinct().to_pandas()
    return out.sort_values(["system_a", "system_b", "judge"], ignore_index=True)


def verdict_patterns_expr(table, judges: Sequence[str], *, labelled: bool | str = True):
    """The distinct verdict patterns of every system pair and their counts, as an ibis expression.

    Per pair and item, judge ``judges[k]``'s verdict is ``v{k}``: 0 (the pair's ``system_a`` wins),
    1 (``system_b``) or -1 (no verdict: no parsed row, or a tie dropped); ``human`` is the humans'
    strict majority, 0, 1 or -1 (no label, a tie, or not used: ``labelled``). Items with no verdict and no
    label carry no information and are left out.

    With the true labels marginalised, Gao et al.'s (2024) Model 1 likelihood is
    :math:`\\prod_{\\text{patterns}} P(t)^{n_t}`, so ``n`` per distinct ``(v0, ..., human)`` is a sufficient
    statistic of the Dawid-Skene fit, whatever the number of items.

    Parameters
    ----------
    table
        An ibis table of a validated comparisons table (``item_id, system_a, system_b, rater,
        rater_kind, winner``; ``invalid`` when present).
    judges
        The judges whose verdicts form the pattern columns (e.g. every judge of :func:`pair_judges`).
        A judge that did not judge a pair is -1 throughout that pair.
    labelled
        Whether the humans' label is part of the pattern: True (every label), False (none: Dawid-Skene
        without labels), or the name of a boolean column marking the items whose label is used (the
        in-distribution prior of a prior data ratio: true on the item's parsed rows of that pair, e.g. from
        :func:`evalcore.pairwise.pairs.label_mask`).

    Returns
    -------
    ibis Table
        ``system_a, system_b, v0, ..., v{k-1}, human, n``, one row per pair and distinct pattern.
    """
    ibis = _ibis()
    flag = labelled if isinstance(labelled, str) else None
    if flag is not None and flag not in table.columns:
        raise DataError(f"there is no column '{flag}' marking the items whose human label is used",
                        fix="give a boolean column of the table, or labelled=True / False")
    raters = _pair_raters(table, flag)
    jv = (raters.total > 0).ifelse(0, (raters.total < 0).ifelse(1, -1))  # ties="drop": a judge's tie is no verdict
    extra = {} if flag is None else {"use": raters.use.max()}
    per_item = raters.group_by(["pa", "pb", "item"]).aggregate(
        **{f"v{k}": jv.max(where=raters.is_judge & (raters.rater == j)) for k, j in enumerate(judges)}, **extra)
    per_item = per_item.mutate(**{f"v{k}": per_item[f"v{k}"].fill_null(-1) for k in range(len(judges))})
    if labelled:
        per_item = per_item.left_join(_pair_labels(raters), ["pa", "pb", "item"])
        human = per_item.human.fill_null(-1)
        per_item = per_item.mutate(human=human if flag is None else (per_item.use == 1).ifelse(human, -1))
    else:
        per_item = per_item.mutate(human=ibis.literal(-1, type="int64"))
    cols = [f"v{k}" for k in range(len(judges))] + ["human"]
    informative = ibis.or_(*[per_item[c] >= 0 for c in cols])
    p = per_item.filter(informative).select("pa", "pb", *cols)
    out = p.group_by(["pa", "pb", *cols]).aggregate(n=p.count())
    return out.rename(system_a="pa", system_b="pb")


@dataclass(frozen=True, eq=False)
class PairPatterns:
    """One pair's distinct verdict patterns (the layout the Dawid-Skene fit uses).

    Attributes
    ----------
    system_a, system_b
        The pair, oriented as :func:`evalcore.pairwise.pairs.pairs` orients it.
    judges
        The pair's judges (alphabetical), the columns of ``verdicts``.
    verdicts
        ``int8`` (patterns x judges): 0 = A wins, 1 = B wins, -1 = no verdict.
    human
        ``int8`` (patterns): the humans' label 0 / 1, or -1.
    counts
        ``int64`` (patterns): how many items show the pattern. Patterns are in lexicographic order of
        ``(verdicts, human)``, as ``numpy.unique(..., axis=0)`` orders them.
    """

    system_a: str
    system_b: str
    judges: tuple[str, ...]
    verdicts: np.ndarray
    human: np.ndarray
    counts: np.ndarray


def verdict_patterns(table, *, labelled: bool | str = True) -> list[PairPatterns]:
    """Every system pair's verdict patterns (:func:`verdict_patterns_expr`), computed on the table's engine.

    Two small queries run: the pairs' judges, then the pattern counts; only those come back.

    Returns
    -------
    list of PairPatterns
        One per pair with a judge, sorted by ``(system_a, system_b)``; each keeps only its own judges'
        columns. A pair without any informative item has no pattern (empty arrays).
    """
    who = pair_judges(table)
    judges = sorted(who["judge"].unique())
    frame = verdict_patterns_expr(table, judges, labelled=labelled).to_pandas()
    out = []
    for (a, b), mine in who.groupby(["system_a", "system_b"], sort=True):
        use = list(mine["judge"])
        rows = frame[(frame["system_a"] == a) & (frame["system_b"] == b)]
        cols = [f"v{judges.index(j)}" for j in use] + ["human"]
        pat = rows[cols].to_numpy(dtype=np.int8)
        cnt = rows["n"].to_numpy(dtype=np.int64)
        order = np.lexsort(pat.T[::-1]) if len(pat) else np.arange(0)
        out.append(PairPatterns(str(a), str(b), tuple(use), pat[order, :-1], pat[order, -1], cnt[order]))
    return out


def pair_item_counts(table) -> pd.DataFrame:
    """The number of items of every system pair: distinct ``item_id`` with a parsed row (``n_items``).

    Why: :func:`verdict_patterns` leaves out items without any verdict or label (they carry no
    information for the fits), but a win rate reports all of the pair's items, as
    :func:`evalcore.pairwise.pairs.pair_data` counts them.

    Returns
    -------
    DataFrame
        ``system_a, system_b, n_items``, oriented as :func:`verdict_patterns`, sorted by the pair.
    """
    r = _pair_rows(table)
    out = r.group_by(["pa", "pb"]).aggregate(n_items=r.item.nunique()).rename(system_a="pa", system_b="pb")
    return out.to_pandas().sort_values(["system_a", "system_b"], ignore_index=True)


def engine_pair_data(table) -> list:
    """Every system pair's :class:`~evalcore.pairwise.pairs.PairData`, from the counts an engine computes.

    Why: BWRS and Dawid-Skene (:func:`evalcore.pairwise.winrate.estimate`) depend on a pair's data only
    through its verdict patterns and their counts, so the engine computes those (every judge, every human
    label, ties dropped: :func:`verdict_patterns`) and the items per pair (:func:`pair_item_counts`), and
    :func:`evalcore.pairwise.pairs.pair_from_patterns` expands them into items in pattern order. The same
    fitting code then runs on them; the judgments' rows never come back.

    Returns
    -------
    list of PairData
        One per system pair with a parsed row, in the order of :func:`evalcore.pairwise.pairs.pairs`
        (sorted by the alphabetically first system, then the other) and oriented as it orients them. A
        pair without a judge has no judge columns. ``item_ids`` are positions, not the items' ids.
    """
    from ..pairwise.pairs import pair_from_patterns

    items = pair_item_counts(table)
    pats = {(p.system_a, p.system_b): p for p in verdict_patterns(table, labelled=True)}
    out = []
    for r in items.itertuples():
        a, b = str(r.system_a), str(r.system_b)
        p = pats.get((a, b))
        if p is None:
            p = PairPatterns(a, b, (), np.zeros((0, 0), np.int8), np.zeros(0, np.int8), np.zeros(0, np.int64))
        out.append(pair_from_patterns(a, b, p.judges, p.verdicts, p.human, p.counts, n_items=int(r.n_items)))
    return sorted(out, key=lambda d: (min(d.system_a, d.system_b), max(d.system_a, d.system_b)))
