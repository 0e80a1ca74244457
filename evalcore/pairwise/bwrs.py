"""BWRS, Bayesian Win Rate Sampling (Gao et al. 2024, Algorithm 1).

Per judge, Beta posteriors of its raw win rate ``k`` and of its accuracies ``q0``, ``q1``
(counted on human-labelled data) give samples of ``p = (k + q1 - 1) / (q0 + q1 - 1)``
(their Eq. 11), the inverse of Eq. 9 ``k = p q0 + (1 - p)(1 - q1)``. Called through
:func:`evalcore.pairwise.winrate.estimate`, which also chooses the labelled data.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..stats.numeric import safe_div
from .pairs import Counts, NotApplicable, PairData, accuracy_counts
from .result import JudgeAccuracy, WinRate, summarize_samples

__all__ = ["bwrs"]

_VALID_MIN = 0.5  # BWRS: warn when fewer than half of the samples give a p in (0, 1)
_NEAR_CHANCE = 0.1  # BWRS: warn when q0 + q1 - 1 is this close to 0


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
    k_rate = safe_div(k_s, k_n)  # NaN for a judge without verdicts
    warnings: list[str] = []
    judges = []
    for e, name in enumerate(pair.judges):
        s = summarize_samples(p[e, valid[e]])
        qs0, qs1 = q0[e], q1[e]
        judges.append(JudgeAccuracy(
            judge=name, k=float(k_rate[e]), n_verdicts=int(k_n[e]),
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
