"""What every public analysis shares: a tidy table first, its columns named by arguments, and the seed.

A public entry point is declared with :func:`takes_table`::

    @takes_table(RATINGS, "text")
    def familiarity(ratings, *, by=(), judges=None, n_boot=1000, seed=0, level=0.95): ...

The decorator adds keyword-only *column arguments* to the function's signature (:data:`COLUMN_ARGUMENTS`),
so that a frame whose columns have other names works as it is::

    familiarity(df, item="doc", rater="who", kind="who_kind", score="grade", text="summary")

Given a column argument, the frame is renamed to the canonical columns of :mod:`evalcore.columns`
(:func:`evalcore.data.mapping.apply_mapping`) and validated (:func:`evalcore.data.validation.validate`): it
reaches the analysis exactly as a file read by :func:`evalcore.data.ingest.read` would. Without column
arguments the frame is used as given, because the app and the CLI pass tables they validated once, and
validating them again on every call would cost time for nothing.

``seed`` may be a whole number or a :class:`numpy.random.Generator`. The decorator turns a Generator into
one integer drawn from it (:func:`evalcore.stats.bootstrap.root_seed`): every analysis seeds its streams from
an integer, and the same Generator state gives the same table.

The signature pattern the decorator completes is in ``docs/api.md``: the table first (positional), then
keyword-only ``by=()``, ``judges=None``, the analysis's own options, ``n_boot``, ``seed`` and ``level``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Mapping, TypeVar

import pandas as pd

from .columns import COMPARISONS, RATINGS
from .errors import DataError
from .stats.bootstrap import root_seed

#: Per table: column argument -> the canonical column it names. Every argument is the canonical name, except
#: three short ones: ``item`` (``item_id``), ``kind`` (``rater_kind``) and ``input`` (``input_id``).
COLUMN_ARGUMENTS: dict[str, dict[str, str]] = {
    RATINGS: {"item": "item_id", "rater": "rater", "kind": "rater_kind", "criterion": "criterion",
              "score": "score", "sample": "sample", "position": "position", "perplexity": "perplexity",
              "text": "text", "system": "system", "input": "input_id"},
    COMPARISONS: {"item": "item_id", "rater": "rater", "kind": "rater_kind", "winner": "winner",
                  "system_a": "system_a", "system_b": "system_b", "swapped": "swapped", "invalid": "invalid",
                  "prob_a": "prob_a", "prob_a_swap_position": "prob_a_swap_position",
                  "prob_a_swap_id": "prob_a_swap_id", "score_a": "score_a", "score_b": "score_b",
                  "superficial_a": "superficial_a", "superficial_b": "superficial_b", "text_a": "text_a",
                  "text_b": "text_b"},
}

#: The column arguments every entry point of a table takes: the columns each of its analyses reads.
#: An analysis that reads more (a perplexity, the outputs' texts) names those in :func:`takes_table`.
CORE_ARGUMENTS: dict[str, tuple[str, ...]] = {
    RATINGS: ("item", "rater", "kind", "criterion", "score", "sample"),
    COMPARISONS: ("item", "rater", "kind", "winner", "system_a", "system_b"),
}

F = TypeVar("F", bound=Callable)


def argument_columns(table: str | None, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The column arguments of an entry point of ``table`` (None: either table) -> their canonical columns.

    >>> list(argument_columns("ratings"))
    ['item', 'rater', 'kind', 'criterion', 'score', 'sample']
    >>> argument_columns("ratings")["kind"], argument_columns("comparisons", ("swapped",))["swapped"]
    ('rater_kind', 'swapped')
    """
    tables = [table] if table is not None else [RATINGS, COMPARISONS]
    out: dict[str, str] = {}
    for t in tables:
        unknown = [a for a in extra if a not in COLUMN_ARGUMENTS[t] and table is not None]
        if unknown:
            raise TypeError(f"'{unknown[0]}' is not a column argument of {t}")
        out.update({a: COLUMN_ARGUMENTS[t][a] for a in (*CORE_ARGUMENTS[t], *extra) if a in COLUMN_ARGUMENTS[t]})
    return out


