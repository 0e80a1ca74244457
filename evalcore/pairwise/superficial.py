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
from ..stats import cell_rng, item_weights, percentile_interval, resample_blocks, root_seed

__all__ = ["CVResult", "SuperficialData", "alpha_curve", "alpha_grid", "correctness", "cross_validated_alpha",
           "cv_records", "decisions", "flips", "length_controlled", "min_max", "q_options", "superficial_data",
           "superficial_table"]

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
    # groupby-size, not pd.crosstab: the same table, about 20x faster on 100,000 pairs (benchmarks/RESULTS.md)
    counts = human.groupby([human["item_id"].astype(str), human["winner"].astype(str)]).size().unstack(
        fill_value=0).reindex(index=items, columns=["a", "b", "tie"], fill_value=0)
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
    """Per item: its group, the raw decision, the decision at ``alpha``, gold, correctness and whether it flipped.

    Cheap (one pass over the items): nothing that does not depend on ``alpha`` is recomputed by callers
    that keep ``data``.
    """
    def side(d):
        d = np.round(d, 12)
        return np.where(d > 0, "a", np.where(d < 0, "b", "tie"))
    raw, now = side(data.dp), side(data.dp - alpha * data.dq)
    c = correctness(data.dp, data.dq, data.gold, np.array([0.0, alpha]))
    groups = {col: [data.keys[g][j] for g in data.group] for j, col in enumerate(data.by)}
    return pd.DataFrame({"item_id": data.item_id, **groups, "decision_raw": raw, "decision": now,
                         "gold": np.where(data.gold == 1, "a", "b"), "correct_raw": c[:, 0], "correct": c[:, 1],
                         "flipped": raw != now})


def flips(data: SuperficialData, alpha: float) -> pd.DataFrame:
    """Per group at one ``alpha``: accuracy before and after, and the verdicts that changed.

    What the page's slider recomputes (one pass over the items, counted with ``bincount``);
    ``right_to_wrong`` and ``wrong_to_right`` count items whose correctness fell or rose (a tie is
    half right, so a right verdict turned tie counts as right to wrong).

    >>> d = SuperficialData("j", np.arange(3), np.array([1., 0., .5]), np.array([0., 1., .5]),
    ...                     np.array([1., 0., 0.]), np.array([0., 0., 1.]), np.array([0., 0., 1.]),
    ...                     np.zeros(3, int), ((),), (), 0)
    >>> flips(d, 1.0)[["accuracy_raw", "accuracy", "right_to_wrong", "wrong_to_right"]].values.tolist()
    [[0.5, 0.8333333333333334, 0.0, 2.0]]
    """
    c = correctness(data.dp, data.dq, data.gold, np.array([0.0, float(alpha)]))
    k = len(data.keys)
    count = lambda w: np.bincount(data.group, weights=w, minlength=k)  # noqa: E731
    n = np.bincount(data.group, minlength=k)
    raw, now = count(c[:, 0]) / np.maximum(n, 1), count(c[:, 1]) / np.maximum(n, 1)
    out = pd.DataFrame([dict(zip(data.by, key)) for key in data.keys], index=range(k))
    return out.assign(judge=data.judge, alpha=float(alpha), n=n, accuracy_raw=raw, accuracy=now, change=now - raw,
                      flipped=count((c[:, 0] != c[:, 1]).astype(float)),
                      right_to_wrong=count((c[:, 1] < c[:, 0]).astype(float)),
                      wrong_to_right=count((c[:, 1] > c[:, 0]).astype(float)))


def _group_rows(data, g, alphas, n_boot, root, level) -> list[dict]:
    """One group's rows of the alpha curve."""
    sel = data.group == g
    n = int(sel.sum())
    C = correctness(data.dp[sel], data.dq[sel], data.gold[sel], alphas)
    C0 = correctness(data.dp[sel], data.dq[sel], data.gold[sel], np.array([0.0]))
    # Resample weights in blocks, each reduced at once (a million items would need 8 GB as one matrix);
    # every resample draws n items, so a mean is W @ C / n. Column 0 of CC is alpha = 0, the raw judge.
    CC = np.column_stack([C0, C])
    parts = [CC.mean(axis=0, keepdims=True)]
    parts += [(W @ CC) / max(n, 1) for W in resample_blocks(cell_rng(root, (data.judge, *data.keys[g])), n, n_boot)]
    both = np.vstack(parts)  # (1 + B, 1 + A)
    acc, change = both[:, 1:], both[:, 1:] - both[:, :1]
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


