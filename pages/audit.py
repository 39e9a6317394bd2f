"""Privacy-loss audit: Habernal's (2022) sanity check, live.

Widgets → dpcore.audit → dpcore.viz.audit_figure. Results are cached per cell; the URL carries
the whole configuration. The cap on real-sampler draws never refuses the page: exact values are
always drawn, Monte-Carlo runs for the dimensions that fit (dpcore.audit.runner.plan_monte_carlo),
and one click sets the largest trial count at which every dimension fits.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

from dpcore.audit import audit
from dpcore.audit.headlines import display, headline, observer_sentence, shown_name
from dpcore.audit.runner import plan_monte_carlo
from dpcore.formatting import epsilon_text, percent
from dpcore.limits import AUDIT_PAGE_MAX_DRAWS, AUDIT_PAGE_WORKERS
from dpcore.mechanisms import PAPER_FIG2, VECTOR_MECHANISMS, IIDAuditable
from dpcore.parallel import default_workers
from dpcore.prose import and_list
from dpcore.tradeoff import DEFINITIONS, TradeoffPair
from dpcore.viz.audit_figure import audit_figure
from dpcore.viz.tradeoff_figure import tradeoff_figure
from pages._shared import (
    apply_query_params,
    bool_param,
    cells_in_words,
    choice_param,
    download_buttons,
    ensure_navigation,
    float_param,
    int_param,
    more,
    multi_param,
    plot,
    replay_safe,
    show_errors,
    show_table,
    sync_query_params,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
DIMS = [2**k for k in range(13)]  # 1 .. 4096
TRIALS = [m * 10**k for k in range(3, 8) for m in (1, 2, 5)] + [100_000_000]  # 1,000 … 10⁸
CONFIDENCES = [0.9, 0.95, 0.99, 0.999]
MAX_BLACKBOX_DRAWS = AUDIT_PAGE_MAX_DRAWS  # noise values per request through the real samplers
# Threads per Monte-Carlo cell: the server's cores, at most 2. The result does not depend on it,
# and the draws (CPU time) per request are capped above whatever the threads.
WORKERS = min(AUDIT_PAGE_WORKERS, default_workers())
MAX_MECHANISMS = 9

NAMES = VECTOR_MECHANISMS.names()
SPECS = {
    "mechs": multi_param(list(PAPER_FIG2), NAMES, max_items=MAX_MECHANISMS),
    "eps": float_param(1.0, 0.01, 100.0),
    "nmin": choice_param(1, DIMS),
    "nmax": choice_param(128, DIMS),
    "mc": bool_param(True),
    # Real samplers by default: 10,000 trials × 5 mechanisms × n = 1…128 is 2.6e7 draws (~1 s).
    "trials": choice_param(10_000, TRIALS),
    "conf": choice_param(0.95, CONFIDENCES),
    "seed": int_param(0, 0, 2**31 - 1),
    "model": bool_param(False),
    "lr": bool_param(True),
    "logy": bool_param(False),
    # the trade-off figure's cell (kept valid below: a mechanism shown and an n in the range)
    "tmech": choice_param("adept", NAMES),
    "tn": choice_param(128, DIMS),
}


def _label(name: str) -> str:
    return f"{name} (flawed reproduction)" if VECTOR_MECHANISMS.get(name).flawed else name


@st.cache_data(max_entries=2048, max_size="16MB", show_spinner=False)
def exact_cell(name: str, dim: int, eps: float) -> dict:
    return audit(name, dim=dim, epsilon=eps, method="exact").to_row()


@st.cache_data(max_entries=256, max_size="16MB", show_spinner=False)
def tradeoff_cell(name: str, dim: int, eps: float) -> tuple[TradeoffPair, list[dict]]:
    """The exact cell's trade-off pair and its TPR at 1% and 5% FPR (exact values: cheap)."""
    res = audit(name, dim=dim, epsilon=eps, method="exact")
    return res.tradeoff_pair, res.observer()["tpr_at_fpr"]


