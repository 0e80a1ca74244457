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
from ..stats.kendall import tau_b
from ..stats.spearman import spearman_rho

__all__ = ["PointwiseCV", "PointwiseSuperficialData", "correlation_curve", "correlation_table", "cross_validated_alpha",
           "pointwise_data", "q_options", "superficial_correlation"]

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


def _correlations(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Both measures for the data and every resample (``W`` is (n, R))."""
    return {"kendall_tau": tau_b(W, np.arange(len(x)), x, y), "spearman_rho": spearman_rho(W, x, y)}


def _group_rows(data: PointwiseSuperficialData, g: int, alphas: np.ndarray, n_boot: int, root: int,
                level: float) -> list[dict]:
    sel = data.group == g
    n = int(sel.sum())
    W = item_weights(cell_rng(root, (data.judge, *data.keys[g])), n, n_boot).T
    p, q, h = data.p[sel], data.q[sel], data.human[sel]
    base = _correlations(W, p, h)
    keys = dict(zip(data.by, data.keys[g]))
    note = (f"{data.n_dropped} unit(s) of this judge (all groups) without a score, Q or human score left out"
            if data.n_dropped else "")
    rows = []
    for a in alphas:
        cur = _correlations(W, p - a * q, h)
        for m in MEASURES:
            est, change = cur[m], cur[m] - base[m]
            lo, hi, _ = percentile_interval(est[None, 1:], level)
            clo, chi, _ = percentile_interval(change[None, 1:], level)
            rows.append({"judge": data.judge, **keys, "alpha": float(a), "measure": m, "estimate": est[0],
                         "ci_low": lo[0], "ci_high": hi[0], "n": n, "change": change[0], "change_ci_low": clo[0],
                         "change_ci_high": chi[0], "note": note})
    return rows


def correlation_curve(data: PointwiseSuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS,
                      n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Kendall's tau-b and Spearman's rho of ``P_hat`` with the humans' mean score at every ``alpha``.

    Per group, with item-bootstrap intervals (:func:`evalcore.stats.tau_b`, :func:`evalcore.stats.spearman_rho`
    weight every resample without writing it out); ``change`` is the difference from ``alpha = 0``
    on the same resamples.

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


def _best(W: np.ndarray, data_p, data_q, human, alphas) -> int:
    """Index of the alpha with the highest Kendall tau under the weights ``W`` (n, 1); ties to the smaller."""
    taus = np.array([tau_b(W, np.arange(len(data_p)), data_p - a * data_q, human)[0] for a in alphas])
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
    W = item_weights(cell_rng(root_seed(seed), (data.judge, "cv", group)), n, n_boot).T
    held, chosen = np.zeros(W.shape[1]), []
    for f in range(k):
        train, test = fold != f, fold == f
        j = _best(train[:, None].astype(float), p, q, h, alphas)
        chosen.append(float(alphas[j]))
        idx = np.flatnonzero(test)
        tau = tau_b(W[idx], np.arange(len(idx)), p[idx] - alphas[j] * q[idx], h[idx])
        held += np.nan_to_num(tau) * len(idx) / n
    lo, hi, _ = percentile_interval(held[None, 1:], level)
    ones = np.ones((n, 1))
    raw = tau_b(ones, np.arange(n), p, h)[0]
    return PointwiseCV(float(alphas[_best(ones, p, q, h, alphas)]), tuple(chosen), float(held[0]), float(raw),
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
