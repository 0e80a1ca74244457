"""Tests of evalcore.data.codes.prefactorize: the text columns factorised on threads give what factorize gives."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.data.codes import data_of, factorize, memo_get, prefactorize, shared_codes
from evalcore.data.io import read_table


def _columns(tmp_path) -> pd.DataFrame:
    """A CSV read as evalcore reads it: ids in runs (sorted export), ids shuffled, few levels, missing cells."""
    rng = np.random.default_rng(3)
    n = 30_000
    ids = np.repeat([f"it{i:05d}" for i in range(n // 6)], 6)
    frame = pd.DataFrame({
        "item_id": ids,
        "shuffled": rng.permutation(ids),
        "language": rng.choice(["en", "de", "ja", ""], n),
        "rater": rng.choice([f"ann{i}" for i in range(7)], n),
    })
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    return read_table(path)


def test_the_memo_holds_what_factorize_computes_alone(tmp_path):
    df = _columns(tmp_path)
    alone = {}
    for c in df.columns:
        with shared_codes():
            alone[c] = factorize(df[c])
    with shared_codes():
        prefactorize([df[c] for c in df.columns])
        for c in df.columns:
            arr = data_of(df[c])
            hit = memo_get((arr, "codes", id(arr)))
            assert hit is not None, c  # computed ahead, not when asked
            codes, uniques = hit
            np.testing.assert_array_equal(codes, alone[c][0])
            pd.testing.assert_index_equal(uniques, alone[c][1])
    # the item ids come in runs: their codes come from the runs, as factorize's own
    assert alone["item_id"][0].dtype == np.int32


def test_outside_a_block_nothing_is_kept(tmp_path):
    df = _columns(tmp_path)
    prefactorize([df[c] for c in df.columns])  # no memo to fill: nothing happens, nothing fails
    with shared_codes():
        arr = data_of(df["rater"])
        assert memo_get((arr, "codes", id(arr))) is None
