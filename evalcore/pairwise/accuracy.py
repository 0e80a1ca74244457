"""Judge accuracy on pairwise comparisons: how often a judge's verdict is the humans' label.

Three classes, ``a``, ``b`` and ``tie``, as in the PandaLM test set (Wang et al. 2024): the
accuracy of a judge is the share of items on which its verdict equals the humans' label.

The humans' label is their **strict majority** over ``{a, b, tie}`` (:mod:`evalcore.labels`):
``(b, tie, tie)`` is a tie; an item where no verdict has more than half the annotators has no
label and is left out (counted in ``note``). A judge's verdict on an item combines its rows by
swap and sum (:func:`evalcore.pairwise.pairs.rater_verdicts`): both presentation orders voting
for A is A, one vote each is a tie.

Unparsed outputs (rows marked ``invalid``) are the question this function answers two ways
(``invalid``):

* ``"drop"`` (default): an item whose every row of the judge is unparsed has no verdict and is
  left out; ``n_invalid`` and ``note`` say how many.
* ``"wrong"``: an item with any unparsed row of the judge counts as a wrong verdict, as the PandaLM
  authors count GPT-3.5's unparseable outputs (one row per item) and LLMBar's ``evaluate.py`` counts
  ``correct_both`` (an item asked in both orders is right only if both outputs parsed and were right).
  On PandaLM's test set this gives GPT-3.5 697/999 = 69.8% (their figure), against 697/974 = 71.6%
  with ``"drop"``; PandaLM-7B, with no unparsed output, 667/999 = 66.8%.

The unit is an item, or an item and system pair when the table names the systems (two pairs
compared on one prompt are two units). Rows naming the pair in the other order have their
winner flipped, so that ``a`` always means the same output. The interval is a percentile
bootstrap over items (:mod:`evalcore.stats.bootstrap`), seeded per group and judge.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import COMPARISONS
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, resample_counts, root_seed
from ..stats.numeric import join_notes
from ..stats.results import ResultTable
from .pairs import INVALID, human_labels, invalid_mask, rater_verdicts, votes

__all__ = ["INVALID_HANDLING", "judge_accuracy"]

#: What :func:`judge_accuracy` does with an unparsed judge output.
INVALID_HANDLING = ("drop", "wrong")
_NEEDS = ("item_id", "rater", "rater_kind", "winner")


def _units(comparisons: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """Each row's unit and whether its winner flips; each unit's item code and ``by`` values."""
    item = comparisons["item_id"].astype(str).to_numpy()
    flip = np.zeros(len(item), dtype=bool)
    keys = [item]
    if {"system_a", "system_b"} <= set(comparisons.columns):
        sa = comparisons["system_a"].astype("string").fillna("").to_numpy(dtype=str)
        sb = comparisons["system_b"].astype("string").fillna("").to_numpy(dtype=str)
        flip = sa > sb
        keys += [np.where(flip, sb, sa), np.where(flip, sa, sb)]
    unit, _ = pd.factorize(pd.MultiIndex.from_arrays(keys)) if len(keys) > 1 else pd.factorize(item)
    first = np.unique(unit, return_index=True)[1]
    item_code = pd.factorize(item[first])[0]
    groups = comparisons.iloc[first][list(by)].reset_index(drop=True)
    return unit, flip, item_code, groups


def _check(comparisons: pd.DataFrame, invalid: str, by: Sequence[str]) -> None:
    missing = [c for c in _NEEDS if c not in comparisons.columns]
    if missing:
        raise DataError("judge accuracy needs a comparisons table, and this one has no "
                        + ", ".join(f"'{c}'" for c in missing) + " column",
                        fix="give a comparisons table (item_id, rater, rater_kind, winner)")
    if invalid not in INVALID_HANDLING:
        raise DataError(f"unknown handling of unparsed outputs '{invalid}'",
                        fix="use 'drop' (leave them out) or 'wrong' (count them as wrong verdicts)")
    unknown = [c for c in by if c not in comparisons.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(map(str, comparisons.columns[:12])))


def _cell(rng: np.random.Generator, item: np.ndarray, correct: np.ndarray, n_boot: int) -> np.ndarray:
    """Accuracy of the units with these items and correctness, then ``n_boot`` item-bootstrap replicates.

    Items are resampled with replacement; an item brings all its units. Items with the same number of
    units and of correct ones are exchangeable, so the draws are counted per such profile
    (:func:`evalcore.stats.bootstrap.resample_counts` with classes): memory does not grow with items.
    """
    items, code = np.unique(item, return_inverse=True)
    units = np.bincount(code, minlength=len(items)).astype(float)
    right = np.bincount(code, weights=correct.astype(float), minlength=len(items))
    profiles, cls = np.unique(np.column_stack([units, right]), axis=0, return_inverse=True)
    counts = resample_counts(rng, len(items), n_boot, classes=cls.ravel(), n_classes=len(profiles))
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = (counts @ profiles[:, 1]) / (counts @ profiles[:, 0])
    return np.concatenate([[right.sum() / units.sum()], boot])


def _group_codes(groups: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each unit's group (sorted by the ``by`` values, a missing value its own group) and the groups' keys."""
    if not by:
        return np.zeros(len(groups), dtype=np.int64), [()]
    code = groups.groupby(list(by), dropna=False, sort=True).ngroup().to_numpy()
    first = np.unique(code, return_index=True)[1]
    return code, [tuple(groups.iloc[i]) for i in first]


