"""The ``evalcore`` console script: ``validate`` summaries, JSON contract, one-line errors."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pandas as pd
import pytest

from evalcore.cli import main
from tests.helpers import DATASETS, SAMPLES

needs_data = pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: real-data CLI tests need it")


def _json(capsys, *argv: str) -> dict:
    code = main(["validate", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_validate_json_has_the_documented_fields(capsys):
    d = _json(capsys, str(SAMPLES / "ratings_multilingual.csv"))
    raw = pd.read_csv(SAMPLES / "ratings_multilingual.csv")
    assert d["table"] == "ratings"
    assert d["rows"] == len(raw)
    assert d["items"] == raw["item_id"].nunique()
    assert d["human_raters"] == raw.loc[raw["rater_kind"] == "human", "rater"].nunique()
    assert d["judges"] == raw.loc[raw["rater_kind"] == "judge", "rater"].nunique()
    assert d["criteria"] == sorted(raw["criterion"].unique())
    assert d["languages"] == sorted(raw["language"].unique())
    assert {"agreement_humans", "agreement_judge", "familiarity", "anchoring", "self_consistency"} <= set(d["unlocks"])
    assert "win_rate" not in d["unlocks"]


def test_validate_comparisons_sample(capsys):
    d = _json(capsys, str(SAMPLES / "comparisons_pairwise.csv"))
    assert d["table"] == "comparisons"
    assert d["unlocks"] == ["win_rate", "superficial", "position_bias", "calibraeval", "true_win_rates",
                            "systems_leaderboard"]
    assert d["criteria"] == [] and d["languages"] == []


def test_map_option_renames_columns(tmp_path, capsys):
    f = tmp_path / "odd.csv"
    f.write_text("qid,who,kind,verdict_score\nq1,ann,human,3\nq1,llm-x,judge,4\nq2,ann,human,2\nq2,llm-x,judge,2\n")
    d = _json(capsys, str(f), "--map", "qid=item_id", "--map", "who=rater", "--map", "kind=rater_kind",
              "--map", "verdict_score=score")
    assert (d["rows"], d["items"], d["human_raters"], d["judges"]) == (4, 2, 1, 1)
    assert d["mapping"]["verdict_score"] == "score"


def test_wide_file_options(tmp_path, capsys):
    f = tmp_path / "wide.csv"
    f.write_text("item_id,crit,a1,a2,j\nq1,LA,1,2,2\nq2,LA,2,,2\n")
    d = _json(capsys, str(f), "--wide-humans", "a1", "a2", "--wide-judges", "j", "--map", "crit=criterion")
    assert (d["rows"], d["human_raters"], d["judges"], d["criteria"]) == (5, 2, 1, ["LA"])


def test_human_readable_summary(capsys):
    assert main(["validate", str(SAMPLES / "comparisons_pairwise.csv")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("comparisons table from comparisons_pairwise.csv")
    assert "[yes] win_rate" in out and "[no ] agreement_humans" in out


@pytest.mark.parametrize("argv, phrase", [
    (["validate", "missing-file.csv"], "missing-file.csv: file not found"),
    (["validate", "{f}", "--map", "score"], "--map expects SOURCE=CANONICAL"),
    (["validate", "{f}", "--map", "scor=score"], "did you mean 'score'"),
    (["validate", "{f}", "--table", "comparisons"], "required column 'winner' is missing"),
])
def test_errors_are_one_line_and_exit_1(tmp_path, capsys, argv, phrase):
    f = tmp_path / "ok.csv"
    f.write_text("item_id,rater,rater_kind,score\nq1,a,human,1\nq1,j,judge,2\n")
    code = main([a.replace("{f}", str(f)) for a in argv])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("evalcore: error: ") and phrase in err
    assert "Traceback" not in err


def test_console_script_runs_as_a_process(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"%PDF-1.4 binary")
    r = subprocess.run([sys.executable, "-m", "evalcore.cli", "validate", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "evalcore: error: bad.csv: is not a data table: it looks like a PDF document. Fix: export the data as CSV, "
        "TSV, JSON Lines, JSON (a list of records), Parquet or Excel."]


@needs_data
@pytest.mark.parametrize("path, preset, table, items", [
    ("llmbar/Natural/evaluators/GPT-4/Vanilla_NoRules/result.json", "llmbar", "comparisons", 100),
    ("llmbar", "llmbar", "comparisons", 419),
    ("pandalm", "pandalm", "comparisons", 999),
    ("hanna/hanna_metric_scores_llm.csv", "hanna", "ratings", 1056),
])
def test_presets_are_detected_from_real_files(capsys, path, preset, table, items):
    d = _json(capsys, str(DATASETS / path))
    assert (d["preset"], d["table"], d["items"]) == (preset, table, items)


@needs_data
def test_pandalm_keeps_unparsed_outputs_as_invalid_rows(capsys):
    d = _json(capsys, str(DATASETS / "pandalm"))
    assert d["rows"] == 3 * 999 + 999 + 999  # the 25 unparseable GPT-3.5 outputs are kept, marked invalid
    assert d["judges"] == 2 and d["human_raters"] == 3
    assert any(n.startswith("25 unparseable verdicts of gpt-3.5-turbo were kept as rows marked invalid")
               for n in d["notes"])


def test_no_rater_kind_and_decimal_commas(tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("item;annotator;score\n1;alice;4,0\n1;Phil;3,5\n1;prometheus-8-7b;4,5\n2;alice;2,0\n"
                 "2;Phil;2,5\n2;selene;1,0\n")
    d = _json(capsys, str(f))
    assert (d["rows"], d["human_raters"], d["judges"]) == (6, 2, 2)
    assert any("2 rater(s) whose names look like models were taken as judges (prometheus-8-7b, selene)" in n
               for n in d["notes"])
    assert any("decimal commas were read as decimal points ('4,0' is 4.0)" in n for n in d["notes"])


# --------------------------------------------------------------------------- compressed files, lean start-up


def _pack(ext: str, data: bytes) -> bytes:
    import bz2
    import gzip

    import pyarrow as pa

    # The fastest levels: what is read back does not depend on the level.
    return {"gz": lambda d: gzip.compress(d, compresslevel=1, mtime=0), "bz2": lambda d: bz2.compress(d, 1),
            "zst": lambda d: pa.Codec("zstd").compress(d, asbytes=True)}[ext](data)


@pytest.mark.parametrize("ext", ["gz", "zst", "bz2"])
def test_validate_reads_compressed_files_like_the_plain_one(tmp_path, capsys, ext):
    sample = SAMPLES / "ratings_multilingual.csv"
    packed = tmp_path / f"ratings_multilingual.csv.{ext}"
    packed.write_bytes(_pack(ext, sample.read_bytes()))
    plain, comp = _json(capsys, str(sample)), _json(capsys, str(packed))
    assert comp.pop("source") == packed.name and plain.pop("source") == sample.name
    assert comp == plain and comp["rows"] == len(pd.read_csv(sample))
    assert main(["validate", str(packed)]) == 0
    text = capsys.readouterr().out
    assert main(["validate", str(sample)]) == 0
    assert text.replace(packed.name, sample.name) == capsys.readouterr().out


def test_validate_refuses_a_decompression_bomb_in_one_line(tmp_path, capsys, monkeypatch):
    import gzip

    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "1")
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"item_id,rater,rater_kind,score\n" + b"q1,a,human,1\n" * 400_000))
    assert main(["validate", str(bomb)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == ("evalcore: error: bomb.csv.gz: decompresses to more than the 1 MB limit. Fix: set "
                                 "EVALCORE_MAX_FILE_MB to a larger number of megabytes before starting evalcore, or "
                                 "convert the file to Parquet, which is several times smaller.\n")


def test_validate_starts_without_the_heavy_libraries():
    # The validate path needs pandas and pyarrow only: scipy, numba, statsmodels, PyMC load when an analysis runs.
    code = ("import io, sys, contextlib\nfrom evalcore.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    status = main(['validate', sys.argv[1]])\n"
            "heavy = ('scipy', 'numba', 'statsmodels', 'pymc', 'arviz', 'sklearn', 'streamlit', 'plotly')\n"
            "print(status, sorted(m for m in heavy if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, str(SAMPLES / "ratings_multilingual.csv")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0 []"


def test_win_rates_without_systems_name_what_to_do_in_the_cli_and_the_app(tmp_path, capsys):
    """The fix once named "the Data page", which does not exist; it names --map and the upload's mapping."""
    from evalcore.ui.messages import app_message
    from evalcore.errors import DataError
    from evalcore.pairwise.pairs import pairs

    f = tmp_path / "nosys.csv"
    f.write_text("item_id,rater,rater_kind,winner\n1,ann,human,a\n1,gpt-4,judge,b\n2,ann,human,a\n2,gpt-4,judge,a\n")
    assert main(["winrate", str(f), "--json"]) == 1
    err = capsys.readouterr().err
    assert "Data page" not in err
    assert "--map COLUMN=system_a --map COLUMN=system_b" in err and "evalcore winrate --accuracy" in err
    comps = pd.read_csv(f)
    with pytest.raises(DataError) as exc:
        pairs(comps)
    msg = app_message(exc.value)
    assert "Upload a file" in msg and "--map" not in msg and "Data page" not in msg