def superficial_table(data: SuperficialData, *, alphas: Sequence[float] = _DEFAULT_ALPHAS, folds: int = 5,
                      n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """The whole result for one judge: :func:`alpha_curve`, then per group the cross-validated alpha.

    Returns
    -------
    pandas.DataFrame
        The curve's rows (``measure`` = ``accuracy``), then per group one row with ``measure`` =
        ``alpha_cv`` (``estimate`` the alpha chosen on all the group's items, ``note`` the folds'
        choices) and one with ``accuracy_cv`` (the pooled held-out accuracy and its interval).
    """
    alphas = np.asarray(alphas, dtype=float)
    curve = alpha_curve(data, alphas=alphas, n_boot=n_boot, seed=seed, level=level)
    rows = []
    for g, key in enumerate(data.keys):
        cv = cross_validated_alpha(data, alphas=alphas, folds=folds, seed=seed, n_boot=n_boot, level=level, group=g)
        rows += cv_records(data.judge, dict(zip(data.by, key)), cv.alpha_all, cv.fold_alphas, cv.n,
                           held=("accuracy_cv", cv.accuracy_cv, cv.ci_low, cv.ci_high,
                                 f"held-out accuracy pooled over {folds} folds; raw accuracy {cv.accuracy_raw:.3f}"))
    return pd.concat([curve, pd.DataFrame(rows)], ignore_index=True)


def cv_records(judge: str, keys: dict, alpha_all: float, fold_alphas: Sequence[float], n: int, *,
               held: tuple) -> list[dict]:
    """The two records of a cross-validated alpha: ``alpha_cv`` (chosen on all items, the folds' choices in
    ``note``) and the held-out measure ``held = (measure, estimate, ci_low, ci_high, note)``."""
    measure, estimate, lo, hi, note = held
    return [{"judge": judge, **keys, "alpha": alpha_all, "measure": "alpha_cv", "estimate": alpha_all,
             "ci_low": np.nan, "ci_high": np.nan, "n": n,
             "note": "alpha chosen on all items; per fold: " + ", ".join(f"{a:g}" for a in fold_alphas)},
            {"judge": judge, **keys, "alpha": np.nan, "measure": measure, "estimate": estimate, "ci_low": lo,
             "ci_high": hi, "n": n, "note": note}]


def q_options(comparisons: pd.DataFrame) -> list[str]:
    """The superficial qualities a comparisons table offers: ``superficial`` and other ``<name>_a/_b``
    numeric pairs, then ``length`` and ``words`` when it has the texts."""
    cols = set(comparisons.columns)
    skip = {"score", "system", "text", "prob"}
    named = [c[:-2] for c in comparisons.columns if c.endswith("_a") and c[:-2] not in skip and f"{c[:-2]}_b" in cols
             and pd.api.types.is_numeric_dtype(comparisons[c]) and comparisons[c].notna().any()]
    named.sort(key=lambda n: n != "superficial")
    return named + (["length", "words"] if {"text_a", "text_b"} <= cols else [])


def _lc_design(rows: pd.DataFrame, systems: list[str], diff: np.ndarray) -> np.ndarray:
    """+1/-1 system indicators (the first system the reference, dropped) and the standardised Q difference."""
    X = np.zeros((len(rows), len(systems)))
    sa = rows["system_a"].astype(str).to_numpy()
    sb = rows["system_b"].astype(str).to_numpy()
    for j, s in enumerate(systems):
        X[:, j] = (sa == s).astype(float) - (sb == s).astype(float)
    sd = diff.std(ddof=1) if len(diff) > 1 else 0.0
    z = diff / sd if sd > 0 else np.zeros_like(diff)
    return np.column_stack([X[:, 1:], z])


def _subtracted_pref(rows: pd.DataFrame, alpha: float) -> np.ndarray | None:
    """Per row, 1 / 0 / 0.5: whether a's ``P_hat`` beats b's (Q in ``_qa``/``_qb``); None without scores."""
    if not {"score_a", "score_b"} <= set(rows.columns):
        return None
    pa, pb = (pd.to_numeric(rows[c], errors="coerce").to_numpy(float) for c in ("score_a", "score_b"))
    if np.isnan(pa).all() or np.isnan(pb).all():
        return None
    n = len(rows)
    p = min_max(np.concatenate([pa, pb]))
    q = min_max(np.concatenate([rows["_qa"].to_numpy(float), rows["_qb"].to_numpy(float)]))
    d = np.round((p[:n] - p[n:]) - alpha * (q[:n] - q[n:]), 12)
    return np.where(np.isnan(d), np.nan, np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5)))


