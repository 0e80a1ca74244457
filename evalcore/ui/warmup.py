"""Background warm-up: load what the current dataset's pages will compute with, while the analyst reads.

Each warm-up runs once per server in a daemon thread. ``EVALCORE_WARMUP=0`` turns them all off:
the test suite does, because a thread that outlives one test races with the next test's capture
of stdout and stderr.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import streamlit as st

from ..columns import COMPARISONS, RATINGS
from .state import current_info, current_table


def enabled() -> bool:
    """Whether background warm-ups may run (``EVALCORE_WARMUP`` is not ``0``)."""
    return os.environ.get("EVALCORE_WARMUP", "1") != "0"


@st.cache_resource(show_spinner=False)
def _background(name: str, _load: Callable[[], None]) -> threading.Thread:
    """Run ``_load`` in a daemon thread, once per server and ``name`` (a later call returns the same thread)."""
    t = threading.Thread(target=_load, name=f"evalcore-{name}-warm-up", daemon=True)
    t.start()
    return t


def _warm_winrate() -> threading.Thread:
    from ..pairwise.dawid_skene import warm_up

    # numba, the Dawid-Skene kernel, nutpie's compiled core and the KDE while the analyst reads the page:
    # ~3 s the first time on a machine (numba compiles and caches on disk), under a second after.
    return _background("ds", warm_up)


def _warm_agreement() -> threading.Thread:
    from ..pointwise.agreement.passes import warm_up

    # numba's compiled passes of the agreement table: ~2.5 s the first time on a machine, ~0.4 s after.
    return _background("agreement", warm_up)


def _warm_superficial() -> threading.Thread:
    from ..pointwise.superficial import warm_up

    # the pointwise superficial-quality curve's compiled pass: ~5 s the first time on a machine, ~0.3 s after.
    return _background("superficial", warm_up)


def _warm_length_controlled() -> threading.Thread:
    from ..pairwise.superficial import warm_up

    # scikit-learn's liblinear and the compiled resample fits of the length-controlled win rate: ~1.4 s.
    return _background("length-controlled", warm_up)


def _load_figures() -> None:
    from ..report import plots  # noqa: F401  (plotly.express: ~0.6 s to import)


def _warm_figures() -> threading.Thread:
    return _background("figures", _load_figures)


def warm_up_winrate() -> None:
    """Start loading the Dawid-Skene sampler in the background (once per server)."""
    if enabled():
        _warm_winrate()


def warm_up_at_start() -> None:
    """Start, from ``app.py`` on whichever page the analyst opens first, the warm-ups the current dataset needs.

    Decided from the dataset's row counts alone (no table is read on a page that may not need it): plotly's
    figure code always, the agreement table's compiled passes for ratings of at least
    :data:`evalcore.pointwise.agreement.passes.COMPILED_FROM` rows, the pointwise superficial-quality curve's pass
    for any ratings, the Dawid-Skene sampler and the length-controlled win rate's fits for comparisons.
    Each warm-up runs once per server, in the background; a later call costs a dictionary look-up.
    """
    if not enabled():
        return
    from ..pointwise.agreement.passes import COMPILED_FROM

    _warm_figures()
    info = current_info()
    if info is None:
        return
    if info.tables.get(RATINGS, 0) >= COMPILED_FROM:
        _warm_agreement()
    if info.tables.get(RATINGS, 0) > 0:
        _warm_superficial()
    if info.tables.get(COMPARISONS, 0) > 0:
        _warm_winrate()
        _warm_length_controlled()


def warm_up_for_current() -> None:
    """Load what the current dataset's pages will compute with, in the background.

    The landing page calls it: plotly's figure code (every page draws with it), the agreement table's
    compiled passes when the ratings are large
    enough to use them (:data:`evalcore.pointwise.agreement.passes.COMPILED_FROM` rows), and the
    Dawid-Skene sampler when there are system pairs, so that the first table or fit does not
    wait for them.
    """
    from ..pointwise.agreement.passes import COMPILED_FROM

    if enabled():
        _warm_figures()  # every page draws with plotly
    ratings = current_table(RATINGS)
    if enabled() and ratings is not None and len(ratings) >= COMPILED_FROM:
        _warm_agreement()
    frame = current_table(COMPARISONS)
    if frame is None or "system_a" not in frame.columns or "system_b" not in frame.columns:
        return
    warm_up_winrate()
