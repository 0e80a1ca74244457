"""Calibrated win rates: BWRS and a Bayesian Dawid-Skene model (Gao et al. 2024).

A judge's observed win rate ``k`` of generator A over generator B is biased whenever
the judge is imperfect (Gao et al., Eq. 9)::

    k = p * q0 + (1 - p) * (1 - q1)

where ``p`` is the true win rate (the share of items on which humans prefer A),
``q0 = P(judge says A | A is better)`` and ``q1 = P(judge says B | B is better)``.
This module estimates ``p`` two ways:

* :func:`bwrs`, Bayesian Win Rate Sampling (their Algorithm 1): Beta posteriors of
  ``k``, ``q0`` and ``q1`` give samples of ``p = (k + q1 - 1) / (q0 + q1 - 1)`` (Eq. 11).
* :func:`dawid_skene`, their Model 1 with the true labels **marginalised out exactly**
  and written as a PyMC model; nutpie samples it through the same log density compiled
  by numba (:mod:`evalcore.pairwise._dskernel`). Given the judges' accuracies, the verdicts of the judges on one
  item are independent, so an item's likelihood is a two-term mixture::

      P(t_i) = p * prod_e q0_e^[t_ie=A] (1-q0_e)^[t_ie=B]
             + (1-p) * prod_e q1_e^[t_ie=B] (1-q1_e)^[t_ie=A]

  and an item with a used human label keeps only its own term. The likelihood depends on
  the data only through the counts of distinct verdict patterns, so the data are
  compressed to those counts first: a fit costs the same for a thousand items or a
  million. The authors sampled the discrete labels with Binary Gibbs-Metropolis (about
  10 minutes per pair); :func:`dawid_skene_reference` is that model, kept as the
  reference the benchmark and tests compare against.

Conventions (Gao et al.): label 0 means the first generator (``system_a``) wins, and
``p = P(human says 0)``. (Their Model 1 pseudocode draws ``h ~ Bernoulli(p)`` and uses
``q1`` when ``h = 1``, the mirror image of Eq. 9; we keep Eq. 9's reading throughout.)

Ties. A rater's verdict on an item combines all its rows for that item ("swap and sum",
Gao et al. App. B): each row votes for A or B, and the side with more votes wins; equal
votes are a tie. Humans are combined the same way (their majority). ``ties`` decides
what a tie becomes:

* ``"drop"`` (default): a judge's tie is a missing verdict, and an item whose humans tie
  has no human label. ``p`` is then the win rate among items humans do not call a tie.
* ``"random"``: a tie becomes A or B by a seeded coin flip, as the authors do for the
  judges' swap-and-sum ties.

Prior settings (Gao et al. Sec. 4.3), see :class:`Prior`:

* ``none``: ``q0, q1 ~ Beta(2, 1)``. Not applicable to BWRS (their footnote 4).
* ``ratio:R``: human labels on a seeded random share ``R`` of the human-labelled items
  enter as observed labels (DS) or as the data ``F`` of Algorithm 1 (BWRS).
* ``ood:A2,B2``: another system pair's human labels give each judge's accuracy prior,
  ``Beta((2 s + 2) / (n + 2), (2 (n - s) + 2) / (n + 2))`` (Eqs. 12-13, total
  concentration 2) for DS, and the data ``F`` for BWRS.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = [
    "TIES", "METHODS", "NotApplicable", "Prior", "PairData", "Counts", "JudgeAccuracy", "WinRate",
    "parse_prior", "pairs", "pair_data", "label_mask", "accuracy_counts", "closest_pair", "orient_like",
    "bwrs", "dawid_skene", "dawid_skene_reference", "estimate", "estimate_all", "error_curve",
    "summarize_samples", "warm_up", "is_compiled", "results_frame", "judges_table", "mean_errors",
]

TIES = ("drop", "random")
METHODS = ("bwrs", "ds")

_RHAT_MAX = 1.01
_ESS_MIN = 400  # the usual floor for 4 chains (Vehtari et al. 2021); below it intervals are unreliable
_VALID_MIN = 0.5  # BWRS: warn when fewer than half of the samples give a p in (0, 1)
_NEAR_CHANCE = 0.1  # BWRS: warn when q0 + q1 - 1 is this close to 0
_GRID = np.linspace(0.0, 1.0, 201)


class NotApplicable(DataError):
    """The method cannot run on these data or with this prior (the message says why)."""


# --------------------------------------------------------------------------- priors


@dataclass(frozen=True)
class Prior:
    """Where the judges' accuracy information comes from (Gao et al. Sec. 4.3).

    Attributes
    ----------
    kind
        ``"none"``, ``"ratio"`` (in-distribution human labels) or ``"ood"``.
    ratio
        For ``"ratio"``: the share (0-1) of the pair's human-labelled items whose labels are used.
    ood
        For ``"ood"``: the other pair ``(system_a, system_b)`` whose human labels set the prior.
    """

    kind: str = "none"
    ratio: float = 0.0
    ood: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("none", "ratio", "ood"):
            raise DataError(f"unknown prior '{self.kind}'", fix="use none, ratio:R (0 to 1) or ood:A2,B2")
        if self.kind == "ratio" and not (0.0 <= self.ratio <= 1.0):
            raise DataError(f"the prior data ratio {self.ratio} is not between 0 and 1",
                            fix="give a share of items such as ratio:0.3")
        if self.kind == "ood" and (self.ood is None or len(self.ood) != 2):
            raise DataError("an out-of-distribution prior needs another system pair", fix="write ood:A2,B2")

    @property
    def label(self) -> str:
        """The prior as the CLI writes it: ``none``, ``ratio:0.3`` or ``ood:A2,B2``."""
        if self.kind == "ratio":
            return f"ratio:{self.ratio:g}"
        if self.kind == "ood":
            return f"ood:{self.ood[0]},{self.ood[1]}"
        return "none"


def parse_prior(text: str) -> Prior:
    """Read ``none``, ``ratio:R`` or ``ood:A2,B2`` (the CLI's ``--prior``)."""
    text = (text or "").strip()
    head, _, rest = text.partition(":")
    head = head.strip().lower()
    if head == "none" and not rest:
        return Prior("none")
    if head == "ratio":
        try:
            ratio = float(rest)
        except ValueError:
            raise DataError(f"'{text}' has no number after ratio:", fix="write ratio:0.3 for 30% of the human labels") from None
        return Prior("ratio", ratio=ratio)
    if head == "ood":
        parts = [s.strip() for s in rest.split(",")]
        if len(parts) != 2 or not all(parts):
            raise DataError(f"'{text}' does not name two systems", fix="write ood:A2,B2 with the other pair's systems")
        return Prior("ood", ood=(parts[0], parts[1]))
    raise DataError(f"unknown prior '{text}'", fix="use none, ratio:R (0 to 1) or ood:A2,B2")


# --------------------------------------------------------------------------- data


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
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.maximum(n, 1), np.nan)

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


