"""What a page shows, as tidy tables: the selections, filters and counts the dashboard needs.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code. Each is named after what the page shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ..columns import JUDGE
from ..text import md

#: The name the humans' rows go by in what a page shows (their ``judge`` is missing in the results).
HUMANS = "(humans)"

# --------------------------------------------------------------------------- shared


def levels(frame: pd.DataFrame, column: str) -> list[str]:
    """The distinct non-missing values of ``column``, as text, sorted (e.g. the options of a filter)."""
    return sorted(map(str, frame[column].dropna().unique()))


def rows_where(frame: pd.DataFrame, values: dict) -> pd.DataFrame:
    """The rows whose columns equal ``values`` (compared as text, as :func:`levels` lists them)."""
    keep = np.ones(len(frame), dtype=bool)
    for col, value in values.items():
        keep &= (frame[col].astype(str) == str(value)).to_numpy()
    return frame[keep]


def with_humans_named(table: pd.DataFrame, *, label: str = HUMANS) -> pd.DataFrame:
    """``table`` with the humans' rows (``judge`` missing) named ``label`` (for display and download)."""
    return table.assign(judge=table["judge"].fillna(label))


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class FlaggedCells:
    """Where an agreement table is flagged.

    Attributes
    ----------
    n
        Flagged rows.
    by
        The column they are counted by (the first grouping column), or None without grouping.
    places
        With ``by``: ``(value, flagged rows)`` per value of ``by``, most flagged first (rows whose
        value is missing count in ``n`` only). Without: ``(judge, 1)`` per flagged row, in table order.
    """

    n: int
    by: str | None
    places: tuple[tuple[str, int], ...]


def flagged_cells(table: pd.DataFrame, by: Sequence[str]) -> FlaggedCells:
    """Count the flagged rows of an agreement table (:func:`evalcore.pointwise.agreement.agreement`)
    by the first grouping column, or list their judges when there is no grouping."""
    flagged = table[table["flagged"]]
    if by:
        counts = flagged[by[0]].astype(str).value_counts()
        return FlaggedCells(len(flagged), by[0], tuple((str(k), int(v)) for k, v in counts.items()))
    return FlaggedCells(len(flagged), None, tuple((str(j), 1) for j in flagged["judge"].astype(str)))


@dataclass(frozen=True)
class AgreementVerdict:
    """What the Agreement page says first: the judges in order, the one to open on, and the sentences."""

    ranked: tuple[str, ...]
    opening: str | None
    sentences: tuple[str, ...]


def _cell_name(row: pd.Series, by: Sequence[str]) -> str:
    return " / ".join(str(row[c]) for c in by) if by else "all items"


def agreement_verdict(table: pd.DataFrame, *, by: Sequence[str], judges: Sequence[str],
                      pending: bool = False, limit: int = 3,
                      escape: Callable[[object], str] = str) -> AgreementVerdict:
    """The page's first answer, from the ``pairwise_agreement_gap`` rows of an agreement table.

    The gap is a judge's agreement with each human minus the humans' agreement with each other on the same
    units (Hada et al. 2024): 0 means the judge agrees with the annotators as well as they agree among
    themselves. Judges are listed by their mean gap over the cells (weighted by units), closest to the
    humans first, and the page opens on the first: the order does not depend on the intervals, so it is
    the same while they are ``pending``. Each judge's sentence gives its mean gap, its lowest cell with that
    cell's 95% interval and, once the tests have run, how many cells are flagged; past ``limit`` judges, one
    sentence names the rest in order. Whether two judges differ is the leaderboard's question (a paired
    bootstrap), not this order's.

    The sentences are Markdown (each judge's name in bold); ``escape`` writes every name from the data into
    them: :func:`evalcore.text.md` where they are shown as Markdown (the app), so that a judge named
    ``[Log in](http://...)`` is not a link; the default leaves them as they are (the CLI prints plain text).
    ``ranked`` and ``opening`` keep the real names.
    """
    gap = table[(table["measure"] == "pairwise_agreement_gap") & table["judge"].isin(list(judges))]
    rows = []
    for judge, g in gap.groupby("judge", sort=False):
        est = g["estimate"].astype(float)
        if not est.notna().any():
            continue
        w = g["n"].astype(float).where(est.notna(), 0.0)
        mean = float((est.fillna(0) * w).sum() / w.sum())
        rows.append((str(judge), mean, g.loc[est.idxmin()], int(g["flagged"].fillna(False).astype(bool).sum()), len(g)))
    rows.sort(key=lambda r: (-r[1], r[0]))
    sentences = []
    for judge, mean, worst, flagged, n_cells in rows[:limit]:
        side = "below" if mean < 0 else "above"
        interval = "" if pending else " " + fmt_interval(worst["ci_low"], worst["ci_high"], signed=True)
        if n_cells > 1:
            text = (f"**{escape(judge)}**: its agreement with each human is on average {abs(mean):.3f} {side} the "
                    f"humans' agreement with each other (pairwise agreement gap, mean over {n_cells} cells); lowest "
                    f"in {escape(_cell_name(worst, by))}: {worst['estimate']:+.3f}{interval}")
            if not pending:
                text += f"; flagged in {flagged} of {n_cells} cells" if flagged else "; flagged in none"
        else:
            text = (f"**{escape(judge)}**: its agreement with each human is {abs(mean):.3f} {side} the humans' "
                    f"agreement with each other (pairwise agreement gap {mean:+.3f}{interval})")
            if not pending:
                text += "; flagged" if flagged else "; not flagged"
        sentences.append(text + ".")
    if len(rows) > limit:
        rest = [f"{escape(j)} ({m:+.3f}" + ("" if pending else f", {f} flagged") + ")"
                for j, m, _, f, _ in rows[limit:]]
        more = len(rest) - 2 * limit  # a long list is not read: the leaderboard tab ranks them all
        sentences.append(f"Then, by mean gap: {', '.join(rest[:2 * limit])}"
                         + (f", and {more} more (the judge leaderboard ranks them all)." if more > 0 else "."))
    if pending and rows:
        sentences.append("The 95% intervals and which cells are flagged follow.")
    ranked = tuple(r[0] for r in rows)
    return AgreementVerdict(ranked, ranked[0] if ranked else None, tuple(sentences))