def _lc_theta(X: np.ndarray, y: np.ndarray, w: np.ndarray, systems: list[str]) -> dict[str, float]:
    """System strengths of the Binomial GLM under frequency weights ``w`` (NaN when the fit fails)."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning
    import warnings

    keep = w > 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerfectSeparationWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            fit = sm.GLM(y[keep], X[keep], family=sm.families.Binomial(), freq_weights=w[keep]).fit()
        params = np.asarray(fit.params)
    except (PerfectSeparationError, PerfectSeparationWarning, np.linalg.LinAlgError, ValueError):
        params = np.full(X.shape[1], np.nan)
    return dict(zip(systems, np.concatenate([[0.0], params[:-1]])))


def _pair_measures(grp: pd.DataFrame, s: str, subs: dict) -> dict[tuple, np.ndarray]:
    """Per row of one system pair, what each win rate averages (1: ``s`` preferred, 0 not, 0.5 tie),
    keyed by (measure, alpha); ``subs`` holds the rows' subtracted preferences per alpha."""
    first = (grp["system_a"].astype(str) == s).to_numpy()
    out = {("win_rate", None): np.where(first, grp["winner"] == "a", grp["winner"] == "b").astype(float)}
    for a, sub in subs.items():
        out[("subtracted_win_rate", a)] = np.where(first, sub, 1.0 - sub)
    if grp["_gold"].notna().any():
        out[("human_win_rate", None)] = np.where(first, grp["_gold"], 1.0 - grp["_gold"])
    return out


def _weighted_means(v: np.ndarray, Wr: np.ndarray) -> np.ndarray:
    ok = np.isfinite(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Wr[:, ok] @ v[ok]) / Wr[:, ok].sum(axis=1)


