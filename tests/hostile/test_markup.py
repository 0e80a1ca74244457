"""Names from the data stay text (issue 24, defects 3, 4, 6 and the offline part of 14).

A dataset whose criteria, languages, tasks, judges, annotators, systems and subsets are named with Markdown
images and links, HTML links, bold and line breaks, and spreadsheet formulas (the *payload*, built here from the
sample data: nothing hostile is committed), opened on every page, in every figure and in the HTML report:

- no Markdown from the data renders in the app (:func:`evalcore.text.md` on every data-derived string);
- no Plotly markup from the data renders in a figure or the report (:func:`evalcore.text.plot_text`), while the
  builders' own markup (the bold estimate of a heatmap cell) stays;
- the tables' own CSV download and clipboard copy are off (``client.disableDataExport``): they handed out
  ``=HYPERLINK(...)`` cells unneutralised, while every table has the app's own download (formulas neutralised);
- no page icon is fetched from the internet (a ``:material/`` favicon comes from fonts.gstatic.com).
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Iterator

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.text import md, plot_text
from tests.helpers import ROOT

#: Every link and image of the payload points here; escaped for Markdown it reads ``evil\.example``.
EVIL = "evil.example"
IMG = f"![img](http://{EVIL}/img.png)"
LOGIN = f"[Your session expired. Click here to log in again](http://{EVIL}/login)"
A_TAG = f'<a href="http://{EVIL}/judge">gpt-4</a>'
BOLD_MD = "**PC**"
BOLD_HTML = "<b>TQ</b>"
BREAK = "H<br>x"
FORMULA = f'=HYPERLINK("http://{EVIL}/f","y")'
AT_SUM = "@SUM(1)"

#: Sample names -> payload names, per column (the sample's structure, so every analysis has something to show).
RENAME = {
    "criterion": {"LA": IMG, "OCQ": LOGIN, "TQ": BOLD_HTML, "PC": BOLD_MD, "H": BREAK},
    "language": {"English": FORMULA, "Hindi": AT_SUM, "Bengali": f'<a href="http://{EVIL}/lang">Bengali</a>'},
    "task": {"open_prompt": f"[task](http://{EVIL}/task)", "summarize": "<b>sum</b>"},
    "rater": {"gpt-4/single-call": A_TAG, "gpt-4/per-criterion": f"**judge2** ![j](http://{EVIL}/j.png)",
              "en_ann1": f"[ann](http://{EVIL}/ann)", "gpt-4/pairwise": A_TAG,
              "gpt-3.5/pairwise": LOGIN, "annotator_03": "<b>ann3</b>"},
    "system": {"cirrus-70b": f'<a href="http://{EVIL}/sys">cirrus</a>', "atlas-7b": f"![s](http://{EVIL}/sys.png)",
               "ember-34b": "**ember**", "dune-8x7b": FORMULA, "borealis-13b": AT_SUM},
    "subset": {"Natural": "<b>Natural</b>", "Adversarial": f"![a](http://{EVIL}/sub.png)"},
}
NAME = f"![name](http://{EVIL}/name.png) [Click here](http://{EVIL}/login)"
NOTE = f"3 rows left out: {LOGIN} {IMG}"
#: Raw markup from the payload that must never reach a Markdown source or a figure's text.
RAW_MARKDOWN = (EVIL, "**PC**", "**ember**", "**judge2**", "<b>", "<br>x", "<a ")
RAW_PLOTLY = (f'<a href="http://{EVIL}', "<b>TQ", "<b>ann3", "<b>Natural", "<b>sum", "H<br>x")


def payload_tables() -> dict[str, pd.DataFrame]:
    """The sample data (three of its languages) with every name replaced by a payload."""
    from evalcore.data import ingest

    tables = {k: v.frame for k, v in ingest.load_samples().items()}
    ratings = tables["ratings"]
    ratings = ratings[ratings["language"].isin(list(RENAME["language"]))].copy()
    for col in ("criterion", "language", "task", "rater"):
        ratings[col] = ratings[col].astype(object).replace(RENAME[col])
    pairs = tables["comparisons"].copy()
    pairs["rater"] = pairs["rater"].astype(object).replace(RENAME["rater"])
    pairs["subset"] = pairs["subset"].astype(object).replace(RENAME["subset"])
    for col in ("system_a", "system_b"):
        pairs[col] = pairs[col].astype(object).replace(RENAME["system"])
    return {"ratings": ratings.reset_index(drop=True), "comparisons": pairs}


def store_payload(workspace) -> str:
    """The payload as a dataset of ``workspace``, named, sourced and annotated with payloads; its id."""
    tables = payload_tables()
    return workspace.save_dataset(NAME, tables, source=NAME, notes={k: [NOTE] for k in tables})


# --------------------------------------------------------------------------- the two helpers


@pytest.mark.parametrize("value", [IMG, LOGIN, A_TAG, BOLD_MD, BOLD_HTML, BREAK, FORMULA, NAME, NOTE,
                                   ":red[x] $x^2$ :material/home:", "line\nbreak\n# heading"])
def test_md_leaves_no_markdown(value):
    text = md(value)
    # every punctuation mark escaped, no raw tag, no line break: nothing CommonMark or Streamlit would act on
    assert EVIL not in text and "<" not in text and ">" not in text and "\n" not in text
    assert not re.search(r"(?<!\\)[\[\]()*_`!:$#]", text), text
    assert text.replace("\\", "").replace("&lt;", "<").replace("&gt;", ">") == value.replace("\n", " ")


@pytest.mark.parametrize("value", [A_TAG, BOLD_HTML, BREAK, "a & b <br/>"])
def test_plot_text_leaves_no_tag(value):
    text = plot_text(value)
    assert "<" not in text and ">" not in text
    assert text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == value


# --------------------------------------------------------------------------- figures and the HTML report


def _strings(value) -> Iterator[str]:
    """Every string in a JSON value (a figure's data and layout)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def raw_plotly_markup(figure: dict) -> list[str]:
    """The texts of a figure (as JSON) that hold markup from the payload as markup."""
    return sorted({s for s in _strings(figure) if any(m in s for m in RAW_PLOTLY)})


def report_figures(html: str) -> list[dict]:
    """The figures of an HTML report: the data and layout of each ``Plotly.newPlot`` call."""
    decoder, out = json.JSONDecoder(), []
    for m in re.finditer(r'Plotly\.newPlot\(\s*"[^"]+",\s*', html):
        data, end = decoder.raw_decode(html, m.end())
        layout, _ = decoder.raw_decode(html, end + len(re.match(r"\s*,\s*", html[end:]).group(0)))
        out.append({"data": data, "layout": layout})
    return out


@pytest.fixture(scope="module")
def payload():
    return payload_tables()


@pytest.fixture(scope="module")
def reports(payload):
    from evalcore.data.ingest import Ingested
    from evalcore.report.html import build_report

    out = {}
    for kind, frame in payload.items():
        ing = Ingested(table=kind, frame=frame, source=NAME, notes=(NOTE,))
        out[kind] = build_report(ing, n_boot=30, seed=0, name=NAME).html
    return out


@pytest.mark.parametrize("kind", ["ratings", "comparisons"])
def test_report_figures_show_names_as_text(reports, kind):
    figures = report_figures(reports[kind])
    assert len(figures) >= 3
    raw = [s for f in figures for s in raw_plotly_markup(f)]
    assert not raw, raw[:5]
    texts = [s for f in figures for s in _strings(f)]
    # the names are there, escaped: shown as written
    assert any("&lt;a href=\"http://evil.example/judge\"&gt;gpt-4&lt;/a&gt;" in s for s in texts)
    if kind == "ratings":
        # the builders' own markup stays: the bold estimate of an agreement heatmap's cell
        assert any(re.fullmatch(r"<b>(-?\d\.\d\d|n/a)( ▼)?</b>(<br>\[.*\])?", s) for s in texts)
        assert any("&lt;b&gt;TQ&lt;/b&gt;" in s for s in texts)


@pytest.mark.parametrize("kind", ["ratings", "comparisons"])
def test_report_text_has_no_markup_from_the_data(reports, kind):
    html = reports[kind]
    outside = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    assert f'href="http://{EVIL}' not in outside and f"src=\"http://{EVIL}" not in outside
    assert "<b>TQ" not in outside and "<b>ann3" not in outside and "<b>Natural" not in outside
    assert "&lt;a href=&quot;http://evil.example/judge&quot;&gt;gpt-4&lt;/a&gt;" in outside


def test_figures_of_every_builder_show_names_as_text(payload):
    """The builders the report does not use, on payload names (the pages' AppTests below draw the rest)."""
    from evalcore.pointwise.anchoring import conditional_distribution, criterion_correlations
    from evalcore.pointwise.distributions import class_distribution
    from evalcore.pointwise.familiarity import perplexity_by_score
    from evalcore.pointwise.rater_pairs import rater_pair_matrix
    from evalcore.pointwise.scale import score_frequencies
    from evalcore.report import plots, tables

    ratings = payload["ratings"]
    judge = RENAME["rater"]["gpt-4/single-call"]
    crit = RENAME["criterion"]["TQ"]
    figs = {
        "class_distribution": plots.class_distribution_figure(class_distribution(ratings, by=["language", "criterion"]),
                                                              row="language", filters={"criterion": crit}),
        "score_share": plots.score_share_figure(score_frequencies(ratings, by=["language"]), criterion=crit,
                                                row="language"),
        "perplexity": plots.perplexity_by_score_figure(perplexity_by_score(ratings, n_boot=0, seed=0), criterion=crit),
        "correlations": plots.correlation_heatmaps(criterion_correlations(ratings, n_boot=0, seed=0),
                                                   sources=["humans", judge]),
        "conditional": plots.conditional_figure(conditional_distribution(
            ratings, given=crit, target=RENAME["criterion"]["PC"], threshold=3.0, n_boot=0, seed=0)),
    }
    counts, by = tables.coverage(ratings)
    figs["coverage"] = plots.coverage_figure(counts, by=by)
    pairs = rater_pair_matrix(ratings, n_boot=0, seed=0)
    matrix, counts = tables.pair_matrix(pairs, measure=list(tables.PAIR_MEASURES)[0], group={"criterion": crit})
    figs["rater_pairs"] = plots.rater_pair_heatmap(matrix, counts, label="kappa")
    for name, fig in figs.items():
        as_json = json.loads(fig.to_json())  # arrays as lists
        assert not raw_plotly_markup(as_json), (name, raw_plotly_markup(as_json)[:3])
        assert any("&lt;" in s for s in _strings(as_json)), name  # a payload name is drawn, as text
