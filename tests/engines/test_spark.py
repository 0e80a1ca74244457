"""Spark parity: the same ibis expressions on a local Spark session give DuckDB's statistics and table.

Marked ``spark``; it runs in CI, where ``EVALCORE_REQUIRE_SPARK=1`` turns a missing pyspark or Java
into a failure (see conftest.py). Small Parquet fixtures keep it to well under a minute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .helpers import item_statistics, unit_statistics

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def fixtures(sample_frame, tmp_path_factory):
    """A slice of the sample (with its samples 0-4 and per-item segments), as two Parquet files in a folder and its
    subfolder."""
    items = sample_frame["item_id"].drop_duplicates().iloc[:300]
    part = sample_frame[sample_frame["item_id"].isin(items)].reset_index(drop=True)
    # One more criterion with few categories, so the per-item compression has repeated item types.
    extra = part[part["criterion"] == "LA"].assign(criterion="binary", score=lambda d: (d["score"] > 2).astype(np.int64))
    frame = pd.concat([part, extra], ignore_index=True).sample(frac=1.0, random_state=3).reset_index(drop=True)
    folder = tmp_path_factory.mktemp("spark-fixture")
    half = len(frame) // 2
    frame.iloc[:half].to_parquet(folder / "a.parquet")
    (folder / "more").mkdir()
    frame.iloc[half:].to_parquet(folder / "more" / "b.parquet")  # a subfolder is read too
    return frame, folder


def test_spark_gives_duckdb_statistics_and_table(spark, duck, fixtures):
    from evalcore.pointwise.agreement.units import count_units
    from evalcore.engines.agreement import agreement as eagreement, count_units_engine
    from evalcore.engines.engine import read

    frame, folder = fixtures
    on_spark, on_duck = read(spark, folder), read(duck, folder)
    mem = count_units(frame)
    for by in (["language", "criterion"], ["task"]):
        s_units, d_units = count_units_engine(on_spark, by=by), count_units_engine(on_duck, by=by)
        assert unit_statistics(s_units) == unit_statistics(d_units) == unit_statistics(mem)
        if "criterion" not in by:
            assert item_statistics(s_units) == item_statistics(d_units) == item_statistics(mem)
        # Same compressed rows in the same order: the same bootstrap draws, so the identical table.
        pd.testing.assert_frame_equal(eagreement(on_spark, by=by, n_boot=60, seed=4),
                                      eagreement(on_duck, by=by, n_boot=60, seed=4))
