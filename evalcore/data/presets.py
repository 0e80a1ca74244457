"""Presets: read formats that exist in the wild into evalcore's canonical long tables.

A preset knows one published file layout and turns it into a ``ratings`` or
``comparisons`` table with the canonical column names of :mod:`evalcore.columns`
(plus extra segment columns such as ``subset`` or ``system``). Each preset says in its
docstring which source field becomes which column.

=============  ===============  ===========================================================
preset         table            reads
=============  ===============  ===========================================================
``llmbar``     comparisons      LLMBar evaluator ``result.json`` files (Zeng et al. 2024)
``pandalm``    comparisons      PandaLM ``testset-v1.json`` + its two judges' files
``hanna``      ratings          HANNA ``hanna_metric_scores_llm.csv`` (Chhun et al.)
``crowdkit``   ratings          crowd-kit's long ``task, worker, label`` table
``bayescal``   comparisons      Gao et al.'s ``task, worker, human_label, llm_label,
                                generator_1, generator_2`` table (Bayesian calibration)
=============  ===============  ===========================================================

``paths`` may be one or several files and/or folders; a folder is walked. Presets work on
the files alone, without the original folder structure (the app saves uploads flat); where
the folder structure carried information (LLMBar's judge and subset), options supply it.

Every problem an input can cause raises :class:`evalcore.errors.DataError` naming the file
and the fix. Python-list strings are parsed with :func:`ast.literal_eval`, never ``eval``.
This module never imports streamlit.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from .. import columns
from ..errors import DataError

__all__ = [
    "PRESETS",
    "Preset",
    "PresetResult",
    "detect_preset",
    "read_preset",
]

TABULAR_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq", ".xlsx", ".xls")


# ---------------------------------------------------------------------------------------
# Public types
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PresetResult:
    """What a preset read.

    Attributes
    ----------
    table
        ``columns.RATINGS`` or ``columns.COMPARISONS``.
    frame
        The long table with canonical column names (canonical columns first, in their
        documented order, then extra segment columns). ``item_id`` and ``rater`` are
        strings, ``rater_kind`` is ``'human'`` or ``'judge'``, ``score`` is float,
        ``winner`` is ``'a'``, ``'b'`` or ``'tie'`` and ``swapped`` is bool.
    source
        A human-readable description of what was read.
    notes
        Things the analyst should know (left-out verdicts, classification guesses...).
    """

    table: str
    frame: pd.DataFrame
    source: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Preset:
    """A known file layout and the function that reads it.

    Attributes
    ----------
    name
        Key in :data:`PRESETS`, e.g. ``"llmbar"``.
    title
        Short name to show, e.g. ``"LLMBar evaluator results"``.
    description
        One paragraph: where the format comes from and what it maps to.
    table
        The table it produces (``ratings`` or ``comparisons``).
    accepts
        What to give it ("file(s) or folder" and which files).
    read
        ``read(paths, **options) -> PresetResult``; options are keyword-only.
    """

    name: str
    title: str
    description: str
    table: str
    accepts: str
    read: Callable[..., PresetResult]

    @property
    def options(self) -> tuple[str, ...]:
        """Names of the keyword-only options ``read`` accepts."""
        sig = inspect.signature(self.read)
        return tuple(p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY)


# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


def _as_path_list(paths: Any) -> list[Path]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    try:
        items = list(paths)
    except TypeError:
        raise DataError(
            f"expected a file, a folder or a list of them, got {type(paths).__name__}",
            fix="pass the paths of the files or folders to read",
        ) from None
    if not items:
        raise DataError("no file was given", fix="choose at least one file or folder")
    if any(not isinstance(p, (str, Path)) or not str(p).strip() for p in items):
        raise DataError("a path is empty or not text", fix="pass the paths of the files or folders to read")
    return [Path(p) for p in items]


def _expand(paths: Any) -> list[tuple[Path, bool]]:
    """Files to read: ``(path, given_explicitly)``; folders are walked (hidden files skipped)."""
    out: list[tuple[Path, bool]] = []
    for p in _as_path_list(paths):
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            out.extend((f, False) for f in found)
        elif p.is_file():
            out.append((p, True))
        else:
            raise DataError("file or folder not found", file=str(p), fix="check the path, or upload the file again")
    return out


def _describe_paths(paths: Any) -> str:
    try:
        return ", ".join(str(p) for p in _as_path_list(paths))
    except DataError:
        return str(paths)


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError("is not a UTF-8 text file", file=str(path), fix="choose the JSON file itself, not an archive or binary") from None
    except OSError as e:
        raise DataError(f"could not be opened ({e.strerror or e})", file=str(path), fix="check that the file exists and is readable") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(
            f"is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})",
            file=str(path),
            fix="choose the original JSON file; if you edited it, check it with a JSON validator",
        ) from None


def _read_table(path: Path) -> pd.DataFrame:
    """Read CSV / TSV / JSON Lines / JSON records / Parquet / Excel, ids as text where possible."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".txt"):
            frame = pd.read_csv(path, dtype=str, encoding="utf-8-sig")
            if frame.shape[1] == 1 and any(s in str(frame.columns[0]) for s in ("\t", ";", "|")):
                frame = pd.read_csv(path, dtype=str, sep=None, engine="python", encoding="utf-8-sig")
        elif suffix in (".tsv", ".tab"):
            frame = pd.read_csv(path, dtype=str, sep="\t", encoding="utf-8-sig")
        elif suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(path, lines=True, dtype=False)
        elif suffix == ".json":
            data = _load_json(path)
            if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
                frame = pd.DataFrame(data)
            elif isinstance(data, list) and all(isinstance(r, dict) for r in data):
                frame = pd.DataFrame.from_records(data)
            else:
                raise DataError(
                    "is JSON but not a table (expected a list of records or JSON Lines)",
                    file=str(path),
                    fix="save the table as JSON Lines (one record per line) or CSV",
                )
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        elif suffix in (".xlsx", ".xls"):
            frame = pd.read_excel(path, dtype=str)
        else:
            raise DataError(
                f"has an unsupported extension '{suffix or '(none)'}'",
                file=str(path),
                fix="save the table as CSV, TSV, JSON Lines, Parquet or Excel",
            )
    except DataError:
        raise
    except pd.errors.EmptyDataError:
        raise DataError("is empty", file=str(path), fix="choose a file with a header row and data") from None
    except ImportError as e:
        raise DataError(f"needs an optional package to be read ({e})", file=str(path), fix="save the table as CSV instead") from None
    except UnicodeDecodeError:
        raise DataError("is not UTF-8 text", file=str(path), fix="save it as UTF-8 CSV") from None
    except (ValueError, OSError, pd.errors.ParserError) as e:
        raise DataError(f"could not be read as a table ({str(e).splitlines()[0] if str(e) else type(e).__name__})",
                        file=str(path), fix="check that the file is a valid CSV, TSV, JSON Lines or Parquet file") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _find_column(frame: pd.DataFrame, *names: str) -> str | None:
    lower = {c.lower(): c for c in frame.columns}
    for n in names:
        if n.lower() in lower:
            return lower[n.lower()]
    return None


