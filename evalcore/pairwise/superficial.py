"""Subtracting superficial quality from a judge's scores (Zhou et al. 2024), and length control.

Zhou et al. (2024, "Mitigating the Bias of Large Language Model Evaluation", Section 3.2, eq. 1)
correct a judge's score ``P`` of an output by the score ``Q`` of its superficial quality alone::

    P_hat = Norm(P) - alpha * Norm(Q)

**Normalisation.** The paper prints ``Normalize`` inverted; here it is min-max, as it must be:
``Norm(x) = (x - min) / (max - min)`` over all the judge's scores in the dataset (both outputs of
every item pooled), and likewise for ``Q``, so that a higher ``P`` stays higher. A constant column
normalises to 0.

**Decision.** On an item the output with the higher ``P_hat`` wins; equal ``P_hat`` is a tie,
which counts as half correct. Only the differences ``dP = Norm(P_a) - Norm(P_b)`` and
``dQ = Norm(Q_a) - Norm(Q_b)`` matter: the decision at ``alpha`` is the sign of ``dP - alpha * dQ``.

**Gold.** The rater ``gold`` when the table has it (LLMBar), else the humans' strict majority
(:func:`evalcore.labels.strict_majority`); items whose gold is a tie or missing are left out and
counted. A judge with several rows on an item (LLMBar's two presentation orders) has its scores
averaged per output over its rows (NaN ignored).

**Q.** ``"length"`` (characters of ``text_a``/``text_b``), ``"words"`` (whitespace-separated words),
``"superficial"`` (``superficial_a``/``superficial_b``) or any ``<name>`` with ``<name>_a`` and
``<name>_b`` columns.

:func:`length_controlled` is the alternative of AlpacaEval 2 (Dubois et al. 2024).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from ..labels import strict_majority
from ..stats import cell_rng, item_weights, percentile_interval, root_seed

__all__ = ["CVResult", "SuperficialData", "alpha_curve", "alpha_grid", "correctness", "cross_validated_alpha",
           "decisions", "length_controlled", "min_max", "superficial_data"]

_DEFAULT_ALPHAS = tuple(np.round(np.arange(0, 1.0001, 0.05), 10))


def alpha_grid(start: float = 0.0, stop: float = 1.0, step: float = 0.05) -> np.ndarray:
    """The grid ``start, start + step, ..., stop`` (inclusive), rounded to 10 decimals."""
    if step <= 0 or stop < start:
        raise DataError(f"alpha grid {start}:{stop}:{step} is empty", fix="give START:STOP:STEP with STEP > 0")
    n = int(np.floor((stop - start) / step + 1e-9)) + 1
    return np.round(start + step * np.arange(n), 10)


def min_max(x: np.ndarray) -> np.ndarray:
    """Min-max normalisation over the finite values of ``x``: a higher value stays higher.

    The paper's printed ``Normalize`` is inverted (max minus value); this is the corrected form.

    >>> min_max(np.array([2.0, 4.0, 10.0])).tolist()
    [0.0, 0.25, 1.0]
    """
    x = np.asarray(x, dtype=float)
    lo, hi = np.nanmin(x), np.nanmax(x)
    if not np.isfinite(hi - lo) or hi == lo:
        return np.where(np.isfinite(x), 0.0, np.nan)
    return (x - lo) / (hi - lo)


@dataclass(frozen=True)
class SuperficialData:
    """Per item: the judge's normalised scores, the normalised superficial scores, gold and group."""

    judge: str
    item_id: np.ndarray
    p_a: np.ndarray
    p_b: np.ndarray
    q_a: np.ndarray
    q_b: np.ndarray
    gold: np.ndarray  # 1: a is better, 0: b is better
    group: np.ndarray  # group code per item
    keys: tuple  # the by-values of each group code
    by: tuple
    n_dropped: int

    @property
    def dp(self) -> np.ndarray:
        return self.p_a - self.p_b

    @property
    def dq(self) -> np.ndarray:
        return self.q_a - self.q_b


