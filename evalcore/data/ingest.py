"""From files to a validated canonical table: the one pipeline the CLI and the app share.

``load`` runs: preset reader *or* (:func:`evalcore.data.io.read_table` -> column mapping
-> optional wide-to-long) -> :func:`evalcore.data.validation.validate`. :func:`ingest_frame` runs the
part after reading, so the app can re-map an upload without reading it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import columns
from . import io
from .categories import label_kinds
from .codes import shared_codes
from .mapping import apply_mapping, look_alikes, suggest_mapping
from .raters import judge_name_match, looks_like_judge
from .strings import ROW
from .summary import Summary, summarize
from .validation import keep_extra_columns, rater_kinds, validate
from .wide import WideSpec, suggest_wide, wide_to_long
from ..errors import DataError


@dataclass(frozen=True)
class Ingested:
    """A validated table and how it was obtained.

    Attributes
    ----------
    table
        ``ratings`` or ``comparisons``.
    frame
        The canonical table.
    source
        What was read (file names, preset).
    preset
        The preset used, if any.
    mapping
        ``{user column: canonical}`` applied (empty for presets).
    wide
        The wide layout used, if any.
    notes
        Things the analyst should know (rows left out, formulas neutralised, ...).
    """

    table: str
    frame: pd.DataFrame
    source: str
    preset: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    wide: WideSpec | None = None
    notes: tuple[str, ...] = ()

    def summary(self) -> Summary:
        return summarize(self.frame, table=self.table)


def _to_long(raw: pd.DataFrame, *, file: str, mapping: Mapping[str, str] | None, table: str | None,
             wide: WideSpec | None, auto: bool) -> tuple[pd.DataFrame, dict, WideSpec | None,
                                                              str | None, tuple[str, ...]]:
    """The user's table mapped (and reshaped when wide): ``(long, mapping, wide, table, notes)``."""
    full = dict(suggest_mapping(raw.columns, table=table)) if auto else {}
    if mapping:
        # A user's choice for a column replaces the guess, and frees the target it takes.
        for src, dst in mapping.items():
            for k in [k for k, v in full.items() if v == dst or k == src]:
                full.pop(k)
        full.update({k: v for k, v in mapping.items() if v})
    notes: tuple[str, ...] = tuple(raw.attrs.get("notes", ()))
    if wide is None and auto:  # before the extra columns are left out: a wide file's raters are not extras
        wide = suggest_wide(raw, full)
    rater_cols = set(wide.human_columns) | set(wide.judge_columns) if wide is not None else set()
    keep, extra_note = keep_extra_columns(raw.columns, used=set(full) | rater_cols, file=file)
    rows = io.row_numbers(raw)
    if len(keep) < raw.shape[1]:  # thousands of columns: leave the extra ones out before any copy
        kept = set(keep)
        raw = raw.iloc[:, [i for i, c in enumerate(map(str, raw.columns)) if c in kept]]
        if wide is not None:
            wide = replace(wide, id_columns=tuple(c for c in wide.id_columns if c in kept))
        notes += tuple(extra_note)
    base = raw.copy()
    base[ROW] = rows
    if not auto:
        # The mapping is the whole truth: a column named like a canonical one that the
        # user left unmapped (e.g. set 'score' to "none") must not act as that column.
        canon = set(columns.column_names(table)) if table else (
            set(columns.column_names(columns.RATINGS)) | set(columns.column_names(columns.COMPARISONS)))
        raters = set(wide.human_columns) | set(wide.judge_columns) if wide is not None else set()
        if "scale" not in map(str, raw.columns):
            canon.discard("category")  # alone, a column of the user's (suggest_mapping): kept as a segment
        stray = [c for c in map(str, raw.columns) if c in canon and c not in full and c not in raters]
        if stray:
            base = base.drop(columns=stray)
            if wide is not None:
                wide = replace(wide, id_columns=tuple(c for c in wide.id_columns if c not in stray))
            notes += (f"{file}: column(s) {', '.join(repr(c) for c in stray)} were not mapped and were left out.",)
    # A column named like one the analyst mapped but for case ('Score' beside the chosen 'score') is left out:
    # the mapping said which one holds the data. Without that choice, validation asks for it.
    chosen = {v for v in (full if not auto else mapping or {}).values() if v}
    twins = {c: t for c, t in look_alikes(base.columns, chosen).items() if c not in full and c not in rater_cols}
    if twins:
        base = base.drop(columns=list(twins))
        if wide is not None:
            wide = replace(wide, id_columns=tuple(c for c in wide.id_columns if c not in twins))
        used = ", ".join(f"'{k}'" for k, v in full.items() if v in twins.values())
        notes += (f"{file}: column(s) {', '.join(repr(c) for c in twins)} look like the mapped {used} and were "
                  "left out.",)
    if wide is not None:
        long = wide_to_long(base, wide, mapping=full, file=file)
        if table is None:
            table = "comparisons" if wide.value == "winner" else "ratings"
    else:
        long = apply_mapping(base, full, file=file)
    return long, full, wide, table, notes


