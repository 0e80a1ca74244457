"""Meta-evaluation of judges at three levels: item, input and system (as evaluation papers report it).

A judge is compared with the humans on one criterion at a time. Per item (one system's output for
one input) the humans' score is the mean of the item's human scores, and the judge's score is the
judge's score of the item (the mean over its samples when it scored the item several times).

Levels
------
``item`` (``kendall_tau``, ``spearman_rho``)
    The correlation across items of the judge's score with the humans' mean
    (:mod:`evalcore.pointwise.agreement` reports it too).
``system`` (``kendall_tau_system``, ``spearman_rho_system``, ``pearson_r_system``)
    Each system's human score is the mean over its items of the items' mean human score,
    :math:`\\bar h_s = \\frac{1}{|I_s|}\\sum_{i \\in I_s} h_i`, and its judge score the judge's mean over
    the **same** items, :math:`\\bar j_s = \\frac{1}{|I_s|}\\sum_{i \\in I_s} j_i`, with :math:`I_s` the
    items of system s that have both. The measure is the correlation of :math:`(\\bar h_s, \\bar j_s)`
    across systems: the system-level correlation of the summarisation meta-evaluations (SummEval,
    Fabbri et al. 2021, §4; G-Eval, Liu et al. 2023, which reports it next to the summary level).
    Systems without an item scored on both sides are left out and counted in ``note``.
``input`` (``kendall_tau_input``, ``spearman_rho_input``, ``pearson_r_input``)
    For each input (a source document or prompt that several systems answered) the correlation of
    :math:`(h, j)` across that input's systems (a system with several outputs for the input enters
    with their means), then the mean over inputs:
    :math:`\\frac{1}{|D|}\\sum_{d \\in D} \\operatorname{corr}(\\{(h_{ds}, j_{ds})\\}_s)`, the summary-level
    (or "story-level", HANNA, Chhun et al. 2022) correlation of SummEval and G-Eval. Inputs where
    the correlation is undefined (fewer than two systems, or constant scores on one side) are left
    out and counted in ``note``.

Kendall's tau is tau-b and Spearman's rho uses midranks for ties, as :func:`scipy.stats.kendalltau`
and :func:`scipy.stats.spearmanr`; Pearson's r is :func:`scipy.stats.pearsonr`'s statistic.

The bootstrap
-------------
Resamples **inputs** with replacement (an input brings every system's output for it, so that the
systems stay paired), the same resamples for every judge of a group (:func:`cell_weights`), so that
judges can be compared on them (:mod:`evalcore.pointwise.leaderboard`). Without an ``input_id``
column, items are resampled instead, and the input level is not available. Intervals are
percentile intervals (:mod:`evalcore.stats.bootstrap`). ``n`` counts the inputs (or items) behind an
estimate, ``n_systems`` the systems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..arguments import takes_table
from ..columns import HUMAN, RATINGS
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, percentile_interval, root_seed
from ..stats.kendall import tau_b
from ..stats.numeric import join_notes, safe_div
from ..stats.results import ResultTable
from ..stats.spearman import spearman_rho
from .coding import check_by

__all__ = ["INPUT_MEASURES", "ITEM_MEASURES", "LEVELS", "META_MEASURES", "SYSTEM_MEASURES", "LevelResult", "MetaCell",
           "MetaData", "cell_weights", "correlations", "level_of", "level_values", "meta_correlations", "meta_data", "system_means"]

ITEM_MEASURES = ("kendall_tau", "spearman_rho")
SYSTEM_MEASURES = ("kendall_tau_system", "spearman_rho_system", "pearson_r_system")
INPUT_MEASURES = ("kendall_tau_input", "spearman_rho_input", "pearson_r_input")
META_MEASURES = SYSTEM_MEASURES + INPUT_MEASURES
#: The measures of each level.
LEVELS = {"item": ITEM_MEASURES, "system": SYSTEM_MEASURES, "input": INPUT_MEASURES}
NEEDS_SYSTEM = "not_available: needs a system column"
NEEDS_INPUT = "not_available: needs input_id"
ITEMS_RESAMPLED = "no input_id column: the bootstrap resamples items, not inputs"
_CHUNK = 4_000_000  # pair comparisons held at once by correlations()


def level_of(measure: str) -> str:
    """The level (``item``, ``system`` or ``input``) of a measure name, or a DataError."""
    for level, names in LEVELS.items():
        if measure in names:
            return level
    raise DataError(f"unknown measure '{measure}'",
                    fix="use one of: " + ", ".join(m for names in LEVELS.values() for m in names))


@dataclass(frozen=True)
class MetaCell:
    """The items of one group (one criterion and ``by`` values), with their scores.

    Attributes
    ----------
    keys
        The group's values of ``MetaData.by`` (``criterion`` first).
    human
        ``(m,)`` the mean human score of each item (NaN: no human score).
    scores
        Per judge, ``(m,)`` its mean score of each item (NaN: the judge did not score it).
    system, systems
        Each item's system as a code into ``systems`` (-1: none or no system column).
    input, n_inputs
        Each item's resampling unit: its input (``input_id``), or the item itself without one.
    """

    keys: tuple
    human: np.ndarray
    scores: dict
    system: np.ndarray
    systems: tuple
    input: np.ndarray
    n_inputs: int


@dataclass(frozen=True)
class MetaData:
    """A ratings table reduced to per-item mean scores per group (:func:`meta_data`)."""

    by: tuple
    judges: tuple
    cells: tuple
    has_system: bool
    has_input: bool


@dataclass(frozen=True)
class LevelResult:
    """One judge at one level in one group: each measure's estimate then its replicates, and the counts."""

    values: dict
    n: int
    n_systems: int
    note: str = ""
    undefined: str = ""


