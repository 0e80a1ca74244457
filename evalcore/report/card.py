"""The judge report card: per judge a one-line verdict, its flagged findings and the mitigations.

The card holds no statistics of its own. :func:`run_audit` calls evalcore's analyses once
(everything the data supports, with one seed and one number of resamples) and keeps their result
tables in an :class:`Audit`; :func:`report_card` reads them:

* **ratings**: the ``pairwise_agreement_gap`` rows of :func:`evalcore.pointwise.agreement.table.agreement`
  grouped by the card's grouping (``language`` when the table has it, else none beyond the
  criteria), and the flagged rows and mitigations of :func:`evalcore.pointwise.bias_report.bias_report`
  (:mod:`evalcore.pointwise.recommend`, Stureborg et al. 2024 Table 6; Hada et al. 2024 §6);
* **comparisons**: :func:`evalcore.pairwise.accuracy.judge_accuracy` (described, never flagged), the
  ``first_position_preference`` flags and ``position_consistency`` of
  :func:`evalcore.pairwise.position.position_report`, and the change in accuracy from subtracting
  superficial quality (:func:`evalcore.pairwise.superficial.superficial_table`; said only where its 95%
  interval excludes 0, never a flag).

A finding is a **flagged** row (the one flag rule, :func:`evalcore.stats.apply_fdr`: tested in the
direction that means harm, Benjamini-Hochberg q <= 0.05 across the analysis's report), or for superficial
quality a change whose interval excludes 0. Anything else is "not flagged".
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from ..pointwise.recommend import HADA, RULES

__all__ = ["ALT_TEST_EPSILON", "Audit", "Finding", "JudgeCard", "LEADERBOARD_MEASURES", "Mitigation", "ReportCard", "SUPERFICIAL_ALPHA",
           "WINRATE_PRIOR", "card_group", "cells_text", "judge_report_card", "places", "report_card", "run_audit"]

#: The alpha at which the card and the report read the superficial-quality subtraction (the page's default).
SUPERFICIAL_ALPHA = 0.5
#: The prior of the report's BWRS win rates: a seeded 30% of each pair's human labels (the page's default).
WINRATE_PRIOR = "ratio:0.3"
#: How the verdict names each bias rule of :data:`evalcore.pointwise.recommend.RULES`.
PHRASES = {
    "familiarity": "favours familiar (low-perplexity) text", "top_skew": "scores too high",
    "low_shift": "scores too low", "granularity": "uses less of the scale than humans",
    "round_numbers": "crowds onto round numbers", "anchoring": "anchored when scoring criteria together",
    "position": "agrees less on criteria placed later in the prompt",
    "self_consistency": "disagrees with itself across samples",
    "prompt_sensitivity": "changes its scores with the prompt variant",
    "label_prior": "gives some categories more or less often than humans",
    "category_familiarity": "gives categories by familiarity (perplexity) more than humans"}
POSITION_SOURCE = "Zheng et al. 2023 (PriDe); Li et al. 2024 (CalibraEval); Zeng et al. 2024 (LLMBar)"
SUPERFICIAL_SOURCE = "Zhou et al. 2024, eq. 1"


@dataclass(frozen=True)
class Finding:
    """One flagged result (or, for superficial quality, a change whose interval excludes 0)."""

    section: str
    measure: str
    group: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int
    q_value: float | None

    def to_dict(self) -> dict:
        """JSON-ready: NaN as None."""
        return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Mitigation:
    """What to do about a finding, and the paper it comes from."""

    finding: str
    action: str
    source: str


@dataclass(frozen=True)
class JudgeCard:
    """One judge: the verdict, its findings (largest first) and the mitigations.

    ``sentences`` are the verdict's sentences (``verdict`` joins them): each names what it is about (criterion,
    language or subset, or all items), and no two say opposite things about the same cell.
    """

    judge: str
    verdict: str
    findings: tuple[Finding, ...]
    mitigations: tuple[Mitigation, ...]
    sentences: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The CLI's JSON record: ``judge, verdict, sentences, findings, mitigations``."""
        return {"judge": self.judge, "verdict": self.verdict, "sentences": list(self.sentences),
                "findings": [f.to_dict() for f in self.findings], "mitigations": [asdict(m) for m in self.mitigations]}


