"""Sensitivity: why ADePT's L2 clipping has L1 sensitivity 2C√n, not 2C (Habernal 2021).

Widgets → dpcore.sensitivity → dpcore.viz.sensitivity_figure. The URL carries the configuration.
The first screen holds the title, one sentence with the numbers (how far apart two clipped inputs
can be at this n, and what the promised ε is really worth) and the curve; the metrics, the
extreme pair, the notation and the simulation follow.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.flawed.mechanisms import ADePTFig2
from dpcore.formatting import epsilon_text, percent
from dpcore.sensitivity import (
    DISTRIBUTIONS,
    MAX_DIM,
    SensitivityReport,
    ViolationResult,
    adept_violation_fractions,
    dimension_grid,
    sensitivity_report,
)
from dpcore.viz.sensitivity_figure import sensitivity_curve_figure, violation_figure
from pages._shared import (
    apply_query_params,
    bar_updater,
    choice_param,
    download_buttons,
    ensure_navigation,
    float_param,
    int_param,
    more,
    multi_param,
    plot,
    show_errors,
    show_table,
    sync_query_params,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
PAIRS = [1_000, 10_000, 100_000, 1_000_000]
MAX_DRAWS = 200_000_000  # random numbers per page run
SPACINGS = ["all", "log"]

SPECS = {
    "clip": float_param(10.0, 1e-3, 1e6),
    "n": int_param(128, 1, MAX_DIM),
    "eps": float_param(1.0, 0.01, 100.0),
    "dists": multi_param(list(DISTRIBUTIONS), list(DISTRIBUTIONS)),
    "spread": float_param(1.0, 0.1, 10.0),
    "sigma": float_param(0.1, 0.001, 10.0),
    "nmax": int_param(255, 1, MAX_DIM),
    "spacing": choice_param("all", SPACINGS),
    "pairs": choice_param(10_000, PAIRS),
    "seed": int_param(0, 0, 2**31 - 1),
}


@st.cache_data(max_entries=64, max_size="16MB", show_spinner=False)
def simulate(
    dims: tuple[int, ...],
    clip: float,
    dist: str,
    pairs: int,
    seed: int,
    spread: float,
    std: float,
    _progress=None,
) -> ViolationResult:
    return adept_violation_fractions(
        list(dims), clip=clip, dist=dist, pairs=pairs, seed=seed, spread=spread, std=std, progress=_progress
    )


#: The notation behind the headline (shown under the figure, one click away).
HOW_TO_READ = (
    "Habernal (2021), Theorem 5.1: ADePT clips the encoder output to L2 norm C and adds Laplace "
    "noise for an L1 sensitivity of 2C. But two points of the L2 ball can be 2C√n apart in L1, "
    "so the Laplace mechanism's proof fails for every n ≥ 2 and the true guarantee is ε√n."
)


def headline(rep: SensitivityReport, clip: float, eps: float) -> str:
    """The page's one sentence, with its numbers: how far apart ADePT's inputs can be, and what
    its promise of ε is really worth at this n."""
    if rep.dim == 1:
        return (
            f"In one dimension ADePT's inputs are at most 2C = {rep.claimed_sensitivity:.4g} apart, as its "
            f"noise assumes, so its promise of ε = {epsilon_text(eps)} holds; from n = 2 on two of them "
            "can be 2C√n "
            "apart, and the promise fails."
        )
    return (
        f"ADePT added noise for inputs at most 2C = {rep.claimed_sensitivity:.4g} apart, but in "
        f"n = {rep.dim} dimensions two of them can be {rep.l1_sensitivity_l2_clip:.4g} apart: its noise "
        f"is {rep.ratio:.3g}× too small, and its promise of ε = {epsilon_text(eps)} is really ε = "
        f"{epsilon_text(rep.true_epsilon, digits=4)}."
    )


st.title("Sensitivity: the geometry ADePT got wrong")
apply_query_params(SPECS, page="sensitivity")

with st.sidebar:
    st.header("Geometry")
    st.number_input("Clipping constant C", min_value=1e-3, max_value=1e6, step=1.0, key="clip")
    st.number_input("Dimension n", min_value=1, max_value=MAX_DIM, step=1, key="n")
    st.number_input("Claimed ε", min_value=0.01, max_value=100.0, step=0.1, key="eps")
    st.header("Violation simulation (§6)")
    st.multiselect("Distributions of unclipped outputs", list(DISTRIBUTIONS), key="dists")
    st.number_input(
        "Uniform: half-width / C",
        min_value=0.1,
        max_value=10.0,
        step=0.1,
        key="spread",
        help="Coordinates uniform on (−spread·C, spread·C); the paper uses 1.",
    )
    st.number_input(
        "Normal: σ / C",
        min_value=0.001,
        max_value=10.0,
        step=0.01,
        format="%.3f",
        key="sigma",
        help="Coordinates N(0, σ²); the paper's code uses σ = 0.1·C.",
    )
    st.number_input("Largest n", min_value=1, max_value=MAX_DIM, step=1, key="nmax")
    st.radio(
        "Dimensions",
        SPACINGS,
        key="spacing",
        horizontal=True,
        format_func=lambda s: "every n (≤ 256 points)" if s == "all" else "log-spaced",
    )
    st.select_slider("Pairs per n", PAIRS, key="pairs", format_func=lambda p: f"{p:,}")
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")

sync_query_params(SPECS)

clip = float(st.session_state["clip"])
n = int(st.session_state["n"])
eps = float(st.session_state["eps"])
dists = list(st.session_state["dists"])
spread = float(st.session_state["spread"])
sigma = float(st.session_state["sigma"])
nmax = int(st.session_state["nmax"])
spacing = str(st.session_state["spacing"])
pairs = int(st.session_state["pairs"])
seed = int(st.session_state["seed"])

# ---- closed forms ----------------------------------------------------------------------------
with show_errors():
    rep = sensitivity_report(clip, n, eps)

st.markdown(f"##### {headline(rep, clip, eps)}")
plot(sensitivity_curve_figure(clip, max(n, nmax), highlight=n), key="curve")

c1, c2, c3, c4 = st.columns(4)
c1.metric("Claimed sensitivity 2C", f"{rep.claimed_sensitivity:.4g}")
# Both increases are bad news (worse than claimed): the same red in both places.
c2.metric(
    "True L1 sensitivity 2C√n",
    f"{rep.l1_sensitivity_l2_clip:.4g}",
    f"×{rep.ratio:.3g}",
    delta_color="inverse",
)
c3.metric("Claimed ε", epsilon_text(eps))
c4.metric(
    "True ε = ε√n", epsilon_text(rep.true_epsilon, digits=4), f"×{rep.ratio:.3g}", delta_color="inverse"
)
v = rep.extreme_x[0]
with more("The extreme pair", icon=":material/straighten:"):
    st.markdown(
        f"**The extreme pair** (Appendix B): x = (C/√n)·**1** = ({v:.4g}, …, {v:.4g}) and x′ = −x. "
        f"Both have L2 norm C = {clip:g}, so clipping leaves them as they are, and "
        f"‖x − x′‖₁ = n · 2C/√n = {rep.extreme_l1_distance:.4g}. With L1 clipping instead, the "
        f"sensitivity is {rep.l1_sensitivity_l1_clip:.4g} in every dimension."
    )
with st.expander("How to read this", icon=":material/menu_book:"):
    st.markdown(HOW_TO_READ)
st.caption(
    f"This page's ADePT is ADePT as published: L2 clipping at C, so at n = {n} its ε = "
    f"{epsilon_text(eps)} is "
    f"really ε·√n = {epsilon_text(rep.true_epsilon, digits=4)}. The Home and Audit pages audit "
    "Habernal's (2022) Fig. 2 "
    f"version instead, which skips the clipping: on [0, 1]ⁿ two inputs can be n apart in L1, so it "
    f"is only n·ε-DP (ε = {epsilon_text(ADePTFig2(epsilon=eps, dim=n).true_epsilon, digits=4)} here), "
    "which is why its "
    "audited privacy loss can exceed ε·√n."
)

# ---- simulation ------------------------------------------------------------------------------
st.subheader("How many pairs break the claimed bound? (Habernal 2021, Fig. 1)")
if not dists:
    st.info("Choose at least one distribution in the sidebar to run the simulation.")
    st.stop()
with show_errors():
    dims = dimension_grid(nmax, spacing, max_points=256)
draws = 2 * pairs * min(MAX_DIM, 1 << (max(dims) - 1).bit_length()) * len(dists)
if draws > MAX_DRAWS:
    st.error(
        f"This simulation would draw about {draws:.2e} random numbers; this server allows "
        f"{MAX_DRAWS:.0e} per request. Lower the pairs per n or the largest n "
        "(or run `python -m dpcore adept-sim` locally)."
    )
    st.stop()

results = []
bar = st.progress(0.0, text="Simulating…")
with show_errors():
    try:
        for i, dist in enumerate(dists):
            # Progress after blocks of pairs; a widget change stops the run at the next update.
            tick = bar_updater(
                bar,
                lambda d, t, name=dist: f"Simulating {name}: {d:,}/{t:,} pairs",
                start=i / len(dists),
                span=1 / len(dists),
            )
            results.append(
                simulate(tuple(dims), clip, dist, pairs, seed, spread, sigma * clip, _progress=tick)
            )
    finally:
        bar.empty()

plot(violation_figure(results, log_x=spacing == "log"), key="violations")

rows = [row for res in results for row in res.rows()]
df = pd.DataFrame(rows)
for res in results:
    if res.dims[-1] >= 16:
        at16 = next(f for d, f in zip(res.dims, res.fractions, strict=True) if d >= 16)
        st.markdown(f"- **{res.dist}**: {percent(at16)} of pairs violate at n ≈ 16.")
with st.expander("Table"):
    show_table(
        df,
        {
            "dist": "Distribution",
            "dim": "Dimension n",
            "violations": "Pairs over the claim",
            "fraction": "Fraction over the claim",
            "theoretical_max_l1_distance": "Max L1 distance 2C√n (Thm 5.1)",
            "claimed_sensitivity": "Claimed sensitivity 2C",
        },
    )
params = {
    "clip": clip,
    "dim": n,
    "epsilon": eps,
    "distributions": dists,
    "uniform_half_width": spread * clip,
    "normal_std": sigma * clip,
    "dims": dims,
    "pairs": pairs,
    "seed": seed,
    "citation": "Habernal (2021), §6, Fig. 1; Theorem 5.1",
}
with more("Downloads", icon=":material/download:"):
    download_buttons(df, params, f"dpcore-adept-sim-C{clip:g}-seed{seed}", key="adept-sim")

with st.expander("How to read the simulation", icon=":material/menu_book:"):
    st.markdown(
        """
- Each pair (x, x′) stands for two neighbouring inputs' encoder outputs. After clipping to L2
  norm C (eq. 13), the Laplace mechanism with scale 2C/ε protects the pair only if
  ‖x − x′‖₁ ≤ 2C. The curve shows how often that fails.
- In one dimension L1 and L2 agree, so nothing violates; already at n ≈ 16 almost every
  uniform pair does. The theoretical worst case is 2C√n (top figure).
- The result for each n depends only on the seed, the distribution, C, the pairs and n — not
  on which other n are shown; the download records all of them.
"""
    )
