"""The agreement measures, computed on per-pattern counts for every group and resample at once (numpy, and two
compiled passes for large tables: :func:`_cat_sums` and :func:`_take`, :mod:`.passes`).

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
from ...stats.kendall import tau_b_table
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
_TABLE_CELLS = 4_000_000  # cells of a rank table (points' x by y, per resample) handled at once: bounds memory
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


def _take(m: np.ndarray, cat: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``m[g, r, cat[g, k]]``, (G, R, K), 0 where ``cat`` is -1; added to ``out`` when given."""
    if out is None:
        out = np.zeros((*m.shape[:2], cat.shape[1]))
    return passes(out.size).take(m, cat, out)


@dataclass(frozen=True)
class _Split:
    """Counts (G, K, q) kept as the humans' counts on a few categories plus one more rating per pattern.

    A judge added as one more rater has C + onehot(judge): its products with the weights are those of
    the humans' few categories ``cols`` plus a sum by the judge's category (:func:`_cat_sums`), never a
    (G, R, K) x (G, K, q) product over the judge's many categories.
    """

    human: np.ndarray  # (G, K, h) the humans' counts on the categories cols
    cols: np.ndarray  # (h,) their categories among the q
    extra: np.ndarray | None  # (G, K) the category of one more rating per pattern, -1 for none
    q: int

    def weighted(self, W: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """:math:`\\sum_k W_{grk} C_{gkc} a_{gk}` for a 0/1 mask a (G, K): (G, R, q); exact with whole-number
        weights."""
        out = np.zeros((*W.shape[:2], self.q))
        out[..., self.cols] = _mm(W, self.human * mask[..., None])
        if self.extra is not None:
            out += _cat_sums(W, self.extra, self.q, mask.astype(float))
        return out

    def dot(self, m: np.ndarray) -> np.ndarray:
        """:math:`\\sum_c C_{gkc} m_{grc}` for per-resample category positions m (G, R, q): (G, R, K)."""
        out = np.matmul(m[..., self.cols], self.human.transpose(0, 2, 1))
        return out if self.extra is None else _take(m, self.extra, out)


def _dot(m: np.ndarray, C: np.ndarray, split: _Split | None) -> np.ndarray:
    return np.matmul(m, C.transpose(0, 2, 1)) if split is None else split.dot(m)


def _alphas(C: np.ndarray, W: np.ndarray, values: np.ndarray, split: _Split | None = None) -> dict[str, np.ndarray]:
    """Krippendorff's alpha per metric, without forming the q x q coincidence matrix.

    :math:`\\alpha = 1 - (N-1) \\sum_{ck} o_{ck}\\delta^2_{ck} / \\sum_{ck} n_c n_k \\delta^2_{ck}` over
    pairable units. Nominal: :math:`\\sum o\\delta^2 = N - \\operatorname{tr} O`. Interval:
    :math:`\\delta_{ck} = v_c - v_k`. Ordinal: :math:`\\delta_{ck} = m_k - m_c` with the
    mid-cumulative frequency :math:`m_c = \\sum_{g<c} n_g + n_c/2`, which is Krippendorff's
    :math:`\\sum_{g=c}^{k} n_g - (n_c+n_k)/2`; so both are an interval metric on a position x and
    :math:`\\sum o\\delta^2 = 2\\sum_c n_c x_c^2 - 2 x^\\top O x`, with
    :math:`x^\\top O x = \\sum_u ((\\sum_c c_{uc} x_c)^2 - \\sum_c c_{uc} x_c^2)/(n_u-1)`. Cost O(patterns x q),
    which matters for judges whose averaged scores take a hundred distinct values; with ``split`` (the same
    counts as :class:`_Split`) the products over resamples cost O(patterns) instead.
    """
    n = C.sum(axis=-1)
    pair = (n >= 2)
    inv = np.where(pair, safe_div(np.ones_like(n), n - 1), 0.0)
    inv = np.nan_to_num(inv)
    marg = _mm(W, C * pair[..., None]) if split is None else split.weighted(W, pair)  # (G, R, q) pairable frequencies
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
    # ordinal: positions are mid-cumulative frequencies, one set per resample (whole and half numbers, so
    # every sum below is exact)
    m = np.cumsum(marg, axis=-1) - marg / 2.0  # (G, R, q)
    Cm = _dot(m, C, split)  # (G, R, K): sum_c c_uc m_c
    Cm2 = _dot(m ** 2, C, split)
    Cm *= Cm  # in place, the same operations as ((Cm ** 2 - Cm2) * inv * W): fewer passes over (G, R, K)
    Cm -= Cm2
    Cm *= inv[:, None, :]
    Cm *= W
    xox = Cm.sum(axis=-1)
    s2 = (marg * m ** 2).sum(axis=-1)
    do = 2 * s2 - 2 * xox
    de = 2 * N * s2 - 2 * (marg * m).sum(axis=-1) ** 2
    out["krippendorff_alpha_ordinal"] = 1.0 - safe_div((N - 1) * do, de)
    return {f"krippendorff_alpha_{k}": out[f"krippendorff_alpha_{k}"] for k in _METRICS}


def human_stats(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray, *,
                split: _Split | None = None) -> dict[str, np.ndarray]:
    """Measures among humans, (G, R) each (:data:`HUMAN_MEASURES`); ``q_scale``: categories of each group's scale.

    ``split``: the same counts as a :class:`_Split`, for the exact products over resamples (the judge as one more
    rater) in Krippendorff's alpha.
    """
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    Pi = np.nan_to_num(safe_div((C * (C - 1)).sum(axis=-1), n * (n - 1))) * two
    full = (C.max(axis=-1) == n).astype(float) * two
    m2 = _mm(W, two)
    pa = safe_div(_mm(W, Pi), m2)
    # One product over all q categories: the shares are fractions, and a sum in another order than
    # the matrix product's would move the last digits of kappa (amplified where 1 - pe is small).
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
    out.update(_alphas(C, W, values, split))
    return out


def _kappas_f1(W: np.ndarray, major: np.ndarray, judge: np.ndarray, has_major: np.ndarray,
               values: np.ndarray) -> dict[str, np.ndarray]:
    """Cohen's kappa (unweighted and quadratic) and weighted F1 of the judge against the human majority.

    From per-pattern agreement and the two marginal distributions, without a q x q confusion
    matrix: :math:`\\kappa = (p_o - p_e)/(1 - p_e)`, :math:`p_e = \\sum_{ab} r_a c_b w_{ab} / N^2`;
    quadratic weights :math:`w_{ab} = 1-(v_a-v_b)^2/s^2` give
    :math:`\\sum r_a c_b w_{ab} = N^2 - (N\\sum r v^2 + N\\sum c v^2 - 2\\sum r v \\sum c v)/s^2`.
    The marginals are sums of the weights by category (:func:`_cat_sums`, exact).
    """
    q = len(values)
    hm = has_major.astype(float)
    same = (major == judge) * hm
    r = _cat_sums(W, np.where(has_major, major, -1), q)  # (G, R, q)
    c = _cat_sums(W, np.where(has_major, judge, -1), q)
    tot = r.sum(axis=-1)
    tp = _cat_sums(W, np.where(same > 0, major, -1), q)
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


def _midranks(Wc: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Each point's midrank in each resample, (G, R, Kc), from its rank ``at`` among its group's distinct values:
    the weight of the smaller values plus half that of its own, plus 1/2 (0.5 on padding, weight 0)."""
    S = _cat_sums(Wc, at, int(at.max()) + 1)  # weight per distinct value: the table's margin
    below = np.cumsum(S, axis=-1) - S
    return _take(below, at) + (_take(S, at) + 1) / 2


def _rank_stats(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and Spearman's rho (Pearson's r of weighted midranks) over weighted (x, y) patterns.

    Per group, the weights of its distinct points form a contingency table (distinct x by distinct y, per
    resample): :func:`evalcore.stats.kendall.tau_b_table` gives tau-b from its cumulative sums, and its margins
    give each point's midrank, :math:`\\sum_{x_l < x_k} w_l + (\\sum_{x_l = x_k} w_l + 1)/2`. Every count is a
    whole or half number, so both are exactly what a sum over pairs of patterns gives, at a cost of the
    table's cells instead of the squared number of points.
    """
    Wc, ax, ay = _points(W, x, y)
    G, R, Kc = Wc.shape
    tau = np.full((G, R), np.nan)
    for g in range(G):
        P = int((ax[g] >= 0).sum())
        if not P:
            continue
        a, b, w = ax[g, :P], ay[g, :P], Wc[g, :, :P]
        A, B = int(a.max()) + 1, int(b.max()) + 1
        step = max(1, _TABLE_CELLS // (A * B))
        for s in range(0, R, step):
            T = np.zeros((A, B, min(step, R - s)))
            T[a, b] = w[s:s + step].T
            tau[g, s:s + step] = tau_b_table(T)
    rx, ry = (_midranks(Wc, at) for at in (ax, ay))
    N = Wc.sum(axis=-1, keepdims=True)
    mx = safe_div((Wc * rx).sum(axis=-1, keepdims=True), N)
    my = safe_div((Wc * ry).sum(axis=-1, keepdims=True), N)
    dx, dy = rx - mx, ry - my
    cov = (Wc * dx * dy).sum(axis=-1)
    vx = (Wc * dx ** 2).sum(axis=-1)
    vy = (Wc * dy ** 2).sum(axis=-1)
    return tau, safe_div(cov, np.sqrt(vx * vy))


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
    with_major, total = _mm(W, hm), W.sum(axis=-1)
    out["percent_agreement"] = safe_div(_mm(W, (j == major) * hm), with_major)
    out.update(_kappas_f1(W, major, j, has_major, values))
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = with_major
    x = values[j]
    y = np.nan_to_num(safe_div(C @ values, n))
    out["kendall_tau"], out["spearman_rho"] = _rank_stats(W, x, y)
    units["kendall_tau"] = units["spearman_rho"] = total
    # The judge as one more rater, against the humans alone on the same units.
    # Products over resamples use the humans' few categories and the judge's one (_Split), not all q.
    cols = np.flatnonzero(C.any(axis=(0, 1)))
    human = C[..., cols]
    Cj = C + np.eye(q)[j] * (n > 0)[..., None]
    sj = human_stats(Cj, W, values, q_scale, split=_Split(human, cols, np.where(n > 0, j, -1), q))
    sh = human_stats(C, W, values, q_scale, split=_Split(human, cols, None, q))
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = total
    two = (n >= 2).astype(float)
    share = np.nan_to_num(safe_div(np.take_along_axis(C, j[..., None], axis=-1)[..., 0], n))
    pairs = _mm(W, two)
    pair = safe_div(_mm(W, share * two), pairs)
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = pairs
    return out, units

