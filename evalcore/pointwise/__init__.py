"""Pointwise analyses (one score per item and rater): agreement and class distributions, and the bias
sections (familiarity, anchoring, scale use, self-consistency) with their report and recommendations."""
