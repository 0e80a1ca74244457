"""A header-only Parquet file read by an engine gets the in-memory reader's message, not an empty table and exit 0."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalcore.cli import main

pytest.importorskip("ibis", reason="the engines are the engines extra (pip install 'evalcore[engines]')")


def test_a_header_only_parquet_file_through_the_engine_is_one_message(tmp_path, capsys):
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"item_id": pa.array([], pa.string()), "rater": pa.array([], pa.string()),
                             "rater_kind": pa.array([], pa.string()), "criterion": pa.array([], pa.string()),
                             "score": pa.array([], pa.float64())}), path)
    assert main(["agreement", str(path), "--engine", "duckdb"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.strip() == f"evalcore: error: {path}: has no data rows. Fix: export at least one judgment."
