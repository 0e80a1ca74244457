"""Errors a user can cause, with messages written for the analyst.

Every problem with an input file is raised as :class:`DataError`. Its string is one
line that names the file, the row or column where relevant, what is wrong and how to
fix it, so that the app and the CLI can show it as-is (never a traceback).
"""

from __future__ import annotations


class DataError(ValueError):
    """A problem with the user's data, explained for the analyst.

    Parameters
    ----------
    problem
        What is wrong, in plain words.
    file
        The file (or dataset) the problem is in.
    column, row
        Where the problem is; ``row`` is 1-based as a spreadsheet shows it
        (the header is row 1, the first data row is row 2).
    fix
        What the user can do about it.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        column: str | None = None,
        row: int | None = None,
        fix: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.column = column
        self.row = row
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        text = (": ".join([", ".join(where), self.problem]) if where else self.problem).rstrip(".")
        text += "."
        if self.fix:
            text += " Fix: " + self.fix.rstrip(".") + "."
        return text

    def with_file(self, file: str) -> "DataError":
        """Return the same error naming ``file`` if it did not name one yet."""
        if self.file:
            return self
        return type(self)(self.problem, file=file, column=self.column, row=self.row, fix=self.fix)


class FileTooLargeError(DataError):
    """The file exceeds the configured size limit."""


class NotApplicable(DataError):
    """The data are valid, but this method cannot run on them (the message says why and what would let it).

    The app shows it as information, not as an error: a dataset without system pairs has no win rates, and
    nothing in it is wrong.
    """


def varying_within_item(column: str, item: object = None, *, fix: str | None = None) -> DataError:
    """The one message for a column that must describe the item (a grouping, a perplexity) but changes within
    ``item`` (None: the item is not known, as from a database engine's counts).

    >>> print(varying_within_item("language", "q7"))
    column 'language' has different values within one item ('q7'). Fix: 'language' must describe the item; group by another column.
    """
    where = f" ('{item}')" if item is not None else ""
    return DataError(f"column '{column}' has different values within one item{where}",
                     fix=fix or f"'{column}' must describe the item; group by another column")


class WorkspaceError(RuntimeError):
    """The workspace database could not be used (locked, unwritable, corrupt)."""
