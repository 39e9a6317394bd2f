"""Attack & utility: how much sanitized text leaks, and how useful it stays (Yue et al. 2021,
§5.2–5.3, Fig. 4), with a mechanism-aware Bayesian attacker beyond the paper.

Widgets → dpcore.attack (experiment, utility) → dpcore.viz.attack_figure. torch loads only when
a masked-LM attack is selected (dpcore.attack.mlm imports it lazily). Caps keep one visit to
about a minute at most: ≤ 200 sentences, ≤ 6 ε values, ≤ 4,000 training sentences, and with a
masked-LM attack at most 480 sentence runs (sentences × (ε values + 1) ×
mechanisms). Long runs report progress after every batch, so a widget change stops them.

Speed: every result is cached per unit — (mechanism, ε, attack group, sentences, seed) for the
attacks, (mechanism, ε, split, seed) for utility, the ε = ∞ reference and the baselines once —
so adding or removing one ε or mechanism reuses every other unit. The Bayesian attack and
utility are computed first and drawn (seconds); the masked-LM attack then fills the same figures
in unit by unit.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.attack.bayes import bayes_unsupported_reason, prepare_channels
from dpcore.attack.datasets import DATASETS, load_labelled_dataset, split_dataset
from dpcore.attack.experiment import attack_at_epsilon, attack_reference, sample_attack_sentences
from dpcore.attack.mlm import default_mlm_available
from dpcore.attack.utility import utility_at_epsilon, utility_baselines
from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
from dpcore.text.registry import required_embedding
from dpcore.text.vocab import build_vocabulary
from dpcore.viz.attack_figure import ATTACK_LABELS, epsilon_figure, tradeoff_figure
from dpcore.viz.comparison_figure import comparison_figure, comparison_table
from pages._shared import (
    apply_query_params,
    bar_updater,
    choice_param,
    download_buttons,
    ensure_navigation,
    int_param,
    mechanism_param_url_specs,
    mechanism_param_widgets,
    multi_param,
    params_key,
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
#: Every registered text mechanism (its parameters come from the registry's schema).
MECHANISMS = list(TEXT_MECHANISMS.names())
ATTACKS = ["bayes-unigram", "mlm", "bayes-mlm"]
MLM_ATTACKS = {"mlm", "bayes-mlm"}
#: Column names shown in the tables (the downloads keep the machine names).
ATTACK_COLUMNS = {
    "mechanism": "Mechanism",
    "attack": "Attacker",
    "epsilon": "ε",
    "defense_rate": "Defense rate",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "tokens": "Positions scored",
    "kept_by_sanitizer": "Kept by sanitizer",
    "attacker_top1_unsanitized": "Attacker top-1, unsanitized",
}
UTILITY_COLUMNS = {
    "mechanism": "Mechanism",
    "epsilon": "ε",
    "accuracy": "Accuracy (sanitized test)",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "accuracy_raw_test": "Accuracy (raw test)",
    "test_tokens_replaced": "Test tokens replaced",
}
VOCAB_SIZES = [2_000, 5_000, 10_000, 15_000]
TRAIN_SIZES = [500, 1_000, 2_000, 4_000]
TEST_SIZES = [200, 500, 1_000]

SPECS = {
    "mechs": multi_param(["santext", "santext+"], MECHANISMS),
    "eps": multi_param(["1", "3", "10"], EPS_GRID, max_items=MAX_EPSILONS),
    **mechanism_param_url_specs(),
    "data": choice_param("tweets", list(DATASETS)),
    "n": int_param(20, 5, MAX_SENTENCES),
    "attacks": multi_param(["bayes-unigram", "mlm"], ATTACKS),
    "vsize": choice_param(5_000, VOCAB_SIZES),
    "ntrain": choice_param(1_000, TRAIN_SIZES),
    "ntest": choice_param(500, TEST_SIZES),
    "seed": int_param(0, 0, 2**31 - 1),
}


Params = tuple[tuple[str, float | int], ...]


@st.cache_resource(max_entries=4, show_spinner="Loading the embedding…")
def get_vocab(vsize: int, emb: str = "glove"):
    """GloVe at the chosen size; a mechanism that needs another embedding (dp-mlm: BERT
    WordPieces) gets that embedding's whole vocabulary."""
    return build_vocabulary(emb, size=vsize if emb == "glove" else None)


