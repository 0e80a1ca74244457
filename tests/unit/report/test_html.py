"""The self-contained HTML report (:mod:`evalcore.report.html`): offline, plotly.js once, the library's numbers
printed, the report card first, data escaped, and every input kind (ratings, comparisons, HANNA)."""

from __future__ import annotations

import dataclasses
import html as html_lib
import re

import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from evalcore.data.ingest import Ingested, load
from evalcore.data.validation import validate
from evalcore.report.html import build_report, cell, figure_html, render, table_html
from tests.helpers import SAMPLE, SAMPLE_PAIRS, needs_datasets
from tests.unit.hanna import hanna

BOOT = 200
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def ratings_report():
    return build_report(load(SAMPLE, table="ratings"), n_boot=BOOT, seed=0, inputs=["ratings_multilingual.csv"])


#: Import notes with markup in them, as a moved upload's notes could read.
NOTES = ("a.csv: column(s) '<unnamed: 3>', 'a<b' were not mapped and were left out.",
         "Scores <b>bold</b> & \"quoted\" <script>x</script>, end of the note.")
#: A cell with HTML markup (the note that quotes it once cut it mid-word and mid-element).
CELL = "<p>Resumen: el <b>texto</b> habla de\nla economía vasca y de sus <i>empresas</i></p>"


@pytest.fixture(scope="module")
def hostile() -> tuple[Ingested, object]:
    """Every tenth item of the sample (120 items, every language and rater; the audit takes a tenth of the time),
    with everything that must reach the page as text: a judge and a language named with HTML, a text column of
    HTML, a file name with markup and import notes with markup. One report (50 resamples) for the tests of what
    the page says about names and notes, which do not depend on the items."""
    ing = load(SAMPLE, table="ratings")
    frame = ing.frame[ing.frame["item_id"].isin(ing.frame["item_id"].unique()[::10])].reset_index(drop=True)
    frame["rater"] = frame["rater"].astype(str).replace({"gpt-4/single-call": HOSTILE})
    frame["language"] = frame["language"].astype(str).replace({"Hindi": "<img src=x onerror=alert(2)>"})
    frame["text"] = CELL
    checked = validate(frame, table="ratings", file="es_eu.csv")
    ing = Ingested(table="ratings", frame=checked.frame, source="<b>evil</b>.csv", notes=NOTES + tuple(checked.notes))
    return ing, build_report(ing, n_boot=50, name="Multilingual pilot")


@pytest.fixture(scope="module")
def pairs_report():
    return build_report(load(SAMPLE_PAIRS, table="comparisons"), n_boot=BOOT, seed=0)


def _offline(text: str) -> None:
    js = get_plotlyjs()
    assert text.count(js[:300]) == 1 and text.count(js[-300:]) == 1  # plotly.js embedded exactly once
    assert text.count("<script") == text.count("Plotly.newPlot(") + 1  # one library script, one per figure
    # Outside the library's own code (whose strings name map-tile servers for map traces, never used here),
    # nothing names the network: no http(s) address at all, no src/href, stylesheet link, CSS import or web font.
    rest = text.replace(js, "")
    assert not re.search(r"https?:|(src|href)\s*=\s*[\"']?\s*//", rest, re.I)
    assert "<link" not in rest.lower() and "@import" not in rest and "@font-face" not in rest and "url(" not in rest


@pytest.mark.slow
def test_ratings_report_is_offline_ordered_and_small(ratings_report):
    text = ratings_report.html
    _offline(text)
    assert text.startswith("<!DOCTYPE html>") and len(text.encode()) < 10e6
    order = [text.index(s) for s in ("1. Judge report card", "2. The data", "3. The analyses",
                                     "Agreement with humans</h3>", "Bias diagnostics</h3>", "4. Parameters")]
    assert order == sorted(order)
    assert "<td>52,915</td>" in text and "<td>1,200</td>" in text and "Bengali, Chinese, Czech" in text
    assert text.count("Plotly.newPlot(") >= 4


