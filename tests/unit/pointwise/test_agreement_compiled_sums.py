"""The measures' sums by category and gathers (numba's passes) against numpy's, to the last bit, on seeded
simulations and on HANNA's table (127 distinct averaged scores per judge: the sums by category take that path)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.pointwise.agreement import passes as P, table as T
from evalcore.pointwise.agreement.passes import NumpyPasses
from evalcore.pointwise.agreement.units import count_units
from tests.helpers import DATASETS
from tests.unit.hanna import hanna_frame


@pytest.mark.parametrize("seed", range(4))
def test_sums_and_gathers_equal_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    G, R, K, q = 3, 17, 50, 70
    W = rng.multinomial(200, np.full(K, 1 / K), size=(G, R)).astype(float) * rng.random((G, R, K))
    cat = rng.integers(-1, q, size=(G, K))
    weight = np.where(cat >= 0, rng.random((G, K)), 0.0)
    kernel = P.kernel()
    np.testing.assert_array_equal(kernel.cat_sums(W, cat, weight, q), NumpyPasses.cat_sums(W, cat, weight, q))
    m, out = rng.random((G, R, q)), rng.random((G, R, K))
    np.testing.assert_array_equal(kernel.take(m, cat, out.copy()), NumpyPasses.take(m, cat, out.copy()))


@pytest.mark.slow  # real data: the full suite runs it, --fast does not
@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not found: the HANNA check needs it")
def test_hannas_table_is_the_same_with_either_passes(monkeypatch):
    units = count_units(hanna_frame())
    out = {}
    for mode, threshold in (("compiled", 0), ("numpy", 10**12)):
        monkeypatch.setattr(P, "COMPILED_FROM", threshold)
        monkeypatch.setattr(P, "LOAD_FROM", 0)
        out[mode] = T.agreement(units, by=["criterion"], n_boot=40, seed=3)
    pd.testing.assert_frame_equal(out["compiled"], out["numpy"], check_exact=True)
