"""Score distributions and the use of the scale, judge against humans (issue 4, part 2).

Three questions, each with an item bootstrap behind every interval:

1. **Which scores does the judge give?** :func:`score_frequencies` counts every score of the
   criterion's scale per source (the humans pooled, and each judge), for bar plots.
2. **How much of the scale does it use, and is it skewed to the top?** :func:`scale_use` gives
   the number of distinct scores, the share of the scale's range spanned, the Shannon entropy,
   the share of the top score, and, against the humans on the same items, the top-share
   difference, the mean shift and the entropy difference. Stureborg et al. (2024, §3.2, Fig. 3)
   find that LLM judges use a narrow part of the scale; Hada et al. (2024, §4.2, Figs. 6-7) find
   that GPT-4 gives the top score far more often than native speakers, most of all in
   lower-resource and non-Latin-script languages: group by ``language`` to see it.
3. **Does it prefer round numbers?** :func:`round_number_bias` measures, on wide scales
   (1-10, 1-100), the mass on multiples of 5 and of 10 in excess of a smoothed reference
   (Stureborg et al. 2024, Fig. 3: peaks at 60, 70, 80, 90 and 75, 85, 95).

Conventions shared with :mod:`evalcore.pointwise.consistency` and the other bias modules
------------------------------------------------------------------------------
Summary functions return a tidy table with the columns ``section, judge, criterion, *by,
measure, estimate, ci_low, ci_high, n, flagged, note``:

- ``judge`` is the judge's name, or None on rows describing the humans (the reference);
- ``n`` is the number of items behind the estimate (the bootstrap resamples items);
- ``ci_low``/``ci_high`` are a percentile bootstrap interval at ``level`` (default 95%);
- ``flagged`` is True when the judge's effect is significant at ``1 - level`` (two-sided):
  the measure is one of the *tested* measures listed in each function and its interval
  excludes 0. Descriptive rows and rows describing the humans are never flagged;
- ``note`` says why an estimate or an interval is not defined (never a silent NaN).

The bootstrap resamples **items** with replacement within each cell (one criterion and one
combination of the ``by`` columns): an item carries all its ratings, by every annotator and
every sample of every judge, so judge-versus-human differences are paired. All resamples of a
cell are one ``(1 + n_boot, n_items)`` matrix of multinomial item weights (how often each item
was drawn), drawn in one vectorised call; each statistic is then a few matrix products (sparse
per-item histograms times the weights), with no Python loop over resamples. Each cell has its own random stream derived from ``seed`` and the
cell's key, so a cell's interval does not depend on which other cells exist.

Which ratings count: every sample of a judge counts as a rating (Stureborg et al. count all
64,000 predictions in Fig. 3); a human who rated an item several times counts once (the first
``sample``), as in :mod:`evalcore.pointwise.agreement`. The humans of a cell are pooled into one source.

The scale of a criterion is ``[min, max]`` of every score given on it by any rater (humans and
all judges) unless the caller passes ``scale``; its *top score* is that maximum.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import entr

from ..columns import HUMAN, JUDGE
from ..errors import DataError

SECTION = "score_distribution"
HUMANS = "humans"
VALUE_COLUMNS = ("measure", "estimate", "ci_low", "ci_high", "n", "flagged", "note")

SCALE_MEASURES = (
    "distinct_values", "range_share", "entropy", "top_share",
    "top_share_difference", "mean_shift", "entropy_difference",
)
SCALE_TESTED = ("top_share_difference", "mean_shift", "entropy_difference")
ROUND_MEASURES = (
    "round_share_5", "round_excess_5", "round_excess_5_difference",
    "round_share_10", "round_excess_10", "round_excess_10_difference",
)
ROUND_TESTED = ("round_excess_5", "round_excess_10", "round_excess_5_difference", "round_excess_10_difference")
ROUND_BASES = (5, 10)
ROUND_WINDOW = 2  # reference: the mean of the histogram at v-2, v-1, v+1, v+2
MIN_WIDE_LEVELS = 10
_LN2 = math.log(2.0)


# --------------------------------------------------------------------------- shared machinery
# (also used by evalcore.pointwise.consistency)


@dataclass(frozen=True)
class _Prep:
    """A ratings table reduced to integer codes, sorted into cells (criterion x by)."""

    by: list[str]
    judges: tuple[str, ...]  # chosen judges; source code 1 + index
    item: np.ndarray  # global item code per row
    item_names: np.ndarray
    source: np.ndarray  # 0 humans, 1 + j judge j
    rater: np.ndarray  # rater code per row
    sample: np.ndarray  # sample index per row (0 without a sample column)
    score: np.ndarray  # float
    row: np.ndarray  # position of the row in the caller's frame
    cell: np.ndarray  # cell code per row
    keys: list[tuple]  # (criterion, *by values) per cell
    order: np.ndarray  # rows sorted by cell
    bounds: np.ndarray  # cell c is order[bounds[c]:bounds[c+1]]
    scale: dict[str, tuple[float, float]]  # per criterion: (lowest, top) score

    def rows(self, c: int) -> np.ndarray:
        return self.order[self.bounds[c]:self.bounds[c + 1]]


def _check_options(n_boot: int, level: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError(f"the number of bootstrap resamples must be a whole number >= 0, not {n_boot!r}",
                        fix="use e.g. n_boot=1000, or 0 to skip the intervals")
    if not 0 < level < 1:
        raise DataError(f"the confidence level must be between 0 and 1, not {level!r}", fix="use e.g. 0.95")


def _base_seed(seed: int | np.random.Generator) -> int:
    """An integer root for the per-cell streams: the seed itself, or one draw from a Generator."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"seed must be a whole number >= 0 or a numpy Generator, not {seed!r}",
                        fix="use e.g. seed=0")
    return int(seed)


