"""What a validated table holds (:func:`summarize`) and what it unlocks (:data:`UNLOCKS`, :func:`unlocks`).

Each :class:`Unlock` is one analysis evalcore offers (a page or a command) with the check that says
what the data still lacks for it. The app's sidebar, ``evalcore validate`` and the HTML report list
them; the names (``agreement_humans``, ``win_rate``...) are the ``unlocks`` of the JSON output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ..columns import COMPARISONS, HUMAN, JUDGE, RATINGS, column_names
from .codes import factorize, memo_get, memo_put, shared_codes
from .scales import NOMINAL, SCALE
from .strings import distinct_pairs


def _n_unique(frame: pd.DataFrame, col: str) -> int:
    return len(factorize(frame[col])[1]) if col in frame.columns else 0


def _is_kind(frame: pd.DataFrame, kind: str) -> np.ndarray:
    """Rows whose ``rater_kind`` is ``kind`` (a boolean array), from the column's codes."""
    codes, uniq = factorize(frame["rater_kind"])
    key = (codes, "is_kind", id(codes), kind)
    hit = memo_get(key)
    if hit is None:
        where = np.flatnonzero(np.asarray(uniq == kind, dtype=bool))
        hit = np.isin(codes, where) if len(where) > 1 else codes == (where[0] if len(where) else -2)
        memo_put(key, hit)
    return hit.copy()  # type: ignore[union-attr]


