"""Accounting & samplers: DPNR's kε, binary-encoding RR's per-bit budgets, DPText's sampler.

Three tabs, each widgets → dpcore (accounting, samplers_inspect) → dpcore.viz. Each tab opens
with one plain sentence (its main number) and its figure, the settings beside it; the equations sit
in an expander under the figure, tables and checks after it (collapsed in talk mode). The URL
carries the configuration of all three.
"""

from __future__ import annotations

import math
import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.accounting import (
    BINARY_NOTE,
    MAX_BITS,
    MAX_K,
    binary_encoding_costs,
    dpnr_dropout_curve,
    dpnr_report,
)
from dpcore.formatting import epsilon_text, percent, sentence
from dpcore.samplers_inspect import SamplerInspection, infinite_loss_example, inspect_samplers
from dpcore.viz.accounting_figure import binary_bits_figure, dpnr_dropout_figure
from dpcore.viz.sampler_figure import sampler_histogram_figure
from pages._shared import (
    apply_query_params,
    choice_param,
    download_buttons,
    ensure_navigation,
    float_param,
    int_param,
    more,
    page_intro,
    plot,
    show_errors,
    show_table,
    sync_query_params,
    talk_mode,
)

ensure_navigation()

# ---- work caps -------------------------------------------------------------------------------
SIZES = [1_000, 10_000, 100_000, 1_000_000]  # draws per sampler

#: The tabs, by their URL value.
TABS = {"dpnr": "DPNR (word dropout)", "binary": "Binary encoding + RR", "sampler": "Sampler inspector"}

SPECS = {
    "tab": choice_param("dpnr", list(TABS)),
    # DPNR
    "k": int_param(768, 1, MAX_K),
    "eps": float_param(0.05, 0.001, 100.0),
    "mu": float_param(0.3, 0.0, 1.0),
    # binary encoding
    "sign": choice_param(1, [0, 1]),
    "m": int_param(4, 0, MAX_BITS),
    "f": int_param(5, 0, MAX_BITS),
    "beps": float_param(0.1, 0.001, 100.0),
    "r": int_param(1, 1, 100_000),
    # samplers
    "b": float_param(1.0, 0.01, 100.0),
    "size": choice_param(100_000, SIZES),
    "sseed": int_param(0, 0, 2**31 - 1),
    "z": float_param(0.1, -10.0, 10.0),
}


#: Each tab: the headline, then the figure with its settings beside it ([figure, settings]).
FIGURE_COLUMNS = [3, 1]
#: Figure height in talk mode (px): its larger text leaves less of a 720-px screen to the figure.
TALK_HEIGHT = 340


#: The sampler inspector's 2×2 panels (px): the flawed row above the correct one, both whole on a
#: 1280×720 first screen under the tab's headline, plain and in talk mode.
SAMPLER_HEIGHT = 365
#: The binary tab's figure outside talk mode (px): whole on a 1280×720 first screen.
BINARY_HEIGHT = 370


def talk_sized(fig: go.Figure) -> go.Figure:
    """``fig``, at :data:`TALK_HEIGHT` in talk mode so that it fits the first screen whole."""
    return fig.update_layout(height=TALK_HEIGHT) if talk_mode() else fig


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def sampler_inspection(scale: float, size: int, seed: int) -> SamplerInspection:
    return inspect_samplers(scale, size, seed=seed)


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def loss_example(scale: float, z: float, size: int, seed: int) -> dict:
    return infinite_loss_example(scale, z=z, size=size, seed=seed).to_dict()