def closest_pair(comparisons: pd.DataFrame, system_a: str, system_b: str, *, ties: str = "drop",
                 seed: int = 0) -> tuple[str, str] | None:
    """The other pair with human labels whose observed win rate is closest (Gao et al. Sec. 4.3).

    Distance is ``|k_other - k|`` in either orientation of the other pair (a prior on
    accuracies does not depend on which system is named first). None when no other pair
    has human labels.
    """
    target = pair_data(comparisons, system_a, system_b, ties=ties, seed=seed).k_observed
    best, best_d = None, math.inf
    for r in pairs(comparisons).itertuples():
        if {r.system_a, r.system_b} == {system_a, system_b} or r.n_human_rows == 0 or r.n_judge_rows == 0:
            continue
        k = pair_data(comparisons, r.system_a, r.system_b, ties=ties, seed=seed).k_observed
        for kk, cand in ((k, (r.system_a, r.system_b)), (1 - k, (r.system_b, r.system_a))):
            if abs(kk - target) < best_d:
                best, best_d = cand, abs(kk - target)
    return best


def orient_like(comparisons: pd.DataFrame, system_a: str, system_b: str, other: tuple[str, str], *,
                ties: str = "drop", seed: int = 0) -> tuple[str, str]:
    """``other`` in the orientation whose raw win rate is closer to this pair's.

    An OOD prior carries q0 (accuracy when the first system is better) and q1; judges tend
    to be more accurate on the side of the stronger system (Gao et al. Sec. 5.1), so the
    other pair is read in the direction that resembles this one.
    """
    k = pair_data(comparisons, system_a, system_b, ties=ties, seed=seed).k_observed
    k2 = pair_data(comparisons, other[0], other[1], ties=ties, seed=seed).k_observed
    return (other[0], other[1]) if abs(k2 - k) <= abs((1 - k2) - k) else (other[1], other[0])


# --------------------------------------------------------------------------- results


def summarize_samples(samples: np.ndarray) -> dict[str, Any]:
    """Mean, KDE mode, 95% equal-tailed interval and a density curve of posterior samples of p.

    The mode is the maximum of a Gaussian KDE with Scott's bandwidth (statsmodels'
    FFT KDE), as Gao et al. estimate p by the KDE's mean and mode. The mean of a
    Gaussian KDE equals the sample mean.
    """
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return {"mean": math.nan, "mode": math.nan, "low": math.nan, "high": math.nan, "x": [], "density": []}
    low, high = np.quantile(x, [0.025, 0.975])
    if np.ptp(x) < 1e-12:
        mode, dens = float(x[0]), np.where(np.abs(_GRID - x[0]) < 0.0025, 200.0, 0.0)
    else:
        from statsmodels.nonparametric.kde import KDEUnivariate

        kde = KDEUnivariate(x)
        kde.fit(kernel="gau", bw="scott", fft=True, gridsize=2048)
        mode = float(kde.support[np.argmax(kde.density)])
        dens = np.interp(_GRID, kde.support, kde.density, left=0.0, right=0.0)
    return {"mean": float(x.mean()), "mode": mode, "low": float(low), "high": float(high),
            "x": _GRID.tolist(), "density": dens.tolist()}


@dataclass(frozen=True)
class JudgeAccuracy:
    """One judge's accuracies on the pair: counts on the labels used and posterior summaries."""

    judge: str
    k: float  # the judge's own observed win rate
    n_verdicts: int
    n0: float
    s0: float
    n1: float
    s1: float
    q0_mean: float
    q0_low: float
    q0_high: float
    q1_mean: float
    q1_low: float
    q1_high: float
    p_mean: float = math.nan  # BWRS: this judge's own estimate of p
    p_mode: float = math.nan
    p_low: float = math.nan
    p_high: float = math.nan
    n_valid: int = 0  # BWRS: samples that gave a p in (0, 1)


