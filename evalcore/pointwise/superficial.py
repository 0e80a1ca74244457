"""Superficial-quality subtraction for pointwise judges (Zhou et al. 2024): rank correlation with humans.

The pairwise form is :mod:`evalcore.pairwise.superficial`; this is its pointwise counterpart. Per unit
(an item on one criterion) the judge's score ``P`` is corrected by a superficial score ``Q`` of the
item::

    P_hat = Norm(P) - alpha * Norm(Q)

with min-max ``Norm`` (the paper prints it inverted; see :func:`evalcore.pairwise.superficial.min_max`).
``P`` is normalised over the judge's scores of each criterion (criteria may use different scales),
``Q`` over the items. The measure is the rank correlation of ``P_hat`` with the humans' mean score
of the unit: Kendall's tau-b and Spearman's rho, per criterion and group, with item-bootstrap
intervals, and the change from ``alpha = 0`` (the raw judge) on the same resamples.

**Q.** ``"length"`` (characters of ``text``), ``"words"`` (words of ``text``), ``"rater:NAME"``
(another rater's score of the same unit, e.g. a judge prompt that rates only fluency) or the name of
any numeric per-item column (HANNA's ``text_length``, a ``perplexity``).

A judge with several scores of a unit (repeated samples) has them averaged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import JUDGE, RATINGS
from ..errors import DataError
from ..pairwise.superficial import alpha_grid, cv_records, min_max
from ..stats.bootstrap import cell_rng, item_weights, percentile_interval, root_seed
from ..stats.numeric import safe_div

__all__ = ["PointwiseCV", "PointwiseSuperficialData", "correlation_curve", "correlation_table", "cross_validated_alpha",
           "pointwise_data", "q_options", "superficial_correlation", "warm_up"]

_DEFAULT_ALPHAS = tuple(alpha_grid())
MEASURES = ("kendall_tau", "spearman_rho")


@dataclass(frozen=True)
class PointwiseSuperficialData:
    """Per unit: the judge's normalised score, the normalised Q, the humans' mean score and the group."""

    judge: str
    item_id: np.ndarray
    p: np.ndarray
    q: np.ndarray
    human: np.ndarray
    group: np.ndarray
    keys: tuple
    by: tuple  # ("criterion", *by)
    n_dropped: int

    def p_hat(self, alpha: float) -> np.ndarray:
        """``Norm(P) - alpha * Norm(Q)`` per unit."""
        return self.p - float(alpha) * self.q


def _q_per_unit(df: pd.DataFrame, units: pd.MultiIndex, q: str) -> np.ndarray:
    """Q of each (item, criterion) unit."""
    if q.startswith("rater:"):
        name = q.split(":", 1)[1]
        rows = df[df["rater"].astype(str) == name]
        if rows.empty:
            raise DataError(f"there is no rater '{name}' to use as Q", fix="give q='rater:NAME' with a rater of the table")
        return rows.groupby(["item_id", "criterion"])["score"].mean().reindex(units).to_numpy(float)
    if q in ("length", "words"):
        if "text" not in df.columns:
            raise DataError(f"q='{q}' needs the items' texts (a 'text' column), and this table has none",
                            fix="give Q as a numeric per-item column (e.g. text_length) or q='rater:NAME'")
        text = df.groupby("item_id")["text"].first().astype("string")
        size = text.str.len() if q == "length" else text.str.split().str.len()
        return size.reindex(units.get_level_values(0)).to_numpy(float)
    if q not in df.columns:
        raise DataError(f"there is no Q column '{q}'", fix="use q='length', 'words', 'rater:NAME' or a numeric "
                        "per-item column of the table")
    vals = pd.to_numeric(df[q], errors="coerce").groupby(df["item_id"]).first()
    return vals.reindex(units.get_level_values(0)).to_numpy(float)


def pointwise_data(ratings: pd.DataFrame, *, judge: str, q: str = "length",
                   by: Sequence[str] = ()) -> PointwiseSuperficialData:
    """The per-unit arrays :func:`correlation_curve` needs, for one judge of a ratings table.

    Units with the judge's score, Q and at least one human score are kept; the others are counted
    in ``n_dropped``. Groups are ``criterion`` and then ``by``.

    >>> t = pd.DataFrame({"item_id": list("aabbcc"), "rater": ["h", "j"] * 3,
    ...                   "rater_kind": ["human", "judge"] * 3, "criterion": "overall",
    ...                   "score": [1, 2, 2, 5, 3, 4], "len": [10, 10, 90, 90, 20, 20]})
    >>> d = pointwise_data(t, judge="j", q="len")
    >>> d.p.tolist(), d.q.tolist(), d.human.tolist()
    ([0.0, 1.0, 0.6666666666666666], [0.0, 1.0, 0.125], [1.0, 2.0, 3.0])
    """
    need = [c for c in ("item_id", "rater", "rater_kind", "score") if c not in ratings]
    if need:
        raise DataError("pointwise superficial-quality correction needs " + ", ".join(need) + " column(s)")
    unknown = [c for c in by if c not in ratings.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column")
    df = ratings.assign(item_id=ratings["item_id"].astype(str), score=pd.to_numeric(ratings["score"], errors="coerce"))
    if "criterion" not in df.columns:
        df = df.assign(criterion="overall")
    rows = df[df["rater"].astype(str) == judge]
    if rows.empty:
        raise DataError(f"there is no judge '{judge}'", fix="choose one of the table's judges")
    p = rows.groupby(["item_id", "criterion"], sort=False)["score"].mean()
    human = df[df["rater_kind"] == "human"].groupby(["item_id", "criterion"])["score"].mean().reindex(p.index)
    qv = _q_per_unit(df, p.index, q)
    ok = np.isfinite(p.to_numpy(float)) & np.isfinite(human.to_numpy(float)) & np.isfinite(qv)
    p, human, qv = p[ok], human[ok], qv[ok]
    crit = p.index.get_level_values(1).astype(str).to_numpy()
    pn = np.empty(len(p))
    for c in np.unique(crit):  # each criterion on its own scale
        pn[crit == c] = min_max(p.to_numpy(float)[crit == c])
    groups = pd.DataFrame({"criterion": crit})
    if by:
        extra = df.groupby("item_id")[list(by)].first().reindex(p.index.get_level_values(0))
        groups = groups.assign(**{c: extra[c].to_numpy() for c in by if c != "criterion"})
    cols = list(groups.columns)
    code = groups.groupby(cols, dropna=False, sort=True).ngroup().to_numpy()
    first = np.unique(code, return_index=True)[1]
    keys = tuple(tuple(groups.iloc[i]) for i in first)
    return PointwiseSuperficialData(judge, p.index.get_level_values(0).to_numpy(), pn, min_max(qv),
                                    human.to_numpy(float), code, keys, tuple(cols), int((~ok).sum()))


def _runs(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``xs`` (variants x units): the stable sort order, and where runs of equal values start."""
    order = np.argsort(xs, axis=1, kind="stable")
    srt = np.take_along_axis(xs, order, axis=1)
    start = np.ones(xs.shape, dtype=bool)
    start[:, 1:] = srt[:, 1:] != srt[:, :-1]
    return order, start


