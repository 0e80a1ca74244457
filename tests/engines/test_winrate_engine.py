"""``evalcore winrate --engine``: the verdict patterns counted by the engine feed the same BWRS and Dawid-Skene.

Both sides read the same Parquet file: in memory (``evalcore winrate FILE``) and on DuckDB
(``--engine duckdb``), through the CLI's JSON and through the functions
(:func:`evalcore.engines.pairwise.engine_pair_data` then :func:`evalcore.pairwise.winrate.estimate`). With all
labels (``ratio:1``) or none (``none``), the fits see the same pattern counts and the same seed, so the
records are identical, not only close. A shuffled copy (rows permuted, some items naming their pair the
other way round, split over two files) gives the same records on the engine, also for a partial ratio,
whose subset is drawn over the items in pattern order. Data: the sample comparisons and PandaLM.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.errors import DataError
from evalcore.pairwise import winrate as wr
from evalcore.pairwise.pairs import NotApplicable, pair_data, pair_from_patterns, pairs, select_judges
from tests.helpers import DATASETS, PANDALM, SAMPLE_PAIRS

pytest.importorskip("ibis", reason="ibis is the optional extra evalcore[engines]")
from evalcore.engines import pairwise as sp

_DROP = ("text_a", "text_b", "instruction", "input", "prob_a", "prob_a_swap_position", "prob_a_swap_id")
_DS = ["--chains", "2", "--draws", "200", "--seed", "3"]
_BWRS = ["--samples", "2000", "--seed", "5"]


def _json(argv: list[str]) -> list[dict]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(argv) == 0
    out = json.loads(buf.getvalue())
    for rec in out:
        rec.pop("seconds")
    return out


def _frame(name: str) -> pd.DataFrame:
    from evalcore.data import ingest

    if name == "sample":
        frame = ingest.load(SAMPLE_PAIRS).frame
    else:
        if not DATASETS.exists():
            pytest.skip(f"{DATASETS} not found: this case reads the real public data")
        frame = ingest.load(PANDALM, preset="pandalm").frame
    return frame.drop(columns=[c for c in _DROP if c in frame.columns])


def _flip_items(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Rows permuted, and the rows of a random 40% of the items naming their pair the other way round."""
    rng = np.random.default_rng(seed)
    items = frame["item_id"].unique()
    which = frame["item_id"].isin(items[rng.random(len(items)) < 0.4]).to_numpy()
    out = frame.copy()
    out.loc[which, ["system_a", "system_b"]] = out.loc[which, ["system_b", "system_a"]].to_numpy()
    win = out["winner"].copy()
    out.loc[which & (win == "a").fillna(False).to_numpy(), "winner"] = "b"
    out.loc[which & (win == "b").fillna(False).to_numpy(), "winner"] = "a"
    assert which.any()
    return out.iloc[rng.permutation(len(out))].reset_index(drop=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """name -> (frame, Parquet file, folder holding the shuffled copy in two files); built on first use."""
    made: dict = {}

    def get(name: str):
        if name not in made:
            frame = _frame(name)
            root = tmp_path_factory.mktemp(f"winrate-{name}")
            path = root / f"{name}.parquet"
            frame.to_parquet(path, index=False)
            shuffled = _flip_items(frame, seed=17)
            folder = root / "shuffled"
            (folder / "part").mkdir(parents=True)
            half = len(shuffled) // 2
            shuffled.iloc[:half].to_parquet(folder / "a.parquet", index=False)
            shuffled.iloc[half:].to_parquet(folder / "part" / "b.parquet", index=False)
            made[name] = (frame, path, folder)
        return made[name]

    return get


# --------------------------------------------------------------------------- the data the fits see


@pytest.mark.parametrize("name", ["sample", "pandalm"])
def test_engine_pair_data_has_the_in_memory_patterns(name, files, duck):
    """Every pair, oriented as pairs() orients it, with the same items, labels and verdict patterns."""
    from evalcore.engines.engine import read

    frame, path, _ = files(name)
    got = sp.engine_pair_data(read(duck, path))
    ref_pairs = pairs(frame)
    assert [(d.system_a, d.system_b) for d in got] == list(zip(ref_pairs["system_a"], ref_pairs["system_b"]))
    for d in got:
        ref = pair_data(frame, d.system_a, d.system_b)
        assert d.judges == ref.judges
        assert (d.n_items, d.n_human) == (ref.n_items, ref.n_human)
        assert d.k_observed == ref.k_observed and d.p_human == ref.p_human
        np.testing.assert_array_equal(d.judge_k(), ref.judge_k())
        for mine, theirs in ((d, ref), (d.flipped(), ref.flipped())):
            a = np.unique(np.column_stack([mine.verdicts, mine.human]), axis=0, return_counts=True)
            b = np.unique(np.column_stack([theirs.verdicts, theirs.human]), axis=0, return_counts=True)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])


def test_pair_from_patterns_expands_counts_and_adds_empty_items():
    d = pair_from_patterns("x", "y", ("j1", "j2"), np.array([[0, 1], [1, -1]]), np.array([0, -1]),
                           np.array([2, 3]), n_items=7)
    assert d.n_items == 7 and d.n_human == 2 and d.p_human == 1.0
    np.testing.assert_array_equal(d.verdicts[:, 0], [0, 0, 1, 1, 1, -1, -1])
    assert d.k_observed == pytest.approx(2 / 7)  # verdicts 0,1,0,1,1,1,1: two for x out of seven
    with pytest.raises(DataError, match="more than the pair's 4"):
        pair_from_patterns("x", "y", ("j1",), np.array([[0]]), np.array([0]), np.array([5]), n_items=4)
    assert select_judges(d, ["j2"]).verdicts.tolist() == [[1], [1], [-1], [-1], [-1], [-1], [-1]]
    with pytest.raises(NotApplicable, match="j3 did not judge x against y"):
        select_judges(d, ["j3"])


