"""The whole bias audit in one call: every section the data supports, in one tidy table.

Sections (Stureborg et al. 2024; Hada et al. 2024):

- ``familiarity`` (:func:`evalcore.pointwise.familiarity.familiarity`): score against perplexity;
- ``score_distribution`` (:func:`evalcore.pointwise.scale_use.scale_use`, :func:`evalcore.pointwise.scale_use.round_number_bias`):
  top-score skew, mean shift, entropy, round numbers;
- ``anchoring`` (:func:`evalcore.pointwise.anchoring.anchoring`): correlation between criteria, agreement by position;
- ``self_consistency`` (:func:`evalcore.pointwise.consistency.self_consistency`,
  :func:`evalcore.pointwise.consistency.variant_agreement`): alpha across samples and across prompt variants.

A section the data cannot support is skipped and kept as one row with measure ``not_available``
whose note gives the reason, so that the page, the CLI and pipelines can say what is missing. Every table has
the layout :data:`evalcore.pointwise.sections.RESULT_COLUMNS`.

Nominal criteria (a ``scale`` column, :mod:`evalcore.data.scales`): the score distribution compares the
judge's category shares with the humans' (``category_share_difference``, a shifted label prior), familiarity
the mean perplexity of the items given each category (``mean_perplexity_difference``), self-consistency uses
the nominal alpha, and anchoring leaves them out. A row about one category names it in a ``category`` column
after the ``by`` columns (only when a criterion is nominal). What needs an order is said once per section and
criterion, in a ``not_available`` row with the criterion (:attr:`BiasReport.not_applicable`).

The flag rule over the whole report (:func:`evalcore.stats.apply_fdr`): every tested row (a judge's row of
a measure in :data:`evalcore.pointwise.sections.TESTS`) has a bootstrap p-value in the direction that means
harm (:func:`evalcore.stats.z_p_value`); the Benjamini-Hochberg q-values are computed once across all of
them, every section, judge, group and criterion together; ``flagged`` is q <= ``alpha`` (0.05) with the
estimate on the side of harm, and ``opposite`` marks one-sided tests significant in the other direction
(reported, never a bias).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import RATINGS
from ..errors import DataError
from ..stats.numeric import join_notes
from ..stats.results import ALPHA, apply_fdr, check_alpha
from . import anchoring, consistency, familiarity, scale_use
from .recommend import recommendations
from ..data.scales import CATEGORY
from .sections import NOT_AVAILABLE, RESULT_COLUMNS, BiasNotApplicable

SECTIONS = ("familiarity", "score_distribution", "anchoring", "self_consistency")
COLUMNS = RESULT_COLUMNS


@dataclass(frozen=True)
class BiasReport:
    """A view of :func:`bias_report`'s table for the page and the CLI: its results, skipped sections and mitigations.

    ``BiasReport(bias_report(ratings))``; a skipped section is one ``not_available`` row whose note says why.
    """

    records: pd.DataFrame
    #: Notes about the data every section shares (a stray score: :func:`evalcore.pointwise.scale_use.stray_scores`;
    #: the rows of its criterion say so too).
    notes: tuple[str, ...] = ()

    @property
    def skipped(self) -> tuple[tuple[str, str], ...]:
        """(section, reason) for each section the data could not support."""
        na = self.records[(self.records["measure"] == NOT_AVAILABLE) & self.records["criterion"].isna()]
        return tuple(zip(na["section"], na["note"]))

    @property
    def not_applicable(self) -> tuple[tuple[str, str, str], ...]:
        """(section, criterion, reason) for each nominal criterion on which a section computes only part of its
        measures, those that need no order (:func:`evalcore.pointwise.sections.nominal_note`)."""
        na = self.records[(self.records["measure"] == NOT_AVAILABLE) & self.records["criterion"].notna()]
        return tuple(zip(na["section"], na["criterion"].astype(str), na["note"]))

    @property
    def results(self) -> pd.DataFrame:
        """The records without the ``not_available`` rows."""
        return self.records[self.records["measure"] != NOT_AVAILABLE]

    @property
    def recommendations(self) -> pd.DataFrame:
        """Mitigations for what is flagged (:func:`evalcore.pointwise.recommend.recommendations`)."""
        return recommendations(self.results)

    def to_frame(self) -> pd.DataFrame:
        return self.records


@takes_table(RATINGS, "position", "perplexity", "text")
def bias_report(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    alpha: float = ALPHA,
    sections: Sequence[str] = SECTIONS,
    progress: Callable[[float], None] | None = None,
) -> pd.DataFrame:
    """Run every bias section the data supports, in one table with one flag rule.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by
        Grouping columns (e.g. ``language``), passed to every section.
    judges
        Judges to audit (default: all).
    n_boot, seed
        Bootstrap resamples over items (0: no intervals, no flags) and their seed (a whole number or a
        ``numpy.random.Generator``).
    level
        Confidence level of every interval.
    alpha
        False discovery rate of the flags: Benjamini-Hochberg across every tested row of the report.
    sections
        Which sections to run.
    progress
        Called with the fraction done.
    item, rater, kind, criterion, score, sample, position, perplexity, text
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Every section's rows in the layout :data:`COLUMNS` (``section, judge, criterion, *by, measure, estimate,
        ci_low, ci_high, n, test, p_value, q_value, flagged, opposite, note``; ``category`` after ``*by`` when a
        criterion is nominal), flagged across the whole report.
        A section the data cannot support is one row with measure ``not_available`` whose note says why.
        :class:`BiasReport` reads it (the flagged results, skipped sections and mitigations).

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = bias_report(ratings, n_boot=200, seed=0)
    >>> table.groupby("section")["flagged"].sum()
    section
    anchoring              1
    familiarity            4
    score_distribution    24
    self_consistency       0
    Name: flagged, dtype: int64
    >>> BiasReport(table).recommendations["finding"].iloc[0]
    'The judge rates low-perplexity (familiar) text higher than humans do.'
    """
    alpha = check_alpha(alpha)
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise DataError(f"unknown bias section '{unknown[0]}'", fix="choose from: " + ", ".join(SECTIONS))
    opts = {"by": tuple(by), "judges": judges, "n_boot": n_boot, "seed": seed, "level": level}
    steps: list[tuple[str, Callable[[], pd.DataFrame]]] = []
    if "familiarity" in sections:
        steps.append(("familiarity", lambda: familiarity.familiarity(ratings, **opts)))
    if "score_distribution" in sections:
        steps.append(("score_distribution", lambda: scale_use.scale_use(ratings, **opts)))
        steps.append(("score_distribution", lambda: scale_use.round_number_bias(ratings, **opts)))
    if "anchoring" in sections:
        steps.append(("anchoring", lambda: anchoring.anchoring(ratings, **opts)))
    if "self_consistency" in sections:
        steps.append(("self_consistency", lambda: consistency.self_consistency(ratings, **opts)))
        for col in consistency.variant_columns(ratings):
            steps.append(("self_consistency",
                          lambda col=col: consistency.variant_agreement(ratings, variant_column=col, **opts)))
    parts = []
    for i, (section, run) in enumerate(steps):
        try:
            # A stray score near 1e308 overflows sums to inf; the stray-score note says why, not numpy.
            with np.errstate(over="ignore", invalid="ignore"):
                parts.append(run())
        except BiasNotApplicable as exc:
            parts.append(pd.DataFrame([{"section": section, "measure": NOT_AVAILABLE, "flagged": False,
                                        "opposite": False, "note": exc.problem}]))
        if progress:
            progress((i + 1) / len(steps))
    # A nominal criterion adds the category column, after the groups; a table of numbers keeps its layout.
    extra = [CATEGORY] if any(CATEGORY in p.columns for p in parts) else []
    cols = [*COLUMNS[:3], *by, *extra, *COLUMNS[3:]]
    records = pd.concat([p.reindex(columns=cols) for p in parts], ignore_index=True) if parts else \
        pd.DataFrame(columns=cols)
    # Scale use and round numbers both say that a nominal criterion has no order: once per section and criterion.
    said = (records["measure"] == NOT_AVAILABLE) & records["criterion"].notna()
    records = records[~(said & records.duplicated(["section", "criterion", "measure"]))].reset_index(drop=True)
    for c in ("flagged", "opposite"):
        records[c] = records[c].astype("boolean").fillna(False).astype(bool)
    for c in ("judge", "test", *extra):
        records[c] = records[c].astype(object).where(records[c].notna(), None)
    stray = scale_use.stray_scores(ratings)
    if stray:  # every row of the criterion says so: its scale (top score, range, grid) comes from that score
        crit = records["criterion"].astype(object)
        records["note"] = [join_notes(n if isinstance(n, str) else "", stray[str(c)]) if str(c) in stray else n
                           for n, c in zip(records["note"].astype(object), crit)]
    return apply_fdr(records, alpha=alpha)
