"""Familiarity and anchoring biases of LLM judges, measured against human annotators.

Both follow Stureborg et al. 2024, "Large language models are inconsistent and biased
evaluators" (Sections 3.1 and 3.3, Tables 1 and 3, Figures 2 and 4).

Familiarity (their Table 1 and Figure 2)
    A judge with familiarity bias prefers text that is *familiar* to a language model,
    i.e. of low perplexity. Each rating is paired with the perplexity of the judged item,
    and the association of score with perplexity is compared between the judge and the
    humans on the same items. Perplexity comes from a ``perplexity`` column. Where only
    ``text`` is given, :func:`perplexity_proxy` computes a **proxy** locally (a character
    trigram model fitted on the file's other texts); it is labelled as such everywhere.

Anchoring (their Figure 4 and Table 3)
    A judge that scores several criteria in one prompt may anchor later scores on earlier
    ones. Symptoms: criteria that correlate far more for the judge than for humans (GPT-4
    r = 0.979 against humans' 0.315 for consistency vs coherence), a conditional
    distribution of criterion j that moves with criterion i (:func:`conditional_distribution`),
    and, where the order of criteria in the prompt is known (``position``), agreement with
    humans that falls with the criterion's position.

Conventions shared by the summary functions (:func:`familiarity`, :func:`anchoring`)
------------------------------------------------------------------------------------
* Input: a validated canonical ratings table. Where a rater judged an item several times
  (``sample``), only the first sample (the smallest ``sample`` value) is used.
* Output: a tidy DataFrame with columns ``section, judge, criterion, *by, measure,
  estimate, ci_low, ci_high, n, flagged, note`` (:data:`RESULT_COLUMNS`). ``judge`` is
  ``None`` on rows describing the humans (the reference); ``criterion`` is ``None`` where
  a row is not about one criterion. ``note`` says why a value is not defined (never a
  silent NaN) and carries caveats such as "perplexity is a proxy".
* ``n`` is the number of *items* the estimate uses (the resampling unit).
* Intervals: 95% percentile bootstrap over **items** (item ids are resampled with
  replacement; an item carries all its ratings, by every rater and on every criterion).
  The same resamples are used for the humans and every judge within one cell, so
  differences are paired. Resampling is vectorised: per cell the ``n_boot`` resamples are
  one multinomial item-count matrix ``W`` (resamples x items; row r says how often each
  item was drawn), and every statistic is computed from per-item sufficient statistics
  weighted by ``W``. ``n_boot=0`` gives no
  intervals (and no flags). A cell's random stream is ``default_rng([seed, crc32(cell)])``,
  so a cell's interval does not depend on which other cells exist.
* ``flagged`` (the test): only the rows :data:`FLAG_MEASURES` are tests. A row is flagged
  when its 95% bootstrap interval excludes 0, i.e. a two-sided bootstrap test at
  alpha = 0.05 of "the judge's effect equals the humans'" (``tau_difference``,
  ``r_difference``) or "agreement does not change with position"
  (``agreement_position_slope``). Every row is its own test; there is no correction for
  multiple testing across criteria, groups or judges (expect about 1 false flag in 20
  rows where there is no effect).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..columns import HUMAN, JUDGE
from ..errors import DataError

__all__ = [
    "FAMILIARITY", "ANCHORING", "HUMANS", "ALPHA", "PROXY_LABEL", "FLAG_MEASURES", "RESULT_COLUMNS",
    "BiasNotApplicable", "familiarity", "perplexity_by_score", "perplexity_proxy", "anchoring",
    "conditional_distribution", "criterion_correlations",
]

FAMILIARITY = "familiarity"
ANCHORING = "anchoring"
HUMANS = "humans"
ALPHA = 0.05
#: Shown wherever :func:`perplexity_proxy` stands in for a real perplexity.
PROXY_LABEL = (
    "perplexity is a PROXY computed locally: a character-trigram language model fitted on the other "
    "texts of this file (leave-one-out, Jelinek-Mercer smoothing); it measures how typical a text's "
    "character sequences are of this file, not an LLM's perplexity"
)
#: The rows that are tests; ``flagged`` is False on every other row.
FLAG_MEASURES = ("tau_difference", "r_difference", "agreement_position_slope")
#: Leading columns of the summary tables; the caller's ``by`` columns follow ``criterion``.
RESULT_COLUMNS = ("section", "judge", "criterion", "measure", "estimate", "ci_low", "ci_high", "n", "flagged",
                  "note")
_NOT_SEGMENTS = {"item_id", "rater", "rater_kind", "score", "sample", "position", "perplexity", "text"}
_CHUNK = 4_000_000  # cells of a bootstrap table handled at once (bounds memory)
_PROXY_WEIGHTS = (0.6, 0.3, 0.1)  # Jelinek-Mercer weights of the trigram, bigram and unigram estimates


class BiasNotApplicable(DataError):
    """The data cannot support this analysis (no perplexity or text; fewer than two criteria)."""


# --------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class _Prepared:
    frame: pd.DataFrame  # ratings after the first-sample filter (rows align with the arrays below)
    item: np.ndarray  # item code per row
    crit: np.ndarray  # criterion code per row
    rater: np.ndarray  # rater code per row
    human: np.ndarray  # bool per row
    score: np.ndarray  # float per row
    item_ids: np.ndarray  # item id per item code
    criteria: tuple[str, ...]
    raters: np.ndarray  # rater name per rater code
    judges: tuple[str, ...]  # chosen judges, in output order
    judge_code: dict[str, int]
    first_row: np.ndarray  # first row of each item
    group: np.ndarray  # group code per item
    keys: list[tuple]  # group key per group code
    by: list[str]


def _check_options(n_boot: int, seed: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError("the number of bootstrap resamples must be a whole number, 0 or more",
                        fix="use e.g. 1000, or 0 to skip the intervals")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError("the seed must be a whole number, 0 or more", fix="use e.g. seed=0")


def _prepare(ratings: pd.DataFrame, by: Sequence[str], judges: Sequence[str] | None, *,
             criterion_in_by: str) -> _Prepared:
    """Validate, keep the first sample, and code items, criteria, raters and groups."""
    if not isinstance(ratings, pd.DataFrame):
        raise DataError("expected a ratings table (a pandas DataFrame)", fix="load the file with evalcore first")
    missing = [c for c in ("item_id", "rater", "rater_kind", "score") if c not in ratings.columns]
    if missing:
        raise DataError(f"the ratings table lacks the column(s) {', '.join(missing)}",
                        fix="load and validate the file as a ratings table")
    df = ratings
    if "criterion" not in df.columns:
        df = df.assign(criterion="overall")
    if isinstance(by, str):
        by = [by]
    by = list(by)
    if "criterion" in by:
        if criterion_in_by == "error":
            raise DataError("anchoring compares criteria with each other, so it cannot be split by criterion",
                            column="criterion", fix="group by per-item columns such as language or task")
        by = [b for b in by if b != "criterion"]  # familiarity is always per criterion
    for b in by:
        if b not in df.columns:
            raise DataError(f"cannot group by '{b}': there is no such column",
                            column=b, fix="group by one of: " + ", ".join(
                                c for c in df.columns if c not in _NOT_SEGMENTS and c != "criterion"))
        if b in _NOT_SEGMENTS:
            raise DataError(f"cannot group by '{b}': it is not a per-item segment", column=b,
                            fix="group by a column that describes the item, such as language or task")
    if len(set(by)) != len(by):
        raise DataError("a grouping column is listed twice", fix="list each column once")
    kinds = df["rater_kind"]
    bad_kind = ~kinds.isin([HUMAN, JUDGE])
    if bad_kind.any():
        raise DataError(f"rater_kind '{kinds[bad_kind].iloc[0]}' is neither '{HUMAN}' nor '{JUDGE}'",
                        column="rater_kind", fix="validate the table with evalcore.data.schema first")
    if "sample" in df.columns:
        s = pd.to_numeric(df["sample"], errors="coerce")
        if s.nunique() > 1:
            first = s.groupby([df["item_id"], df["rater"], df["criterion"]], sort=False,
                              dropna=False).transform("min")
            keep = ((s == first) | (s.isna() & first.isna())).to_numpy()
            df = df[keep]
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    given = df["score"].notna().to_numpy()
    bad = given & ~np.isfinite(score)
    if bad.any():
        value = df["score"].iloc[int(np.flatnonzero(bad)[0])]
        raise DataError(f"score '{value}' is not a number; bias analyses need numeric scores", column="score",
                        fix="map categorical scores to numbers (e.g. bad=0, ok=1, good=2)")
    if not given.all():
        df, score = df[given], score[given]
    if len(df) == 0:
        raise DataError("the ratings table has no scored rows", fix="load a table with scores")
    item, item_ids = pd.factorize(df["item_id"])
    crit, criteria = pd.factorize(df["criterion"].astype(str))
    rater, raters = pd.factorize(df["rater"].astype(str))
    human = (df["rater_kind"] == HUMAN).to_numpy()
    raters = np.asarray(raters, dtype=object)
    judge_names = sorted(set(raters[np.unique(rater[~human])])) if (~human).any() else []
    chosen = list(judge_names) if judges is None else list(judges)
    unknown = [j for j in chosen if j not in judge_names]
    if unknown:
        raise DataError(f"there is no judge named '{unknown[0]}'",
                        fix="choose from: " + (", ".join(judge_names) or "(this table has no judge rows)"))
    code_of = {name: i for i, name in enumerate(raters)}
    n_items = len(item_ids)
    n = len(df)
    first_row = np.empty(n_items, dtype=np.int64)
    first_row[item[::-1]] = np.arange(n)[::-1]
    if by:
        seg = {}
        for b in by:
            codes, _ = pd.factorize(df[b], use_na_sentinel=False)
            wrong = codes != codes[first_row[item]]
            if wrong.any():
                it = df["item_id"].iloc[int(np.flatnonzero(wrong)[0])]
                raise DataError(f"column '{b}' has different values within one item ('{it}')", column=b,
                                fix=f"'{b}' must describe the item; group by another column")
            seg[b] = df[b].iloc[first_row].reset_index(drop=True)
        grouped = pd.DataFrame(seg).groupby(by, sort=True, dropna=False)
        group = grouped.ngroup().to_numpy().astype(np.int64)
        keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    else:
        group = np.zeros(n_items, dtype=np.int64)
        keys = [()]
    return _Prepared(frame=df, item=item.astype(np.int64), crit=crit.astype(np.int64), rater=rater.astype(np.int64),
                     human=human, score=score, item_ids=np.asarray(item_ids, dtype=object),
                     criteria=tuple(map(str, criteria)), raters=raters, judges=tuple(chosen),
                     judge_code={j: code_of[j] for j in chosen}, first_row=first_row, group=group, keys=keys,
                     by=by)


def _rng(seed: int, key: tuple) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(repr(key).encode())])


def _weights(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(1 + n_boot, n) item weights: row 0 the data (all ones), rows 1.. item resamples.

    Row r counts how often each item was drawn when n items are drawn with replacement,
    i.e. a Multinomial(n, 1/n, ..., 1/n) vector; drawn as uniform item indices and counted
    (faster than ``rng.multinomial`` for many items, the same distribution).
    """
    W = np.ones((1 + n_boot, n))
    if n_boot > 0 and n > 0:
        draws = rng.integers(0, n, size=(n_boot, n))
        draws += (np.arange(n_boot) * n)[:, None]
        W[1:] = np.bincount(draws.ravel(), minlength=n_boot * n).reshape(n_boot, n)
    return W


