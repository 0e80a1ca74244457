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
PPI_METHOD = """
**The estimate.** The judge labels all N + n items, the humans n of them, a random sample. With Y the humans'
answer on an item and Ŷ the judge's, PPI++ estimates the humans' mean over all items as
θ = λ·mean of Ŷ over the N unlabelled items + mean of (Y − λŶ) over the n labelled ones
(Angelopoulos et al., Science 2023; Angelopoulos, Duchi & Zrnic 2023). The second term measures the judge's error
where both answered and removes it: whatever the judge's bias, θ targets the humans' mean.

**λ, the weight given to the judge,** is tuned to make the interval narrowest: λ = Cov(Y, Ŷ) / ((1 + n/N)·Var(Ŷ)),
clipped to [0, 1]. A judge that does not track the humans gets λ near 0, and the estimate falls back to the humans'
own; plain PPI always uses λ = 1.

**The interval** is θ ± z·√(Var(λŶ)/N + Var(Y − λŶ)/n), as `ppi_py.ppi_mean_ci` computes it. Its **worth in
human labels** is n times the ratio of the humans-only variance to PPI++'s: the labels the humans alone would
need for the same width. Per group (strata), the overall estimate weights each group by its share of the items.

**The assumption.** The intervals hold only when the labelled items are a random sample of all items. Choosing
which items to label from the judge's answers (or by difficulty, or one group first) breaks them: plan the next
labels with the seeded random sample below, never by the judge's answer.
"""

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

#: Three lines at the top of each page: what to look at first, how to read a number, what a flag means.
HOW_TO_READ = {
    "home": (
        "Load the sample data or upload a file of judge scores and human annotations (one row per judgment, or "
        "one column per rater); the summary says which analyses it unlocks.",
        "Each page in the sidebar answers one question: can the judge be trusted (Agreement), how is it biased "
        "(Bias, Superficial quality, Position bias), can it replace the annotators (Alt-Test), what are the true "
        "numbers (Win rates, True scores), and which system is best (Leaderboard).",
        "**Build the HTML report** under the dataset's summary: one file to hand over, with the verdict per judge "
        "first and the evidence below it.",
    ),
    "agreement": (
        "Compare the judge's row with the humans' row: a judge can stand in for an annotator where it agrees with "
        "the humans about as well as they agree with each other.",
        "Every estimate has its 95% interval printed with it and the items behind it (n) in the table; ▼ marks "
        "a group where the judge agrees significantly less than the humans do (flagged).",
        "On a skewed scale kappa can be near 0 while percent agreement is high; read percent agreement and "
        "Gwet's AC1 together (the measures are explained at the bottom of the page).",
    ),
    "bias": (
        "**What we found** lists only the flagged biases, each with what to do about it and the paper behind "
        "the advice; everything else is shown in the tabs, not flagged.",
        "In the plots each dot is the judge minus the humans on the same items, with its 95% interval: 0 is no "
        "bias, a filled diamond is flagged, a hollow grey circle is significant in the harmless direction.",
        "A flag means the test in the harmful direction stays significant after controlling false discoveries "
        "at 5% across the whole page.",
    ),
    "winrate": (
        "The raw win rate is the share of items on which the judge prefers the first system; the judge's "
        "mistakes pull it toward 50%.",
        "BWRS and Dawid-Skene correct it with a share of the humans' labels (the slider); read the posterior "
        "mode and its 95% interval, and compare with the humans' own win rate where it is shown.",
        "The error curve shows how many human labels the correction needs; the explanation of p, k, q0 and q1 "
        "is at the bottom of the page.",
    ),
    "superficial": (
        "The curve shows how well the judge matches the humans as α, the share of superficial quality "
        "subtracted from its score, grows from 0 (the raw judge) to 1.",
        "A curve that rises means the judge rewarded what only looks good; the star is the α that "
        "cross-validation picks, and the page opens there.",
        "Trust a gain only where the change's 95% interval in the table excludes 0 and the held-out "
        "(cross-validated) result agrees.",
    ),
    "systems": (
        "The sentence at the top answers 'would we ship the same system if we trusted this judge?': the same top "
        "system or not, how close its order is to the humans' (Kendall's tau), and the largest move.",
        "In the plot, each row is a system in the humans' order; where a judge's marker sits far from the humans' "
        "with intervals that do not overlap, the judge ranks that system differently.",
        "Style control asks who wins at equal length (and markdown): a judge that moves a lot under it was "
        "rewarding style.",
    ),
    "ppi": (
        "The green lines say what the judge is worth: with PPI++, each human label counts as that many, because the "
        "judge's labels on every item carry the rest of the information.",
        "In the plot, compare PPI++ (diamond) with humans only: the same target, a narrower interval when the judge "
        "tracks the humans. The judge alone is often off: that gap is the judge's bias, which PPI++ removes.",
        "Everything rests on the labelled items being a random sample of the items; the check below looks for "
        "signs that they were not.",
    ),
    "alt_test": (
        "The sentence at the top is the verdict: a judge passes when it beats at least half of the annotators, "
        "each tested by leaving that annotator out and asking who agrees better with the rest.",
        "Epsilon is the disadvantage the judge is allowed for being cheaper: the paper suggests 0.2 when the "
        "annotators are experts, 0.15 when skilled, 0.1 for crowd workers. Choose it before you look.",
        "To compare judges, read the advantage probability (with its 95% interval): the chance that the judge is at "
        "least as good as a randomly chosen annotator on an item.",
    ),
    "position": (
        "Every pair was judged in both orders: a trustworthy judge gives the same verdict either way and sends "
        "half of its verdicts to the output shown first (0.5).",
        "Each dot is a share of items with its 95% interval; a first-position preference is flagged only when "
        "significant after controlling false discoveries at 5%.",
        "Where the judge gives probabilities, the calibrations (PriDe, CalibraEval) remap them; the before-and-"
        "after table says whether a calibration removes the preference without costing accuracy.",
    ),
}


