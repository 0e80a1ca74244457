"""Agreement between human annotators, and between a judge and the humans, with bootstrap intervals.

Methods (Hada et al. 2024 for PA, Fleiss' kappa and class distributions; Gwet 2008 for AC1;
Byrt, Bishop & Carlin 1993 for PABAK; Krippendorff 2011 for alpha; Stureborg et al. 2024 for
Kendall's tau against the human mean).

How it is computed, and why it is fast
--------------------------------------
Every measure here depends on the data only through, per *unit* (one item on one criterion),
the vector of human counts per score category ``c`` (and, for a judge, its category ``j``).
Units with the same ``(c, j)`` are compressed into one *pattern* with a weight, so a
measure costs O(patterns), not O(ratings). The bootstrap resamples *items* with
replacement (an item scored on several criteria moves as a whole); items that contribute
the same patterns are again compressed into *item types*, and a resample is a multinomial
draw of item-type counts. This is exactly the item bootstrap, at a cost independent of
the number of ratings (the sufficient-statistics idea of DESIGN.md). The compression uses
pandas factorize and numpy bincount; a SQL GROUP BY would give the same counts.

Measures (``measure`` names are a stable contract; see the README)
-------------------------------------------------------------------
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
  A gap whose interval lies below 0 means the judge agrees with humans significantly less
  than humans agree with each other (``flagged``).

Every row carries ``n_items`` (units used), ``n_ratings``, a percentile bootstrap interval
(``ci_low``, ``ci_high``) and a ``note`` saying why an estimate is "not defined" when it is.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from .columns import HUMAN, JUDGE
from .errors import DataError

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
RESULT_COLUMNS = ("judge", "measure", "estimate", "ci_low", "ci_high", "n_items", "n_ratings", "flagged", "note")
_METRICS = ("nominal", "ordinal", "interval")


# --------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class Units:
    """Ratings reduced to per-unit sufficient statistics (one unit = one item on one criterion).

    Built once per dataset by :func:`prepare`; every grouping is computed from it.

    Attributes
    ----------
    values
        Sorted distinct score values; categories are indices into it.
    counts
        ``(n_units, q)`` human ratings per category.
    judge_codes
        ``(n_judges, n_units)`` the judge's category, -1 where it did not rate the unit.
    judges
        Judge names, in the order of ``judge_codes``.
    item
        Item index of each unit (items are resampled as a whole).
    segments
        One row per unit: ``criterion`` and every segment column.
    scale
        Per criterion, the number of categories of its scale (distinct human scores).
    """

    values: np.ndarray
    counts: np.ndarray
    judge_codes: np.ndarray
    judges: tuple[str, ...]
    item: np.ndarray
    segments: pd.DataFrame
    scale: dict[str, int]


def segment_columns(ratings: pd.DataFrame) -> list[str]:
    """Columns a result can be grouped by: criterion, language, task and any other per-item segment."""
    skip = {"item_id", "rater", "rater_kind", "score", "sample", "position", "perplexity", "text"}
    out = []
    for c in ratings.columns:
        if c in skip:
            continue
        s = ratings[c]
        if pd.api.types.is_float_dtype(s) and s.nunique() > 50:
            continue  # a measurement, not a segment
        out.append(c)
    return out


def prepare(ratings: pd.DataFrame, *, segments: Sequence[str] | None = None) -> Units:
    """Reduce a validated ratings table to per-unit category counts.

    Where a rater judged a unit several times (``sample``), the first sample is used: the
    other samples are the subject of self-consistency, not of agreement.
    """
    need = {"item_id", "rater", "rater_kind", "criterion", "score"}
    missing = need - set(ratings.columns)
    if missing:
        raise DataError(f"the ratings table lacks {', '.join(sorted(missing))}",
                        fix="load a validated ratings table")
    df = ratings
    if "sample" in df.columns and df["sample"].nunique() > 1:
        first = df.groupby(["item_id", "criterion", "rater"], sort=False)["sample"].transform("min")
        df = df[df["sample"] == first]
    segs = list(segments) if segments is not None else segment_columns(df)
    segs = [s for s in segs if s != "criterion"]
    values, codes = np.unique(df["score"].to_numpy(dtype=float), return_inverse=True)
    item_code, _ = pd.factorize(df["item_id"], sort=False)
    crit_code, crit_names = pd.factorize(df["criterion"], sort=False)
    unit_key = item_code.astype(np.int64) * len(crit_names) + crit_code
    unit, unit_first = np.unique(unit_key, return_index=True)
    unit_idx = np.searchsorted(unit, unit_key)
    n_units, q = len(unit), len(values)
    is_h = (df["rater_kind"] == HUMAN).to_numpy()
    counts = np.bincount(unit_idx[is_h] * q + codes[is_h], minlength=n_units * q).reshape(n_units, q)
    is_j = (df["rater_kind"] == JUDGE).to_numpy()
    jcode, jnames = pd.factorize(df.loc[is_j, "rater"], sort=True)
    judge_codes = np.full((len(jnames), n_units), -1, dtype=np.int64)
    judge_codes[jcode, unit_idx[is_j]] = codes[is_j]
    seg_frame = df.iloc[unit_first][["criterion", *segs]].reset_index(drop=True)
    for s in segs:
        varies = df.groupby("item_id", sort=False)[s].nunique(dropna=False) > 1
        if varies.any():
            raise DataError(f"column '{s}' has different values within one item ('{varies.idxmax()}')",
                            column=s, fix=f"'{s}' must describe the item; group by another column")
    crit_of_unit = crit_code[unit_first]
    scale = {}
    for ci, name in enumerate(crit_names):
        hv = counts[crit_of_unit == ci].sum(axis=0)
        scale[str(name)] = int((hv > 0).sum())
    return Units(values=values, counts=counts, judge_codes=judge_codes, judges=tuple(map(str, jnames)),
                 item=item_code[unit_first], segments=seg_frame, scale=scale)


def default_by(units: Units) -> list[str]:
    """The default grouping: language and criterion, where the table has them."""
    return [c for c in ("language", "criterion") if c in units.segments.columns]


# --------------------------------------------------------------------------- resampling


@dataclass(frozen=True)
class _Patterns:
    counts: np.ndarray  # K x q (only the categories used in this cell)
    judge: np.ndarray  # K (category or -1)
    weights: np.ndarray  # (1 + B) x K: row 0 the data, rows 1.. bootstrap resamples
    n_items: int
    values: np.ndarray  # q score values of the categories kept


def _compress(counts: np.ndarray, judge: np.ndarray, item: np.ndarray, values: np.ndarray, *, n_boot: int,
              rng: np.random.Generator) -> _Patterns:
    """Distinct (counts, judge) patterns, and their weights in the data and in item resamples.

    Only categories used in the cell are kept: a scale of averaged scores can have
    hundreds of distinct values overall but few in one cell, and unused categories change
    no measure (zero marginals; kappa weights are scale-free).
    """
    used = counts.any(axis=0)
    used[judge[judge >= 0]] = True
    idx = np.flatnonzero(used)
    remap = np.full(len(values), -1)
    remap[idx] = np.arange(len(idx))
    counts = counts[:, idx]
    judge = np.where(judge >= 0, remap[np.maximum(judge, 0)], -1)
    values = values[idx]
    rows = np.column_stack([counts, judge])
    pat, inv = np.unique(rows, axis=0, return_inverse=True)
    inv = inv.ravel()
    K = len(pat)
    base = np.bincount(inv, minlength=K).astype(float)
    item_code, item_inv = np.unique(item, return_inverse=True)
    n_items = len(item_code)
    if n_boot <= 0:
        return _Patterns(pat[:, :-1], pat[:, -1], base[None, :], n_items, values)
    # Items contributing the same multiset of patterns are interchangeable in a resample.
    A = sparse.csr_matrix((np.ones(len(inv)), (item_inv.ravel(), inv)), shape=(n_items, K))
    A.sum_duplicates()
    A.sort_indices()
    if A.nnz == n_items and K <= n_items:
        # One unit per item (the common case: grouped by criterion): item types are patterns.
        types, freq = sparse.identity(K, format="csr"), base
    else:
        key = [hash((A.indices[A.indptr[i]:A.indptr[i + 1]].tobytes(), A.data[A.indptr[i]:A.indptr[i + 1]].tobytes()))
               for i in range(n_items)]
        _, first, tinv = np.unique(np.asarray(key), return_index=True, return_inverse=True)
        types = A[first]
        freq = np.bincount(tinv.ravel(), minlength=len(first)).astype(float)
    draws = rng.multinomial(n_items, freq / freq.sum(), size=n_boot).astype(float)
    boot = np.asarray(types.T.dot(draws.T).T)
    return _Patterns(pat[:, :-1], pat[:, -1], np.vstack([base, boot]), n_items, values)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a / b
    out[~np.isfinite(out)] = np.nan
    return out


# --------------------------------------------------------------------------- statistics


def _delta2(values: np.ndarray, metric: str, marg: np.ndarray) -> np.ndarray:
    """Krippendorff's squared difference function, per resample: (B, q, q)."""
    q = len(values)
    if metric == "nominal":
        d = 1.0 - np.eye(q)
        return np.broadcast_to(d, (marg.shape[0], q, q))
    if metric == "interval":
        d = (values[:, None] - values[None, :]) ** 2
        return np.broadcast_to(d, (marg.shape[0], q, q))
    # ordinal: (sum_{g=c..k} n_g - (n_c + n_k)/2)^2 with n_g the marginal value frequencies
    cum = np.concatenate([np.zeros((marg.shape[0], 1)), np.cumsum(marg, axis=1)], axis=1)
    lo = np.minimum.outer(np.arange(q), np.arange(q))
    hi = np.maximum.outer(np.arange(q), np.arange(q))
    between = cum[:, hi + 1] - cum[:, lo]
    return (between - (marg[:, :, None] + marg[:, None, :]) / 2.0) ** 2