_SUPER = str.maketrans("0123456789+-−=()ikmnε", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁱᵏᵐⁿᵋ")


def unicode_powers(text: str) -> str:
    """``2^{i−1}`` → ``2ⁱ⁻¹``: exponents written for LaTeX shown as Unicode superscripts."""
    return re.sub(
        r"\^\{([^{}]*)\}",
        lambda m: (
            m.group(1).translate(_SUPER)
            if set(m.group(1)) <= set("0123456789+-−=()ikmnε")
            else f"^({m.group(1)})"
        ),
        text,
    )


def _fmt(v: object) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if math.isnan(v):
            return "undefined"
        return f"{v:.6g}"
    return str(v)


page_intro(
    "Accounting & samplers",
    "How much privacy three published systems really spend, counted exactly.",
    "DPNR's published accounting understates the privacy spent: k words at ε each spend k·ε "
    "(Lyu et al. 2020a, corrected by Lai et al. 2022). Binary-encoding randomized response keeps "
    "its claim Σ ε_i under LDP (Lyu et al. 2020b); the revisit's place-value figure is a loss per "
    "unit of distance, not an LDP loss. DPText's sampler made its noise never negative "
    "(Habernal 2022, §3). Each tab opens with one sentence and its figure; the equations are one "
    "click away under it.",
)

apply_query_params(SPECS, page="accounting")
# The default stays the tab the visit started on (a changing default would make a new widget).
first_tab = st.session_state.setdefault("tab_first", TABS[st.session_state["tab"]])
tab_list = st.tabs(list(TABS.values()), default=first_tab, key="tab_label", on_change="rerun")
tab_dpnr, tab_bin, tab_samp = tab_list
# The selected tab goes into the URL (?tab=dpnr|binary|sampler) like every widget.
st.session_state["tab"] = next(
    (k for k, t in zip(TABS, tab_list, strict=True) if t.open), st.session_state["tab"]
)
sync_query_params(SPECS)  # session state already holds every widget's current value

# ---- DPNR ------------------------------------------------------------------------------------
with tab_dpnr:
    headline = st.empty()
    fig_col, set_col = st.columns(FIGURE_COLUMNS)
    set_col.number_input("Embedding dimension k", min_value=1, max_value=MAX_K, step=1, key="k")
    set_col.number_input("Claimed ε", min_value=0.001, max_value=100.0, step=0.01, format="%.3f", key="eps")
    set_col.slider("Dropout rate μ", min_value=0.0, max_value=1.0, step=0.01, key="mu")
    k, eps, mu = int(st.session_state["k"]), float(st.session_state["eps"]), float(st.session_state["mu"])
    with show_errors():
        rep = dpnr_report(k, eps, mu)
        mus, curve = dpnr_dropout_curve(k, eps, points=201)
    if rep.true_epsilon_dropout > rep.claimed_epsilon:
        after = f"still leaves **{rep.true_epsilon_dropout:.4g}, {rep.understatement:.3g}× the claim**"
    else:
        after = f"brings it to {rep.true_epsilon_dropout:.4g}, within the claim"
    headline.markdown(
        f"DPNR claims **ε = {epsilon_text(rep.claimed_epsilon)}** per word but spends "
        f"**{epsilon_text(rep.true_epsilon, digits=4)}**; "
        f"dropping {percent(mu, exact=True)} of the words {after}."
    )
    fig = dpnr_dropout_figure(mus, curve, k=k, epsilon=eps, selected_mu=mu, selected=rep.true_epsilon_dropout)
    plot(talk_sized(fig), key="dpnr", slot=fig_col)
    set_col.metric("True ε = kε (tight)", epsilon_text(rep.true_epsilon, digits=4))
    set_col.metric(
        "ε′ with dropout (tight)",
        f"{rep.true_epsilon_dropout:.4g}",
        f"×{rep.understatement:.3g} the claim",
        delta_color="inverse",
    )
    with st.expander("The accounting, in equations", icon=":material/function:"):
        st.markdown(
            "DPNR adds Lap(1/ε) to each of the k coordinates of a min-max normalised embedding and "
            "claims ε-DP per word. All k coordinates come from the same input, so the budget "
            "composes to **kε** (corrected Theorem 1); word dropout at rate μ gives "
            "$\\varepsilon' = \\ln\\big((1 - \\mu)\\,e^{k\\varepsilon} + \\mu\\big)$ "
            "(corrected Theorem 2, eq. 11). Both are exact worst cases, not just bounds: kε is "
            "reached by two embeddings at opposite corners of [0, 1]^k, and ε′ when, in addition, "
            "the embedding with the word dropped equals the neighbour's "
            "(`dpcore.accounting.dpnr_dropout_loss` computes the exact loss of any configuration)."
        )
    with more("Download the curve", icon=":material/download:"):
        df_dpnr = pd.DataFrame({"dropout_mu": mus, "true_epsilon_dropout": curve})
        download_buttons(df_dpnr, rep.to_dict(), f"dpcore-dpnr-k{k}-eps{eps:g}", key="dpnr")

# ---- binary encoding ---------------------------------------------------------------------------
with tab_bin:
    headline = st.empty()
    fig_col, set_col = st.columns(FIGURE_COLUMNS)
    set_col.selectbox("Sign bits", [0, 1], key="sign")
    set_col.number_input("Integer bits m", min_value=0, max_value=MAX_BITS, step=1, key="m")
    set_col.number_input("Fraction bits f", min_value=0, max_value=MAX_BITS, step=1, key="f")
    set_col.number_input(
        "ε_i per bit", min_value=0.001, max_value=100.0, step=0.01, format="%.3f", key="beps"
    )
    set_col.number_input("Features r", min_value=1, max_value=100_000, step=1, key="r")
    with show_errors():
        brep = binary_encoding_costs(
            sign_bits=int(st.session_state["sign"]),
            int_bits=int(st.session_state["m"]),
            frac_bits=int(st.session_state["f"]),
            bit_epsilon=float(st.session_state["beps"]),
            features=int(st.session_state["r"]),
        )
    n_bits = len(brep.bits)
    holds = abs(brep.exact_ldp_total - brep.claimed_total) <= 1e-9 * max(1.0, brep.claimed_total)
    bit_eps = float(st.session_state["beps"])
    over = "" if brep.features == 1 else f" over {brep.features:,} features"
    flips = f"flipping each of a feature's {n_bits} bits at ε_i = {bit_eps:g}"
    # Which accounting holds, said as the figure draws it: the claim's count is the exact LDP loss
    # (green bars); the revisit's place-value figure (grey bars) is a per-distance reading.
    if holds:
        headline.markdown(
            f"**Under LDP the count holds:** {flips} spends exactly the claimed "
            f"{brep.claimed_total:.4g}{over} (green bars); the revisit's place-value figure, "
            f"{brep.place_value_total:.4g} (grey bars), is a loss per unit of distance, not an LDP loss."
        )
    else:
        headline.markdown(
            f"{sentence(flips, stop=False)} **spends {brep.exact_ldp_total:.4g}, against the claimed "
            f"{brep.claimed_total:.4g}{over}.**"
        )
    plot(talk_sized(binary_bits_figure(brep).update_layout(height=BINARY_HEIGHT)), key="binary", slot=fig_col)
    fig_col.caption(
        "Green: each bit's claimed ε_i, which is its exact LDP loss. Grey: the revisit's place-value "
        f"figure (Lai et al. 2022), {brep.place_value_total:.4g} in total, which weighs each bit by how "
        "far flipping it moves the real value (×2ᵐ⁺¹ for the sign bit, ×2ⁱ⁻¹ for integer bit i, ×2⁻ⁱ "
        "for fraction bit i). That is a loss per unit of distance between real values, not an LDP loss."
    )
    m1, m2, m3 = st.columns(3)
    m1.metric("Claimed ε (all r features)", f"{brep.claimed_total:.4g}")
    m2.metric("Exact worst-case LDP loss (dpcore)", f"{brep.exact_ldp_total:.4g}")
    m3.metric("Place-value figure (Lai et al. 2022, eqs. 16–19)", f"{brep.place_value_total:.4g}")
    with st.expander("The accounting, in equations", icon=":material/function:"):
        st.markdown(
            "Lyu et al. (2020b) encode each feature with a sign bit, m integer bits and f fraction "
            "bits, flip each bit by randomized response with budget ε_i and claim Σ ε_i "
            "(every bit treated as sensitivity 1, eqs. 13–14). The revisit by Lai et al. (2022) "
            "weights each bit by its place value: integer bit i $2^{i-1}\\varepsilon_i$ "
            "(eqs. 16–17), the sign bit $2^{m+1}\\varepsilon_i$ (eq. 18), fraction bit i "
            "$2^{-i}\\varepsilon_i$ (eq. 19). dpcore also computes the **exact worst-case LDP loss** "
            "of the per-bit randomized response over the whole encoded domain, shown beside the "
            "paper's figure."
        )
        st.caption(unicode_powers(BINARY_NOTE))
    with more("Every bit, as a table", icon=":material/table:"):
        df_bin = pd.DataFrame(brep.rows())
        show_table(
            df_bin,
            {
                "kind": "Bit",
                "index": "Position",
                "claimed_epsilon": "Claimed ε (per bit)",
                "distance_bound": "Largest change of the value",
                "place_value_epsilon": "Place-value ε (Lai et al. 2022)",
                "equation": "Equation",
            },
        )
        bparams = {k_: v for k_, v in brep.to_dict().items() if k_ != "bits"}
        download_buttons(df_bin, bparams, "dpcore-binary-rr", key="binary")

# ---- samplers ------------------------------------------------------------------------------------
with tab_samp:
    headline = st.empty()
    fig_col, set_col = st.columns(FIGURE_COLUMNS)
    set_col.number_input("Laplace scale b", min_value=0.01, max_value=100.0, step=0.1, key="b")
    set_col.select_slider("Draws per sampler", SIZES, key="size", format_func=lambda s: f"{s:,}")
    set_col.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="sseed")
    set_col.number_input("Output z for eq. 11", min_value=-10.0, max_value=10.0, step=0.05, key="z")
    b = float(st.session_state["b"])
    size = int(st.session_state["size"])
    sseed = int(st.session_state["sseed"])
    z = float(st.session_state["z"])
    with show_errors(), st.spinner("Sampling…"):
        ins = sampler_inspection(b, size, sseed)
        ex = loss_example(b, z, min(size, 100_000), sseed)
    flawed = [s for s in ins.summaries if s.flawed]
    correct = [s for s in ins.summaries if not s.flawed]
    neg_flawed = max((s.fraction_negative for s in flawed), default=0.0)
    neg_correct = min((s.fraction_negative for s in correct), default=0.0)
    headline.markdown(
        f'DPText\'s "Laplace" noise is **never negative** ({percent(neg_flawed)} of {size:,} draws below 0, '
        f"against {percent(neg_correct)} for a correct sampler): an output between 0 and 1 can come from "
        "input 0 but never from input 1, so **the privacy loss is infinite**."
    )
    plot(sampler_histogram_figure(ins, height=SAMPLER_HEIGHT), key="samplers", slot=fig_col)
    with st.expander("The sampler, in equations", icon=":material/function:"):
        st.markdown(
            "DPText draws v ~ Uni(0, 1) (eq. 8) but applies the transform meant for "
            "v ~ Uni(−½, ½) (eq. 9 = eq. 7). For v ≥ ½ the logarithm's argument is negative (NaN), "
            "and what remains is never negative (Theorem 3.1). Correct samplers: eqs. 4/5 and eq. 7."
        )
    with more("Every sampler, as a table", icon=":material/table:"):
        summ = pd.DataFrame(ins.summary_rows()).drop(columns=["citation"])
        show_table(
            summ,
            {
                "label": "Sampler",
                "flawed": "Flawed",
                "fraction_negative": "Share of draws < 0",
                "fraction_zero": "Share = 0",
                "mean": "Mean",
                "std": "Std. dev.",
                "ks_statistic": "KS distance to Laplace(0, b)",
                "ks_pvalue": "KS p-value",
            },
        )

    with more("The infinite privacy loss at one output (eq. 11)", icon=":material/all_inclusive:"):
        st.subheader("The infinite privacy loss (eq. 11)")
        st.markdown(
            f"Neighbours X = 0 and X′ = 1, identity query (sensitivity 1), noise scale b = {b:g}, so "
            f"Laplace noise gives ε = 1/b = {1 / b:.4g}. Loss at output z = {z:g}: "
            "ln p(M(0) = z) − ln p(M(1) = z). Counts: draws of M(0) and M(1) within "
            f"±{ex['window']:g} of z, out of {ex['size']:,} each."
        )
        loss_df = pd.DataFrame(ex["rows"])
        show = loss_df[
            [
                "label",
                "density_d",
                "density_dprime",
                "log_ratio",
                "count_d",
                "count_dprime",
                "min_output_dprime",
            ]
        ].rename(
            columns={
                "label": "sampler",
                "density_d": "p(M(0)=z)",
                "density_dprime": "p(M(1)=z)",
                "log_ratio": "privacy loss at z",
                "count_d": "M(0) near z",
                "count_dprime": "M(1) near z",
                "min_output_dprime": "smallest M(1)",
            }
        )
        st.dataframe(show.map(_fmt), hide_index=True, width="stretch")
        flawed_inf = [r["label"] for r in ex["rows"] if r["flawed"] and r["log_ratio"] == math.inf]
        if flawed_inf:
            st.error(
                f"At z = {z:g}: P(M(1) = z) = 0 while P(M(0) = z) > 0, so the ratio in eq. (10) is "
                f"unbounded — infinite privacy loss for {', '.join(flawed_inf)}.",
                icon=":material/error:",
            )
        elif 0 < z < 1:
            st.info("No sampler shows an infinite loss here.")
        else:
            st.info(
                "For z outside (0, 1) both inputs can reach z with DPText too; the theorem's witness is "
                "any z in (0, 1), e.g. z = 0.1."
            )
        sparams = {**ins.parameters(), "z": z, "window": ex["window"], "loss_example_size": ex["size"]}
        download_buttons(
            pd.DataFrame(ins.rows()), sparams, f"dpcore-samplers-b{b:g}-seed{sseed}", key="samplers"
        )