@pytest.mark.slow
def test_numbers_printed_are_the_librarys(ratings_report):
    text = ratings_report.html
    ag = ratings_report.audit.results["agreement"]
    r = ag[(ag["language"] == "Hindi") & (ag["criterion"] == "LA") & (ag["judge"] == "gpt-4/single-call")
           & (ag["measure"] == "percent_agreement")].iloc[0]
    printed = f"{r['estimate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
    assert printed == cell(r["estimate"], r["ci_low"], r["ci_high"]) and printed in text
    row = re.search(r"<tr><td>Hindi</td><td>LA</td><td>gpt-4/single-call</td>(.*?)</tr>", text).group(1)
    assert printed in row and f">{int(r['n'])}<" in row  # the n column beside it
    for c in ratings_report.card.cards:  # the verdicts, first on the page after the data
        assert html_lib.escape(c.verdict) in text and text.index(html_lib.escape(c.verdict)) < text.index("3. The analyses")
    # parameters and the commands that reproduce each section
    assert "evalcore agreement ratings_multilingual.csv --by language criterion --boot 200 --seed 0 --json" in text
    assert "evalcore bias ratings_multilingual.csv --by language --boot 200 --seed 0 --json" in text
    for name in ("numpy", "pandas", "plotly", "evalcore"):
        assert f"<td>{name}</td>" in text


def test_hostile_names_are_escaped(hostile):
    ing, rep = hostile
    text = rep.html
    _offline(text)
    assert HOSTILE not in text and "<img src=x" not in text and "<b>evil</b>" not in text
    assert html_lib.escape(HOSTILE) in text and "&lt;img src=x onerror=alert(2)&gt;" in text


def test_comparisons_report(pairs_report):
    text = pairs_report.html
    _offline(text)
    for title in ("Judge accuracy</h3>", "Position bias</h3>", "Superficial quality</h3>", "Calibrated win rates</h3>"):
        assert title in text
    wr = pairs_report.audit.results["winrate"].iloc[0]
    assert cell(wr["p_mode"], wr["ci_low"], wr["ci_high"]) in text
    acc = pairs_report.audit.results["accuracy"].iloc[0]
    assert cell(acc["estimate"], acc["ci_low"], acc["ci_high"]) in text
    assert "evalcore winrate comparisons_pairwise.csv --method bwrs --prior ratio:0.3 --seed 0 --json" in text
    assert "--q superficial --by subset --boot 200 --seed 0 --json" in text
    assert "Not in this report" not in text


def test_figures_need_a_title_and_get_axis_labels():
    with pytest.raises(ValueError, match="title"):
        figure_html(go.Figure(go.Scatter(x=[1], y=[1])))
    fig = go.Figure(go.Scatter(x=[1], y=[1])).update_layout(title="t")
    out = figure_html(fig, x_title="share", y_title="judge")
    assert '"title":{"text":"share"}' in out and '"title":{"text":"judge"}' in out
    assert "<script src" not in out


def test_table_cells_are_escaped():
    out = table_html(pd.DataFrame({"a<": [HOSTILE], "n": [3]}), numeric=["n"])
    assert HOSTILE not in out and "a&lt;" in out and '<td class="num">3</td>' in out


@pytest.mark.slow
@needs_datasets
def test_hanna_report():
    rep = build_report(hanna(), n_boot=30, seed=0)
    _offline(rep.html)
    assert len(rep.card.cards) == 20 and len(rep.html.encode()) < 10e6
    for c in rep.card.cards:  # HANNA has no language: the agreement sentence names the criteria
        first = c.sentences[0]
        assert first.startswith("Agrees with humans ") and (" all 6 criteria." in first or "; less well on " in first)
    assert "Figures for the first 6 of 20 judges" in rep.html


def test_the_title_is_the_datasets_name_not_its_path(hostile):
    ing, rep = hostile
    assert "<h1>evalcore report: Multilingual pilot</h1>" in rep.html  # the name given
    # Without a name, the file's name without its folders: the same audit rendered as an upload's would be.
    moved = dataclasses.replace(ing, source="/home/ana/uploads/tmp123/ratings_multilingual.csv")
    text = render(moved, rep.audit, rep.card, inputs="ratings_multilingual.csv")
    assert "<title>evalcore report: ratings_multilingual.csv</title>" in text
    assert "<h1>evalcore report: ratings_multilingual.csv</h1>" in text
    assert "/home/ana/uploads" in text.split("<h2 id='data'>")[1]  # the full source stays in the data section
    # import notes are escaped whole: each reads to its end as text, nothing is taken for markup
    notes = re.search(r"<p>Import notes:</p><ul>(.*?)</ul>", text).group(1)
    read = [html_lib.unescape(li) for li in re.findall(r"<li>(.*?)</li>", notes)]
    assert read == list(ing.notes) and read[:2] == list(NOTES)
    assert "<b>" not in notes and "<script>x" not in notes


