"""Wide to long: a file with one column per annotator or judge, read as one row per judgment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..columns import HUMAN, JUDGE
from ..errors import DataError
from .mapping import apply_mapping, squash_name, suggest_mapping
from .raters import looks_like_judge
from .strings import MISSING_WORDS, ROW


@dataclass(frozen=True)
class WideSpec:
    """How to read a wide file: which columns identify an item, and which hold raters' scores.

    Attributes
    ----------
    id_columns
        Columns that stay as they are (``item_id`` and segments such as ``language``);
        they may use the user's names and are mapped with ``mapping``.
    human_columns, judge_columns
        One column per human annotator / per judge configuration; the column name
        becomes the ``rater``.
    value
        ``"score"`` for a ratings table, ``"winner"`` for a comparisons table.
    """

    id_columns: tuple[str, ...]
    human_columns: tuple[str, ...]
    judge_columns: tuple[str, ...]
    value: str = "score"


def suggest_wide(frame: pd.DataFrame, mapping: Mapping[str, str] | None = None) -> WideSpec | None:
    """Guess a :class:`WideSpec` for a file with one column per rater, or None if it looks long.

    A file looks wide when it has no rater column and no score/winner column after
    mapping, but has two or more columns whose names look like annotators or judges.
    """
    mapping = dict(mapping or suggest_mapping(frame.columns))
    canon = set(mapping.values())
    if "rater" in canon or "score" in canon or "winner" in canon:
        return None
    humans, judges = [], []
    for c in frame.columns:
        c = str(c)
        if c in mapping:
            continue
        s = squash_name(c)
        if re.search(r"human|annot|rater|worker|expert|crowd|labell?er|^ann_?\d|^a\d+$", s):
            humans.append(c)
        elif looks_like_judge(c):
            judges.append(c)
    if len(humans) + len(judges) < 2:
        return None
    ids = tuple(c for c in map(str, frame.columns) if c not in humans and c not in judges)
    return WideSpec(id_columns=ids, human_columns=tuple(humans), judge_columns=tuple(judges))


def wide_to_long(
    frame: pd.DataFrame,
    spec: WideSpec,
    *,
    mapping: Mapping[str, str] | None = None,
    file: str = "the file",
) -> pd.DataFrame:
    """Turn one column per annotator or judge into one row per judgment.

    Parameters
    ----------
    frame
        The user's wide table.
    spec
        Which columns are ids/segments, humans and judges.
    mapping
        Canonical names for the id columns (``{user column: canonical}``).

    Returns
    -------
    pandas.DataFrame
        Long table with the id columns (renamed by ``mapping``), ``rater``,
        ``rater_kind`` and ``spec.value``; empty cells are dropped (a missing
        annotation is not a judgment).
    """
    raters = list(spec.human_columns) + list(spec.judge_columns)
    if not raters:
        raise DataError(
            "no annotator or judge columns were chosen",
            file=file,
            fix="pick the columns that hold each annotator's and each judge's scores",
        )
    missing = [c for c in [*spec.id_columns, *raters] if c not in frame.columns]
    if missing:
        raise DataError(
            "the wide layout names a column that is not in the file",
            file=file,
            column=missing[0],
            fix="choose columns from: " + ", ".join(map(str, frame.columns[:12])),
        )
    made = {"rater", "rater_kind", spec.value}
    id_targets = {c: (mapping or {}).get(c, c) for c in spec.id_columns}
    clash = [c for c, t in id_targets.items() if t in made]
    if clash:
        c = clash[0]
        raise DataError(
            f"the column '{c}' would clash with the '{id_targets[c]}' column made from the annotator and judge "
            "columns",
            file=file, column=c,
            fix="mark it as an annotator or judge column, leave it unmapped, or rename it",
        )
    overlap = set(spec.human_columns) & set(spec.judge_columns)
    if overlap:
        raise DataError(
            "a column is marked both as an annotator and as a judge",
            file=file,
            column=sorted(overlap)[0],
            fix="mark each rater column as either human or judge",
        )
    base = frame.copy()
    if ROW not in base.columns:
        base[ROW] = np.arange(len(base)) + 2
    ids = [*spec.id_columns, ROW]
    long = base.melt(id_vars=ids, value_vars=raters, var_name="rater", value_name=spec.value)
    # melt stacks one rater after another; put each source row's raters together instead, so that the
    # long table reads item by item (as analysts expect, and as agreement.count_units counts fastest).
    long = long.take(np.arange(len(long)).reshape(len(raters), len(base)).T.ravel()).reset_index(drop=True)
    kinds = {c: HUMAN for c in spec.human_columns} | {c: JUDGE for c in spec.judge_columns}
    long["rater_kind"] = long["rater"].map(kinds)
    val = long[spec.value]
    # An empty cell, or a word such as NA: a missing annotation (the readers keep the words as text).
    empty = val.isna() | (val.astype("string").str.strip() == "") | val.isin(MISSING_WORDS)
    long = long.loc[~empty.fillna(True)].reset_index(drop=True)
    if mapping:
        long = apply_mapping(long, {k: v for k, v in mapping.items() if k in spec.id_columns}, file=file)
    return long

