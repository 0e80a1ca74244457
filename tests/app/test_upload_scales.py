"""The column mapping's scales: each criterion's scale, and the order of text labels, chosen before import,
saved with the upload (another session and a reload map it the same way) and with the imported table. A known
format of ratings (HANNA, crowd-kit) offers the same choices and applies them as ``--scale``/``--order`` do."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import evalcore
from evalcore.cli import main
from evalcore.data.ingest import load
from evalcore.data.store import READY
from evalcore.text import md
from tests.app.apptest import AGREEMENT, open_page
from tests.app.test_messages import NOT_IN_THE_APP
from tests.helpers import HANNA, SMALL

LABELS_CSV = ("item_id,rater,rater_kind,criterion,score\n"
              "q1,ann,human,stance,agree\nq1,bob,human,stance,Agree\nq1,gpt-4,judge,stance,disagree\n"
              "q2,ann,human,stance,agree\nq2,bob,human,stance,neutral\nq2,gpt-4,judge,stance,agree\n"
              "q1,ann,human,quality,bad\nq1,bob,human,quality,ok\nq1,gpt-4,judge,quality,good\n"
              "q2,ann,human,quality,ok\nq2,bob,human,quality,ok\nq2,gpt-4,judge,quality,good\n"
              "q1,ann,human,len,3\nq1,gpt-4,judge,len,4\n").encode()


def _clean(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_order_chosen_for_text_labels_is_saved_with_the_upload_and_imported(ws):
    did = ws.save_upload([("labels.csv", LABELS_CSV)])
    at = _clean(open_page(dataset=did))
    assert [s.key for s in at.selectbox if s.key.startswith("scale_")] == [
        f"scale_{did}_stance", f"scale_{did}_quality", f"scale_{did}_len"]
    assert [m.key for m in at.multiselect] == [f"order_{did}_stance", f"order_{did}_quality"]  # text labels only
    assert at.multiselect(key=f"order_{did}_quality").options == ["bad", "ok", "good"]
    assert any("labels that differ only in case" in w.value for w in at.warning)  # 'agree' / 'Agree'
    _clean(at.multiselect(key=f"order_{did}_quality").set_value(["bad", "ok", "good"]).run())
    assert not at.error, [e.value for e in at.error]
    assert ws.upload_options(did) == {"scale": {}, "order": {"quality": ["bad", "ok", "good"]}}
    # Another session (or a reload) maps the upload the same way.
    other = _clean(open_page(dataset=did))
    assert other.multiselect(key=f"order_{did}_quality").value == ["bad", "ok", "good"]
    _clean(other.button(key=f"import_{did}").click().run())
    assert ws.info(did).status == READY
    table = ws.load_table(did, "ratings")
    quality = table[table["criterion"] == "quality"]
    assert quality["score"].tolist() == [1.0, 2.0, 3.0, 2.0, 2.0, 3.0]
    assert set(quality["scale"]) == {"ordinal"}
    assert set(table.loc[table["criterion"] == "stance", "scale"]) == {"nominal"}
    assert ws.table_meta(did, "ratings")["options"] == {"order": {"quality": ["bad", "ok", "good"]}}
    # The dataset's summary says each criterion's scale.
    home = _clean(open_page(dataset=did))
    scales = next(d.value for d in home.dataframe if "categories" in d.value.columns)
    assert scales.values.tolist() == [["stance", "nominal", "categories", "4: agree, Agree, disagree, neutral"],
                                      ["quality", "ordinal", "ordered categories", "3: bad, ok, good"],
                                      ["len", "ordinal", "numbers", ""]]


def test_mixed_labels_say_what_to_choose_and_declaring_them_nominal_imports_them(ws):
    mixed = b"item_id,rater,rater_kind,score\nq1,ann,human,4\nq1,gpt-4,judge,good\nq2,ann,human,5\nq2,gpt-4,judge,2\n"
    did = ws.save_upload([("mixed.csv", mixed)])
    at = _clean(open_page(dataset=did))
    (error,) = [e.value for e in at.error]
    plain = error.replace("\\", "")
    assert "criterion 'overall' mixes numbers ('4', '5', '2') and text labels ('good': 1 row(s))" in plain
    assert "choose nominal as the Scale of overall under Scales in the column mapping" in plain
    assert not NOT_IN_THE_APP.search(plain)
    _clean(at.selectbox(key=f"scale_{did}_overall").set_value("nominal").run())
    assert not at.error and any(s.value.startswith("Ready:") for s in at.success)
    assert ws.upload_options(did)["scale"] == {"overall": "nominal"}
    _clean(at.button(key=f"import_{did}").click().run())
    assert ws.load_table(did, "ratings")["category"].tolist() == ["4", "good", "5", "2"]


# --------------------------------------------------------------------------- a known format's scales

def _small_hanna(tmp_path):
    """HANNA's file cut to its first system (96 stories, all criteria and raters): the format, faster."""
    if not HANNA.exists():
        pytest.skip("../shared/datasets/hanna not found: this test uploads HANNA's file")
    path = tmp_path / HANNA.name
    pd.read_csv(HANNA, nrows=1, dtype=str, keep_default_na=False).to_csv(path, index=False)
    return path


