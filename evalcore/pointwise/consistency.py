"""Self-consistency of LLM judges: Krippendorff's alpha across repeated samples and prompt variants.

Stureborg et al. (2024, §3.4, Table 4) sample GPT-4 several times per summary and treat the
samples as if they were different annotators: the *inter-sample* Krippendorff's alpha (0.587 on
SummEval, averaged over four criteria) is lower than the experts' *inter-annotator* alpha
(0.659). A judge that disagrees with itself that much cannot be trusted on single items, even
when its average correlates with humans. Their Table 7 applies the same alpha across prompt
configurations (single- vs multi-attribute template, 1-5 vs 1-10 vs 1-100 scale).

- :func:`self_consistency`: per criterion (and ``by`` group), each judge's inter-sample alpha
  (column ``sample``), the humans' inter-annotator alpha, and their difference, with item
  bootstrap intervals.
- :func:`variant_agreement`: the same alpha across the values of a prompt-variant or
  temperature column, one judgment per variant.
- :func:`variant_columns`: guesses which columns hold such variants.
- :func:`krippendorff_alpha`: the estimator on a raters x units matrix (NaN = missing), the
  layout of the ``krippendorff`` package, for checks and one-off use.

The output layout (:mod:`evalcore.pointwise.sections`), the cells and the item bootstrap
(:mod:`evalcore.pointwise.cells`, :mod:`evalcore.stats`) and the tests (directions in
:data:`evalcore.pointwise.sections.TESTS`, flags by :func:`evalcore.stats.apply_fdr`) are those of
:mod:`evalcore.pointwise.scale_use` (section ``self_consistency``).

Krippendorff's alpha from per-unit sufficient statistics
--------------------------------------------------------
Alpha depends only on the multiset of values in each unit (which rater gave which value does
not matter), so a unit is its vector of category counts :math:`n_{uc}` with
:math:`m_u = \\sum_c n_{uc}`; only *pairable* units (:math:`m_u \\ge 2`) count. With
:math:`n_c = \\sum_u n_{uc}` and :math:`N = \\sum_c n_c` over pairable units (Krippendorff 2011,
"Computing Krippendorff's alpha-reliability"):

.. math::

    \\alpha = 1 - (N-1)\\,\\frac{\\sum_u \\frac{1}{m_u-1}\\sum_{c,k} n_{uc} n_{uk}\\,\\delta^2_{ck}}
                                {\\sum_{c,k} n_c n_k\\,\\delta^2_{ck}}

- interval: :math:`\\delta^2_{ck} = (v_c - v_k)^2`, so a unit contributes
  :math:`(2 m_u S_{2u} - 2 S_{1u}^2)/(m_u-1)` with :math:`S_{ru} = \\sum_c n_{uc} v_c^r`, and the
  denominator is :math:`2N\\sum_c n_c v_c^2 - 2(\\sum_c n_c v_c)^2`;
- nominal: :math:`\\delta = [c \\ne k]`: unit term :math:`(m_u^2 - \\sum_c n_{uc}^2)/(m_u-1)`,
  denominator :math:`N^2 - \\sum_c n_c^2`;
- ordinal: :math:`\\delta_{ck} = \\sum_{g=c}^{k} n_g - (n_c+n_k)/2`, which is the interval metric
  on the positions :math:`x_c = \\sum_{g<c} n_g + n_c/2` (recomputed in each resample).

Every sum is linear in the units, so with item weights :math:`w` (one row per bootstrap
resample) each term is a matrix product: all resamples at once, no loop.

Which level? The scores are ordered numbers, so ``interval`` is the default, as in the
``krippendorff`` package and the sample data's documentation; Stureborg et al. do not state the
level they used (they bin 1-10 and 1-100 scores to 1-5 before comparing settings). ``ordinal``
and ``nominal`` are available through ``metric``. A nominal criterion (a ``scale`` column,
:mod:`evalcore.data.scales`) always gets the nominal alpha, the only level defined for categories
without an order, whatever ``metric`` says; its rows say so in ``note`` (:data:`NOMINAL_NOTE`).
"""

