"""Every problem a user can cause: one message, in the library, the CLI and the app.

One small file per case lives in ``tests/data/bad/`` (made by ``make_files.py`` there).
For each case the library raises :class:`DataError` (or, for HTML/formula cells,
returns notes) whose message names the file, the row or column, and the fix; the CLI
prints exactly that message on one stderr line and exits 1; the app shows it with
``st.error`` and never an exception.
"""

from __future__ import annotations

import csv
import io as _io
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli import main
from evalcore.data import files, ingest, io
from evalcore.data.export import csv_safe
from evalcore.data.store import NEEDS_MAPPING, Workspace, default_path
from evalcore.text import md
from evalcore.errors import DataError, FileTooLargeError
from tests.helpers import BAD, ROOT

MIME = {".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
        ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


@dataclass(frozen=True)
class Case:
    """One bad input and what every surface must say about it."""

    file: str
    phrases: tuple[str, ...]  # case-specific words the message must contain
    row: int | None = None  # the row the message must name
    column: str | None = None  # the column the message must name
    load: dict = field(default_factory=dict)  # options for ingest.load
    cli: tuple[str, ...] = ()  # the same options for `evalcore validate`
    env: dict = field(default_factory=dict)
    # How the app reacts: "refused" (st.error at upload, nothing stored), "mapping"
    # (stored as pending; the mapping panel shows st.error), "reads" (the app detects
    # what the CLI was forced to get wrong), "sheet" (the app offers a sheet picker).
    app: str = "mapping"
    app_phrase: str | None = None  # the app's message when its wording differs (else: identical)


CASES = [
    Case("misspelt_column.csv", ("required column 'score' is missing", "'scroe' looks like a misspelling",
                                 "--map scroe=score"), column="score"),
    Case("missing_column.csv", ("required column 'score' is missing", "add a 'score' column"), column="score"),
    Case("empty.csv", ("is empty",), app="refused"),
    Case("header_only.csv", ("has a header but no data rows",), app="refused"),
    Case("semicolons.csv", ("separated by semicolons, not commas", "--delimiter ';'"),
         load={"delimiter": ","}, cli=("--delimiter", ","), app="reads"),
    Case("non_numeric_score.csv", ("criterion 'LA' mixes numbers", "text labels ('three': 1 row(s))",
                                   "--scale 'LA=nominal'"), row=6, column="score"),
    Case("missing_id.csv", ("have no item id", "fill in 'item_id'"), row=5, column="item_id"),
    Case("duplicate_judgment.csv", ("rows 6 and 8 are the same judgment", "item_id=q2, rater=ann2",
                                    "'sample' column")),
    Case("unknown_rater_kind.csv", ("rater_kind must be 'human' or 'judge' but is 'robot'",), row=4,
         column="rater_kind"),
    Case("no_judge.csv", ("there are no judge rows", "rater_kind=judge"), column="rater_kind"),
    Case("no_human.csv", ("there are no human rows", "rater_kind=human"), column="rater_kind"),
    Case("no_judge_by_name.csv", ("there are no judge rows", "no rater name looks like an LLM judge (ann1, ann2)",
                                  "--judge-rater RATER"), column="rater",
         app_phrase="there are no judge rows: the file has no rater_kind column and no rater was marked as a judge"),
    Case("too_large.csv", ("is 1.2 KB, over the 1.0 KB limit", "EVALCORE_MAX_FILE_MB"),
         env={"EVALCORE_MAX_FILE_MB": "0.001"}, app="refused"),
    Case("binary.csv", ("is not a data table", "PNG image", "export the data as CSV"), app="refused"),
    Case("several_sheets.xlsx", ("has 2 sheets with data (ratings, about)", "--sheet NAME"), app="sheet"),
    Case("not_records.json", ("is a JSON object (keys: judge, scores), not a list of records",), app="refused"),
]
IDS = [c.file for c in CASES]


def _set_env(case: Case, monkeypatch) -> None:
    for k, v in case.env.items():
        monkeypatch.setenv(k, v)


def _library_error(case: Case, monkeypatch) -> DataError:
    _set_env(case, monkeypatch)
    with pytest.raises(DataError) as info:
        ingest.load(BAD / case.file, **case.load)
    return info.value


def test_every_case_has_its_file():
    present = {p.name for p in BAD.iterdir() if p.suffix != ".py"}
    expected = {c.file for c in CASES} | {"html_formulas.csv", "commas_named_tsv.tsv"}
    assert present == expected
    assert all((BAD / f).stat().st_size < 20_000 for f in expected)


# --------------------------------------------------------------------------- library


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_library_names_file_place_and_fix(case, monkeypatch):
    exc = _library_error(case, monkeypatch)
    msg = str(exc)
    assert "\n" not in msg
    assert msg.startswith(case.file), msg
    assert "Fix: " in msg and msg.index("Fix: ") > len(case.file), msg
    for phrase in case.phrases:
        assert phrase in msg, (phrase, msg)
    if case.row is not None:
        assert exc.row == case.row and f"row {case.row}" in msg, msg
    if case.column is not None:
        assert exc.column == case.column and f"column '{case.column}'" in msg, msg


def test_size_error_is_its_own_type_and_the_limit_is_configurable(monkeypatch):
    path = BAD / "too_large.csv"
    assert files.max_file_bytes() == 200 * 2**20  # the default
    assert len(ingest.load(path).frame) == 60  # the file itself is fine
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "0.001")
    assert files.max_file_bytes() == 1048
    with pytest.raises(FileTooLargeError):
        io.read_table(path)
    with pytest.raises(FileTooLargeError):  # bytes of an upload are checked the same way
        io.read_table(path.read_bytes(), name="too_large.csv")
    assert len(io.read_table(path, max_bytes=10_000)) == 60  # an explicit limit wins
    for junk in ("lots", "-5", "0"):  # not a positive number: the default applies
        monkeypatch.setenv("EVALCORE_MAX_FILE_MB", junk)
        assert files.max_file_bytes() == 200 * 2**20


