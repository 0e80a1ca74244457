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

:func:`length_controlled` is the alternative of AlpacaEval 2 (Dubois et al. 2024): their
``length_controlled_minimal`` GLM, fitted per system pair (:func:`alpacaeval_lc`), without the
instruction-difficulty term of their default GLM (it needs their hub data for their own instructions).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS, JUDGE
from ..errors import DataError
from ..labels import strict_majority
from ..stats.bootstrap import cell_rng, item_weights, percentile_interval, resample_blocks, root_seed

__all__ = ["CVResult", "SuperficialData", "alpacaeval_lc", "alpacaeval_lc_exact", "alpha_curve", "alpha_grid",
           "correctness", "cross_validated_alpha", "cv_records", "decisions", "flips", "length_controlled", "min_max",
           "q_options", "superficial_accuracy", "superficial_data", "superficial_table", "warm_up"]

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


@takes_table(COMPARISONS, "score_a", "score_b", "superficial_a", "superficial_b", "text_a", "text_b")
def superficial_accuracy(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                         q: str = "length", alphas: Sequence[float] = _DEFAULT_ALPHAS, folds: int = 5,
                         n_boot: int = 1000, seed: int | np.random.Generator = 0,
                         level: float = 0.95) -> pd.DataFrame:
    """Superficial-quality subtraction for every judge of a comparisons table: :func:`superficial_table` of each.

    Parameters
    ----------
    comparisons
        A validated comparisons table with the judges' ``score_a``/``score_b`` and human labels.
    by
        Per-item columns to group by.
    judges
        The judges whose scores are corrected (default: every judge with scores of both outputs, in name
        order).
    q
        Superficial quality: ``"length"``, ``"words"``, ``"superficial"`` or ``<name>`` (``<name>_a/_b``;
        :func:`q_options` lists a table's).
    alphas
        The weights of Q to try (0 to 1 by 0.05).
    folds
        Folds of the cross-validated alpha.
    n_boot, seed, level
        Item-bootstrap resamples, their seed (a whole number or a ``numpy.random.Generator``), the
        confidence level of the intervals.
    item, rater, kind, winner, system_a, system_b, score_a, score_b, superficial_a, superficial_b, text_a, text_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Every judge's :func:`superficial_table`, one after the other: ``judge, *by, alpha, measure, estimate,
        ci_low, ci_high, n, change, change_ci_low, change_ci_high, note``, the curve's rows (``accuracy``), then
        per group ``alpha_cv`` and ``accuracy_cv``.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> table = superficial_accuracy(comparisons, q="superficial", alphas=[0, 0.5], n_boot=200, seed=0)
    >>> half = table.query("measure == 'accuracy' and alpha == 0.5")
    >>> print(half[["judge", "estimate", "change", "change_ci_low", "change_ci_high"]].round(3).to_string(index=False))
                   judge  estimate  change  change_ci_low  change_ci_high
        gpt-3.5/pairwise     0.792   0.083          0.065           0.098
          gpt-4/pairwise     0.848   0.046          0.027           0.063
    llama-2-70b/pairwise     0.751   0.074          0.057           0.092
    """
    if judges is None:
        scored = comparisons[(comparisons["rater_kind"] == JUDGE) & comparisons.get("score_a", pd.Series(dtype=float))
                             .notna() & comparisons.get("score_b", pd.Series(dtype=float)).notna()]
        judges = sorted(scored["rater"].astype(str).unique())
    if not len(judges):
        raise DataError("no judge has scores of both outputs (score_a, score_b)",
                        fix="give the judges' scores of each output, or name the judges")
    seed = root_seed(seed)
    return pd.concat([superficial_table(superficial_data(comparisons, judge=j, q=q, by=by), alphas=alphas,
                                        folds=folds, n_boot=n_boot, seed=seed, level=level) for j in judges],
                     ignore_index=True)


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


#: AlpacaEval's ``length_controlled_minimal`` GLM (``src/alpaca_eval/metrics/glm_winrate.py``): the C grid of
#: scikit-learn's ``LogisticRegressionCV`` default (``Cs=10``) and the folds of its ``GroupKFold(n_splits=5)``.
LC_CS = np.logspace(-4, 4, 10)
LC_FOLDS = 5


