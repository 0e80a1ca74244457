"""AppTest tests of the landing page: sample data, upload, mapping, presets, saved datasets."""

from __future__ import annotations

import io as _io

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.store import NEEDS_MAPPING, READY
from evalcore.ui.analyses import REPORT
from tests.app.apptest import open_page, store_sample
from tests.helpers import DATASETS, ROOT

LONG_CSV = (b"item,annotator,criterion,score,lang\n1,ann1,LA,2,hi\n1,ann2,LA,1,hi\n1,gpt-4,LA,2,hi\n"
            b"2,ann1,LA,2,en\n2,ann2,LA,2,en\n2,gpt-4,LA,1,en\n")




def _app() -> AppTest:
    return open_page(timeout=120)


def _import_button(at: AppTest):
    return next(b for b in at.button if b.key and b.key.startswith("import_"))


def _set_role(at: AppTest, key: str, rater: str, role: str) -> None:
    """Change one rater's role in the rater table, as a click in its role cell does (edits accumulate)."""
    roles = at.data_editor(key=key).value
    state = at.session_state[key] if key in at.session_state else {}
    edited = dict(state.get("edited_rows", {})) if state else {}
    edited[int(roles.index[roles["rater"] == rater][0])] = {"role": role}
    at.session_state[key] = {"edited_rows": edited, "added_rows": [], "deleted_rows": []}
    at.run()


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_landing_page_opens_empty(ws):
    at = _app()
    _clean(at)
    assert at.title[0].value == "evalcore"
    assert at.button(key="load_sample").label == "Load the sample data"
    assert any("Load the sample data" in i.value for i in at.info)


def test_sample_button_loads_both_tables_in_one_click(ws):
    at = _app()
    at.button(key="load_sample").click().run()
    _clean(at)
    (info,) = ws.list_datasets()
    assert info.status == READY and set(info.tables) == {"ratings", "comparisons"}
    assert at.header[0].value.startswith("Sample: multilingual ratings")
    labels = [m.label for m in at.metric]
    second = labels.index("Rows", 1)  # the ratings block comes first, then the comparisons block
    metrics = {m.label: m.value for m in at.metric[:second]}
    ratings = pd.read_csv(ROOT / "sample_data" / "ratings_multilingual.csv")
    assert at.metric[0].value == f"{len(ratings):,}"
    assert metrics["Languages"] == str(ratings["language"].nunique())
    # The pairwise block once showed "Languages 0 / Criteria 0"; a count appears only where it applies.
    assert not [(m.label, m.value) for m in at.metric if m.value == "0"]
    assert "Systems" in labels[second:]
    # A second click reuses the stored sample instead of duplicating it.
    at.button(key="load_sample").click().run()
    assert len(ws.list_datasets()) == 1
    # The sidebar names the current dataset.
    assert at.sidebar.selectbox(key="sidebar_dataset").value == info.id
    # What it unlocks: only analyses with a page or a command today, each saying where; links to the pages.
    unlocks = [t.value for t in at.table if "where" in t.value.columns]
    assert len(unlocks) == 2
    titles = " ".join(t for u in unlocks for t in u["analysis"])
    assert "Position bias" in titles and "CalibraEval" in titles and "Superficial" in titles
    assert all(u.loc[u["available"] == "✓", "where"].str.contains("page").all() for u in unlocks)
    links = {link.value: link.proto.query_string for link in at.page_link}
    assert {"Open Agreement", "Open Bias", "Open Win rates", "Open Superficial quality", "Open Position bias"} <= set(links)
    assert links["Open Bias"] == f"dataset={info.id}"


