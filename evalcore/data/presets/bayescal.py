"""The ``bayescal`` preset: the long table of Gao et al.'s Bayesian win-rate calibration as ``comparisons``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import columns
from ...errors import DataError
from .common import PresetResult, describe_paths, find_column, finish, id_text, is_missing, label_int, plural, \
    read_table, short_list, tabular_files, were

_LABELS = {0: "a", 1: "b", 2: "tie"}
_FIX = ("Gao et al.'s format needs the columns task (or task_id), worker (or worker_id), human_label, "
              "llm_label, generator_1 and generator_2, labels 0 (generator_1 wins), 1 (generator_2 wins) or 2 (tie)")
_TEXT = ("premise", "instruction", "input", "output_1", "output_2")
_JUNK = re.compile(r"^(index|level_\d+|__index_level_\d+__|unnamed: \d+)$", re.IGNORECASE)

#: The columns that hold names: a worker or a generator called NA keeps its name.
_NAMES = ("task", "task_id", "worker", "worker_id", "generator_1", "generator_2")
_ALIASES = (("task", ("task", "task_id")), ("worker", ("worker", "worker_id")), ("human_label", ("human_label",)),
            ("llm_label", ("llm_label",)), ("generator_1", ("generator_1",)), ("generator_2", ("generator_2",)))


def _read_file(path: Path, dropped: set[str]) -> pd.DataFrame:
    """One file with canonical source names, ``_row``/``_file`` for messages and parsed ``_human_label``/``_llm_label``.

    Text and index columns are dropped (their names added to ``dropped``)."""
    frame = read_table(path, names=_NAMES)
    ren = {}
    for canon, aliases in _ALIASES:
        col = find_column(frame, *aliases)
        if col is None:
            raise DataError(f"the column '{canon}' is missing (found: {short_list(list(frame.columns), 8)})",
                            file=str(path), column=canon, fix=_FIX)
        ren[col] = canon
    frame = frame.rename(columns=ren)
    drop = [c for c in frame.columns if c.lower() in _TEXT or _JUNK.match(c)
            or c in ("item_id", "rater", "rater_kind", "winner", "system_a", "system_b", "swapped")]
    dropped.update(drop)
    frame = frame.drop(columns=drop)
    frame["_row"] = np.arange(len(frame)) + 2
    frame["_file"] = str(path)
    for name in ("task", "worker", "generator_1", "generator_2"):
        miss = frame[name].map(is_missing)
        if miss.any():
            raise DataError(f"has no {name}", file=str(path), row=int(frame.loc[miss, "_row"].iloc[0]),
                            column=name, fix=f"every row needs a {name}")
    for name in ("human_label", "llm_label"):
        def parse(v: Any, name: str = name) -> Any:
            if is_missing(v):
                return None
            return _LABELS.get(label_int(v), "?")
        parsed = frame[name].map(parse)
        bad = parsed.eq("?")
        if bad.any():
            i = bad.to_numpy().nonzero()[0][0]
            raise DataError(f"has the label {frame[name].iloc[i]!r}; labels are 0 (generator_1 wins), "
                            "1 (generator_2 wins) or 2 (tie)", file=str(path),
                            row=int(frame["_row"].iloc[i]), column=name, fix="correct the label")
        frame[f"_{name}"] = parsed.astype(object)
    return frame


def _check_one_pair_and_label(data: pd.DataFrame) -> None:
    """One task, one pair of generators, one human label: the first conflicting row is an error."""
    checks = (
        (["generator_1", "generator_2"], "generator_1", "generators", "pair of generators"),
        (["_human_label"], "human_label", "human_label", "human_label"),
    )
    for cols, column, label, what in checks:
        sub = data.dropna(subset=cols)
        first = sub.groupby("task", sort=False)[cols].transform("first")
        conflict = (sub[cols] != first).any(axis=1)
        if not conflict.any():
            continue
        bad = sub.loc[conflict].iloc[0]
        ref = sub.loc[sub["task"].eq(bad["task"])].iloc[0]
        source_cols = ["generator_1", "generator_2"] if column == "generator_1" else ["human_label"]

        def shown(r: pd.Series, source_cols: list[str] = source_cols) -> str:
            return " vs ".join(str(r[c]) for c in source_cols)

        where = f" of {ref['_file']}" if ref["_file"] != bad["_file"] else ""
        raise DataError(
            f"task {bad['task']} has {label} {shown(bad)} here but {shown(ref)} on row {int(ref['_row'])}{where}",
            file=bad["_file"], row=int(bad["_row"]), column=column,
            fix=f"a task has one {what} repeated on every evaluator's row; correct the row or give the task a new id",
        )


def _notes(data: pd.DataFrame, judged: pd.DataFrame, n_humans: int, dropped: set[str]) -> list[str]:
    """Rows left out, tasks without a human row, repeated verdicts, text columns not kept, the label code."""
    notes: list[str] = []
    no_llm = len(data) - len(judged)
    n_tasks = data["task"].nunique()
    if no_llm:
        notes.append(f"{plural(no_llm, 'row')} without an llm_label {were(no_llm)} left out.")
    no_human = n_tasks - n_humans
    if no_human:
        notes.append(f"{plural(no_human, 'task')} without a human_label {'has' if no_human == 1 else 'have'} no human row.")
    dups = int(judged.duplicated(["task", "worker"]).sum())
    if dups:
        notes.append(f"{plural(dups, 'repeated (task, worker) row')} kept: the same evaluator judged a task more than once.")
    kept_drop = sorted(c for c in dropped if c.lower() in _TEXT)
    if kept_drop:
        notes.append(f"Text column{'s' if len(kept_drop) > 1 else ''} not kept: {', '.join(kept_drop)}.")
    notes.append("Labels: 0 = generator_1 (a) wins, 1 = generator_2 (b) wins, 2 = tie.")
    return notes


def _long_rows(data: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The table (one human row per labelled task, one judge row per verdict, in task order), the tasks'
    human rows and the rows with a judge's verdict."""
    segments = [c for c in data.columns if c not in ("task", "worker", "human_label", "llm_label", "generator_1",
                                                     "generator_2", "_row", "_file", "_human_label", "_llm_label")]
    humans = data.dropna(subset=["_human_label"]).drop_duplicates("task", keep="first")
    human_rows = pd.DataFrame({
        "item_id": humans["task"], "system_a": humans["generator_1"], "system_b": humans["generator_2"],
        "rater": "human", "rater_kind": columns.HUMAN, "winner": humans["_human_label"], "swapped": False,
        **{c: humans[c] for c in segments},
    })
    judged = data.dropna(subset=["_llm_label"])
    judge_rows = pd.DataFrame({
        "item_id": judged["task"], "system_a": judged["generator_1"], "system_b": judged["generator_2"],
        "rater": judged["worker"], "rater_kind": columns.JUDGE, "winner": judged["_llm_label"], "swapped": False,
        **{c: judged[c] for c in segments},
    })
    frame = pd.concat([human_rows, judge_rows], ignore_index=True)
    frame["winner"] = frame["winner"].astype(object)
    order = {t: n for n, t in enumerate(pd.unique(data["task"]))}
    frame["_o"] = frame["item_id"].map(order)
    frame = frame.sort_values("_o", kind="stable").drop(columns="_o")
    return frame, human_rows, judged


