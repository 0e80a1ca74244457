"""The only Streamlit code outside the pages and ``app.py``: what they use, gathered here.

``app.py`` calls :func:`shell` before every page (page config + the shared sidebar). A page reads the
current dataset with :func:`require_table`, asks one declared analysis for its result
(``ui.AGREEMENT.result(...)``), and draws it with :mod:`evalcore.report.plots`.

Modules
-------
:mod:`~evalcore.ui.state`
    The workspace, this browser tab's dataset (session state and the URL), the sidebar, the selectors
    that follow the dataset (:func:`choice`, :func:`choices`, :func:`in_url` for those the address bar
    keeps), :func:`guard`, downloads.
:mod:`~evalcore.ui.layout`
    What every page draws the same way: the "how to read this page" lines, figures (with the download
    format chosen in the sidebar), long groupings a few at a time.
:mod:`~evalcore.ui.messages`
    The library's error messages as the app shows them (fixes that name app controls, not CLI options).
:mod:`~evalcore.ui.cache`
    Every cache: Streamlit's for tables and inputs, and the memory + workspace result store.
:mod:`~evalcore.ui.analyses`
    One :class:`Analysis` declaration per analysis (name, version, parameters, compute function).
:mod:`~evalcore.ui.warmup`
    Background threads that load compiled code before a page needs it.
:mod:`~evalcore.ui.loading`
    The landing page's panels (sample data, upload, column mapping, saved datasets, summary).
"""

from __future__ import annotations

from .analyses import (
    AGREEMENT,
    ALT_TEST,
    BIAS,
    CALIBRATIONS,
    CLASS_DISTRIBUTION,
    CONFUSION,
    CONDITIONAL_DISTRIBUTION,
    CRITERION_CORRELATIONS,
    LEADERBOARD,
    LENGTH_CONTROLLED,
    META,
    SYSTEM_MEANS,
    PERPLEXITY_BY_SCORE,
    POSITION,
    PPI,
    PPI_BUDGET,
    PPI_CHECK,
    PPI_PLAN,
    PPI_WHAT_IF,
    RATER_PAIRS,
    REPORT,
    SCORE_FREQUENCIES,
    SUPERFICIAL_CURVE,
    SYSTEMS,
    WINRATE,
    WINRATE_ALL,
    WINRATE_CURVE,
    Analysis,
    comparison_pairs,
    informative_pair,
    pair_data,
    superficial_data,
    unit_filter,
    units,
)
from .layout import figure, how_to_read, lazy_tabs, paginate
from .messages import app_message
from .state import (
    FLAG_RULE,
    TABLE_LABEL,
    AuditOptions,
    choice,
    choices,
    current_info,
    current_table,
    datasets,
    download_csv,
    guard,
    home_link,
    is_sample,
    no_dataset_message,
    in_url,
    page_link,
    require_table,
    set_current,
    shell,
    workspace,
)
from .warmup import warm_up_at_start, warm_up_for_current, warm_up_winrate

__all__ = [
    # state
    "FLAG_RULE", "AuditOptions", "TABLE_LABEL", "choice", "choices", "current_info", "current_table", "datasets", "download_csv", "guard",
    "home_link", "is_sample", "in_url", "no_dataset_message", "page_link", "require_table", "set_current", "shell", "workspace",
    # layout
    "figure", "how_to_read", "lazy_tabs", "paginate",
    # messages
    "app_message",
    # analyses
    "Analysis", "AGREEMENT", "CLASS_DISTRIBUTION", "CONFUSION", "BIAS", "SCORE_FREQUENCIES", "PERPLEXITY_BY_SCORE",
    "CRITERION_CORRELATIONS", "CONDITIONAL_DISTRIBUTION", "WINRATE", "WINRATE_ALL", "WINRATE_CURVE",
    "SUPERFICIAL_CURVE", "LENGTH_CONTROLLED", "POSITION", "CALIBRATIONS", "META", "SYSTEM_MEANS", "LEADERBOARD",
    "RATER_PAIRS", "REPORT", "ALT_TEST", "PPI", "PPI_CHECK", "PPI_BUDGET", "PPI_WHAT_IF", "PPI_PLAN", "SYSTEMS",
    "unit_filter", "units", "comparison_pairs", "informative_pair", "pair_data", "superficial_data",
    # warm-up
    "warm_up_at_start", "warm_up_for_current", "warm_up_winrate",
]