def test_upload_map_and_import(ws):
    at = _app()
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert pending.status == NEEDS_MAPPING  # stored before mapping: a refresh loses nothing
    assert any(s.value.startswith("Ready: 6 judgments of 2 items") for s in at.success)
    # The mapping is shown and editable: auto-detected 'lang' -> language.
    assert at.selectbox(key=f"map_{pending.id}_ratings_language").value == "lang"
    assert at.selectbox(key=f"map_{pending.id}_ratings_item_id").value == "item"
    # Which raters are judges (no rater_kind column): shown before the import, guessed from names, editable.
    roles = at.data_editor(key=f"roles_{pending.id}_annotator").value
    assert roles[["rater", "rows", "role"]].values.tolist() == [["ann1", 2, "human"], ["ann2", 2, "human"],
                                                                ["gpt-4", 2, "judge"]]
    assert any("1 judge(s) and 2 human(s)" in c.value for c in at.caption)
    at.text_input(key=f"name_{pending.id}").set_value("my audit").run()
    _import_button(at).click().run()
    _clean(at)
    info = ws.info(pending.id)
    assert info.status == READY and info.name == "my audit" and info.tables == {"ratings": 6}
    frame = ws.load_table(pending.id, "ratings")
    assert sorted(frame["rater_kind"]) == ["human"] * 4 + ["judge"] * 2
    assert set(frame["language"]) == {"hi", "en"}
    assert at.header[0].value == "my audit"
    # The same file again: it opens "my audit" instead of storing a copy named "judgments (2)".
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    _clean(at)
    assert [d.name for d in ws.list_datasets()] == ["my audit"]
    assert any("already imported as 'my audit'" in i.value for i in at.info)
    assert at.header[0].value == "my audit"


def test_changing_the_mapping_changes_the_import(ws):
    at = _app()
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    (pending,) = ws.list_datasets()
    # Unmap the score: the page explains what is missing instead of importing.
    at.selectbox(key=f"map_{pending.id}_ratings_score").set_value("(none)").run()
    _clean(at)
    assert any("required column 'score' is missing" in e.value for e in at.error)
    assert not [b for b in at.button if b.key and b.key.startswith("import_")]
    at.selectbox(key=f"map_{pending.id}_ratings_score").set_value("score").run()
    # Treat gpt-4 as human too: now there is no judge, and the page says so, naming the table to fix it in.
    _set_role(at, f"roles_{pending.id}_annotator", "gpt-4", "human")
    (err,) = [e.value for e in at.error]
    assert "there are no judge rows" in err and "the table 'Which raters are LLM judges?'" in err
    assert "--judge-rater" not in err
    # Mark ann2 a judge instead: the import follows the table.
    _set_role(at, f"roles_{pending.id}_annotator", "ann2", "judge")
    assert any(s.value.startswith("Ready: 6 judgments of 2 items by 2 human(s) and 1 judge(s)") for s in at.success)
    _import_button(at).click().run()
    frame = ws.load_table(pending.id, "ratings")
    assert set(frame.loc[frame["rater_kind"] == "judge", "rater"]) == {"ann2"}


def test_pending_upload_survives_a_refresh(ws):
    at = _app()
    at.file_uploader[0].set_value(("judgments.csv", LONG_CSV, "text/csv")).run()
    (pending,) = ws.list_datasets()
    # A new session (browser refresh) finds the upload in the saved list and resumes mapping.
    at2 = _app()
    _clean(at2)
    assert at2.selectbox(key="saved_choice").value == pending.id
    at2.button(key="saved_map").click().run()
    _clean(at2)
    _import_button(at2).click().run()
    assert ws.info(pending.id).status == READY


def test_wide_file_is_reshaped(ws):
    wide = b"item_id,language,human_1,human_2,gpt4_judge\nq1,de,3,4,5\nq2,de,2,,4\nq3,fr,5,5,5\n"
    at = _app()
    at.file_uploader[0].set_value(("wide.csv", wide, "text/csv")).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert at.radio(key=f"layout_{pending.id}").value == "wide"
    assert at.multiselect(key=f"wh_{pending.id}").value == ["human_1", "human_2"]
    assert at.multiselect(key=f"wj_{pending.id}").value == ["gpt4_judge"]
    _import_button(at).click().run()
    frame = ws.load_table(pending.id, "ratings")
    assert len(frame) == 8  # 9 cells, one empty
    assert frame.groupby("rater_kind").size().to_dict() == {"human": 5, "judge": 3}


def test_excel_with_several_sheets_asks_for_one(ws):
    buf = _io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as xl:
        pd.DataFrame({"notes": ["read me"]}).to_excel(xl, sheet_name="About", index=False)
        pd.read_csv(_io.BytesIO(LONG_CSV)).to_excel(xl, sheet_name="Ratings", index=False)
    at = _app()
    at.file_uploader[0].set_value(("book.xlsx", buf.getvalue(), "application/vnd.ms-excel")).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert any("has 2 sheets with data (About, Ratings)" in w.value for w in at.warning)
    at.selectbox(key=f"sheet_{pending.id}").set_value("Ratings").run()
    _clean(at)
    _import_button(at).click().run()
    assert ws.info(pending.id).tables == {"ratings": 6}