def _id_text(series: pd.Series) -> pd.Series:
    """Ids as text; integral floats (from missing-value upcasting) lose their '.0'."""
    def one(v: Any) -> Any:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        if isinstance(v, (bytes, bytearray)):
            return v.decode("utf-8", "replace").strip()
        return str(v).strip()

    return series.map(one).astype(object)


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, str) and v.strip() == "":
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _label_int(v: Any) -> int | None:
    """An integer label from 0, 1.0, '2', ' 1 '; None when it is not an integral number."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return int(v) if float(v).is_integer() else None
    if isinstance(v, str):
        s = v.strip()
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


def _short_list(names: Iterable[str], limit: int = 12) -> str:
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _finish(rows: pd.DataFrame, table: str) -> pd.DataFrame:
    """Canonical columns first (documented order), then the extra segment columns."""
    canonical = [c for c in columns.column_names(table) if c in rows.columns]
    extra = [c for c in rows.columns if c not in canonical]
    frame = rows[canonical + extra].reset_index(drop=True)
    for c in ("item_id", "rater"):
        if c in frame.columns:
            frame[c] = frame[c].astype(str)
    if "swapped" in frame.columns:
        frame["swapped"] = frame["swapped"].astype(bool)
    for c in ("score_a", "score_b"):
        if c in frame.columns:
            frame[c] = frame[c].astype(float)
    return frame


# ---------------------------------------------------------------------------------------
# llmbar
# ---------------------------------------------------------------------------------------

_LLMBAR_FIX = (
    "choose an LLMBar evaluator result.json (<subset>/evaluators/<judge>/<strategy>/result.json "
    "from princeton-nlp/LLMBar), or a folder that contains them"
)


def _llmbar_path_info(path: Path) -> tuple[str | None, str | None]:
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


def _llmbar_score(v: Any) -> float:
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
      ``"2"`` -> ``'b'``); any other verdict is left out and counted in ``notes``.
      ``rater='<judge>/<strategy>'`` from the path.
    * ``item_id='<subset>/<i>'`` (e.g. ``'Natural/0'``, ``'Adversarial/GPTInst/3'``), stable
      across judges; ``subset`` column from the path. ``system_a``/``system_b`` are absent:
      LLMBar does not name the generators. ``a`` is ``output_1``.
    * ``Rating_*`` strategies (any file whose verdicts carry ``score_1``/``score_2``):
      the pointwise 1-10 scores ``score_1``/``score_2`` (stored as ``["7", "stop"]``)
      become float ``score_a``/``score_b``; unparseable ones become NaN and are counted in
      ``notes``. They are put on the ``swapped=False`` row only (NaN on the swapped row):
      each output is rated on its own, so the scores do not depend on the presentation
      order and repeating them would count them twice.

    Parameters
    ----------
    paths
        ``result.json`` files and/or folders (walked for ``result*.json``). Explicitly given
        ``dataset.json`` / ``statistics.json`` are skipped with a note.
    rater
        Judge id for every file, when the path does not say (default: from the path,
        else ``'judge'``).
    subset
        Subset name for every file (default: from the path, else none).

    Returns
    -------
    PresetResult
        ``table='comparisons'``.
    """
    files: list[Path] = []
    notes: list[str] = []
    skipped: list[str] = []
    for path, explicit in _expand(paths):
        name = path.name.lower()
        if explicit:
            if name in ("statistics.json", "dataset.json"):
                skipped.append(path.name)
                continue
            if path.suffix.lower() != ".json":
                raise DataError("is not a JSON file", file=str(path), fix=_LLMBAR_FIX)
            files.append(path)
        elif name.startswith("result") and name.endswith(".json"):
            files.append(path)
    if not files:
        raise DataError("no LLMBar result.json was found", file=_describe_paths(paths), fix=_LLMBAR_FIX)
    if skipped:
        notes.append(f"Skipped {_short_list(sorted(set(skipped)))}: the verdicts are in result.json.")

    gold: dict[tuple[str, int], tuple[str, int, Path]] = {}
    seen: dict[tuple[str, str], Path] = {}
    rows: list[dict[str, Any]] = []
    bad_winners: Counter[str] = Counter()
    bad_scores: Counter[str] = Counter()
    has_scores = False
    any_subset = False

    for path in files:
        data = _load_json(path)
        if not isinstance(data, list) or not data or not all(isinstance(x, dict) for x in data):
            raise DataError("is not an LLMBar result file (expected a non-empty list of items)", file=str(path), fix=_LLMBAR_FIX)
        path_subset, path_rater = _llmbar_path_info(path)
        sub = subset if subset is not None else path_subset
        judge = rater if rater is not None else (path_rater or "judge")
        any_subset = any_subset or bool(sub)
        key = (sub or "", judge)
        if key in seen:
            raise DataError(
                f"holds the verdicts of judge '{judge}'{' on subset ' + repr(sub) if sub else ''}, "
                f"like {seen[key]}",
                file=str(path),
                fix="read each judge's result.json once; if the path does not tell the judge or subset, "
                "read the files one at a time with rater=... and subset=...",
            )
        seen[key] = path
        for i, item in enumerate(data):
            if "label" not in item:
                raise DataError(f"item {i} has no 'label'", file=str(path), fix=_LLMBAR_FIX)
            label = _label_int(item["label"])
            if label not in (1, 2):
                raise DataError(f"item {i} has label {item['label']!r}; LLMBar labels are 1 or 2", file=str(path), fix=_LLMBAR_FIX)
            results = item.get("results")
            if not isinstance(results, list) or not results or not isinstance(results[-1], dict):
                raise DataError(
                    f"item {i} has no 'results' list (this looks like a dataset.json, which holds no verdicts)",
                    file=str(path), fix=_LLMBAR_FIX,
                )
            last = results[-1]
            verdicts = {}
            for swap in ("swap = False", "swap = True"):
                v = last.get(swap)
                if not isinstance(v, dict) or "winner" not in v:
                    raise DataError(f"item {i} has no '{swap}' verdict with a 'winner'", file=str(path), fix=_LLMBAR_FIX)
                verdicts[swap] = v["winner"]

            item_id = f"{sub}/{i}" if sub else str(i)
            gkey = (sub or "", i)
            text = str(item.get("input", ""))
            if gkey in gold:
                g_text, g_label, g_path = gold[gkey]
                if g_text != text or g_label != label:
                    raise DataError(
                        f"item {i} differs from item {i} of {g_path}, although both files are "
                        f"{'subset ' + repr(sub) if sub else 'without a subset'}",
                        file=str(path),
                        fix="read files of different subsets from their LLMBar folders, or give subset=... per file",
                    )
            else:
                gold[gkey] = (text, label, path)
                rows.append({"item_id": item_id, "subset": sub, "rater": "gold", "rater_kind": columns.HUMAN,
                             "winner": "a" if label == 1 else "b", "swapped": False,
                             "score_a": math.nan, "score_b": math.nan})

            scored = "score_1" in last or "score_2" in last
            if scored:
                has_scores = True
                sa, sb = _llmbar_score(last.get("score_1")), _llmbar_score(last.get("score_2"))
                bad_scores[judge] += int(math.isnan(sa)) + int(math.isnan(sb))
            else:
                sa = sb = math.nan
            for swap, swapped in (("swap = False", False), ("swap = True", True)):
                w = str(verdicts[swap]).strip()
                if w not in ("1", "2"):
                    bad_winners[judge] += 1
                    continue
                rows.append({"item_id": item_id, "subset": sub, "rater": judge, "rater_kind": columns.JUDGE,
                             "winner": "a" if w == "1" else "b", "swapped": swapped,
                             "score_a": math.nan if swapped else sa, "score_b": math.nan if swapped else sb})

    frame = pd.DataFrame(rows)
    if not has_scores:
        frame = frame.drop(columns=["score_a", "score_b"])
    if not any_subset:
        frame = frame.drop(columns=["subset"])
    for judge, n in sorted(bad_winners.items()):
        notes.append(f"{_plural(n, 'unparseable verdict')} of {judge} (neither '1' nor '2') {_were(n)} left out.")
    for judge, n in sorted(bad_scores.items()):
        if n:
            notes.append(f"{_plural(n, 'unparseable pointwise score')} of {judge} {_were(n)} set to NaN.")
    if has_scores:
        notes.append("score_a/score_b are the pointwise 1-10 ratings of the Rating strategies; they sit on the "
                     "unswapped row only, since each output is rated on its own, independent of the order.")
    notes.append("Gold labels are LLMBar's reference preferences (rater 'gold'), one per item.")
    judges = sorted({k[1] for k in seen})
    subsets = sorted({k[0] for k in seen if k[0]})
    source = (f"LLMBar: {_plural(len(files), 'result file')}, {_plural(len(gold), 'item')}"
              + (f" in {_plural(len(subsets), 'subset')} ({_short_list(subsets)})" if subsets else "")
              + f"; judges: {_short_list(judges)}")
    return PresetResult(columns.COMPARISONS, _finish(frame, columns.COMPARISONS), source, tuple(notes))