def length_controlled(comparisons: pd.DataFrame, *, judge: str, alpha: float | Sequence[float] | None = 0.5,
                      q: str = "length",
                      lc: bool = True, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """AlpacaEval 2's length-controlled win rate (Dubois et al. 2024), per system pair, for one judge.

    The simplified form: a Binomial GLM (logit link, :mod:`statsmodels`) of the judge's preference for
    output a (ties dropped) on the systems as +1 (system a) / -1 (system b) indicator columns (the first
    system in sorted order is the reference) and the length difference ``len(text_a) - len(text_b)``
    in characters, standardised by its SD over the judge's comparisons; no intercept. AlpacaEval 2 also
    passes the length term through ``tanh`` and adds instruction difficulty; neither is used here.
    The length-controlled win rate of system ``s`` over ``t`` is ``sigmoid(theta_s - theta_t)``: the
    prediction at zero length difference. Beside it: the raw share of the judge's preferences; where
    the rows carry ``score_a``/``score_b``, the ``alpha``-subtracted win rate (``P_hat`` with Q = length
    in characters, min-max over the judge's rows, ties half); and where humans judged the items, the
    humans' win rate (gold, else the strict majority), the reference the others should approach.
    Intervals: item bootstrap (``n_boot`` resamples of items, the GLM refitted with frequency weights).
    ``alpha`` may be a sequence: one subtracted win rate per alpha (the page computes its slider's grid
    once); ``alpha=None`` leaves it out, and ``lc=False`` the GLM (the slow part).

    Returns
    -------
    pandas.DataFrame
        ``judge, system_a, system_b, measure, alpha, estimate, ci_low, ci_high, n, note`` with measures
        ``win_rate``, ``lc_win_rate`` and, when available, ``subtracted_win_rate`` and ``human_win_rate``;
        ``n`` counts the items with an a/b verdict of the judge on the pair. Without ``system_a``/``system_b`` (LLMBar
        does not name the generators) one row with measure ``lc_win_rate``, NaN and a ``not_available`` note.
    """
    if not {"system_a", "system_b"} <= set(comparisons.columns):
        return pd.DataFrame([{"judge": judge, "system_a": None, "system_b": None, "measure": "lc_win_rate",
                              "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
                              "note": "not_available: the table names no systems (system_a, system_b)"}])
    rows = comparisons[(comparisons["rater"].astype(str) == judge) & comparisons["winner"].isin(["a", "b"])]
    qa, qb = _q_columns(rows, q)
    rows = rows.assign(_qa=qa.to_numpy(), _qb=qb.to_numpy()).dropna(subset=["system_a", "system_b", "_qa", "_qb"])
    if rows.empty:
        raise DataError(f"judge '{judge}' has no a/b verdict with systems and a superficial quality ({q})")
    items = rows["item_id"].astype(str)
    gold = _gold(comparisons.assign(item_id=comparisons["item_id"].astype(str)), pd.Index(items.unique()))
    alphas = [] if alpha is None else [float(a) for a in np.atleast_1d(alpha)]
    subs = {a: _subtracted_pref(rows, a) for a in alphas}
    subs = {a: v for a, v in subs.items() if v is not None}
    rows = rows.assign(_gold=items.map(gold).to_numpy(float))
    return _lc_table(rows, judge=judge, subs=subs, q=q, n_boot=n_boot, seed=seed, level=level, lc=lc)


def _lc_table(rows: pd.DataFrame, *, judge: str, subs: dict, q: str, n_boot: int, seed: int, level: float,
              lc: bool) -> pd.DataFrame:
    """The rows of :func:`length_controlled`: point estimates and item-bootstrap intervals."""
    systems = sorted(set(rows["system_a"].astype(str)) | set(rows["system_b"].astype(str)))
    X = _lc_design(rows, systems, (rows["_qa"] - rows["_qb"]).to_numpy(float))
    y = (rows["winner"] == "a").to_numpy(float)
    item_code, _ = pd.factorize(rows["item_id"].astype(str))
    Wi = item_weights(cell_rng(root_seed(seed), (judge, "lc")), int(item_code.max()) + 1, n_boot)
    Wr = Wi[:, item_code]  # (1 + B, rows)
    thetas = [_lc_theta(X, y, Wr[r], systems) for r in range(len(Wr))] if lc else []
    sa, sb = rows["system_a"].astype(str), rows["system_b"].astype(str)
    lo_s, hi_s = np.minimum(sa, sb), np.maximum(sa, sb)
    out = []
    order = {"win_rate": 0, "lc_win_rate": 1, "subtracted_win_rate": 2, "human_win_rate": 3}
    for (s, t), idx in rows.groupby([lo_s, hi_s]).indices.items():
        grp = rows.iloc[idx]
        grp_subs = {a: v[idx] for a, v in subs.items()}
        boot = {k: _weighted_means(v, Wr[:, idx]) for k, v in _pair_measures(grp, s, grp_subs).items()}
        if lc:
            boot[("lc_win_rate", None)] = np.array([1.0 / (1.0 + np.exp(-(th[s] - th[t]))) for th in thetas])
        for m, a in sorted(boot, key=lambda k: (order[k[0]], k[1] or 0.0)):
            v = boot[(m, a)]
            lo, hi, _ = percentile_interval(v[None, 1:], level) if n_boot else ([np.nan], [np.nan], None)
            note = {"subtracted_win_rate": f"Q = {q}",
                    "human_win_rate": "the humans' verdicts (gold, else the strict majority) on these items"}.get(m, "")
            out.append({"judge": judge, "system_a": s, "system_b": t, "measure": m, "alpha": a,
                        "estimate": float(v[0]), "ci_low": float(lo[0]), "ci_high": float(hi[0]),
                        "n": int(grp["item_id"].nunique()), "note": note})
    return pd.DataFrame(out)
