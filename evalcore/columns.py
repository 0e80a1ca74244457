"""The one vocabulary of evalcore: canonical columns, segments, and how the humans are named.

``ratings`` holds pointwise judgments and ``comparisons`` pairwise ones, one row per
judgment (the ``task, worker, label`` convention of crowd-kit). Everything else in
evalcore reads these names; :mod:`evalcore.data.mapping` maps users' columns onto them.

The humans
    In result tables the rows about the human annotators (the reference) have ``judge`` null.
    Wherever the humans must be named as a value (a ``source`` column of plot tables, a label
    in a table or a figure) they are :data:`HUMANS_LABEL`, and nothing else.

Segments
    A *segment* is a column that describes an item (``language``, ``task``, or any other
    per-item column a user brings), and results can be grouped by it. :data:`NOT_SEGMENTS` are
    the canonical columns that are not: ids, scores and per-judgment fields.
    :func:`segment_columns` lists a table's segments.

The humans' label
    One label per item (or unit) everywhere: the strict majority of the annotators' labels, a
    tie when no label has more than half the votes (:func:`evalcore.labels.strict_majority`).

Unparsed judge outputs
    A comparison row with ``invalid`` true is a judge output that could not be read as a verdict;
    its ``winner`` is empty. Every analysis treats it as a missing verdict unless asked otherwise
    (judge accuracy with ``invalid="wrong"``, as the PandaLM authors count them).

Counts
    ``n`` in every result table counts **items**, the unit the bootstrap resamples. Agreement
    also reports ``n_units`` (an item on one criterion: the unit its measures average over)
    and ``n_ratings``.
"""

from __future__ import annotations

from dataclasses import dataclass

RATINGS = "ratings"
COMPARISONS = "comparisons"
TABLES = (RATINGS, COMPARISONS)

HUMAN = "human"
JUDGE = "judge"
RATER_KINDS = (HUMAN, JUDGE)

WINNERS = ("a", "b", "tie")

#: How the human annotators are named wherever they must be a value (their ``judge`` is null).
HUMANS_LABEL = "humans"

#: Canonical columns that are not segments: ids, scores and fields of one judgment.
NOT_SEGMENTS = frozenset({"item_id", "rater", "rater_kind", "score", "category", "scale", "sample", "position",
                          "perplexity", "text", "invalid", "text_a", "text_b", "input_id"})


@dataclass(frozen=True)
class Column:
    """One canonical column: its name, whether it is required, its type and meaning."""

    name: str
    required: bool
    kind: str  # "id", "text", "number", "score", "bool", "category"
    meaning: str


RATINGS_COLUMNS: tuple[Column, ...] = (
    Column("item_id", True, "id", "what was judged (one generated text)"),
    Column("rater", True, "id", "annotator id, or judge configuration id such as gpt-4/score-only"),
    Column("rater_kind", True, "category", "'human' or 'judge'"),
    Column("criterion", False, "text", "what was scored, e.g. LA, OCQ, Coherence (default 'overall')"),
    Column("score", True, "score", "the rating: a number, or a text label (a category)"),
    Column("category", False, "text", "the label exactly as written, on rows of a criterion whose labels are "
                                      "categories (written by evalcore with 'scale'; see evalcore.data.scales)"),
    Column("scale", False, "category", "the criterion's scale: nominal, ordinal or interval (default: text "
                                       "labels nominal, numbers ordinal)"),
    Column("sample", False, "number", "repeat index when one rater judged an item several times"),
    Column("position", False, "number", "place of this criterion in a multi-criterion prompt"),
    Column("perplexity", False, "number", "perplexity of the judged text (familiarity bias)"),
    Column("text", False, "text", "the judged text"),
    Column("language", False, "text", "segment: language of the item"),
    Column("task", False, "text", "segment: task of the item"),
    Column("system", False, "text", "segment: the system (generator) whose output the item is; needed for "
                                    "system- and input-level correlation"),
    Column("input_id", False, "id", "the input (source, prompt) several systems answered; the item is one "
                                    "system's output for it (input-level correlation, input bootstrap)"),
)

COMPARISONS_COLUMNS: tuple[Column, ...] = (
    Column("item_id", True, "id", "the input shared by both outputs"),
    Column("system_a", False, "text", "generator of output A (shown first by default); needed for win rates"),
    Column("system_b", False, "text", "generator of output B; needed for win rates"),
    Column("rater", True, "id", "annotator id, or judge configuration id"),
    Column("rater_kind", True, "category", "'human' or 'judge'"),
    Column("winner", True, "category", "'a', 'b' or 'tie', in terms of content, not position"),
    Column("swapped", False, "bool", "true when the outputs were shown in swapped order"),
    Column("invalid", False, "bool", "true for a judge output that could not be read as a verdict (winner "
                                     "empty): a missing verdict, or a wrong one in judge accuracy on request"),
    Column("prob_a", False, "number", "judge's P('A') under the default prompt"),
    Column("prob_a_swap_position", False, "number", "judge's P('A') with the outputs' positions swapped"),
    Column("prob_a_swap_id", False, "number", "judge's P('A') with the option IDs swapped"),
    Column("score_a", False, "number", "judge's score P of output A"),
    Column("score_b", False, "number", "judge's score P of output B"),
    Column("superficial_a", False, "number", "superficial-quality score Q of output A (e.g. length)"),
    Column("superficial_b", False, "number", "superficial-quality score Q of output B"),
    Column("text_a", False, "text", "the text of output A (its length can serve as superficial quality)"),
    Column("text_b", False, "text", "the text of output B"),
    Column("subset", False, "text", "segment, e.g. Natural / Adversarial"),
    Column("language", False, "text", "segment: language of the item"),
    Column("task", False, "text", "segment: task of the item"),
)

COLUMNS: dict[str, tuple[Column, ...]] = {RATINGS: RATINGS_COLUMNS, COMPARISONS: COMPARISONS_COLUMNS}


def column_names(table: str) -> tuple[str, ...]:
    """Canonical column names of ``table`` in their documented order."""
    return tuple(c.name for c in COLUMNS[table])


def required_columns(table: str) -> tuple[str, ...]:
    """Columns a ``table`` cannot do without (``criterion`` defaults to 'overall')."""
    return tuple(c.name for c in COLUMNS[table] if c.required)


def segment_columns(ratings, *, max_float_levels: int = 50) -> list[str]:
    """Columns of ``ratings`` a result can be grouped by: ``criterion``, ``language``, ``task`` and
    any other per-item column, in table order.

    A float column with more than ``max_float_levels`` distinct values is a measurement, not a
    segment, and is left out.

    >>> import pandas as pd
    >>> segment_columns(pd.DataFrame({"item_id": [1], "rater": ["a"], "score": [3], "language": ["de"]}))
    ['language']
    """
    import pandas as pd

    out = []
    for c in ratings.columns:
        if c in NOT_SEGMENTS:
            continue
        s = ratings[c]
        if pd.api.types.is_float_dtype(s) and s.nunique() > max_float_levels:
            continue
        out.append(c)
    return out
