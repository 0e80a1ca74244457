"""The alternative annotator test (Alt-Test): can this judge replace the human annotators?

Calderon, Reichart & Dror 2025, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs" (ACL 2025), computed as the authors' notebook
(``alt_test_example.ipynb``) computes it:

1. **Leave one annotator out, in turn.** On each item :math:`i` that the excluded annotator :math:`h` rated,
   that at least ``min_annotators`` annotators rated and that the judge :math:`f` rated, :math:`h` and the
   judge are scored against the remaining annotators :math:`R_i = H_i \\setminus \\{h\\}`:

   * ``accuracy`` (nominal labels): :math:`S(x) = \\frac{1}{|R_i|}\\sum_{a \\in R_i} 1[x = x_a]`;
   * ``neg_rmse`` (numbers): :math:`S(x) = -\\sqrt{\\frac{1}{|R_i|}\\sum_{a \\in R_i} (x - x_a)^2}`.

2. :math:`W^f_i = 1[S(f_i) \\ge S(h_i)]` and :math:`W^h_i = 1[S(h_i) \\ge S(f_i)]`: a tie counts for both.
3. **Per annotator** with at least ``min_items`` such items, a one-sided one-sample t-test of
   :math:`d_i = W^h_i - W^f_i` against :math:`\\varepsilon` (:math:`H_0: E[d] \\ge \\varepsilon`,
   :math:`H_1: E[d] < \\varepsilon`; ``scipy.stats.ttest_1samp``, ``alternative="less"``).
4. **Across annotators**, Benjamini-Yekutieli at false discovery rate ``q`` (Benjamini & Yekutieli 2001;
   ``scipy.stats.false_discovery_control(method="by")``): the judge "wins" against the annotators whose null
   is rejected.
5. The **winning rate** :math:`\\omega` is the share of tested annotators rejected; the judge **passes** when
   :math:`\\omega \\ge 0.5`. The **advantage probability** :math:`\\rho = \\frac{1}{m}\\sum_h
   \\overline{W^f}_h`, the mean over the m tested annotators of the judge's win share, ranks judges (higher is
   better); its interval is the percentile interval of the item bootstrap (:mod:`evalcore.stats.bootstrap`).

:math:`\\varepsilon` prices the judge's lower cost: the paper suggests 0.2 when the annotators are experts,
0.15 for skilled annotators and 0.1 for crowd workers (:data:`EPSILON_GUIDANCE`).

**The smallest passing** :math:`\\varepsilon` (measure ``min_passing_epsilon``) is exact, not read off a grid.
Each annotator's p-value falls as :math:`\\varepsilon` grows: :math:`p_h \\le \\alpha` exactly when
:math:`\\varepsilon \\ge e_h(\\alpha) = \\bar d_h - se_h\\, t^{-1}_{n_h-1}(\\alpha)`. BY rejects at least
:math:`k` annotators when some :math:`i \\ge k` has :math:`\\#\\{h: p_h \\le \\alpha_i\\} \\ge i`, with
:math:`\\alpha_i = i q / (m H_m)`; so the judge passes from
:math:`\\varepsilon^* = \\min_{i \\ge \\lceil m/2 \\rceil} e_{(i)}(\\alpha_i)`, the i-th smallest of the
:math:`e_h(\\alpha_i)`. :func:`winning_rate_curve` gives :math:`\\omega` at any :math:`\\varepsilon` the same way.

Units. The unit of the test is an item on one criterion. With several criteria in a group (``criterion`` not
in ``by``), the units of all of them are pooled, and they must be scored the same way: ``scoring="auto"``
with nominal and numeric criteria in one group is refused (group by criterion, or choose the scoring). Items
are what the bootstrap resamples (an item carries all its criteria) and what ``n`` counts; ``n_units`` counts
the units. A rater with several samples of an item (``sample``) counts with the first, as in agreement.

Scores are summed over the remaining annotators in the order the annotators first appear in the table,
as the notebook sums them, so that ties come out the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import HUMAN, JUDGE, RATINGS
from ..data.scales import NOMINAL, category_of, scale_by_criterion
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, percentile_interval, resample_blocks, root_seed
from ..stats.numeric import join_notes

__all__ = ["ALT_TEST_COLUMNS", "ANNOTATOR_MEASURE", "EPSILON_GUIDANCE", "MEASURES", "PASS_SHARE", "SCORINGS",
           "alt_test", "alt_test_verdicts", "group_columns", "min_passing_epsilon", "winning_rate_curve"]

#: How a judge and an annotator are scored against the remaining annotators.
SCORINGS = ("auto", "accuracy", "neg_rmse")
#: The paper's suggested epsilon by who the annotators are.
EPSILON_GUIDANCE = (("experts", 0.2), ("skilled annotators", 0.15), ("crowd workers", 0.1))
#: The judge-level measures, in output order.
MEASURES = ("winning_rate", "advantage_probability", "min_passing_epsilon")
#: The measure of the per-annotator rows (``annotators=True``): mean of W^h - W^f, the tested quantity.
ANNOTATOR_MEASURE = "annotator_advantage"
#: The judge passes when it wins against at least this share of the annotators.
PASS_SHARE = 0.5
#: The columns after ``judge, *by``.
ALT_TEST_COLUMNS = ("measure", "estimate", "ci_low", "ci_high", "n", "n_units", "n_annotators", "passed", "epsilon",
                    "scoring", "annotator", "judge_win_share", "annotator_win_share", "std_error", "p_value",
                    "rejected", "note")
_NEEDS = ("item_id", "rater", "rater_kind", "score")


# --------------------------------------------------------------------------- options and data


def _check_options(epsilon, scoring, q, min_annotators, min_items) -> None:
    guide = ", ".join(f"{v:g} for {who}" for who, v in EPSILON_GUIDANCE)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.number)) or not 0 <= epsilon <= 1:
        raise DataError(f"epsilon must be a number from 0 to 1, not {epsilon!r}", fix=f"the paper suggests {guide}")
    if scoring not in SCORINGS:
        raise DataError(f"unknown scoring {scoring!r}", fix="use 'auto' (accuracy on nominal criteria, neg_rmse on "
                                                             "numbers), 'accuracy' or 'neg_rmse'")
    if isinstance(q, bool) or not isinstance(q, (int, float, np.number)) or not 0 < q < 1:
        raise DataError(f"the false discovery rate q must be between 0 and 1, not {q!r}", fix="use e.g. 0.05")
    for name, value in (("min_annotators", min_annotators), ("min_items", min_items)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
            raise DataError(f"{name} must be a whole number, 2 or more, not {value!r}",
                            fix="the Alt-Test scores against at least one other annotator and needs two items "
                                "for a t-test; the paper uses min_annotators=2 and min_items=30")


def _prepare(ratings: pd.DataFrame, by: list[str], judges) -> tuple[pd.DataFrame, list[str]]:
    """The rows the test reads (the first sample of each rating) and the judges to test."""
    missing = [c for c in _NEEDS if c not in ratings.columns]
    if missing:
        raise DataError("the Alt-Test needs a ratings table, and this one has no "
                        + ", ".join(f"'{c}'" for c in missing) + " column",
                        fix="give a ratings table (item_id, rater, rater_kind, criterion, score)")
    unknown = [c for c in by if c not in ratings.columns and c != "criterion"]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(map(str, ratings.columns[:12])))
    df = ratings if "criterion" in ratings.columns else ratings.assign(criterion="overall")
    if "sample" in df.columns and df["sample"].nunique() > 1:  # the first sample, as agreement uses
        first = df.groupby(["item_id", "criterion", "rater"], sort=False)["sample"].transform("min")
        df = df[df["sample"] == first]
    df = df.drop_duplicates(["item_id", "criterion", "rater"], keep="first")
    kind = df["rater_kind"].astype(str)
    have = [str(r) for r in pd.unique(df.loc[kind == JUDGE, "rater"].astype(str))]
    if not have:
        raise DataError("the Alt-Test compares a judge with the annotators, and the table has no judge's ratings",
                        fix="give the judge's rows rater_kind 'judge' (CLI: --judge-rater NAME; app: the judge picker)")
    if judges is None:
        return df, have
    judges = [judges] if isinstance(judges, str) else list(dict.fromkeys(map(str, judges)))
    unknown = [j for j in judges if j not in have]
    if unknown:
        raise DataError(f"{', '.join(unknown)} is not a judge in this table", fix="pick from: " + ", ".join(have))
    return df, judges


def _scoring_by_criterion(df: pd.DataFrame, scoring: str) -> dict[str, str]:
    """The scoring of each criterion: ``auto`` is accuracy on nominal criteria and neg_rmse on the others."""
    scales = scale_by_criterion(df)
    out = {c: ("accuracy" if s == NOMINAL else "neg_rmse") if scoring == "auto" else scoring
           for c, s in scales.items()}
    if scoring == "neg_rmse":
        nominal = [c for c, s in scales.items() if s == NOMINAL]
        if nominal:
            raise DataError(f"neg_rmse needs numbers with distances, and criterion '{nominal[0]}' is nominal "
                            "(categories)", fix="use scoring 'accuracy' (or 'auto') for categories")
    return out


def _values(df: pd.DataFrame, scoring: dict[str, str]) -> np.ndarray:
    """Each row's label as a number: the category's code on accuracy criteria, the score on neg_rmse ones."""
    score = df["score"]
    if not (pd.api.types.is_numeric_dtype(score) or score.isna().all()):
        num = pd.to_numeric(score, errors="coerce")
        text = score[num.isna() & score.notna()].astype(str).unique()[:3]
        raise DataError("mixed labels: the score column holds text (" + ", ".join(f"'{t}'" for t in text)
                        + ") beside numbers or in place of them", column="score",
                        fix="load the file through evalcore (evalcore.read in Python), which keeps text labels as "
                            "categories in a 'category' column with scale 'nominal'; or recode every label as a number")
    crit = df["criterion"].astype(str)
    accuracy = crit.map(scoring).eq("accuracy").to_numpy()
    out = score.to_numpy(dtype=float, na_value=np.nan).copy()
    if accuracy.any():
        labels = category_of(df)[accuracy]
        code, _ = pd.factorize(labels, use_na_sentinel=True)
        out[accuracy] = np.where(code >= 0, code, np.nan)
    return out


# --------------------------------------------------------------------------- cells


@dataclass
class _Cell:
    """One group: its units (an item on one criterion), the annotators' ratings and each judge's label."""

    keys: tuple
    scoring: str
    n_crit: int
    unit_item: np.ndarray  # each unit's item (0..n_items-1)
    n_items: int
    unit: np.ndarray  # per human rating, sorted by unit then annotator
    rater: np.ndarray  # per human rating: its annotator (0..; in table order)
    value: np.ndarray  # per human rating
    names: list[str]  # the annotators of the cell, in table order
    judge_value: dict[str, np.ndarray]  # per judge: its label per unit (NaN: none)


def _group_codes(units: pd.DataFrame, by: list[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each unit's group (sorted by the ``by`` values) and the groups' keys."""
    if not by:
        return np.zeros(len(units), dtype=np.int64), [()]
    code = units.groupby(by, dropna=False, sort=True).ngroup().to_numpy()
    first = np.unique(code, return_index=True)[1]
    return code, [tuple(units.iloc[i]) for i in first]


