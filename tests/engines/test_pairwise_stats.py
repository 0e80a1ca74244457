"""The pairwise sufficient statistics on an SQL engine (evalcore.engines.pairwise) equal the in-process ones.

Each statistic is computed twice: on DuckDB through ibis (the table registered from Arrow or Parquet,
never from a pandas nullable frame), and from the in-process PairData of evalcore.pairwise.pairs. Data:
the sample's comparisons, PandaLM, and shuffled copies with pairs named the other way round. Engines
return rows in no stable order, so both sides are sorted before they are compared. A Spark run
(local[1], the ``spark`` fixture of conftest.py) repeats the sample's statistics.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalcore.data import ingest
from evalcore.errors import DataError
from evalcore.pairwise.pairs import label_mask, pair_data, pairs
from tests.helpers import DATASETS, PANDALM, SAMPLE_PAIRS

ibis = pytest.importorskip("ibis", reason="ibis is the optional extra evalcore[engines]")
from evalcore.engines import pairwise as sp

_DROP = ("text_a", "text_b")  # long texts: not needed by any statistic here


# --------------------------------------------------------------------------- data


def _load(name: str) -> pd.DataFrame:
    if name == "sample":
        return ingest.load(SAMPLE_PAIRS).frame
    if not DATASETS.exists():
        pytest.skip(f"{DATASETS} not found: this case reads the real public data")
    return ingest.load(PANDALM, preset="pandalm").frame


def _flip_rows(frame: pd.DataFrame, which: np.ndarray) -> pd.DataFrame:
    """The same judgments with the rows in ``which`` naming their pair the other way round."""
    out = frame.copy()
    for a, b in (("system_a", "system_b"), ("score_a", "score_b"), ("superficial_a", "superficial_b")):
        if a in out.columns:
            out.loc[which, [a, b]] = out.loc[which, [b, a]].to_numpy()
    win = out["winner"].copy()
    out.loc[which & (win == "a").fillna(False).to_numpy(), "winner"] = "b"
    out.loc[which & (win == "b").fillna(False).to_numpy(), "winner"] = "a"
    out.loc[which, "swapped"] = ~out.loc[which, "swapped"].astype(bool)  # the same output is still shown first
    return out.drop(columns=[c for c in ("prob_a", "prob_a_swap_position", "prob_a_swap_id") if c in out.columns])


def _shuffled(frame: pd.DataFrame, *, seed: int, per_row: bool) -> pd.DataFrame:
    """Rows in a random order, a random share of the pairs named the other way round (whole items, or rows)."""
    rng = np.random.default_rng(seed)
    if per_row:
        which = rng.random(len(frame)) < 0.4
    else:
        items = frame["item_id"].unique()
        which = frame["item_id"].isin(items[rng.random(len(items)) < 0.4]).to_numpy()
    out = _flip_rows(frame, which)
    assert which.any() and (out["system_a"] != frame["system_a"]).any()
    return out.iloc[rng.permutation(len(out))].reset_index(drop=True)


_CASES = {  # name: the in-memory frame
    "sample": lambda: _load("sample"),
    "pandalm": lambda: _load("pandalm"),
    "sample_shuffled": lambda: _shuffled(_load("sample"), seed=11, per_row=False),
    "pandalm_shuffled": lambda: _shuffled(_load("pandalm"), seed=12, per_row=False),
    "sample_rows_flipped": lambda: _shuffled(_load("sample"), seed=13, per_row=True),
    "pandalm_rows_flipped": lambda: _shuffled(_load("pandalm"), seed=14, per_row=True),
}


@pytest.fixture(scope="module")
def con():
    return ibis.duckdb.connect()


@pytest.fixture(scope="module")
def frames():
    return {}


def _case(name: str, frames: dict, con, tmp_path_factory) -> tuple[pd.DataFrame, object]:
    """The in-memory frame and the same table on DuckDB (shuffled copies go through a Parquet file)."""
    if name not in frames:
        frame = _CASES[name]()
        arrow = pa.Table.from_pandas(frame.drop(columns=[c for c in _DROP if c in frame.columns]),
                                     preserve_index=False)
        if "shuffled" in name or "flipped" in name:
            import pyarrow.parquet as pq

            path = tmp_path_factory.mktemp("parquet") / f"{name}.parquet"
            pq.write_table(arrow, path)
            table = con.read_parquet(path, table_name=name)
        else:
            table = con.create_table(name, arrow)
        frames[name] = (frame, table)
    return frames[name]


# --------------------------------------------------------------------------- (a) verdict patterns


def _reference_patterns(pair, labelled: bool):
    """Distinct (verdicts, label) rows of a PairData and their counts, as the Dawid-Skene fit compresses them."""
    h = pair.human if labelled else np.full(pair.n_items, -1, dtype=np.int8)
    rows = np.concatenate([pair.verdicts, h[:, None]], axis=1)
    pat, cnt = np.unique(rows[(rows >= 0).any(axis=1)], axis=0, return_counts=True)
    return pat[:, :-1], pat[:, -1], cnt


@pytest.mark.parametrize("name", list(_CASES))
@pytest.mark.parametrize("labelled", [True, False])
def test_verdict_patterns_equal_pair_data(name, labelled, frames, con, tmp_path_factory):
    frame, table = _case(name, frames, con, tmp_path_factory)
    got = sp.verdict_patterns(table, labelled=labelled)
    expect = pairs(frame)
    assert [(p.system_a, p.system_b) for p in got] == sorted(zip(expect["system_a"], expect["system_b"]))
    for p in got:
        ref = pair_data(frame, p.system_a, p.system_b)
        assert p.judges == ref.judges
        T, H, w = _reference_patterns(ref, labelled)
        np.testing.assert_array_equal(p.verdicts, T)
        np.testing.assert_array_equal(p.human, H)
        np.testing.assert_array_equal(p.counts, w)
        assert p.counts.sum() == ((ref.verdicts >= 0).any(axis=1) | (labelled & (ref.human >= 0))).sum()
        if labelled:
            assert ((p.human >= 0) * p.counts).sum() == ref.n_human


@pytest.mark.parametrize("name", ["sample", "pandalm", "sample_rows_flipped"])
def test_verdict_patterns_with_a_label_mask_equal_the_masked_pair_data(name, frames, con, tmp_path_factory):
    """The in-distribution prior of Dawid-Skene: only a seeded share of the items' human labels is used."""
    frame, _ = _case(name, frames, con, tmp_path_factory)
    frame = frame.drop(columns=[c for c in _DROP if c in frame.columns])
    lo = np.minimum(frame["system_a"].astype(str), frame["system_b"].astype(str))
    hi = np.maximum(frame["system_a"].astype(str), frame["system_b"].astype(str))
    use = np.zeros(len(frame), dtype=bool)
    refs = {}
    for r in pairs(frame).itertuples():
        ref = pair_data(frame, r.system_a, r.system_b)
        mask = label_mask(ref, 0.3, seed=5)
        refs[(r.system_a, r.system_b)] = (ref, mask)
        here = (lo == min(r.system_a, r.system_b)) & (hi == max(r.system_a, r.system_b))
        use |= (here & frame["item_id"].isin(ref.item_ids[mask])).to_numpy()
    table = con.create_table(f"{name}_masked", pa.Table.from_pandas(frame.assign(use_label=use), preserve_index=False))
    got = sp.verdict_patterns(table, labelled="use_label")
    assert sorted(refs) == [(p.system_a, p.system_b) for p in got]
    for p in got:
        ref, mask = refs[(p.system_a, p.system_b)]
        h = np.where(mask & (ref.human >= 0), ref.human, -1).astype(np.int8)
        rows = np.concatenate([ref.verdicts, h[:, None]], axis=1)
        pat, cnt = np.unique(rows[(rows >= 0).any(axis=1)], axis=0, return_counts=True)
        np.testing.assert_array_equal(np.column_stack([p.verdicts, p.human]), pat)
        np.testing.assert_array_equal(p.counts, cnt)
        assert 0 < ((p.human >= 0) * p.counts).sum() < ref.n_human
    with pytest.raises(DataError, match="no column 'nope'"):
        sp.verdict_patterns(table, labelled="nope")


