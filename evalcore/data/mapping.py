"""Column mapping: which of the user's columns is which canonical column.

The flow from a user's table to a canonical one is::

    raw = io.read_table(path)                                # any format, any column names
    mapping = mapping.suggest_mapping(raw.columns)           # shown to the user, who may change it
    frame = mapping.apply_mapping(raw, mapping, file=...)    # canonical names
    # or, for one column per annotator/judge (evalcore.data.wide):
    frame = wide.wide_to_long(raw, spec, mapping=..., file=...)
    checked = validation.validate(frame, table=..., file=...)  # canonical types, or DataError
    summary.summarize(checked.frame, table=...)              # rows, raters, what the data unlocks

:func:`evalcore.data.ingest.ingest_frame` runs these steps for the app and the CLI. Every problem a
user can cause raises :class:`~evalcore.errors.DataError` with a message that names the file, the
row or column, and the fix.
"""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Mapping

import pandas as pd

from ..columns import COMPARISONS, RATINGS, column_names
from ..errors import DataError

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


def squash_name(name: object) -> str:
    """A column name as it is compared with the canonical names and :data:`SYNONYMS`: lower case, every run of
    other characters than letters and digits one ``_``.

    >>> squash_name("  Rater-Kind "), squash_name("Item ID")
    ('rater_kind', 'item_id')
    """
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


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

    Examples
    --------
    >>> suggest_mapping(["question_id", "judge", "category", "score"])
    {'score': 'score', 'question_id': 'item_id', 'judge': 'rater', 'category': 'task'}
    >>> suggest_mapping(["item_id", "rater", "score", "category", "scale"])["category"]
    'category'
    """
    targets = set(column_names(table)) if table else set(column_names(RATINGS)) | set(column_names(COMPARISONS))
    cols = [str(c) for c in columns]
    if "scale" not in {squash_name(c) for c in cols}:
        # 'category' is evalcore's labels-as-written column only beside a 'scale' column (a table evalcore wrote);
        # alone it describes the items (MT-Bench's writing, coding, ...), a task.
        targets.discard("category")
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    # Exact canonical names first, so that e.g. an 'item_id' column beats a 'task' synonym.
    for c in cols:
        s = squash_name(c)
        if s in targets and s not in taken:
            mapping[c] = s
            taken.add(s)
    for c in cols:
        if c in mapping:
            continue
        s = squash_name(c)
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


def look_alikes(columns: Iterable[object], names: Iterable[str]) -> dict[str, str]:
    """The columns named like one of ``names`` but for case or punctuation, and the name each looks like.

    >>> look_alikes(["score", "Score", "Item ID", "rater"], ["score", "item_id", "rater"])
    {'Score': 'score', 'Item ID': 'item_id'}
    """
    names = set(names)
    return {str(c): squash_name(c) for c in columns if str(c) not in names and squash_name(c) in names}