def _rank_stats(Wt: np.ndarray, xs: np.ndarray, y: np.ndarray, *, spearman: bool = True,
                single: bool | None = None) -> dict[str, np.ndarray]:
    """Kendall's tau-b (and Spearman's rho) of every row of ``xs`` (variants x units) with ``y``, for every
    row of the unit weights ``Wt`` (R x units): ``(variants, R)`` arrays.

    Equal, to the last bit, to :func:`evalcore.stats.tau_b` and :func:`evalcore.stats.spearman_rho` of each
    variant, with the same formulas: :math:`\\tau_b = (n_c - n_d) / \\sqrt{(n_0 - n_1)(n_0 - n_2)}`
    (Kendall 1945), and where :func:`~evalcore.stats.tau_b` is called with one weighting (``single``;
    default: ``Wt`` has one row) ``scipy.stats.kendalltau``'s
    :math:`(n_c - n_d) / \\sqrt{n_0 - n_1} / \\sqrt{n_0 - n_2}`, as it calls that;
    :math:`\\rho` is Pearson's r of the weighted midranks (Spearman 1904). Each variant is sorted once
    and each resample is a pass over the sorted units (:mod:`._superficial_kernel`), not a new sort.
    """
    from . import _superficial_kernel as kernel  # numba: loaded on the first curve, not with the module

    Wt = np.ascontiguousarray(Wt, dtype=float)
    order, start = _runs(np.asarray(xs, dtype=float))
    yorder, ystart = _runs(np.asarray(y, dtype=float)[None, :])
    ycode = np.cumsum(ystart[0]) - 1
    yc = np.empty(len(y), dtype=np.int64)
    yc[yorder[0]] = ycode
    S, n0, n1, n2, cov, varx, vary = kernel.curve_sums(Wt, order, start, yorder[0], ystart[0], yc,
                                                       int(ycode[-1]) + 1 if len(y) else 0, spearman)
    if (Wt.shape[0] == 1) if single is None else single:  # scipy's formula, as tau_b's one-weighting path
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.clip(S / np.sqrt(n0 - n1) / np.sqrt(n0 - n2), -1.0, 1.0)
        tau = np.where((n0 - n1 > 0) & (n0 - n2 > 0), tau, np.nan)
    else:
        den = (n0 - n1) * (n0 - n2)
        tau = np.where(den > 0, safe_div(S, np.sqrt(np.where(den > 0, den, 1.0))), np.nan)
    out = {"kendall_tau": tau}
    if spearman:
        out["spearman_rho"] = safe_div(cov, np.sqrt(varx * vary))
    if len(y) < 2:
        out = {k: np.full_like(v, np.nan) for k, v in out.items()}
    return out


