"""The ``llmbar`` preset: LLMBar evaluator ``result.json`` files (Zeng et al. 2024) as ``comparisons``."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import columns
from ...errors import DataError
from .common import PresetResult, describe_paths, expand, finish, invalid_note, label_int, load_json, plural, short_list, \
    were

_FIX = (
    "choose an LLMBar evaluator result.json (<subset>/evaluators/<judge>/<strategy>/result.json "
    "from princeton-nlp/LLMBar), or a folder that contains them"
)


def _path_info(path: Path) -> tuple[str | None, str | None]:
    """(subset, rater) from .../<subset>/evaluators/<judge>/<strategy>/result.json."""
    parts = list(path.absolute().parts)
    subset = rater = None
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == "evaluators":
            if i >= 1:
                subset = parts[i - 1]
                if i >= 2 and parts[i - 2] == "Adversarial":
                    subset = f"Adversarial/{subset}"
            rest = parts[i + 1:-1]
            if len(rest) >= 2:
                rater = f"{rest[0]}/{rest[1]}"
            elif len(rest) == 1:
                rater = rest[0]
            break
    return subset, rater


def _score(v: Any) -> float:
    """First element of LLMBar's ``["7", "stop"]`` as a float; NaN when unparseable."""
    if isinstance(v, (list, tuple)):
        v = v[0] if v else None
    if isinstance(v, bool) or v is None:
        return math.nan
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    try:
        f = float(str(v).strip())
    except ValueError:
        return math.nan
    return f if math.isfinite(f) else math.nan


def _result_files(paths: Any) -> tuple[list[Path], list[str]]:
    """The ``result*.json`` files to read, and a note on the dataset/statistics files skipped."""
    files: list[Path] = []
    notes: list[str] = []
    skipped: list[str] = []
    for path, explicit in expand(paths):
        name = path.name.lower()
        if explicit:
            if name in ("statistics.json", "dataset.json"):
                skipped.append(path.name)
                continue
            if path.suffix.lower() != ".json":
                raise DataError("is not a JSON file", file=str(path), fix=_FIX)
            files.append(path)
        elif name.startswith("result") and name.endswith(".json"):
            files.append(path)
    if not files:
        raise DataError("no LLMBar result.json was found", file=describe_paths(paths), fix=_FIX)
    if skipped:
        notes.append(f"Skipped {short_list(sorted(set(skipped)))}: the verdicts are in result.json.")
    return files, notes


@dataclass
class _Collected:
    """What the files read so far hold: rows, the gold label per (subset, item), and counts for the notes."""

    gold: dict[tuple[str, int], tuple[str, int, Path]] = field(default_factory=dict)
    seen: dict[tuple[str, str], Path] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    bad_winners: Counter[str] = field(default_factory=Counter)
    bad_scores: Counter[str] = field(default_factory=Counter)
    has_scores: bool = False
    any_subset: bool = False


def _item_verdicts(item: dict[str, Any], i: int, path: Path) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """An item's gold label, its last result and its two verdicts (``swap = False``/``True``)."""
    if "label" not in item:
        raise DataError(f"item {i} has no 'label'", file=str(path), fix=_FIX)
    label = label_int(item["label"])
    if label not in (1, 2):
        raise DataError(f"item {i} has label {item['label']!r}; LLMBar labels are 1 or 2", file=str(path), fix=_FIX)
    results = item.get("results")
    if not isinstance(results, list) or not results or not isinstance(results[-1], dict):
        raise DataError(
            f"item {i} has no 'results' list (this looks like a dataset.json, which holds no verdicts)",
            file=str(path), fix=_FIX,
        )
    last = results[-1]
    verdicts = {}
    for swap in ("swap = False", "swap = True"):
        v = last.get(swap)
        if not isinstance(v, dict) or "winner" not in v:
            raise DataError(f"item {i} has no '{swap}' verdict with a 'winner'", file=str(path), fix=_FIX)
        verdicts[swap] = v["winner"]
    return label, last, verdicts


def _add_gold(acc: _Collected, item: dict[str, Any], i: int, label: int, path: Path, sub: str | None,
              item_id: str) -> None:
    """The gold row of (subset, item), once; a second file must agree with the first."""
    gkey = (sub or "", i)
    text = str(item.get("input", ""))
    if gkey in acc.gold:
        g_text, g_label, g_path = acc.gold[gkey]
        if g_text != text or g_label != label:
            raise DataError(
                f"item {i} differs from item {i} of {g_path}, although both files are "
                f"{'subset ' + repr(sub) if sub else 'without a subset'}",
                file=str(path),
                fix="read files of different subsets from their LLMBar folders, or give subset=... per file",
            )
    else:
        acc.gold[gkey] = (text, label, path)
        acc.rows.append({"item_id": item_id, "subset": sub, "rater": "gold", "rater_kind": columns.HUMAN,
                         "winner": "a" if label == 1 else "b", "swapped": False,
                         "score_a": math.nan, "score_b": math.nan, **_texts(item)})


