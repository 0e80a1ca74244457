"""The battles of a systems leaderboard, their shared resamples, and the rows every leaderboard writes.

Battles. Every judgment is one battle: each human annotator's verdict on an item (as Chatbot Arena counts
votes, not the majority) and each judge's verdict. A rater's rows on one item and system pair are its one
verdict, by swap and sum as everywhere in evalcore (:func:`evalcore.pairwise.pairs.rater_verdicts`); unparsed
outputs (``invalid``) are left out.

Resamples. One item bootstrap shared by every source (:func:`battle_resamples`; Efron & Tibshirani 1993): an
item carries all its battles, by the humans and by every judge, so that differences between sources have
intervals too.

Rows. Every leaderboard (:func:`evalcore.pairwise.leaderboard_systems.system_leaderboard`, the style-controlled
fit, the prediction-powered one) writes its scores with :func:`score_rows`, in :data:`LEADERBOARD_COLUMNS`:
``bt_score`` (natural log-odds centred to mean 0), ``elo`` (:math:`1000 + 400\\,s/\\ln 10`) and ``rank`` (1 plus
the number of systems with a higher score). Scores and Elo get the percentile interval at ``level``
(:func:`evalcore.stats.bootstrap.percentile_interval`); the **rank interval** is the central ``level``
percentile range of the resampled ranks (the lower and higher order statistics, so whole ranks), not the full
range, which one odd resample in a thousand would stretch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS, HUMANS_LABEL
from ..errors import DataError, NotApplicable
from ..stats.bootstrap import cell_rng, check_level, check_resamples, percentile_interval, resample_counts, \
    root_seed
from .bradley_terry import to_elo
from .pairs import INVALID, invalid_mask, rater_verdicts, votes

__all__ = ["Battles", "battles", "battle_resamples", "score_rows", "result_row", "interval_note", "ranks",
           "rank_interval", "LEADERBOARD_COLUMNS", "CORRECTED_PREFIX"]

#: The columns of :func:`system_leaderboard` (the CLI's JSON record fields).
LEADERBOARD_COLUMNS = ("rater", "system", "measure", "estimate", "ci_low", "ci_high", "n", "note")
#: The rater of the judge-corrected (prediction-powered) rows: ``ppi:<judge>``.
CORRECTED_PREFIX = "ppi:"
#: The key of the resamples' random stream (:func:`evalcore.stats.bootstrap.cell_rng`).
_STREAM = "systems leaderboard"


@dataclass(frozen=True, eq=False)
class Battles:
    """The battles of a comparisons table, one per rater, item and system pair.

    Attributes
    ----------
    systems, sources, items
        The systems (sorted), the sources (:data:`evalcore.columns.HUMANS_LABEL` first when there are human
        rows, then the judges) and the item ids (as text, sorted): what the codes below index.
    item, source, a, b
        Per battle: item, source and the two systems' codes (``a < b``: oriented by the systems' order).
    outcome
        Per battle: 1 when ``a`` wins, 0.5 a tie, 0 when ``b`` wins.
    row
        Per battle: the position in the table of one row behind it; that row may name the pair the other way
        round (its ``system_a`` is then ``systems[b]``).
    """

    systems: tuple[str, ...]
    sources: tuple[str, ...]
    items: np.ndarray
    item: np.ndarray
    source: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    row: np.ndarray

    def __len__(self) -> int:
        return int(len(self.item))


def _usable_rows(comparisons: pd.DataFrame) -> np.ndarray:
    """Positions of the rows that are battles: two different systems named, a verdict, not unparsed."""
    missing = [c for c in ("item_id", "system_a", "system_b", "rater", "rater_kind", "winner")
               if c not in comparisons.columns]
    if missing:
        raise NotApplicable("a systems leaderboard needs the systems that wrote each output, and this table has no "
                            + " or ".join(f"'{c}'" for c in missing) + " column",
                            fix="map the columns naming the two systems to system_a and system_b (--map "
                                "COLUMN=system_a --map COLUMN=system_b), or use a preset that knows them (pandalm)")
    sa, sb = comparisons["system_a"], comparisons["system_b"]
    ok = (sa.notna() & sb.notna()).to_numpy() & (sa.astype(str) != sb.astype(str)).to_numpy()
    ok &= ~invalid_mask(comparisons)
    ok &= comparisons["winner"].astype("string").isin(["a", "b", "tie"]).fillna(False).to_numpy(dtype=bool)
    if not ok.any():
        raise NotApplicable("no comparison names two different systems with a verdict",
                            fix="check the system_a, system_b and winner columns")
    return np.flatnonzero(ok)


def _source_names(kind: np.ndarray, rater: np.ndarray, judges: Sequence[str] | None) -> list[str]:
    have = sorted(set(rater[kind == "judge"]))
    if judges is None:
        use = have
    else:
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise DataError(f"no battle was judged by {', '.join(map(repr, unknown))}",
                            fix="pick from: " + (", ".join(have) if have else "(no judge rows)"))
        use = list(dict.fromkeys(judges))
    return ([HUMANS_LABEL] if (kind == "human").any() else []) + use


@takes_table(COMPARISONS)
def battles(comparisons: pd.DataFrame, *, judges: Sequence[str] | None = None) -> Battles:
    """The battles of a comparisons table: one per rater (each annotator, each judge), item and system pair.

    Parameters
    ----------
    comparisons
        A canonical comparisons table with ``system_a`` and ``system_b``.
    judges
        The judges to keep (default: all, sorted); the humans are always kept.

    Returns
    -------
    Battles

    Examples
    --------
    >>> df = pd.DataFrame({"item_id": [1, 1, 1, 1], "system_a": ["x", "x", "y", "x"],
    ...                    "system_b": ["y", "y", "x", "y"], "rater": ["ann", "gpt", "gpt", "bob"],
    ...                    "rater_kind": ["human", "judge", "judge", "human"], "winner": ["a", "a", "b", "tie"]})
    >>> bt = battles(df)
    >>> bt.sources, [bt.sources[s] for s in bt.source], bt.outcome.tolist()
    (('humans', 'gpt'), ['humans', 'gpt', 'humans'], [1.0, 1.0, 0.5])
    """
    rows = _usable_rows(comparisons)
    df = comparisons.iloc[rows]
    sa, sb = df["system_a"].astype(str).to_numpy(), df["system_b"].astype(str).to_numpy()
    systems = np.unique(np.concatenate([sa, sb]))
    ca, cb = np.searchsorted(systems, sa), np.searchsorted(systems, sb)
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    kind = df["rater_kind"].astype(str).to_numpy()
    rater = df["rater"].astype(str).to_numpy()
    sources = _source_names(kind, rater, judges)
    keep = (kind == "human") | np.isin(rater, sources[1:] if sources[:1] == [HUMANS_LABEL] else sources)
    keep &= (kind == "human") | (kind == "judge")
    items, item_code = np.unique(df["item_id"].astype(str).to_numpy(), return_inverse=True)
    k = len(systems)
    unit = (item_code.astype(np.int64) * k + lo) * k + hi
    unit_codes, unit_of_row = np.unique(unit[keep], return_inverse=True)
    rater_key = pd.Series(np.char.add(np.where(kind == "human", "h:", "j:").astype(str), rater)[keep])
    rater_codes, rater_names = pd.factorize(rater_key)
    vote = votes(df["winner"].to_numpy()[keep], ca[keep] != lo[keep])
    u, r, verdict = rater_verdicts(unit_of_row, rater_codes, vote)
    ok = verdict != INVALID
    u, r, verdict = u[ok], r[ok], verdict[ok]
    # One row behind each battle: the first row of that unit and rater.
    first = pd.DataFrame({"u": unit_of_row, "r": rater_codes, "pos": rows[keep]}).groupby(["u", "r"])["pos"].min()
    row = first.loc[list(zip(u, r))].to_numpy()
    code = unit_codes[u]
    names = np.asarray(rater_names, dtype=object)[r]
    src_index = {s: i for i, s in enumerate(sources)}
    source = np.array([0 if n.startswith("h:") else src_index[n[2:]] for n in names], dtype=np.int64)
    return Battles(systems=tuple(systems.tolist()), sources=tuple(sources), items=items,
                   item=code // (k * k), source=source, a=(code // k) % k, b=code % k,
                   outcome=np.array([1.0, 0.0, 0.5])[verdict], row=np.asarray(row, dtype=np.int64))


def battle_resamples(bt: Battles, *, n_boot: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """The item resamples every source shares: ``(n_boot, len(bt.items))`` counts of each item.

    A battle's weight in resample r is ``counts[r, bt.item]``. The stream is
    ``cell_rng(root_seed(seed), "systems leaderboard")`` (:mod:`evalcore.stats.bootstrap`), so any analysis
    calling this with the same battles and seed has exactly the leaderboard's resamples.

    >>> bt = Battles(("x", "y"), ("humans",), np.array(["1", "2", "3"]), np.array([0, 1, 2]), np.zeros(3, int),
    ...              np.zeros(3, int), np.ones(3, int), np.ones(3), np.arange(3))
    >>> counts = battle_resamples(bt, n_boot=4, seed=0)
    >>> counts.shape, counts.sum(axis=1).tolist()
    ((4, 3), [3.0, 3.0, 3.0, 3.0])
    """
    n_boot = check_resamples(n_boot)
    return resample_counts(cell_rng(root_seed(seed), _STREAM), len(bt.items), n_boot)


def ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of systems with a higher score, along the last axis; NaN for a system without a score.

    >>> ranks(np.array([0.2, -0.1, np.nan, 0.2])).tolist()
    [1.0, 3.0, nan, 1.0]
    """
    s = np.asarray(scores, dtype=float)
    with np.errstate(invalid="ignore"):
        higher = (s[..., None, :] > s[..., :, None]).sum(axis=-1)
    return np.where(np.isfinite(s), 1.0 + higher, np.nan)


