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

What reduces to counts, and is here:

* :func:`verdict_patterns`: per system pair, the distinct patterns (each judge's verdict, the humans'
  label) and how many items show each. With the labels marginalised the Dawid-Skene likelihood
  (Gao et al. Model 1) depends on the data only through these counts
  (:mod:`evalcore.pairwise.dawid_skene`); BWRS's accuracy counts follow from them too.
  :func:`engine_pair_data` expands them (with :func:`pair_item_counts`) into each pair's
  :class:`~evalcore.pairwise.pairs.PairData`, which ``evalcore winrate --engine`` fits with the
  in-process BWRS and Dawid-Skene.
* :func:`pair_accuracy_counts`: per pair and judge, Gao et al.'s Algorithm 1 counts ``n0, s0, n1, s1``
  (:func:`evalcore.pairwise.pairs.accuracy_counts` on all human-labelled items).
* :func:`judge_accuracy_counts`: the three-class accuracy counts of
  :func:`evalcore.pairwise.accuracy.judge_accuracy` per group and judge.
* :func:`position_counts`: per judge and group, the counts behind the verdict-based measures of
  :mod:`evalcore.pairwise.position` (accuracy per order, position consistency, first-position
  preference, RStd, Fleiss' kappa over the two orders); :func:`position_measures` turns them into
  the point estimates.

What does not reduce to counts, and is not here: decisions from the CalibraEval probabilities (the
in-process path takes the unit's first row, in table order, that holds all three; and the calibrated
maps, PriDe and NOA, are fitted on the probabilities themselves), the ICCs (continuous sums of
squares over those probabilities), and superficial-quality subtraction (Zhou et al. 2024): its
decision at ``alpha`` is the sign of ``dP - alpha * dQ`` per item, so the sufficient statistic of the
whole accuracy curve is the list of per-item ``(dP, dQ, gold)`` itself, no smaller than the data, and
its ties (exactly ``dP = alpha * dQ``) hang on floating-point rounding of the min-max normalisation,
which engines need not reproduce bit for bit; its cross-validated alpha and item bootstrap need the
items too.

Orientation. The in-process position path orients a unit (item and pair) by its first row in table
order. No engine has a row order: given a column with each row's place in the file (``row_number``),
:func:`position_counts` takes the same first row; without one, a unit is oriented as most of its rows
name the pair (ties: the alphabetically first system first), as :func:`evalcore.pairwise.pairs.pairs`
orients a pair. The two agree whenever a unit's rows all name the pair the same way, as in every
dataset at hand.

Grouping columns (``by``) must be per-item columns (``task``, ``subset``): the in-process path takes a
unit's group from its first row; here a unit whose rows disagree on ``by`` would fall in several groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from ..stats import safe_div

__all__ = [
    "PairPatterns", "engine_pair_data", "judge_accuracy_counts", "judge_accuracy_counts_expr", "pair_accuracy_counts",
    "pair_accuracy_counts_expr", "pair_item_counts", "pair_judges", "position_counts", "position_counts_expr",
    "position_measures", "verdict_patterns", "verdict_patterns_expr",
]

_INVALID = 3  # a rater whose every row on the unit is unparsed (evalcore.pairwise.pairs.INVALID)


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
    ``valid`` (not an unparsed output), ``is_judge`` and ``swap`` (shown in swapped order)."""
    ibis = _ibis()
    cols = table.columns
    has_sys = {"system_a", "system_b"} <= set(cols)
    sa = table.system_a.cast("string").fill_null("") if has_sys else ibis.literal("")
    sb = table.system_b.cast("string").fill_null("") if has_sys else ibis.literal("")
    vote = ibis.cases((table.winner == "a", 1), (table.winner == "b", -1), else_=0)
    valid = ~table.invalid.fill_null(False) if "invalid" in cols else ibis.literal(True)
    swap = table.swapped.fill_null(False) if "swapped" in cols else ibis.literal(False)
    return table.mutate(sa=sa, sb=sb, lo=ibis.least(sa, sb), hi=ibis.greatest(sa, sb), vote=vote.cast("int64"),
                        valid=valid, is_judge=table.rater_kind == "judge", swap=swap,
                        item=table.item_id.cast("string"))


def _verdict(total, parsed=None):
    """0 (a) for a positive vote sum, 1 (b) for a negative one, 2 (tie) for zero; 3 without a parsed row."""
    ibis = _ibis()
    cases = [(total > 0, 0), (total < 0, 1)]
    if parsed is not None:
        cases.insert(0, (parsed == 0, _INVALID))
    return ibis.cases(*cases, else_=2).cast("int64")


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


def pair_accuracy_counts_expr(table):
    """Gao et al.'s (2024, Algorithm 1, lines 3-8) accuracy counts per pair and judge, as an ibis expression.

    On the items with a human label: ``n0`` items the humans say ``system_a`` wins on which the judge gives
    a verdict, ``s0`` of them where the judge also says ``system_a``; ``n1``, ``s1`` the same for
    ``system_b``. The estimates are :math:`\\hat q_0 = s_0 / n_0` and :math:`\\hat q_1 = s_1 / n_1`.

    Returns
    -------
    ibis Table
        ``system_a, system_b, judge, n0, s0, n1, s1`` for every judge with a parsed row on the pair.
    """
    raters = _pair_raters(table)
    j = raters.filter(raters.is_judge).left_join(_pair_labels(raters), ["pa", "pb", "item"])
    h = j.human.fill_null(-1)
    out = j.group_by(["pa", "pb", "rater"]).aggregate(
        n0=j.count(where=(h == 0) & (j.total != 0)), s0=j.count(where=(h == 0) & (j.total > 0)),
        n1=j.count(where=(h == 1) & (j.total != 0)), s1=j.count(where=(h == 1) & (j.total < 0)))
    return out.rename(system_a="pa", system_b="pb", judge="rater")


def pair_accuracy_counts(table) -> pd.DataFrame:
    """:func:`pair_accuracy_counts_expr` computed, sorted by pair and judge (a pandas frame)."""
    out = pair_accuracy_counts_expr(table).to_pandas()
    return out.sort_values(["system_a", "system_b", "judge"], ignore_index=True)


# --------------------------------------------------------------------------- units: item (and pair)


def _unit_keys(by: Sequence[str]) -> list[str]:
    return ["item", "lo", "hi", *by]


def _check_by(table, by: Sequence[str]) -> list[str]:
    by = [by] if isinstance(by, str) else list(by)
    unknown = [c for c in by if c not in table.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(list(table.columns)[:12]))
    return by


def _unit_labels(human_rows):
    """Per unit ``(item, lo, hi)``, the strict majority of the annotators' verdicts: ``label`` 0, 1, 2 or -1."""
    h = human_rows.filter(human_rows.valid)
    per = h.group_by(["item", "lo", "hi", "rater"]).aggregate(total=h.uvote.sum())
    c = per.group_by(["item", "lo", "hi"]).aggregate(
        na=per.count(where=per.total > 0), nb=per.count(where=per.total < 0),
        ntie=per.count(where=per.total == 0), n=per.count())
    return c.select("item", "lo", "hi", label=_majority(c.na, c.nb, c.ntie, c.n))


def judge_accuracy_counts_expr(table, *, by: Sequence[str] = (), judges: Sequence[str] | None = None):
    """The counts behind :func:`evalcore.pairwise.accuracy.judge_accuracy`, per group and judge (ibis).

    A unit is an item and, when the table names them, its unordered system pair; a row whose
    ``system_a`` sorts after its ``system_b`` has its vote flipped. A judge's verdict on a unit is a, b,
    tie (swap and sum) or unparsed (every row ``invalid``); the humans' label is their strict majority
    over a, b, tie (PandaLM's three classes, Wang et al. 2024). Over the units where the judge has a row:

    * ``n_units``: labelled units with a parsed verdict; ``n_correct``: those where verdict = label;
    * ``n_invalid``: labelled units whose every row of the judge is unparsed;
    * ``n_no_label``: units with a human verdict but no strict majority;
    * ``n_items``, ``n_items_wrong``: distinct items among the units scored when unparsed outputs are
      left out, and when they count as wrong.

    Accuracy is ``n_correct / n_units`` (``invalid="drop"``) or ``n_correct / (n_units + n_invalid)``
    (``"wrong"``).

    Returns
    -------
    ibis Table
        ``*by, judge, n_units, n_correct, n_invalid, n_no_label, n_items, n_items_wrong``.
    """
    _check(table, ("item_id", "rater", "rater_kind", "winner"), "judge accuracy")
    by = _check_by(table, by)
    t = _rows(table)
    t = t.mutate(uvote=(t.sa > t.sb).ifelse(-t.vote, t.vote))
    if judges is not None:
        t = t.filter(~t.is_judge | t.rater.isin(list(judges)))
    labels = _unit_labels(t.filter(~t.is_judge))
    j = t.filter(t.is_judge)
    per = j.group_by([*_unit_keys(by), "rater"]).aggregate(
        total=j.uvote.sum(where=j.valid).fill_null(0), parsed=j.count(where=j.valid))
    per = per.mutate(verdict=_verdict(per.total, per.parsed)).left_join(labels, ["item", "lo", "hi"])
    lab = per.label.fill_null(-1)
    seen = per.label.notnull()
    ok = (lab >= 0) & (per.verdict != _INVALID)
    out = per.group_by([*by, "rater"]).aggregate(
        n_units=per.count(where=ok), n_correct=per.count(where=(lab >= 0) & (per.verdict == lab)),
        n_invalid=per.count(where=(lab >= 0) & (per.verdict == _INVALID)),
        n_no_label=per.count(where=seen & (lab < 0)),
        n_items=per.item.nunique(where=ok), n_items_wrong=per.item.nunique(where=lab >= 0))
    return out.rename(judge="rater")


def judge_accuracy_counts(table, *, by: Sequence[str] = (), judges: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`judge_accuracy_counts_expr` computed, sorted by group and judge (a pandas frame)."""
    by = _check_by(table, by)
    out = judge_accuracy_counts_expr(table, by=by, judges=judges).to_pandas()
    return out.sort_values([*by, "judge"], ignore_index=True)


# --------------------------------------------------------------------------- position bias


_POSITION_COUNTS = (
    "n_units", "n_orig", "hit_orig", "n_swap", "hit_swap", "n_both_gold", "hit_both", "n_both", "n_equal",
    "n_first", "n_decisive", "n_a_orig", "hit_a_orig", "n_b_orig", "hit_b_orig", "n_a_swap", "hit_a_swap",
    "n_b_swap", "hit_b_swap", "n_cat_a", "n_cat_b", "n_cat_tie", "items_orig", "items_swap", "items_either",
    "items_both_gold", "items_both", "items_decisive")


def _oriented(table, row_number: str | None):
    """Rows with ``flip`` (the row names its unit's pair the other way round) and ``order`` (0: the unit's
    ``a`` shown first). A unit takes the orientation of its first row by ``row_number`` when one is given (as
    the in-process path takes its first row in table order), else the one most of its rows show, ties
    alphabetically."""
    t = _rows(table)
    keys = ["item", "lo", "hi"]
    if row_number is None:
        o = t.group_by(keys).aggregate(n_lo=(t.sa == t.lo).cast("int64").sum(), n=t.count())
        o = o.select(*keys, ua=(2 * o.n_lo >= o.n).ifelse(o.lo, o.hi))
    else:
        if row_number not in table.columns:
            raise DataError(f"there is no column '{row_number}' to order the rows by",
                            fix="give the column holding each row's place in the file, or none")
        t = t.mutate(pos_=t[row_number])
        first = t.group_by(keys).aggregate(pos_=t.pos_.min())
        o = t.join(first, [*keys, "pos_"]).select(*keys, ua="sa").distinct()
    t = t.join(o, keys)
    flip = t.sa != t.ua
    return t.mutate(flip=flip, uvote=flip.ifelse(-t.vote, t.vote), order=(t.swap != flip).cast("int64"))


def position_counts_expr(table, *, by: Sequence[str] = (), gold: bool | None = None,
                         row_number: str | None = None):
    """The counts behind the verdict-based position-bias measures, per judge and group (ibis).

    Definitions follow :mod:`evalcore.pairwise.position` (LLMBar, Zeng et al. 2024; CalibraEval, Li et al.
    2024). Per unit (item and pair), ``d0``/``d1`` is the judge's swap-and-sum verdict in the original /
    swapped order (a, b, tie; none when it has no parsed row in that order); gold is the rater ``gold`` if
    the table has one, else the humans' strict majority, and a tied gold counts as none. Over the units
    where the judge has a row:

    * ``n_orig``/``hit_orig``: gold and ``d0`` / ``d0`` = gold (``n_swap``, ``hit_swap``: ``d1``);
    * ``n_both_gold``/``hit_both``: gold and both verdicts / both equal gold;
    * ``n_both``/``n_equal``: both verdicts / the same verdict in both orders (position consistency);
    * ``n_first``/``n_decisive``: decisive verdicts for the output shown first / all decisive verdicts
      (first-position preference);
    * ``n_{a,b}_{orig,swap}``/``hit_*``: per gold class and order, units with a verdict / a correct one
      (the recalls of RStd, Zheng et al. 2023);
    * ``n_cat_{a,b,tie}``: over units with both verdicts, the verdicts in each category (Fleiss' kappa);
    * ``items_*``: distinct items behind each measure (the ``n`` of the report).

    Parameters
    ----------
    table
        An ibis table of a validated comparisons table.
    by
        Per-item columns to group by.
    gold
        Whether the table has a rater ``gold`` (None: ask the engine, one tiny query).
    row_number
        A column holding each row's place in the file (unique). Given, a unit is oriented by its first row,
        exactly as the in-process path; without it, as most of its rows name the pair (the same unless a
        unit's rows name its pair both ways; module docstring).

    Returns
    -------
    ibis Table
        ``judge, *by`` and the counts above.
    """
    _check(table, ("item_id", "rater", "rater_kind", "winner"), "position bias")
    by = _check_by(table, by)
    t = _oriented(table, row_number)
    humans = t.filter(~t.is_judge)
    if gold is None:
        gold = bool(humans.filter(humans.rater == "gold").count().to_pyarrow().as_py())
    labels = _unit_labels(humans.filter(humans.rater == "gold") if gold else humans)
    labels = labels.mutate(label=(labels.label == 2).ifelse(-1, labels.label))  # a tied gold is no gold
    j = t.filter(t.is_judge)
    per = j.group_by([*_unit_keys(by), "rater", "order"]).aggregate(
        total=j.uvote.sum(where=j.valid).fill_null(0), parsed=j.count(where=j.valid))
    v = _verdict(per.total, per.parsed)
    per = per.mutate(v=(v == _INVALID).ifelse(-1, v))
    u = per.group_by([*_unit_keys(by), "rater"]).aggregate(
        d0=per.v.max(where=per.order == 0), d1=per.v.max(where=per.order == 1))
    u = u.mutate(d0=u.d0.fill_null(-1), d1=u.d1.fill_null(-1)).left_join(labels, ["item", "lo", "hi"])
    return _position_aggregate(u.mutate(label=u.label.fill_null(-1)), by)


def _position_aggregate(u, by: list[str]):
    """Per judge and group, the counts of :func:`position_counts_expr` from per-unit ``d0, d1, label``."""
    ibis = _ibis()
    d0, d1, lab, item = u.d0, u.d1, u.label, u.item
    g, both = lab >= 0, (d0 >= 0) & (d1 >= 0)
    dec0, dec1 = d0.isin([0, 1]), d1.isin([0, 1])
    one = ibis.literal(1, type="int64")

    def n(cond):  # count of the units where cond holds
        return u.count(where=cond)

    def per_cat(c):  # verdicts in category c over the units with both verdicts
        return (both & (d0 == c)).ifelse(one, 0).sum() + (both & (d1 == c)).ifelse(one, 0).sum()

    agg = {
        "n_units": u.count(), "n_orig": n(g & (d0 >= 0)), "hit_orig": n(g & (d0 == lab)),
        "n_swap": n(g & (d1 >= 0)), "hit_swap": n(g & (d1 == lab)),
        "n_both_gold": n(g & both), "hit_both": n(g & (d0 == lab) & (d1 == lab)),
        "n_both": n(both), "n_equal": n(both & (d0 == d1)),
        "n_first": n(d0 == 0) + n(d1 == 1), "n_decisive": n(dec0) + n(dec1),
        "n_cat_a": per_cat(0), "n_cat_b": per_cat(1), "n_cat_tie": per_cat(2),
        "items_orig": item.nunique(where=g & (d0 >= 0)), "items_swap": item.nunique(where=g & (d1 >= 0)),
        "items_either": item.nunique(where=g & ((d0 >= 0) | (d1 >= 0))),
        "items_both_gold": item.nunique(where=g & both), "items_both": item.nunique(where=both),
        "items_decisive": item.nunique(where=dec0 | dec1),
    }
    for cls, c in (("a", 0), ("b", 1)):
        for name, d in (("orig", d0), ("swap", d1)):
            agg[f"n_{cls}_{name}"] = n((lab == c) & (d >= 0))
            agg[f"hit_{cls}_{name}"] = n((lab == c) & (d == c))
    out = u.group_by(["rater", *by]).aggregate(**agg).rename(judge="rater")
    return out.select("judge", *by, *_POSITION_COUNTS)


def position_counts(table, *, by: Sequence[str] = (), gold: bool | None = None,
                    row_number: str | None = None) -> pd.DataFrame:
    """:func:`position_counts_expr` computed, sorted by judge and group (a pandas frame of integers)."""
    by = _check_by(table, by)
    out = position_counts_expr(table, by=by, gold=gold, row_number=row_number).to_pandas()
    out[list(_POSITION_COUNTS)] = out[list(_POSITION_COUNTS)].fillna(0).astype("int64")
    return out.sort_values(["judge", *by], ignore_index=True)


def position_measures(counts: pd.DataFrame) -> pd.DataFrame:
    """The verdict-based point estimates of :mod:`evalcore.pairwise.position` from :func:`position_counts`.

    * accuracy per order :math:`hit/n`; ``accuracy_average`` their mean; ``accuracy_both_orders``;
    * ``position_consistency`` :math:`n_{equal}/n_{both}`; ``first_position_preference``
      :math:`n_{first}/n_{decisive}`;
    * ``rstd`` :math:`\\frac12 \\sum_{k} |r_a^k - r_b^k| / 2` over the two orders, :math:`r_c^k` the recall of
      gold class ``c`` in order ``k`` (Zheng et al. 2023);
    * ``fleiss_kappa`` over the two orders (Fleiss 1971): with two ratings per unit,
      :math:`\\bar P = n_{equal}/n_{both}`, :math:`p_c = n_{cat,c} / (2 n_{both})`,
      :math:`\\kappa = (\\bar P - \\sum_c p_c^2) / (1 - \\sum_c p_c^2)`.

    Returns
    -------
    pandas.DataFrame
        The key columns of ``counts`` (``judge`` and the groups), ``measure``, ``estimate`` and ``n`` (items).
    """
    keys = [c for c in counts.columns if c not in _POSITION_COUNTS]
    c = {k: counts[k].to_numpy(dtype=float) for k in _POSITION_COUNTS}
    acc0, acc1 = safe_div(c["hit_orig"], c["n_orig"]), safe_div(c["hit_swap"], c["n_swap"])
    stds = [np.abs(safe_div(c[f"hit_a_{k}"], c[f"n_a_{k}"]) - safe_div(c[f"hit_b_{k}"], c[f"n_b_{k}"])) / 2
            for k in ("orig", "swap")]
    p_cat = [safe_div(c[f"n_cat_{k}"], 2 * c["n_both"]) for k in ("a", "b", "tie")]
    p_e = p_cat[0] ** 2 + p_cat[1] ** 2 + p_cat[2] ** 2
    measures = {
        "accuracy_original_order": (acc0, "items_orig"), "accuracy_swapped_order": (acc1, "items_swap"),
        "accuracy_average": ((acc0 + acc1) / 2, "items_either"),
        "accuracy_both_orders": (safe_div(c["hit_both"], c["n_both_gold"]), "items_both_gold"),
        "position_consistency": (safe_div(c["n_equal"], c["n_both"]), "items_both"),
        "first_position_preference": (safe_div(c["n_first"], c["n_decisive"]), "items_decisive"),
        "rstd": ((stds[0] + stds[1]) / 2, "items_either"),
        "fleiss_kappa": (safe_div(safe_div(c["n_equal"], c["n_both"]) - p_e, 1 - p_e), "items_both"),
    }
    parts = []
    for name, (est, n) in measures.items():
        part = counts[keys].copy()
        part["measure"], part["estimate"], part["n"] = name, est, counts[n].to_numpy(dtype=np.int64)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
