"""The Agreement page (AppTest) and the `evalcore agreement` CLI, on sample data, real data and an unseen file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evalcore.cli import main
from tests.app.apptest import AGREEMENT as PAGE, open_page, store_sample, use_workspace
from tests.helpers import DATASETS


def unseen_file(path: Path, *, seed: int = 7) -> Path:
    """A multilingual file unlike the sample: its own column names, 1-3 annotators, six judges, 1-5 scale."""
    rng = np.random.default_rng(seed)
    langs = ["yo", "ta", "pl", "ko", "tr", "pt"]
    judges = ["claude-3/cot", "claude-3/plain", "gpt-4o/cot", "gpt-4o/plain", "llama-3-70b", "qwen-2-72b"]
    crits = ["fluency", "coherence", "relevance", "consistency", "helpfulness"]
    rows = []

    def on_scale(x: float) -> int:  # rounded and clipped to 1-5; np.clip on one number took half the time
        return min(max(round(x), 1), 5)

    for i in range(240):
        lang = langs[i % len(langs)]
        q = rng.normal(3.5, 0.9)
        for c in crits:
            for a in range(rng.choice([1, 2, 3], p=[0.15, 0.25, 0.6])):
                rows.append((f"doc-{i:04d}", lang, c, f"{lang}_rater{a}", on_scale(q + rng.normal(0, 0.7))))
            for j, name in enumerate(judges):
                rows.append((f"doc-{i:04d}", lang, c, name, on_scale(q + 0.3 * j / 5 + rng.normal(0, 0.8))))
    pd.DataFrame(rows, columns=["doc", "lang", "aspect", "annotator", "rating"]).to_csv(path, index=False)
    return path


def test_page_without_data_says_what_to_do(ws):
    at = open_page(PAGE)
    assert not at.exception
    assert any("Load the sample data" in i.value for i in at.info)


def test_page_on_sample_data(ws):
    store_sample(ws.path)  # as the sample's button stores it (the button itself: tests/app/test_app.py)
    at = open_page(PAGE)
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="ag_by").value == ["language", "criterion"]
    assert at.selectbox(key="ag_measure_False").value == "percent_agreement"  # integer scores: the first measure
    # The flagged cells are the designed ones: non-Latin and lower-resource languages.
    (warning,) = [w.value for w in at.warning]
    assert "Bengali" in warning and "Hindi" in warning and "English" not in warning
    # Changing the grouping and the source recomputes without error.
    at.selectbox(key="ag_source").set_value("(humans)").run()
    at.selectbox(key="ag_measure_True").set_value("gwet_ac1").run()
    assert not at.exception
    at.multiselect(key="ag_by").set_value(["task"]).run()
    assert not at.exception
    at.multiselect(key="ag_by").set_value([]).run()
    assert not at.exception
    at.number_input(key="ag_boot").set_value(0).run()
    assert not at.exception


def test_unseen_multilingual_file_through_page_and_cli(ws, tmp_path, capsys):
    path = unseen_file(tmp_path / "unseen.csv")
    # CLI
    assert main(["agreement", str(path), "--boot", "100", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    frame = pd.DataFrame(records)
    assert {"language", "criterion", "judge", "measure", "estimate", "ci_low", "ci_high", "n", "n_units"} <= set(frame.columns)
    assert frame["judge"].dropna().nunique() == 6 and frame["language"].nunique() == 6
    assert frame["criterion"].nunique() == 5
    defined = frame[frame["estimate"].notna()]
    assert len(defined) > 0.9 * len(frame)
    assert (frame.loc[frame["estimate"].isna(), "note"].str.startswith("not defined")).all()
    # App: upload, import with the auto-detected mapping, open the page.
    home = open_page()
    home.file_uploader[0].set_value(("unseen.csv", path.read_bytes(), "text/csv")).run()
    (pending,) = ws.list_datasets()
    roles = home.data_editor(key=f"roles_{pending.id}_annotator").value
    assert sorted(roles.loc[roles["role"] == "judge", "rater"]) == sorted(
        ["claude-3/cot", "claude-3/plain", "gpt-4o/cot", "gpt-4o/plain", "llama-3-70b", "qwen-2-72b"])
    assert set(roles.loc[roles["role"] == "human", "rater"]) == {f"{lang}_rater{a}" for lang in
                                                                 ["yo", "ta", "pl", "ko", "tr", "pt"] for a in range(3)}
    next(b for b in home.button if b.key and b.key.startswith("import_")).click().run()
    assert not home.exception
    at = open_page(PAGE)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.multiselect(key="ag_judges").value) == 6


@pytest.fixture(scope="module")
def hanna_stored(tmp_path_factory):
    """HANNA's ratings, read once for the module and stored in a workspace that its tests share (its table and
    its units are then read and counted once): the workspace's path, the dataset's id and the ratings."""
    if not DATASETS.exists():
        pytest.skip("../shared/datasets not found: the HANNA page tests need it")
    from evalcore.data.ingest import load
    from evalcore.data.store import Workspace

    frame = load(DATASETS / "hanna" / "hanna_metric_scores_llm.csv", preset="hanna").frame
    path = tmp_path_factory.mktemp("hanna") / "ws.duckdb"
    return path, Workspace(path).save_dataset("HANNA", {"ratings": frame}), frame


@pytest.fixture
def hanna(hanna_stored, monkeypatch):
    """The id of HANNA in the module's shared workspace, and its ratings."""
    path, did, frame = hanna_stored
    use_workspace(monkeypatch, path)
    return did, frame


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA page test needs it")
def test_page_on_hanna(hanna):
    did, frame = hanna
    # 50 resamples: the verdict's flags need intervals, not precise ones
    at = open_page(PAGE, dataset=did, ag_boot="50")
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="ag_by").value == ["criterion"]
    # The page opens on the judge closest to the humans (mean pairwise agreement gap over the criteria,
    # weighted by units), not the first in alphabetical order, and says so first.
    from evalcore.pointwise.agreement.table import agreement

    gap = agreement(frame, by=("criterion",), n_boot=0)
    gap = gap[(gap["measure"] == "pairwise_agreement_gap") & gap["judge"].notna()]
    mean = gap.assign(w=gap["estimate"] * gap["n"]).groupby("judge")[["w", "n"]].sum()
    closest = (mean["w"] / mean["n"]).idxmax()
    assert closest != sorted(mean.index)[0]
    assert at.selectbox(key="ag_source").value == closest
    verdict = at.info[0].value
    assert verdict.startswith(f"**{closest}**") and "pairwise agreement gap" in verdict and "flagged in" in verdict
    # That judge's scores are fractional: the page opens on a rank measure, as its note advises, and keeps the
    # analyst's own choice when the judge changes.
    from evalcore.pointwise.agreement.units import count_units, fractional_judges

    assert closest in fractional_judges(count_units(frame))
    assert at.selectbox(key="ag_measure_False").value == "kendall_tau"
    assert any("Read Kendall's tau" in i.value for i in at.info)
    # Its averages are not labels: no confusion matrix of them (its rows were fractional values the humans never
    # gave), and the page says why.
    assert not [s for s in at.selectbox if s.key == "cm_crit"]
    assert any(c.value.startswith(f"Not drawn for {closest}") for c in at.caption)
    at.selectbox(key="ag_measure_False").set_value("cohen_kappa_quadratic").run()
    other = sorted(j for j in mean.index if j != closest)[0]
    at.selectbox(key="ag_source").set_value(other).run()
    assert at.selectbox(key="ag_measure_False").value == "cohen_kappa_quadratic"




