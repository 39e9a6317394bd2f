"""Attack & utility: how much sanitized text leaks, and how useful it stays (Yue et al. 2021,
§5.2–5.3, Fig. 4), with a mechanism-aware Bayesian attacker beyond the paper.

Widgets → dpcore.attack (experiment, utility) → dpcore.viz.attack_figure. torch loads only when
a masked-LM attack is selected (dpcore.attack.mlm imports it lazily). Caps keep one visit to
about a minute at most: ≤ 200 sentences, ≤ 6 ε values, ≤ 4,000 training sentences, and with a
masked-LM attack at most 480 sentence runs (sentences × (ε values + 1) ×
mechanisms). Long runs report progress after every batch, so a widget change stops them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.attack.datasets import DATASETS, load_labelled_dataset, split_dataset
from dpcore.attack.experiment import attack_sweep, sample_attack_sentences
from dpcore.attack.mlm import default_mlm_available
from dpcore.attack.utility import utility_sweep
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.viz.attack_figure import ATTACK_LABELS, epsilon_figure, tradeoff_figure
from pages._shared import (
    apply_query_params,
    choice_param,
    download_buttons,
    ensure_navigation,
    float_param,
    int_param,
    multi_param,
    replay_safe,
    show_errors,
    sync_query_params,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
MAX_SENTENCES = 200
MAX_EPSILONS = 6
#: Sentences × (ε values + 1) × mechanisms a masked-LM attack may run per request: about 0.05 s
#: each on 2 cores (one forward pass per word), so ≈ 35 s plus the utility part at most.
MAX_MLM_SENTENCE_RUNS = 480
EPS_GRID = ["0.5", "1", "2", "3", "6", "10", "14", "20"]
MECHANISMS = ["santext", "santext+"]
ATTACKS = ["bayes-unigram", "mlm", "bayes-mlm"]
MLM_ATTACKS = {"mlm", "bayes-mlm"}
VOCAB_SIZES = [2_000, 5_000, 10_000, 15_000]
TRAIN_SIZES = [500, 1_000, 2_000, 4_000]
TEST_SIZES = [200, 500, 1_000]

SPECS = {
    "mechs": multi_param(["santext", "santext+"], MECHANISMS),
    "eps": multi_param(["1", "3", "10"], EPS_GRID, max_items=MAX_EPSILONS),
    "p": float_param(0.3, 0.0, 1.0),
    "w": float_param(0.9, 0.0, 1.0),
    "data": choice_param("tweets", list(DATASETS)),
    "n": int_param(40, 5, MAX_SENTENCES),
    "attacks": multi_param(["bayes-unigram", "mlm", "bayes-mlm"], ATTACKS),
    "vsize": choice_param(15_000, VOCAB_SIZES),
    "ntrain": choice_param(4_000, TRAIN_SIZES),
    "ntest": choice_param(1_000, TEST_SIZES),
    "seed": int_param(0, 0, 2**31 - 1),
}


@st.cache_resource(max_entries=4, show_spinner="Loading the embedding…")
def get_vocab(vsize: int):
    return build_vocabulary("glove", size=vsize)


@st.cache_resource(max_entries=1, show_spinner="Loading the masked LM (torch)…")
def get_mlm():
    from dpcore.attack.mlm import load_mlm

    return load_mlm()


def _maker(mech: str, p: float, w: float, vsize: int):
    extra = {"p": p, "w": w} if mech == "santext+" else {}
    return lambda e: create_text_mechanism(mech, vocab=get_vocab(vsize), epsilon=e, **extra)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def run_attacks(
    mech: str,
    eps: tuple[float, ...],
    p: float,
    w: float,
    data: str,
    n: int,
    attacks: tuple[str, ...],
    vsize: int,
    seed: int,
    _progress=None,
) -> dict:
    sentences = sample_attack_sentences(load_labelled_dataset(data), n, seed=seed)
    mlm = get_mlm() if MLM_ATTACKS & set(attacks) else None
    return attack_sweep(
        sentences, _maker(mech, p, w, vsize), eps, attacks=attacks, mlm=mlm, seed=seed, progress=_progress
    )


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def run_utility(
    mech: str,
    eps: tuple[float, ...],
    p: float,
    w: float,
    data: str,
    vsize: int,
    ntrain: int,
    ntest: int,
    seed: int,
    _progress=None,
) -> dict:
    split = split_dataset(load_labelled_dataset(data), n_train=ntrain, n_test=ntest, split_seed=0)
    return utility_sweep(split, _maker(mech, p, w, vsize), eps, seed=seed, progress=_progress)


st.title("Attack & utility")
st.caption(
    "Privacy measured empirically, against utility (Yue et al. 2021, §5.2–5.3, Fig. 4). "
    "**Defense rate**: the share of in-vocabulary positions where an attacker's top-1 guess of "
    "the original word is wrong. The paper's attacker masks each position of the sanitized "
    "sentence and lets a masked LM fill it in. The **Bayesian** attacker knows the public "
    "sanitizer and guesses argmax prior(x)·Pr[M(x)=y], computed exactly over V (unigram prior, "
    "or the masked LM's contextual distribution). **Utility**: accuracy of TF-IDF + logistic "
    "regression trained and tested on sanitized text."
)

apply_query_params(SPECS)

with st.sidebar:
    st.header("Mechanism")
    st.multiselect("Mechanisms", MECHANISMS, key="mechs")
    st.multiselect(f"ε values (at most {MAX_EPSILONS})", EPS_GRID, key="eps", max_selections=MAX_EPSILONS)
    plus = "santext+" in st.session_state["mechs"]
    st.slider("p (replace a non-sensitive word)", 0.0, 1.0, step=0.05, key="p", disabled=not plus)
    st.slider("w (fraction of V that is sensitive)", 0.0, 1.0, step=0.05, key="w", disabled=not plus)
    st.select_slider("Vocabulary size (GloVe)", VOCAB_SIZES, key="vsize", format_func=lambda v: f"{v:,}")
    st.header("Data")
    st.selectbox("Dataset", list(DATASETS), key="data", format_func=DATASETS.get)
    st.number_input(f"Sentences to attack (≤ {MAX_SENTENCES})", 5, MAX_SENTENCES, step=5, key="n")
    st.multiselect("Attacks", ATTACKS, key="attacks", format_func=ATTACK_LABELS.get)
    st.select_slider("Training sentences", TRAIN_SIZES, key="ntrain", format_func=lambda v: f"{v:,}")
    st.select_slider("Test sentences", TEST_SIZES, key="ntest", format_func=lambda v: f"{v:,}")
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")

sync_query_params(SPECS)
mechs = list(st.session_state["mechs"])
eps = tuple(sorted(float(e) for e in st.session_state["eps"]))
p, w = float(st.session_state["p"]), float(st.session_state["w"])
data, n, seed = st.session_state["data"], int(st.session_state["n"]), int(st.session_state["seed"])
vsize, ntrain, ntest = (
    int(st.session_state["vsize"]),
    int(st.session_state["ntrain"]),
    int(st.session_state["ntest"]),
)
attacks = list(st.session_state["attacks"])
if not mechs or not eps:
    st.info("Choose at least one mechanism and one ε.")
    st.stop()
if MLM_ATTACKS & set(attacks) and not default_mlm_available():
    st.warning(
        "The shipped masked-LM attacker is not installed (dpcore/attack/models/minilm-mlm); the "
        "masked-LM attacks are skipped. Rebuild it with `python -m dpcore train-attacker`.",
        icon=":material/model_training:",
    )
    attacks = [a for a in attacks if a not in MLM_ATTACKS]
mlm_runs = n * (len(eps) + 1) * len(mechs)
if MLM_ATTACKS & set(attacks) and mlm_runs > MAX_MLM_SENTENCE_RUNS:
    st.error(
        f"The masked-LM attacks would run on {mlm_runs:,} sentences ({n} sentences × "
        f"({len(eps)} ε values + the unsanitized reference) × {len(mechs)} mechanism(s)); this server "
        f"allows {MAX_MLM_SENTENCE_RUNS:,} per request. Lower the sentences, ε values or mechanisms, "
        "choose only the Bayesian unigram attack (it needs no masked LM), or run "
        "`python -m dpcore attack` locally.",
        icon=":material/timer_off:",
    )
    st.stop()

attack_rows: list[dict] = []
utility_rows: list[dict] = []
baselines: dict = {}
params: dict = {}
with show_errors():
    for mech in mechs:
        mp, mw = (p, w) if mech == "santext+" else (0.3, 0.9)
        if attacks:
            bar = st.progress(0.0, text=f"Attacking {mech}…")
            tick = replay_safe(
                lambda d, t, b=bar, m=mech: b.progress(d / t, text=f"Attacking {m}… {100 * d / t:.0f}%")
            )
            res = run_attacks(mech, eps, mp, mw, data, n, tuple(attacks), vsize, seed, _progress=tick)
            bar.empty()
            attack_rows += [{"mechanism": mech, **r} for r in res["rows"]]
            params[f"attack:{mech}"] = res["parameters"]
        bar = st.progress(0.0, text=f"Training classifiers on {mech} text…")
        tick = replay_safe(lambda d, t, b=bar, m=mech: b.progress(d / t, text=f"Training on {m}… {d}/{t}"))
        ures = run_utility(mech, eps, mp, mw, data, vsize, ntrain, ntest, seed, _progress=tick)
        bar.empty()
        utility_rows += [{"mechanism": mech, **r} for r in ures["rows"]]
        baselines = ures["baselines"]
        params[f"utility:{mech}"] = ures["parameters"]

adf = pd.DataFrame(attack_rows)
udf = pd.DataFrame(utility_rows)
c1, c2, c3 = st.columns(3)
c1.metric("Accuracy, unsanitized", f"{baselines['accuracy_unsanitized']:.3f}")
c2.metric("Accuracy, random replacement", f"{baselines['accuracy_random']:.3f}")
c3.metric("Majority class", f"{baselines['majority']:.3f}")

st.subheader("Privacy–utility trade-off (Fig. 4)")
if len(adf):
    st.plotly_chart(tradeoff_figure(adf, udf, baselines), width="stretch", key="tradeoff-figure")
    st.caption(
        "Each point is one ε; hollow markers (ε=∞) are unsanitized text: accuracy without "
        "sanitization, defense = 1 − the attacker's top-1 there. Error bars: 95% Clopper–Pearson."
    )
else:
    st.info("Choose at least one attack to see the trade-off.")

st.subheader("Defense rate and accuracy against ε")
st.plotly_chart(epsilon_figure(adf, udf, baselines), width="stretch", key="epsilon-figure")

if len(adf):
    st.subheader("Defense rates")
    cols = ["mechanism", "attack", "epsilon", "defense_rate", "ci_low", "ci_high", "tokens"]
    cols += ["kept_by_sanitizer", "attacker_top1_unsanitized"]
    st.dataframe(adf[cols], hide_index=True, width="stretch")
    if {"mlm", "bayes-unigram"} <= set(adf["attack"]) or {"mlm", "bayes-mlm"} <= set(adf["attack"]):
        piv = adf.pivot_table(index=["mechanism", "epsilon"], columns="attack", values="defense_rate")
        best = piv.drop(columns=["mlm"]).min(axis=1)
        st.caption(
            f"The Bayesian attacker has the lower defense rate (is stronger) than the masked-LM "
            f"attacker at {(best < piv['mlm']).sum()} of {len(piv)} (mechanism, ε) settings."
        )
    download_buttons(adf, {"runs": params}, f"dpcore-attack-{data}-seed{seed}", key="attack")
st.subheader("Accuracy")
st.dataframe(udf, hide_index=True, width="stretch")
download_buttons(udf, {"runs": params, **baselines}, f"dpcore-utility-{data}-seed{seed}", key="utility")

with st.expander("What is measured, exactly"):
    st.markdown(
        "- Positions scored: tokens whose original word is in V (out-of-vocabulary tokens are "
        "released as `[UNK]` at every ε and no attacker guessing in V can name them).\n"
        "- The masked-LM attack compares whole words: a word that is not a single WordPiece of "
        "the model cannot be predicted by one mask and counts as defended.\n"
        "- The Bayesian attack's MLM prior maps the MLM's WordPiece distribution to V by first "
        "piece, shared among words with that first piece by unigram frequency.\n"
        "- Utility: a fixed split (split seed 0) of the dataset; train and test sanitized with "
        "independent seeded streams; the ε = ∞ reference trains and tests on raw text.\n"
        "- Sentences, split and sanitization are seeded; every download records the parameters."
    )
