"""Landing page: what the lab is, the headline at a glance, and a link to every page.

``dpcore.audit`` and the figure code are imported where the figure is drawn, after the title and
the introduction have been sent: a first visitor to a cold server reads them while those modules
load.
"""

import pandas as pd
import streamlit as st

from pages._shared import PAGES, ensure_navigation

# The headline: Habernal's (2022) check of ADePT next to a correct Laplace mechanism, both
# claiming ε = 1, exact values for n = 1 … 128 (the audit page's defaults, two mechanisms).
GLANCE_MECHANISMS = ("laplace", "adept")
GLANCE_EPSILON = 1.0
GLANCE_DIMS = tuple(2**k for k in range(8))


@st.cache_data(max_entries=1, max_size="1MB", show_spinner=False)
def glance_rows() -> list[dict]:
    """Exact audit rows (``dpcore.audit.audit_grid``, method ``exact``) for the home page's figure."""
    from dpcore.audit import audit_grid

    cells = audit_grid(GLANCE_MECHANISMS, dims=GLANCE_DIMS, epsilons=[GLANCE_EPSILON], method="exact")
    return [
        {"mechanism": r.mechanism, "dim": r.dim, "exact": r.empirical_epsilon, "exact_lr": r.lr_epsilon}
        for r in cells
    ]


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

st.subheader("At a glance")
from dpcore.viz.audit_figure import audit_figure  # noqa: E402  (after the text above is sent)

glance = pd.DataFrame(glance_rows())  # exact values only: the figure draws no Monte-Carlo trace
peak = glance.groupby("mechanism")["exact"].max()
st.plotly_chart(
    audit_figure(glance, epsilon=GLANCE_EPSILON, show_lr=False),
    width="stretch",
    key="glance-figure",
)
within = "stays at or below" if peak["laplace"] <= GLANCE_EPSILON + 1e-9 else "exceeds"
st.caption(
    f"Habernal's (2022) reconstruction check, exact values from `dpcore.audit`, n = 1 … "
    f"{GLANCE_DIMS[-1]}: both mechanisms claim ε = {GLANCE_EPSILON:g}. The Laplace mechanism "
    f"{within} its claim in this test (largest value {peak['laplace']:.2f}; passing one test is "
    f"not a proof of privacy); ADePT's privacy loss in this test reaches {peak['adept']:.2f} at "
    f"n = {GLANCE_DIMS[-1]}, because its L1 sensitivity is 2C·√n, not 2C."
)
st.page_link(
    "pages/audit.py",
    label="Open this on the audit page: add mechanisms, Monte-Carlo bounds or larger n",
    icon=":material/query_stats:",
    query_params={
        "mechs": ",".join(GLANCE_MECHANISMS),
        "eps": f"{GLANCE_EPSILON:g}",
        "nmin": str(GLANCE_DIMS[0]),
        "nmax": str(GLANCE_DIMS[-1]),
    },
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
