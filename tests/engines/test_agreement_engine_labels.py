"""The engine path on a file of labels as a user brings it: a ``score`` column of words (a string column in the
engine), ``--scale`` and ``--order``; the agreement table, the units and the confusion matrix equal the in-memory
path's on the same file, and the labels the reader refuses get its message."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data.ingest import load
from evalcore.errors import DataError
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from evalcore.pointwise.confusion import confusion_matrix
from tests.helpers import PANDALM
from tests.unit.pointwise.test_agreement_nominal import _mixed, pandalm_text

from .helpers import assert_same_table

TOL = 1e-9
#: A label of the order that some rows write with a space after it: a category of its own when nominal.
QUALITY = ("bad", "ok", "good")


def _text_file(path) -> None:
    """'fluency' numbers written as text (one 'NA': the engine reads the column as strings) and 'stance' words,
    one annotator sometimes writing 'pro ' with a space."""
    frame = _mixed()
    words = frame["category"].where(~((frame["rater"] == "h3") & (frame["category"] == "pro")
                                       & (frame["item_id"].str.len() == 3)), "pro ")
    score = np.where(frame["criterion"] == "stance", words, frame["score"].map(lambda v: f"{v:g}"))
    out = frame.drop(columns=["scale", "category"]).assign(score=score)
    out.loc[5, "score"] = "NA"
    out.to_csv(path, index=False)


def _numeric_file(path) -> None:
    """Numbers only: 'fluency' 1-5 and 'coherence' in halves, as numbers (the engine reads doubles)."""
    frame = _mixed()
    frame = frame[frame["criterion"] == "fluency"].drop(columns=["scale", "category"])
    halves = np.clip(frame["score"] - 0.5 * (frame["rater"] == "bot"), 1, 5)
    coherence = frame.assign(criterion="coherence", score=halves)
    pd.concat([frame, coherence]).to_csv(path, index=False)


def _ordered_file(path) -> None:
    """'quality' as words of an order (bad, ok, good) beside 'stance' words."""
    frame = _mixed()
    quality = frame["score"].map(lambda v: QUALITY[int(min(v, 5) - 1) // 2] if v == v else None)
    score = np.where(frame["criterion"] == "stance", frame["category"], quality)
    frame.drop(columns=["scale", "category"]).assign(
        score=score, criterion=frame["criterion"].replace({"fluency": "quality"})).to_csv(path, index=False)


def _pandalm_file(path) -> None:
    """PandaLM's test set with its labels as words (tie, first, second): three annotators and PandaLM-7B."""
    frame = pandalm_text()
    frame.assign(score=frame["category"]).drop(columns=["scale", "category", "criterion"]).to_csv(path, index=False)


FILES = {
    "text": (_text_file, {}),
    "declared": (_numeric_file, {"scale": {"fluency": "nominal"}}),
    "ordered": (_ordered_file, {"order": {"quality": ",".join(QUALITY)}}),
    "pandalm": (_pandalm_file, {}),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    out = {}
    for name, (write, _) in FILES.items():
        if name == "pandalm" and not PANDALM.exists():
            continue
        out[name] = folder / f"{name}.csv"
        write(out[name])
    return out


def _file(files, name):
    if name not in files:
        pytest.skip("../shared/datasets/pandalm not found: this test reads PandaLM's real labels")
    return files[name]


@pytest.fixture(scope="module")
def read_once(duck):
    """Each file read in memory and on the engine, and its units both ways: the same for every grouping."""
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import read

    cache: dict = {}

    def get(path, name):
        if name not in cache:
            declared = FILES[name][1]
            frame, table = load([str(path)], **declared).frame, read(duck, path)
            cache[name] = frame, table, count_units(frame), count_units_engine(table, by=["criterion"], **declared)
        return cache[name]
    return get


@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("by", [["criterion"], []], ids=["criterion", "none"])
def test_engine_reads_labels_as_in_memory(files, read_once, name, by):
    from evalcore.engines.agreement import agreement as engine_agreement

    path = _file(files, name)
    declared = FILES[name][1]
    frame, table, mem_units, eng_units = read_once(path, name)
    if name != "declared":
        assert table.score.type().is_string()  # the case this path is for: words in the engine
    mem = agreement(frame, by=by, n_boot=50, seed=2)
    eng = engine_agreement(table, by=by, n_boot=50, seed=2, **declared)
    assert_same_table(mem, eng)
    np.testing.assert_allclose(mem["estimate"].to_numpy(float), eng["estimate"].to_numpy(float), rtol=0, atol=TOL,
                               equal_nan=True)
    assert mem.attrs.get("notes") == eng.attrs.get("notes")
    assert eng_units.category_labels == mem_units.category_labels
    assert eng_units.scales == mem_units.scales and eng_units.criterion_labels == mem_units.criterion_labels
    cm_mem, cm_eng = confusion_matrix(mem_units, by=["criterion"]), confusion_matrix(eng_units, by=["criterion"])
    pd.testing.assert_frame_equal(cm_mem, cm_eng, check_dtype=False)


def test_labels_keep_their_spelling_and_ordered_labels_show_as_words(duck, files):
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import read

    units = count_units_engine(read(duck, files["text"]), by=["criterion"])
    assert "pro " in units.category_labels and "pro" in units.category_labels  # never merged
    ordered = count_units_engine(read(duck, files["ordered"]), by=["criterion"], order={"quality": list(QUALITY)})
    cm = confusion_matrix(ordered, by=["criterion"])
    assert set(cm.loc[cm["criterion"] == "quality", "human_category"]) == set(QUALITY)  # not the positions 1..3


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--order", "quality=bad,ok,good"],
                                   ["--order", "*=bad,ok,good", "--scale", "stance=nominal", "--confusion"]])