def _cells(df: pd.DataFrame, value: np.ndarray, by: list[str], judges: list[str],
           scoring: dict[str, str]) -> list[_Cell]:
    """The groups of the table, each with its units, ratings and judges' labels."""
    item, _ = pd.factorize(df["item_id"].astype(str))
    crit, cnames = pd.factorize(df["criterion"].astype(str))
    unit, _ = pd.factorize(item.astype(np.int64) * max(len(cnames), 1) + crit)  # a unit: an item on one criterion
    first = np.unique(unit, return_index=True)[1]
    gcode, gkeys = _group_codes(df.iloc[first][by].reset_index(drop=True), by)
    rater, rnames = pd.factorize(df["rater"].astype(str))
    human = (df["rater_kind"].astype(str) == HUMAN).to_numpy() & np.isfinite(value)
    row_group = gcode[unit]
    cells = []
    for g, key in enumerate(gkeys):
        units = np.flatnonzero(gcode == g)
        crits = [str(cnames[c]) for c in np.unique(crit[first[units]])]
        kinds = sorted({scoring[c] for c in crits})
        if len(kinds) > 1:
            where = f" in group {dict(zip(by, key))}" if by else ""
            raise DataError(f"the criteria{where} are scored differently ({', '.join(crits[:6])}: nominal ones by "
                            "accuracy, numeric ones by neg_rmse), and the Alt-Test pools a group's units",
                            fix="test each criterion separately ('Test separately by' in the app, by=['criterion'] in "
                                "Python) (CLI: --by criterion), or choose one scoring")
        local = np.full(len(first), -1, dtype=np.int64)
        local[units] = np.arange(len(units))
        uitem, _ = pd.factorize(item[first[units]])
        rows = np.flatnonzero((row_group == g) & human)
        rows = rows[np.lexsort((rater[rows], local[unit[rows]]))]
        present, r_local = np.unique(rater[rows], return_inverse=True)
        jv = {}
        for j in judges:
            jrows = np.flatnonzero((row_group == g) & (rater == rnames.get_loc(j)))
            per_unit = np.full(len(units), np.nan)
            per_unit[local[unit[jrows]]] = value[jrows]
            jv[j] = per_unit
        cells.append(_Cell(key, kinds[0], len(crits), uitem, int(uitem.max()) + 1 if len(uitem) else 0,
                           local[unit[rows]], r_local.ravel(), value[rows], [str(rnames[p]) for p in present], jv))
    return cells