def rank_interval(boot: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` range of each row's finite resampled ranks (rows x resamples), as whole ranks: the
    ``(1 - level) / 2`` quantile by numpy's method 'lower' and the ``(1 + level) / 2`` one by 'higher'; NaN for a
    row with too few finite resamples (:func:`evalcore.stats.bootstrap.percentile_interval`'s rule)."""
    out_lo, out_hi = np.full(len(boot), np.nan), np.full(len(boot), np.nan)
    if boot.shape[1] == 0:
        return out_lo, out_hi
    lo, hi, sparse = percentile_interval(boot, level)  # only for which rows have enough resamples
    for r in np.flatnonzero(~sparse):
        v = boot[r][np.isfinite(boot[r])]
        out_lo[r] = np.quantile(v, (1 - level) / 2, method="lower")
        out_hi[r] = np.quantile(v, (1 + level) / 2, method="higher")
    return out_lo, out_hi


def result_row(rater: str, system: str, measure: str, estimate, lo, hi, n: int, notes: Sequence[str]) -> dict:
    """One row of :data:`LEADERBOARD_COLUMNS`; the non-empty ``notes`` joined with '; '."""
    return {"rater": rater, "system": system, "measure": measure, "estimate": float(estimate),
            "ci_low": float(lo), "ci_high": float(hi), "n": int(n), "note": "; ".join(x for x in notes if x)}


def interval_note(n_boot: int, defined: bool, sparse: bool) -> str:
    """Why a defined estimate has no interval (no resamples, or too few finite ones), or ""."""
    if not defined:
        return ""
    if n_boot == 0:
        return "no interval (n_boot=0)"
    return "no interval: the measure is undefined in most resamples" if sparse else ""


def score_rows(rater: str, systems: Sequence[str], scores: np.ndarray, *, n: Sequence[int], level: float = 0.95,
               note: str = "", prefix: str = "", order: Sequence[int] | None = None) -> pd.DataFrame:
    """The ``bt_score``, ``elo`` and ``rank`` rows of one source, exactly as :func:`system_leaderboard` writes them.

    Parameters
    ----------
    rater
        The source's name (the ``rater`` column).
    systems
        The systems' names, the columns of ``scores``.
    scores
        ``(1 + B, k)``: row 0 the scores on the data, rows 1.. the resamples' (NaN: no score there).
    n
        ``(k,)`` the items behind each system's score.
    level
        The intervals' confidence level: percentile intervals of the scores (Elo's are their transform) and
        the central ``level`` range of the resampled ranks, as whole ranks.
    note
        A note for every row of the source (a ridge, a disconnected graph).
    prefix
        Before each measure (``"sc_"`` for the style-controlled fit).
    order
        The systems' order in the rows (indices; default as given).

    Returns
    -------
    pandas.DataFrame
        :data:`LEADERBOARD_COLUMNS`; every ``bt_score`` row, then every ``elo`` row, then every ``rank`` row.

    Examples
    --------
    >>> rows = score_rows("humans", ["x", "y"], np.array([[0.5, -0.5], [0.4, -0.4], [0.6, -0.6]]), n=[3, 3])
    >>> rows[["measure", "system", "estimate"]].round(1).values.tolist()
    [['bt_score', 'x', 0.5], ['bt_score', 'y', -0.5], ['elo', 'x', 1086.9], ['elo', 'y', 913.1], ['rank', 'x', 1.0], ['rank', 'y', 2.0]]
    """
    level = check_level(level)
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    point, boot = scores[0], scores[1:]
    n_boot = boot.shape[0]
    lo, hi, sparse = percentile_interval(boot.T, level)
    rank, (rlo, rhi) = ranks(point), rank_interval(ranks(boot).T, level)
    out: dict[str, list[dict]] = {"bt_score": [], "elo": [], "rank": []}
    for i in (range(len(systems)) if order is None else order):
        defined = bool(np.isfinite(point[i]))
        notes = [note, interval_note(n_boot, defined, bool(sparse[i]))] if defined else \
            [f"{rater} has no battle with {systems[i]}"]
        keep = defined and n_boot > 0 and not sparse[i]
        l, h = (lo[i], hi[i]) if keep else (np.nan, np.nan)
        out["bt_score"].append(result_row(rater, systems[i], prefix + "bt_score", point[i], l, h, n[i], notes))
        out["elo"].append(result_row(rater, systems[i], prefix + "elo", to_elo(point[i]), to_elo(l), to_elo(h), n[i],
                               notes))
        rl, rh = (rlo[i], rhi[i]) if keep else (np.nan, np.nan)
        out["rank"].append(result_row(rater, systems[i], prefix + "rank", rank[i], rl, rh, n[i], notes))
    return pd.DataFrame([r for rows in out.values() for r in rows], columns=list(LEADERBOARD_COLUMNS))