def emb_of(mech: str) -> str:
    return required_embedding(mech) or "glove"


@st.cache_resource(max_entries=1, show_spinner="Loading the masked-LM attacker…")
def get_mlm():
    from dpcore.attack.mlm import load_mlm

    return load_mlm()


def _mechanism(mech: str, eps: float, params: Params, vsize: int):
    return create_text_mechanism(mech, vocab=get_vocab(vsize, emb_of(mech)), epsilon=eps, **dict(params))


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def get_sentences(data: str, n: int, seed: int) -> list[str]:
    return sample_attack_sentences(load_labelled_dataset(data), n, seed=seed)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def get_split(data: str, ntrain: int, ntest: int):
    return split_dataset(load_labelled_dataset(data), n_train=ntrain, n_test=ntest, split_seed=0)


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def run_reference(
    data: str, n: int, group: tuple[str, ...], vsize: int, seed: int, emb: str = "glove", _progress=None
) -> dict:
    """ε = ∞ reference of one attack group; depends on V and the sentences, not the mechanism."""
    mlm = get_mlm() if MLM_ATTACKS & set(group) else None
    mech = create_text_mechanism("santext", vocab=get_vocab(vsize, emb), epsilon=1.0)
    return attack_reference(get_sentences(data, n, seed), mech, attacks=group, mlm=mlm, progress=_progress)


@st.cache_data(max_entries=256, max_size="16MB", show_spinner=False)
def run_attack_unit(
    mech: str,
    eps: float,
    params: Params,
    data: str,
    n: int,
    group: tuple[str, ...],
    vsize: int,
    seed: int,
    _progress=None,
) -> dict:
    """One (mechanism, ε, attack group, sentences, seed) unit."""
    ref = run_reference(data, n, group, vsize, seed, emb_of(mech), _progress=_progress)
    mlm = get_mlm() if MLM_ATTACKS & set(group) else None
    return attack_at_epsilon(
        get_sentences(data, n, seed),
        _mechanism(mech, eps, params, vsize),
        ref,
        attacks=group,
        mlm=mlm,
        seed=seed,
        progress=_progress,
    )


@st.cache_data(max_entries=256, max_size="16MB", show_spinner=False)
def run_utility_unit(
    mech: str, eps: float, params: Params, data: str, vsize: int, ntrain: int, ntest: int, seed: int
) -> dict:
    """One (mechanism, ε, split, seed) utility row."""
    return utility_at_epsilon(get_split(data, ntrain, ntest), _mechanism(mech, eps, params, vsize), seed=seed)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def run_baselines(data: str, vsize: int, ntrain: int, ntest: int, seed: int) -> dict:
    return utility_baselines(get_split(data, ntrain, ntest), get_vocab(vsize), seed=seed)


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

apply_query_params(SPECS, page="attack")

with st.sidebar:
    st.header("Mechanism")
    st.multiselect("Mechanisms", MECHANISMS, key="mechs")
    st.multiselect(f"ε values (at most {MAX_EPSILONS})", EPS_GRID, key="eps", max_selections=MAX_EPSILONS)
    # the selected mechanisms' own parameters, generated from the registry's schema
    widget_params = mechanism_param_widgets(list(st.session_state["mechs"]))
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
# What each mechanism can run here: its ε (truncated-gumbel is undefined below a floor), the
# Bayesian attack (exact channels only), utility (not for mechanisms that read the whole line).
fast = [a for a in attacks if a not in MLM_ATTACKS]
slow = tuple(a for a in attacks if a in MLM_ATTACKS)
plan: dict[str, dict] = {}
plan_notes: list[str] = []
with show_errors():
    for m in mechs:
        prm = params_key(widget_params[m])
        floor = TEXT_MECHANISMS.get(m).factory.minimum_epsilon(get_vocab(vsize, emb_of(m)))
        ok = tuple(e for e in eps if e > floor)
        if len(ok) < len(eps):
            plan_notes.append(f"**{m}** is defined only for ε > {floor:.4g} on this vocabulary: "
                              f"{', '.join(f'{e:g}' for e in eps if e <= floor)} skipped.")  # fmt: skip
        probe = _mechanism(m, ok[0], prm, vsize) if ok else None
        reason = bayes_unsupported_reason(probe) if probe is not None else None
        if reason and (fast or "bayes-mlm" in slow):
            plan_notes.append(f"**{m}**: no Bayesian attack. {reason}.")
        contextual = bool(getattr(probe, "contextual", False))
        if contextual:
            plan_notes.append(
                f"**{m}**: utility is not computed on this server (one masked-LM pass per token of "
                f"{ntrain + ntest:,} sentences); run `python -m dpcore utility --mechanism {m}`."
            )
        if "refuted" in TEXT_MECHANISMS.get(m).tags:
            plan_notes.append(f"**{m}**: dpcore refutes its published guarantee: not private as claimed.")
        plan[m] = {
            "params": prm,
            "eps": ok,
            "fast": [a for a in fast if reason is None],
            "slow": tuple(a for a in slow if a == "mlm" or reason is None),
            "utility": not contextual,
        }
