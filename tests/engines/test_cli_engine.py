"""``evalcore agreement --engine``: the same JSON fields and numbers as the in-process command."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from evalcore.cli import main
from tests.helpers import SAMPLE


def _json(argv: list[str]) -> list[dict]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


@pytest.fixture(scope="module")
def validated_parquet(tmp_path_factory):
    """The sample CSV as the CLI validates it, written to Parquet (the engine reads canonical columns)."""
    from evalcore.data.ingest import load

    path = tmp_path_factory.mktemp("cli-engine") / "ratings.parquet"
    load([str(SAMPLE)]).frame.to_parquet(path)
    return path


@pytest.mark.parametrize("extra", [[], ["--by", "task"], ["--min-raters", "3", "--max-raters", "3"]])
def test_engine_json_matches_in_memory(duck, validated_parquet, extra):
    mem = _json(["agreement", str(SAMPLE), "--boot", "0", "--json", *extra])
    eng = _json(["agreement", str(validated_parquet), "--engine", "duckdb", "--boot", "0", "--json", *extra])
    assert len(mem) == len(eng) > 0
    for a, b in zip(mem, eng):
        assert list(a) == list(b)
        for k in a:
            if k == "estimate" and a[k] is not None:
                assert np.isclose(a[k], b[k], rtol=1e-11, atol=1e-13)
            else:
                assert a[k] == b[k], k


def test_engine_text_output_and_refusals(duck, validated_parquet, capsys):
    assert main(["agreement", str(validated_parquet), "--engine", "duckdb", "--boot", "20"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the header wraps at 120 columns
    assert out.startswith(f"agreement of {validated_parquet}, grouped by language, criterion; 20 bootstrap")
    assert main(["agreement", str(validated_parquet), "--engine", "duckdb", "--leaderboard"]) != 0
    assert "--leaderboard and --pairs need the rows in memory" in capsys.readouterr().err
    assert main(["agreement", str(validated_parquet), "--engine", "nosuch"]) != 0
    assert "unknown engine 'nosuch'" in capsys.readouterr().err


def test_engine_map_renames_columns(duck, validated_parquet, tmp_path):
    import pandas as pd

    renamed = tmp_path / "renamed.parquet"
    pd.read_parquet(validated_parquet).rename(columns={"rater": "annotator"}).to_parquet(renamed)
    a = _json(["agreement", str(validated_parquet), "--engine", "duckdb", "--boot", "0", "--json"])
    b = _json(["agreement", str(renamed), "--engine", "duckdb", "--boot", "0", "--json", "--map", "annotator=rater"])
    assert a == b


def test_missing_ibis_names_the_install_command(monkeypatch, capsys, validated_parquet):
    import sys

    monkeypatch.setitem(sys.modules, "ibis", None)  # import ibis now raises ImportError
    assert main(["agreement", str(validated_parquet), "--engine", "duckdb"]) != 0
    assert "pip install 'evalcore[engines]'" in capsys.readouterr().err
