"""Anchoring across criteria of LLM judges, against human annotators (Stureborg et al. 2024, Sec. 3.3, Fig. 4, Table 3).

A judge that scores several criteria in one prompt may anchor later scores on earlier ones.
Symptoms: criteria that correlate far more for the judge than for humans (GPT-4 r = 0.979
against humans' 0.315 for consistency vs coherence; :func:`anchoring`, and the matrices of
:func:`criterion_correlations`), a conditional distribution of criterion j that moves with
criterion i (:func:`conditional_distribution`), and, where the order of criteria in the prompt
is known (``position``), agreement with humans that falls with the criterion's position.

The conventions of the summary table (layout, item bootstrap, flags) are those of
:mod:`evalcore.pointwise.bias`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..arguments import takes_table
from ..columns import HUMANS_LABEL, RATINGS
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, percentile_interval, root_seed
from ..stats.numeric import codes, join_notes, safe_div, zero_div
from ..stats.results import SPARSE_NOTE
from ..stats.kendall import tau_b
from .cells import ScaleSplit, split_scales
from .coding import CodedRatings, check_by, code_ratings
from .sections import BiasNotApplicable, SectionTable, join_tables, not_applicable

ANCHORING = "anchoring"
#: The rows of :func:`anchoring` that are tests, in the directions of :data:`evalcore.pointwise.sections.TESTS`
#: (``r_difference`` "greater", ``agreement_position_slope`` "less"); the other rows are descriptive.
TESTED = ("r_difference", "agreement_position_slope")
_PROMPT_NOTE = "criteria scored in one prompt (position recorded)"


# --------------------------------------------------------------------------- correlation between criteria


def _wide(prep: CodedRatings, rows: np.ndarray, *, per_rater: bool) -> tuple[np.ndarray, np.ndarray]:
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
    # A criterion with a stray score near 1e308 is halved to a power of two first (exact, and r does not
    # change), so that its squares do not overflow; other data are left bit for bit as they are.
    top = np.where(fin, np.abs(M), 0.0).max(axis=0, initial=0.0)
    if (top > 1e150).any():
        M = np.ldexp(M, -np.where(top > 1e150, np.ceil(np.log2(np.maximum(top, 1.0))), 0.0).astype(np.int64))
    mu = zero_div(np.where(fin, M, 0.0).sum(axis=0), fin.sum(axis=0).astype(float))
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
    vx = sxx - zero_div(sx * sx, n)
    vy = syy - zero_div(sy * sy, n)
    cov = sxy - zero_div(sx * sy, n)
    ok = (n >= 2) & (vx > 1e-9 * sxx) & (vy > 1e-9 * syy)
    return np.where(ok, safe_div(cov, np.sqrt(np.where(ok, vx * vy, 1.0))), np.nan)


def _mean_r(R: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Mean over the pairs in ``use`` of per-resample r, (R_rows, P) -> (R_rows,); NaN if any is undefined."""
    if not use.any():
        return np.full(R.shape[0], np.nan)
    return R[:, use].mean(axis=1)


