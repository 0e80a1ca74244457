"""A stray score (a typo such as 1e6) is named where an analyst reads the bias results: the Bias page and the
HTML report, as the CLI's ``bias`` does."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from evalcore.cli import main
from evalcore.data.ingest import load_samples
from tests.helpers import APP, ROOT


def _with_stray():
    # Two of the sample's ten languages, a fifth of the rows (every criterion, judge and layout): the note depends
    # on one score, not on how many others there are.
    ratings = load_samples()["ratings"].frame
    ratings = ratings[ratings["language"].isin(["English", "Hindi"])].reset_index(drop=True)
    row = ratings.index[(ratings["rater_kind"] == "judge") & (ratings["criterion"] == "H")][0]
    ratings.loc[row, "score"] = 1e6
    return ratings, f"score 1e+06 by '{ratings.at[row, 'rater']}' on item '{ratings.at[row, 'item_id']}'"


def test_the_bias_page_names_the_stray_score(ws):
    ratings, named = _with_stray()
    did = ws.save_dataset("stray", {"ratings": ratings}, source="stray.csv")
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["dataset"] = did
    at = at.run().switch_page(str(ROOT / "app_pages" / "2_Bias.py")).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [w.value.replace("\\", "") for w in at.warning]
    assert any(w.startswith("On H: " + named) and "looks like a typo" in w for w in shown), shown


def test_the_html_report_names_the_stray_score(tmp_path, capsys):
    ratings, named = _with_stray()
    ratings.to_csv(tmp_path / "stray.csv", index=False)
    assert main(["report", str(tmp_path / "stray.csv"), "--boot", "0", "--out", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "On H: " + named.replace("'", "&#x27;") in html