def _upload(path, mime: str = "text/csv") -> tuple[AppTest, str]:
    """The home page after ``path`` was uploaded: its mapping panel, and the upload's id."""
    at = open_page()
    _clean(at.file_uploader[0].set_value((path.name, path.read_bytes(), mime)).run())
    (did,) = [b.key.removeprefix("import_") for b in at.button if b.key and b.key.startswith("import_")]
    return at, did


def test_a_preset_offers_the_scales_of_its_criteria_and_imports_a_criterion_declared_nominal(ws, tmp_path):
    path = _small_hanna(tmp_path)
    at, did = _upload(path)
    assert at.selectbox(key=f"preset_{did}").value == "hanna"
    criteria = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
    assert [s.key for s in at.selectbox if s.key.startswith("scale_")] == [f"scale_{did}_{c}" for c in criteria]
    assert at.selectbox(key=f"scale_{did}_Relevance").value == "auto"  # what the file implies: numbers, ordinal
    assert not at.multiselect  # numbers: no order to give
    _clean(at.selectbox(key=f"scale_{did}_Relevance").set_value("nominal").run())
    assert not at.error and any(s.value.startswith("Ready:") for s in at.success)
    assert ws.upload_options(did)["scale"] == {"Relevance": "nominal"}
    _clean(at.button(key=f"import_{did}").click().run())
    assert ws.info(did).status == READY
    table = ws.load_table(did, "ratings")
    assert set(table.loc[table["criterion"] == "Relevance", "scale"]) == {"nominal"}
    assert set(table.loc[table["criterion"] != "Relevance", "scale"]) == {"ordinal"}
    assert ws.table_meta(did, "ratings")["options"] == {"scale": {"Relevance": "nominal"}}
    # What the library (and the CLI's --scale Relevance=nominal) makes of the same file and declaration.
    expected = evalcore.read(path, scale={"Relevance": "nominal"})
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)
    page = _clean(open_page(AGREEMENT, dataset=did, ag_boot="0"))
    assert any(i.value.startswith("Relevance is nominal") for i in page.info), [i.value for i in page.info]


def test_a_preset_imported_without_declarations_is_unchanged(ws, tmp_path):
    path = _small_hanna(tmp_path)
    at, did = _upload(path)
    _clean(at.button(key=f"import_{did}").click().run())
    table = ws.load_table(did, "ratings")
    assert "scale" not in table.columns and "category" not in table.columns
    assert ws.table_meta(did, "ratings")["options"] == {}
    expected = load(path, preset="hanna").frame
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)


def test_a_wrong_order_on_a_preset_gets_the_message_of_the_cli(ws, tmp_path, capsys):
    """crowd-kit's text labels, ordered without one of them: the one message `evalcore validate --order` prints,
    and no Import button."""
    path = tmp_path / "labels.csv"
    path.write_text("task,worker,label\nq1,ann,bad\nq1,bob,ok\nq1,gpt-4,good\nq2,ann,ok\nq2,bob,ok\nq2,gpt-4,good\n")
    at, did = _upload(path)
    assert at.selectbox(key=f"preset_{did}").value == "crowdkit"
    assert at.multiselect(key=f"order_{did}_overall").options == ["bad", "ok", "good"]
    _clean(at.multiselect(key=f"order_{did}_overall").set_value(["bad", "ok"]).run())
    assert main(["validate", str(path), "--order", "overall=bad,ok"]) == 1
    cli = capsys.readouterr().err.strip().removeprefix("evalcore: error: ")
    assert [e.value for e in at.error] == [md(cli)]
    assert not any(b.key == f"import_{did}" for b in at.button)
    # Declared ordinal without an order: the CLI's --order in the fix becomes the control of the page.
    _clean(at.multiselect(key=f"order_{did}_overall").set_value([]).run())
    _clean(at.selectbox(key=f"scale_{did}_overall").set_value("ordinal").run())
    (error,) = [e.value.replace("\\", "") for e in at.error]
    assert "is declared ordinal but holds text labels" in error and not NOT_IN_THE_APP.search(error)
    assert "choose the labels of overall in order, lowest first, under Scales" in error


def test_a_comparisons_preset_shows_no_scales(ws):
    at, did = _upload(SMALL / "bayescal_small.csv")
    assert at.selectbox(key=f"preset_{did}").value == "bayescal"
    assert not [s for s in at.selectbox if s.key.startswith("scale_")]
    assert not any(m.value == "**Scales**" for m in at.markdown)