# --------------------------------------------------------------------------- the test


def _pairs(unit: np.ndarray, n_units: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ordered pair (rating, another rating of the same unit), grouped by the first, the second in
    annotator order; and each unit's number of annotators."""
    n_u = np.bincount(unit, minlength=n_units)
    start = np.concatenate([[0], np.cumsum(n_u)[:-1]])
    reps = n_u[unit]
    left = np.repeat(np.arange(len(unit)), reps)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(reps) - reps, reps)
    right = start[unit][left] + offset
    keep = left != right
    return left[keep], right[keep], n_u


def _score(left: np.ndarray, right: np.ndarray, mine: np.ndarray, value: np.ndarray, rest: np.ndarray,
           scoring: str) -> np.ndarray:
    """Each rating's S(x) against the remaining annotators, where ``mine`` is x repeated along the pairs."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if scoring == "accuracy":
            return np.bincount(left, weights=(mine == value[right]).astype(float), minlength=len(rest)) / rest
        # bincount adds in array order: the remaining annotators in table order, as the notebook's mean does
        return -np.sqrt(np.bincount(left, weights=(mine - value[right]) ** 2, minlength=len(rest)) / rest)


@dataclass
class _Judged:
    """One judge in one cell: per annotator the test, and what the bootstrap of rho needs."""

    counts: np.ndarray  # items (units) each annotator has
    tested: np.ndarray  # annotators with at least min_items
    items: np.ndarray  # per annotator: distinct items
    wf: np.ndarray  # per annotator: mean W^f
    wh: np.ndarray  # per annotator: mean W^h
    mean: np.ndarray  # per annotator: mean of d = W^h - W^f
    se: np.ndarray  # per annotator: standard error of the mean of d
    p: np.ndarray
    rejected: np.ndarray
    boot_item: np.ndarray  # per tested rating: its item, annotator (among the tested) and W^f
    boot_rater: np.ndarray
    boot_wf: np.ndarray
    n_items: int
    n_units: int
    n_few: int  # units the judge rated with fewer than min_annotators annotators
    n_unrated: int  # units with enough annotators the judge did not rate


def _judge(cell: _Cell, judge: str, s_h: np.ndarray, left, right, n_u, rest, *, epsilon: float, q: float,
           min_annotators: int, min_items: int) -> _Judged:
    """The test of one judge in one cell: W^f and W^h on every kept rating, the t-test per annotator, BY."""
    import warnings

    from scipy.stats import false_discovery_control, ttest_1samp

    jv = cell.judge_value[judge]
    s_f = _score(left, right, jv[cell.unit][left], cell.value, rest, cell.scoring)
    keep = (n_u[cell.unit] >= min_annotators) & np.isfinite(jv[cell.unit])
    wf = (s_f >= s_h).astype(float)  # a tie counts for both
    wh = (s_h >= s_f).astype(float)
    A = len(cell.names)
    counts = np.bincount(cell.rater[keep], minlength=A)
    tested = counts >= min_items
    stats = np.full((5, A), np.nan)
    items = np.zeros(A, dtype=np.int64)
    order = np.flatnonzero(keep)
    order = order[np.argsort(cell.rater[order], kind="stable")]
    for a, idx in enumerate(np.split(order, np.cumsum(counts)[:-1])):
        items[a] = np.unique(cell.unit_item[cell.unit[idx]]).size
        if not tested[a]:
            continue
        d = wh[idx] - wf[idx]
        sd = float(np.std(d, ddof=1))
        with warnings.catch_warnings():  # equal differences: p is 0, 1 or undefined, as the notebook's scipy gives
            warnings.simplefilter("ignore", RuntimeWarning)
            p_a = ttest_1samp(d, epsilon, alternative="less").pvalue
        stats[:, a] = (wf[idx].mean(), wh[idx].mean(), d.mean(), sd / math.sqrt(len(d)), p_a)
    p = stats[4]
    rejected = np.zeros(A, dtype=bool)
    if tested.any():
        # An undefined p (every d equal to epsilon) is never rejected, yet counts among the m tests, as in the
        # notebook; p = 1 does exactly that.
        adj = false_discovery_control(np.where(np.isfinite(p[tested]), p[tested], 1.0), method="by")
        rejected[tested] = adj <= q
    in_test = keep & tested[cell.rater]
    units_rated = np.isfinite(jv)
    n_few = int(((n_u > 0) & (n_u < min_annotators) & units_rated).sum())
    n_unrated = int(((n_u >= min_annotators) & ~units_rated).sum())
    used_units = np.unique(cell.unit[in_test])
    return _Judged(counts, tested, items, stats[0], stats[1], stats[2], stats[3], p, rejected,
                   cell.unit_item[cell.unit[in_test]], np.cumsum(tested)[cell.rater[in_test]] - 1,
                   wf[in_test], np.unique(cell.unit_item[used_units]).size, len(used_units), n_few, n_unrated)


def _e_matrix(mean, se, n, q: float) -> np.ndarray:
    """e[h, i]: the smallest epsilon at which annotator h's p-value is at most alpha_i = (i+1) q / (m H_m)."""
    from scipy.special import stdtrit

    mean, se, n = (np.asarray(v, dtype=float) for v in (mean, se, n))
    m = len(mean)
    alpha = np.arange(1, m + 1) * q / (m * np.sum(1.0 / np.arange(1, m + 1)))
    with np.errstate(invalid="ignore"):
        return mean[:, None] - se[:, None] * stdtrit(n[:, None] - 1, alpha[None, :])