def _group_rows(data: PointwiseSuperficialData, g: int, alphas: np.ndarray, n_boot: int, root: int,
                level: float) -> list[dict]:
    sel = data.group == g
    n = int(sel.sum())
    Wt = item_weights(cell_rng(root, (data.judge, *data.keys[g])), n, n_boot)
    p, q, h = data.p[sel], data.q[sel], data.human[sel]
    # Row 0 the raw judge (alpha = 0 by definition), then one row per alpha; all resamples at once.
    xs = np.vstack([p[None, :], p[None, :] - alphas[:, None] * q[None, :]])
    stats = _rank_stats(Wt, xs, h)
    keys = dict(zip(data.by, data.keys[g]))
    note = (f"{data.n_dropped} unit(s) of this judge (all groups) without a score, Q or human score left out"
            if data.n_dropped else "")
    bounds = {}
    for m in MEASURES:  # one sort for every alpha's interval (each row's is numpy.quantile's)
        est, change = stats[m][1:], stats[m][1:] - stats[m][:1]
        bounds[m] = percentile_interval(est[:, 1:], level)[:2] + percentile_interval(change[:, 1:], level)[:2]
    rows = []
    for i, a in enumerate(alphas):
        for m in MEASURES:
            est, change = stats[m][1 + i], stats[m][1 + i] - stats[m][0]
            lo, hi, clo, chi = (b[i] for b in bounds[m])
            rows.append({"judge": data.judge, **keys, "alpha": float(a), "measure": m, "estimate": est[0],
                         "ci_low": lo, "ci_high": hi, "n": n, "change": change[0], "change_ci_low": clo,
                         "change_ci_high": chi, "note": note})
    return rows


