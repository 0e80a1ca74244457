"""The ``pandalm`` preset: PandaLM's test set and its two judges' files (Wang et al. 2024) as ``comparisons``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from ... import columns
from ...errors import DataError
from .common import PresetResult, describe_paths, expand, finish, invalid_note, is_missing, label_int, load_json, \
    plural, were

_FIX = (
    "choose PandaLM's testset-v1.json (required), optionally with gpt-3.5-turbo-testset-v1.json and "
    "pandalm-7b-testset-v1.json from WeOpenML/PandaLM data/, or the folder holding them"
)
_HUMAN = {0: "tie", 1: "a", 2: "b"}


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


def _find_files(paths: Any) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """The test set and the judges' files by kind (``testset``, ``gpt``, ``pandalm``), recognised by content."""
    found: dict[str, tuple[Path, list[dict[str, Any]]]] = {}
    for path, explicit in expand(paths):
        if path.suffix.lower() != ".json":
            if explicit:
                raise DataError("is not a JSON file", file=str(path), fix=_FIX)
            continue
        data = load_json(path)
        kind = _pandalm_kind(data)
        if kind is None:
            if explicit:
                raise DataError("is not a PandaLM test-set or judge file (no idx with cmp_key/annotators, "
                                "gpt_result or pandalm_result)", file=str(path), fix=_FIX)
            continue
        if kind in found:
            raise DataError(f"is a second PandaLM {kind} file, after {found[kind][0]}", file=str(path),
                            fix="give each PandaLM file once")
        if not all(isinstance(x, dict) and "idx" in x for x in data):
            raise DataError("has an entry without 'idx'", file=str(path), fix=_FIX)
        found[kind] = (path, data)
    if "testset" not in found:
        raise DataError("no PandaLM testset-v1.json was found (it holds the items and the human labels)",
                        file=describe_paths(paths), fix=_FIX)
    return found