#: The captions under the pages' figures and tables, by page and section (the pages stay thin).
CAPTIONS = {
    "agreement_heatmap": (
        "Each cell: the estimate and, below it, its 95% interval; hover for n (also in 'All numbers'). ▼ "
        'marks flagged cells: the judge agrees with humans less than humans agree with each other (the '
        'pairwise agreement gap), by the rule at the top. n counts units: an item rated on several criteria '
        'counts once per criterion.'),
    "agreement_classes": (
        'Units with 2+ annotators, split by whether all (full), some (partial) or none of them gave the same '
        "score. Bars are the share of each score: the humans' own ratings next to each judge's. A judge that "
        "gives the top score where humans disagree has tall top-score bars under 'partial' and 'none'."),
    "agreement_leaderboard": (
        "Each judge's agreement with the humans (the mean human score), with a 95% interval. 'minus the best'"
        ' is a paired bootstrap: the same resampled items for every judge; a judge is called worse than the '
        'best only when that interval excludes 0. Judges whose intervals overlap are not distinguishable on '
        'this data.'),
    "agreement_system_means": (
        "One point per system: its mean human score against the judge's mean score on the same items, with "
        '95% intervals. Points on a rising line mean the judge ranks the systems as the humans do; the dashed'
        ' line is where the two means are equal.'),
    "agreement_rater_pairs": (
        'Rows: annotators, then judges; columns: annotators. Each cell is computed on the units both rated '
        '(n). Weighted kappas give partial credit to near misses (linear or quadratic in the score).'),
    "superficial_curve": (
        "Each line is a group with its 95% band; the dashed line is the slider's α and the star the α chosen "
        'by 5-fold cross-validation (on training folds of items; held-out results in the table). The page '
        'opens at the cross-validated α (the median over the groups).'),
    "superficial_flipped": (
        'Right = 1, wrong = 0, a tie = 0.5 (half right). Pick an item below to read its two outputs.'),
    "superficial_length_controlled": (
        'Per system pair, the share of items the first system wins (ties count half), with 95% item-bootstrap'
        " intervals: the judge's raw win rate; AlpacaEval's length-controlled win rate (their "
        'length_controlled_minimal GLM, Dubois et al. 2024: an L1-penalised, cross-validated logistic '
        "regression of the judge's preference on tanh of the standardised difference in Q, predicted at no "
        "difference), fitted for each pair on its own items, so no other pair changes it; AlpacaEval's "
        'default GLM also has an instruction-difficulty term, which needs their own data for their own '
        "instructions and is left out here; the win rate after subtracting Q at the slider's α; and the "
        "humans' own win rate where they judged the items, the number the others should approach."),
    "superficial_cv": (
        'α is chosen on four fifths of the items and scored on the fifth left out, for each fifth in turn. A '
        'held-out result close to the raw one means the gain on the curve is not reliable.'),
}
