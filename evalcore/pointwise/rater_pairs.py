"""Agreement of every pair of raters on the units both rated: the per-pair matrices papers show as heatmaps.

For each pair of human annotators, and each judge against each annotator, on the units (an item on one
criterion) both rated, per ``criterion`` and group of ``by``:

- ``cohen_kappa``: Cohen's (1960) kappa, :math:`\\kappa = (p_o - p_e)/(1 - p_e)`, with
  :math:`p_o` the share of units where the two gave the same score and
  :math:`p_e = \\sum_k a_k b_k / n^2` from the two raters' score counts :math:`a_k, b_k`.
- ``cohen_kappa_linear``, ``cohen_kappa_quadratic``: Cohen's (1968) weighted kappa,
  :math:`\\kappa_w = 1 - n\\sum_i d(x_i, y_i) / \\sum_{i,j} d(x_i, y_j)` over the ``n`` units, with the
  disagreement weights :math:`d(x, y) = |v_x - v_y|` (linear) or :math:`(v_x - v_y)^2` (quadratic) on
  the score **values**, as :mod:`evalcore.pointwise.agreement` weights ``cohen_kappa_quadratic``
  (:math:`w_{ab} = 1-(v_a-v_b)^2/(v_{max}-v_{min})^2` gives the same kappa: a weighted kappa does not
  change when the disagreement weights are scaled). On a scale of evenly spaced scores (1..5) this is
  :func:`sklearn.metrics.cohen_kappa_score` with ``weights='linear'`` / ``'quadratic'`` and
  ``labels`` every score of the scale; sklearn weights the *positions* of the labels instead, so
  with unevenly spaced or missing values (a judge's averaged scores) the two differ, and this is
  the one consistent with the values.
- ``percent_agreement``: :math:`p_o`.

Every estimate is undefined (NaN, with a note) when both raters gave one and the same score on every
unit (:math:`p_e = 1`). ``n`` is the number of units both rated; only pairs with ``n >= 1`` appear.

How it is computed: the ratings are sorted by unit once; each unit gives its pairs of human ratings and
each judge rating with each human rating (no judge-judge pairs), so the cost is the number of such
pairs, :math:`\\sum_u h_u(h_u - 1)/2 + j_u h_u`, however many annotators the table has (a crowd of
hundreds, each rating a few units, gives few pairs). The pairs' units are compressed into patterns
(pair, score a, score b) with counts, and every measure is a weighted sum over patterns, with the
expected disagreement from each pair's score counts in value order (linear:
:math:`\\sum_{i,j}|v_{x_i} - v_{y_j}| = \\sum_t (v_{t+1} - v_t)(F^a_t(n - F^b_t) + F^b_t(n - F^a_t))`,
:math:`F_t` the counts at or below the t-th value; quadratic from the sums of values and squares).

Intervals (``n_boot > 0``): a percentile bootstrap of the pair's units (within a criterion, a unit is an
item), drawn by :func:`evalcore.stats.resample_counts` from a stream per pair
(:func:`evalcore.stats.cell_rng` of the group, rater a and rater b), so that a pair's interval does not
depend on which other pairs exist. With ``n_boot=0`` the bounds are NaN and the note says so.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..arguments import takes_table
from ..columns import HUMAN, JUDGE, RATINGS
from ..errors import DataError, varying_within_item
from ..stats.bootstrap import cell_rng, check_level, check_resamples, percentile_interval, resample_counts, root_seed
from ..stats.numeric import codes, join_notes, safe_div
from ..stats.results import SPARSE_NOTE

MEASURES = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "percent_agreement")
#: The columns after ``criterion`` and the ``by`` columns.
PAIR_COLUMNS = ("rater_a", "rater_b", "kind", "measure", "estimate", "ci_low", "ci_high", "n", "note")
HUMAN_HUMAN, JUDGE_HUMAN = "human-human", "judge-human"
NO_INTERVAL_NOTE = "no interval: n_boot=0"
CONSTANT_PAIR_NOTE = "not defined: both raters gave one and the same score on every unit, so chance agreement is 1"
#: Memory bound of one block of bootstrap weights (resamples x patterns held at once).
_BLOCK = 4_000_000


def _prepare(ratings: pd.DataFrame, by: list[str], judges: Sequence[str] | None
             ) -> tuple[pd.DataFrame, np.ndarray, list[tuple], np.ndarray, list[str]]:
    """The ratings used (humans and the chosen judges, one per unit and rater), each row's group, the
    group keys, the sorted score values and the sorted rater names; the rows' codes are in ``df``."""
    need = {"item_id", "rater", "rater_kind", "criterion", "score", *by}
    missing = sorted(need - set(ratings.columns))
    if missing:
        raise DataError(f"the ratings table lacks {', '.join(missing)}",
                        column=missing[0], fix="load a validated ratings table, and group by its columns")
    df = ratings
    if "sample" in df.columns and df["sample"].nunique() > 1:  # the first sample, as agreement uses
        df = df[df["sample"] == df.groupby(["item_id", "criterion", "rater"], sort=False)["sample"].transform("min")]
    all_judges = sorted(map(str, df.loc[df["rater_kind"] == JUDGE, "rater"].unique()))
    chosen = all_judges if judges is None else [str(j) for j in judges]
    bad = [j for j in chosen if j not in all_judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(all_judges))
    df = df[(df["rater_kind"] == HUMAN) | df["rater"].astype(str).isin(chosen)]
    df = df[df["score"].notna()].drop_duplicates(["item_id", "criterion", "rater"])
    cols = ["criterion", *by]
    grouped = df.groupby(cols, sort=True, dropna=False)
    group = grouped.ngroup().to_numpy(dtype=np.int64)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    unit = df.groupby(["item_id", "criterion"], sort=False).ngroup().to_numpy(dtype=np.int64)
    first = np.full(int(unit.max()) + 1 if len(unit) else 0, -1)
    first[unit[::-1]] = np.arange(len(unit))[::-1]
    changed = np.flatnonzero(group != group[first[unit]])
    if len(changed):
        col = next(c for c in by if not pd.Series(df[c].iloc[[changed[0], first[unit[changed[0]]]]]).nunique(
            dropna=False) == 1)
        raise varying_within_item(col, df["item_id"].iloc[changed[0]])
    names = df["rater"].astype(str).to_numpy()
    rater, rater_names = codes(names)
    cat, values = codes(df["score"].to_numpy(dtype=float))
    human = (df["rater_kind"] == HUMAN).to_numpy()
    table = pd.DataFrame({"unit": unit, "rater": rater, "cat": cat, "human": human, "group": group})
    return table, values, keys, np.asarray(rater_names), list(all_judges)