def _short(v: float, lo: float, hi: float) -> str:
    """``0.73 [0.69, 0.79]``: two decimals, for a summary that fits a terminal."""
    if v != v:
        return "not defined"
    return f"{v:.2f}" + ("" if lo != lo or hi != hi else f" [{lo:.2f}, {hi:.2f}]")


def agreement_summary(table: pd.DataFrame, *, by: Sequence[str]) -> pd.DataFrame:
    """One row per group and judge: the humans' agreement with each other, the judge's with each human, the
    gap between them (the flagged measure, with its mark) and n; a group without judges gets the humans'
    row only. What ``evalcore agreement`` prints by default (``--all`` prints every measure).

    Columns: ``*by, judge, humans agree, judge agrees, gap, flag, n`` (estimates to 2 decimals with 95%
    intervals; ``flag`` is ``LOW`` when flagged, ``HIGH`` when significantly better, which is not a flag).
    """
    by = list(by)
    key = lambda r: tuple(r[c] for c in by)  # noqa: E731 - a row's group
    humans = {key(r): r for _, r in table[table["judge"].isna() & (table["measure"] == "percent_agreement")].iterrows()}
    judged = table[table["judge"].notna()]
    pair = {(key(r), r["judge"]): r for _, r in judged[judged["measure"] == "pairwise_agreement"].iterrows()}
    rows = []
    for _, g in judged[judged["measure"] == "pairwise_agreement_gap"].iterrows():
        h, j = humans.get(key(g)), pair.get((key(g), g["judge"]))
        flag = "HIGH" if bool(g.get("opposite", False)) else "LOW" if bool(g["flagged"]) else ""
        rows.append({**{c: g[c] for c in by}, "judge": str(g["judge"]),
                     "humans agree": "" if h is None else _short(h["estimate"], h["ci_low"], h["ci_high"]),
                     "judge agrees": "" if j is None else _short(j["estimate"], j["ci_low"], j["ci_high"]),
                     "gap": _short(g["estimate"], g["ci_low"], g["ci_high"]), "flag": flag, "n": int(g["n"])})
    seen = {tuple(r[c] for c in by) for r in rows}
    for k, h in humans.items():
        if k not in seen:
            rows.append({**dict(zip(by, k)), "judge": HUMANS, "humans agree": _short(h["estimate"], h["ci_low"],
                                                                                     h["ci_high"]),
                         "judge agrees": "", "gap": "", "flag": "", "n": int(h["n"])})
    cols = [*by, "judge", "humans agree", "judge agrees", "gap", "flag", "n"]
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values([*by, "judge"], kind="stable").reset_index(drop=True) if len(out) else out


def for_sources(dist: pd.DataFrame, sources: Iterable[str | None]) -> pd.DataFrame:
    """The rows of a distribution table whose ``source`` is one of ``sources`` (e.g. humans and one judge)."""
    return dist[dist["source"].isin(list(sources))]


# --------------------------------------------------------------------------- bias


def undrawn(records: pd.DataFrame, *, measure: str, y: str) -> str | None:
    """What an effect plot of ``measure`` leaves out (its rows without a value), as a sentence with the reasons;
    None when every row has a value. A plot that drops a judge or a group silently reads as if it were not
    there."""
    rows = records[(records["measure"] == measure) & records["estimate"].isna()]
    if rows.empty:
        return None
    names = [f"{'humans' if j != j or j is None else j}" + (f" / {v}" if y in rows and v == v else "")
             for j, v in zip(rows["judge"], rows[y] if y in rows else [None] * len(rows))]
    reasons = sorted({str(n) for n in rows["note"].fillna("") if str(n)}) if "note" in rows else []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return (f"Not drawn, no value: {shown}" + (f" ({'; '.join(reasons[:3])})" if reasons else "") + ".")


