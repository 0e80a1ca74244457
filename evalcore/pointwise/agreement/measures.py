"""The agreement measures, computed on per-pattern counts for every group and resample at once (numpy's products,
and on large tables compiled passes over the resamples, :mod:`.passes`: the sums by category, the ordinal alpha's
pair sums and the rank statistics, each numpy's numbers to the last bit).

Methods (Hada et al. 2024 for PA, Fleiss' kappa and class distributions; Gwet 2008 for AC1;
Byrt, Bishop & Carlin 1993 for PABAK; Krippendorff 2011 for alpha; Stureborg et al. 2024 for
Kendall's tau against the human mean).

Every function takes a family's patterns (:class:`evalcore.pointwise.agreement.resampling.Family`):
counts ``C`` (G, K, q) of human ratings per category, the judge's category (G, K), and weights ``W``
(G, R, K), row 0 the data and rows 1.. the bootstrap resamples; each measure comes out (G, R).

Measures (``measure`` names are a stable contract; docs/cli.md lists them)
--------------------------------------------------------------------------
Among humans (``judge`` is null), over units with at least two human ratings:

- ``percent_agreement``: :math:`\\bar P = \\operatorname{mean}_i P_i`,
  :math:`P_i = \\sum_k n_{ik}(n_{ik}-1) / (n_i(n_i-1))`, the share of agreeing annotator pairs
  (Fleiss 1971).
- ``full_agreement``: share of units where all annotators gave the same score.
- ``fleiss_kappa``: :math:`(\\bar P - P_e)/(1-P_e)`, :math:`P_e=\\sum_k \\pi_k^2`,
  :math:`\\pi_k = \\operatorname{mean}_i n_{ik}/n_i` over all units with a rating. With the same
  number of raters on every unit this is Fleiss (1971) exactly; with 1-3 raters it is the
  generalisation in Gwet (2014, Handbook of Inter-Rater Reliability, §2.5), as in irrCAC.
- ``gwet_ac1``: :math:`(\\bar P - P_e)/(1-P_e)` with :math:`P_e = \\sum_k \\pi_k(1-\\pi_k)/(q-1)`
  (Gwet 2008), q the number of categories of the scale.
- ``pabak``: :math:`(q \\bar P - 1)/(q-1)`, prevalence- and bias-adjusted kappa for q
  categories (Byrt et al. 1993).
- ``krippendorff_alpha_{nominal,ordinal,interval}``: :math:`1 - D_o/D_e` from the coincidence
  matrix (Krippendorff 2011), over pairable values.

On a nominal criterion (categories without an order, :mod:`evalcore.data.scales`) the measures above are
computed on the labels as categories, except the ones that need an order (:data:`ORDER_MEASURES`):
ordinal and interval alpha here, and below quadratic kappa, tau and rho.

Judge against humans (``judge`` names the judge), over units with the judge and a human:

- ``percent_agreement``, ``cohen_kappa``, ``cohen_kappa_quadratic``, ``weighted_f1``: the judge
  against the human *strict majority* (a score given by more than half of the unit's
  annotators); units without one are left out and counted in ``note``. Quadratic weights use
  the score values, :math:`w_{ab} = 1-(v_a-v_b)^2/(v_{max}-v_{min})^2`.
- ``kendall_tau`` (tau-b) and ``spearman_rho``: the judge's score against the mean human score.
- ``fleiss_kappa`` and ``krippendorff_alpha_*`` with the judge added as one more rater, and
  ``*_change``: that value minus the humans' own on the same units.
- ``pairwise_agreement``: mean share of the unit's annotators who gave the judge's score;
  ``pairwise_agreement_gap``: that minus the humans' ``percent_agreement`` on the same units.
  The one tested measure (harm direction ``"less"``, :data:`evalcore.pointwise.sections.TESTS`):
  its bootstrap p-value (:func:`evalcore.stats.bootstrap.z_p_value`) tests "the judge agrees with humans
  less than humans agree with each other"; the Benjamini-Hochberg q-values run across the gap rows
  of the whole table (every group and judge), and a row is ``flagged`` when q <= ``alpha``
  (:func:`evalcore.stats.results.apply_fdr`). A gap significantly above 0 is marked ``opposite``, never
  flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...labels import NO_MAJORITY, strict_majority
from ...stats.numeric import safe_div
from .passes import passes

HUMAN_MEASURES = (
    "percent_agreement", "full_agreement", "fleiss_kappa", "gwet_ac1", "pabak",
    "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
)
JUDGE_MEASURES = (
    "percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1", "kendall_tau",
    "spearman_rho", "fleiss_kappa", "fleiss_kappa_change", "krippendorff_alpha_nominal",
    "krippendorff_alpha_nominal_change", "krippendorff_alpha_ordinal", "krippendorff_alpha_ordinal_change",
    "krippendorff_alpha_interval", "krippendorff_alpha_interval_change", "pairwise_agreement",
    "pairwise_agreement_gap",
)
_METRICS = ("nominal", "ordinal", "interval")
_FEW_CATEGORIES = 48  # up to this many categories a sum by category is a matrix product, beyond it a bincount
#: The measures that need an order of the categories (weights, ranks, distances; Stevens 1946,
#: Krippendorff 2011): not computed on a nominal criterion, whose labels have none. Every other measure
#: counts agreeing labels and applies to every scale. Numbers keep every measure on every scale
#: (interval alpha on ordinal numbers too, as before scales were declared).
ORDER_MEASURES = frozenset({
    "cohen_kappa_quadratic", "kendall_tau", "spearman_rho", "krippendorff_alpha_ordinal",
    "krippendorff_alpha_ordinal_change", "krippendorff_alpha_interval", "krippendorff_alpha_interval_change",
})


def measures_for(scale: str, *, judge: bool) -> tuple[str, ...]:
    """The measures computed on a criterion of ``scale``, among humans or (``judge``) of a judge.

    >>> [m for m in measures_for("nominal", judge=False)]
    ['percent_agreement', 'full_agreement', 'fleiss_kappa', 'gwet_ac1', 'pabak', 'krippendorff_alpha_nominal']
    >>> len(measures_for("ordinal", judge=True)) == len(JUDGE_MEASURES)
    True
    """
    names = JUDGE_MEASURES if judge else HUMAN_MEASURES
    return tuple(m for m in names if scale != "nominal" or m not in ORDER_MEASURES)


def _mm(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Weighted sums over patterns: (G, R, K) with (G, K) -> (G, R), or (G, K, m) -> (G, R, m)."""
    if X.ndim == 2:
        return np.matmul(W, X[:, :, None])[..., 0]
    return np.matmul(W, X)