def test_cli_engine_json_equals_in_memory(duck, files, extra, capsys):
    path = str(files["ordered"])
    code, out, err = _cli(["agreement", path, "--boot", "0", "--json", *extra], capsys)
    assert code == 0, err
    mem = json.loads(out)
    code, out, err = _cli(["agreement", path, "--engine", "duckdb", "--boot", "0", "--json", *extra], capsys)
    assert code == 0, err
    eng = json.loads(out)
    assert len(mem) == len(eng) > 0
    for a, b in zip(mem, eng):
        assert list(a) == list(b)
        for k in a:
            if isinstance(a[k], float):
                assert b[k] == pytest.approx(a[k], abs=TOL), k
            else:
                assert a[k] == b[k], k


def _problem(path, **declared) -> DataError:
    with pytest.raises(DataError) as info:
        load([str(path)], **declared)
    return info.value


@pytest.mark.parametrize("case", ["mixed", "not in order", "unknown criterion", "ordinal without order"])
def test_cli_engine_refuses_with_the_in_memory_message(duck, tmp_path, case, capsys):
    path = tmp_path / "labels.csv"
    rows = [(f"i{i}", r, k, "q", v) for i, v in enumerate(["1", "2", "3", "ok", "ok", "zz"])
            for r, k in (("h1", "human"), ("h2", "human"), ("gpt", "judge"))]
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score"])
    options = {"mixed": [], "not in order": ["--order", "q=1,2,3,ok"], "unknown criterion": ["--scale", "x=nominal"],
               "ordinal without order": ["--scale", "q=ordinal"]}[case]
    if case == "ordinal without order":
        frame["score"] = frame["score"].replace({"1": "a", "2": "b", "3": "c"})
    frame.to_csv(path, index=False)
    declared = {"mixed": {}, "not in order": {"order": {"q": "1,2,3,ok"}},
                "unknown criterion": {"scale": {"x": "nominal"}},
                "ordinal without order": {"scale": {"q": "ordinal"}}}[case]
    expected = _problem(path, **declared)
    code, out, err = _cli(["agreement", str(path), "--engine", "duckdb", *options], capsys)
    assert code != 0 and out == ""
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("evalcore: error: ")
    assert f"{expected.problem}. Fix: {expected.fix}." in err  # the in-memory reader's own words, without a row
    if case == "mixed":
        assert "criterion 'q' mixes numbers ('1', '2', '3') and text labels ('ok', 'zz': 9 row(s))" in err


def test_decimal_commas_are_refused_with_the_fix(duck, tmp_path):
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import read

    path = tmp_path / "commas.csv"
    pd.DataFrame({"item_id": ["a", "a", "b", "b"], "rater": ["h1", "gpt"] * 2, "rater_kind": ["human", "judge"] * 2,
                  "score": ["3,5", "4", "2", "1,5"]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="an engine reads finite numbers written with a decimal point"):
        count_units_engine(read(duck, path))
