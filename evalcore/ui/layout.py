"""What every page draws the same way: the three-line "how to read this page", figures with their download
format, and long groupings shown a few at a time.

These are display helpers only; the texts live in :mod:`evalcore.report.guide` (the HTML report uses them too).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import streamlit as st

from ..data.export import safe_file_name
from ..report.guide import HOW_TO_READ
from ..text import md

#: Session key of the figure download format chosen in the sidebar.
FORMAT_KEY = "evalcore_figure_format"
FORMATS = ("png", "svg")
_SEEN = "evalcore_read_seen_"


def how_to_read(page: str) -> None:
    """The page's three lines on how to read it: open on the first visit in this session, folded after.

    A first-time viewer (a stakeholder in a demo) gets the reading before the numbers; someone who has
    seen it once keeps the screen for the results.
    """
    lines = HOW_TO_READ[page]
    first = not st.session_state.get(_SEEN + page)
    st.session_state[_SEEN + page] = True
    # A fixed key keeps the user's open/closed choice across reruns of this visit (without one, the changed
    # ``expanded`` would make a new expander and fold it on the first slider move).
    with st.expander("How to read this page", expanded=first, icon=":material/help:", key=f"how_to_read_{page}"):
        st.markdown("\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1)))


def figure_format_control() -> None:
    """The sidebar's choice of what a figure's camera button downloads (plotly's own button: PNG or SVG)."""
    st.session_state.setdefault(FORMAT_KEY, "png")
    st.radio("Figure downloads", FORMATS, key=FORMAT_KEY, horizontal=True, format_func=str.upper,
             help="What the camera button at the top right of each figure saves: PNG for slides, SVG for print "
                  "and papers (vector, editable).")


def figure(fig, *, key: str, name: str | None = None) -> None:
    """Draw a plotly figure whose camera button saves it in the format chosen in the sidebar.

    ``name`` is the file name without extension (default: ``key``). The image is saved at twice the
    screen resolution so that a PNG stays sharp on a slide.
    """
    fmt = st.session_state.get(FORMAT_KEY, "png")
    config = {"displaylogo": False,
              "toImageButtonOptions": {"format": fmt if fmt in FORMATS else "png", "filename": safe_file_name(name or key),
                                       "scale": 2}}
    st.plotly_chart(fig, key=key, config=config)


def paginate(values: Sequence, *, key: str, noun: str, per_page: int = 4) -> list:
    """The values to draw now: all of them when there are at most ``per_page``, else one page of them.

    Long groupings (ten languages, each a row of a faceted figure) would make a page thousands of pixels
    tall; a selector of pages keeps each figure one screen high. The page a user picked is kept while it
    exists (another dataset may have fewer groups). ``noun`` (a grouping column, named by the data) is written
    as text: the selector's labels are Markdown.
    """
    values = list(values)
    if len(values) <= per_page:
        return values
    pages = [values[i:i + per_page] for i in range(0, len(values), per_page)]
    labels = [f"{md(noun)} {i + 1}-{i + len(p)} of {len(values)}" for i, p in zip(range(0, len(values), per_page), pages)]
    if st.session_state.get(key) not in labels:
        st.session_state[key] = labels[0]
    picked = st.segmented_control(f"{md(noun.capitalize())}: {per_page} at a time", labels, key=key, required=True)
    return pages[labels.index(picked)] if picked in labels else pages[0]


def lazy_tabs(key: str, tabs: Mapping[str, Callable[[], None]]) -> None:
    """Tabs of which only the open one runs: each tab's computation is paid for when it is looked at.

    ``tabs`` maps a label to what draws the tab. The open tab is the widget's state under ``key``, and the
    address bar's parameter ``key`` (a reload or a shared link reopens it; the first tab leaves it out); a
    click reruns the page, which draws the newly opened tab.
    """
    for tab, draw in zip(st.tabs(list(tabs), key=key, on_change="rerun", bind="query-params"), tabs.values()):
        if tab.open:
            with tab:
                draw()
