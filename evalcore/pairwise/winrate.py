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

This module holds what the two methods share: the prior, one call per pair
(:func:`estimate`) or for every pair (:func:`estimate_all`, :func:`win_rates`), the error
curve and the result tables. The pieces live beside it, each imported from its own module:
the per-pair data in :mod:`.pairs`, the result type in :mod:`.result`, BWRS in :mod:`.bwrs`
and Dawid-Skene (with its compile helpers ``warm_up``/``is_compiled``) in :mod:`.dawid_skene`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS
from ..errors import DataError
from .bwrs import bwrs
from .dawid_skene import dawid_skene
from .pairs import Counts, NotApplicable, PairData, accuracy_counts, label_mask, pair_data, pairs
from .result import WinRate

__all__ = [
    "METHODS", "Prior", "parse_prior", "closest_pair", "orient_like", "results_frame", "judges_table", "mean_errors",
    "estimate", "estimate_all", "win_rates", "error_curve",
]

METHODS = ("bwrs", "ds")


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


# --------------------------------------------------------------------------- the other pair of an OOD prior


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


# --------------------------------------------------------------------------- one call


def _ood_counts(comparisons: pd.DataFrame | None, prior: Prior, judges: Sequence[str], *, ties: str, seed: int,
                other: PairData | None = None) -> Counts:
    a2, b2 = prior.ood
    if other is None:
        other = pair_data(comparisons, a2, b2, ties=ties, seed=seed)
    if other.n_human == 0:
        raise NotApplicable(f"the pair {a2} vs {b2} has no human labels, so it cannot set a prior",
                            fix="pick a pair with human labels for ood:A2,B2")
    return accuracy_counts(other, source=f"{a2} vs {b2}").for_judges(judges)