def _set_kinds(long: pd.DataFrame, judge_raters: Sequence[str] | None, auto: bool, file: str) -> tuple[str, ...]:
    """A ``rater_kind`` column for a table without one, from ``judge_raters`` or the names; the note."""
    names = [str(r) for r in pd.unique(long["rater"].dropna())]
    guessed = judge_raters is None and auto
    notes: tuple[str, ...] = ()
    if guessed:
        judge_raters = guess_judges(names)
        notes = (f"{file} has no rater_kind column: {len(judge_raters)} rater(s) whose names look like "
                 f"models were taken as judges ({', '.join(judge_raters[:5]) or 'none'}), the other "
                 f"{len(names) - len(judge_raters)} as humans.",)
    if judge_raters is None:
        return notes
    judges = {str(j).strip() for j in judge_raters}
    is_judge = long["rater"].astype("string").str.strip().isin(judges).fillna(False).to_numpy()
    long["rater_kind"] = np.where(is_judge, "judge", "human")
    named = [r for r in names if r.strip()]
    if named and (is_judge.all() or not is_judge.any()):
        lacking = "human" if is_judge.all() else "judge"
        raise DataError(
            f"there are no {lacking} rows: the file has no rater_kind column and "
            + ((f"no rater name looks like an LLM judge ({', '.join(named[:5])})" if guessed
                else "no rater was marked as a judge") if lacking == "judge"
               else f"every rater was taken as a judge ({', '.join(named[:5])})"),
            file=file, column="rater",
            fix="say which raters are LLM judges (CLI: --judge-rater RATER, repeatable; app: the judge "
                "picker), or add a rater_kind column with 'human' or 'judge' on every row",
        )
    return notes


def ingest_frame(
    raw: pd.DataFrame,
    *,
    file: str,
    mapping: Mapping[str, str] | None = None,
    table: str | None = None,
    wide: WideSpec | None = None,
    judge_raters: Sequence[str] | None = None,
    auto: bool = True,
    scale: str | Mapping[str, str] | None = None,
    order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None,
) -> Ingested:
    """Map, reshape and validate a table read with :func:`evalcore.data.io.read_table`.

    Parameters
    ----------
    raw
        The file's table with its own column names.
    file
        Name for messages.
    mapping
        ``{user column: canonical}``; with ``auto`` these override the suggestions of
        :func:`evalcore.data.mapping.suggest_mapping`, without it they are used alone.
    table
        Force ``ratings`` or ``comparisons``; guessed from the columns otherwise.
    wide
        Read one column per annotator/judge (see :class:`evalcore.data.wide.WideSpec`);
        with ``auto`` and no rater/score column, a wide layout is guessed.
    judge_raters
        For a file with a ``rater`` but no ``rater_kind`` column: the raters that are
        LLM judges (the others are humans). With ``auto`` and no list, raters whose
        names look like models (:func:`evalcore.data.raters.looks_like_judge`) are taken
        as judges, and a note says so. :func:`rater_roles` shows that classification
        before import; the analyst's choice comes back here as ``judge_raters``.
    scale, order
        Ratings: the scale of each criterion and the order of text labels
        (:func:`evalcore.data.validation.validate`); by default text labels are nominal categories and numbers
        ordinal.
    """
    long, full, wide, table, notes = _to_long(raw, file=file, mapping=mapping, table=table, wide=wide, auto=auto)
    if "rater_kind" not in long.columns and "rater" in long.columns:
        notes += _set_kinds(long, judge_raters, auto, file)
    # CSV, TSV and Excel cannot tell an empty cell from a missing one: a blank text cell is an empty output.
    checked = validate(long, table=table, file=file, blank_text=raw.attrs.get("format") in ("csv", "tsv", "excel"),
                       scale=scale, order=order)
    notes += checked.notes
    return Ingested(table=checked.table, frame=checked.frame, source=file, mapping=full, wide=wide, notes=notes)


