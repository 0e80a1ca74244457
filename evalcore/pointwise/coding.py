"""A ratings table reduced to integer codes: the one preparation of the bias analyses.

:func:`code_ratings` validates what a summary function of :mod:`evalcore.pointwise.familiarity`,
:mod:`evalcore.pointwise.anchoring`, :mod:`evalcore.pointwise.scale_use` or
:mod:`evalcore.pointwise.consistency` needs (the columns, the ``by`` columns, the judges, numeric
scores), keeps the first ``sample`` where a rater judged an item several times, and codes items,
criteria and raters as integers, with each item's group of the ``by`` columns. The analyses differ
only in whose repeats they drop (``first_sample``): familiarity and anchoring compare single
judgments, so every rater's first sample counts; scale use and self-consistency count every sample
of a judge, so only the humans' repeats are dropped.

:mod:`evalcore.pointwise.agreement` has its own, faster pass (:func:`evalcore.pointwise.agreement.units.count_units`):
it needs per-unit category counts, not rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from ..columns import HUMAN, JUDGE, NOT_SEGMENTS
from ..errors import DataError, varying_within_item

FirstSample = Literal["every rater", "humans"]


@dataclass(frozen=True)
class CodedRatings:
    """Ratings as integer codes, one entry per kept row (see :func:`code_ratings`)."""

    frame: pd.DataFrame  #: the kept rows of the caller's table, aligned with the arrays below
    row: np.ndarray  #: position of each kept row in the caller's table
    item: np.ndarray  #: item code per row, in order of first appearance
    item_ids: np.ndarray  #: item id per item code
    crit: np.ndarray  #: criterion code per row, in order of first appearance
    criteria: tuple[str, ...]  #: criterion name per criterion code
    rater: np.ndarray  #: rater code per row, in order of first appearance
    raters: np.ndarray  #: rater name per rater code
    human: np.ndarray  #: True on the rows of human annotators
    source: np.ndarray  #: 0 for the humans, 1 + j for ``judges[j]``, -1 for judges not chosen
    sample: np.ndarray  #: sample index per row (0 without a ``sample`` column)
    score: np.ndarray  #: the score per row, a float
    judges: tuple[str, ...]  #: the chosen judges, in output order
    judge_code: dict[str, int]  #: rater code of each chosen judge
    first_row: np.ndarray  #: first row of each item
    group: np.ndarray  #: group code per item (the ``by`` columns)
    keys: list[tuple]  #: the ``by`` values per group code, in sorted order
    by: list[str]  #: the grouping columns (without ``criterion``)

    def criterion_names(self) -> np.ndarray:
        """The criterion of each row, as text."""
        return np.asarray(self.criteria, dtype=object)[self.crit]


def check_by(ratings: pd.DataFrame, by: str | Sequence[str], *, criterion_in_by: str = "drop") -> list[str]:
    """The grouping columns, checked: per-item segments of ``ratings`` (:data:`evalcore.columns.NOT_SEGMENTS`
    are not), each once. ``criterion`` is dropped (``criterion_in_by="drop"``: the analysis is per
    criterion anyway) or refused (``"error"``: the analysis compares criteria)."""
    by = [by] if isinstance(by, str) else list(by)
    if "criterion" in by and criterion_in_by == "error":
        raise DataError("anchoring compares criteria with each other, so it cannot be split by criterion",
                        column="criterion", fix="group by per-item columns such as language or task")
    by = [b for b in dict.fromkeys(by) if b != "criterion"]
    for b in by:
        if b in NOT_SEGMENTS:
            raise DataError(f"cannot group by '{b}': it is not a segment of the items", column=b,
                            fix="group by a column that describes the item, such as language or task")
        if b not in ratings.columns:
            segs = [c for c in ratings.columns if c not in NOT_SEGMENTS | {"criterion"}]
            raise DataError(f"cannot group by '{b}': the table has no such column", column=b,
                            fix="group by one of: " + (", ".join(map(str, segs)) or "(no segment columns)"))
    return by


def _checked_table(ratings: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(ratings, pd.DataFrame):
        raise DataError("expected a ratings table (a pandas DataFrame)", fix="load a validated ratings table")
    missing = [c for c in ("item_id", "rater", "rater_kind", "score") if c not in ratings.columns]
    if missing:
        raise DataError(f"the ratings table lacks the column '{missing[0]}'", column=missing[0],
                        fix="load a validated ratings table (item_id, rater, rater_kind, criterion, score)")
    return ratings


def _kinds(df: pd.DataFrame) -> np.ndarray:
    """True on human rows; a DataError for a kind that is neither human nor judge."""
    kind = df["rater_kind"].astype("string").str.strip().str.lower()
    bad = ~kind.isin([HUMAN, JUDGE]).fillna(False)
    if bad.any():
        v = df["rater_kind"][bad].iloc[0]
        raise DataError(f"rater_kind must be '{HUMAN}' or '{JUDGE}' but is '{v}'", column="rater_kind",
                        fix="validate the table first (evalcore.data.validation.validate)")
    return (kind == HUMAN).to_numpy(dtype=bool)


def _criteria(df: pd.DataFrame) -> np.ndarray:
    """The criterion of each row as text ('overall' where there is none)."""
    if "criterion" not in df.columns:
        return np.full(len(df), "overall", dtype=object)
    return df["criterion"].astype("string").fillna("overall").to_numpy(dtype=object)


def _first_samples(df: pd.DataFrame, crit: np.ndarray, scope: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sample index of each row (missing: 0), and which rows to keep: every row outside ``scope``,
    and within it the rows of the first (smallest) sample of their item, criterion and rater."""
    if "sample" not in df.columns:
        return np.zeros(len(df), dtype=np.int64), np.ones(len(df), dtype=bool)
    sample = pd.to_numeric(df["sample"], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    if len(np.unique(sample[scope])) <= 1:
        return sample, np.ones(len(df), dtype=bool)
    key = pd.DataFrame({"i": df["item_id"].to_numpy(), "c": crit, "r": df["rater"].to_numpy(), "s": sample})
    first = key.groupby(["i", "c", "r"], sort=False, dropna=False)["s"].transform("min").to_numpy()
    return sample, ~scope | (sample == first)


def _numeric_scores(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The scores as floats and which rows have one; a DataError for a score that is not a number."""
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    given = df["score"].notna().to_numpy()
    bad = given & ~np.isfinite(score)
    if bad.any():
        value = df["score"].iloc[int(np.flatnonzero(bad)[0])]
        raise DataError(f"score '{value}' is not a number; these analyses need numeric scores", column="score",
                        fix="map categorical scores to numbers (e.g. bad=0, ok=1, good=2)")
    return score, given


def _chosen_judges(raters: np.ndarray, rater: np.ndarray, human: np.ndarray,
                   judges: str | Sequence[str] | None) -> list[str]:
    names = sorted(set(raters[np.unique(rater[~human])])) if (~human).any() else []
    if judges is None:
        return names
    chosen = list(dict.fromkeys(map(str, [judges] if isinstance(judges, str) else judges)))
    unknown = [j for j in chosen if j not in names]
    if unknown:
        raise DataError(f"there is no judge named '{unknown[0]}'",
                        fix="choose from: " + (", ".join(names) or "(this table has no judge rows)"))
    return chosen


def item_groups(df: pd.DataFrame, item: np.ndarray, item_ids: np.ndarray, by: list[str]
                ) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """Each item's first row, its group of the ``by`` columns, and the groups' values in sorted order
    (missing values last, as pandas' ``groupby(sort=True, dropna=False)``). A DataError names the
    first item whose ``by`` value is not constant."""
    first_row = np.empty(len(item_ids), dtype=np.int64)
    first_row[item[::-1]] = np.arange(len(item))[::-1]
    if not by:
        return first_row, np.zeros(len(item_ids), dtype=np.int64), [()]
    seg = {}
    for b in by:
        codes, _ = pd.factorize(df[b], use_na_sentinel=False)
        wrong = codes != codes[first_row[item]]
        if wrong.any():
            it = item_ids[item[int(np.flatnonzero(wrong)[0])]]
            raise varying_within_item(
                b, it,
                fix=f"group by a column that describes the item; for prompt or temperature variants use "
                    f"evalcore.pointwise.consistency.variant_agreement(variant_column='{b}'), or keep one variant")
        seg[b] = df[b].iloc[first_row].reset_index(drop=True)
    grouped = pd.DataFrame(seg).groupby(by, sort=True, dropna=False)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    return first_row, grouped.ngroup().to_numpy().astype(np.int64), keys


def code_ratings(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: str | Sequence[str] | None = None,
                 criterion_in_by: str = "drop", first_sample: FirstSample = "every rater") -> CodedRatings:
    """Validate a ratings table for a bias analysis and reduce it to integer codes.

    Parameters
    ----------
    ratings
        A validated canonical ratings table.
    by
        Per-item segment columns (:func:`check_by`); ``criterion`` is dropped, or refused with
        ``criterion_in_by="error"``.
    judges
        Judges to include (default: all), in output order.
    first_sample
        Whose repeated judgments (``sample``) are reduced to the first, smallest, sample of each
        item, criterion and rater: ``"every rater"`` or only the ``"humans"`` (every sample of a
        judge then counts).

    Returns
    -------
    CodedRatings
        The kept rows (rows without a score are left out) and their codes. Raises
        :class:`~evalcore.errors.DataError` for a missing column, a bad ``by`` column or one that
        changes within an item, an unknown judge or rater kind, or a score that is not a number.
    """
    df = _checked_table(ratings)
    by = check_by(df, by, criterion_in_by=criterion_in_by)
    human = _kinds(df)
    crit = _criteria(df)
    sample, keep = _first_samples(df, crit, human if first_sample == "humans" else np.ones(len(df), dtype=bool))
    score, given = _numeric_scores(df)
    keep &= given
    row = np.flatnonzero(keep)
    if not keep.all():
        df, human, crit, sample, score = df.iloc[row], human[row], crit[row], sample[row], score[row]
    if len(df) == 0:
        raise DataError("the ratings table has no scored rows", fix="load a table with scores")
    item, item_ids = pd.factorize(df["item_id"])
    if (item < 0).any():
        raise DataError("some rows have no item_id", column="item_id",
                        fix="validate the table first (evalcore.data.validation.validate)")
    crit_code, criteria = pd.factorize(pd.Series(crit, dtype=object))
    rater, raters = pd.factorize(df["rater"].astype(str))
    raters = np.asarray(raters, dtype=object)
    chosen = _chosen_judges(raters, rater, human, judges)
    code_of = {name: i for i, name in enumerate(raters)}
    src_of_rater = np.full(len(raters), -1, dtype=np.int64)
    src_of_rater[[code_of[j] for j in chosen]] = np.arange(1, len(chosen) + 1)
    item_ids = np.asarray(item_ids, dtype=object)
    first_row, group, keys = item_groups(df, item, item_ids, by)
    return CodedRatings(frame=df, row=row, item=item.astype(np.int64), item_ids=item_ids,
                        crit=crit_code.astype(np.int64), criteria=tuple(map(str, criteria)),
                        rater=rater.astype(np.int64), raters=raters, human=human,
                        source=np.where(human, 0, src_of_rater[rater]), sample=sample, score=score,
                        judges=tuple(chosen), judge_code={j: code_of[j] for j in chosen}, first_row=first_row,
                        group=group, keys=keys, by=by)
