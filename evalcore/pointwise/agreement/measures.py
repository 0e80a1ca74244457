"""The agreement measures, computed on per-pattern counts for every group and resample at once (numpy only).

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

import numpy as np

from ...labels import NO_MAJORITY, strict_majority
from ...stats.numeric import safe_div

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


def _alphas(C: np.ndarray, W: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Krippendorff's alpha per metric, without forming the q x q coincidence matrix.

    :math:`\\alpha = 1 - (N-1) \\sum_{ck} o_{ck}\\delta^2_{ck} / \\sum_{ck} n_c n_k \\delta^2_{ck}` over
    pairable units. Nominal: :math:`\\sum o\\delta^2 = N - \\operatorname{tr} O`. Interval:
    :math:`\\delta_{ck} = v_c - v_k`. Ordinal: :math:`\\delta_{ck} = m_k - m_c` with the
    mid-cumulative frequency :math:`m_c = \\sum_{g<c} n_g + n_c/2`, which is Krippendorff's
    :math:`\\sum_{g=c}^{k} n_g - (n_c+n_k)/2`; so both are an interval metric on a position x and
    :math:`\\sum o\\delta^2 = 2\\sum_c n_c x_c^2 - 2 x^\\top O x`, with
    :math:`x^\\top O x = \\sum_u ((\\sum_c c_{uc} x_c)^2 - \\sum_c c_{uc} x_c^2)/(n_u-1)`. Cost O(patterns x q),
    which matters for judges whose averaged scores take a hundred distinct values.
    """
    n = C.sum(axis=-1)
    pair = (n >= 2)
    inv = np.where(pair, safe_div(np.ones_like(n), n - 1), 0.0)
    inv = np.nan_to_num(inv)
    Cp = C * pair[..., None]
    marg = _mm(W, Cp)  # (G, R, q) pairable value frequencies
    N = marg.sum(axis=-1)
    out = {}
    # nominal
    diag = ((C * (C - 1)).sum(axis=-1)) * inv
    do = N - _mm(W, diag)
    de = N ** 2 - (marg ** 2).sum(axis=-1)
    out["krippendorff_alpha_nominal"] = 1.0 - safe_div((N - 1) * do, de)
    # interval: positions are the values themselves (halved to a power of two when a stray score near 1e308
    # would overflow the squares: exact, and alpha is a ratio)
    top = float(np.abs(values).max()) if len(values) else 0.0
    v = values if top <= 1e150 else np.ldexp(values, -math.ceil(math.log2(top)))
    xox = (((C @ v) ** 2 - C @ v ** 2) * inv)
    do = 2 * (marg @ v ** 2) - 2 * _mm(W, xox)
    de = 2 * N * (marg @ v ** 2) - 2 * (marg @ v) ** 2
    out["krippendorff_alpha_interval"] = 1.0 - safe_div((N - 1) * do, de)
    # ordinal: positions are mid-cumulative frequencies, one set per resample
    m = np.cumsum(marg, axis=-1) - marg / 2.0  # (G, R, q)
    Cm = np.matmul(m, C.transpose(0, 2, 1))  # (G, R, K): sum_c c_uc m_c
    Cm2 = np.matmul(m ** 2, C.transpose(0, 2, 1))
    xox = ((Cm ** 2 - Cm2) * inv[:, None, :] * W).sum(axis=-1)
    s2 = (marg * m ** 2).sum(axis=-1)
    do = 2 * s2 - 2 * xox
    de = 2 * N * s2 - 2 * (marg * m).sum(axis=-1) ** 2
    out["krippendorff_alpha_ordinal"] = 1.0 - safe_div((N - 1) * do, de)
    return {f"krippendorff_alpha_{k}": out[f"krippendorff_alpha_{k}"] for k in _METRICS}


def human_stats(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray) -> dict[str, np.ndarray]:
    """Measures among humans, (G, R) each (:data:`HUMAN_MEASURES`); ``q_scale``: categories of each group's scale."""
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    Pi = np.nan_to_num(safe_div((C * (C - 1)).sum(axis=-1), n * (n - 1))) * two
    full = (C.max(axis=-1) == n).astype(float) * two
    m2 = _mm(W, two)
    pa = safe_div(_mm(W, Pi), m2)
    pi = safe_div(_mm(W, np.nan_to_num(safe_div(C, n[..., None]))), _mm(W, (n >= 1).astype(float))[..., None])
    pe_f = (pi ** 2).sum(axis=-1)
    qs = q_scale[:, None].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pe_g = np.where(qs >= 2, (pi * (1 - pi)).sum(axis=-1) / (qs - 1), np.nan)
        pabak = np.where(qs >= 2, (qs * pa - 1) / (qs - 1), np.nan)
    out = {
        "percent_agreement": pa,
        "full_agreement": safe_div(_mm(W, full), m2),
        "fleiss_kappa": safe_div(pa - pe_f, 1 - pe_f),
        "gwet_ac1": safe_div(pa - pe_g, 1 - pe_g),
        "pabak": pabak,
    }
    out.update(_alphas(C, W, values))
    return out