#: The columns of :func:`rater_roles`.
ROLE_COLUMNS = ("rater", "rows", "role", "reason")


def _roles(names: list[str], long: pd.DataFrame, keep: pd.Series, rater: pd.Series, wide, judge_raters,
           auto: bool) -> list[tuple[str, str | None, str]]:
    """``(rater, role, reason)`` for each name (see :func:`rater_roles`)."""
    if "rater_kind" in long.columns:
        kind = rater_kinds(long.loc[keep, "rater_kind"])
        first = kind.groupby(rater.to_numpy(), sort=False).first()
        role = {n: (None if pd.isna(first.get(n)) else str(first.get(n))) for n in names}
        if wide is None:
            return [(n, role[n], "rater_kind column") for n in names]
        return [(n, role[n], "wide layout: judge column" if role[n] == columns.JUDGE
                 else "wide layout: annotator column") for n in names]
    if judge_raters is not None:
        chosen = {str(j).strip() for j in judge_raters}
        return [(n, columns.JUDGE, "chosen: judge") if n in chosen else (n, columns.HUMAN, "chosen: human")
                for n in names]
    hits = {n: judge_name_match(n) if auto else None for n in names}
    return [(n, columns.JUDGE, f"name looks like a model: matched '{hits[n]}'") if hits[n]
            else (n, columns.HUMAN, "default: human") for n in names]


def rater_roles(
    raw: pd.DataFrame,
    mapping: Mapping[str, str] | None = None,
    *,
    table: str | None = None,
    wide: WideSpec | None = None,
    judge_raters: Sequence[str] | None = None,
    auto: bool = True,
    file: str = "the file",
) -> pd.DataFrame:
    """Which raters will be taken as judges and which as humans, and why: the preview before import.

    Takes the arguments of :func:`ingest_frame` and applies the same mapping and wide layout,
    but validates nothing, so that the app can show the classification for the analyst to
    confirm or change before importing. The analyst's choice goes back to :func:`ingest_frame`
    (or :func:`load`) as ``judge_raters``, the list of the judges.

    Returns
    -------
    pandas.DataFrame
        One row per rater, in order of first appearance: ``rater``, ``rows`` (its judgments),
        ``role`` (``'judge'`` or ``'human'``; None where a ``rater_kind`` value is neither) and
        ``reason``: ``'rater_kind column'``, ``'wide layout: judge column'`` or ``'wide layout:
        annotator column'``, ``'chosen: judge'`` or ``'chosen: human'`` (from ``judge_raters``),
        ``"name looks like a model: matched 'X'"`` or ``'default: human'``. Empty, with these
        columns, while no column is mapped to ``rater``.

    Examples
    --------
    >>> raw = pd.DataFrame({"item": [1, 1, 1, 2], "annotator": ["alice", "prometheus-7b", "Phil", "alice"],
    ...                     "score": [4, 5, 4, 3]})
    >>> rater_roles(raw)[["rater", "rows", "role"]].to_dict("list")
    {'rater': ['alice', 'prometheus-7b', 'Phil'], 'rows': [2, 1, 1], 'role': ['human', 'judge', 'human']}
    >>> rater_roles(raw)["reason"].tolist()
    ['default: human', "name looks like a model: matched 'prometheus'", 'default: human']
    """
    long, _, wide, _, _ = _to_long(raw, file=file, mapping=mapping, table=table, wide=wide, auto=auto)
    if "rater" not in long.columns:
        return pd.DataFrame(columns=list(ROLE_COLUMNS))
    rater = long["rater"].astype("string").str.strip()
    keep = (rater.notna() & (rater != "")).fillna(False)
    rater = rater[keep]
    counts = rater.value_counts(sort=False)
    names = [str(n) for n in pd.unique(rater)]
    out = _roles(names, long, keep, rater, wide, judge_raters, auto)
    return pd.DataFrame([{"rater": n, "rows": int(counts[n]), "role": r, "reason": why} for n, r, why in out],
                        columns=list(ROLE_COLUMNS))


