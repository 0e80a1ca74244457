"""Canonical tables: column mapping, wide-to-long, validation, and what the data unlocks.

The flow from a user's table to a canonical one is::

    raw = io.read_table(path)                      # any format, any column names
    mapping = suggest_mapping(raw.columns)         # shown to the user, who may change it
    frame = apply_mapping(raw, mapping, file=...)  # canonical names
    # or, for one column per annotator/judge:
    frame = wide_to_long(raw, id_columns=..., human_columns=..., judge_columns=...)
    checked = validate(frame, table=..., file=...) # canonical types, or DataError
    summarize(checked.frame, table=...)            # rows, raters, what the data unlocks

Every problem a user can cause raises :class:`~evalcore.errors.DataError` with a
message that names the file, the row or column, and the fix.
"""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..columns import (
    COLUMNS,
    COMPARISONS,
    HUMAN,
    JUDGE,
    RATINGS,
    TABLES,
    column_names,
    required_columns,
)
from ..errors import DataError
from . import raters as _raters
from .files import NA_VALUES
from .codes import data_of, factorize, memo_get, memo_put, remember, same_codes, shared_codes  # noqa: F401

ROW = "__row__"  # spreadsheet row number of each record, kept through reshaping for messages

# Names users give to canonical columns (compared after lower-casing and squashing
# punctuation to "_"). Only unambiguous synonyms: anything doubtful is left for the user.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "item_id": ("item_id", "item", "id", "task", "task_id", "example_id", "sample_id", "question_id",
                "prompt_id", "doc_id", "doc", "document", "document_id", "instance_id", "idx", "uid", "story_id",
                "text_id", "segment_id", "conversation_id", "dialogue_id"),
    "rater": ("rater", "worker", "annotator", "annotator_id", "worker_id", "rater_id", "judge",
              "evaluator", "grader", "labeler", "labeller", "model", "judge_model"),
    "rater_kind": ("rater_kind", "rater_type", "kind", "source", "annotator_type", "worker_type",
                   "is_human"),
    "criterion": ("criterion", "criteria", "metric", "aspect", "dimension", "attribute", "question"),
    "score": ("score", "label", "rating", "grade", "value", "judgment", "judgement"),
    "sample": ("sample", "sample_idx", "sample_index", "repeat", "repetition", "run", "trial", "seed"),
    "position": ("position", "criterion_position", "order", "criterion_order", "rank_in_prompt"),
    "perplexity": ("perplexity", "ppl"),
    "text": ("text", "output", "response", "generation", "completion", "hypothesis"),
    "language": ("language", "lang", "locale", "language_code", "lang_code"),
    "task": ("task_name", "task_type", "category", "domain"),
    "system_a": ("system_a", "model_a", "generator_a", "generator_1", "system_1", "model_1"),
    "system_b": ("system_b", "model_b", "generator_b", "generator_2", "system_2", "model_2"),
    "winner": ("winner", "preference", "preferred", "verdict", "choice", "better"),
    "swapped": ("swapped", "swap", "is_swapped", "reversed", "flipped"),
    "prob_a": ("prob_a", "p_a", "prob_a_default"),
    "prob_a_swap_position": ("prob_a_swap_position", "p_a_swap_position", "prob_a_swap_pos"),
    "prob_a_swap_id": ("prob_a_swap_id", "p_a_swap_id"),
    "score_a": ("score_a", "score_1", "judge_score_a"),
    "score_b": ("score_b", "score_2", "judge_score_b"),
    "superficial_a": ("superficial_a", "superficial_1", "length_a", "len_a"),
    "superficial_b": ("superficial_b", "superficial_2", "length_b", "len_b"),
    "subset": ("subset", "split", "partition"),
    "text_a": ("text_a", "output_a", "response_a", "output_1", "response1"),
    "text_b": ("text_b", "output_b", "response_b", "output_2", "response2"),
    # After item_id, rater and rater_kind, which keep a lone 'doc_id', 'model' or 'source' column.
    "system": ("system", "model", "generator", "system_id", "model_name"),
    "input_id": ("input_id", "doc_id", "prompt_id", "source_id", "document_id", "source"),
}

_KIND_WORDS = {
    HUMAN: ("human", "humans", "annotator", "annotators", "crowd", "crowdworker", "expert", "person",
            "people", "mturk", "native", "rater_human", "gold", "reference", "true", "yes", "1"),
    JUDGE: ("judge", "judges", "llm", "model", "ai", "machine", "auto", "automatic", "gpt", "evaluator",
            "llm_judge", "false", "no", "0"),
}
_WINNER_WORDS = {
    "a": ("a", "model_a", "output_a", "response_a", "system_a", "first", "left", "1", "output_1",
          "response_1", "output (a)"),
    "b": ("b", "model_b", "output_b", "response_b", "system_b", "second", "right", "2", "output_2",
          "response_2", "output (b)"),
    "tie": ("tie", "draw", "equal", "both", "neither", "same", "tie (bothbad)", "tie_bothbad", "none"),
}
_TRUE = ("true", "t", "yes", "y", "1", "1.0", "swapped")
_FALSE = ("false", "f", "no", "n", "0", "0.0", "", "original", "default")

# A judge-looking rater name, used to guess which wide columns are judges: the one rule of .raters.

_FORMULA = re.compile(r"^\s*[=+\-@\t\r]")
_HTML = re.compile(r"<\s*/?\s*[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?>|&[a-zA-Z]+;|&#\d+;")


def _squash(name: object) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


# --------------------------------------------------------------------------- column codes
# Every column is looked at through its codes (evalcore.data.codes): one factorisation per column
# within a shared_codes() block.


