"""Talk mode (issue 50): one URL switch, ``?talk=1``, that a speaker bookmarks.

It survives the page's own URL rewriting and the sidebar's links (which carry no query), enlarges
every figure's text, and collapses what :func:`pages._shared.more` holds into an expander.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
SENSITIVITY = str(ROOT / "pages" / "sensitivity.py")


def _more_script() -> None:
    import streamlit as st

    from pages._shared import more, talk_mode

    st.markdown(f"talk: {talk_mode()}")
    with more("Checks and tables"):
        st.markdown("a check")


def test_the_switch_stays_in_the_url_and_in_the_session() -> None:
    st.cache_data.clear()
    at = AppTest.from_file(SENSITIVITY, default_timeout=120)
    at.query_params["talk"] = "1"
    at.run()
    assert not at.exception
    assert at.query_params["talk"] == "1"  # the page rewrote its URL and kept the switch
    # the sidebar's link to another page carries no query: the session keeps talk mode
    at.query_params.clear()
    at.run()
    assert at.query_params.get("talk") == "1"
    # ?talk=0 switches it off, and the URL then carries no switch
    at.query_params["talk"] = "0"
    at.run()
    assert "talk" not in at.query_params

    plain = AppTest.from_file(SENSITIVITY, default_timeout=120).run()
    assert "talk" not in plain.query_params


def test_more_collapses_only_in_talk_mode() -> None:
    plain = AppTest.from_function(_more_script, default_timeout=30).run()
    assert not plain.exception
    assert not plain.expander and "a check" in [m.value for m in plain.markdown]
    talk = AppTest.from_function(_more_script, default_timeout=30)
    talk.query_params["talk"] = "1"
    talk.run()
    assert not talk.exception
    assert [e.label for e in talk.expander] == ["Checks and tables"]
    assert not talk.expander[0].proto.expanded
    assert "talk: True" in [m.value for m in talk.markdown]