def _add_cell(table: ResultTable, extra: list[dict], keys: dict, rng: np.random.Generator, verdict: np.ndarray,
              label: np.ndarray, no_label: np.ndarray, item_code: np.ndarray, invalid: str, n_boot: int) -> None:
    """One row of the table: a judge's accuracy on the units of one group (``verdict`` -1: no row there)."""
    present = verdict >= 0
    labelled = present & (label >= 0)
    bad = labelled & (verdict == INVALID)
    used = labelled & ~bad if invalid == "drop" else labelled
    n_bad, n_none = int(bad.sum()), int((present & no_label).sum())
    notes = (f"{n_none} item(s) without a strict human majority left out" if n_none else "",
             (f"{n_bad} unparsed output(s) " + ("left out" if invalid == "drop" else "counted as wrong"))
             if n_bad else "")
    values = (_cell(rng, item_code[used], verdict[used] == label[used], n_boot) if used.any() else np.nan)
    table.add(keys, "accuracy", values, int(np.unique(item_code[used]).size), note=join_notes(*notes),
              undefined="not defined: no item has both a human label and a verdict of the judge")
    extra.append({"n_units": int(used.sum()), "n_invalid": n_bad})


@takes_table(COMPARISONS, "swapped")
def judge_accuracy(comparisons: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                   invalid: str = "drop", n_boot: int = 1000, seed: int | np.random.Generator = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Each judge's three-class accuracy (a / b / tie) against the humans' strict majority.

    Parameters
    ----------
    comparisons
        A canonical ``comparisons`` table (``item_id, rater, rater_kind, winner``; ``system_a``,
        ``system_b`` and ``invalid`` when present).
    invalid
        ``"drop"`` (default): an unparsed output is left out; ``"wrong"``: it is a wrong verdict.
    by
        Per-item columns to break the accuracy down by (``task``, ``subset``, ``language``...).
    judges
        The judges to report (default: every judge).
    n_boot, seed, level
        Item-bootstrap resamples (0: no interval), the seed of the per-cell streams (a whole number or a
        ``numpy.random.Generator``), the level.
    item, rater, kind, winner, system_a, system_b, swapped
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        One row per group and judge, measure ``accuracy``: the result-table columns
        (``*by, judge, measure, estimate, ci_low, ci_high, n, ..., note``; ``n`` counts items)
        with ``n_units`` (items and pairs scored) and ``n_invalid`` (labelled units whose every
        output of the judge is unparsed, left out; with ``"wrong"``, any output, counted as wrong) after ``n``.

    Examples
    --------
    >>> df = pd.DataFrame({"item_id": ["1"] * 4 + ["2"] * 4, "rater": ["h1", "h2", "h3", "j"] * 2,
    ...                    "rater_kind": ["human"] * 3 + ["judge"] + ["human"] * 3 + ["judge"],
    ...                    "winner": ["b", "tie", "tie", "tie", "a", "a", "b", None],
    ...                    "invalid": [False] * 7 + [True]})
    >>> res = judge_accuracy(df, invalid="wrong", n_boot=0)
    >>> res[["judge", "estimate", "n", "n_invalid"]].to_dict("records")
    [{'judge': 'j', 'estimate': 0.5, 'n': 2, 'n_invalid': 1}]
    >>> float(judge_accuracy(df, n_boot=0)["estimate"].iloc[0])  # the unparsed output left out
    1.0
    """
    by = [by] if isinstance(by, str) else list(by)
    _check(comparisons, invalid, by)
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    unit, flip, item_code, groups = _units(comparisons, by)
    rater, names = pd.factorize(comparisons["rater"].astype(str))
    is_judge = (comparisons["rater_kind"].astype(str) == "judge").to_numpy()
    vote, bad = votes(comparisons["winner"], flip), invalid_mask(comparisons)
    hm = ~is_judge
    label, seen = human_labels(len(item_code), unit[hm], rater[hm], vote[hm], bad[hm])
    u, r, verdict = rater_verdicts(unit[is_judge], rater[is_judge], vote[is_judge], bad[is_judge],
                                   any_invalid=invalid == "wrong")
    have = sorted(set(names[np.unique(rater[is_judge])]))
    if judges is not None:
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise DataError(f"{', '.join(unknown)} is not a judge in this table", fix="pick from: " + ", ".join(have))
    use = have if judges is None else list(dict.fromkeys(judges))
    per_judge = {}
    for name in use:
        per_unit = np.full(len(item_code), -1, dtype=np.int64)
        mine = names[r] == name
        per_unit[u[mine]] = verdict[mine]
        per_judge[name] = per_unit
    gcode, gkeys = _group_codes(groups, by)
    no_label = seen & (label < 0)
    table, extra = ResultTable([*by, "judge"], n_boot=n_boot, level=level), []
    for g, key in enumerate(gkeys):
        cell = gcode == g
        for name in use:
            if (per_judge[name][cell] >= 0).any():
                _add_cell(table, extra, {**dict(zip(by, key)), "judge": name}, cell_rng(root, (*key, name)),
                          per_judge[name][cell], label[cell], no_label[cell], item_code[cell], invalid, n_boot)
    out = table.frame()
    at = list(out.columns).index("n") + 1
    for i, col in enumerate(("n_units", "n_invalid")):
        out.insert(at + i, col, np.array([e[col] for e in extra], dtype=np.int64))
    return out