def _q_columns(comparisons: pd.DataFrame, q: str) -> tuple[pd.Series, pd.Series]:
    """Q of output a and b per row."""
    if q in ("length", "words"):
        if not {"text_a", "text_b"} <= set(comparisons.columns):
            raise DataError(f"q='{q}' needs the outputs' texts (text_a, text_b), and this table has none",
                            fix="load a preset that keeps the texts, or give a Q column (superficial_a/_b)")
        size = (lambda s: s.astype("string").str.len()) if q == "length" else \
            (lambda s: s.astype("string").str.split().str.len())
        return size(comparisons["text_a"]).astype(float), size(comparisons["text_b"]).astype(float)
    a, b = f"{q}_a", f"{q}_b"
    if not {a, b} <= set(comparisons.columns):
        raise DataError(f"no Q columns '{a}'/'{b}'", fix="use q='length', 'words', 'superficial' or a name with "
                        "<name>_a and <name>_b columns")
    return (pd.to_numeric(comparisons[a], errors="coerce").astype(float),
            pd.to_numeric(comparisons[b], errors="coerce").astype(float))


def _gold(comparisons: pd.DataFrame, items: pd.Index) -> pd.Series:
    """1 (a better), 0 (b better) or NaN per item: rater 'gold', else the humans' strict majority."""
    human = comparisons[comparisons["rater_kind"] == "human"]
    if (human["rater"] == "gold").any():
        human = human[human["rater"] == "gold"]
    counts = pd.crosstab(human["item_id"].astype(str), human["winner"]).reindex(
        index=items, columns=["a", "b", "tie"], fill_value=0)
    major = strict_majority(counts.to_numpy(dtype=float))
    return pd.Series(np.where(major == 0, 1.0, np.where(major == 1, 0.0, np.nan)), index=items)