@st.cache_data(max_entries=512, max_size="16MB", show_spinner=False)
def mc_cell(
    name: str,
    dim: int,
    eps: float,
    trials: int,
    seed: int,
    conf: float,
    model_based: bool,
    _progress=None,
) -> dict:
    return audit(
        name,
        dim=dim,
        epsilon=eps,
        method="mc",
        trials=trials,
        seed=seed,
        confidence=conf,
        model_based=model_based,
        progress=_progress,
        workers=WORKERS,
    ).to_row()


def _use_trials(value: int) -> None:
    st.session_state["trials"] = value


#: What the test does, in one plain sentence, and its notation (shown under the figure).
PLAIN = (
    "How the test works: we add each mechanism's noise to two datasets that differ in every entry, "
    "try to tell from the output which one went in, and compare how well that works with the "
    "privacy ε the mechanism promises."
)
HOW_TO_READ = (
    "Habernal (2022), §4–5: privatize D = 0ⁿ and D′ = 1ⁿ, threshold each coordinate at 0.5, "
    "take a majority vote, and measure max over y of |ln P(D|y) − ln P(D′|y)|. A correct ε-DP "
    "mechanism stays at or below ε for every n. Exact values use the Binomial count of "
    "thresholded ones, read from each mechanism's declared per-coordinate probabilities; "
    "Monte-Carlo runs each mechanism's real sampler and gives Clopper–Pearson bounds, so it also "
    "catches a sampler that does not do what its declaration says."
)
#: The figure's height (px): the title, the headline and the whole figure fit a 1280×720 screen.
FIGURE_HEIGHT = 470
#: The observer's figure (px): the figure and its legend fit a 720-px screen.
TRADEOFF_HEIGHT = 560


st.title("Privacy-loss audit")
apply_query_params(SPECS, page="audit")

with st.sidebar:
    st.header("Audit settings")
    st.multiselect(
        "Mechanisms",
        NAMES,
        key="mechs",
        format_func=_label,
        max_selections=MAX_MECHANISMS,
        help="Flawed reproductions are fenced in dpcore.flawed and never offered as private.",
    )
    st.number_input("Claimed ε", min_value=0.01, max_value=100.0, step=0.1, key="eps")
    c1, c2 = st.columns(2)
    c1.selectbox("smallest n", DIMS, key="nmin")
    c2.selectbox("largest n", DIMS, key="nmax")
    st.toggle("Monte-Carlo with confidence bounds", key="mc")
    st.select_slider(
        "Trials per neighbour",
        TRIALS,
        key="trials",
        format_func=lambda t: f"{t:,}",
        disabled=not st.session_state["mc"],
    )
    st.select_slider("Confidence", CONFIDENCES, key="conf", disabled=not st.session_state["mc"])
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")
    st.checkbox(
        "Model-based Monte-Carlo (declared probabilities; fast)",
        key="model",
        disabled=not st.session_state["mc"],
        help="Draw the count of ones from each mechanism's declared per-coordinate probabilities "
        "(a Binomial shortcut) instead of running its sampler. It agrees with the exact value by "
        "construction and cannot catch a sampler bug; it runs only after 1,000,000 real "
        "single-coordinate draws per input agree with the declaration, and is refused otherwise.",
    )
    st.checkbox("Show the optimal likelihood-ratio attack", key="lr")
    st.checkbox("Log y axis", key="logy")

sync_query_params(SPECS)

mechs: list[str] = list(st.session_state["mechs"])
eps = float(st.session_state["eps"])
nmin, nmax = int(st.session_state["nmin"]), int(st.session_state["nmax"])
run_mc = bool(st.session_state["mc"])
trials = int(st.session_state["trials"])
conf = float(st.session_state["conf"])
seed = int(st.session_state["seed"])
model_based = bool(st.session_state["model"])

if not mechs:
    st.info("Choose at least one mechanism in the sidebar.")
    st.stop()
if nmin > nmax:
    st.error(f"The smallest n ({nmin}) must not exceed the largest n ({nmax}).")
    st.stop()
dims = [d for d in DIMS if nmin <= d <= nmax]
plan = None
if run_mc:
    with show_errors():
        plan = plan_monte_carlo(
            mechs, dims, trials=trials, max_draws=MAX_BLACKBOX_DRAWS, epsilon=eps,
            model_based=model_based, trial_options=TRIALS,
        )  # fmt: skip
mc_dims = set(plan.mc_dims) if plan is not None else set()

