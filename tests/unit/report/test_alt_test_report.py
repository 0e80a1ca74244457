"""The Alt-Test in the HTML report and the judge report card: the library's numbers, its verdict in each judge's
card, and a clear reason where the data cannot support the test."""

from __future__ import annotations

import html as html_lib

import pandas as pd
import pytest

from evalcore.data.ingest import Ingested, load
from evalcore.pointwise.alt_test import alt_test, alt_test_verdicts
from evalcore.report.card import ALT_TEST_EPSILON, report_card, run_audit
from evalcore.report.html import build_report
from tests.helpers import SAMPLE

BOOT = 50


@pytest.fixture(scope="module")
def small() -> Ingested:
    """Every fifth item of the sample: every annotator keeps more than 30 units, the audit a fifth of the time."""
    ing = load(SAMPLE, table="ratings")
    items = ing.frame["item_id"].unique()[::5]
    return Ingested(table="ratings", frame=ing.frame[ing.frame["item_id"].isin(items)].reset_index(drop=True),
                    source=ing.source)


@pytest.fixture(scope="module")
def report(small):
    return build_report(small, n_boot=BOOT, seed=0, inputs=["ratings.csv"])


def test_the_audit_holds_the_librarys_alt_test(small, report):
    ref = alt_test(small.frame, epsilon=ALT_TEST_EPSILON, n_boot=BOOT, seed=0)
    pd.testing.assert_frame_equal(report.audit.results["alt_test"], ref)


def test_each_card_states_the_verdict_with_its_numbers(small, report):
    ref = alt_test(small.frame, epsilon=ALT_TEST_EPSILON, n_boot=BOOT, seed=0).set_index(["judge", "measure"])
    for card in report.card.cards:
        wr = ref.loc[(card.judge, "winning_rate")]
        ap = ref.loc[(card.judge, "advantage_probability")]
        said = next(s for s in card.sentences if "Alt-Test" in s)
        verdict = "Passes" if wr["passed"] else "Fails"
        m = int(wr["n_annotators"])
        assert said.startswith(f"{verdict} the Alt-Test at epsilon {ALT_TEST_EPSILON:g}, all criteria and languages pooled (beats "
                               f"{round(wr['estimate'] * m)} of {m} annotators; advantage probability "
                               f"{ap['estimate']:.2f} [{ap['ci_low']:.2f}, {ap['ci_high']:.2f}])"), said


def test_the_report_has_the_section_with_the_verdicts_and_the_command(small, report):
    text = report.html
    assert "id='alt_test'" in text
    ref = alt_test(small.frame, epsilon=ALT_TEST_EPSILON, n_boot=BOOT, seed=0)
    for line in alt_test_verdicts(ref):
        assert f"<li>{html_lib.escape(line, quote=True)}</li>" in text or f"<li>{html_lib.escape(line)}</li>" in text
    assert "evalcore alt-test ratings.csv --epsilon 0.2" in html_lib.unescape(text)


def test_too_few_items_per_annotator_is_said_not_run():
    ing = load(SAMPLE, table="ratings")
    frame = ing.frame[ing.frame["item_id"].isin(ing.frame["item_id"].unique()[:5])].reset_index(drop=True)
    audit = run_audit(frame, table="ratings", n_boot=0, seed=0)
    assert "alt_test" not in audit.results
    assert "too few items per annotator" in audit.skipped["alt_test"]
    assert all("Alt-Test" not in s for c in report_card(audit).cards for s in c.sentences)
