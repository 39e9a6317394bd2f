"""Landing page: what the lab is, and a link to every page."""

import streamlit as st

from pages._shared import PAGES, ensure_navigation

ensure_navigation()

st.title("dpcore: an open laboratory for differential privacy in NLP")
st.markdown(
    """
Published text-privacy systems have promised **ε-differential privacy** and not kept it:
ADePT used the wrong sensitivity, DPText sampled "Laplace" noise that is never negative,
DPNR charged ε where k·ε is spent. This lab lets you **check** such claims yourself, **see**
why they fail, and **sanitize** text with mechanisms whose proofs hold.

Every number here comes from the `dpcore` Python library, which you can also use from the
command line (`python -m dpcore --help`). Every result can be downloaded with its parameters
and seed, and every page's URL reproduces what you see.
"""
)

st.subheader("Pages")
for page in PAGES:
    if page.default:
        continue
    with st.container(border=True):
        st.page_link(page.path, label=page.title, icon=page.icon)
        st.caption(page.blurb)

st.caption(
    "Sources: Habernal (2021, 2022); Lyu et al. (2020a, b) as revisited by Lai et al. (2022); "
    "Yue et al. (2021). See the README for full citations."
)
