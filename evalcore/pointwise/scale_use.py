"""Score distributions and the use of the scale, judge against humans.

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
   (1-10, 1-100), the mass on multiples of 5 and of 10 in excess of a local reference, over the
   inner scores of the scale (its lowest and top score left out), and tests the judge's excess
   against the humans' (Stureborg et al. 2024, Fig. 3: peaks at 60, 70, 80, 90 and 75, 85, 95).

On a nominal criterion (categories without an order, :mod:`evalcore.data.scales`), question 2 becomes
"which categories does the judge give, against the humans on the same items?" (``category_share``,
``category_share_difference``: a shifted label prior), and question 3 does not apply.

Conventions shared with :mod:`evalcore.pointwise.consistency` and the other bias modules
-----------------------------------------------------------------------------------------
Summary functions return a tidy table with the columns ``section, judge, criterion, *by,
measure, estimate, ci_low, ci_high, n, test, p_value, q_value, flagged, opposite, note``
(:data:`evalcore.pointwise.sections.RESULT_COLUMNS`):

- ``judge`` is the judge's name, or None on rows describing the humans (the reference);
- ``n`` is the number of items behind the estimate (the bootstrap resamples items);
- ``ci_low``/``ci_high`` are a percentile bootstrap interval at ``level`` (default 95%);
- ``test`` is the direction of a tested measure that means harm
  (:data:`evalcore.pointwise.sections.TESTS`), ``p_value`` its bootstrap p-value
  (:func:`evalcore.stats.z_p_value`), ``q_value`` the Benjamini-Hochberg q-value across the
  tested rows of the table (of the whole report in :func:`evalcore.pointwise.bias_report.bias_report`);
  ``flagged`` is q <= 0.05 with the estimate on the side of harm, ``opposite`` a one-sided test
  significant the other way (:func:`evalcore.stats.apply_fdr`). Descriptive rows and rows
  describing the humans are never tested;
- ``note`` says why an estimate or an interval is not defined (never a silent NaN).

The bootstrap resamples **items** with replacement within each cell (one criterion and one
combination of the ``by`` columns; :mod:`evalcore.pointwise.cells`): an item carries all its
ratings, by every annotator and every sample of every judge, so judge-versus-human differences
are paired. All resamples of a cell are one ``(1 + n_boot, n_items)`` matrix of multinomial item
weights (how often each item was drawn, :func:`evalcore.stats.item_weights`); each statistic is
then a few matrix products (sparse per-item histograms times the weights), with no Python loop
over resamples. Each cell has its own random stream derived from ``seed`` and the cell's key
(:func:`evalcore.stats.cell_rng`), so a cell's interval does not depend on which other cells
exist.

Which ratings count: every sample of a judge counts as a rating (Stureborg et al. count all
64,000 predictions in Fig. 3); a human who rated an item several times counts once (the first
``sample``), as in :mod:`evalcore.pointwise.agreement`. The humans of a cell are pooled into one source.

The scale of a criterion is ``[min, max]`` of every score given on it by any rater (humans and
all judges) unless the caller passes ``scale``; its *top score* is that maximum.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import entr

from ..arguments import takes_table
from ..columns import HUMANS_LABEL, RATINGS
from ..data.scales import CATEGORY, NOMINAL, SCALE, has_categories
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, root_seed
from ..stats.numeric import safe_div
from .cells import CellRatings, ScaleSplit, cell_items, cell_ratings, split_scales
from .coding import check_by
from .sections import SectionTable, category_untested, join_tables, not_applicable

SECTION = "score_distribution"

SCALE_MEASURES = (
    "distinct_values", "range_share", "entropy", "top_share",
    "top_share_difference", "mean_shift", "entropy_difference",
)
SCALE_TESTED = ("top_share_difference", "mean_shift", "entropy_difference")
ROUND_MEASURES = (
    "round_share_5", "round_excess_5", "round_excess_5_difference",
    "round_share_10", "round_excess_10", "round_excess_10_difference",
)
ROUND_TESTED = ("round_excess_5_difference", "round_excess_10_difference")
ROUND_BASES = (5, 10)
ROUND_WINDOW = 2  # reference: the mean of the histogram at v-2, v-1, v+1, v+2
MIN_WIDE_LEVELS = 10
_LN2 = math.log(2.0)


# --------------------------------------------------------------------------- shared helpers


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


def _entropy_bits(hist: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of each row's distribution: :math:`-\\sum_v p_v \\log_2 p_v`."""
    tot = hist.sum(axis=-1)
    p = hist / np.where(tot > 0, tot, 1.0)[..., None]
    out = entr(p).sum(axis=-1) / _LN2
    out[tot <= 0] = np.nan
    return out


# --------------------------------------------------------------------------- stray scores

