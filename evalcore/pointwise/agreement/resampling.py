"""Patterns and the item bootstrap: the units one kind of measure uses, compressed, with resampled weights.

A *family* is the set of units one kind of measure uses in every group: units with a human rating
(humans among themselves), or units with a human rating and judge J. Units with the same (group,
human counts, judge category) are compressed into one *pattern* with a weight, so a measure costs
O(patterns), not O(ratings). Patterns are laid out as (G, K) arrays, K the most patterns in any group
(padded with zero weight); weights are (G, R, K): R = 1 + B rows, the data then the bootstrap
resamples. Every statistic (:mod:`evalcore.pointwise.agreement.measures`) is a batched product over K,
so all groups and all resamples are computed at once.

The bootstrap resamples *items* with replacement (an item scored on several criteria moves as a
whole). Items that contribute the same patterns are compressed into *item types*, and a resample is a
multinomial draw of item-type counts: exactly the item bootstrap, at a cost independent of the number
of ratings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...stats.bootstrap import resample_counts
from .passes import factorize_keys, passes


@dataclass(frozen=True)
class Family:
    """One family's patterns per group, and their weights in the data and in each resample."""

    counts: np.ndarray  # (G, K, q) human counts per category (categories used by the family only)
    judge: np.ndarray  # (G, K) judge category, -1 for humans-only
    weights: np.ndarray  # (G, R, K)
    present: np.ndarray  # (G,) the group has units in this family
    values: np.ndarray  # (q,) score values of the categories