def min_passing_epsilon(mean, se, n, *, q: float = 0.05) -> float:
    """The smallest epsilon at which the judge passes, from each tested annotator's t-test.

    :math:`\\varepsilon^* = \\min_{i \\ge \\lceil m/2 \\rceil} e_{(i)}(\\alpha_i)` with
    :math:`e_h(\\alpha) = \\bar d_h - se_h\\, t^{-1}_{n_h-1}(\\alpha)` and :math:`\\alpha_i = i q/(m H_m)`
    (see the module's docstring). At :math:`\\varepsilon^*` the p-value of the deciding annotator equals
    its threshold, so the judge passes there; an annotator whose differences are all equal (no spread) has
    :math:`e_h = \\bar d_h`, which is then an infimum: it passes just above.

    Parameters
    ----------
    mean, se, n
        Per tested annotator: the mean of :math:`d = W^h - W^f`, its standard error and the number of items.
    q
        The false discovery rate of the Benjamini-Yekutieli procedure.

    Returns
    -------
    float
        The smallest passing epsilon (NaN without annotators).

    Examples
    --------
    Four annotators; the judge passes once two of them are rejected:

    >>> eps = min_passing_epsilon([0.05, 0.1, 0.3, 0.4], [0.03, 0.03, 0.04, 0.04], [100] * 4)
    >>> round(eps, 4)
    0.1688
    """
    m = len(mean)
    if m == 0:
        return float("nan")
    srt = np.sort(_e_matrix(mean, se, n, q), axis=0)
    first = math.ceil(m * PASS_SHARE)
    return float(np.nanmin([srt[i - 1, i - 1] for i in range(max(first, 1), m + 1)]))


