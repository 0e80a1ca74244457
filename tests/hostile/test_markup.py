"""Names from the data stay text.

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
from tests.app.apptest import PAGES
from tests.helpers import ROOT

#: Every link and image of the payload points here.
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
#: Markup from the payload, as it would reach a Markdown source unescaped: a link or image (``](http``), a bare
#: URL GitHub-flavoured Markdown links by itself, bold, a tag.
RAW_MARKDOWN = re.compile(r"(?<!\\)\]\(http|https?://" + re.escape(EVIL)
                          + r"|(?<!\\)\*\*(PC|ember|judge2)|<b>|<br>x|<a ")
#: ... and in a figure's text: a tag from the data.
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
                                   ":red[x] $x^2$ :material/home: :+1:", "line\nbreak\n# heading", "- item",
                                   "1. first", "> quote", "www.evil.example and ana@evil.example", "a_b_ ~~c~~ | d"])
def test_md_leaves_no_markdown(value):
    text = md(value)
    # no raw tag, no line break; every character that opens inline markup, a directive or (first) a block
    # escaped: nothing CommonMark, GFM or Streamlit would act on
    assert "<" not in text and ">" not in text and "\n" not in text
    assert not re.search(r"(?<!\\)[\[\]*`!$|~]|(?<!\\)&(?!lt;|gt;)|(?<!\\):(?=[\w+-])", text), text
    # an underscore left as it is sits between two letters or digits, where it cannot make emphasis
    assert not re.search(r"(?<!\\)_(?![^\W_])|(?<![^\W_])(?<!\\)_", text), text
    assert not re.match(r"[#>+\-=]|\d+[.)]", text), text
    shown = re.sub(r"\\(.)", r"\1", text).replace("&lt;", "<").replace("&gt;", ">")  # the text Markdown renders
    # GFM links a bare URL, www. address or e-mail of the rendered text: a word joiner keeps them apart
    assert not re.search(r"(?i)https?://|www\.|[-.\w+]+@[-\w]+\.", shown), shown
    assert shown.replace("\u2060", "") == value.replace("\n", " ")


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


@pytest.mark.slow
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
    from evalcore.pointwise.scale_use import score_frequencies
    from evalcore.report import plots
    from evalcore.report.views import agreement, home

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
    counts, by = home.coverage(ratings)
    figs["coverage"] = plots.coverage_figure(counts, by=by)
    pairs = rater_pair_matrix(ratings, n_boot=0, seed=0)
    matrix, counts = agreement.pair_matrix(pairs, measure=list(agreement.PAIR_MEASURES)[0], group={"criterion": crit})
    figs["rater_pairs"] = plots.rater_pair_heatmap(matrix, counts, label="kappa")
    for name, fig in figs.items():
        as_json = json.loads(fig.to_json())  # arrays as lists
        assert not raw_plotly_markup(as_json), (name, raw_plotly_markup(as_json)[:3])
        assert any("&lt;" in s for s in _strings(as_json)), name  # a payload name is drawn, as text


# --------------------------------------------------------------------------- the app: every page


#: Proto fields Streamlit renders as Markdown: bodies of text and alerts, labels, help texts, the option
#: labels of radios and button groups (segmented control, pills). Selectbox and multiselect options, tables
#: and dataframes show plain text, and are not read.
MARKDOWN_FIELDS = {"body", "label", "help", "content"}
SKIPPED = {"Arrow", "Dataframe", "Table", "PlotlyChart", "Selectbox", "Multiselect"}


def _markdown_sources(proto) -> Iterator[str]:
    name = type(proto).__name__
    if name in SKIPPED:
        yield from (proto.label, proto.help) if name in ("Selectbox", "Multiselect") else ()
        return
    for field, value in proto.ListFields():
        if field.type not in (field.TYPE_MESSAGE, field.TYPE_STRING):
            continue
        values = [value] if isinstance(value, str) or hasattr(value, "ListFields") else list(value)
        if field.type == field.TYPE_MESSAGE:
            for v in values:
                yield from _markdown_sources(v)
        elif field.type == field.TYPE_STRING and (field.name in MARKDOWN_FIELDS
                                                  or (field.name == "options" and name == "Radio")):
            yield from values


def _nodes(node) -> Iterator:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def rendered(at: AppTest) -> tuple[list[str], list[dict]]:
    """What a run shows as Markdown (the sources), and its figures (data and layout)."""
    texts, figures = [], []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        if type(proto).__name__ == "PlotlyChart":
            figures.append(json.loads(proto.spec))
        texts.extend(_markdown_sources(proto))
    return texts, figures


def raw_markdown(texts: list[str]) -> list[str]:
    """The Markdown sources that hold payload markup unescaped (a link, an image, bold, a tag, a break)."""
    return [t for t in texts if RAW_MARKDOWN.search(t)]



@pytest.fixture(scope="module")
def payload_workspace(tmp_path_factory):
    from evalcore.data.store import Workspace

    path = tmp_path_factory.mktemp("payload") / "ws.duckdb"
    return path, store_payload(Workspace(path))


def _open(page: str, dataset: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["dataset"] = dataset
    at.run()
    return at if page == PAGES[0] else at.switch_page(str(ROOT / page)).run()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_payload_names_as_text(page, payload_workspace, monkeypatch):
    path, did = payload_workspace
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    at = _open(page, did)
    assert not at.exception, [e.value for e in at.exception]
    texts, figures = rendered(at)
    assert not raw_markdown(texts), raw_markdown(texts)[:5]
    # not vacuous: the page names the payload, escaped (the sidebar's source, a judge, a criterion...)
    assert any(md(NAME) in t for t in texts), texts[:20]
    raw = [s for f in figures for s in raw_plotly_markup(f)]
    assert not raw, raw[:5]
    if page != "app_pages/3_Win_rates.py":  # its first tab draws the posteriors of p, named by method only
        assert figures and any("&lt;" in s for f in figures for s in _strings(f))


def test_a_link_in_the_address_bar_stays_text(payload_workspace, monkeypatch):
    """``?dataset=[Click here to log in again](http://...)``: the message naming it shows it as written."""
    path, _ = payload_workspace
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    at = _open("app_pages/1_Agreement.py", LOGIN)
    assert not at.exception, [e.value for e in at.exception]
    texts, _ = rendered(at)
    assert any(md(LOGIN) in t for t in texts), texts
    assert not raw_markdown(texts), raw_markdown(texts)


def test_an_upload_named_with_markdown_stays_text(tmp_path, monkeypatch):
    """The column mapping of an upload whose file name is a link and an image names it as written."""
    from evalcore.data.store import Workspace

    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws.duckdb"))
    name = f"[Log in again](https:{EVIL}) ![i](https:{EVIL}).csv"
    csv = ("item,annotator,criterion,score\n" + "".join(
        f"{i},{r},{IMG},{(i + j) % 3}\n" for i in range(6) for j, r in enumerate([A_TAG, "ann2", "gpt-4"]))).encode()
    did = Workspace(tmp_path / "ws.duckdb").save_upload([(name, csv)])
    at = _open(PAGES[0], did)
    assert not at.exception, [e.value for e in at.exception]
    texts, _ = rendered(at)
    assert any(md(name.removesuffix(".csv")) in t for t in texts), texts
    assert not raw_markdown(texts), raw_markdown(texts)


def test_tables_do_not_hand_out_their_cells_unneutralised():
    """Streamlit's own "Download as CSV" (and copy) of a table skips csv_safe: the shipped config turns it off."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["disableDataExport"] is True


@pytest.mark.parametrize("page", PAGES)
def test_no_page_icon_is_fetched_from_the_internet(page, tmp_path, monkeypatch):
    """A ``:material/...`` page icon becomes a favicon fetched from fonts.gstatic.com on every page view (the
    app must work offline); an emoji is drawn by the browser."""
    import streamlit as st

    icons = []
    real = st.set_page_config
    monkeypatch.setattr(st, "set_page_config", lambda **kw: (icons.append(kw.get("page_icon")), real(**kw))[1])
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws.duckdb"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    if page != PAGES[0]:
        at.switch_page(str(ROOT / page)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert icons and all(i and not str(i).startswith(":material/") for i in icons), icons