def judge_names(ratings: pd.DataFrame) -> list:
    """The judges of a ratings table, sorted."""
    return sorted(ratings.loc[ratings["rater_kind"] == JUDGE, "rater"].unique())


def first_judges(judges: Sequence[str], *, all_up_to: int = 6, first: int = 4) -> list:
    """The judges a page selects at first: all of them when there are at most ``all_up_to``, else the
    first ``first`` (many judges crowd every chart; the user adds more)."""
    return list(judges) if len(judges) <= all_up_to else list(judges[:first])


def score_levels(ratings: pd.DataFrame, criterion: str) -> list:
    """The distinct scores given on ``criterion``, sorted."""
    return sorted(ratings.loc[ratings["criterion"] == criterion, "score"].unique())


def thresholds(ratings: pd.DataFrame, criterion: str) -> list:
    """The thresholds a conditional distribution can split ``criterion`` at: every score but the highest
    (above vs at or below), or the only score there is."""
    scores = score_levels(ratings, criterion)
    return scores[:-1] or scores


def criterion_view(results: pd.DataFrame, criterion: str, *, grouped: bool) -> pd.DataFrame:
    """The bias results a grouped view shows for one criterion (with the rows that have none); all of
    them when the view is not grouped (its rows are the criteria)."""
    if not grouped:
        return results
    return results[(results["criterion"].astype(str) == criterion) | results["criterion"].isna()]


# --------------------------------------------------------------------------- win rates


