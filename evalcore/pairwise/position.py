"""Position and selection bias of pairwise judges: verdicts in both orders, before and after calibration.

A pairwise judge that prefers the output shown first, or the one labelled "A", gives a different
verdict when the same two outputs are shown the other way round. LLMBar (Zeng et al. 2024) asks
every judge in both orders; CalibraEval (Li et al. 2024) asks three prompts and calibrates the
judge's P("A"). This module measures the bias and the effect of the calibrations
(:mod:`evalcore.pairwise.pride`, :mod:`evalcore.pairwise.calibraeval`).

**Units and orders.** A unit is an item (``item_id``) and, when the table names them, its pair of
systems; a row naming the pair the other way round has its winner flipped. The *original order*
shows the unit's ``a`` (the ``system_a`` of its first row) first; the *swapped order* shows ``b``
first (``swapped`` true, or the pair named the other way round). A judge's rows in one order are
combined by swap and sum (:func:`evalcore.pairwise.pairs.rater_verdicts`); unparsed outputs
(``invalid``) are missing verdicts. **Gold** is the rater ``gold`` when the table has one (LLMBar),
else the humans' strict majority (:mod:`evalcore.labels`); items whose gold is a tie or missing are
left out of the measures that need gold, as CalibraEval leaves out MT-Bench's ties.

**Probabilities.** When the judge gives P("A") under the three CalibraEval prompts (``prob_a``: s0,
a at position 1 labelled "A"; ``prob_a_swap_position``: s1, a at position 2, still "A";
``prob_a_swap_id``: s2, "A" labels b at position 1), every method, ``none`` included, decides by the
probability that a is better: :math:`c_0 = P_0` in the original order (s0), :math:`c_2 = 1 - P_2` in
the swapped order (s2) and :math:`c_1 = P_1` in the third prompt (s1); a wins when :math:`c > 1/2`,
b when :math:`c < 1/2` (exactly 1/2 is a tie). Calibrations map each raw P("A") first.

**Measures** (each a share of items in [0, 1], and for every one a percentile item bootstrap):

* ``accuracy_original_order``, ``accuracy_swapped_order``: verdict = gold (LLMBar's
  ``correct_False``, ``correct_True``); ``accuracy_average``: their mean (``correct_average``);
  ``accuracy_both_orders``: right in both orders (``correct_both``);
* ``position_consistency``: the same verdict in both orders (LLMBar's ``equal``);
* ``first_position_preference``: of the decisive verdicts in the two orders, the share for the
  output shown first (0.5: none), tested two-sided against 0.5 and flagged by the one rule
  (:func:`evalcore.stats.apply_fdr`);
* ``rstd``: the standard deviation (ddof 0) of the two per-class recalls, P(a | gold a) and
  P(b | gold b), i.e. :math:`|r_a - r_b| / 2`, averaged over the orders or prompts (Zheng et al.
  2023; CalibraEval's ``std_1..std_3``, which are in percent);
* ``fleiss_kappa``: Fleiss' kappa of the decisions (a, b, tie) across the two orders, or the three
  prompts when probabilities exist (CalibraEval Table 1);
* ``icc2k``, ``icc3k``: ICC(2,k) and ICC(3,k) (Shrout & Fleiss 1979; pingouin's ``ICC2k``/``ICC3k``) of
  :math:`(c_0, c_1, c_2)` over items, from the two-way ANOVA mean squares:
  :math:`(MS_R - MS_E) / (MS_R + (MS_C - MS_E)/n)` and :math:`(MS_R - MS_E) / MS_R`.

**Calibration.** A seeded share of each judge's items (``estimation_share``, 20% by default) is the
estimation subset the calibrations are fitted on; the fitted map is applied to every item and the
measures are computed again. The bootstrap holds the fitted map fixed. A fitted calibration can be
saved (:func:`save_calibrations`) and applied to a new file of the same judge (``calibrations=``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, root_seed, z_p_value
from ..stats.numeric import join_notes, safe_div
from ..stats.results import ResultTable, apply_fdr
from .calibraeval import LAMBDA, NoaCalibration, collapse_reason, fit_noa, fit_noa_released, fit_noa_selected
from .pairs import INVALID, human_labels, invalid_mask, rater_verdicts, votes
from .pride import PrideCalibration, fit_pride

__all__ = [
    "INVALID_RULES",
    "MEASURES",
    "METHODS",
    "PROB_COLUMNS",
    "JudgeData",
    "content_probabilities",
    "fit_calibrations",
    "judge_data",
    "load_calibrations",
    "position_report",
    "dumps_calibrations", "loads_calibrations", "save_calibrations",
]

MEASURES = ("accuracy_original_order", "accuracy_swapped_order", "accuracy_average", "accuracy_both_orders",
            "position_consistency", "first_position_preference", "rstd", "fleiss_kappa", "icc2k", "icc3k")
#: ``none`` (no calibration), PriDe, NOA (exact gradient, to convergence), NOA with the authors' released settings.
METHODS = ("none", "pride", "noa", "noa_released")
PROB_COLUMNS = ("prob_a", "prob_a_swap_position", "prob_a_swap_id")
NOT_AVAILABLE = "not_available"
#: What an unparsed judge output counts as (:func:`position_report`'s ``invalid``).
INVALID_RULES = ("drop", "wrong")
_NEEDS = ("item_id", "rater", "rater_kind", "winner")
_FORMAT = "evalcore.position.calibrations"
_NO_PROBS = ("the judge's P('A') under the three CalibraEval prompts (prob_a, prob_a_swap_position, "
             "prob_a_swap_id)")

Calibration = PrideCalibration | NoaCalibration


@dataclass(frozen=True, eq=False)
class JudgeData:
    """One judge's units: verdicts in both orders, raw probabilities, gold and groups.

    Attributes
    ----------
    judge
        The judge's name.
    item
        Each unit's item code (what the bootstrap resamples).
    group
        Each unit's group code; ``keys`` are the groups' ``by`` values.
    verdicts
        ``(units, 2)`` the verdicts in the original and the swapped order, in content terms:
        0 a, 1 b, 2 tie, -1 none (no row, or unparsed).
    probs
        ``(units, 3)`` raw P("A") under s0, s1, s2 as the row names the pair; NaN without.
    reversed
        Whether the row holding the probabilities names the pair the other way round from the unit.
    label
        Gold: 0 a, 1 b, -1 none (a tie, or no gold).
    unparsed
        ``(units, 2)`` whether the verdict in that order is missing because every row of it is an unparsed
        output (``invalid``), as opposed to no row at all.
    unparsed_rows
        Per unit, the judge's rows that are unparsed outputs (what a group's note counts).
    """

    judge: str
    item: np.ndarray
    group: np.ndarray
    keys: list
    verdicts: np.ndarray
    probs: np.ndarray
    reversed: np.ndarray
    label: np.ndarray
    n_invalid: int = 0
    n_unlabelled: int = 0
    unparsed: np.ndarray | None = None
    unparsed_rows: np.ndarray | None = None

    @property
    def has_probs(self) -> bool:
        return bool(np.isfinite(self.probs).all(axis=1).any())


def _check(comparisons: pd.DataFrame, by: Sequence[str], methods: Sequence[str], share: float) -> None:
    missing = [c for c in _NEEDS if c not in comparisons.columns]
    if missing:
        raise DataError("position bias needs a comparisons table, and this one has no "
                        + ", ".join(f"'{c}'" for c in missing) + " column",
                        fix="give a comparisons table (item_id, rater, rater_kind, winner, swapped)")
    unknown = [c for c in by if c not in comparisons.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(map(str, comparisons.columns[:12])))
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise DataError(f"unknown calibration method '{bad[0]}'", fix="use " + ", ".join(METHODS))
    if isinstance(share, bool) or not isinstance(share, (int, float, np.floating)) or not 0 < share <= 1:
        raise DataError(f"the estimation share must be above 0 and at most 1, not {share!r}", fix="use e.g. 0.2")


def _units(comparisons: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's unit code and whether the row names the unit's pair the other way round."""
    item = comparisons["item_id"].astype(str).to_numpy()
    if not {"system_a", "system_b"} <= set(comparisons.columns):
        return pd.factorize(item)[0], np.zeros(len(item), dtype=bool)
    sa = comparisons["system_a"].astype("string").fillna("").to_numpy(dtype=str)
    sb = comparisons["system_b"].astype("string").fillna("").to_numpy(dtype=str)
    lo, hi = np.where(sa < sb, sa, sb), np.where(sa < sb, sb, sa)
    unit = pd.factorize(pd.MultiIndex.from_arrays([item, lo, hi]))[0]
    first = np.unique(unit, return_index=True)[1]  # the unit's first row sets its orientation
    return unit, sa != sa[first][unit]