def _rho(cell: _Cell, judged: dict[str, _Judged], root: int, n_boot: int) -> dict[str, np.ndarray]:
    """rho and its ``n_boot`` item-bootstrap replicates per judge; the judges of a cell share the resamples."""
    from scipy import sparse

    out = {j: np.full(1 + n_boot, np.nan) for j in judged}
    for j, r in judged.items():
        if r.tested.any():
            out[j][0] = float(np.mean(r.wf[r.tested]))
    live = [j for j, r in judged.items() if r.tested.any()]
    if n_boot == 0 or not live:
        return out
    # num[b, a] / den[b, a]: annotator a's win share in resample b (its items weighted by their draws)
    offsets = np.cumsum([0] + [int(judged[j].tested.sum()) for j in live])
    col = np.concatenate([judged[j].boot_rater + o for j, o in zip(live, offsets)])
    row = np.concatenate([judged[j].boot_item for j in live])
    shape = (cell.n_items, int(offsets[-1]))
    num = sparse.csr_matrix((np.concatenate([judged[j].boot_wf for j in live]), (row, col)), shape=shape)
    den = sparse.csr_matrix((np.ones(len(row)), (row, col)), shape=shape)
    rng, done = cell_rng(root, ("alt_test", *cell.keys)), 0
    for counts in resample_blocks(rng, cell.n_items, n_boot, cells=4_000_000):
        top, bottom = (num.T @ counts.T).T, (den.T @ counts.T).T
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.asarray(top) / np.asarray(bottom)  # NaN: the annotator's items were not drawn
        for j, lo, hi in zip(live, offsets[:-1], offsets[1:]):
            part = share[:, lo:hi]
            fin = np.isfinite(part)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[j][1 + done:1 + done + len(counts)] = np.where(fin, part, 0).sum(1) / fin.sum(1)
        done += len(counts)
    return out


# --------------------------------------------------------------------------- rows


def _exclusions(cell: _Cell, r: _Judged, min_annotators: int, min_items: int) -> str:
    """What was left out of one judge's test in one cell, and why."""
    what = "unit(s) (item x criterion)" if cell.n_crit > 1 else "item(s)"
    few = [f"{cell.names[a]} ({int(r.counts[a])})" for a in np.flatnonzero(~r.tested)]
    return join_notes(
        f"{r.n_few} {what} with fewer than {min_annotators} annotators left out" if r.n_few else "",
        f"{r.n_unrated} {what} the judge did not rate left out" if r.n_unrated else "",
        (f"annotator(s) with fewer than {min_items} {what.split(' ')[0]} left out: " + ", ".join(few)) if few else "")


def _not_tested(cell: _Cell, r: _Judged | None, min_annotators: int, min_items: int) -> str:
    """Why a judge could not be tested in a cell."""
    if len(cell.names) < 2:
        return (f"not tested: the Alt-Test needs at least 2 annotators, and there {'is' if cell.names else 'are'} "
                f"{len(cell.names)}" + (f" ({cell.names[0]})" if cell.names else ""))
    counts = ", ".join(f"{n}: {int(c)}" for n, c in zip(cell.names, r.counts))
    return (f"not tested: no annotator has {min_items} items rated by at least {min_annotators} annotators and by "
            f"the judge ({counts}); lower min_items (--min-items) to test on fewer")


def _judge_rows(cell: _Cell, by: list[str], judge: str, r: _Judged | None, rho: np.ndarray, o: dict,
                annotators: bool) -> list[dict]:
    """The rows of one judge in one cell: the verdict's measures, then (``annotators``) one per annotator."""
    keys = {"judge": judge, **dict(zip(by, cell.keys))}
    base = {"epsilon": float(o["epsilon"]), "scoring": cell.scoring, "annotator": None, "judge_win_share": np.nan,
            "annotator_win_share": np.nan, "std_error": np.nan, "p_value": np.nan, "rejected": pd.NA}
    if r is None or not r.tested.any():
        note = _not_tested(cell, r, o["min_annotators"], o["min_items"])
        return [{**keys, **base, "measure": m, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
                 "n_units": 0, "n_annotators": 0, "passed": pd.NA, "note": note} for m in MEASURES]
    t = r.tested
    m = int(t.sum())
    omega = int(r.rejected.sum()) / m
    passed = omega >= PASS_SHARE
    lo, hi, sparse = percentile_interval(rho[None, 1:], o["level"])
    excl = _exclusions(cell, r, o["min_annotators"], o["min_items"])
    eps_star = min_passing_epsilon(r.mean[t], r.se[t], r.counts[t], q=o["q"])
    eps_note = "the judge passes at every epsilon from 0" if eps_star < 0 else \
        ("an annotator's differences do not vary: the judge passes just above this epsilon"
         if np.any(r.se[t] == 0) else "")
    common = {**keys, **base, "n": r.n_items, "n_units": r.n_units, "n_annotators": m, "passed": passed}
    rows = [
        {**common, "measure": "winning_rate", "estimate": omega, "ci_low": np.nan, "ci_high": np.nan,
         "note": join_notes(f"{int(r.rejected.sum())} of {m} annotators rejected (Benjamini-Yekutieli, "
                            f"q {o['q']:g}); no interval", excl)},
        {**common, "measure": "advantage_probability", "estimate": float(rho[0]), "ci_low": float(lo[0]),
         "ci_high": float(hi[0]), "note": join_notes(
             "no interval (n_boot=0)" if o["n_boot"] == 0 else
             ("no interval: the measure is undefined in most resamples" if sparse[0] else ""), excl)},
        {**common, "measure": "min_passing_epsilon", "estimate": max(eps_star, 0.0), "ci_low": np.nan,
         "ci_high": np.nan, "note": join_notes(eps_note, "no interval")},
    ]
    if annotators:
        rows += _annotator_rows(cell, r, common, o)
    return rows


