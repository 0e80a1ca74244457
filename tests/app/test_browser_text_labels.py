"""A file of text labels, as a user brings it: PandaLM's real test set written with its labels as words, uploaded
through the browser, imported, then its agreement with the confusion matrix and its Alt-Test verdict, which must
equal what ``evalcore alt-test`` prints for the same file."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from tests.app.browsing import act, dataset_in_url, exceptions, new_tab, shoot, upload, visit
from tests.helpers import PANDALM, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: PandaLM's labels as words: 0 a tie, 1 the first response better, 2 the second.
WORDS = {0: "tie", 1: "first", 2: "second"}


def _pandalm_words(path) -> None:
    """One row per judgment: the three annotators and PandaLM-7B, labels as words."""
    items = json.loads((PANDALM / "testset-v1.json").read_text())
    judged = {r["idx"]: r["pandalm_result"] for r in json.loads((PANDALM / "pandalm-7b-testset-v1.json").read_text())}
    rows = [(f"p{it['idx']}", f"annotator{k}", WORDS[int(it[f"annotator{k}"])]) for it in items for k in (1, 2, 3)]
    rows += [(f"p{it['idx']}", "pandalm-7b", WORDS[int(judged[it["idx"]])]) for it in items if it["idx"] in judged]
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(path, index=False)


def test_a_text_label_file_uploaded_gets_its_confusion_matrix_and_alt_test(browser, app, tmp_path):
    if not PANDALM.exists():
        pytest.skip("../shared/datasets/pandalm not found: this test uploads PandaLM's real labels")
    server, _ = app
    csv = tmp_path / "pandalm_words.csv"
    _pandalm_words(csv)
    page = new_tab(browser)
    upload(page, server, str(csv), mapping="pandalm_words.csv")
    act(page, page.get_by_role("button", name="Import").click, timeout=120_000)
    page.get_by_role("heading", name="pandalm_words", exact=True).wait_for(timeout=60_000)
    assert not exceptions(page)
    dataset = dataset_in_url(page)

    visit(page, server, "Agreement", dataset=dataset, ag_boot=50)
    assert not exceptions(page)
    assert page.get_by_text("is nominal (categories without an order)").count() >= 1
    page.get_by_text("against the humans' majority label").first.wait_for(timeout=30_000)
    shoot(page, "page_Agreement_text_labels.png")

    visit(page, server, "Alt_test", dataset=dataset, at_boot=200)
    assert not exceptions(page)
    shown = page.locator('[data-testid="stAlert"]').first.inner_text()
    shoot(page, "page_Alt_test_text_labels.png")
    cli = subprocess.run([sys.executable, "-m", "evalcore.cli", "alt-test", str(csv), "--judge-rater", "pandalm-7b",
                          "--boot", "200"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert cli.returncode == 0, cli.stderr
    verdict = next(line for line in cli.stdout.splitlines() if line.startswith("pandalm-7b "))
    # the page's sentence is the CLI's (which the terminal wraps after the interval)
    assert verdict.split(" [")[0] in " ".join(shown.split()), (verdict, shown)
    page.close()  # the browser serves the whole session
