"""Every error message the app shows names a control of the app: no CLI option, no page
that does not exist. The library's messages serve the CLI too; :func:`evalcore.ui.app_message` rewrites them."""

from __future__ import annotations

import ast
import io
import re

import pandas as pd
import pytest

from evalcore.data import ingest
from evalcore.data.validation import validate
from evalcore.data import io as evio
from evalcore.errors import DataError
from evalcore.pairwise.pairs import pairs
from evalcore.ui.messages import app_fix, app_message
from tests.helpers import ROOT

#: What an app message must not say: a command-line option, the CLI, a page the app does not have.
NOT_IN_THE_APP = re.compile(r"(?<![\w-])--[a-z]|\bCLI\b|Data page")


def _fix_texts() -> list[tuple[str, str]]:
    """Every ``fix=...`` text (and every text assigned to a variable ``fix``) of the library outside the CLI
    and the engines,
    with each formatted value written as ``X``."""

    def text(node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = text(node.left), text(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.IfExp):
            return " | ".join(t for t in (text(node.body), text(node.orelse)) if t)
        return None

    found = []
    for path in sorted((ROOT / "evalcore").rglob("*.py")):
        # The CLI's own messages, and the engines' (evalcore.engines runs only under `evalcore ... --engine`),
        # never reach the app.
        if path.relative_to(ROOT / "evalcore").parts[0] in ("cli", "engines"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            values = []
            if isinstance(node, ast.keyword) and node.arg == "fix":
                values.append(node.value)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "fix" for t in targets):
                    values.append(node.value)
            for v in values:
                t = text(v)
                if t:
                    found.append((f"{path.relative_to(ROOT)}:{v.lineno}", t))
    return found


def test_every_library_fix_reads_as_an_app_control():
    texts = _fix_texts()
    assert len(texts) > 50  # the scan finds the library's messages
    assert any("--" in t for _, t in texts)  # and the CLI options among them
    bad = [f"{where}: {app_fix(t)}" for where, t in texts for part in t.split(" | ")
           if NOT_IN_THE_APP.search(app_fix(part))]
    assert not bad, "\n".join(bad)


def _raised(call) -> DataError:
    with pytest.raises(DataError) as info:
        call()
    return info.value


def test_messages_of_real_errors():
    # A required column missing, and one misspelt.
    frame = pd.DataFrame({"item_id": ["1"], "rater": ["a"], "rater_kind": ["human"]})
    msg = app_message(_raised(lambda: validate(frame, table="ratings", file="f.csv")))
    assert "choose the column that holds score in the column mapping" in msg and "--map" not in msg
    msg = app_message(_raised(lambda: validate(frame.assign(scroe=[1]), table="ratings", file="f.csv")))
    assert "choose 'scroe' for score in the column mapping" in msg
    # No rater marked as a judge.
    raw = pd.DataFrame({"item": ["1", "1"], "who": ["ann", "bob"], "score": [1, 2]})
    err = _raised(lambda: ingest.ingest_frame(raw, file="f.csv", mapping={"item": "item_id", "who": "rater",
                                                                        "score": "score"}, judge_raters=[]))
    assert "--judge-rater" in str(err)  # the CLI's own wording
    msg = app_message(err)
    assert "the role column of the table 'Which raters are LLM judges?'" in msg and "CLI" not in msg
    # An Excel workbook with two sheets.
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as xl:
        raw.to_excel(xl, sheet_name="One", index=False)
        raw.to_excel(xl, sheet_name="Two", index=False)
    msg = app_message(_raised(lambda: evio.read_table(buf.getvalue(), name="book.xlsx")))
    assert "the Sheet selector" in msg and "--sheet" not in msg
    # Win rates without systems; a prior the pair cannot use.
    comps = pd.DataFrame({"item_id": ["1"], "rater": ["gpt-4"], "rater_kind": ["judge"], "winner": ["a"]})
    msg = app_message(_raised(lambda: pairs(comps)))
    assert "Upload a file" in msg and "Data page" not in msg
    for m in (msg,):
        assert not NOT_IN_THE_APP.search(m)


def test_import_notes_name_no_cli_option():
    from evalcore.data.presets.common import invalid_note
    from evalcore.ui.messages import app_note

    note = invalid_note(25, "gpt-3.5-turbo", counted_wrong_by="the PandaLM authors")
    assert "--invalid" in note
    assert not NOT_IN_THE_APP.search(app_note(note)) and app_note(note).endswith("as the PandaLM authors do.")


def test_a_message_without_cli_options_is_unchanged():
    err = DataError("has a header but no data rows", file="scores.csv", fix="add the judgments below the header row")
    assert app_message(err) == str(err)
    assert app_message(ValueError("x")) == "x"
