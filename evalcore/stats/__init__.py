"""The shared statistical core: one item bootstrap, one result table, one flag rule, small helpers.

Every analysis in :mod:`evalcore.pointwise` and :mod:`evalcore.pairwise` draws its resamples,
intervals and p-values from :mod:`.bootstrap`, builds its table with :mod:`.results`, and divides
with :func:`.numeric.safe_div`. :mod:`.kendall` computes Kendall's tau-b of item-weighted
observations for every resample at once.
"""

from .bootstrap import (
    ALTERNATIVES, Alternative, cell_rng, check_level, check_resamples, item_weights, p_value, percentile_interval,
    resample_counts, root_seed,
)
from .kendall import tau_b
from .numeric import codes, join_notes, safe_div, zero_div
from .results import RESULT_COLUMNS, SPARSE_NOTE, ResultTable, flag, tidy

__all__ = [
    "ALTERNATIVES", "Alternative", "RESULT_COLUMNS", "SPARSE_NOTE", "ResultTable", "cell_rng", "check_level",
    "check_resamples", "codes", "flag", "item_weights", "join_notes", "p_value", "percentile_interval",
    "resample_counts", "root_seed", "safe_div", "tau_b", "tidy", "zero_div",
]