def _kappas_f1(W: np.ndarray, major: np.ndarray, judge: np.ndarray, has_major: np.ndarray,
               values: np.ndarray) -> dict[str, np.ndarray]:
    """Cohen's kappa (unweighted and quadratic) and weighted F1 of the judge against the human majority.

    From per-pattern agreement and the two marginal distributions, without a q x q confusion
    matrix: :math:`\\kappa = (p_o - p_e)/(1 - p_e)`, :math:`p_e = \\sum_{ab} r_a c_b w_{ab} / N^2`;
    quadratic weights :math:`w_{ab} = 1-(v_a-v_b)^2/s^2` give
    :math:`\\sum r_a c_b w_{ab} = N^2 - (N\\sum r v^2 + N\\sum c v^2 - 2\\sum r v \\sum c v)/s^2`.
    """
    q = len(values)
    hm = has_major.astype(float)
    eye = np.eye(q)
    R1 = eye[major] * hm[..., None]  # (G, K, q) one-hot of the majority
    C1 = eye[judge] * hm[..., None]
    r, c = _mm(W, R1), _mm(W, C1)  # (G, R, q)
    tot = r.sum(axis=-1)
    same = (major == judge) * hm
    tp = _mm(W, R1 * same[..., None])
    po = safe_div(_mm(W, same), tot)
    pe = safe_div((r * c).sum(axis=-1), tot ** 2)
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
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(r + c > 0, 2 * tp / (r + c), 0.0)
    out["weighted_f1"] = safe_div((f1 * r).sum(axis=-1), r.sum(axis=-1))
    return out


def _pair_sum(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """sum_{k,l} W_k W_l S_kl per (group, row), with S (G, K, K): a batched BLAS product."""
    return (np.matmul(W, S) * W).sum(axis=-1)


def _tau_b(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Kendall's tau-b over weighted (x, y) patterns: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    N = W.sum(axis=-1)
    conc = _pair_sum(W, sx * sy) / 2.0
    n0 = N * (N - 1) / 2
    tx = (_pair_sum(W, (sx == 0).astype(float)) - N) / 2
    ty = (_pair_sum(W, (sy == 0).astype(float)) - N) / 2
    return safe_div(conc, np.sqrt((n0 - tx) * (n0 - ty)))


def _spearman(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Spearman's rho: Pearson's r of weighted midranks."""
    def ranks(v: np.ndarray) -> np.ndarray:
        lt = (v[:, None, :] < v[:, :, None]).astype(float)  # [k, l] = v_l < v_k
        eq = (v[:, None, :] == v[:, :, None]).astype(float)
        return np.matmul(W, lt.transpose(0, 2, 1)) + (np.matmul(W, eq) + 1) / 2

    rx, ry = ranks(x), ranks(y)
    N = W.sum(axis=-1, keepdims=True)
    mx = safe_div((W * rx).sum(axis=-1, keepdims=True), N)
    my = safe_div((W * ry).sum(axis=-1, keepdims=True), N)
    cov = (W * (rx - mx) * (ry - my)).sum(axis=-1)
    vx = (W * (rx - mx) ** 2).sum(axis=-1)
    vy = (W * (ry - my) ** 2).sum(axis=-1)
    return safe_div(cov, np.sqrt(vx * vy))


def _collapse(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge patterns with the same (x, y) within each group: rank statistics need only those points.

    Returns weights (G, R, Kc) and the points' x and y (G, Kc); this keeps the pairwise
    (Kc x Kc) products of tau and rho small when a judge's scores take many values.
    """
    G, K = x.shape
    g = np.repeat(np.arange(G), K)
    # One integer per (group, x, y) from the ranks of x and y: the order of np.unique on rows.
    xu, xi = np.unique(x.ravel(), return_inverse=True)
    yu, yi = np.unique(y.ravel(), return_inverse=True)
    nx, ny = len(xu), len(yu)
    uniq, inv = np.unique((g * nx + xi.ravel()) * ny + yi.ravel(), return_inverse=True)
    inv = inv.ravel()
    ug = uniq // (nx * ny)
    per = np.bincount(ug, minlength=G)
    start = np.concatenate([[0], np.cumsum(per)[:-1]])
    local = np.arange(len(uniq)) - start[ug]
    Kc = int(per.max())
    M = np.zeros((G, K, Kc))
    M[g, np.tile(np.arange(K), G), local[inv]] = 1.0
    xc, yc = np.zeros((G, Kc)), np.zeros((G, Kc))
    xc[ug, local], yc[ug, local] = xu[(uniq // ny) % nx], yu[uniq % ny]
    return np.matmul(W, M), xc, yc


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
    out: dict[str, np.ndarray] = {}
    units: dict[str, np.ndarray] = {}
    out["percent_agreement"] = safe_div(_mm(W, (j == major) * hm), _mm(W, hm))
    out.update(_kappas_f1(W, major, j, has_major, values))
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = _mm(W, hm)
    x = values[j]
    y = np.nan_to_num(safe_div(C @ values, n))
    Wc, xc, yc = _collapse(W, x, y)
    out["kendall_tau"] = _tau_b(xc, yc, Wc)
    out["spearman_rho"] = _spearman(xc, yc, Wc)
    units["kendall_tau"] = units["spearman_rho"] = W.sum(axis=-1)
    # The judge as one more rater, against the humans alone on the same units.
    Cj = C + np.eye(q)[j] * (n > 0)[..., None]
    sj, sh = human_stats(Cj, W, values, q_scale), human_stats(C, W, values, q_scale)
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = W.sum(axis=-1)
    two = (n >= 2).astype(float)
    share = np.nan_to_num(safe_div(np.take_along_axis(C, j[..., None], axis=-1)[..., 0], n))
    pair = safe_div(_mm(W, share * two), _mm(W, two))
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = _mm(W, two)
    return out, units