def _parquet_folder(tmp_path, parts: int = 3):
    """The sample ratings split into ``parts`` Parquet files under a folder (one in a subfolder)."""
    raw = pd.read_csv(SAMPLES / "ratings_multilingual.csv")
    folder = tmp_path / "judgments"
    (folder / "more").mkdir(parents=True)
    for k in range(parts):
        chunk = raw.iloc[k::parts]
        (folder / ("more" if k == 0 else "") / f"part-{k}.parquet").parent.mkdir(exist_ok=True)
        chunk.to_parquet(folder / ("more" if k == 0 else "") / f"part-{k}.parquet", index=False)
    return folder, raw


def _agreement(capsys, *argv):
    code = main(["agreement", *argv, "--boot", "0", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return pd.DataFrame(json.loads(out)), err


@pytest.mark.parametrize("how", ["folder", "glob", "files"])
def test_a_parquet_folder_without_engine_reads_through_duckdb(tmp_path, capsys, how):
    """A folder of Parquet files once got "is a folder"; it goes to the embedded DuckDB engine, with a note."""
    pytest.importorskip("ibis")
    folder, raw = _parquet_folder(tmp_path)
    files = sorted(str(p) for p in folder.rglob("*.parquet"))
    argv = {"folder": [str(folder)], "glob": [str(folder / "**" / "*.parquet")], "files": files}[how]
    got, err = _agreement(capsys, *argv)
    assert "read as one table by the embedded DuckDB engine (--engine duckdb)" in err
    assert err.count("\n") == 1 and "3 Parquet files" in err
    want, _ = _agreement(capsys, str(SAMPLES / "ratings_multilingual.csv"))
    key = [c for c in want.columns if c not in ("estimate", "ci_low", "ci_high")]
    merged = want.merge(got, on=key, suffixes=("", "_engine"), how="outer", indicator=True)
    assert (merged["_merge"] == "both").all() and len(merged) == len(want)
    assert ((merged["estimate"] - merged["estimate_engine"]).abs().fillna(0) < 1e-12).all()


@pytest.mark.slow
def test_a_csv_folder_too(tmp_path, capsys):
    pytest.importorskip("ibis")
    raw = pd.read_csv(SAMPLES / "ratings_multilingual.csv")
    folder = tmp_path / "csvs"
    folder.mkdir()
    for k in range(2):
        raw.iloc[k::2].to_csv(folder / f"p{k}.csv", index=False)
    got, err = _agreement(capsys, str(folder))
    assert "2 CSV files" in err
    want, _ = _agreement(capsys, str(SAMPLES / "ratings_multilingual.csv"))
    assert len(got) == len(want) and got["n"].tolist() == want["n"].tolist()


def test_commands_that_need_the_rows_say_what_reads_a_folder(tmp_path, capsys):
    folder, _ = _parquet_folder(tmp_path)
    assert main(["validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "is 3 Parquet files, and evalcore validate needs the rows in memory" in err
    assert "run evalcore agreement or evalcore winrate on it" in err and "is a folder" not in err


@needs_data
def test_preset_folders_still_go_to_their_preset(capsys):
    from tests.helpers import LLMBAR

    d = _json(capsys, str(LLMBAR))
    assert d["preset"] == "llmbar"


def test_text_output_of_validate_and_winrate_fits_120_columns(capsys):
    """Validate's list of analyses (233 characters) and winrate's headers ran past the terminal."""
    from evalcore.cli import main as cli
    from tests.helpers import SAMPLE, SAMPLE_PAIRS

    for argv in (["validate", SAMPLE], ["winrate", SAMPLE_PAIRS, "--accuracy", "--boot", "20"]):
        assert cli([str(a) for a in argv]) == 0
        out = capsys.readouterr().out
        assert max(map(len, out.splitlines())) <= 120, argv


# --------------------------------------------------------------------------- scales and text labels

LABELS_CSV = ("item_id,rater,rater_kind,criterion,score\n"
              "q1,ann,human,stance,agree\nq1,bob,human,stance,Agree\nq1,gpt-4,judge,stance,disagree\n"
              "q2,ann,human,stance,agree \nq2,bob,human,stance,neutral\nq2,gpt-4,judge,stance,agree\n"
              "q1,ann,human,quality,bad\nq1,bob,human,quality,ok\nq1,gpt-4,judge,quality,good\n"
              "q2,ann,human,quality,ok\nq2,bob,human,quality,ok\nq2,gpt-4,judge,quality,good\n"
              "q1,ann,human,len,3\nq1,gpt-4,judge,len,4\n")


@pytest.fixture
def labels(tmp_path):
    f = tmp_path / "labels.csv"
    f.write_text(LABELS_CSV)
    return str(f)


def test_validate_reports_scales_categories_and_look_alike_labels(labels, capsys):
    assert main(["validate", labels, "--order", "quality=bad, ok, good"]) == 0
    out = capsys.readouterr().out
    assert ("scales:\n"
            "  stance        nominal, 5 categories: 'agree', 'Agree', 'disagree', 'agree ', 'neutral'\n"
            "  quality       ordinal, 3 ordered categories: 'bad' < 'ok' < 'good'\n"
            "  len           ordinal, numbers\n") in out
    assert ("note: labels.csv, criterion 'stance': labels that differ only in case or in spaces around them are kept "
            "as different categories: 'agree' / 'Agree' / 'agree '.") in " ".join(out.split())


def test_validate_json_carries_the_scales_only_for_tables_that_have_them(labels, capsys):
    d = _json(capsys, labels, "--scale", "len=nominal")
    assert d["scales"] == [
        {"criterion": "stance", "scale": "nominal", "labels": "categories", "n_categories": 5,
         "categories": ["agree", "Agree", "disagree", "agree ", "neutral"],
         "near_duplicates": [["agree", "Agree", "agree "]]},
        {"criterion": "quality", "scale": "nominal", "labels": "categories", "n_categories": 3,
         "categories": ["ok", "good", "bad"], "near_duplicates": []},
        {"criterion": "len", "scale": "nominal", "labels": "categories", "n_categories": 2, "categories": ["3", "4"],
         "near_duplicates": []}]
    assert "scales" not in _json(capsys, str(SAMPLES / "ratings_multilingual.csv"))  # numbers: the JSON as it was
    interval = _json(capsys, str(SAMPLES / "ratings_multilingual.csv"), "--scale", "*=interval")
    assert {s["scale"] for s in interval["scales"]} == {"interval"}


@pytest.mark.parametrize("argv, phrase", [
    (["--scale", "quality=ordinal"], "labels.csv, row 8, column 'score': criterion 'quality' is declared ordinal but "
                                     "holds text labels ('bad', 'ok', 'good') and no order was given for them. Fix: "
                                     "give their order, lowest first (--order 'quality=LOWEST,...,HIGHEST')"),
    (["--scale", "qualty=nominal"], "the scale declared for criterion 'qualty' names no criterion of the data. Fix: "
                                    "name one of the criteria: 'stance', 'quality', 'len' (or * for every criterion)"),
    (["--order", "quality=bad,good"], "criterion 'quality' has the label 'ok', which is not in the order given (bad, "
                                      "good)"),
    (["--order", "len=1,2"], "an order was given for criterion 'len', whose labels are numbers"),
    (["--scale", "quality"], "--scale expects CRITERION=VALUE, got 'quality'"),
    (["--scale", "len=nominal", "--scale", "len=ordinal"], "--scale names criterion 'len' twice"),
    (["--scale", "len=likert"], "'likert' is not a scale (declared for criterion 'len')"),
])
def test_scale_and_order_mistakes_are_one_line_with_the_fix(labels, capsys, argv, phrase):
    assert main(["validate", labels, *argv]) == 1
    err = capsys.readouterr().err
    assert phrase in err and len(err.strip().splitlines()) == 1


def test_mixed_numbers_and_text_name_the_criterion_and_the_fix(tmp_path, capsys):
    f = tmp_path / "mixed.csv"
    f.write_text("item_id,rater,rater_kind,criterion,score\nq1,a,human,LA,4\nq1,j,judge,LA,good\nq2,a,human,LA,5\n"
                 "q2,j,judge,LA,2\n")
    assert main(["validate", str(f)]) == 1
    assert ("mixed.csv, row 3, column 'score': criterion 'LA' mixes numbers ('4', '5', '2') and text labels ('good': 1 "
            "row(s)) in its scores. Fix: declare the criterion nominal to keep every label as a category (--scale "
            "'LA=nominal')") in capsys.readouterr().err
    assert _json(capsys, str(f), "--scale", "LA=nominal")["scales"][0]["n_categories"] == 4


def test_every_command_that_reads_files_takes_scale_and_order():
    """The options are shared (evalcore.cli.options.add_input_args), and load_input hands them to the loader."""
    from evalcore.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    readers = {name: p for name, p in sub.choices.items() if any(a.dest == "files" for a in p._actions)}
    assert {"validate", "agreement", "bias", "winrate", "report"} <= set(readers)
    for name, p in readers.items():
        args = p.parse_args(["f.csv", "--scale", "a=nominal", "--scale", "*=ordinal", "--order", "b=x,y"])
        assert (args.scale, args.order) == (["a=nominal", "*=ordinal"], ["b=x,y"]), name


@pytest.mark.parametrize("command", ["agreement", "bias"])
def test_analysis_commands_read_with_the_declarations(labels, capsys, command):
    assert main([command, labels, "--order", "quality=bad,ok", "--boot", "0"]) == 1
    assert ("row 10, column 'score': criterion 'quality' has the label 'good', which is not in the order given (bad, "
            "ok)") in capsys.readouterr().err


def test_engine_applies_the_declarations(tmp_path, capsys):
    f = tmp_path / "r.parquet"
    pd.read_csv(SAMPLES / "ratings_multilingual.csv").head(50).to_parquet(f)
    argv = ["agreement", str(f), "--scale", "*=nominal", "--boot", "0", "--json"]
    assert main(argv) == 0
    mem = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert main([*argv, "--engine", "duckdb"]) == 0
    eng = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert "cohen_kappa_quadratic" not in set(eng["measure"])  # nominal: no measure that needs an order
    pd.testing.assert_frame_equal(mem, eng, check_exact=False, rtol=1e-9, atol=1e-9)