def _per_item(df: pd.DataFrame, item: pd.Series, cols: list[str]) -> pd.DataFrame:
    """The per-item columns ``cols`` (one value per item, or a DataError naming the item)."""
    if not cols:
        return pd.DataFrame(index=pd.Index(item.unique(), name="item_id"))
    sub = df[cols].assign(item_id=item.to_numpy())
    g = sub.groupby("item_id", sort=False)
    many = g.nunique(dropna=True)
    for c in cols:
        bad = many.index[many[c].to_numpy() > 1]
        if len(bad):
            raise DataError(f"item '{bad[0]}' has more than one value of '{c}'", column=c,
                            fix=f"'{c}' describes the item: give every row of an item the same value")
    return g.first()


def _scores(ratings: pd.DataFrame) -> pd.DataFrame:
    need = [c for c in ("item_id", "rater", "rater_kind", "score") if c not in ratings.columns]
    if need:
        raise DataError(f"meta-evaluation needs a ratings table, and this one has no '{need[0]}' column",
                        column=need[0], fix="load a validated ratings table (item_id, rater, rater_kind, score)")
    score = pd.to_numeric(ratings["score"], errors="coerce")
    if not score.notna().any():
        raise DataError("correlations need numeric scores, and no score of this table is a number", column="score",
                        fix="give scores as numbers (e.g. 1-5), not category names")
    crit = (ratings["criterion"].astype("string").fillna("overall") if "criterion" in ratings.columns
            else pd.Series("overall", index=ratings.index, dtype="string"))
    kind = ratings["rater_kind"].astype("string").str.strip().str.lower()
    return pd.DataFrame({"item_id": ratings["item_id"].astype("string"), "criterion": crit,
                         "rater": ratings["rater"].astype("string"), "human": (kind == HUMAN).fillna(False),
                         "score": score})


_HUMAN = "\x00human"  # column names no rater or segment can take


def _judge_column(k: int) -> str:
    return f"\x00judge{k}"