def superficial_data(comparisons: pd.DataFrame, *, judge: str, q: str = "length",
                     by: Sequence[str] = ()) -> SuperficialData:
    """The per-item arrays :func:`alpha_curve` needs, for one judge.

    Parameters
    ----------
    comparisons
        A canonical comparisons table with the judge's ``score_a``/``score_b`` and human labels.
    judge
        The judge (``rater``) whose scores are corrected.
    q
        Superficial quality: ``"length"``, ``"words"``, ``"superficial"`` or ``<name>`` (``<name>_a/_b``).
    by
        Per-item columns to group by.

    Returns
    -------
    SuperficialData
        Items with both scores, both Q values and a strict gold (others counted in ``n_dropped``).
        ``P`` and ``Q`` are min-max normalised over the judge's items (see the module notes).
    """
    need = [c for c in ("item_id", "rater", "rater_kind", "winner", "score_a", "score_b") if c not in comparisons]
    if need:
        raise DataError("superficial-quality correction needs " + ", ".join(need) + " column(s)",
                        fix="give a comparisons table with the judge's scores of both outputs (score_a, score_b)")
    unknown = [c for c in by if c not in comparisons.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column")
    df = comparisons.assign(item_id=comparisons["item_id"].astype(str))
    qa, qb = _q_columns(df, q)
    df = df.assign(_qa=qa.to_numpy(), _qb=qb.to_numpy(), score_a=pd.to_numeric(df["score_a"], errors="coerce"),
                   score_b=pd.to_numeric(df["score_b"], errors="coerce"))
    rows = df[df["rater"].astype(str) == judge]
    if rows.empty:
        raise DataError(f"there is no judge '{judge}'", fix="choose one of the table's judges")
    per = rows.groupby("item_id", sort=False)[["score_a", "score_b"]].mean()
    qi = df.groupby("item_id", sort=False)[["_qa", "_qb"]].first().reindex(per.index)
    gold = _gold(df, per.index)
    ok = (per.notna().all(axis=1) & qi.notna().all(axis=1) & gold.notna()).to_numpy()
    per, qi, gold = per[ok], qi[ok], gold[ok]
    p = min_max(np.concatenate([per["score_a"], per["score_b"]]))
    qn = min_max(np.concatenate([qi["_qa"], qi["_qb"]]))
    n = len(per)
    if by:
        groups = df.groupby("item_id", sort=False)[list(by)].first().reindex(per.index)
        code = groups.groupby(list(by), dropna=False, sort=True).ngroup().to_numpy()
        first = np.unique(code, return_index=True)[1]
        keys = tuple(tuple(groups.iloc[i]) for i in first)
    else:
        code, keys = np.zeros(n, dtype=np.int64), ((),)
    return SuperficialData(judge, per.index.to_numpy(), p[:n], p[n:], qn[:n], qn[n:], gold.to_numpy(),
                           code, keys, tuple(by), int((~ok).sum()))


def correctness(dp: np.ndarray, dq: np.ndarray, gold: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """``(n_items, n_alphas)``: 1 right, 0 wrong, 0.5 tie (equal ``P_hat``, to 12 decimals)."""
    d = np.round(dp[:, None] - np.asarray(alphas, dtype=float)[None, :] * dq[:, None], 12)
    sign = np.sign(d)
    want = np.where(gold == 1, 1.0, -1.0)[:, None]
    return np.where(sign == 0, 0.5, (sign == want).astype(float))


def decisions(data: SuperficialData, alpha: float) -> pd.DataFrame:
    """Per item: the raw decision, the decision at ``alpha``, gold, correctness and whether it flipped.

    Cheap (one pass over the items): nothing that does not depend on ``alpha`` is recomputed by callers
    that keep ``data``.
    """
    def side(d):
        d = np.round(d, 12)
        return np.where(d > 0, "a", np.where(d < 0, "b", "tie"))
    raw, now = side(data.dp), side(data.dp - alpha * data.dq)
    c = correctness(data.dp, data.dq, data.gold, np.array([0.0, alpha]))
    return pd.DataFrame({"item_id": data.item_id, "decision_raw": raw, "decision": now,
                         "gold": np.where(data.gold == 1, "a", "b"), "correct_raw": c[:, 0], "correct": c[:, 1],
                         "flipped": raw != now})


def _group_rows(data, g, alphas, n_boot, root, level) -> list[dict]:
    """One group's rows of the alpha curve."""
    sel = data.group == g
    n = int(sel.sum())
    C = correctness(data.dp[sel], data.dq[sel], data.gold[sel], alphas)
    C0 = correctness(data.dp[sel], data.dq[sel], data.gold[sel], np.array([0.0]))
    W = item_weights(cell_rng(root, (data.judge, *data.keys[g])), n, n_boot)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = (W @ C) / W.sum(axis=1, keepdims=True)  # (1 + B, A)
        base = (W @ C0) / W.sum(axis=1, keepdims=True)
    change = acc - base
    lo, hi, _ = percentile_interval(acc[1:].T, level)
    clo, chi, _ = percentile_interval(change[1:].T, level)
    keys = dict(zip(data.by, data.keys[g]))
    note = (f"{data.n_dropped} item(s) of this judge (all groups) without scores, Q or a strict gold left out"
            if data.n_dropped else "")
    return [{"judge": data.judge, **keys, "alpha": float(a), "measure": "accuracy", "estimate": acc[0, j],
             "ci_low": lo[j], "ci_high": hi[j], "n": n, "change": change[0, j], "change_ci_low": clo[j],
             "change_ci_high": chi[j], "note": note} for j, a in enumerate(alphas)]


def alpha_curve(data: SuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS, n_boot: int = 1000,
                seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Accuracy against gold at every ``alpha``, per group, with item-bootstrap intervals.

    All alphas and all resamples at once: ``accuracy = W @ C / n`` with ``C`` the items' correctness
    at each alpha and ``W`` the item-resample counts. ``change`` is the accuracy minus the accuracy at
    ``alpha = 0`` (the raw judge), its interval paired (the same resamples).

    Returns
    -------
    pandas.DataFrame
        ``judge, *by, alpha, measure ('accuracy'), estimate, ci_low, ci_high, n, change, change_ci_low,
        change_ci_high, note``; ``n`` counts items.
    """
    alphas = np.asarray(alphas, dtype=float)
    root = root_seed(seed)
    rows = [r for g in range(len(data.keys)) for r in _group_rows(data, g, alphas, n_boot, root, level)]
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CVResult:
    """Cross-validated alpha: per-fold choices, pooled held-out accuracy, the alpha chosen on all data."""

    alpha_all: float
    fold_alphas: tuple
    accuracy_cv: float
    accuracy_raw: float
    ci_low: float
    ci_high: float
    n: int


def _choose(C: np.ndarray, alphas: np.ndarray) -> int:
    """Index of the alpha with the highest mean correctness, ties toward the smaller alpha."""
    mean = C.mean(axis=0)
    best = np.flatnonzero(mean >= mean.max() - 1e-12)
    return int(best[np.argmin(alphas[best])])


def cross_validated_alpha(data: SuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS, folds: int = 5,
                          seed: int = 0, n_boot: int = 1000, level: float = 0.95,
                          group: int | None = None) -> CVResult:
    """Choose alpha on training folds of items, score it on the held-out fold; pool over folds.

    Alpha is chosen by training accuracy, ties broken toward the smaller alpha. ``accuracy_cv`` pools
    the held-out correctness of every item; its interval resamples items (the choices held fixed).
    ``alpha_all`` is the alpha chosen on all items. ``group`` restricts to one group code.
    """
    alphas = np.asarray(alphas, dtype=float)
    sel = np.ones(len(data.gold), bool) if group is None else data.group == group
    C = correctness(data.dp[sel], data.dq[sel], data.gold[sel], alphas)
    C0 = correctness(data.dp[sel], data.dq[sel], data.gold[sel], np.array([0.0]))[:, 0]
    n = len(C)
    if n < 2 or folds < 2:
        raise DataError(f"cross-validation needs at least 2 items and 2 folds (have {n} items, {folds} folds)")
    rng = np.random.default_rng(root_seed(seed))
    fold = rng.permutation(np.arange(n) % min(folds, n))
    held = np.empty(n)
    chosen = []
    for k in range(min(folds, n)):
        test = fold == k
        j = _choose(C[~test], alphas)
        chosen.append(float(alphas[j]))
        held[test] = C[test, j]
    W = item_weights(cell_rng(root_seed(seed), (data.judge, "cv", group)), n, n_boot)
    boot = (W[1:] @ held) / n
    lo, hi, _ = percentile_interval(boot[None, :], level)
    return CVResult(float(alphas[_choose(C, alphas)]), tuple(chosen), float(held.mean()), float(C0.mean()),
                    float(lo[0]), float(hi[0]), n)


def _lc_design(rows: pd.DataFrame, systems: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """+1/-1 system indicators (the first system the reference, dropped) and the standardised length difference."""
    X = np.zeros((len(rows), len(systems)))
    sa = rows["system_a"].astype(str).to_numpy()
    sb = rows["system_b"].astype(str).to_numpy()
    for j, s in enumerate(systems):
        X[:, j] = (sa == s).astype(float) - (sb == s).astype(float)
    diff = (rows["text_a"].astype("string").str.len() - rows["text_b"].astype("string").str.len()).to_numpy(float)
    sd = diff.std(ddof=1) if len(diff) > 1 else 0.0
    z = diff / sd if sd > 0 else np.zeros_like(diff)
    return np.column_stack([X[:, 1:], z]), z


def _subtracted_pref(rows: pd.DataFrame, alpha: float) -> np.ndarray | None:
    """Per row, 1 / 0 / 0.5: whether a's ``P_hat`` (Q = length in characters) beats b's; None without scores."""
    if not {"score_a", "score_b"} <= set(rows.columns):
        return None
    pa, pb = (pd.to_numeric(rows[c], errors="coerce").to_numpy(float) for c in ("score_a", "score_b"))
    if np.isnan(pa).all() or np.isnan(pb).all():
        return None
    n = len(rows)
    p = min_max(np.concatenate([pa, pb]))
    q = min_max(np.concatenate([rows["text_a"].astype("string").str.len().to_numpy(float),
                                rows["text_b"].astype("string").str.len().to_numpy(float)]))
    d = np.round((p[:n] - p[n:]) - alpha * (q[:n] - q[n:]), 12)
    return np.where(np.isnan(d), np.nan, np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5)))


def length_controlled(comparisons: pd.DataFrame, *, judge: str, alpha: float = 0.5) -> pd.DataFrame:
    """AlpacaEval 2's length-controlled win rate (Dubois et al. 2024), per system pair, for one judge.

    The simplified form: a Binomial GLM (logit link, :mod:`statsmodels`) of the judge's preference for
    output a (ties dropped) on the systems as +1 (system a) / -1 (system b) indicator columns (the first
    system in sorted order is the reference) and the length difference ``len(text_a) - len(text_b)``
    in characters, standardised by its SD over the judge's comparisons; no intercept. AlpacaEval 2 also
    passes the length term through ``tanh`` and adds instruction difficulty; neither is used here.
    The length-controlled win rate of system ``s`` over ``t`` is ``sigmoid(theta_s - theta_t)``: the
    prediction at zero length difference. Where the judge's rows carry ``score_a``/``score_b``, the
    ``alpha``-subtracted win rate (``P_hat`` with Q = length in characters, min-max over the judge's rows,
    ties half) is reported as ``subtracted_win_rate``.

    Returns
    -------
    pandas.DataFrame
        ``judge, system_a, system_b, measure, estimate, n, note`` with measures ``win_rate`` (raw share of
        the judge's preferences for ``system_a``), ``lc_win_rate`` and, with scores, ``subtracted_win_rate``. Without ``system_a``/``system_b``
        (LLMBar does not name the generators) one row with measure ``lc_win_rate``, NaN and a
        ``not_available`` note.
    """
    import statsmodels.api as sm

    if not {"system_a", "system_b"} <= set(comparisons.columns):
        return pd.DataFrame([{"judge": judge, "system_a": None, "system_b": None, "measure": "lc_win_rate",
                              "estimate": np.nan, "n": 0,
                              "note": "not_available: the table names no systems (system_a, system_b)"}])
    if not {"text_a", "text_b"} <= set(comparisons.columns):
        raise DataError("the length-controlled win rate needs the outputs' texts (text_a, text_b)")
    rows = comparisons[(comparisons["rater"].astype(str) == judge) & comparisons["winner"].isin(["a", "b"])]
    rows = rows.dropna(subset=["system_a", "system_b", "text_a", "text_b"])
    if rows.empty:
        raise DataError(f"judge '{judge}' has no a/b verdict with systems and texts")
    systems = sorted(set(rows["system_a"].astype(str)) | set(rows["system_b"].astype(str)))
    X, _ = _lc_design(rows, systems)
    y = (rows["winner"] == "a").to_numpy(float)
    fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
    theta = dict(zip(systems, np.concatenate([[0.0], fit.params[:-1]])))
    sub = _subtracted_pref(rows, alpha)
    rows = rows.assign(_sub=np.nan if sub is None else sub)
    sa, sb = rows["system_a"].astype(str), rows["system_b"].astype(str)
    out = []
    for (s, t), grp in rows.groupby([np.minimum(sa, sb), np.maximum(sa, sb)]):
        first = (grp["system_a"].astype(str) == s).to_numpy()
        pref = np.where(first, grp["winner"] == "a", grp["winner"] == "b").astype(float)
        lc = 1.0 / (1.0 + np.exp(-(theta[s] - theta[t])))
        measures = [("win_rate", pref.mean(), ""), ("lc_win_rate", lc, "")]
        if sub is not None:
            subp = np.where(first, grp["_sub"], 1.0 - grp["_sub"])
            measures.append(("subtracted_win_rate", np.nanmean(subp) if np.isfinite(subp).any() else np.nan,
                             f"alpha = {alpha:g}, Q = length"))
        for m, v, note in measures:
            out.append({"judge": judge, "system_a": s, "system_b": t, "measure": m, "estimate": float(v),
                        "n": len(grp), "note": note})
    return pd.DataFrame(out)