def pair_labels(pairs: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``"a vs b"`` -> ``(a, b)`` for every pair of :func:`evalcore.pairwise.winrate.pairs`, in its order."""
    return {f"{a} vs {b}": (a, b) for a, b in zip(pairs["system_a"], pairs["system_b"])}


def _row(pairs: pd.DataFrame, label: str) -> pd.Series:
    return pairs.iloc[list(pair_labels(pairs)).index(label)]


def pair_judges(pairs: pd.DataFrame, label: str) -> list[str]:
    """The judges of the pair named ``label`` (``"a vs b"``)."""
    return [j.strip() for j in str(_row(pairs, label)["judges"]).split(",") if j.strip()]


def labelled_pairs(pairs: pd.DataFrame) -> list[str]:
    """The names (``"a vs b"``) of the pairs with human rows, in order."""
    return [name for name, n in zip(pair_labels(pairs), pairs["n_human_rows"]) if n > 0]


def systems(pairs: pd.DataFrame) -> list[str]:
    """Every system in the pairs, sorted."""
    return sorted(set(pairs["system_a"]) | set(pairs["system_b"]))


def verdict_count(pair) -> int:
    """The judge verdicts of a :class:`evalcore.pairwise.winrate.PairData` (items x judges with a verdict)."""
    return int((pair.verdicts >= 0).sum())


def labels_used(pair, ratio: float) -> int:
    """How many of the pair's human labels a prior data ratio uses (as
    :func:`evalcore.pairwise.winrate.label_mask` counts them)."""
    return int(round(float(ratio) * pair.n_human))


def mode_minus_humans(result, pair) -> float | None:
    """A win rate's posterior mode minus the humans' win rate; None when the pair has no human label."""
    if not math.isfinite(pair.p_human):
        return None
    return result.p_mode - pair.p_human


def judge_accuracy(results: Sequence) -> pd.DataFrame:
    """:func:`evalcore.pairwise.winrate.judges_table` with the methods by their display names."""
    from ..pairwise.winrate import judges_table
    from .plots import METHOD_LABEL  # plotly loads only on pages that draw

    acc = judges_table(results)
    acc["method"] = acc["method"].map(METHOD_LABEL)
    return acc


def judge_accuracy_view(acc: pd.DataFrame, *, a: str, b: str) -> pd.DataFrame:
    """:func:`judge_accuracy` as the page prints it, narrow enough for the screen: each accuracy with its
    interval in one cell, the label counts as "agreed of labels"."""
    def cell(m, lo, hi):
        return [f"{fmt_number(v)} {fmt_interval(l, h)}" for v, l, h in zip(acc[m], acc[lo], acc[hi])]

    return pd.DataFrame({
        "method": acc["method"], "judge": acc["judge"], "k": [fmt_number(v) for v in acc["k"]],
        "verdicts": acc["n_verdicts"].astype(int),
        f"agreed when {a} is better": [f"{int(s)} of {int(n)}" for s, n in zip(acc["s0"], acc["n0"])],
        f"agreed when {b} is better": [f"{int(s)} of {int(n)}" for s, n in zip(acc["s1"], acc["n1"])],
        "q0": cell("q0_mean", "q0_low", "q0_high"), "q1": cell("q1_mean", "q1_low", "q1_high"),
        "judge's own p (mode)": cell("p_mode", "p_low", "p_high")})


def with_warnings(frame: pd.DataFrame) -> int:
    """How many estimates of :func:`evalcore.pairwise.winrate.results_frame` came with a warning."""
    return int((frame["warnings"] != "").sum())


def warning_lines(frame: pd.DataFrame, *, limit: int = 8) -> list[str]:
    """The warnings of :func:`evalcore.pairwise.winrate.results_frame`, one line per estimate ("a vs b (method):
    warning"), at most ``limit`` and a line counting the rest: read in full where the table's last column is
    cut off by the screen."""
    from .plots import METHOD_LABEL  # plotly loads only on pages that draw

    rows = frame[frame["warnings"] != ""]
    lines = [f"{r.system_a} vs {r.system_b} ({METHOD_LABEL.get(r.method, r.method)}): {r.warnings}"
             for r in rows.head(limit).itertuples()]
    return lines + ([f"... and {len(rows) - limit} more (the 'warnings' column of the download)"]
                    if len(rows) > limit else [])


def curve_pairs(curve: pd.DataFrame) -> int:
    """Over how many pairs an error curve (:func:`evalcore.pairwise.winrate.error_curve`) was averaged."""
    return int(curve["n_pairs"].max())


# --------------------------------------------------------------------------- landing page


def saved_datasets(items: Sequence) -> pd.DataFrame:
    """One row per stored dataset (:class:`evalcore.data.store.DatasetInfo`), as the saved list shows it."""
    from ..data.store import READY

    return pd.DataFrame([{
        "name": d.name,
        "tables": ", ".join(f"{k}: {n:,} rows" for k, n in d.tables.items()) or "(not imported yet)",
        "status": "ready" if d.status == READY else "needs column mapping",
        "source": d.source, "updated (UTC)": d.updated.strftime("%Y-%m-%d %H:%M"),
    } for d in items])


#: Where each analysis of :func:`evalcore.data.schema.analyses` is shown: its dashboard page(s) and CLI command.
ANALYSIS_PAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "agreement_humans": (("Agreement",), "evalcore agreement"),
    "agreement_judge": (("Agreement",), "evalcore agreement"),
    "class_distribution": (("Agreement",), ""),
    "by_language": (("Agreement", "Bias"), "evalcore agreement, evalcore bias"),
    "score_distribution": (("Bias",), "evalcore bias"),
    "familiarity": (("Bias",), "evalcore bias"),
    "anchoring": (("Bias",), "evalcore bias"),
    "anchoring_position": (("Bias",), "evalcore bias"),
    "self_consistency": (("Bias",), "evalcore bias"),
    "win_rate": (("Win rates",), "evalcore winrate"),
    "superficial": (("Superficial quality",), "evalcore superficial"),
    "superficial_ratings": (("Superficial quality",), "evalcore superficial"),
    "position_bias": (("Position bias",), "evalcore position"),
    "calibraeval": (("Position bias",), "evalcore position"),
    "meta_system": (("Agreement",), "evalcore agreement"),
    "meta_input": (("Agreement",), "evalcore agreement"),
    "leaderboard": (("Agreement",), "evalcore agreement --leaderboard"),
}


def _where(analysis: str) -> str:
    pages, command = ANALYSIS_PAGES.get(analysis, ((), ""))
    return " · ".join([*(f"{p} page" for p in pages), *([f"CLI: {command}"] if command else [])])


def unlocked(analyses: pd.DataFrame, table: str) -> pd.DataFrame:
    """The analyses of one table (:func:`evalcore.data.schema.analyses`): available, title, where it is shown
    (page and command), what is missing."""
    shown = analyses[analyses["table"] == table]
    return shown.assign(where=[_where(a) for a in shown["analysis"]])[["available", "title", "where", "missing"]]


def unlocked_pages(analyses: pd.DataFrame, table: str) -> list[str]:
    """The pages (in :data:`ANALYSIS_PAGES` order) that show an analysis available on this table."""
    ready = set(analyses.loc[(analyses["table"] == table) & analyses["available"], "analysis"])
    pages = [p for name, (ps, _) in ANALYSIS_PAGES.items() if name in ready for p in ps]
    return list(dict.fromkeys(pages))


def raters_with_role(roles: pd.DataFrame, role: str) -> list[str]:
    """The raters of a role table (``rater``, ``role``, ...; :func:`evalcore.data.ingest.rater_roles`) with ``role``."""
    return [str(r) for r in roles.loc[roles["role"] == role, "rater"]]


def fmt_number(v: float | None) -> str:
    """A number as pages, plots and tables show it: 3 decimals, ``n/a`` when undefined."""
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.3f}"


def fmt_interval(lo: float, hi: float, *, signed: bool = False, prefix: str = "") -> str:
    """An interval as ``prefix[lo, hi]`` to 3 decimals (``signed``: with a sign), ``no interval`` when undefined."""
    if lo != lo or hi != hi:
        return "no interval"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{prefix}[{f.format(lo)}, {f.format(hi)}]"


def superficial_at(table: pd.DataFrame, alpha: float, *, by: Sequence[str], measure: str,
                   flips: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per group at the slider's ``alpha``: raw and corrected measure with intervals, the change, and
    (pairwise) the verdicts that flipped. ``table`` is the page's curve (with its CV rows)."""
    rows = table[(table["measure"] == measure) & np.isclose(table["alpha"].astype(float), alpha)]
    raw = table[(table["measure"] == measure) & (table["alpha"].astype(float) == 0.0)]
    cv = table[table["measure"] == "alpha_cv"]
    keys = list(by)
    out = rows[keys + ["n", "estimate", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high"]].merge(
        raw[keys + ["estimate", "ci_low", "ci_high"]].rename(columns=lambda c: c if c in keys else f"raw_{c}"),
        on=keys, how="left") if keys else rows.assign(raw_estimate=raw["estimate"].iloc[0],
                                                      raw_ci_low=raw["ci_low"].iloc[0],
                                                      raw_ci_high=raw["ci_high"].iloc[0])
    out = out.merge(cv[keys + ["estimate"]].rename(columns={"estimate": "alpha_cv"}), on=keys, how="left") \
        if keys else out.assign(alpha_cv=cv["estimate"].iloc[0] if len(cv) else np.nan)
    if flips is not None:
        out = out.merge(flips[keys + ["right_to_wrong", "wrong_to_right"]], on=keys, how="left") if keys else \
            out.assign(right_to_wrong=flips["right_to_wrong"].iloc[0], wrong_to_right=flips["wrong_to_right"].iloc[0])
    return out.reset_index(drop=True)


def superficial_shown(at: pd.DataFrame, *, by: Sequence[str], label: str) -> pd.DataFrame:
    """:func:`superficial_at` as the page prints it: estimates with their intervals in the cells."""
    shown = at[list(by)].copy() if by else pd.DataFrame(index=at.index)
    shown["items"] = at["n"].astype(int)
    shown[f"raw {label}"] = [f"{e:.3f} {fmt_interval(lo, hi)}" for e, lo, hi in zip(at["raw_estimate"], at["raw_ci_low"],
                                                                              at["raw_ci_high"])]
    shown[f"{label} at alpha"] = [f"{e:.3f} {fmt_interval(lo, hi)}" for e, lo, hi in zip(at["estimate"], at["ci_low"],
                                                                                  at["ci_high"])]
    shown["change"] = [f"{e:+.3f} {fmt_interval(lo, hi, signed=True)}" for e, lo, hi in zip(at["change"], at["change_ci_low"],
                                                                            at["change_ci_high"])]
    if "right_to_wrong" in at:
        shown["right → wrong"] = at["right_to_wrong"].astype(int)
        shown["wrong → right"] = at["wrong_to_right"].astype(int)
    shown["cross-validated alpha"] = at["alpha_cv"].map(lambda v: "n/a" if v != v else f"{v:g}")
    return shown


def superficial_reading(at: pd.DataFrame, *, by: Sequence[str], alpha: float, label: str) -> str:
    """A plain-language reading: where subtracting superficial quality at ``alpha`` helps, costs or does neither.

    A change counts as help or cost only when its 95% interval excludes 0.
    """
    if float(alpha) == 0.0:
        cv = at["alpha_cv"].dropna() if "alpha_cv" in at else pd.Series(dtype=float)
        if len(cv) and (cv == 0).all():
            return ("Cross-validation picks alpha = 0" + (" in every group" if len(cv) > 1 else "") + ": subtracting "
                    "this superficial quality does not bring the judge closer to the humans on held-out items. At "
                    "alpha = 0 nothing is subtracted (the judge's own verdicts); move the slider to see what "
                    "subtracting would do.")
        return "At alpha = 0 nothing is subtracted: these are the judge's own verdicts. Move the slider to compare."
    if len(at) and at["change_ci_low"].isna().all():  # points first: no interval yet, so no call either way
        moves = ", ".join(f"{' / '.join(str(r[c]) for c in by) if by else 'all items'} {r['change']:+.3f}"
                          for _, r in at.head(6).iterrows())
        return (f"At alpha = {alpha:g} the {label} moves by {moves}" + (" ..." if len(at) > 6 else "") +
                ". Whether any change is clear waits for the 95% intervals, which are being computed.")
    helps, costs, neither = [], [], []
    for _, r in at.iterrows():
        name = " / ".join(str(r[c]) for c in by) if by else "all items"
        if r["change_ci_low"] > 0:
            helps.append(f"{name} by {r['change']:+.3f} (95% CI {r['change_ci_low']:+.3f} to {r['change_ci_high']:+.3f})")
        elif r["change_ci_high"] < 0:
            costs.append(f"{abs(r['change']):.3f} on {name} (95% CI {r['change_ci_low']:+.3f} to "
                         f"{r['change_ci_high']:+.3f})")
        else:
            neither.append(name)
    parts = []
    many = len(at) > 6  # name the groups only while the sentence stays readable
    if helps:
        parts.append(f"helps on {len(helps)} of {len(at)} groups" if many else "helps on " + "; and on ".join(helps))
    if costs:
        parts.append(f"costs on {len(costs)} of {len(at)} groups" if many else "costs " + "; and ".join(costs))
    if many:
        neither = [f"{len(neither)} of {len(at)} groups"] if neither else []
    text = f"Subtracting superficial quality at alpha = {alpha:g} " + (" and ".join(parts) if parts else
                                                                       "makes no clear difference anywhere")
    if neither and parts:
        text += f"; on {', '.join(neither)} the change's interval includes 0 (no clear difference)"
    return text + f" ({label}, compared with the raw judge on the same resamples)."


def group_label(frame: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """One label per row from the ``by`` columns (``"Adversarial / en"``); empty without ``by``."""
    if not by:
        return pd.Series("", index=frame.index)
    return frame[list(by)].astype(str).agg(" / ".join, axis=1)


def superficial_curve(table: pd.DataFrame, *, by: Sequence[str], measure: str) -> tuple[pd.DataFrame, dict]:
    """The page's curve of ``measure`` with a ``group`` label column, and each group's cross-validated alpha."""
    curve = table[table["measure"] == measure]
    cv = table[table["measure"] == "alpha_cv"]
    return curve.assign(group=group_label(curve, by)), dict(zip(group_label(cv, by), cv["estimate"]))


def coverage(frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Judgments per group and rater kind (``rater_kind``), grouped by the first of language, subset, task and
    criterion the table has: what the data holds at a glance. Returns the counts and the grouping column.

    >>> frame = pd.DataFrame({"language": ["en", "en", "sw"], "rater_kind": ["human", "judge", "human"]})
    >>> coverage(frame)[0].to_dict("records")
    [{'language': 'en', 'rater_kind': 'human', 'judgments': 1}, {'language': 'en', 'rater_kind': 'judge', 'judgments': 1}, {'language': 'sw', 'rater_kind': 'human', 'judgments': 1}]
    """
    col = next((c for c in ("language", "subset", "task", "criterion") if c in frame.columns), None)
    keys = [c for c in (col, "rater_kind") if c is not None and c in frame.columns]
    if not keys:
        return pd.DataFrame(columns=["judgments"]), None
    counts = frame.groupby(keys, dropna=False, observed=True).size().rename("judgments").reset_index()
    return counts.astype({c: str for c in keys}), col


def opening_alpha(cv: dict, grid: Sequence[float], *, default: float) -> float:
    """Where the alpha slider opens: the median of the groups' cross-validated alphas, on the slider's ``grid``
    (``default`` when no group has one); a median halfway between two grid points opens at the smaller alpha.

    >>> opening_alpha({"Natural": 0.3, "Adversarial": 0.62, "all": float("nan")}, [0.0, 0.25, 0.5, 0.75], default=0.5)
    0.5
    >>> opening_alpha({}, [0.0, 0.5, 1.0], default=0.5)
    0.5
    """
    vals = [float(v) for v in cv.values() if v == v]
    if not vals:
        return default
    mid = float(np.median(vals))
    return float(min(grid, key=lambda a: abs(a - mid)))


def length_controlled_view(lc: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per system pair: the raw, length-controlled (AlpacaEval's minimal GLM, the pair fitted on its own),
    subtracted (at the slider's ``alpha``) and humans' win rates of the first system, each with its interval printed
    in the cell."""
    keep = lc["alpha"].isna() | np.isclose(lc["alpha"].astype(float), alpha)
    rows = lc[keep]
    names = {"win_rate": "raw win rate", "lc_win_rate": "length-controlled (AlpacaEval)", "subtracted_win_rate":
             f"after subtracting Q (α = {alpha:g})", "human_win_rate": "humans"}
    cell = [f"{e:.3f} {fmt_interval(lo, hi)}" if e == e else "n/a" for e, lo, hi in
            zip(rows["estimate"], rows["ci_low"], rows["ci_high"])]
    wide = rows.assign(cell=cell).pivot_table(index=["system_a", "system_b", "n"], columns="measure", values="cell",
                                              aggfunc="first", sort=False)
    wide = wide[[m for m in names if m in wide.columns]].rename(columns=names).reset_index()
    return wide.rename(columns={"system_a": "system", "system_b": "against", "n": "items"})


def scoring_judges(comparisons: pd.DataFrame, judges: Sequence[str]) -> list[str]:
    """The ``judges`` that score both outputs (``score_a`` and ``score_b``) somewhere in ``comparisons``."""
    if not {"score_a", "score_b"} <= set(comparisons.columns):
        return []
    scored = set(comparisons.dropna(subset=["score_a", "score_b"])["rater"].astype(str))
    return [j for j in judges if j in scored]


def position_rows(report: pd.DataFrame, *, by: Sequence[str], method: str = "none") -> pd.DataFrame:
    """One method's rows of a position report, with a ``label`` naming the judge and its group."""
    rows = report[report["method"] == method]
    group = group_label(rows, by)
    return rows.assign(label=rows["judge"].astype(str) + np.where(group != "", " · " + group, ""))


def before_after(report: pd.DataFrame, *, judge: str, by: Sequence[str]) -> pd.DataFrame:
    """One judge's measures (rows) by calibration method (columns), estimate and interval in each cell."""
    from .plots import METHOD_NAMES, POSITION_LABELS

    rows = report[(report["judge"] == judge) & (report["measure"] != "not_available")]
    cell = [("n/a" if e != e else f"{e:.3f} {fmt_interval(lo, hi)}") + (" ⚑" if f is True else "")
            for e, lo, hi, f in zip(rows["estimate"], rows["ci_low"], rows["ci_high"], rows["flagged"])]
    index = [*by, "measure"]
    wide = rows.assign(cell=cell).pivot_table(index=index, columns="method", values="cell", aggfunc="first",
                                              sort=False)
    wide = wide[[m for m in METHOD_NAMES if m in wide.columns]].rename(columns=METHOD_NAMES).reset_index()
    return wide.assign(measure=wide["measure"].map(lambda m: POSITION_LABELS.get(m, m)))


def position_reading(report: pd.DataFrame, *, judge: str, by: Sequence[str],
                     escape: Callable[[object], str] = md) -> str:
    """Whether a judge can be trusted to compare two outputs in a single order, in plain language.

    The rule, stated on the page: trusted when its first-position preference is not flagged and the
    lower end of its position consistency's 95% interval is at least 0.9 (the order changes at most
    one verdict in ten), in every group.

    The sentence is Markdown (the judge's name in bold) for the page; ``escape`` writes the names from the
    data into it (default :func:`evalcore.text.md`: shown as written, never as a link or an image).
    """
    rows = report[(report["judge"] == judge) & (report["method"] == "none")]
    cons = rows[rows["measure"] == "position_consistency"]
    pref = rows[rows["measure"] == "first_position_preference"]
    if cons.empty or cons["estimate"].isna().all():
        return f"**{escape(judge)}**: no item has its verdicts in both orders, so its position bias cannot be measured."
    worst = cons.loc[cons["ci_low"].fillna(cons["estimate"]).idxmin()]
    where = (" (" + escape(" / ".join(str(worst[c]) for c in by)) + ")") if by else ""
    flagged = pref[pref["flagged"].fillna(False).astype(bool)]
    text = (f"**{escape(judge)}** gives the same verdict in both orders on {worst['estimate']:.0%} of items{where} "
            f"(95% CI {worst['ci_low']:.0%} to {worst['ci_high']:.0%}).")
    if len(flagged):
        f = flagged.iloc[0]
        side = "first" if f["estimate"] > 0.5 else "second"
        text += (f" It favours the output shown {side}: {f['estimate']:.0%} of its decisive verdicts go to the first "
                 f"position (flagged, q = {f['q_value']:.2g}).")
    trusted = not len(flagged) and worst["ci_low"] >= 0.9
    others = report[(report["judge"] == judge) & (report["method"] != "none")]
    calibrated = bool(len(others)) and (others["measure"] != "not_available").any()
    text += (" It can be trusted to compare two outputs in a single order." if trusted else
             " Do not trust it in a single order: ask it in both orders and count a disagreement as a tie"
             + (", or calibrate it (below)." if calibrated else
                " (calibrating it needs its probabilities of \"A\", which this file does not have)."))
    return text


def calibration_maps(calibrations: Sequence, *, judge: str) -> pd.DataFrame:
    """``method, raw, calibrated`` of one judge's fitted calibrations (each one's ``to_frame``)."""
    parts = [c.to_frame().assign(method=c.method) for c in calibrations if c.judge == judge]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "raw", "calibrated"])


def calibrated_judges(report: pd.DataFrame) -> list[str]:
    """The judges of a position report that have calibrated rows (they gave probabilities)."""
    rows = report[(report["method"] != "none") & (report["measure"] != "not_available")]
    return list(dict.fromkeys(rows["judge"].astype(str)))


def _cells(rows: pd.DataFrame) -> list[str]:
    return [("n/a" if e != e else f"{e:.3f} {fmt_interval(lo, hi)}") for e, lo, hi in
            zip(rows["estimate"], rows["ci_low"], rows["ci_high"])]


def leaderboard_view(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as the page prints it: rank, judge, estimate [interval], difference to the best [interval]."""
    diff = [("" if d != d else f"{d:+.3f} {fmt_interval(lo, hi, signed=True)}") for d, lo, hi in
            zip(board["diff_to_best"], board["diff_ci_low"], board["diff_ci_high"])]
    # n says what it counts: the inputs resampled (system and input levels with input_id) or the items
    unit = str(board["n_unit"].iloc[0]) if "n_unit" in board and len(board) else "items"
    out = board[["rank", "judge"]].assign(estimate=_cells(board), minus_best=diff, n=board["n"],
                                          worse=board["worse_than_best"].map({True: "worse than the best",
                                                                              False: ""}))
    if "n_items" in board and unit != "items":
        out.insert(list(out.columns).index("n") + 1, "items", board["n_items"])
    return out.rename(columns={"minus_best": "minus the best (paired)", "worse": "verdict", "n": f"n ({unit})"})


def meta_view(meta: pd.DataFrame) -> pd.DataFrame:
    """System- and input-level correlations, one row per criterion (and group) and judge, a column per measure."""
    keys = [c for c in meta.columns if c not in ("judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_systems",
                                                  "test", "p_value", "q_value", "flagged", "opposite", "note")]
    wide = meta.assign(cell=_cells(meta)).pivot_table(index=[*keys, "judge"], columns="measure", values="cell",
                                                      aggfunc="first", sort=False)
    counts = meta.groupby([*keys, "judge"], sort=False)[["n", "n_systems"]].first()
    return wide.join(counts).reset_index().rename(columns={"n": "inputs", "n_systems": "systems"})


def pair_matrix(pairs: pd.DataFrame, *, measure: str, group: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One group's rater-pair ``measure`` as a matrix (rows: annotators then judges; columns: annotators), and n.

    Annotator pairs are symmetric: each is written in both cells.
    """
    rows = pairs[pairs["measure"] == measure]
    for col, value in group.items():
        rows = rows[rows[col] == value]
    mirror = rows[rows["kind"] == "human-human"].rename(columns={"rater_a": "rater_b", "rater_b": "rater_a"})
    both = pd.concat([rows, mirror], ignore_index=True)
    humans = sorted(set(rows.loc[rows["kind"] == "human-human", "rater_a"]) |
                    set(rows.loc[rows["kind"] == "human-human", "rater_b"]) |
                    set(rows.loc[rows["kind"] == "judge-human", "rater_b"]))
    judges = sorted(set(rows.loc[rows["kind"] == "judge-human", "rater_a"]))
    order = humans + [j for j in judges if j not in humans]
    est = both.pivot_table(index="rater_a", columns="rater_b", values="estimate", aggfunc="first")
    n = both.pivot_table(index="rater_a", columns="rater_b", values="n", aggfunc="first")
    return est.reindex(index=order, columns=humans), n.reindex(index=order, columns=humans)


#: Readable names of the correlation measures.
MEASURE_LABELS = {"kendall_tau": "Kendall's tau (items)", "spearman_rho": "Spearman's rho (items)",
                  "kendall_tau_system": "Kendall's tau (systems)", "spearman_rho_system": "Spearman's rho (systems)",
                  "pearson_r_system": "Pearson's r (systems)", "kendall_tau_input": "Kendall's tau (per input)",
                  "spearman_rho_input": "Spearman's rho (per input)", "pearson_r_input": "Pearson's r (per input)"}
#: Readable names of the rater-pair measures.
PAIR_MEASURES = {"cohen_kappa": "Cohen's kappa", "cohen_kappa_linear": "Cohen's kappa (linear weights)",
                 "cohen_kappa_quadratic": "Cohen's kappa (quadratic weights)", "percent_agreement": "percent agreement"}


def flagged_judges(results: pd.DataFrame, measure: str) -> list[str]:
    """The judges with a flagged ``measure`` row, most flagged rows first (what a page should open on)."""
    rows = results[(results["measure"] == measure) & results["flagged"].fillna(False).astype(bool)]
    counts = rows["judge"].dropna().astype(str).value_counts()
    return list(counts.index)


def largest_calibration(results: Sequence, lookup: dict[str, tuple[str, str]]) -> str | None:
    """The pair (its label in ``lookup``) whose calibrated win rate moves furthest from the raw one: where
    calibration matters most, so what the Win rates page opens on. ``results`` are WinRate records."""
    by_pair = {frozenset(v): k for k, v in lookup.items()}
    best, size = None, -1.0
    for r in results:
        effect = abs(r.p_mode - r.k_observed)
        label = by_pair.get(frozenset((r.system_a, r.system_b)))
        if label is not None and effect == effect and effect > size:
            best, size = label, effect
    return best
