"""Hostile text labels: very long, markup, control characters, a million distinct ones.

Text labels are categories kept as written (evalcore.data.categories), so whatever a label holds reaches the
summary, the column mapping's scale choices, the workspace and the CLI. Each hostile label either gets one
message naming the row and the fix, or is kept whole and shown as plain text, cut where it is shown. Every file is
generated here, in ``tmp_path``.
"""

from __future__ import annotations

import time

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.cli import main
from evalcore.data import ingest
from evalcore.data.categories import MAX_CATEGORIES
from evalcore.data.store import READY
from evalcore.data.validation import validate
from evalcore.errors import DataError
from tests.helpers import ROOT
from tests.hostile.test_markup import A_TAG, BOLD_MD, FORMULA, IMG, LOGIN, raw_markdown, rendered

#: A label as long as a pasted essay: kept whole, shown cut.
LONG = "excellent " * 10_000
#: The labels of the hostile file: links and images, a tag, bold, a formula, the long one, and a plain one.
LABELS = [LOGIN, A_TAG, BOLD_MD, FORMULA, LONG.strip(), "fine"]


def _csv(labels: list[str], criterion: str = IMG) -> bytes:
    """Two annotators and a judge on each of six items, on one criterion, each label given in turn."""
    rows = pd.DataFrame([{"item_id": f"q{i}", "rater": r, "rater_kind": "judge" if r == "gpt-4" else "human",
                          "criterion": criterion, "score": labels[(i + k) % len(labels)]}
                         for i in range(6) for k, r in enumerate(("ann1", "ann2", "gpt-4"))])
    return rows.to_csv(index=False).encode()


def test_markup_and_long_labels_are_kept_whole_and_reported(tmp_path):
    path = tmp_path / "hostile.csv"
    path.write_bytes(_csv(LABELS))
    ing = ingest.load(path)
    assert set(ing.frame["category"]) == set(LABELS)  # whole, as written
    notes = " ".join(ing.notes)
    assert "hold HTML markup" in notes and "start like a spreadsheet formula" in notes


def test_validate_prints_labels_cut_and_on_one_line(tmp_path, capsys):
    path = tmp_path / "hostile.csv"
    path.write_bytes(_csv([LONG.strip(), "two\nlines", "fine"], criterion="tone"))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    block = " ".join(out.split("scales:\n")[1].split("analyses:")[0].split())
    assert block.startswith("tone nominal, 3 categories: ") and "'two\\nlines'" in block
    assert "'excellent excellent excellent excellent…'" in block and LONG[:100] not in out
    assert max(map(len, out.splitlines())) <= 120


def test_a_label_with_a_nul_byte_is_refused():
    """A CSV with a NUL byte is refused as binary by the reader; a table built in Python reaches validation."""
    frame = pd.read_csv(pd.io.common.StringIO(_csv(["yes", "no", "yes"]).decode()))
    frame.loc[4, "score"] = "yes\x00"
    with pytest.raises(DataError, match=r"row 6, column 'score': 1 label\(s\) hold an invisible control character: "
                                        r"'yes\\x00'"):
        validate(frame, file="f.csv")


@pytest.mark.parametrize("char", ["\x07", "\x1b", "\x7f"])
def test_a_label_with_a_control_character_is_refused_with_its_row(tmp_path, capsys, char):
    path = tmp_path / "ctrl.csv"
    path.write_bytes(_csv(["yes", "no", f"yes{char}"], criterion="ok"))
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"row 4, column 'score': 6 label(s) hold an invisible control character: 'yes\\x{ord(char):02x}'" in err
    assert "Fix: delete the character" in err


def test_a_million_distinct_labels_get_one_message_in_seconds(tmp_path, capsys):
    """A column of free text mapped to score: every cell another label."""
    path = tmp_path / "million.csv"
    n = 1_000_000
    with open(path, "w") as fh:
        fh.write("item_id,rater,rater_kind,score\n")
        fh.writelines(f"q{i // 2},{'gpt-4' if i % 2 else 'ann'},{'judge' if i % 2 else 'human'},said {i}\n"
                      for i in range(n))
    start = time.monotonic()
    assert main(["validate", str(path)]) == 1
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err
    assert (f"column 'score': criterion 'overall' has {n:,} distinct labels ('said 0', 'said 1', 'said 2', ...): more "
            f"than {MAX_CATEGORIES:,} categories are free text or ids, not ratings. Fix: map the column that holds the "
            "ratings to score") in err


def test_the_upload_panel_and_the_summary_show_hostile_labels_as_text(ws):
    did = ws.save_upload([("hostile.csv", _csv(LABELS))])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = did
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    order = at.multiselect(key=f"order_{did}_{IMG}")
    assert order.options == LABELS  # every label offered, as written
    texts, _ = rendered(at)
    assert not raw_markdown(texts), raw_markdown(texts)
    at.button(key=f"import_{did}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert ws.info(did).status == READY
    assert set(ws.load_table(did, "ratings")["category"]) == set(LABELS)
    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    home.query_params["dataset"] = did
    home.run()
    assert not home.exception, [e.value for e in home.exception]
    texts, _ = rendered(home)
    assert not raw_markdown(texts), raw_markdown(texts)
    scales = next(d.value for d in home.dataframe if "categories" in d.value.columns)
    assert scales["scale"].tolist() == ["nominal"] and len(scales["categories"].iloc[0]) < 400
