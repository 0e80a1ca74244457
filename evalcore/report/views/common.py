"""What several pages show alike: the options of a filter, rows picked by their values, the humans named, the
judges of a table, a group's label.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...columns import JUDGE
from ..display import HUMANS

__all__ = ["levels", "rows_where", "with_humans_named", "judge_names", "group_label"]


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


def judge_names(ratings: pd.DataFrame) -> list:
    """The judges of a ratings or comparisons table, sorted."""
    return sorted(ratings.loc[ratings["rater_kind"] == JUDGE, "rater"].unique())


def group_label(frame: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """One label per row from the ``by`` columns (``"Adversarial / en"``); empty without ``by``."""
    if not by:
        return pd.Series("", index=frame.index)
    return frame[list(by)].astype(str).agg(" / ".join, axis=1)
