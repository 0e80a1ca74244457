"""The pairwise sufficient statistics on an SQL engine (evalcore.engines.pairwise) equal the in-process ones.

Each statistic is computed twice: on DuckDB through ibis (the table registered from Arrow or Parquet,
never from a pandas nullable frame), and from the in-process objects of evalcore.pairwise (PairData,
accuracy_counts, judge_accuracy, judge_data, position_report). Data: the sample's comparisons, LLMBar,
PandaLM, and shuffled copies with pairs named the other way round. Engines return rows in no stable
order, so both sides are sorted before they are compared. A Spark run (local[1], the ``spark`` fixture
of conftest.py) repeats the sample's statistics.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalcore.data import ingest
from evalcore.errors import DataError
from evalcore.pairwise.accuracy import judge_accuracy
from evalcore.pairwise.pairs import accuracy_counts, label_mask, pair_data, pairs
from evalcore.pairwise.position import judge_data, position_report
from tests.helpers import DATASETS, LLMBAR, PANDALM, SAMPLE_PAIRS

ibis = pytest.importorskip("ibis", reason="ibis is the optional extra evalcore[engines]")
from evalcore.engines import pairwise as sp

_DROP = ("text_a", "text_b")  # long texts: not needed by any statistic here


# --------------------------------------------------------------------------- data


def _load(name: str) -> pd.DataFrame:
    if name == "sample":
        return ingest.load(SAMPLE_PAIRS).frame
    if not DATASETS.exists():
        pytest.skip(f"{DATASETS} not found: this case reads the real public data")
    if name == "pandalm":
        return ingest.load(PANDALM, preset="pandalm").frame
    return ingest.load(LLMBAR, preset="llmbar").frame


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


_CASES = {
    # name: (loader, shuffle options) ; position statistics need every row of a unit named one way
    "sample": (lambda: _load("sample"), None),
    "pandalm": (lambda: _load("pandalm"), None),
    "llmbar": (lambda: _load("llmbar"), None),
    "sample_shuffled": (lambda: _shuffled(_load("sample"), seed=11, per_row=False), None),
    "pandalm_shuffled": (lambda: _shuffled(_load("pandalm"), seed=12, per_row=False), None),
    "sample_rows_flipped": (lambda: _shuffled(_load("sample"), seed=13, per_row=True), "rows"),
    "pandalm_rows_flipped": (lambda: _shuffled(_load("pandalm"), seed=14, per_row=True), "rows"),
}
_WITH_PAIRS = [c for c in _CASES if not c.startswith("llmbar")]  # LLMBar names no systems
# Rows of one unit named both ways: the in-process path orients the unit by its first row, so the engine needs
# the rows' place in the file (row_number) there; elsewhere the majority rule gives the same orientation.
_POSITION = [(c, rows) for c, (_, kind) in _CASES.items() for rows in (False, True) if rows or kind != "rows"]
_BY = {"sample": ["subset"], "pandalm": ["task"], "llmbar": ["subset"]}


@pytest.fixture(scope="module")
def con():
    return ibis.duckdb.connect()


@pytest.fixture(scope="module")
def frames():
    return {}


def _case(name: str, frames: dict, con, tmp_path_factory) -> tuple[pd.DataFrame, object]:
    """The in-memory frame and the same table on DuckDB (shuffled copies go through a Parquet file)."""
    if name not in frames:
        frame = _CASES[name][0]()
        arrow = pa.Table.from_pandas(frame.drop(columns=[c for c in _DROP if c in frame.columns]),
                                     preserve_index=False)
        arrow = arrow.append_column("row_", pa.array(np.arange(len(frame))))  # the rows' place in the file
        if "shuffled" in name or "flipped" in name:
            import pyarrow.parquet as pq

            path = tmp_path_factory.mktemp("parquet") / f"{name}.parquet"
            pq.write_table(arrow, path)
            table = con.read_parquet(path, table_name=name)
        else:
            table = con.create_table(name, arrow)
        frames[name] = (frame, table)
    return frames[name]


def _by(name: str) -> list[str]:
    return _BY[name.split("_")[0]]


# --------------------------------------------------------------------------- (a) verdict patterns


def _reference_patterns(pair, labelled: bool):
    """Distinct (verdicts, label) rows of a PairData and their counts, as the Dawid-Skene fit compresses them."""
    h = pair.human if labelled else np.full(pair.n_items, -1, dtype=np.int8)
    rows = np.concatenate([pair.verdicts, h[:, None]], axis=1)
    pat, cnt = np.unique(rows[(rows >= 0).any(axis=1)], axis=0, return_counts=True)
    return pat[:, :-1], pat[:, -1], cnt


@pytest.mark.parametrize("name", _WITH_PAIRS)
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


@pytest.mark.parametrize("name", _WITH_PAIRS)
def test_pair_accuracy_counts_equal_accuracy_counts(name, frames, con, tmp_path_factory):
    frame, table = _case(name, frames, con, tmp_path_factory)
    got = sp.pair_accuracy_counts(table)
    rows = []
    for r in pairs(frame).itertuples():
        c = accuracy_counts(pair_data(frame, r.system_a, r.system_b))
        rows += [{"system_a": r.system_a, "system_b": r.system_b, "judge": j, "n0": c.n0[k], "s0": c.s0[k],
                  "n1": c.n1[k], "s1": c.s1[k]} for k, j in enumerate(c.judges)]
    ref = pd.DataFrame(rows).sort_values(["system_a", "system_b", "judge"], ignore_index=True)
    assert ref[["n0", "n1"]].to_numpy().sum() > 0
    pd.testing.assert_frame_equal(got.astype({k: float for k in ("n0", "s0", "n1", "s1")}).astype(
        {"system_a": str, "system_b": str, "judge": str}), ref.astype({"system_a": str, "system_b": str, "judge": str}))


# --------------------------------------------------------------------------- (c) judge accuracy


def _no_label(note: str) -> int:
    m = re.search(r"(\d+) item\(s\) without a strict human majority", str(note))
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("name", list(_CASES))
@pytest.mark.parametrize("grouped", [False, True])
def test_judge_accuracy_counts_equal_judge_accuracy(name, grouped, frames, con, tmp_path_factory):
    frame, table = _case(name, frames, con, tmp_path_factory)
    by = _by(name) if grouped else []
    got = sp.judge_accuracy_counts(table, by=by)
    keys = [*by, "judge"]
    got[by] = got[by].astype(str)
    for invalid in ("drop", "wrong"):
        ref = judge_accuracy(frame, by=by, invalid=invalid, n_boot=0)
        ref[by] = ref[by].astype(str)
        ref = ref.sort_values(keys, ignore_index=True)
        assert ref[keys].to_numpy().tolist() == got[keys].to_numpy().tolist()
        units = got["n_units"] + (got["n_invalid"] if invalid == "wrong" else 0)
        np.testing.assert_array_equal(units, ref["n_units"])
        np.testing.assert_array_equal(got["n_invalid"], ref["n_invalid"])
        np.testing.assert_array_equal(got["n_items" if invalid == "drop" else "n_items_wrong"], ref["n"])
        np.testing.assert_array_equal(got["n_no_label"], ref["note"].map(_no_label))
        est = np.where(units > 0, got["n_correct"] / units.where(units > 0, 1), np.nan)
        np.testing.assert_allclose(est, ref["estimate"], rtol=1e-13, equal_nan=True)
    assert got["n_correct"].sum() > 0
    one = got["judge"].iloc[-1]
    only = sp.judge_accuracy_counts(table, by=by, judges=[one])
    only[by] = only[by].astype(str)
    pd.testing.assert_frame_equal(only, got[got["judge"] == one].reset_index(drop=True))


# --------------------------------------------------------------------------- (b) position bias


def _reference_position(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The counts of position_counts, from each judge's units as evalcore.pairwise.position.judge_data sees them."""
    rows = []
    judges = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())
    for judge in judges:
        d = judge_data(frame, judge, by=by)
        for g, key in enumerate(d.keys):
            cell = d.group == g
            d0, d1, lab, item = d.verdicts[cell, 0], d.verdicts[cell, 1], d.label[cell], d.item[cell]
            gold, both = lab >= 0, (d0 >= 0) & (d1 >= 0)
            dec0, dec1 = np.isin(d0, [0, 1]), np.isin(d1, [0, 1])
            r = {"judge": judge, **dict(zip(by, key)), "n_units": int(cell.sum()),
                 "n_orig": gold & (d0 >= 0), "hit_orig": gold & (d0 == lab), "n_swap": gold & (d1 >= 0),
                 "hit_swap": gold & (d1 == lab), "n_both_gold": gold & both,
                 "hit_both": gold & (d0 == lab) & (d1 == lab), "n_both": both, "n_equal": both & (d0 == d1),
                 "n_first": int((d0 == 0).sum() + (d1 == 1).sum()), "n_decisive": int(dec0.sum() + dec1.sum())}
            for cls, c in (("a", 0), ("b", 1)):
                for o, dk in (("orig", d0), ("swap", d1)):
                    r[f"n_{cls}_{o}"], r[f"hit_{cls}_{o}"] = (lab == c) & (dk >= 0), (lab == c) & (dk == c)
            for cls, c in (("a", 0), ("b", 1), ("tie", 2)):
                r[f"n_cat_{cls}"] = int((both & (d0 == c)).sum() + (both & (d1 == c)).sum())
            masks = {"items_orig": gold & (d0 >= 0), "items_swap": gold & (d1 >= 0),
                     "items_either": gold & ((d0 >= 0) | (d1 >= 0)), "items_both_gold": gold & both,
                     "items_both": both, "items_decisive": dec0 | dec1}
            r.update({k: np.unique(item[m]).size for k, m in masks.items()})
            rows.append({k: int(v.sum()) if isinstance(v, np.ndarray) else v for k, v in r.items()})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("name", "by_row"), _POSITION)