def _distinct_pairs(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> np.ndarray:
    """The distinct ``a * nb + b`` of codes ``a`` in [0, na) and ``b`` in [0, nb): counted in a table when it
    is small, hashed otherwise."""
    pair = a.astype(np.int64) * nb + b
    if na * nb <= 4 * len(pair) + 1024:
        return np.flatnonzero(np.bincount(pair, minlength=na * nb))
    return pd.unique(pair)


def _is_text(s: pd.Series) -> bool:
    """A string column (CSV/TSV cells): its distinct values stand for it in string operations.

    Object columns (JSON, Excel) are left to the element-wise path: factorising would merge
    values such as ``1`` and ``True`` whose text differs.
    """
    return isinstance(s.dtype, pd.StringDtype)


def _by_code(values: np.ndarray, codes: np.ndarray, missing: object) -> np.ndarray:
    """``values[codes]`` with ``missing`` where the code is -1."""
    return np.append(values, np.asarray([missing], dtype=values.dtype))[codes]


def _take_text(uniques: pd.Series, codes: np.ndarray, index: pd.Index) -> pd.Series:
    """The column whose row i is ``uniques[codes[i]]`` (missing for -1), with ``uniques``'s dtype."""
    return pd.Series(uniques.array.take(codes, allow_fill=True), index=index, name=uniques.name)


def _strip_text(s: pd.Series) -> pd.Series:
    """``s.astype("string").str.strip()``, computed on the distinct values of a string column."""
    if not _is_text(s):
        return s.astype("string").str.strip()
    codes, uniq = factorize(s)
    u = pd.Series(uniq.array).astype("string")
    stripped = u.str.strip()
    if bool((stripped == u).all()):  # nothing to strip (the usual case): the column as it is
        return remember(s.astype("string"), codes, pd.Index(stripped.array))
    out = _take_text(stripped, codes, s.index).rename(s.name)
    new, merged = pd.factorize(stripped)  # ' a' and 'a' are one value now
    return remember(out, _by_code(new.astype(codes.dtype), codes, -1), merged)


# --------------------------------------------------------------------------- mapping


def suggest_mapping(columns: Iterable[object], *, table: str | None = None) -> dict[str, str]:
    """Guess which of the user's columns are which canonical column.

    Parameters
    ----------
    columns
        The column names as they are in the user's file.
    table
        Restrict the guesses to this table's columns (``ratings`` or ``comparisons``);
        by default both are considered.

    Returns
    -------
    dict
        ``{user column: canonical name}`` for the columns recognised, each canonical
        name used at most once. An exact canonical name always wins over a synonym.
    """
    targets = set(column_names(table)) if table else set(column_names(RATINGS)) | set(column_names(COMPARISONS))
    cols = [str(c) for c in columns]
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    # Exact canonical names first, so that e.g. an 'item_id' column beats a 'task' synonym.
    for c in cols:
        s = _squash(c)
        if s in targets and s not in taken:
            mapping[c] = s
            taken.add(s)
    for c in cols:
        if c in mapping:
            continue
        s = _squash(c)
        for canon, words in SYNONYMS.items():
            if canon in targets and canon not in taken and s in words:
                mapping[c] = canon
                taken.add(canon)
                break
    return mapping


def detect_table(columns: Iterable[str]) -> str:
    """Which canonical table a frame with these (canonical) columns is.

    A ``winner`` column makes it ``comparisons``; otherwise ``ratings``.
    """
    cols = set(columns)
    return COMPARISONS if "winner" in cols and "score" not in cols else RATINGS


def apply_mapping(
    frame: pd.DataFrame, mapping: Mapping[str, str], *, file: str = "the file"
) -> pd.DataFrame:
    """Rename the user's columns to canonical names.

    Columns not in ``mapping`` are kept under their own names (they may be segments such
    as ``dialect``), unless their name collides with a canonical column that another
    column was mapped to, in which case they are dropped in favour of the mapped one.

    Raises
    ------
    DataError
        If a mapped column is not in the file (with the closest name as a hint), a
        target is not a canonical column, or two columns map to the same target.
    """
    all_canon = set(column_names(RATINGS)) | set(column_names(COMPARISONS))
    present = [str(c) for c in frame.columns]
    seen: dict[str, str] = {}
    for src, dst in mapping.items():
        if src not in present:
            hint = difflib.get_close_matches(src, present, n=1)
            raise DataError(
                f"the mapping names a column '{src}' that is not in the file",
                file=file,
                column=src,
                fix=(f"did you mean '{hint[0]}'? " if hint else "")
                + "use one of the file's columns: " + ", ".join(present[:12]),
            )
        if dst not in all_canon:
            hint = difflib.get_close_matches(dst, sorted(all_canon), n=1)
            raise DataError(
                f"'{dst}' is not a column evalcore knows",
                file=file,
                column=src,
                fix=(f"did you mean '{hint[0]}'? " if hint else "")
                + "map to one of: " + ", ".join(sorted(all_canon)),
            )
        if dst in seen:
            raise DataError(
                f"both '{seen[dst]}' and '{src}' are mapped to '{dst}'",
                file=file,
                column=src,
                fix=f"map only one column to '{dst}'",
            )
        seen[dst] = src
    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    targets = set(mapping.values())
    drop = [c for c in out.columns if c in targets and c not in mapping]
    out = out.drop(columns=drop)
    return out.rename(columns=dict(mapping))


# --------------------------------------------------------------------------- wide to long


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
        s = _squash(c)
        if re.search(r"human|annot|rater|worker|expert|crowd|labell?er|^ann_?\d|^a\d+$", s):
            humans.append(c)
        elif _raters.looks_like_judge(c):
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


# --------------------------------------------------------------------------- validation


#: Most columns besides evalcore's own that a table keeps (as segments, for grouping): a file of thousands of
#: columns (a transposed table, a feature dump) would otherwise slow every check, every page and every copy.
MAX_EXTRA_COLUMNS = 200


def keep_extra_columns(columns: Sequence[object], *, used: Iterable[str] = (), file: str = "the file",
                       limit: int | None = None) -> tuple[list[str], list[str]]:
    """The columns to keep, and the note saying which extra columns were left out.

    Extra columns are those that are neither canonical (of either table) nor ``used`` (mapped, or a wide
    file's rater columns). The first ``limit`` of them (default :data:`MAX_EXTRA_COLUMNS`), in file order,
    are kept as segments; the others are left out and a note says so.

    >>> keep_extra_columns(["item_id", "a", "b", "c"], limit=2, file="f.csv")[0]
    ['item_id', 'a', 'b']
    """
    limit = MAX_EXTRA_COLUMNS if limit is None else limit
    cols = [str(c) for c in columns]
    known = set(column_names(RATINGS)) | set(column_names(COMPARISONS)) | set(map(str, used)) | {ROW}
    extra = [c for c in cols if c not in known]
    if len(extra) <= limit:
        return cols, []
    dropped = set(extra[limit:])
    shown = ", ".join(f"'{c}'" for c in extra[limit:limit + 3])
    note = (f"{file} has {len(extra):,} columns besides evalcore's own: the first {limit} "
            f"('{extra[0]}' to '{extra[limit - 1]}') are kept as segments, to group results by; the other "
            f"{len(dropped):,} ({shown}, ...) were left out. To keep one of those, map it, or delete the columns "
            "you do not need before importing.")
    return [c for c in cols if c not in dropped], [note]


@dataclass(frozen=True)
class Validated:
    """A canonical table that passed validation, and what the analyst should know about it."""

    table: str
    frame: pd.DataFrame
    notes: tuple[str, ...] = ()


def _row_of(frame: pd.DataFrame, mask: pd.Series) -> int | None:
    idx = np.flatnonzero(np.asarray(mask, dtype=bool))
    if len(idx) == 0:
        return None
    if ROW in frame.columns:
        return int(frame[ROW].iloc[idx[0]])
    return int(idx[0]) + 2


def _blank(s: pd.Series) -> pd.Series:
    """Empty cells: missing, or only whitespace."""
    if not _is_text(s):
        return s.isna() | (s.astype("string").str.strip() == "").fillna(True)
    codes, uniq = factorize(s)
    blank = (pd.Series(uniq.array).astype("string").str.strip() == "").fillna(True).to_numpy(dtype=bool)
    return pd.Series(_by_code(blank, codes, True), index=s.index)


def _norm_words(s: pd.Series, words: Mapping[str, Sequence[str]]) -> pd.Series:
    lookup = {w: k for k, ws in words.items() for w in ws}
    if _is_text(s):
        # Map distinct values only: the column may have millions of rows but a handful of values.
        codes, uniq = factorize(s)
        mapped = _map_words(pd.Series(uniq.array, dtype=object), lookup)
        if mapped.dtype == s.dtype and not mapped.isna().any() and (mapped.to_numpy() == uniq.to_numpy()).all():
            return s.rename(s.name)  # already the canonical words (the usual case): nothing to map
        new, merged = pd.factorize(mapped)  # 'Human' and 'human' are one value now
        out = _take_text(mapped, codes, s.index).rename(s.name)
        return remember(out, _by_code(new.astype(codes.dtype), codes, -1), merged)
    return _map_words(s, lookup)


def _map_words(s: pd.Series, lookup: Mapping[str, str]) -> pd.Series:
    key = s.astype("string").str.strip().str.lower()
    uniq = pd.Series(pd.unique(key.dropna()))
    # A number read as a float (Excel, Parquet, JSON with gaps) reads '1.0': look up '1'.
    table = {u: lookup.get(u, lookup.get(re.sub(r"^([+-]?\d+)\.0+$", r"\1", u))) for u in uniq}
    return key.map(table)


_DECIMAL_COMMA = r"[+-]?\d+,\d+"
_THOUSANDS = r"[+-]?[1-9]\d{0,2},\d{3}"


def decimal_comma(values: Iterable[object]) -> bool:
    """Whether text numbers use a decimal comma: the one rule for every numeric column.

    Yes when some value has a comma, none has a point, and every value with a comma is digits,
    one comma, digits (``'4,0'``, ``'-3,25'``): then ``','`` is read as ``'.'`` in every value,
    whatever the mix with plain integers. No when any value uses a point (``'1.5'`` beside
    ``'1,5'`` is ambiguous, and is refused cell by cell). Values that all look like a thousands
    separator (``'1,000'``, ``'12,500'``: 1-3 digits, not starting with 0, a comma, three digits)
    could mean either, and raise :class:`ValueError` for the caller to explain.

    >>> decimal_comma(["4,0", "3,5", "4"]), decimal_comma(["4", "3.5"]), decimal_comma(["0,125", "2"])
    (True, False, True)
    >>> decimal_comma(["1,5", "2.5"]), decimal_comma(["1,000,000"])
    (False, False)
    >>> decimal_comma(["1,000", "2,500"])
    Traceback (most recent call last):
    ...
    ValueError: 1,000
    """
    uniq = pd.Series(pd.unique(pd.Series(list(values), dtype="string").str.strip().dropna()), dtype="string")
    comma = uniq[uniq.str.contains(",", regex=False)]
    if comma.empty or uniq.str.contains(".", regex=False).any() or not comma.str.fullmatch(_DECIMAL_COMMA).all():
        return False
    if comma.str.fullmatch(_THOUSANDS).all():
        raise ValueError(str(comma.iloc[0]))
    return True


def _numeric_text(raw: pd.Series, *, file: str, col: str, notes: list[str] | None) -> pd.Series | None:
    """A string column as floats by :func:`decimal_comma`'s rule, computed on its distinct values.

    None when a value is not a number or the comma is ambiguous: the element-wise path in
    :func:`_numeric` then finds the row and words the message.
    """
    codes, uniq = factorize(raw)
    text = pd.Series(uniq.array).astype("string").str.strip()
    try:
        comma = decimal_comma(pd.unique(text.dropna()))
    except ValueError:
        return None
    if comma:
        commas = text[text.str.contains(",", regex=False).fillna(False)]
        plain = commas[~commas.str.fullmatch(_THOUSANDS)]
        example = (plain if len(plain) else commas).iloc[0]
        text = text.str.replace(",", ".", regex=False)
    values = pd.to_numeric(text, errors="coerce").astype(float).to_numpy()
    blank = (text.str.strip() == "").fillna(True).to_numpy(dtype=bool)
    if (np.isnan(values) & ~blank).any():
        return None
    if comma and notes is not None:
        notes.append(f"{file}, column '{col}': decimal commas were read as decimal points "
                     f"('{example}' is {example.replace(',', '.')}).")
    return pd.Series(_by_code(values, codes, np.nan), index=raw.index, name=raw.name)


def _numeric(
    frame: pd.DataFrame, col: str, *, file: str, what: str, fix: str, allow_missing: bool = True,
    labels_fix: str | None = None, notes: list[str] | None = None,
) -> pd.Series:
    """``frame[col]`` as floats (empty cells NaN), text read by :func:`decimal_comma`'s rule.

    With ``labels_fix``, a column in which no value is a number gets one message saying it holds
    text labels, with that fix; ``notes`` receives a note when decimal commas were read.
    """
    raw = frame[col]
    if pd.api.types.is_bool_dtype(raw):
        return raw.astype(float)
    fast = _numeric_text(raw, file=file, col=col, notes=notes) if _is_text(raw) else None
    if fast is not None:
        out = fast
    elif pd.api.types.is_numeric_dtype(raw):
        out = raw.astype(float)
    else:
        text = raw.astype("string").str.strip()
        try:
            comma = decimal_comma(pd.unique(text.dropna()))
        except ValueError as e:
            raise DataError(
                f"{what} holds '{e}', which could use the comma as a thousands separator or as a decimal comma",
                file=file, column=col, row=_row_of(frame, (text == str(e)).fillna(False)),
                fix="write plain numbers: 1000 for a thousand, 1.0 or 1,0 for one",
            ) from None
        if comma:
            if notes is not None:
                commas = text[text.str.contains(",", regex=False).fillna(False)]
                plain = commas[~commas.str.fullmatch(_THOUSANDS)]
                example = (plain if len(plain) else commas).iloc[0]
                notes.append(f"{file}, column '{col}': decimal commas were read as decimal points "
                             f"('{example}' is {example.replace(',', '.')}).")
            text = text.str.replace(",", ".", regex=False)
        out = pd.to_numeric(text, errors="coerce").astype(float)
        bad = out.isna() & ~_blank(raw)
        if bad.any() and labels_fix is not None and bad.sum() == (~_blank(raw)).sum():
            levels = ", ".join(f"'{v}'" for v in pd.unique(text[bad])[:5])
            raise DataError(f"{what} holds text labels ({levels}), not numbers", file=file, column=col,
                            row=_row_of(frame, bad), fix=labels_fix)
        if bad.any():
            first = np.flatnonzero(bad.to_numpy())[0]
            value = str(raw.iloc[first])[:40]
            n_bad = int(bad.sum())
            raise DataError(
                f"{what} must be a number but is '{value}'"
                + (f" ({n_bad} such rows)" if n_bad > 1 else ""),
                file=file,
                column=col,
                row=_row_of(frame, bad),
                fix=fix,
            )
    if not np.isfinite(out.dropna()).all():
        bad = out.notna() & ~np.isfinite(out.fillna(0))
        raise DataError(
            f"{what} must be a finite number", file=file, column=col, row=_row_of(frame, bad),
            fix="replace infinite values with real numbers or leave the cell empty",
        )
    if not allow_missing and out.isna().any():
        raise DataError(
            f"{what} is empty", file=file, column=col, row=_row_of(frame, out.isna()), fix=fix
        )
    return out


def _excerpt(value: str, limit: int = 40) -> str:
    """A cell quoted in a note: on one line, and cut only between words, with an ellipsis that says it was cut
    (a value cut mid-word or mid-tag reads as a note broken off mid-sentence).

    >>> _excerpt("<p>Resumen: el <b>texto</b> habla de\\nla economía vasca</p>", 30)
    '<p>Resumen: el <b>texto</b>…'
    """
    one = " ".join(value.split())
    if len(one) <= limit:
        return one
    cut = one[:limit].rsplit(" ", 1)[0] if " " in one[:limit] else one[:limit]
    return cut.rstrip() + "…"


def _distinct_text(s: pd.Series) -> pd.Series:
    """The distinct non-missing values of a text column, as strings, in order of first appearance."""
    if _is_text(s):
        return pd.Series(factorize(s)[1].array, dtype="string")
    return pd.Series(pd.unique(s.astype("string").dropna()), dtype="string")


def _text_warnings(frame: pd.DataFrame, *, file: str) -> list[str]:
    """Notes for text cells that start like a spreadsheet formula or hold HTML markup."""
    cols = [c for c in frame.columns if c != ROW and not (
        pd.api.types.is_numeric_dtype(frame[c].dtype) or pd.api.types.is_bool_dtype(frame[c].dtype))]
    if not cols:
        return []
    # One pass over every column's distinct values together (not a few string operations per column,
    # which cost seconds on a file of thousands of columns): only values holding one of the characters
    # can match, and only their columns are looked at closely.
    uniqs = [_distinct_text(frame[c]) for c in cols]
    values = pd.concat(uniqs, ignore_index=True) if len(uniqs) > 1 else uniqs[0]
    owner = np.repeat(np.arange(len(cols)), [len(u) for u in uniqs])
    maybe = values.str.contains(r"[=+\-@\t\r<&]").fillna(False).to_numpy(dtype=bool)
    notes = []
    for k in np.unique(owner[maybe]):
        col, s, uniq = cols[k], frame[cols[k]], uniqs[k]
        # A number like "-1" starts with "-" but is not a formula.
        starts = uniq[uniq.str.contains(r"[=+\-@\t\r]").fillna(False)]
        starts = starts[starts.str.match(_FORMULA).fillna(False)]
        formula = starts[pd.to_numeric(starts, errors="coerce").isna()]
        html = uniq[uniq.str.contains(r"[<&]").fillna(False)]
        html = html[html.str.contains(_HTML).fillna(False)]
        for found, what in ((formula, "formula"), (html, "html")):
            if not len(found):
                continue
            hit = s.astype("string").isin(found).fillna(False)
            n = int(hit.sum())
            row = _row_of(frame, hit)
            example = _excerpt(str(found.iloc[0]))
            if what == "formula":
                notes.append(
                    f"{file}, column '{col}': {n} cell(s) start like a spreadsheet formula (first at row "
                    f"{row}: '{example}'). They are kept as plain text, and CSV downloads prefix them with ' "
                    "so that Excel or Sheets will not run them."
                )
            else:
                notes.append(
                    f"{file}, column '{col}': {n} cell(s) hold HTML markup (first at row {row}: "
                    f"'{example}'). They are shown as plain text and never rendered."
                )
    return notes


def _check_required(df: pd.DataFrame, table: str, file: str) -> None:
    """Every required column is present; a missing one gets a hint (a misspelling, the wide layout)."""
    missing = [c for c in required_columns(table) if c not in df.columns]
    if missing:
        col = missing[0]
        others = [c for c in df.columns if c not in column_names(table) and c != ROW]
        hint = difflib.get_close_matches(col, others, n=1, cutoff=0.6)
        if hint:
            fix = (f"the column '{hint[0]}' looks like a misspelling of '{col}': rename it, "
                   f"or map it with --map {hint[0]}={col} (CLI) or in the column mapping (app)")
        else:
            fix = (f"add a '{col}' column, or map one of your columns to it with --map YOURCOLUMN={col} "
                   "(CLI) or in the column mapping (app)")
            if col in ("rater", "score", "winner") and len(others) >= 2:
                fix += "; if your file has one column per annotator or judge, use the wide layout"
        raise DataError(f"required column '{col}' is missing", file=file, column=col, fix=fix)


def look_alikes(columns: Iterable[object], names: Iterable[str]) -> dict[str, str]:
    """The columns named like one of ``names`` but for case or punctuation, and the name each looks like.

    >>> look_alikes(["score", "Score", "Item ID", "rater"], ["score", "item_id", "rater"])
    {'Score': 'score', 'Item ID': 'item_id'}
    """
    names = set(names)
    return {str(c): _squash(c) for c in columns if str(c) not in names and _squash(c) in names}


def _check_look_alikes(df: pd.DataFrame, table: str, file: str) -> None:
    """No other column is named like a canonical column but for case or punctuation ('Score' beside 'score'):
    which of them holds the data is the analyst's call, and an analysis must not meet the other one."""
    for c, twin in look_alikes(df.columns, [c for c in column_names(table) if c in df.columns]).items():
        if c != ROW:
            raise DataError(
                f"two columns could be the '{twin}' column: '{twin}' and '{c}' (their names differ only in case "
                "or punctuation)",
                file=file, column=c,
                fix=f"map the one that holds the {twin.replace('_', ' ')}s (CLI: --map '{c}={twin}' or --map "
                    f"{twin}={twin}; app: the column mapping) and the other is left out, or rename or delete one "
                    "of them",
            )


def _same_system_note(df: pd.DataFrame, file: str) -> list[str]:
    """The note counting comparisons of a system with itself: win rates leave them out (:func:`evalcore.pairwise.pairs.pairs`)."""
    if "system_a" not in df.columns or "system_b" not in df.columns:
        return []
    same = (df["system_a"] == df["system_b"]).fillna(False).to_numpy(dtype=bool)
    if not same.any():
        return []
    first = df["system_a"][same].iloc[0]
    return [f"{file}: {int(same.sum()):,} row(s) compare a system with itself (system_a and system_b are both "
            f"'{first}', first at row {_row_of(df, same)}); win rates leave them out."]


#: The columns that name things (items, raters, criteria, systems): a cell is missing there only when it is
#: empty, and ``NA`` or ``null`` is a name like any other.
NAME_COLUMNS = ("item_id", "rater", "criterion", "system_a", "system_b", "system", "input_id")
#: Words that mean "no value" in a cell outside :data:`NAME_COLUMNS` (the readers keep them as text).
MISSING_WORDS = tuple(w for w in NA_VALUES if w)
#: Characters nobody sees in a name (C0 controls but tab, line breaks; DEL): a NUL byte in a rater's name
#: would make a second rater that looks like the first.
_INVISIBLE = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def _is_missing_word(s: pd.Series) -> np.ndarray:
    """Cells of ``s`` that are one of :data:`MISSING_WORDS` (exactly, as a CSV reader's missing values)."""
    if _is_text(s):
        codes, uniq = factorize(s)
        hit = np.flatnonzero(np.asarray(pd.Index(uniq).isin(MISSING_WORDS), dtype=bool))
        return np.isin(codes, hit) if len(hit) else np.zeros(len(s), dtype=bool)
    return np.asarray(s.isin(MISSING_WORDS), dtype=bool)


def _missing_words(df: pd.DataFrame) -> None:
    """``NA``, ``null``, ``NaN``... as missing values outside :data:`NAME_COLUMNS` (scores, verdicts, segments)."""
    for c in df.columns:
        s = df[c]
        if c in NAME_COLUMNS or c == ROW or pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            continue
        words = _is_missing_word(s)
        if words.any():
            df[c] = s.mask(words)


def _check_invisible(df: pd.DataFrame, file: str) -> None:
    """No name holds a character nobody sees (a NUL byte, a control character): it would be a second name that
    looks like the first, whatever the position in the file."""
    for c in NAME_COLUMNS:
        if c not in df.columns or pd.api.types.is_numeric_dtype(df[c].dtype):
            continue
        s = df[c]
        uniq = _distinct_text(s)
        bad = uniq[uniq.str.contains(_INVISIBLE).fillna(False)]
        if not len(bad):
            continue
        value = str(bad.iloc[0])
        char = re.search(_INVISIBLE, value).group(0)
        hit = s.astype("string").isin(bad).fillna(False)
        shown = re.sub(_INVISIBLE, lambda m: f"\\x{ord(m.group(0)):02x}", value)  # the character, made visible
        raise DataError(
            f"{int(hit.sum())} {c.replace('_', ' ')} value(s) hold an invisible control character "
            f"({'a NUL byte' if char == chr(0) else 'U+%04X' % ord(char)}): '{shown}' would count as another "
            f"{c.replace('_', ' ')} than the one it looks like",
            file=file, column=c, row=_row_of(df, hit),
            fix="delete the character (it comes from a damaged export or a binary file), or export the file again",
        )


def _check_ids(df: pd.DataFrame, file: str) -> None:
    """``item_id`` and ``rater`` filled on every row, as stripped text (7.0 read as a float becomes '7')."""
    for col in ("item_id", "rater"):
        blank = _blank(df[col])
        if blank.any():
            raise DataError(
                f"{int(blank.sum())} row(s) have no {col.replace('_', ' ')}",
                file=file, column=col, row=_row_of(df, blank),
                fix=f"fill in '{col}' on every row, or delete rows that are not judgments",
            )
        if pd.api.types.is_float_dtype(df[col]) and (df[col] == df[col].round()).all():
            df[col] = df[col].astype("int64")  # 7.0 -> "7", the id the user sees
        df[col] = _strip_text(df[col])


def rater_kinds(values: pd.Series) -> pd.Series:
    """``rater_kind`` values as ``'human'`` / ``'judge'`` from any of their spellings (``'LLM'``,
    ``'annotator'``, ``True`` for human...); missing where a value is neither.

    >>> rater_kinds(pd.Series(["Human", "LLM", "robot"])).tolist()
    ['human', 'judge', nan]
    """
    if pd.api.types.is_bool_dtype(values):
        return values.map({True: HUMAN, False: JUDGE})
    return _norm_words(values, _KIND_WORDS)


def _check_rater_kind(df: pd.DataFrame, file: str) -> None:
    """``rater_kind`` is human or judge (in any of their spellings), and one kind per rater."""
    kind_raw = df["rater_kind"]
    kind = rater_kinds(kind_raw)
    bad = kind.isna()
    if bad.any():
        value = kind_raw[bad].iloc[0]
        raise DataError(
            f"rater_kind must be 'human' or 'judge' but is '{'' if pd.isna(value) else value}'"
            + (f" ({int(bad.sum())} such rows)" if bad.sum() > 1 else ""),
            file=file, column="rater_kind", row=_row_of(df, bad),
            fix="write 'human' for annotators and 'judge' for LLM evaluators",
        )
    df["rater_kind"] = same_codes(kind.astype("string"), kind)
    rc, ru = factorize(df["rater"])
    kc, ku = factorize(df["rater_kind"])
    # Distinct (rater, kind) pairs: a rater in more than one is marked both ways.
    pairs = _distinct_pairs(rc, len(ru), kc, len(ku))
    per_rater = np.bincount(pairs // len(ku), minlength=len(ru))
    if (per_rater > 1).any():
        r = ru[int(np.flatnonzero(per_rater > 1)[0])]
        raise DataError(
            f"rater '{r}' is marked both human and judge",
            file=file, column="rater_kind", row=_row_of(df, df["rater"] == r),
            fix="give each rater a single kind, or use different rater names",
        )


def _check_scores(df: pd.DataFrame, file: str, notes: list[str]) -> pd.DataFrame:
    """Ratings: the criterion (default 'overall') and numeric scores; rows without a score are left out."""
    crit = _strip_text(df["criterion"])
    codes, uniq = factorize(crit)
    if (codes < 0).any() or (uniq == "").any():
        crit = crit.fillna("overall")
        crit.loc[crit == ""] = "overall"
    df["criterion"] = crit
    df["score"] = _numeric(
        df, "score", file=file, what="score",
        fix="use numbers for scores (e.g. 1-5), or leave the cell empty if there is no judgment",
        labels_fix="recode the labels as ordered numbers (e.g. bad=0, ok=1, good=2) before importing", notes=notes,
    )
    empty = df["score"].isna()
    if empty.all():
        raise DataError("every score is empty", file=file, column="score",
                        fix="check that the score column holds the ratings")
    if empty.any():
        notes.append(f"{file}: {int(empty.sum())} row(s) with an empty score were left out.")
        df = df.loc[~empty].reset_index(drop=True)
    return df


def _check_ratings(df: pd.DataFrame, file: str, notes: list[str]) -> tuple[pd.DataFrame, list[str], str]:
    """Ratings' columns with canonical types; the key of one judgment and the fix for a duplicate."""
    df = _check_scores(df, file, notes)
    for col, what in (("sample", "sample"), ("position", "position"), ("perplexity", "perplexity")):
        if col in df.columns:
            df[col] = _numeric(df, col, file=file, what=what,
                               fix=f"use numbers in '{col}', or leave the cell empty")
    if "sample" in df.columns:
        df["sample"] = df["sample"].fillna(0).astype("int64")
    if "perplexity" in df.columns and (df["perplexity"] <= 0).any():
        bad = df["perplexity"] <= 0
        raise DataError("perplexity must be positive", file=file, column="perplexity",
                        row=_row_of(df, bad), fix="perplexity is exp(mean negative log-likelihood) >= 1")
    key = ["item_id", "rater", "criterion"] + (["sample"] if "sample" in df.columns else [])
    fix_dup = ("if a rater judged an item several times, number the repeats in a 'sample' column; "
               "otherwise delete the duplicate row")
    return df, key, fix_dup


def _bool_column(df: pd.DataFrame, col: str, file: str, fix: str) -> None:
    """``df[col]`` as bool from true/false in any of their spellings (empty is false)."""
    sw = df[col]
    if not pd.api.types.is_bool_dtype(sw):
        t = sw.astype("string").str.strip().str.lower().fillna("")
        known = t.isin(_TRUE) | t.isin(_FALSE)
        if (~known).any():
            raise DataError(f"{col} must be true or false but is '{sw[~known].iloc[0]}'",
                            file=file, column=col, row=_row_of(df, ~known), fix=fix)
        df[col] = t.isin(_TRUE)
    df[col] = df[col].astype(bool)


def _check_winner(df: pd.DataFrame, file: str) -> None:
    """Comparisons: ``winner`` is a, b or tie (in any of their spellings); ``swapped`` is true or false;
    ``invalid`` (optional) is true or false, and a row marked invalid has an empty winner."""
    if "invalid" in df.columns:
        _bool_column(df, "invalid", file, "write true for a judge output that could not be read as a verdict, "
                                          "false (or nothing) otherwise")
        invalid = df["invalid"].to_numpy()
    else:
        invalid = np.zeros(len(df), dtype=bool)
    w = df["winner"]
    win = _norm_words(w, _WINNER_WORDS)
    bad = win.isna() & ~invalid
    if bad.any():
        value = w[bad].iloc[0]
        raise DataError(
            f"winner must be 'a', 'b' or 'tie' but is '{'' if pd.isna(value) else value}'"
            + (f" ({int(bad.sum())} such rows)" if bad.sum() > 1 else ""),
            file=file, column="winner", row=_row_of(df, bad),
            fix="write a, b or tie (in terms of content, not position); for PandaLM's 0/1/2 or Gao et "
                "al.'s 0/1 labels use --preset pandalm or --preset bayescal",
        )
    df["winner"] = win.astype("string").where(~invalid, pd.NA)
    if "swapped" in df.columns:
        _bool_column(df, "swapped", file, "write true for rows shown in swapped order and false otherwise")
    else:
        df["swapped"] = False


def _check_comparisons(df: pd.DataFrame, file: str) -> tuple[pd.DataFrame, list[str], str]:
    """Comparisons' columns with canonical types; the key of one verdict and the fix for a duplicate."""
    _check_winner(df, file)
    for col in ("prob_a", "prob_a_swap_position", "prob_a_swap_id"):
        if col in df.columns:
            df[col] = _numeric(df, col, file=file, what=col, fix=f"'{col}' holds probabilities in [0, 1]")
            out = (df[col] < 0) | (df[col] > 1)
            if out.any():
                raise DataError(f"{col} must be a probability between 0 and 1", file=file,
                                column=col, row=_row_of(df, out),
                                fix="use the normalised probability of 'A', not a logit or a percentage")
    for col in ("score_a", "score_b", "superficial_a", "superficial_b"):
        if col in df.columns:
            df[col] = _numeric(df, col, file=file, what=col, fix=f"use numbers in '{col}'")
    for col in ("system_a", "system_b"):
        if col in df.columns:
            df[col] = df[col].astype("string").str.strip()
    for col in ("text_a", "text_b"):
        if col in df.columns:
            df[col] = df[col].astype("string")
    key = ["item_id", "rater", "swapped"] + [c for c in ("system_a", "system_b") if c in df.columns]
    fix_dup = "each rater gives one verdict per item and order; delete the duplicate row"
    return df, key, fix_dup


def _check_duplicates(df: pd.DataFrame, key: list[str], file: str, fix_dup: str) -> None:
    """No two rows are the same judgment (same ``key``); the message names both rows."""
    # One integer per row for the key (the columns' codes combined): hashing ints, not strings.
    factors = [factorize(df[k]) for k in key]
    widths = [len(uniq) + 1 for _, uniq in factors]
    small = int(np.prod(np.asarray(widths, dtype=float))) < 2**31
    combined, span = np.zeros(len(df), dtype=np.int32 if small else np.int64), 1  # combined < span
    for (codes, _), width in zip(factors, widths):
        if span * width >= 2**62:  # renumber before the product overflows
            combined = pd.factorize(combined)[0].astype(np.int64)
            span = int(combined.max(initial=0)) + 1
        combined *= width
        combined += codes
        combined += 1
        span *= width
    if span < 4 * len(df) + 1024:  # count in a table: no hashing
        counts = np.bincount(combined, minlength=span)
        dup = pd.Series(counts[combined] > 1 if counts.max(initial=0) > 1 else False, index=df.index)
    else:
        dup = pd.Series(combined, index=df.index).duplicated(keep=False)
    if dup.any():
        # The first duplicated row and the first other row with the same key (not just the
        # next duplicated row, which may belong to another judgment).
        first = df.loc[dup].iloc[0]
        same = dup.copy()
        for k in key:
            same &= (df[k] == first[k]).fillna(False) if pd.notna(first[k]) else df[k].isna()
        rows = df.loc[same, ROW].head(2).tolist()
        what = ", ".join(f"{k}={first[k]}" for k in key if k in ("item_id", "rater", "criterion", "sample", "swapped"))
        raise DataError(
            f"rows {rows[0]} and {rows[1]} are the same judgment ({what})"
            + (f"; {int(dup.sum())} rows are duplicates" if dup.sum() > 2 else ""),
            file=file, fix=fix_dup,
        )


def _check_both_kinds(df: pd.DataFrame, file: str) -> None:
    """At least one human row and one judge row."""
    kinds = set(factorize(df["rater_kind"])[1])
    if HUMAN not in kinds or JUDGE not in kinds:
        lacking = HUMAN if HUMAN not in kinds else JUDGE
        raise DataError(
            f"there are no {lacking} rows: evalcore audits judges against humans and needs both",
            file=file, column="rater_kind",
            fix=("add the human annotations (rater_kind=human)" if lacking == HUMAN else
                 "add the judge's ratings (rater_kind=judge)")
            + ", or check that rater_kind is mapped to the right column",
        )


def _reorder(df: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``df.iloc[order]``; a string column whose codes are known is rebuilt from its distinct values.

    Gathering a million strings from all over a big column is slow; gathering them from a column's
    few distinct values (by the reordered codes) gives the same column faster.
    """
    cols, known = {}, {}
    for c in df.columns:
        s = df[c]
        arr = data_of(s)
        hit = memo_get((arr, "codes", id(arr))) if arr is not None and _is_text(s) else None
        if hit is None:
            cols[c] = s.array.take(order)
        else:
            codes, uniques = hit  # type: ignore[misc]
            known[c] = (codes[order], uniques)
            cols[c] = uniques.array.take(known[c][0], allow_fill=True)
    out = pd.DataFrame(cols, index=df.index[order], columns=df.columns, copy=False)
    out.attrs = copy.deepcopy(df.attrs)  # as iloc does
    for c, (codes, uniques) in known.items():  # the summary counts the reordered columns again
        remember(out[c], codes, uniques)
    return out


def _canonical_layout(df: pd.DataFrame, table: str) -> pd.DataFrame:
    """Ratings grouped by item; the row numbers dropped; canonical columns first, in their order."""
    if table == RATINGS:
        # Each item's judgments together, items in order of first appearance (a stable sort keeps each
        # item's rows in file order): how a long table reads, and what agreement.count_units counts fastest.
        codes = factorize(df["item_id"])[0]
        if len(codes) > 1 and (np.diff(codes) < 0).any():
            # Stable sorts of 16-bit keys are radix sorts in numpy: use them when the items allow.
            keys = codes.astype(np.uint16) if int(codes.max()) < 2**16 else codes
            df = _reorder(df, np.argsort(keys, kind="stable"))
    df = df.drop(columns=[ROW]).reset_index(drop=True)
    order = [c for c in column_names(table) if c in df.columns]
    return df[order + [c for c in df.columns if c not in order]]


def validate(frame: pd.DataFrame, *, table: str | None = None, file: str = "the file",
             blank_text: bool = False) -> Validated:
    """Check a frame with canonical column names and return it with canonical types.

    Checks, each raising :class:`DataError` naming the file, row or column, and the fix:
    required columns present (with a hint for a misspelt one); no empty ids; known
    ``rater_kind``; numeric scores; ``winner`` in a/b/tie; no duplicate judgments
    (same item, rater, criterion and sample; or same item, rater and order for
    comparisons); at least one human and one judge row.

    Cells that look like spreadsheet formulas or HTML are kept as text and reported
    in ``notes`` (they are neutralised on export by :func:`csv_safe`).

    Parameters
    ----------
    frame
        Table with canonical column names (see :func:`apply_mapping`).
    table
        ``ratings`` or ``comparisons``; guessed from the columns when omitted.
    file
        Name used in messages.
    blank_text
        The file cannot tell an empty cell from a missing one (CSV, TSV, Excel): a missing cell of a text
        column (:data:`TEXT_COLUMNS`) is then the empty text of its output, unless another row of the same
        output holds the text (a text written once per item) or the column holds no text at all. Either way
        an empty text is kept as an output of length 0, and a note counts them (:func:`_empty_texts`).
    """
    if table is None:
        table = detect_table(frame.columns)
    if table not in TABLES:
        raise DataError(f"unknown table '{table}'", file=file, fix="use 'ratings' or 'comparisons'")
    with shared_codes():
        return _validate(frame, table, file, blank_text)


#: The columns holding the judged outputs' texts: an empty text is a real output, of length 0.
TEXT_COLUMNS = ("text", "text_a", "text_b")


def _empty_texts(df: pd.DataFrame, file: str, *, blank_text: bool) -> list[str]:
    """Keep empty texts as outputs of length 0 (and, with ``blank_text``, read blank cells so); the note counting them.

    Why: an output the generator left empty is a real output, the shortest there is. Read as missing, its
    item silently left every length-based measure (the length-controlled win rate of PandaLM's
    bloom-7b vs cerebras-gpt-6.7B went from 96 items to 92, issue 23).
    """
    cols = [c for c in TEXT_COLUMNS if c in df.columns]
    if not cols:
        return []
    key = [df[k] for k in ("item_id", "system_a", "system_b") if k in df.columns]  # one output's rows
    counts = []
    for col in cols:
        s = df[col].astype("string")
        missing = s.isna()
        if blank_text and missing.any() and not missing.all():
            told = (~missing).groupby(key, dropna=False, sort=False).transform("any").to_numpy(dtype=bool)
            s = s.mask(missing & ~told, "")
            df[col] = s
        empty = (s == "").fillna(False).to_numpy(dtype=bool)
        if empty.any():
            n = len(pd.MultiIndex.from_arrays([k[empty] for k in key]).unique())
            counts.append(f"{col} of {n:,} item(s)")
    if not counts:
        return []
    return [f"{file}: empty output texts ({'; '.join(counts)}) were kept as outputs of length 0, not as missing "
            "texts, so their items stay in the length-based measures."]


def _validate(frame: pd.DataFrame, table: str, file: str, blank_text: bool = False) -> Validated:
    if len(frame) == 0:
        raise DataError("has no data rows", file=file, fix="add at least one judgment below the header")
    keep, notes = keep_extra_columns(frame.columns, file=file)
    if len(keep) < frame.shape[1]:  # a file of thousands of columns: copy only those kept
        kept = set(keep)
        frame = frame.iloc[:, [i for i, c in enumerate(map(str, frame.columns)) if c in kept]]
    df = frame.copy()
    df.columns = [str(c) for c in df.columns]
    if ROW not in df.columns:
        df[ROW] = np.arange(len(df)) + 2
    if "criterion" not in df.columns and table == RATINGS:
        df["criterion"] = "overall"
    _check_required(df, table, file)
    _check_look_alikes(df, table, file)
    _missing_words(df)
    _check_invisible(df, file)
    _check_ids(df, file)
    _check_rater_kind(df, file)
    if table == RATINGS:
        df, key, fix_dup = _check_ratings(df, file, notes)
    else:
        df, key, fix_dup = _check_comparisons(df, file)
        notes.extend(_same_system_note(df, file))
    _check_duplicates(df, key, file, fix_dup)
    _check_both_kinds(df, file)
    notes.extend(_empty_texts(df, file, blank_text=blank_text))
    notes.extend(_text_warnings(df, file=file))
    return Validated(table=table, frame=_canonical_layout(df, table), notes=tuple(notes))


def safe_file_name(name: str, *, limit: int = 120) -> str:
    """A download's file name that every operating system accepts: characters other than letters, digits,
    ``.``, ``-`` and ``_`` (``:`` from a dataset name, ``/`` from a judge such as ``gpt-4/score-only``)
    become ``_``, runs of them one, and the stem is cut to ``limit`` characters, keeping the extension.

    >>> safe_file_name("winrate_llama-2-70b/pairwise_vs_gpt-4: v2.csv")
    'winrate_llama-2-70b_pairwise_vs_gpt-4_v2.csv'
    >>> safe_file_name("sample (2)-ratings-report.html")
    'sample_2_-ratings-report.html'
    """
    stem, dot, ext = str(name).rpartition(".")
    if not dot or not re.fullmatch(r"[A-Za-z0-9]{1,8}", ext):
        stem, dot, ext = str(name), "", ""
    stem = re.sub(r"[^\w.-]+", "_", stem, flags=re.ASCII).strip("._") or "download"
    return stem[:limit] + dot + ext


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy safe to open in a spreadsheet: text cells starting like a formula get a leading '.

    Defends against CSV injection (OWASP): ``=HYPERLINK(...)`` in an exported CSV would
    otherwise run when an analyst opens it in Excel or Sheets.
    """
    out = frame.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        text = s.astype("string")
        risky = text.str.match(_FORMULA).fillna(False) & pd.to_numeric(text, errors="coerce").isna()
        if risky.any():
            out[col] = text.where(~risky, "'" + text)
    # Column names become the header row: neutralise them the same way.
    names = [str(c) for c in out.columns]
    if any(_FORMULA.match(n) and pd.isna(pd.to_numeric(n, errors="coerce")) for n in names):
        out.columns = ["'" + n if _FORMULA.match(n) and pd.isna(pd.to_numeric(n, errors="coerce")) else n
                       for n in names]
    return out


# --------------------------------------------------------------------------- summary


def _n_unique(frame: pd.DataFrame, col: str) -> int:
    return len(factorize(frame[col])[1]) if col in frame.columns else 0


def _is_kind(frame: pd.DataFrame, kind: str) -> np.ndarray:
    """Rows whose ``rater_kind`` is ``kind`` (a boolean array), from the column's codes."""
    codes, uniq = factorize(frame["rater_kind"])
    key = (codes, "is_kind", id(codes), kind)
    hit = memo_get(key)
    if hit is None:
        where = np.flatnonzero(np.asarray(uniq == kind, dtype=bool))
        hit = np.isin(codes, where) if len(where) > 1 else codes == (where[0] if len(where) else -2)
        memo_put(key, hit)
    return hit.copy()  # type: ignore[union-attr]


def _max_per_item(frame: pd.DataFrame, kind: str) -> int:
    """The most distinct raters of ``kind`` on one item (and criterion)."""
    key = (frame, "max_per_item", id(frame), kind)
    hit = memo_get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    mask = _is_kind(frame, kind)
    if not mask.any():
        return 0
    keys = ["item_id"] + (["criterion"] if "criterion" in frame.columns else [])
    group = np.zeros(len(frame), dtype=np.int64)
    for k in keys:  # one code per (item, criterion); groupby leaves out missing keys
        codes, uniq = factorize(frame[k])
        mask &= codes >= 0
        group = group * (len(uniq) + 1) + codes
    rc, ru = factorize(frame["rater"])
    mask &= rc >= 0
    if not mask.any():
        return 0
    group = group[mask]
    if int(group.max()) > 4 * len(frame):  # sparse group numbers: renumber them before counting
        group = pd.factorize(group)[0].astype(np.int64)
    n_groups = int(group.max()) + 1
    pairs = _distinct_pairs(group, n_groups, rc[mask], len(ru))  # distinct (group, rater)
    out = int(np.bincount(pairs // len(ru)).max())
    memo_put(key, out)
    return out


@dataclass(frozen=True)
class Analysis:
    """One analysis evalcore offers and what it needs from the data."""

    name: str
    title: str
    table: str
    needs: str  # what it needs, in words, shown when unavailable
    check: Callable[[pd.DataFrame], list[str]] = field(repr=False, compare=False)


def _cols(*names: str) -> Callable[[pd.DataFrame], list[str]]:
    def check(df: pd.DataFrame) -> list[str]:
        return [f"column '{n}'" for n in names if n not in df.columns or df[n].isna().all()]
    return check


def _all(*checks: Callable[[pd.DataFrame], list[str]]) -> Callable[[pd.DataFrame], list[str]]:
    return lambda df: [m for c in checks for m in c(df)]


def _two_humans(df: pd.DataFrame) -> list[str]:
    return [] if _max_per_item(df, HUMAN) >= 2 else ["at least 2 human raters on the same item"]


def _judge_and_human(df: pd.DataFrame) -> list[str]:
    codes, uniq = factorize(df["item_id"])
    key = (codes, "judge_and_human", id(codes))
    both = memo_get(key)
    if both is None:
        seen = [np.zeros(len(uniq) + 1, dtype=bool) for _ in range(2)]
        for marks, kind in zip(seen, (JUDGE, HUMAN)):
            marks[codes[_is_kind(df, kind)]] = True  # code -1 (a missing id) marks the spare last slot
        both = bool((seen[0] & seen[1])[:-1].any())
        memo_put(key, both)
    return [] if both else ["judge and human judgments of the same items"]


def _repeats(df: pd.DataFrame) -> list[str]:
    if "sample" not in df.columns:
        return ["column 'sample' (repeat index of a judge's samples)"]
    j = df["sample"][_is_kind(df, JUDGE)]
    return [] if (j.nunique() >= 2) else ["a judge sampled at least twice per item (column 'sample')"]


def _multi_criteria(df: pd.DataFrame) -> list[str]:
    return [] if _n_unique(df, "criterion") >= 2 else ["at least 2 criteria per item (column 'criterion')"]


def _familiarity(df: pd.DataFrame) -> list[str]:
    has = any(c in df.columns and df[c].notna().any() for c in ("perplexity", "text"))
    return [] if has else ["column 'perplexity' (or 'text' for a local proxy)"]


def _both_orders(df: pd.DataFrame) -> list[str]:
    ok = "swapped" in df.columns and df["swapped"][_is_kind(df, JUDGE)].nunique() == 2
    return [] if ok else ["column 'swapped' with judge verdicts in both presentation orders"]


def _pair_q(df: pd.DataFrame) -> list[str]:
    for a, b in (("superficial_a", "superficial_b"), ("text_a", "text_b")):
        if a in df.columns and b in df.columns and df[a].notna().any():
            return []
    return ["a superficial score of both outputs (superficial_a/_b, or the texts text_a/_b for their length)"]


#: Per-item numeric columns that are not a superficial quality.
_NOT_Q = frozenset({"score", "sample", "position"})


def _item_q(df: pd.DataFrame) -> list[str]:
    if "text" in df.columns and df["text"].notna().any():
        return []
    canonical = set(column_names(RATINGS)) - {"perplexity"}
    # The dtypes first (df[c] for each of thousands of columns costs seconds), then the few numeric ones.
    numeric = [c for c, t in df.dtypes.items() if c not in _NOT_Q and c not in canonical
               and pd.api.types.is_numeric_dtype(t)]
    extra = next((c for c in numeric if df[c].notna().any()), None)
    return [] if extra is not None else ["a superficial score per item: column 'text' or a numeric "
                                                              "column such as text_length"]


def _numeric_scores(df: pd.DataFrame) -> list[str]:
    score = df["score"]
    ok = pd.api.types.is_numeric_dtype(score) or pd.to_numeric(score, errors="coerce").notna().any()
    return [] if ok else ["numeric scores (correlations)"]


def _two_judges(df: pd.DataFrame) -> list[str]:
    return [] if _n_raters(df, JUDGE) >= 2 else ["2+ judges to rank"]


def _pair_verdicts(df: pd.DataFrame) -> list[str]:
    """What win rates refuse (:func:`evalcore.pairwise.pairs.pairs` and ``pair_data``): a pair of two different
    systems, and a judge's verdict on one."""
    missing = _cols("system_a", "system_b")(df)
    if missing:
        return missing
    a, b = df["system_a"].astype("string"), df["system_b"].astype("string")
    two = (a.notna() & b.notna() & (a != b)).fillna(False).to_numpy(dtype=bool)
    if not two.any():
        return ["a comparison of two different systems (every row names the same system as system_a and "
                "system_b)"]
    verdict = two & _is_kind(df, JUDGE) & df["winner"].notna().to_numpy(dtype=bool)
    if not verdict.any():
        return ["a judge verdict on two different systems (the judges' rows compare a system with itself, or "
                "have no verdict)"]
    return []


def _human_verdicts(df: pd.DataFrame) -> list[str]:
    return [] if _is_kind(df, HUMAN).any() else ["human verdicts (rater_kind=human)"]


ANALYSES: tuple[Analysis, ...] = (
    Analysis("agreement_humans", "Agreement among humans (PA, Fleiss' kappa, AC1, PABAK, Krippendorff)",
             RATINGS, "2+ human raters per item", _two_humans),
    Analysis("agreement_judge", "Judge vs humans (PA, Cohen's kappa, weighted F1, Kendall's tau)",
             RATINGS, "judge and human scores on the same items", _judge_and_human),
    Analysis("class_distribution", "Class distributions by human agreement (Hada et al. Figs. 6-7)",
             RATINGS, "2+ human raters per item and a judge", _all(_two_humans, _judge_and_human)),
    Analysis("by_language", "Everything broken down by language", RATINGS, "column 'language'",
             _cols("language")),
    Analysis("score_distribution", "Score distribution, scale use and round-number bias", RATINGS,
             "judge scores", lambda df: [] if _is_kind(df, JUDGE).any() else ["judge rows"]),
    Analysis("familiarity", "Familiarity bias (score vs perplexity)", RATINGS,
             "column 'perplexity' (or 'text')", _familiarity),
    Analysis("anchoring", "Anchoring across criteria", RATINGS, "2+ criteria scored per item",
             _multi_criteria),
    Analysis("anchoring_position", "Quality by the criterion's position in the prompt", RATINGS,
             "column 'position'", _all(_multi_criteria, _cols("position"))),
    Analysis("self_consistency", "Self-consistency across repeated judge samples (Krippendorff's alpha)",
             RATINGS, "column 'sample' with 2+ samples of a judge", _repeats),
    Analysis("meta_system", "System-level correlation with humans (each system's mean score, judge vs humans)",
             RATINGS, "column 'system' (the generator of each output), numeric judge and human scores of the same "
                      "items", _all(_cols("system"), _judge_and_human, _numeric_scores)),
    Analysis("meta_input", "Input-level correlation with humans (across the systems' outputs for each input)",
             RATINGS, "columns 'system' and 'input_id' (the source or prompt shared by the systems' outputs)",
             _all(_cols("system", "input_id"), _judge_and_human, _numeric_scores)),
    Analysis("leaderboard", "Judge leaderboard: which judge agrees best with humans (paired bootstrap)", RATINGS,
             "2+ judges with numeric scores of items humans scored (with 'system': also at the system level)",
             _all(_two_judges, _judge_and_human, _numeric_scores)),
    Analysis("win_rate", "Calibrated win rates (BWRS, Bayesian Dawid-Skene)", COMPARISONS,
             "columns system_a, system_b and judge verdicts (human labels for calibration)",
             _pair_verdicts),
    Analysis("superficial", "Superficial-quality subtraction with an alpha slider (Zhou et al.)", COMPARISONS,
             "columns score_a, score_b, a superficial score (superficial_a/_b or the texts text_a/_b) and "
             "human verdicts", _all(_cols("score_a", "score_b"), _pair_q, _human_verdicts)),
    Analysis("position_bias", "Position bias: consistency across orders, first-position preference",
             COMPARISONS, "judge verdicts in both orders (column 'swapped')", _both_orders),
    Analysis("calibraeval", "Selection-bias calibration (CalibraEval NOA + PAVA, PriDe)", COMPARISONS,
             "columns prob_a, prob_a_swap_position, prob_a_swap_id",
             _cols("prob_a", "prob_a_swap_position", "prob_a_swap_id")),
    Analysis("superficial_ratings", "Superficial-quality subtraction for pointwise scores (Zhou et al.)", RATINGS,
             "judge and human scores of the same items and a superficial score per item ('text' or a numeric "
             "column such as text_length)", _all(_judge_and_human, _item_q)),
)

def analyses(frame: pd.DataFrame, *, table: str) -> pd.DataFrame:
    """Every analysis evalcore offers today (a page or a command), marked available or not for this table.

    Returns
    -------
    pandas.DataFrame
        Columns ``analysis``, ``title``, ``table``, ``available`` (bool) and ``missing``
        (what the data would need, empty when available). Analyses of the other table
        are listed as unavailable with the table they need.
    """
    rows = []
    with shared_codes():
        for a in ANALYSES:
            missing = [f"a {a.table} table ({a.needs})"] if a.table != table else a.check(frame)
            rows.append({"analysis": a.name, "title": a.title, "table": a.table,
                         "available": not missing, "missing": "; ".join(missing)})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Summary:
    """What a canonical table holds, and what it unlocks."""

    table: str
    rows: int
    items: int
    human_raters: int
    judges: int
    criteria: tuple[str, ...]
    languages: tuple[str, ...]
    tasks: tuple[str, ...]
    systems: tuple[str, ...]
    max_humans_per_item: int
    unlocks: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-ready dict (the CLI's ``validate --json`` output)."""
        return {
            "table": self.table, "rows": self.rows, "items": self.items,
            "human_raters": self.human_raters, "judges": self.judges,
            "criteria": list(self.criteria), "languages": list(self.languages),
            "tasks": list(self.tasks), "systems": list(self.systems),
            "max_humans_per_item": self.max_humans_per_item, "unlocks": list(self.unlocks),
        }

    def to_frame(self) -> pd.DataFrame:
        """Two-column table (``what``, ``value``) for display."""
        d = self.to_dict()
        return pd.DataFrame(
            [{"what": k, "value": ", ".join(map(str, v)) if isinstance(v, list) else str(v)} for k, v in d.items()]
        )


def _levels(frame: pd.DataFrame, col: str) -> tuple[str, ...]:
    if col not in frame.columns:
        return ()
    return tuple(sorted(map(str, factorize(frame[col])[1])))


def _n_raters(frame: pd.DataFrame, kind: str) -> int:
    codes, uniq = factorize(frame["rater"])
    codes = codes[_is_kind(frame, kind)]
    return int(np.count_nonzero(np.bincount(codes[codes >= 0], minlength=len(uniq))))


def summarize(frame: pd.DataFrame, *, table: str, available: pd.DataFrame | None = None) -> Summary:
    """Counts of a validated table and the names of the analyses it unlocks.

    ``available`` is :func:`analyses` of the same frame when the caller has it already.
    """
    with shared_codes():
        return _summarize(frame, table, analyses(frame, table=table) if available is None else available)


def _summarize(frame: pd.DataFrame, table: str, av: pd.DataFrame) -> Summary:
    systems = sorted(set(_levels(frame, "system_a")) | set(_levels(frame, "system_b")))
    return Summary(
        table=table,
        rows=int(len(frame)),
        items=_n_unique(frame, "item_id"),
        human_raters=_n_raters(frame, HUMAN),
        judges=_n_raters(frame, JUDGE),
        criteria=_levels(frame, "criterion"),
        languages=_levels(frame, "language"),
        tasks=_levels(frame, "task"),
        systems=tuple(systems),
        max_humans_per_item=_max_per_item(frame, HUMAN),
        unlocks=tuple(av.loc[av["available"], "analysis"]),
    )


__all__ = [
    "ANALYSES", "Analysis", "COLUMNS", "MAX_EXTRA_COLUMNS", "ROW", "Summary", "Validated", "WideSpec", "analyses",
    "apply_mapping", "csv_safe", "safe_file_name", "decimal_comma", "detect_table", "keep_extra_columns", "look_alikes", "MISSING_WORDS", "NAME_COLUMNS", "rater_kinds", "shared_codes", "suggest_mapping",
    "suggest_wide", "summarize", "validate", "wide_to_long",
]


def __getattr__(name: str):
    if name == "JUDGE_NAME":  # the one rule of evalcore.data.raters, compiled on first use
        return _raters.JUDGE_NAME
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
