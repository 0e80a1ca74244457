"""What ``validate`` says is what the analyses do: very wide files, comparisons that cannot give a
win rate, look-alike column names, and odd rater names (NUL bytes, ``NA``/``null``/``NaN``).

Every hostile file is generated here, in ``tmp_path``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data import ingest, io, schema
from evalcore.errors import DataError

# --------------------------------------------------------------------------- defect 7: very wide files


def _wide_file(path, n_columns: int, rows: int = 40) -> None:
    """A long ratings file with ``n_columns`` columns in all: the five canonical ones and extras."""
    rng = np.random.default_rng(7)
    names = ["item_id", "rater", "rater_kind", "criterion", "score"] + [f"extra_{i}" for i in range(n_columns - 5)]
    lines = [",".join(names)]
    for r in range(rows):
        rater = ("alice", "bob", "gpt-4", "claude-3")[r % 4]
        first = [f"q{r // 4}", rater, "human" if r % 4 < 2 else "judge", "overall", str(1 + r % 5)]
        lines.append(",".join(first + [f"v{x}" for x in rng.integers(0, 100, n_columns - 5)]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_20000_column_file_validates_with_a_note_and_checks_only_the_columns_kept(tmp_path, monkeypatch):
    path = tmp_path / "wide.csv"
    _wide_file(path, 20_000)
    visited: list[int] = []
    real = schema._text_warnings

    def counting(frame, *, file):
        visited.append(frame.shape[1])
        return real(frame, file=file)

    monkeypatch.setattr(schema, "_text_warnings", counting)
    ing = ingest.load(path)
    kept = [c for c in ing.frame.columns if c.startswith("extra_")]
    assert kept == [f"extra_{i}" for i in range(schema.MAX_EXTRA_COLUMNS)]
    # The text checks saw the canonical columns, the extras kept and the row numbers: not 20,000 columns.
    assert visited == [5 + schema.MAX_EXTRA_COLUMNS + 1]
    note = next(n for n in ing.notes if "besides evalcore's own" in n)
    assert "wide.csv has 19,995 columns besides evalcore's own" in note
    assert "the first 200 ('extra_0' to 'extra_199') are kept as segments" in note
    assert "the other 19,795 ('extra_200', 'extra_201', 'extra_202', ...) were left out" in note
    assert len(ing.frame) == 40 and ing.frame["rater"].nunique() == 4


def test_a_wide_file_under_the_limit_keeps_every_column_without_a_note(tmp_path):
    path = tmp_path / "some.csv"
    _wide_file(path, 5 + schema.MAX_EXTRA_COLUMNS)
    ing = ingest.load(path)
    assert ing.frame.shape[1] == 5 + schema.MAX_EXTRA_COLUMNS
    assert not [n for n in ing.notes if "besides evalcore's own" in n]


def test_the_text_checks_still_find_a_formula_and_html_among_many_columns(tmp_path):
    frame = pd.DataFrame({"item_id": ["q1", "q1"], "rater": ["h", "gpt-4"], "rater_kind": ["human", "judge"],
                          "score": ["1", "2"], **{f"c{i}": ["x", "y"] for i in range(50)},
                          "note": pd.array(["=HYPERLINK(1)", "-1"], dtype="string"),
                          "html": ["<b>hi</b>", "plain"]})
    notes = schema.validate(frame, table="ratings", file="f.csv").notes
    assert any("column 'note': 1 cell(s) start like a spreadsheet formula (first at row 2" in n for n in notes)
    assert any("column 'html': 1 cell(s) hold HTML markup (first at row 2: '<b>hi</b>')" in n for n in notes)


def test_validate_called_directly_also_leaves_the_extra_columns_out(tmp_path):
    extras = {f"x{i}": [i, i] for i in range(schema.MAX_EXTRA_COLUMNS + 3)}
    frame = pd.DataFrame({"item_id": ["q1", "q1"], "rater": ["h", "gpt-4"], "rater_kind": ["human", "judge"],
                          "score": [1, 2], **extras})
    v = schema.validate(frame, table="ratings", file="f.csv")
    assert "x199" in v.frame.columns and "x200" not in v.frame.columns
    assert any("the other 3 ('x200', 'x201', 'x202', ...) were left out" in n for n in v.notes)


def test_a_wide_layout_with_many_rater_columns_keeps_every_rater(tmp_path):
    # One column per annotator: the rater columns are data, not extras, however many there are.
    n = schema.MAX_EXTRA_COLUMNS + 50
    frame = pd.DataFrame({"item_id": ["q1", "q2"], **{f"annotator_{i}": [1, 2] for i in range(n)},
                          "gpt-4": [2, 2]})
    ing = ingest.ingest_frame(frame, file="w.csv")
    assert ing.wide is not None
    assert ing.frame["rater"].nunique() == n + 1