def _coincidences(counts: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Krippendorff's coincidence matrices per resample, (B, q, q), over pairable units."""
    n = counts.sum(axis=1)
    ok = n >= 2
    C = counts[ok].astype(float)
    o = C[:, :, None] * C[:, None, :]
    diag = np.arange(C.shape[1])
    o[:, diag, diag] -= C
    o /= (n[ok] - 1)[:, None, None]
    return np.tensordot(W[:, ok], o, axes=(1, 0))


def _alpha(O: np.ndarray, values: np.ndarray, metric: str) -> np.ndarray:
    """Krippendorff's alpha, :math:`1 - (N-1) \\sum o_{ck}\\delta^2_{ck} / \\sum n_c n_k \\delta^2_{ck}`."""
    marg = O.sum(axis=2)
    N = marg.sum(axis=1)
    d2 = _delta2(values, metric, marg)
    do = (O * d2).sum(axis=(1, 2))
    de = (marg[:, :, None] * marg[:, None, :] * d2).sum(axis=(1, 2))
    return 1.0 - _safe_div((N - 1) * do, de)


def _human_stats(p: _Patterns, q_scale: int) -> dict[str, np.ndarray]:
    values = p.values
    C = p.counts.astype(float)
    W = p.weights
    n = C.sum(axis=1)
    two = (n >= 2).astype(float)
    Pi = _safe_div((C * (C - 1)).sum(axis=1), n * (n - 1))
    Pi = np.nan_to_num(Pi) * two
    full = (C.max(axis=1) == n).astype(float) * two
    m2 = W @ two
    pa = _safe_div(W @ Pi, m2)
    pi = _safe_div(W @ (C / np.maximum(n, 1)[:, None]), (W @ (n >= 1).astype(float))[:, None])
    pe_f = (pi ** 2).sum(axis=1)
    out = {
        "percent_agreement": pa,
        "full_agreement": _safe_div(W @ full, m2),
        "fleiss_kappa": _safe_div(pa - pe_f, 1 - pe_f),
    }
    if q_scale >= 2:
        pe_g = (pi * (1 - pi)).sum(axis=1) / (q_scale - 1)
        out["gwet_ac1"] = _safe_div(pa - pe_g, 1 - pe_g)
        out["pabak"] = (q_scale * pa - 1) / (q_scale - 1)
    else:
        out["gwet_ac1"] = out["pabak"] = np.full(W.shape[0], np.nan)
    O = _coincidences(p.counts, W)
    for m in _METRICS:
        out[f"krippendorff_alpha_{m}"] = _alpha(O, values, m)
    return out


def _kappa(M: np.ndarray, wmat: np.ndarray) -> np.ndarray:
    """Cohen's (weighted) kappa from B x q x q confusion matrices and agreement weights."""
    tot = M.sum(axis=(1, 2))
    po = _safe_div((M * wmat).sum(axis=(1, 2)), tot)
    r, c = M.sum(axis=2), M.sum(axis=1)
    pe = _safe_div(((r @ wmat) * c).sum(axis=1), tot ** 2)
    return _safe_div(po - pe, 1 - pe)


def _weighted_f1(M: np.ndarray) -> np.ndarray:
    tp = np.diagonal(M, axis1=1, axis2=2)
    support = M.sum(axis=2)  # true (human majority) class in rows
    predicted = M.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(support + predicted > 0, 2 * tp / (support + predicted), 0.0)
    return _safe_div((f1 * support).sum(axis=1), support.sum(axis=1))


def _tau_b(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Kendall's tau-b over weighted distinct (x, y) points, per resample."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    S = sx * sy
    N = W.sum(axis=1)
    conc = ((W @ S) * W).sum(axis=1) / 2.0  # a BLAS product: einsum would not use one
    n0 = N * (N - 1) / 2

    def ties(v: np.ndarray) -> np.ndarray:
        _, inv = np.unique(v, return_inverse=True)
        T = np.zeros((W.shape[0], inv.max() + 1))
        np.add.at(T.T, inv.ravel(), W.T)
        return (T * (T - 1) / 2).sum(axis=1)

    return _safe_div(conc, np.sqrt((n0 - ties(x)) * (n0 - ties(y))))


def _midranks(v: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Midrank of each pattern's value in the weighted sample, per resample: B x K."""
    uniq, inv = np.unique(v, return_inverse=True)
    inv = inv.ravel()
    T = np.zeros((W.shape[0], len(uniq)))
    np.add.at(T.T, inv, W.T)
    before = np.cumsum(T, axis=1) - T
    return (before + (T + 1) / 2)[:, inv]


def _spearman(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    rx, ry = _midranks(x, W), _midranks(y, W)
    N = W.sum(axis=1, keepdims=True)
    mx = (W * rx).sum(axis=1, keepdims=True) / N
    my = (W * ry).sum(axis=1, keepdims=True) / N
    cov = (W * (rx - mx) * (ry - my)).sum(axis=1)
    vx = (W * (rx - mx) ** 2).sum(axis=1)
    vy = (W * (ry - my) ** 2).sum(axis=1)
    return _safe_div(cov, np.sqrt(vx * vy))


def _judge_stats(p: _Patterns, q_scale: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Measures of one judge against the humans; also returns per-measure unit counts (B+1)."""
    values = p.values
    C = p.counts.astype(float)
    j = p.judge
    W = p.weights
    q = len(values)
    n = C.sum(axis=1)
    cmax = C.max(axis=1)
    arg = C.argmax(axis=1)
    has_major = cmax > n / 2
    major = np.where(has_major, arg, -1)
    hm = has_major.astype(float)
    agree = (j == major).astype(float) * hm
    out: dict[str, np.ndarray] = {}
    units: dict[str, np.ndarray] = {}
    out["percent_agreement"] = _safe_div(W @ agree, W @ hm)
    cells = np.zeros((len(j), q * q))
    cells[np.flatnonzero(has_major), major[has_major] * q + j[has_major]] = 1.0
    M = (W @ cells).reshape(-1, q, q)
    eye = np.eye(q)
    span = values.max() - values.min()
    quad = 1 - (values[:, None] - values[None, :]) ** 2 / span ** 2 if span > 0 else eye
    out["cohen_kappa"] = _kappa(M, eye)
    out["cohen_kappa_quadratic"] = _kappa(M, quad)
    out["weighted_f1"] = _weighted_f1(M)
    for m in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
        units[m] = W @ hm
    x = values[j]
    y = (C @ values) / n
    out["kendall_tau"] = _tau_b(x, y, W)
    out["spearman_rho"] = _spearman(x, y, W)
    units["kendall_tau"] = units["spearman_rho"] = W.sum(axis=1)
    # The judge as one more rater, against the humans alone on the same units.
    Cj = C.copy()
    Cj[np.arange(len(j)), j] += 1
    with_j = _Patterns(Cj.astype(np.int64), j, W, p.n_items, values)
    hum = _Patterns(p.counts, j, W, p.n_items, values)
    sj, sh = _human_stats(with_j, q_scale), _human_stats(hum, q_scale)
    for name in ("fleiss_kappa", *(f"krippendorff_alpha_{m}" for m in _METRICS)):
        out[name] = sj[name]
        out[f"{name}_change"] = sj[name] - sh[name]
        units[name] = units[f"{name}_change"] = W @ (n + 1 >= 2).astype(float)
    share = _safe_div(C[np.arange(len(j)), j], n)
    two = (n >= 2).astype(float)
    pair = _safe_div(W @ (np.nan_to_num(share) * two), W @ two)
    out["pairwise_agreement"] = pair
    out["pairwise_agreement_gap"] = pair - sh["percent_agreement"]
    units["pairwise_agreement"] = units["pairwise_agreement_gap"] = W @ two
    return out, units


# --------------------------------------------------------------------------- the table


def _why_undefined(measure: str, est: float, n_units: float, judge: bool) -> str:
    if n_units == 0:
        if judge and measure in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1"):
            return "not defined: no unit has a strict human majority"
        if measure.startswith("pairwise") or not judge:
            return "not defined: no unit has two or more human ratings"
        return "not defined: no units"
    if measure in ("kendall_tau", "spearman_rho"):
        return "not defined: the judge's scores or the human means are constant"
    if "kappa" in measure or "ac1" in measure or "alpha" in measure:
        return "not defined: every rating is the same score, so chance agreement is 1"
    if measure == "pabak" or measure == "gwet_ac1":
        return "not defined: the scale has a single category"
    return "not defined"


def _rows(stats: dict[str, np.ndarray], units: dict[str, np.ndarray] | None, n_ratings: float,
          default_units: float, *, judge: str | None, level: float, extra_note: str = "") -> list[dict]:
    rows = []
    for measure, arr in stats.items():
        est = float(arr[0])
        boot = arr[1:]
        n_units = float(units[measure][0]) if units and measure in units else default_units
        lo = hi = np.nan
        note = ""
        if np.isfinite(est):
            ok = boot[np.isfinite(boot)]
            if len(boot) and len(ok) >= max(10, 0.5 * len(boot)):
                a = (1 - level) / 2
                lo, hi = (float(v) for v in np.quantile(ok, [a, 1 - a]))
            elif len(boot):
                note = "no interval: the measure is undefined in most resamples"
        else:
            note = _why_undefined(measure, est, n_units, judge is not None)
        if extra_note and measure in ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "weighted_f1") and judge:
            note = (note + "; " if note else "") + extra_note
        flagged = bool(measure == "pairwise_agreement_gap" and np.isfinite(hi) and hi < 0)
        rows.append({"judge": judge, "measure": measure, "estimate": est if np.isfinite(est) else np.nan,
                     "ci_low": lo, "ci_high": hi, "n_items": int(round(n_units)), "n_ratings": int(round(n_ratings)),
                     "flagged": flagged, "note": note})
    return rows


def _seed_for(seed: int, key: tuple) -> np.random.Generator:
    # A stable stream per cell: a cell's interval does not depend on which other cells exist.
    return np.random.default_rng([int(seed), zlib.crc32(repr(key).encode())])


def agreement(
    data: pd.DataFrame | Units,
    *,
    by: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    progress: Callable[[float], None] | None = None,
) -> pd.DataFrame:
    """Agreement among humans and of each judge with humans, per group, with bootstrap CIs.

    Parameters
    ----------
    data
        A validated ratings table, or its :func:`prepare` result (reuse it across groupings).
    by
        Columns to group by: ``criterion``, ``language``, ``task`` or any per-item segment;
        empty for one overall row per measure; default :func:`default_by`.
    judges
        Judges to compare with humans (default: all).
    n_boot
        Bootstrap resamples of items per cell; 0 skips the intervals.
    seed
        Seed of the resampling; the same inputs give the same numbers.
    level
        Confidence level of the percentile intervals.
    progress
        Called with the fraction done, for progress bars.

    Returns
    -------
    pandas.DataFrame
        One row per group, judge (null for humans among themselves) and measure, with
        columns ``*by, judge, measure, estimate, ci_low, ci_high, n_items, n_ratings,
        flagged, note``.
    """
    units = data if isinstance(data, Units) else prepare(data)
    by = default_by(units) if by is None else list(by)
    unknown = [c for c in by if c not in units.segments.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': it is not a segment column of this table",
                        column=unknown[0], fix="group by one of: " + ", ".join(units.segments.columns))
    if n_boot < 0:
        raise DataError("the number of bootstrap resamples cannot be negative", fix="use 0 to skip intervals")
    if not 0 < level < 1:
        raise DataError("the confidence level must be between 0 and 1", fix="use e.g. 0.95")
    chosen = list(units.judges) if judges is None else list(judges)
    bad = [j for j in chosen if j not in units.judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(units.judges))
    jidx = [units.judges.index(j) for j in chosen]
    if by:
        gcodes = units.segments.groupby(by, sort=True, dropna=False).ngroup().to_numpy()
        keys = units.segments.groupby(by, sort=True, dropna=False).size().index
        keys = [k if isinstance(k, tuple) else (k,) for k in keys]
    else:
        gcodes = np.zeros(len(units.segments), dtype=np.int64)
        keys = [()]
    n_h = units.counts.sum(axis=1)
    rows: list[dict] = []
    total = len(keys) * (1 + len(jidx))
    done = 0
    crits = units.segments["criterion"].astype(str).to_numpy()
    for g, key in enumerate(keys):
        in_g = gcodes == g
        q_scale = max((units.scale.get(c, 0) for c in np.unique(crits[in_g])), default=0)
        label = dict(zip(by, key))
        hm = in_g & (n_h >= 1)
        if hm.any():
            p = _compress(units.counts[hm], np.full(hm.sum(), -1), units.item[hm], units.values, n_boot=n_boot,
                          rng=_seed_for(seed, (key, None)))
            stats = _human_stats(p, q_scale)
            two = (p.counts.sum(axis=1) >= 2).astype(float)
            nr = float(p.weights[0] @ p.counts.sum(axis=1))
            for r in _rows(stats, None, nr, float(p.weights[0] @ two), judge=None, level=level):
                rows.append({**label, **r})
        done += 1
        if progress:
            progress(done / total)
        for ji, name in zip(jidx, chosen):
            jc = units.judge_codes[ji]
            m = in_g & (n_h >= 1) & (jc >= 0)
            if m.any():
                p = _compress(units.counts[m], jc[m], units.item[m], units.values, n_boot=n_boot,
                              rng=_seed_for(seed, (key, name)))
                stats, ucount = _judge_stats(p, q_scale)
                nr = float(p.weights[0] @ (p.counts.sum(axis=1) + 1))
                n = p.counts.sum(axis=1)
                cmax = p.counts.max(axis=1)
                no_major = float(p.weights[0] @ (cmax <= n / 2).astype(float))
                extra = f"{int(no_major)} unit(s) without a strict human majority left out" if no_major else ""
                for r in _rows(stats, ucount, nr, 0.0, judge=name, level=level, extra_note=extra):
                    rows.append({**label, **r})
            done += 1
            if progress:
                progress(done / total)
    out = pd.DataFrame(rows, columns=[*by, *RESULT_COLUMNS])
    out["judge"] = out["judge"].astype(object).where(out["judge"].notna(), None)
    return out