def _texts(item: dict[str, Any]) -> dict[str, Any]:
    """The two outputs' texts (``output_1`` is a), None where the file has none."""
    return {"text_a": item.get("output_1"), "text_b": item.get("output_2")}


def _add_judge(acc: _Collected, last: dict[str, Any], verdicts: dict[str, Any], sub: str | None, judge: str,
               item_id: str, texts: dict[str, Any]) -> None:
    """The judge's two rows on an item (unparseable verdicts counted), scores on the unswapped one."""
    scored = "score_1" in last or "score_2" in last
    if scored:
        acc.has_scores = True
        sa, sb = _score(last.get("score_1")), _score(last.get("score_2"))
        acc.bad_scores[judge] += int(math.isnan(sa)) + int(math.isnan(sb))
    else:
        sa = sb = math.nan
    for swap, swapped in (("swap = False", False), ("swap = True", True)):
        w = {"1": "a", "2": "b"}.get(str(verdicts[swap]).strip())
        acc.bad_winners[judge] += w is None
        acc.rows.append({"item_id": item_id, "subset": sub, "rater": judge, "rater_kind": columns.JUDGE,
                         "winner": w, "swapped": swapped, "invalid": w is None,
                         "score_a": math.nan if swapped else sa, "score_b": math.nan if swapped else sb,
                         **texts})


def strategy_of(data: list) -> str:
    """``Rating`` when the verdicts carry scores (``score_1``/``score_2``), else ``Vanilla``: what a file's
    content tells of its prompting strategy (its exact name, e.g. ``Rating_NoRules``, is only in the path)."""
    last = data[0].get("results") if data and isinstance(data[0], dict) else None
    last = last[-1] if isinstance(last, list) and last and isinstance(last[-1], dict) else {}
    return "Rating" if "score_1" in last else "Vanilla"


def _judge_name(rater: str | None, path_rater: str | None, path: Path, data: list) -> str:
    """The judge's name: given, else from the LLMBar path, else the file's name with the strategy its content shows.

    An upload in the browser has no path, and a file named ``result.json`` no name: such a file is
    ``'<strategy> judge (result.json)'`` unless a name is given (the app asks for one).
    """
    if rater is not None and rater.strip():
        rater = rater.strip()
        strategy = strategy_of(data)
        return rater if "/" in rater or strategy.lower() in rater.lower() else f"{rater}/{strategy}"
    if path_rater:
        return path_rater
    stem = path.stem
    if stem.lower() not in ("result", "results"):
        return stem
    return f"{strategy_of(data)} judge ({path.name})"


def _read_file(acc: _Collected, path: Path, *, rater: str | None, subset: str | None) -> None:
    """Add one result file's gold and judge rows; a judge read twice on a subset is an error."""
    data = load_json(path)
    if not isinstance(data, list) or not data or not all(isinstance(x, dict) for x in data):
        raise DataError("is not an LLMBar result file (expected a non-empty list of items)", file=str(path), fix=_FIX)
    path_subset, path_rater = _path_info(path)
    sub = subset if subset is not None else path_subset
    judge = _judge_name(rater, path_rater, path, data)
    acc.any_subset = acc.any_subset or bool(sub)
    key = (sub or "", judge)
    if key in acc.seen:
        raise DataError(
            f"holds the verdicts of judge '{judge}'{' on subset ' + repr(sub) if sub else ''}, "
            f"like {acc.seen[key]}",
            file=str(path),
            fix="read each judge's result.json once; if the path does not tell the judge or subset, "
            "read the files one at a time with rater=... and subset=...",
        )
    acc.seen[key] = path
    for i, item in enumerate(data):
        label, last, verdicts = _item_verdicts(item, i, path)
        item_id = f"{sub}/{i}" if sub else str(i)
        _add_gold(acc, item, i, label, path, sub, item_id)
        _add_judge(acc, last, verdicts, sub, judge, item_id, _texts(item))


