"""Pairwise analyses (two outputs per item): the per-pair data, calibrated win rates (BWRS,
Bayesian Dawid-Skene); position bias and superficial-quality subtraction will live here too."""
