"""evalcore: audit LLM judges against human annotators.

The public entry points, importable from here (each loads its module on first use, so that
``import evalcore`` stays fast and pages that fit no model never load PyMC):

=======================  ===========================================================
Data                     :func:`load`, :func:`load_samples`, :func:`read_table`,
                         :func:`validate`, :class:`Workspace`, :class:`DataError`
Agreement (pointwise)    :func:`agreement`, :func:`count_units`, :func:`class_distribution`
Bias (pointwise)         :func:`bias_report`, :func:`familiarity`, :func:`anchoring`,
                         :func:`scale_use`, :func:`round_number_bias`,
                         :func:`self_consistency`, :func:`variant_agreement`
Win rates (pairwise)     :func:`pairs`, :func:`pair_data`, :func:`estimate`,
                         :func:`estimate_all`, :func:`bwrs`, :func:`dawid_skene`
Shared core              :mod:`evalcore.stats` (bootstrap, intervals, the flag rule)
=======================  ===========================================================

>>> import evalcore
>>> sorted(evalcore.__all__)[:3]
['DataError', 'Workspace', 'agreement']
"""

from __future__ import annotations

import importlib
import warnings

# ArviZ (imported by PyMC and by the Dawid-Skene diagnostics) announces its refactor with a FutureWarning on
# import; it is not the analyst's concern. Only that module's FutureWarnings are hidden.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"arviz(\..*)?$")

#: name -> the module that defines it
_WHERE = {
    "DataError": "evalcore.errors",
    "load": "evalcore.data.ingest", "load_samples": "evalcore.data.ingest",
    "read_table": "evalcore.data.io", "validate": "evalcore.data.schema",
    "Workspace": "evalcore.data.store",
    "agreement": "evalcore.pointwise.agreement", "count_units": "evalcore.pointwise.agreement",
    "class_distribution": "evalcore.pointwise.distributions",
    "bias_report": "evalcore.pointwise.bias_report",
    "familiarity": "evalcore.pointwise.familiarity", "anchoring": "evalcore.pointwise.anchoring",
    "scale_use": "evalcore.pointwise.scale_use", "round_number_bias": "evalcore.pointwise.scale_use",
    "self_consistency": "evalcore.pointwise.consistency", "variant_agreement": "evalcore.pointwise.consistency",
    "pairs": "evalcore.pairwise.pairs", "pair_data": "evalcore.pairwise.pairs",
    "estimate": "evalcore.pairwise.winrate", "estimate_all": "evalcore.pairwise.winrate",
    "bwrs": "evalcore.pairwise.bwrs", "dawid_skene": "evalcore.pairwise.dawid_skene",
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