def _nan_to_none(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (np.floating,)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


@dataclass(frozen=True)
class WinRate:
    """A calibrated win rate of ``system_a`` over ``system_b``.

    ``p_mean``/``p_mode``/``ci_low``/``ci_high`` summarise the posterior (DS) or the valid
    samples (BWRS) of ``p``; ``k_observed`` is the raw judge win rate and ``p_human`` the
    humans' win rate over all their labels (None without labels). ``density`` is a KDE
    of ``p`` on a 0-1 grid, for plots.
    """

    system_a: str
    system_b: str
    method: str
    prior: str
    ties: str
    p_mean: float
    p_mode: float
    ci_low: float
    ci_high: float
    k_observed: float
    p_human: float
    n_items: int
    n_human_labelled: int
    rhat: float
    ess: float
    seconds: float
    judges: tuple[JudgeAccuracy, ...]
    n_samples: int = 0
    n_valid: int = 0
    divergences: int = 0
    warnings: tuple[str, ...] = ()
    density: tuple[tuple[float, ...], tuple[float, ...]] = field(default=((), ()), repr=False)

    def to_record(self, *, density: bool = False) -> dict[str, Any]:
        """The CLI's JSON record (NaN written as null)."""
        rec = {
            "system_a": self.system_a, "system_b": self.system_b, "method": self.method, "prior": self.prior,
            "ties": self.ties, "p_mean": self.p_mean, "p_mode": self.p_mode, "ci_low": self.ci_low,
            "ci_high": self.ci_high, "k_observed": self.k_observed, "p_human": self.p_human,
            "n_items": self.n_items, "n_human_labelled": self.n_human_labelled, "rhat": self.rhat,
            "ess": self.ess, "seconds": self.seconds, "n_samples": self.n_samples, "n_valid": self.n_valid,
            "divergences": self.divergences, "warnings": list(self.warnings),
            "judges": [{k: _nan_to_none(v) for k, v in j.__dict__.items()} for j in self.judges],
        }
        rec = {k: _nan_to_none(v) for k, v in rec.items()}
        if density:
            rec["density"] = {"x": list(self.density[0]), "y": list(self.density[1])}
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> "WinRate":
        """Rebuild from :meth:`to_record` (None back to NaN)."""
        f = lambda v: math.nan if v is None else v  # noqa: E731
        judges = tuple(JudgeAccuracy(**{k: f(v) for k, v in j.items()}) for j in rec["judges"])
        dens = rec.get("density") or {"x": [], "y": []}
        skip = {"judges", "density", "warnings"}
        kw = {k: f(v) for k, v in rec.items() if k not in skip}
        return cls(**kw, judges=judges, warnings=tuple(rec.get("warnings", ())),
                   density=(tuple(dens["x"]), tuple(dens["y"])))

    def to_frame(self) -> pd.DataFrame:
        """One row: the estimate with its interval, n and diagnostics."""
        rec = self.to_record()
        rec["warnings"] = "; ".join(rec["warnings"])
        rec.pop("judges")
        return pd.DataFrame([rec])

    def judges_frame(self) -> pd.DataFrame:
        """One row per judge: counts, posterior q0 and q1 (and BWRS's per-judge p)."""
        return pd.DataFrame([j.__dict__ for j in self.judges])


_NUMERIC = ("p_mean", "p_mode", "ci_low", "ci_high", "k_observed", "p_human", "rhat", "ess", "seconds")


def results_frame(results: Sequence[WinRate]) -> pd.DataFrame:
    """One row per result (pair and method): ``pair``, the estimate and interval, raw k, the humans'
    p, n and diagnostics (``warnings`` joined by '; '). Undefined numbers are NaN."""
    rows = [r.to_frame() for r in results]
    if not rows:
        return pd.DataFrame(columns=["pair", "system_a", "system_b", "method", *_NUMERIC])
    out = pd.concat(rows, ignore_index=True)
    for c in _NUMERIC:
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    out.insert(0, "pair", out["system_a"] + " vs " + out["system_b"])
    return out


def judges_table(results: Sequence[WinRate]) -> pd.DataFrame:
    """The judges' accuracies of several results, one row per method and judge."""
    frames = [r.judges_frame().assign(method=r.method) for r in results]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["method", *[c for c in out.columns if c != "method"]]]


def mean_errors(frame: pd.DataFrame) -> pd.Series:
    """Mean |p_mode - p_human| per method over the rows of :func:`results_frame` with human labels,
    and the raw judge win rate's (index ``observed``)."""
    f = frame[frame["p_human"].notna()]
    if f.empty:
        return pd.Series(dtype=float)
    err = (f["p_mode"] - f["p_human"]).abs().groupby(f["method"]).mean()
    raw = (f.drop_duplicates("pair")["k_observed"] - f.drop_duplicates("pair")["p_human"]).abs().mean()
    return pd.concat([err, pd.Series({"observed": raw})])


# --------------------------------------------------------------------------- BWRS


def _ood_counts(comparisons: pd.DataFrame, prior: Prior, judges: Sequence[str], *, ties: str, seed: int) -> Counts:
    a2, b2 = prior.ood
    other = pair_data(comparisons, a2, b2, ties=ties, seed=seed)
    if other.n_human == 0:
        raise NotApplicable(f"the pair {a2} vs {b2} has no human labels, so it cannot set a prior",
                            fix="pick a pair with human labels for ood:A2,B2")
    return accuracy_counts(other, source=f"{a2} vs {b2}").for_judges(judges)