#: A score is *stray* when it lies more than this many widths of the bulk (the middle half of the criterion's
#: scores, counted at least 1 wide) beyond the bulk: 1e6 on a 0-100 scale, 50 on a 1-5 scale.
STRAY_WIDTHS = 10


def stray_scores(ratings: pd.DataFrame) -> dict[str, str]:
    """Per criterion, a note naming the scores far outside the bulk of its scores (a typo such as 1e6 on a
    0-100 scale), or nothing when there is none.

    The analyses use every score as given, so a stray score sets the top (or bottom) of the scale read from
    the data; the note says which score it is, whose, and on which item, so that it can be corrected.
    Missing and non-numeric scores are not stray (validation reports them).

    >>> df = pd.DataFrame({"item_id": range(6), "rater": ["h"] * 5 + ["gpt"], "criterion": "fluency",
    ...                    "score": [1, 2, 3, 4, 5, 1e6]})
    >>> stray_scores(df)["fluency"][:95]
    "score 1e+06 by 'gpt' on item '5' lies far outside the other scores of 'fluency' (1 to 5) and lo"
    """
    if has_categories(ratings):  # a nominal criterion's numbers are names of categories: none is stray
        ratings = ratings[(ratings[SCALE] != NOMINAL).to_numpy(dtype=bool, na_value=True)]
    crit = (ratings["criterion"].astype("string").fillna("overall") if "criterion" in ratings.columns
            else pd.Series("overall", index=ratings.index, dtype="string"))
    score = pd.to_numeric(ratings["score"], errors="coerce")
    ok = np.isfinite(score.to_numpy(dtype=float, na_value=np.nan))
    out: dict[str, str] = {}
    for c, x in score[ok].groupby(crit[ok], sort=True):
        lo, hi = x.quantile(0.25), x.quantile(0.75)
        reach = STRAY_WIDTHS * max(hi - lo, 1.0)
        stray = (x > hi + reach) | (x < lo - reach)
        if not stray.any():
            continue
        rest = x[~stray]
        named = [f"score {v:g} by '{ratings.at[i, 'rater']}' on item '{ratings.at[i, 'item_id']}'"
                 for i, v in x[stray].head(3).items()]
        more = f" and {int(stray.sum()) - 3} more" if stray.sum() > 3 else ""
        out[str(c)] = (f"{'; '.join(named)}{more} lies far outside the other scores of '{c}' "
                       f"({rest.min() + 0.0:g} to {rest.max():g}) and looks like a typo; the analyses use it as given "
                       f"(it sets the scale read from the data): correct or remove it in the file")
    return out


# --------------------------------------------------------------------------- score frequencies


