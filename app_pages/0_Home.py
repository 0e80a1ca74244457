"""Home, the landing page (``app.py`` serves it at the root URL). Load data (sample, upload or saved), map its
columns, see what it unlocks.

Each section, and the evalcore function behind it:

- :func:`load_tabs`: the panels of :mod:`evalcore.ui.loading`; the sample is
  :func:`evalcore.data.ingest.load_samples`, an upload is read by :func:`evalcore.data.io.read_table` and
  :func:`evalcore.data.ingest.ingest_frame` (or a preset, :mod:`evalcore.data.presets`), and every dataset is
  kept by :class:`evalcore.data.store.Workspace`.
- :func:`current_section`: the column mapping of a pending upload, or the current dataset's summary
  (:func:`evalcore.data.summary.summarize`) and what it unlocks (:func:`evalcore.data.summary.unlocks`).
"""

import streamlit as st

from evalcore import ui
from evalcore.ui import loading


def header() -> None:
    st.title("evalcore")
    st.markdown(
        "Audit an LLM judge against human annotators: **where it can be trusted** (agreement per language, "
        "task and criterion), **how it is biased** (score skew, familiarity, anchoring, self-consistency), and "
        "**what the corrected numbers are** (calibrated win rates). Every figure comes with its sample size "
        "and an interval. The dataset you open here is this browser tab's own: other people using the app at "
        "the same time keep theirs, and the link in the address bar reopens it."
    )
    ui.how_to_read("home")


def load_tabs() -> None:
    """Three ways to get data: the sample, an upload, a saved dataset."""
    n_saved = len(ui.datasets())
    tab_sample, tab_upload, tab_saved = st.tabs(
        [":material/science: Sample data", ":material/upload: Upload a file", f":material/folder: Saved datasets ({n_saved})"]
    )
    with tab_sample:
        loading.sample_panel()
    with tab_upload:
        loading.upload_panel()
    with tab_saved:
        loading.saved_panel()


def current_section() -> None:
    """The pending upload's column mapping, else this tab's dataset's summary, else where to start."""
    pending = loading.pending_id()
    if pending:
        st.divider()
        loading.mapping_panel(pending)
    elif ui.current_info() is not None:
        st.divider()
        loading.summary_panel()
        ui.warm_up_for_current()
    else:
        st.info(ui.no_dataset_message(home=True), icon=":material/arrow_upward:")


def main() -> None:
    header()
    with ui.guard("Opening the workspace"):
        load_tabs()
        current_section()


main()