def bwrs(pair: PairData, *, labelled: np.ndarray | None = None, ood: Counts | None = None, n_samples: int = 10_000,
         seed: int = 0, prior_label: str | None = None) -> WinRate:
    """Bayesian Win Rate Sampling (Gao et al. 2024, Algorithm 1), per judge and pooled.

    For each judge ``e``, with ``n0, s0, n1, s1`` counted on the human-labelled data F
    (the in-distribution items in ``labelled``, or an OOD pair's counts ``ood``) and
    ``s_k`` of ``n_k`` verdicts preferring A::

        q0 ~ Beta(s0 + 1, n0 - s0 + 1),  q1 ~ Beta(s1 + 1, n1 - s1 + 1),
        k  ~ Beta(s_k + 1, n_k - s_k + 1),
        p  = (k + q1 - 1) / (q0 + q1 - 1)                       (Eq. 11)

    Samples with a zero denominator or ``p`` outside (0, 1) are dropped and counted. The
    estimate is the mean and mode of a KDE of the valid samples; the interval is their
    2.5-97.5% quantiles. The pooled estimate mixes the judges' valid samples (each judge
    draws ``n_samples``), so it is an equal-weight average of the per-judge posteriors.

    Raises
    ------
    NotApplicable
        No human-labelled data at all (BWRS needs an informative prior, their footnote 4).
    """
    t0 = time.perf_counter()
    if ood is not None:
        counts, label = ood.for_judges(pair.judges), prior_label or f"ood:{ood.source}"
    else:
        mask = np.zeros(pair.n_items, bool) if labelled is None else np.asarray(labelled, bool)
        counts = accuracy_counts(pair, mask)
        label = prior_label or "ratio"
    if float((counts.n0 + counts.n1).sum()) == 0:
        raise NotApplicable("BWRS needs human labels to estimate the judges' accuracies, and none are used",
                            fix="raise the prior data ratio above 0, or use an out-of-distribution prior, "
                                "or use the Dawid-Skene method, which runs without labels")
    rng = np.random.default_rng(seed)
    k_n = (pair.verdicts >= 0).sum(axis=0)
    k_s = (pair.verdicts == 0).sum(axis=0)
    E = len(pair.judges)
    q0 = rng.beta(counts.s0[:, None] + 1, counts.n0[:, None] - counts.s0[:, None] + 1, size=(E, n_samples))
    q1 = rng.beta(counts.s1[:, None] + 1, counts.n1[:, None] - counts.s1[:, None] + 1, size=(E, n_samples))
    k = rng.beta(k_s[:, None] + 1, k_n[:, None] - k_s[:, None] + 1, size=(E, n_samples))
    den = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (k + q1 - 1) / den
    valid = (den != 0) & (p > 0) & (p < 1) & (k_n[:, None] > 0)
    warnings: list[str] = []
    judges = []
    for e, name in enumerate(pair.judges):
        s = summarize_samples(p[e, valid[e]])
        qs0, qs1 = q0[e], q1[e]
        judges.append(JudgeAccuracy(
            judge=name, k=float(k_s[e] / k_n[e]) if k_n[e] else math.nan, n_verdicts=int(k_n[e]),
            n0=float(counts.n0[e]), s0=float(counts.s0[e]), n1=float(counts.n1[e]), s1=float(counts.s1[e]),
            q0_mean=float(qs0.mean()), q0_low=float(np.quantile(qs0, .025)), q0_high=float(np.quantile(qs0, .975)),
            q1_mean=float(qs1.mean()), q1_low=float(np.quantile(qs1, .025)), q1_high=float(np.quantile(qs1, .975)),
            p_mean=s["mean"], p_mode=s["mode"], p_low=s["low"], p_high=s["high"], n_valid=int(valid[e].sum())))
        share = valid[e].mean()
        if share < _VALID_MIN:
            warnings.append(f"{name}: only {share:.0%} of the samples gave a p between 0 and 1, so its estimate "
                            "rests on few samples; use more human labels")
        near = float(np.mean(den[e] < _NEAR_CHANCE))
        if near > 0.05:
            warnings.append(f"{name}: q0 + q1 may be near 1 (posterior mean {qs0.mean() + qs1.mean():.2f}, "
                            f"P(q0 + q1 < {1 + _NEAR_CHANCE:g}) = {near:.0%}): where the judge is barely better than "
                            "chance, Eq. 11 divides by almost zero and p is poorly determined")
    pooled = p[valid]
    s = summarize_samples(pooled)
    if pooled.size == 0:
        warnings.append("no sample gave a valid p: the judges' accuracies are too uncertain or too close to chance")
    return WinRate(
        system_a=pair.system_a, system_b=pair.system_b, method="bwrs", prior=label, ties=pair.ties,
        p_mean=s["mean"], p_mode=s["mode"], ci_low=s["low"], ci_high=s["high"], k_observed=pair.k_observed,
        p_human=pair.p_human, n_items=pair.n_items,
        n_human_labelled=int((np.asarray(labelled, bool) & (pair.human >= 0)).sum()) if labelled is not None else 0,
        rhat=math.nan, ess=math.nan, seconds=time.perf_counter() - t0, judges=tuple(judges),
        n_samples=int(E * n_samples), n_valid=int(valid.sum()), warnings=tuple(warnings),
        density=(tuple(s["x"]), tuple(s["density"])))


# --------------------------------------------------------------------------- Dawid-Skene