def _humans_per_unit(frame: pd.DataFrame, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Each unit (an item on one criterion) with raters of ``kind``, and how many distinct ones: ``(units,
    counts)``, the units numbered as :func:`_unit_codes` numbers them; None without such raters. Memoised: the
    humans' are asked for by two checks (2 humans per item, the Alt-Test's data)."""
    key = (frame, "humans_per_unit", id(frame), kind)
    hit = memo_get(key)
    if hit is not None:
        return hit[0]  # type: ignore[index]
    mask = _is_kind(frame, kind)
    group, ok = _unit_codes(frame)
    rc, ru = factorize(frame["rater"])
    mask &= ok & (rc >= 0)
    out = None
    if mask.any():
        group = group[mask]
        pairs = distinct_pairs(group, int(group.max()) + 1, rc[mask], len(ru))  # distinct (unit, rater)
        # np.unique(units, return_counts=True) without its sort: the unit numbers are dense (see _unit_codes)
        per_unit = np.bincount(pairs // len(ru))
        units = np.flatnonzero(per_unit)
        out = (units, per_unit[units])
    memo_put(key, (out,))  # in a tuple: None is an answer too
    return out


def _unit_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """One number per unit (item and criterion), dense, and the rows that have both keys (groupby leaves out
    missing keys)."""
    key = (frame, "unit_codes", id(frame))
    hit = memo_get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    keys = ["item_id"] + (["criterion"] if "criterion" in frame.columns else [])
    group = np.zeros(len(frame), dtype=np.int64)
    ok = np.ones(len(frame), dtype=bool)
    for k in keys:
        codes, uniq = factorize(frame[k])
        ok &= codes >= 0
        group = group * (len(uniq) + 1) + codes
    if len(group) and int(group.max()) > 4 * len(frame):  # sparse group numbers: renumber them before counting
        group = pd.factorize(group)[0].astype(np.int64)
    memo_put(key, (group, ok))
    return group, ok


def _max_per_item(frame: pd.DataFrame, kind: str) -> int:
    """The most distinct raters of ``kind`` on one item (and criterion)."""
    key = (frame, "max_per_item", id(frame), kind)
    hit = memo_get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    per_unit = _humans_per_unit(frame, kind)
    out = 0 if per_unit is None else int(per_unit[1].max())
    memo_put(key, out)
    return out


@dataclass(frozen=True)
class Unlock:
    """One analysis evalcore offers and what it needs from the data."""

    name: str
    title: str
    table: str
    needs: str  # what it needs, in words, shown when unavailable
    check: Callable[[pd.DataFrame], list[str]] = field(repr=False, compare=False)


def _cols(*names: str) -> Callable[[pd.DataFrame], list[str]]:
    def check(df: pd.DataFrame) -> list[str]:
        return [f"column '{n}'" for n in names if n not in df.columns or df[n].isna().all()]
    return check


def _all(*checks: Callable[[pd.DataFrame], list[str]]) -> Callable[[pd.DataFrame], list[str]]:
    return lambda df: [m for c in checks for m in c(df)]


def _two_humans(df: pd.DataFrame) -> list[str]:
    return [] if _max_per_item(df, HUMAN) >= 2 else ["at least 2 human raters on the same item"]


def _judge_and_human(df: pd.DataFrame) -> list[str]:
    codes, uniq = factorize(df["item_id"])
    key = (codes, "judge_and_human", id(codes))
    both = memo_get(key)
    if both is None:
        seen = [np.zeros(len(uniq) + 1, dtype=bool) for _ in range(2)]
        for marks, kind in zip(seen, (JUDGE, HUMAN)):
            marks[codes[_is_kind(df, kind)]] = True  # code -1 (a missing id) marks the spare last slot
        both = bool((seen[0] & seen[1])[:-1].any())
        memo_put(key, both)
    return [] if both else ["judge and human judgments of the same items"]


def _repeats(df: pd.DataFrame) -> list[str]:
    if "sample" not in df.columns:
        return ["column 'sample' (repeat index of a judge's samples)"]
    j = df["sample"][_is_kind(df, JUDGE)]
    return [] if (j.nunique() >= 2) else ["a judge sampled at least twice per item (column 'sample')"]


def _multi_criteria(df: pd.DataFrame) -> list[str]:
    return [] if _n_unique(df, "criterion") >= 2 else ["at least 2 criteria per item (column 'criterion')"]


def _familiarity(df: pd.DataFrame) -> list[str]:
    has = any(c in df.columns and df[c].notna().any() for c in ("perplexity", "text"))
    return [] if has else ["column 'perplexity' (or 'text' for a local proxy)"]


def _both_orders(df: pd.DataFrame) -> list[str]:
    ok = "swapped" in df.columns and df["swapped"][_is_kind(df, JUDGE)].nunique() == 2
    return [] if ok else ["column 'swapped' with judge verdicts in both presentation orders"]


def _pair_q(df: pd.DataFrame) -> list[str]:
    for a, b in (("superficial_a", "superficial_b"), ("text_a", "text_b")):
        if a in df.columns and b in df.columns and df[a].notna().any():
            return []
    return ["a superficial score of both outputs (superficial_a/_b, or the texts text_a/_b for their length)"]


#: Per-item numeric columns that are not a superficial quality.
_NOT_Q = frozenset({"score", "sample", "position"})


def _item_q(df: pd.DataFrame) -> list[str]:
    if "text" in df.columns and df["text"].notna().any():
        return []
    canonical = set(column_names(RATINGS)) - {"perplexity"}
    # The dtypes first (df[c] for each of thousands of columns costs seconds), then the few numeric ones.
    numeric = [c for c, t in df.dtypes.items() if c not in _NOT_Q and c not in canonical
               and pd.api.types.is_numeric_dtype(t)]
    extra = next((c for c in numeric if df[c].notna().any()), None)
    return [] if extra is not None else ["a superficial score per item: column 'text' or a numeric "
                                                              "column such as text_length"]


def _numeric_scores(df: pd.DataFrame) -> list[str]:
    score = df["score"]
    if SCALE in df.columns:  # numbers of a nominal criterion are categories, not scores to correlate
        score = score[(df[SCALE] != NOMINAL).fillna(True).to_numpy(dtype=bool)]
    ok = pd.to_numeric(score, errors="coerce").notna().any()
    return [] if ok else ["numeric scores of a criterion that is not nominal (correlations)"]


def _alt_test(df: pd.DataFrame) -> list[str]:
    """The Alt-Test's data: a judge's rating of an item (on a criterion) that at least 2 annotators rated."""
    humans, judges = _humans_per_unit(df, HUMAN), _humans_per_unit(df, JUDGE)
    ok = humans is not None and judges is not None and bool(np.isin(humans[0][humans[1] >= 2], judges[0]).any())
    return [] if ok else ["a judge's rating of items that at least 2 human annotators rated"]


def _two_judges(df: pd.DataFrame) -> list[str]:
    return [] if _n_raters(df, JUDGE) >= 2 else ["2+ judges to rank"]


def _pair_verdicts(df: pd.DataFrame) -> list[str]:
    """What win rates refuse (:func:`evalcore.pairwise.pairs.pairs` and ``pair_data``): a pair of two different
    systems, and a judge's verdict on one."""
    missing = _cols("system_a", "system_b")(df)
    if missing:
        return missing
    a, b = df["system_a"].astype("string"), df["system_b"].astype("string")
    two = (a.notna() & b.notna() & (a != b)).fillna(False).to_numpy(dtype=bool)
    if not two.any():
        return ["a comparison of two different systems (every row names the same system as system_a and "
                "system_b)"]
    verdict = two & _is_kind(df, JUDGE) & df["winner"].notna().to_numpy(dtype=bool)
    if not verdict.any():
        return ["a judge verdict on two different systems (the judges' rows compare a system with itself, or "
                "have no verdict)"]
    return []