@pytest.mark.parametrize("grouped", [False, True])
def test_position_counts_equal_judge_data(name, by_row, grouped, frames, con, tmp_path_factory):
    frame, table = _case(name, frames, con, tmp_path_factory)
    by = _by(name) if grouped else []
    got = sp.position_counts(table, by=by, row_number="row_" if by_row else None)
    ref = _reference_position(frame, by)
    for k in ["judge", *by]:
        got[k], ref[k] = got[k].astype(str), ref[k].astype(str)
    ref = ref.sort_values(["judge", *by], ignore_index=True)[list(got.columns)]
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)
    assert (got["n_units"] > 0).all() and got["n_orig"].sum() > 0
    if _CASES[name][1] == "rows":  # units named both ways: the majority rule orients some of them differently
        assert not sp.position_counts(table, by=by).equals(got)


@pytest.mark.parametrize("name", ["pandalm", "llmbar", "pandalm_shuffled"])
def test_position_measures_equal_position_report(name, frames, con, tmp_path_factory):
    """Judges without P('A') columns: position_report decides by the verdicts, so every estimate is from counts."""
    frame, table = _case(name, frames, con, tmp_path_factory)
    by = _by(name)
    got = sp.position_measures(sp.position_counts(table, by=by))
    ref = position_report(frame, by=by, methods=["none"], n_boot=0)
    ref = ref[ref["measure"].isin(got["measure"].unique())]
    keys = ["judge", *by, "measure"]
    for f in (got, ref):
        f[keys] = f[keys].astype(str)
    merged = got.merge(ref[[*keys, "estimate", "n"]], on=keys, suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(got) == len(ref) > 0
    np.testing.assert_allclose(merged["estimate"], merged["estimate_ref"], rtol=1e-12, atol=1e-15, equal_nan=True)
    np.testing.assert_array_equal(merged["n"], merged["n_ref"])
    assert merged.loc[merged["measure"] == "accuracy_original_order", "estimate"].notna().mean() > 0.5


def test_llmbar_position_reproduces_the_authors_statistics(frames, con, tmp_path_factory):
    """LLMBar's statistics.json (correct_False/True/both, equal) as counts straight from the engine."""
    import json

    _, table = _case("llmbar", frames, con, tmp_path_factory)
    got = sp.position_counts(table, by=["subset"]).set_index(["judge", "subset"])
    checked = 0
    for path in sorted(LLMBAR.glob("**/evaluators/*/*/statistics.json")):
        parts = path.relative_to(LLMBAR).parts
        at = parts.index("evaluators")
        row = got.loc[(f"{parts[at + 1]}/{parts[at + 2]}", "/".join(parts[:at]))]
        st = json.loads(path.read_text())
        for key, hit, n in (("correct_False", "hit_orig", "n_orig"), ("correct_True", "hit_swap", "n_swap"),
                            ("correct_both", "hit_both", "n_both_gold"), ("equal", "n_equal", "n_both")):
            a, b = map(int, re.match(r"\s*(\d+) / (\d+)", st[key]).groups())
            assert (row[hit], row[n]) == (a, b), (path, key)
            checked += 1
    assert checked == 80


# --------------------------------------------------------------------------- errors, and Spark


def test_missing_ibis_says_how_to_install(monkeypatch, frames, con, tmp_path_factory):
    _, table = _case("sample", frames, con, tmp_path_factory)
    monkeypatch.setitem(sys.modules, "ibis", None)  # import ibis now raises ImportError
    with pytest.raises(DataError, match=r"pip install 'evalcore\[engines\]'"):
        sp.judge_accuracy_counts(table)


def test_unknown_group_column_is_a_data_error(frames, con, tmp_path_factory):
    _, table = _case("sample", frames, con, tmp_path_factory)
    with pytest.raises(DataError, match="no such column"):
        sp.position_counts(table, by=["nope"])
    with pytest.raises(DataError, match="'system_a'"):
        sp.verdict_patterns(table.drop("system_a"))


def test_spark_gives_the_same_counts_as_duckdb(spark, tmp_path, frames, con, tmp_path_factory):
    """The same expressions on Spark (local[1], the session fixture of conftest.py: skipped without pyspark or
    Java unless EVALCORE_REQUIRE_SPARK=1), fed from Parquet: a nullable pandas column sent directly would
    come back NULL."""
    _, table = _case("sample", frames, con, tmp_path_factory)
    path = tmp_path / "sample.parquet"
    table.to_parquet(path)
    st = spark.read_parquet(path, table_name="pairwise_sample_cmp")
    pd.testing.assert_frame_equal(sp.pair_accuracy_counts(st), sp.pair_accuracy_counts(table), check_dtype=False)
    pd.testing.assert_frame_equal(sp.judge_accuracy_counts(st, by=["subset"]),
                                  sp.judge_accuracy_counts(table, by=["subset"]), check_dtype=False)
    pd.testing.assert_frame_equal(sp.position_counts(st, by=["subset"], row_number="row_"),
                                  sp.position_counts(table, by=["subset"], row_number="row_"), check_dtype=False)
    got, expect = sp.verdict_patterns(st), sp.verdict_patterns(table)
    assert len(got) == len(expect) > 0
    for a, b in zip(got, expect):
        assert (a.system_a, a.system_b, a.judges) == (b.system_a, b.system_b, b.judges)
        np.testing.assert_array_equal(np.column_stack([a.verdicts, a.human, a.counts]),
                                      np.column_stack([b.verdicts, b.human, b.counts]))
