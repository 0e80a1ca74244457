"""class_distribution's integer-code counting against a plain pandas computation of the same frame.

The reference below is the straightforward way (and the library's before it counted by integer codes): one row per
human count and per judge rating, grouped by strings, every category crossed in, shares by transform. Both must give
the same frame, dtypes and row order included, on the sample, on HANNA (170 categories from the judges' averaged
scores), on a table with a nominal criterion, and where no unit has two human ratings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.columns import HUMANS_LABEL
from evalcore.data.ingest import load_samples
from evalcore.data.scales import NOMINAL
from evalcore.pointwise.agreement.table import scale_by
from evalcore.pointwise.agreement.units import count_units
from evalcore.pointwise.distributions import CLASSES, agreement_class, class_distribution
from tests.helpers import HANNA
from tests.unit.hanna import hanna_frame
from tests.unit.pointwise.test_agreement_nominal import _mixed


def plain_class_distribution(units, *, by=(), judges=None) -> pd.DataFrame:
    """The same frame by pandas groupby and merges on a long table of strings."""
    by = scale_by(units, by)
    chosen = list(units.judges) if judges is None else list(judges)
    cls = agreement_class(units.counts)
    keep = cls != ""
    seg = units.segments.loc[keep, by].reset_index(drop=True) if by else pd.DataFrame(index=range(int(keep.sum())))
    seg["agreement_class"] = cls[keep]
    q = len(units.values)
    hum = pd.concat([seg] * q, ignore_index=True)
    hum["code"] = np.repeat(np.arange(q), len(seg))
    hum["count"] = units.counts[keep].T.ravel()
    hum["source"] = HUMANS_LABEL
    parts = [hum]
    for name in chosen:
        jc = units.judge_codes[units.judges.index(name)][keep]
        j = seg.loc[jc >= 0].copy()
        j["code"], j["count"], j["source"] = jc[jc >= 0], 1, name
        parts.append(j)
    long = pd.concat(parts, ignore_index=True)
    keys = [*by, "source", "agreement_class"]
    agg = long.groupby([*keys, "code"], sort=True, dropna=False)["count"].sum().reset_index()
    frames = agg[keys].drop_duplicates().merge(pd.DataFrame({"code": np.arange(q)}), how="cross")
    if units.nominal and "criterion" in by:
        label = np.isnan(units.values)[frames["code"].to_numpy()]
        nominal = frames["criterion"].map(lambda c: units.scale_of(str(c)) == NOMINAL).to_numpy(dtype=bool)
        frames = frames[label == nominal]
    out = frames.merge(agg, on=[*keys, "code"], how="left").fillna({"count": 0})
    out["count"] = out["count"].astype(int)
    tot = out.groupby(keys, dropna=False)["count"].transform("sum")
    out["share"] = np.where(tot > 0, out["count"] / tot.where(tot > 0, 1), np.nan)
    n_units = seg.groupby([*by, "agreement_class"], dropna=False).size().rename("n_units").reset_index()
    out = out.merge(n_units, on=[*by, "agreement_class"], how="left")
    out["agreement_class"] = pd.Categorical(out["agreement_class"], categories=list(CLASSES), ordered=True)
    out = out.sort_values([*keys, "code"]).reset_index(drop=True)
    crits = out["criterion"] if "criterion" in by else pd.Series(None, index=out.index, dtype=object)
    at = list(out.columns).index("code")
    out.insert(at, "score", units.values[out["code"].to_numpy()])
    out.insert(at + 1, "category", [units.label(c, k) for c, k in zip(crits, out["code"])])
    return out.drop(columns="code")


def _same(units, groupings) -> None:
    for by in groupings:
        for judges in (None, list(units.judges)[:1]):
            pd.testing.assert_frame_equal(class_distribution(units, by=by, judges=judges),
                                          plain_class_distribution(units, by=by, judges=judges))


def test_the_sample():
    _same(count_units(load_samples()["ratings"].frame),
          ([], ["criterion"], ["language"], ["language", "criterion"], ["criterion", "language"]))


@pytest.mark.slow
@pytest.mark.skipif(not HANNA.exists(), reason="../shared/datasets is absent: HANNA is needed")
def test_hanna():
    _same(count_units(hanna_frame()), ([], ["criterion"]))


def test_a_nominal_criterion_beside_numbers():
    _same(count_units(_mixed()), ([], ["criterion"]))


def test_no_unit_with_two_human_ratings():
    one = pd.DataFrame({"item_id": [1, 1, 2, 2], "rater": ["a", "bot", "a", "bot"],
                        "rater_kind": ["human", "judge", "human", "judge"], "criterion": "c", "score": [1, 2, 2, 2]})
    units = count_units(one)
    for by in ([], ["criterion"]):
        got, plain = class_distribution(units, by=by), plain_class_distribution(units, by=by)
        assert got.empty and plain.empty and list(got.columns) == list(plain.columns)
        assert str(got["category"].dtype) == "str"  # text, even with no rows (the plain way gave float64)
