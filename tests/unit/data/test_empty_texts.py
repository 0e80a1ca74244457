"""Empty output texts are outputs of length 0, not missing texts."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.data import ingest
from tests.helpers import PANDALM

COMPARISONS = (
    "item_id,system_a,system_b,rater,rater_kind,winner,text_a,text_b\n"
    "1,x,y,ann,human,a,,long answer\n"
    "1,x,y,gpt-4,judge,b,,long answer\n"
    "2,x,y,ann,human,b,short,\n"
    "2,x,y,gpt-4,judge,b,short,\n"
    "3,x,y,ann,human,a,one,two\n"
    "3,x,y,gpt-4,judge,a,one,two\n"
)


def test_a_blank_text_cell_in_a_csv_is_an_empty_output(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(COMPARISONS)
    ing = ingest.load(path)
    f = ing.frame
    assert f["text_a"].isna().sum() == 0 and f["text_b"].isna().sum() == 0
    assert f["text_a"].str.len().tolist() == [0, 0, 5, 5, 3, 3]
    assert f["text_b"].str.len().tolist() == [11, 11, 0, 0, 3, 3]
    (note,) = [n for n in ing.notes if "empty output texts" in n]
    assert note.startswith("c.csv: empty output texts (text_a of 1 item(s); text_b of 1 item(s)) were kept")


def test_parquet_keeps_empty_texts_and_its_nulls(tmp_path):
    frame = pd.read_csv(pd.io.common.StringIO(COMPARISONS), dtype=str, keep_default_na=False)
    frame.loc[4:5, "text_b"] = None  # an explicit null: a missing text, which Parquet can say
    path = tmp_path / "c.parquet"
    frame.to_parquet(path)
    ing = ingest.load(path)
    assert ing.frame["text_a"].eq("").sum() == 2
    assert ing.frame["text_b"].isna().sum() == 2 and ing.frame["text_b"].eq("").sum() == 2
    assert any("text_a of 1 item(s); text_b of 1 item(s)" in n for n in ing.notes)


def test_a_text_written_once_per_item_is_not_emptied(tmp_path):
    """A blank cell beside a row of the same item that holds the text is "not repeated", not an empty output."""
    path = tmp_path / "r.csv"
    path.write_text("item_id,rater,rater_kind,score,text\n1,ann,human,3,hello there\n1,gpt-4,judge,4,\n"
                    "2,ann,human,2,\n2,gpt-4,judge,2,\n")
    ing = ingest.load(path)
    f = ing.frame.set_index(["item_id", "rater"])["text"]
    assert f[("1", "ann")] == "hello there" and pd.isna(f[("1", "gpt-4")])
    assert f[("2", "ann")] == "" and f[("2", "gpt-4")] == ""  # item 2's output is empty
    assert any("text of 1 item(s)" in n for n in ing.notes)


def test_a_text_column_without_any_text_stays_missing(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("item_id,rater,rater_kind,score,text\n1,ann,human,3,\n1,gpt-4,judge,4,\n")
    ing = ingest.load(path)
    assert ing.frame["text"].isna().all()
    assert not any("empty output" in n for n in ing.notes)


@pytest.mark.skipif(not PANDALM.exists(), reason=f"{PANDALM} not found: the PandaLM check reads the real files")
def test_pandalm_empty_responses_are_counted_and_survive_a_csv_round_trip(tmp_path):
    """PandaLM has 54 items with an empty response; as a folder or as its CSV export, every item stays."""
    from evalcore.pairwise.superficial import length_controlled

    folder = ingest.load([PANDALM], preset="pandalm")
    assert any("text_a of 29 item(s); text_b of 25 item(s)" in n for n in folder.notes)
    path = tmp_path / "pandalm.csv"
    folder.frame.to_csv(path, index=False)
    csv = ingest.load(path)
    assert any("text_a of 29 item(s); text_b of 25 item(s)" in n for n in csv.notes)
    pd.testing.assert_series_equal(csv.frame["text_a"].str.len(), folder.frame["text_a"].str.len())

    def n_items(ing):
        lc = length_controlled(ing.frame, judges="gpt-3.5-turbo", alpha=None, lc=False, n_boot=0)
        row = lc[(lc["system_a"] == "bloom-7b") & (lc["system_b"] == "cerebras-gpt-6.7B") & (lc["measure"] == "win_rate")]
        return int(row["n"].iloc[0])

    assert n_items(csv) == n_items(folder)  # was 92 against 96: four items with an empty output left