def estimate(comparisons: pd.DataFrame, system_a: str, system_b: str, *, method: str = "ds",
             prior: Prior | str = "none", ties: str = "drop", judges: Sequence[str] | None = None, seed: int = 0,
             n_samples: int = 10_000, chains: int = 4, draws: int = 1000, tune: int = 1000,
             pair: PairData | None = None, ood_pair: PairData | None = None) -> WinRate:
    """Calibrated win rate of ``system_a`` over ``system_b`` with one method and one prior.

    ``prior`` is a :class:`Prior` or its text (``none``, ``ratio:R``, ``ood:A2,B2``). The
    in-distribution subset is :func:`label_mask` with ``seed``, so the same seed and ratio
    always use the same items. Pass ``pair`` to reuse collected data, and ``ood_pair`` (the
    prior's pair, oriented as the prior names it) with an ``ood`` prior: with both, ``comparisons``
    is not read and may be None. That is how data collected elsewhere (an engine's verdict patterns,
    :func:`evalcore.pairwise.pairs.pair_from_patterns`) run through the same estimates.
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
        ood = _ood_counts(comparisons, pr, pair.judges, ties=ties, seed=seed, other=ood_pair)
    elif method == "bwrs":
        raise NotApplicable("BWRS needs human labels for the judges' accuracies; 'none' is not applicable "
                            "(Gao et al., footnote 4)", fix="use ratio:R or ood:A2,B2, or the ds method")
    if method == "bwrs":
        return bwrs(pair, labelled=labelled, ood=ood, n_samples=n_samples, seed=seed, prior_label=pr.label)
    return dawid_skene(pair, labelled=labelled, ood=ood, chains=chains, draws=draws, tune=tune, seed=seed,
                       prior_label=pr.label)


@takes_table(COMPARISONS)
def estimate_all(comparisons: pd.DataFrame, *, method: str = "ds", prior: Prior | str = "none",
                 ties: str = "drop", judges: Sequence[str] | None = None, seed: int | np.random.Generator = 0,
                 baseline: str | None = None, n_samples: int = 10_000, chains: int = 4, draws: int = 1000,
                 tune: int = 1000, ood_auto: bool = False,
                 progress: Callable[[float], None] | None = None) -> list[WinRate]:
    """:func:`estimate` for every system pair (n vs n), or every pair with ``baseline`` (1 vs n).

    With a baseline, each pair is oriented as ``(other, baseline)``: ``p`` is the other
    system's win rate against the baseline. ``ood_auto`` gives each pair the OOD prior of
    its :func:`closest_pair` (the prior's systems are then ignored). Judges not present
    in a pair are skipped for that pair. :func:`win_rates` gives the same results as one table.

    Parameters
    ----------
    comparisons, method, prior, ties, judges, seed, baseline, ood_auto, n_samples, chains, draws, tune
        As in :func:`win_rates`.
    progress
        Called with the fraction of pairs done, for progress bars.
    item, rater, kind, winner, system_a, system_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    list of WinRate
        One :class:`WinRate` per pair with a judge (its posterior density and judges' accuracies included, for
        plots); :func:`results_frame` makes them a table.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> fits = estimate_all(comparisons, method="bwrs", prior="ratio:0.2", baseline="atlas-7b", n_samples=2000, seed=0)
    >>> [(f.system_a, f.system_b, round(f.p_mean, 3)) for f in fits]
    [('cirrus-70b', 'atlas-7b', 0.815), ('dune-8x7b', 'atlas-7b', 0.644), ('ember-34b', 'atlas-7b', 0.684)]
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
    out, judged = [], 0
    for i, (a, b) in enumerate(todo):
        try:
            pair = pair_data(comparisons, a, b, ties=ties, seed=seed)
        except NotApplicable:  # only humans compared this pair: no judge to calibrate (as validate's unlock table says)
            if progress is not None:
                progress((i + 1) / len(todo))
            continue
        judged += 1
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
    if not judged:
        raise NotApplicable("no judge compared two different systems", fix="mark the LLM judges' rows with rater_kind "
                            "'judge', and check that their rows name two different systems")
    return out


@takes_table(COMPARISONS)
def win_rates(comparisons: pd.DataFrame, *, judges: Sequence[str] | None = None, method: str = "ds",
              prior: Prior | str = "none", baseline: str | None = None, ties: str = "drop", ood_auto: bool = False,
              n_samples: int = 10_000, chains: int = 4, draws: int = 1000, tune: int = 1000,
              seed: int | np.random.Generator = 0) -> pd.DataFrame:
    """Calibrated win rates of every system pair (or every pair with ``baseline``), as one table.

    Parameters
    ----------
    comparisons
        A validated comparisons table with ``system_a`` and ``system_b``.
    judges
        The judges whose verdicts are calibrated (default: every judge of each pair).
    method
        ``"ds"`` (the Dawid-Skene model, :func:`dawid_skene`) or ``"bwrs"`` (:func:`bwrs`).
    prior
        ``"none"``, ``"ratio:R"`` (a seeded share R of each pair's human labels is used) or ``"ood:A2,B2"``
        (another pair's labels set the judges' accuracy prior); see :class:`Prior`.
    baseline
        Only the pairs with this system, each oriented as ``(other, baseline)``.
    ties
        ``"drop"`` or ``"random"``: what a tied verdict becomes (module docstring).
    ood_auto
        Give each pair the out-of-distribution prior of its :func:`closest_pair`.
    n_samples
        BWRS's samples.
    chains, draws, tune
        The Dawid-Skene sampler's chains, draws per chain and tuning steps.
    seed
        The seed of the label subsets, the random ties and the samplers (a whole number or a
        ``numpy.random.Generator``).
    item, rater, kind, winner, system_a, system_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        :func:`results_frame` of :func:`estimate_all`: one row per pair, ``pair, system_a, system_b, method,
        prior, ties, p_mean, p_mode, ci_low, ci_high`` (the win rate of ``system_a`` and its 95% interval),
        ``k_observed`` (the judges' raw win rate), ``p_human`` (the humans', over all their labels), ``n_items``,
        ``n_human_labelled``, the sampler's diagnostics and ``warnings``. The :class:`WinRate` objects, with
        their densities for plots, come from :func:`estimate_all`.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> table = win_rates(comparisons, method="bwrs", prior="ratio:0.2", n_samples=2000, seed=0)
    >>> print(table[["pair", "k_observed", "p_mean", "ci_low", "ci_high", "p_human"]].round(3).to_string(index=False))
                          pair  k_observed  p_mean  ci_low  ci_high  p_human
        cirrus-70b vs atlas-7b       0.769   0.815   0.489    0.989    0.787
         atlas-7b vs dune-8x7b       0.412   0.355   0.035    0.678    0.371
         atlas-7b vs ember-34b       0.342   0.317   0.040    0.837    0.239
    cirrus-70b vs borealis-13b       0.647   0.655   0.185    0.965    0.669
     ember-34b vs borealis-13b       0.606   0.580   0.183    0.902    0.567
        dune-8x7b vs ember-34b       0.563   0.578   0.185    0.941    0.479
    """
    return results_frame(estimate_all(comparisons, method=method, prior=prior, ties=ties, judges=judges, seed=seed,
                                      baseline=baseline, n_samples=n_samples, chains=chains, draws=draws, tune=tune,
                                      ood_auto=ood_auto))


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