@takes_table(RATINGS)
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
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Columns ``criterion, *by, source, score, count, share``: ``source`` is ``"humans"``
        (all annotators pooled) or a judge's name; ``share = count / sum(count)`` within
        (criterion, group, source). Every score given on the criterion by anyone appears for
        every source, with a zero count where unused, so that bars line up. Every sample of a
        judge counts; a human counts once per item.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> freq = score_frequencies(ratings, judges=["gpt-4/single-call"])
    >>> print(freq.query("criterion == 'LA'").round(2).to_string(index=False))
    criterion            source  score  count  share
           LA            humans    0.0     39   0.11
           LA            humans    1.0     61   0.18
           LA            humans    2.0    243   0.71
           LA gpt-4/single-call    0.0      5   0.04
           LA gpt-4/single-call    1.0     11   0.09
           LA gpt-4/single-call    2.0    104   0.87
    """
    prep = cell_ratings(ratings, by=by, judges=judges)
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
        names = np.array([HUMANS_LABEL, *prep.judges], dtype=object)
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


@takes_table(RATINGS)
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

    **Nominal criteria** (a ``scale`` column, :mod:`evalcore.data.scales`): their labels are
    categories without an order, so the top score, the range and the mean do not exist. Per source,
    ``distinct_values`` (categories used), ``entropy`` and, per category *c* (named in a ``category``
    column after the ``by`` columns), ``category_share`` :math:`\\hat p_c`, the share of the source's
    ratings that are *c*. Per judge, on the items both rated, ``entropy_difference`` and

    - ``category_share_difference``: :math:`\\hat p^{J}_c - \\hat p^{H}_c`, the judge's share of
      category *c* minus the humans' on the same items (ratio estimators over ratings, as
      ``mean_shift``). Positive: the judge gives *c* more often than the humans do. A judge whose
      shares differ has a shifted label prior: counts of its labels (how many items are toxic,
      which model wins) are biased by that much, whatever its agreement on single items. Zhao et
      al. (2021) find the same majority-label bias in prompted language models.

    The row about a category names it in ``category`` (the measure keeps its code name, so that the
    flag rule sees one measure); the other rows, and every row of a table without a nominal
    criterion, have no such column. One ``not_available`` row per nominal criterion says that the
    top-score share, the range, the mean shift and round numbers need an order
    (:func:`evalcore.pointwise.sections.nominal_note`).

    **Tests.** ``top_share_difference``, ``mean_shift`` and ``category_share_difference`` are
    tested two-sided (skew, leniency and a label given too often or too rarely are biases in
    either direction; with *k* categories the *k* differences sum to 0, and BH's control of the
    false discovery rate covers their dependence in practice, as the tests' simulation checks;
    a category given by the judge or the humans on fewer than 30 of the items both rated is shown
    with its interval but not tested, :data:`evalcore.pointwise.sections.MIN_CATEGORY_ITEMS`);
    ``entropy_difference`` one-sided, "less" (the
    judge uses a narrower part of the scale; a judge spreading its scores more than humans is
    marked ``opposite``). Flags follow the one rule (:func:`evalcore.stats.apply_fdr`:
    Benjamini-Hochberg q <= 0.05 over the table's tests). The per-source descriptive measures
    are never tested.

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
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

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
    the solution to scaling up multilingual evaluation?", §4.2 and Figs. 6-7. Zhao, Wallace, Feng,
    Klein & Singh (2021), "Calibrate before use: improving few-shot performance of language models",
    §4 (majority-label bias).

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = scale_use(ratings, n_boot=200, seed=0)
    >>> shift = table.query("measure == 'mean_shift' and criterion == 'LA'")
    >>> print(shift[["judge", "estimate", "ci_low", "ci_high", "flagged"]].round(2).to_string(index=False))
                  judge  estimate  ci_low  ci_high  flagged
    gpt-4/per-criterion      0.11    0.04     0.19     True
      gpt-4/single-call      0.23    0.16     0.31     True

    A nominal criterion: the shares of its categories, judge against humans on the same items.

    >>> stance = pd.DataFrame({"item_id": [1, 1, 1, 2, 2, 2], "rater": ["a", "b", "gpt"] * 2,
    ...                        "rater_kind": ["human", "human", "judge"] * 2, "criterion": "stance",
    ...                        "scale": "nominal", "score": None,
    ...                        "category": ["pro", "con", "pro", "con", "con", "pro"]})
    >>> shares = scale_use(stance, n_boot=0).query("measure == 'category_share_difference'")
    >>> print(shares[["judge", "category", "estimate"]].to_string(index=False))
    judge category  estimate
      gpt      con     -0.75
      gpt      pro      0.75
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    split = split_scales(ratings)
    _no_range_for_categories(split, scale)
    parts = []
    if split.numbers is not None:
        parts.append(_number_use(split.numbers, by=by, judges=split.judges(split.numbers, judges), n_boot=n_boot,
                                 seed=seed, level=level, scale=scale))
    if split.categories is not None:
        parts.append(_category_use(split, by=by, judges=split.judges(split.categories, judges), n_boot=n_boot,
                                   seed=seed, level=level))
    return join_tables(parts)


def _no_range_for_categories(split: ScaleSplit, scale: Mapping[str, tuple[float, float]] | None) -> None:
    """A DataError for a ``scale`` (lowest, top) given to a nominal criterion: its categories have neither."""
    named = sorted(set(map(str, scale or {})) & set(split.nominal))
    if named:
        raise DataError(f"'{named[0]}' is nominal (categories without an order), so it has no lowest and top score",
                        fix=f"leave '{named[0]}' out of scale, or declare it ordinal with an order of its labels")


def _number_use(ratings: pd.DataFrame, *, by, judges, n_boot: int, seed, level: float, scale) -> pd.DataFrame:
    """:func:`scale_use` on criteria with numbers."""
    prep = cell_ratings(ratings, by=by, judges=judges, scale=scale)
    base = root_seed(seed)
    table = SectionTable(SECTION, prep.by, n_boot=n_boot, level=level)
    for c, key in enumerate(prep.keys):
        rows = prep.rows(c)
        item_loc, n_items = cell_items(prep, rows)
        W = item_weights(cell_rng(base, (SECTION, key)), n_items, n_boot)
        WT = np.ascontiguousarray(W.T)
        per = _scale_sources(table, prep, key, rows, item_loc, WT)
        _scale_differences(table, prep, key, per, W, WT)
    return table.frame()


# --------------------------------------------------------------------------- categories


def _category_use(split: ScaleSplit, *, by, judges, n_boot: int, seed, level: float) -> pd.DataFrame:
    """:func:`scale_use` on nominal criteria: per source the categories used, the entropy and each category's
    share; per judge against the humans on the items both rated, the entropy difference and each category's
    share difference. Rows about one category name it in ``category``."""
    prep = cell_ratings(split.categories, by=by, judges=judges)
    base = root_seed(seed)
    table = SectionTable(SECTION, [*prep.by, CATEGORY], n_boot=n_boot, level=level)
    not_applicable(table, split.nominal)
    for c, key in enumerate(prep.keys):
        rows = prep.rows(c)
        item_loc, n_items = cell_items(prep, rows)
        W = item_weights(cell_rng(base, (SECTION, key)), n_items, n_boot)
        WT = np.ascontiguousarray(W.T)
        names = split.labels[str(key[0])]
        code = prep.score[rows].astype(np.int64)
        used = np.unique(code)  # the categories anyone gave in this cell: a row each
        src = prep.source[rows]
        per: dict[int, dict] = {}
        for s in range(1 + len(prep.judges)):
            m = src == s
            if m.any():
                H = _hist(item_loc[m], code[m], n_items, len(names))
                per[s] = {"H": H, "n": np.asarray(H.sum(axis=1)).ravel(), "hist": _wsum(WT, H)}
                _category_rows(table, key, prep.source_name(s), per[s]["hist"], used, names,
                               int((per[s]["n"] > 0).sum()))
        _category_differences(table, prep, key, per, WT, used, names)
    return table.frame()


def _category_rows(table: SectionTable, key: tuple, judge: str | None, hist: np.ndarray, used: np.ndarray,
                   names: tuple[str, ...], n: int, *, measure: str = "category_share",
                   other: np.ndarray | None = None, items: np.ndarray | None = None) -> None:
    """One source's categories used and entropy, and its share of each category in ``used`` (``other``: minus
    the humans' shares and entropy, the difference rows; ``items``: per category, the items where the judge or
    the humans gave it, which a test needs enough of)."""
    share = safe_div(hist, hist.sum(axis=1)[:, None])
    entropy = _entropy_bits(hist)
    if other is None:
        _cat(table, key, judge, None, "distinct_values", (hist > 0).sum(axis=1).astype(float), n)
        _cat(table, key, judge, None, "entropy", entropy, n)
    else:
        _cat(table, key, judge, None, "entropy_difference", entropy - _entropy_bits(other), n)
        share = share - safe_div(other, other.sum(axis=1)[:, None])
    for k in used:
        why = "" if items is None else category_untested(names[k], int(items[k]), "the judge or the humans give")
        _cat(table, key, judge, names[k], measure, share[:, k], n, untested=why)


def _category_differences(table: SectionTable, prep: CellRatings, key: tuple, per: dict[int, dict],
                          WT: np.ndarray, used: np.ndarray, names: tuple[str, ...]) -> None:
    """Each judge against the humans on the items both rated in the cell: ratio estimators over ratings, every
    judge sample and every annotator's rating counting once, as :func:`scale_use`'s mean shift (the tests)."""
    for s in range(1, 1 + len(prep.judges)):
        if s not in per:
            continue
        judge = prep.source_name(s)
        common = (per[s]["n"] > 0) & (per[0]["n"] > 0) if 0 in per else np.zeros(len(per[s]["n"]), dtype=bool)
        if not common.any():
            why = ("not defined: no human rated an item in this group" if 0 not in per else
                   "not defined: no item in this group was rated by both the judge and humans")
            _cat(table, key, judge, None, "entropy_difference", np.nan, 0, undefined=why)
            for k in used:
                _cat(table, key, judge, names[k], "category_share_difference", np.nan, 0, undefined=why)
            continue
        either = ((per[s]["H"] + per[0]["H"]).toarray() > 0) & common[:, None]
        common = common.astype(float)
        _category_rows(table, key, judge, _on_items(WT, per[s], common), used, names, int(common.sum()),
                       measure="category_share_difference", other=_on_items(WT, per[0], common),
                       items=either.sum(axis=0))


def _cat(table: SectionTable, key: tuple, judge: str | None, category: str | None, measure: str, values, n: int,
         **kwargs) -> None:
    """One row of a nominal cell ``key = (criterion, *by values)``, about ``category`` (None: every category)."""
    table.row(judge, key[0], (*key[1:], category), measure, values, n, **kwargs)


def _add(table: SectionTable, key: tuple, judge: str | None, measure: str, values, n: int, **kwargs) -> None:
    """One row of a cell ``key = (criterion, *by values)``."""
    table.row(judge, key[0], key[1:], measure, values, n, **kwargs)


def _scale_sources(table: SectionTable, prep: CellRatings, key: tuple, rows: np.ndarray, item_loc: np.ndarray,
                   WT: np.ndarray) -> dict[int, dict]:
    """The descriptive rows of every source of one cell (``WT``: the item weights, transposed); returns
    each source's per-item statistics."""
    lo, top = prep.scale[str(key[0])]
    span = top - lo
    n_items = WT.shape[0]
    values, vcode = np.unique(prep.score[rows], return_inverse=True)
    src = prep.source[rows]
    per: dict[int, dict] = {}
    for s in range(1 + len(prep.judges)):
        m = src == s
        if not m.any():
            continue
        # Only the values this source gave: a resample cannot give others.
        cols, vloc = np.unique(vcode[m], return_inverse=True)
        H = _hist(item_loc[m], vloc, n_items, len(cols))
        vals = values[cols]
        n_i = np.asarray(H.sum(axis=1)).ravel()
        hist = _wsum(WT, H)
        per[s] = {"H": H, "n": n_i, "sum": H @ vals, "top": H @ (vals == top).astype(float), "hist": hist}
        used = hist > 0
        judge = prep.source_name(s)
        n_src = int((n_i > 0).sum())
        _add(table, key, judge, "distinct_values", used.sum(axis=1).astype(float), n_src)
        first = np.argmax(used, axis=1)
        last = len(cols) - 1 - np.argmax(used[:, ::-1], axis=1)
        rng_share = (vals[last] - vals[first]) / span if span > 0 else np.nan
        _add(table, key, judge, "range_share", rng_share, n_src,
             undefined=f"not defined: every score of '{key[0]}' is {lo:g}, so the scale has no range")
        _add(table, key, judge, "entropy", _entropy_bits(hist), n_src)
        _add(table, key, judge, "top_share", safe_div(hist @ (vals == top), hist.sum(axis=1)), n_src)
    return per


