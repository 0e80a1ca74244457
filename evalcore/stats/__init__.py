"""The shared statistical core: one item bootstrap, one result table, one flag rule, small helpers.

Every analysis in :mod:`evalcore.pointwise` and :mod:`evalcore.pairwise` draws its resamples,
intervals and p-values from :mod:`.bootstrap`, builds its table with :mod:`.results` and flags it
with :func:`.results.apply_fdr` (direction-aware tests, Benjamini-Hochberg across a report), and divides
with :func:`.numeric.safe_div`. :mod:`.kendall` computes Kendall's tau-b of item-weighted
observations for every resample at once, :mod:`.spearman` Spearman's rho likewise.
"""

from .bootstrap import (
    ALTERNATIVES, Alternative, cell_rng, check_level, check_resamples, item_weights, p_value, percentile_interval,
    resample_blocks, resample_counts, root_seed, z_p_value,
)
from .kendall import tau_b
from .spearman import spearman_rho
from .numeric import codes, join_notes, safe_div, zero_div
from .results import (
    ALPHA, CONSTANT_NOTE, RESULT_COLUMNS, SPARSE_NOTE, TEST_COLUMNS, ResultTable, apply_fdr, benjamini_hochberg, check_alpha, tidy,
)

__all__ = [
    "ALPHA", "ALTERNATIVES", "Alternative", "CONSTANT_NOTE", "RESULT_COLUMNS", "SPARSE_NOTE", "TEST_COLUMNS", "ResultTable",
    "apply_fdr", "benjamini_hochberg", "cell_rng", "check_alpha", "check_level", "check_resamples", "codes",
    "item_weights", "join_notes", "p_value", "percentile_interval", "resample_blocks", "resample_counts", "root_seed", "safe_div",
    "spearman_rho", "tau_b", "tidy", "z_p_value", "zero_div",
]