def test_a_note_about_html_cells_reads_whole_in_the_report(hostile):
    """The note quoting a cell with HTML markup cut it mid-word and mid-element
    ("'<p>Resumen: el <b>texto</b> ha'"); the quote is one line, cut between words with an ellipsis."""
    notes = re.search(r"<p>Import notes:</p><ul>(.*?)</ul>", hostile[1].html).group(1)
    (note,) = [html_lib.unescape(li) for li in re.findall(r"<li>(.*?)</li>", notes) if "column &#x27;text&#x27;" in li]
    assert note.endswith("They are shown as plain text and never rendered.") and "\n" not in note
    quoted = note.split("(first at row ")[1].split(": '", 1)[1].split("')")[0]
    assert quoted.endswith("…") and CELL.replace("\n", " ").startswith(quoted[:-1])
    assert quoted[:-1].endswith(("</b>", "texto</b>", "de", "la", "economía", "vasca", "y", "sus"))


def _systems_frame(seed: int = 0, n_inputs: int = 30, n_systems: int = 5) -> pd.DataFrame:
    """Inputs answered by every system; three annotators; ``close`` follows the humans, ``loose`` barely."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_inputs):
        for s in range(n_systems):
            truth = s / 2 + rng.normal(0, 0.7)
            item = f"in{d}/sys{s}"
            for r in range(3):
                rows.append((item, f"h{r}", "human", "Coherence", truth + rng.normal(0, 0.4), f"sys{s}", f"in{d}"))
            rows.append((item, "close", "judge", "Coherence", truth + rng.normal(0, 0.3), f"sys{s}", f"in{d}"))
            rows.append((item, "loose", "judge", "Coherence", truth + rng.normal(0, 3.0), f"sys{s}", f"in{d}"))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score", "system", "input_id"])


def test_the_report_says_which_judge_to_use():
    """The leaderboard and the system-level table are in the handover file, with n saying what it counts
    (inputs resampled, beside the items)."""
    checked = validate(_systems_frame(), table="ratings")
    rep = build_report(Ingested(table="ratings", frame=checked.frame, source="summaries.csv"), n_boot=50, seed=0,
                       inputs=["summaries.csv"])
    text = rep.html
    _offline(text)
    assert "Which judge to use</h3>" in text and "System- and input-level correlation</h4>" in text
    assert "Not in this report" not in text
    assert not re.search(r"not in this report: (System|Input|Judge)", text)
    board = rep.audit.results["leaderboard"]
    tau = board[board["measure"] == "kendall_tau"].set_index("judge")
    assert tau.loc["close", "rank"] == 1 and tau.loc["loose", "worse_than_best"]
    assert (tau["n"] == 30).all() and (tau["n_items"] == 150).all()
    assert "<th>n (inputs resampled)</th><th>items</th>" in text
    r = tau.loc["close"]
    row = re.search(r"<tr><td class=\"num\">1</td><td>close</td>(.*?)</tr>", text).group(1)
    assert cell(r["estimate"], r["ci_low"], r["ci_high"]) in row and ">30<" in row and ">150<" in row
    assert "Coherence: Kendall&#x27;s tau (items)</h4><p>Best: close (" in text
    meta = rep.audit.results["meta"]
    m = meta[(meta["judge"] == "close") & (meta["measure"] == "kendall_tau_system")].iloc[0]
    assert cell(m["estimate"], m["ci_low"], m["ci_high"]) in text.split("System- and input-level correlation")[1]
    assert "evalcore agreement summaries.csv --by criterion --leaderboard --boot 50 --seed 0 --json" in text
    # the data section lists them as supported
    supported = text.split("Which analyses this table supports")[1].split("</details>")[0]
    for title in ("System-level correlation", "Input-level correlation", "Judge leaderboard"):
        assert re.search(re.escape(title) + r"[^<]*</td><td>yes</td>", supported), title


@pytest.mark.slow
def test_without_systems_the_leaderboard_counts_items(ratings_report):
    text = ratings_report.html
    assert "Which judge to use</h3>" in text and "<th>n (items resampled)</th>" in text
    assert "Not in this report: System-level correlation: " in text and "column &#x27;system&#x27;" in text
    # a judge without an estimate in a group is named, with why, not silently left off the reading
    assert "Not ranked: gpt-4/single-call (not defined: fewer than 2 items, or the scores do not vary)" in text
