"""Landing page: the headline at a glance (ADePT's privacy loss against its claim, beside a correct
Laplace mechanism), then what the lab is and a link to every page.

The first screen of a 1280×720 projector holds the title, the headline sentence with its number
and the whole figure; the introduction and the page list follow (collapsed in talk mode).
``dpcore.audit`` and the figure code are imported after the title has been sent: a first visitor
to a cold server sees it while those modules load.
"""

from urllib.parse import urlencode

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dpcore.formatting import epsilon_text
from pages._shared import PAGES, PageInfo, ensure_navigation, more, plot, talk_mode

# The headline: Habernal's (2022) check of ADePT next to a correct Laplace mechanism, both
# claiming ε = 1, exact values for n = 1 … 128 (the audit page's defaults, two mechanisms).
GLANCE_MECHANISMS = ("laplace", "adept")
GLANCE_EPSILON = 1.0
GLANCE_DIMS = tuple(2**k for k in range(8))
#: The figure's height (px): the title, the headline and the whole figure share a 1280×720 screen.
GLANCE_HEIGHT = 450
GLANCE_HEIGHT_TALK = 430


@st.cache_data(max_entries=1, max_size="1MB", show_spinner=False)
def glance_rows() -> list[dict]:
    """Exact audit rows (``dpcore.audit.audit_grid``, method ``exact``) for the home page's figure."""
    from dpcore.audit import audit_grid

    cells = audit_grid(GLANCE_MECHANISMS, dims=GLANCE_DIMS, epsilons=[GLANCE_EPSILON], method="exact")
    return [
        {"mechanism": r.mechanism, "dim": r.dim, "exact": r.empirical_epsilon, "exact_lr": r.lr_epsilon}
        for r in cells
    ]


def page_link(page: PageInfo, label: str, icon: str, query: dict[str, str] | None = None) -> None:
    """``st.page_link`` to ``page``; a plain link to its URL when this page runs on its own
    (``streamlit run pages/home.py``, a test), where Streamlit knows no other page."""
    try:
        st.page_link(page.path, label=label, icon=icon, query_params=query)
    except StreamlitPageNotFoundError:
        url = f"/{page.url_path}" + (f"?{urlencode(query)}" if query else "")
        st.markdown(f"{icon} [{label}]({url})")


ensure_navigation()

st.title("dpcore: an open laboratory for differential privacy in NLP")
headline = st.empty()  # the headline's number needs the audit: the title is sent first

from dpcore.flawed.mechanisms import ADePTFig2  # noqa: E402  (after the title is sent)
from dpcore.sensitivity import adept_true_epsilon  # noqa: E402
from dpcore.viz.audit_figure import audit_figure  # noqa: E402

glance = pd.DataFrame(glance_rows())  # exact values only: the figure draws no Monte-Carlo trace
peak = glance.groupby("mechanism")["exact"].max()
adept_peak, laplace_peak = float(peak["adept"]), float(peak["laplace"])
within = laplace_peak <= GLANCE_EPSILON + 1e-9
n_max = GLANCE_DIMS[-1]
# which ADePT is which: the audited one (Fig. 2, unclipped on [0, 1]^n) is n·ε-DP; ADePT as
# published (L2 clipping) is ε·√n-DP (Habernal 2021, Thm. 5.1)
true_eps = ADePTFig2(epsilon=GLANCE_EPSILON, dim=n_max).true_epsilon
clipped_eps = adept_true_epsilon(GLANCE_EPSILON, n_max)
headline.markdown(
    f"#### ADePT promised ε = {epsilon_text(GLANCE_EPSILON)}, but its privacy loss reaches "
    f"**{adept_peak:.1f}** at "
    f"n = {n_max}, {adept_peak / GLANCE_EPSILON:.0f}× its promise; a correct Laplace "
    f"mechanism {'stays at or below it' if within else f'reaches {laplace_peak:.2f}'}."
)
plot(
    audit_figure(
        glance,
        epsilon=GLANCE_EPSILON,
        show_lr=False,
        title=f"Privacy loss in Habernal's (2022) check, both claiming ε = {epsilon_text(GLANCE_EPSILON)}",
        height=GLANCE_HEIGHT_TALK if talk_mode() else GLANCE_HEIGHT,
    ),
    key="glance-figure",
)
st.caption(
    f"Habernal's (2022) reconstruction check, exact values from `dpcore.audit`, n = 1 … "
    f"{n_max}: both mechanisms claim ε = {epsilon_text(GLANCE_EPSILON)}. The Laplace mechanism "
    f"{'stays at or below' if within else 'exceeds'} its claim in this test (largest value "
    f"{laplace_peak:.2f}; passing one test is not a proof of privacy). The ADePT shown is Habernal's "
    f"Fig. 2 version, unclipped on [0, 1]ⁿ: its noise assumes inputs 1 apart where two can be n apart "
    f"in L1, so it is only n·ε-DP (ε = {epsilon_text(true_eps)} at n = {n_max}); in this test its "
    "privacy loss "
    f"reaches {adept_peak:.2f} at n = {n_max}. ADePT as published clips to L2 norm C, whose L1 "
    f"sensitivity is 2C·√n: its true ε is ε·√n = {epsilon_text(clipped_eps, digits=4)} at n = {n_max} "
    "(the Sensitivity page)."
)
page_link(
    next(p for p in PAGES if p.path == "pages/audit.py"),
    "Open this on the audit page: add mechanisms, Monte-Carlo bounds or larger n",
    ":material/query_stats:",
    {
        "mechs": ",".join(GLANCE_MECHANISMS),
        "eps": f"{GLANCE_EPSILON:g}",
        "nmin": str(GLANCE_DIMS[0]),
        "nmax": str(GLANCE_DIMS[-1]),
    },
)

with more("What this lab is, and every page", icon=":material/info:"):
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
            page_link(page, page.title, page.icon)
            st.caption(page.blurb)

    st.caption(
        "Sources: Habernal (2021, 2022); Lyu et al. (2020a, b) as revisited by Lai et al. (2022); "
        "Yue et al. (2021). See the README for full citations."
    )