from __future__ import annotations

import math

import re
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..arguments import takes_table
from ..columns import JUDGE, NOT_SEGMENTS, RATINGS
from ..errors import DataError
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, root_seed
from ..stats.numeric import join_notes, safe_div
from .cells import CellRatings, cell_items, cell_ratings, split_scales
from .sections import SectionTable, join_tables

SECTION = "self_consistency"
METRICS = ("interval", "ordinal", "nominal")
SELF_MEASURES = ("alpha_inter_annotator", "alpha_inter_sample", "alpha_difference")
VARIANT_MEASURES = ("alpha_inter_annotator", "alpha_across_variants", "alpha_across_variants_difference")
#: The note on the rows of a nominal criterion: its alpha is the nominal one, whatever ``metric`` says.
NOMINAL_NOTE = "nominal alpha: the criterion's labels are categories without an order"
VARIANT_WORDS = ("prompt", "template", "variant", "temperature", "temp", "config", "strategy")


# --------------------------------------------------------------------------- the estimator


def _alpha(unit: np.ndarray, code: np.ndarray, values: np.ndarray, Wu: np.ndarray, metric: str) -> np.ndarray:
    """Krippendorff's alpha per row of unit weights, from the ratings' units and categories.

    Parameters
    ----------
    unit
        Unit index of each rating, in ``0 .. U-1``.
    code
        Category index of each rating into ``values``.
    values
        ``(q,)`` the categories' numeric values.
    Wu
        ``(R, U)`` weight of each unit in each resample (row 0: the data).
    metric
        ``interval``, ``ordinal`` or ``nominal``.

    Returns
    -------
    numpy.ndarray
        ``(R,)`` alpha, NaN where it is not defined (no pairable unit, or a single value among
        the pairable ratings).

    Notes
    -----
    The interval metric needs only :math:`m_u, S_{1u}, S_{2u}` per unit, so its cost does not
    depend on the number of distinct values (judges that average samples give hundreds).
    The nominal and ordinal metrics use the sparse unit x category count matrix.
    """
    R, U = Wu.shape
    m_all = np.bincount(unit, minlength=U).astype(float)
    pair = m_all >= 2
    if not pair.any():
        return np.full(R, np.nan)
    keep = pair[unit]
    unit, code = unit[keep], code[keep]
    m = m_all
    inv = np.where(pair, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
    mp = m * pair
    N = Wu @ mp
    q = len(values)
    C = sparse.csr_matrix((np.ones(len(unit)), (unit, code)), shape=(U, q))
    marg = np.asarray(C.T @ Wu.T).T  # (R, q) pairable value frequencies
    several = (marg > 0).sum(axis=1) >= 2  # else a single value: no expected disagreement
    if metric == "interval":
        # Centred on the values paired here (a stray 1e10 elsewhere in the cell must not cost every digit of
        # the humans' sums), and halved to a power of two while a square would overflow (exact: same alpha).
        used = np.unique(code)
        v = values - (values[used].min() + values[used].max()) / 2.0
        span = float(np.abs(v[used]).max())
        if span > 1e150:
            v = v / 2.0 ** math.ceil(math.log2(span))
        s1 = np.bincount(unit, weights=v[code], minlength=U)
        s2 = np.bincount(unit, weights=v[code] ** 2, minlength=U)
        # m * s2 - s1^2 as m * (squared deviations from the unit's mean): no cancellation when the unit's
        # scores sit far from the centre (every other unit of a judge with one stray 1e10).
        dev = v[code] - (s1 / np.maximum(m, 1.0))[unit]
        do = Wu @ ((2.0 * m * np.bincount(unit, weights=dev ** 2, minlength=U)) * inv)
        de = 2.0 * N * (Wu @ s2) - 2.0 * (Wu @ s1) ** 2
    elif metric == "nominal":
        sq = np.asarray(C.multiply(C).sum(axis=1)).ravel()
        do = Wu @ ((mp ** 2 - sq) * inv)
        de = N ** 2 - (marg ** 2).sum(axis=1)
    elif metric == "ordinal":
        x = np.cumsum(marg, axis=1) - marg / 2.0  # (R, q) mid-cumulative positions, per resample
        x = x - x[:, -1:] / 2.0
        S1 = np.asarray(C @ x.T).T  # (R, U): sum_c n_uc x_c
        S2 = np.asarray(C @ (x ** 2).T).T
        do = (Wu * (2.0 * m * S2 - 2.0 * S1 ** 2) * inv).sum(axis=1)
        de = 2.0 * N * (marg * x ** 2).sum(axis=1) - 2.0 * (marg * x).sum(axis=1) ** 2
    else:  # pragma: no cover - checked by callers
        raise DataError(f"unknown metric '{metric}'", fix="use " + ", ".join(METRICS))
    de = np.where(several, de, np.nan)
    return 1.0 - (N - 1.0) * safe_div(do, de)


def _check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise DataError(f"unknown level of measurement '{metric}'", fix="use one of: " + ", ".join(METRICS))
    return metric


def krippendorff_alpha(reliability_data: np.ndarray | Sequence[Sequence[float]], *,
                       metric: str = "interval") -> float:
    """Krippendorff's alpha of a raters x units matrix (NaN = missing), as the ``krippendorff`` package.

    Parameters
    ----------
    reliability_data
        ``(raters, units)`` numeric values; NaN where a rater did not rate a unit.
    metric
        ``interval`` (default), ``ordinal`` or ``nominal``.

    Returns
    -------
    float
        Alpha, NaN when not defined (no unit with two values, or a single value overall).
    """
    _check_metric(metric)
    X = np.asarray(reliability_data, dtype=float)
    if X.ndim != 2:
        raise DataError("reliability data must be a raters x units matrix", fix="pass a 2-d array")
    ok = np.isfinite(X)
    if not ok.any():
        return float("nan")
    values, code = np.unique(X[ok], return_inverse=True)
    unit = np.nonzero(ok)[1]
    return float(_alpha(unit, code, values, np.ones((1, X.shape[1])), metric)[0])


# --------------------------------------------------------------------------- variants


def _name_matches(name: str) -> bool:
    tokens = [t for t in re.split(r"[^a-z0-9]+|(?<=[a-z])(?=[0-9])", re.sub(r"([a-z])([A-Z])", r"\1_\2", str(name)).lower()) if t]
    return any(t.startswith(w) for t in tokens for w in VARIANT_WORDS)


def variant_columns(ratings: pd.DataFrame) -> list[str]:
    """Columns that look like prompt-variant or temperature settings of the judges.

    A column qualifies when (i) a word of its name starts with ``prompt``, ``template``,
    ``variant``, ``temperature``/``temp``, ``config`` or ``strategy`` (so ``prompt_id``,
    ``Temperature``, ``promptVariant`` qualify, ``attempt`` does not), (ii) it is not a
    canonical column, and (iii) it takes two or more values within one judge's ratings of one
    item on one criterion: a setting that changed while the judgment target did not.

    Parameters
    ----------
    ratings
        A validated ratings table.

    Returns
    -------
    list of str
        The qualifying columns, in table order (empty when there are none).
    """
    need = {"item_id", "rater", "rater_kind"}
    if not isinstance(ratings, pd.DataFrame) or need - set(ratings.columns):
        raise DataError("expected a ratings table with item_id, rater and rater_kind",
                        fix="load a validated ratings table")
    cand = [c for c in ratings.columns if str(c) not in NOT_SEGMENTS | {"criterion"} and _name_matches(str(c))]
    if not cand:
        return []
    j = ratings[ratings["rater_kind"].astype("string").str.lower() == JUDGE]
    if len(j) == 0:
        return []
    keys = ["rater", "item_id"] + (["criterion"] if "criterion" in j.columns else [])
    g = j.groupby(keys, sort=False, dropna=False)
    return [c for c in cand if (g[c].nunique(dropna=False) > 1).any()]


def variants_from_rater(ratings: pd.DataFrame, *, sep: str = "/", column: str = "prompt") -> pd.DataFrame:
    """Split judge names such as ``Beluga-13B/prompt2`` into a judge and a variant column.

    Some datasets encode the prompt variant in the judge's name (HANNA's ``<model>/prompt1`` ..
    ``prompt4``). This returns a copy where, for judge rows whose name contains ``sep``, ``rater``
    is the part before the last ``sep`` and ``column`` the part after it; human rows get a
    missing value. Pass the result to :func:`variant_agreement` with ``variant_column=column``.

    Parameters
    ----------
    ratings
        A validated ratings table.
    sep
        Separator between the judge and the variant in the name.
    column
        Name of the new variant column (it must not exist yet).

    Returns
    -------
    pandas.DataFrame
        The table with ``rater`` shortened on judge rows and the new column.
    """
    if column in ratings.columns:
        raise DataError(f"the table already has a column '{column}'", column=column,
                        fix="choose another name with column=...")
    out = ratings.copy()
    is_j = (out["rater_kind"].astype("string").str.lower() == JUDGE).fillna(False).to_numpy(dtype=bool)
    name = out["rater"].astype("string")
    has = is_j & name.str.contains(sep, regex=False).fillna(False).to_numpy(dtype=bool)
    parts = name[has].str.rsplit(sep, n=1)
    out[column] = pd.Series(pd.NA, index=out.index, dtype="string")
    out.loc[has, column] = parts.str[1]
    out.loc[has, "rater"] = parts.str[0]
    return out


# --------------------------------------------------------------------------- shared cell loop


def _run(prep: CellRatings, *, units_of, section_key: str, measure: str, diff_measure: str, why_single: str,
         n_boot: int, level: float, seed, metric: str, extra_note: dict[str, str] | None = None,
         note_all: str = "") -> pd.DataFrame:
    """Per cell: the humans' inter-annotator alpha, each judge's alpha over its ``units_of`` rows,
    and their difference, all from one item-weight matrix (paired); ``note_all`` goes on every row."""
    base = root_seed(seed)
    table = SectionTable(SECTION, prep.by, n_boot=n_boot, level=level)
    S = 1 + len(prep.judges)
    for c, key in enumerate(prep.keys):
        rows = prep.rows(c)
        item_loc, n_items = cell_items(prep, rows)
        values, vcode = np.unique(prep.score[rows], return_inverse=True)
        W = item_weights(cell_rng(base, (section_key, key)), n_items, n_boot)
        src = prep.source[rows]
        h = src == 0
        human = None
        if h.any():
            pair_h = np.bincount(item_loc[h], minlength=n_items) >= 2
            a_h = _alpha(item_loc[h], vcode[h], values, W, metric)
            human = (a_h, pair_h)
            why = ("not defined: no item in this group has two or more human ratings" if not pair_h.any() else
                   "not defined: every human rating in this group is the same score, so chance agreement is 1")
            table.row(None, key[0], key[1:], "alpha_inter_annotator", a_h, int(pair_h.sum()), undefined=why,
                      note=note_all)
        for s in range(1, S):
            m = src == s
            if not m.any():
                continue
            judge = prep.judges[s - 1]
            sel = units_of(rows[m])  # which of the judge's rows count (e.g. one per variant)
            rr = np.flatnonzero(m)[sel]
            pair_j = np.bincount(item_loc[rr], minlength=n_items) >= 2
            note = join_notes(note_all, (extra_note or {}).get(judge, ""))
            if not pair_j.any():
                why = why_single.format(judge=judge)
                table.row(judge, key[0], key[1:], measure, np.nan, 0, undefined=why, note=note)
                table.row(judge, key[0], key[1:], diff_measure, np.nan, 0, undefined=why, note=note)
                continue
            a_j = _alpha(item_loc[rr], vcode[rr], values, W, metric)
            table.row(judge, key[0], key[1:], measure, a_j, int(pair_j.sum()), note=note,
                      undefined=f"not defined: every score of '{judge}' in this group is the same, "
                                "so chance agreement is 1")
            if human is None:
                table.row(judge, key[0], key[1:], diff_measure, np.nan, 0, note=note,
                          undefined="not defined: no human rated an item in this group")
                continue
            a_h, pair_h = human
            table.row(judge, key[0], key[1:], diff_measure, a_j - a_h, int((pair_j | pair_h).sum()),
                      note=note, undefined="not defined: the humans' or the judge's alpha is not defined here")
    return table.frame()


# --------------------------------------------------------------------------- public functions


@takes_table(RATINGS)
def self_consistency(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    metric: str = "interval",
) -> pd.DataFrame:
    """Inter-sample Krippendorff's alpha of each judge against the humans' inter-annotator alpha.

    Stureborg et al. (2024), §3.4 and Tables 4 and 7: "for GPT-4's inter-sample agreement,
    multiple samples are considered annotations made by different annotators".

    Per cell (a criterion, and a combination of the ``by`` columns):

    - ``alpha_inter_annotator`` (``judge`` None): alpha among the human annotators, units =
      items, one value per annotator (a human's first ``sample``).
    - ``alpha_inter_sample``: alpha among the samples of one judge, units = items, one value per
      sample (every row of the judge on the item). Only items with 2+ samples are pairable.
    - ``alpha_difference``: ``alpha_inter_sample - alpha_inter_annotator`` on the same item
      resamples. Negative: the judge agrees with itself less than humans agree with each other
      (Stureborg et al.: 0.587 - 0.659 = -0.072 on SummEval).

    The formula and the levels of measurement are in the module docstring; the estimator
    matches the ``krippendorff`` package to rounding, missing values included.

    **Test.** ``alpha_difference`` is tested one-sided, "less": the judge agrees with itself
    less than humans agree with each other. A judge *more* consistent than the humans is marked
    ``opposite``, never flagged. Flags follow the one rule (:func:`evalcore.stats.apply_fdr`,
    Benjamini-Hochberg q <= 0.05 over the report's tests). The two alphas themselves are
    descriptive.

    A judge with one sample per item gets rows with a note instead of an estimate. When a
    column that looks like a prompt variant or temperature (:func:`variant_columns`) varies
    among a judge's samples, its rows say so: its inter-sample alpha then mixes sampling noise
    with prompt sensitivity; use :func:`variant_agreement`, or filter to one variant.

    Parameters
    ----------
    ratings
        A validated ratings table with a ``sample`` column for repeated judge samples.
    by
        Per-item segment columns, e.g. ``["language"]``.
    judges
        Judges to include (default: all).
    n_boot
        Item-bootstrap resamples per cell (0: no intervals, no flags).
    seed
        Integer seed or ``numpy.random.Generator``.
    level
        Confidence level of the percentile intervals.
    metric
        Level of measurement: ``interval`` (default), ``ordinal`` or ``nominal``, of the criteria with
        numbers; a nominal criterion always gets the nominal alpha.
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``section`` ('self_consistency'), ``judge``, ``criterion``, ``*by``, ``measure``,
        ``estimate``, ``ci_low``, ``ci_high``, ``n`` (pairable items; for the difference, items
        pairable for the judge or the humans), ``flagged``, ``note``.

    References
    ----------
    Stureborg, Alikaniotis & Suhara (2024), "Large language models are inconsistent and biased
    evaluators", §3.4, Tables 4 and 7. Krippendorff (2011), "Computing Krippendorff's
    alpha-reliability".

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = self_consistency(ratings, n_boot=200, seed=0).query("criterion == 'OCQ'")
    >>> print(table[["judge", "measure", "estimate", "ci_low", "ci_high"]].round(2).to_string(index=False))
                  judge               measure  estimate  ci_low  ci_high
                   None alpha_inter_annotator      0.60    0.49     0.72
    gpt-4/per-criterion    alpha_inter_sample      0.78    0.71     0.85
    gpt-4/per-criterion      alpha_difference      0.18    0.07     0.30
      gpt-4/single-call    alpha_inter_sample       NaN     NaN      NaN
      gpt-4/single-call      alpha_difference       NaN     NaN      NaN
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    _check_metric(metric)
    preps = [(cell_ratings(part, by=by, judges=judges_of), level_of, note)
             for part, judges_of, level_of, note in _by_scale(ratings, judges, metric)]
    notes = _variant_notes(ratings, list(dict.fromkeys(j for prep, _, _ in preps for j in prep.judges)))
    return join_tables([
        _run(prep, units_of=lambda rows: np.ones(len(rows), dtype=bool), section_key=SECTION,
             measure="alpha_inter_sample", diff_measure="alpha_difference",
             why_single="not defined: '{judge}' has one sample per item here; inter-sample agreement "
                        "needs 2+ samples of the same item (column 'sample')",
             n_boot=n_boot, level=level, seed=seed, metric=level_of, extra_note=notes, note_all=note)
        for prep, level_of, note in preps])


def _by_scale(ratings: pd.DataFrame, judges, metric: str):
    """(rows, judges, level of measurement, note) of the criteria with numbers (at ``metric``) and of the nominal
    criteria (their categories, at the nominal level: the only one defined without an order)."""
    split = split_scales(ratings)
    for part, level_of, note in ((split.numbers, metric, ""), (split.categories, "nominal", NOMINAL_NOTE)):
        if part is not None:
            yield part, split.judges(part, judges), level_of, note


def _variant_notes(ratings: pd.DataFrame, judges: list[str]) -> dict[str, str]:
    """Per judge, a note where a column that looks like a prompt variant varies among its samples."""
    notes: dict[str, str] = {}
    vcols = variant_columns(ratings) if len(judges) else []
    if vcols:
        j = ratings[ratings["rater"].astype("string").isin(judges)]
        keys = ["rater", "item_id"] + (["criterion"] if "criterion" in j.columns else [])
        for col in vcols:
            varies = j.groupby(keys, sort=False, dropna=False)[col].nunique(dropna=False).gt(1)
            for judge in varies[varies].index.get_level_values("rater").unique():
                notes[str(judge)] = (notes.get(str(judge), "") + ("; " if str(judge) in notes else "")
                                     + f"the samples of this judge differ in '{col}': inter-sample alpha mixes "
                                       f"them; see variant_agreement(variant_column='{col}')")
    return notes


@takes_table(RATINGS)
def variant_agreement(
    ratings: pd.DataFrame,
    *,
    variant_column: str,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    metric: str = "interval",
) -> pd.DataFrame:
    """Krippendorff's alpha across prompt variants (or temperatures) of the same judge.

    Stureborg et al. (2024), Table 7: "Krippendorff's alpha values were calculated for the
    agreement between judgments obtained for different settings" (single- vs multi-attribute
    template: 0.513; 1-5 vs 1-100 scale: 0.439; against 0.659 among human experts).

    The variants play the annotators: for each judge, criterion and ``by`` group, units are
    items and each value of ``variant_column`` contributes one judgment per item (the first
    ``sample`` of that variant, so that sampling noise within a variant does not count as
    disagreement between variants).

    - ``alpha_inter_annotator`` (``judge`` None): the humans' alpha, the reference.
    - ``alpha_across_variants``: alpha among the judge's variants.
    - ``alpha_across_variants_difference``: ``alpha_across_variants - alpha_inter_annotator``
      on the same item resamples. Negative: the judge's verdict depends on the variant more
      than a human's depends on who the human is.

    **Test.** ``alpha_across_variants_difference`` is tested one-sided, "less" (the judge's
    verdicts depend on the variant more than a human's on who the human is); flags follow
    :func:`evalcore.stats.apply_fdr`, and a judge steadier across variants than humans are among
    themselves is marked ``opposite``. The alphas themselves are descriptive.

    Parameters
    ----------
    ratings
        A validated ratings table.
    variant_column
        The column holding the variant (e.g. ``prompt``, ``temperature``); see
        :func:`variant_columns`, and :func:`variants_from_rater` for variants encoded in judge
        names. Judge rows where it is missing are left out.
    by, judges, n_boot, seed, level, metric, item, rater, kind, criterion, score, sample
        As in :func:`self_consistency`.

    Returns
    -------
    pandas.DataFrame
        The common layout, section ``self_consistency``; ``n`` is the number of pairable items.

    Examples
    --------
    The sample's two GPT-4 judges are one model with two prompts (``gpt-4/single-call``,
    ``gpt-4/per-criterion``): :func:`variants_from_rater` makes them one judge with a ``prompt`` column.

    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = variant_agreement(variants_from_rater(ratings), variant_column="prompt", n_boot=200, seed=0)
    >>> diff = table.query("measure == 'alpha_across_variants_difference'")
    >>> print(diff[["judge", "criterion", "estimate", "ci_low", "ci_high"]].round(2).to_string(index=False))
    judge criterion  estimate  ci_low  ci_high
    gpt-4         H     -0.12   -0.52     0.25
    gpt-4        LA     -0.12   -0.34     0.06
    gpt-4       OCQ     -0.10   -0.28     0.07
    gpt-4        PC     -0.00   -0.02     0.01
    gpt-4        TQ     -0.05   -0.23     0.10
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    _check_metric(metric)
    if not isinstance(variant_column, str) or variant_column not in ratings.columns:
        found = variant_columns(ratings) if isinstance(ratings, pd.DataFrame) and \
            {"item_id", "rater", "rater_kind"} <= set(ratings.columns) else []
        raise DataError(f"the table has no column '{variant_column}' to compare variants by",
                        column=str(variant_column),
                        fix=("use one of: " + ", ".join(found)) if found else
                        "add a column naming the prompt variant or temperature of each judge row "
                        "(for names like 'model/prompt2' use evalcore.pointwise.consistency.variants_from_rater)")
    if variant_column in {"item_id", "rater", "rater_kind", "criterion", "score"}:
        raise DataError(f"'{variant_column}' cannot be a variant column", column=variant_column,
                        fix="name the column that holds the prompt variant or temperature")
    return join_tables([_across_variants(part, variant_column, by=by, judges=judges_of, n_boot=n_boot, seed=seed,
                                         level=level, metric=level_of, note=note)
                        for part, judges_of, level_of, note in _by_scale(ratings, judges, metric)])


