"""Pairwise analyses (two outputs per item): the per-pair data, judge accuracy, calibrated win rates (BWRS,
Bayesian Dawid-Skene) and superficial-quality subtraction with its length-controlled alternative; position
bias will live here too."""