def _pos_label(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else f"{p:g}"


@takes_table(RATINGS, "position")
def anchoring(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
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
        scored by both. Tested one-sided, "greater": the judge's criteria correlate more than the
        humans' (a judge whose criteria correlate less is marked ``opposite``, never flagged);
        flagged by :func:`evalcore.stats.apply_fdr` (Benjamini-Hochberg q <= 0.05 over the
        report's tests). Caveat: a judge that is less noisy than one
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
        falls with position. Tested one-sided, "less" (agreement falling with position); flagged
        by the same rule.

    Correlations and agreement by position need numbers: nominal criteria (a ``scale`` column,
    :mod:`evalcore.data.scales`) are left out, each said in one ``not_available`` row, and a table
    with fewer than two criteria scored with numbers is :class:`BiasNotApplicable`.

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
        Integer seed, or a ``numpy.random.Generator`` (one integer is drawn from it).
    level
        Confidence level of the percentile intervals.
    item, rater, kind, criterion, score, sample, position
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

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

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = anchoring(ratings, n_boot=200, seed=0)
    >>> r = table.query("measure == 'r_difference'")
    >>> print(r[["judge", "estimate", "ci_low", "ci_high", "flagged"]].round(2).to_string(index=False))
                  judge  estimate  ci_low  ci_high  flagged
    gpt-4/per-criterion       0.1   -0.01     0.23    False
      gpt-4/single-call       0.3    0.25     0.44     True
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    split = split_scales(ratings)
    numbers = _numbers_only(split)
    parts = [_anchoring_numbers(numbers, by=by, judges=split.judges(numbers, judges), n_boot=n_boot, seed=seed,
                                level=level, nominal=split.nominal)]
    if split.categories is not None:
        table = SectionTable(ANCHORING, check_by(ratings, by, criterion_in_by="error"), n_boot=n_boot, level=level)
        not_applicable(table, split.nominal)
        parts.append(table.frame())
    return join_tables(parts)


def _numbers_only(split: ScaleSplit) -> pd.DataFrame:
    """The rows of the criteria with numbers; :class:`BiasNotApplicable` where every criterion is nominal."""
    if split.numbers is None:
        raise BiasNotApplicable(
            "anchoring correlates criteria scored with numbers, and every criterion here is nominal (categories "
            f"without an order: {', '.join(split.nominal)})", column="criterion",
            fix="score two or more criteria with numbers, or declare criteria of ordered labels ordinal "
                "(--order CRITERION=low,...,high)")
    return split.numbers


def _anchoring_numbers(ratings: pd.DataFrame, *, by, judges, n_boot: int, seed, level: float,
                       nominal: Sequence[str] = ()) -> pd.DataFrame:
    """:func:`anchoring` on criteria with numbers (``nominal``: the nominal criteria left out, for the message)."""
    root = root_seed(seed)
    prep = code_ratings(ratings, by=by, judges=judges, criterion_in_by="error")
    K = len(prep.criteria)
    if K < 2:
        left_out = (f" (the nominal {', '.join(nominal)} cannot be correlated: categories without an order)"
                    if nominal else "")
        raise BiasNotApplicable(f"anchoring needs at least two criteria scored per item; this table has only "
                                f"'{prep.criteria[0]}'{left_out}", column="criterion",
                                fix="load a table with several criteria per item (a 'criterion' column)")
    pairs = np.array([(a, b) for a in range(K) for b in range(a + 1, K)])
    S_all, hmean, jdata = _source_stats(prep, pairs)
    table = SectionTable(ANCHORING, prep.by, n_boot=n_boot, level=level)
    for g, gkey in enumerate(prep.keys):
        items = np.flatnonzero(prep.group == g)
        W = item_weights(cell_rng(root, (ANCHORING, *gkey)), len(items), n_boot)
        S_g = S_all[items]
        has = S_g[..., 0].sum(axis=2) > 0  # (items, sources)
        r_all = _pearson((W @ S_g.reshape(len(items), -1)).reshape(W.shape[0], *S_g.shape[1:]))
        rh, has_h = r_all[:, 0], has[:, 0]
        use_h = np.isfinite(rh[0])
        table.row(None, None, gkey, "mean_inter_criterion_r", _mean_r(rh, use_h), int(has_h.sum()),
                  undefined=_why_r(has_h, use_h, "human"), note=_pairs_note(use_h, len(pairs)))
        for k, name in enumerate(prep.judges, start=1):
            score, pos = jdata[name]
            rj, has_j = r_all[:, k], has[:, k]
            use_j = np.isfinite(rj[0])
            prompt_note = _PROMPT_NOTE if pos is not None else ""
            table.row(name, None, gkey, "mean_inter_criterion_r", _mean_r(rj, use_j), int(has_j.sum()),
                      undefined=_why_r(has_j, use_j, "judge"),
                      note=join_notes(_pairs_note(use_j, len(pairs)), prompt_note))
            _r_difference(table, name, gkey, W, S_g[:, 0], S_g[:, k], rh, rj, has_h, has_j, prompt_note)
            if pos is not None:
                _position_rows(table, prep.criteria, gkey, name, W, score[items], pos[items], hmean[items])
    return table.frame()


def _source_stats(prep: CodedRatings, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Per-item sums for Pearson's r of every criterion pair, ``(n_items, 1 + judges, P, 6)`` (the humans
    first); the mean human score per (item, criterion); per judge its (item, criterion) scores and
    positions (None without a ``position``)."""
    K, n_items = len(prep.criteria), len(prep.item_ids)
    hrows = np.flatnonzero(prep.human)
    stats = [_pair_stats(*_wide(prep, hrows, per_rater=True), n_items, pairs)]  # humans, then each judge
    # Mean human score per (item, criterion), for agreement by position.
    hcount = np.bincount(prep.item[hrows] * K + prep.crit[hrows], minlength=n_items * K).reshape(n_items, K)
    hsum = np.bincount(prep.item[hrows] * K + prep.crit[hrows], weights=prep.score[hrows],
                       minlength=n_items * K).reshape(n_items, K)
    hmean = safe_div(hsum, hcount)
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
    return np.stack(stats, axis=1), hmean, jdata


def _r_difference(table: SectionTable, name: str, gkey: tuple, W: np.ndarray, Sh: np.ndarray, Sj: np.ndarray,
                  rh: np.ndarray, rj: np.ndarray, has_h: np.ndarray, has_j: np.ndarray, prompt_note: str) -> None:
    """``r_difference`` (the test): the judge's mean inter-criterion r minus the humans', on the items both scored."""
    both = has_h & has_j
    if np.array_equal(both, has_h) and np.array_equal(both, has_j):
        rhb, rjb = rh, rj
    else:
        rhb = _pearson(_wsum(W * both, Sh))
        rjb = _pearson(_wsum(W * both, Sj))
    use = np.isfinite(rhb[0]) & np.isfinite(rjb[0])
    why = "not defined: no item scored by both the judge and a human" if not both.any() else \
        "not defined: no criterion pair has a defined r for both the judge and the humans"
    table.row(name, None, gkey, "r_difference", _mean_r(rjb, use) - _mean_r(rhb, use), int(both.sum()),
              undefined=why, note=join_notes(_pairs_note(use, rhb.shape[1]), prompt_note))


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


# --------------------------------------------------------------------------- agreement by position


def _position_taus(W: np.ndarray, score: np.ndarray, pos: np.ndarray, hmean: np.ndarray, positions: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kendall's tau-b of the judge's score with the human mean, per criterion and position: ``(K, m, R)``
    taus, ``(K, m)`` item counts, and which (item, criterion) can count."""
    K = score.shape[1]
    Wt = np.ascontiguousarray(W.T)
    ok = np.isfinite(score) & np.isfinite(pos) & np.isfinite(hmean)
    taus = np.full((K, len(positions), W.shape[0]), np.nan)
    ns = np.zeros((K, len(positions)), dtype=np.int64)
    for c in range(K):
        for k, p in enumerate(positions):
            sel = np.flatnonzero(ok[:, c] & (pos[:, c] == p))
            ns[c, k] = len(sel)
            if len(sel) >= 2:
                taus[c, k] = tau_b(Wt[sel], np.arange(len(sel)), score[sel, c], hmean[sel, c])
    return taus, ns, ok


def _position_rows(table: SectionTable, criteria: tuple[str, ...], gkey: tuple, name: str, W: np.ndarray,
                   score: np.ndarray, pos: np.ndarray, hmean: np.ndarray) -> None:
    """Agreement (tau-b with the human mean) of one judge by the criterion's position in its prompt."""
    K = len(criteria)
    positions = np.unique(pos[np.isfinite(pos)])
    taus, ns, ok = _position_taus(W, score, pos, hmean, positions)
    # Over criteria: per position, the mean tau of the criteria whose tau is defined at every
    # position (the same criteria at each position, so positions are compared like for like).
    full = np.isfinite(taus[:, :, 0]).all(axis=1)
    if W.shape[0] > 1:  # ... and in at least 90% of the resamples, so that the mean is stable
        full &= (np.isfinite(taus[:, :, 1:]).mean(axis=2) >= 0.9).all(axis=1)
    sel = taus[full]
    fin = np.isfinite(sel)
    pooled = safe_div(np.where(fin, sel, 0.0).sum(axis=0), fin.sum(axis=0))  # mean of the defined ones
    used = list(np.flatnonzero(full)) or list(range(K))
    n_any = np.array([int(np.any(ok[:, used] & (pos[:, used] == p), axis=1).sum()) for p in positions])
    if full.any() and not full.all():
        left = ", ".join(criteria[c] for c in np.flatnonzero(~full))
        note_pooled = f"mean over the criteria with a tau defined at every position; left out: {left}"
    else:
        note_pooled = ""
    block = _PositionBlock(table, gkey, name, positions, ok, pos, ns)
    block.add(None, pooled, n_any, used, note_pooled)
    for c in range(K):
        block.add(criteria[c], taus[c], ns[c], [c])


class _PositionBlock:
    """The position rows of one judge in one group: tau at each position, first minus later, the slope."""

    def __init__(self, table: SectionTable, gkey: tuple, name: str, positions: np.ndarray, ok: np.ndarray,
                 pos: np.ndarray, ns: np.ndarray) -> None:
        self.table, self.gkey, self.name, self.positions = table, gkey, name, positions
        self.ok, self.pos, self.ns = ok, pos, ns

    def why_tau(self, c_list: list[int], k: int, pooled: bool) -> str:
        if self.ns[c_list, k].sum() == 0:
            return "not defined: no item has this criterion at this position with human scores"
        if pooled:
            return "not defined: no criterion has a defined tau at every position"
        return "not defined: fewer than 2 items, or the judge's scores or the human means are constant"

    def add(self, crit: str | None, tau_rows: np.ndarray, n_pos: np.ndarray, c_list: list[int], extra: str = ""
            ) -> None:
        positions, R = self.positions, tau_rows.shape[-1]
        note = join_notes(extra, _PROMPT_NOTE)
        row = self.table.row
        defined = np.isfinite(tau_rows[:, 0])
        for k, p in enumerate(positions):
            row(self.name, crit, self.gkey, f"agreement_tau_at_position_{_pos_label(p)}", tau_rows[k], int(n_pos[k]),
                undefined=self.why_tau(c_list, k, crit is None), note=note)
        n_items = int(np.any(self.ok[:, c_list] & np.isin(self.pos[:, c_list], positions[defined]), axis=1).sum())
        first = defined & (positions == positions.min())
        later = defined & (positions > positions.min())
        diff = tau_rows[first].mean(axis=0) - tau_rows[later].mean(axis=0) if first.any() and later.any() \
            else np.full(R, np.nan)
        row(self.name, crit, self.gkey, "agreement_first_minus_later", diff, n_items, note=note,
            undefined="not defined: tau is not defined at the first position and at a later one")
        slope = _slope(tau_rows[defined].T, positions[defined])
        row(self.name, crit, self.gkey, "agreement_position_slope", slope, n_items, note=note,
            undefined="not defined: tau is defined at fewer than 2 positions")


# --------------------------------------------------------------------------- plot tables


@takes_table(RATINGS, "position")
def conditional_distribution(
    ratings: pd.DataFrame,
    *,
    given: str,
    target: str,
    threshold: float,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
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
    by, judges, n_boot, seed, level, item, rater, kind, criterion, score, sample, position
        As in :func:`anchoring`; the interval is the item-bootstrap interval of the share.

    Returns
    -------
    pandas.DataFrame
        Columns ``source, *by, condition, score, share, ci_low, ci_high, count, n, note``:
        ``source`` is ``'humans'`` or the judge's name; ``count`` the units with that score,
        ``n`` the units in the condition (shares sum to 1 over a condition's scores).

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> dist = conditional_distribution(ratings, given="LA", target="OCQ", threshold=1, n_boot=200, seed=0)
    >>> top = dist.query("score == 2 and source == 'humans'")
    >>> print(top[["condition", "share", "ci_low", "ci_high", "n"]].round(2).to_string(index=False))
      condition  share  ci_low  ci_high   n
          above   0.67    0.59     0.76 243
    at_or_below   0.50    0.38     0.64 100
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    split = split_scales(ratings)
    for name, crit in (("given", given), ("target", target)):
        if crit in split.labels:
            raise DataError(f"'{crit}' is nominal (categories without an order), so it has no threshold and no "
                            f"score distribution (for {name})", column="criterion",
                            fix="choose two criteria scored with numbers")
    numbers = _numbers_only(split)
    prep = code_ratings(numbers, by=by, judges=split.judges(numbers, judges), criterion_in_by="error")
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
    out = []
    wide = [(name, *_wide(prep, rows, per_rater=per_rater)) for name, rows, per_rater in _sources(prep)]
    for g, gkey in enumerate(prep.keys):
        items = np.flatnonzero(prep.group == g)
        W = item_weights(cell_rng(root, ("conditional", given, target, t, *gkey)), len(items), n_boot)
        loc = np.full(len(prep.item_ids), -1)
        loc[items] = np.arange(len(items))
        for name, M, ui in wide:
            m = np.isfinite(M[:, a]) & np.isfinite(M[:, b]) & (loc[ui] >= 0)
            if not m.any():
                continue
            cond = (M[m, a] > t).astype(np.int64)  # 1 = above
            code, values = codes(M[m, b])
            q = len(values)
            H = np.bincount(loc[ui[m]] * 2 * q + cond * q + code, minlength=len(items) * 2 * q)
            A = (W @ H.reshape(len(items), 2 * q).astype(float)).reshape(-1, 2, q)
            share = safe_div(A, A.sum(axis=-1, keepdims=True))
            lo, hi, sparse_ci = (x.reshape(2, q) for x in percentile_interval(share[1:].reshape(-1, 2 * q).T, level))
            for ci, label in ((1, "above"), (0, "at_or_below")):
                n_c = int(A[0, ci].sum())
                for k, v in enumerate(values):
                    note = "not defined: no unit in this condition" if not n_c else \
                        SPARSE_NOTE if sparse_ci[ci, k] else ""
                    out.append({"source": name, **dict(zip(prep.by, gkey)), "condition": label, "score": float(v),
                                "share": float(share[0, ci, k]) if n_c else np.nan,
                                "ci_low": float(lo[ci, k]) if n_c else np.nan,
                                "ci_high": float(hi[ci, k]) if n_c else np.nan,
                                "count": int(A[0, ci, k]), "n": n_c, "note": note})
    cols = ["source", *prep.by, "condition", "score", "share", "ci_low", "ci_high", "count", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)


def _sources(prep: CodedRatings) -> list[tuple[str, np.ndarray, bool]]:
    """(name, rows, per rater) of the humans (:data:`evalcore.columns.HUMANS_LABEL`; a unit is an item and
    an annotator) and of each judge (a unit is an item)."""
    out = [(HUMANS_LABEL, np.flatnonzero(prep.human), True)]
    return out + [(name, np.flatnonzero(~prep.human & (prep.rater == prep.judge_code[name])), False)
                  for name in prep.judges]


@takes_table(RATINGS, "position")
def criterion_correlations(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Pearson correlation matrix between criteria, humans and each judge, for side-by-side heatmaps.

    Same definitions as ``mean_inter_criterion_r`` in :func:`anchoring`: the judge's scores
    across items; the humans' across (item, annotator) units. The matrix is given in full
    (both orders of each pair, and the diagonal, 1 where the criterion varies) with
    item-bootstrap intervals at ``level``.

    Parameters
    ----------
    ratings
        A validated canonical ratings table.
    by, judges, n_boot, seed, level, item, rater, kind, criterion, score, sample, position
        As in :func:`anchoring`.

    Returns
    -------
    pandas.DataFrame
        Columns ``source, *by, criterion_a, criterion_b, r, ci_low, ci_high, n, note``;
        ``n`` is the number of units (items or item-annotator pairs) scored on both criteria.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> r = criterion_correlations(ratings, n_boot=200, seed=0)
    >>> print(r.query("criterion_a == 'LA' and criterion_b == 'OCQ'")[["source", "r", "ci_low", "ci_high"]]
    ...       .round(2).to_string(index=False))
                 source    r  ci_low  ci_high
                 humans 0.20    0.05     0.35
    gpt-4/per-criterion 0.30    0.09     0.48
      gpt-4/single-call 0.56    0.36     0.74
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    split = split_scales(ratings)
    numbers = _numbers_only(split)
    prep = code_ratings(numbers, by=by, judges=split.judges(numbers, judges), criterion_in_by="error")
    K = len(prep.criteria)
    pairs = np.array([(a, b) for a in range(K) for b in range(K)])
    n_items = len(prep.item_ids)
    stats = [(name, _pair_stats(*_wide(prep, rows, per_rater=pr), n_items, pairs)) for name, rows, pr in _sources(prep)]
    names = [name for name, _ in stats]
    S_all = np.stack([st for _, st in stats], axis=1)
    out = []
    for g, gkey in enumerate(prep.keys):
        items = np.flatnonzero(prep.group == g)
        W = item_weights(cell_rng(root, ("correlations", *gkey)), len(items), n_boot)
        S_g = S_all[items]
        A_all = (W @ S_g.reshape(len(items), -1)).reshape(W.shape[0], *S_g.shape[1:])
        r_all = _pearson(A_all)
        for k, name in enumerate(names):
            A, r = A_all[:, k], r_all[:, k]
            lo, hi, sparse_ci = percentile_interval(r[1:].T, level)
            for p, (a, b) in enumerate(pairs):
                n_units = int(A[0, p, 0])
                est = float(r[0, p])
                low, high, note = float(lo[p]), float(hi[p]), SPARSE_NOTE if sparse_ci[p] else ""
                if not np.isfinite(est):
                    note = "not defined: no unit scored both criteria" if n_units == 0 else \
                        "not defined: fewer than 2 units, or a criterion's scores are constant"
                    low = high = np.nan
                out.append({"source": name, **dict(zip(prep.by, gkey)), "criterion_a": prep.criteria[a],
                            "criterion_b": prep.criteria[b], "r": est, "ci_low": low, "ci_high": high,
                            "n": n_units, "note": note})
    cols = ["source", *prep.by, "criterion_a", "criterion_b", "r", "ci_low", "ci_high", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)