def _human_verdicts(df: pd.DataFrame) -> list[str]:
    return [] if _is_kind(df, HUMAN).any() else ["human verdicts (rater_kind=human)"]


UNLOCKS: tuple[Unlock, ...] = (
    Unlock("agreement_humans", "Agreement among humans (PA, Fleiss' kappa, AC1, PABAK, Krippendorff)",
           RATINGS, "2+ human raters per item", _two_humans),
    Unlock("agreement_judge", "Judge vs humans (PA, Cohen's kappa, weighted F1, Kendall's tau)",
           RATINGS, "judge and human scores on the same items", _judge_and_human),
    Unlock("class_distribution", "Class distributions by human agreement (Hada et al. Figs. 6-7)",
           RATINGS, "2+ human raters per item and a judge", _all(_two_humans, _judge_and_human)),
    Unlock("alt_test", "Alt-Test: can the judge replace the annotators? (Calderon et al. 2025)", RATINGS,
           "a judge and at least 2 human annotators on the same items (leave-one-annotator-out)", _alt_test),
    Unlock("by_language", "Everything broken down by language", RATINGS, "column 'language'",
           _cols("language")),
    Unlock("score_distribution", "Score distribution, scale use and round-number bias", RATINGS,
           "judge scores", lambda df: [] if _is_kind(df, JUDGE).any() else ["judge rows"]),
    Unlock("familiarity", "Familiarity bias (score vs perplexity)", RATINGS,
           "column 'perplexity' (or 'text')", _familiarity),
    Unlock("anchoring", "Anchoring across criteria", RATINGS, "2+ criteria scored per item",
           _multi_criteria),
    Unlock("anchoring_position", "Quality by the criterion's position in the prompt", RATINGS,
           "column 'position'", _all(_multi_criteria, _cols("position"))),
    Unlock("self_consistency", "Self-consistency across repeated judge samples (Krippendorff's alpha)",
           RATINGS, "column 'sample' with 2+ samples of a judge", _repeats),
    Unlock("meta_system", "System-level correlation with humans (each system's mean score, judge vs humans)",
           RATINGS, "column 'system' (the generator of each output), numeric judge and human scores of the same "
                    "items", _all(_cols("system"), _judge_and_human, _numeric_scores)),
    Unlock("meta_input", "Input-level correlation with humans (across the systems' outputs for each input)",
           RATINGS, "columns 'system' and 'input_id' (the source or prompt shared by the systems' outputs)",
           _all(_cols("system", "input_id"), _judge_and_human, _numeric_scores)),
    Unlock("leaderboard", "Judge leaderboard: which judge agrees best with humans (paired bootstrap)", RATINGS,
           "2+ judges with numeric scores of items humans scored (with 'system': also at the system level)",
           _all(_two_judges, _judge_and_human, _numeric_scores)),
    Unlock("win_rate", "Calibrated win rates (BWRS, Bayesian Dawid-Skene)", COMPARISONS,
           "columns system_a, system_b and judge verdicts (human labels for calibration)",
           _pair_verdicts),
    Unlock("superficial", "Superficial-quality subtraction with an alpha slider (Zhou et al.)", COMPARISONS,
           "columns score_a, score_b, a superficial score (superficial_a/_b or the texts text_a/_b) and "
           "human verdicts", _all(_cols("score_a", "score_b"), _pair_q, _human_verdicts)),
    Unlock("position_bias", "Position bias: consistency across orders, first-position preference",
           COMPARISONS, "judge verdicts in both orders (column 'swapped')", _both_orders),
    Unlock("calibraeval", "Selection-bias calibration (CalibraEval NOA + PAVA, PriDe)", COMPARISONS,
           "columns prob_a, prob_a_swap_position, prob_a_swap_id",
           _cols("prob_a", "prob_a_swap_position", "prob_a_swap_id")),
    Unlock("true_scores", "True scores from a few human labels: the humans' mean score or pass rate (PPI++)",
           RATINGS, "judge and human scores of the same items (the labelled items a random sample)",
           _judge_and_human),
    Unlock("true_win_rates", "True win rates from a few human verdicts (PPI++)", COMPARISONS,
           "columns system_a, system_b, judge verdicts and human verdicts on a random sample of the items",
           _all(_pair_verdicts, _human_verdicts)),
    Unlock("systems_leaderboard", "Systems leaderboard by the humans and by each judge (Bradley-Terry)",
           COMPARISONS, "columns system_a, system_b and verdicts (human verdicts to compare the judges with)",
           _pair_verdicts),
    Unlock("superficial_ratings", "Superficial-quality subtraction for pointwise scores (Zhou et al.)", RATINGS,
           "judge and human scores of the same items and a superficial score per item ('text' or a numeric "
           "column such as text_length)", _all(_judge_and_human, _item_q)),
)


