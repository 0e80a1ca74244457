"""What the sections of the bias report share: their table layout, the tests, and the error of a section the data cannot support.

:data:`TESTS` is the one registry of the tested measures of evalcore's pointwise reports (the bias
sections and the agreement table): each measure and the direction of its estimate that means
harm. A row of a judge whose measure is in it is a test in that direction (one-sided where a
direction is stated), flagged by the one flag rule (:func:`evalcore.stats.apply_fdr`); every other
row is descriptive.

Every summary function of :mod:`evalcore.pointwise.familiarity`, :mod:`evalcore.pointwise.anchoring`,
:mod:`evalcore.pointwise.scale_use` and :mod:`evalcore.pointwise.consistency` returns a table in the
layout :data:`RESULT_COLUMNS`, built with :class:`SectionTable` (the one result table of
:mod:`evalcore.stats` with ``section`` and ``criterion`` in front), and
:func:`evalcore.pointwise.bias_report.bias_report` puts them together.

Conventions shared by the summary functions (familiarity, anchoring, scale use, consistency)
--------------------------------------------------------------------------------------------
* Input: a validated canonical ratings table (:func:`evalcore.pointwise.coding.code_ratings`).
  Where a rater judged an item several times (``sample``), only the first sample (the
  smallest ``sample`` value) is used.
* Output: a tidy DataFrame with columns ``section, judge, criterion, *by, measure,
  estimate, ci_low, ci_high, n, test, p_value, q_value, flagged, opposite, note``
  (:data:`RESULT_COLUMNS`). ``judge`` is
  ``None`` on rows describing the humans (the reference); ``criterion`` is ``None`` where
  a row is not about one criterion. ``note`` says why a value is not defined (never a
  silent NaN) and carries caveats such as "perplexity is a proxy".
* ``n`` is the number of *items* the estimate uses (the resampling unit).
* Intervals: percentile bootstrap at ``level`` (default 95%) over **items** (item ids are
  resampled with replacement; an item carries all its ratings, by every rater and on every
  criterion). The same resamples are used for the humans and every judge within one cell,
  so differences are paired. Resampling is vectorised: per cell the ``n_boot`` resamples are
  one multinomial item-count matrix ``W`` (:func:`evalcore.stats.item_weights`; resamples x
  items, row r says how often each item was drawn), and every statistic is computed from
  per-item sufficient statistics weighted by ``W``. ``n_boot=0`` gives no intervals (and no
  flags). A cell's random stream is :func:`evalcore.stats.cell_rng` of the seed and the cell,
  so a cell's interval does not depend on which other cells exist.
* Tests (:data:`evalcore.pointwise.sections.TESTS`): only the rows of a judge whose measure is in :data:`TESTS` are tests, each in the direction that means harm: ``tau_difference`` "less" (the judge
  favours low-perplexity text more than humans do), ``r_difference`` "greater" (its criteria
  correlate more than the humans'), ``agreement_position_slope`` "less" (agreement falls with
  position). Each has a bootstrap p-value in that direction (:func:`evalcore.stats.z_p_value`),
  a Benjamini-Hochberg q-value across the table's tests (across the whole report in
  :func:`evalcore.pointwise.bias_report.bias_report`), and is ``flagged`` when q <= 0.05
  (:func:`evalcore.stats.apply_fdr`); significant in the other direction, it is marked
  ``opposite``, never flagged. Columns ``test, p_value, q_value, flagged, opposite`` stand
  between ``n`` and ``note``.
* Nominal criteria (a ``scale`` column, :mod:`evalcore.data.scales`): their labels are categories
  without an order. A row about one category names it in a ``category`` column, after the ``by``
  columns (present only when a nominal criterion is: a table of numbers keeps its layout); the
  measure keeps its code name, so that every category's row is one test of the same measure.
  What needs an order is not computed on such a criterion: the section says so once per criterion,
  in one ``not_available`` row whose note says why (:func:`nominal_note`), never in rows of NaN per
  measure.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..data.scales import CATEGORY
from ..errors import DataError, NotApplicable
from ..stats.results import RESULT_COLUMNS as _CONTRACT
from ..stats.bootstrap import Alternative
from ..stats.results import ResultTable, apply_fdr, tidy

#: The layout of every table of the bias report: ``section, judge, criterion``, the caller's ``by``
#: columns, then the columns of the result contract (:data:`evalcore.stats.RESULT_COLUMNS`).
RESULT_COLUMNS: tuple[str, ...] = ("section", "judge", "criterion", *_CONTRACT[1:])

#: The measure of a row that says an analysis was not run (a section, or a criterion of a section), its note saying why.
NOT_AVAILABLE = "not_available"

#: What each section cannot compute on a nominal criterion (categories have no order), and what it does instead.
_NEEDS_ORDER = {
    "score_distribution": ("the top-score share, the range of the scale used, the mean shift and round numbers",
                           "its category shares and entropy are compared instead"),
    "familiarity": ("Kendall's tau of score with perplexity and the perplexity gap of the top score",
                    "the mean perplexity of the items given each category is compared instead"),
    "anchoring": ("correlations between criteria and agreement by position in the prompt",
                  "it is left out of this section"),
}

#: The tested measures and the direction of the estimate (judge minus humans) that means harm.
TESTS: dict[str, Alternative] = {
    # familiarity: the judge's tau of score with perplexity is more negative than the humans'
    # (it favours low-perplexity text more than humans do)
    "tau_difference": "less",
    # anchoring: the judge's criteria correlate more than the humans'; agreement falls with position
    "r_difference": "greater",
    "agreement_position_slope": "less",
    # score distribution: skew and leniency in either direction; a narrower use of the scale;
    # more round numbers than the humans give (on the inner scores of a wide scale)
    "top_share_difference": "two-sided",
    "mean_shift": "two-sided",
    "entropy_difference": "less",
    "round_excess_5_difference": "greater",
    "round_excess_10_difference": "greater",
    # score distribution of a nominal criterion: the judge gives a category more or less often than the humans
    # (a shifted label prior), in either direction
    "category_share_difference": "two-sided",
    # familiarity of a nominal criterion: the judge gives a category to texts of another perplexity than the
    # humans do; without an order no category is the favourable one, so either direction
    "mean_perplexity_difference": "two-sided",
    # self-consistency: the judge agrees with itself (across samples, across prompt variants)
    # less than humans agree with each other
    "alpha_difference": "less",
    "alpha_across_variants_difference": "less",
    # agreement: the judge agrees with humans less than humans agree with each other
    "pairwise_agreement_gap": "less",
}


#: Fewest items a category's test rests on (:func:`category_untested`): below it the bootstrap's normal
#: approximation is too rough. On simulated null data the tests rejected 9-15% at p <= 0.05 with a category
#: given on 6-18 items, and about 5% from 30 on (the usual size for a z-test of a mean).
MIN_CATEGORY_ITEMS = 30


def category_untested(category: str, items: int, who: str) -> str:
    """Why a category's difference is shown but not tested: ``who`` (a subject and its verb) gives
    ``category`` on fewer than :data:`MIN_CATEGORY_ITEMS` of the items ('' when it is enough).

    >>> category_untested("pro", 12, "the judge or the humans give")
    "not tested: the judge or the humans give 'pro' on 12 of the items both rated, fewer than 30"
    """
    if items >= MIN_CATEGORY_ITEMS:
        return ""
    return f"not tested: {who} '{category}' on {items} of the items both rated, fewer than {MIN_CATEGORY_ITEMS}"


def test_of(measure: str) -> Alternative | None:
    """The direction that means harm for ``measure`` (:data:`TESTS`), or None for a descriptive measure.

    >>> test_of("r_difference"), test_of("mean_shift"), test_of("kendall_tau")
    ('greater', 'two-sided', None)
    """
    return TESTS.get(measure)


class BiasNotApplicable(NotApplicable):
    """The data cannot support this analysis (no perplexity or text; fewer than two criteria)."""


class SectionTable(ResultTable):
    """A :class:`evalcore.stats.ResultTable` in the layout of the bias report (:data:`RESULT_COLUMNS`)."""

    def __init__(self, section: str, by: Sequence[str], *, n_boot: int, level: float) -> None:
        super().__init__(["section", "judge", "criterion", *by], n_boot=n_boot, level=level)
        self.section, self.by = section, list(by)

    def row(self, judge: str | None, criterion: str | None, group: tuple, measure: str, values, n: int, *,
            untested: str = "", **kwargs) -> None:
        """One row for ``judge`` (None: the humans), ``criterion`` (None: over criteria) and the ``by``
        values ``group``; ``kwargs`` as in :meth:`evalcore.stats.ResultTable.add`. A judge's row of a
        measure in :data:`TESTS` is a test in its direction, unless ``untested`` says why it is not (the
        reason joins the row's note)."""
        keys = {"section": self.section, "judge": judge, "criterion": criterion, **dict(zip(self.by, group))}
        test = test_of(measure) if judge is not None and not untested else None
        if untested:
            kwargs["note"] = "; ".join(n for n in (kwargs.get("note", ""), untested) if n)
        self.add(keys, measure, values, n, test=test, **kwargs)


def nominal_note(section: str, criterion: str) -> str:
    """Why ``section`` computes its measures that need an order on no nominal ``criterion``, in one sentence.

    >>> nominal_note("familiarity", "stance")[:63]
    "'stance' is nominal (categories without an order), so Kendall's"
    """
    needs, instead = _NEEDS_ORDER[section]
    return f"'{criterion}' is nominal (categories without an order), so {needs} do not apply to it; {instead}"


def not_applicable(table: SectionTable, criteria: Sequence[str]) -> None:
    """One ``not_available`` row per nominal criterion of ``criteria`` in ``table``: once per criterion and
    section (never a row per measure), with :func:`nominal_note` as its note."""
    for crit in criteria:
        group = (None,) * (len(table.leading) - 3)
        table.row(None, crit, group, NOT_AVAILABLE, np.nan, 0, undefined=nominal_note(table.section, crit))


def join_tables(parts: Sequence[pd.DataFrame], *, alpha: float | None = None) -> pd.DataFrame:
    """The tables of one analysis on the criteria with numbers and on the nominal ones, as one table.

    The columns are :data:`RESULT_COLUMNS` with the parts' ``by`` columns after ``criterion``, and
    ``category`` after them where a part has it; one part is returned as it is. Several parts are one family of
    tests again (:func:`evalcore.stats.apply_fdr` at ``alpha``, 0.05 by default), as one table would be.
    """
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    lead = list(parts[0].columns)
    by = [c for c in lead[lead.index("criterion") + 1:lead.index("measure")] if c != CATEGORY]
    extra = [CATEGORY] if any(CATEGORY in p.columns for p in parts) else []
    cols = [*RESULT_COLUMNS[:3], *by, *extra, *RESULT_COLUMNS[3:]]
    out = pd.concat([p.reindex(columns=cols) for p in parts if len(p)], ignore_index=True) \
        if any(len(p) for p in parts) else pd.DataFrame(columns=cols)
    if extra:
        out[CATEGORY] = out[CATEGORY].astype(object).where(out[CATEGORY].notna(), None)
    return apply_fdr(tidy(out), **({} if alpha is None else {"alpha": alpha}))