# ---------------------------------------------------------------------------------------
# pandalm
# ---------------------------------------------------------------------------------------

_PANDALM_FIX = (
    "choose PandaLM's testset-v1.json (required), optionally with gpt-3.5-turbo-testset-v1.json and "
    "pandalm-7b-testset-v1.json from WeOpenML/PandaLM data/, or the folder holding them"
)
_PANDALM_HUMAN = {0: "tie", 1: "a", 2: "b"}


def _pandalm_kind(data: Any) -> str | None:
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return None
    keys = set(data[0])
    if "idx" not in keys:
        return None
    if "cmp_key" in keys and any(k.startswith("annotator") for k in keys):
        return "testset"
    if "gpt_result" in keys:
        return "gpt"
    if "pandalm_result" in keys:
        return "pandalm"
    return None


def _gpt_verdict(v: Any) -> str | None:
    s = str(v).strip().lower() if v is not None else ""
    return {"1": "a", "2": "b", "tie": "tie"}.get(s)


def read_pandalm(paths: Any) -> PresetResult:
    """Read the PandaLM test set and its judges' files into a ``comparisons`` table.

    PandaLM (Wang et al. 2024, WeOpenML/PandaLM) publishes 999 pairwise comparisons
    (``testset-v1.json``) labelled by three annotators, and the verdicts of two judges on
    the same items (``gpt-3.5-turbo-testset-v1.json``, ``pandalm-7b-testset-v1.json``),
    joined on ``idx``. Files are recognised by their content, so their names do not matter.

    Mapping, per test-set item:

    * ``item_id=idx``; ``system_a``/``system_b`` from ``cmp_key`` split on ``"_"``
      (``'bloom-7b_llama-7b'`` -> ``'bloom-7b'``, ``'llama-7b'``; ``a`` is ``response1``);
      ``task=motivation_app``; ``swapped=False``.
    * humans: ``rater='annotator1'..'annotator3'``, ``rater_kind='human'``; labels
      ``0`` -> ``'tie'``, ``1`` -> ``'a'``, ``2`` -> ``'b'`` (int or text). An empty
      label is left out and counted in ``notes``.
    * judge ``'gpt-3.5-turbo'``: ``gpt_result`` ``"1"``/``"2"``/``"Tie"``; any other text
      is unparseable and left out (counted in ``notes``; the authors count it as wrong).
    * judge ``'pandalm-7b'``: ``pandalm_result`` ``0``/``1``/``2`` as for humans.

    Parameters
    ----------
    paths
        The files or the folder. ``testset-v1.json`` is required; the judges' files are
        optional.

    Returns
    -------
    PresetResult
        ``table='comparisons'``.
    """
    found: dict[str, tuple[Path, list[dict[str, Any]]]] = {}
    for path, explicit in _expand(paths):
        if path.suffix.lower() != ".json":
            if explicit:
                raise DataError("is not a JSON file", file=str(path), fix=_PANDALM_FIX)
            continue
        data = _load_json(path)
        kind = _pandalm_kind(data)
        if kind is None:
            if explicit:
                raise DataError("is not a PandaLM test-set or judge file (no idx with cmp_key/annotators, "
                                "gpt_result or pandalm_result)", file=str(path), fix=_PANDALM_FIX)
            continue
        if kind in found:
            raise DataError(f"is a second PandaLM {kind} file, after {found[kind][0]}", file=str(path),
                            fix="give each PandaLM file once")
        if not all(isinstance(x, dict) and "idx" in x for x in data):
            raise DataError("has an entry without 'idx'", file=str(path), fix=_PANDALM_FIX)
        found[kind] = (path, data)
    if "testset" not in found:
        raise DataError("no PandaLM testset-v1.json was found (it holds the items and the human labels)",
                        file=_describe_paths(paths), fix=_PANDALM_FIX)

    test_path, test = found["testset"]
    notes: list[str] = []
    annot_keys = sorted({k for x in test for k in x if re.fullmatch(r"annotator\d+", k)}, key=lambda k: int(k[9:]))
    if not annot_keys:
        raise DataError("has no annotator1, annotator2... labels", file=str(test_path), fix=_PANDALM_FIX)
    base_of: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    missing_human = 0
    for x in test:
        idx = str(x["idx"]).strip()
        if idx in base_of:
            raise DataError(f"idx {idx} appears twice", file=str(test_path), fix="give each item a unique idx")
        for k in ("cmp_key", "motivation_app"):
            if k not in x:
                raise DataError(f"item idx={idx} has no '{k}'", file=str(test_path), fix=_PANDALM_FIX)
        parts = str(x["cmp_key"]).split("_")
        if len(parts) != 2 or not all(parts):
            raise DataError(f"item idx={idx} has cmp_key {x['cmp_key']!r}, which is not 'modelA_modelB'",
                            file=str(test_path), fix="name the pair as '<model A>_<model B>' with one underscore")
        base = {"item_id": idx, "system_a": parts[0], "system_b": parts[1], "task": str(x["motivation_app"]),
                "swapped": False}
        base_of[idx] = base
        for k in annot_keys:
            v = x.get(k)
            if _is_missing(v):
                missing_human += 1
                continue
            lab = _label_int(v)
            if lab not in _PANDALM_HUMAN:
                raise DataError(f"item idx={idx} has {k}={v!r}; labels are 0 (tie), 1 (response1) or 2 (response2)",
                                file=str(test_path), fix="correct the label")
            rows.append({**base, "rater": k, "rater_kind": columns.HUMAN, "winner": _PANDALM_HUMAN[lab]})
    if missing_human:
        notes.append(f"{_plural(missing_human, 'empty human label')} {_were(missing_human)} left out.")
    ids = list(base_of)
    seen_ids = set(ids)

    judges_read = []
    for kind, rater, field, parse in (
        ("gpt", "gpt-3.5-turbo", "gpt_result", _gpt_verdict),
        ("pandalm", "pandalm-7b", "pandalm_result", lambda v: _PANDALM_HUMAN.get(_label_int(v))),
    ):
        if kind not in found:
            continue
        jpath, jdata = found[kind]
        judges_read.append(rater)
        bad = unknown = 0
        seen_j: set[str] = set()
        for x in jdata:
            idx = str(x["idx"]).strip()
            if idx in seen_j:
                raise DataError(f"idx {idx} appears twice", file=str(jpath), fix="give each item one verdict")
            seen_j.add(idx)
            if idx not in base_of:
                unknown += 1
                continue
            w = parse(x.get(field))
            if w is None:
                bad += 1
                continue
            rows.append({**base_of[idx], "rater": rater, "rater_kind": columns.JUDGE, "winner": w})
        if bad:
            notes.append(f"{_plural(bad, 'unparseable verdict')} of {rater} {_were(bad)} left out "
                         "(the PandaLM authors count them as wrong).")
        if unknown:
            notes.append(f"{_plural(unknown, 'verdict')} of {rater} with an idx that is not in the test set {_were(unknown)} ignored.")
        if len(seen_j & seen_ids) < len(seen_ids):
            notes.append(f"{rater} has no verdict on {_plural(len(seen_ids - seen_j), 'item')}.")
    if not judges_read:
        notes.append("No judge file was given: only the human labels were read.")

    order = {i: n for n, i in enumerate(ids)}
    frame = pd.DataFrame(rows)
    frame["_o"] = frame["item_id"].map(order)
    frame = frame.sort_values("_o", kind="stable").drop(columns="_o")
    source = (f"PandaLM test set: {_plural(len(ids), 'item')}, {_plural(len(annot_keys), 'annotator')}"
              + (f"; judges: {', '.join(judges_read)}" if judges_read else ""))
    return PresetResult(columns.COMPARISONS, _finish(frame, columns.COMPARISONS), source, tuple(notes))