for note in plan_notes:
    st.caption(":material/info: " + note)
if not any(pl["eps"] for pl in plan.values()):
    st.info("None of the chosen mechanisms is defined at the chosen ε: see the notes above.")
    st.stop()
mlm_runs = sum(n * (len(pl["eps"]) + 1) for pl in plan.values() if pl["slow"])
if mlm_runs and mlm_runs > MAX_MLM_SENTENCE_RUNS:
    st.error(
        f"The masked-LM attacks would run on {mlm_runs:,} sentences ({n} sentences × "
        f"(ε values + the unsanitized reference) × {len(mechs)} mechanism(s)); this server "
        f"allows {MAX_MLM_SENTENCE_RUNS:,} per request. Lower the sentences, ε values or mechanisms, "
        "choose only the Bayesian unigram attack (it needs no masked LM), or run "
        "`python -m dpcore attack` locally.",
        icon=":material/timer_off:",
    )
    st.stop()

attack_rows: list[dict] = []
utility_rows: list[dict] = []
mech_params: dict[str, dict] = {}
status = st.progress(0.0, text="Bayesian attack and utility…")
metrics = st.empty()
st.subheader("Privacy–utility trade-off (Fig. 4)")
trade_slot = st.empty()
trade_note = st.empty()
st.subheader("Defense rate and accuracy against ε")
eps_slot = st.empty()
drawn = [0]


def draw(final: bool) -> None:
    """(Re)draw the metrics and both figures from the rows computed so far."""
    adf, udf = pd.DataFrame(attack_rows), pd.DataFrame(utility_rows)
    drawn[0] += 1
    with metrics.container():
        c1, c2, c3 = st.columns(3)
        c1.metric("Accuracy, unsanitized", f"{baselines['accuracy_unsanitized']:.3f}")
        c2.metric("Accuracy, random replacement", f"{baselines['accuracy_random']:.3f}")
        c3.metric("Majority class", f"{baselines['majority']:.3f}")
    if len(adf) and len(udf):
        trade_slot.plotly_chart(
            tradeoff_figure(adf, udf, baselines), width="stretch", key=f"tradeoff-figure-{drawn[0]}"
        )
        trade_note.caption(
            "Each point is one ε; hollow markers (ε=∞) are unsanitized text: accuracy without "
            "sanitization, defense = 1 − the attacker's top-1 there. Error bars: 95% Clopper–Pearson."
            + (
                ""
                if final
                else " **The masked-LM attacker is still running; its points appear as they finish.**"
            )
        )
    elif not len(adf):
        trade_slot.info("Choose at least one attack to see the trade-off.")
    else:
        trade_slot.info("No accuracy for these mechanisms on this server: the trade-off needs it.")
    eps_slot.plotly_chart(
        epsilon_figure(adf, udf, baselines), width="stretch", key=f"epsilon-figure-{drawn[0]}"
    )


