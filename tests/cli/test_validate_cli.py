"""The ``evalcore`` console script: ``validate`` summaries, JSON contract, one-line errors."""

from __future__ import annotations

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
    assert d["unlocks"] == ["win_rate", "superficial", "position_bias", "calibraeval"]
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

    return {"gz": lambda d: gzip.compress(d, mtime=0), "bz2": bz2.compress,
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