# ---------------------------------------------------------------------------------------
# hanna
# ---------------------------------------------------------------------------------------

HANNA_CRITERIA = {
    "RE": "Relevance",
    "CH": "Coherence",
    "EM": "Empathy",
    "SU": "Surprise",
    "EG": "Engagement",
    "CX": "Complexity",
}
_CRIT = "|".join(HANNA_CRITERIA)
_HANNA_HUMAN = re.compile(rf"^Human (\d+) ({_CRIT})$")
_HANNA_LLM = re.compile(rf"^(.+?) ({_CRIT}) (\d+)$")
_HANNA_FIX = "choose HANNA's hanna_metric_scores_llm.csv (dig-team/hanna-benchmark-asg), one row per system"


def _hanna_header(path: Path) -> list[str] | None:
    try:
        return [str(c).strip() for c in pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns]
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None


def _parse_list_cell(value: Any, *, path: Path, row: int, column: str) -> list[float] | None:
    if _is_missing(value):
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


def read_hanna(paths: Any) -> PresetResult:
    """Read HANNA's ``hanna_metric_scores_llm.csv`` into a ``ratings`` table.

    HANNA (Chhun et al. 2022; LLM ratings from Chhun et al. 2024, dig-team/hanna-benchmark-asg)
    has 1,056 stories (96 prompts x 11 systems, including ``Human``) rated 1-5 on six
    criteria by three MTurk workers, plus LLM ratings. The file has one row per system;
    each cell is a Python-list string of the 96 per-story values (parsed with
    :func:`ast.literal_eval`).

    Mapping:

    * ``item_id='<system>/<story index>'`` (0-based, e.g. ``'GPT-2/17'``); extra segment
      column ``system`` (the ``Model`` column).
    * ``criterion`` by full name: RE Relevance, CH Coherence, EM Empathy, SU Surprise,
      EG Engagement, CX Complexity.
    * humans: ``Human 1|2|3 <crit>`` -> ``rater='Human 1'..``, ``rater_kind='human'``.
      They are rating slots: the three workers differ from story to story.
    * judges: ``<LLM> <crit> <k>`` -> ``rater='<LLM>/prompt<k>'``, ``rater_kind='judge'``
      (Beluga-13B, OrcaPlatypus, Mistral-7B, Llama-13B, ChatGPT in the published file;
      each score is the average of 3 samples).
    * not read: the aggregate criterion columns (``Relevance``... = mean of Human 1-3),
      ``Human Avg k`` columns, the LLMs' ``AVG`` columns and the automatic metrics.

    Parameters
    ----------
    paths
        The CSV file, or a folder holding it.

    Returns
    -------
    PresetResult
        ``table='ratings'``, ``score`` float.
    """
    files: list[Path] = []
    for path, explicit in _expand(paths):
        if path.suffix.lower() != ".csv":
            if explicit:
                raise DataError("is not a CSV file", file=str(path), fix=_HANNA_FIX)
            continue
        header = _hanna_header(path)
        ok = header is not None and "Model" in header and any(_HANNA_HUMAN.match(c) for c in header)
        if not ok:
            if explicit:
                raise DataError("is not HANNA's score file (needs 'Model' and 'Human 1 RE'-style columns)",
                                file=str(path), fix=_HANNA_FIX)
            continue
        files.append(path)
    if not files:
        raise DataError("no HANNA score CSV was found", file=_describe_paths(paths), fix=_HANNA_FIX)

    pieces: dict[str, list[np.ndarray]] = {k: [] for k in ("item_id", "system", "criterion", "rater", "rater_kind", "score")}
    systems_seen: dict[str, Path] = {}
    llms: set[str] = set()
    n_items = 0
    empty_cells = 0
    skipped_cols: set[str] = set()
    for path in files:
        frame = _read_table(path)
        use: list[tuple[str, str, str, str]] = []  # column, criterion, rater, kind
        for c in frame.columns:
            m = _HANNA_HUMAN.match(c)
            if m:
                use.append((c, HANNA_CRITERIA[m.group(2)], f"Human {m.group(1)}", columns.HUMAN))
                continue
            m = _HANNA_LLM.match(c)
            if m and not m.group(1).startswith("Human"):
                use.append((c, HANNA_CRITERIA[m.group(2)], f"{m.group(1)}/prompt{m.group(3)}", columns.JUDGE))
                llms.add(m.group(1))
                continue
            if c != "Model":
                skipped_cols.add(c)
        for r, rec in enumerate(frame.to_dict("records")):
            row = r + 2
            system = rec.get("Model")
            if _is_missing(system):
                raise DataError("has no system name", file=str(path), row=row, column="Model", fix=_HANNA_FIX)
            system = str(system).strip()
            if system in systems_seen:
                raise DataError(f"system '{system}' appears twice (also in {systems_seen[system]})", file=str(path),
                                row=row, column="Model", fix="give each system one row")
            systems_seen[system] = path
            n = None
            for col, crit, rater, kind in use:
                values = _parse_list_cell(rec[col], path=path, row=row, column=col)
                if values is None:
                    empty_cells += 1
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
                pieces["criterion"].append(np.full(n, crit, dtype=object))
                pieces["rater"].append(np.full(n, rater, dtype=object))
                pieces["rater_kind"].append(np.full(n, kind, dtype=object))
                pieces["score"].append(np.asarray(values, dtype=float))
            n_items += n or 0
    if not pieces["score"]:
        raise DataError("has no Human or LLM rating columns", file=str(files[0]), fix=_HANNA_FIX)
    frame = pd.DataFrame({k: np.concatenate(v) for k, v in pieces.items()})
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
        left.append(f"{_plural(len(human_avg), 'Human Avg column')}")
    if avg:
        left.append(f"{_plural(len(avg), 'LLM AVG column')}")
    if metrics:
        left.append(f"{_plural(metrics, 'automatic metric column')}")
    if left:
        notes.append("Not imported: " + ", ".join(left) + ".")
    if empty_cells:
        notes.append(f"{_plural(empty_cells, 'empty cell')} (a rater missing for a whole system) {_were(empty_cells)} skipped.")
    source = (f"HANNA: {_plural(n_items, 'story', 'stories')} by {_plural(len(systems_seen), 'system')}, "
              f"{_plural(frame['criterion'].nunique(), 'criterion', 'criteria')}, 3 human raters"
              + (f" and {_plural(len(llms), 'LLM')} ({_short_list(sorted(llms))})" if llms else ""))
    return PresetResult(columns.RATINGS, _finish(frame, columns.RATINGS), source, tuple(notes))


