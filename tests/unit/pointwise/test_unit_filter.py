"""The unit filter (``min_raters`` / ``max_raters``): agreement on the units with that many human ratings only.

Checked against krippendorff (alpha, three metrics) and statsmodels (Fleiss' kappa) computed on the kept
units alone, against ``agreement`` on a ratings table from which the other units were removed by hand,
and the units kept and dropped against a pandas count.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from evalcore.data.ingest import load
from evalcore.errors import DataError
from evalcore.pointwise.agreement.filter import filter_units
from evalcore.pointwise.agreement.table import agreement
from evalcore.pointwise.agreement.units import count_units
from tests.helpers import SAMPLE, needs_datasets, row
from tests.unit.hanna import hanna_frame

METRICS = ("nominal", "ordinal", "interval")


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return load(SAMPLE).frame


@pytest.fixture(scope="module")
def hanna() -> pd.DataFrame:
    return hanna_frame()


def _humans(df: pd.DataFrame) -> pd.DataFrame:
    """The humans' ratings, first sample of each (unit, rater) as count_units uses, with the unit's rating count."""
    h = df[df["rater_kind"] == "human"]
    if "sample" in h.columns:
        h = h[h["sample"] == h.groupby(["item_id", "criterion", "rater"])["sample"].transform("min")]
    h = h.drop_duplicates(["item_id", "criterion", "rater"])
    return h.assign(k=h.groupby(["item_id", "criterion"])["rater"].transform("size"))


def _kept(df: pd.DataFrame, lo: int | None, hi: int | None) -> pd.DataFrame:
    h = _humans(df)
    return h[(h["k"] >= (lo or 0)) & (h["k"] <= (hi if hi is not None else 10**9))]


def _reference_alpha(h: pd.DataFrame, metric: str) -> float:
    data = h.pivot_table(index="rater", columns="item_id", values="score", aggfunc="first")
    return float(krippendorff.alpha(reliability_data=data.to_numpy(dtype=float), level_of_measurement=metric))


@pytest.mark.parametrize("lo, hi", [(3, 3), (2, 2), (2, None), (None, 2)])
def test_alpha_and_fleiss_on_the_sample_match_the_packages_on_the_kept_units(sample, lo, hi):
    res = agreement(sample, by=["criterion"], n_boot=0, min_raters=lo, max_raters=hi)
    kept = _kept(sample, lo, hi)
    checked = 0
    for crit, h in kept.groupby("criterion"):
        if h["k"].max() < 2:
            continue  # no pairable unit: no humans' row
        for metric in METRICS:
            ours = row(res, f"krippendorff_alpha_{metric}", criterion=crit)["estimate"]
            assert ours == pytest.approx(_reference_alpha(h, metric), abs=1e-12)
            checked += 1
        if lo is not None and lo == hi:
            # Every kept unit has the same number of ratings: Fleiss (1971) exactly, as statsmodels computes it.
            wide = h.pivot_table(index="item_id", columns="rater", values="score", aggfunc="first")
            table, _ = aggregate_raters(np.sort(np.where(np.isnan(wide.to_numpy()), np.inf, wide.to_numpy()),
                                                axis=1)[:, :lo])
            assert row(res, "fleiss_kappa", criterion=crit)["estimate"] == pytest.approx(fleiss_kappa(table),
                                                                                          abs=1e-12)
    assert checked >= 3 * 5


def test_the_counts_kept_and_dropped_match_pandas(sample):
    units = count_units(sample)
    f = filter_units(units, min_raters=3, max_raters=3).unit_filter
    k = _humans(sample).drop_duplicates(["item_id", "criterion"])
    assert (f.kept, f.dropped) == (int((k["k"] == 3).sum()), int((k["k"] != 3).sum()))
    assert f.kept + f.dropped == int(units.has_human.sum())
    per = f.summary(["criterion"]).set_index("criterion")
    ref = k.groupby("criterion")["k"].agg(kept=lambda s: int((s == 3).sum()), dropped=lambda s: int((s != 3).sum()))
    assert per["units_kept"].to_dict() == ref["kept"].to_dict()
    assert per["units_dropped"].to_dict() == ref["dropped"].to_dict()
    assert list(f.summary().columns) == ["units_kept", "units_dropped"] and f.summary()["units_kept"].item() == f.kept
    res = agreement(units, by=["criterion"], n_boot=0, min_raters=3, max_raters=3)
    for crit, r in ref.iterrows():
        note = f"units with exactly 3 human rating(s): {r['kept']} unit(s) kept, {r['dropped']} dropped in this group"
        assert (res.loc[res["criterion"] == crit, "note"].str.contains(note, regex=False)).all()


def test_every_measure_equals_agreement_on_a_table_without_the_other_units(sample):
    """Humans' and judges' measures alike: filtering the units is filtering the ratings table by hand."""
    k = _humans(sample).groupby(["item_id", "criterion"])["rater"].size().rename("k").reset_index()
    cut = sample.merge(k, on=["item_id", "criterion"], how="left")
    cut = cut[cut["k"] == 3].drop(columns="k").reset_index(drop=True)
    cols = ["language", "criterion", "judge", "measure"]
    ours = agreement(sample, by=cols[:2], n_boot=0, min_raters=3, max_raters=3)
    ref = agreement(cut, by=cols[:2], n_boot=0)
    m = ours.merge(ref, on=cols, suffixes=("", "_ref"), validate="one_to_one")
    assert len(m) == len(ours) == len(ref)
    np.testing.assert_allclose(m["estimate"].astype(float), m["estimate_ref"].astype(float), rtol=0, atol=1e-12)
    for c in ("n", "n_units", "n_ratings"):
        assert (m[c] == m[f"{c}_ref"]).all(), c


def test_no_filter_changes_nothing_and_intervals_run(sample):
    units = count_units(sample)
    assert filter_units(units) is units
    base = agreement(units, n_boot=50, seed=3)
    assert base.equals(agreement(units, n_boot=50, seed=3, min_raters=None, max_raters=None))
    wide = agreement(units, n_boot=50, seed=3, min_raters=0)  # every unit kept: the same numbers, with a note
    pd.testing.assert_frame_equal(base.drop(columns="note"), wide.drop(columns="note"))
    assert wide["note"].str.contains("units with 0 or more human ratings").all()
    full = agreement(units, n_boot=50, seed=3, min_raters=3, max_raters=3)
    assert full["ci_low"].notna().any() and (full["n_units"] <= base["n_units"].max()).all()


@pytest.mark.parametrize("kw, words", [
    ({"min_raters": -1}, "0 or more"), ({"max_raters": 2.5}, "whole number"), ({"min_raters": True}, "whole number"),
    ({"min_raters": "3"}, "whole number"), ({"min_raters": 3, "max_raters": 2}, "larger than max_raters"),
    ({"min_raters": 4}, "no unit has 4 or more human ratings"),
])
def test_bad_bounds_and_no_unit_left_are_data_errors(sample, kw, words):
    with pytest.raises(DataError, match=words) as e:
        agreement(sample, n_boot=0, **kw)
    assert e.value.fix


@pytest.mark.slow
@needs_datasets
def test_hanna_fully_annotated_units_match_krippendorff(hanna):
    """HANNA: three annotators on every unit, so 3..3 keeps every unit and 4 or more keeps none."""
    units = count_units(hanna)
    full = filter_units(units, min_raters=3, max_raters=3)
    assert (full.unit_filter.kept, full.unit_filter.dropped) == (len(units.item), 0) == (6336, 0)
    res = agreement(full, by=["criterion"], judges=[], n_boot=0)
    base = agreement(units, by=["criterion"], judges=[], n_boot=0)
    h = _humans(hanna)
    for crit, g in h.groupby("criterion"):
        for metric in METRICS:
            ours = row(res, f"krippendorff_alpha_{metric}", criterion=crit)["estimate"]
            assert ours == pytest.approx(_reference_alpha(g, metric), abs=1e-12)
            assert ours == row(base, f"krippendorff_alpha_{metric}", criterion=crit)["estimate"]
        wide = g.pivot_table(index="item_id", columns="rater", values="score", aggfunc="first").to_numpy()
        table, _ = aggregate_raters(wide)
        assert row(res, "fleiss_kappa", criterion=crit)["estimate"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
    with pytest.raises(DataError, match="they have 3 to 3 human ratings"):
        filter_units(units, min_raters=4)
    with pytest.raises(DataError, match="at most 2"):
        agreement(units, max_raters=2, n_boot=0)
