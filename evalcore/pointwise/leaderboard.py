"""Which judge to use: the judges ranked by their agreement with the humans, with a paired comparison to the best.

Per group (``criterion`` and ``by``) and measure, every judge's estimate with its percentile
bootstrap interval, its rank (1 = the highest estimate), and its difference to the best judge of
the group, :math:`\\Delta_j = \\hat\\theta_j - \\hat\\theta_{best}`, with a percentile interval from a
**paired** bootstrap: every judge of a group is computed on the same resamples of inputs (items
without ``input_id``; :func:`evalcore.pointwise.meta.cell_weights`), and the interval is that of
:math:`\\theta^*_{j,b} - \\theta^*_{best,b}` over the resamples b, so that the judges' shared
sampling noise (the same hard inputs, the same systems) cancels (Efron & Tibshirani 1993, §16.4, the
paired comparison; Deutsch, Dror & Roth 2021, "A statistical analysis of summarization evaluation
metrics using resampling methods", for the meta-evaluation of metrics).
``worse_than_best`` is true only when that interval lies entirely below 0: "the best judge is
better than j" is claimed only then.

Measures (:mod:`evalcore.pointwise.meta`): the item level ``kendall_tau`` (the judge's score against the
humans' mean score across items, tau-b; :func:`evalcore.stats.tau_b` for all resamples at once) and
``spearman_rho``; the system level ``kendall_tau_system``, ``spearman_rho_system``,
``pearson_r_system``; the input level ``kendall_tau_input``, ``spearman_rho_input``, ``pearson_r_input``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import RATINGS
from ..errors import DataError
from ..stats.bootstrap import check_level, check_resamples, percentile_interval, root_seed
from .meta import LevelResult, MetaCell, MetaData, cell_weights, level_of, level_values, meta_data

__all__ = ["LEADERBOARD_COLUMNS", "judge_leaderboard"]

#: The columns after the group columns (``criterion, *by``).
LEADERBOARD_COLUMNS = ("measure", "rank", "judge", "estimate", "ci_low", "ci_high", "n", "n_unit", "n_items",
                       "n_systems", "diff_to_best", "diff_ci_low", "diff_ci_high", "worse_than_best", "note")


def _check_measures(measures: str | Sequence[str]) -> list[str]:
    measures = [measures] if isinstance(measures, str) else list(dict.fromkeys(measures))
    if not measures:
        raise DataError("the leaderboard needs at least one measure", fix="e.g. measures=('kendall_tau',)")
    for m in measures:
        level_of(m)  # a DataError naming the known measures
    return measures


def _rank(est: np.ndarray) -> np.ndarray:
    """1 for the highest estimate, ties sharing the smaller rank; 0 where the estimate is undefined."""
    fin = np.isfinite(est)
    rank = np.zeros(len(est), dtype=np.int64)
    for i in np.flatnonzero(fin):
        rank[i] = 1 + int((est[fin] > est[i]).sum())
    return rank


def _rows(keys: dict, measure: str, judges: list[str], results: list[LevelResult], level: float,
          n_boot: int, unit: str, n_items: list[int]) -> list[dict]:
    """The ranked rows of one group and measure."""
    vals = np.vstack([np.broadcast_to(np.asarray(r.values[measure], dtype=float), (1 + n_boot,)) for r in results])
    est = vals[:, 0]
    lo, hi, sparse_ci = percentile_interval(vals[:, 1:], level)
    rank = _rank(est)
    best = int(np.argmax(np.where(np.isfinite(est), est, -np.inf))) if np.isfinite(est).any() else -1
    diff = vals - vals[best] if best >= 0 else np.full_like(vals, np.nan)
    dlo, dhi, _ = percentile_interval(diff[:, 1:], level)
    rows = []
    for k, (judge, res) in enumerate(zip(judges, results)):
        defined = bool(np.isfinite(est[k]))
        notes = [] if defined else [res.undefined or "not defined"]
        notes += [res.note] if res.note else []
        if defined and n_boot == 0:
            notes.append("no interval (n_boot=0)")
        elif defined and sparse_ci[k]:
            notes.append("no interval: the measure is undefined in most resamples")
        with np.errstate(invalid="ignore"):
            worse = bool(defined and dhi[k] < 0)
        rows.append({**keys, "measure": measure, "rank": int(rank[k]) if defined else pd.NA, "judge": judge,
                     "estimate": est[k] if defined else np.nan, "ci_low": lo[k], "ci_high": hi[k], "n": res.n,
                     "n_unit": unit, "n_items": n_items[k], "n_systems": res.n_systems, "diff_to_best": diff[k, 0],
                     "diff_ci_low": dlo[k], "diff_ci_high": dhi[k], "worse_than_best": worse, "note": "; ".join(notes)})
    rows.sort(key=lambda r: (pd.isna(r["rank"]), 0 if pd.isna(r["rank"]) else r["rank"]))
    return rows


def _group(data: MetaData, cell: MetaCell, measures: list[str], root: int, n_boot: int, level: float) -> list[dict]:
    W = cell_weights(cell, root, n_boot)
    judges = [j for j in data.judges if np.isfinite(cell.scores[j]).any()]
    if not judges:
        return []
    cache: dict[tuple[str, str], LevelResult] = {}
    for judge in judges:
        for lv in dict.fromkeys(level_of(m) for m in measures):
            cache[judge, lv] = level_values(data, cell, judge, W, lv, measures=measures)
    keys = dict(zip(data.by, cell.keys))
    unit = "inputs" if data.has_input else "items"  # what the bootstrap resamples, and so what n counts
    rows = []
    for m in measures:
        lv = level_of(m)
        items = [_n_items(cell, j, lv, data.has_system) for j in judges]
        rows += _rows(keys, m, judges, [cache[j, lv] for j in judges], level, n_boot, unit, items)
    return rows


def _n_items(cell: MetaCell, judge: str, level: str, has_system: bool) -> int:
    """The items behind a judge's estimate: scored by the humans and the judge (and, above the item level, of a
    system); 0 where the level needs a system column the table lacks."""
    both = np.isfinite(cell.human) & np.isfinite(cell.scores[judge])
    if level != "item":
        both &= (cell.system >= 0) & has_system
    return int(both.sum())


@takes_table(RATINGS, "system", "input")
def judge_leaderboard(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: Sequence[str] | None = None,
                      measures: str | Sequence[str] = ("kendall_tau", "kendall_tau_system"), n_boot: int = 1000,
                      seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    """The judges ranked per group and measure, with intervals and a paired bootstrap difference to the best.

    Parameters
    ----------
    ratings
        A validated ratings table with numeric scores (``system`` for the system level, ``input_id``
        for the input level and for resampling inputs).
    by
        Per-item columns to group by besides ``criterion`` (always a group).
    judges
        The judges to rank (default: every judge).
    measures
        The measures to rank by (see the module's docstring); default the item-level and the
        system-level Kendall tau.
    n_boot, seed, level
        Bootstrap resamples (the same for every judge of a group; 0: no interval), the seed, the
        confidence level of the intervals.
    item, rater, kind, criterion, score, sample, system, input
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per group, measure and judge, best first: ``criterion, *by`` then
        :data:`LEADERBOARD_COLUMNS`. ``rank`` is 1 for the best (ties share a rank; null where the
        estimate is not defined), ``diff_to_best`` the judge's estimate minus the best's (0 for the
        best), ``diff_ci_low``/``diff_ci_high`` its paired percentile interval, ``worse_than_best``
        true when that interval lies below 0. ``n`` counts the resampled units behind the estimate and
        ``n_unit`` names them: ``inputs`` when the table has ``input_id`` (the bootstrap resamples inputs, so
        an item-level tau over 1,980 items of 90 inputs has n = 90), else ``items``; ``n_items`` counts the
        items behind the estimate whatever the unit, ``n_systems`` the systems.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=300)
    >>> t = pd.DataFrame({"item_id": np.tile(np.arange(300), 3), "rater": np.repeat(["h", "good", "poor"], 300),
    ...                   "rater_kind": np.repeat(["human", "judge", "judge"], 300),
    ...                   "score": np.concatenate([truth, truth + rng.normal(0, 0.3, 300), truth + rng.normal(0, 2, 300)])})
    >>> board = judge_leaderboard(t, measures="kendall_tau", n_boot=200)
    >>> board[["rank", "judge", "worse_than_best"]].values.tolist()
    [[1, 'good', False], [2, 'poor', True]]
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    measures = _check_measures(measures)
    data = meta_data(ratings, by=by, judges=judges)
    rows = [r for cell in data.cells for r in _group(data, cell, measures, root, n_boot, level)]
    out = pd.DataFrame(rows, columns=[*data.by, *LEADERBOARD_COLUMNS])
    out["rank"] = out["rank"].astype("Int64")
    out["n"] = out["n"].astype(np.int64)
    out["n_items"] = out["n_items"].astype(np.int64)
    out["n_systems"] = out["n_systems"].astype(np.int64)
    out["worse_than_best"] = out["worse_than_best"].astype(bool)
    return out.reset_index(drop=True)