# ---------------------------------------------------------------------------------------
# crowdkit
# ---------------------------------------------------------------------------------------

# Worker names that look like models: judged by name, so the analyst is told and can override.
_MODEL_NAME = re.compile(
    r"gpt|llm|claude|gemini|llama|mistral|mixtral|qwen|judge|model|deepseek|vicuna|alpaca|falcon|"
    r"chatglm|baichuan|internlm|prometheus|pandalm|openai|anthropic|sonnet|haiku|opus|grok|"
    r"gemma[-_ ]?\d|phi-?\d|yi-\d|command-r|"
    r"(?<![a-z])(?:bot|palm|bard|t5|flan|o1|o3|o4|ai)(?![a-z])|chatbot|robot",
    re.IGNORECASE,
)

_CROWDKIT_FIX = "crowd-kit's format needs the columns task, worker and label (one row per judgment)"


def _looks_like_model(name: str) -> bool:
    return bool(_MODEL_NAME.search(name))


def _tabular_files(paths: Any, fix: str) -> list[Path]:
    files = []
    for path, explicit in _expand(paths):
        if path.suffix.lower() in TABULAR_SUFFIXES and path.suffix.lower() != ".txt":
            files.append(path)
        elif explicit:
            if path.suffix.lower() == ".txt":
                files.append(path)
            else:
                raise DataError(f"has an unsupported extension '{path.suffix or '(none)'}'", file=str(path),
                                fix="save the table as CSV, TSV, JSON Lines, Parquet or Excel")
    if not files:
        raise DataError("no table file (CSV, TSV, JSON Lines, Parquet, Excel) was found", file=_describe_paths(paths), fix=fix)
    return files