def _lc_folds(n: int) -> np.ndarray:
    """The fold of each of ``n`` annotations as AlpacaEval's ``GroupKFold(5)`` assigns it: each annotation is one
    group of two rows (its copy with label 1 and its copy with label 0). scikit-learn's own splitter, so that the
    folds are AlpacaEval's on this installation."""
    from sklearn.model_selection import GroupKFold

    groups = np.tile(np.arange(n), 2)
    fold = np.empty(n, dtype=np.int64)
    for k, (_, test) in enumerate(GroupKFold(n_splits=LC_FOLDS).split(np.zeros((2 * n, 1)), groups=groups)):
        fold[groups[test]] = k
    return fold


def _l1_logistic_kwargs() -> dict:
    """scikit-learn's spelling of an L1 penalty: ``l1_ratio=1`` from 1.8, where ``penalty`` is deprecated."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    deprecated = inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"
    return {"l1_ratio": 1.0} if deprecated else {"penalty": "l1"}


def _liblinear_public(X: np.ndarray, y: np.ndarray, sw: np.ndarray, C: float, random_state) -> np.ndarray:
    """``LogisticRegression(solver="liblinear", L1, fit_intercept=False, tol=1e-4, max_iter=100).fit``'s weights."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    kw = {"solver": "liblinear", "fit_intercept": False, "tol": 1e-4, "max_iter": 100, **_l1_logistic_kwargs()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # liblinear's iterate is AlpacaEval's number
        return LogisticRegression(C=C, random_state=random_state, **kw).fit(X, y, sample_weight=sw).coef_[0]


def _liblinear_direct(X: np.ndarray, y: np.ndarray, sw: np.ndarray, C: float, random_state) -> np.ndarray:
    """The same liblinear call without scikit-learn's checks of its arguments (about 2 ms around a 0.04 ms fit):
    what ``LogisticRegression.fit`` hands liblinear for the classes 0/1 (solver 6, L1-regularised logistic
    regression; no bias term; unit class weights; the seed drawn from ``random_state`` as it draws it)."""
    from sklearn.svm._liblinear import set_verbosity_wrap, train_wrap  # scikit-learn's own binding of liblinear
    from sklearn.utils import check_random_state

    seed = check_random_state(random_state).randint(np.iinfo("i").max)
    set_verbosity_wrap(0)  # liblinear's printing is a global switch, silenced before each fit as sklearn does
    coef, _ = train_wrap(np.ascontiguousarray(X, dtype=float), np.array(y, dtype=float), False, 6, 1e-4, -1.0,
                         float(C), np.ones(2), 100, seed, 0.1, np.array(sw, dtype=float))
    return coef[0]


@functools.cache
def _liblinear_fit():
    """:func:`_liblinear_direct` if it gives :func:`_liblinear_public`'s weights bit for bit on a check problem,
    else :func:`_liblinear_public`: the direct call goes through a private scikit-learn module, which a release
    may change, so it is checked once per process and otherwise not used."""
    rng = np.random.default_rng(7)
    x = np.tanh(rng.normal(size=40))
    X = np.column_stack([np.r_[x, x], np.ones(80)])
    y, p = np.r_[np.ones(40), np.zeros(40)], rng.choice([0.0, 0.5, 1.0], 40)
    sw = np.r_[p, 1.0 - p]
    try:
        same = all(np.array_equal(_liblinear_direct(X, y, sw, C, np.random.RandomState(123)),
                                  _liblinear_public(X, y, sw, C, np.random.RandomState(123)))
                   for C in (0.01, 0.36, 21.5, 1e4))
    except (ImportError, AttributeError, TypeError, ValueError):
        same = False
    return _liblinear_direct if same else _liblinear_public