def test_bad_file_shows_one_message_and_stores_nothing(ws):
    at = _app()
    at.file_uploader[0].set_value(("scores.csv", b"item_id,rater,score\n", "text/csv")).run()
    _clean(at)
    assert [e.value for e in at.error] == [
        "scores.csv: has a header but no data rows. Fix: add the judgments below the header row, or choose "
        "the full export."]
    assert ws.list_datasets() == []


def test_rename_and_delete(ws):
    store_sample(ws.path)  # as the sample's button stores it (the button: the test above)
    at = _app()
    (info,) = ws.list_datasets()
    at.text_input(key=f"rename_{info.id}").set_value("Demo for the board").run()
    at.button(key="saved_rename").click().run()
    _clean(at)
    assert ws.info(info.id).name == "Demo for the board"
    # Delete needs a confirmation.
    assert at.button(key="saved_delete").disabled
    at.checkbox(key=f"sure_{info.id}").check().run()
    at.button(key="saved_delete").click().run()
    _clean(at)
    assert ws.list_datasets() == []
    assert any("Load the sample data" in i.value for i in at.info)


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data app tests need it")
def test_llmbar_result_upload_uses_the_preset(ws):
    path = DATASETS / "llmbar" / "Natural" / "evaluators" / "GPT-4" / "Vanilla_NoRules" / "result.json"
    at = _app()
    at.file_uploader[0].set_value(("result.json", path.read_bytes(), "application/json")).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert at.selectbox(key=f"preset_{pending.id}").value == "llmbar"
    # A bare result.json does not say who judged: the import waits for a name, never the generic "judge".
    assert _import_button(at).disabled
    at.text_input(key=f"llmbar_judge_{pending.id}").input("GPT-4").run()
    at.text_input(key=f"llmbar_subset_{pending.id}").input("Natural").run()
    _import_button(at).click().run()
    _clean(at)
    frame = ws.load_table(pending.id, "comparisons")
    assert frame["item_id"].nunique() == 100
    judge = frame[frame["rater_kind"] == "judge"]
    assert set(judge["rater"]) == {"GPT-4/Vanilla"} and set(frame["subset"]) == {"Natural"}
    assert judge.groupby("swapped").size().to_dict() == {False: 100, True: 100}
    # Verdicts in both orders unlock the Position bias page (and nothing that needs systems or probabilities).
    unlocks = next(t.value for t in at.table if "where" in t.value.columns).set_index("analysis")
    assert (unlocks["available"] == "✓").sum() == 1
    assert (unlocks.filter(like="Position bias", axis=0)["available"] == "✓").any()
    assert [link.value for link in at.page_link if link.value.startswith("Open ")] == ["Open Position bias"]


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data app tests need it")
def test_pandalm_three_files_upload_together(ws):
    files = [(p.name, p.read_bytes(), "application/json") for p in sorted((DATASETS / "pandalm").glob("*.json"))]
    at = _app()
    at.file_uploader[0].set_value(files).run()
    _clean(at)
    (pending,) = ws.list_datasets()
    assert at.selectbox(key=f"preset_{pending.id}").value == "pandalm"
    _import_button(at).click().run()
    _clean(at)
    frame = ws.load_table(pending.id, "comparisons")
    assert frame["item_id"].nunique() == 999
    assert set(frame.loc[frame["rater_kind"] == "judge", "rater"]) == {"gpt-3.5-turbo", "pandalm-7b"}


def test_the_html_report_is_built_and_offered_for_download(ws):
    store_sample(ws.path)  # as the sample's button stores it (the button: test_sample_button_loads_both_tables...)
    at = _app()
    _clean(at)
    at.button(key="report_comparisons").click().run()
    _clean(at)
    (info,) = ws.list_datasets()
    keys = ws.result_keys(info.id)
    # the stored report is the one the page asks for: the Analysis's own key, whatever its version
    key = REPORT.key(kind="comparisons", n_boot=1000, seed=0)
    assert key in keys
    buttons = [b for b in at.get("download_button") if b.proto.label == "Download the report (HTML)"]
    assert len(buttons) == 1
    # the stored report opens offline and starts with the judge report card
    html = ws.load_result(info.id, key)["html"]
    assert html.startswith("<!DOCTYPE html>") and html.index("1. Judge report card") < html.index("2. The data")
    assert "https://" not in html.replace(html[html.index("<script"):html.index("</script>")], "")