def _scale_differences(table: SectionTable, prep: CellRatings, key: tuple, per: dict[int, dict],
                       W: np.ndarray, WT: np.ndarray) -> None:
    """Each judge against the humans on the items both rated in the cell (the tested rows)."""
    if 0 not in per:
        why = "not defined: no human rated an item in this group"
        for s in per:
            for meas in SCALE_TESTED:
                _add(table, key, prep.source_name(s), meas, np.nan, 0, undefined=why)
        return
    h = per[0]
    for s in range(1, 1 + len(prep.judges)):
        if s not in per:
            continue
        j = per[s]
        judge = prep.source_name(s)
        common = ((j["n"] > 0) & (h["n"] > 0)).astype(float)
        n_common = int(common.sum())
        if n_common == 0:
            why = "not defined: no item in this group was rated by both the judge and humans"
            for meas in SCALE_TESTED:
                _add(table, key, judge, meas, np.nan, 0, undefined=why)
            continue
        jn, hn = W @ (j["n"] * common), W @ (h["n"] * common)
        tsd = safe_div(W @ (j["top"] * common), jn) - safe_div(W @ (h["top"] * common), hn)
        _add(table, key, judge, "top_share_difference", tsd, n_common)
        shift = safe_div(W @ (j["sum"] * common), jn) - safe_div(W @ (h["sum"] * common), hn)
        _add(table, key, judge, "mean_shift", shift, n_common)
        ent = _entropy_bits(_on_items(WT, j, common)) - _entropy_bits(_on_items(WT, h, common))
        _add(table, key, judge, "entropy_difference", ent, n_common)


