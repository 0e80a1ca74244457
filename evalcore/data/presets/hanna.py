"""The ``hanna`` preset: HANNA's ``hanna_metric_scores_llm.csv`` (Chhun et al.) as ``ratings``."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import columns
from ...errors import DataError
from .common import PresetResult, describe_paths, expand, finish, is_missing, plural, read_table, short_list, were

HANNA_CRITERIA = {
    "RE": "Relevance",
    "CH": "Coherence",
    "EM": "Empathy",
    "SU": "Surprise",
    "EG": "Engagement",
    "CX": "Complexity",
}
_CRIT = "|".join(HANNA_CRITERIA)
_HUMAN = re.compile(rf"^Human (\d+) ({_CRIT})$")
_LLM = re.compile(rf"^(.+?) ({_CRIT}) (\d+)$")
_FIX = "choose HANNA's hanna_metric_scores_llm.csv (dig-team/hanna-benchmark-asg), one row per system"


def _hanna_header(path: Path) -> list[str] | None:
    try:
        return [str(c).strip() for c in pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns]
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None


def _parse_list_cell(value: Any, *, path: Path, row: int, column: str) -> list[float] | None:
    if is_missing(value):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        seq = list(value)
    else:
        try:
            seq = ast.literal_eval(str(value).strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            raise DataError("is not a Python list of numbers", file=str(path), row=row, column=column,
                            fix="keep HANNA's cells as written, e.g. [4, 5, 3, ...]") from None
    if not isinstance(seq, (list, tuple)) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in seq
    ):
        raise DataError("is not a list of numbers", file=str(path), row=row, column=column,
                        fix="keep HANNA's cells as written, e.g. [4, 5, 3, ...]")
    return [float(v) for v in seq]


def _score_files(paths: Any) -> list[Path]:
    """The CSV files among ``paths`` with HANNA's columns (a given file without them is an error)."""
    files: list[Path] = []
    for path, explicit in expand(paths):
        if path.suffix.lower() != ".csv":
            if explicit:
                raise DataError("is not a CSV file", file=str(path), fix=_FIX)
            continue
        header = _hanna_header(path)
        ok = header is not None and "Model" in header and any(_HUMAN.match(c) for c in header)
        if not ok:
            if explicit:
                raise DataError("is not HANNA's score file (needs 'Model' and 'Human 1 RE'-style columns)",
                                file=str(path), fix=_FIX)
            continue
        files.append(path)
    if not files:
        raise DataError("no HANNA score CSV was found", file=describe_paths(paths), fix=_FIX)
    return files


_PIECES = ("item_id", "system", "input_id", "criterion", "rater", "rater_kind", "score", "text_length")
# The one automatic metric kept: the story's length, a superficial quality (Q) of the story.
_LENGTH = re.compile(r"^Text length\b")


class _Collected:
    """The columns read so far (as arrays per cell), the systems seen and counts for the notes."""

    def __init__(self) -> None:
        self.pieces: dict[str, list[np.ndarray]] = {k: [] for k in _PIECES}
        self.systems_seen: dict[str, Path] = {}
        self.llms: set[str] = set()
        self.n_items = 0
        self.empty_cells = 0
        self.skipped_cols: set[str] = set()


def _rating_columns(frame: pd.DataFrame, acc: _Collected) -> list[tuple[str, str, str, str]]:
    """``(column, criterion, rater, kind)`` of the human and LLM rating columns; the others are noted as skipped."""
    use: list[tuple[str, str, str, str]] = []
    for c in frame.columns:
        m = _HUMAN.match(c)
        if m:
            use.append((c, HANNA_CRITERIA[m.group(2)], f"Human {m.group(1)}", columns.HUMAN))
            continue
        m = _LLM.match(c)
        if m and not m.group(1).startswith("Human"):
            use.append((c, HANNA_CRITERIA[m.group(2)], f"{m.group(1)}/prompt{m.group(3)}", columns.JUDGE))
            acc.llms.add(m.group(1))
            continue
        if c != "Model" and not _LENGTH.match(c):
            acc.skipped_cols.add(c)
    return use


def _read_system(rec: dict[str, Any], row: int, path: Path, use: list[tuple[str, str, str, str]],
                 acc: _Collected) -> None:
    """One system's row: every rating cell becomes one rating per story."""
    system = rec.get("Model")
    if is_missing(system):
        raise DataError("has no system name", file=str(path), row=row, column="Model", fix=_FIX)
    system = str(system).strip()
    if system in acc.systems_seen:
        raise DataError(f"system '{system}' appears twice (also in {acc.systems_seen[system]})", file=str(path),
                        row=row, column="Model", fix="give each system one row")
    acc.systems_seen[system] = path
    n = None
    pieces = acc.pieces
    length_col = next((c for c in rec if _LENGTH.match(str(c))), None)
    length = _parse_list_cell(rec[length_col], path=path, row=row, column=length_col) if length_col else None
    for col, crit, rater, kind in use:
        values = _parse_list_cell(rec[col], path=path, row=row, column=col)
        if values is None:
            acc.empty_cells += 1
            continue
        if n is None:
            n = len(values)
        elif len(values) != n:
            raise DataError(f"has {len(values)} values but other cells of this row have {n}",
                            file=str(path), row=row, column=col,
                            fix="each cell of a row must list one value per story, in the same order")
        idx = np.arange(n)
        pieces["item_id"].append(np.array([f"{system}/{i}" for i in idx], dtype=object))
        pieces["system"].append(np.full(n, system, dtype=object))
        pieces["input_id"].append(idx.astype(str).astype(object))  # the prompt: same index, same prompt
        pieces["criterion"].append(np.full(n, crit, dtype=object))
        pieces["rater"].append(np.full(n, rater, dtype=object))
        pieces["rater_kind"].append(np.full(n, kind, dtype=object))
        pieces["score"].append(np.asarray(values, dtype=float))
        pieces["text_length"].append(np.asarray(length, dtype=float) if length is not None and len(length) == n
                                     else np.full(n, np.nan))
    acc.n_items += n or 0


