"""The column mapping's scales: each criterion's scale, and the order of text labels, chosen before import,
saved with the upload (another session and a reload map it the same way) and with the imported table."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from evalcore.data.store import READY
from tests.app.apptest import open_page
from tests.app.test_messages import NOT_IN_THE_APP

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