rows: list[dict] = []
cells = [(m, d) for m in mechs for d in dims]
bar = st.progress(0.0, text="Auditing…") if mc_dims else None
with show_errors():
    for i, (m, d) in enumerate(cells):
        mech_obj = VECTOR_MECHANISMS.create(m, epsilon=eps, dim=d)
        row: dict = {"mechanism": m, "dim": d, "flawed": VECTOR_MECHANISMS.get(m).flawed}
        row["claimed_epsilon"] = mech_obj.claimed_epsilon
        row["true_epsilon"] = mech_obj.true_epsilon
        if isinstance(mech_obj, IIDAuditable):
            ex = exact_cell(m, d, eps)
            row["exact"], row["exact_lr"] = ex["empirical_epsilon"], ex["lr_epsilon"]
            row["exact_verdict"] = ex["verdict"]
        if d in mc_dims:

            def tick(done: int, total: int, i: int = i, m: str = m, d: int = d) -> None:
                frac = (i + done / max(total, 1)) / len(cells)
                bar.progress(min(frac, 1.0), text=f"Monte-Carlo {m}, n={d}")

            mc = mc_cell(m, d, eps, trials, seed, conf, model_based, _progress=replay_safe(tick))
            row.update(
                mc=mc["empirical_epsilon"],
                mc_lower=mc["lower_bound"],
                mc_upper=mc["upper_bound"],
                mc_lr=mc["lr_epsilon"],
                mc_lr_lower=mc["lr_lower_bound"],
                mc_verdict=mc["verdict"],
                mc_verdict_lower_bound=mc["verdict_lower_bound"],
                mc_sampler=mc["sampler"],
                mc_declaration_disagrees=bool(
                    mc["sampler_check"] is not None and not mc["sampler_check"]["agrees"]
                ),
            )
            bar.progress((i + 1) / len(cells), text=f"Audited {i + 1}/{len(cells)} cells")
        rows.append(row)
if bar is not None:
    bar.empty()

df = pd.DataFrame(rows)
for col in ["exact", "exact_lr", "mc", "mc_lower", "mc_upper", "mc_lr"]:
    if col not in df:
        df[col] = float("nan")

violators = sorted(
    {r["mechanism"] for r in rows if "violates" in (r.get("exact_verdict"), r.get("mc_verdict"))}
)
no_claim = [m for m in mechs if math.isinf(VECTOR_MECHANISMS.create(m, epsilon=eps, dim=1).claimed_epsilon)]
st.markdown(f"##### {headline(rows, mechs, eps, violators, no_claim)}")

fig = audit_figure(
    df,
    epsilon=eps,
    log_y=bool(st.session_state["logy"]),
    show_lr=bool(st.session_state["lr"]),
    height=FIGURE_HEIGHT,
)
for band in fig.data:  # a confidence band spans only the n that have Monte-Carlo bounds
    if band.fill == "toself" and band.y is not None and None in band.y:
        keep = [i for i, v in enumerate(band.y) if v is not None]
        band.x, band.y = [band.x[i] for i in keep], [band.y[i] for i in keep]
plot(fig, key="audit-figure")
if plan is not None and not plan.complete:
    st.warning(plan.note(), icon=":material/content_cut:")
    if plan.largest_trials is not None and plan.largest_trials != trials:
        st.button(
            f"Run Monte-Carlo at every n with {plan.largest_trials:,} trials per neighbour",
            key="audit-fit-trials",
            on_click=_use_trials,
            args=(plan.largest_trials,),
            help="The largest trial count at which every dimension fits this server's cap.",
        )

how = "drawn from the declared probabilities (model-based)" if model_based else "from the real samplers"
mc_span = ""
if plan is not None and not plan.complete and plan.mc_dims:
    mc_span = f" at n = {plan.mc_dims[0]}…{plan.mc_dims[-1]}"
size = f"n = {nmin}…{nmax}, ε = {epsilon_text(eps)}" + (
    f", exact values and {trials:,} Monte-Carlo trials per neighbour{mc_span} {how}, confidence {conf:g}"
    if mc_dims
    else ", exact values"
)
if violators:
    st.error(
        f"Violates its claimed ε in this test ({size}; exact value, or the lower confidence bound, "
        "above the claim): " + ", ".join(shown_name(v) for v in violators),
        icon=":material/error:",
    )