def read_bayescal(paths: Any) -> PresetResult:
    """Read the long format of Gao et al.'s Bayesian-calibration data into ``comparisons``.

    Gao, Xu, Wang and Cohan (2024), "Bayesian Calibration of Win Rate Estimation with LLM
    Evaluators" (yale-nlp/bay-calibration-llm-evaluators; data on the Hugging Face hub under
    ``llm-aes/*-annotated-*``) keep one row per (task, LLM evaluator): ``task`` (or
    ``task_id``), ``worker`` (or ``worker_id``, the evaluator), ``human_label``,
    ``llm_label``, ``generator_1``, ``generator_2`` and text columns such as ``premise``.
    Labels: ``0`` = generator_1 wins, ``1`` = generator_2 wins (their win rate is
    ``p = P(human_label == 0)``), ``2`` = tie (their HANNA preprocessing writes 2 when the
    two stories' totals are equal).

    Mapping:

    * ``item_id=task``, ``system_a=generator_1``, ``system_b=generator_2``,
      ``swapped=False``; labels ``0`` -> ``'a'``, ``1`` -> ``'b'``, ``2`` -> ``'tie'``.
    * one human row per task, ``rater='human'``, ``rater_kind='human'``: the human label
      repeats on each evaluator's row, so it is de-duplicated. A task whose rows disagree on
      ``human_label`` (or on its generators) is an error naming the row. Tasks with no
      human label (NaN) get no human row.
    * one judge row per (task, worker): ``rater=worker``, ``rater_kind='judge'``; a missing
      ``llm_label`` leaves the row out (counted in ``notes``).
    * other columns are kept as segments (the human row takes the task's first row); the
      long text columns (premise, instruction, input, output_1, output_2) and index
      columns are not kept.

    Parameters
    ----------
    paths
        Table files (CSV, TSV, JSON Lines, Parquet, Excel) and/or folders.

    Returns
    -------
    PresetResult
        ``table='comparisons'``.
    """
    files = tabular_files(paths, _FIX)
    dropped: set[str] = set()
    data = pd.concat([_read_file(path, dropped) for path in files], ignore_index=True)
    if data.empty:
        raise DataError("has no rows", file=describe_paths(paths), fix=_FIX)
    for name in ("task", "worker", "generator_1", "generator_2"):
        data[name] = id_text(data[name])
    _check_one_pair_and_label(data)
    frame, human_rows, judged = _long_rows(data)
    notes = _notes(data, judged, len(human_rows), dropped)
    n_tasks = data["task"].nunique()
    source = (f"Bayesian-calibration table: {plural(len(files), 'file')}, {plural(n_tasks, 'task')}, "
              f"{plural(len(human_rows), 'human label')}, {plural(len(judged), 'evaluator verdict')} by "
              f"{plural(judged['worker'].nunique(), 'evaluator')}")
    return PresetResult(columns.COMPARISONS, finish(frame, columns.COMPARISONS), source, tuple(notes))