with show_errors():
    # Phase 1: Bayesian (unigram) attack and utility, unit by unit: seconds.
    units = sum(len(pl["eps"]) * (bool(pl["fast"]) + pl["utility"]) for pl in plan.values()) + 1
    done = [0]

    def step(text: str) -> None:
        done[0] += 1
        status.progress(min(done[0] / units, 1.0), text=text)

    baselines = run_baselines(data, vsize, ntrain, ntest, seed)
    step("Baselines done")
    for mech, pl in plan.items():
        prm = pl["params"]
        if pl["fast"] and pl["eps"]:  # one distance pass for every ε of this mechanism
            prepare_channels([_mechanism(mech, e, prm, vsize) for e in pl["eps"]])
        for e in pl["eps"]:
            if pl["fast"]:
                unit = run_attack_unit(mech, e, prm, data, n, tuple(pl["fast"]), vsize, seed)
                attack_rows += [{"mechanism": mech, **r} for r in unit["rows"]]
                mech_params[mech] = unit["parameters"]
                step(f"Bayesian attack: {mech}, ε = {e:g}")
            if pl["utility"]:
                row = run_utility_unit(mech, e, prm, data, vsize, ntrain, ntest, seed)
                utility_rows.append({"mechanism": mech, **row})
                step(f"Utility: {mech}, ε = {e:g}")
            mech_params[mech] = mech_params.get(mech) or _mechanism(mech, e, prm, vsize).params()
    draw(final=not any(pl["slow"] and pl["eps"] for pl in plan.values()))
    # Phase 2: the masked-LM attack fills in, one (mechanism, ε) unit at a time.
    todo = [(mech, pl, e) for mech, pl in plan.items() if pl["slow"] for e in pl["eps"]]
    for i, (mech, pl, e) in enumerate(todo):
        label = f"Masked-LM attacker: {mech}, ε = {e:g} ({i + 1} of {len(todo)})"
        status.progress(i / len(todo), text=label)
        tick = bar_updater(
            status,
            lambda d, t, lab=label: f"{lab}: {100 * d / max(t, 1):.0f}%",
            start=i / len(todo),
            span=1 / len(todo),
        )
        unit = run_attack_unit(mech, e, pl["params"], data, n, pl["slow"], vsize, seed, _progress=tick)
        attack_rows += [{"mechanism": mech, **r} for r in unit["rows"]]
        mech_params[mech] = mech_params.get(mech) or unit["parameters"]
        draw(final=i + 1 == len(todo))
status.empty()

adf = pd.DataFrame(attack_rows)
udf = pd.DataFrame(utility_rows)
common = {
    "dataset": data,
    "vocabulary_size": vsize,
    "epsilons": list(eps),
    "seed": seed,
    "unit_cache": "one result per (mechanism, ε, attack group, sentences, seed); ε = ∞ and baselines once",
}
params: dict = {}
for m in mech_params:  # mechanisms that ran at some ε
    mech_p = {k: v for k, v in mech_params[m].items() if k not in {"epsilon", "privacy"}}
    params[f"attack:{m}"] = {
        **mech_p,
        **common,
        "attacks": attacks,
        "sentences": n,
        "seed_streams": "cell_seed_sequence(seed, 'attack', mechanism, ε)",
        # the shipped model by name, never a server path
        "mlm": "shipped minilm-mlm (dpcore/attack/models/minilm-mlm)" if slow else None,
    }
    params[f"utility:{m}"] = {
        **mech_p,
        **common,
        "n_train": ntrain,
        "n_test": ntest,
        "split_seed": 0,
        "seed_streams": "cell_seed_sequence(seed, 'utility', mechanism, 'train'|'test', ε)",
    }
if len(adf):
    st.subheader("Defense rates")
    adf = adf.sort_values(["mechanism", "attack", "epsilon"], kind="stable")
    st.dataframe(adf[list(ATTACK_COLUMNS)].rename(columns=ATTACK_COLUMNS), hide_index=True, width="stretch")
    if {"mlm", "bayes-unigram"} <= set(adf["attack"]) or {"mlm", "bayes-mlm"} <= set(adf["attack"]):
        piv = adf.pivot_table(index=["mechanism", "epsilon"], columns="attack", values="defense_rate")
        best = piv.drop(columns=["mlm"]).min(axis=1)
        st.caption(
            f"The Bayesian attacker has the lower defense rate (is stronger) than the masked-LM "
            f"attacker at {(best < piv['mlm']).sum()} of {len(piv)} (mechanism, ε) settings."
        )
    download_buttons(adf, {"runs": params}, f"dpcore-attack-{data}-seed{seed}", key="attack")
