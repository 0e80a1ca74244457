"""The "how to read this" texts of the pages: what each measure means, in plain language (no statistics here)."""

#: The Agreement page's guide.
AGREEMENT = """
- **Percent agreement (PA)** is the share of annotator pairs that gave the same score, averaged over items
  (Fleiss' P_i). For a judge it is the share of items where the judge gives the human majority's score.
- **Kappa** (Fleiss, Cohen) rescales agreement by what chance would give: 0 is chance level, 1 perfect. Chance
  agreement comes from how the scores are spread. When almost every score is the top one, two raters agree by
  chance most of the time, so **kappa can be near 0 while PA is 90%**: this is the *kappa paradox* that Hada et
  al. warn about.
- **Gwet's AC1** and **PABAK** estimate chance agreement in a way that does not collapse on skewed scales, so
  they stay close to PA when raters really agree. Read PA and AC1 together; distrust a low kappa with a high PA.
- **Krippendorff's alpha** uses all pairable ratings, allows missing ones, and comes in nominal, ordinal and
  interval forms (the last two give partial credit to near misses).
- **Cohen's kappa (quadratic)**, **Kendall's tau-b** and **Spearman's rho** compare the judge with humans on
  the ordinal scale; tau and rho use the mean human score.
- Intervals are 95% percentile intervals from resampling items with replacement (seeded).
"""

#: The Win rates page's guide.
WIN_RATES = """
**p, k, q0, q1.** p is the share of items on which humans prefer the first system. A judge's raw win rate
k mixes p with the judge's mistakes: k = p·q0 + (1−p)·(1−q1), where q0 is how often the judge picks the
first system when it is really better and q1 the same for the second. Unless q0 = q1 = 1, k is pulled
toward 0.5 (and further if the judge favours one side), so two systems can look closer, or further apart,
than they are.

**BWRS** (Bayesian Win Rate Sampling, Gao et al. Algorithm 1) draws k, q0 and q1 from Beta posteriors and
solves the equation above for p: p = (k + q1 − 1)/(q0 + q1 − 1). Draws that give p outside (0, 1) are dropped.
It needs human labels to learn q0 and q1, and it is fragile when a judge is near chance (q0 + q1 ≈ 1).

**Bayesian Dawid-Skene** (their Model 1) treats the true winner of each item as unknown and learns p and
every judge's q0, q1 together from how the judges agree with each other and with the human labels it is
given. Here the unknown winners are summed out exactly, so a fit takes a fraction of a second instead of the
authors' ten minutes; R-hat and ESS say whether the sampler converged.

**The prior data ratio** is the share of this pair's human labels the methods may use. With more labels the
accuracies are known better and the estimate moves toward the humans' own win rate: the error curve shows
how many labels are enough. Gao et al. found about 30% sufficient on most of their datasets, and the
posterior mode more accurate than the mean.

**Another pair's labels** (out-of-distribution prior) help when this pair has no labels but a similar one
does; the prior is scaled to a total weight of two labels so that it cannot dominate. It misleads when the
judges' accuracies differ between the pairs.
                """
