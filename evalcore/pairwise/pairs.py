"""The per-pair data: one system pair's verdicts per item, the humans' label per item, and counts.

Everything that reads pairwise comparisons one system pair at a time starts here: the win
rates of :mod:`evalcore.pairwise.winrate` (BWRS, Dawid-Skene) and, later, position bias and
superficial-quality subtraction.

Conventions (Gao et al. 2024): label 0 means the first generator (``system_a``) wins.
A row comparing the pair the other way round has its winner flipped.

Ties. A rater's verdict on an item combines all its rows for that item ("swap and sum",
Gao et al. App. B): each row votes for A or B, and the side with more votes wins; equal
votes are a tie. Humans are combined the same way (their majority). ``ties`` decides
what a tie becomes:

* ``"drop"`` (default): a judge's tie is a missing verdict, and an item whose humans tie
  has no human label.
* ``"random"``: a tie becomes A or B by a seeded coin flip, as the authors do for the
  judges' swap-and-sum ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..errors import DataError
from ..stats import safe_div

__all__ = [
    "TIES", "NotApplicable", "PairData", "Counts", "pairs", "pair_data", "label_mask", "accuracy_counts",
]

TIES = ("drop", "random")


class NotApplicable(DataError):
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
        ``int8`` array (items): the human majority, 0 / 1, or -1 (no human label).
    ties
        How ties were handled (:data:`TIES`).
    judge_ties, human_ties
        How many tie verdicts there were (per judge; items whose humans tied).
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


def _votes(sub: pd.DataFrame, flip: np.ndarray) -> np.ndarray:
    """+1 for a row preferring A of the pair, -1 for B, 0 for a tie."""
    w = sub["winner"].to_numpy(dtype=object)
    v = np.where(w == "a", 1, np.where(w == "b", -1, 0))
    return np.where(flip, -v, v)


def _require_pairs(comparisons: pd.DataFrame) -> None:
    missing = [c for c in ("system_a", "system_b", "winner", "rater", "rater_kind", "item_id")
               if c not in comparisons.columns]
    if missing:
        raise NotApplicable(
            "win rates need the two generators of every comparison, and this table has no "
            + ", ".join(f"'{c}'" for c in missing) + " column",
            fix="map the columns naming the two systems to system_a and system_b on the Data page, "
                "or use a preset that knows them (pandalm)")


def pairs(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The system pairs in a comparisons table, one row per unordered pair.

    Each pair is oriented as most of its rows show it (``system_a`` first). Columns:
    ``system_a, system_b, n_items, n_judge_rows, n_human_rows, judges`` (comma-joined).
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


def pair_data(comparisons: pd.DataFrame, system_a: str, system_b: str, *, judges: Sequence[str] | None = None,
              ties: str = "drop", seed: int = 0) -> PairData:
    """Collect the verdicts on one system pair, one row per item.

    Rows comparing ``(system_a, system_b)`` in either order are used; a row with the
    systems the other way round has its winner flipped. Each rater's rows on an item are
    summed (swap-and-sum); humans give their majority.

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
        Seeds the coin flips of ``ties="random"``.

    Raises
    ------
    NotApplicable
        No such pair, no judge verdicts, or an unknown judge.
    """
    _require_pairs(comparisons)
    if ties not in TIES:
        raise DataError(f"unknown tie handling '{ties}'", fix="use " + " or ".join(TIES))
    sa, sb = comparisons["system_a"].astype(str), comparisons["system_b"].astype(str)
    fwd = (sa == system_a) & (sb == system_b)
    rev = (sa == system_b) & (sb == system_a)
    sub = comparisons.loc[(fwd | rev).to_numpy()]
    if sub.empty:
        known = pairs(comparisons)
        names = "; ".join(f"{r.system_a} vs {r.system_b}" for r in known.itertuples())
        raise NotApplicable(f"no comparisons of {system_a} against {system_b}", fix=f"pick one of: {names}")
    flip = rev.to_numpy()[(fwd | rev).to_numpy()]
    votes = _votes(sub, flip)
    kind = sub["rater_kind"].astype(str).to_numpy()
    rater = sub["rater"].astype(str).to_numpy()
    item = sub["item_id"].astype(str).to_numpy()
    have = sorted(set(rater[kind == "judge"]))
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
    items, item_code = np.unique(item, return_inverse=True)
    rng = np.random.default_rng(seed)
    n = len(items)

    def combine(mask: np.ndarray) -> tuple[np.ndarray, int]:
        total = np.zeros(n, dtype=np.int64)
        seen = np.zeros(n, dtype=bool)
        np.add.at(total, item_code[mask], votes[mask])
        seen[item_code[mask]] = True
        out = np.full(n, -1, dtype=np.int8)
        out[seen & (total > 0)] = 0
        out[seen & (total < 0)] = 1
        tied = seen & (total == 0)
        if ties == "random":
            out[tied] = rng.integers(0, 2, int(tied.sum()), dtype=np.int8)
        return out, int(tied.sum())

    verdicts = np.full((n, len(use)), -1, dtype=np.int8)
    judge_ties = []
    for j, name in enumerate(use):
        verdicts[:, j], t = combine((kind == "judge") & (rater == name))
        judge_ties.append(t)
    human, human_ties = combine(kind == "human")
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
