"""The agreement measures' fast products against the dense ones they replace, on HANNA and seeded simulations.

A judge whose averaged scores take a hundred categories made the old products (G, R, K) x (G, K, q) and the
rank statistics' (Kc x Kc) pair matrices the cost of the Agreement page. The new path sums the weights by
category (a bincount or a few-column product), adds the judge to the humans as one more rating instead of a
one-hot matrix, and takes tau-b and the midranks from each group's contingency table. The dense reference below
is the code as it was (docstrings left out): every quantity whose sums are exact (whole and half numbers) must
come out bitwise equal, and every measure equal within the golden outputs' tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr
from threadpoolctl import threadpool_limits

from evalcore.labels import NO_MAJORITY, strict_majority
from evalcore.pointwise.agreement import measures as M
from evalcore.pointwise.agreement.groups import group_codes
from evalcore.pointwise.agreement.measures import human_stats, judge_stats
from evalcore.pointwise.agreement.table import _cells
from evalcore.pointwise.agreement.units import count_units
from evalcore.stats.bootstrap import root_seed
from evalcore.stats.numeric import safe_div
from tests.helpers import DATASETS
from tests.unit.hanna import hanna_frame

_METRICS = ("nominal", "ordinal", "interval")
#: Measures whose every sum is exact (whole or half numbers): bitwise equal to the dense path.
EXACT = ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1", "kendall_tau", "spearman_rho",
         "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
         "pairwise_agreement")


# --------------------------------------------------------------------------- the dense path, as it was

def _dense_mm(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    if X.ndim == 2:
        return np.matmul(W, X[:, :, None])[..., 0]
    return np.matmul(W, X)


def _dense_alphas(C: np.ndarray, W: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    n = C.sum(axis=-1)
    pair = (n >= 2)
    inv = np.where(pair, safe_div(np.ones_like(n), n - 1), 0.0)
    inv = np.nan_to_num(inv)
    Cp = C * pair[..., None]
    marg = _dense_mm(W, Cp)  # (G, R, q) pairable value frequencies
    N = marg.sum(axis=-1)
    out = {}
    # nominal
    diag = ((C * (C - 1)).sum(axis=-1)) * inv
    do = N - _dense_mm(W, diag)
    de = N ** 2 - (marg ** 2).sum(axis=-1)
    out["krippendorff_alpha_nominal"] = 1.0 - safe_div((N - 1) * do, de)
    # interval: positions are the values themselves (halved to a power of two when a stray score near 1e308
    # would overflow the squares: exact, and alpha is a ratio)
    top = float(np.abs(values).max()) if len(values) else 0.0
    v = values if top <= 1e150 else np.ldexp(values, -math.ceil(math.log2(top)))
    xox = (((C @ v) ** 2 - C @ v ** 2) * inv)
    do = 2 * (marg @ v ** 2) - 2 * _dense_mm(W, xox)
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


def _dense_human_stats(C: np.ndarray, W: np.ndarray, values: np.ndarray, q_scale: np.ndarray) -> dict[str, np.ndarray]:
    n = C.sum(axis=-1)
    two = (n >= 2).astype(float)
    Pi = np.nan_to_num(safe_div((C * (C - 1)).sum(axis=-1), n * (n - 1))) * two
    full = (C.max(axis=-1) == n).astype(float) * two
    m2 = _dense_mm(W, two)
    pa = safe_div(_dense_mm(W, Pi), m2)
    pi = safe_div(_dense_mm(W, np.nan_to_num(safe_div(C, n[..., None]))), _dense_mm(W, (n >= 1).astype(float))[..., None])
    pe_f = (pi ** 2).sum(axis=-1)
    qs = q_scale[:, None].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pe_g = np.where(qs >= 2, (pi * (1 - pi)).sum(axis=-1) / (qs - 1), np.nan)
        pabak = np.where(qs >= 2, (qs * pa - 1) / (qs - 1), np.nan)
    out = {
        "percent_agreement": pa,
        "full_agreement": safe_div(_dense_mm(W, full), m2),
        "fleiss_kappa": safe_div(pa - pe_f, 1 - pe_f),
        "gwet_ac1": safe_div(pa - pe_g, 1 - pe_g),
        "pabak": pabak,
    }
    out.update(_dense_alphas(C, W, values))
    return out


def _dense_kappas_f1(W: np.ndarray, major: np.ndarray, judge: np.ndarray, has_major: np.ndarray,
               values: np.ndarray) -> dict[str, np.ndarray]:
    q = len(values)
    hm = has_major.astype(float)
    eye = np.eye(q)
    R1 = eye[major] * hm[..., None]  # (G, K, q) one-hot of the majority
    C1 = eye[judge] * hm[..., None]
    r, c = _dense_mm(W, R1), _dense_mm(W, C1)  # (G, R, q)
    tot = r.sum(axis=-1)
    same = (major == judge) * hm
    tp = _dense_mm(W, R1 * same[..., None])
    po = safe_div(_dense_mm(W, same), tot)
    pe = safe_div((r * c).sum(axis=-1), tot ** 2)
    out = {"cohen_kappa": safe_div(po - pe, 1 - pe)}
    span = float(values.max() - values.min())
    if span > 1e150:  # a stray score near 1e308: halve the scale to a power of two (exact; the weights are ratios)
        values = np.ldexp(values, -math.ceil(math.log2(span)))
        span = float(values.max() - values.min())
    span2 = span ** 2
    if span2 > 0:
        d = (values[major] - values[judge]) ** 2 / span2 * hm
        po_q = safe_div(tot - _dense_mm(W, d), tot)
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


def _dense_pair_sum(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    return (np.matmul(W, S) * W).sum(axis=-1)


def _dense_tau_b(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    N = W.sum(axis=-1)
    conc = _dense_pair_sum(W, sx * sy) / 2.0
    n0 = N * (N - 1) / 2
    tx = (_dense_pair_sum(W, (sx == 0).astype(float)) - N) / 2
    ty = (_dense_pair_sum(W, (sy == 0).astype(float)) - N) / 2
    return safe_div(conc, np.sqrt((n0 - tx) * (n0 - ty)))


def _dense_spearman(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
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


def _dense_collapse(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _dense_judge_stats(C: np.ndarray, W: np.ndarray, judge: np.ndarray, values: np.ndarray, q_scale: np.ndarray
                ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    j = np.maximum(judge, 0)
    q = len(values)
    n = C.sum(axis=-1)
    label = strict_majority(C)  # the one human label (evalcore.labels), shared with the pairwise analyses
    has_major = label != NO_MAJORITY
    major = np.maximum(label, 0)
    hm = has_major.astype(float)
    out: dict[str, np.ndarray] = {}
    units: dict[str, np.ndarray] = {}
    out["percent_agreement"] = safe_div(_dense_mm(W, (j == major) * hm), _dense_mm(W, hm))
    out.update(_dense_kappas_f1(W, major, j, has_major, values))
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = _dense_mm(W, hm)
    x = values[j]
    y = np.nan_to_num(safe_div(C @ values, n))
    Wc, xc, yc = _dense_collapse(W, x, y)
    out["kendall_tau"] = _dense_tau_b(xc, yc, Wc)
    out["spearman_rho"] = _dense_spearman(xc, yc, Wc)
    units["kendall_tau"] = units["spearman_rho"] = W.sum(axis=-1)
    # The judge as one more rater, against the humans alone on the same units.
    Cj = C + np.eye(q)[j] * (n > 0)[..., None]
    sj, sh = _dense_human_stats(Cj, W, values, q_scale), _dense_human_stats(C, W, values, q_scale)
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = W.sum(axis=-1)
    two = (n >= 2).astype(float)
    share = np.nan_to_num(safe_div(np.take_along_axis(C, j[..., None], axis=-1)[..., 0], n))
    pair = safe_div(_dense_mm(W, share * two), _dense_mm(W, two))
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = _dense_mm(W, two)
    return out, units


# --------------------------------------------------------------------------- checks


def _same(got: dict, want: dict, exact=EXACT) -> None:
    assert got.keys() == want.keys()
    for m in want:
        if m in exact:
            assert np.array_equal(got[m], want[m], equal_nan=True), m
        np.testing.assert_allclose(got[m], want[m], rtol=1e-12, atol=1e-14, err_msg=m)


def _simulated(seed: int, *, G=3, K=40, R=30, q=60, raters=3):
    """Patterns as a family lays them out: human counts on a few integer categories, a judge with fractional
    categories, whole-number weights (some zero), padding at the end of each group."""
    rng = np.random.default_rng(seed)
    values = np.sort(np.concatenate([np.arange(1.0, 6.0), rng.uniform(1, 5, q - 5)]))
    human = np.flatnonzero(np.isin(values, np.arange(1.0, 6.0)))
    C = np.zeros((G, K, q))
    for g in range(G):
        for k in range(K):
            np.add.at(C[g, k], rng.choice(human, rng.integers(1, raters + 1)), 1)
    judge = rng.integers(0, q, (G, K))
    W = rng.integers(0, 4, (G, R, K)).astype(float)
    pad = K - 5
    C[0, pad:], judge[0, pad:], W[0, :, pad:] = 0, -1, 0  # group 0 has fewer patterns
    return C, W, judge, values, np.full(G, len(human))


@pytest.mark.parametrize("seed", range(4))
def test_judge_and_human_measures_equal_the_dense_products_on_simulations(seed):
    C, W, judge, values, q_scale = _simulated(seed)
    with threadpool_limits(1, user_api="blas"):
        got, got_units = judge_stats(C, W, judge, values, q_scale)
        want, want_units = _dense_judge_stats(C, W, judge, values, q_scale)
        _same(got, want)
        _same(got_units, want_units, exact=tuple(want_units))
        _same(human_stats(C, W, values, q_scale), _dense_human_stats(C, W, values, q_scale),
              exact=tuple(M.HUMAN_MEASURES))


@pytest.mark.slow  # real data: the full suite runs it, --fast does not
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA check needs it")
@pytest.mark.parametrize("by", [["criterion"], []])
def test_every_hanna_judge_equals_the_dense_products(by):
    units = count_units(hanna_frame())
    gcodes, keys = group_codes(units, by)
    cells = _cells(units, gcodes, keys, nominal=False, n_boot=40, level=0.95, root=root_seed(5))
    with threadpool_limits(1, user_api="blas"):
        for name in units.judges:
            jc = units.judge_codes[units.judges.index(name)]
            f = cells.family(np.flatnonzero(units.has_human & (jc >= 0)), jc, name)
            got, _ = judge_stats(f.counts, f.weights, f.judge, f.values, cells.q_scale)
            _same(got, _dense_judge_stats(f.counts, f.weights, f.judge, f.values, cells.q_scale)[0])


@pytest.mark.parametrize("many", [False, True])
def test_sums_by_category_equal_the_one_hot_product(many):
    rng = np.random.default_rng(3)
    G, R, K, q = 4, 25, 90, 120
    W = rng.integers(0, 5, (G, R, K)).astype(float)
    cat = rng.integers(0, q if many else 7, (G, K)) * (1 if many else 3)
    cat[1, :10] = -1
    x = rng.integers(0, 3, (G, K)).astype(float)
    onehot = (cat[..., None] == np.arange(q)) * x[..., None]
    assert np.array_equal(M._cat_sums(W, cat, q, x), np.matmul(W, onehot))


def test_rank_statistics_equal_scipy_on_each_resample_written_out():
    rng = np.random.default_rng(11)
    G, K, R = 2, 30, 12
    x = np.round(rng.uniform(1, 5, (G, K)), 1)
    y = rng.integers(2, 11, (G, K)) / 2.0
    W = rng.integers(0, 3, (G, R, K)).astype(float)
    tau, rho = M._rank_stats(W, x, y)
    for g in range(G):
        for r in range(R):
            picked = np.repeat(np.arange(K), W[g, r].astype(int))
            assert tau[g, r] == pytest.approx(kendalltau(x[g, picked], y[g, picked]).statistic, abs=1e-12)
            assert rho[g, r] == pytest.approx(spearmanr(x[g, picked], y[g, picked]).statistic, abs=1e-12)