def _patterns(pair: PairData, labelled: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (verdicts, used human label) rows and their counts: the sufficient statistics."""
    h = np.full(pair.n_items, -1, dtype=np.int8)
    if labelled is not None:
        m = np.asarray(labelled, bool) & (pair.human >= 0)
        h[m] = pair.human[m]
    rows = np.concatenate([pair.verdicts, h[:, None]], axis=1)
    informative = (rows >= 0).any(axis=1)
    pat, cnt = np.unique(rows[informative], axis=0, return_counts=True)
    if pat.size == 0:
        pat = np.full((1, rows.shape[1]), -1, dtype=np.int8)
        cnt = np.zeros(1, dtype=np.int64)
    return pat[:, :-1], pat[:, -1], cnt


def _ds_data(pair: PairData, labelled: np.ndarray | None, a0, b0, a1, b1) -> dict[str, np.ndarray]:
    T, H, w = _patterns(pair, labelled)
    return {"T0": (T == 0).astype(float), "T1": (T == 1).astype(float), "H0": (H == 0).astype(float),
            "H1": (H == 1).astype(float), "w": w.astype(float), "a0": np.asarray(a0, float),
            "b0": np.asarray(b0, float), "a1": np.asarray(a1, float), "b1": np.asarray(b1, float)}


def _ds_model(data: dict[str, np.ndarray]):
    """Model 1 of Gao et al. with the labels summed out, as a PyMC model over pattern counts."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model() as model:
        d = {k: pm.Data(k, v) for k, v in data.items()}
        p = pm.Beta("p", 1.0, 1.0)  # alpha_p = beta_p = 1 (Gao et al. Sec. 3.4)
        q0 = pm.Beta("q0", d["a0"], d["b0"])
        q1 = pm.Beta("q1", d["a1"], d["b1"])
        # log P(verdicts | A better) + log p, and the same for B, per pattern
        f0 = pt.log(p) + d["T0"] @ pt.log(q0) + d["T1"] @ pt.log1p(-q0)
        f1 = pt.log1p(-p) + d["T1"] @ pt.log(q1) + d["T0"] @ pt.log1p(-q1)
        free = 1.0 - d["H0"] - d["H1"]
        ll = d["H0"] * f0 + d["H1"] * f1 + free * pt.logaddexp(f0, f1)
        pm.Potential("loglik", (d["w"] * ll).sum())
    return model


_KERNEL_LOCK = threading.Lock()


def _kernel():
    """The numba kernel module, imported (and compiled or loaded from numba's cache) once."""
    with _KERNEL_LOCK:  # two threads importing it at once would both compile
        from . import _dskernel

    return _dskernel


def _nutpie_model(pair: PairData, data: dict[str, np.ndarray], *, pyfunc: bool = False):
    """A nutpie model whose log density is the numba kernel on ``data``.

    Built from nutpie's ``CompiledPyMCModel`` with our C functions in place of the ones nutpie
    would compile from the PyMC graph (no per-process compile). ``pyfunc=True`` uses nutpie's
    public ``from_pyfunc`` instead: the same density through a Python call per gradient,
    about 5x slower; it is the fallback should nutpie's internal class change.
    """
    from scipy.special import betaln

    k = _kernel()
    E = len(pair.judges)
    lbeta = betaln(data["a0"], data["b0"]) + betaln(data["a1"], data["b1"])
    args = (data["T0"], data["T1"], data["H0"], data["H1"], data["w"], data["a0"], data["b0"], data["a1"],
            data["b1"], lbeta)
    # PyMC's initial point: the prior means in log-odds, jittered by U(-1, 1) per chain
    centre = np.concatenate([[0.0], np.log(data["a0"] / data["b0"]), np.log(data["a1"] / data["b1"])])

    def initial_point(seed):
        return centre + np.random.default_rng(seed).uniform(-1.0, 1.0, centre.size)

    names, shapes = ["p", "q0", "q1"], [(), (E,), (E,)]
    dims = {"q0": ("judge",), "q1": ("judge",)}
    coords = {"judge": list(pair.judges)}
    if not pyfunc:
        try:
            from nutpie.compile_pymc import CompiledPyMCModel

            return CompiledPyMCModel(
                dims=dims, _n_dim=k.n_dim(E), _coords=coords, _shapes=dict(zip(names, shapes)),
                compiled_logp_func=k.c_logp, compiled_expand_func=k.c_expand, initial_point_func=initial_point,
                shared_data={}, user_data=k.pack(*args), n_expanded=k.n_dim(E),
                shape_info=(names, [slice(0, 1), slice(1, 1 + E), slice(1 + E, 1 + 2 * E)], shapes),
                logp_func=None, expand_func=None)
        except (ImportError, TypeError):  # nutpie changed its internals: take the public route
            pass
    from nutpie.compiled_pyfunc import from_pyfunc

    def make_logp():
        def logp(x):
            value, grad = k.logp_grad(x, *args)
            return float(value), grad
        return logp

    def make_expand(seed1, seed2, chain):
        def expand(x):
            q = 1.0 / (1.0 + np.exp(-x))
            return {"p": q[:1].reshape(()), "q0": q[1:1 + E].copy(), "q1": q[1 + E:].copy()}
        return expand

    return from_pyfunc(k.n_dim(E), make_logp, make_expand, [np.dtype("float64")] * 3, shapes, names, coords=coords,
                       dims=dims, make_initial_point_fn=initial_point)


def is_compiled() -> bool:
    """Whether this process has loaded the Dawid-Skene kernel (later fits start sampling at once)."""
    import sys

    return f"{__package__}._dskernel" in sys.modules and "nutpie" in sys.modules and "arviz" in sys.modules


def warm_up() -> None:
    """Load the Dawid-Skene kernel and the sampler (e.g. in a background thread).

    About 3 s the first time on a machine (numba compiles, then caches on disk), under a second after.
    """
    _kernel()
    import arviz  # noqa: F401
    import nutpie  # noqa: F401


def _ds_priors(pair: PairData, ood: Counts | None) -> tuple[np.ndarray, ...]:
    E = len(pair.judges)
    if ood is None:
        return np.full(E, 2.0), np.ones(E), np.full(E, 2.0), np.ones(E)  # Beta(2, 1): better than chance
    c = ood.for_judges(pair.judges)
    # Eqs. 12-13: the Beta-Bernoulli posterior scaled to total concentration 2
    return ((2 * c.s0 + 2) / (c.n0 + 2), (2 * c.n0 - 2 * c.s0 + 2) / (c.n0 + 2),
            (2 * c.s1 + 2) / (c.n1 + 2), (2 * c.n1 - 2 * c.s1 + 2) / (c.n1 + 2))


def _diagnostics(idata, names: Sequence[str]) -> tuple[float, float, float, float]:
    """R-hat and bulk ESS of p, and the worst of each over all parameters."""
    import arviz as az

    rh = az.rhat(idata, var_names=list(names))
    es = az.ess(idata, var_names=list(names))
    worst_r = max(float(np.nanmax(rh[v].values)) for v in names)
    worst_e = min(float(np.nanmin(es[v].values)) for v in names)
    return float(rh["p"].values), float(es["p"].values), worst_r, worst_e


def _ds_result(pair: PairData, post: dict[str, np.ndarray], *, method: str, prior_label: str, counts: Counts,
               n_labelled: int, diag: tuple[float, float, float, float], divergences: int, seconds: float) -> WinRate:
    s = summarize_samples(post["p"])
    judges = []
    kk = pair.judge_k()
    for e, name in enumerate(pair.judges):
        q0, q1 = post["q0"][:, e], post["q1"][:, e]
        judges.append(JudgeAccuracy(
            judge=name, k=float(kk[e]), n_verdicts=int((pair.verdicts[:, e] >= 0).sum()),
            n0=float(counts.n0[e]), s0=float(counts.s0[e]), n1=float(counts.n1[e]), s1=float(counts.s1[e]),
            q0_mean=float(q0.mean()), q0_low=float(np.quantile(q0, .025)), q0_high=float(np.quantile(q0, .975)),
            q1_mean=float(q1.mean()), q1_low=float(np.quantile(q1, .025)), q1_high=float(np.quantile(q1, .975))))
    rhat, ess, worst_r, worst_e = diag
    warnings = []
    if not (worst_r <= _RHAT_MAX):
        warnings.append(f"R-hat is {worst_r:.3f} (above {_RHAT_MAX}): the chains disagree, so the posterior is not "
                        "reliable; the judges' accuracies may be unidentified (no labels and judges near chance)")
    if not (worst_e >= _ESS_MIN):
        warnings.append(f"the effective sample size is only {worst_e:.0f} (below {_ESS_MIN}): intervals are rough; "
                        "draw more samples")
    if divergences:
        warnings.append(f"{divergences} divergent transitions: the sampler struggled, treat the interval with care")
    return WinRate(
        system_a=pair.system_a, system_b=pair.system_b, method=method, prior=prior_label, ties=pair.ties,
        p_mean=s["mean"], p_mode=s["mode"], ci_low=s["low"], ci_high=s["high"], k_observed=pair.k_observed,
        p_human=pair.p_human, n_items=pair.n_items, n_human_labelled=n_labelled, rhat=rhat, ess=ess,
        seconds=seconds, judges=tuple(judges), n_samples=int(post["p"].size), divergences=int(divergences),
        warnings=tuple(warnings), density=(tuple(s["x"]), tuple(s["density"])))


def _posterior(idata, names: Sequence[str]) -> dict[str, np.ndarray]:
    out = {}
    for v in names:
        a = np.asarray(idata.posterior[v].values)
        out[v] = a.reshape(a.shape[0] * a.shape[1], *a.shape[2:])
    return out


def dawid_skene(pair: PairData, *, labelled: np.ndarray | None = None, ood: Counts | None = None,
                chains: int = 4, draws: int = 1000, tune: int = 1000, seed: int = 0,
                sampler: str = "nutpie", prior_label: str | None = None) -> WinRate:
    """Bayesian Dawid-Skene for two classes (Gao et al. 2024, Model 1), labels marginalised.

    ``p ~ Beta(1, 1)``; per judge ``q0 ~ Beta(a0, b0)`` and ``q1 ~ Beta(a1, b1)``, which
    are ``Beta(2, 1)`` (no prior, in-distribution) or Eqs. 12-13 (``ood``). Each item's
    true label ``h_i ~ Bernoulli`` is summed out::

        log L = sum_i log[ p prod_e q0^[t=A] (1-q0)^[t=B] + (1-p) prod_e q1^[t=B] (1-q1)^[t=A] ]

    with an item in ``labelled`` (human label used) keeping only its label's term. The model
    is the PyMC model ``_ds_model``. It is fitted by NUTS: nutpie's sampler on the same
    density written as a numba kernel (``sampler="nutpie"``, :mod:`evalcore.pairwise._dskernel`, checked
    against PyMC's ``logp`` and ``dlogp`` in the tests; compiling the PyMC graph instead costs
    14-27 s per process), the same through nutpie's public Python interface
    (``"nutpie-pyfunc"``), or PyMC's own NUTS on the PyMC model (``"pymc"``). The estimate of p is the posterior mean and KDE mode with a 95%
    equal-tailed credible interval; R-hat and bulk ESS come from ArviZ.
    """
    if sampler not in ("nutpie", "nutpie-pyfunc", "pymc"):
        raise DataError(f"unknown sampler '{sampler}'", fix="use nutpie, nutpie-pyfunc or pymc")
    t0 = time.perf_counter()
    a0, b0, a1, b1 = _ds_priors(pair, ood)
    data = _ds_data(pair, labelled, a0, b0, a1, b1)
    if sampler != "pymc":
        import nutpie

        cm = _nutpie_model(pair, data, pyfunc=sampler == "nutpie-pyfunc")
        idata = nutpie.sample(cm, chains=chains, draws=draws, tune=tune, seed=seed, progress_bar=False,
                              cores=max(1, min(chains, os.cpu_count() or 1)))
        div = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    else:
        import pymc as pm

        with _ds_model(data):
            idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False)
        div = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    names = ("p", "q0", "q1")
    post = _posterior(idata, names)
    diag = _diagnostics(idata, names)
    counts = accuracy_counts(pair, labelled if labelled is not None else np.zeros(pair.n_items, bool))
    if ood is not None:
        counts = ood.for_judges(pair.judges)
    n_lab = int((np.asarray(labelled, bool) & (pair.human >= 0)).sum()) if labelled is not None else 0
    label = prior_label or ("ood:" + ood.source if ood is not None else ("ratio" if n_lab else "none"))
    return _ds_result(pair, post, method="ds", prior_label=label, counts=counts, n_labelled=n_lab, diag=diag,
                      divergences=div, seconds=time.perf_counter() - t0)