rest = [m for m in mechs if m not in violators and m not in no_claim]
if rest:
    st.info(
        f"No violation detected by this test ({size}) for "
        + ("the mechanisms shown" if len(rest) == len(mechs) else ", ".join(shown_name(m) for m in rest))
        + ". This does not show that they are private: one pair of inputs and one attack family "
        "were tested."
        + (
            ""
            if not no_claim
            else f" {and_list([display(m) for m in no_claim])} "
            f"{'claims' if len(no_claim) == 1 else 'claim'} no privacy (nothing to violate)."
        ),
        icon=":material/info:",
    )
elif no_claim:
    st.info(
        f"{and_list([display(m) for m in no_claim])} {'claims' if len(no_claim) == 1 else 'claim'} no "
        "privacy, so there is no claim to test.",
        icon=":material/info:",
    )
st.markdown(PLAIN)
with st.expander("How to read this", icon=":material/menu_book:"):
    st.markdown(HOW_TO_READ)
    st.markdown(
        """
- **Solid lines**: exact majority-vote loss (log-space Binomial tails, finite at n = 4096).
- **Dotted lines**: exact loss of the optimal likelihood-ratio attack on the same thresholded
  output (the strongest test that sees the bits; for Laplace it approaches ε, never exceeds it).
- **Diamonds and bands**: Monte-Carlo estimate and its simultaneous Clopper–Pearson interval,
  from each mechanism's real sampler (or, with *model-based*, from its declared probabilities
  after a cross-check against real draws).
  A *violation* is declared only when a lower bound exceeds the claim; an estimate of ∞ from
  finite samples is never proof by itself.
- **∞** is drawn at the top edge: the copy baseline and DPText have infinite loss.
- Each mechanism has one colour on every chart of the lab; click its name in the legend to hide
  or show all of its lines.
"""
    )


# ---- what the claim means for an observer: one exact cell's trade-off curve ------------------
exact_mechs = [m for m in mechs if any(r["mechanism"] == m and "exact" in r for r in rows)]
tradeoff_params = None
if exact_mechs:
    st.subheader("What an observer can do")
    # A choice that the mechanisms or the range no longer offer falls back to the default cell
    # (ADePT, else the first violator, at the largest n), and the URL says so.
    if st.session_state["tmech"] not in exact_mechs:
        st.session_state["tmech"] = next(
            (m for m in ("adept", *violators) if m in exact_mechs), exact_mechs[0]
        )
    if st.session_state["tn"] not in dims:
        st.session_state["tn"] = dims[-1]
    c1, c2 = st.columns(2)
    t_mech = c1.selectbox(
        "Mechanism shown",
        exact_mechs,
        key="tmech",
        format_func=_label,
        help="Laplace at the same n is drawn beside it when it is among the mechanisms.",
    )
    t_dim = c2.selectbox("n shown", dims, key="tn")
    sync_query_params(SPECS)
    shown = [t_mech] + (["laplace"] if t_mech != "laplace" and "laplace" in exact_mechs else [])
    t_cells = {m: tradeoff_cell(m, t_dim, eps) for m in shown}
    pairs = [replace(pair, null=f"{m} (n = {t_dim}): 0ⁿ") for m, (pair, _) in t_cells.items()]
    st.markdown(
        "If a mechanism keeps its promise, nobody who sees its output can tell 0ⁿ from 1ⁿ well "
        "enough to reach the shaded area, and a curve or red cross inside it is a test that does. "
        + observer_sentence(t_cells, t_dim, eps)
    )
    plot(
        tradeoff_figure(
            pairs,
            title=f"Telling 0ⁿ from 1ⁿ after thresholding, against what ε = {epsilon_text(eps)} allows",
            tpr_scale="linear",
            mirror=False,
            label_violation=True,
            height=TRADEOFF_HEIGHT,
        ),
        key="audit-tradeoff",
    )
    with st.expander("How to read this"):
        levels = " ".join(
            f"**{display(m)}**: {e['meaning']}" for m, (_, entries) in t_cells.items() for e in entries
        )
        st.markdown(
            f"""
- The observer sees one output of the mechanism, thresholded at ½ (each coordinate 0 or 1), and
  must say whether D = 0ⁿ or D′ = 1ⁿ went in. A rule that names 1ⁿ for some outputs is a test.
  **FPR** (horizontal, α, logarithmic): how often it names 1ⁿ when 0ⁿ went in; **TPR** (vertical,
  1 − β, from 0% to 100%): how often it names 1ⁿ when 1ⁿ did.
- **Dashed line, shaded above**: the claim's ceiling, TPR ≤ 1 − f_ε,δ(FPR) with
  f_ε,δ(α) = max(0, 1 − δ − e^ε·α, e^(−ε)·(1 − δ − α)) (Kairouz, Oh & Viswanath 2015, Thm 2.1;
  Dong, Roth & Su 2022, §2): no test reaches the shaded region while an (ε, δ) claim holds. Its
  mirror image (tests that favour 0ⁿ) is not drawn: the best tests here all favour 1ⁿ.
- **Solid lines**: the best tests possible on the thresholded output, exact: the count K of ones is
  Binomial(n, p_b) under bⁿ, and the Neyman–Pearson tests are the cuts K ≥ k. An observer of the
  raw output may do better still.
- **Points**: the majority vote (Habernal 2022) and the likelihood-ratio cut, exact; a **red
  cross** is one that lies in the shaded region.
- At 1% and 5% false positives: {levels}
- The numbers (`tpr_at_fpr`, with every symbol's definition) are in the JSON and CSV downloads;
  `python -m dpcore audit --json` gives them for every cell, Monte-Carlo boxes included.
"""
        )
    tradeoff_params = {
        "cells": [
            {"mechanism": m, "dim": t_dim, "epsilon": eps, "tpr_at_fpr": entries}
            for m, (_, entries) in t_cells.items()
        ],
        "observer_sees": "the thresholded output (the count of coordinates ≥ 0.5)",
        "definitions": DEFINITIONS,
    }