def label_preview(
    raw: pd.DataFrame,
    mapping: Mapping[str, str] | None = None,
    *,
    table: str | None = None,
    wide: WideSpec | None = None,
    auto: bool = True,
    file: str = "the file",
) -> pd.DataFrame:
    """What each criterion's labels are (numbers, text, both), before import: where the app offers a scale and
    an order for each criterion.

    Takes the arguments of :func:`ingest_frame` and applies the same mapping and wide layout, but validates
    nothing (a criterion mixing numbers and text is listed, so that it can be declared nominal). The
    analyst's choices go back to :func:`ingest_frame` as ``scale`` and ``order``.

    Returns
    -------
    pandas.DataFrame
        :func:`evalcore.data.categories.label_kinds` of the mapped table; empty while no column is mapped to
        ``score`` or the table is not ratings.

    Examples
    --------
    >>> raw = pd.DataFrame({"item": [1, 1, 2, 2], "annotator": ["ann", "gpt-4"] * 2,
    ...                     "label": ["yes", "no", "no", "Yes"]})
    >>> label_preview(raw)[["criterion", "labels", "text_labels"]].values.tolist()
    [['overall', 'text', ['yes', 'no', 'Yes']]]
    """
    long, _, _, table, _ = _to_long(raw, file=file, mapping=mapping, table=table, wide=wide, auto=auto)
    if table == columns.COMPARISONS or "score" not in long.columns:
        return label_kinds(long.iloc[:0])
    return label_kinds(long)


def guess_judges(raters: Sequence[str]) -> list[str]:
    """Raters whose names look like LLM judges (:func:`evalcore.data.raters.looks_like_judge`)."""
    return [r for r in raters if looks_like_judge(r)]


def load(
    paths: str | Path | Sequence[str | Path],
    *,
    preset: str | None = None,
    mapping: Mapping[str, str] | None = None,
    table: str | None = None,
    sheet: str | None = None,
    delimiter: str | None = None,
    wide: WideSpec | None = None,
    names: Sequence[str] | None = None,
    judge_raters: Sequence[str] | None = None,
    preset_options: Mapping[str, object] | None = None,
    scale: str | Mapping[str, str] | None = None,
    order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None,
) -> Ingested:
    """Read files into a validated canonical table.

    Parameters
    ----------
    paths
        One file, or several files/folders for a preset (e.g. PandaLM's three JSON files).
    preset
        A name from :data:`evalcore.data.presets.PRESETS`, or ``"auto"`` to detect one.
    mapping, table, sheet, delimiter, wide
        See :func:`ingest_frame` and :func:`evalcore.data.io.read_table`.
    names
        Display names for the files (the app passes the uploaded file names).
    judge_raters
        The raters that are judges, when the file has no ``rater_kind`` column (default: told by their names,
        :func:`evalcore.data.raters.looks_like_judge`).
    preset_options
        Keyword options of the preset's reader.
    scale
        Ratings: the scale of each criterion, ``{criterion: 'nominal' | 'ordinal' | 'interval'}`` (``'*'``
        for every criterion), or one scale for all. By default text labels are nominal categories, kept
        as written in the ``category`` column, and numbers are ordinal (:mod:`evalcore.data.scales`).
    order
        Ratings: the order of a criterion's text labels, lowest first, ``{criterion: ['bad', 'ok', 'good']}``
        or ``{criterion: 'bad,ok,good'}``: the criterion is then ordinal, its scores the positions 1..k.

    Returns
    -------
    Ingested
        The validated canonical table (``frame``; :func:`read` returns it alone), which table it is
        (``table``: ratings or comparisons), its ``source``, the ``preset`` and ``mapping`` used, and ``notes``
        about the data.

    Examples
    --------
    >>> ing = load("sample_data/comparisons_pairwise.csv")
    >>> ing.table, len(ing.frame)
    ('comparisons', 7491)
    """
    from . import presets as _presets

    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise DataError("no file was given", fix="choose a file to import")
    for p in paths:
        if not p.exists():
            raise DataError("file not found", file=str(p), fix="check the path")
    label = ", ".join(names or [p.name for p in paths])
    if preset == "auto":
        preset = _presets.detect_preset(paths)
    if preset:
        res = _presets.read_preset(preset, paths, **dict(preset_options or {}))
        frame = res.frame
        if mapping:
            frame = apply_mapping(frame, mapping, file=label)
        checked = validate(frame, table=res.table, file=label, scale=scale, order=order)
        return Ingested(table=checked.table, frame=checked.frame, source=res.source, preset=preset,
                        mapping=dict(mapping or {}), notes=tuple(res.notes) + checked.notes)
    if len(paths) > 1:
        raise DataError(f"{len(paths)} files were given without a preset", file=label,
                        fix="import one file at a time, or choose the preset that joins them (e.g. pandalm)")
    path = paths[0]
    if path.is_dir():
        guess = _presets.detect_preset(paths)
        raise DataError("is a folder", file=str(path),
                        fix=(f"use --preset {guess}" if guess else "give a file, or a --preset that reads folders"))
    with shared_codes():  # columns the reader factorised (files.prefetch) serve validation
        raw = io.read_table(path, name=(names[0] if names else None), sheet=sheet, delimiter=delimiter)
        return ingest_frame(raw, file=raw.attrs["file"], mapping=mapping, table=table, wide=wide,
                            judge_raters=judge_raters, scale=scale, order=order)