def canonical_table(frame: pd.DataFrame, columns: Mapping[str, str], *, table: str | None,
                    arguments: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``frame`` with ``columns`` (canonical column -> the frame's column) renamed, and validated.

    Parameters
    ----------
    frame
        The analyst's table.
    columns
        Canonical column -> the frame's column that holds it.
    table
        ``ratings`` or ``comparisons`` (None: told by the columns, :func:`evalcore.data.mapping.detect_table`).
    arguments
        Canonical column -> the argument that named it, for messages (default: the canonical name).

    Returns
    -------
    pandas.DataFrame
        The validated canonical table (:func:`evalcore.data.validation.validate`).

    Raises
    ------
    DataError
        A named column is not in the frame (the message lists the columns present), one column is named
        by two arguments, or the renamed table does not validate.

    Examples
    --------
    >>> df = pd.DataFrame({"doc": [1, 1, 2, 2], "who": ["ann", "gpt", "ann", "gpt"],
    ...                    "kind": ["human", "judge"] * 2, "grade": [3, 4, 2, 2]})
    >>> canonical_table(df, {"item_id": "doc", "rater": "who", "rater_kind": "kind", "score": "grade"},
    ...                 table="ratings").columns.tolist()
    ['item_id', 'rater', 'rater_kind', 'criterion', 'score']
    >>> try:
    ...     canonical_table(df, {"score": "rating"}, table="ratings")
    ... except DataError as err:
    ...     print(err.problem, "|", err.fix)
    the table has no such column (score='rating') | name one of its columns: doc, who, kind, grade
    """
    from .data.mapping import apply_mapping  # the data package loads only when a frame is renamed
    from .data.validation import validate

    arguments = arguments or {}
    present = [str(c) for c in frame.columns]
    seen: dict[str, str] = {}
    for canonical, theirs in columns.items():
        name = arguments.get(canonical, canonical)
        if not isinstance(theirs, str) or theirs not in present:
            raise DataError(f"the table has no such column ({name}={theirs!r})", column=str(theirs),
                            fix="name one of its columns: " + ", ".join(present))
        if theirs in seen:
            raise DataError(f"column '{theirs}' is named by both {seen[theirs]}= and {name}=",
                            fix="name each column once")
        seen[theirs] = name
    renamed = apply_mapping(frame, {theirs: canonical for canonical, theirs in columns.items()}, file="the table")
    return validate(renamed, table=table, file="the table").frame


def takes_table(table: str | None, *extra: str) -> Callable[[F], F]:
    """Declare a public entry point: its first argument is a ``table`` (``ratings`` or ``comparisons``; None:
    either), and it takes the column arguments of :func:`argument_columns` (with ``extra`` ones).

    The returned function has the column arguments in its signature (keyword-only, default None), renames and
    validates a frame when one is given (:func:`canonical_table`), and turns a Generator ``seed`` into an
    integer (:func:`evalcore.stats.bootstrap.root_seed`). A first argument that is not a DataFrame (the
    :class:`~evalcore.pointwise.agreement.units.Units` of ``count_units``) is passed through.
    """
    names = argument_columns(table, extra)

    def declare(fn: F) -> F:
        sig = inspect.signature(fn)
        clash = sorted(set(names) & set(sig.parameters))
        if clash:  # a programming error, caught at import
            raise TypeError(f"{fn.__qualname__} has its own argument '{clash[0]}', also a column argument")
        takes_seed = "seed" in sig.parameters

        @functools.wraps(fn)
        def entry(frame, *args, **kwargs):
            given = {names[a]: kwargs.pop(a) for a in names if a in kwargs}
            given = {c: v for c, v in given.items() if v is not None}
            if given:
                if not isinstance(frame, pd.DataFrame):
                    raise DataError(f"column arguments name columns of a table, and {fn.__name__} was given a "
                                    f"{type(frame).__name__}", fix="pass the table itself")
                frame = canonical_table(frame, given, table=table, arguments={names[a]: a for a in names})
            if takes_seed and "seed" in kwargs:
                kwargs["seed"] = root_seed(kwargs["seed"])
            return fn(frame, *args, **kwargs)

        params = list(sig.parameters.values())
        tail = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        cols = [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None")
                for a in names]
        entry.__signature__ = sig.replace(parameters=[p for p in params if p not in tail] + cols + tail)
        entry.column_arguments = dict(names)
        return entry  # type: ignore[return-value]

    return declare