def correlation_curve(data: PointwiseSuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS,
                      n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Kendall's tau-b and Spearman's rho of ``P_hat`` with the humans' mean score at every ``alpha``.

    Per group, with item-bootstrap intervals; ``change`` is the difference from ``alpha = 0`` on the
    same resamples. The numbers are :func:`evalcore.stats.tau_b`'s and :func:`evalcore.stats.spearman_rho`'s
    of each alpha, to the last bit, but each alpha's ``P_hat`` is sorted once and every resample (a vector
    of unit multiplicities, never written out) is one compiled pass over the sorted units.

    Returns
    -------
    pandas.DataFrame
        ``judge, criterion, *by, alpha, measure, estimate, ci_low, ci_high, n, change, change_ci_low,
        change_ci_high, note``; ``n`` counts items (units of one criterion).
    """
    alphas = np.asarray(alphas, dtype=float)
    root = root_seed(seed)
    return pd.DataFrame([r for g in range(len(data.keys)) for r in _group_rows(data, g, alphas, n_boot, root, level)])


@dataclass(frozen=True)
class PointwiseCV:
    """Cross-validated alpha of one group: the alpha chosen on all units and the held-out Kendall tau."""

    alpha_all: float
    fold_alphas: tuple
    tau_cv: float
    tau_raw: float
    ci_low: float
    ci_high: float
    n: int


def _best(taus: np.ndarray) -> int:
    """Index of the highest Kendall tau (over alphas); ties to the smaller alpha."""
    taus = np.where(np.isfinite(taus), taus, -np.inf)
    return int(np.flatnonzero(taus >= taus.max() - 1e-12)[0])


def cross_validated_alpha(data: PointwiseSuperficialData, *, group: int, alphas: Sequence[float] = _DEFAULT_ALPHAS,
                          folds: int = 5, seed: int = 0, n_boot: int = 1000, level: float = 0.95) -> PointwiseCV:
    """Alpha chosen by Kendall tau on training folds; the held-out tau, averaged over folds by size.

    The interval resamples units within each fold (choices held fixed).
    """
    alphas = np.asarray(alphas, dtype=float)
    sel = data.group == group
    p, q, h = data.p[sel], data.q[sel], data.human[sel]
    n = len(p)
    k = min(folds, n)
    if n < 4 or folds < 2:
        raise DataError(f"cross-validation needs at least 4 units and 2 folds (have {n} units, {folds} folds)")
    fold = np.random.default_rng(root_seed(seed)).permutation(np.arange(n) % k)
    Wt = item_weights(cell_rng(root_seed(seed), (data.judge, "cv", group)), n, n_boot)
    # Every fold's training set and all units, each a weighting of its own (tau as for one weighting).
    train = np.vstack([(fold != np.arange(k)[:, None]).astype(float), np.ones((1, n))])
    xs = np.vstack([p[None, :] - alphas[:, None] * q[None, :], p[None, :]])
    taus = _rank_stats(train, xs, h, spearman=False, single=True)["kendall_tau"]  # (alphas + raw, folds + all)
    held, chosen = np.zeros(Wt.shape[0]), []
    for f in range(k):
        j = _best(taus[:-1, f])
        chosen.append(float(alphas[j]))
        idx = np.flatnonzero(fold == f)
        tau = _rank_stats(Wt[:, idx], (p[idx] - alphas[j] * q[idx])[None, :], h[idx], spearman=False)["kendall_tau"][0]
        held += np.nan_to_num(tau) * len(idx) / n
    lo, hi, _ = percentile_interval(held[None, 1:], level)
    return PointwiseCV(float(alphas[_best(taus[:-1, -1])]), tuple(chosen), float(held[0]), float(taus[-1, -1]),
                       float(lo[0]), float(hi[0]), n)


def correlation_table(data: PointwiseSuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS, folds: int = 5,
                      n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """The whole result for one judge: :func:`correlation_curve`, then per group the cross-validated alpha
    (rows ``alpha_cv`` and ``kendall_tau_cv``, as :func:`evalcore.pairwise.superficial.superficial_table`)."""
    alphas = np.asarray(alphas, dtype=float)
    curve = correlation_curve(data, alphas=alphas, n_boot=n_boot, seed=seed, level=level)
    rows = []
    for g, key in enumerate(data.keys):
        cv = cross_validated_alpha(data, group=g, alphas=alphas, folds=folds, seed=seed, n_boot=n_boot, level=level)
        rows += cv_records(data.judge, dict(zip(data.by, key)), cv.alpha_all, cv.fold_alphas, cv.n,
                           held=("kendall_tau_cv", cv.tau_cv, cv.ci_low, cv.ci_high,
                                 f"held-out Kendall tau, mean over {folds} folds; raw {cv.tau_raw:.3f}"))
    return pd.concat([curve, pd.DataFrame(rows)], ignore_index=True)


@takes_table(RATINGS, "text")
def superficial_correlation(ratings: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                            q: str = "length", alphas: Sequence[float] = _DEFAULT_ALPHAS, folds: int = 5,
                            n_boot: int = 1000, seed: int | np.random.Generator = 0,
                            level: float = 0.95) -> pd.DataFrame:
    """Superficial-quality subtraction for every judge of a ratings table: :func:`correlation_table` of each.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by
        Per-item columns to group by besides ``criterion`` (always a group).
    judges
        The judges whose scores are corrected (default: every judge, in name order).
    q
        The superficial quality Q: ``"length"``, ``"words"``, ``"rater:NAME"`` or a numeric per-item column
        (:func:`q_options` lists a table's).
    alphas
        The weights of Q to try (0 to 1 by 0.05).
    folds
        Folds of the cross-validated alpha.
    n_boot, seed, level
        Item-bootstrap resamples, their seed (a whole number or a ``numpy.random.Generator``), the
        confidence level of the intervals.
    item, rater, kind, criterion, score, sample, text
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Every judge's :func:`correlation_table`, one after the other: ``judge, criterion, *by, alpha,
        measure, estimate, ci_low, ci_high, n, change, change_ci_low, change_ci_high, note``, the curve's
        rows (``kendall_tau``, ``spearman_rho``), then per group ``alpha_cv`` and ``kendall_tau_cv``.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = superficial_correlation(ratings, judges=["gpt-4/per-criterion"], q="perplexity", alphas=[0, 0.5],
    ...                                 folds=3, n_boot=100, seed=0)
    >>> tau = table.query("measure == 'kendall_tau' and criterion == 'OCQ'")
    >>> print(tau[["alpha", "estimate", "change", "change_ci_low", "change_ci_high"]].round(2).to_string(index=False))
     alpha  estimate  change  change_ci_low  change_ci_high
       0.0      0.59     0.0           0.00            0.00
       0.5      0.39    -0.2          -0.27           -0.14
    """
    if judges is None:
        judges = sorted(ratings.loc[ratings["rater_kind"] == JUDGE, "rater"].astype(str).unique())
    seed = root_seed(seed)  # every judge's table from the same root, as the page computes one judge at a time
    frames = [correlation_table(pointwise_data(ratings, judge=j, q=q, by=by), alphas=alphas, folds=folds,
                                n_boot=n_boot, seed=seed, level=level) for j in judges]
    if not frames:
        raise DataError("the table has no judge", fix="mark the judges' rows with rater_kind 'judge'")
    return pd.concat(frames, ignore_index=True)


def q_options(ratings: pd.DataFrame, *, judge: str | None = None) -> list[str]:
    """The superficial qualities a ratings table offers: numeric per-item columns (``text_length``,
    ``perplexity``...), ``length`` and ``words`` of ``text``, and ``rater:NAME`` for the other judges."""
    skip = {"score", "sample", "position", "input_id"}
    numeric = [c for c in ratings.columns if c not in skip and c not in ("item_id", "rater", "rater_kind", "criterion")
               and pd.api.types.is_numeric_dtype(ratings[c]) and ratings[c].notna().any()]
    texts = ["length", "words"] if "text" in ratings.columns and ratings["text"].notna().any() else []
    judges = sorted(ratings.loc[ratings["rater_kind"] == "judge", "rater"].astype(str).unique())
    return numeric + texts + [f"rater:{j}" for j in judges if j != judge]


def warm_up() -> None:
    """Compile (or load from numba's cache) the curve's compiled pass, e.g. in a background thread: about 5 s the
    first time on a machine, a fraction of a second after."""
    from . import _superficial_kernel as kernel

    kernel.warm_up()
