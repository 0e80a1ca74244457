"""evalcore: the landing page. Load data (sample, upload or saved), map its columns, see what it unlocks."""

import streamlit as st

from evalcore import ui
from evalcore.ui import loading

ui.page("evalcore", icon=":material/balance:")

st.title("evalcore")
st.markdown(
    "Audit an LLM judge against human annotators: **where it can be trusted** (agreement per language, "
    "task and criterion), **how it is biased** (score skew, familiarity, anchoring, position bias), and "
    "**what the corrected numbers are** (calibrated win rates). Every figure comes with its sample size "
    "and an interval."
)

with ui.guard("Opening the workspace"):
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

    pending = loading.pending_id()
    if pending:
        st.divider()
        loading.mapping_panel(pending)
    elif ui.current_info() is not None:
        st.divider()
        loading.summary_panel()
        ui.warm_up_for_current()
    else:
        st.info("Start with **Load the sample data**: one click, and every page has something to show.",
                icon=":material/arrow_upward:")