def _annotator_rows(cell: _Cell, r: _Judged, common: dict, o: dict) -> list[dict]:
    """One row per annotator: the test of the judge against them (or why they were left out)."""
    from scipy.special import stdtrit

    rows = []
    for a, name in enumerate(cell.names):
        n = int(r.counts[a])
        row = {**common, "measure": ANNOTATOR_MEASURE, "annotator": name, "n": int(r.items[a]), "n_units": n}
        if not r.tested[a]:
            rows.append({**row, "estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                         "note": f"left out: {n} items, fewer than min_items={o['min_items']}"})
            continue
        half = float(r.se[a] * stdtrit(n - 1, (1 + o["level"]) / 2))  # the t interval of the mean difference
        rows.append({**row, "estimate": float(r.mean[a]), "ci_low": float(r.mean[a] - half),
                     "ci_high": float(r.mean[a] + half), "judge_win_share": float(r.wf[a]),
                     "annotator_win_share": float(r.wh[a]), "std_error": float(r.se[a]), "p_value": float(r.p[a]),
                     "rejected": bool(r.rejected[a]), "note": ""})
    return rows


def _frame(rows: list[dict], by: list[str]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=["judge", *by, *ALT_TEST_COLUMNS])
    for c in ("n", "n_units", "n_annotators"):
        out[c] = out[c].astype(np.int64)
    for c in ("passed", "rejected"):
        out[c] = out[c].astype("boolean")
    out["annotator"] = out["annotator"].astype(object).where(out["annotator"].notna(), None)
    return out


def _run_cell(cell: _Cell, by: list[str], judges: list[str], o: dict, root: int, annotators: bool) -> list[dict]:
    """Every judge's rows in one cell, the judges ranked by rho (untested ones last)."""
    judged: dict[str, _Judged] = {}
    if len(cell.names) >= 2:
        left, right, n_u = _pairs(cell.unit, len(cell.unit_item))
        rest = (n_u[cell.unit] - 1).astype(float)
        s_h = _score(left, right, cell.value[left], cell.value, rest, cell.scoring)
        for j in judges:
            if np.isfinite(cell.judge_value[j]).any():
                judged[j] = _judge(cell, j, s_h, left, right, n_u, rest, epsilon=o["epsilon"], q=o["q"],
                                   min_annotators=o["min_annotators"], min_items=o["min_items"])
    rho = _rho(cell, judged, root, o["n_boot"])
    present = [j for j in judges if np.isfinite(cell.judge_value[j]).any()]
    ranked = sorted(present, key=lambda j: -rho[j][0] if j in rho and np.isfinite(rho[j][0]) else np.inf)
    return [row for j in ranked for row in _judge_rows(cell, by, j, judged.get(j), rho.get(j), o, annotators)]


@takes_table(RATINGS)
def alt_test(ratings: pd.DataFrame, *, by: str | Sequence[str] = (), judges: Sequence[str] | None = None,
             epsilon: float = 0.2, scoring: str = "auto", q: float = 0.05, min_annotators: int = 2,
             min_items: int = 30, annotators: bool = False, n_boot: int = 1000, seed: int | np.random.Generator = 0,
             level: float = 0.95) -> pd.DataFrame:
    """The alternative annotator test of each judge: can it replace the human annotators?

    Leave one annotator out; on each item score the excluded annotator and the judge against the remaining
    annotators; :math:`W^f = 1[S(f) \\ge S(h)]`, :math:`W^h = 1[S(h) \\ge S(f)]`; per annotator a one-sided
    t-test of :math:`W^h - W^f` against epsilon; Benjamini-Yekutieli at ``q`` across annotators. The judge
    passes when it wins against at least half of them (:math:`\\omega \\ge 0.5`). Calderon, Reichart & Dror
    2025, "The Alternative Annotator Test for LLM-as-a-Judge" (ACL 2025); the module's docstring has the
    formulas.

    Parameters
    ----------
    ratings
        A ratings table (``item_id, rater, rater_kind, criterion, score``; ``category`` and ``scale`` for
        categories, :mod:`evalcore.data.scales`).
    by
        Per-item columns to test within (``language``, ``task``, ``criterion``). Without ``criterion`` in
        ``by``, the criteria of a group are pooled: its units are items on one criterion.
    judges
        The judges to test (default: every judge).
    epsilon
        The advantage the annotators may keep, in [0, 1]: the paper suggests 0.2 for experts, 0.15 for
        skilled annotators and 0.1 for crowd workers.
    scoring
        ``"auto"`` (accuracy on nominal criteria, neg_rmse on numbers), ``"accuracy"`` (labels equal, read as
        categories) or ``"neg_rmse"`` (numbers).
    q
        The false discovery rate of the Benjamini-Yekutieli procedure across annotators.
    min_annotators, min_items
        Items with fewer annotators, and annotators with fewer such items (rated by the judge too), are left
        out; ``note`` says how many and who.
    annotators
        Add one row per annotator (measure ``annotator_advantage``).
    n_boot, seed, level
        Item-bootstrap resamples for the interval of the advantage probability (0: none), the seed, the level.
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``judge, *by`` then :data:`ALT_TEST_COLUMNS`; per group the judges ranked by the advantage probability,
        best first, each with three rows:

        * ``winning_rate``: :math:`\\omega`, the share of annotators rejected (no interval);
        * ``advantage_probability``: :math:`\\rho` with its item-bootstrap percentile interval;
        * ``min_passing_epsilon``: the smallest epsilon at which the judge passes (exact; 0 when it passes
          at every epsilon);

        and with ``annotators=True`` one ``annotator_advantage`` row per annotator: ``estimate`` the mean of
        :math:`W^h - W^f` with its t interval, ``judge_win_share`` and ``annotator_win_share`` the means of
        :math:`W^f` and :math:`W^h`, ``std_error``, ``p_value`` (the one-sided t-test), ``rejected`` (by BY).

        On every row: ``passed`` the judge's verdict at ``epsilon`` (null when not tested), ``epsilon``,
        ``scoring`` (accuracy or neg_rmse), ``n`` the items behind the row, ``n_units`` its units (an item on
        one criterion), ``n_annotators`` the annotators tested, ``note`` what was left out and why. The flag
        rule's columns are absent: the test is its own (BY across annotators).

    Raises
    ------
    DataError
        No judge; fewer than 2 annotators; no annotator with ``min_items`` items; text scores (mixed labels);
        criteria scored differently pooled in one group; an option out of range.

    Examples
    --------
    Three annotators and two judges on 200 yes/no items: one as accurate as the annotators (90%), one at chance:

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, 200)
    >>> accuracy = {"ann1": 0.9, "ann2": 0.9, "ann3": 0.9, "good": 0.9, "coin": 0.5}
    >>> rows = [(i, r, "judge" if r in ("good", "coin") else "human", ["no", "yes"][t if rng.random() < a else 1 - t])
    ...         for r, a in accuracy.items() for i, t in enumerate(truth)]
    >>> df = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "category"])
    >>> df = df.assign(score=np.nan, scale="nominal")  # text labels: categories of a nominal criterion
    >>> res = alt_test(df, epsilon=0.1, n_boot=200)
    >>> print(res[["judge", "measure", "estimate", "ci_low", "ci_high", "passed"]].round(3).to_string(index=False))
    judge               measure  estimate  ci_low  ci_high  passed
     good          winning_rate     1.000     NaN      NaN    True
     good advantage_probability     0.950   0.915    0.975    True
     good   min_passing_epsilon     0.040     NaN      NaN    True
     coin          winning_rate     0.000     NaN      NaN   False
     coin advantage_probability     0.615   0.555    0.675   False
     coin   min_passing_epsilon     0.428     NaN      NaN   False
    >>> print(alt_test_verdicts(res)[1])  # doctest: +NORMALIZE_WHITESPACE
    coin FAILS at epsilon 0.1: it beats 0 of 3 annotators (winning rate 0.00, below 0.5); advantage probability
    0.61 [0.56, 0.68]; it would pass from epsilon 0.428.
    """
    by = [by] if isinstance(by, str) else list(by)
    _check_options(epsilon, scoring, q, min_annotators, min_items)
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    df, judges = _prepare(ratings, by, judges)
    humans = df.loc[df["rater_kind"].astype(str) == HUMAN, "rater"].astype(str).unique()
    if len(humans) < 2:
        raise DataError(f"the Alt-Test leaves one annotator out and scores against the others, so it needs at least "
                        f"2 human annotators, and the table has {len(humans)}"
                        + (f" ({humans[0]})" if len(humans) else ""),
                        fix="add the ratings of more annotators (3 or more give the test more to go on)")
    per_crit = _scoring_by_criterion(df, scoring)
    cells = _cells(df, _values(df, per_crit), by, judges, per_crit)
    o = {"epsilon": epsilon, "q": q, "min_annotators": min_annotators, "min_items": min_items, "level": level,
         "n_boot": n_boot}
    rows = [row for cell in cells for row in _run_cell(cell, by, judges, o, root, annotators)]
    out = _frame(rows, by)
    _check_tested(out)
    return out.reset_index(drop=True)


def _check_tested(out: pd.DataFrame) -> None:
    """A DataError when no judge could be tested anywhere, naming why (the first group's reason)."""
    verdicts = out[out["measure"] == "winning_rate"]
    if not len(verdicts) or verdicts["estimate"].notna().any():
        return
    why = str(verdicts["note"].iloc[0]).removeprefix("not tested: ")
    if "min_items" in why:
        raise DataError("too few items per annotator for the Alt-Test: " + why.split("; lower")[0],
                        fix="the paper tests each annotator on at least 30 items; with fewer, lower min_items "
                            "(--min-items on the command line), knowing that the test then has little power")
    raise DataError(why, fix="add the ratings of more annotators (3 or more give the test more to go on)")


def group_columns(table: pd.DataFrame) -> list[str]:
    """The ``by`` columns of an :func:`alt_test` table: those between ``judge`` and ``measure``.

    >>> group_columns(pd.DataFrame(columns=["judge", "criterion", "measure", "estimate"]))
    ['criterion']
    """
    cols = list(table.columns)
    return cols[1:cols.index("measure")]


def winning_rate_curve(table: pd.DataFrame, epsilons, *, q: float = 0.05) -> pd.DataFrame:
    """The winning rate at each epsilon, per judge and group, from the annotator rows of :func:`alt_test`.

    Each annotator's p-value at epsilon is the t-test's, from its mean difference, standard error and items
    (``estimate``, ``std_error``, ``n_units``); the annotators rejected are Benjamini-Yekutieli's at ``q``
    (the ``q`` the table was computed with). The same computation as ``min_passing_epsilon``: at that
    epsilon the curve reaches 0.5.

    Parameters
    ----------
    table
        The result of ``alt_test(..., annotators=True)``.
    epsilons
        The epsilons to evaluate.
    q
        The false discovery rate.

    Returns
    -------
    pandas.DataFrame
        ``judge, *by, epsilon, winning_rate, passed``, in the table's order of judges.

    Examples
    --------
    >>> t = pd.DataFrame({"judge": "j", "measure": ANNOTATOR_MEASURE, "estimate": [0.05, 0.1, 0.3, 0.4],
    ...                   "std_error": [0.03, 0.03, 0.04, 0.04], "n_units": 100})
    >>> winning_rate_curve(t, [0.1, 0.2, 0.5])["winning_rate"].tolist()
    [0.0, 0.5, 1.0]
    """
    by = group_columns(table)
    rows = table[(table["measure"] == ANNOTATOR_MEASURE) & table["std_error"].notna()]
    out = []
    for key, grp in rows.groupby(["judge", *by], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        e = _e_matrix(grp["estimate"], grp["std_error"], grp["n_units"], q)
        m = len(grp)
        for eps in np.asarray(epsilons, dtype=float):
            hits = (e <= eps).sum(axis=0)  # per i: annotators whose p-value is at most alpha_i
            ok = np.flatnonzero(hits >= np.arange(1, m + 1))
            k = int(ok[-1]) + 1 if len(ok) else 0
            out.append({**dict(zip(["judge", *by], key)), "epsilon": float(eps), "winning_rate": k / m,
                        "passed": k / m >= PASS_SHARE})
    return pd.DataFrame(out, columns=["judge", *by, "epsilon", "winning_rate", "passed"])


def alt_test_verdicts(table: pd.DataFrame) -> list[str]:
    """One sentence per judge and group of an :func:`alt_test` table, in its order: the verdict a stakeholder
    can repeat.

    Examples
    --------
    >>> t = pd.DataFrame({"judge": "gpt-4o", "measure": list(MEASURES), "estimate": [0.75, 0.771, 0.13],
    ...                   "ci_low": [np.nan, 0.72, np.nan], "ci_high": [np.nan, 0.81, np.nan],
    ...                   "n_annotators": 4, "passed": True, "epsilon": 0.2, "note": ""})
    >>> print(*alt_test_verdicts(t))  # doctest: +NORMALIZE_WHITESPACE
    gpt-4o PASSES at epsilon 0.2: it beats 3 of 4 annotators (winning rate 0.75); advantage probability 0.77
    [0.72, 0.81]; it passes from epsilon 0.130.
    """
    by = group_columns(table)
    out = []
    for key, grp in table.groupby(["judge", *by], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = {m: r for m, r in zip(grp["measure"], grp.to_dict("records"))}
        where = ", ".join(f"{c}={v}" for c, v in zip(by, key[1:]))
        lead = (f"{where}: " if where else "") + str(key[0])
        wr, ap, me = row.get("winning_rate"), row.get("advantage_probability"), row.get("min_passing_epsilon")
        if wr is None or ap is None or me is None:
            continue
        if not np.isfinite(wr["estimate"]):
            out.append(f"{lead}: {wr['note']}.")
            continue
        m = int(wr["n_annotators"])
        k = int(round(wr["estimate"] * m))
        ci = f" [{ap['ci_low']:.2f}, {ap['ci_high']:.2f}]" if np.isfinite(ap["ci_low"]) else ""
        verdict = "PASSES" if wr["passed"] else "FAILS"
        need = "" if wr["passed"] else f", below {PASS_SHARE:g}"
        then = ("it passes from epsilon" if wr["passed"] else "it would pass from epsilon") + f" {me['estimate']:.3f}"
        out.append(f"{lead} {verdict} at epsilon {wr['epsilon']:g}: it beats {k} of {m} annotators (winning rate "
                   f"{wr['estimate']:.2f}{need}); advantage probability {ap['estimate']:.2f}{ci}; {then}.")
    return out