def test_forced_delimiter_is_the_only_problem_with_the_semicolon_file():
    ing = ingest.load(BAD / "semicolons.csv")  # auto-detection reads it
    assert len(ing.frame) == 6 and set(ing.frame["rater_kind"]) == {"human", "judge"}
    assert ingest.load(BAD / "semicolons.csv", delimiter=";").frame.equals(ing.frame)


def test_a_tsv_that_is_comma_separated_reads_with_a_note():
    ing = ingest.load(BAD / "commas_named_tsv.tsv")
    assert len(ing.frame) == 6 and list(ing.frame["score"]) == [3, 2, 3, 1, 1, 2]
    assert "commas_named_tsv.tsv is separated by commas, not tabs; it was read that way." in ing.notes


def test_several_sheets_read_with_a_sheet():
    ing = ingest.load(BAD / "several_sheets.xlsx", sheet="ratings")
    assert len(ing.frame) == 6 and ing.summary().judges == 1
    assert "several_sheets.xlsx: read sheet 'ratings'." in ing.notes
    with pytest.raises(DataError, match=r"has no sheet named 'Ratings'.*Fix: choose one of: ratings, about"):
        ingest.load(BAD / "several_sheets.xlsx", sheet="Ratings")


def test_html_and_formulas_are_notes_not_errors():
    ing = ingest.load(BAD / "html_formulas.csv")
    assert len(ing.frame) == 6
    formula = [n for n in ing.notes if "spreadsheet formula" in n]
    html = [n for n in ing.notes if "HTML markup" in n]
    assert len(formula) == 1 and len(html) == 1, ing.notes
    assert formula[0].startswith("html_formulas.csv, column 'text': 2 cell(s)")  # '=HYPERLINK', '@SUM'; not '-1'
    assert "first at row 3" in formula[0]
    assert html[0].startswith("html_formulas.csv, column 'text': 2 cell(s)")  # <b>, <script>
    assert "first at row 2" in html[0]
    # Kept as the text the user wrote, not altered in the table.
    assert list(ing.frame["text"]) == [
        "<b>bold</b> answer", '=HYPERLINK("http://example.com","click")', "plain answer",
        "<script>alert(1)</script>", "@SUM(A1:A2)", "-1",
    ]


def test_csv_safe_neutralises_formulas_on_export():
    ing = ingest.load(BAD / "html_formulas.csv")
    exported = csv_safe(ing.frame).to_csv(index=False)
    back = list(csv.DictReader(_io.StringIO(exported)))
    assert [r["text"] for r in back] == [
        "<b>bold</b> answer", "'=HYPERLINK(\"http://example.com\",\"click\")", "plain answer",
        "<script>alert(1)</script>", "'@SUM(A1:A2)", "-1",
    ]
    assert [r["score"] for r in back] == ["3.0", "2.0", "3.0", "1.0", "1.0", "2.0"]  # numbers untouched
    assert ing.frame["text"].iloc[1].startswith("=")  # the input frame is not modified
    # Every OWASP trigger (=, +, -, @, tab, CR) and a formula header; numbers like -1 and +2 stay.
    import pandas as pd

    frame = pd.DataFrame({"v": ["=1+2", "+cmd", "-x", "@x", "\tx", "\rx", " =x", "-1", "+2", "ok", None],
                          "=h": ["a"] * 11})
    safe = csv_safe(frame)
    assert list(safe["v"].fillna("<NA>")) == ["'=1+2", "'+cmd", "'-x", "'@x", "'\tx", "'\rx", "' =x", "-1", "+2",
                                              "ok", "<NA>"]
    assert list(safe.columns) == ["v", "'=h"]


# --------------------------------------------------------------------------- CLI


