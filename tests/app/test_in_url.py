"""Selectors whose choice the address bar keeps (:func:`evalcore.ui.state.in_url`, Streamlit's bound widgets): a
reload or a shared link reopens the same choice, whatever the page's opening choice is, and a choice that is no
longer an option is corrected in the address bar too."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script() -> None:
    import streamlit as st

    from evalcore.ui.state import in_url

    # The options and the page's opening choice follow the data; a test changes them through the session.
    options = st.session_state.get("options", ["a", "b", "c"])
    opening = st.session_state.get("opening", "c")
    st.selectbox("Pick", **in_url("pick", options, opening))


def _session(options: list | None = None, opening: str | None = None, **params: str) -> AppTest:
    """A new browser session, its address bar holding ``params`` (a reload, a shared link); ``options`` and
    ``opening``: what its data offers and opens on (None: a, b, c opening on c)."""
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params.update(params)
    if options is not None:
        at.session_state["options"] = options
    if opening is not None:
        at.session_state["opening"] = opening
    return at.run()


def _value(at: AppTest):
    return at.selectbox(key="pick").value


def test_a_link_opens_its_choice_and_no_link_the_opening_one():
    at = _session()
    assert _value(at) == "c" and "pick" not in at.query_params  # the opening choice, not the first option
    # The first option is not the opening one: a link to it opens it (Streamlit drops only the opening choice).
    assert _value(_session(pick="a")) == "a"
    assert _value(_session(pick="c")) == "c"
    # A mangled link is ignored, never an error.
    at = _session(pick="nonsense")
    assert not at.exception and _value(at) == "c" and "pick" not in at.query_params
    # (A user's pick is written to the address bar by the browser: tests/app/test_browser.py checks that.)


def test_a_choice_that_is_no_longer_an_option_is_corrected_in_the_url_too():
    at = _session(pick="a")
    at.session_state["options"] = ["x", "y", "z"]  # another dataset
    at.session_state["opening"] = "y"
    at.run()
    assert not at.exception
    assert _value(at) == "y"
    assert at.query_params.get("pick") in (None, "y")  # no stale "a"
    assert _value(_session(["x", "y", "z"], "y", **at.query_params)) == "y"


def test_the_url_keeps_a_choice_when_the_opening_choice_moves():
    at = _session()
    assert _value(at) == "c" and "pick" not in at.query_params
    at.session_state["opening"] = "a"  # another grouping opens on another choice; the one shown stays
    at.run()
    assert _value(at) == "c"
    assert at.query_params["pick"] == "c"  # so that a reload reopens it, not the new opening choice
    assert _value(_session(None, "a", **at.query_params)) == "c"