# --------------------------------------------------------------------------- round numbers


def _reference_weights(offsets: list[int]) -> np.ndarray:
    """Weights that give the value at 0 of the least-squares polynomial through the points at ``offsets``:
    a quadratic through 3 or more points, a line through 2, the value itself for 1.

    >>> (_reference_weights([-2, -1, 1, 2]) * 6).round(12).tolist()
    [-1.0, 4.0, 4.0, -1.0]
    """
    d = np.asarray(offsets, dtype=float)
    X = np.vander(d, min(3, len(d)), increasing=True)  # 1, d, d^2
    return np.linalg.pinv(X)[0]


def _whole(values: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Whole-number ``values`` as exact integers: int64, or Python ints where a score or the scale's ends
    are beyond it (a stray 1e308), so that ``v - 1`` is never ``v``."""
    if max(abs(lo), abs(hi)) < 2 ** 62 and (not len(values) or np.abs(values).max() < 2.0 ** 62):
        return values.astype(np.int64)
    return np.array([int(v) for v in values], dtype=object)


@lru_cache(maxsize=None)
def _neighbour_weights(offsets: tuple[int, ...]) -> dict[int, float]:
    """:func:`_reference_weights` of a multiple's inner neighbours at ``offsets``, by offset."""
    return dict(zip(offsets, _reference_weights(list(offsets))))


def _round_weights(values: np.ndarray, lo: int, hi: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Indicator of inner multiples of ``base`` and the excess weights, at the distinct whole-number scores
    ``values`` of the scale lo..hi (0 at a score that is not a whole number).

    ``c[v] = 1`` at each multiple ``v`` of ``base`` with ``lo < v < hi``, minus the weights that give
    the reference ``r_v``: the least-squares quadratic through the histogram at the neighbours
    ``v-2, v-1, v+1, v+2`` that are inner scores too (``lo < u < hi``), evaluated at ``v``
    (with all four: ``r_v = (-p_{v-2} + 4 p_{v-1} + 4 p_{v+1} - p_{v+2}) / 6``). So
    ``p @ c = sum_v (p_v - r_v)``. Only the scores given matter (a score not given has ``p_u = 0``),
    so the cost is that of ``values``, whatever the range lo..hi (one stray 1e10 on a 0-100 scale).
    """
    values = np.asarray(values, dtype=float)
    ind, c = np.zeros(len(values)), np.zeros(len(values))
    whole = np.flatnonzero(values == np.round(values))
    u = _whole(values[whole], lo, hi)
    inner = (u > lo) & (u < hi)
    offsets = [o for o in range(-ROUND_WINDOW, ROUND_WINDOW + 1) if o != 0]
    # u is the neighbour at offset d of the multiple v = u - d; d from +2 down gives the multiples in
    # ascending order, the order in which a grid lo..hi adds them up.
    for d in range(ROUND_WINDOW, -ROUND_WINDOW - 1, -1):
        v = u - d
        at = np.flatnonzero(inner & (v % base == 0) & (v > lo) & (v < hi))
        if d == 0:
            ind[whole[at]] = 1.0
            c[whole[at]] += 1.0
            continue
        for k in at:
            nb = tuple(o for o in offsets if lo < v[k] + o < hi)  # u itself is one: it is inner
            c[whole[k]] -= _neighbour_weights(nb)[d]
    return ind, c


def _inner_multiple(lo: int, hi: int, base: int) -> bool:
    """Whether the scale lo..hi has a multiple of ``base`` strictly inside it."""
    return (lo // base + 1) * base < hi


def _inner(levels: int) -> np.ndarray:
    """Indicator of the inner scores of a grid of ``levels`` whole numbers: all but the lowest and the top."""
    out = np.ones(levels)
    out[[0, -1]] = 0.0
    return out


def round_excess(pmf: Sequence[float] | np.ndarray, *, lowest: int, base: int = 5) -> float:
    """The round-number excess of one probability mass function over the whole-number grid.

    ``pmf[k]`` is the probability of score ``lowest + k``. This is the functional that
    :func:`round_number_bias` estimates, applied to a known distribution (e.g. the generating
    distribution of a simulation): :math:`\\sum_{v} (p_v - r_v)` over multiples *v* of ``base``
    strictly inside the grid, :math:`r_v` the local quadratic reference from the inner scores among
    :math:`v\\pm1, v\\pm2`, with :math:`p` renormalised over the inner scores (the lowest and
    top scores of the grid left out).
    """
    p = np.asarray(pmf, dtype=float)
    lo = int(lowest)
    _, c = _round_weights(np.arange(lo, lo + len(p), dtype=float), lo, lo + len(p) - 1, int(base))
    return float(p @ c / (p @ _inner(len(p))))


@takes_table(RATINGS)
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
    """Round-number bias on wide scales: excess mass on multiples of 5 and of 10, judge against humans.

    Stureborg et al. (2024, §3.2, Fig. 3) find that GPT-4 asked for a 1-100 score gives 90, 95,
    80, 85, ... far more often than their neighbours. This measures that against a *local
    reference*: what the source's own histogram puts around each round number; and it tests the
    judge against the humans, who may round too.

    **Definition.** Only the *inner* scores count: the lowest and the top score of the scale are
    left out of every share, of every reference and of the denominator, because that is where
    floors and ceilings pile up (scores clipped at the top of a 1-10 scale pile up on 10, for
    humans as for judges; :func:`scale_use` measures the top share). Let :math:`p_v` be the share
    of the source's inner ratings equal to *v* (the ratings strictly between the lowest and top
    score), and :math:`R_m` the multiples of *m* strictly inside the scale. The reference
    :math:`r_v` is the least-squares quadratic through the histogram at the inner scores among
    :math:`v\\pm1, v\\pm2`, evaluated at *v*: with all four,
    :math:`r_v = (-p_{v-2} + 4p_{v-1} + 4p_{v+1} - p_{v+2})/6`. Then

    - ``round_share_m`` :math:`= \\sum_{v\\in R_m} p_v` (descriptive);
    - ``round_excess_m`` :math:`= \\sum_{v\\in R_m} (p_v - r_v)`, for *m* = 5 (all multiples of 5,
      10s included) and *m* = 10 (descriptive: a source's own excess is not a test);
    - ``round_excess_m_difference``: the judge's excess minus the humans', on the items both rated:
      **the test** (harm direction ``"greater"``: the judge crowds onto round numbers more than
      the humans do).

    **Why this reference.** (i) Leaving the round numbers out of their own reference keeps the
    spikes from inflating it. (ii) A local quadratic is exact for a histogram that is locally
    quadratic, so the shape of a smooth distribution (its slope and curvature around *v*: a
    judge narrower, more lenient or more skewed than the humans) does not read as an excess;
    its error is of the order of the fourth derivative. A plain mean of the neighbours is off by
    about :math:`-\\tfrac54 p''(v)`, which does not cancel on a 1-10 scale with its single inner
    multiple of 5. (iii) Every whole number is within 2 of a multiple of 5, and within 2 of a
    multiple of 10 or next to it: if a share :math:`\\rho` of ratings is moved to the nearest
    multiple of *m* (heaping), its neighbours lose that share evenly, the reference drops with
    them, and the excess is about the heaped share. (iv) The statistic is linear in the
    histogram, :math:`\\sum_v c_v p_v`, a ratio of per-item sums, so the item bootstrap is well
    behaved. A fitted parametric reference (beta-binomial) was not used: LLM score distributions
    are multi-modal and truncated (Fig. 3), and a misfit would show up as false "excess".

    **Flag rule.** ``round_excess_m_difference`` rows are tested one-sided (the judge's excess
    above the humans'), with the other tests of the report, by :func:`evalcore.stats.apply_fdr`.
    A judge that rounds *less* than humans is marked ``opposite``, not flagged. Rows for the
    humans (``judge`` None) and the sources' own excesses are descriptive; read their interval.

    Criteria whose scale has fewer than ``min_levels`` whole-number values (e.g. 1-5) get one
    row per measure with ``judge`` None and a note, and no estimate. A nominal criterion has no
    round numbers (its labels are categories): one ``not_available`` row says so, the same as
    :func:`scale_use`'s. A source with scores that
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
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        The common layout (``section`` 'score_distribution'), measures as above; ``n`` is the
        number of items.

    References
    ----------
    Stureborg et al. (2024), §3.2 and Fig. 3; Thomas & Morwitz (2009) and Honda et al. (2022)
    on round-number bias in human numerical judgments.

    Examples
    --------
    The sample's scales are too narrow, and every row says so:

    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> print(round_number_bias(ratings, n_boot=0)["note"].iloc[0][:61])
    not defined: the scale of 'H' (0-1) has 2 whole-number values
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    split = split_scales(ratings)
    _no_range_for_categories(split, scale)
    parts = []
    if split.numbers is not None:
        parts.append(_round_numbers(split.numbers, by=by, judges=split.judges(split.numbers, judges),
                                    n_boot=n_boot, seed=seed, level=level, scale=scale, min_levels=min_levels))
    if split.categories is not None:
        table = SectionTable(SECTION, [*check_by(ratings, by), CATEGORY], n_boot=n_boot, level=level)
        not_applicable(table, split.nominal)
        parts.append(table.frame())
    return join_tables(parts)


def _round_numbers(ratings: pd.DataFrame, *, by, judges, n_boot: int, seed, level: float, scale,
                   min_levels: int) -> pd.DataFrame:
    """:func:`round_number_bias` on criteria with numbers."""
    prep = cell_ratings(ratings, by=by, judges=judges, scale=scale)
    base = root_seed(seed)
    table = SectionTable(SECTION, prep.by, n_boot=n_boot, level=level)
    for c, key in enumerate(prep.keys):
        lo_f, hi_f = prep.scale[str(key[0])]
        lo, hi = int(math.ceil(lo_f)), int(math.floor(hi_f))
        levels = hi - lo + 1
        if levels < min_levels:
            why = (f"not defined: the scale of '{key[0]}' ({lo_f:g}-{hi_f:g}) has {max(levels, 0)} whole-number "
                   f"values; round-number bias needs a wide scale with {min_levels} or more (e.g. 1-10, 1-100)")
            for meas in ROUND_MEASURES:
                if not meas.endswith("difference"):
                    _add(table, key, None, meas, np.nan, 0, undefined=why)
            continue
        rows = prep.rows(c)
        item_loc, n_items = cell_items(prep, rows)
        W = item_weights(cell_rng(base, ("round_number_bias", key)), n_items, n_boot)
        # On the distinct scores given, not a grid over the scale: one stray 1e10 must not cost a 1e10 grid.
        values, vcode = np.unique(prep.score[rows], return_inverse=True)
        weights = {m: _round_weights(values, lo, hi, m) for m in ROUND_BASES}
        per = _round_sources(table, prep, key, rows, item_loc, W, weights, vcode, values, lo, hi)
        _round_differences(table, prep, key, per, W, lo, hi)
    return _in_measure_order(table.frame(), prep.by)


def _round_sources(table: SectionTable, prep: CellRatings, key: tuple, rows: np.ndarray, item_loc: np.ndarray,
                   W: np.ndarray, weights: dict, vcode: np.ndarray, values: np.ndarray, lo: int,
                   hi: int) -> dict[int, dict | str]:
    """Round-number shares and excesses of every source of one cell, over its inner ratings (``vcode``: each
    rating's index into the cell's distinct scores ``values``); returns each source's per-item statistics, or
    why it has none (scores that are not whole numbers)."""
    src, score = prep.source[rows], prep.score[rows]
    inner = ((values > lo) & (values < hi)).astype(float)
    per: dict[int, dict | str] = {}
    for s in range(1 + len(prep.judges)):
        m = src == s
        if not m.any():
            continue
        judge = prep.source_name(s)
        n_src = len(np.unique(item_loc[m]))
        sc = score[m]
        if not np.all(sc == np.round(sc)):
            who = "the humans give" if s == 0 else f"'{judge}' gives"
            per[s] = (f"not defined: {who} scores that are not whole numbers (e.g. averages of samples), "
                      "so round numbers cannot be told apart")
            for meas in ROUND_MEASURES:
                if not meas.endswith("difference"):
                    _add(table, key, judge, meas, np.nan, n_src, undefined=per[s])
            continue
        H = _hist(item_loc[m], vcode[m], W.shape[1], len(values))
        stats = {"n": H @ inner}  # inner ratings per item: the denominator of every share
        for mb, (ind, cw) in weights.items():
            stats[f"share_{mb}"] = H @ ind
            stats[f"excess_{mb}"] = H @ cw
        per[s] = stats
        tot = W @ stats["n"]
        for mb in weights:
            inside = _inner_multiple(lo, hi, mb)
            why = (f"not defined: the scale {lo}-{hi} has no multiple of {mb} strictly inside it "
                   "(the lowest and top scores are left out)" if not inside else
                   f"not defined: no rating lies strictly between the lowest ({lo}) and top ({hi}) score")
            share = np.nan if not inside else safe_div(W @ stats[f"share_{mb}"], tot)
            exc = np.nan if not inside else safe_div(W @ stats[f"excess_{mb}"], tot)
            _add(table, key, judge, f"round_share_{mb}", share, n_src, undefined=why)
            _add(table, key, judge, f"round_excess_{mb}", exc, n_src, undefined=why)
    return per


def _round_differences(table: SectionTable, prep: CellRatings, key: tuple, per: dict[int, dict | str],
                       W: np.ndarray, lo: int, hi: int) -> None:
    """Each judge's round-number excess minus the humans', on the items both rated (the tested rows)."""
    h = per.get(0)
    for s in range(1, 1 + len(prep.judges)):
        if s not in per:
            continue
        judge = prep.source_name(s)
        j = per[s]
        for mb in ROUND_BASES:
            inside = _inner_multiple(lo, hi, mb)
            meas = f"round_excess_{mb}_difference"
            why = _round_difference_undefined(j, h)
            if why:
                _add(table, key, judge, meas, np.nan, 0, undefined=why)
                continue
            common = ((j["n"] > 0) & (h["n"] > 0)).astype(float)
            if not inside or not common.any():
                why = (f"not defined: the scale {lo}-{hi} has no multiple of {mb} strictly inside it"
                       if not inside else
                       "not defined: no item in this group has inner scores (strictly between the lowest "
                       "and top score) from both the judge and humans")
                _add(table, key, judge, meas, np.nan, int(common.sum()), undefined=why)
                continue
            diff = (safe_div(W @ (j[f"excess_{mb}"] * common), W @ (j["n"] * common))
                    - safe_div(W @ (h[f"excess_{mb}"] * common), W @ (h["n"] * common)))
            _add(table, key, judge, meas, diff, int(common.sum()))


def _round_difference_undefined(j: dict | str, h: dict | str | None) -> str:
    """Why a judge's round-number difference is not defined ('' when it may be)."""
    if isinstance(j, str):
        return j
    if h is None:
        return "not defined: no human rated an item in this group"
    return h if isinstance(h, str) else ""


def _in_measure_order(out: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rows by criterion and group, then the humans before the judges, then measures in :data:`ROUND_MEASURES` order."""
    if not len(out):
        return out
    order = {m: i for i, m in enumerate(ROUND_MEASURES)}
    out["_o"] = out["measure"].map(order)
    out["_j"] = out["judge"].map(lambda j: "" if j is None else "\x01" + j)
    return out.sort_values(["criterion", *by, "_j", "_o"], kind="stable", na_position="last") \
        .drop(columns=["_o", "_j"]).reset_index(drop=True)
