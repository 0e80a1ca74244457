"""Familiarity and anchoring biases of LLM judges, measured against human annotators: one place to import them.

Both follow Stureborg et al. 2024, "Large language models are inconsistent and biased
evaluators" (Sections 3.1 and 3.3, Tables 1 and 3, Figures 2 and 4). The analyses live in
their own modules; this one gathers their public names and states what they share.

Familiarity (their Table 1 and Figure 2): :mod:`evalcore.pointwise.familiarity`
    :func:`familiarity`, :func:`perplexity_by_score`, and :func:`perplexity_proxy` where only
    the ``text`` is given (a local proxy, labelled :data:`PROXY_LABEL` everywhere).

Anchoring (their Figure 4 and Table 3): :mod:`evalcore.pointwise.anchoring`
    :func:`anchoring`, :func:`conditional_distribution`, :func:`criterion_correlations`.

The other sections of the bias report are :mod:`evalcore.pointwise.scale_use` and
:mod:`evalcore.pointwise.consistency`; :func:`evalcore.pointwise.bias_report.bias_report` runs
them all.

Conventions shared by the summary functions (:func:`familiarity`, :func:`anchoring`)
------------------------------------------------------------------------------------
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
* Tests (:data:`evalcore.pointwise.sections.TESTS`): only the rows :data:`FLAG_MEASURES` of a
  judge are tests, each in the direction that means harm: ``tau_difference`` "less" (the judge
  favours low-perplexity text more than humans do), ``r_difference`` "greater" (its criteria
  correlate more than the humans'), ``agreement_position_slope`` "less" (agreement falls with
  position). Each has a bootstrap p-value in that direction (:func:`evalcore.stats.z_p_value`),
  a Benjamini-Hochberg q-value across the table's tests (across the whole report in
  :func:`evalcore.pointwise.bias_report.bias_report`), and is ``flagged`` when q <= 0.05
  (:func:`evalcore.stats.apply_fdr`); significant in the other direction, it is marked
  ``opposite``, never flagged. Columns ``test, p_value, q_value, flagged, opposite`` stand
  between ``n`` and ``note``.
"""

from __future__ import annotations

from .anchoring import ANCHORING, anchoring, conditional_distribution, criterion_correlations
from .anchoring import TESTED as ANCHORING_TESTED
from .familiarity import FAMILIARITY, PROXY_LABEL, familiarity, perplexity_by_score, perplexity_proxy
from .familiarity import TESTED as FAMILIARITY_TESTED
from .sections import RESULT_COLUMNS, BiasNotApplicable

__all__ = [
    "FAMILIARITY", "ANCHORING", "PROXY_LABEL", "FLAG_MEASURES", "RESULT_COLUMNS", "BiasNotApplicable",
    "familiarity", "perplexity_by_score", "perplexity_proxy", "anchoring", "conditional_distribution",
    "criterion_correlations",
]

#: The rows that are tests; ``flagged`` is False on every other row.
FLAG_MEASURES = (*FAMILIARITY_TESTED, *ANCHORING_TESTED)
