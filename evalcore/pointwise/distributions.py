"""Score distributions: the judge's scores split by how much the humans agreed (Hada et al. 2024, Figs. 6-7).

Each unit (an item on a criterion) with two or more human ratings falls in one agreement class:

- ``full``: every annotator gave the same score;
- ``partial``: some annotators agree, but not all (the largest score count is 2 or more, below n);
- ``none``: every annotator gave a different score.

For each class the judge's score distribution is shown next to the humans' own ratings of the
same units. A judge that gives the top score where humans disagree shows up as a large top
share in ``partial`` and ``none`` (Hada et al. report this for GPT-4 in lower-resource
languages).

The classes count agreeing labels, so they hold for categories too: on a nominal criterion
(:mod:`evalcore.data.scales`) the distributions are of its labels, exactly as written.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import HUMANS_LABEL, RATINGS
from ..errors import DataError
from ..data.scales import NOMINAL
from .agreement.table import scale_by
from .agreement.units import Units, count_units

CLASSES = ("full", "partial", "none")


def agreement_class(counts: np.ndarray) -> np.ndarray:
    """The agreement class of each unit from its human counts; '' for units with fewer than two ratings."""
    n = counts.sum(axis=1)
    top = counts.max(axis=1)
    out = np.where(top == n, "full", np.where(top >= 2, "partial", "none")).astype(object)
    out[n < 2] = ""
    return out


@takes_table(RATINGS)
def class_distribution(
    ratings: pd.DataFrame | Units,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Score distributions of the humans and of each judge, per group and human agreement class.

    Parameters
    ----------
    ratings
        A validated ratings table or its :func:`evalcore.pointwise.agreement.units.count_units` result.
    by
        Grouping columns (e.g. language and criterion); empty (the default) pools every unit, every
        criterion's scores side by side (a nominal criterion is never pooled with numbers: ``criterion``
        is then added).
    judges
        Judges to include (default: all).
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, source, agreement_class, score, category, count, share, n_units``: ``source`` is
        ``humans`` or a judge's name; ``score`` the number (NaN for a nominal label) and ``category`` its
        text (the label of a nominal or text criterion, :mod:`evalcore.data.scales`); ``share`` is the
        category's share within its (group, source, class); ``n_units`` the number of units in that
        (group, class). Every category of the scale appears, with a zero count where unused, in the
        criterion's order.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> dist = class_distribution(ratings, by=["criterion"], judges=["gpt-4/single-call"])
    >>> top = dist.query("criterion == 'LA' and score == 2")
    >>> print(top[["source", "agreement_class", "share", "n_units"]].round(2).to_string(index=False))
               source agreement_class  share  n_units
    gpt-4/single-call            full   0.94       79
    gpt-4/single-call         partial   0.74       34
    gpt-4/single-call            none   0.50        2
               humans            full   0.88       79
               humans         partial   0.34       34
               humans            none   0.33        2
    """
    units = ratings if isinstance(ratings, Units) else count_units(ratings)
    units.check_by(list(by))
    by = scale_by(units, by)
    chosen = list(units.judges) if judges is None else list(judges)
    bad = [j for j in chosen if j not in units.judges]
    if bad:
        raise DataError(f"there is no judge named '{bad[0]}'", fix="choose from: " + ", ".join(units.judges))
    cls = agreement_class(units.counts)
    keep = cls != ""
    seg = units.segments.loc[keep, by].reset_index(drop=True) if by else pd.DataFrame(index=range(int(keep.sum())))
    seg["agreement_class"] = cls[keep]
    q = len(units.values)
    parts = []
    # Humans: every human rating of the unit counts.
    counts = units.counts[keep]
    hum = pd.concat([seg] * q, ignore_index=True)
    hum["code"] = np.repeat(np.arange(q), len(seg))
    hum["count"] = counts.T.ravel()
    hum["source"] = HUMANS_LABEL
    parts.append(hum)
    for name in chosen:
        jc = units.judge_codes[units.judges.index(name)][keep]
        has = jc >= 0
        j = seg.loc[has].copy()
        j["code"] = jc[has]
        j["count"] = 1
        j["source"] = name
        parts.append(j)
    long = pd.concat(parts, ignore_index=True)
    keys = [*by, "source", "agreement_class"]
    agg = long.groupby([*keys, "code"], sort=True, dropna=False)["count"].sum().reset_index()
    # Every category of the scale appears, so that plots of different groups line up.
    frames = agg[keys].drop_duplicates().merge(pd.DataFrame({"code": np.arange(q)}), how="cross")
    frames = _same_scale(frames, units, by)
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


def _same_scale(frames: pd.DataFrame, units: Units, by: list[str]) -> pd.DataFrame:
    """Only the categories of each group's own kind: nominal labels on a nominal criterion, numbers on the others
    (with nominal criteria and a grouping by criterion; otherwise every category)."""
    if not units.nominal or "criterion" not in by:
        return frames
    label = np.isnan(units.values)[frames["code"].to_numpy()]
    nominal = frames["criterion"].map(lambda c: units.scale_of(str(c)) == NOMINAL).to_numpy(dtype=bool)
    return frames[label == nominal]


def top_score_share(dist: pd.DataFrame, *, by: Sequence[str] = ("language", "criterion")) -> pd.DataFrame:
    """Share of the top score of the scale per group, source and agreement class (from :func:`class_distribution`)."""
    by = list(by)
    top = dist.groupby(by, dropna=False)["score"].transform("max") if by else dist["score"].max()
    sub = dist[dist["score"] == top]
    return sub[[*by, "source", "agreement_class", "share", "n_units"]].rename(columns={"share": "top_share"}) \
        .reset_index(drop=True)