def _codes(values: pd.Series) -> tuple[np.ndarray, tuple]:
    code, uniq = pd.factorize(values, sort=True)
    return code.astype(np.int64), tuple(uniq)


def _cell(units: pd.DataFrame, pos: np.ndarray, key: tuple, judges: Sequence[str], has_input: bool) -> MetaCell:
    u = units.iloc[pos]
    system, systems = _codes(u["system"]) if "system" in u else (np.full(len(u), -1, dtype=np.int64), ())
    inp = u["input_id"] if has_input else u["item_id"]
    code, _ = _codes(inp.astype("string"))
    missing = code < 0  # an item without an input is its own resampling unit
    code[missing] = code.max(initial=-1) + 1 + np.arange(int(missing.sum()))
    return MetaCell(keys=key, human=u[_HUMAN].to_numpy(float),
                    scores={j: u[_judge_column(k)].to_numpy(float) for k, j in enumerate(judges)},
                    system=system, systems=systems, input=code, n_inputs=int(code.max(initial=-1) + 1))


def meta_data(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: Sequence[str] | None = None) -> MetaData:
    """Per group (``criterion`` and ``by``) and item: the mean human score and each judge's mean score.

    Parameters
    ----------
    ratings
        A validated ratings table; ``system`` and ``input_id`` are used when present.
    by
        Per-item columns to group by besides ``criterion`` (``language``, ``task``...).
    judges
        The judges (default: every judge, in order of appearance).

    Returns
    -------
    MetaData
        The groups' :class:`MetaCell`, sorted by their keys.
    """
    by = [b for b in check_by(ratings, by) if b != "criterion"]
    df = _scores(ratings)
    has_system, has_input = "system" in ratings.columns, "input_id" in ratings.columns
    hum = df[df["human"]].groupby(["item_id", "criterion"], sort=False)["score"].mean()
    jrows = df[~df["human"]]
    have = list(dict.fromkeys(jrows["rater"].dropna()))
    chosen = have if judges is None else list(dict.fromkeys(judges))
    unknown = [j for j in chosen if j not in have]
    if unknown:
        raise DataError(f"there is no judge named '{unknown[0]}'", fix="choose from: " + ", ".join(have[:20]))
    jud = jrows.groupby(["item_id", "criterion", "rater"], sort=False)["score"].mean().unstack("rater")
    index = hum.index.union(jud.index, sort=False)
    units = jud.reindex(index=index, columns=chosen).set_axis([_judge_column(k) for k in range(len(chosen))], axis=1)
    units = units.assign(**{_HUMAN: hum.reindex(index)}).reset_index()
    attrs = _per_item(ratings, df["item_id"], [c for c in ("system", "input_id") if c in ratings] + by)
    units = units.join(attrs, on="item_id")
    groups = units.groupby(["criterion", *by], dropna=False, sort=True).indices
    cells = tuple(_cell(units, pos, key if isinstance(key, tuple) else (key,), chosen, has_input)
                  for key, pos in groups.items())
    return MetaData(by=("criterion", *by), judges=tuple(chosen), cells=cells, has_system=has_system,
                    has_input=has_input)


def cell_weights(cell: MetaCell, root: int, n_boot: int) -> np.ndarray:
    """``(1 + n_boot, n_inputs)`` input weights of a group: row 0 the data, rows 1.. the resamples.

    One stream per group (:func:`evalcore.stats.cell_rng` of the group's keys), shared by every judge
    of the group: the paired bootstrap of :mod:`evalcore.pointwise.leaderboard`.
    """
    return item_weights(cell_rng(root, ("meta", *cell.keys)), cell.n_inputs, n_boot)