def test_tables_download_as_csv_and_parquet(ws):
    import io

    import pandas as pd

    from evalcore.ui.state import _parquet

    frame = pd.DataFrame({"judge": ["=cmd|' /C calc'!A0", "b"], "estimate": [0.5, float("nan")]})
    back = pd.read_parquet(io.BytesIO(_parquet(frame)))
    pd.testing.assert_frame_equal(back, frame)  # typed, unaltered (the CSV is the one that neutralises formulas)
    mixed = pd.read_parquet(io.BytesIO(_parquet(pd.DataFrame({"x": [1, "a", 2.5], "y": [1, 2, 3]}))))
    assert list(mixed["x"]) == ["1", "a", "2.5"] and list(mixed["y"]) == [1, 2, 3]  # mixed objects become text
    store_sample(ws.path)  # as the sample's button stores it (the button: test_sample_button_loads_both_tables...)
    at = _app()
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("… as Parquet") == labels.count("Download the ratings table (CSV)") + labels.count(
        "Download the comparisons table (CSV)") >= 1


def _zip_folder(folder, *, root: str) -> bytes:
    """The bytes of a .zip of ``folder`` with paths under ``root/``, as a file manager would make it."""
    import zipfile

    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, f"{root}/{p.relative_to(folder)}")
    return buf.getvalue()


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the LLMBar zip is built from it")
def test_a_zip_of_the_llmbar_folder_uploads_every_judge(ws):
    """Several judges' result.json at once, as a .zip of their folder, read as the folder is."""
    data = _zip_folder(DATASETS / "llmbar", root="llmbar")
    at = _app()
    at.file_uploader[0].set_value(("llmbar.zip", data, "application/zip")).run()
    _clean(at)
    assert not at.error, [e.value for e in at.error]
    (pending,) = ws.list_datasets()
    assert at.selectbox(key=f"preset_{pending.id}").value == "llmbar"
    assert not _import_button(at).disabled  # the folders inside name the judges: nothing to type
    _import_button(at).click().run()
    _clean(at)
    frame = ws.load_table(pending.id, "comparisons")
    judges = set(frame.loc[frame["rater_kind"] == "judge", "rater"])
    assert judges == {"GPT-4/Vanilla_NoRules", "GPT-4/Rating_NoRules", "ChatGPT/Vanilla_NoRules",
                      "ChatGPT/Rating_NoRules"}
    assert frame["item_id"].nunique() == 419 and frame["subset"].nunique() == 5


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data app tests need it")
def test_several_result_json_at_once_are_told_to_come_as_a_zip(ws):
    base = DATASETS / "llmbar" / "Natural" / "evaluators"
    files = [("result.json", (base / j / "Vanilla_NoRules" / "result.json").read_bytes(), "application/json")
             for j in ("GPT-4", "ChatGPT")]
    at = _app()
    at.file_uploader[0].set_value(files).run()
    _clean(at)
    (err,) = [e.value for e in at.error]
    assert "2 of the uploaded files are named 'result.json'" in err and ".zip" in err
    assert ws.list_datasets() == []


def test_a_hostile_zip_is_refused_naming_the_whole_file(ws):
    import zipfile

    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../outside.csv", "a,b\n1,2\n")
    at = _app()
    at.file_uploader[0].set_value(("statistics-of-judges.zip", buf.getvalue(), "application/zip")).run()
    _clean(at)
    (err,) = [e.value for e in at.error]
    assert err.startswith("statistics-of-judges.zip: holds '../../outside.csv'") and "leads out" in err
    assert ws.list_datasets() == []


def test_the_uploader_states_our_size_limit_not_streamlits(ws, monkeypatch):
    """The widget once printed Streamlit's "1GB per file" under our "Limit 200 MB"."""
    at = _app()
    assert at.file_uploader[0].proto.max_upload_size_mb == 200
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "50")
    at = _app()
    assert at.file_uploader[0].proto.max_upload_size_mb == 50
    assert any("Limit 50 MB per file" in m.value for m in at.markdown)