def _liblinear_lc(x: np.ndarray, pref: np.ndarray, fold: np.ndarray) -> tuple[float, float, float]:
    """AlpacaEval's fit on one data set with liblinear itself, step for step as ``LogisticRegressionCV`` takes it:
    the rows duplicated (label 1 weighted ``p``, then label 0 weighted ``1 - p``), per fold a fit at every C in
    ascending order with the seeds one ``RandomState(123)`` gives in turn, the held-out soft log loss, the refit
    at the best C. Returns ``(w_len, w_0, C)``."""
    from scipy.special import expit

    n = len(x)
    X = np.column_stack([np.concatenate([x, x]), np.ones(2 * n)])
    y = np.concatenate([np.ones(n), np.zeros(n)])
    sw = np.concatenate([pref, 1.0 - pref])
    row_fold = np.concatenate([fold, fold])
    fit = _liblinear_fit()

    total = np.zeros(len(LC_CS))
    for k in range(LC_FOLDS):
        train, test = np.flatnonzero(row_fold != k), np.flatnonzero(row_fold == k)
        rs = np.random.RandomState(123)  # one stream per fold, drawn once per C, as the CV path does
        for c, C in enumerate(LC_CS):
            w = fit(X[train], y[train], sw[train], C, rs)
            q = np.clip(expit(X[test] @ w), 1e-15, 1 - 1e-15)
            pt = np.concatenate([pref, pref])[test]
            total[c] -= -np.mean(pt * np.log(q) + (1 - pt) * np.log(1 - q))
    C = float(LC_CS[int(np.argmax(total))])
    w = fit(X, y, sw, C, 123)
    return float(w[0]), float(w[1]), C