def _rank_pearson(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Pearson's r of the rows of ``a`` and ``b`` over the entries where ``m`` is true."""
    n = m.sum(axis=1, keepdims=True)
    da = np.where(m, a - safe_div((a * m).sum(axis=1, keepdims=True), n), 0.0)
    db = np.where(m, b - safe_div((b * m).sum(axis=1, keepdims=True), n), 0.0)
    return safe_div((da * db).sum(axis=1), np.sqrt((da * da).sum(axis=1) * (db * db).sum(axis=1)))


def _signs(x: np.ndarray, pair: np.ndarray) -> np.ndarray:
    """sign(x_k - x_l) of every pair of a row's points; differences within rounding (1e-12 relative) are ties."""
    d = x[:, :, None] - x[:, None, :]
    scale = np.maximum(np.abs(x[:, :, None]), np.abs(x[:, None, :]))
    return np.sign(d) * (np.abs(d) > 1e-12 * scale) * pair


def correlations(X: np.ndarray, Y: np.ndarray) -> dict[str, np.ndarray]:
    """Kendall's tau-b, Spearman's rho and Pearson's r of each row of ``X`` with the same row of ``Y``.

    ``X`` and ``Y`` are ``(rows, points)``; a point counts in a row where both are finite. From the
    signs of all pairs: :math:`\\tau_b = \\sum_{k<l} s^x_{kl} s^y_{kl} / \\sqrt{\\sum |s^x_{kl}| \\sum |s^y_{kl}|}`
    with :math:`s^x_{kl} = \\operatorname{sign}(x_k - x_l)`; rho is Pearson's r of the midranks. Values
    equal up to rounding (a relative 1e-12: means of the same scores summed in another order) are
    ties. NaN where a row has fewer than two points or one side is constant (as scipy, without the
    warning).

    >>> from scipy.stats import kendalltau, pearsonr, spearmanr
    >>> x, y = np.array([[1.0, 2.0, 2.0, 4.0, np.nan]]), np.array([[0.3, 0.1, 0.2, 0.9, 0.5]])
    >>> got = correlations(x, y)
    >>> ref = (kendalltau(x[0, :4], y[0, :4]), spearmanr(x[0, :4], y[0, :4]), pearsonr(x[0, :4], y[0, :4]))
    >>> [bool(abs(got[k][0] - r.statistic) < 1e-12) for k, r in zip(("kendall_tau", "spearman_rho", "pearson_r"), ref)]
    [True, True, True]
    """
    X, Y = np.atleast_2d(np.asarray(X, dtype=float)), np.atleast_2d(np.asarray(Y, dtype=float))
    R, P = X.shape
    ok = np.isfinite(X) & np.isfinite(Y)
    X, Y = np.where(ok, X, 0.0), np.where(ok, Y, 0.0)
    out = {k: np.full(R, np.nan) for k in ("kendall_tau", "spearman_rho", "pearson_r")}
    step = max(1, _CHUNK // max(1, P * P))
    for s in range(0, R, step):
        x, y, m = X[s:s + step], Y[s:s + step], ok[s:s + step]
        pair = m[:, :, None] & m[:, None, :]
        sx, sy = _signs(x, pair), _signs(y, pair)
        ax, ay = np.abs(sx).sum(axis=(1, 2)), np.abs(sy).sum(axis=(1, 2))
        varies = (ax > 0) & (ay > 0)
        nv = m.sum(axis=1, keepdims=True)
        rx = (sx > 0).sum(axis=2) + (nv - np.abs(sx).sum(axis=2) + 1) / 2  # midranks among the points
        ry = (sy > 0).sum(axis=2) + (nv - np.abs(sy).sum(axis=2) + 1) / 2
        out["kendall_tau"][s:s + step] = np.where(varies, safe_div((sx * sy).sum(axis=(1, 2)), np.sqrt(ax * ay)),
                                                  np.nan)
        out["spearman_rho"][s:s + step] = np.where(varies, _rank_pearson(rx, ry, m), np.nan)
        out["pearson_r"][s:s + step] = np.where(varies, _rank_pearson(x, y, m), np.nan)
    return out


def _named(stats: dict[str, np.ndarray], suffix: str) -> dict[str, np.ndarray]:
    return {f"{k}_{suffix}": np.clip(v, -1.0, 1.0) for k, v in stats.items()}


def _both(cell: MetaCell, judge: str) -> np.ndarray:
    return np.isfinite(cell.human) & np.isfinite(cell.scores[judge])


def _left_out_systems(cell: MetaCell, judge: str, used: np.ndarray) -> str:
    seen = np.unique(cell.system[(cell.system >= 0) & (np.isfinite(cell.human) | np.isfinite(cell.scores[judge]))])
    k = len(np.setdiff1d(seen, used))
    return f"{k} system(s) without an item scored by both the humans and the judge left out" if k else ""


def _system_sums(cell: MetaCell, judge: str, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per resample (rows of ``W``) and system: the humans' and the judge's mean over the items both scored,
    each item weighted by its input's weight; and the systems used and their item counts."""
    ok = _both(cell, judge) & (cell.system >= 0)
    sysc, inp = cell.system[ok], cell.input[ok]
    shape = (cell.n_inputs, len(cell.systems))

    def per_system(v: np.ndarray) -> np.ndarray:
        # sum over items of (input weight x v), per system: W (R, inputs) @ (inputs, systems)
        return np.asarray((sparse.csr_matrix((v, (inp, sysc)), shape=shape).T @ W.T).T)

    den = per_system(np.ones(len(inp)))
    H, J = safe_div(per_system(cell.human[ok]), den), safe_div(per_system(cell.scores[judge][ok]), den)
    return H, J, np.unique(sysc), np.bincount(sysc, minlength=len(cell.systems))


def _system_level(cell: MetaCell, judge: str, W: np.ndarray, has_input: bool) -> LevelResult:
    H, J, used, _ = _system_sums(cell, judge, W)
    ok = _both(cell, judge) & (cell.system >= 0)
    note = join_notes(_left_out_systems(cell, judge, used), "" if has_input else ITEMS_RESAMPLED)
    return LevelResult(_named(correlations(H, J), "system"), int(np.unique(cell.input[ok]).size), len(used), note,
                       "not defined: fewer than 2 systems, or the system means do not vary")


def _input_level(cell: MetaCell, judge: str, W: np.ndarray) -> LevelResult:
    ok = _both(cell, judge) & (cell.system >= 0)
    S = max(len(cell.systems), 1)
    key, inv = np.unique(cell.input[ok] * S + cell.system[ok], return_inverse=True)
    inv = inv.ravel()
    cnt = np.bincount(inv)
    h, j = np.bincount(inv, cell.human[ok]) / cnt, np.bincount(inv, cell.scores[judge][ok]) / cnt
    inputs, row = np.unique(key // S, return_inverse=True)
    row = row.ravel()
    start = np.searchsorted(row, np.arange(len(inputs)))  # keys are sorted by input, then system
    col = np.arange(len(key)) - start[row]
    width = int(col.max(initial=-1)) + 1
    H, J = np.full((len(inputs), width), np.nan), np.full((len(inputs), width), np.nan)
    H[row, col], J[row, col] = h, j
    per_input = correlations(H, J)
    values, n = {}, 0
    for name, c in per_input.items():
        fin = np.isfinite(c)
        Win = W[:, inputs]
        values[f"{name}_input"] = safe_div(Win @ np.where(fin, c, 0.0), Win @ fin.astype(float))
        n = int(fin.sum())
    dropped = len(inputs) - n
    note = join_notes(_left_out_systems(cell, judge, np.unique(cell.system[ok])),
                      f"{dropped} input(s) with fewer than 2 systems or constant scores left out" if dropped else "")
    return LevelResult(values, n, int(np.unique(cell.system[ok]).size), note,
                       "not defined: no input has 2 or more systems with varying scores on both sides")


def _item_level(cell: MetaCell, judge: str, W: np.ndarray, has_input: bool, measures: Sequence[str]) -> LevelResult:
    ok = _both(cell, judge)
    x, y, local = cell.scores[judge][ok], cell.human[ok], cell.input[ok]
    values = {}
    if "kendall_tau" in measures:
        values["kendall_tau"] = tau_b(np.ascontiguousarray(W.T), local, x, y)
    if "spearman_rho" in measures:
        values["spearman_rho"] = spearman_rho(np.ascontiguousarray(W[:, local].T), x, y)
    note = "the bootstrap resamples inputs" if has_input else ""
    return LevelResult(values, int(np.unique(local).size), int(np.unique(cell.system[ok & (cell.system >= 0)]).size),
                       note, "not defined: fewer than 2 items, or the scores do not vary")


def level_values(data: MetaData, cell: MetaCell, judge: str, W: np.ndarray, level: str, *,
                 measures: Sequence[str] | None = None) -> LevelResult:
    """One judge's measures at ``level`` (``item``, ``system`` or ``input``) in one group.

    ``W`` is the group's :func:`cell_weights`: each measure's value holds the estimate, then one
    value per resample. Levels the table cannot give are NaN with the reason. ``measures`` limits
    the item level to the measures named (the system and input levels cost the same with all three).
    """
    if level != "item" and not data.has_system:
        return LevelResult({m: np.nan for m in LEVELS[level]}, 0, 0, undefined=NEEDS_SYSTEM)
    if level == "input" and not data.has_input:
        return LevelResult({m: np.nan for m in LEVELS[level]}, 0, 0, undefined=NEEDS_INPUT)
    if level == "system":
        return _system_level(cell, judge, W, data.has_input)
    if level == "input":
        return _input_level(cell, judge, W)
    if level == "item":
        return _item_level(cell, judge, W, data.has_input, LEVELS["item"] if measures is None else measures)
    raise DataError(f"unknown level '{level}'", fix="use 'item', 'system' or 'input'")


@takes_table(RATINGS, "system", "input")
def meta_correlations(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: Sequence[str] | None = None,
                      n_boot: int = 1000, seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    """System- and input-level correlation of each judge with the humans, per group, with bootstrap intervals.

    Parameters
    ----------
    ratings
        A validated ratings table with numeric scores. The system level needs a ``system`` column,
        the input level also ``input_id``.
    by
        Per-item columns to group by besides ``criterion`` (always a group).
    judges
        The judges to report (default: every judge).
    n_boot, seed, level
        Bootstrap resamples of inputs (items without ``input_id``; 0: no interval), the seed of the
        per-group streams (the same for every judge of a group), the confidence level.
    item, rater, kind, criterion, score, sample, system, input
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per group, judge and measure (:data:`META_MEASURES`): ``criterion, *by, judge,
        measure, estimate, ci_low, ci_high, n, n_systems, test, p_value, q_value, flagged, opposite,
        note`` (the result-table columns of :mod:`evalcore.stats.results`; descriptive rows, never
        tested). ``n`` counts the inputs (or items) behind the estimate, ``n_systems`` the systems.

    Examples
    --------
    >>> rows = [(f"{s}/{d}", s, str(d), r, k, v) for s, base in (("A", 1), ("B", 2), ("C", 3)) for d in range(4)
    ...         for r, k, v in (("h1", "human", base + d % 2), ("h2", "human", base), ("j", "judge", base * 2 + d))]
    >>> t = pd.DataFrame(rows, columns=["item_id", "system", "input_id", "rater", "rater_kind", "score"])
    >>> res = meta_correlations(t, n_boot=0)
    >>> res[["measure", "estimate", "n", "n_systems"]].values.tolist()[:2]
    [['kendall_tau_system', 1.0, 4, 3], ['spearman_rho_system', 1.0, 4, 3]]

    The same table with its own column names:

    >>> mine = t.rename(columns={"system": "model", "input_id": "prompt"})
    >>> meta_correlations(mine, system="model", input="prompt", n_boot=0)["estimate"].equals(res["estimate"])
    True
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    data = meta_data(ratings, by=by, judges=judges)
    table, n_systems = ResultTable([*data.by, "judge"], n_boot=n_boot, level=level), []
    for cell in data.cells:
        W = cell_weights(cell, root, n_boot)
        for judge in data.judges:
            if not np.isfinite(cell.scores[judge]).any():
                continue
            keys = {**dict(zip(data.by, cell.keys)), "judge": judge}
            for lv in ("system", "input"):
                res = level_values(data, cell, judge, W, lv)
                for m in LEVELS[lv]:
                    table.add(keys, m, res.values[m], res.n, undefined=res.undefined, note=res.note)
                    n_systems.append(res.n_systems)
    out = table.frame()
    out.insert(list(out.columns).index("n") + 1, "n_systems", np.asarray(n_systems, dtype=np.int64))
    return out


@takes_table(RATINGS, "system", "input")
def system_means(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: Sequence[str] | None = None,
                 n_boot: int = 1000, seed: int | np.random.Generator = 0, level: float = 0.95) -> pd.DataFrame:
    r"""Each system's mean human score and mean judge score, on the items both scored, per group and judge.

    What the system-level correlation of :func:`meta_correlations` correlates (SummEval; G-Eval): for
    system s, :math:`\bar H_s = \text{mean}_{i \in s} h_i` (h the mean human score of item i) and
    :math:`\bar J_s` the same of the judge's score, over the items of s that both scored. Intervals resample
    inputs (items without ``input_id``) with the same per-group streams as :func:`meta_correlations`.

    Parameters
    ----------
    ratings, by, judges, n_boot, seed, level, item, rater, kind, criterion, score, sample, system, input
        As in :func:`meta_correlations`.

    Returns
    -------
    pandas.DataFrame
        ``criterion, *by, judge, system, human, human_ci_low, human_ci_high, judge_score, judge_ci_low,
        judge_ci_high, n`` (``n``: the system's items scored by both). Empty without a ``system`` column.

    Examples
    --------
    >>> rows = [(f"{s}/{d}", s, str(d), r, k, v) for s, base in (("A", 1), ("B", 2)) for d in range(3)
    ...         for r, k, v in (("h1", "human", base), ("j", "judge", base * 2 + d))]
    >>> t = pd.DataFrame(rows, columns=["item_id", "system", "input_id", "rater", "rater_kind", "score"])
    >>> system_means(t, n_boot=0)[["system", "human", "judge_score", "n"]].values.tolist()
    [['A', 1.0, 3.0, 3], ['B', 2.0, 5.0, 3]]
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    data = meta_data(ratings, by=by, judges=judges)
    rows: list[dict] = []
    if not data.has_system:
        return pd.DataFrame(columns=[*data.by, "judge", "system", "human", "human_ci_low", "human_ci_high",
                                     "judge_score", "judge_ci_low", "judge_ci_high", "n"])
    for cell in data.cells:
        W = cell_weights(cell, root, n_boot)
        for judge in data.judges:
            H, J, used, counts = _system_sums(cell, judge, W)
            hl, hh, _ = percentile_interval(H[1:].T, level) if n_boot else (np.full(H.shape[1], np.nan),) * 3
            jl, jh, _ = percentile_interval(J[1:].T, level) if n_boot else (np.full(J.shape[1], np.nan),) * 3
            for s in used:
                rows.append({**dict(zip(data.by, cell.keys)), "judge": judge, "system": cell.systems[s],
                             "human": H[0, s], "human_ci_low": hl[s], "human_ci_high": hh[s], "judge_score": J[0, s],
                             "judge_ci_low": jl[s], "judge_ci_high": jh[s], "n": int(counts[s])})
    return pd.DataFrame(rows)