def _across_variants(ratings: pd.DataFrame, variant_column: str, *, by, judges, n_boot: int, seed, level: float,
                     metric: str, note: str) -> pd.DataFrame:
    """:func:`variant_agreement` on the criteria of one scale."""
    prep = cell_ratings(ratings, by=by, judges=judges)
    variant = ratings[variant_column].to_numpy()[prep.row]
    vcode, _ = pd.factorize(pd.Series(variant), use_na_sentinel=True)
    vcode = np.asarray(vcode)
    # First sample per (item, rater, variant) within each cell: rank rows by sample.
    key = pd.DataFrame({"cell": prep.cell, "item": prep.item, "rater": prep.rater, "v": vcode,
                        "s": prep.sample, "r": np.arange(len(vcode))})
    first = key.sort_values(["s", "r"], kind="stable").drop_duplicates(["cell", "item", "rater", "v"])["r"].to_numpy()
    is_first = np.zeros(len(vcode), dtype=bool)
    is_first[first] = True
    usable = is_first & (vcode >= 0)
    out = _run(prep, units_of=lambda rows: usable[rows], section_key="variant_agreement:" + variant_column,
               measure="alpha_across_variants", diff_measure="alpha_across_variants_difference",
               why_single="not defined: '{judge}' has fewer than two values of '" + variant_column +
                          "' on any item here; agreement across variants needs 2+ variants of the same item",
               n_boot=n_boot, level=level, seed=seed, metric=metric, note_all=note)
    return out
