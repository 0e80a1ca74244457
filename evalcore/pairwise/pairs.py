"""The per-pair data: one system pair's verdicts per item, the humans' label per item, and counts.

Everything that reads pairwise comparisons one system pair at a time starts here: the win
rates of :mod:`evalcore.pairwise.winrate` (BWRS, Dawid-Skene) and, later, position bias and
superficial-quality subtraction.

Conventions (Gao et al. 2024): label 0 means the first generator (``system_a``) wins.
A row comparing the pair the other way round has its winner flipped.

A judge's verdict. A judge's verdict on an item combines all its rows for that item ("swap
and sum", Gao et al. App. B): each row votes for A or B, and the side with more votes wins;
equal votes are a tie.

The humans' label. Each annotator's rows on an item are combined the same way into their
own verdict (a, b or tie); the item's label is the **strict majority** of those verdicts
(:func:`evalcore.labels.strict_majority`, the one human label of evalcore): ``(b, tie, tie)``
is a tie, and so is an item where no verdict has more than half the annotators.

Unparsed outputs. Rows marked ``invalid`` (a judge output that could not be read as a
verdict; ``winner`` is empty) are missing verdicts here, exactly as if they were absent.
:func:`evalcore.pairwise.accuracy.judge_accuracy` can count them as wrong instead.

``ties`` decides what a tie becomes:

* ``"drop"`` (default): a judge's tie is a missing verdict, and an item whose humans tie
  (or have no strict majority) has no human label.
* ``"random"``: a tie becomes A or B by a seeded coin flip, as the authors do for the
  judges' swap-and-sum ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import errors
from ..arguments import takes_table
from ..columns import COMPARISONS
from ..errors import DataError
from ..labels import strict_majority
from ..stats.bootstrap import root_seed
from ..stats.numeric import safe_div

__all__ = [
    "TIES", "VERDICTS", "INVALID", "NotApplicable", "PairData", "Counts", "pairs", "pair_data", "label_mask",
    "accuracy_counts", "invalid_mask", "votes", "rater_verdicts", "human_labels", "pair_from_patterns",
    "select_judges",
]

TIES = ("drop", "random")
#: A rater's verdict on an item, coded as the index into this tuple (``a`` = the unit's first system).
VERDICTS = ("a", "b", "tie")
#: The code of a rater whose every row on the item is an unparsed output (``invalid``).
INVALID = 3


class NotApplicable(errors.NotApplicable):
    """The method cannot run on these data or with this prior (the message says why)."""



@dataclass(frozen=True, eq=False)
class PairData:
    """One system pair's verdicts, one row per item (Gao et al.'s label convention).

    Attributes
    ----------
    system_a, system_b
        The pair; label 0 means ``system_a`` is better.
    judges
        Judge names, the columns of ``verdicts``.
    item_ids
        Item ids, the rows.
    verdicts
        ``int8`` array (items x judges): 0 = A wins, 1 = B wins, -1 = no verdict.
    human
        ``int8`` array (items): the humans' strict majority, 0 / 1, or -1 (no human label:
        no human verdict, or a tie dropped).
    ties
        How ties were handled (:data:`TIES`).
    judge_ties, human_ties
        How many tie verdicts there were (per judge; items whose humans' strict majority is a
        tie or who have none).
    """

    system_a: str
    system_b: str
    judges: tuple[str, ...]
    item_ids: np.ndarray
    verdicts: np.ndarray
    human: np.ndarray
    ties: str = "drop"
    judge_ties: tuple[int, ...] = ()
    human_ties: int = 0

    @property
    def n_items(self) -> int:
        return int(len(self.item_ids))

    @property
    def n_human(self) -> int:
        """Items with a human label (after tie handling)."""
        return int((self.human >= 0).sum())

    @property
    def k_observed(self) -> float:
        """Share of all judge verdicts that prefer A (Gao et al. Eq. 4, pooled over judges)."""
        v = self.verdicts[self.verdicts >= 0]
        return float(np.mean(v == 0)) if v.size else math.nan

    @property
    def p_human(self) -> float:
        """Share of human-labelled items on which the humans prefer A (NaN without labels)."""
        h = self.human[self.human >= 0]
        return float(np.mean(h == 0)) if h.size else math.nan

    def judge_k(self) -> np.ndarray:
        """Each judge's observed win rate (NaN for a judge without verdicts)."""
        n = (self.verdicts >= 0).sum(axis=0)
        s = (self.verdicts == 0).sum(axis=0)
        return safe_div(s, n)

    def flipped(self) -> "PairData":
        """The same data seen from B's side (``p -> 1 - p``, ``q0 <-> q1``)."""
        flip = lambda a: np.where(a >= 0, 1 - a, a).astype(np.int8)  # noqa: E731
        return replace(self, system_a=self.system_b, system_b=self.system_a,
                       verdicts=flip(self.verdicts), human=flip(self.human))