def _safe_div(a, b) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.divide(a, b), dtype=float)
    out[~np.isfinite(out)] = np.nan
    return out


def _interval(arr: np.ndarray) -> tuple[float, float, str]:
    """95% percentile interval from resamples arr[1:]; NaN with a reason when too few are defined."""
    boot = arr[1:]
    if boot.size == 0:
        return np.nan, np.nan, "no interval (n_boot=0), so no test"
    ok = boot[np.isfinite(boot)]
    if len(ok) < max(10, 0.5 * len(boot)):
        return np.nan, np.nan, "no interval: the measure is undefined in most resamples"
    lo, hi = np.quantile(ok, [ALPHA / 2, 1 - ALPHA / 2])
    return float(lo), float(hi), ""


def _join(*notes: str) -> str:
    return "; ".join(dict.fromkeys(n for n in notes if n))


def _record(section: str, judge: str | None, criterion: str | None, key: dict, measure: str, arr: np.ndarray,
            n: int, why: str = "", extra: str = "") -> dict:
    """One summary row from a (1 + n_boot,) array of estimates."""
    est = float(arr[0]) if np.isfinite(arr[0]) else np.nan
    if np.isfinite(est):
        lo, hi, ci_note = _interval(arr)
        note = _join(ci_note if (measure in FLAG_MEASURES or ci_note.startswith("no interval:")) else "", extra)
    else:
        lo = hi = np.nan
        note = _join(why or "not defined", extra)
    flagged = bool(measure in FLAG_MEASURES and np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0))
    return {"section": section, "judge": judge, "criterion": criterion, **key, "measure": measure,
            "estimate": est, "ci_low": lo, "ci_high": hi, "n": int(n), "flagged": flagged, "note": note}