def read(paths: str | Path | Sequence[str | Path], **options) -> pd.DataFrame:
    """Read files into the validated canonical table itself: :func:`load`'s ``frame``.

    Parameters
    ----------
    paths
        One file (CSV, TSV, Excel, JSON, JSON Lines, Parquet), or several files or folders for a preset.
    **options
        :func:`load`'s keyword options: ``preset`` (default ``"auto"``: a known format such as HANNA's or
        LLMBar's is recognised, as the command line does; ``None`` reads a plain table), ``mapping`` (the file's
        column -> the canonical column),
        ``table``, ``sheet``, ``delimiter``, ``wide``, ``names``, ``judge_raters``, ``preset_options``, and for
        ratings ``scale`` and ``order`` (``scale={'stance': 'nominal'}``, ``order={'quality': 'bad,ok,good'}``).

    Returns
    -------
    pandas.DataFrame
        A ratings or a comparisons table with the canonical columns of :mod:`evalcore.columns`, ready for
        every analysis. What :func:`load` also tells (the table's kind, its source, notes about the data)
        is in :class:`Ingested`.

    Examples
    --------
    >>> comparisons = read("sample_data/comparisons_pairwise.csv")
    >>> comparisons.shape
    (7491, 15)
    >>> comparisons.columns[:6].tolist()
    ['item_id', 'system_a', 'system_b', 'rater', 'rater_kind', 'winner']
    """
    return load(paths, **{"preset": "auto", **options}).frame


SAMPLE_FILES = {"ratings": "ratings_multilingual.csv", "comparisons": "comparisons_pairwise.csv"}


def sample_dir() -> Path:
    """The folder of the bundled sample data (``sample_data/`` next to the package)."""
    return Path(__file__).resolve().parents[2] / "sample_data"


def load_samples() -> dict[str, Ingested]:
    """Both sample tables, validated: the one-click demo.

    Read from ``sample_data/``; when the package is installed without that folder, the
    same data is generated in memory by :mod:`evalcore.data.sample` (same seed).
    """
    out = {}
    folder = sample_dir()
    for kind, fname in SAMPLE_FILES.items():
        path = folder / fname
        if path.exists():
            out[kind] = load(path, preset=None, table=kind)
        else:
            from . import sample

            frame = sample.make_ratings() if kind == "ratings" else sample.make_comparisons()
            checked = validate(frame, table=kind, file=fname)
            out[kind] = Ingested(table=kind, frame=checked.frame, source=f"{fname} (generated)",
                                 notes=checked.notes)
    return out