st.subheader("Accuracy")
if len(udf):
    udf = udf.sort_values(["mechanism", "epsilon"], kind="stable")
    st.dataframe(udf[list(UTILITY_COLUMNS)].rename(columns=UTILITY_COLUMNS), hide_index=True, width="stretch")
    download_buttons(udf, {"runs": params, **baselines}, f"dpcore-utility-{data}-seed{seed}", key="utility")
else:
    st.info("No accuracy for the chosen mechanisms and ε on this server (see the notes above).")

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


# ---- every mechanism on one chart (issue 12) -------------------------------------------------
st.header("Every mechanism on one chart")
st.caption(
    "All registered text mechanisms at the same ε grid, on the same sentences and the same "
    "train/test split: defense rate of the Bayesian attacker (only where the mechanism's "
    "distribution is exact) and of the masked-LM attacker, against accuracy. ε is per unit of "
    "embedding distance for metric mechanisms and per pair of words for ε-LDP ones, so **equal ε "
    "is not equal privacy** across the two (solid vs dashed lines)."
)


@st.cache_data(max_entries=2, max_size="16MB", show_spinner=False)
def shipped_comparison() -> dict | None:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "results" / "mechanism_comparison.json"
    if not path.is_file():
        return None
    import json

    return json.loads(path.read_text(encoding="utf-8"))


@st.cache_data(max_entries=4, max_size="16MB", show_spinner=False)
def live_comparison(mechs: tuple[str, ...], eps: tuple[float, ...], seed: int) -> dict:
    from dpcore.attack.comparison import compare_mechanisms

    return compare_mechanisms(
        list(mechs), list(eps), sentences=10, n_train=400, n_test=200, vocab_size=5_000, seed=seed
    )


cmp_res = shipped_comparison()
with st.expander("Recompute on a small sample (live, capped)"):
    fast = [n for n in TEXT_MECHANISMS.names() if required_embedding(n) is None]
    cm = st.multiselect("Mechanisms", list(TEXT_MECHANISMS.names()), default=fast, key="cmp_mechs")
    ce = st.multiselect(
        "ε values (at most 3)",
        ["1", "3", "10", "30", "100"],
        default=["1", "10"],
        key="cmp_eps",
        max_selections=3,
    )
    if any(required_embedding(n) for n in cm):
        st.caption("dp-mlm runs one masked-LM forward pass per token: about a minute per ε.")
    if st.button("Run the comparison", key="cmp_run", disabled=not (cm and ce)):
        with st.spinner("Sanitizing, attacking and training for every mechanism and ε…"), show_errors():
            cmp_res = live_comparison(tuple(cm), tuple(float(e) for e in ce), 0)
if cmp_res:
    p = cmp_res["parameters"]
    st.caption(
        f"{len(p['mechanisms'])} mechanisms, ε ∈ {{{', '.join(f'{e:g}' for e in p['epsilons'])}}}, "
        f"{p['sentences']} attack sentences, {p['n_train']:,}/{p['n_test']:,} train/test, seed {p['seed']}. "
        "Regenerate: `python bench/compare_mechanisms.py`"
        + "".join(
            f", then `python bench/compare_mechanisms.py --mechanisms {','.join(r['mechanisms'])} --append`"
            for r in p.get("appended_runs", [])
        )
        + "."
        + "".join(f" Not in this run: {n} ({why})." for n, why in (p.get("not_in_this_run") or {}).items())
    )
    st.plotly_chart(comparison_figure(cmp_res["rows"]), width="stretch", key="comparison-figure")
    cdf = pd.DataFrame(comparison_table(cmp_res["rows"]))
    st.dataframe(cdf, hide_index=True, width="stretch")
    download_buttons(cdf, p, f"dpcore-mechanism-comparison-seed{p['seed']}", key="comparison")
else:
    st.info("No comparison yet: run `python bench/compare_mechanisms.py`, or recompute above.")