def dawid_skene_reference(pair: PairData, *, labelled: np.ndarray | None = None, ood: Counts | None = None,
                          chains: int = 4, draws: int = 1000, tune: int = 1000, seed: int = 0, cores: int = 1,
                          prior_label: str | None = None) -> WinRate:
    """The same Model 1 with the discrete labels sampled, as Gao et al. ran it (the reference).

    Every unlabelled item has a latent ``a_better_i ~ Bernoulli(p)`` sampled by PyMC's
    Binary Gibbs-Metropolis, and ``p``, ``q0``, ``q1`` by NUTS. It targets the same
    posterior of ``p`` as :func:`dawid_skene` and is orders of magnitude slower; it is
    here for the benchmark and the tests.
    """
    import pymc as pm
    import pytensor.tensor as pt

    t0 = time.perf_counter()
    a0, b0, a1, b1 = _ds_priors(pair, ood)
    lab = np.zeros(pair.n_items, bool) if labelled is None else (np.asarray(labelled, bool) & (pair.human >= 0))
    free_idx = np.flatnonzero(~lab)
    E = len(pair.judges)
    with pm.Model() as model:
        p = pm.Beta("p", 1.0, 1.0)
        q0 = pm.Beta("q0", a0, b0, shape=E)
        q1 = pm.Beta("q1", a1, b1, shape=E)
        if lab.any():
            pm.Bernoulli("h_obs", p, observed=(pair.human[lab] == 0).astype(int))
        z_free = pm.Bernoulli("a_better", p, shape=len(free_idx)) if len(free_idx) else None
        z = pt.zeros(pair.n_items)
        if lab.any():
            z = pt.set_subtensor(z[np.flatnonzero(lab)], (pair.human[lab] == 0).astype(float))
        if z_free is not None:
            z = pt.set_subtensor(z[free_idx], z_free)
        ii, ee = np.nonzero(pair.verdicts >= 0)
        says_a = (pair.verdicts[ii, ee] == 0).astype(int)
        prob_a = pt.switch(pt.eq(z[ii], 1), q0[ee], 1 - q1[ee])
        pm.Bernoulli("verdict", prob_a, observed=says_a)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    names = ("p", "q0", "q1")
    post = _posterior(idata, names)
    diag = _diagnostics(idata, names)
    counts = accuracy_counts(pair, lab) if ood is None else ood.for_judges(pair.judges)
    div = int(np.asarray(idata.sample_stats["diverging"].values).sum()) if "diverging" in idata.sample_stats else 0
    label = prior_label or ("ood:" + ood.source if ood is not None else ("ratio" if lab.any() else "none"))
    return _ds_result(pair, post, method="ds_reference", prior_label=label, counts=counts, n_labelled=int(lab.sum()),
                      diag=diag, divergences=div, seconds=time.perf_counter() - t0)