def _exact_sums(W: np.ndarray, *factors: np.ndarray) -> list[np.ndarray]:
    """``_mm(W, X)`` for every factor X (G, K) or (G, K, m), from one product with all their columns.

    For whole-number factors only (0/1 masks, counts): with whole-number weights every sum is exact, so each
    comes out as its own product's to the last bit, for one pass over W instead of one per factor.
    """
    parts = [X[..., None] if X.ndim == 2 else X for X in factors]
    S = np.matmul(W, np.concatenate(parts, axis=-1))
    ends = np.cumsum([p.shape[-1] for p in parts])
    return [S[..., e - 1] if X.ndim == 2 else S[..., e - p.shape[-1]:e] for X, p, e in zip(factors, parts, ends)]


def _cat_sums(W: np.ndarray, cat: np.ndarray, q: int, x: np.ndarray | None = None) -> np.ndarray:
    """:math:`S_{grc} = \\sum_k W_{grk} x_{gk} [cat_{gk} = c]`, (G, R, q); ``cat`` -1 adds nothing, ``x`` 1 by default.

    The product of W with a (G, K, q) one-hot matrix, over the categories that occur only: a matrix
    product with their few columns, or for many (a judge whose averaged scores take a hundred
    categories) one ``bincount``, which costs G R K, not G R K q (numba's pass of :mod:`.passes` on large tables:
    the same additions in the same order, without the GIL that ``bincount`` holds). With whole-number weights and
    ``x`` the sums are exact, so equal to the full product's whatever the order.
    """
    G, R, K = W.shape
    ok = cat >= 0
    weight = np.where(ok, 1.0 if x is None else x, 0.0)
    present = np.unique(cat[ok])
    if len(present) <= _FEW_CATEGORIES:
        out = np.zeros((G, R, q))
        out[..., present] = _mm(W, (cat[..., None] == present) * weight[..., None])
        return out
    return passes(W.size).cat_sums(W, cat, weight, q)


