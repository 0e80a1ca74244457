"""evalcore's dashboard: ``streamlit run app.py`` (``python3 dev.py app`` installs what is missing, then runs it).

This file runs first on every page. It declares the pages (title in the navigation, URL path, favicon), sets
the browser tab's title, and draws the sidebar every page shares: this tab's dataset, kept in the address bar
as ``?dataset=<id>`` so that a reload or a shared link reopens it. Then it runs the page the URL names. Each
page is one file in ``app_pages/`` holding only its own sections.

The folder is not called ``pages/``: next to a ``pages/`` folder Streamlit starts in its older multipage mode and,
until this file has run once on the server, answers a link to a page by running that page's file alone (no
sidebar, no page config).
"""

from typing import NamedTuple

import streamlit as st

from evalcore import ui


class PageSpec(NamedTuple):
    file: str
    title: str
    url_path: str  # "" for the landing page, served at the root URL
    icon: str  # the browser tab's icon: an emoji, drawn by the browser (a ":material/" one is fetched online)
    question: str  # the navigation's tooltip


PAGES = (
    PageSpec("app_pages/0_Home.py", "Home", "", "⚖️", "Load data, map its columns, see what it unlocks."),
    PageSpec("app_pages/1_Agreement.py", "Agreement", "Agreement", "🤝", "Can the judge be trusted, and where?"),
    PageSpec("app_pages/2_Bias.py", "Bias", "Bias", "⚖️", "How is the judge biased, and what to do about it?"),
    PageSpec("app_pages/3_Win_rates.py", "Win rates", "Win_rates", "🏆", "What would humans have said?"),
    PageSpec("app_pages/4_Superficial_quality.py", "Superficial quality", "Superficial_quality", "🔠",
             "Does the judge reward outputs that only look good?"),
    PageSpec("app_pages/5_Position_bias.py", "Position bias", "Position_bias", "🔀",
             "Does the verdict depend on which output is shown first?"),
    PageSpec("app_pages/6_Alt_test.py", "Alt-Test", "Alt_test", "🧑‍⚖️", "Can the judge replace the annotators?"),
    PageSpec("app_pages/7_True_scores.py", "True scores", "True_scores", "🎯",
             "What would the humans have said on every item, from a few of their labels?"),
    PageSpec("app_pages/8_Leaderboard.py", "Leaderboard", "Leaderboard", "🏅",
             "Which system is best, by the humans and by each judge?"),
)


def main() -> None:
    # icon="": no icon in the navigation (the links read as the page titles); the favicon is set below.
    page = st.navigation([st.Page(spec.file, title=spec.title, url_path=spec.url_path or None, icon="",
                                  default=not spec.url_path, help=spec.question) for spec in PAGES])
    spec = next(s for s in PAGES if s.url_path == page.url_path)
    ui.shell("evalcore" if not spec.url_path else f"{spec.title} · evalcore", icon=spec.icon)
    # compiled code and plotting code load in the background from the first page opened, whichever it is
    ui.warm_up_at_start()
    page.run()


main()
