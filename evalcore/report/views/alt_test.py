"""The Alt-Test page (and its report section): the judges ranked, one judge's annotators, and the curve of the
winning rate against epsilon.

Pure functions of :func:`evalcore.pointwise.alt_test.alt_test`'s table (no Streamlit, no statistics of their
own): the page calls them so that it holds no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...pointwise.alt_test import ANNOTATOR_MEASURE, group_columns, winning_rate_curve
from ..display import fmt_interval, fmt_number
from .common import group_label

__all__ = ["EPSILON_GRID", "ranking", "annotator_rows", "curve", "group_names", "left_out"]

#: The epsilons the curve is drawn at: 0 to 0.5 (a judge that needs more than 0.5 is worse than an annotator on
#: most items) in steps of 0.005.
EPSILON_GRID = np.round(np.linspace(0.0, 0.5, 101), 3)


def group_names(table: pd.DataFrame) -> list[str]:
    """The table's groups as labels (``"criterion=TQ"``), in its order; ``[""]`` without ``by``."""
    by = group_columns(table)
    if not by:
        return [""]
    return list(dict.fromkeys(_labels(table, by)))


def _labels(table: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    if not by:
        return pd.Series("", index=table.index)
    return pd.Series([", ".join(f"{c}={v}" for c, v in zip(by, vals)) for vals in table[list(by)].astype(str)
                      .itertuples(index=False)], index=table.index)


def ranking(table: pd.DataFrame) -> pd.DataFrame:
    """One row per judge (and group), in the table's order (by advantage probability, best first): the verdict,
    how many annotators it beats, the winning rate, the advantage probability with its interval, the smallest
    epsilon at which it passes, and the items behind it.

    Examples
    --------
    >>> t = pd.DataFrame({"judge": "j", "measure": ["winning_rate", "advantage_probability", "min_passing_epsilon"],
    ...                   "estimate": [0.75, 0.771, 0.13], "ci_low": [np.nan, 0.72, np.nan],
    ...                   "ci_high": [np.nan, 0.81, np.nan], "n": 120, "n_annotators": 4, "passed": True,
    ...                   "epsilon": 0.2, "note": ""})
    >>> ranking(t).iloc[0].to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'judge': 'j', 'verdict': 'passes', 'annotators beaten': '3 of 4', 'winning rate': '0.750',
     'advantage probability': '0.771 [0.720, 0.810]', 'passes from epsilon': '0.130', 'items': 120}
    """
    by = group_columns(table)
    rows = []
    for _, grp in table.groupby(["judge", *by], sort=False, dropna=False):
        get = {m: r for m, r in zip(grp["measure"], grp.to_dict("records"))}
        wr, ap, me = (get.get(m) for m in ("winning_rate", "advantage_probability", "min_passing_epsilon"))
        if wr is None:
            continue
        tested = np.isfinite(wr["estimate"])
        m = int(wr["n_annotators"]) if tested else 0
        verdict = ("passes" if wr["passed"] else "fails") if tested else "not tested"
        rows.append({
            "judge": wr["judge"], **{c: wr[c] for c in by},
            "verdict": verdict,
            "annotators beaten": f"{int(round(wr['estimate'] * m))} of {m}" if tested else "",
            "winning rate": fmt_number(wr["estimate"]),
            "advantage probability": (f"{fmt_number(ap['estimate'])} {fmt_interval(ap['ci_low'], ap['ci_high'])}"
                                      if ap is not None and tested else ""),
            "passes from epsilon": fmt_number(me["estimate"]) if me is not None and tested else "",
            "items": int(wr["n"]) if wr["n"] == wr["n"] else 0,
        })
    return pd.DataFrame(rows)


def annotator_rows(table: pd.DataFrame, *, judge: str, group: str = "") -> pd.DataFrame:
    """One judge's per-annotator test in one group (``group`` as :func:`group_names` names it): the annotator,
    the units it was tested on, the judge's and the annotator's win shares, the one-sided p-value and whether
    Benjamini-Yekutieli rejected it (the judge wins against that annotator)."""
    rows = table[(table["measure"] == ANNOTATOR_MEASURE) & (table["judge"] == judge)]
    rows = rows[_labels(rows, group_columns(table)).to_numpy() == group]
    out = pd.DataFrame({
        "annotator": rows["annotator"].astype(str),
        "units": rows["n_units"],
        "judge's win share": rows["judge_win_share"].round(3),
        "annotator's win share": rows["annotator_win_share"].round(3),
        "p-value": rows["p_value"].map(lambda v: f"{v:.2g}" if v == v else "n/a"),
        "judge wins (rejected)": rows["rejected"],
        "note": rows["note"].fillna(""),
    })
    if not out["note"].str.len().any():
        out = out.drop(columns="note")
    return out.reset_index(drop=True)


def curve(table: pd.DataFrame, *, q: float) -> pd.DataFrame:
    """The winning rate of each judge (per group) at every epsilon of :data:`EPSILON_GRID`, with a ``label``
    naming the judge and its group (for a figure's legend)."""
    out = winning_rate_curve(table, EPSILON_GRID, q=q)
    group = group_label(out, group_columns(table))
    return out.assign(label=out["judge"].astype(str) + np.where(group != "", " · " + group, ""))


def left_out(table: pd.DataFrame) -> list[str]:
    """What the test left out, once each: the notes' parts about items and annotators below the thresholds.

    >>> left_out(pd.DataFrame({"note": ["3 of 4 annotators rejected; 12 item(s) with fewer than 2 annotators "
    ...                                 "left out", "12 item(s) with fewer than 2 annotators left out"]}))
    ['12 item(s) with fewer than 2 annotators left out']
    """
    parts = (p.strip() for note in table["note"].dropna() for p in str(note).split(";"))
    return list(dict.fromkeys(p for p in parts if "left out" in p))
