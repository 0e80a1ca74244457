"""`evalcore report`: the HTML file, the report card as JSON, the printed commands reproduce the numbers,
and bad input gives one error line."""

from __future__ import annotations

import html as html_lib
import json
import re
import shlex

import pandas as pd
import pytest

from evalcore.cli import main
from tests.helpers import SAMPLE, SAMPLE_PAIRS


@pytest.mark.slow
def test_report_writes_the_file_and_reproduces_its_numbers(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(SAMPLE), "--out", str(out), "--boot", "100", "--seed", "3"]) == 0
    said = capsys.readouterr().out
    assert f"written to {out}" in said and "<h1>evalcore report: ratings_multilingual.csv</h1>" in out.read_text() and "- gpt-4/single-call:\n    Agrees with humans " in said and "    Anchored" in said
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>")
    # the agreement command printed in the report gives the numbers printed in the report
    line = next(html_lib.unescape(m) for m in re.findall(r"evalcore agreement [^\n<]*", text))
    argv = shlex.split(line)[1:]
    assert argv[:2] == ["agreement", str(SAMPLE)] and argv[-5:] == ["--boot", "100", "--seed", "3", "--json"]
    assert main(argv) == 0
    rec = pd.DataFrame(json.loads(capsys.readouterr().out))
    r = rec[(rec["language"] == "Swahili") & (rec["criterion"] == "OCQ") & (rec["judge"] == "gpt-4/per-criterion")
            & (rec["measure"] == "percent_agreement")].iloc[0]
    assert f"{r['estimate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" in text


@pytest.mark.slow
def test_report_json_prints_the_card(tmp_path, capsys):
    assert main(["report", str(SAMPLE_PAIRS), "--json", "--boot", "100"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["judge"] for r in recs] == ["gpt-3.5/pairwise", "gpt-4/pairwise", "llama-2-70b/pairwise"]
    for r in recs:
        assert set(r) == {"judge", "verdict", "sentences", "findings", "mitigations"}
        assert "Favours the output shown first" in r["verdict"]
        f = r["findings"][0]
        assert {"measure", "group", "estimate", "ci_low", "ci_high", "q_value"} <= set(f)
        assert f["q_value"] <= 0.05 and f["ci_low"] <= f["estimate"] <= f["ci_high"]
        assert r["mitigations"] and all(m["source"] for m in r["mitigations"])
    # --json with --out writes the file too
    out = tmp_path / "pairs.html"
    assert main(["report", str(SAMPLE_PAIRS), "--json", "--boot", "50", "--out", str(out)]) == 0
    assert out.stat().st_size > 1e6 and json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("argv, says", [
    (["report", str(SAMPLE)], "--out report.html"),
    (["report", str(SAMPLE), "--out", "report.txt"], "not an .html file"),
    (["report", str(SAMPLE), "--out", "r.html", "--seed", "-1"], "--seed -1 is negative"),
    (["report", str(SAMPLE), "--out", "r.html", "--boot", "-5"], "--boot -5 is negative"),
    (["report", "no_such_file.csv", "--out", "r.html"], "no_such_file.csv"),
    (["report", str(SAMPLE), "--boot", "0", "--out", "/no/such/folder/r.html"], "cannot write /no/such/folder/r.html"),
])
def test_bad_input_gives_one_error_line(argv, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("evalcore: error: ") and err.count("\n") == 1 and says in err
    assert "Traceback" not in err and "unexpected" not in err


def test_validate_lists_meta_evaluation_where_systems_and_inputs_are_named(tmp_path, capsys):
    """"What this data unlocks" (validate, the home page) lists system- and input-level correlation and the judge
    leaderboard when the ratings name systems and inputs, and says what they would need otherwise."""
    from evalcore.data.summary import unlocks
    from evalcore.data.validation import validate
    from evalcore.report.views.home import unlocked
    from tests.unit.report.test_html import _systems_frame

    path = tmp_path / "summaries.csv"
    _systems_frame(n_inputs=6).to_csv(path, index=False)
    assert main(["validate", str(path)]) == 0
    said = capsys.readouterr().out
    for name in ("meta_system", "meta_input", "leaderboard"):
        assert re.search(rf"\[yes\] {name}\b", said), name
    assert main(["validate", str(path), "--json"]) == 0
    assert {"meta_system", "meta_input", "leaderboard"} <= set(json.loads(capsys.readouterr().out)["unlocks"])
    # without systems: the system and input levels say what they need; two judges still make a leaderboard
    plain = _systems_frame(n_inputs=6).drop(columns=["system", "input_id"])
    av = unlocks(validate(plain, table="ratings").frame, table="ratings").set_index("analysis")
    assert av.loc["leaderboard", "available"] and not av.loc["meta_system", "available"]
    assert "column 'system'" in av.loc["meta_system", "missing"]
    shown = unlocked(av.reset_index(), "ratings").set_index("title")
    assert shown.filter(like="Judge leaderboard", axis=0)["where"].iloc[0] == (
        "Agreement page · CLI: evalcore agreement --leaderboard")