@dataclass(frozen=True)
class _Split:
    """Counts (G, K, q) kept as the humans' counts on a few categories plus one more rating per pattern.

    A judge added as one more rater has C + onehot(judge): its products with the weights are those of
    the humans' few categories ``cols`` plus a sum by the judge's category (:func:`_cat_sums`), never a
    (G, R, K) x (G, K, q) product over the judge's many categories.
    """

    human: np.ndarray  # (G, K, h) the humans' counts on the categories cols
    cols: np.ndarray  # (h,) their categories among the q
    extra: np.ndarray  # (G, K) the category of one more rating per pattern, -1 for none


@dataclass(frozen=True)
class _Sums:
    """The weighted sums of one set of counts that the measures share, (G, R) or (G, R, q): exact (whole
    numbers), so computed together with others (:func:`_exact_sums`)."""

    pairs: np.ndarray  # weight of the units with two ratings or more
    rated: np.ndarray  # weight of the units with a rating
    full: np.ndarray  # weight of the units with two ratings or more, all the same
    marg: np.ndarray  # (G, R, q) ratings per category on units with two or more (pairable values)


def _masks(C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pattern (G, K), as floats: two ratings or more, a rating, and two or more all the same."""
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    return two, (n >= 1).astype(float), (C.max(axis=-1) == n).astype(float) * two


def _alphas(C: np.ndarray, W: np.ndarray, values: np.ndarray, marg: np.ndarray, split: _Split
            ) -> dict[str, np.ndarray]:
    """Krippendorff's alpha per metric, without forming the q x q coincidence matrix.

    :math:`\\alpha = 1 - (N-1) \\sum_{ck} o_{ck}\\delta^2_{ck} / \\sum_{ck} n_c n_k \\delta^2_{ck}` over
    pairable units. Nominal: :math:`\\sum o\\delta^2 = N - \\operatorname{tr} O`. Interval:
    :math:`\\delta_{ck} = v_c - v_k`. Ordinal: :math:`\\delta_{ck} = m_k - m_c` with the
    mid-cumulative frequency :math:`m_c = \\sum_{g<c} n_g + n_c/2`, which is Krippendorff's
    :math:`\\sum_{g=c}^{k} n_g - (n_c+n_k)/2`; so both are an interval metric on a position x and
    :math:`\\sum o\\delta^2 = 2\\sum_c n_c x_c^2 - 2 x^\\top O x`, with
    :math:`x^\\top O x = \\sum_u ((\\sum_c c_{uc} x_c)^2 - \\sum_c c_{uc} x_c^2)/(n_u-1)`. Cost O(patterns x q),
    which matters for judges whose averaged scores take a hundred distinct values; with ``split`` (the same
    counts as :class:`_Split`) the products over resamples cost O(patterns) instead. ``marg`` (G, R, q): the
    pairable values per category (:attr:`_Sums.marg`).
    """
    n = C.sum(axis=-1)
    pair = (n >= 2)
    inv = np.where(pair, safe_div(np.ones_like(n), n - 1), 0.0)
    inv = np.nan_to_num(inv)
    # One pass (.passes) for the ordinal x'Ox and the sums over categories: N, sum n_c^2, and with the
    # mid-cumulative positions (one set per resample) sum n_c m_c^2 and sum n_c m_c.
    xox_o, N, sq, s2, sm = passes(W.size).alpha_sums(W, marg, split.human, split.cols, split.extra, inv)
    out = {}
    # nominal
    diag = ((C * (C - 1)).sum(axis=-1)) * inv
    do = N - _mm(W, diag)
    de = N ** 2 - sq
    out["krippendorff_alpha_nominal"] = 1.0 - safe_div((N - 1) * do, de)
    # interval: positions are the values themselves (halved to a power of two when a stray score near 1e308
    # would overflow the squares: exact, and alpha is a ratio)
    top = float(np.abs(values).max()) if len(values) else 0.0
    v = values if top <= 1e150 else np.ldexp(values, -math.ceil(math.log2(top)))
    xox = (((C @ v) ** 2 - C @ v ** 2) * inv)
    mv2 = marg @ v ** 2
    do = 2 * mv2 - 2 * _mm(W, xox)
    de = 2 * N * mv2 - 2 * (marg @ v) ** 2
    out["krippendorff_alpha_interval"] = 1.0 - safe_div((N - 1) * do, de)
    # ordinal: positions are mid-cumulative frequencies (whole and half numbers, so every sum over c is exact)
    do = 2 * s2 - 2 * xox_o
    de = 2 * N * s2 - 2 * sm ** 2
    out["krippendorff_alpha_ordinal"] = 1.0 - safe_div((N - 1) * do, de)
    return {f"krippendorff_alpha_{k}": out[f"krippendorff_alpha_{k}"] for k in _METRICS}


def human_stats(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray) -> dict[str, np.ndarray]:
    """Measures among humans, (G, R) each (:data:`HUMAN_MEASURES`); ``q_scale``: categories of each group's scale."""
    cols = np.flatnonzero(C.any(axis=(0, 1)))
    split = _Split(C[..., cols], cols, np.full(C.shape[:2], -1))
    two, rated, full = _masks(C)
    pairs, rated, full, marg_h = _exact_sums(W, two, rated, full, split.human * two[..., None])
    marg = np.zeros((*W.shape[:2], C.shape[-1]))
    marg[..., cols] = marg_h
    return _human_measures(C, W, values, q_scale, _Sums(pairs, rated, full, marg), split)


def _human_measures(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray, sums: _Sums,
                    split: _Split) -> dict[str, np.ndarray]:
    """:func:`human_stats` from the counts' exact sums, and the same counts as a :class:`_Split`."""
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    Pi = np.nan_to_num(safe_div((C * (C - 1)).sum(axis=-1), n * (n - 1))) * two
    m2 = sums.pairs
    pa = safe_div(_mm(W, Pi), m2)
    # One product over all q categories: the shares are fractions, and a sum in another order than
    # the matrix product's would move the last digits of kappa (amplified where 1 - pe is small).
    # pi = that / rated, and sum pi^2, sum pi (1 - pi) in one pass (.passes)
    pe_f, pe_var = passes(W.size).share_sums(_mm(W, np.nan_to_num(safe_div(C, n[..., None]))), sums.rated)
    qs = q_scale[:, None].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pe_g = np.where(qs >= 2, pe_var / (qs - 1), np.nan)
        pabak = np.where(qs >= 2, (qs * pa - 1) / (qs - 1), np.nan)
    out = {
        "percent_agreement": pa,
        "full_agreement": safe_div(sums.full, m2),
        "fleiss_kappa": safe_div(pa - pe_f, 1 - pe_f),
        "gwet_ac1": safe_div(pa - pe_g, 1 - pe_g),
        "pabak": pabak,
    }
    out.update(_alphas(C, W, values, sums.marg, split))
    return out


def _kappas_f1(r: np.ndarray, c: np.ndarray, tp: np.ndarray, agree: np.ndarray, W: np.ndarray, major: np.ndarray,
               judge: np.ndarray, hm: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Cohen's kappa (unweighted and quadratic) and weighted F1 of the judge against the human majority.

    From per-pattern agreement and the two marginal distributions, without a q x q confusion
    matrix: :math:`\\kappa = (p_o - p_e)/(1 - p_e)`, :math:`p_e = \\sum_{ab} r_a c_b w_{ab} / N^2`;
    quadratic weights :math:`w_{ab} = 1-(v_a-v_b)^2/s^2` give
    :math:`\\sum r_a c_b w_{ab} = N^2 - (N\\sum r v^2 + N\\sum c v^2 - 2\\sum r v \\sum c v)/s^2`.
    The marginals ``r`` (the majority's) and ``c`` (the judge's), the agreements per category ``tp`` (G, R, q)
    and their total ``agree`` (G, R) are exact sums of the weights (:func:`judge_stats`).
    """
    f1r, rc, tot = passes(W.size).f1_sums(r, c, tp)  # sum F1 r, sum r c and sum r, in one pass (.passes)
    po = safe_div(agree, tot)
    pe = safe_div(rc, tot ** 2)
    out = {"cohen_kappa": safe_div(po - pe, 1 - pe)}
    span = float(values.max() - values.min())
    if span > 1e150:  # a stray score near 1e308: halve the scale to a power of two (exact; the weights are ratios)
        values = np.ldexp(values, -math.ceil(math.log2(span)))
        span = float(values.max() - values.min())
    span2 = span ** 2
    if span2 > 0:
        d = (values[major] - values[judge]) ** 2 / span2 * hm
        po_q = safe_div(tot - _mm(W, d), tot)
        rv, cv = r @ values, c @ values
        cross = tot ** 2 - (tot * (r @ values ** 2) + tot * (c @ values ** 2) - 2 * rv * cv) / span2
        pe_q = safe_div(cross, tot ** 2)
        out["cohen_kappa_quadratic"] = safe_div(po_q - pe_q, 1 - pe_q)
    else:
        out["cohen_kappa_quadratic"] = out["cohen_kappa"]
    out["weighted_f1"] = safe_div(f1r, tot)
    return out


def _points(W: np.ndarray, x: np.ndarray, y: np.ndarray):
    """The distinct (x, y) points of each group: rank statistics need only those.

    Returns their weights (G, R, Kc) (exact sums of the patterns', :func:`_cat_sums`) and each point's rank
    among its group's distinct x and among its distinct y, (G, Kc) each, -1 on padding. Points are in the
    order of ``np.unique`` on (group, x, y).
    """
    G, K = x.shape
    g = np.repeat(np.arange(G), K)
    # One integer per (group, x, y) from the ranks of x and y: the order of np.unique on rows.
    xu, xi = np.unique(x.ravel(), return_inverse=True)
    yu, yi = np.unique(y.ravel(), return_inverse=True)
    nx, ny = len(xu), len(yu)
    uniq, inv = np.unique((g * nx + xi.ravel()) * ny + yi.ravel(), return_inverse=True)
    ug, ux, uy = uniq // (nx * ny), (uniq // ny) % nx, uniq % ny
    per = np.bincount(ug, minlength=G)
    start = np.concatenate([[0], np.cumsum(per)[:-1]])
    local = np.arange(len(uniq)) - start[ug]
    Kc = int(per.max())
    ranks = []
    for u in (ux, uy):  # a point's rank among its group's distinct values: first occurrences, counted
        _, first, back = np.unique(ug * max(nx, ny) + u, return_index=True, return_inverse=True)
        rank = np.full((G, Kc), -1, dtype=np.int64)
        rank[ug, local] = (np.arange(len(first)) - np.searchsorted(ug[first], ug[first], side="left"))[back.ravel()]
        ranks.append(rank)
    return _cat_sums(W, local[inv.ravel()].reshape(G, K), Kc), ranks[0], ranks[1]


def _rank_stats(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and Spearman's rho (Pearson's r of weighted midranks) over weighted (x, y) patterns.

    Per group, the weights of its distinct points form a contingency table (distinct x by distinct y, per
    resample): :func:`evalcore.stats.kendall.tau_b_table` gives tau-b from its cumulative sums, and its margins
    give each point's midrank, :math:`\\sum_{x_l < x_k} w_l + (\\sum_{x_l = x_k} w_l + 1)/2`. Every count is a
    whole or half number, so both are exactly what a sum over pairs of patterns gives, at a cost of the
    table's cells instead of the squared number of points (one compiled pass per resample on large tables,
    :mod:`.passes`).
    """
    Wc, ax, ay = _points(W, x, y)
    return passes(W.size).rank_stats(Wc, ax, ay)


def judge_stats(C: np.ndarray, W: np.ndarray, judge: np.ndarray, values: np.ndarray, q_scale: np.ndarray
                ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Measures of one judge against the humans, (G, R) each (:data:`JUDGE_MEASURES`), and the units each uses.

    ``judge``: the judge's category of each pattern (G, K), -1 on padding.
    """
    j = np.maximum(judge, 0)
    q = len(values)
    n = C.sum(axis=-1)
    label = strict_majority(C)  # the one human label (evalcore.labels), shared with the pairwise analyses
    has_major = label != NO_MAJORITY
    major = np.maximum(label, 0)
    hm = has_major.astype(float)
    # The judge as one more rater (Cj), against the humans alone (C) on the same units. Products over resamples
    # use the humans' few categories and the judge's one (_Split), not all q.
    cols = np.flatnonzero(C.any(axis=(0, 1)))
    human = C[..., cols]
    Cj = C + np.eye(q)[j] * (n > 0)[..., None]
    sj_split, sh_split = _Split(human, cols, np.where(n > 0, j, -1)), _Split(human, cols, np.full(j.shape, -1))
    same = (j == major) * hm
    major_hot = (major[..., None] == cols) * hm[..., None]  # (G, K, h): the majority is one of the humans' labels
    (two, rated, full), (two_j, rated_j, full_j) = _masks(C), _masks(Cj)
    sums = _exact_sums(W, np.ones_like(hm), hm, same, two, rated, full, two_j, rated_j, full_j, major_hot,
                       major_hot * same[..., None], human * two[..., None], human * two_j[..., None])
    total, with_major, agree, *counts, r_h, tp_h, marg_h, marg_jh = sums
    # The judge's category: with a majority (c), and every judge rating on a pairable unit (the judge's part of
    # the marginal with the judge as a rater: on units with a majority both are the weight), in one pass.
    by_judge = _cat_sums(W, np.where(n > 0, np.where(has_major, j, j + q), -1), 2 * q)
    r, tp, c = np.zeros((*W.shape[:2], q)), np.zeros((*W.shape[:2], q)), np.ascontiguousarray(by_judge[..., :q])
    r[..., cols], tp[..., cols] = r_h, tp_h
    marg, marg_j = np.zeros_like(r), np.zeros_like(r)
    marg[..., cols], marg_j[..., cols] = marg_h, marg_jh
    marg_j += by_judge[..., :q] + by_judge[..., q:]  # exact: two_j is 1 wherever the judge rates (n >= 1)
    out: dict[str, np.ndarray] = {"percent_agreement": safe_div(agree, with_major)}
    units: dict[str, np.ndarray] = {}
    out.update(_kappas_f1(r, c, tp, agree, W, major, j, hm, values))
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = with_major
    out["kendall_tau"], out["spearman_rho"] = _rank_stats(W, values[j], np.nan_to_num(safe_div(C @ values, n)))
    units["kendall_tau"] = units["spearman_rho"] = total
    sj = _human_measures(Cj, W, values, q_scale, _Sums(*counts[3:], marg_j), sj_split)
    sh = _human_measures(C, W, values, q_scale, _Sums(*counts[:3], marg), sh_split)
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = total
    share = np.nan_to_num(safe_div(np.take_along_axis(C, j[..., None], axis=-1)[..., 0], n))
    pairs = counts[0]
    pair = safe_div(_mm(W, share * two), pairs)
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = pairs
    return out, units
