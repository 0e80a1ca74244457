"""The library's messages as the app shows them: each fix names a control of the app.

evalcore's :class:`~evalcore.errors.DataError` messages serve the CLI and the app at once, so some
fixes name a command-line option (``--map``, ``--preset``, ``--judge-rater``, ``--prior``...). The
app shows :func:`app_message` instead of ``str(error)``: the same problem, file, row and column, with
the fix rewritten to name what to click here. A fix that names no CLI option passes unchanged.

The messages are plain text, and hold values from the data (a file name, a column, a judge, a cell). Every
place that shows one in Streamlit Markdown (``st.error``, ``st.info``, ``st.warning``, ``st.caption``) passes it
through :func:`evalcore.text.md`, once, where it is shown: ``st.error(md(app_message(exc)))``.
"""

from __future__ import annotations

import re

from ..errors import DataError

#: The title of the rater-role table of the column mapping (:func:`evalcore.ui.loading.roles_panel`).
ROLES_TITLE = "Which raters are LLM judges?"
ROLES_CONTROL = f"the role column of the table '{ROLES_TITLE}' in the column mapping"

#: ``(pattern, replacement)`` applied in order to a fix text.
REWRITES: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p), r) for p, r in (
    # validation: a required column is missing / misspelled
    (r"rename it, or map it with --map (\S+?)=(\w+) \(CLI\) or in the column mapping \(app\)",
     r"choose '\1' for \2 in the column mapping when you import the file"),
    (r"add a '(\w+)' column, or map one of your columns to it with --map YOURCOLUMN=\w+ \(CLI\) or in the "
     r"column mapping \(app\)",
     r"choose the column that holds \1 in the column mapping when you import the file, or add a '\1' column"),
    (r"if your file has one column per annotator or judge, use the wide layout",
     "if your file has one column per annotator or judge, choose 'one column per rater' under Layout"),
    # ingest: which raters are judges
    (r"\(CLI: --judge-rater[^;)]*; app: the judge picker\)", f"({ROLES_CONTROL})"),
    # io: several sheets
    (r"\(CLI: --sheet NAME; app: the sheet picker\)", "(the Sheet selector of the column mapping)"),
    # presets named as options
    (r"use --preset (\w+) or --preset (\w+)", r"choose the \1 or \2 format under Format in the column mapping"),
    (r"use --preset (\w+)", r"choose the \1 format under Format in the column mapping"),
    (r"use a --preset that reads folders \(([\w, ]+)\)",
     r"upload all the files of a format that reads several (\1) together"),
    (r"a --preset that reads folders", "all the files of a format that reads several, uploaded together"),
    # pairs: the two systems
    (r"map the columns naming the two systems to system_a and system_b \(--map[^)]*\), or use a preset that "
     r"knows them",
     "upload the file again on the home page (Upload a file) and map the columns naming the two systems to "
     "system_a and system_b, or choose a format that knows them"),
    # win rates: the prior
    (r"use --prior none or an out-of-distribution prior ood:A2,B2",
     "choose 'No human labels' or 'Another pair's human labels' under 'What the judges' accuracies are learnt "
     "from'"),
    # position: saved calibrations
    (r"give a file written by evalcore position --save-calibration",
     "upload a file saved with 'Download the fitted calibrations (JSON)' on the Position bias page"),
    (r"save the calibration again with evalcore position --save-calibration",
     "download the calibration again from the Position bias page ('Download the fitted calibrations (JSON)')"),
    # categories: each criterion's scale and order are chosen under Scales in the column mapping
    (r"\(--scale '(.+?)=nominal'\)", r"(choose nominal as the Scale of \1 under Scales in the column mapping)"),
    (r"\(--order '(.+?)=LOWEST,\.\.\.,HIGHEST'\)",
     r"(choose the labels of \1 in order, lowest first, under Scales in the column mapping)"),
    # io: the delimiter is detected in the app; a CLI-only aside goes, as does a bare option in parentheses
    (r"\s*\(CLI: [^)]*\)", ""),
    (r"\s*\(--[a-z][^)]*\)", ""),
))


def app_fix(fix: str | None) -> str | None:
    """``fix`` with every CLI option replaced by the app control that does the same."""
    if not fix:
        return fix
    for pattern, replacement in REWRITES:
        fix = pattern.sub(replacement, fix)
    return fix


def app_note(note: str) -> str:
    """An import note (rows left out, verdicts kept as invalid, ...) as the app shows it: no CLI option.

    Plain text, like :func:`app_message`: show it in Markdown through :func:`evalcore.text.md`.
    """
    return app_fix(note) or note


def app_message(exc: BaseException) -> str:
    """The message the app shows for ``exc``: a :class:`DataError`'s with :func:`app_fix` applied.

    Plain text: show it in Markdown as ``md(app_message(exc))`` (:func:`evalcore.text.md`).
    """
    if not isinstance(exc, DataError):
        return str(exc)
    problem = exc.problem
    if exc.file is None and exc.column is None and exc.row is None and problem[:1].islower():
        problem = problem[0].upper() + problem[1:]  # a sentence on the page (the CLI puts it after "error:")
    return DataError(problem, file=exc.file, column=exc.column, row=exc.row, fix=app_fix(exc.fix)).message