def _cell_rng(base: int, section: str, key: tuple) -> np.random.Generator:
    return np.random.default_rng([base, zlib.crc32(repr((section, key)).encode())])


def _item_weights(rng: np.random.Generator, n_items: int, n_boot: int) -> np.ndarray:
    """``(1 + n_boot, n_items)`` item weights: row 0 the data (all ones), then item resamples.

    Resampling ``n_items`` items with replacement gives each item a weight, how often it was
    picked: a multinomial draw ``Multinomial(n_items, 1/n_items, ..., 1/n_items)`` per resample.
    All resamples are drawn at once as ``n_boot x n_items`` uniform item indices counted with
    one ``bincount`` (the same distribution as ``Generator.multinomial``, about five times
    faster for a thousand items, since numpy's multinomial draws one binomial per item).
    """
    W = np.ones((1 + n_boot, n_items))
    if n_boot > 0 and n_items > 0:
        picks = rng.integers(0, n_items, size=(n_boot, n_items))
        picks += np.arange(n_boot)[:, None] * n_items
        W[1:] = np.bincount(picks.ravel(), minlength=n_boot * n_items).reshape(n_boot, n_items)
    return W


def _prepare(ratings: pd.DataFrame, *, by: Sequence[str], judges: Sequence[str] | None,
             scale: Mapping[str, tuple[float, float]] | None = None) -> _Prep:
    """Validate the inputs a summary function needs and reduce the table to codes."""
    if not isinstance(ratings, pd.DataFrame):
        raise DataError("expected a ratings table (a pandas DataFrame)", fix="load a validated ratings table")
    need = {"item_id", "rater", "rater_kind", "score"}
    missing = sorted(need - set(ratings.columns))
    if missing:
        raise DataError(f"the ratings table lacks the column '{missing[0]}'", column=missing[0],
                        fix="load a validated ratings table (item_id, rater, rater_kind, criterion, score)")
    if len(ratings) == 0:
        raise DataError("the ratings table has no rows", fix="load a table with at least one judgment")
    if isinstance(by, str):
        by = [by]
    by = [b for b in dict.fromkeys(by) if b != "criterion"]
    fixed = {"item_id", "rater", "rater_kind", "score", "sample"}
    for b in by:
        if b in fixed:
            raise DataError(f"cannot group by '{b}': it is not a segment of the items", column=b,
                            fix="group by a column that describes the item, such as language or task")
        if b not in ratings.columns:
            segs = [c for c in ratings.columns if c not in fixed | {"criterion"}]
            raise DataError(f"cannot group by '{b}': the table has no such column", column=b,
                            fix="group by one of: " + (", ".join(map(str, segs)) or "(no segment columns)"))
    df = ratings
    kind = df["rater_kind"].astype("string").str.strip().str.lower()
    bad = ~kind.isin([HUMAN, JUDGE]).fillna(False)
    if bad.any():
        v = df["rater_kind"][bad].iloc[0]
        raise DataError(f"rater_kind must be 'human' or 'judge' but is '{v}'", column="rater_kind",
                        fix="validate the table first (evalcore.data.schema.validate)")
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(score).all():
        raise DataError("some scores are empty or not numbers", column="score",
                        fix="validate the table first (evalcore.data.schema.validate): it drops empty scores")
    is_h = (kind == HUMAN).to_numpy(dtype=bool)
    rater_code, rater_names = pd.factorize(df["rater"].astype("string"), sort=True)
    all_judges = sorted(set(map(str, df.loc[~is_h, "rater"].astype("string").unique())))
    chosen = all_judges if judges is None else list(dict.fromkeys(map(str, [judges] if isinstance(judges, str) else judges)))
    unknown = [j for j in chosen if j not in all_judges]
    if unknown:
        raise DataError(f"there is no judge named '{unknown[0]}'",
                        fix="choose from: " + (", ".join(all_judges) or "(the table has no judge rows)"))
    item_code, item_names = pd.factorize(df["item_id"])
    if (item_code < 0).any():
        raise DataError("some rows have no item_id", column="item_id",
                        fix="validate the table first (evalcore.data.schema.validate)")
    crit = df["criterion"].astype("string").fillna("overall") if "criterion" in df.columns else \
        pd.Series("overall", index=df.index, dtype="string")
    # `by` columns describe the item: the same value on every row of an item.
    n_items = len(item_names)
    first_row = np.empty(n_items, dtype=np.int64)
    first_row[item_code[::-1]] = np.arange(len(df))[::-1]
    for b in by:
        codes, _ = pd.factorize(df[b], use_na_sentinel=False)
        diff = codes != codes[first_row[item_code]]
        if diff.any():
            item = item_names[item_code[int(np.flatnonzero(diff)[0])]]
            raise DataError(
                f"column '{b}' has different values within one item ('{item}')", column=b,
                fix=f"group by a column that describes the item; for prompt or temperature variants use "
                    f"evalcore.pointwise.consistency.variant_agreement(variant_column='{b}'), or keep one variant")
    # Scale per criterion: every rater's scores, or the caller's.
    lo_hi = pd.DataFrame({"c": crit.to_numpy(), "s": score}).groupby("c", sort=True)["s"].agg(["min", "max"])
    scales = {str(c): (float(r["min"]), float(r["max"])) for c, r in lo_hi.iterrows()}
    for c, rng_ in (scale or {}).items():
        c = str(c)
        try:
            lo, hi = (float(rng_[0]), float(rng_[1]))
        except (TypeError, ValueError, IndexError):
            raise DataError(f"the scale of '{c}' must be a (lowest, highest) pair of numbers, not {rng_!r}",
                            fix="pass e.g. scale={'" + c + "': (1, 100)}") from None
        if not lo < hi:
            raise DataError(f"the scale of '{c}' must have lowest < highest, not {rng_!r}",
                            fix="pass e.g. scale={'" + c + "': (1, 100)}")
        if c in scales and (scales[c][0] < lo or scales[c][1] > hi):
            raise DataError(f"scores of '{c}' run from {scales[c][0]:g} to {scales[c][1]:g}, outside the "
                            f"scale {lo:g}-{hi:g} you gave", column="score",
                            fix="widen the scale, or remove the out-of-range scores")
        if c in scales:
            scales[c] = (lo, hi)
    # Rows kept: humans, and the chosen judges.
    jmap = {j: i + 1 for i, j in enumerate(chosen)}
    rname = np.asarray(rater_names.astype(str), dtype=object)
    src_of_rater = np.array([jmap.get(r, -1) for r in rname], dtype=np.int64)
    source = np.where(is_h, 0, src_of_rater[rater_code])
    sample = (pd.to_numeric(df["sample"], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
              if "sample" in df.columns else np.zeros(len(df), dtype=np.int64))
    keep = source >= 0
    if is_h.any() and "sample" in df.columns and len(np.unique(sample[is_h])) > 1:
        # A human who rated an item several times counts once: the first sample.
        key = pd.DataFrame({"i": item_code, "c": crit.to_numpy(), "r": rater_code, "s": sample})
        first = key.groupby(["i", "c", "r"], sort=False)["s"].transform("min").to_numpy()
        keep &= ~is_h | (sample == first)
    idx = np.flatnonzero(keep)
    key_df = pd.DataFrame({"criterion": crit.to_numpy()[idx]})
    for b in by:
        key_df[b] = df[b].to_numpy()[idx]
    grouped = key_df.groupby(list(key_df.columns), sort=True, dropna=False)
    cell = grouped.ngroup().to_numpy().astype(np.int64)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    order = np.argsort(cell, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=len(keys)))])
    return _Prep(by=by, judges=tuple(chosen), item=item_code[idx], item_names=np.asarray(item_names),
                 source=source[idx], rater=rater_code[idx], sample=sample[idx], score=score[idx],
                 row=idx, cell=cell, keys=keys, order=order, bounds=bounds, scale=scales)