def _frame_and_notes(acc: _Collected, notes: list[str]) -> pd.DataFrame:
    """The table (score and subset columns only when some file has them); the notes appended to ``notes``."""
    frame = pd.DataFrame(acc.rows)
    if frame["invalid"].eq(True).any():
        frame["invalid"] = frame["invalid"].eq(True)
    else:
        frame = frame.drop(columns=["invalid"])
    if not acc.has_scores:
        frame = frame.drop(columns=["score_a", "score_b"])
    if not acc.any_subset:
        frame = frame.drop(columns=["subset"])
    for judge, n in sorted(acc.bad_winners.items()):
        if n:
            notes.append(invalid_note(n, f"{judge} (neither '1' nor '2')"))
    for judge, n in sorted(acc.bad_scores.items()):
        if n:
            notes.append(f"{plural(n, 'unparseable pointwise score')} of {judge} {were(n)} set to NaN.")
    if acc.has_scores:
        notes.append("score_a/score_b are the pointwise 1-10 ratings of the Rating strategies; they sit on the "
                     "unswapped row only, since each output is rated on its own, independent of the order.")
    notes.append("Gold labels are LLMBar's reference preferences (rater 'gold'), one per item.")
    return frame


def read_llmbar(paths: Any, *, rater: str | None = None, subset: str | None = None) -> PresetResult:
    """Read LLMBar evaluator ``result.json`` files into a ``comparisons`` table.

    LLMBar (Zeng et al. 2024, princeton-nlp/LLMBar) stores each judge configuration's
    verdicts in ``<subset>/evaluators/<judge>/<strategy>/result.json``: a list of
    ``{input, output_1, output_2, label, results}`` where ``results[-1]`` holds
    ``{"swap = False": {"winner": "1"|"2"}, "swap = True": {"winner": ...}}`` with the
    winner already mapped back to the original output numbering.

    Mapping, per item ``i`` of a file:

    * one gold row: ``rater='gold'``, ``rater_kind='human'``, ``winner='a'`` if
      ``label == 1`` else ``'b'``, ``swapped=False``. Gold rows are written once per
      (subset, item), however many judges' files of that subset are read.
    * two judge rows, ``swapped=False`` and ``swapped=True``: ``winner`` from
      ``results[-1]["swap = False" / "swap = True"]["winner"]`` (``"1"`` -> ``'a'``,
      ``"2"`` -> ``'b'``); any other verdict is kept as a row with ``invalid=True`` and an
      empty ``winner`` (a missing verdict for win rates), counted in ``notes``; the
      ``invalid`` column is present only when some verdict is unparseable.
      ``rater='<judge>/<strategy>'`` from the path; without one (a file uploaded in the browser),
      ``rater`` as given (with the strategy the content shows, ``Rating`` or ``Vanilla``,
      appended), else the file's name, never a bare ``'judge'``.
    * ``item_id='<subset>/<i>'`` (e.g. ``'Natural/0'``, ``'Adversarial/GPTInst/3'``), stable
      across judges; ``subset`` column from the path. ``system_a``/``system_b`` are absent:
      LLMBar does not name the generators. ``a`` is ``output_1``.
    * ``Rating_*`` strategies (any file whose verdicts carry ``score_1``/``score_2``):
      the pointwise 1-10 scores ``score_1``/``score_2`` (stored as ``["7", "stop"]``)
      become float ``score_a``/``score_b``; unparseable ones become NaN and are counted in
      ``notes``. They are put on the ``swapped=False`` row only (NaN on the swapped row):
      each output is rated on its own, so the scores do not depend on the presentation
      order and repeating them would count them twice.
    * ``text_a``/``text_b``: the texts of ``output_1``/``output_2`` on every row of the item
      (for superficial-quality corrections such as length, :mod:`evalcore.pairwise.superficial`).

    Parameters
    ----------
    paths
        ``result.json`` files and/or folders (walked for ``result*.json``). Explicitly given
        ``dataset.json`` / ``statistics.json`` are skipped with a note.
    rater
        Judge id for every file, when the path does not say (default: from the path, else the
        file's name; ``'<strategy> judge (result.json)'`` for a bare ``result.json``).
    subset
        Subset name for every file (default: from the path, else none).

    Returns
    -------
    PresetResult
        ``table='comparisons'``.
    """
    files: list[Path] = []
    files, notes = _result_files(paths)
    acc = _Collected()
    for path in files:
        _read_file(acc, path, rater=rater, subset=subset)
    frame = _frame_and_notes(acc, notes)
    judges = sorted({k[1] for k in acc.seen})
    subsets = sorted({k[0] for k in acc.seen if k[0]})
    source = (f"LLMBar: {plural(len(files), 'result file')}, {plural(len(acc.gold), 'item')}"
              + (f" in {plural(len(subsets), 'subset')} ({short_list(subsets)})" if subsets else "")
              + f"; judges: {short_list(judges)}")
    return PresetResult(columns.COMPARISONS, finish(frame, columns.COMPARISONS), source, tuple(notes))
