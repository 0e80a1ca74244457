"""What the sections of the bias report share: their table layout, and the error of a section the data cannot support.

Every summary function of :mod:`evalcore.pointwise.familiarity`, :mod:`evalcore.pointwise.anchoring`,
:mod:`evalcore.pointwise.scale` and :mod:`evalcore.pointwise.consistency` returns a table in the
layout :data:`RESULT_COLUMNS`, built with :class:`SectionTable` (the one result table of
:mod:`evalcore.stats` with ``section`` and ``criterion`` in front), and
:func:`evalcore.pointwise.bias_report.bias_report` puts them together.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import DataError
from ..stats import RESULT_COLUMNS as _CONTRACT
from ..stats import ResultTable

#: The layout of every table of the bias report: ``section, judge, criterion``, the caller's ``by``
#: columns, then the columns of the result contract (:data:`evalcore.stats.RESULT_COLUMNS`).
RESULT_COLUMNS: tuple[str, ...] = ("section", "judge", "criterion", *_CONTRACT[1:])


class BiasNotApplicable(DataError):
    """The data cannot support this analysis (no perplexity or text; fewer than two criteria)."""


class SectionTable(ResultTable):
    """A :class:`evalcore.stats.ResultTable` in the layout of the bias report (:data:`RESULT_COLUMNS`)."""

    def __init__(self, section: str, by: Sequence[str], *, n_boot: int, level: float) -> None:
        super().__init__(["section", "judge", "criterion", *by], n_boot=n_boot, level=level)
        self.section, self.by = section, list(by)

    def row(self, judge: str | None, criterion: str | None, group: tuple, measure: str, values, n: int,
            **kwargs) -> None:
        """One row for ``judge`` (None: the humans), ``criterion`` (None: over criteria) and the ``by``
        values ``group``; ``kwargs`` as in :meth:`evalcore.stats.ResultTable.add`."""
        keys = {"section": self.section, "judge": judge, "criterion": criterion, **dict(zip(self.by, group))}
        self.add(keys, measure, values, n, **kwargs)
