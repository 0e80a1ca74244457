"""evalcore: audit LLM judges against human annotators.

The notebook API: every analysis takes a tidy table first and returns a table
(``docs/api.md``). Each name loads its module on first use, so that ``import evalcore``
stays fast and pages that fit no model never load PyMC.

======================  ==============================================================
Data                    :func:`read` (the validated table), :func:`load`, :func:`load_samples`,
                        :func:`read_table`, :func:`validate`, :class:`Workspace`,
                        :class:`DataError`
Agreement (ratings)     :func:`agreement`, :func:`count_units`, :func:`class_distribution`,
                        :func:`confusion_matrix`, :func:`rater_pair_matrix`, :func:`judge_leaderboard`,
                        :func:`meta_correlations`, :func:`system_means`
Bias (ratings)          :func:`bias_report`; its sections :func:`familiarity`,
                        :func:`perplexity_by_score`, :func:`anchoring`,
                        :func:`criterion_correlations`, :func:`conditional_distribution`,
                        :func:`scale_use`, :func:`score_frequencies`,
                        :func:`round_number_bias`, :func:`self_consistency`,
                        :func:`variant_agreement`
Alt-Test (ratings)      :func:`alt_test`: can the judge replace the annotators?
True scores (PPI++)     :func:`ppi_estimates` (ratings), :func:`ppi_win_rates` (comparisons): the humans'
                        mean, pass rate or win rate from a few human labels; :func:`ppi_budget`,
                        :func:`win_rate_budget` (labels to buy), :func:`ppi_what_if`,
                        :func:`win_rate_what_if`, :func:`ppi_plan`, :func:`win_rate_plan`,
                        :func:`ppi_label_check`, :func:`win_rate_label_check`, :func:`ppi_items`,
                        :func:`ppi_pair_items`
Comparisons             :func:`pairs`, :func:`judge_accuracy`, :func:`win_rates` (BWRS or
                        Dawid-Skene; :func:`estimate_all` gives its ``WinRate`` objects, for
                        plots), :func:`position_report`, :func:`fit_calibrations`
Superficial quality     :func:`superficial_accuracy` (comparisons),
                        :func:`superficial_correlation` (ratings), :func:`length_controlled`
Report                  :func:`html_report`
======================  ==============================================================

>>> import evalcore
>>> comparisons = evalcore.read("sample_data/comparisons_pairwise.csv")
>>> accuracy = evalcore.judge_accuracy(comparisons, n_boot=200, seed=0)
>>> print(accuracy[["judge", "estimate", "ci_low", "ci_high", "n"]].round(3).to_string(index=False))
               judge  estimate  ci_low  ci_high   n
    gpt-3.5/pairwise     0.601   0.568    0.639 858
      gpt-4/pairwise     0.788   0.761    0.812 858
llama-2-70b/pairwise     0.490   0.458    0.526 858
"""

from __future__ import annotations

import importlib
import warnings

from . import cachedir

# ArviZ (imported by PyMC and by the Dawid-Skene diagnostics) announces its refactor with a FutureWarning on
# import; it is not the analyst's concern. Only that module's FutureWarnings are hidden.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"arviz(\..*)?$")

# Compiled kernels are cached in evalcore's user cache folder (EVALCORE_CACHE_DIR), which works for a read-only
# install; numba reads the folder when first imported, and every evalcore module that imports numba runs after this.
cachedir.use_numba_cache()

#: name -> the module that defines it
_WHERE = {
    "DataError": "evalcore.errors",
    "read": "evalcore.data.ingest", "load": "evalcore.data.ingest", "load_samples": "evalcore.data.ingest",
    "read_table": "evalcore.data.io", "validate": "evalcore.data.validation",
    "Workspace": "evalcore.data.store",
    "agreement": "evalcore.pointwise.agreement.table", "count_units": "evalcore.pointwise.agreement.units",
    "class_distribution": "evalcore.pointwise.distributions", "confusion_matrix": "evalcore.pointwise.confusion",
    "rater_pair_matrix": "evalcore.pointwise.rater_pairs",
    "judge_leaderboard": "evalcore.pointwise.leaderboard",
    "meta_correlations": "evalcore.pointwise.meta", "system_means": "evalcore.pointwise.meta",
    "bias_report": "evalcore.pointwise.bias_report",
    "familiarity": "evalcore.pointwise.familiarity", "perplexity_by_score": "evalcore.pointwise.familiarity",
    "anchoring": "evalcore.pointwise.anchoring", "criterion_correlations": "evalcore.pointwise.anchoring",
    "conditional_distribution": "evalcore.pointwise.anchoring",
    "scale_use": "evalcore.pointwise.scale_use", "score_frequencies": "evalcore.pointwise.scale_use",
    "round_number_bias": "evalcore.pointwise.scale_use",
    "self_consistency": "evalcore.pointwise.consistency", "variant_agreement": "evalcore.pointwise.consistency",
    "superficial_correlation": "evalcore.pointwise.superficial",
    "alt_test": "evalcore.pointwise.alt_test",
    "ppi_items": "evalcore.pointwise.ppi", "ppi_estimates": "evalcore.pointwise.ppi",
    "ppi_budget": "evalcore.pointwise.ppi", "ppi_what_if": "evalcore.pointwise.ppi",
    "ppi_plan": "evalcore.pointwise.ppi", "ppi_label_check": "evalcore.pointwise.ppi",
    "ppi_pair_items": "evalcore.pairwise.ppi", "ppi_win_rates": "evalcore.pairwise.ppi",
    "win_rate_budget": "evalcore.pairwise.ppi", "win_rate_what_if": "evalcore.pairwise.ppi",
    "win_rate_plan": "evalcore.pairwise.ppi", "win_rate_label_check": "evalcore.pairwise.ppi",
    "pairs": "evalcore.pairwise.pairs", "judge_accuracy": "evalcore.pairwise.accuracy",
    "win_rates": "evalcore.pairwise.winrate", "estimate_all": "evalcore.pairwise.winrate",
    "position_report": "evalcore.pairwise.position", "fit_calibrations": "evalcore.pairwise.position",
    "superficial_accuracy": "evalcore.pairwise.superficial", "length_controlled": "evalcore.pairwise.superficial",
    "system_leaderboard": "evalcore.pairwise.leaderboard_systems",
    "ranking_agreement": "evalcore.pairwise.leaderboard_systems", "rank_moves": "evalcore.pairwise.leaderboard_systems",
    "ppi_leaderboard": "evalcore.pairwise.ppi_bt",
    "html_report": "evalcore.report.html",
}

__all__ = sorted(_WHERE)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalcore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