def unit_keys(counts: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """A dense integer per unit identifying its (group, human counts): the families' patterns refine it.

    One integer per unit when the digits fit in 62 bits (a direct-address table, no hashing),
    else the rows' codes from ``np.unique``. Computed once per table, not once per family.
    """
    # Column by column: numpy's reductions along the short axis of an (n, q) array are ~15x slower.
    cols = [counts[:, k] for k in range(counts.shape[1])]
    hi = [int(c.max()) for c in cols] if counts.shape[1] <= 8 else counts.max(axis=0).tolist()
    digits = [(group, n_groups), *((cols[k], hi[k] + 1) for k in range(len(cols)) if hi[k] > 0)]
    if sum(np.log2(max(r, 1)) for _, r in digits) < 62:
        key = np.zeros(len(group), dtype=np.int64)
        for col, radix in digits:
            key *= radix
            key += col
        return factorize_keys(key)[0]
    _, code = np.unique(np.column_stack([group, counts]), axis=0, return_inverse=True)
    return code.ravel().astype(np.int64)


def family(rows: np.ndarray, ukey: np.ndarray, counts: np.ndarray, judge: np.ndarray | None, item: np.ndarray,
           group: np.ndarray, n_groups: int, values: np.ndarray, *, n_boot: int,
           rngs: Sequence[np.random.Generator], item_count: np.ndarray | None = None) -> Family:
    """Compress the units ``rows`` (with the judge's categories ``judge``, or humans only) into patterns.

    ``ukey`` is :func:`unit_keys` of every unit; a pattern is a (group, counts, judge category).
    With ``item_count`` (compressed units, ``Units.item_count``) each unit weighs the items its
    item stands for, and the bootstrap draws that many items (:func:`_weighted_draws`).
    """
    key = ukey[rows] if judge is None else passes(len(rows)).family_keys(ukey, judge, rows, len(values) + 1)
    code, first_local = factorize_keys(key)
    first = rows[first_local]  # a unit of each pattern
    jfirst = judge[first] if judge is not None else np.full(len(first), -1)
    # Keep only the categories the family uses (the judge's averaged scores may add many).
    used = counts[first].any(axis=0)
    used[jfirst[jfirst >= 0]] = True
    idx = np.flatnonzero(used)
    remap = np.full(len(values), -1)
    remap[idx] = np.arange(len(idx))
    values = values[idx]
    q = len(idx)
    group = group[rows]
    n_pat = len(first)
    base = np.bincount(code, weights=None if item_count is None else item_count[item[rows]].astype(float),
                       minlength=n_pat).astype(float)
    pg = group[first_local]
    order = np.argsort(pg, kind="stable")
    per_group = np.bincount(pg, minlength=n_groups)
    K = max(int(per_group.max()), 1)
    start = np.concatenate([[0], np.cumsum(per_group)[:-1]])
    local = np.empty(n_pat, dtype=np.int64)
    local[order] = np.arange(n_pat) - start[pg[order]]
    R = 1 + max(n_boot, 0)
    C = np.zeros((n_groups, K, q))
    J = np.zeros((n_groups, K), dtype=np.int64)
    W = np.zeros((n_groups, R, K))
    C[pg, local] = counts[first][:, idx]
    J[pg, local] = np.maximum(remap[np.maximum(jfirst, 0)], 0)
    W[pg, 0, local] = base
    if n_boot > 0:
        item = item[rows]
        by_group = np.argsort(group, kind="stable")
        ends = np.cumsum(np.bincount(group, minlength=n_groups))
        for g in np.flatnonzero(per_group):
            rows_g = by_group[(ends[g - 1] if g else 0):ends[g]]
            pat = local[code[rows_g]]
            if item_count is not None:
                W[g, 1:, : per_group[g]] = _weighted_draws(rngs[g], item[rows_g], pat, item_count,
                                                           W[g, 0, : per_group[g]], n_boot)
                continue
            its, item_inv = np.unique(item[rows_g], return_inverse=True)
            n_items = len(its)
            if n_items == len(rows_g):
                # One unit per item (grouped by criterion): resampling items is resampling patterns.
                freq, types = W[g, 0, : per_group[g]], None
            else:
                # Items move as a whole: compress items with the same multiset of patterns.
                types, tinv = _item_types(item_inv.ravel(), pat, n_items, per_group[g])
                freq = np.bincount(tinv, minlength=types.shape[0]).astype(float)
            if types is not None and 8 * len(freq) > n_items:
                # Nearly every item is its own type (items rated on many criteria): drawing the items
                # themselves costs one integer per item, where a multinomial costs a binomial per type.
                W[g, 1:, : per_group[g]] = _draw_items(rngs[g], tinv.ravel(), types, n_boot)
                continue
            draws = rngs[g].multinomial(n_items, freq / freq.sum(), size=n_boot).astype(float)
            W[g, 1:, : per_group[g]] = draws if types is None else np.asarray(types.T.dot(draws.T).T)
    return Family(C, np.where(W[:, 0, :] > 0, J, -1), W, per_group > 0, values)


def _weighted_draws(rng: np.random.Generator, item: np.ndarray, pat: np.ndarray, item_count: np.ndarray,
                    base: np.ndarray, n_boot: int) -> np.ndarray:
    """Pattern weights of ``n_boot`` item resamples of one group of compressed units.

    ``item`` and ``pat`` give each unit's item index and pattern; item index ``i`` stands for
    ``item_count[i]`` items. A resample draws the group's items with replacement, which is a
    multinomial over the item types (the distinct multisets of patterns an item carries) with the
    types' item counts as frequencies: the same distribution as the uncompressed bootstrap. Types are
    ordered by their content, not by a hash, so the draws do not depend on the process or on the
    order in which an engine returned the rows.
    """
    its, item_inv = np.unique(item, return_inverse=True)
    n_items = int(item_count[its].sum())
    if len(its) == len(item):
        # One unit per item (grouped by criterion): resampling items is resampling patterns.
        return rng.multinomial(n_items, base / base.sum(), size=n_boot).astype(float)
    types, tinv = _item_types(item_inv.ravel(), pat, len(its), len(base))
    freq = np.bincount(tinv, weights=item_count[its].astype(float), minlength=types.shape[0])
    draws = rng.multinomial(n_items, freq / freq.sum(), size=n_boot).astype(float)
    return np.asarray(types.T.dot(draws.T).T)


def _item_types(item_inv: np.ndarray, pat: np.ndarray, n_items: int, n_pat: int):
    """The distinct multisets of patterns the items carry (one sparse row per type), and each item's type.

    Types are ordered by their content (the bytes of the row), never by ``hash``: Python randomises the
    hash of bytes per process, which made the draws depend on the process.
    """
    from scipy import sparse  # here, not at import: a CLI run of the point estimates never needs scipy

    A = sparse.csr_matrix((np.ones(len(pat)), (item_inv, pat)), shape=(n_items, n_pat))
    A.sum_duplicates()
    A.sort_indices()
    key = np.empty(n_items, dtype=object)
    key[:] = [A.indices[A.indptr[i]:A.indptr[i + 1]].astype(np.int64).tobytes() + b"|"
              + A.data[A.indptr[i]:A.indptr[i + 1]].tobytes() for i in range(n_items)]
    _, tfirst, tinv = np.unique(key, return_index=True, return_inverse=True)
    return A[tfirst], tinv.ravel()


def _draw_items(rng: np.random.Generator, item_type: np.ndarray, types, n_boot: int) -> np.ndarray:
    """Pattern weights of ``n_boot`` item resamples, drawing item indices with replacement.

    The same distribution as a multinomial over item types (each resample is ``n`` items drawn
    uniformly): :func:`evalcore.stats.bootstrap.resample_counts` counts the types drawn, in blocks of
    resamples so that memory stays near 32 MB (its numbers do not depend on the block size).
    """
    n = len(item_type)
    n_types = types.shape[0]
    out = np.empty((n_boot, types.shape[1]))
    block = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        counts = resample_counts(rng, n, b, classes=item_type, n_classes=n_types)
        out[start:start + b] = np.asarray(types.T.dot(counts.T).T)
    return out