def _lc_x(delta: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``tanh(delta / SD)`` per data set (rows of ``counts``), the SD (``ddof = 1``) over the data set's copies;
    0 where the SD is 0 (no spread: the length term drops out)."""
    m = counts.sum(axis=1, keepdims=True)
    mean = (counts * delta).sum(axis=1, keepdims=True) / m
    sd = np.sqrt((counts * (delta - mean) ** 2).sum(axis=1, keepdims=True) / (m - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, np.tanh(delta / sd), 0.0)


def alpacaeval_lc(delta: np.ndarray, preference: np.ndarray) -> dict[str, float]:
    """AlpacaEval's length-controlled win rate, GLM ``length_controlled_minimal``, of one model against its baseline.

    Dubois, Galambosi, Liang & Hashimoto (2024), "Length-Controlled AlpacaEval", as released in
    ``tatsu-lab/alpaca_eval`` (``src/alpaca_eval/metrics/glm_winrate.py``, ``get_length_controlled_winrate``).
    Per annotation ``i`` (one instruction): the preference ``p_i`` for the model, in [0, 1] (AlpacaEval's
    preference 1 = baseline, 2 = model, 1.5 or 0 = tie, mapped by ``p - 1``, so a tie counts ½); the length
    difference ``delta_i = len(baseline output) - len(model output)``, divided (not centred) by its SD over the
    annotations (``ddof = 1``). The formula ``np.tanh(std_delta_len) + not_gamed_baseline.astype(float) - 1``
    gives the design ``x_i = (tanh(delta_i / SD), 1)``, no intercept, and the model
    ``P(model preferred) = sigmoid(w_len x_i + w_0)``, fitted by scikit-learn's
    ``LogisticRegressionCV(penalty="l1", solver="liblinear", fit_intercept=False, Cs=10, random_state=123)`` on
    AlpacaEval's duplicated rows (label 1 weighted ``p_i``, label 0 weighted ``1 - p_i``): for each ``C`` of
    ``logspace(-4, 4, 10)`` liblinear minimises ``|w_len| + |w_0| + C * sum_i [softplus(z_i) - p_i z_i]``
    (to its tolerance 1e-4) on four folds of ``GroupKFold(5)``, each ``C`` is scored by the held-out soft-label
    log loss (predictions clipped to [1e-15, 1 - 1e-15]) summed over the folds, the best ``C`` is refitted on
    all annotations, and the model predicts at zero length difference:
    ``LC = mean_i sigmoid(w_len tanh(0) + w_0) = sigmoid(w_0)``. The same steps are taken here with liblinear
    through scikit-learn, so the number is AlpacaEval's (the tests check it against a transcription of their code
    to 1e-6); :func:`alpacaeval_lc_exact` is the fast form used for bootstrap resamples.

    Left out: the ``instruction_difficulty`` term of ``length_controlled_v1`` (AlpacaEval's default), which needs
    their per-instruction estimates from their Hugging Face hub data and exists only for AlpacaEval's own 805
    instructions, and the regularisation towards their "gamed" baselines; ``length_controlled_minimal`` is their
    name for exactly the model that remains. Two departures from their code: when the length difference has no
    spread (SD 0) the length term is 0 (their code divides by zero); and when every preference of a training set
    is 0 (the model never preferred), liblinear sees only one class and returns the weights with their sign flipped,
    so that their code reports about 0.5 for a model that always loses; there the exact fit
    (:func:`alpacaeval_lc_exact`) is used and ``exact`` is True.

    Parameters
    ----------
    delta : numpy.ndarray
        ``(n,)`` baseline's minus model's length (or any superficial quality Q) per annotation.
    preference : numpy.ndarray
        ``(n,)`` the judge's preference for the model: 1 model, 0 baseline, 0.5 tie (or a mean of these).

    Returns
    -------
    dict
        ``lc`` the length-controlled win rate; ``w_len``, ``w_0`` the fitted weights; ``C`` the chosen C;
        ``exact`` whether the exact fit replaced liblinear's (above). With fewer than 5 annotations (5-fold
        cross-validation needs them) all NaN.
    """
    delta = np.asarray(delta, dtype=float)
    pref = np.asarray(preference, dtype=float)
    n = len(delta)
    if n < LC_FOLDS:
        return {"lc": np.nan, "w_len": np.nan, "w_0": np.nan, "C": np.nan, "exact": False}
    fold = _lc_folds(n)
    if any((pref[fold != k] == 0).all() for k in range(LC_FOLDS)):
        # Every training preference 0: the label-1 rows all weigh 0, liblinear sees one class, takes it for its
        # positive one and returns the weights with the wrong sign (AlpacaEval's code then reports about 0.5 for
        # a model that never wins). The exact fit of the same model is used instead.
        fit = alpacaeval_lc_exact(delta, pref)
        return {k: float(v[0]) for k, v in fit.items()} | {"exact": True}
    w_len, w_0, C = _liblinear_lc(_lc_x(delta, np.ones((1, n)))[0], pref, fold)
    return {"lc": float(0.5 * (1.0 + np.tanh(0.5 * w_0))), "w_len": w_len, "w_0": w_0, "C": C, "exact": False}


def alpacaeval_lc_exact(delta: np.ndarray, preference: np.ndarray, counts: np.ndarray | None = None
                        ) -> dict[str, np.ndarray]:
    """:func:`alpacaeval_lc` on many data sets at once, each fit the exact minimiser of liblinear's objective.

    The same estimator (design, folds, C grid, held-out score, refit, prediction at zero length difference), with
    every fit solved to rounding by proximal Newton (:mod:`evalcore.pairwise._lckernel`), warm-started
    along the ascending C grid; liblinear stops at its tolerance instead, so the two differ by about 1e-5 (and,
    rarely, where two C score alike, in the C chosen). Fast enough for an item bootstrap: the whole
    cross-validation of every resample runs compiled, split over threads; a thousand resamples of 150 items take
    about 0.2 s (0.35 s of CPU), where liblinear's 51 fits per data set take about 0.1 s each through
    scikit-learn.

    Parameters
    ----------
    delta, preference : numpy.ndarray
        As in :func:`alpacaeval_lc`.
    counts : numpy.ndarray, optional
        ``(R, n)`` how often each annotation is in each of ``R`` data sets (an item bootstrap's resample counts,
        each row summing to ``n``); a data set lists the annotations repeated by their counts, in their order, as
        AlpacaEval would be given it, and ``GroupKFold`` splits its ``n`` positions. Default: the data once.

    Returns
    -------
    dict
        ``lc``, ``w_len``, ``w_0``, ``C``: arrays of length ``R`` (NaN with fewer than 5 annotations).
    """
    delta = np.asarray(delta, dtype=float)
    pref = np.asarray(preference, dtype=float)
    n = len(delta)
    counts = np.ones((1, n)) if counts is None else np.asarray(counts, dtype=float)
    R = len(counts)
    if n < LC_FOLDS:
        nan = np.full(R, np.nan)
        return {"lc": nan, "w_len": nan.copy(), "w_0": nan.copy(), "C": nan.copy()}
    from . import _lckernel  # numba: compiled on first use

    x = _lc_x(delta, counts)  # (R, n)
    # Data set r lists annotation i counts[r, i] times, in order; its position j is in fold fold[j].
    w, best = _lckernel.cv_resamples(x, pref, counts, _lc_folds(n), LC_CS)
    return {"lc": 0.5 * (1.0 + np.tanh(0.5 * w[:, 1])), "w_len": w[:, 0], "w_0": w[:, 1], "C": LC_CS[best]}


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


def _judge_pref(grp: pd.DataFrame, s: str) -> np.ndarray:
    """Per row of one system pair, the judge's verdict for ``s``: 1 preferred, 0 not, 0.5 tie."""
    first = (grp["system_a"].astype(str) == s).to_numpy()
    win = grp["winner"].astype(str).to_numpy()
    return np.where(win == "tie", 0.5, np.where(first, win == "a", win == "b").astype(float))


