"""The Superficial quality page (and its report section): the measure at the slider's alpha, its reading, the
curve, where the slider opens, and the length-controlled win rates.

Pure functions of evalcore's tables and results (no Streamlit, no statistics of their own): the
pages call them so that they hold no pandas code.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..display import fmt_interval
from .common import group_label

__all__ = [
    "superficial_at", "superficial_shown", "superficial_reading", "superficial_curve", "opening_alpha",
    "length_controlled_view", "scoring_judges",
]


def superficial_at(table: pd.DataFrame, alpha: float, *, by: Sequence[str], measure: str,
                   flips: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per group at the slider's ``alpha``: raw and corrected measure with intervals, the change, and
    (pairwise) the verdicts that flipped. ``table`` is the page's curve (with its CV rows)."""
    rows = table[(table["measure"] == measure) & np.isclose(table["alpha"].astype(float), alpha)]
    raw = table[(table["measure"] == measure) & (table["alpha"].astype(float) == 0.0)]
    cv = table[table["measure"] == "alpha_cv"]
    keys = list(by)
    out = rows[keys + ["n", "estimate", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high"]].merge(
        raw[keys + ["estimate", "ci_low", "ci_high"]].rename(columns=lambda c: c if c in keys else f"raw_{c}"),
        on=keys, how="left") if keys else rows.assign(raw_estimate=raw["estimate"].iloc[0],
                                                      raw_ci_low=raw["ci_low"].iloc[0],
                                                      raw_ci_high=raw["ci_high"].iloc[0])
    out = out.merge(cv[keys + ["estimate"]].rename(columns={"estimate": "alpha_cv"}), on=keys, how="left") \
        if keys else out.assign(alpha_cv=cv["estimate"].iloc[0] if len(cv) else np.nan)
    if flips is not None:
        out = out.merge(flips[keys + ["right_to_wrong", "wrong_to_right"]], on=keys, how="left") if keys else \
            out.assign(right_to_wrong=flips["right_to_wrong"].iloc[0], wrong_to_right=flips["wrong_to_right"].iloc[0])
    return out.reset_index(drop=True)


def superficial_shown(at: pd.DataFrame, *, by: Sequence[str], label: str) -> pd.DataFrame:
    """:func:`superficial_at` as the page prints it: estimates with their intervals in the cells."""
    shown = at[list(by)].copy() if by else pd.DataFrame(index=at.index)
    shown["items"] = at["n"].astype(int)
    shown[f"raw {label}"] = [f"{e:.3f} {fmt_interval(lo, hi)}" for e, lo, hi in zip(at["raw_estimate"], at["raw_ci_low"],
                                                                              at["raw_ci_high"])]
    shown[f"{label} at alpha"] = [f"{e:.3f} {fmt_interval(lo, hi)}" for e, lo, hi in zip(at["estimate"], at["ci_low"],
                                                                                  at["ci_high"])]
    shown["change"] = [f"{e:+.3f} {fmt_interval(lo, hi, signed=True)}" for e, lo, hi in zip(at["change"], at["change_ci_low"],
                                                                            at["change_ci_high"])]
    if "right_to_wrong" in at:
        shown["right → wrong"] = at["right_to_wrong"].astype(int)
        shown["wrong → right"] = at["wrong_to_right"].astype(int)
    shown["cross-validated alpha"] = at["alpha_cv"].map(lambda v: "n/a" if v != v else f"{v:g}")
    return shown


def superficial_reading(at: pd.DataFrame, *, by: Sequence[str], alpha: float, label: str) -> str:
    """A plain-language reading: where subtracting superficial quality at ``alpha`` helps, costs or does neither.

    A change counts as help or cost only when its 95% interval excludes 0.
    """
    if float(alpha) == 0.0:
        cv = at["alpha_cv"].dropna() if "alpha_cv" in at else pd.Series(dtype=float)
        if len(cv) and (cv == 0).all():
            return ("Cross-validation picks alpha = 0" + (" in every group" if len(cv) > 1 else "") + ": subtracting "
                    "this superficial quality does not bring the judge closer to the humans on held-out items. At "
                    "alpha = 0 nothing is subtracted (the judge's own verdicts); move the slider to see what "
                    "subtracting would do.")
        return "At alpha = 0 nothing is subtracted: these are the judge's own verdicts. Move the slider to compare."
    if len(at) and at["change_ci_low"].isna().all():  # points first: no interval yet, so no call either way
        moves = ", ".join(f"{' / '.join(str(r[c]) for c in by) if by else 'all items'} {r['change']:+.3f}"
                          for _, r in at.head(6).iterrows())
        return (f"At alpha = {alpha:g} the {label} moves by {moves}" + (" ..." if len(at) > 6 else "") +
                ". Whether any change is clear waits for the 95% intervals, which are being computed.")
    helps, costs, neither = [], [], []
    for _, r in at.iterrows():
        name = " / ".join(str(r[c]) for c in by) if by else "all items"
        if r["change_ci_low"] > 0:
            helps.append(f"{name} by {r['change']:+.3f} (95% CI {r['change_ci_low']:+.3f} to {r['change_ci_high']:+.3f})")
        elif r["change_ci_high"] < 0:
            costs.append(f"{abs(r['change']):.3f} on {name} (95% CI {r['change_ci_low']:+.3f} to "
                         f"{r['change_ci_high']:+.3f})")
        else:
            neither.append(name)
    parts = []
    many = len(at) > 6  # name the groups only while the sentence stays readable
    if helps:
        parts.append(f"helps on {len(helps)} of {len(at)} groups" if many else "helps on " + "; and on ".join(helps))
    if costs:
        parts.append(f"costs on {len(costs)} of {len(at)} groups" if many else "costs " + "; and ".join(costs))
    if many:
        neither = [f"{len(neither)} of {len(at)} groups"] if neither else []
    text = f"Subtracting superficial quality at alpha = {alpha:g} " + (" and ".join(parts) if parts else
                                                                       "makes no clear difference anywhere")
    if neither and parts:
        text += f"; on {', '.join(neither)} the change's interval includes 0 (no clear difference)"
    return text + f" ({label}, compared with the raw judge on the same resamples)."


def superficial_curve(table: pd.DataFrame, *, by: Sequence[str], measure: str) -> tuple[pd.DataFrame, dict]:
    """The page's curve of ``measure`` with a ``group`` label column, and each group's cross-validated alpha."""
    curve = table[table["measure"] == measure]
    cv = table[table["measure"] == "alpha_cv"]
    return curve.assign(group=group_label(curve, by)), dict(zip(group_label(cv, by), cv["estimate"]))


def opening_alpha(cv: dict, grid: Sequence[float], *, default: float) -> float:
    """Where the alpha slider opens: the median of the groups' cross-validated alphas, on the slider's ``grid``
    (``default`` when no group has one); a median halfway between two grid points opens at the smaller alpha.

    >>> opening_alpha({"Natural": 0.3, "Adversarial": 0.62, "all": float("nan")}, [0.0, 0.25, 0.5, 0.75], default=0.5)
    0.5
    >>> opening_alpha({}, [0.0, 0.5, 1.0], default=0.5)
    0.5
    """
    vals = [float(v) for v in cv.values() if v == v]
    if not vals:
        return default
    mid = float(np.median(vals))
    return float(min(grid, key=lambda a: abs(a - mid)))


def length_controlled_view(lc: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per system pair: the raw, length-controlled (AlpacaEval's minimal GLM, the pair fitted on its own),
    subtracted (at the slider's ``alpha``) and humans' win rates of the first system, each with its interval printed
    in the cell."""
    keep = lc["alpha"].isna() | np.isclose(lc["alpha"].astype(float), alpha)
    rows = lc[keep]
    names = {"win_rate": "raw win rate", "lc_win_rate": "length-controlled (AlpacaEval)", "subtracted_win_rate":
             f"after subtracting Q (α = {alpha:g})", "human_win_rate": "humans"}
    cell = [f"{e:.3f} {fmt_interval(lo, hi)}" if e == e else "n/a" for e, lo, hi in
            zip(rows["estimate"], rows["ci_low"], rows["ci_high"])]
    wide = rows.assign(cell=cell).pivot_table(index=["system_a", "system_b", "n"], columns="measure", values="cell",
                                              aggfunc="first", sort=False)
    wide = wide[[m for m in names if m in wide.columns]].rename(columns=names).reset_index()
    return wide.rename(columns={"system_a": "system", "system_b": "against", "n": "items"})


def scoring_judges(comparisons: pd.DataFrame, judges: Sequence[str]) -> list[str]:
    """The ``judges`` that score both outputs (``score_a`` and ``score_b``) somewhere in ``comparisons``."""
    if not {"score_a", "score_b"} <= set(comparisons.columns):
        return []
    scored = set(comparisons.dropna(subset=["score_a", "score_b"])["rater"].astype(str))
    return [j for j in judges if j in scored]