def unlocks(frame: pd.DataFrame, *, table: str) -> pd.DataFrame:
    """Every analysis evalcore offers today (a page or a command), marked available or not for this table.

    Returns
    -------
    pandas.DataFrame
        Columns ``analysis``, ``title``, ``table``, ``available`` (bool) and ``missing``
        (what the data would need, empty when available). Analyses of the other table
        are listed as unavailable with the table they need.
    """
    rows = []
    with shared_codes():
        for a in UNLOCKS:
            missing = [f"a {a.table} table ({a.needs})"] if a.table != table else a.check(frame)
            rows.append({"analysis": a.name, "title": a.title, "table": a.table,
                         "available": not missing, "missing": "; ".join(missing)})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Summary:
    """What a canonical table holds, and what it unlocks."""

    table: str
    rows: int
    items: int
    human_raters: int
    judges: int
    criteria: tuple[str, ...]
    languages: tuple[str, ...]
    tasks: tuple[str, ...]
    systems: tuple[str, ...]
    max_humans_per_item: int
    unlocks: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-ready dict (the CLI's ``validate --json`` output)."""
        return {
            "table": self.table, "rows": self.rows, "items": self.items,
            "human_raters": self.human_raters, "judges": self.judges,
            "criteria": list(self.criteria), "languages": list(self.languages),
            "tasks": list(self.tasks), "systems": list(self.systems),
            "max_humans_per_item": self.max_humans_per_item, "unlocks": list(self.unlocks),
        }

    def to_frame(self) -> pd.DataFrame:
        """Two-column table (``what``, ``value``) for display."""
        d = self.to_dict()
        return pd.DataFrame(
            [{"what": k, "value": ", ".join(map(str, v)) if isinstance(v, list) else str(v)} for k, v in d.items()]
        )


def _levels(frame: pd.DataFrame, col: str) -> tuple[str, ...]:
    if col not in frame.columns:
        return ()
    return tuple(sorted(map(str, factorize(frame[col])[1])))


def _n_raters(frame: pd.DataFrame, kind: str) -> int:
    codes, uniq = factorize(frame["rater"])
    codes = codes[_is_kind(frame, kind)]
    return int(np.count_nonzero(np.bincount(codes[codes >= 0], minlength=len(uniq))))


def summarize(frame: pd.DataFrame, *, table: str, available: pd.DataFrame | None = None) -> Summary:
    """Counts of a validated table and the names of the analyses it unlocks.

    ``available`` is :func:`unlocks` of the same frame when the caller has it already.
    """
    with shared_codes():
        return _summarize(frame, table, unlocks(frame, table=table) if available is None else available)


def _summarize(frame: pd.DataFrame, table: str, av: pd.DataFrame) -> Summary:
    systems = sorted(set(_levels(frame, "system_a")) | set(_levels(frame, "system_b")))
    return Summary(
        table=table,
        rows=int(len(frame)),
        items=_n_unique(frame, "item_id"),
        human_raters=_n_raters(frame, HUMAN),
        judges=_n_raters(frame, JUDGE),
        criteria=_levels(frame, "criterion"),
        languages=_levels(frame, "language"),
        tasks=_levels(frame, "task"),
        systems=tuple(systems),
        max_humans_per_item=_max_per_item(frame, HUMAN),
        unlocks=tuple(av.loc[av["available"], "analysis"]),
    )