def read_crowdkit(paths: Any, *, judges: Sequence[str] | None = None, criterion: str = "overall") -> PresetResult:
    """Read crowd-kit's long ``task, worker, label`` table into a ``ratings`` table.

    crowd-kit (Toloka) keeps annotations as one row per judgment with columns ``task``,
    ``worker`` and ``label``. CSV, TSV, JSON Lines, JSON records, Parquet and Excel are read;
    several files are stacked.

    Mapping:

    * ``task`` -> ``item_id``, ``worker`` -> ``rater``, ``label`` -> ``score`` (float when
      every label is a number; otherwise the labels are kept as text categories, with a note).
    * ``criterion``: the file's ``criterion`` column if it has one, else the option
      ``criterion`` (default ``'overall'``).
    * ``rater_kind``: ``'judge'`` for the workers listed in ``judges``, ``'human'`` for the
      rest. Without ``judges``, workers whose names look like models (gpt, llm, claude,
      gemini, llama, mistral, judge, model, bot, ...) are judges; ``notes`` lists the guess.
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
    files = _tabular_files(paths, _CROWDKIT_FIX)
    frames = []
    notes: list[str] = []
    no_label = 0
    for path in files:
        frame = _read_table(path)
        found = {}
        for name in ("task", "worker", "label"):
            col = _find_column(frame, name)
            if col is None:
                raise DataError(f"the column '{name}' is missing (found: {_short_list(list(frame.columns), 8)})",
                                file=str(path), column=name,
                                fix=f"{_CROWDKIT_FIX}; rename your columns to these names")
            found[name] = col
        frame = frame.rename(columns={found["task"]: "task", found["worker"]: "worker", found["label"]: "label"})
        crit_col = _find_column(frame, "criterion")
        if crit_col is not None and crit_col != "criterion":
            frame = frame.rename(columns={crit_col: "criterion"})
        clash = [c for c in frame.columns if c in ("item_id", "rater", "rater_kind", "score")]
        if clash:
            frame = frame.rename(columns={c: f"{c}_in_file" for c in clash})
            notes.append(f"{path.name}: the columns {', '.join(clash)} were kept as {', '.join(c + '_in_file' for c in clash)}.")
        frame["_row"] = np.arange(len(frame)) + 2
        frame["_file"] = str(path)
        for name in ("task", "worker"):
            miss = frame[name].map(_is_missing)
            if miss.any():
                r = int(frame.loc[miss, "_row"].iloc[0])
                raise DataError(f"has no {name}", file=str(path), row=r, column=name,
                                fix=f"every row needs a {name}; fill it in or delete the row")
        miss = frame["label"].map(_is_missing)
        no_label += int(miss.sum())
        frames.append(frame.loc[~miss])
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise DataError("has no labelled rows", file=_describe_paths(paths), fix="check the label column")
    if no_label:
        notes.append(f"{_plural(no_label, 'row')} without a label {_were(no_label)} left out.")

    data["item_id"] = _id_text(data["task"])
    data["rater"] = _id_text(data["worker"])
    numeric = pd.to_numeric(data["label"].map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
    if numeric.notna().all():
        data["score"] = numeric.astype(float)
    else:
        data["score"] = data["label"].map(lambda v: str(v).strip()).astype(object)
        notes.append("Some labels are not numbers, so all labels are kept as text categories.")
    if "criterion" in data.columns:
        data["criterion"] = data["criterion"].map(lambda v: criterion if _is_missing(v) else str(v).strip())
    else:
        data["criterion"] = criterion

    workers = sorted(data["rater"].unique())
    if judges is not None:
        if isinstance(judges, str):
            judges = [judges]
        judge_set = {str(j).strip() for j in judges}
        unknown = sorted(judge_set - set(workers))
        if unknown:
            raise DataError(f"judges= names {_short_list(unknown)}, not a worker in the data",
                            file=_describe_paths(paths), column="worker",
                            fix=f"use the names as in the worker column: {_short_list(workers)}")
        notes.append(f"Judges (as given): {_short_list(sorted(judge_set))}; the other "
                     f"{_plural(len(workers) - len(judge_set), 'worker')} are human.")
    else:
        judge_set = {w for w in workers if _looks_like_model(w)}
        humans = [w for w in workers if w not in judge_set]
        notes.append(
            f"Classified by name as judges (names look like models): {_short_list(sorted(judge_set)) or 'none'}; "
            f"as humans: {_short_list(humans) or 'none'}. Pass judges=[...] to change this."
        )
    data["rater_kind"] = np.where(data["rater"].isin(judge_set), columns.JUDGE, columns.HUMAN)

    data = data.drop(columns=["task", "worker", "label", "_row", "_file"])
    source = (f"crowd-kit table: {_plural(len(files), 'file')}, {_plural(len(data), 'judgment')} of "
              f"{_plural(data['item_id'].nunique(), 'task')} by {_plural(len(workers), 'worker')}")
    return PresetResult(columns.RATINGS, _finish(data, columns.RATINGS), source, tuple(notes))


# ---------------------------------------------------------------------------------------
# bayescal
# ---------------------------------------------------------------------------------------

_BAYES_LABELS = {0: "a", 1: "b", 2: "tie"}
_BAYES_FIX = ("Gao et al.'s format needs the columns task (or task_id), worker (or worker_id), human_label, "
              "llm_label, generator_1 and generator_2, labels 0 (generator_1 wins), 1 (generator_2 wins) or 2 (tie)")
_BAYES_TEXT = ("premise", "instruction", "input", "output_1", "output_2")
_BAYES_JUNK = re.compile(r"^(index|level_\d+|__index_level_\d+__|unnamed: \d+)$", re.IGNORECASE)


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
    files = _tabular_files(paths, _BAYES_FIX)
    frames = []
    notes: list[str] = []
    dropped: set[str] = set()
    for path in files:
        frame = _read_table(path)
        ren = {}
        for canon, aliases in (("task", ("task", "task_id")), ("worker", ("worker", "worker_id")),
                               ("human_label", ("human_label",)), ("llm_label", ("llm_label",)),
                               ("generator_1", ("generator_1",)), ("generator_2", ("generator_2",))):
            col = _find_column(frame, *aliases)
            if col is None:
                raise DataError(f"the column '{canon}' is missing (found: {_short_list(list(frame.columns), 8)})",
                                file=str(path), column=canon, fix=_BAYES_FIX)
            ren[col] = canon
        frame = frame.rename(columns=ren)
        drop = [c for c in frame.columns if c.lower() in _BAYES_TEXT or _BAYES_JUNK.match(c)
                or c in ("item_id", "rater", "rater_kind", "winner", "system_a", "system_b", "swapped")]
        dropped.update(drop)
        frame = frame.drop(columns=drop)
        frame["_row"] = np.arange(len(frame)) + 2
        frame["_file"] = str(path)
        for name in ("task", "worker", "generator_1", "generator_2"):
            miss = frame[name].map(_is_missing)
            if miss.any():
                raise DataError(f"has no {name}", file=str(path), row=int(frame.loc[miss, "_row"].iloc[0]),
                                column=name, fix=f"every row needs a {name}")
        for name in ("human_label", "llm_label"):
            def parse(v: Any, name: str = name) -> Any:
                if _is_missing(v):
                    return None
                return _BAYES_LABELS.get(_label_int(v), "?")
            parsed = frame[name].map(parse)
            bad = parsed.eq("?")
            if bad.any():
                i = bad.to_numpy().nonzero()[0][0]
                raise DataError(f"has the label {frame[name].iloc[i]!r}; labels are 0 (generator_1 wins), "
                                "1 (generator_2 wins) or 2 (tie)", file=str(path),
                                row=int(frame["_row"].iloc[i]), column=name, fix="correct the label")
            frame[f"_{name}"] = parsed.astype(object)
        frames.append(frame)
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise DataError("has no rows", file=_describe_paths(paths), fix=_BAYES_FIX)
    data["task"] = _id_text(data["task"])
    data["worker"] = _id_text(data["worker"])
    data["generator_1"] = _id_text(data["generator_1"])
    data["generator_2"] = _id_text(data["generator_2"])

    # One task, one pair of generators, one human label.
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

    segments = [c for c in data.columns if c not in ("task", "worker", "human_label", "llm_label", "generator_1",
                                                     "generator_2", "_row", "_file", "_human_label", "_llm_label")]
    humans = data.dropna(subset=["_human_label"]).drop_duplicates("task", keep="first")
    human_rows = pd.DataFrame({
        "item_id": humans["task"], "system_a": humans["generator_1"], "system_b": humans["generator_2"],
        "rater": "human", "rater_kind": columns.HUMAN, "winner": humans["_human_label"], "swapped": False,
        **{c: humans[c] for c in segments},
    })
    judged = data.dropna(subset=["_llm_label"])
    no_llm = len(data) - len(judged)
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
    n_tasks = data["task"].nunique()
    if no_llm:
        notes.append(f"{_plural(no_llm, 'row')} without an llm_label {_were(no_llm)} left out.")
    no_human = n_tasks - len(human_rows)
    if no_human:
        notes.append(f"{_plural(no_human, 'task')} without a human_label {'has' if no_human == 1 else 'have'} no human row.")
    dups = int(judged.duplicated(["task", "worker"]).sum())
    if dups:
        notes.append(f"{_plural(dups, 'repeated (task, worker) row')} kept: the same evaluator judged a task more than once.")
    kept_drop = sorted(c for c in dropped if c.lower() in _BAYES_TEXT)
    if kept_drop:
        notes.append(f"Text column{'s' if len(kept_drop) > 1 else ''} not kept: {', '.join(kept_drop)}.")
    notes.append("Labels: 0 = generator_1 (a) wins, 1 = generator_2 (b) wins, 2 = tie.")
    source = (f"Bayesian-calibration table: {_plural(len(files), 'file')}, {_plural(n_tasks, 'task')}, "
              f"{_plural(len(human_rows), 'human label')}, {_plural(len(judge_rows), 'evaluator verdict')} by "
              f"{_plural(judged['worker'].nunique(), 'evaluator')}")
    return PresetResult(columns.COMPARISONS, _finish(frame, columns.COMPARISONS), source, tuple(notes))


# ---------------------------------------------------------------------------------------
# Registry, dispatch and detection
# ---------------------------------------------------------------------------------------

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "llmbar", "LLMBar evaluator results",
            "Pairwise verdicts of LLM judges in both presentation orders, with LLMBar's gold preference "
            "(Zeng et al. 2024). Maps each item to a gold row and two judge rows (swapped False/True); "
            "Rating strategies add pointwise scores score_a/score_b.",
            columns.COMPARISONS,
            "result.json file(s), or a folder such as LLMBar's Dataset/LLMBar (walked for result.json)",
            read_llmbar,
        ),
        Preset(
            "pandalm", "PandaLM test set",
            "999 pairwise comparisons of 5 models with three human annotators, joined on idx with the "
            "verdicts of GPT-3.5-turbo and PandaLM-7B (Wang et al. 2024).",
            columns.COMPARISONS,
            "testset-v1.json (required) with gpt-3.5-turbo-testset-v1.json and pandalm-7b-testset-v1.json, or their folder",
            read_pandalm,
        ),
        Preset(
            "hanna", "HANNA story ratings",
            "1,056 stories by 11 systems rated 1-5 on six criteria by three human raters and by five LLMs "
            "with four prompts each (Chhun et al.).",
            columns.RATINGS,
            "hanna_metric_scores_llm.csv, or its folder",
            read_hanna,
        ),
        Preset(
            "crowdkit", "crowd-kit table (task, worker, label)",
            "crowd-kit's long format, one row per judgment: task -> item_id, worker -> rater, label -> score; "
            "judges told apart by name or by the judges option.",
            columns.RATINGS,
            "CSV, TSV, JSON Lines, Parquet or Excel file(s), or a folder of them",
            read_crowdkit,
        ),
        Preset(
            "bayescal", "Bayesian win-rate calibration table (Gao et al.)",
            "One row per (task, LLM evaluator) with the human label repeated: task -> item_id, "
            "generator_1/2 -> system_a/b, one human row per task, one judge row per evaluator; "
            "labels 0 first wins, 1 second wins, 2 tie.",
            columns.COMPARISONS,
            "CSV, TSV, JSON Lines, Parquet or Excel file(s), or a folder of them",
            read_bayescal,
        ),
    )
}


def read_preset(name: str, paths: Any, **options: Any) -> PresetResult:
    """Read ``paths`` with the preset ``name``.

    Parameters
    ----------
    name
        A key of :data:`PRESETS`: ``llmbar``, ``pandalm``, ``hanna``, ``crowdkit``, ``bayescal``.
    paths
        One or several files and/or folders (a folder is walked).
    **options
        The preset's keyword-only options (see :attr:`Preset.options`).

    Returns
    -------
    PresetResult

    Raises
    ------
    DataError
        Unknown preset or option, wrong or malformed file; the message names the file and the fix.
    """
    preset = PRESETS.get(name)
    if preset is None:
        raise DataError(f"there is no preset called '{name}'", fix=f"choose one of {', '.join(PRESETS)}")
    unknown = sorted(set(options) - set(preset.options))
    if unknown:
        allowed = ", ".join(preset.options) or "none"
        raise DataError(f"the {name} preset has no option {', '.join(unknown)}", fix=f"its options are: {allowed}")
    try:
        return preset.read(paths, **options)
    except DataError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError, UnicodeDecodeError) as e:
        # Safety net: a file shaped in a way the preset did not foresee.
        raise DataError(
            f"could not be read as {preset.title} ({type(e).__name__}: {e})",
            file=_describe_paths(paths),
            fix=f"check that the file is what the {name} preset expects: {preset.accepts}",
        ) from e


def _head_text(path: Path, size: int = 65536) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def _header_columns(path: Path) -> set[str]:
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv", ".tab", ".txt"):
            sep = "\t" if suffix in (".tsv", ".tab") else ","
            cols = list(pd.read_csv(path, nrows=0, sep=sep, encoding="utf-8-sig").columns)
            if len(cols) == 1 and any(s in cols[0] for s in ("\t", ";", "|")):
                cols = re.split(r"[\t;|]", cols[0])
        elif suffix in (".jsonl", ".ndjson"):
            first = _head_text(path).lstrip().splitlines()[0]
            cols = list(json.loads(first))
        elif suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            cols = list(pq.read_schema(path).names)
        else:
            return set()
    except Exception:  # noqa: BLE001 - detection is a guess; an unreadable file is simply not recognised
        return set()
    return {str(c).strip().lower() for c in cols}


def _detect_one(path: Path) -> str | None:
    name = path.name.lower()
    suffix = path.suffix.lower()
    if suffix == ".json":
        head = _head_text(path)
        if '"swap = False"' in head or '"swap = True"' in head:
            return "llmbar"
        if name == "testset-v1.json" or ('"cmp_key"' in head and '"annotator1"' in head):
            return "pandalm"
        if name.endswith("testset-v1.json") and ('"gpt_result"' in head or '"pandalm_result"' in head):
            return "pandalm"
        return None
    cols = _header_columns(path)
    if not cols:
        return None
    if "model" in cols and any(re.fullmatch(r"human \d+ (re|ch|em|su|eg|cx)", c) for c in cols):
        return "hanna"
    has_task = bool({"task", "task_id"} & cols)
    has_worker = bool({"worker", "worker_id"} & cols)
    if has_task and has_worker and {"human_label", "llm_label"} <= cols:
        return "bayescal"
    if {"task", "worker", "label"} <= cols:
        return "crowdkit"
    return None


def detect_preset(paths: Any) -> str | None:
    """Guess the preset that reads ``paths`` from file names and contents.

    ``result.json`` with ``"swap = False"`` -> ``llmbar``; ``testset-v1.json`` (or JSON with
    ``cmp_key`` and ``annotator1``) -> ``pandalm``; a CSV header with ``Model`` and
    ``Human 1 RE`` -> ``hanna``; ``task, worker, human_label, llm_label`` -> ``bayescal``;
    ``task, worker, label`` -> ``crowdkit``.

    Parameters
    ----------
    paths
        Files and/or folders (folders are walked).

    Returns
    -------
    str or None
        The preset name, or None when nothing is recognised. When files of several presets
        are given, the one recognised in the most files wins (ties: the order above).
    """
    try:
        files = [p for p, _ in _expand(paths)]
    except DataError:
        return None
    votes: Counter[str] = Counter()
    for path in files[:2000]:
        kind = _detect_one(path)
        if kind:
            votes[kind] += 1
    if not votes:
        return None
    order = list(PRESETS)
    return max(votes, key=lambda k: (votes[k], -order.index(k)))