def _notes(acc: _Collected) -> list[str]:
    """What the analyst should know: LLM scores are averages, the slots, the columns not imported."""
    skipped_cols = acc.skipped_cols
    notes = [
        "LLM scores are averages of 3 samples per story and prompt, so they are not whole numbers.",
        "Human 1-3 are rating slots: the three MTurk workers differ from story to story.",
    ]
    aggregates = sorted(c for c in skipped_cols if c in HANNA_CRITERIA.values())
    human_avg = [c for c in skipped_cols if c.startswith("Human Avg")]
    avg = [c for c in skipped_cols if re.search(r" AVG \d+$", c)]
    metrics = len(skipped_cols) - len(aggregates) - len(human_avg) - len(avg)
    left = []
    if aggregates:
        left.append(f"the aggregate criterion columns ({', '.join(aggregates)}; the mean of Human 1-3)")
    if human_avg:
        left.append(f"{plural(len(human_avg), 'Human Avg column')}")
    if avg:
        left.append(f"{plural(len(avg), 'LLM AVG column')}")
    if metrics:
        left.append(f"{plural(metrics, 'automatic metric column')}")
    notes.append("Kept of the automatic metrics: 'Text length' as the column text_length, a superficial quality "
                 "(Q) for superficial-quality subtraction.")
    if left:
        notes.append("Not imported: " + ", ".join(left) + ".")
    if acc.empty_cells:
        notes.append(f"{plural(acc.empty_cells, 'empty cell')} (a rater missing for a whole system) "
                     f"{were(acc.empty_cells)} skipped.")
    return notes


def read_hanna(paths: Any) -> PresetResult:
    """Read HANNA's ``hanna_metric_scores_llm.csv`` into a ``ratings`` table.

    HANNA (Chhun et al. 2022; LLM ratings from Chhun et al. 2024, dig-team/hanna-benchmark-asg)
    has 1,056 stories (96 prompts x 11 systems, including ``Human``) rated 1-5 on six
    criteria by three MTurk workers, plus LLM ratings. The file has one row per system;
    each cell is a Python-list string of the 96 per-story values (parsed with
    :func:`ast.literal_eval`).

    Mapping:

    * ``item_id='<system>/<story index>'`` (0-based, e.g. ``'GPT-2/17'``); ``system`` (the
      ``Model`` column); ``input_id='<story index>'`` (e.g. ``'17'``), the prompt: each row lists its
      system's stories in the same prompt order (Story IDs are grouped by model, 96 per model), so
      the same index across systems is the same WritingPrompts prompt (the authors' "story-level"
      correlations pair the systems' stories this way).
    * ``criterion`` by full name: RE Relevance, CH Coherence, EM Empathy, SU Surprise,
      EG Engagement, CX Complexity.
    * humans: ``Human 1|2|3 <crit>`` -> ``rater='Human 1'..``, ``rater_kind='human'``.
      They are rating slots: the three workers differ from story to story.
    * judges: ``<LLM> <crit> <k>`` -> ``rater='<LLM>/prompt<k>'``, ``rater_kind='judge'``
      (Beluga-13B, OrcaPlatypus, Mistral-7B, Llama-13B, ChatGPT in the published file;
      each score is the average of 3 samples).
    * not read: the aggregate criterion columns (``Relevance``... = mean of Human 1-3),
      ``Human Avg k`` columns, the LLMs' ``AVG`` columns and the automatic metrics, except
      ``Text length``, kept as the per-item column ``text_length`` (a superficial quality ``Q``
      for :mod:`evalcore.pointwise.superficial`).

    Parameters
    ----------
    paths
        The CSV file, or a folder holding it.

    Returns
    -------
    PresetResult
        ``table='ratings'``, ``score`` float.
    """
    files = _score_files(paths)
    acc = _Collected()
    for path in files:
        frame = read_table(path, names=("Model",))
        use = _rating_columns(frame, acc)
        for r, rec in enumerate(frame.to_dict("records")):
            _read_system(rec, r + 2, path, use, acc)
    if not acc.pieces["score"]:
        raise DataError("has no Human or LLM rating columns", file=str(files[0]), fix=_FIX)
    frame = pd.DataFrame({k: np.concatenate(v) for k, v in acc.pieces.items()})
    notes = _notes(acc)
    llms = acc.llms
    source = (f"HANNA: {plural(acc.n_items, 'story', 'stories')} by {plural(len(acc.systems_seen), 'system')}, "
              f"{plural(frame['criterion'].nunique(), 'criterion', 'criteria')}, 3 human raters"
              + (f" and {plural(len(llms), 'LLM')} ({short_list(sorted(llms))})" if llms else ""))
    return PresetResult(columns.RATINGS, finish(frame, columns.RATINGS), source, tuple(notes))