def _percentile(boot: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval of each row of ``boot`` (rows x resamples) over its finite values.

    numpy's default ('linear') quantile, computed from one sort (NaN sorts last) so that
    thousands of rows cost one call. Rows where fewer than half the resamples (or fewer
    than 10) are finite get no interval; the third result marks them.
    """
    M, B = boot.shape
    if B == 0:
        nan = np.full(M, np.nan)
        return nan, nan.copy(), np.zeros(M, dtype=bool)
    ok = np.isfinite(boot).sum(axis=1)
    srt = np.sort(np.where(np.isfinite(boot), boot, np.nan), axis=1)
    a = (1.0 - level) / 2.0

    def q(p: float) -> np.ndarray:
        last = np.maximum(ok - 1, 0)
        pos = p * last
        i = np.floor(pos).astype(np.int64)
        j = np.minimum(i + 1, last)
        lo_v = np.take_along_axis(srt, i[:, None], axis=1)[:, 0]
        hi_v = np.take_along_axis(srt, j[:, None], axis=1)[:, 0]
        return lo_v + (pos - i) * (hi_v - lo_v)

    enough = ok >= max(10, 0.5 * B)
    lo, hi = q(a), q(1 - a)
    return np.where(enough, lo, np.nan), np.where(enough, hi, np.nan), ~enough


class _Table:
    """Collects result rows with their bootstrap replicates, then adds intervals and flags."""

    def __init__(self, section: str, by: Sequence[str], n_boot: int, level: float) -> None:
        self.section, self.by, self.n_boot, self.level = section, list(by), n_boot, level
        self.recs: list[dict] = []
        self.boot: list[np.ndarray] = []

    def add(self, key: tuple, judge: str | None, measure: str, values: np.ndarray | float, n: int, *,
            tested: bool = False, undefined: str = "", note: str = "") -> None:
        """One row. ``values`` holds the estimate then the ``n_boot`` replicates (or is a scalar
        NaN for an estimate that is not defined, with ``undefined`` saying why)."""
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        if arr.size == 1 and self.n_boot > 0:
            arr = np.concatenate([arr, np.full(self.n_boot, np.nan)])
        est = float(arr[0])
        notes = [note] if note else []
        if not np.isfinite(est):
            est = np.nan
            notes.insert(0, undefined or "not defined")
        self.recs.append({"judge": judge, "criterion": key[0], **dict(zip(self.by, key[1:])),
                          "measure": measure, "estimate": est, "n": int(n), "_tested": tested,
                          "_notes": notes})
        self.boot.append(arr[1:])

    def frame(self) -> pd.DataFrame:
        cols = ["section", "judge", "criterion", *self.by, *VALUE_COLUMNS]
        if not self.recs:
            return pd.DataFrame(columns=cols)
        boot = np.vstack(self.boot) if self.n_boot > 0 else np.empty((len(self.recs), 0))
        lo, hi, sparse_ci = _percentile(boot, self.level)
        rows = []
        for r, l, h, sp in zip(self.recs, lo, hi, sparse_ci):
            notes = list(r.pop("_notes"))
            tested = r.pop("_tested")
            defined = np.isfinite(r["estimate"])
            if defined and self.n_boot == 0:
                notes.append("no interval (n_boot=0)" + (", so not tested" if tested else ""))
            elif defined and sp:
                notes.append("no interval: the measure is undefined in most resamples"
                             + (", so not tested" if tested else ""))
            l, h = (float(l), float(h)) if defined else (np.nan, np.nan)
            flagged = bool(tested and r["judge"] is not None and np.isfinite(l) and np.isfinite(h)
                           and (l > 0 or h < 0))
            rows.append({"section": self.section, **r, "ci_low": l, "ci_high": h, "flagged": flagged,
                         "note": "; ".join(notes)})
        out = pd.DataFrame(rows, columns=cols)
        out["judge"] = out["judge"].astype(object).where(out["judge"].notna(), None)
        out["flagged"] = out["flagged"].astype(bool)
        out["n"] = out["n"].astype(np.int64)
        return out


def _source_name(prep: _Prep, s: int) -> str | None:
    return None if s == 0 else prep.judges[s - 1]


def _cell_items(prep: _Prep, rows: np.ndarray) -> tuple[np.ndarray, int]:
    loc, uniq = pd.factorize(prep.item[rows])
    return loc.astype(np.int64), len(uniq)


def _hist(item_loc: np.ndarray, code: np.ndarray, n_items: int, q: int) -> sparse.csr_matrix:
    """Per-item counts of each category, ``(n_items, q)`` sparse."""
    return sparse.csr_matrix((np.ones(len(code)), (item_loc, code)), shape=(n_items, q))


def _wsum(WT: np.ndarray, H: sparse.csr_matrix) -> np.ndarray:
    """``W @ H`` from ``WT = W.T`` (contiguous, ``(n_items, R)``) and sparse ``H`` ``(n_items, q)``: ``(R, q)``."""
    return np.asarray(H.T @ WT).T


def _on_items(WT: np.ndarray, src: dict, common: np.ndarray) -> np.ndarray:
    """The source's bootstrap histograms restricted to the items in ``common`` (0/1 per item)."""
    if np.array_equal(common > 0, src["n"] > 0):
        return src["hist"]
    return _wsum(WT, sparse.diags(common) @ src["H"])


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(a / b, dtype=float)
    out[~np.isfinite(out)] = np.nan
    return out


def _entropy_bits(hist: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of each row's distribution: :math:`-\\sum_v p_v \\log_2 p_v`."""
    tot = hist.sum(axis=-1)
    p = hist / np.where(tot > 0, tot, 1.0)[..., None]
    out = entr(p).sum(axis=-1) / _LN2
    out[tot <= 0] = np.nan
    return out


# --------------------------------------------------------------------------- score frequencies


def score_frequencies(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
) -> pd.DataFrame:
    """How often each score is given, by the humans and by each judge (for bar plots).

    Stureborg et al. (2024, Fig. 3) plot these frequencies for a 1-100 scale; Hada et al.
    (2024, Figs. 6-7) for 0-2 scales, judge against native speakers.

    Parameters
    ----------
    ratings
        A validated ratings table (``item_id, rater, rater_kind, criterion, score``, optional
        ``sample`` and segment columns).
    by
        Per-item segment columns to split by (e.g. ``["language"]``); the criterion is always
        a grouping.
    judges
        Judges to include (default: all).

    Returns
    -------
    pandas.DataFrame
        Columns ``criterion, *by, source, score, count, share``: ``source`` is ``"humans"``
        (all annotators pooled) or a judge's name; ``share = count / sum(count)`` within
        (criterion, group, source). Every score given on the criterion by anyone appears for
        every source, with a zero count where unused, so that bars line up. Every sample of a
        judge counts; a human counts once per item.
    """
    prep = _prepare(ratings, by=by, judges=judges)
    by = prep.by
    crit_of = np.array([k[0] for k in prep.keys], dtype=object)[prep.cell]
    frames = []
    for crit in sorted(set(k[0] for k in prep.keys)):
        rows = np.flatnonzero(crit_of == crit)
        values, vcode = np.unique(prep.score[rows], return_inverse=True)
        q = len(values)
        cells, cell_loc = np.unique(prep.cell[rows], return_inverse=True)
        S = 1 + len(prep.judges)
        counts = np.bincount((cell_loc * S + prep.source[rows]) * q + vcode,
                             minlength=len(cells) * S * q).reshape(len(cells), S, q)
        present = counts.sum(axis=-1) > 0
        ci, si = np.nonzero(present)
        n = len(ci)
        out = pd.DataFrame({"criterion": np.repeat(crit, n * q)})
        for j, b in enumerate(by):
            out[b] = np.repeat(np.array([prep.keys[c][1 + j] for c in cells[ci]], dtype=object), q)
        names = np.array([HUMANS, *prep.judges], dtype=object)
        out["source"] = np.repeat(names[si], q)
        out["score"] = np.tile(values, n)
        cnt = counts[ci, si].ravel()
        out["count"] = cnt.astype(np.int64)
        tot = np.repeat(counts[ci, si].sum(axis=-1), q)
        out["share"] = cnt / tot
        frames.append(out)
    cols = ["criterion", *by, "source", "score", "count", "share"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


# --------------------------------------------------------------------------- scale use


def scale_use(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    scale: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Use of the scale and skew toward the top score, judge against humans, with item-bootstrap CIs.

    Per cell (a criterion, and a combination of the ``by`` columns, e.g. a language) and per
    source (``judge`` None: the humans pooled; otherwise one judge, all its samples):

    - ``distinct_values``: the number of distinct scores the source gave (Stureborg et al.
      2024 call it the effective granularity *G*, Table 2).
    - ``range_share``: :math:`(\\max s - \\min s)/(\\text{top} - \\text{lowest})`, the share of
      the criterion's scale spanned by the source's scores (Stureborg et al. 2024, Fig. 3:
      "the full range is not utilized").
    - ``entropy``: :math:`H = -\\sum_v p_v \\log_2 p_v` in bits, :math:`p_v` the share of the
      source's ratings equal to *v* (the plug-in estimate, as ``scipy.stats.entropy(counts,
      base=2)``; it is biased low by about :math:`(k-1)/(2N\\ln 2)` bits for *k* used values and
      *N* ratings).
    - ``top_share``: share of the source's ratings equal to the scale's top score.

    Per judge, against the humans **on the items both rated in the cell** (ratio estimators
    over ratings: every judge sample and every annotator's rating counts once):

    - ``top_share_difference``: :math:`\\hat p^{J}_{top} - \\hat p^{H}_{top}`. Positive: the
      judge gives the top score more often than the humans did on the same items, Hada et al.'s
      (2024, §4.2) bias toward high scores.
    - ``mean_shift``: :math:`\\bar s^{J} - \\bar s^{H}`, the judge's mean score minus the humans'
      mean score on the same items. Positive: the judge is more lenient. With ``by=["language"]``
      this is the judge's leniency per language, which Hada et al. find strongest in
      lower-resource and non-Latin-script languages.
    - ``entropy_difference``: :math:`H^{J} - H^{H}` on the same items. Negative: the judge
      spreads its scores less than the humans (uses less of the scale).

    **Flag rule.** ``flagged`` is True for the three difference measures above when their
    bootstrap interval excludes 0 (a two-sided test at ``1 - level``, 0.05 by default): the
    judge differs from the humans. The per-source descriptive measures are never flagged.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by
        Per-item segment columns (constant within an item), e.g. ``["language"]``.
    judges
        Judges to compare with the humans (default: all).
    n_boot
        Item-bootstrap resamples per cell; 0 gives no intervals and no flags.
    seed
        Integer seed, or a ``numpy.random.Generator`` (one integer is drawn from it).
    level
        Confidence level of the percentile intervals.
    scale
        ``{criterion: (lowest, top)}`` to override the scale read from the data (the lowest and
        highest score any rater gave). Scores outside it raise :class:`DataError`.

    Returns
    -------
    pandas.DataFrame
        ``section`` ('score_distribution'), ``judge``, ``criterion``, ``*by``, ``measure``,
        ``estimate``, ``ci_low``, ``ci_high``, ``n`` (items the source rated in the cell; for
        differences, the items both rated), ``flagged``, ``note``.

    Raises
    ------
    DataError
        Unknown judge or grouping column, a ``by`` column that varies within an item, a bad
        ``scale``, ``n_boot < 0`` or a ``level`` outside (0, 1).

    References
    ----------
    Stureborg, Alikaniotis & Suhara (2024), "Large language models are inconsistent and biased
    evaluators", §3.2 and Fig. 3. Hada et al. (2024), "Are large language model-based evaluators
    the solution to scaling up multilingual evaluation?", §4.2 and Figs. 6-7.
    """
    _check_options(n_boot, level)
    prep = _prepare(ratings, by=by, judges=judges, scale=scale)
    base = _base_seed(seed)
    table = _Table(SECTION, prep.by, n_boot, level)
    S = 1 + len(prep.judges)
    for c, key in enumerate(prep.keys):
        rows = prep.rows(c)
        lo, top = prep.scale[str(key[0])]
        span = top - lo
        item_loc, n_items = _cell_items(prep, rows)
        values, vcode = np.unique(prep.score[rows], return_inverse=True)
        W = _item_weights(_cell_rng(base, SECTION, key), n_items, n_boot)
        WT = np.ascontiguousarray(W.T)
        src = prep.source[rows]
        per: dict[int, dict] = {}
        for s in range(S):
            m = src == s
            if not m.any():
                continue
            # Only the values this source gave: a resample cannot give others.
            cols, vloc = np.unique(vcode[m], return_inverse=True)
            H = _hist(item_loc[m], vloc, n_items, len(cols))
            vals = values[cols]
            n_i = np.asarray(H.sum(axis=1)).ravel()
            sum_i = H @ vals
            top_i = H @ (vals == top).astype(float)
            hist = _wsum(WT, H)
            per[s] = {"H": H, "n": n_i, "sum": sum_i, "top": top_i, "hist": hist}
            used = hist > 0
            judge = _source_name(prep, s)
            n_src = int((n_i > 0).sum())
            table.add(key, judge, "distinct_values", used.sum(axis=1).astype(float), n_src)
            first = np.argmax(used, axis=1)
            last = len(cols) - 1 - np.argmax(used[:, ::-1], axis=1)
            rng_share = (vals[last] - vals[first]) / span if span > 0 else np.nan
            table.add(key, judge, "range_share", rng_share, n_src,
                      undefined=f"not defined: every score of '{key[0]}' is {lo:g}, so the scale has no range")
            table.add(key, judge, "entropy", _entropy_bits(hist), n_src)
            table.add(key, judge, "top_share", _ratio(hist @ (vals == top), hist.sum(axis=1)), n_src)
        if 0 not in per:
            why = "not defined: no human rated an item in this group"
            for s in per:
                for meas in SCALE_TESTED:
                    table.add(key, _source_name(prep, s), meas, np.nan, 0, tested=True, undefined=why)
            continue
        h = per[0]
        for s in range(1, S):
            if s not in per:
                continue
            j = per[s]
            judge = _source_name(prep, s)
            common = ((j["n"] > 0) & (h["n"] > 0)).astype(float)
            n_common = int(common.sum())
            if n_common == 0:
                why = "not defined: no item in this group was rated by both the judge and humans"
                for meas in SCALE_TESTED:
                    table.add(key, judge, meas, np.nan, 0, tested=True, undefined=why)
                continue
            jn, hn = W @ (j["n"] * common), W @ (h["n"] * common)
            tsd = _ratio(W @ (j["top"] * common), jn) - _ratio(W @ (h["top"] * common), hn)
            table.add(key, judge, "top_share_difference", tsd, n_common, tested=True)
            shift = _ratio(W @ (j["sum"] * common), jn) - _ratio(W @ (h["sum"] * common), hn)
            table.add(key, judge, "mean_shift", shift, n_common, tested=True)
            ent = _entropy_bits(_on_items(WT, j, common)) - _entropy_bits(_on_items(WT, h, common))
            table.add(key, judge, "entropy_difference", ent, n_common, tested=True)
    return table.frame()


# --------------------------------------------------------------------------- round numbers


def _round_weights(lo: int, hi: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Indicator of interior multiples of ``base`` and the excess weights over the grid lo..hi.

    ``c[v] = 1`` at each multiple ``v`` of ``base`` with ``lo < v < hi`` and ``-1/k`` at each of
    its ``k`` neighbours ``v-2, v-1, v+1, v+2`` inside the grid, so that
    ``p @ c = sum_v (p_v - r_v)`` with ``r_v`` the mean of ``p`` over those neighbours.
    """
    grid = np.arange(lo, hi + 1)
    ind = np.zeros(len(grid))
    c = np.zeros(len(grid))
    for v in grid[(grid % base == 0) & (grid > lo) & (grid < hi)]:
        ind[v - lo] = 1.0
        c[v - lo] += 1.0
        nb = [u for u in range(v - ROUND_WINDOW, v + ROUND_WINDOW + 1) if u != v and lo <= u <= hi]
        for u in nb:
            c[u - lo] -= 1.0 / len(nb)
    return ind, c


def round_excess(pmf: Sequence[float] | np.ndarray, *, lowest: int, base: int = 5) -> float:
    """The round-number excess of one probability mass function over the whole-number grid.

    ``pmf[k]`` is the probability of score ``lowest + k``. This is the functional that
    :func:`round_number_bias` estimates, applied to a known distribution (e.g. the generating
    distribution of a simulation): :math:`\\sum_{v} (p_v - r_v)` over multiples *v* of ``base``
    strictly inside the grid, :math:`r_v` the mean of :math:`p` at :math:`v\\pm1, v\\pm2`.
    """
    p = np.asarray(pmf, dtype=float)
    _, c = _round_weights(int(lowest), int(lowest) + len(p) - 1, int(base))
    return float(p @ c / p.sum())


def round_number_bias(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    scale: Mapping[str, tuple[float, float]] | None = None,
    min_levels: int = MIN_WIDE_LEVELS,
) -> pd.DataFrame:
    """Round-number bias on wide scales: excess mass on multiples of 5 and of 10.

    Stureborg et al. (2024, §3.2, Fig. 3) find that GPT-4 asked for a 1-100 score gives 90, 95,
    80, 85, ... far more often than their neighbours. This measures that against a *smoothed
    reference*: what the source's own histogram puts near each round number.

    **Definition.** Let :math:`p_v` be the share of the source's ratings equal to *v* on the
    whole-number grid of the scale, and :math:`R_m` the multiples of *m* strictly inside the scale
    (the lowest and top scores are left out: mass there is floor or top-score bias, which
    :func:`scale_use` measures). The reference at *v* is the mean of the histogram at its four
    nearest neighbours, :math:`r_v = (p_{v-2}+p_{v-1}+p_{v+1}+p_{v+2})/4` (only those inside the
    scale at its edges). Then

    - ``round_share_m`` :math:`= \\sum_{v\\in R_m} p_v` (descriptive);
    - ``round_excess_m`` :math:`= \\sum_{v\\in R_m} (p_v - r_v)`, for *m* = 5 (all multiples of 5,
      10s included) and *m* = 10;
    - ``round_excess_m_difference``: the judge's excess minus the humans' on the items both rated.

    **Why this reference.** (i) Leaving the round numbers out of their own reference keeps the
    spikes from inflating it. (ii) A symmetric average is exact for a histogram that is locally
    linear, and its curvature error :math:`\\approx -\\tfrac54 p''(v)` sums to about zero over
    multiples spaced 5 apart across the support (the integral of :math:`p''` vanishes), so a
    smooth distribution, however skewed, has excess near 0. (iii) Every whole number is within
    2 of a multiple of 5, and within 2 of a multiple of 10 or next to it: if a share
    :math:`\\rho` of ratings is moved to the nearest multiple of *m* (heaping), the neighbours
    lose that share and the excess is :math:`\\approx\\rho`, the heaped share itself.
    (iv) The statistic is linear in the histogram, :math:`\\sum_v c_v p_v`, i.e. a mean of a
    per-rating contribution, so the item bootstrap is well behaved. A fitted parametric
    reference (beta-binomial) was not used: LLM score distributions are multi-modal and
    truncated (Fig. 3), and a misfit would show up as false "excess".

    **Flag rule (two-sided, at 1 - level).** ``round_excess_5``, ``round_excess_10`` of a judge:
    flagged when the bootstrap interval excludes 0 (the judge heaps on, or avoids, round
    numbers). ``round_excess_*_difference``: flagged when its interval excludes 0 (the judge's
    round-number bias differs from the humans'). Rows for the humans (``judge`` None) are the
    reference and are never flagged; read their interval.

    Criteria whose scale has fewer than ``min_levels`` whole-number values (e.g. 1-5) get one
    row per measure with ``judge`` None and a note, and no estimate. A source with scores that
    are not whole numbers (e.g. averages of samples) gets a note instead of an estimate.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by
        Per-item segment columns.
    judges
        Judges to include (default: all).
    n_boot, seed, level
        Item bootstrap, as in :func:`scale_use`.
    scale
        ``{criterion: (lowest, top)}``; pass it when the data do not reach the scale's ends
        (e.g. ``{"overall": (1, 100)}``): the grid and the excluded endpoints depend on it.
    min_levels
        Smallest number of whole-number values for a scale to count as wide.

    Returns
    -------
    pandas.DataFrame
        The common layout (``section`` 'score_distribution'), measures as above; ``n`` is the
        number of items.

    References
    ----------
    Stureborg et al. (2024), §3.2 and Fig. 3; Thomas & Morwitz (2009) and Honda et al. (2022)
    on round-number bias in human numerical judgments.
    """
    _check_options(n_boot, level)
    prep = _prepare(ratings, by=by, judges=judges, scale=scale)
    base = _base_seed(seed)
    table = _Table(SECTION, prep.by, n_boot, level)
    S = 1 + len(prep.judges)
    for c, key in enumerate(prep.keys):
        rows = prep.rows(c)
        lo_f, hi_f = prep.scale[str(key[0])]
        lo, hi = int(math.ceil(lo_f)), int(math.floor(hi_f))
        levels = hi - lo + 1
        if levels < min_levels:
            why = (f"not defined: the scale of '{key[0]}' ({lo_f:g}-{hi_f:g}) has {max(levels, 0)} whole-number "
                   f"values; round-number bias needs a wide scale with {min_levels} or more (e.g. 1-10, 1-100)")
            for meas in ROUND_MEASURES:
                if not meas.endswith("difference"):
                    table.add(key, None, meas, np.nan, 0, undefined=why)
            continue
        weights = {m: _round_weights(lo, hi, m) for m in ROUND_BASES}
        item_loc, n_items = _cell_items(prep, rows)
        W = _item_weights(_cell_rng(base, "round_number_bias", key), n_items, n_boot)
        src = prep.source[rows]
        score = prep.score[rows]
        per: dict[int, dict | str] = {}
        for s in range(S):
            m = src == s
            if not m.any():
                continue
            judge = _source_name(prep, s)
            n_src = len(np.unique(item_loc[m]))
            sc = score[m]
            if not np.all(sc == np.round(sc)):
                who = "the humans give" if s == 0 else f"'{judge}' gives"
                why = (f"not defined: {who} scores that are not whole numbers (e.g. averages of samples), "
                       "so round numbers cannot be told apart")
                per[s] = why
                for meas in ROUND_MEASURES:
                    if not meas.endswith("difference"):
                        table.add(key, judge, meas, np.nan, n_src, tested=s > 0, undefined=why)
                continue
            H = _hist(item_loc[m], (sc - lo).astype(np.int64), n_items, levels)
            n_i = np.asarray(H.sum(axis=1)).ravel()
            stats = {"n": n_i}
            for mb, (ind, cw) in weights.items():
                stats[f"share_{mb}"] = H @ ind
                stats[f"excess_{mb}"] = H @ cw
            per[s] = stats
            tot = W @ n_i
            for mb, (ind, _) in weights.items():
                none_inside = not ind.any()
                why = (f"not defined: the scale {lo}-{hi} has no multiple of {mb} strictly inside it "
                       "(the lowest and top scores are left out)")
                share = np.nan if none_inside else _ratio(W @ stats[f"share_{mb}"], tot)
                exc = np.nan if none_inside else _ratio(W @ stats[f"excess_{mb}"], tot)
                table.add(key, judge, f"round_share_{mb}", share, n_src, undefined=why)
                table.add(key, judge, f"round_excess_{mb}", exc, n_src, tested=s > 0, undefined=why)
        h = per.get(0)
        for s in range(1, S):
            if s not in per:
                continue
            judge = _source_name(prep, s)
            j = per[s]
            for mb, (ind, _) in weights.items():
                meas = f"round_excess_{mb}_difference"
                if isinstance(j, str):
                    table.add(key, judge, meas, np.nan, 0, tested=True, undefined=j)
                    continue
                if h is None:
                    table.add(key, judge, meas, np.nan, 0, tested=True,
                              undefined="not defined: no human rated an item in this group")
                    continue
                if isinstance(h, str):
                    table.add(key, judge, meas, np.nan, 0, tested=True, undefined=h)
                    continue
                common = ((j["n"] > 0) & (h["n"] > 0)).astype(float)
                if not ind.any() or not common.any():
                    why = (f"not defined: the scale {lo}-{hi} has no multiple of {mb} strictly inside it"
                           if not ind.any() else
                           "not defined: no item in this group was rated by both the judge and humans")
                    table.add(key, judge, meas, np.nan, int(common.sum()), tested=True, undefined=why)
                    continue
                diff = (_ratio(W @ (j[f"excess_{mb}"] * common), W @ (j["n"] * common))
                        - _ratio(W @ (h[f"excess_{mb}"] * common), W @ (h["n"] * common)))
                table.add(key, judge, meas, diff, int(common.sum()), tested=True)
    out = table.frame()
    order = {m: i for i, m in enumerate(ROUND_MEASURES)}
    if len(out):
        keys = ["criterion", *prep.by]
        out["_o"] = out["measure"].map(order)
        out["_j"] = out["judge"].map(lambda j: "" if j is None else "\x01" + j)
        out = out.sort_values([*keys, "_j", "_o"], kind="stable", na_position="last") \
            .drop(columns=["_o", "_j"]).reset_index(drop=True)
    return out