def _cli(capsys, args: list[str]) -> tuple[int, str, str]:
    rc = main(["validate", *args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli_prints_one_line_and_exits_1(case, monkeypatch, capsys):
    expected = str(_library_error(case, monkeypatch))
    rc, out, err = _cli(capsys, [str(BAD / case.file), *case.cli])
    assert rc == 1
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert lines == [f"evalcore: error: {expected}"], err


@pytest.mark.slow
@pytest.mark.parametrize("name", ["binary.csv", "several_sheets.xlsx", "too_large.csv", "duplicate_judgment.csv"])
def test_cli_console_entry_point(name, tmp_path):
    env = {"EVALCORE_MAX_FILE_MB": "0.001", "EVALCORE_WORKSPACE": str(tmp_path),
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "evalcore.cli", "validate", str(BAD / name)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"evalcore: error: {name}"), proc.stderr
    assert "Fix: " in lines[0]


def test_cli_reads_what_the_options_fix(capsys):
    rc, out, err = _cli(capsys, [str(BAD / "several_sheets.xlsx"), "--sheet", "ratings"])
    assert (rc, err) == (0, "") and "rows          6" in out
    rc, out, err = _cli(capsys, [str(BAD / "semicolons.csv")])
    assert (rc, err) == (0, "") and "rows          6" in out
    rc, out, err = _cli(capsys, [str(BAD / "semicolons.csv"), "--delimiter", ";"])
    assert (rc, err) == (0, "")
    rc, out, err = _cli(capsys, [str(BAD / "commas_named_tsv.tsv")])
    assert (rc, err) == (0, "") and "note: commas_named_tsv.tsv is separated by commas, not tabs" in out
    rc, out, err = _cli(capsys, [str(BAD / "html_formulas.csv")])
    assert (rc, err) == (0, "")
    assert "note: html_formulas.csv, column 'text': 2 cell(s) start like a spreadsheet formula" in out
    assert "note: html_formulas.csv, column 'text': 2 cell(s) hold HTML markup" in out
    rc, out, err = _cli(capsys, [str(BAD / "no_judge_by_name.csv"), "--judge-rater", "ann2"])
    assert (rc, err) == (0, "") and "judges        1" in out


# --------------------------------------------------------------------------- app


def _upload(name: str, data: bytes | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    data = (BAD / name).read_bytes() if data is None else data
    at.file_uploader[0].set_value((name, data, MIME[Path(name).suffix])).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _stored() -> list:
    return Workspace(default_path()).list_datasets()


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_app_shows_the_message(case, monkeypatch):
    # The app shows the library's message with its fix naming app controls, not CLI options.
    from evalcore.ui.messages import app_message

    library = _library_error(case, monkeypatch)  # env (size limit) stays set for the app
    expected = app_message(library)
    assert "--" not in expected.split("Fix:")[-1], expected
    at = _upload(case.file)
    errors = [e.value for e in at.error]
    warnings = [w.value for w in at.warning]
    assert all("Traceback" not in e for e in errors)
    if case.app in ("refused", "mapping"):
        if case.app_phrase:
            assert any(e.startswith(case.file) and case.app_phrase in e and "Fix: " in e for e in errors), errors
        else:
            assert md(expected) in errors, errors  # as written: the message's brackets are not Markdown
        assert not at.success
        stored = _stored()
        if case.app == "refused":  # refused before anything is stored
            assert stored == []
        else:  # kept as a pending upload: the user can fix the mapping in the page
            assert [d.status for d in stored] == [NEEDS_MAPPING]
            assert not [b for b in at.button if b.key and b.key.startswith("import_")]
    elif case.app == "reads":
        assert errors == []
        assert any(s.value.startswith("Ready: 6 judgments of 2 items") for s in at.success)
    elif case.app == "sheet":
        assert errors == []
        assert any("has 2 sheets with data (ratings, about)" in w and "Choose" in w for w in warnings), warnings
        (pending,) = _stored()
        picker = at.selectbox(key=f"sheet_{pending.id}")
        assert list(picker.options) == ["ratings", "about"]
        picker.set_value("ratings").run()
        assert not at.exception
        assert any(s.value.startswith("Ready: 6 judgments of 2 items") for s in at.success)


@pytest.mark.slow
def test_app_shows_notes_for_html_and_formulas():
    from evalcore.ui.messages import app_note

    ing = ingest.load(BAD / "html_formulas.csv")
    at = _upload("html_formulas.csv")
    warnings = [w.value for w in at.warning]
    assert [e.value for e in at.error] == []
    for note in ing.notes:
        assert md(app_note(note)) in warnings  # the cells' markup quoted as text, never rendered
    assert any(s.value.startswith("Ready: 6 judgments") for s in at.success)


@pytest.mark.slow
def test_app_shows_the_tsv_note():
    at = _upload("commas_named_tsv.tsv")
    assert [e.value for e in at.error] == []
    assert "commas_named_tsv.tsv is separated by commas, not tabs; it was read that way." in [
        w.value for w in at.warning]
