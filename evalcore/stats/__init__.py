"""The shared statistical core: one item bootstrap, one result table, one flag rule, small helpers.

Every analysis in :mod:`evalcore.pointwise` and :mod:`evalcore.pairwise` draws its resamples,
intervals and p-values from :mod:`.bootstrap`, builds its table with :mod:`.results` and flags it
with :func:`.results.apply_fdr` (direction-aware tests, Benjamini-Hochberg across a report), and divides
with :func:`.numeric.safe_div`. :mod:`.kendall` computes Kendall's tau-b of item-weighted
observations for every resample at once, :mod:`.spearman` Spearman's rho likewise.
"""
