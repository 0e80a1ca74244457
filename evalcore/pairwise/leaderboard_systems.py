"""Which system is best? The systems leaderboard by the humans and by each judge, and how the judges move it.

Battles and intervals. Every judgment is one battle (each human annotator's verdict, each judge's), and one
item bootstrap is shared by every source, so that differences between sources (a judge's rank move, Kendall's
tau) have intervals too: :mod:`evalcore.pairwise.battles`, which also writes the score rows.

Scores. For each source (the humans, each judge) the Bradley-Terry scores of
:func:`evalcore.pairwise.bradley_terry.fit_bt`: natural log-odds centred to mean 0, a tie half a win to each
side (FastChat's ``compute_mle_elo``), with an Elo column :math:`1000 + 400 \\,s / \\ln 10`; the rank is 1 plus
the number of systems with a higher score, its interval the central ``level`` range of the resampled ranks.

How a judge's ranking compares with the humans' (on the systems both rank):

* ``ranking_tau``: Kendall's tau-b between the two sets of scores (Kendall 1945),
  :math:`\\tau_b = \\sum_{i<j} \\operatorname{sgn}(h_i-h_j)\\operatorname{sgn}(g_i-g_j) / \\sqrt{n_h n_g}`, with
  :math:`n_h, n_g` the pairs not tied in each;
* ``pairs_ordered_same``: the share of system pairs the two order the same way;
* ``rank_move`` per system: the judge's rank minus the humans' (positive: the judge ranks it lower);
* ``separability`` per source: the share of system pairs whose score intervals do not overlap (Li et al.
  2024, Arena-Hard), how many of the leaderboard's distinctions the data support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS, HUMANS_LABEL
from ..errors import DataError
from ..stats.bootstrap import check_level, check_resamples, percentile_interval
from .battles import LEADERBOARD_COLUMNS, Battles, battle_resamples, battles, interval_note, rank_interval, ranks, \
    result_row, score_rows
from .bradley_terry import fit_bt
from .style_control import STYLES, style_covariates, style_ratios

__all__ = ["system_leaderboard", "ranking_agreement", "rank_moves", "ranking_sentences"]


@dataclass(frozen=True)
class _SourceFit:
    """One source's fit: scores on the data and per resample, covariate coefficients, counts and notes."""

    point: np.ndarray  # (K,)
    boot: np.ndarray  # (B, K)
    coef: np.ndarray  # (f,)
    coef_boot: np.ndarray  # (B, f)
    n: np.ndarray  # (K,) items with a battle of the system
    items: np.ndarray  # the item codes of the source's battles
    notes: tuple[str, ...]


def _fit_source(bt: Battles, s: int, counts: np.ndarray, X: np.ndarray | None) -> _SourceFit:
    """The Bradley-Terry fit of source ``s`` on the data and on every resample (warm-started)."""
    idx = np.flatnonzero(bt.source == s)
    K = len(bt.systems)
    a, b, y, item = bt.a[idx], bt.b[idx], bt.outcome[idx], bt.item[idx]
    cov = None if X is None else X[idx]
    fit = fit_bt(a, b, y, n_systems=K, covariates=cov, names=bt.systems)
    notes = list(fit.notes)
    B = counts.shape[0]
    f = 0 if cov is None else cov.shape[1]
    boot, coef_boot = np.empty((0, K)), np.empty((0, f))
    if B:
        start = np.concatenate([np.nan_to_num(fit.scores), fit.coef])
        many = fit_bt(a, b, y, n_systems=K, covariates=cov, weight=counts[:, item], init=start)
        boot, coef_boot = many.scores, many.coef
        if fit.ridge == 0 and np.any(many.ridge > 0):
            notes.append(f"in {np.mean(many.ridge > 0):.0%} of the resamples the maximum-likelihood estimate was "
                         f"infinite and a light ridge was added")
        if not np.all(many.converged):
            notes.append(f"{np.mean(~many.converged):.0%} of the resamples' fits did not converge")
    n = np.array([len(np.unique(item[(a == i) | (b == i)])) for i in range(K)])
    return _SourceFit(fit.scores, boot, fit.coef, coef_boot, n, np.unique(item), tuple(notes))