# --------------------------------------------------------------------------- the same estimates


@pytest.mark.parametrize("method, prior", [("bwrs", "ratio:1"), ("ds", "none"), ("ds", "ratio:1")])
def test_functions_give_the_in_memory_estimates(method, prior, files, duck):
    """estimate() on the engine's PairData equals estimate() on the rows, every field but the time."""
    from evalcore.engines.engine import read

    frame, path, _ = files("sample")
    kw = dict(method=method, prior=prior, seed=2, n_samples=2000, chains=2, draws=200, tune=200)
    data = sp.engine_pair_data(read(duck, path))
    for d in data[:2] if method == "ds" else data:
        got = wr.estimate(None, d.system_a, d.system_b, pair=d, **kw).to_record()
        ref = wr.estimate(frame, d.system_a, d.system_b, **kw).to_record()
        got.pop("seconds"), ref.pop("seconds")
        assert got == ref
        if prior == "ratio:1":
            assert got["n_human_labelled"] == d.n_human > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sample", "pandalm"])
@pytest.mark.parametrize("extra", [["--method", "bwrs", "--prior", "ratio:1", *_BWRS],
                                   ["--method", "ds", "--prior", "none", *_DS],
                                   ["--method", "ds", "--prior", "ratio:1", *_DS]],
                         ids=["bwrs-all-labels", "ds-no-labels", "ds-all-labels"])
def test_cli_engine_equals_in_memory(name, extra, files):
    frame, path, _ = files(name)
    if name == "pandalm" and extra[1] == "ds":
        first = pairs(frame).iloc[0]
        extra = [*extra, "--pair", first.system_b, first.system_a]  # one pair, named against its orientation
    mem = _json(["winrate", str(path), "--json", *extra])
    eng = _json(["winrate", str(path), "--engine", "duckdb", "--json", *extra])
    assert len(mem) == len(eng) > 0
    assert eng == mem


@pytest.mark.slow
def test_cli_engine_baseline_judge_and_ood_prior_equal_in_memory(files):
    _, path, _ = files("sample")
    for extra in (["--baseline", "atlas-7b", "--prior", "ood:cirrus-70b,borealis-13b"],
                  ["--judge", "gpt-4/pairwise", "--judge", "llama-2-70b/pairwise", "--prior", "ratio:1"]):
        argv = ["--method", "bwrs", *_BWRS, *extra, "--json"]
        mem = _json(["winrate", str(path), *argv])
        eng = _json(["winrate", str(path), "--engine", "duckdb", *argv])
        assert len(eng) == len(mem) > 1 and eng == mem


@pytest.mark.parametrize("name", ["sample", "pandalm"])
def test_shuffled_and_split_input_gives_the_same_records(name, files):
    """No row order reaches the estimates: a partial ratio too, whose subset is drawn over the pattern order."""
    _, path, folder = files(name)
    argv = ["--engine", "duckdb", "--method", "bwrs", "--prior", "ratio:0.5", *_BWRS, "--json"]
    one, other = _json(["winrate", str(path), *argv]), _json(["winrate", str(folder), *argv])
    assert len(one) > 0 and one == other
    mem = _json(["winrate", str(path), *argv[2:]])  # the same options in memory
    # the same number of labels in each pair (round(R * n)), drawn from another order of the items
    assert [r["n_human_labelled"] for r in one] == [r["n_human_labelled"] for r in mem]
    assert [r["p_human"] for r in one] == [r["p_human"] for r in mem]


@pytest.mark.parametrize("argv, message", [
    (["--ties", "random"], "--ties random needs the rows in memory"),
    (["--accuracy"], "--accuracy needs the rows in memory"),
    (["--pair", "cirrus-70b", "nobody"], "no comparisons of cirrus-70b against nobody"),
    (["--judge", "gpt-5", "--pair", "cirrus-70b", "atlas-7b"], "gpt-5 did not judge"),
    (["--method", "bwrs", "--prior", "none"], "footnote 4"),
    (["--prior", "ood:cirrus-70b,nobody"], "no comparisons of cirrus-70b against nobody"),
    (["--preset", "pandalm"], "--engine reads one ratings table"),
])
def test_cli_engine_refusals_get_one_line(argv, message, files, capsys):
    _, path, _ = files("sample")
    assert main(["winrate", str(path), "--engine", "duckdb", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.startswith("evalcore: error:") and err.count("\n") == 1


# --------------------------------------------------------------------------- Spark


@pytest.mark.spark
@pytest.mark.slow
def test_spark_gives_the_duckdb_pair_data_and_estimate(spark, duck, files):
    from evalcore.engines.engine import read

    _, path, _ = files("sample")
    on_spark, on_duck = sp.engine_pair_data(read(spark, path)), sp.engine_pair_data(read(duck, path))
    assert [(d.system_a, d.system_b, d.judges, d.n_items) for d in on_spark] == \
           [(d.system_a, d.system_b, d.judges, d.n_items) for d in on_duck]
    for s, d in zip(on_spark, on_duck):
        np.testing.assert_array_equal(np.column_stack([s.verdicts, s.human]), np.column_stack([d.verdicts, d.human]))
    s, d = on_spark[0], on_duck[0]
    kw = dict(method="bwrs", prior="ratio:0.5", seed=1, n_samples=2000)
    got = wr.estimate(None, s.system_a, s.system_b, pair=s, **kw).to_record()
    ref = wr.estimate(None, d.system_a, d.system_b, pair=d, **kw).to_record()
    got.pop("seconds"), ref.pop("seconds")
    assert got == ref