def _human_rows(test_path: Path, test: list[dict[str, Any]], rows: list[dict[str, Any]],
                notes: list[str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Append the annotators' rows to ``rows``; each item's shared columns by idx, and the annotators."""
    annot_keys = sorted({k for x in test for k in x if re.fullmatch(r"annotator\d+", k)}, key=lambda k: int(k[9:]))
    if not annot_keys:
        raise DataError("has no annotator1, annotator2... labels", file=str(test_path), fix=_FIX)
    base_of: dict[str, dict[str, Any]] = {}
    missing_human = 0
    for x in test:
        idx = str(x["idx"]).strip()
        if idx in base_of:
            raise DataError(f"idx {idx} appears twice", file=str(test_path), fix="give each item a unique idx")
        for k in ("cmp_key", "motivation_app"):
            if k not in x:
                raise DataError(f"item idx={idx} has no '{k}'", file=str(test_path), fix=_FIX)
        parts = str(x["cmp_key"]).split("_")
        if len(parts) != 2 or not all(parts):
            raise DataError(f"item idx={idx} has cmp_key {x['cmp_key']!r}, which is not 'modelA_modelB'",
                            file=str(test_path), fix="name the pair as '<model A>_<model B>' with one underscore")
        base = {"item_id": idx, "system_a": parts[0], "system_b": parts[1], "task": str(x["motivation_app"]),
                "swapped": False, "text_a": x.get("response1"), "text_b": x.get("response2")}
        base_of[idx] = base
        for k in annot_keys:
            v = x.get(k)
            if is_missing(v):
                missing_human += 1
                continue
            lab = label_int(v)
            if lab not in _HUMAN:
                raise DataError(f"item idx={idx} has {k}={v!r}; labels are 0 (tie), 1 (response1) or 2 (response2)",
                                file=str(test_path), fix="correct the label")
            rows.append({**base, "rater": k, "rater_kind": columns.HUMAN, "winner": _HUMAN[lab]})
    if missing_human:
        notes.append(f"{plural(missing_human, 'empty human label')} {were(missing_human)} left out.")
    return base_of, annot_keys


def _judge_rows(jpath: Path, jdata: list[dict[str, Any]], rater: str, field: str, parse, base_of: dict[str, Any],
                rows: list[dict[str, Any]], notes: list[str]) -> None:
    """Append one judge's rows to ``rows``, joined on idx; what was left out goes to ``notes``."""
    seen_ids = set(base_of)
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
        bad += w is None
        rows.append({**base_of[idx], "rater": rater, "rater_kind": columns.JUDGE, "winner": w,
                     "invalid": w is None})
    if bad:
        notes.append(invalid_note(bad, rater, counted_wrong_by="the PandaLM authors"))
    if unknown:
        notes.append(f"{plural(unknown, 'verdict')} of {rater} with an idx that is not in the test set {were(unknown)} ignored.")
    if len(seen_j & seen_ids) < len(seen_ids):
        notes.append(f"{rater} has no verdict on {plural(len(seen_ids - seen_j), 'item')}.")


def read_pandalm(paths: Any) -> PresetResult:
    """Read the PandaLM test set and its judges' files into a ``comparisons`` table.

    PandaLM (Wang et al. 2024, WeOpenML/PandaLM) publishes 999 pairwise comparisons
    (``testset-v1.json``) labelled by three annotators, and the verdicts of two judges on
    the same items (``gpt-3.5-turbo-testset-v1.json``, ``pandalm-7b-testset-v1.json``),
    joined on ``idx``. Files are recognised by their content, so their names do not matter.

    Mapping, per test-set item:

    * ``item_id=idx``; ``system_a``/``system_b`` from ``cmp_key`` split on ``"_"``
      (``'bloom-7b_llama-7b'`` -> ``'bloom-7b'``, ``'llama-7b'``; ``a`` is ``response1``);
      ``task=motivation_app``; ``swapped=False``; ``text_a``/``text_b`` from ``response1``/``response2``.
    * humans: ``rater='annotator1'..'annotator3'``, ``rater_kind='human'``; labels
      ``0`` -> ``'tie'``, ``1`` -> ``'a'``, ``2`` -> ``'b'`` (int or text). An empty
      label is left out and counted in ``notes``.
    * judge ``'gpt-3.5-turbo'``: ``gpt_result`` ``"1"``/``"2"``/``"Tie"``; any other text
      (25 ``"garbage"`` outputs in the published file) is unparseable: kept as a row with
      ``invalid=True`` and an empty ``winner``, counted in ``notes``. Win rates treat it as a
      missing verdict; judge accuracy leaves it out or, as the authors do, counts it as wrong.
      The ``invalid`` column is present only when some output is unparseable.
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
    found = _find_files(paths)
    test_path, test = found["testset"]
    notes: list[str] = []
    rows: list[dict[str, Any]] = []
    base_of, annot_keys = _human_rows(test_path, test, rows, notes)
    ids = list(base_of)
    judges_read = []
    for kind, rater, field, parse in (
        ("gpt", "gpt-3.5-turbo", "gpt_result", _gpt_verdict),
        ("pandalm", "pandalm-7b", "pandalm_result", lambda v: _HUMAN.get(label_int(v))),
    ):
        if kind in found:
            judges_read.append(rater)
            _judge_rows(*found[kind], rater, field, parse, base_of, rows, notes)
    if not judges_read:
        notes.append("No judge file was given: only the human labels were read.")

    order = {i: n for n, i in enumerate(ids)}
    frame = pd.DataFrame(rows)
    if "invalid" in frame.columns:
        if frame["invalid"].eq(True).any():
            frame["invalid"] = frame["invalid"].eq(True)
        else:
            frame = frame.drop(columns="invalid")
    frame["_o"] = frame["item_id"].map(order)
    frame = frame.sort_values("_o", kind="stable").drop(columns="_o")
    source = (f"PandaLM test set: {plural(len(ids), 'item')}, {plural(len(annot_keys), 'annotator')}"
              + (f"; judges: {', '.join(judges_read)}" if judges_read else ""))
    return PresetResult(columns.COMPARISONS, finish(frame, columns.COMPARISONS), source, tuple(notes))