def _order_agreement(h: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and the share of pairs ordered the same, between score rows ``h`` and ``g`` (..., K).

    Why not :func:`evalcore.stats.kendall.tau_b`: there the observations are fixed and the weights resampled;
    here the observations themselves (the systems' scores) change in every resample, and K is small.
    """
    K = h.shape[-1]
    i, j = np.triu_indices(K, 1)
    with np.errstate(invalid="ignore"):
        dh, dg = np.sign(h[..., i] - h[..., j]), np.sign(g[..., i] - g[..., j])
    valid = np.isfinite(dh) & np.isfinite(dg)
    dh, dg = np.where(valid, dh, 0.0), np.where(valid, dg, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (dh * dg).sum(axis=-1) / np.sqrt((dh != 0).sum(axis=-1) * (dg != 0).sum(axis=-1))
        same = (valid & (dh == dg)).sum(axis=-1) / valid.sum(axis=-1)
    return np.where(np.isfinite(tau), tau, np.nan), same


def _separability(lo: np.ndarray, hi: np.ndarray) -> float:
    """The share of system pairs whose intervals do not overlap (Arena-Hard); NaN without two intervals."""
    ok = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi))
    if len(ok) < 2:
        return np.nan
    i, j = np.triu_indices(len(ok), 1)
    lo, hi = lo[ok], hi[ok]
    return float(np.mean((lo[i] > hi[j]) | (lo[j] > hi[i])))


def _comparison_rows(prefix: str, name: str, humans: _SourceFit, judge: _SourceFit, systems: Sequence[str],
                     order: np.ndarray, level: float) -> list[dict]:
    """rank_move per system, then ranking_tau and pairs_ordered_same, of one judge against the humans."""
    n_boot = judge.boot.shape[0]
    both = np.isfinite(humans.point) & np.isfinite(judge.point)
    # Why: ranks among the systems both rank, so that a system only one of them saw moves nothing else.
    hp, jp = np.where(both, humans.point, np.nan), np.where(both, judge.point, np.nan)
    hb, jb = np.where(both, humans.boot, np.nan), np.where(both, judge.boot, np.nan)
    move, move_boot = ranks(jp) - ranks(hp), (ranks(jb) - ranks(hb)).T
    lo, hi = rank_interval(move_boot, level)
    sparse = ~np.isfinite(lo)
    n_items = len(np.union1d(humans.items, judge.items))
    rows = []
    for i in order:
        note = interval_note(n_boot, bool(both[i]), bool(n_boot and sparse[i])) if both[i] else \
            f"not ranked by both the humans and {name}"
        keep = both[i] and n_boot > 0 and not sparse[i]
        rows.append(result_row(name, systems[i], prefix + "rank_move", move[i], lo[i] if keep else np.nan,
                         hi[i] if keep else np.nan, max(humans.n[i], judge.n[i]), [note]))
    tau, same = _order_agreement(hp, jp)
    tau_b, same_b = _order_agreement(hb, jb)
    for measure, est, boot in (("ranking_tau", tau, tau_b), ("pairs_ordered_same", same, same_b)):
        l, h, sp = percentile_interval(boot[None, :], level)
        defined = bool(np.isfinite(est))
        keep = defined and n_boot > 0 and not sp[0]
        note = interval_note(n_boot, defined, bool(sp[0])) if defined else \
            "needs two systems ranked by both the humans and the judge, not tied in both"
        rows.append(result_row(name, "", prefix + measure, est, l[0] if keep else np.nan, h[0] if keep else np.nan,
                         n_items, [note]))
    return rows


def _fit_rows(prefix: str, bt: Battles, fits: list[_SourceFit], order: np.ndarray, level: float) -> list[dict]:
    """Every row of one fit (raw, or style-controlled with ``prefix`` "sc_"), source by source."""
    rows = []
    humans = fits[0] if bt.sources[:1] == (HUMANS_LABEL,) else None
    for s, (name, fit) in enumerate(zip(bt.sources, fits)):
        scores = score_rows(name, bt.systems, np.vstack([fit.point[None], fit.boot]), n=fit.n, level=level,
                            note="; ".join(fit.notes), prefix=prefix, order=order)
        rows += scores.to_dict("records")
        score = scores[scores["measure"] == prefix + "bt_score"]
        if humans is not None and s > 0:
            rows += _comparison_rows(prefix, name, humans, fit, bt.systems, order, level)
        sep = _separability(score["ci_low"].to_numpy(), score["ci_high"].to_numpy())
        note = "no interval (n_boot=0), so no separability" if not fit.boot.shape[0] else \
            "" if np.isfinite(sep) else "needs two systems with a score interval"
        rows.append(result_row(name, "", prefix + "separability", sep, np.nan, np.nan, len(fit.items), [note]))
    return rows


def _style_rows(bt: Battles, fits: list[_SourceFit], features: Sequence[str], level: float) -> list[dict]:
    """``style_<feature>`` rows: each source's coefficient of each style feature, with its interval."""
    rows = []
    for name, fit in zip(bt.sources, fits):
        n_boot = fit.coef_boot.shape[0]
        lo, hi, sparse = percentile_interval(fit.coef_boot.T, level) if n_boot else \
            (np.full(len(features), np.nan),) * 3
        for k, feature in enumerate(features):
            defined = bool(np.isfinite(fit.coef[k]))
            keep = defined and n_boot > 0 and not sparse[k]
            note = interval_note(n_boot, True, bool(n_boot and sparse[k])) if defined else \
                f"the {feature} difference is 0 in every battle of {name}: no coefficient"
            rows.append(result_row(name, "", f"style_{feature}", fit.coef[k], lo[k] if keep else np.nan,
                             hi[k] if keep else np.nan, len(fit.items), [note]))
    return rows


def _corrected_rows(comparisons: pd.DataFrame, *, judges, n_boot: int, seed: int, level: float) -> pd.DataFrame:
    """The judge-corrected (prediction-powered) rows, ``rater`` ``ppi:<judge>``."""
    from .ppi_bt import ppi_leaderboard  # here: only the corrected leaderboard needs it

    return ppi_leaderboard(comparisons, judges=judges, n_boot=n_boot, seed=seed, level=level)


@takes_table(COMPARISONS, "text_a", "text_b")
def system_leaderboard(comparisons: pd.DataFrame, *, judges: Sequence[str] | None = None, style: str | None = None,
                       corrected: bool = False, n_boot: int = 1000, seed: int | np.random.Generator = 0,
                       level: float = 0.95) -> pd.DataFrame:
    """The systems leaderboard by the humans and by each judge, with intervals and the judges' rank moves.

    Bradley-Terry scores (:func:`evalcore.pairwise.bradley_terry.fit_bt`; Bradley & Terry 1952, as Chatbot
    Arena fits them) of every system, from the humans' battles and from each judge's, with Elo
    :math:`1000 + 400\\,s/\\ln 10`, ranks, and how each judge's ranking compares with the humans' (Kendall's
    tau-b, pairs ordered the same, rank moves, separability); intervals from one item bootstrap shared by
    every source (module docstring).

    Parameters
    ----------
    comparisons
        A canonical comparisons table with ``system_a`` and ``system_b``.
    judges
        The judges to include (default: all).
    style
        ``"length"`` or ``"length+markdown"``: also the style-controlled fit (rows ``sc_*``) and each source's
        style coefficients (``style_<feature>``), as FastChat's style-controlled leaderboard.
    corrected
        Also the judge-corrected scores (prediction-powered Bradley-Terry), rows ``ppi:<judge>``.
    n_boot, seed, level
        Bootstrap resamples (0: no intervals), their seed, and the intervals' confidence level.

    Returns
    -------
    pandas.DataFrame
        :data:`LEADERBOARD_COLUMNS`: ``rater`` (``humans``, a judge, ``ppi:<judge>``), ``system`` ("" on rows
        about a whole ranking), ``measure`` (``bt_score``, ``elo``, ``rank``, ``rank_move``, ``ranking_tau``,
        ``pairs_ordered_same``, ``separability``; ``sc_`` before each for the style-controlled fit;
        ``style_<feature>``, each source's style coefficient, and ``style_ratio_<feature>``, a judge's over the
        humans' (:func:`evalcore.pairwise.style_control.style_ratios`)), ``estimate, ci_low, ci_high``, ``n``
        (items) and ``note``. Systems in the humans' order (best first).

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> lb = system_leaderboard(comparisons, n_boot=200)
    >>> elo = lb[(lb.rater == "humans") & (lb.measure == "elo")]
    >>> print(elo[["system", "estimate", "ci_low", "ci_high"]].round(0).to_string(index=False))
          system  estimate  ci_low  ci_high
      cirrus-70b    1106.0  1073.0   1148.0
       ember-34b    1027.0  1000.0   1052.0
       dune-8x7b     998.0   958.0   1032.0
    borealis-13b     987.0   953.0   1023.0
        atlas-7b     882.0   851.0    905.0
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    if style is not None and style not in STYLES:
        raise DataError(f"unknown style control {style!r}", fix="use " + " or ".join(STYLES))
    bt = battles(comparisons, judges=judges)
    counts = battle_resamples(bt, n_boot=n_boot, seed=seed)
    fits = [_fit_source(bt, s, counts, None) for s in range(len(bt.sources))]
    first = np.where(np.isfinite(fits[0].point), fits[0].point, -np.inf)
    order = np.argsort(-first, kind="stable")
    rows = _fit_rows("", bt, fits, order, level)
    if style is not None:
        X, features = style_covariates(comparisons, bt, style=style)
        sc = [_fit_source(bt, s, counts, X) for s in range(len(bt.sources))]
        rows += _fit_rows("sc_", bt, sc, order, level) + _style_rows(bt, sc, features, level)
        coef = np.stack([np.vstack([f.coef[None], f.coef_boot]) for f in sc])
        ratios = style_ratios(bt.sources, features, coef, n=[len(f.items) for f in sc], level=level)
        rows += ratios[list(LEADERBOARD_COLUMNS)].to_dict("records")
    frame = pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))
    if corrected:
        extra = _corrected_rows(comparisons, judges=judges, n_boot=n_boot, seed=seed, level=level)
        frame = pd.concat([frame, extra[list(LEADERBOARD_COLUMNS)]], ignore_index=True)
    frame["n"] = frame["n"].astype(np.int64)
    return frame


def _check_leaderboard(leaderboard: pd.DataFrame) -> None:
    missing = [c for c in LEADERBOARD_COLUMNS if c not in leaderboard.columns]
    if missing:
        raise DataError("this is not a systems leaderboard (no " + ", ".join(missing) + " column)",
                        fix="pass the table system_leaderboard returned")


def _measure(leaderboard: pd.DataFrame, measure: str) -> pd.DataFrame:
    return leaderboard[leaderboard["measure"] == measure]


def ranking_agreement(leaderboard: pd.DataFrame, *, style: bool = False) -> pd.DataFrame:
    """How each judge's ranking compares with the humans': one row per judge, from :func:`system_leaderboard`.

    Parameters
    ----------
    leaderboard
        The table :func:`system_leaderboard` returned.
    style
        Read the style-controlled rows (``sc_*``) instead of the raw ones.

    Returns
    -------
    pandas.DataFrame
        ``judge, ranking_tau, tau_ci_low, tau_ci_high, pairs_ordered_same, pairs_ci_low, pairs_ci_high,
        separability, humans_separability, n_systems`` (ranked by both), ``moved`` (systems whose rank
        differs), ``largest_move`` (the largest absolute move), ``note``.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> agree = ranking_agreement(system_leaderboard(comparisons, n_boot=200))
    >>> print(agree[["judge", "ranking_tau", "pairs_ordered_same", "moved"]].to_string(index=False))
                   judge  ranking_tau  pairs_ordered_same  moved
        gpt-3.5/pairwise          0.8                 0.9      2
          gpt-4/pairwise          1.0                 1.0      0
    llama-2-70b/pairwise          0.8                 0.9      2
    """
    _check_leaderboard(leaderboard)
    p = "sc_" if style else ""
    tau, same = _measure(leaderboard, p + "ranking_tau"), _measure(leaderboard, p + "pairs_ordered_same")
    sep = _measure(leaderboard, p + "separability").set_index("rater")["estimate"]
    moves = _measure(leaderboard, p + "rank_move")
    rows = []
    for t in tau.itertuples(index=False):
        s = same[same["rater"] == t.rater].iloc[0]
        m = moves.loc[(moves["rater"] == t.rater) & moves["estimate"].notna(), "estimate"]
        rows.append({"judge": t.rater, "ranking_tau": t.estimate, "tau_ci_low": t.ci_low, "tau_ci_high": t.ci_high,
                     "pairs_ordered_same": s["estimate"], "pairs_ci_low": s["ci_low"], "pairs_ci_high": s["ci_high"],
                     "separability": sep.get(t.rater, np.nan), "humans_separability": sep.get(HUMANS_LABEL, np.nan),
                     "n_systems": int(len(m)), "moved": int((m != 0).sum()),
                     "largest_move": float(m.abs().max()) if len(m) else np.nan,
                     "note": "; ".join(x for x in (t.note, s["note"]) if x)})
    cols = ["judge", "ranking_tau", "tau_ci_low", "tau_ci_high", "pairs_ordered_same", "pairs_ci_low",
            "pairs_ci_high", "separability", "humans_separability", "n_systems", "moved", "largest_move", "note"]
    return pd.DataFrame(rows, columns=cols)


def rank_moves(leaderboard: pd.DataFrame, *, style: bool = False) -> pd.DataFrame:
    """Each system's rank by the humans and by each judge, and the move: one row per judge and system.

    Parameters
    ----------
    leaderboard
        The table :func:`system_leaderboard` returned.
    style
        Read the style-controlled rows (``sc_*``) instead of the raw ones.

    Returns
    -------
    pandas.DataFrame
        ``judge, system, humans_rank, judge_rank, move, move_ci_low, move_ci_high``; ``move`` is the judge's
        rank minus the humans' among the systems both rank (positive: the judge puts it lower), with its
        paired bootstrap interval. Systems in the humans' order.

    Examples
    --------
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> moves = rank_moves(system_leaderboard(comparisons, n_boot=200))
    >>> print(moves[moves.move != 0].drop(columns=["move_ci_low", "move_ci_high"]).to_string(index=False))
                   judge    system  humans_rank  judge_rank  move
        gpt-3.5/pairwise ember-34b          2.0         3.0   1.0
        gpt-3.5/pairwise dune-8x7b          3.0         2.0  -1.0
    llama-2-70b/pairwise ember-34b          2.0         3.0   1.0
    llama-2-70b/pairwise dune-8x7b          3.0         2.0  -1.0
    """
    _check_leaderboard(leaderboard)
    p = "sc_" if style else ""
    moves = _measure(leaderboard, p + "rank_move")
    rank = _measure(leaderboard, p + "rank").set_index(["rater", "system"])["estimate"]
    human = rank.xs(HUMANS_LABEL, level="rater") if HUMANS_LABEL in rank.index.get_level_values(0) else pd.Series()
    out = pd.DataFrame({"judge": moves["rater"].to_numpy(), "system": moves["system"].to_numpy(),
                        "humans_rank": moves["system"].map(human).to_numpy(dtype=float),
                        "judge_rank": [rank.get((r, s), np.nan) for r, s in zip(moves["rater"], moves["system"])],
                        "move": moves["estimate"].to_numpy(), "move_ci_low": moves["ci_low"].to_numpy(),
                        "move_ci_high": moves["ci_high"].to_numpy()})
    return out.reset_index(drop=True)


def ranking_sentences(leaderboard: pd.DataFrame, *, style: bool = False) -> dict[str, str]:
    """One sentence per judge on how far it moves the humans' ranking (for the CLI and the page).

    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> print(ranking_sentences(system_leaderboard(comparisons, n_boot=200))["gpt-3.5/pairwise"])
    gpt-3.5/pairwise orders 90% of the system pairs as the humans do (Kendall's tau 0.80, 95% interval 0.40 to 1.00) and moves 2 of 5 systems: ember-34b down 1 (2 -> 3), dune-8x7b up 1 (3 -> 2).
    """
    agree, moves = ranking_agreement(leaderboard, style=style), rank_moves(leaderboard, style=style)
    out = {}
    for r in agree.itertuples(index=False):
        if not np.isfinite(r.ranking_tau):
            out[r.judge] = f"{r.judge}: no ranking to compare with the humans' ({r.note})."
            continue
        interval = "" if not np.isfinite(r.tau_ci_low) else \
            f", 95% interval {r.tau_ci_low:.2f} to {r.tau_ci_high:.2f}"
        m = moves[(moves["judge"] == r.judge) & (moves["move"].fillna(0) != 0)]
        m = m.reindex(m["move"].abs().sort_values(ascending=False, kind="stable").index)
        told = ", ".join(f"{x.system} {'down' if x.move > 0 else 'up'} {abs(x.move):.0f} "
                         f"({x.humans_rank:.0f} -> {x.judge_rank:.0f})" for x in m.itertuples(index=False))
        what = f"moves {r.moved} of {r.n_systems} systems: {told}" if r.moved else \
            f"keeps the humans' order of all {r.n_systems} systems"
        out[r.judge] = (f"{r.judge} orders {r.pairs_ordered_same:.0%} of the system pairs as the humans do "
                        f"(Kendall's tau {r.ranking_tau:.2f}{interval}) and {what}.")
    return out