def _pairs(t: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (a, b) of every pair of ratings of one unit: humans a < b by name, and judge a with human b."""
    order = np.lexsort((t["rater"].to_numpy(), t["unit"].to_numpy()))
    unit, human = t["unit"].to_numpy()[order], t["human"].to_numpy()[order]
    hrows, jrows = order[human], order[~human]
    hu = unit[human]
    # Humans: within each unit's run, each rating with every later one (raters sorted by name).
    starts = np.flatnonzero(np.r_[True, hu[1:] != hu[:-1]]) if len(hu) else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, len(hu)])
    after = np.repeat(sizes, sizes) - 1 - (np.arange(len(hu)) - np.repeat(starts, sizes))
    left = np.repeat(np.arange(len(hu)), after)
    off = np.arange(len(left)) - np.repeat(np.cumsum(after) - after, after) + 1
    a, b = [hrows[left]], [hrows[left + off]]
    # Judges: each judge rating with every human rating of its unit.
    n_units = int(t["unit"].max()) + 1 if len(t) else 0
    hstart = np.zeros(n_units, np.int64)
    hcount = np.zeros(n_units, np.int64)
    hstart[hu[starts]], hcount[hu[starts]] = starts, sizes
    ju = unit[~human]
    jleft = np.repeat(np.arange(len(jrows)), hcount[ju])
    joff = np.arange(len(jleft)) - np.repeat(np.cumsum(hcount[ju]) - hcount[ju], hcount[ju])
    a.append(jrows[jleft])
    b.append(hrows[hstart[ju[jleft]] + joff])
    return np.concatenate(a), np.concatenate(b)


def _kappas(W: np.ndarray, pair: np.ndarray, xa: np.ndarray, xb: np.ndarray, values: np.ndarray,
            n_pairs: int) -> dict[str, np.ndarray]:
    """Every measure of pairs ``0..n_pairs-1`` from pattern weights ``W`` (patterns x rows), (n_pairs, rows) each.

    Patterns are sorted by pair; pattern ``t`` belongs to ``pair[t]`` with categories ``xa[t]``, ``xb[t]``.
    """
    T, q = len(pair), len(values)
    S = sparse.csr_matrix((np.ones(T), (pair, np.arange(T))), shape=(n_pairs, T))

    def per_pair(x: np.ndarray) -> np.ndarray:  # a weight per pattern -> (n_pairs, rows)
        return S @ (W * x[:, None])

    va, vb = values[xa], values[xb]
    n = S @ W
    agree = per_pair((xa == xb).astype(float))
    # Each pair's score counts on each side, over the categories either side used, in value order.
    entry, ekey = codes(np.concatenate([pair * q + xa, pair * q + xb]))
    E = len(ekey)
    A = sparse.csr_matrix((np.ones(T), (entry[:T], np.arange(T))), shape=(E, T)) @ W
    B = sparse.csr_matrix((np.ones(T), (entry[T:], np.arange(T))), shape=(E, T)) @ W
    epair = ekey // q
    Se = sparse.csr_matrix((np.ones(E), (epair, np.arange(E))), shape=(n_pairs, E))
    chance = n ** 2 - Se @ (A * B)  # sum_{i,j} [x_i != y_j]
    out = {"cohen_kappa": 1.0 - safe_div(n * (n - agree), chance)}
    # Linear: the gaps between a pair's consecutive values, each crossed by the (i, j) on either side of it.
    Fa, Fb = np.cumsum(A, axis=0), np.cumsum(B, axis=0)
    before = np.r_[0, np.flatnonzero(epair[1:] != epair[:-1]) + 1]  # each pair's first entry
    base = np.repeat(before, np.diff(np.r_[before, E])) - 1
    Fa -= np.where(base[:, None] >= 0, Fa[np.maximum(base, 0)], 0.0)
    Fb -= np.where(base[:, None] >= 0, Fb[np.maximum(base, 0)], 0.0)
    ev = values[ekey % q]
    gap = np.where(np.r_[epair[1:] == epair[:-1], False], np.r_[ev[1:] - ev[:-1], 0.0], 0.0)
    N = n[epair]
    lin_e = Se @ (gap[:, None] * (Fa * (N - Fb) + Fb * (N - Fa)))
    out["cohen_kappa_linear"] = 1.0 - safe_div(n * per_pair(np.abs(va - vb)), lin_e)
    # Quadratic: sum_{i,j} (a_i - b_j)^2 = n sum a^2 + n sum b^2 - 2 sum a sum b.
    quad_e = n * per_pair(va ** 2) + n * per_pair(vb ** 2) - 2 * per_pair(va) * per_pair(vb)
    out["cohen_kappa_quadratic"] = 1.0 - safe_div(n * per_pair((va - vb) ** 2), quad_e)
    constant = ~(chance > 0)  # one and the same score throughout: every kappa is undefined
    for m in ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"):
        out[m] = np.where(constant, np.nan, out[m])
    out["percent_agreement"] = safe_div(agree, n)
    return out


def _draws(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """``(n_boot, patterns)`` resampled pattern counts of one pair: its ``n`` units drawn with replacement.

    A multinomial over the patterns when they are few (one binomial per pattern), else the units
    themselves (:func:`evalcore.stats.resample_counts`): the same distribution, the cheaper draw.
    """
    cnt = counts.astype(np.int64)
    n, K = int(cnt.sum()), len(cnt)
    if 8 * K <= n:
        return rng.multinomial(n, cnt / n, size=n_boot).astype(float)
    return resample_counts(rng, n, n_boot, classes=np.repeat(np.arange(K), cnt), n_classes=K)


def _estimates(counts: np.ndarray, ppair: np.ndarray, xa: np.ndarray, xb: np.ndarray, values: np.ndarray,
               cells: list[tuple], *, n_boot: int, root: int, level: float
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Estimates, interval bounds and "too few resamples" flags of every measure, (n_pairs,) each.

    Pairs are handled in blocks whose bootstrap weights (``1 + n_boot`` rows by the block's patterns)
    stay near :data:`_BLOCK` numbers; each pair's resamples come from its own stream (``cells[p]``).
    """
    P = len(cells)
    est, low, high = ({m: np.full(P, np.nan) for m in MEASURES} for _ in range(3))
    sparse_ci = {m: np.zeros(P, dtype=bool) for m in MEASURES}
    tstart = np.searchsorted(ppair, np.arange(P + 1))
    rows = 1 + n_boot
    p0 = 0
    while p0 < P:
        p1 = p0 + 1
        while p1 < P and rows * (tstart[p1 + 1] - tstart[p0]) <= _BLOCK:
            p1 += 1
        t0, t1 = tstart[p0], tstart[p1]
        W = np.empty((t1 - t0, rows))
        W[:, 0] = counts[t0:t1]
        for p in range(p0, p1) if n_boot else ():
            W[tstart[p] - t0:tstart[p + 1] - t0, 1:] = _draws(cell_rng(root, cells[p]), counts[tstart[p]:tstart[p + 1]],
                                                             n_boot).T
        stats = _kappas(W, ppair[t0:t1] - p0, xa[t0:t1], xb[t0:t1], values, p1 - p0)
        for m, arr in stats.items():
            est[m][p0:p1] = arr[:, 0]
            if n_boot:
                lo, hi, sp = percentile_interval(arr[:, 1:], level)
                low[m][p0:p1], high[m][p0:p1], sparse_ci[m][p0:p1] = lo, hi, sp
        p0 = p1
    return est, low, high, sparse_ci


def _pair_keys(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``cols`` (group, kind, rater a, rater b) in sorted order, and each row's index.

    One integer per row where the digits fit in 62 bits (a sort of integers, not of rows).
    """
    if not len(cols):
        return np.zeros((0, cols.shape[1]), np.int64), np.zeros(0, np.int64)
    radix = cols.max(axis=0).astype(np.int64) + 1
    if float(np.prod(radix.astype(float))) >= 2.0 ** 62:
        uniq, inv = np.unique(cols, axis=0, return_inverse=True)
        return uniq, inv.ravel().astype(np.int64)
    key = np.zeros(len(cols), np.int64)
    for k in range(cols.shape[1]):
        key = key * radix[k] + cols[:, k]
    inv, uniq = codes(key)
    out = np.empty((len(uniq), cols.shape[1]), np.int64)
    for k in reversed(range(cols.shape[1])):
        out[:, k] = uniq % radix[k]
        uniq = uniq // radix[k]
    return out, inv


@takes_table(RATINGS)
def rater_pair_matrix(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 0,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Cohen's kappa (plain, linear, quadratic) and percent agreement of every pair of raters.

    Every pair of human annotators, and every judge against every annotator, on the units (an item on
    one criterion) both rated, per criterion and group of ``by``. Formulas, weights and sources (Cohen
    1960; Cohen 1968 for weighted kappa) in the module docstring: the weights are on the score values.

    Parameters
    ----------
    ratings
        A validated ratings table (``item_id, rater, rater_kind, criterion, score``, optionally
        ``sample``: the first sample of each rating is used, as in
        :func:`evalcore.pointwise.agreement.table.agreement`).
    by
        Per-item columns to group by besides ``criterion`` (e.g. ``language``); empty by default.
    judges
        Judges to pair with each annotator (default: all; an empty list for the annotators only).
    n_boot
        Bootstrap resamples of each pair's units; 0 (the default) gives no intervals (NaN, and a note).
    seed
        Seed of the resampling (a whole number or a ``numpy.random.Generator``); the same inputs give the
        same numbers.
    level
        Confidence level of the percentile intervals.
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Long and tidy: ``criterion, *by, rater_a, rater_b, kind, measure, estimate, ci_low, ci_high, n,
        note``. ``kind`` is ``'human-human'`` (``rater_a`` before ``rater_b`` by name; each pair once) or
        ``'judge-human'`` (``rater_a`` the judge); ``measure`` one of :data:`MEASURES`; ``n`` the units
        both rated. Rows by group, kind, rater_a, rater_b, then measure. Only pairs that rated a unit in
        common appear.

    Examples
    --------
    >>> df = pd.DataFrame({"item_id": [1, 1, 1, 2, 2, 2, 3, 3, 3], "criterion": "fluency",
    ...                    "rater": ["h1", "h2", "gpt"] * 3, "rater_kind": ["human", "human", "judge"] * 3,
    ...                    "score": [1, 1, 2, 2, 2, 2, 3, 2, 3]})
    >>> res = rater_pair_matrix(df)
    >>> res.loc[res["measure"] == "percent_agreement", ["rater_a", "rater_b", "kind", "estimate", "n"]]
       rater_a rater_b         kind  estimate  n
    3       h1      h2  human-human  0.666667  3
    7      gpt      h1  judge-human  0.666667  3
    11     gpt      h2  judge-human  0.333333  3
    """
    by = [c for c in dict.fromkeys(by) if c != "criterion"]
    absent = [c for c in by if c not in ratings.columns]
    if absent:
        raise DataError(f"cannot group by '{absent[0]}': the ratings table has no such column", column=absent[0],
                        fix="group by a per-item column of the table, e.g. language or task")
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    t, values, keys, names, _ = _prepare(ratings, by, judges)
    ia, ib = _pairs(t)
    rater, cat, group = t["rater"].to_numpy(), t["cat"].to_numpy(), t["group"].to_numpy()
    judge = (~t["human"].to_numpy()[ia]).astype(np.int64)
    q = len(values)
    pkeys, pair = _pair_keys(np.column_stack([group[ia], judge, rater[ia], rater[ib]]))
    pat, patkey = codes((pair * q + cat[ia]) * q + cat[ib])
    counts = np.bincount(pat, minlength=len(patkey)).astype(float)
    ppair, xa, xb = patkey // (q * q), (patkey // q) % q, patkey % q
    cells = [(keys[g], str(names[a]), str(names[b])) for g, _, a, b in pkeys]
    est, low, high, sparse_ci = _estimates(counts, ppair, xa, xb, values, cells, n_boot=n_boot, root=root,
                                           level=level)
    n = np.bincount(ppair, weights=counts, minlength=len(pkeys)).astype(np.int64)
    return _table(pkeys, keys, names, by, n, est, low, high, sparse_ci, n_boot=n_boot)


def _table(pkeys: np.ndarray, keys: list[tuple], names: np.ndarray, by: list[str], n: np.ndarray,
           est: dict, low: dict, high: dict, sparse_ci: dict, *, n_boot: int) -> pd.DataFrame:
    """The long result table: one row per pair and measure, in the order of :func:`rater_pair_matrix`."""
    P, M = len(pkeys), len(MEASURES)
    gk = [keys[g] for g in pkeys[:, 0]] if P else []
    data: dict[str, object] = {c: pd.Series([k[i] for k in gk for _ in range(M)], dtype=object if not P else None)
                               for i, c in enumerate(["criterion", *by])}
    data["rater_a"] = np.repeat(names[pkeys[:, 2]] if P else np.zeros(0, object), M).astype(object)
    data["rater_b"] = np.repeat(names[pkeys[:, 3]] if P else np.zeros(0, object), M).astype(object)
    data["kind"] = np.repeat(np.where(pkeys[:, 1] == 1, JUDGE_HUMAN, HUMAN_HUMAN), M).astype(object)
    data["measure"] = np.tile(np.asarray(MEASURES, dtype=object), P)
    stack = {k: np.stack([d[m] for m in MEASURES], axis=1).ravel() for k, d in
             (("estimate", est), ("ci_low", low), ("ci_high", high), ("sparse", sparse_ci))}
    ok = np.isfinite(stack["estimate"])
    data["estimate"] = stack["estimate"]
    data["ci_low"], data["ci_high"] = np.where(ok, stack["ci_low"], np.nan), np.where(ok, stack["ci_high"], np.nan)
    data["n"] = np.repeat(n, M)
    notes = np.where(~ok, CONSTANT_PAIR_NOTE, np.where(stack["sparse"], SPARSE_NOTE, ""))
    if n_boot == 0:
        notes = [join_notes(x, NO_INTERVAL_NOTE) for x in notes]
    data["note"] = pd.Series(notes, dtype="str")
    return pd.DataFrame(data, columns=["criterion", *by, *PAIR_COLUMNS])