def votes(winner, flip=None) -> np.ndarray:
    """Each row's vote: +1 for A of the pair, -1 for B, 0 for a tie (or an empty winner).

    ``flip`` marks rows that name the pair the other way round; their vote changes sign.
    """
    w = pd.Series(winner, dtype="string").to_numpy(dtype=object, na_value="")
    v = np.where(w == "a", 1, np.where(w == "b", -1, 0))
    return v if flip is None else np.where(flip, -v, v)


def invalid_mask(comparisons: pd.DataFrame) -> np.ndarray:
    """The rows marked ``invalid`` (unparsed judge outputs, ``winner`` empty); all False without the column."""
    if "invalid" not in comparisons.columns:
        return np.zeros(len(comparisons), dtype=bool)
    return comparisons["invalid"].astype("boolean").fillna(False).to_numpy(dtype=bool)


def rater_verdicts(unit: np.ndarray, rater: np.ndarray, vote: np.ndarray,
                   invalid: np.ndarray | None = None, *,
                   any_invalid: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each rater's own verdict on each unit, by swap and sum over its rows.

    Parameters
    ----------
    unit, rater
        Non-negative integer codes of each row's unit (item) and rater.
    vote
        Each row's vote (:func:`votes`).
    invalid
        Rows that are unparsed outputs: they do not vote.
    any_invalid
        The verdict is :data:`INVALID` when any row of the rater on the unit is unparsed (LLMBar's
        count: an item is right in both orders only if both outputs parsed), not only when all are.

    Returns
    -------
    tuple of arrays
        ``(unit, rater, verdict)`` for each distinct (unit, rater): the verdict is 0 (a),
        1 (b), 2 (tie: equal votes) or :data:`INVALID` (every row of the rater on the unit
        is unparsed; with ``any_invalid``, any row).
    """
    unit, rater = np.asarray(unit, dtype=np.int64), np.asarray(rater, dtype=np.int64)
    bad = np.zeros(len(unit), dtype=bool) if invalid is None else np.asarray(invalid, dtype=bool)
    width = int(rater.max()) + 1 if len(rater) else 1
    key, inv = np.unique(unit * width + rater, return_inverse=True)
    total = np.bincount(inv, weights=np.where(bad, 0, vote), minlength=len(key))
    parsed = np.bincount(inv, weights=(~bad).astype(float), minlength=len(key))
    unusable = (np.bincount(inv, weights=bad.astype(float), minlength=len(key)) > 0) if any_invalid else parsed == 0
    verdict = np.where(unusable, INVALID, np.where(total > 0, 0, np.where(total < 0, 1, 2)))
    return key // width, key % width, verdict.astype(np.int64)


def human_labels(n_units: int, unit: np.ndarray, rater: np.ndarray, vote: np.ndarray,
                 invalid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The humans' label of each unit: the strict majority of the annotators' own verdicts.

    Each annotator's rows on a unit give one verdict (:func:`rater_verdicts`); the label is
    the verdict of more than half of the annotators with a verdict
    (:func:`evalcore.labels.strict_majority` over ``(a, b, tie)``).

    Returns
    -------
    tuple of arrays
        ``label``: 0 (a), 1 (b), 2 (tie) or -1 (no strict majority, or no human verdict);
        ``seen``: whether any human gave the unit a verdict.
    """
    u, _, verdict = rater_verdicts(unit, rater, vote, invalid)
    ok = verdict != INVALID
    counts = np.zeros((n_units, len(VERDICTS)), dtype=np.int64)
    np.add.at(counts, (u[ok], verdict[ok]), 1)
    return strict_majority(counts), counts.sum(axis=1) > 0


def _require_pairs(comparisons: pd.DataFrame) -> None:
    missing = [c for c in ("system_a", "system_b", "winner", "rater", "rater_kind", "item_id")
               if c not in comparisons.columns]
    if missing:
        systems = [c for c in missing if c in ("system_a", "system_b")]
        if systems:
            raise NotApplicable(
                "win rates compare two systems, and this table does not name the systems that wrote its outputs "
                "(no " + " or ".join(f"'{c}'" for c in systems) + " column)",
                fix="if your file names them, map the columns naming the two systems to system_a and system_b "
                    "(--map COLUMN=system_a --map COLUMN=system_b), or use a preset that knows them (pandalm); a "
                    "file without systems, such as LLMBar's, has no win rate, and its judges' accuracy against the "
                    "gold verdicts is on the Position bias page (CLI: evalcore winrate --accuracy)")
        raise NotApplicable("win rates need the columns " + ", ".join(f"'{c}'" for c in missing) + ", and this "
                            "table has none of them", fix="load a validated comparisons table")


@takes_table(COMPARISONS)
def pairs(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The system pairs in a comparisons table, one row per unordered pair.

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    item, rater, kind, winner, system_a, system_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per pair, oriented as most of its rows show it (``system_a`` first): ``system_a, system_b,
        n_items, n_judge_rows, n_human_rows, judges`` (comma-joined).

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> print(pairs(comparisons).drop(columns="judges").head(3).to_string(index=False))
      system_a  system_b  n_items  n_judge_rows  n_human_rows
    cirrus-70b  atlas-7b      150           900           340
      atlas-7b dune-8x7b      150           900           346
      atlas-7b ember-34b      150           900           344
    """
    _require_pairs(comparisons)
    df = comparisons.dropna(subset=["system_a", "system_b"])
    df = df[df["system_a"] != df["system_b"]]
    if df.empty:
        raise NotApplicable("no comparison names two different systems", fix="check the system_a and system_b columns")
    a = df["system_a"].astype(str).to_numpy()
    b = df["system_b"].astype(str).to_numpy()
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    frame = pd.DataFrame({"lo": lo, "hi": hi, "a": a, "item": df["item_id"].astype(str).to_numpy(),
                          "judge": (df["rater_kind"] == "judge").to_numpy(),
                          "rater": df["rater"].astype(str).to_numpy()})
    out = []
    for (l, h), g in frame.groupby(["lo", "hi"], sort=True):
        first = l if (g["a"] == l).sum() >= (g["a"] == h).sum() else h
        second = h if first == l else l
        out.append({"system_a": first, "system_b": second, "n_items": g["item"].nunique(),
                    "n_judge_rows": int(g["judge"].sum()), "n_human_rows": int((~g["judge"]).sum()),
                    "judges": ", ".join(sorted(g.loc[g["judge"], "rater"].unique()))})
    return pd.DataFrame(out)


def _pair_rows(comparisons: pd.DataFrame, system_a: str, system_b: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The parsed rows comparing the pair in either order, and which of them name it reversed."""
    sa, sb = comparisons["system_a"].astype(str), comparisons["system_b"].astype(str)
    fwd = ((sa == system_a) & (sb == system_b)).to_numpy()
    rev = ((sa == system_b) & (sb == system_a)).to_numpy()
    if not (fwd | rev).any():
        known = pairs(comparisons)
        names = "; ".join(f"{r.system_a} vs {r.system_b}" for r in known.itertuples())
        raise NotApplicable(f"no comparisons of {system_a} against {system_b}", fix=f"pick one of: {names}")
    use = (fwd | rev) & ~invalid_mask(comparisons)
    return comparisons.loc[use], rev[use]


def _judges_to_use(have: list[str], judges: Sequence[str] | None, system_a: str, system_b: str) -> tuple[str, ...]:
    if judges is None:
        use = tuple(have)
    else:
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise NotApplicable(f"{', '.join(unknown)} did not judge {system_a} against {system_b}",
                                fix="pick from: " + ", ".join(have) if have else "add judge rows for this pair")
        use = tuple(dict.fromkeys(judges))
    if not use:
        raise NotApplicable(f"no judge compared {system_a} with {system_b}",
                            fix="mark the LLM judges' rows with rater_kind 'judge'")
    return use


def pair_data(comparisons: pd.DataFrame, system_a: str, system_b: str, *, judges: Sequence[str] | None = None,
              ties: str = "drop", seed: int = 0) -> PairData:
    """Collect the verdicts on one system pair, one row per item.

    Rows comparing ``(system_a, system_b)`` in either order are used; a row with the
    systems the other way round has its winner flipped. Each judge's rows on an item are
    summed (swap-and-sum); the humans give their strict majority (module docstring).
    Rows marked ``invalid`` (unparsed outputs) are left out: a missing verdict.

    Parameters
    ----------
    comparisons
        A canonical ``comparisons`` table with ``system_a`` and ``system_b``.
    system_a, system_b
        The pair; ``p`` is the share of items on which ``system_a`` is better.
    judges
        Judges to use (default: every judge that rated this pair).
    ties
        ``"drop"`` or ``"random"`` (see the module docstring).
    seed
        Seeds the coin flips of ``ties="random"`` (a whole number, 0 or more).

    Raises
    ------
    NotApplicable
        No such pair, no judge verdicts, or an unknown judge.
    """
    _require_pairs(comparisons)
    if ties not in TIES:
        raise DataError(f"unknown tie handling '{ties}'", fix="use " + " or ".join(TIES))
    rng = np.random.default_rng(root_seed(seed))
    sub, flip = _pair_rows(comparisons, system_a, system_b)
    vote = votes(sub["winner"], flip)
    kind = sub["rater_kind"].astype(str).to_numpy()
    rater = sub["rater"].astype(str).to_numpy()
    items, item_code = np.unique(sub["item_id"].astype(str).to_numpy(), return_inverse=True)
    use = _judges_to_use(sorted(set(rater[kind == "judge"])), judges, system_a, system_b)
    n = len(items)

    def settle(out: np.ndarray, tied: np.ndarray) -> tuple[np.ndarray, int]:
        if ties == "random":
            out[tied] = rng.integers(0, 2, int(tied.sum()), dtype=np.int8)
        return out, int(tied.sum())

    def judge_verdicts(mask: np.ndarray) -> tuple[np.ndarray, int]:
        total = np.zeros(n, dtype=np.int64)
        seen = np.zeros(n, dtype=bool)
        np.add.at(total, item_code[mask], vote[mask])
        seen[item_code[mask]] = True
        out = np.full(n, -1, dtype=np.int8)
        out[seen & (total > 0)] = 0
        out[seen & (total < 0)] = 1
        return settle(out, seen & (total == 0))

    verdicts = np.full((n, len(use)), -1, dtype=np.int8)
    judge_ties = []
    for j, name in enumerate(use):
        verdicts[:, j], t = judge_verdicts((kind == "judge") & (rater == name))
        judge_ties.append(t)
    hm = kind == "human"
    label, seen = human_labels(n, item_code[hm], pd.factorize(rater[hm])[0], vote[hm])
    human = np.where(label == 0, 0, np.where(label == 1, 1, -1)).astype(np.int8)
    human, human_ties = settle(human, seen & (human < 0))
    return PairData(system_a=system_a, system_b=system_b, judges=use, item_ids=items, verdicts=verdicts,
                    human=human, ties=ties, judge_ties=tuple(judge_ties), human_ties=human_ties)


def label_mask(pair: PairData, ratio: float, *, seed: int) -> np.ndarray:
    """A seeded random share ``ratio`` of the pair's human-labelled items (boolean, per item).

    The subsets are nested: the items used at a ratio are also used at every higher
    ratio with the same seed, so moving the slider up only adds labels.
    """
    labelled = np.flatnonzero(pair.human >= 0)
    order = np.random.default_rng(seed).permutation(labelled)
    m = int(round(float(ratio) * len(labelled)))
    mask = np.zeros(pair.n_items, dtype=bool)
    mask[order[:m]] = True
    return mask


def pair_from_patterns(system_a: str, system_b: str, judges: Sequence[str], verdicts: np.ndarray,
                       human: np.ndarray, counts: np.ndarray, *, n_items: int | None = None,
                       ties: str = "drop") -> PairData:
    """A :class:`PairData` rebuilt from distinct verdict patterns and their counts.

    Why: an engine (:func:`evalcore.engines.pairwise.verdict_patterns`) returns only the counts of the
    distinct patterns, never the rows. BWRS and Dawid-Skene depend on the data only through those
    counts, so expanding each pattern into as many items as it counts gives them exactly the data the
    in-process path gives: the same fitting code runs, not a second copy of the models. The expansion
    costs one byte per item and judge and nine per item (the judgments' rows, texts and raters are
    never loaded).

    Parameters
    ----------
    system_a, system_b, judges
        The pair and its judges (the columns of ``verdicts``).
    verdicts
        Patterns x judges: 0 (A wins), 1 (B wins), -1 (no verdict).
    human
        Per pattern, the humans' label 0 / 1, or -1.
    counts
        Per pattern, how many items show it.
    n_items
        The pair's items, when more items than the patterns count exist (items without any
        verdict or label, which engines leave out); they are added as empty rows (all -1).
    ties
        Recorded on the result; the patterns must already have their ties settled.

    Returns
    -------
    PairData
        Items in pattern order, each pattern's items together; ``item_ids`` are their positions
        (the items' own ids do not come back from the engine). ``judge_ties`` and ``human_ties``
        are not in the patterns (a tie is already a missing verdict or label there): they are set
        to 0, and no estimate reads them.
    """
    if ties not in TIES:
        raise DataError(f"unknown tie handling '{ties}'", fix="use " + " or ".join(TIES))
    v = np.asarray(verdicts, dtype=np.int8).reshape(len(counts), len(judges))
    h = np.asarray(human, dtype=np.int8).reshape(len(counts))
    w = np.asarray(counts, dtype=np.int64)
    if (w < 0).any():
        raise DataError("a verdict pattern has a negative count", fix="give the counts of the patterns")
    v, h = np.repeat(v, w, axis=0), np.repeat(h, w)
    extra = 0 if n_items is None else int(n_items) - len(h)
    if extra < 0:
        raise DataError(f"the patterns count {len(h)} items, more than the pair's {n_items}",
                        fix="give the pair's number of items, or none")
    if extra:
        v = np.concatenate([v, np.full((extra, len(judges)), -1, dtype=np.int8)])
        h = np.concatenate([h, np.full(extra, -1, dtype=np.int8)])
    return PairData(system_a=str(system_a), system_b=str(system_b), judges=tuple(judges),
                    item_ids=np.arange(len(h)), verdicts=v, human=h, ties=ties,
                    judge_ties=(0,) * len(judges), human_ties=0)


def select_judges(pair: PairData, judges: Sequence[str] | None) -> PairData:
    """``pair`` with only ``judges``' verdicts, in the order given, as :func:`pair_data` selects them.

    Why: data collected once for all judges (e.g. from an engine) answer a ``--judge`` choice with the
    same checks and order as :func:`pair_data`. ``judges=None`` keeps every judge.

    Raises
    ------
    NotApplicable
        A judge that did not judge the pair, or a pair without any judge.
    """
    use = _judges_to_use(list(pair.judges), judges, pair.system_a, pair.system_b)
    idx = [pair.judges.index(j) for j in use]
    jt = tuple(pair.judge_ties[i] for i in idx) if len(pair.judge_ties) == len(pair.judges) else ()
    return replace(pair, judges=use, verdicts=pair.verdicts[:, idx], judge_ties=jt)


@dataclass(frozen=True)
class Counts:
    """Per-judge accuracy counts on human-labelled items (Algorithm 1, lines 3-8).

    ``n0`` items humans say A wins and ``s0`` of them the judge also says A; ``n1``/``s1``
    the same for B. Arrays align with ``judges``.
    """

    judges: tuple[str, ...]
    n0: np.ndarray
    s0: np.ndarray
    n1: np.ndarray
    s1: np.ndarray
    source: str = ""

    def for_judges(self, judges: Sequence[str]) -> "Counts":
        """The counts reordered to ``judges``; a judge missing here gets zeros."""
        idx = {j: i for i, j in enumerate(self.judges)}
        take = lambda a: np.array([a[idx[j]] if j in idx else 0 for j in judges], dtype=float)  # noqa: E731
        return Counts(tuple(judges), take(self.n0), take(self.s0), take(self.n1), take(self.s1), self.source)


def accuracy_counts(pair: PairData, mask: np.ndarray | None = None, *, source: str = "") -> Counts:
    """Count each judge's agreements with the human labels of the items in ``mask`` (default: all)."""
    use = pair.human >= 0 if mask is None else (np.asarray(mask, dtype=bool) & (pair.human >= 0))
    v, h = pair.verdicts[use], pair.human[use][:, None]
    seen = v >= 0
    n0 = ((h == 0) & seen).sum(axis=0)
    n1 = ((h == 1) & seen).sum(axis=0)
    s0 = ((h == 0) & (v == 0)).sum(axis=0)
    s1 = ((h == 1) & (v == 1)).sum(axis=0)
    return Counts(pair.judges, n0.astype(float), s0.astype(float), n1.astype(float), s1.astype(float),
                  source or f"{pair.system_a} vs {pair.system_b}")