# --------------------------------------------------------------------------- one call


def estimate(comparisons: pd.DataFrame, system_a: str, system_b: str, *, method: str = "ds",
             prior: Prior | str = "none", ties: str = "drop", judges: Sequence[str] | None = None, seed: int = 0,
             n_samples: int = 10_000, chains: int = 4, draws: int = 1000, tune: int = 1000,
             pair: PairData | None = None) -> WinRate:
    """Calibrated win rate of ``system_a`` over ``system_b`` with one method and one prior.

    ``prior`` is a :class:`Prior` or its text (``none``, ``ratio:R``, ``ood:A2,B2``). The
    in-distribution subset is :func:`label_mask` with ``seed``, so the same seed and ratio
    always use the same items. Pass ``pair`` to reuse collected data.
    """
    if method not in METHODS:
        raise DataError(f"unknown method '{method}'", fix="use bwrs or ds")
    pr = parse_prior(prior) if isinstance(prior, str) else prior
    if pair is None:
        pair = pair_data(comparisons, system_a, system_b, judges=judges, ties=ties, seed=seed)
    labelled, ood = None, None
    if pr.kind == "ratio":
        if pair.n_human == 0 and pr.ratio > 0:
            raise NotApplicable(f"{system_a} vs {system_b} has no human labels to use",
                                fix="use --prior none or an out-of-distribution prior ood:A2,B2")
        labelled = label_mask(pair, pr.ratio, seed=seed)
    elif pr.kind == "ood":
        if {pr.ood[0], pr.ood[1]} == {system_a, system_b}:
            raise NotApplicable("an out-of-distribution prior must come from another pair",
                                fix="name a different pair in ood:A2,B2")
        ood = _ood_counts(comparisons, pr, pair.judges, ties=ties, seed=seed)
    elif method == "bwrs":
        raise NotApplicable("BWRS needs human labels for the judges' accuracies; 'none' is not applicable "
                            "(Gao et al., footnote 4)", fix="use ratio:R or ood:A2,B2, or the ds method")
    if method == "bwrs":
        return bwrs(pair, labelled=labelled, ood=ood, n_samples=n_samples, seed=seed, prior_label=pr.label)
    return dawid_skene(pair, labelled=labelled, ood=ood, chains=chains, draws=draws, tune=tune, seed=seed,
                       prior_label=pr.label)