def _frame(records: list[dict], by: list[str]) -> pd.DataFrame:
    cols = ["section", "judge", "criterion", *by, *RESULT_COLUMNS[3:]]
    out = pd.DataFrame.from_records(records, columns=cols)
    for c in ("judge", "criterion"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    out["flagged"] = out["flagged"].astype(bool)
    out["n"] = out["n"].astype(np.int64)
    return out


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each value into its sorted distinct values."""
    uniq, inv = np.unique(values, return_inverse=True)
    return inv.ravel(), uniq


# --------------------------------------------------------------------------- Kendall's tau-b from tables


def _cumsum(X: np.ndarray, axis: int) -> np.ndarray:
    """np.cumsum, but row by row when slices are long: numpy's cumsum over a leading axis is slow."""
    n = X.shape[axis]
    if n < 2 or X.size // n < 256:
        return np.cumsum(X, axis=axis)
    out = X.copy()
    v = np.moveaxis(out, axis, 0)
    for i in range(1, n):
        v[i] += v[i - 1]
    return out


def _tau_b_table(T: np.ndarray) -> np.ndarray:
    """Kendall's tau-b from weighted contingency tables of two ordered variables.

    ``T`` has shape ``(A, B, R)``: ``T[a, b, r]`` is the (weighted) number of observations
    with the a-th smallest x and the b-th smallest y in resample r. Then

    .. math:: \\tau_b = (n_c - n_d) / \\sqrt{(n_0 - n_1)(n_0 - n_2)},

    :math:`n_c - n_d = \\sum_{ab} T_{ab} (\\sum_{a'<a, b'<b} T_{a'b'} - \\sum_{a'<a, b'>b} T_{a'b'})`,
    :math:`n_0 = N(N-1)/2`, :math:`n_1 = \\sum_a r_a(r_a-1)/2`, :math:`n_2 = \\sum_b c_b(c_b-1)/2`
    with row and column totals r, c (Kendall 1945; ``scipy.stats.kendalltau``, variant 'b').
    Cost O(A B R) through cumulative sums, with no loop over pairs of observations.
    """
    P = _cumsum(T, 0)
    cols = P[-1].copy()  # (B, R) column totals
    P -= T  # P[a, b] = sum over a' < a
    X = _cumsum(P, 1)
    total = X[:, -1:, :].copy()
    # sum_{a'<a, b'<b} - sum_{a'<a, b'>b} = (cumP - P) - (P_total - cumP)
    X *= 2
    X -= P
    X -= total
    del P
    S = np.einsum("abr,abr->r", T, X)
    rows = T.sum(axis=1)
    N = cols.sum(axis=0)
    n0 = N * (N - 1) / 2
    n1 = (rows * (rows - 1)).sum(axis=0) / 2
    n2 = (cols * (cols - 1)).sum(axis=0) / 2
    den = (n0 - n1) * (n0 - n2)
    return np.where(den > 0, _safe_div(S, np.sqrt(np.where(den > 0, den, 1.0))), np.nan)


def _tau_sparse(Wt: np.ndarray, M: sparse.csr_matrix, A: int, B: int) -> np.ndarray:
    """tau-b of tables ``T[:, :, r] = (M^T Wt[:, r]).reshape(A, B)``, in chunks of resamples."""
    out = np.empty(Wt.shape[1])
    MT = M.T.tocsr()
    step = max(1, _CHUNK // max(1, A * B))
    for s in range(0, Wt.shape[1], step):
        T = np.asarray(MT @ Wt[:, s:s + step]).reshape(A, B, -1)
        out[s:s + step] = _tau_b_table(T)
    return out


def _tau_b(Wt: np.ndarray, local: np.ndarray, x: np.ndarray, y: np.ndarray,
           count: np.ndarray | None = None) -> np.ndarray:
    """Kendall's tau-b of weighted observations, for the data and every resample at once.

    Observation k is ``(x[k], y[k])``, belongs to item ``local[k]`` and is counted
    ``count[k] * Wt[local[k], r]`` times in resample r (``Wt`` is (items, R)). Exact, with
    one of two algorithms: a contingency table (:func:`_tau_b_table`) when x and y take few
    distinct values, else a merge-sort count of concordant and discordant pairs
    (:func:`_tau_merge`, O(R N log N)).
    """
    R = Wt.shape[1]
    if len(x) < 2:
        return np.full(R, np.nan)
    xc, xv = _codes(x)
    yc, yv = _codes(y)
    qx, qy = len(xv), len(yv)
    if qx < 2 or qy < 2:
        return np.full(R, np.nan)
    cnt = np.ones(len(x)) if count is None else np.asarray(count, dtype=float)
    N = len(x)
    if qx * qy <= 8 * N * max(1.0, np.log2(N)):
        M = sparse.csr_matrix((cnt, (local, xc * qy + yc)), shape=(Wt.shape[0], qx * qy))
        return _tau_sparse(Wt, M, qx, qy)
    return _tau_merge(Wt, local, xc, yc, cnt)


def _dominance_plan(x: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """Index plan to sum, for each position j, the weights of earlier positions i with x_i < x_j.

    Merge-sort levels: at level L, positions are in blocks of 2L, and each right half looks
    up the left half of its block (sorted by x). Every pair i < j meets at exactly one level.
    """
    N = len(x)
    xs = x - x.min()
    X = int(xs.max()) + 1
    p = np.arange(N)
    plan = []
    L = 1
    while L < N:
        block = p // (2 * L)
        right = (p // L) % 2 == 1
        li, ri = np.flatnonzero(~right), np.flatnonzero(right)
        keys = block[li] * X + xs[li]
        srt = np.argsort(keys, kind="stable")
        ls, keys = li[srt], keys[srt]
        g = np.searchsorted(keys, block[ri] * X + xs[ri], side="left")
        start = np.searchsorted(keys, block[ri] * X, side="left")
        plan.append((ls, ri, g, start))
        L *= 2
    return plan


def _dominance_sum(plan: list[tuple[np.ndarray, ...]], Wo: np.ndarray) -> np.ndarray:
    """sum_j w_j sum_{i<j, x_i<x_j} w_i per resample, Wo (r, N) in the plan's order."""
    S = np.zeros(Wo.shape[0])
    for ls, ri, g, start in plan:
        cum = np.zeros((Wo.shape[0], len(ls) + 1))
        np.cumsum(Wo[:, ls], axis=1, out=cum[:, 1:])
        S += np.einsum("rj,rj->r", Wo[:, ri], cum[:, g] - cum[:, start])
    return S


def _tau_merge(Wt: np.ndarray, local: np.ndarray, xc: np.ndarray, yc: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """tau-b by counting, in y order, the earlier observations with smaller / larger x (Knight 1966).

    With observations sorted by y (ties broken by x descending), the weight of earlier
    observations with a smaller x is :math:`\\sum_{y_i<y_j, x_i<x_j} w_i` (tied y never count);
    sorted with ties by x ascending, the earlier ones with a larger x give the discordant
    pairs. Ties enter the denominator through the weight totals per x and per y value.
    """
    n_items, R = Wt.shape
    N = len(xc)
    of = np.lexsort((-xc, yc))
    ob = np.lexsort((xc, yc))
    plan_f, plan_b = _dominance_plan(xc[of]), _dominance_plan(-xc[ob])
    Mx = sparse.csr_matrix((cnt, (local, xc)), shape=(n_items, int(xc.max()) + 1)).T.tocsr()
    My = sparse.csr_matrix((cnt, (local, yc)), shape=(n_items, int(yc.max()) + 1)).T.tocsr()
    out = np.empty(R)
    step = max(1, _CHUNK // (4 * N))
    for s in range(0, R, step):
        Wc = Wt[:, s:s + step]
        Wo = np.ascontiguousarray((Wc[local] * cnt[:, None]).T)
        S = _dominance_sum(plan_f, Wo[:, of]) - _dominance_sum(plan_b, Wo[:, ob])
        tot = Wo.sum(axis=1)
        wx, wy = np.asarray(Mx @ Wc), np.asarray(My @ Wc)
        n0 = tot * (tot - 1) / 2
        n1 = (wx * (wx - 1)).sum(axis=0) / 2
        n2 = (wy * (wy - 1)).sum(axis=0) / 2
        den = (n0 - n1) * (n0 - n2)
        out[s:s + step] = np.where(den > 0, _safe_div(S, np.sqrt(np.where(den > 0, den, 1.0))), np.nan)
    return out


# --------------------------------------------------------------------------- perplexity


def perplexity_proxy(texts: pd.Series) -> pd.Series:
    """A local stand-in for perplexity when only the texts are given: **a proxy, not an LLM's perplexity**.

    Each distinct text is scored by a character-trigram language model fitted on all the
    *other* distinct texts of the series (leave-one-out), so a text never makes itself
    familiar. Probabilities are Jelinek-Mercer interpolations

    .. math:: P(c_t \\mid c_{t-2} c_{t-1}) = \\lambda_3 \\frac{N(c_{t-2}c_{t-1}c_t)}{N(c_{t-2}c_{t-1}\\cdot)}
              + \\lambda_2 \\frac{N(c_{t-1}c_t)}{N(c_{t-1}\\cdot)} + \\lambda_1 \\frac{N(c_t) + 1}{N + V}

    with :math:`(\\lambda_3, \\lambda_2, \\lambda_1) = (0.6, 0.3, 0.1)` (an order whose context
    was never seen gives its weight to the others), counts N over the other texts, each text
    padded with two start symbols and one end symbol, and V the number of distinct
    characters plus the end symbol. The proxy perplexity is
    :math:`\\exp(-\\frac{1}{L+1}\\sum_t \\log P(c_t \\mid \\cdot))` over the text's L characters and its end.

    What it measures: how typical a text's character sequences are *of this file*. Low
    values mean "written like the other texts". This is only a rough stand-in for the
    perplexity under the judge's own language model that Stureborg et al. 2024 (Sec. 3.1)
    use (they computed it with text-davinci-003); nothing is downloaded and no neural model
    is used. Prefer a real ``perplexity`` column whenever you can compute one.

    Parameters
    ----------
    texts
        One text per row; missing or empty texts get NaN. Identical texts are scored once
        and count once in the model.

    Returns
    -------
    pandas.Series
        Proxy perplexity per row (same index), named ``perplexity_proxy``.
    """
    s = pd.Series(texts)
    valid = (s.notna() & s.astype(str).str.len().gt(0)).to_numpy()
    out = np.full(len(s), np.nan)
    if valid.any():
        codes, uniq = pd.factorize(s[valid].astype(str))
        out[valid] = _char_trigram_loo([str(u) for u in uniq])[codes]
    return pd.Series(out, index=s.index, name="perplexity_proxy")


def _loo_counts(keys: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Count of each position's key over all documents minus its count in its own document."""
    inv, uk = pd.factorize(keys)  # hashing: faster than sorting for millions of characters
    cnt = np.bincount(inv)
    pinv, _ = pd.factorize(doc * len(uk) + inv)
    return (cnt[inv] - np.bincount(pinv)[pinv]).astype(float)


def _char_trigram_loo(docs: list[str]) -> np.ndarray:
    D = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=np.int64)
    cps = np.frombuffer("".join(docs).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    uchars, cid = np.unique(cps, return_inverse=True)
    cid = cid.ravel() + 2  # 0 = start, 1 = end, characters from 2
    Z = len(uchars) + 2
    V = len(uchars) + 1  # predictable symbols: the characters and the end symbol
    L = lengths + 3
    starts = np.concatenate([[0], np.cumsum(L)[:-1]])
    seq = np.empty(int(L.sum()), dtype=np.int64)
    doc_of_char = np.repeat(np.arange(D), lengths)
    offset = np.arange(len(cid)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    seq[starts[doc_of_char] + 2 + offset] = cid
    seq[starts] = 0
    seq[starts + 1] = 0
    seq[starts + L - 1] = 1
    pred = np.ones(len(seq), dtype=bool)
    pred[starts] = False
    pred[starts + 1] = False
    idx = np.flatnonzero(pred)
    w0, w1, w2 = seq[idx], seq[idx - 1], seq[idx - 2]
    doc = np.repeat(np.arange(D), lengths + 1)
    tri = _loo_counts((w2 * Z + w1) * Z + w0, doc)
    ctx2 = _loo_counts(w2 * Z + w1, doc)
    bi = _loo_counts(w1 * Z + w0, doc)
    ctx1 = _loo_counts(w1, doc)
    uni = _loo_counts(w0, doc)
    total = len(idx) - (lengths + 1)[doc]
    l3, l2, l1 = _PROXY_WEIGHTS
    h3, h2 = (ctx2 > 0).astype(float), (ctx1 > 0).astype(float)
    p = (l3 * h3 * _nz_div(tri, ctx2) + l2 * h2 * _nz_div(bi, ctx1) + l1 * (uni + 1) / (total + V))
    p /= l3 * h3 + l2 * h2 + l1
    logp = np.bincount(doc, weights=np.log(p), minlength=D)
    return np.exp(-logp / (lengths + 1))


def _nz_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a), where=b > 0)


def _item_perplexity(prep: _Prepared, perplexity: str | None) -> tuple[np.ndarray, str]:
    """Perplexity per item code, and a note ('' or the proxy label)."""
    df = prep.frame
    has = {c: c in df.columns and df[c].notna().any() for c in ("perplexity", "text")}
    if perplexity is None:
        perplexity = "perplexity" if has["perplexity"] else "proxy" if has["text"] else None
    if perplexity is None:
        raise BiasNotApplicable(
            "familiarity bias needs the perplexity of each item, or its text to compute a proxy, and this table has "
            "neither a 'perplexity' nor a 'text' column with values",
            fix="add a 'perplexity' column (e.g. computed with the judge's own model) or a 'text' column with the "
                "judged text")
    item = prep.item
    if perplexity == "proxy":
        if not has["text"]:
            raise BiasNotApplicable("the perplexity proxy needs the judged text, and this table has no 'text' column "
                                    "with values", fix="add a 'text' column, or give a perplexity column")
        text = df["text"]
        first = np.full(len(prep.item_ids), -1, dtype=np.int64)
        ok = text.notna().to_numpy()
        rows = np.flatnonzero(ok)
        first[item[rows][::-1]] = rows[::-1]
        codes, _ = pd.factorize(text.astype(str))
        wrong = ok & (first[item] >= 0) & (codes != codes[np.maximum(first[item], 0)])
        if wrong.any():
            it = prep.item_ids[item[int(np.flatnonzero(wrong)[0])]]
            raise DataError(f"column 'text' has different texts within one item ('{it}')", column="text",
                            fix="the text must be the judged output of the item, the same on each of its rows")
        texts = pd.Series([df["text"].iloc[r] if r >= 0 else None for r in first], dtype=object)
        return perplexity_proxy(texts).to_numpy(), PROXY_LABEL
    if perplexity not in df.columns:
        raise DataError(f"there is no column '{perplexity}' to take the perplexity from", column=perplexity,
                        fix="name a numeric column holding each item's perplexity, or use perplexity='proxy'")
    vals = pd.to_numeric(df[perplexity], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    given = df[perplexity].notna().to_numpy()
    if (given & ~np.isfinite(vals)).any():
        value = df[perplexity].iloc[int(np.flatnonzero(given & ~np.isfinite(vals))[0])]
        raise DataError(f"perplexity '{value}' is not a finite number", column=perplexity,
                        fix="give a number per item, or leave the cell empty")
    per_item = np.full(len(prep.item_ids), np.nan)
    fin = np.isfinite(vals)
    rows = np.flatnonzero(fin)
    per_item[item[rows][::-1]] = vals[rows][::-1]
    ref = per_item[item]
    wrong = fin & ~np.isclose(vals, ref, rtol=1e-9, atol=0.0)
    if wrong.any():
        it = prep.item_ids[item[int(np.flatnonzero(wrong)[0])]]
        raise DataError(f"column '{perplexity}' has different values within one item ('{it}')", column=perplexity,
                        fix="perplexity describes the judged text: give the same value on every row of an item")
    return per_item, ""


# --------------------------------------------------------------------------- familiarity


def _cells(prep: _Prepared, mask: np.ndarray):
    """Yield (criterion code, group code, row indices) for rows in ``mask``, by criterion then group."""
    G = len(prep.keys)
    rows = np.flatnonzero(mask)
    cell = prep.crit[rows] * G + prep.group[prep.item[rows]]
    order = np.argsort(cell, kind="stable")
    rows, cell = rows[order], cell[order]
    bounds = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:]):
        c, g = divmod(int(cell[a]), G)
        yield c, g, rows[a:b]


@dataclass(frozen=True)
class _Obs:
    """A source's ratings in one cell as observations: (item, score category) with a count."""

    local: np.ndarray  # item index within the cell
    code: np.ndarray  # index into values
    count: np.ndarray  # ratings with this (item, score)
    values: np.ndarray  # sorted distinct scores

    def keep(self, mask: np.ndarray) -> "_Obs":
        m = mask[self.local]
        return _Obs(self.local[m], self.code[m], self.count[m], self.values)

    def items(self, n: int) -> np.ndarray:
        return np.bincount(self.local, minlength=n) > 0


def _obs(local: np.ndarray, score: np.ndarray) -> _Obs:
    if len(score) == 0:
        return _Obs(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    code, values = _codes(score)
    q = len(values)
    key, cnt = np.unique(local * q + code, return_counts=True)
    return _Obs(key // q, key % q, cnt.astype(float), values)


def familiarity(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    perplexity: str | None = None,
) -> pd.DataFrame:
    """Familiarity bias: does the judge favour low-perplexity text more than the humans do?

    Stureborg et al. 2024 (Sec. 3.1, Table 1, Fig. 2) group ratings by score and show that
    GPT-4's top-rated summaries have lower perplexity than the experts' top-rated ones.
    Here, per criterion (and per ``by`` group), every rating is paired with the perplexity
    :math:`p_i` of its item i.

    Measures (``judge`` None = the humans; each judge separately):

    ``kendall_tau``
        Kendall's tau-b between score and perplexity over the source's ratings. Humans: every
        human rating is one observation :math:`(s_{ik}, p_i)` (the ratings are pooled, as in
        the paper's Table 1 where ratings are grouped by score), so an item rated by three
        annotators contributes three observations with tied perplexity. Judge: its one score
        per item. Negative = higher scores for lower perplexity (familiar text). Equals
        ``scipy.stats.kendalltau`` (tau-b) on the same observations.
    ``perplexity_gap_top_vs_rest``
        Mean perplexity of the ratings at the criterion's top score (the highest score any
        rater gave on the criterion) minus the mean perplexity of the other ratings; negative
        = top-rated texts are more familiar. The full table is :func:`perplexity_by_score`.
    ``tau_difference`` (judges; **the test**)
        :math:`\\tau_{judge} - \\tau_{humans}`, both on the items rated by the judge and by at
        least one human. Flagged when its 95% paired item-bootstrap interval excludes 0: a
        two-sided test at alpha = 0.05 of "the judge's score depends on perplexity as much as
        the humans' do". Comparing with humans, not with 0, matters because perplexity may
        truly go with quality; the humans' tau measures that part.
    ``gap_difference`` (judges)
        The judge's ``perplexity_gap_top_vs_rest`` minus the humans', on the shared items
        (an effect size in perplexity units; not a test).

    Caveat: a single human rating is noisier than a judge that is consistent, so if
    perplexity truly tracks quality, a good judge shows a somewhat larger |tau| than pooled
    human ratings; read ``tau_difference`` together with the humans' own tau.

    Parameters
    ----------
    ratings
        A validated canonical ratings table.
    by
        Per-item segment columns to split by, e.g. ``("language",)``; results are always per
        criterion (``"criterion"`` in ``by`` is ignored).
    judges
        Judges to include (default: all).
    n_boot
        Item-bootstrap resamples per cell; 0 gives no intervals and no flags.
    seed
        Seed of the resampling (a stream per cell from ``numpy.random.default_rng``).
    perplexity
        Column holding each item's perplexity; default ``'perplexity'`` if it has values,
        else the proxy. ``'proxy'`` forces :func:`perplexity_proxy` on the ``text`` column;
        rows then say so in ``note`` (:data:`PROXY_LABEL`). Any monotone transform (e.g. log
        perplexity) gives the same taus.

    Returns
    -------
    pandas.DataFrame
        Columns ``section, judge, criterion, *by, measure, estimate, ci_low, ci_high, n,
        flagged, note``; ``section`` is ``'familiarity'``, ``n`` the number of items.
        Items without a perplexity are left out (counted in ``note``).

    Raises
    ------
    DataError
        No perplexity or text (:class:`BiasNotApplicable`), an unknown judge, a perplexity
        or segment that varies within an item, non-numeric scores.
    """
    _check_options(n_boot, seed)
    prep = _prepare(ratings, by, judges, criterion_in_by="ignore")
    ppl, source_note = _item_perplexity(prep, perplexity)
    row_ok = np.isfinite(ppl[prep.item])
    n_missing = np.bincount(prep.group[~np.isfinite(ppl)], minlength=len(prep.keys))
    top = np.full(len(prep.criteria), -np.inf)
    np.maximum.at(top, prep.crit, prep.score)
    records: list[dict] = []
    for c, g, rows in _cells(prep, row_ok):
        crit = prep.criteria[c]
        key = dict(zip(prep.by, prep.keys[g]))
        extra = _join(source_note, f"{int(n_missing[g])} item(s) without a perplexity left out"
                      if n_missing[g] else "")
        items, local = np.unique(prep.item[rows], return_inverse=True)
        local = local.ravel()
        n = len(items)
        p = ppl[items]
        yrank = _codes(p)[0]
        W = _weights(n, n_boot, _rng(seed, (FAMILIARITY, crit, *prep.keys[g])))
        Wt = np.ascontiguousarray(W.T)
        h = prep.human[rows]
        oh = _obs(local[h], prep.score[rows][h])
        has_h = oh.items(n)

        def stats(o: _Obs) -> tuple[np.ndarray, np.ndarray]:
            tau = _tau_b(Wt, o.local, o.code, yrank[o.local], o.count)
            top_w = o.count * (o.values[o.code] == top[c])
            ct = np.bincount(o.local, weights=top_w, minlength=n)
            cr = np.bincount(o.local, weights=o.count - top_w, minlength=n)
            sums = W @ np.column_stack([ct * p, ct, cr * p, cr])
            gap = _safe_div(sums[:, 0], sums[:, 1]) - _safe_div(sums[:, 2], sums[:, 3])
            return tau, gap

        def why(o: _Obs, measure: str, who: str) -> str:
            have = o.items(n)
            if not have.any():
                return f"not defined: no {who} ratings in this group"
            if measure == "tau":
                if have.sum() < 2:
                    return "not defined: fewer than 2 items"
                if len(np.unique(o.code)) < 2:
                    return f"not defined: every {who} score is the same"
                return "not defined: every item has the same perplexity"
            if not (o.values[o.code] == top[c]).any():
                return f"not defined: no {who} rating at the top score ({top[c]:g})"
            return f"not defined: every {who} rating is at the top score ({top[c]:g})"

        tau_h, gap_h = stats(oh)
        nh = int(has_h.sum())
        records.append(_record(FAMILIARITY, None, crit, key, "kendall_tau", tau_h, nh, why(oh, "tau", "human"),
                               extra))
        records.append(_record(FAMILIARITY, None, crit, key, "perplexity_gap_top_vs_rest", gap_h, nh,
                               why(oh, "gap", "human"), extra))
        for name in prep.judges:
            j = ~h & (prep.rater[rows] == prep.judge_code[name])
            oj = _obs(local[j], prep.score[rows][j])
            has_j = oj.items(n)
            nj = int(has_j.sum())
            tau_j, gap_j = stats(oj)
            records.append(_record(FAMILIARITY, name, crit, key, "kendall_tau", tau_j, nj, why(oj, "tau", "judge"),
                                   extra))
            records.append(_record(FAMILIARITY, name, crit, key, "perplexity_gap_top_vs_rest", gap_j, nj,
                                   why(oj, "gap", "judge"), extra))
            both = has_h & has_j
            ohb, ojb = oh.keep(both), oj.keep(both)
            if np.array_equal(both, has_h) and np.array_equal(both, has_j):
                th, gh, tj, gj = tau_h, gap_h, tau_j, gap_j
            else:
                (th, gh), (tj, gj) = stats(ohb), stats(ojb)
            nb = int(both.sum())
            shared = "not defined: no item rated by both the judge and a human"
            w_tau = shared if nb == 0 else why(ojb, "tau", "judge") if not np.isfinite(tj[0]) else \
                why(ohb, "tau", "human")
            w_gap = shared if nb == 0 else why(ojb, "gap", "judge") if not np.isfinite(gj[0]) else \
                why(ohb, "gap", "human")
            records.append(_record(FAMILIARITY, name, crit, key, "tau_difference", tj - th, nb, w_tau, extra))
            records.append(_record(FAMILIARITY, name, crit, key, "gap_difference", gj - gh, nb, w_gap, extra))
    return _frame(records, prep.by)


def perplexity_by_score(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    perplexity: str | None = None,
    max_levels: int = 20,
) -> pd.DataFrame:
    """Mean perplexity of the items given each score, humans and each judge (Stureborg et al. Table 1, Fig. 2).

    For source s (the pooled human ratings, or one judge) and score value v on a criterion:
    :math:`\\bar p_{s,v} = \\sum_{(i,k): s_{ik}=v} p_i / N_{s,v}`, the mean perplexity over
    the ratings with that score, with a 95% item-bootstrap interval (the same resamples
    for every source of a criterion and group). Lower bars at high scores for the judge
    than for the humans are the paper's familiarity bias.

    Parameters
    ----------
    ratings, by, judges, n_boot, seed, perplexity
        As in :func:`familiarity`.
    max_levels
        A source with more distinct scores than this on a criterion (e.g. averaged or
        probability-weighted scores) is shown in ``max_levels`` equal-width bins of the
        criterion's range, ``score`` being the bin's centre (said in ``note``).

    Returns
    -------
    pandas.DataFrame
        Columns ``criterion, *by, source, score, mean_perplexity, ci_low, ci_high, n, note``;
        ``source`` is ``'humans'`` or the judge's name, ``n`` the number of ratings with that
        score; ``note`` carries :data:`PROXY_LABEL` when the perplexity is a proxy.
    """
    _check_options(n_boot, seed)
    prep = _prepare(ratings, by, judges, criterion_in_by="ignore")
    ppl, source_note = _item_perplexity(prep, perplexity)
    row_ok = np.isfinite(ppl[prep.item])
    crange = {c: (float(prep.score[prep.crit == c].min()), float(prep.score[prep.crit == c].max()))
              for c in range(len(prep.criteria))}
    out = []
    for c, g, rows in _cells(prep, row_ok):
        items, local = np.unique(prep.item[rows], return_inverse=True)
        local = local.ravel()
        n = len(items)
        p = ppl[items]
        W = _weights(n, n_boot, _rng(seed, ("perplexity_by_score", prep.criteria[c], *prep.keys[g])))
        Wt = np.ascontiguousarray(W.T)
        h = prep.human[rows]
        lo_c, hi_c = crange[c]
        sources = [(HUMANS, h)] + [(name, ~h & (prep.rater[rows] == prep.judge_code[name])) for name in prep.judges]
        for name, m in sources:
            sc = prep.score[rows][m]
            if len(sc) == 0:
                continue
            binned = len(np.unique(sc)) > max_levels and hi_c > lo_c
            if binned:  # many distinct scores: equal-width bins of the criterion's range
                width = (hi_c - lo_c) / max_levels
                sc = lo_c + (np.clip(np.floor((sc - lo_c) / width), 0, max_levels - 1) + 0.5) * width
            o = _obs(local[m], sc)
            C = sparse.csr_matrix((o.count, (o.local, o.code)), shape=(n, len(o.values))).T.tocsr()
            means = _safe_div(np.asarray(C @ (Wt * p[:, None])), np.asarray(C @ Wt))  # (q, R)
            counts = np.asarray(C.sum(axis=1)).ravel()
            bin_note = f"scores binned into {max_levels} equal-width bins; 'score' is the bin's centre" if binned \
                else ""
            for k, val in enumerate(o.values):
                lo, hi, note = _interval(means[k])
                out.append({"criterion": prep.criteria[c], **dict(zip(prep.by, prep.keys[g])), "source": name,
                            "score": float(val), "mean_perplexity": float(means[k, 0]), "ci_low": lo,
                            "ci_high": hi, "n": int(counts[k]),
                            "note": _join(note if note.startswith("no interval:") else "", bin_note, source_note)})
    cols = ["criterion", *prep.by, "source", "score", "mean_perplexity", "ci_low", "ci_high", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)


# --------------------------------------------------------------------------- anchoring


def _wide(prep: _Prepared, rows: np.ndarray, *, per_rater: bool) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the rows as a (units, K) matrix (NaN where missing), and the item of each unit."""
    K = len(prep.criteria)
    item = prep.item[rows]
    if per_rater:
        unit, first = np.unique(item * len(prep.raters) + prep.rater[rows], return_inverse=True)
        first = first.ravel()
        unit_item = unit // len(prep.raters)
    else:
        unit_item, first = np.unique(item, return_inverse=True)
        first = first.ravel()
    M = np.full((len(unit_item), K), np.nan)
    M[first, prep.crit[rows]] = prep.score[rows]
    return M, unit_item


def _pair_stats(M: np.ndarray, unit_item: np.ndarray, n_items: int, pairs: np.ndarray) -> np.ndarray:
    """Per-item sums for Pearson's r of every criterion pair: (n_items, P, 6) of n, x, y, x², y², xy.

    ``M`` holds one unit (an annotator's or the judge's scores on an item) per row.
    """
    fin = np.isfinite(M)
    mu = _nz(np.where(fin, M, 0.0).sum(axis=0), fin.sum(axis=0).astype(float))
    M = M - mu  # centring keeps the sums of squares accurate; r does not change
    X, Y = M[:, pairs[:, 0]], M[:, pairs[:, 1]]
    ok = np.isfinite(X) & np.isfinite(Y)
    X, Y = np.where(ok, X, 0.0), np.where(ok, Y, 0.0)
    stack = np.stack([ok.astype(float), X, Y, X * X, Y * Y, X * Y], axis=-1)
    P = len(pairs)
    agg = sparse.csr_matrix((np.ones(len(unit_item)), (unit_item, np.arange(len(unit_item)))),
                            shape=(n_items, len(unit_item)))
    return np.asarray(agg @ stack.reshape(len(unit_item), P * 6)).reshape(n_items, P, 6)


def _wsum(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Resample-weighted sums of per-item statistics: (R, n) with (n, P, 6) -> (R, P, 6), one BLAS product."""
    n, P, k = S.shape
    return (W @ S.reshape(n, P * k)).reshape(W.shape[0], P, k)


def _pearson(A: np.ndarray) -> np.ndarray:
    """Pearson's r from summed (n, x, y, x², y², xy) in the last axis (centred data)."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(A, -1, 0)
    vx = sxx - _nz(sx * sx, n)
    vy = syy - _nz(sy * sy, n)
    cov = sxy - _nz(sx * sy, n)
    ok = (n >= 2) & (vx > 1e-9 * sxx) & (vy > 1e-9 * syy)
    return np.where(ok, _safe_div(cov, np.sqrt(np.where(ok, vx * vy, 1.0))), np.nan)


def _nz(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a, dtype=float), where=b > 0)


def _mean_r(R: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Mean over the pairs in ``use`` of per-resample r, (R_rows, P) -> (R_rows,); NaN if any is undefined."""
    if not use.any():
        return np.full(R.shape[0], np.nan)
    return R[:, use].mean(axis=1)


def _pos_label(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else f"{p:g}"


def anchoring(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Anchoring across criteria: do the judge's criteria move together more than the humans' do?

    Stureborg et al. 2024 (Sec. 3.3, Fig. 4, Table 3): when GPT-4 scores several criteria in
    one generation, later scores lean on earlier ones; its consistency and coherence
    scores correlate at r = 0.979 against r = 0.315 for humans, and the agreement of a
    criterion with the experts falls the later it comes in the prompt.

    Measures, per ``by`` group (``criterion`` None unless stated):

    ``mean_inter_criterion_r``
        The mean over criterion pairs (a, b) of Pearson's r between the scores on a and b.
        Judge: across items, its own (first-sample) scores. Humans (``judge`` None): across
        (item, annotator) units, i.e. each annotator's own pair of scores, so that one rater
        scoring several criteria is compared with one judge doing the same (averaging
        annotators first would remove their independent noise and inflate r). Pairs whose r
        is undefined (a constant criterion) are left out and counted in ``note``; the mean is
        a plain mean of r.
    ``r_difference`` (judges; **the test**)
        :math:`\\bar r_{judge} - \\bar r_{humans}` over the pairs defined for both, on the items
        scored by both; flagged when its 95% paired item-bootstrap interval excludes 0
        (two-sided test at alpha = 0.05). Caveat: a judge that is less noisy than one
        annotator also shows a higher r without any anchoring (criteria truly correlate);
        the position measures below are the cleaner evidence when ``position`` is known.
    ``agreement_tau_at_position_<p>`` (judges with a ``position``; per criterion, and with
    ``criterion`` None the mean over criteria)
        Kendall's tau-b between the judge's score and the mean human score of the item, over
        the items where the criterion was the p-th in the judge's prompt (their Table 3).
        Over criteria: the mean of the per-criterion taus, over the criteria whose tau is
        defined at every position (in the data and in at least 90% of the resamples; the
        others are named in ``note``).
    ``agreement_first_minus_later`` (same rows; an effect size, not a test)
        The tau at the first position minus the mean tau at the later positions (defined
        ones): the loss of agreement once the judge has earlier scores in its context.
    ``agreement_position_slope`` (**a test**, per criterion and over criteria)
        The least-squares slope of those taus on p, :math:`\\sum_p (p-\\bar p)(\\tau_p-\\bar\\tau)
        / \\sum_p (p-\\bar p)^2`, over the positions with a defined tau; negative = agreement
        falls with position. Flagged when its 95% item-bootstrap interval excludes 0.

    Parameters
    ----------
    ratings
        A validated canonical ratings table with at least two criteria. Anchoring assumes
        the judge scored the criteria in one prompt; rows of judges with a ``position`` say
        so, others cannot be checked.
    by
        Per-item segment columns to split by (not ``criterion``).
    judges
        Judges to include (default: all).
    n_boot
        Item-bootstrap resamples per group; 0 gives no intervals and no flags.
    seed
        Seed of the resampling.

    Returns
    -------
    pandas.DataFrame
        Columns ``section, judge, criterion, *by, measure, estimate, ci_low, ci_high, n,
        flagged, note``; ``section`` is ``'anchoring'``, ``n`` the number of items.

    Raises
    ------
    DataError
        Fewer than two criteria (:class:`BiasNotApplicable`), an unknown judge,
        ``criterion`` in ``by``, non-numeric scores.
    """
    _check_options(n_boot, seed)
    prep = _prepare(ratings, by, judges, criterion_in_by="error")
    K = len(prep.criteria)
    if K < 2:
        raise BiasNotApplicable(f"anchoring needs at least two criteria scored per item; this table has only "
                                f"'{prep.criteria[0]}'", column="criterion",
                                fix="load a table with several criteria per item (a 'criterion' column)")
    pairs = np.array([(a, b) for a in range(K) for b in range(a + 1, K)])
    n_items = len(prep.item_ids)
    hrows = np.flatnonzero(prep.human)
    stats = [_pair_stats(*_wide(prep, hrows, per_rater=True), n_items, pairs)]  # humans, then each judge
    # Mean human score per (item, criterion), for agreement by position.
    hcount = np.bincount(prep.item[hrows] * K + prep.crit[hrows], minlength=n_items * K).reshape(n_items, K)
    hsum = np.bincount(prep.item[hrows] * K + prep.crit[hrows], weights=prep.score[hrows],
                       minlength=n_items * K).reshape(n_items, K)
    hmean = _safe_div(hsum, hcount)
    position = None
    if "position" in prep.frame.columns:
        position = pd.to_numeric(prep.frame["position"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    jdata = {}
    for name in prep.judges:
        rows = np.flatnonzero(~prep.human & (prep.rater == prep.judge_code[name]))
        stats.append(_pair_stats(*_wide(prep, rows, per_rater=False), n_items, pairs))
        score = np.full((n_items, K), np.nan)
        score[prep.item[rows], prep.crit[rows]] = prep.score[rows]
        pos = None
        if position is not None and np.isfinite(position[rows]).any():
            pos = np.full((n_items, K), np.nan)
            pos[prep.item[rows], prep.crit[rows]] = position[rows]
        jdata[name] = (score, pos)
    S_all = np.stack(stats, axis=1)  # (n_items, 1 + judges, P, 6): one product per group for every source
    records: list[dict] = []
    for g, gkey in enumerate(prep.keys):
        key = dict(zip(prep.by, gkey))
        items = np.flatnonzero(prep.group == g)
        W = _weights(len(items), n_boot, _rng(seed, (ANCHORING, *gkey)))
        S_g = S_all[items]
        has = S_g[..., 0].sum(axis=2) > 0  # (items, sources)
        r_all = _pearson((W @ S_g.reshape(len(items), -1)).reshape(W.shape[0], *S_g.shape[1:]))
        Sh, has_h, rh = S_g[:, 0], has[:, 0], r_all[:, 0]
        use_h = np.isfinite(rh[0])
        records.append(_record(ANCHORING, None, None, key, "mean_inter_criterion_r", _mean_r(rh, use_h),
                               int(has_h.sum()), _why_r(has_h, use_h, "human"),
                               _pairs_note(use_h, len(pairs))))
        for k, name in enumerate(prep.judges, start=1):
            score, pos = jdata[name]
            Sj, has_j, rj = S_g[:, k], has[:, k], r_all[:, k]
            use_j = np.isfinite(rj[0])
            prompt_note = "criteria scored in one prompt (position recorded)" if pos is not None else ""
            records.append(_record(ANCHORING, name, None, key, "mean_inter_criterion_r", _mean_r(rj, use_j),
                                   int(has_j.sum()), _why_r(has_j, use_j, "judge"),
                                   _join(_pairs_note(use_j, len(pairs)), prompt_note)))
            both = has_h & has_j
            if np.array_equal(both, has_h) and np.array_equal(both, has_j):
                rhb, rjb = rh, rj
            else:
                rhb = _pearson(_wsum(W * both, Sh))
                rjb = _pearson(_wsum(W * both, Sj))
            use = np.isfinite(rhb[0]) & np.isfinite(rjb[0])
            why = "not defined: no item scored by both the judge and a human" if not both.any() else \
                "not defined: no criterion pair has a defined r for both the judge and the humans"
            records.append(_record(ANCHORING, name, None, key, "r_difference", _mean_r(rjb, use) - _mean_r(rhb, use),
                                   int(both.sum()), why, _join(_pairs_note(use, len(pairs)), prompt_note)))
            if pos is not None:
                records.extend(_position_records(prep, key, name, W, items, score[items], pos[items],
                                                 hmean[items]))
    return _frame(records, prep.by)


def _why_r(has: np.ndarray, use: np.ndarray, who: str) -> str:
    if not has.any():
        return f"not defined: no {who} scores in this group"
    if has.sum() < 2:
        return "not defined: fewer than 2 items"
    return f"not defined: no criterion pair has a defined r (the {who} scores of a criterion are constant " \
           "or no unit scored both criteria)"


def _pairs_note(use: np.ndarray, P: int) -> str:
    k = int(use.sum())
    if 0 < k < P:
        return f"mean over {k} of {P} criterion pairs; the others have a constant criterion"
    return ""


def _slope(taus: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Least-squares slope of taus (R, m) on positions (m,)."""
    if len(positions) < 2:
        return np.full(taus.shape[0], np.nan)
    x = positions - positions.mean()
    return (taus * x).sum(axis=1) / (x * x).sum()


def _position_records(prep: _Prepared, key: dict, name: str, W: np.ndarray, items: np.ndarray,
                      score: np.ndarray, pos: np.ndarray, hmean: np.ndarray) -> list[dict]:
    """Agreement (tau-b with the human mean) of one judge by the criterion's position in its prompt."""
    K = len(prep.criteria)
    positions = np.unique(pos[np.isfinite(pos)])
    R = W.shape[0]
    Wt = np.ascontiguousarray(W.T)
    ok = np.isfinite(score) & np.isfinite(pos) & np.isfinite(hmean)
    taus = np.full((K, len(positions), R), np.nan)
    ns = np.zeros((K, len(positions)), dtype=np.int64)
    for c in range(K):
        for k, p in enumerate(positions):
            sel = np.flatnonzero(ok[:, c] & (pos[:, c] == p))
            ns[c, k] = len(sel)
            if len(sel) >= 2:
                taus[c, k] = _tau_b(Wt[sel], np.arange(len(sel)), score[sel, c], hmean[sel, c])
    out: list[dict] = []
    note = "criteria scored in one prompt (position recorded)"

    def why_tau(c_list: list[int], k: int, pooled: bool) -> str:
        n = ns[c_list, k].sum()
        if n == 0:
            return "not defined: no item has this criterion at this position with human scores"
        if pooled:
            return "not defined: no criterion has a defined tau at every position"
        return "not defined: fewer than 2 items, or the judge's scores or the human means are constant"

    def block(crit: str | None, tau_rows: np.ndarray, n_pos: np.ndarray, c_list: list[int], extra: str = "") -> None:
        defined = np.isfinite(tau_rows[:, 0])
        for k, p in enumerate(positions):
            out.append(_record(ANCHORING, name, crit, key, f"agreement_tau_at_position_{_pos_label(p)}",
                               tau_rows[k], int(n_pos[k]), why_tau(c_list, k, crit is None), _join(extra, note)))
        n_items = int(np.any(ok[:, c_list] & np.isin(pos[:, c_list], positions[defined]), axis=1).sum())
        first = defined & (positions == positions.min())
        later = defined & (positions > positions.min())
        diff = tau_rows[first].mean(axis=0) - tau_rows[later].mean(axis=0) if first.any() and later.any() \
            else np.full(R, np.nan)
        out.append(_record(ANCHORING, name, crit, key, "agreement_first_minus_later", diff, n_items,
                           "not defined: tau is not defined at the first position and at a later one",
                           _join(extra, note)))
        slope = _slope(tau_rows[defined].T, positions[defined])
        out.append(_record(ANCHORING, name, crit, key, "agreement_position_slope", slope, n_items,
                           "not defined: tau is defined at fewer than 2 positions", _join(extra, note)))

    # Over criteria: per position, the mean tau of the criteria whose tau is defined at every
    # position (the same criteria at each position, so positions are compared like for like).
    full = np.isfinite(taus[:, :, 0]).all(axis=1)
    if R > 1:  # ... and in at least 90% of the resamples, so that the mean is stable
        full &= (np.isfinite(taus[:, :, 1:]).mean(axis=2) >= 0.9).all(axis=1)
    sel = taus[full]
    fin = np.isfinite(sel)
    pooled = _safe_div(np.where(fin, sel, 0.0).sum(axis=0), fin.sum(axis=0))  # mean of the defined ones
    used = list(np.flatnonzero(full)) or list(range(K))
    n_any = np.array([int(np.any(ok[:, used] & (pos[:, used] == p), axis=1).sum()) for p in positions])
    if full.any() and not full.all():
        left = ", ".join(prep.criteria[c] for c in np.flatnonzero(~full))
        note_pooled = f"mean over the criteria with a tau defined at every position; left out: {left}"
    else:
        note_pooled = ""
    block(None, pooled, n_any, used, note_pooled)
    for c in range(K):
        block(prep.criteria[c], taus[c], ns[c], [c])
    return out


def conditional_distribution(
    ratings: pd.DataFrame,
    *,
    given: str,
    target: str,
    threshold: float,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Distribution of one criterion given another above or below a threshold (Stureborg et al. Fig. 4).

    For each source (the humans, each judge) and condition, the share of each score of
    ``target``: :math:`P(\\text{target} = v \\mid \\text{given} > t)` (``condition='above'``)
    and :math:`P(\\text{target} = v \\mid \\text{given} \\le t)` (``'at_or_below'``). Units are
    the judge's items, or (item, annotator) for humans, scored on both criteria. A judge
    whose ``target`` distribution moves much more between the two conditions than the
    humans' does is anchoring ``target`` on ``given``.

    Parameters
    ----------
    ratings
        A validated canonical ratings table.
    given, target
        Two different criteria.
    threshold
        Units with ``given`` above it fall in ``'above'``, the others in ``'at_or_below'``
        (the paper uses 5 on a 1-10 scale).
    by, judges, n_boot, seed
        As in :func:`anchoring`; the interval is the 95% item-bootstrap interval of the share.

    Returns
    -------
    pandas.DataFrame
        Columns ``source, *by, condition, score, share, ci_low, ci_high, count, n, note``:
        ``source`` is ``'humans'`` or the judge's name; ``count`` the units with that score,
        ``n`` the units in the condition (shares sum to 1 over a condition's scores).
    """
    _check_options(n_boot, seed)
    prep = _prepare(ratings, by, judges, criterion_in_by="error")
    for name, crit in (("given", given), ("target", target)):
        if crit not in prep.criteria:
            raise DataError(f"there is no criterion '{crit}' (for {name})", column="criterion",
                            fix="choose from: " + ", ".join(prep.criteria))
    if given == target:
        raise DataError("'given' and 'target' are the same criterion", fix="choose two different criteria")
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise DataError(f"the threshold '{threshold}' is not a number", fix="give a score value, e.g. 5") from None
    a, b = prep.criteria.index(given), prep.criteria.index(target)
    n_items = len(prep.item_ids)
    sources = [(HUMANS, np.flatnonzero(prep.human), True)]
    sources += [(name, np.flatnonzero(~prep.human & (prep.rater == prep.judge_code[name])), False)
                for name in prep.judges]
    out = []
    for g, gkey in enumerate(prep.keys):
        items = np.flatnonzero(prep.group == g)
        W = _weights(len(items), n_boot, _rng(seed, ("conditional", given, target, t, *gkey)))
        loc = np.full(n_items, -1)
        loc[items] = np.arange(len(items))
        for name, rows, per_rater in sources:
            M, ui = _wide(prep, rows, per_rater=per_rater)
            m = np.isfinite(M[:, a]) & np.isfinite(M[:, b]) & (loc[ui] >= 0)
            if not m.any():
                continue
            cond = (M[m, a] > t).astype(np.int64)  # 1 = above
            code, values = _codes(M[m, b])
            q = len(values)
            H = np.bincount(loc[ui[m]] * 2 * q + cond * q + code, minlength=len(items) * 2 * q)
            A = (W @ H.reshape(len(items), 2 * q).astype(float)).reshape(-1, 2, q)
            share = _safe_div(A, A.sum(axis=-1, keepdims=True))
            for ci, label in ((1, "above"), (0, "at_or_below")):
                n_c = int(A[0, ci].sum())
                for k, v in enumerate(values):
                    lo, hi, note = _interval(share[:, ci, k]) if n_c else (np.nan, np.nan, "")
                    out.append({"source": name, **dict(zip(prep.by, gkey)), "condition": label, "score": float(v),
                                "share": float(share[0, ci, k]) if n_c else np.nan, "ci_low": lo, "ci_high": hi,
                                "count": int(A[0, ci, k]), "n": n_c,
                                "note": "not defined: no unit in this condition" if not n_c else
                                note if note.startswith("no interval:") else ""})
    cols = ["source", *prep.by, "condition", "score", "share", "ci_low", "ci_high", "count", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)


def criterion_correlations(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Pearson correlation matrix between criteria, humans and each judge, for side-by-side heatmaps.

    Same definitions as ``mean_inter_criterion_r`` in :func:`anchoring`: the judge's scores
    across items; the humans' across (item, annotator) units. The matrix is given in full
    (both orders of each pair, and the diagonal, 1 where the criterion varies) with 95%
    item-bootstrap intervals.

    Returns
    -------
    pandas.DataFrame
        Columns ``source, *by, criterion_a, criterion_b, r, ci_low, ci_high, n, note``;
        ``n`` is the number of units (items or item-annotator pairs) scored on both criteria.
    """
    _check_options(n_boot, seed)
    prep = _prepare(ratings, by, judges, criterion_in_by="error")
    K = len(prep.criteria)
    pairs = np.array([(a, b) for a in range(K) for b in range(K)])
    n_items = len(prep.item_ids)
    sources = [(HUMANS, np.flatnonzero(prep.human), True)]
    sources += [(name, np.flatnonzero(~prep.human & (prep.rater == prep.judge_code[name])), False)
                for name in prep.judges]
    stats = [(name, _pair_stats(*_wide(prep, rows, per_rater=pr), n_items, pairs)) for name, rows, pr in sources]
    names = [name for name, _ in stats]
    S_all = np.stack([st for _, st in stats], axis=1)
    out = []
    for g, gkey in enumerate(prep.keys):
        items = np.flatnonzero(prep.group == g)
        W = _weights(len(items), n_boot, _rng(seed, ("correlations", *gkey)))
        S_g = S_all[items]
        A_all = (W @ S_g.reshape(len(items), -1)).reshape(W.shape[0], *S_g.shape[1:])
        r_all = _pearson(A_all)
        for k, name in enumerate(names):
            A, r = A_all[:, k], r_all[:, k]
            for p, (a, b) in enumerate(pairs):
                n_units = int(A[0, p, 0])
                lo, hi, note = _interval(r[:, p])
                est = float(r[0, p])
                if not np.isfinite(est):
                    note = "not defined: no unit scored both criteria" if n_units == 0 else \
                        "not defined: fewer than 2 units, or a criterion's scores are constant"
                    lo = hi = np.nan
                elif not note.startswith("no interval:"):
                    note = ""
                out.append({"source": name, **dict(zip(prep.by, gkey)), "criterion_a": prep.criteria[a],
                            "criterion_b": prep.criteria[b], "r": est, "ci_low": lo, "ci_high": hi,
                            "n": n_units, "note": note})
    cols = ["source", *prep.by, "criterion_a", "criterion_b", "r", "ci_low", "ci_high", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)