# --------------------------------------------------------------------------- errors, and Spark


def test_missing_ibis_says_how_to_install(monkeypatch, frames, con, tmp_path_factory):
    _, table = _case("sample", frames, con, tmp_path_factory)
    monkeypatch.setitem(sys.modules, "ibis", None)  # import ibis now raises ImportError
    with pytest.raises(DataError, match=r"pip install 'evalcore\[engines\]'"):
        sp.verdict_patterns(table)


def test_a_table_without_systems_is_a_data_error(frames, con, tmp_path_factory):
    _, table = _case("sample", frames, con, tmp_path_factory)
    with pytest.raises(DataError, match="'system_a'"):
        sp.verdict_patterns(table.drop("system_a"))


@pytest.mark.spark
@pytest.mark.slow
def test_spark_gives_the_same_counts_as_duckdb(spark, tmp_path, frames, con, tmp_path_factory):
    """The same expressions on Spark (local[1], the session fixture of conftest.py: skipped without pyspark or
    Java unless EVALCORE_REQUIRE_SPARK=1), fed from Parquet: a nullable pandas column sent directly would
    come back NULL."""
    _, table = _case("sample", frames, con, tmp_path_factory)
    path = tmp_path / "sample.parquet"
    table.to_parquet(path)
    st = spark.read_parquet(path, table_name="pairwise_sample_cmp")
    pd.testing.assert_frame_equal(sp.pair_item_counts(st), sp.pair_item_counts(table), check_dtype=False)
    got, expect = sp.verdict_patterns(st), sp.verdict_patterns(table)
    assert len(got) == len(expect) > 0
    for a, b in zip(got, expect):
        assert (a.system_a, a.system_b, a.judges) == (b.system_a, b.system_b, b.judges)
        np.testing.assert_array_equal(np.column_stack([a.verdicts, a.human, a.counts]),
                                      np.column_stack([b.verdicts, b.human, b.counts]))
