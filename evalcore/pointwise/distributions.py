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
    keep = np.flatnonzero(cls != "")
    seg = units.segments.iloc[keep][by].reset_index(drop=True) if by else pd.DataFrame(index=range(len(keep)))
    # Integer codes throughout: group (in the sorted order of its values, as a sorted groupby), class, source and
    # category, summed by bincount. A long frame of every human count grouped by strings took 0.5 s on HANNA
    # (170 categories: the judges' averaged scores), on the Agreement page's path.
    group = seg.groupby(by, sort=True, dropna=False).ngroup().to_numpy() if by else np.zeros(len(keep), np.int64)
    n_groups = int(group.max()) + 1 if len(group) else 0
    cell = group * 3 + pd.Categorical(cls[keep], categories=list(CLASSES)).codes  # (group, class)
    q = len(units.values)
    n_cells = n_groups * 3
    units_in = np.bincount(cell, minlength=n_cells)
    counts = np.zeros((n_cells, q), dtype=np.int64)
    np.add.at(counts, cell, units.counts[keep])
    sources = sorted([HUMANS_LABEL, *chosen])  # the rows come sorted by source name, humans among them
    tables, present = {HUMANS_LABEL: counts}, {HUMANS_LABEL: units_in > 0}
    for name in chosen:
        jc = units.judge_codes[units.judges.index(name)][keep]
        has = jc >= 0
        tables[name] = np.bincount(cell[has] * q + jc[has], minlength=n_cells * q).reshape(n_cells, q)
        present[name] = np.bincount(cell[has], minlength=n_cells) > 0
    return _distribution_frame(units, seg, group, by, sources, tables, present, units_in)


def _distribution_frame(units: Units, seg: pd.DataFrame, group: np.ndarray, by: list[str], sources: list[str],
                        tables: dict[str, np.ndarray], present: dict[str, np.ndarray], units_in: np.ndarray
                        ) -> pd.DataFrame:
    """The rows of :func:`class_distribution`: each (group, source, class) present, in the order of its sorted
    keys, crossed with every category of its scale."""
    q = len(units.values)
    n_groups = len(units_in) // 3
    first = np.zeros(n_groups, dtype=np.int64)
    first[group[::-1]] = np.arange(len(group))[::-1]  # a unit of each group, for its key values
    keys = [(c, s) for g in range(n_groups) for s, name in enumerate(sources) for c in range(3 * g, 3 * g + 3)
            if present[name][c]]
    cell, src = (np.asarray(v, dtype=np.int64) for v in zip(*keys)) if keys else (np.zeros(0, np.int64),) * 2
    row_key, code = np.repeat(np.arange(len(cell)), q), np.tile(np.arange(q), len(cell))
    out = pd.DataFrame({c: seg[c].iloc[first[cell // 3][row_key]].reset_index(drop=True) for c in by})
    out["source"] = pd.Series(np.asarray(sources, dtype=object)[src][row_key], dtype="str")
    out["agreement_class"] = np.asarray(CLASSES, dtype=object)[cell % 3][row_key]
    out["code"] = code
    count = np.stack([tables[sources[s]][c] for s, c in zip(src, cell)]).ravel() if len(cell) else np.zeros(0)
    out["count"] = count.astype(int)
    out = _same_scale(out, units, by)
    row_key, code = row_key[out.index], code[out.index]
    out = out.reset_index(drop=True)
    tot = np.bincount(row_key, weights=out["count"].to_numpy(), minlength=len(cell))[row_key]
    out["share"] = np.where(tot > 0, out["count"].to_numpy() / np.where(tot > 0, tot, 1), np.nan)
    out["n_units"] = units_in[cell[row_key]].astype(np.int64)
    out["agreement_class"] = pd.Categorical(out["agreement_class"], categories=list(CLASSES), ordered=True)
    # Each row's category text (Units.label), computed once per criterion and category.
    if "criterion" in by:
        names, inv = np.unique(out["criterion"].astype(str).to_numpy(), return_inverse=True)
    else:  # pooled criteria: each category's own text
        names, inv = [None], np.zeros(len(out), dtype=np.int64)
    labels = np.asarray([[units.label(c, k) for k in range(q)] for c in names], dtype=object).reshape(len(names), q)
    at = list(out.columns).index("code")
    out.insert(at, "score", units.values[code])
    out.insert(at + 1, "category", pd.Series(labels[inv.ravel(), code] if len(out) else [], dtype="str"))
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