def _gold(comparisons: pd.DataFrame, unit: np.ndarray, flip: np.ndarray, n_units: int) -> np.ndarray:
    """Gold per unit: rater 'gold' if present, else the humans' strict majority; 0 a, 1 b, 2 tie, -1 none."""
    human = (comparisons["rater_kind"].astype(str) != "judge").to_numpy()
    rater = comparisons["rater"].astype(str).to_numpy()
    if (human & (rater == "gold")).any():
        human = human & (rater == "gold")
    vote, bad = votes(comparisons["winner"], flip), invalid_mask(comparisons)
    label, _ = human_labels(n_units, unit[human], pd.factorize(rater[human])[0], vote[human], bad[human])
    return label


def _first_values(unit: np.ndarray, values: np.ndarray, n_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, the first row (in table order) whose values are all finite, and whether there is one."""
    ok = np.isfinite(values).all(axis=1)
    rows = np.flatnonzero(ok)
    u, first = np.unique(unit[rows], return_index=True)
    out = np.full((n_units, values.shape[1]), np.nan)
    has = np.zeros(n_units, dtype=bool)
    out[u], has[u] = values[rows[first]], True
    return out, has


def judge_data(comparisons: pd.DataFrame, judge: str, *, by: Sequence[str] = ()) -> JudgeData:
    """One judge's units (:class:`JudgeData`), from a canonical comparisons table.

    >>> df = pd.DataFrame({"item_id": ["1", "1", "1"], "rater": ["gold", "j", "j"],
    ...                    "rater_kind": ["human", "judge", "judge"], "winner": ["a", "a", "b"],
    ...                    "swapped": [False, False, True]})
    >>> d = judge_data(df, "j")
    >>> d.verdicts.tolist(), d.label.tolist()
    ([[0, 1]], [0])
    """
    by = list(by)
    unit, flip = _units(comparisons)
    n_all = int(unit.max()) + 1 if len(unit) else 0
    label = _gold(comparisons, unit, flip, n_all)
    mine = ((comparisons["rater"].astype(str) == judge) & (comparisons["rater_kind"].astype(str) == "judge")).to_numpy()
    swapped = (comparisons["swapped"].astype("boolean").fillna(False).to_numpy(dtype=bool)
               if "swapped" in comparisons.columns else np.zeros(len(unit), dtype=bool))
    order = (swapped ^ flip).astype(np.int64)  # 0: the unit's a shown first
    bad = invalid_mask(comparisons)
    u, o, v = rater_verdicts(unit[mine], order[mine], votes(comparisons["winner"], flip)[mine], bad[mine])
    verdicts = np.full((n_all, 2), -1, dtype=np.int64)
    verdicts[u, o] = np.where(v == INVALID, -1, v)
    unparsed = np.zeros((n_all, 2), dtype=bool)
    unparsed[u, o] = v == INVALID
    bad_rows = np.bincount(unit[mine & bad], minlength=n_all)
    cols = [c for c in PROB_COLUMNS if c in comparisons.columns]
    raw = (comparisons[list(PROB_COLUMNS)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
           if len(cols) == 3 else np.full((len(unit), 3), np.nan))
    probs, _ = _first_values(unit[mine], raw[mine], n_all)
    rev, _ = _first_values(unit[mine], np.where(np.isfinite(raw[mine]).all(axis=1), flip[mine], np.nan)[:, None],
                           n_all)
    keep = np.zeros(n_all, dtype=bool)
    keep[unit[mine]] = True
    first = np.unique(unit, return_index=True)[1]
    groups = comparisons.iloc[first][by].reset_index(drop=True).loc[keep]
    gcode = groups.groupby(by, dropna=False, sort=True).ngroup().to_numpy() if by else np.zeros(keep.sum(), int)
    gfirst = np.unique(gcode, return_index=True)[1]
    item = pd.factorize(comparisons["item_id"].astype(str).to_numpy()[first][keep])[0]
    lab = label[keep]
    return JudgeData(judge=judge, item=item, group=gcode, keys=[tuple(groups.iloc[i]) for i in gfirst],
                     verdicts=verdicts[keep], probs=probs[keep], reversed=rev[keep, 0] == 1,
                     label=np.where(lab == 2, -1, lab), n_invalid=int((mine & bad).sum()),
                     n_unlabelled=int((lab < 0).sum() + (lab == 2).sum()), unparsed=unparsed[keep],
                     unparsed_rows=bad_rows[keep])


def content_probabilities(probs, reversed_, calibration: Calibration | None = None) -> np.ndarray:
    """``(units, 3)`` P(the unit's a is better) in the original order, the swapped order and the third prompt.

    From raw P("A") under (s0, s1, s2), after ``calibration`` (none: as given):
    :math:`(g_0, 1 - g_2, g_1)`, or :math:`(g_2, 1 - g_0, 1 - g_1)` for a row that names the pair the other
    way round (its s2 shows the unit's a first labelled "A").

    >>> content_probabilities([[0.7, 0.6, 0.2]], [False]).tolist()
    [[0.7, 0.8, 0.6]]
    """
    p = np.asarray(probs, dtype=float)
    g = calibration.apply(p) if calibration is not None else p
    rev = np.asarray(reversed_, dtype=bool)[:, None]
    return np.where(rev, np.column_stack([g[:, 2], 1 - g[:, 0], 1 - g[:, 1]]),
                    np.column_stack([g[:, 0], 1 - g[:, 2], g[:, 1]]))


def _decide(c: np.ndarray) -> np.ndarray:
    """a (0) above 1/2, b (1) below, tie (2) at 1/2, none (-1) where NaN."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(c), -1, np.where(c > 0.5, 0, np.where(c < 0.5, 1, 2))).astype(np.int64)


def _share(U: np.ndarray, hit: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``sum w * hit / sum w * base`` per row of the unit weights ``U`` (estimate, then replicates)."""
    return safe_div(U @ hit.astype(float), U @ base.astype(float))


def _n_items(item: np.ndarray, mask: np.ndarray) -> int:
    """Distinct items under ``mask``; ``item`` holds the cell's item codes (0..n-1), so a count of codes is
    enough, linear where ``np.unique`` sorts (about 1.6 s of a 100,000-item run)."""
    return int(np.count_nonzero(np.bincount(item[mask])))


def _accuracy_rows(U: np.ndarray, item: np.ndarray, dec: np.ndarray, label: np.ndarray) -> list[tuple]:
    """Accuracy in each order, their mean, and in both orders at once (LLMBar's correct_False/True/both)."""
    gold = label >= 0
    out, acc = [], []
    for k, name in enumerate(("accuracy_original_order", "accuracy_swapped_order")):
        base = gold & (dec[:, k] >= 0)
        acc.append(_share(U, base & (dec[:, k] == label), base))
        out.append((name, acc[-1], _n_items(item, base)))
    either = gold & ((dec[:, 0] >= 0) | (dec[:, 1] >= 0))
    out.append(("accuracy_average", (acc[0] + acc[1]) / 2, _n_items(item, either)))
    both = gold & (dec[:, 0] >= 0) & (dec[:, 1] >= 0)
    right = both & (dec[:, 0] == label) & (dec[:, 1] == label)
    out.append(("accuracy_both_orders", _share(U, right, both), _n_items(item, both)))
    return out


def _order_rows(U: np.ndarray, item: np.ndarray, dec: np.ndarray, label: np.ndarray) -> list[tuple]:
    """Position consistency, first-position preference and RStd."""
    both = (dec[:, 0] >= 0) & (dec[:, 1] >= 0)
    out = [("position_consistency", _share(U, both & (dec[:, 0] == dec[:, 1]), both), _n_items(item, both))]
    decisive = (dec[:, :2] == 0) | (dec[:, :2] == 1)
    first = (dec[:, 0] == 0).astype(float) + (dec[:, 1] == 1)  # a is first in the original order, b in the swapped
    out.append(("first_position_preference", _share(U, first, decisive.sum(axis=1)), _n_items(item, decisive.any(1))))
    stds = []
    for k in range(dec.shape[1]):
        recall = [_share(U, (label == c) & (dec[:, k] == c), (label == c) & (dec[:, k] >= 0)) for c in (0, 1)]
        stds.append(np.abs(recall[0] - recall[1]) / 2)
    used = (label >= 0) & (dec >= 0).any(axis=1)
    out.append(("rstd", np.mean(stds, axis=0), _n_items(item, used)))
    return out


def _fleiss(U: np.ndarray, dec: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of the decisions (columns: raters; a, b, tie) over the weighted units with all of them.

    :math:`\\kappa = (\\bar P - P_e) / (1 - P_e)`, :math:`P_i = (\\sum_j n_{ij}^2 - m) / (m(m-1))`,
    :math:`P_e = \\sum_j p_j^2` (Fleiss 1971), each item counted as often as the resample draws it.
    """
    m = dec.shape[1]
    full = (dec >= 0).all(axis=1)
    # a, b, tie, and an unparsed output (only with invalid="wrong") as a fourth category
    counts = np.stack([(dec == c).sum(axis=1) for c in range(4)], axis=1).astype(float) * full[:, None]
    n = U @ full.astype(float)
    p_bar = safe_div(U @ (((counts ** 2).sum(axis=1) - m) / (m * (m - 1)) * full), n)
    p_cat = safe_div(U @ counts, (m * n)[:, None])
    p_e = (p_cat ** 2).sum(axis=1)
    return safe_div(p_bar - p_e, 1 - p_e)


def _icc(U: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ICC(2,k) and ICC(3,k) of ``x`` (units x raters) with each unit weighted (two-way ANOVA mean squares)."""
    k = x.shape[1]
    full = np.isfinite(x).all(axis=1)
    # centred first (the ICC does not change), so that the sums of squares do not cancel
    x = np.where(full[:, None], x - (x[full].mean() if full.any() else 0.0), 0.0)
    n = U @ full.astype(float)
    row = x.mean(axis=1)
    grand = safe_div(U @ row, n)
    ss_total = U @ (x ** 2).sum(axis=1) - k * n * grand ** 2
    ss_rows = k * (U @ row ** 2 - n * grand ** 2)
    col = safe_div(U @ x, n[:, None])
    ss_cols = n * ((col ** 2).sum(axis=1) - k * grand ** 2)
    ms_r = safe_div(ss_rows, n - 1)
    ms_c = ss_cols / (k - 1)
    ms_e = safe_div(ss_total - ss_rows - ss_cols, (n - 1) * (k - 1))
    return safe_div(ms_r - ms_e, ms_r + safe_div(ms_c - ms_e, n)), safe_div(ms_r - ms_e, ms_r)


def _cell_rows(U: np.ndarray, item: np.ndarray, dec: np.ndarray, label: np.ndarray,
               content: np.ndarray | None) -> list[tuple]:
    """Every measure of one cell: ``(measure, values, n, note)``; values hold the estimate then the replicates."""
    rows = [(*r, "") for r in _accuracy_rows(U, item, dec, label) + _order_rows(U, item, dec, label)]
    full = (dec >= 0).all(axis=1)
    which = "the three prompts" if dec.shape[1] == 3 else "the two orders"
    rows.append(("fleiss_kappa", _fleiss(U, dec), _n_items(item, full), f"over {which}"))
    if content is None:
        why = f"{NOT_AVAILABLE}: ICC needs {_NO_PROBS}"
        rows += [("icc2k", np.nan, 0, why), ("icc3k", np.nan, 0, why)]
    else:
        ok = np.isfinite(content).all(axis=1)
        icc2, icc3 = _icc(U, content)
        rows += [("icc2k", icc2, _n_items(item, ok), "over P(a better) in the three prompts"),
                 ("icc3k", icc3, _n_items(item, ok), "over P(a better) in the three prompts")]
    return rows


_UNDEFINED = {
    "first_position_preference": "not defined: no decisive verdict",
    "position_consistency": "not defined: no item has verdicts in both orders",
    "fleiss_kappa": "not defined: no item has every decision, or all decisions are the same",
}
_NEEDS_GOLD = "not defined: no item has both a gold label (rater 'gold' or a strict human majority) and the verdicts"
_NAMES = {"pride": "PriDe", "noa": "NOA (exact gradient, to convergence)", "noa_released": "NOA (released settings)"}


def _estimation_units(data: JudgeData, share: float, root: int) -> np.ndarray:
    """The units of a seeded ``share`` of the judge's items with all three probabilities (the estimation subset)."""
    ok = np.isfinite(data.probs).all(axis=1)
    items = np.unique(data.item[ok])
    m = int(round(share * len(items)))
    if m < 1:
        return np.zeros(len(ok), dtype=bool)
    chosen = cell_rng(root, ("estimation", data.judge)).choice(items, size=m, replace=False)
    return ok & np.isin(data.item, chosen)


def _fit(method: str, probs: np.ndarray, judge: str, lam: float | None, root: int) -> Calibration:
    if method == "pride":
        return fit_pride(probs[:, 0], probs[:, 2], judge=judge)
    if method == "noa":
        if lam is None:  # chosen without labels on a held-out split of the estimation subset
            seed = int(cell_rng(root, ("noa_lambda", judge)).integers(2 ** 31))
            return fit_noa_selected(probs, seed=seed, judge=judge)
        return fit_noa(probs, lam=lam, judge=judge)
    return fit_noa_released(probs, lam=LAMBDA if lam is None else lam, judge=judge)


def _withheld(cal: Calibration, name: str, probs: np.ndarray | None) -> str:
    """Why a collapsed NOA map is not offered (empty for a usable calibration)."""
    if not getattr(cal, "collapsed", False):
        return ""
    why = cal.reason or (collapse_reason(probs, f"(lambda {cal.lam:g}: {cal.at_half:.0%} of the fitted "
                                                f"probabilities within 0.001 of 1/2)") if probs is not None else
                         f"NOA collapsed to the constant map g = 1/2 (lambda {cal.lam:g}: {cal.at_half:.0%} of the "
                         "fitted probabilities within 0.001 of 1/2); its decisions would be arbitrary, so the "
                         "uncalibrated numbers stand")
    return f"{NOT_AVAILABLE}: {name} is not offered: {why}"


def _plan(data: JudgeData, methods: Sequence[str], share: float, root: int, lam: float | None,
          given: dict) -> dict[str, tuple[Calibration | None, str, str]]:
    """Per method: ``(calibration, note, reason it is not available)``; fits what ``given`` does not hold.

    A NOA map that collapses to the constant 1/2 is not available: its reason says what happened, and the
    uncalibrated rows (``none``) stand."""
    out: dict[str, tuple[Calibration | None, str, str]] = {}
    est = None
    for m in methods:
        if m == "none":
            out[m] = (None, "decided by P(a better) > 0.5 from the prob columns" if data.has_probs else "", "")
        elif not data.has_probs:
            out[m] = (None, "", f"{NOT_AVAILABLE}: {_NAMES[m]} needs {_NO_PROBS}, and judge {data.judge} has none")
        elif (data.judge, m) in given:
            cal = given[(data.judge, m)]
            out[m] = (cal, f"{_NAMES[m]} loaded from a saved calibration (fitted on {cal.n_items} items)",
                      _withheld(cal, _NAMES[m], None))
        else:
            est = _estimation_units(data, share, root) if est is None else est
            n_all = np.unique(data.item[np.isfinite(data.probs).all(axis=1)]).size
            if not est.any():
                out[m] = (None, "", f"{NOT_AVAILABLE}: the estimation share {share:g} of {n_all} items is no item")
                continue
            n_est = np.unique(data.item[est]).size
            cal = _fit(m, data.probs[est], data.judge, lam, root)
            how = f", lambda {cal.lam:g} chosen without labels on held-out items" if getattr(cal, "selection", "") \
                else ""
            out[m] = (cal, f"{_NAMES[m]} fitted on {n_est} of {n_all} items (share {share:g}){how}, applied to all; "
                           "the interval holds the fit fixed", _withheld(cal, _NAMES[m], data.probs[est]))
    return out


def _judges(comparisons: pd.DataFrame, judges: Sequence[str] | None) -> list[str]:
    is_judge = comparisons["rater_kind"].astype(str) == "judge"
    have = sorted(set(comparisons.loc[is_judge, "rater"].astype(str)))
    if not have:
        raise DataError("the table has no judge rows", fix="mark the LLM judges' rows with rater_kind 'judge'")
    if judges is None:
        return have
    judges = [judges] if isinstance(judges, str) else list(judges)
    unknown = [j for j in judges if j not in have]
    if unknown:
        raise DataError(f"{', '.join(unknown)} is not a judge in this table", fix="pick from: " + ", ".join(have))
    return list(dict.fromkeys(judges))


def _given(calibrations: Sequence[Calibration], have: Sequence[str]) -> dict:
    given = {(c.judge, c.method): c for c in calibrations}
    if given and not {j for j, _ in given} & set(have):
        raise DataError("the saved calibrations are for " + ", ".join(sorted({j for j, _ in given}))
                        + ", which is not a judge of this table",
                        fix="apply a calibration to a file of the same judge (judges here: " + ", ".join(have) + ")")
    return given


def _add_group(table: ResultTable, tests: list, data: JudgeData, g: int, keys: dict, plan: dict, root: int,
               n_boot: int, invalid: str = "drop") -> None:
    """The rows of one judge and group, for every method (same resamples across methods: paired)."""
    cell = data.group == g
    uniq, inv = np.unique(data.item[cell], return_inverse=True)
    U = item_weights(cell_rng(root, tuple(keys.values())), len(uniq), n_boot)[:, inv.ravel()]
    item, label = inv.ravel(), data.label[cell]  # the cell's items as codes 0..len(uniq)-1
    for method, (cal, method_note, reason) in plan.items():
        row_keys = {**keys, "method": method}
        if reason:
            table.add(row_keys, NOT_AVAILABLE, np.nan, 0, undefined=reason)
            continue
        content = content_probabilities(data.probs[cell], data.reversed[cell], cal) if data.has_probs else None
        if content is not None:
            dec = _decide(content)
        elif invalid == "wrong":  # an unparsed output is a verdict that matches neither gold nor a parsed verdict
            dec = np.where(data.unparsed[cell], INVALID, data.verdicts[cell])
        else:
            dec = data.verdicts[cell]
        cell_note = join_notes(method_note, _coverage_note(data, cell, dec, invalid))
        for measure, values, n, note in _cell_rows(U, item, dec, label, content):
            if measure == "first_position_preference":
                tests.append((len(table), np.atleast_1d(values)))
            undefined = note if np.isscalar(values) else _UNDEFINED.get(measure, _NEEDS_GOLD)
            table.add(row_keys, measure, values, n, undefined=undefined,
                      note=join_notes(note if not np.isscalar(values) else "", cell_note))


def _coverage_note(data: JudgeData, cell: np.ndarray, dec: np.ndarray, invalid: str = "drop") -> str:
    """What is missing in a cell: an order without verdicts, units without probabilities, the cell's own
    unparsed outputs (left out, or counted as wrong)."""
    notes = []
    for k, order in enumerate(("original", "swapped")):
        if (dec[:, k] < 0).all():
            notes.append(f"no verdict in the {order} order" + (" (no row with swapped true)" if k else ""))
    if data.has_probs:
        lacking = int((~np.isfinite(data.probs[cell]).all(axis=1)).sum())
        if lacking:
            notes.append(f"{lacking} item(s) without all three probabilities left out")
    else:
        n_bad = int(data.unparsed_rows[cell].sum())
        if n_bad and invalid == "wrong":
            notes.append(f"{n_bad} unparsed output(s) counted as wrong verdicts (LLMBar's rule)")
        elif n_bad:
            notes.append(f"{n_bad} unparsed output(s) left out")
    return join_notes(*notes)


def _finish(table: ResultTable, tests: list, n_boot: int) -> pd.DataFrame:
    """The frame, with first-position preference tested two-sided against 0.5 and the flag rule applied."""
    out = table.frame()
    for i, values in tests:
        if n_boot == 0 or not np.isfinite(out.at[i, "estimate"]) or not np.isfinite(out.at[i, "ci_low"]):
            continue
        p = z_p_value(values[:1], values[None, 1:], alternative="two-sided", null=0.5)[0]
        if np.isfinite(p):
            out.at[i, "test"], out.at[i, "p_value"] = "two-sided", float(p)
        else:
            out.at[i, "note"] = join_notes(out.at[i, "note"], "the resamples do not vary, so not tested")
    return apply_fdr(out)


def _methods(methods: Sequence[str] | str) -> list[str]:
    return [methods] if isinstance(methods, str) else list(dict.fromkeys(methods))


@takes_table(COMPARISONS, "swapped", "prob_a", "prob_a_swap_position", "prob_a_swap_id")
def fit_calibrations(comparisons: pd.DataFrame, *, judges: Sequence[str] | None = None,
                     methods: Sequence[str] = METHODS, estimation_share: float = 0.2, lam: float | None = None,
                     seed: int | np.random.Generator = 0, offered_only: bool = False) -> tuple[Calibration, ...]:
    """Fit each judge's calibrations on its seeded estimation subset, as :func:`position_report` does.

    Judges without probabilities are skipped. With the same ``seed`` and ``estimation_share`` the
    fits equal the report's, so that :func:`save_calibrations` stores what the report applied. A NOA map
    that collapsed is kept, marked (:attr:`~evalcore.pairwise.calibraeval.NoaCalibration.collapsed`, its
    ``reason``), unless ``offered_only``; the report never applies it.

    Parameters
    ----------
    comparisons, judges, methods, estimation_share, lam, seed
        As in :func:`position_report` (``"none"`` in ``methods`` fits nothing).
    offered_only
        Leave out the NOA maps that collapsed (the ones the report does not apply).
    item, rater, kind, winner, system_a, system_b, swapped, prob_a, prob_a_swap_position, prob_a_swap_id
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    tuple
        :class:`~evalcore.pairwise.pride.PrideCalibration` and
        :class:`~evalcore.pairwise.calibraeval.NoaCalibration` objects, each naming its judge and method:
        what :func:`save_calibrations` writes and ``position_report(calibrations=...)`` applies.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> cals = fit_calibrations(comparisons, methods=["pride"], seed=0)
    >>> [(c.judge, c.method, round(c.prior_a, 3)) for c in cals]
    [('gpt-4/pairwise', 'pride', 0.646)]
    >>> report = position_report(comparisons, judges=["gpt-4/pairwise"], methods=["pride"], calibrations=cals,
    ...                          n_boot=0)
    >>> float(report.query("measure == 'first_position_preference'")["estimate"].iloc[0].round(3))
    0.5
    """
    methods = _methods(methods)
    _check(comparisons, (), methods, estimation_share)
    root = root_seed(seed)
    out = []
    for judge in _judges(comparisons, judges):
        plan = _plan(judge_data(comparisons, judge), [m for m in methods if m != "none"], estimation_share, root,
                     lam, {})
        out += [cal for cal, _, why in plan.values() if cal is not None and not (offered_only and why)]
    return tuple(out)


def dumps_calibrations(calibrations: Sequence[Calibration]) -> str:
    """Fitted calibrations as the JSON text :func:`save_calibrations` writes (the app's download)."""
    return json.dumps({"format": _FORMAT, "version": 1, "calibrations": [c.to_dict() for c in calibrations]},
                      indent=1)


def save_calibrations(path: str | Path, calibrations: Sequence[Calibration]) -> Path:
    """Write fitted calibrations to a JSON file (read back by :func:`load_calibrations`)."""
    path = Path(path)
    path.write_text(dumps_calibrations(calibrations), encoding="utf-8")
    return path


def load_calibrations(path: str | Path) -> tuple[Calibration, ...]:
    """The calibrations saved by :func:`save_calibrations`.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "cal.json")
    >>> _ = save_calibrations(f, [PrideCalibration(prior_a=0.6, n_items=20, judge="j")])
    >>> load_calibrations(f)
    (PrideCalibration(prior_a=0.6, n_items=20, judge='j', method='pride'),)
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the calibration file ({exc})", file=str(path),
                        fix="give a file written by evalcore position --save-calibration") from None
    return loads_calibrations(text, file=str(path))


def loads_calibrations(text: str, *, file: str = "the calibration file") -> tuple[Calibration, ...]:
    """The calibrations in JSON ``text`` written by :func:`dumps_calibrations` (an upload in the app)."""
    path = file
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise DataError(f"is not JSON ({exc})", file=path,
                        fix="give a file written by evalcore position --save-calibration") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or not isinstance(doc.get("calibrations"), list):
        raise DataError("is not an evalcore calibration file", file=str(path),
                        fix="give a file written by evalcore position --save-calibration")
    out = []
    for item in doc["calibrations"]:
        method = item.get("method") if isinstance(item, dict) else None
        if method not in METHODS[1:]:
            raise DataError(f"holds a calibration of unknown method {method!r}", file=str(path),
                            fix="give a file written by evalcore position --save-calibration")
        out.append(PrideCalibration.from_dict(item) if method == "pride" else NoaCalibration.from_dict(item))
    return tuple(out)


@takes_table(COMPARISONS, "swapped", "prob_a", "prob_a_swap_position", "prob_a_swap_id")
def position_report(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                    methods: Sequence[str] = METHODS, estimation_share: float = 0.2,
                    calibrations: Sequence[Calibration] = (), lam: float | None = None, invalid: str = "drop",
                    n_boot: int = 1000, seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    """Position and selection bias of every judge, before and after calibration (module docstring).

    Parameters
    ----------
    comparisons
        A canonical ``comparisons`` table: ``item_id, rater, rater_kind, winner`` and ``swapped``; optional
        ``system_a, system_b``, ``invalid`` and the three probability columns (:data:`PROB_COLUMNS`).
    by
        Per-item columns to break the measures down by (``subset``, ``task``...).
    judges
        The judges to report (default: every judge).
    methods
        Any of :data:`METHODS`. A judge without probabilities gets one ``not_available`` row per
        calibration method, its reason in ``note``.
    estimation_share
        The share of each judge's items (seeded) the calibrations are fitted on, in (0, 1].
    calibrations
        Fitted calibrations to apply instead of fitting (:func:`load_calibrations`), matched by judge and method.
    lam
        NOA's lambda; None (default) chooses it without labels on a held-out split of the estimation subset
        (:func:`~evalcore.pairwise.calibraeval.fit_noa_selected`); the released settings then use the authors'
        0.05. A NOA map that still collapses to the constant 1/2 is not offered: one ``not_available`` row
        whose note says what happened, and the uncalibrated rows stand.
    invalid
        What an unparsed judge output (``invalid``) is, for judges decided by their verdicts: ``"drop"``
        (default) leaves that order's verdict out, so an item counts only where it has the verdicts a measure
        needs; ``"wrong"`` counts it as LLMBar's ``evaluate.py`` does, where an unparsed winner is ``None``:
        a verdict that is never right (accuracy over every item), differs from a parsed verdict in the other
        order (not position-consistent), and equals another unparsed one (an item unparsed in both orders
        counts as consistent, as ``None == None`` does there). Not used where probabilities decide.
    n_boot, seed, level
        Item-bootstrap resamples (0: no interval), the seed of the estimation subsets and resamples (a whole
        number or a ``numpy.random.Generator``), the level.
    item, rater, kind, winner, system_a, system_b, swapped, prob_a, prob_a_swap_position, prob_a_swap_id
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``judge, *by, method, measure, estimate, ci_low, ci_high, n, test, p_value, q_value, flagged, opposite,
        note``: one row per judge, group, method and measure (:data:`MEASURES`); ``n`` counts items.
        ``first_position_preference`` is tested two-sided against 0.5.

    Examples
    --------
    >>> df = pd.DataFrame({"item_id": ["1", "1", "1", "2", "2", "2"], "rater": ["gold", "j", "j"] * 2,
    ...                    "rater_kind": ["human", "judge", "judge"] * 2, "winner": ["a", "a", "b", "b", "b", "b"],
    ...                    "swapped": [False, False, True] * 2})
    >>> res = position_report(df, methods=["none"], n_boot=0).set_index("measure")
    >>> res.loc[["accuracy_original_order", "accuracy_swapped_order", "position_consistency"], "estimate"].tolist()
    [1.0, 0.5, 0.5]

    On the sample, each judge's preference for the first position, before and after PriDe:

    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> table = position_report(comparisons, methods=["none", "pride"], n_boot=200, seed=0)
    >>> first = table.query("measure == 'first_position_preference'")
    >>> print(first[["judge", "method", "estimate", "ci_low", "ci_high", "flagged"]].round(3).to_string(index=False))
                   judge method  estimate  ci_low  ci_high  flagged
        gpt-3.5/pairwise   none     0.616   0.604    0.630     True
          gpt-4/pairwise   none     0.553   0.544    0.563     True
          gpt-4/pairwise  pride     0.500   0.500    0.500    False
    llama-2-70b/pairwise   none     0.678   0.659    0.694     True
    """
    by, methods = ([by] if isinstance(by, str) else list(by)), _methods(methods)
    _check(comparisons, by, methods, estimation_share)
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    if invalid not in INVALID_RULES:
        raise DataError(f"unknown rule for unparsed outputs {invalid!r}", fix="use " + " or ".join(INVALID_RULES))
    use = _judges(comparisons, judges)
    given = _given(calibrations, _judges(comparisons, None))
    table, tests = ResultTable(["judge", *by, "method"], n_boot=n_boot, level=level), []
    for judge in use:
        data = judge_data(comparisons, judge, by=by)
        plan = _plan(data, methods, estimation_share, root, lam, given)
        for g, key in enumerate(data.keys):
            _add_group(table, tests, data, g, {"judge": judge, **dict(zip(by, key))}, plan, root, n_boot, invalid)
    return _finish(table, tests, n_boot)
