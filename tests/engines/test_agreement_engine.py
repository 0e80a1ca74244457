"""The agreement statistics computed by an engine (DuckDB through ibis) against the in-process path.

The engine path must give the same sufficient statistics as :func:`count_units` (per unit, and per
item: what the bootstrap resamples) and so the same agreement table: same rows, counts and notes,
estimates to the last bits. Its own results do not depend on the order of the rows or on how the
Parquet files are split.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from tests.helpers import DATASETS, needs_datasets

from .helpers import assert_same_table, item_statistics, unit_statistics

BYS = [["language", "criterion"], ["task"], [], ["criterion"], ["language", "task", "criterion"]]


def _engine(duck, frame: pd.DataFrame, tmp_path, name: str = "r.parquet"):
    from evalcore.engines.engine import read

    path = tmp_path / name
    frame.to_parquet(path)
    return read(duck, path)


@pytest.mark.parametrize("by", BYS, ids=lambda b: "-".join(b) or "none")
def test_sample_statistics_and_table(duck, sample_frame, sample_parquet, by):
    from evalcore.engines.agreement import agreement as eagreement, count_units_engine
    from evalcore.engines.engine import read

    table = read(duck, sample_parquet)
    mem_units = count_units(sample_frame)
    eng_units = count_units_engine(table, by=by)
    assert unit_statistics(eng_units) == unit_statistics(mem_units)
    if "criterion" not in by:
        assert not eng_units.per_criterion
        assert item_statistics(eng_units) == item_statistics(mem_units)
    assert eng_units.scale == mem_units.scale
    assert np.array_equal(eng_units.values, mem_units.values)
    assert eng_units.judges == mem_units.judges
    for n_boot in (0, 50):
        mem = agreement(sample_frame, by=by, n_boot=n_boot, seed=3)
        eng = eagreement(table, by=by, n_boot=n_boot, seed=3)
        assert_same_table(mem, eng, draws=n_boot == 0)


def test_sample_rule_first_sample(duck, sample_frame, tmp_path):
    """Several samples per rater: the first counts, as in memory (the sample data has samples 0-4)."""
    from evalcore.engines.agreement import count_units_engine

    assert sample_frame["sample"].nunique() > 1
    shifted = sample_frame.assign(score=np.where(sample_frame["sample"] > 0, 1, sample_frame["score"]))
    table = _engine(duck, shifted, tmp_path)
    assert unit_statistics(count_units_engine(table)) == unit_statistics(count_units(shifted))
    # and the rule matters here: without it the statistics differ
    table_all = _engine(duck, shifted.drop(columns="sample"), tmp_path, "all.parquet")
    assert unit_statistics(count_units_engine(table_all)) != unit_statistics(count_units(shifted))


def test_shuffled_rows_same_statistics_and_same_draws(duck, sample_frame, sample_parquet, tmp_path):
    """No engine returns a stable row order: the engine path sorts, so shuffled rows give the identical table,
    intervals included; and the same table as in memory on the shuffled frame."""
    from evalcore.engines.agreement import agreement as eagreement
    from evalcore.engines.engine import read

    shuffled = sample_frame.sample(frac=1.0, random_state=11).reset_index(drop=True)
    eng_shuffled = _engine(duck, shuffled, tmp_path, "shuffled.parquet")
    for by in (["language", "criterion"], ["task"]):
        a = eagreement(read(duck, sample_parquet), by=by, n_boot=100, seed=5)
        b = eagreement(eng_shuffled, by=by, n_boot=100, seed=5)
        pd.testing.assert_frame_equal(a, b)
        assert_same_table(agreement(shuffled, by=by, n_boot=100, seed=5), b)


def test_parquet_folder_is_one_table(duck, sample_frame, sample_parquet, tmp_path):
    from evalcore.engines.agreement import agreement as eagreement
    from evalcore.engines.engine import read

    folder = tmp_path / "parts"
    (folder / "more").mkdir(parents=True)
    cuts = [0, 20_000, 41_000, len(sample_frame)]
    for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        sample_frame.iloc[lo:hi].to_parquet((folder / "more" if k == 2 else folder) / f"part{k}.parquet")
    whole = eagreement(read(duck, sample_parquet), n_boot=30, seed=1)
    parts = eagreement(read(duck, folder), n_boot=30, seed=1)
    pd.testing.assert_frame_equal(whole, parts)


def test_unit_filter_same_as_in_memory(duck, sample_frame, sample_parquet):
    from evalcore.engines.agreement import agreement as eagreement
    from evalcore.engines.engine import read

    table = read(duck, sample_parquet)
    for by in (["language", "criterion"], ["task"]):
        mem = agreement(sample_frame, by=by, n_boot=0, min_raters=3, max_raters=3)
        eng = eagreement(table, by=by, n_boot=0, min_raters=3, max_raters=3)
        assert eng["note"].str.contains("unit(s) kept", regex=False).all()
        assert_same_table(mem, eng, draws=True)


def test_judges_subset_and_unknown_judge(duck, sample_frame, sample_parquet):
    from evalcore.engines.agreement import agreement as eagreement
    from evalcore.engines.engine import read

    table = read(duck, sample_parquet)
    judge = "gpt-4/single-call"
    assert_same_table(agreement(sample_frame, by=["language", "criterion"], judges=[judge], n_boot=0),
                      eagreement(table, by=["language", "criterion"], judges=[judge], n_boot=0), draws=True)
    with pytest.raises(DataError, match="no judge named 'nobody'"):
        eagreement(table, judges=["nobody"], n_boot=0)


def test_rater_kind_from_names(duck, sample_frame, tmp_path):
    """Without rater_kind, raters named like models are the judges (evalcore.data.raters), as on import."""
    from evalcore.engines.agreement import count_units_engine

    table = _engine(duck, sample_frame.drop(columns="rater_kind"), tmp_path)
    assert unit_statistics(count_units_engine(table)) == unit_statistics(count_units(sample_frame))


def test_errors_name_the_problem_and_the_fix(duck, sample_frame, tmp_path):
    from evalcore.engines.agreement import count_units_engine

    small = sample_frame.head(2000)
    with pytest.raises(DataError, match="lacks item_id, score") as err:
        count_units_engine(_engine(duck, small.drop(columns=["item_id", "score"]), tmp_path))
    assert "Fix:" in str(err.value)
    # Numbers written as text read as the numbers, as in memory; a date is neither numbers nor labels.
    as_text = count_units_engine(_engine(duck, small.assign(score=small["score"].astype(str)), tmp_path, "s.parquet"))
    assert unit_statistics(as_text) == unit_statistics(count_units(small))
    with pytest.raises(DataError, match="not numbers or labels"):
        count_units_engine(_engine(duck, small.assign(score=pd.Timestamp("2024-01-01")), tmp_path, "d.parquet"))
    varying = small.assign(language=np.where(np.arange(len(small)) % 7 == 0, "xx", small["language"]))
    with pytest.raises(DataError, match="'language' has different values within one item"):
        count_units_engine(_engine(duck, varying, tmp_path, "v.parquet"), by=["language"])
    with pytest.raises(DataError, match="rater_kind holds robot"):
        count_units_engine(_engine(duck, small.assign(rater_kind="robot"), tmp_path, "k.parquet"))


def test_per_criterion_units_refuse_other_groupings(duck, sample_parquet):
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import read

    units = count_units_engine(read(duck, sample_parquet), by=["criterion"])
    assert units.per_criterion
    with pytest.raises(DataError, match="compressed per criterion"):
        agreement(units, by=["language"], n_boot=0)


@pytest.mark.slow
@needs_datasets
def test_hanna(duck, tmp_path):
    """HANNA: six criteria, many judges with fractional (averaged) scores, read through its preset."""
    from evalcore.data.presets import read_preset
    from evalcore.engines.agreement import agreement as eagreement, count_units_engine

    frame = read_preset("hanna", [DATASETS / "hanna" / "hanna_metric_scores_llm.csv"]).frame
    table = _engine(duck, frame, tmp_path, "hanna.parquet")
    mem_units = count_units(frame)
    assert unit_statistics(count_units_engine(table)) == unit_statistics(mem_units)
    assert item_statistics(count_units_engine(table, by=[])) == item_statistics(mem_units)
    for by in (["criterion"], []):
        assert_same_table(agreement(frame, by=by, n_boot=0), eagreement(table, by=by, n_boot=0), draws=True)


def test_unknown_grouping_column_fails_before_the_big_query(duck, sample_parquet):
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import read

    with pytest.raises(DataError, match="cannot group by 'region'") as err:
        count_units_engine(read(duck, sample_parquet), by=["region"])
    assert "language" in str(err.value) and "task" in str(err.value)


def test_a_table_of_the_engine_by_name(sample_parquet):
    """On a database engine the input names a table (``schema.table``); here a DuckDB schema."""
    from evalcore.engines.agreement import count_units_engine
    from evalcore.engines.engine import connect, read

    con = connect("duckdb")
    con.raw_sql(f"CREATE SCHEMA eval; CREATE TABLE eval.ratings AS SELECT * FROM read_parquet('{sample_parquet}')")
    assert unit_statistics(count_units_engine(read(con, "eval.ratings"))) == \
        unit_statistics(count_units_engine(read(con, sample_parquet)))
    with pytest.raises(DataError, match="neither a file, a folder of Parquet files nor a table"):
        read(con, "eval.missing")