@dataclass(frozen=True)
class ReportCard:
    """Every judge's card."""

    table: str
    cards: tuple[JudgeCard, ...]

    def to_records(self) -> list[dict]:
        """One JSON-ready record per judge (:meth:`JudgeCard.to_dict`)."""
        return [c.to_dict() for c in self.cards]

    def to_json(self) -> str:
        """:meth:`to_records` as JSON text."""
        return json.dumps(self.to_records(), indent=1, ensure_ascii=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per judge: ``judge, verdict, findings`` (their number) and ``mitigations`` (joined)."""
        return pd.DataFrame([{"judge": c.judge, "verdict": c.verdict, "findings": len(c.findings),
                              "mitigations": " | ".join(m.action for m in c.mitigations)} for c in self.cards],
                            columns=["judge", "verdict", "findings", "mitigations"])


@dataclass(frozen=True, eq=False)
class Audit:
    """Every result the report shows, computed once (:func:`run_audit`).

    Attributes
    ----------
    table
        ``ratings`` or ``comparisons``.
    group
        The card's grouping columns (``("language",)`` or empty).
    cells
        The grouping of the agreement table (:func:`evalcore.pointwise.agreement.groups.default_by`).
    n_boot, seed
        Resamples and seed of every analysis.
    results
        Result tables by name: ``agreement``, ``agreement_card``, ``bias``, ``leaderboard`` and ``meta``
        (system- and input-level correlations) (ratings); ``accuracy``,
        ``position``, ``superficial`` and ``winrate`` (comparisons), where the data supports them.
    winrates
        The :class:`~evalcore.pairwise.result.WinRate` of every pair (BWRS, :data:`WINRATE_PRIOR`).
    skipped
        ``{analysis: reason}`` for what could not run.
    seconds
        Time each analysis took.
    """

    table: str
    group: tuple[str, ...]
    cells: tuple[str, ...]
    n_boot: int
    seed: int
    results: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    winrates: tuple = ()
    skipped: Mapping[str, str] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)


def card_group(frame: pd.DataFrame) -> tuple[str, ...]:
    """The card's grouping: ``language`` when the table has one with values, else none.

    >>> card_group(pd.DataFrame({"language": ["en", None]})), card_group(pd.DataFrame({"task": ["a"]}))
    (('language',), ())
    """
    return ("language",) if "language" in frame.columns and frame["language"].notna().any() else ()


def _timed(seconds: dict, name: str, run):
    t0 = time.perf_counter()
    try:
        return run()
    finally:
        seconds[name] = round(time.perf_counter() - t0, 3)


def _ratings_audit(frame: pd.DataFrame, *, n_boot: int, seed: int, out: dict, skipped: dict,
                   seconds: dict) -> tuple[str, ...]:
    """Agreement (cells and the card's grouping) and the bias report; returns the cells' grouping."""
    from ..data.summary import unlocks
    from ..pointwise.agreement.groups import default_by
    from ..pointwise.agreement.table import agreement
    from ..pointwise.agreement.units import count_units
    from ..pointwise.bias_report import bias_report

    av = unlocks(frame, table="ratings").set_index("analysis")
    group = card_group(frame)
    units = count_units(frame)
    cells = tuple(default_by(units))
    if av.loc["agreement_judge", "available"] or av.loc["agreement_humans", "available"]:
        out["agreement"] = _timed(seconds, "agreement", lambda: agreement(units, by=cells, n_boot=n_boot, seed=seed))
        card_by = [c for c in cells if c in group] or list(cells[-1:])  # language, else the criteria
        out["agreement_card"] = out["agreement"] if list(cells) == card_by else _timed(
            seconds, "agreement_card", lambda: agreement(units, by=card_by, n_boot=n_boot, seed=seed))
    else:
        skipped["agreement"] = av.loc["agreement_judge", "missing"]
    if av.loc["score_distribution", "available"]:
        out["bias"] = _timed(seconds, "bias", lambda: bias_report(frame, by=group, n_boot=n_boot, seed=seed))
    else:
        skipped["bias"] = av.loc["score_distribution", "missing"]
    _meta_audit(frame, av, group=group, n_boot=n_boot, seed=seed, out=out, skipped=skipped, seconds=seconds)
    _alt_test_audit(frame, av, n_boot=n_boot, seed=seed, out=out, skipped=skipped, seconds=seconds)
    return cells


#: The epsilon at which the card and the report read the Alt-Test: the paper's value for expert annotators
#: (the page's default); the report says so, and ``evalcore alt-test --epsilon`` gives the others.
ALT_TEST_EPSILON = 0.2


def _alt_test_audit(frame: pd.DataFrame, av: pd.DataFrame, *, n_boot: int, seed: int, out: dict, skipped: dict,
                    seconds: dict) -> None:
    """The Alt-Test of every judge at :data:`ALT_TEST_EPSILON`, where the data supports it."""
    from ..pointwise.alt_test import alt_test

    if "alt_test" not in av.index or not av.loc["alt_test", "available"]:
        if "alt_test" in av.index:
            skipped["alt_test"] = av.loc["alt_test", "missing"]
        return
    try:
        out["alt_test"] = _timed(seconds, "alt_test", lambda: alt_test(frame, epsilon=ALT_TEST_EPSILON,
                                                                       n_boot=n_boot, seed=seed))
    except DataError as e:  # too few items per annotator, or criteria scored differently: said, not run
        skipped["alt_test"] = e.problem


#: The leaderboard's measures in the report: the item level, and the system level where the table names systems.
LEADERBOARD_MEASURES = ("kendall_tau", "kendall_tau_system")


def _meta_audit(frame: pd.DataFrame, av: pd.DataFrame, *, group: tuple[str, ...], n_boot: int, seed: int, out: dict,
                skipped: dict, seconds: dict) -> None:
    """Which judge to use: the judge leaderboard (:func:`evalcore.pointwise.leaderboard.judge_leaderboard`) and the
    system- and input-level correlations (:func:`evalcore.pointwise.meta.meta_correlations`), where available."""
    steps = {"leaderboard": "leaderboard", "meta": "meta_system"}
    for name, need in steps.items():
        if not av.loc[need, "available"]:
            skipped[name] = av.loc[need, "missing"]
            continue
        if name == "leaderboard":
            from ..pointwise.leaderboard import judge_leaderboard

            measures = LEADERBOARD_MEASURES if av.loc["meta_system", "available"] else LEADERBOARD_MEASURES[:1]
            run = (lambda: judge_leaderboard(frame, by=group, measures=measures, n_boot=n_boot, seed=seed))
        else:
            from ..pointwise.meta import meta_correlations

            run = (lambda: meta_correlations(frame, by=group, n_boot=n_boot, seed=seed))
        try:
            out[name] = _timed(seconds, name, run)
        except DataError as exc:
            skipped[name] = str(exc)


def _superficial(frame: pd.DataFrame, *, n_boot: int, seed: int) -> pd.DataFrame:
    """:func:`evalcore.pairwise.superficial.superficial_table` of every judge that scores both outputs."""
    from ..pairwise import superficial as sp
    from .views.superficial_quality import scoring_judges

    judges = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())
    q = "superficial" if {"superficial_a", "superficial_b"} <= set(frame.columns) else "length"
    by = ("subset",) if "subset" in frame.columns and frame["subset"].notna().any() else ()
    parts = [sp.superficial_table(sp.superficial_data(frame, judge=j, q=q, by=by), n_boot=n_boot, seed=seed)
             .assign(q=q) for j in scoring_judges(frame, judges)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _comparisons_audit(frame: pd.DataFrame, *, n_boot: int, seed: int, out: dict, skipped: dict,
                       seconds: dict) -> tuple:
    """Judge accuracy, position bias, superficial quality and BWRS win rates, where the data supports them."""
    from ..data.summary import unlocks
    from ..pairwise.accuracy import judge_accuracy
    from ..pairwise.position import METHODS, position_report
    from ..pairwise.winrate import estimate_all, results_frame

    av = unlocks(frame, table="comparisons").set_index("analysis")
    steps = {
        "accuracy": ("superficial", lambda: judge_accuracy(frame, n_boot=n_boot, seed=seed)),
        "position": ("position_bias", lambda: position_report(
            frame, methods=METHODS if av.loc["calibraeval", "available"] else ("none",), n_boot=n_boot, seed=seed)),
        "superficial": ("superficial", lambda: _superficial(frame, n_boot=n_boot, seed=seed)),
    }
    for name, (need, run) in steps.items():
        if name == "accuracy" and (frame["rater_kind"] == "human").any():
            need = None
        if need is not None and not av.loc[need, "available"]:
            skipped[name] = av.loc[need, "missing"]
            continue
        try:
            out[name] = _timed(seconds, name, run)
        except DataError as exc:
            skipped[name] = str(exc)
    winrates: tuple = ()
    if av.loc["win_rate", "available"]:
        try:
            winrates = tuple(_timed(seconds, "winrate", lambda: estimate_all(
                frame, method="bwrs", prior=WINRATE_PRIOR, seed=seed)))
            out["winrate"] = results_frame(winrates)
        except DataError as exc:
            skipped["winrate"] = str(exc)
    else:
        skipped["winrate"] = av.loc["win_rate", "missing"]
    return winrates


def run_audit(frame: pd.DataFrame, *, table: str, n_boot: int = 1000, seed: int = 0) -> Audit:
    """Every analysis the report shows, computed once with one seed and one number of resamples.

    Parameters
    ----------
    frame
        A validated table (:func:`evalcore.data.ingest.load`).
    table
        ``ratings`` or ``comparisons``.
    n_boot, seed
        Bootstrap resamples over items (0: no intervals, so nothing flagged) and their seed.

    Returns
    -------
    Audit
        The result tables; what could not run is in ``skipped`` with the reason.
    """
    if table not in ("ratings", "comparisons"):
        raise DataError(f"unknown table kind '{table}'", fix="use ratings or comparisons")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError(f"the number of resamples must be a whole number, 0 or more, not {n_boot!r}",
                        fix="use e.g. 1000 resamples")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"the seed must be a whole number, 0 or more, not {seed!r}", fix="use e.g. seed 0")
    out: dict = {}
    skipped: dict = {}
    seconds: dict = {}
    cells: tuple[str, ...] = ()
    winrates: tuple = ()
    if table == "ratings":
        cells = _ratings_audit(frame, n_boot=n_boot, seed=seed, out=out, skipped=skipped, seconds=seconds)
    else:
        winrates = _comparisons_audit(frame, n_boot=n_boot, seed=seed, out=out, skipped=skipped, seconds=seconds)
    return Audit(table, card_group(frame) if table == "ratings" else (), cells, int(n_boot), int(seed), out,
                 winrates, skipped, seconds)


# --------------------------------------------------------------------------- wording

#: Plurals of the columns a card names.
PLURALS = {"language": "languages", "criterion": "criteria", "task": "tasks", "subset": "subsets"}
#: Above this many (criterion, place) parts a sentence counts its cells instead of listing them.
MAX_PARTS = 4


def _noun(column: str, k: int) -> str:
    return PLURALS.get(column, f"{column} values") if k != 1 else column


def _names(values: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    values = list(values)
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def places(hit: Sequence[str], every: Sequence[str], column: str) -> str:
    """Which of ``every`` value of ``column`` a finding holds in, as a reader says it.

    All of them: ``both languages`` or ``all 10 languages`` (the one name when there is one); a few: their names;
    more than five: ``6 of 10 languages``.

    >>> places(["Basque", "Spanish"], ["Spanish", "Basque"], "language"), places(["LA"], ["LA", "TQ", "H"], "criterion")
    ('both languages', 'LA')
    """
    hit, every = sorted(set(map(str, hit))), sorted(set(map(str, every)) | set(map(str, hit)))
    if len(hit) == len(every) > 1:
        return f"both {_noun(column, 2)}" if len(hit) == 2 else f"all {len(hit)} {_noun(column, len(hit))}"
    if len(hit) <= 5:
        return _names(hit)
    return f"{len(hit)} of {len(every)} {_noun(column, len(every))}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _on(criteria: Sequence[str], every: Sequence[str]) -> str:
    """``on Fluency``, ``on all 5 criteria``; empty for a result about the criteria together (no criterion)."""
    criteria = [c for c in criteria if c is not None]
    return f"on {places(criteria, every, 'criterion')}" if criteria else ""


def cells_text(cells: Sequence[tuple], *, criteria: Sequence[str], column: str | None = None,
               values: Sequence[str] = ()) -> str:
    """Where a finding holds: ``cells`` are ``(criterion, value of column)`` pairs (criterion None: a result
    about the criteria together; value None without a ``column``).

    Criteria that hold in the same places are named together: ``on Fluency in both languages``; ``on LA and
    OCQ in all 10 languages; on TQ in Hindi``. Above :data:`MAX_PARTS` such parts, the cells are counted.

    >>> cells_text([("F", "es"), ("F", "eu"), ("C", "es")], criteria=["F", "C"], column="language", values=["es", "eu"])
    'on F in both languages; on C in es'
    """
    if column is None:
        return _on(sorted({c for c, _ in cells if c is not None}), criteria)
    where: dict = {}
    for crit, value in cells:
        where.setdefault(crit, set()).add(str(value))
    parts: dict = {}
    for crit, vals in where.items():
        parts.setdefault(frozenset(vals), []).append(crit)
    if len(parts) > MAX_PARTS:
        n_crit = len({c for c, _ in cells if c is not None}) or 1
        return (f"in {len(set(cells))} of the {len(set(criteria)) * len(set(values))} {column}-criterion "
                f"combinations ({n_crit} {_noun('criterion', n_crit)}, {len({v for _, v in cells})} "
                f"{_noun(column, 2)}; listed in its findings)")
    said: dict = {}  # place text -> (criteria, their place sets): "8 of 10 languages" may be different ones
    for vals, crits in parts.items():
        text = f"in {places(vals, values, column)}"
        got = said.setdefault(text, ([], []))
        got[0].extend(crits)
        got[1].append(vals)
    ordered = sorted(said.items(), key=lambda kv: (-max(map(len, kv[1][1])) * len(kv[1][0]), kv[0]))
    # A finding over every criterion (anchoring) has no criterion: None, or NaN from a table's missing value.
    return "; ".join(" ".join(p for p in (_on(sorted(c for c in crits if c is not None and c == c), criteria),
                                          text + (" each" if len(sets) > 1 else "")) if p)
                     for text, (crits, sets) in ordered)


def _ci(v: float) -> float:
    return float(v) if v is not None and np.isfinite(v) else float("nan")


def _group_text(row: pd.Series, columns: Sequence[str]) -> str:
    parts = [str(row[c]) for c in columns if c in row.index and pd.notna(row[c])]
    return " / ".join(parts) or "all items"


def _findings(rows: pd.DataFrame, *, section: str | None, columns: Sequence[str], suffix: str = "") -> list[Finding]:
    """Result rows as findings, largest |estimate| first (``suffix`` added to each place)."""
    rows = rows.reindex(rows["estimate"].abs().sort_values(ascending=False).index)
    return [Finding(str(r["section"]) if section is None else section, str(r["measure"]),
                    _group_text(r, columns) + suffix, float(r["estimate"]), _ci(r["ci_low"]), _ci(r["ci_high"]),
                    int(r["n"]), None if pd.isna(r.get("q_value")) else float(r["q_value"]))
            for _, r in rows.iterrows()]


# --------------------------------------------------------------------------- ratings


def _criteria(audit: Audit) -> list[str]:
    """Every criterion the audit's tables name."""
    found: set[str] = set()
    for name in ("agreement", "bias"):
        t = audit.results.get(name)
        if t is not None and "criterion" in t.columns:
            found |= set(t["criterion"].dropna().astype(str))
    return sorted(found)


def _agreement_clause(table: pd.DataFrame | None, judge: str, criteria: Sequence[str]) -> tuple[str, list, list]:
    """The agreement sentence of a judge's verdict, its findings and mitigations (``pairwise_agreement_gap``).

    The card's agreement table pools the criteria within a language (:func:`run_audit`); the sentence says so.
    """
    if table is None or table.empty:
        return "", [], []
    gap = table[(table["judge"] == judge) & (table["measure"] == "pairwise_agreement_gap")
                & table["estimate"].notna()]
    if gap.empty:
        return "", [], []
    flagged = gap[gap["flagged"]]
    group = list(table.columns[:list(table.columns).index("judge")])  # the agreement table's own grouping
    col = group[0] if group else None
    pooled = "criterion" not in group and len(criteria) > 1
    about = (f" ({'both' if len(criteria) == 2 else f'all {len(criteria)}'} criteria pooled)" if pooled
             else f" (on {criteria[0]})" if col is None and len(criteria) == 1 else "")
    worse, same = "agrees with humans less than humans agree with each other", \
        "agrees with humans about as well as humans agree with each other"
    if col is None:
        clause = (worse if len(flagged) else same + " (not flagged)") + about
    else:
        prep = "on" if col == "criterion" else "in"
        every, bad = gap[col].astype(str).tolist(), flagged[col].astype(str).tolist()
        ok = sorted(set(every) - set(bad))
        if not bad:
            clause = f"{same} {prep} {places(every, every, col)}{about}"
        elif not ok:
            clause = f"{worse} {prep} {places(bad, every, col)}{about}"
        else:
            clause = f"{same} {prep} {places(ok, every, col)}{about}; less well {prep} {places(bad, every, col)}"
    found = _findings(flagged, section="agreement", columns=list(group),
                      suffix=" / all criteria pooled" if pooled else "")
    mit = [] if flagged.empty else [Mitigation(
        _sentence("the judge agrees with humans less than humans agree with each other"
                  + (f" {'on' if col == 'criterion' else 'in'} {places(flagged[col].astype(str), gap[col].astype(str), col)}"
                     if col else "") + about),
        "Do not use the judge alone there: calibrate it against native-speaker judgments in each of these "
        "groups before use, or keep human annotation there.", HADA)]
    return _sentence(clause), found, mit


def _rule_rows(flagged: pd.DataFrame, rule) -> pd.DataFrame:
    """The flagged rows a rule of :data:`evalcore.pointwise.recommend.RULES` reads."""
    sel = flagged[(flagged["section"] == rule.section) & flagged["measure"].astype(str).str.startswith(rule.measures)]
    if rule.direction == "positive":
        sel = sel[sel["estimate"] > 0]
    elif rule.direction == "negative":
        sel = sel[sel["estimate"] < 0]
    return sel


#: Rules that say opposite things about the same cell, and what the card says where both fire.
OPPOSITES = (("top_skew", "low_shift", "gives more top scores than humans but a lower mean score"),)


def _bias_clauses(records: pd.DataFrame | None, judge: str, group: Sequence[str],
                  criteria: Sequence[str]) -> tuple[list, list, list]:
    """The bias sentences of a judge's verdict (one per rule that fires), its flagged rows and mitigations.

    Each sentence names its cells (criterion and the card's group). A cell where two opposite rules fire
    (:data:`OPPOSITES`: more top scores, yet a lower mean) gets one sentence that says both, never two
    sentences that contradict each other.
    """
    if records is None or records.empty:
        return [], [], []
    mine = records[(records["judge"] == judge) & (records["measure"] != "not_available")]
    flagged = mine[mine["flagged"]]
    col = group[0] if group else None
    values = sorted(mine[col].dropna().astype(str).unique()) if col else []

    def cells(rows: pd.DataFrame) -> set:
        crit = rows["criterion"].astype(object).where(rows["criterion"].notna(), None)
        return set(zip(crit.map(lambda c: None if c is None else str(c)),
                       rows[col].astype(str) if col else [None] * len(rows)))

    fired = {rule.key: (rule, cells(_rule_rows(flagged, rule))) for rule in RULES}
    extra = []
    for a, b, phrase in OPPOSITES:
        both = fired[a][1] & fired[b][1]
        if both:
            fired[a] = (fired[a][0], fired[a][1] - both)
            fired[b] = (fired[b][0], fired[b][1] - both)
            extra.append((b, phrase, both))
    clauses, mits = [], []

    def say(phrase: str, finding: str, rule, hit: set) -> None:
        where = cells_text(sorted(hit, key=str), criteria=criteria, column=col, values=values)
        clauses.append(_sentence(f"{phrase} {where}".strip()))
        mits.append(Mitigation(_sentence(finding.rstrip(".") + (f": {where}" if where else "")), rule.action,
                               rule.source))

    for rule, hit in fired.values():
        if hit:
            say(PHRASES.get(rule.key, rule.finding), rule.finding, rule, hit)
        for after, phrase, both in extra:
            if after == rule.key:
                say(phrase, f"The judge {phrase}", rule, both)
    return clauses, _findings(flagged, section=None, columns=[*group, "criterion", "category"]), mits


def _ratings_card(audit: Audit, judge: str) -> JudgeCard:
    criteria = _criteria(audit)
    clause, found, mits = _agreement_clause(audit.results.get("agreement_card"), judge, criteria)
    clauses, bias_found, bias_mits = _bias_clauses(audit.results.get("bias"), judge, audit.group, criteria)
    said = [clause] if clause else []
    alt = _alt_test_clause(audit.results.get("alt_test"), judge, _pooled(criteria, audit.group))
    if alt:
        said.append(alt)
    if clauses:
        said += clauses
    elif "bias" in audit.results:
        col = audit.group[0] if audit.group else None
        vals = audit.results["bias"][col].dropna().astype(str) if col else []
        where = ", ".join(p for p in (places(criteria, criteria, "criterion") if len(criteria) > 1 else "",
                                      places(vals, vals, col) if col and len(vals) else "") if p)
        said.append(_sentence("no bias flagged" + (f" ({where})" if where else "")))
    return _card(judge, said, found + bias_found, mits + bias_mits)


def _pooled(criteria: Sequence[str], group: Sequence[str]) -> str:
    """What a test over every unit is about, as the card names it: "all criteria and languages pooled"."""
    what = ["all " + PLURALS["criterion"] if len(criteria) > 1 else "on " + ", ".join(criteria)]
    what += [PLURALS.get(c, c) for c in group]
    return (" and ".join(what) + " pooled") if len(what) > 1 or len(criteria) > 1 else what[0]


def _alt_test_clause(table: pd.DataFrame | None, judge: str, scope: str) -> str:
    """The judge's Alt-Test verdict as a sentence of the card (the paper's test, not a flag), with what it pooled."""
    if table is None or table.empty:
        return ""
    mine = table[table["judge"] == judge].set_index("measure")
    if "winning_rate" not in mine.index or len(mine.loc[["winning_rate"]]) != 1:
        return ""  # tested per group: the report's section has the rows
    wr, ap = mine.loc["winning_rate"], mine.loc["advantage_probability"]
    if not np.isfinite(wr["estimate"]):
        return ""
    m = int(wr["n_annotators"])
    verdict, then = ("passes", "by this test it could replace them") if wr["passed"] else ("fails", "by this test it cannot replace them")
    ci = f" [{ap['ci_low']:.2f}, {ap['ci_high']:.2f}]" if np.isfinite(ap["ci_low"]) else ""
    return _sentence(f"{verdict} the Alt-Test at epsilon {wr['epsilon']:g}, {scope} (beats {int(round(wr['estimate'] * m))} "
                     f"of {m} annotators; advantage probability {ap['estimate']:.2f}{ci}): {then}")


def _card(judge: str, sentences: Sequence[str], found: Sequence[Finding], mits: Sequence[Mitigation]) -> JudgeCard:
    sentences = tuple(sentences) or ("Nothing to report.",)
    return JudgeCard(judge, " ".join(sentences), tuple(found), tuple(mits), sentences)


# --------------------------------------------------------------------------- comparisons


def _pct(v: float) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.0%}"


def _accuracy_clause(acc: pd.DataFrame | None, judge: str) -> str:
    if acc is None or acc.empty:
        return ""
    row = acc[(acc["judge"] == judge) & acc["estimate"].notna()]
    if row.empty:
        return ""
    r = row.iloc[0]
    return (f"matches the humans' majority on {_pct(r['estimate'])} of items "
            f"[{_pct(r['ci_low'])}, {_pct(r['ci_high'])}], n = {int(r['n'])}")


def _position_clauses(rep: pd.DataFrame | None, judge: str) -> tuple[list, list, list]:
    """Consistency across orders (described) and first-position preference (flagged or not), per method."""
    from .display import METHOD_NAMES

    if rep is None or rep.empty:
        return [], [], []
    mine = rep[(rep["judge"] == judge) & (rep["measure"] != "not_available")]
    raw = mine[mine["method"] == "none"]
    cons = raw[(raw["measure"] == "position_consistency") & raw["estimate"].notna()]
    clauses = [f"same verdict in both orders on {_pct(r['estimate'])} of items [{_pct(r['ci_low'])}, "
               f"{_pct(r['ci_high'])}]" for _, r in cons.head(1).iterrows()]
    pref = raw[raw["measure"] == "first_position_preference"]
    flagged = pref[pref["flagged"]]
    if len(flagged):
        r = flagged.iloc[0]
        side = "first" if r["estimate"] > 0.5 else "second"
        clauses.append(f"favours the output shown {side} ({_pct(r['estimate'])} of decisive verdicts go first)")
        fixed = [METHOD_NAMES.get(m, m) for m, g in mine[mine["measure"] == "first_position_preference"]
                 .groupby("method", sort=False) if m != "none" and g["estimate"].notna().any() and not g["flagged"].any()]
        if fixed:
            clauses.append("its first-position preference is not flagged after " + _names(fixed))
    elif len(pref) and pref["estimate"].notna().any():
        clauses.append("position preference not flagged")
    all_flagged = mine[mine["flagged"]].assign(section="position")
    found = _findings(all_flagged.assign(measure=all_flagged["measure"] + " (" + all_flagged["method"].map(
        lambda m: METHOD_NAMES.get(m, m)) + ")"), section="position", columns=[])
    mits = [] if flagged.empty else [Mitigation(
        "The verdict depends on the order the outputs are shown in.",
        "Ask the judge in both orders and count a disagreement as a tie, or calibrate its P('A') (PriDe, "
        "CalibraEval NOA) before use.", POSITION_SOURCE)]
    return clauses, found, mits


def _superficial_clauses(table: pd.DataFrame | None, judge: str) -> tuple[list, list, list]:
    """Where subtracting superficial quality at :data:`SUPERFICIAL_ALPHA` changes accuracy with a 95% interval
    excluding 0 (never a flag)."""
    from .views.superficial_quality import superficial_at

    if table is None or table.empty:
        return [], [], []
    mine = table[table["judge"] == judge]
    if mine.empty:
        return [], [], []
    by = [c for c in ("subset",) if c in mine.columns and mine[c].notna().any()]
    at = superficial_at(mine, SUPERFICIAL_ALPHA, by=by, measure="accuracy")
    helps = at[at["change_ci_low"] > 0]
    costs = at[at["change_ci_high"] < 0]
    name = (lambda r: " / ".join(str(r[c]) for c in by) if by else "all items")
    a = f"{SUPERFICIAL_ALPHA:g}"
    clauses = []
    if len(helps):
        clauses.append(f"subtracting superficial quality (α = {a}) raises its accuracy on "
                       + _names([f"{name(r)} ({r['change']:+.3f})" for _, r in helps.iterrows()]))
    if len(costs):
        clauses.append(f"subtracting superficial quality (α = {a}) lowers its accuracy on "
                       + _names([f"{name(r)} ({r['change']:+.3f})" for _, r in costs.iterrows()]))
    if not clauses:
        clauses.append(f"subtracting superficial quality (α = {a}) makes no clear difference")
    rows = pd.concat([helps, costs]).assign(section="superficial", measure=f"accuracy_change_at_alpha_{a}",
                                            estimate=lambda d: d["change"], ci_low=lambda d: d["change_ci_low"],
                                            ci_high=lambda d: d["change_ci_high"], q_value=np.nan)
    mits = [] if helps.empty else [Mitigation(
        "The judge's verdicts follow superficial quality (e.g. length): subtracting it helps.",
        f"Use P_hat = Norm(P) - alpha * Norm(Q) (alpha = {a}, or the cross-validated alpha shown below) instead of "
        "the raw scores.", SUPERFICIAL_SOURCE)]
    return clauses, _findings(rows, section="superficial", columns=by), mits


def _comparisons_card(audit: Audit, judge: str) -> JudgeCard:
    acc = _accuracy_clause(audit.results.get("accuracy"), judge)
    pos, pos_found, pos_mits = _position_clauses(audit.results.get("position"), judge)
    sup, sup_found, sup_mits = _superficial_clauses(audit.results.get("superficial"), judge)
    said = [_sentence(p) for p in ([acc] if acc else []) + pos + sup]
    return _card(judge, said, pos_found + sup_found, pos_mits + sup_mits)


def _judges(audit: Audit) -> list[str]:
    names: set[str] = set()
    for name in ("agreement_card", "bias", "accuracy", "position", "superficial"):
        t = audit.results.get(name)
        if t is not None and not t.empty and "judge" in t.columns:
            names |= set(t["judge"].dropna().astype(str))
    return sorted(names)


def report_card(audit: Audit) -> ReportCard:
    """Every judge's card from an :class:`Audit` (no statistics here: flags and intervals are read).

    Returns
    -------
    ReportCard
        One :class:`JudgeCard` per judge, in name order.
    """
    make = _ratings_card if audit.table == "ratings" else _comparisons_card
    return ReportCard(audit.table, tuple(make(audit, j) for j in _judges(audit)))


def judge_report_card(frame: pd.DataFrame, *, table: str, n_boot: int = 1000, seed: int = 0) -> ReportCard:
    """:func:`report_card` of :func:`run_audit`: the judge report card of a validated table in one call.

    Examples
    --------
    >>> df = pd.DataFrame({"item_id": ["1", "1", "1", "2", "2", "2"], "rater": ["h1", "h2", "j"] * 2,
    ...                    "rater_kind": ["human", "human", "judge"] * 2, "criterion": "overall",
    ...                    "score": [1, 1, 1, 2, 2, 2]})
    >>> card = judge_report_card(df, table="ratings", n_boot=0)
    >>> [c.judge for c in card.cards]
    ['j']
    """
    return report_card(run_audit(frame, table=table, n_boot=n_boot, seed=seed))