def _values(spec) -> np.ndarray:
    """A plotly JSON array: a list, or plotly 6's typed array (``{"dtype", "bdata"}``, base64)."""
    if isinstance(spec, dict):
        import base64

        return np.frombuffer(base64.b64decode(spec["bdata"]), dtype=spec["dtype"])
    return np.asarray(spec, dtype=float)


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data app tests need it")
def test_meta_evaluation_tabs_on_hanna(hanna):
    """The meta-evaluation in the app: the unit filter, the leaderboard, system-level correlation, the rater-pair heatmap."""
    from evalcore.pointwise.leaderboard import judge_leaderboard
    from evalcore.pointwise.meta import meta_correlations

    did, frame = hanna
    # Few resamples: the page's numbers are compared with the library's at the same count.
    at = open_page(PAGE, dataset=did, timeout=600, ag_boot="30", run=False)
    at.session_state["ag_min_raters"] = 3
    at.session_state["ag_max_raters"] = 3
    at.run()
    assert not at.exception
    assert any("6,336 unit(s) kept, 0 dropped" in c.value for c in at.caption)
    judges = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].unique())
    at.session_state["ag_tab"] = "Which judge?"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    board = judge_leaderboard(frame, judges=judges, measures=("kendall_tau", "spearman_rho", "kendall_tau_system",
                                                              "spearman_rho_system"), n_boot=30, seed=0)
    first = board[(board["criterion"] == at.selectbox(key="lb_crit").value) & (board["measure"] == "kendall_tau")]
    shown = at.dataframe[0].value
    assert shown["judge"].tolist() == first.sort_values("rank")["judge"].tolist()
    assert shown["estimate"].iloc[0].startswith(f"{first.sort_values('rank')['estimate'].iloc[0]:.3f}")
    at.session_state["ag_tab"] = "System level"
    at.run()
    meta = meta_correlations(frame, judges=judges, n_boot=30, seed=0)
    row = meta[(meta["criterion"] == "Coherence") & (meta["judge"] == "ChatGPT/prompt1")
               & (meta["measure"] == "kendall_tau_system")].iloc[0]
    table = at.dataframe[0].value.set_index(["criterion", "judge"])
    assert table.loc[("Coherence", "ChatGPT/prompt1"), "kendall_tau_system"] == (
        f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
    # The tab draws what it correlates, one point per system (pandas computes the same means).
    judge, crit = at.selectbox(key="meta_judge").value, at.selectbox(key="meta_crit").value
    traces = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    c = frame[frame["criterion"] == crit]
    per_item = pd.DataFrame({"human": c[c["rater_kind"] == "human"].groupby("item_id")["score"].mean(),
                             "judge": c[c["rater"] == judge].groupby("item_id")["score"].mean()}).dropna()
    per_item["system"] = c.groupby("item_id")["system"].first()
    expected = per_item.groupby("system")[["human", "judge"]].mean()
    got = pd.DataFrame({"human": [_values(t["x"])[0] for t in traces], "judge": [_values(t["y"])[0] for t in traces]},
                       index=[t["name"] for t in traces])
    pd.testing.assert_frame_equal(got.sort_index(), expected.sort_index(), check_names=False, atol=1e-12)
    at.session_state["ag_tab"] = "Rater pairs"
    at.run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1


def test_page_on_text_labels(ws):
    """A nominal criterion of text labels beside a numeric one: the measures that apply, said once, and the
    judge's confusion matrix against the humans' majority as a heatmap, with its download."""
    from evalcore.pointwise.agreement.measures import ORDER_MEASURES
    from evalcore.pointwise.confusion import confusion_matrix
    from tests.unit.pointwise.test_agreement_nominal import _mixed

    frame = _mixed()
    at = open_page(PAGE, dataset=ws.save_dataset("labels", {"ratings": frame}), ag_boot="30")
    assert not at.exception, [e.value for e in at.exception]
    notes = [i.value for i in at.info if "nominal" in i.value]
    assert len(notes) == 1 and notes[0].startswith("stance is nominal (categories without an order)")
    assert at.multiselect(key="ag_by").value == ["criterion"]
    # The measures offered are those computed: the order ones exist for fluency, so they stay offered there.
    offered = at.selectbox(key="ag_measure_False").options  # as shown: the measures' readable names
    assert "Cohen's kappa" in offered and "Kendall's tau" in offered
    # The confusion matrix opens on the nominal criterion, and draws the library's row shares.
    assert at.selectbox(key="cm_crit").value == "stance"
    (chart,) = [c for c in at.get("plotly_chart") if json.loads(c.proto.spec)["data"][0]["type"] == "heatmap"]
    z = _values(json.loads(chart.proto.spec)["data"][0]["z"]).reshape(3, 3)
    cm = confusion_matrix(frame, by=["criterion"])
    expected = cm[cm["criterion"] == "stance"]["row_share"].to_numpy().reshape(3, 3)
    np.testing.assert_allclose(z, expected)
    assert any(b.label == "Download the confusion matrices (CSV)" for b in at.get("download_button"))
    # Grouped by nothing, the criteria are still kept apart, and the page says so.
    at.multiselect(key="ag_by").set_value([]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Grouped by criterion too" in c.value for c in at.caption)
    # Only nominal criteria: the ranking tabs say they do not apply.
    only = frame[frame["criterion"] == "stance"]
    at = open_page(PAGE, dataset=ws.save_dataset("stance", {"ratings": only}), ag_boot="0")
    assert not at.exception, [e.value for e in at.exception]
    from evalcore.report.plots import measure_title

    offered = set(at.selectbox(key="ag_measure_False").options)
    assert "Cohen's kappa" in offered and not offered & {measure_title(m) for m in ORDER_MEASURES}
    at.session_state["ag_tab"] = "Which judge?"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Every criterion here is nominal" in i.value for i in at.info)


def test_uploaded_text_labels_show_agreement_and_confusion(ws, tmp_path, capsys):
    """A file of text labels uploaded in the browser: its agreement and confusion matrix on the page, the same
    numbers as `evalcore agreement`."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(80):
        s = rng.choice(["model_a", "model_b", "tie"])
        for a in ("ann1", "ann2", "ann3", "gpt-4o"):
            rows.append((f"q{i}", a, s if rng.random() < 0.7 else rng.choice(["model_a", "model_b", "tie"])))
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows, columns=["item_id", "rater", "score"]).to_csv(path, index=False)
    home = open_page()
    home.file_uploader[0].set_value(("labels.csv", path.read_bytes(), "text/csv")).run()
    next(b for b in home.button if b.key and b.key.startswith("import_")).click().run()
    assert not home.exception, [e.value for e in home.exception]
    at = open_page(PAGE, ag_boot="0")
    assert not at.exception, [e.value for e in at.exception]
    assert any(i.value.startswith("overall is nominal") for i in at.info)
    heat = [c for c in at.get("plotly_chart") if json.loads(c.proto.spec)["data"][0]["type"] == "heatmap"]
    assert len(heat) == 1
    assert main(["agreement", str(path), "--boot", "0", "--json"]) == 0
    cli = {(r["judge"], r["measure"]): r["estimate"] for r in json.loads(capsys.readouterr().out)}
    from evalcore.report.display import HUMANS

    shown = at.dataframe[0].value  # every number of the agreement table, the humans' rows named
    assert len(shown) == len(cli) > 0
    for r in shown.itertuples():
        assert cli[(None if r.judge == HUMANS else r.judge, r.measure)] == pytest.approx(r.estimate, nan_ok=True)