def _fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return "∞" if math.isinf(v) else f"{v:.6g}"
    return str(v)


params = {
    "mechanisms": mechs,
    "epsilon": eps,
    "dims": dims,
    "monte_carlo": run_mc,
    "trials_per_neighbour": trials if run_mc else None,
    "confidence": conf if run_mc else None,
    "seed": seed if run_mc else None,
    "sampler": None if not run_mc else ("model-based" if model_based else "real"),
    "monte_carlo_dims": sorted(mc_dims) if run_mc else None,
    "monte_carlo_left_out": list(plan.left_out) if plan is not None else None,
    "max_real_sampler_draws_per_request": MAX_BLACKBOX_DRAWS,
    "workers": WORKERS if run_mc else None,
    "threshold": 0.5,
    "attack": "majority vote (tie → 0) and likelihood-ratio cuts on the count of ones",
    "tradeoff": tradeoff_params,
}
disagree = sorted({r["mechanism"] for r in rows if r.get("mc_declaration_disagrees")})
if disagree:
    st.warning(
        "The real sampler's draws disagree with the declared per-coordinate probabilities of: "
        + ", ".join(shown_name(v) for v in disagree)
        + ". Their exact values describe the declaration, not what the sampler does.",
        icon=":material/warning:",
    )

with more("Values and downloads", icon=":material/table:"):
    st.subheader("Values")
    show_table(
        cells_in_words(df.drop(columns=["flawed"]), ["exact_verdict", "mc_verdict"]).map(_fmt),
        {
            "mechanism": "Mechanism",
            "dim": "n",
            "claimed_epsilon": "Claimed ε",
            "true_epsilon": "True ε",
            "exact": "Exact ε̂",
            "exact_verdict": "Exact verdict",
            "mc": "MC ε̂",
            "mc_lower": f"MC lower ({percent(conf, exact=True)})",
            "mc_verdict": "MC verdict",
            "mc_sampler": "Sampler run",
        },
    )
    st.caption(
        "Exact ε̂: the sanity check's exact value; MC: Monte-Carlo with its Clopper–Pearson lower bound. "
        "The likelihood-ratio estimates, upper bounds and the sampler declaration check are in the "
        "CSV/JSON downloads."
    )
    download_buttons(df, params, f"dpcore-audit-eps{eps:g}", key="audit")