def estimate_all(comparisons: pd.DataFrame, *, method: str = "ds", prior: Prior | str = "none",
                 ties: str = "drop", judges: Sequence[str] | None = None, seed: int = 0,
                 baseline: str | None = None, n_samples: int = 10_000, chains: int = 4, draws: int = 1000,
                 tune: int = 1000, ood_auto: bool = False,
                 progress: Callable[[float], None] | None = None) -> list[WinRate]:
    """:func:`estimate` for every system pair (n vs n), or every pair with ``baseline`` (1 vs n).

    With a baseline, each pair is oriented as ``(other, baseline)``: ``p`` is the other
    system's win rate against the baseline. ``ood_auto`` gives each pair the OOD prior of
    its :func:`closest_pair` (the prior's systems are then ignored). Judges not present
    in a pair are skipped for that pair.
    """
    pr = parse_prior(prior) if isinstance(prior, str) else prior
    table = pairs(comparisons)
    todo = []
    for r in table.itertuples():
        a, b = r.system_a, r.system_b
        if baseline is not None:
            if baseline not in (a, b):
                continue
            a, b = (b, a) if a == baseline else (a, b)
        if pr.kind == "ood" and not ood_auto and {a, b} == set(pr.ood):
            continue
        todo.append((a, b))
    if not todo:
        raise NotApplicable(f"no pair includes {baseline}" if baseline else "no system pairs to compare",
                            fix="pick a baseline that appears in system_a or system_b")
    out = []
    for i, (a, b) in enumerate(todo):
        pair = pair_data(comparisons, a, b, ties=ties, seed=seed)
        if judges is not None:
            use = [j for j in judges if j in pair.judges]
            if not use:
                continue
            pair = pair_data(comparisons, a, b, judges=use, ties=ties, seed=seed)
        this = pr
        if ood_auto:
            near = closest_pair(comparisons, a, b, ties=ties, seed=seed)
            if near is None:
                raise NotApplicable("no other pair has human labels to set an out-of-distribution prior",
                                    fix="use the in-distribution prior (ratio) or none")
            this = Prior("ood", ood=near)
        out.append(estimate(comparisons, a, b, method=method, prior=this, ties=ties, seed=seed, pair=pair,
                            n_samples=n_samples, chains=chains, draws=draws, tune=tune))
        if progress is not None:
            progress((i + 1) / len(todo))
    return out


def error_curve(pair: PairData | Sequence[PairData], *,
                ratios: Sequence[float] = tuple(np.round(np.arange(0.1, 1.01, 0.1), 2)),
                repeats: int = 5, methods: Sequence[str] = METHODS, seed: int = 0, draws: int = 1000,
                tune: int = 1000, chains: int = 4,
                progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Estimation error against the prior data ratio, as in Gao et al. Figure 2.

    For each ratio and repeat ``r`` a fresh random subset (seed ``seed + r``) of the human
    labels is used; the error of each estimator is ``|estimate - p_human|`` with
    ``p_human`` from all of the pair's labels, beside the baseline ``|k - p_human|``.
    Given several pairs, errors are averaged over pairs and repeats, as in their figure.

    Returns
    -------
    DataFrame
        One row per ratio, method and estimator (``mean``, ``mode``; ``observed`` for k):
        ``error_mean``, ``error_sd``, ``repeats`` (fits averaged), ``ci_width`` (mean 95%
        interval width), ``n_pairs`` and ``p_human`` (the pair's; NaN for several pairs).
    """
    many = not isinstance(pair, PairData)
    todo = list(pair) if many else [pair]
    todo = [p for p in todo if p.n_human > 0]
    if not todo:
        raise NotApplicable("the error curve compares with the humans' own win rate, and no pair here has "
                            "human labels", fix="pick a pair with human labels")
    rows, base = [], []
    total = len(todo) * len(ratios) * repeats * len(methods)
    done = 0
    for pi, pd_ in enumerate(todo):
        truth = pd_.p_human
        base.append(abs(pd_.k_observed - truth))
        for ratio in ratios:
            for r in range(repeats):
                mask = label_mask(pd_, float(ratio), seed=seed + r)
                for m in methods:
                    done += 1
                    if m == "bwrs":
                        if not mask.any():
                            continue
                        res = bwrs(pd_, labelled=mask, seed=seed + r)
                    else:
                        res = dawid_skene(pd_, labelled=mask, seed=seed + r, draws=draws, tune=tune, chains=chains)
                    for est, val in (("mean", res.p_mean), ("mode", res.p_mode)):
                        rows.append({"pair": pi, "ratio": float(ratio), "repeat": r, "method": m, "estimator": est,
                                     "error": abs(val - truth), "ci_width": res.ci_high - res.ci_low})
                    if progress is not None:
                        progress(done / total)
    raw = pd.DataFrame(rows)
    if raw.empty:
        raise NotApplicable("no ratio left any human labels to use", fix="use larger ratios")
    out = (raw.groupby(["ratio", "method", "estimator"], as_index=False)
           .agg(error_mean=("error", "mean"), error_sd=("error", "std"), repeats=("error", "size"),
                ci_width=("ci_width", "mean"), n_pairs=("pair", "nunique")))
    base_df = pd.DataFrame({"ratio": [float(r) for r in ratios], "method": "observed", "estimator": "k",
                            "error_mean": float(np.mean(base)), "error_sd": float(np.std(base, ddof=1)) if len(base) > 1 else 0.0,
                            "repeats": len(base), "ci_width": math.nan, "n_pairs": len(base)})
    out = pd.concat([out, base_df], ignore_index=True)
    out["p_human"] = todo[0].p_human if not many else math.nan
    return out
