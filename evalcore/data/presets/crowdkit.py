"""The ``crowdkit`` preset: crowd-kit's long ``task, worker, label`` table as ``ratings``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import columns
from ...errors import DataError
from ..raters import looks_like_judge
from ..numbers import decimal_comma
from ..scales import format_number
from .common import PresetResult, describe_paths, find_column, finish, id_text, is_missing, plural, read_table, \
    short_list, tabular_files, were

_FIX = "crowd-kit's format needs the columns task, worker and label (one row per judgment)"


def _numbers(label: pd.Series) -> pd.Series:
    """The labels as numbers (NaN where not one), decimal commas read by validation's one rule."""
    labels = label.map(lambda v: v.strip() if isinstance(v, str) else v)
    try:
        comma = decimal_comma(v for v in labels if isinstance(v, str))
    except ValueError:  # '1,000': ambiguous, and refused by validation with its own message
        comma = False
    if comma:
        labels = labels.map(lambda v: v.replace(",", ".") if isinstance(v, str) else v)
    return pd.to_numeric(labels, errors="coerce")


def read_crowdkit(paths: Any, *, judges: Sequence[str] | None = None, criterion: str = "overall") -> PresetResult:
    """Read crowd-kit's long ``task, worker, label`` table into a ``ratings`` table.

    crowd-kit (Toloka) keeps annotations as one row per judgment with columns ``task``,
    ``worker`` and ``label``. CSV, TSV, JSON Lines, JSON records, Parquet and Excel are read;
    several files are stacked.

    Mapping:

    * ``task`` -> ``item_id``, ``worker`` -> ``rater``, ``label`` -> ``score`` (float when
      every label is a number; otherwise the labels are kept as written, as text categories, with a note:
      validation reads them as nominal categories, or refuses a criterion that mixes numbers and text).
    * ``criterion``: the file's ``criterion`` column if it has one, else the option
      ``criterion`` (default ``'overall'``).
    * ``rater_kind``: ``'judge'`` for the workers listed in ``judges``, ``'human'`` for the
      rest. Without ``judges``, workers whose names look like models
      (:func:`evalcore.data.raters.looks_like_judge`: gpt, claude, llama, qwen, prometheus,
      judge, ...) are judges; ``notes`` lists the guess.
    * every other column is kept as a segment column. Rows without a label are left out
      (counted in ``notes``).

    Parameters
    ----------
    paths
        Table files and/or folders.
    judges
        Worker names that are LLM judges; all other workers are human.
    criterion
        Criterion name when the file has no ``criterion`` column.

    Returns
    -------
    PresetResult
        ``table='ratings'``.
    """
    files = tabular_files(paths, _FIX)
    frames = []
    notes: list[str] = []
    no_label = 0
    for path in files:
        frame = read_table(path, names=("task", "worker", "criterion"))  # a worker may be called NA
        found = {}
        for name in ("task", "worker", "label"):
            col = find_column(frame, name)
            if col is None:
                raise DataError(f"the column '{name}' is missing (found: {short_list(list(frame.columns), 8)})",
                                file=str(path), column=name,
                                fix=f"{_FIX}; rename your columns to these names")
            found[name] = col
        frame = frame.rename(columns={found["task"]: "task", found["worker"]: "worker", found["label"]: "label"})
        crit_col = find_column(frame, "criterion")
        if crit_col is not None and crit_col != "criterion":
            frame = frame.rename(columns={crit_col: "criterion"})
        clash = [c for c in frame.columns if c in ("item_id", "rater", "rater_kind", "score")]
        if clash:
            frame = frame.rename(columns={c: f"{c}_in_file" for c in clash})
            notes.append(f"{path.name}: the columns {', '.join(clash)} were kept as {', '.join(c + '_in_file' for c in clash)}.")
        frame["_row"] = np.arange(len(frame)) + 2
        frame["_file"] = str(path)
        for name in ("task", "worker"):
            miss = frame[name].map(is_missing)
            if miss.any():
                r = int(frame.loc[miss, "_row"].iloc[0])
                raise DataError(f"has no {name}", file=str(path), row=r, column=name,
                                fix=f"every row needs a {name}; fill it in or delete the row")
        miss = frame["label"].map(is_missing)
        no_label += int(miss.sum())
        frames.append(frame.loc[~miss])
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise DataError("has no labelled rows", file=describe_paths(paths), fix="check the label column")
    if no_label:
        notes.append(f"{plural(no_label, 'row')} without a label {were(no_label)} left out.")

    data["item_id"] = id_text(data["task"])
    data["rater"] = id_text(data["worker"])
    numeric = _numbers(data["label"])
    if numeric.notna().all():
        data["score"] = numeric.astype(float)
    else:
        # As written (no stripping): 'yes' and 'yes ' are two categories, which validation reports.
        data["score"] = data["label"].map(lambda v: v if isinstance(v, str) else format_number(v)).astype(object)
        notes.append("Some labels are not numbers, so all labels are kept as text categories (nominal; see "
                     "evalcore.data.scales).")
    if "criterion" in data.columns:
        data["criterion"] = data["criterion"].map(lambda v: criterion if is_missing(v) else str(v).strip())
    else:
        data["criterion"] = criterion

    workers = sorted(data["rater"].unique())
    if judges is not None:
        if isinstance(judges, str):
            judges = [judges]
        judge_set = {str(j).strip() for j in judges}
        unknown = sorted(judge_set - set(workers))
        if unknown:
            raise DataError(f"judges= names {short_list(unknown)}, not a worker in the data",
                            file=describe_paths(paths), column="worker",
                            fix=f"use the names as in the worker column: {short_list(workers)}")
        notes.append(f"Judges (as given): {short_list(sorted(judge_set))}; the other "
                     f"{plural(len(workers) - len(judge_set), 'worker')} are human.")
    else:
        judge_set = {w for w in workers if looks_like_judge(w)}
        humans = [w for w in workers if w not in judge_set]
        notes.append(
            f"Classified by name as judges (names look like models): {short_list(sorted(judge_set)) or 'none'}; "
            f"as humans: {short_list(humans) or 'none'}. Pass judges=[...] to change this."
        )
    data["rater_kind"] = np.where(data["rater"].isin(judge_set), columns.JUDGE, columns.HUMAN)

    data = data.drop(columns=["task", "worker", "label", "_row", "_file"])
    source = (f"crowd-kit table: {plural(len(files), 'file')}, {plural(len(data), 'judgment')} of "
              f"{plural(data['item_id'].nunique(), 'task')} by {plural(len(workers), 'worker')}")
    return PresetResult(columns.RATINGS, finish(data, columns.RATINGS), source, tuple(notes))