def _pair_measures(grp: pd.DataFrame, s: str, subs: dict) -> dict[tuple, np.ndarray]:
    """Per row of one system pair, what each win rate averages (1: ``s`` preferred, 0 not, 0.5 tie),
    keyed by (measure, alpha); ``subs`` holds the rows' subtracted preferences per alpha."""
    first = (grp["system_a"].astype(str) == s).to_numpy()
    out = {("win_rate", None): _judge_pref(grp, s)}
    for a, sub in subs.items():
        out[("subtracted_win_rate", a)] = np.where(first, sub, 1.0 - sub)
    if grp["_gold"].notna().any():
        out[("human_win_rate", None)] = np.where(first, grp["_gold"], 1.0 - grp["_gold"])
    return out


def _weighted_means(v: np.ndarray, Wr: np.ndarray) -> np.ndarray:
    ok = np.isfinite(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Wr[:, ok] @ v[ok]) / Wr[:, ok].sum(axis=1)


@takes_table(COMPARISONS, "score_a", "score_b", "superficial_a", "superficial_b", "text_a", "text_b")
def length_controlled(comparisons: pd.DataFrame, *, judges: str | Sequence[str] | None = None,
                      alpha: float | Sequence[float] | None = 0.5, q: str = "length", lc: bool = True,
                      n_boot: int = 1000, seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    """AlpacaEval's length-controlled win rate (``length_controlled_minimal``) per system pair, for each judge.

    Each system pair ``(s, t)`` (``s`` first in sorted order) is fitted on its own, as AlpacaEval fits each model
    against its baseline: ``s`` is the model, ``t`` the baseline, and :func:`alpacaeval_lc` gives the win rate of
    ``s`` at zero length difference. A pair's numbers depend only on its own items (its bootstrap stream is keyed
    by the judge and the pair), never on the other pairs in the table. One annotation per item: the judge's
    verdicts on the item (both presentation orders, when it has them) averaged into one preference for ``s``
    (a tie ½), and the item's Q difference ``Q(t) - Q(s)``: characters of the texts for ``q="length"``, as in
    AlpacaEval, or any other Q. Rows without a verdict are left out before the SD is taken (AlpacaEval's SD also
    counts annotations with a missing preference). AlpacaEval's default GLM adds an instruction-difficulty term
    estimated on their own 805 instructions (hub data); it is left out here, as in their
    ``length_controlled_minimal``.

    Beside it: the judge's raw win rate (ties ½, AlpacaEval's ``win_rate``); where the rows carry
    ``score_a``/``score_b``, the ``alpha``-subtracted win rate (``P_hat`` with Q, min-max over the judge's rows,
    ties half); and where humans judged the items, the humans' win rate (gold, else the strict majority), the
    reference the others should approach. Intervals: item bootstrap within the pair (``n_boot`` resamples from
    :func:`evalcore.stats.item_weights`, seeded per judge and pair), the GLM refitted on every resample, percentile
    intervals at ``level``. ``alpha`` may be a sequence: one subtracted win rate per alpha (the page computes its
    slider's grid once); ``alpha=None`` leaves it out, and ``lc=False`` the GLM (the slow part).

    An earlier version fitted one Bradley-Terry GLM jointly over all pairs with a shared length slope, ties
    dropped and no penalty; it was not AlpacaEval's model, and a pair's value moved with the other pairs in the
    file (by up to 0.058 on PandaLM, pandalm-7b, as other systems were left out), so it was removed. A joint fit
    with a shared style term belongs to a Bradley-Terry leaderboard with style control (Chatbot Arena), not here.

    Parameters
    ----------
    comparisons
        A validated comparisons table.
    judges
        A judge's name, or several (default: every judge, in name order); each judge's rows follow the
        previous one's.
    alpha
        The weight of Q in the subtracted win rate, or several (None: no subtracted win rate).
    q
        Superficial quality: ``"length"`` (AlpacaEval's), ``"words"``, ``"superficial"`` or ``<name>``.
    lc
        Fit the length-controlled GLM (False: only the raw, subtracted and human win rates, fast).
    n_boot, seed, level
        Item-bootstrap resamples within each pair (0: no interval), their seed (a whole number or a
        ``numpy.random.Generator``), the confidence level.
    item, rater, kind, winner, system_a, system_b, score_a, score_b, superficial_a, superficial_b, text_a, text_b
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``judge, system_a, system_b, measure, alpha, estimate, ci_low, ci_high, n, note`` with measures
        ``win_rate``, ``lc_win_rate`` and, when available, ``subtracted_win_rate`` and ``human_win_rate``;
        ``n`` counts the items with a verdict (a, b or tie) of the judge on the pair; the ``lc_win_rate`` note
        gives the chosen C and the fitted length weight. Without ``system_a``/``system_b`` (LLMBar does not name
        the generators) one row with measure ``lc_win_rate``, NaN and a ``not_available`` note.

    Examples
    --------
    One system pair of the sample, with the difference of the outputs' ``superficial`` scores as the length:

    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> pair = comparisons[comparisons["system_a"].isin(["atlas-7b", "cirrus-70b"])
    ...                    & comparisons["system_b"].isin(["atlas-7b", "cirrus-70b"])]
    >>> table = length_controlled(pair, judges="gpt-4/pairwise", q="superficial", alpha=None, n_boot=50, seed=0)
    >>> cols = ["system_a", "system_b", "measure", "estimate", "ci_low", "ci_high"]
    >>> print(table[cols].round(3).to_string(index=False))
    system_a   system_b        measure  estimate  ci_low  ci_high
    atlas-7b cirrus-70b       win_rate     0.243   0.176    0.321
    atlas-7b cirrus-70b    lc_win_rate     0.248   0.178    0.329
    atlas-7b cirrus-70b human_win_rate     0.213   0.148    0.277
    """
    names = [judges] if isinstance(judges, str) else list(judges) if judges is not None else \
        sorted(comparisons.loc[comparisons["rater_kind"] == JUDGE, "rater"].astype(str).unique())
    if not names:
        raise DataError("the table has no judge", fix="mark the judges' rows with rater_kind 'judge'")
    seed = root_seed(seed)
    return pd.concat([_length_controlled(comparisons, judge=j, alpha=alpha, q=q, lc=lc, n_boot=n_boot, seed=seed,
                                         level=level) for j in names], ignore_index=True)


def _length_controlled(comparisons: pd.DataFrame, *, judge: str, alpha: float | Sequence[float] | None, q: str,
                       lc: bool, n_boot: int, seed: int, level: float) -> pd.DataFrame:
    """:func:`length_controlled` of one judge."""
    if not {"system_a", "system_b"} <= set(comparisons.columns):
        return pd.DataFrame([{"judge": judge, "system_a": None, "system_b": None, "measure": "lc_win_rate",
                              "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
                              "note": "not_available: the table names no systems (system_a, system_b)"}])
    rows = comparisons[(comparisons["rater"].astype(str) == judge) & comparisons["winner"].isin(["a", "b", "tie"])]
    qa, qb = _q_columns(rows, q)
    rows = rows.assign(_qa=qa.to_numpy(), _qb=qb.to_numpy()).dropna(subset=["system_a", "system_b", "_qa", "_qb"])
    if rows.empty:
        raise DataError(f"judge '{judge}' has no verdict with systems and a superficial quality ({q})")
    items = rows["item_id"].astype(str)
    gold = _gold(comparisons.assign(item_id=comparisons["item_id"].astype(str)), pd.Index(items.unique()))
    alphas = [] if alpha is None else [float(a) for a in np.atleast_1d(alpha)]
    subs = {a: _subtracted_pref(rows, a) for a in alphas}
    subs = {a: v for a, v in subs.items() if v is not None}
    rows = rows.assign(_gold=items.map(gold).to_numpy(float))
    return _lc_table(rows, judge=judge, subs=subs, q=q, n_boot=n_boot, seed=seed, level=level, lc=lc)


def _lc_annotations(grp: pd.DataFrame, s: str, item_code: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item of one pair: the Q difference ``Q(t) - Q(s)`` and the judge's mean preference for ``s``."""
    first = (grp["system_a"].astype(str) == s).to_numpy()
    qa, qb = grp["_qa"].to_numpy(float), grp["_qb"].to_numpy(float)
    delta = np.where(first, qb - qa, qa - qb)
    rows_per_item = np.bincount(item_code, minlength=n_items)
    mean = lambda v: np.bincount(item_code, weights=v, minlength=n_items) / rows_per_item  # noqa: E731
    return mean(delta), mean(_judge_pref(grp, s))


def _lc_table(rows: pd.DataFrame, *, judge: str, subs: dict, q: str, n_boot: int, seed: int, level: float,
              lc: bool) -> pd.DataFrame:
    """The rows of :func:`length_controlled`: point estimates and item-bootstrap intervals, pair by pair."""
    sa, sb = rows["system_a"].astype(str), rows["system_b"].astype(str)
    lo_s, hi_s = np.minimum(sa, sb), np.maximum(sa, sb)
    root = root_seed(seed)
    out = []
    order = {"win_rate": 0, "lc_win_rate": 1, "subtracted_win_rate": 2, "human_win_rate": 3}
    for (s, t), idx in sorted(rows.groupby([lo_s, hi_s]).indices.items()):
        grp = rows.iloc[idx]
        item_code, uniq = pd.factorize(grp["item_id"].astype(str))
        Wi = item_weights(cell_rng(root, (judge, "length_controlled", s, t)), len(uniq), n_boot)
        Wr = Wi[:, item_code]  # (1 + B, rows of the pair)
        grp_subs = {a: v[idx] for a, v in subs.items()}
        boot = {k: _weighted_means(v, Wr) for k, v in _pair_measures(grp, s, grp_subs).items()}
        notes = {"subtracted_win_rate": f"Q = {q}",
                 "human_win_rate": "the humans' verdicts (gold, else the strict majority) on these items"}
        if lc:
            delta, pref = _lc_annotations(grp, s, item_code, len(uniq))
            fit = alpacaeval_lc(delta, pref)
            boot[("lc_win_rate", None)] = np.concatenate([[fit["lc"]], alpacaeval_lc_exact(delta, pref, Wi[1:])["lc"]])
            notes["lc_win_rate"] = ("AlpacaEval's minimal GLM (no instruction difficulty); "
                                    f"C = {fit['C']:.3g}, length weight {fit['w_len']:+.3f}"
                                    + ("; exact fit: liblinear sees one class here" if fit["exact"] else "")
                                    + ("; the cross-validation kept no weight, so 0.5 by construction"
                                       if fit["w_0"] == 0 and fit["w_len"] == 0 else
                                       "; the L1 penalty set the model's own weight to 0, so 0.5 by construction"
                                       if fit["w_0"] == 0 else "")
                                    if np.isfinite(fit["lc"]) else
                                    f"fewer than {LC_FOLDS} items: AlpacaEval's {LC_FOLDS}-fold cross-validation "
                                    "needs more")
        for m, a in sorted(boot, key=lambda k: (order[k[0]], k[1] or 0.0)):
            v = boot[(m, a)]
            lo, hi, _ = percentile_interval(v[None, 1:], level) if n_boot else ([np.nan], [np.nan], None)
            out.append({"judge": judge, "system_a": s, "system_b": t, "measure": m, "alpha": a,
                        "estimate": float(v[0]), "ci_low": float(lo[0]), "ci_high": float(hi[0]),
                        "n": len(uniq), "note": notes.get(m, "")})
    return pd.DataFrame(out)


def warm_up() -> None:
    """Load what the length-controlled win rate computes with, e.g. in a background thread: scikit-learn's
    liblinear (and the check of its direct call) and the compiled resample fits, about 1.4 s on a page's first
    open otherwise."""
    rng = np.random.default_rng(0)
    delta, pref = rng.normal(size=20), (rng.random(20) < 0.5).astype(float)
    alpacaeval_lc(delta, pref)
    alpacaeval_lc_exact(delta, pref, rng.multinomial(20, np.full(20, 0.05), size=2).astype(float))
