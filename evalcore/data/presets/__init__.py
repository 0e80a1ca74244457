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
This package never imports streamlit.

One module per format (:mod:`.llmbar`, :mod:`.pandalm`, :mod:`.hanna`, :mod:`.crowdkit`,
:mod:`.bayescal`), the shared types and file helpers in :mod:`.common`, and here the registry
:data:`PRESETS`, :func:`read_preset` and :func:`detect_preset`.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any


from ... import columns
from ...errors import DataError
from .. import io
from .bayescal import read_bayescal
from .common import Preset, PresetResult, as_path_list, describe_paths, expand
from .crowdkit import read_crowdkit
from .hanna import read_hanna
from .llmbar import read_llmbar
from .pandalm import read_pandalm

# Only what this module defines: each preset's reader and the shared types are imported from their own module.
__all__ = ["PRESETS", "detect_preset", "read_preset"]


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
        with _plain_files(paths) as plain:
            return preset.read(plain, **options)
    except DataError:
        raise
    except RecursionError:  # JSON nested deeper than Python's parser (or a later walk over it) goes
        raise io.too_deep(describe_paths(paths)) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, UnicodeDecodeError) as e:
        # Safety net: a file shaped in a way the preset did not foresee.
        raise DataError(
            f"could not be read as {preset.title} ({type(e).__name__}: {e})",
            file=describe_paths(paths),
            fix=f"check that the file is what the {name} preset expects: {preset.accepts}",
        ) from e


@contextlib.contextmanager
def _plain_files(paths: Any):
    """``paths`` with each compressed file (gzip, zstd, bzip2) replaced by its content, written to a temporary
    folder under its inner name (``hanna.csv.gz`` -> ``hanna.csv``): presets recognise and read files by name
    and header. Decompression stops at the size limit (:func:`evalcore.data.files.decompress`).

    A zip archive of a folder (``llmbar.zip``) becomes that folder, unpacked by
    :func:`evalcore.data.files.unpack_zip` (size limit on the unpacked data, no member outside the folder), so
    that a preset reads it as it reads the folder: LLMBar's judge and subset come from the paths inside.
    Messages name what the user gave (``llmbar.zip/Natural/.../result.json``), not the temporary folder."""
    from .. import files

    try:
        given = as_path_list(paths)
    except DataError:
        yield paths
        return
    with tempfile.TemporaryDirectory(prefix="evalcore-") as tmp:
        out = []
        for k, p in enumerate(given):
            if p.is_file():
                with open(p, "rb") as fh:
                    head = fh.read(16)
                if files.compression(head, p.name):
                    target = Path(tmp) / files.inner_name(p.name)
                    target.write_bytes(files.decompress(p.read_bytes(), name=p.name))
                    p = target
                elif files.is_zip_archive(p):
                    # A folder per archive, named as the archive: 'llmbar.zip/Natural/...' in messages.
                    p = files.unpack_zip(p, Path(tmp) / f"zip{k}" / p.name, name=p.name)
            out.append(p)
        try:
            yield out
        except DataError as exc:
            raise _unprefixed(exc, [str(Path(tmp) / f"zip{k}") + "/" for k in range(len(given))]) from None


def _unprefixed(exc: DataError, prefixes: list[str]) -> DataError:
    """``exc`` with the temporary folders of unpacked archives taken out of its text."""
    def clean(text: str | None) -> str | None:
        if not text:
            return text
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    if not any(p in " ".join(filter(None, (exc.problem, exc.file, exc.fix))) for p in prefixes):
        return exc
    return type(exc)(clean(exc.problem) or "", file=clean(exc.file), column=exc.column, row=exc.row,
                     fix=clean(exc.fix))


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
            # The header line alone (pandas' nrows=0 builds a column per name: seconds for 20,000 names).
            with open(path, "rb") as fh:
                line = fh.readline(1 << 22).decode("utf-8-sig").rstrip("\r\n")
            cols = next(csv.reader([line], delimiter=sep), [])
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
    votes: Counter[str] = Counter()
    with _plain_files(paths) as plain:
        try:
            files = [p for p, _ in expand(plain)]
        except DataError:
            return None
        for path in files[:2000]:
            kind = _detect_one(path)
            if kind:
                votes[kind] += 1
    if not votes:
        return None
    order = list(PRESETS)
    return max(votes, key=lambda k: (votes[k], -order.index(k)))
