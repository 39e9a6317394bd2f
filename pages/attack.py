"""Attack & utility: how much sanitized text leaks, and how useful it stays (Yue et al. 2021,
§5.2–5.3, Fig. 4), with a mechanism-aware Bayesian attacker beyond the paper.

Widgets → dpcore.attack (experiment, utility) → dpcore.viz.attack_figure. torch loads only when
a masked-LM attack is selected (dpcore.models.masked_lm imports it lazily). Caps keep one visit to
about a minute at most: ≤ 200 sentences, ≤ 6 ε values, ≤ 4,000 training sentences, and with a
masked-LM attack at most 480 sentence runs (sentences × (ε values + 1) ×
mechanisms). Long runs report progress after every batch, so a widget change stops them.

Speed: every result is cached per unit — (mechanism, ε, attack group, sentences, seed) for the
attacks, (mechanism, ε, split, seed) for utility, the ε = ∞ reference and the baselines once —
so adding or removing one ε or mechanism reuses every other unit. The Bayesian attack and
utility are computed first and drawn (seconds); the masked-LM attack then fills the same figures
in unit by unit. The units of the default view and of the "Paper's Fig. 4 setting" view ship
precomputed (dpcore/data/attack_page_default.json and attack_page_paper_fig4.json, written by
``python -m dpcore precompute-attack-page``) and are used while the attacker on disk and the vocabulary the
page builds are the ones they name, for units with exactly their parameters
(dpcore.attack.page_view): both views draw at once, and a change computes only what it changes.
Each attacker's top-1 on unsanitized text is shown as "unsanitized (ε = ∞)", and each row the
share of positions the sanitizer kept. The "Paper's Fig. 4 setting" button sets the widgets to
dpcore.attack.page_view.paper_view (SanText and SanText+ over the BERT embedding at the paper's
ε, dpcore.attack.paper_setting) and the page then lists what differs from the paper.

First screen (issue 50): the title, one headline sentence with the main numbers
(page_view.headline), the trade-off chart and its two-sentence caption (page_view.tradeoff_caption),
then one line naming the vocabulary the rows used. The notation is one click away ("How to read
this"); the baselines, the attacker's training, the chart against ε and the tables follow in
``more(...)`` (collapsed in talk mode).
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from dpcore.attack import comparison as cmp
from dpcore.attack import page_view as pv
from dpcore.attack import paper_setting as paper
from dpcore.attack import reconstruction_study as rstudy
from dpcore.attack.bayes import prepare_channels
from dpcore.attack.datasets import DATASETS
from dpcore.attack.reconstruction import BOUND_NOTE
from dpcore.formatting import epsilon_text
from dpcore.models.masked_lm import default_mlm_available
from dpcore.text import TEXT_MECHANISMS
from dpcore.text.registry import required_embedding
from dpcore.text.vocab import build_vocabulary
from dpcore.viz.attack_figure import ATTACK_LABELS, epsilon_figure, tradeoff_figure
from dpcore.viz.comparison_figure import DEFAULT_SHOWN, comparison_figure, comparison_table
from dpcore.viz.reconstruction_figure import reconstruction_figure
from pages._shared import (
    apply_query_params,
    bar_updater,
    cells_in_words,
    choice_param,
    download_buttons,
    ensure_navigation,
    int_param,
    mechanism_param_url_specs,
    mechanism_param_widgets,
    more,
    multi_param,
    params_key,
    plot,
    show_errors,
    sync_query_params,
    vocab_size_widget,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
MAX_SENTENCES = 200
MAX_EPSILONS = 6
#: Sentences × (ε values + 1) × mechanisms a masked-LM attack may run per request (page_view's).
MAX_MLM_SENTENCE_RUNS = pv.MAX_MLM_SENTENCE_RUNS
EPS_GRID = list(pv.EPSILON_GRID)
#: Embeddings of the mechanisms that do not need their own (bert: the paper's Fig. 4 setting).
EMBEDDINGS = {"glove": "GloVe", "bert": "BERT, whole words"}
#: Every registered text mechanism (its parameters come from the registry's schema).
MECHANISMS = list(TEXT_MECHANISMS.names())
ATTACKS = ["bayes-unigram", "mlm", "bayes-mlm"]
MLM_ATTACKS = set(pv.MLM_ATTACKS)
#: Column names shown in the tables (the downloads keep the machine names and every column;
#: the attacker's top-1 on unsanitized text is shown as its "unsanitized (ε = ∞)" row).
ATTACK_COLUMNS = {
    "mechanism": "Mechanism",
    "attack": "Attacker",
    "epsilon": "ε",
    "defense_rate": "Defense rate",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "tokens": "Positions scored",
    "kept_share": "Kept unchanged",
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

# The defaults are dpcore.attack.page_view's: its shipped results are of exactly this view.
SPECS = {
    "mechs": multi_param(list(pv.DEFAULT_MECHANISMS), MECHANISMS),
    "eps": multi_param(list(pv.DEFAULT_EPSILONS), EPS_GRID, max_items=MAX_EPSILONS),
    **mechanism_param_url_specs(),
    "emb": choice_param(pv.DEFAULT_EMBEDDING, list(EMBEDDINGS)),
    "data": choice_param(pv.DEFAULT_DATASET, list(DATASETS)),
    "n": int_param(pv.DEFAULT_SENTENCES, 5, MAX_SENTENCES),
    "attacks": multi_param(list(pv.DEFAULT_ATTACKS), ATTACKS),
    "vsize": choice_param(pv.DEFAULT_VOCAB_SIZE, VOCAB_SIZES),
    "ntrain": choice_param(pv.DEFAULT_N_TRAIN, TRAIN_SIZES),
    "ntest": choice_param(pv.DEFAULT_N_TEST, TEST_SIZES),
    "seed": int_param(pv.DEFAULT_SEED, 0, 2**31 - 1),
}


Params = pv.Params


def get_vocab(vsize: int, emb: str = "glove"):
    """GloVe at the chosen size; a mechanism that needs another embedding (dp-mlm: BERT
    WordPieces, bert-wordpiece) gets that embedding's whole vocabulary. Cached by the library
    within the server's memory budget (:mod:`dpcore.models.resident`)."""
    with st.spinner("Loading the embedding…"):  # shown only when a load takes over 0.5 s
        return build_vocabulary(emb, size=vsize if emb == "glove" else None)


emb_of = pv.embedding_of


def paper_fig4_setting() -> None:
    """The paper's Fig. 4 setting (:func:`dpcore.attack.page_view.paper_view`), as widget values:
    SanText and SanText+ (p, w of the paper) over the BERT embedding at the paper's ε, with the
    masked-LM attacker, on the sentences chosen (fewer if the server's cap on masked-LM work
    requires). At the page's other defaults it is a shipped view: it opens at once."""
    chosen = int(st.session_state.get("n", pv.DEFAULT_SENTENCES))
    v = pv.paper_view(dataclasses.replace(pv.default_view(), sentences=chosen))
    st.session_state["mechs"] = list(v.mechanisms)
    st.session_state["eps"] = [f"{e:g}" for e in v.epsilons]
    st.session_state["emb"] = v.embedding
    st.session_state["attacks"] = list(v.attacks)  # the paper's attack (the Bayesian one can be added)
    st.session_state["n"] = v.sentences
    for _mech, prm in v.parameters:
        for name, value in prm:
            st.session_state[name] = value


def get_mlm():
    """The shipped masked LM, cached by the library within the server's memory budget."""
    from dpcore.models.masked_lm import load_mlm

    with st.spinner("Loading the masked-LM attacker…"):
        return load_mlm()


RES = pv.Resources(vocab=get_vocab, mlm=get_mlm)


def _mechanism(mech: str, eps: float, params: Params, vsize: int, emb: str):
    return RES.mechanism(mech, eps, params, vsize, emb)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def get_sentences(data: str, n: int, seed: int) -> list[str]:
    return pv.sentences_unit(data, n, seed)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def get_split(data: str, ntrain: int, ntest: int):
    return pv.split_unit(data, ntrain, ntest)


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def run_reference(
    data: str, n: int, group: tuple[str, ...], vsize: int, seed: int, emb: str, _progress=None
) -> dict:
    """ε = ∞ reference of one attack group; depends on V and the sentences, not the mechanism."""
    return pv.reference_unit(RES, get_sentences(data, n, seed), group, vsize, emb, progress=_progress)


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
    emb: str,
    _progress=None,
) -> dict:
    """One (mechanism, ε, attack group, sentences, seed, embedding) unit."""
    ref = run_reference(data, n, group, vsize, seed, emb_of(mech, emb), _progress=_progress)
    sents = get_sentences(data, n, seed)
    return pv.attack_unit(RES, mech, eps, params, sents, ref, group, vsize, seed, progress=_progress, emb=emb)


@st.cache_data(max_entries=256, max_size="16MB", show_spinner=False)
def run_utility_unit(
    mech: str, eps: float, params: Params, data: str, vsize: int, ntrain: int, ntest: int, seed: int, emb: str
) -> dict:
    """One (mechanism, ε, split, seed, embedding) utility row."""
    return pv.utility_unit(RES, get_split(data, ntrain, ntest), mech, eps, params, vsize, seed, emb)


@st.cache_data(max_entries=16, max_size="16MB", show_spinner=False)
def run_baselines(data: str, vsize: int, ntrain: int, ntest: int, seed: int, emb: str) -> dict:
    return pv.baselines_unit(RES, get_split(data, ntrain, ntest), vsize, seed, emb)


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def run_claim_unit(mech: str, eps: float, params: Params, data: str, n: int, vsize: int, seed: int, emb: str):
    """The claim's shape of one mechanism on the attacked sentences (no attack is run)."""
    return pv.claim_unit(RES, mech, eps, params, get_sentences(data, n, seed), vsize, emb)


@st.cache_data(max_entries=8, max_size="1MB", show_spinner=False)
def attacker_caption(top1_here: float | None, sentences: int) -> str:
    return pv.attacker_caption(top1_here=top1_here, sentences=sentences)


#: Notation and method, one click away (the "How to read this" expander under the chart).
HOW_TO_READ = (
    "We hide words by replacing them at random, then let attackers try to guess the original "
    "words back, and check whether a classifier still learns from the hidden text: privacy "
    "measured empirically, against utility (Yue et al. 2021, §5.2–5.3, Fig. 4).\n\n"
    "- **Defense rate**: the share of in-vocabulary positions where an attacker's top-1 guess "
    "of the original word is wrong (1 = every guess wrong); the attacker *names* the rest.\n"
    "- **The masked-LM attacker** (the paper's) masks each position of the sanitized sentence "
    "and lets a small masked language model fill it in.\n"
    "- **The Bayesian attacker** knows the public sanitizer and guesses argmax "
    "prior(x)·Pr[M(x)=y], computed exactly over V (prior: word frequencies, or the masked LM's "
    "contextual distribution).\n"
    "- **unsanitized (ε = ∞)**: each attacker on the original text (the hollow circles): its "
    "ceiling. A defense rate near it means the attacker fails even without sanitization.\n"
    "- **Utility**: accuracy of TF-IDF + logistic regression trained and tested on sanitized "
    "text; ε is the privacy parameter (smaller: more words replaced).\n"
    "- **The claim's floor** (black, dashed): the lowest defense rate the mechanism's privacy "
    "claim allows against any attacker who sees only the sanitized word:\n"
    "    - ρ(x): how often word x is the original at the scored positions; the best guess "
    "without the sanitized word wins max ρ.\n"
    "    - Any attacker who sees only the sanitized word y wins at most Σ_y max_x ρ(x)·Pr[M(x)=y] "
    "(Bayes vulnerability; Braun, Chatzikokolakis and Palamidessi 2009).\n"
    "    - Under ε-LDP that is at most e^ε·max ρ; under ε·d + ε₀ (metric) claims, for groups G of "
    "words within distance r(G) of a centre, Σ_G min(ρ(G), max_G ρ·e^(ε·r(G)+ε₀)), the best of a "
    "few groupings; CusText's claim holds only inside its own groups.\n"
    "    - Outputs that name their input (SanText+ keeps common words w.p. 1 − p; CusText+ keeps "
    "stopwords) are added in full.\n"
    "    - The claim's floor = 1 − that ceiling, one line per mechanism. The Bayesian attacker "
    "(word frequencies) sees only the sanitized word, so its defense rate should stay above it; a "
    "masked-LM attacker also reads the sentence, which this floor does not cover (the trade-off "
    "chart draws floors only with the Bayesian attacker; the chart against ε always does).\n"
    "    - A floor at 0 means the claim permits an attacker to name every word at that ε. "
    "Refuted claims and mechanisms without an exact channel get the floor their claim would "
    "imply.\n"
    "    - Derivation: the guide's section on the claim's ceiling (docs/guides/attack-utility.md)."
)


st.title("Attack & utility")
# The first screen: the headline (one plain sentence with the main numbers), the trade-off chart
# and its two-sentence caption; everything else comes after, in plain words (issue 50).
headline_slot = st.empty()
apply_query_params(SPECS, page="attack")

with st.sidebar:
    st.header("Mechanism")
    st.button(
        "Paper's Fig. 4 setting", on_click=paper_fig4_setting, key="paper_fig4", icon=":material/menu_book:"
    )
    # no hover help: a tooltip would stay over the page after the click
    st.caption(
        "SanText and SanText+ over BERT at ε = 12, 14, 16 with the masked-LM attacker "
        f"({paper.PAPER_SOURCE.split(',')[0]}, Fig. 4)."
    )
    st.multiselect("Mechanisms", MECHANISMS, key="mechs")
    st.multiselect(f"ε values (at most {MAX_EPSILONS})", EPS_GRID, key="eps", max_selections=MAX_EPSILONS)
    # the selected mechanisms' own parameters, generated from the registry's schema
    widget_params = mechanism_param_widgets(list(st.session_state["mechs"]))
    st.selectbox(
        "Embedding",
        list(EMBEDDINGS),
        key="emb",
        format_func=EMBEDDINGS.get,
        help="The vocabulary and distances of the mechanisms that do not need their own embedding.",
    )
    vocab_size_widget(
        VOCAB_SIZES,
        "GloVe's most frequent words; the BERT embedding uses its whole vocabulary.",
    )
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
emb = str(st.session_state["emb"])
vsize, ntrain, ntest = (
    int(st.session_state["vsize"]),
    int(st.session_state["ntrain"]),
    int(st.session_state["ntest"]),
)
attacks = list(st.session_state["attacks"])
if not mechs or not eps:
    st.info("Choose at least one mechanism and one ε.")
    st.stop()
alerts = st.container()  # what stops or limits the run, above the chart
status = st.progress(0.0, text="Bayesian attack and utility…")
trade_slot = st.empty()
trade_note = st.empty()
vocab_slot = st.empty()
notes_box = st.container()  # the plan's notes: a mechanism skipped at an ε, an attack it cannot get
if paper.is_paper_setting(mechs, eps, emb, {m: dict(params_key(widget_params[m])) for m in mechs}):
    with st.expander(f"The paper's Fig. 4 setting ({paper.PAPER_SOURCE}): what differs, and why"):
        st.markdown("\n".join(f"- {d}" for d in paper.DIFFERENCES))
with st.expander("How to read this", icon=":material/menu_book:"):
    st.markdown(HOW_TO_READ)
with more("The attacker, the baselines, each ε and the tables", icon=":material/table_view:"):
    metrics = st.empty()
    attacker_slot = st.empty()
    shipped_slot = st.empty()
    st.subheader("Defense rate and accuracy against ε")
    eps_slot = st.empty()
    tables = st.container()

if MLM_ATTACKS & set(attacks) and not default_mlm_available():
    alerts.warning(
        "The shipped masked-LM attacker is not installed (dpcore/attack/models/minilm-mlm); the "
        "masked-LM attacks are skipped. Rebuild it with `python -m dpcore train-attacker`.",
        icon=":material/model_training:",
    )
    attacks = [a for a in attacks if a not in MLM_ATTACKS]
# What each mechanism can run here: its ε (truncated-gumbel is undefined below a floor), the
# Bayesian attack (exact channels only), utility (not for mechanisms that read the whole line).
view = pv.View(
    mechanisms=tuple(mechs),
    epsilons=eps,
    parameters=tuple((m, params_key(widget_params[m])) for m in mechs),
    dataset=data,
    sentences=n,
    attacks=tuple(attacks),
    vocab_size=vsize,
    n_train=ntrain,
    n_test=ntest,
    seed=seed,
    embedding=emb,
)
slow = tuple(a for a in attacks if a in MLM_ATTACKS)
plan: dict[str, dict] = {}
plan_notes: list[str] = []
with show_errors():
    plan, plan_notes = pv.plan_view(RES, view)
for note in plan_notes:
    notes_box.caption(":material/info: " + note)
if not any(pl["eps"] for pl in plan.values()):
    status.empty()
    alerts.info("None of the chosen mechanisms is defined at the chosen ε: see the notes below the chart.")
    st.stop()
mlm_runs = sum(n * (len(pl["eps"]) + 1) for pl in plan.values() if pl["slow"])
if mlm_runs and mlm_runs > MAX_MLM_SENTENCE_RUNS:
    status.empty()
    alerts.error(
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
drawn = [0]
claim_shapes: dict = {}


def vocabulary_line() -> str:
    """Which public vocabulary the rows used, in one short line (one label per embedding used)."""
    labels = []
    for e in dict.fromkeys(pv.embedding_of(m, emb) for m in plan if plan[m]["eps"]):
        vocab = get_vocab(vsize, e)
        labels.append(getattr(vocab, "label", None) or f"{EMBEDDINGS.get(e, e)}, {len(vocab.words):,} words")
    return ":material/dictionary: Vocabulary: " + "; ".join(labels) + "."


def draw(final: bool) -> None:
    """(Re)draw the headline, the metrics and both figures from the rows computed so far, with
    the claim's floor."""
    rows, curves, _ = pv.claim_view(claim_shapes, attack_rows, eps)
    adf, udf = pd.DataFrame(rows), pd.DataFrame(utility_rows)
    drawn[0] += 1
    headline_slot.markdown(f"**{pv.headline(rows, utility_rows, baselines)}**")
    with metrics.container():
        c1, c2, c3 = st.columns(3)
        c1.metric("Accuracy, unsanitized", f"{baselines['accuracy_unsanitized']:.3f}")
        c2.metric("Accuracy, random replacement", f"{baselines['accuracy_random']:.3f}")
        c3.metric("Majority class", f"{baselines['majority']:.3f}")
    if slow:
        top1 = next((r["attacker_top1_unsanitized"] for r in rows if r["attack"] == "mlm"), None)
        attacker_slot.caption(":material/smart_toy: " + attacker_caption(top1, n))
    if len(adf) and len(udf):
        plot(tradeoff_figure(adf, udf, baselines), key=f"tradeoff-figure-{drawn[0]}", slot=trade_slot)
        trade_note.caption(
            pv.tradeoff_caption(rows, utility_rows)
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
    vocab_slot.caption(vocabulary_line())
    plot(epsilon_figure(adf, udf, baselines, curves), key=f"epsilon-figure-{drawn[0]}", slot=eps_slot)


# The shipped views' results (python -m dpcore precompute-attack-page: the defaults and the
# paper's Fig. 4 setting), made with the attacker whose SHA-256 they record over the vocabulary
# whose label they record: used only while both are the page's, and only for units whose every
# parameter equals a shipped view's (so one widget change away from a shipped view still reuses
# every unit it does not touch); anything else is computed.
shipped = pv.load_shipped_set(vocabulary_label=lambda vs, e: getattr(get_vocab(vs, e), "label", None))
from_shipped = [0, 0]  # units taken from a shipped file, units in all


def shipped_attack(mech: str, e: float, prm: Params, group: tuple[str, ...]) -> dict | None:
    return shipped.attack_unit(mech, e, prm, data, n, group, vsize, seed, emb)


def attack_unit_for(mech: str, e: float, prm: Params, group: tuple[str, ...], progress=None) -> dict:
    found = shipped_attack(mech, e, prm, group)
    from_shipped[0] += found is not None
    from_shipped[1] += 1
    return found or run_attack_unit(mech, e, prm, data, n, group, vsize, seed, emb, _progress=progress)


def utility_unit_for(mech: str, e: float, prm: Params) -> dict:
    found = shipped.utility_unit(mech, e, prm, data, vsize, ntrain, ntest, seed, emb)
    from_shipped[0] += found is not None
    from_shipped[1] += 1
    return found or run_utility_unit(mech, e, prm, data, vsize, ntrain, ntest, seed, emb)


def baselines_for() -> dict:
    found = shipped.baselines_unit(data, vsize, ntrain, ntest, seed, emb)
    return found or run_baselines(data, vsize, ntrain, ntest, seed, emb)


with show_errors():
    # Phase 1: Bayesian (unigram) attack and utility, unit by unit: seconds.
    units = sum(len(pl["eps"]) * (bool(pl["fast"]) + pl["utility"]) for pl in plan.values()) + 1
    done = [0]

    def step(text: str) -> None:
        done[0] += 1
        status.progress(min(done[0] / units, 1.0), text=text)

    baselines = baselines_for()
    step("Baselines done")
    # the claim's ceiling needs only the scored positions' original words: no attack is run
    for mech, pl in plan.items():
        if pl["eps"]:
            claim_shapes[mech] = run_claim_unit(mech, pl["eps"][0], pl["params"], data, n, vsize, seed, emb)
    for mech, pl in plan.items():
        prm = pl["params"]
        if pl["eps"]:
            mech_params[mech] = pl["mechanism_parameters"]
        fast_group = tuple(pl["fast"])
        # one distance pass for every ε whose Bayesian unit is still to compute
        if fast_group and any(shipped_attack(mech, e, prm, fast_group) is None for e in pl["eps"]):
            prepare_channels([_mechanism(mech, e, prm, vsize, emb) for e in pl["eps"]])
        for e in pl["eps"]:
            if pl["fast"]:
                unit = attack_unit_for(mech, e, prm, tuple(pl["fast"]))
                attack_rows += [{"mechanism": mech, **r} for r in unit["rows"]]
                step(f"Bayesian attack: {mech}, ε = {epsilon_text(e)}")
            if pl["utility"]:
                row = utility_unit_for(mech, e, prm)
                utility_rows.append({"mechanism": mech, **row})
                step(f"Utility: {mech}, ε = {epsilon_text(e)}")
    todo = [(mech, pl, e) for mech, pl in plan.items() if pl["slow"] for e in pl["eps"]]
    pending = [t for t in todo if shipped_attack(t[0], t[2], t[1]["params"], t[1]["slow"]) is None]
    if len(pending) < len(todo):  # shipped masked-LM units: no need to draw twice
        for mech, pl, e in (t for t in todo if t not in pending):
            unit = attack_unit_for(mech, e, pl["params"], pl["slow"])
            attack_rows += [{"mechanism": mech, **r} for r in unit["rows"]]
    draw(final=not pending)
    # Phase 2: the masked-LM attack fills in, one (mechanism, ε) unit at a time.
    for i, (mech, pl, e) in enumerate(pending):
        label = f"Masked-LM attacker: {mech}, ε = {epsilon_text(e)} ({i + 1} of {len(pending)})"
        status.progress(i / len(pending), text=label)
        tick = bar_updater(
            status,
            lambda d, t, lab=label: f"{lab}: {100 * d / max(t, 1):.0f}%",
            start=i / len(pending),
            span=1 / len(pending),
        )
        unit = attack_unit_for(mech, e, pl["params"], pl["slow"], progress=tick)
        attack_rows += [{"mechanism": mech, **r} for r in unit["rows"]]
        draw(final=i + 1 == len(pending))
status.empty()
if from_shipped[0]:
    whole = shipped.named(view) if from_shipped[0] == from_shipped[1] else None
    docs = [s.document for s in shipped.views]
    whence = (
        f"`python -m dpcore precompute-attack-page`, dpcore {docs[0]['dpcore_version']}, attacker SHA-256 "
        f"{docs[0]['attacker']['sha256'][:12]}…"
    )
    if whole is not None:
        shipped_slot.caption(
            f":material/inventory_2: These are the **shipped results of "
            f"{pv.shipped_listing([whole.name])}** ({whence}); a changed setting computes only the "
            "results it changes."
        )
    else:
        share = "All" if from_shipped[0] == from_shipped[1] else f"{from_shipped[0]} of"
        rest = "" if from_shipped[0] == from_shipped[1] else "; the rest were computed"
        listed = pv.shipped_listing([s.name for s in shipped.views])
        shipped_slot.caption(
            f":material/inventory_2: {share} {from_shipped[1]} results shown are shipped, precomputed "
            f"for {listed} (same parameters; {whence}){rest}."
        )

claim_rows, _, claim_download = pv.claim_view(claim_shapes, attack_rows, eps)
adf = pd.DataFrame(claim_rows)
udf = pd.DataFrame(utility_rows)
common = {
    "dataset": data,
    "embedding": emb,
    "vocabulary_size": vsize if emb == "glove" else "the embedding's whole vocabulary",
    "vocabulary": {
        e: getattr(get_vocab(vsize, e), "label", None)
        for e in dict.fromkeys(emb_of(m, emb) for m in mech_params)
    },
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
with tables:
    if len(adf):
        st.subheader("Defense rates")
        adf = adf.sort_values(["mechanism", "attack", "epsilon"], kind="stable")
        # the attacker's ceiling (ε = ∞: its top-1 on the original text) closes each attacker's rows
        shown = pd.concat([adf, pd.DataFrame(pv.ceiling_rows(attack_rows))], ignore_index=True)
        st.dataframe(
            cells_in_words(shown[list(ATTACK_COLUMNS)]).rename(columns=ATTACK_COLUMNS),
            hide_index=True,
            width="stretch",
        )
        if {"mlm", "bayes-unigram"} <= set(adf["attack"]) or {"mlm", "bayes-mlm"} <= set(adf["attack"]):
            piv = adf.pivot_table(index=["mechanism", "epsilon"], columns="attack", values="defense_rate")
            best = piv.drop(columns=["mlm"]).min(axis=1)
            st.caption(
                f"The Bayesian attacker has the lower defense rate (is stronger) than the masked-LM "
                f"attacker at {(best < piv['mlm']).sum()} of {len(piv)} (mechanism, ε) settings."
            )
        download_buttons(
            adf,
            {"runs": params, "claim_ceiling": claim_download},
            f"dpcore-attack-{data}-seed{seed}",
            key="attack",
        )
    st.subheader("Accuracy")
    if len(udf):
        udf = udf.sort_values(["mechanism", "epsilon"], kind="stable")
        st.dataframe(
            cells_in_words(udf[list(UTILITY_COLUMNS)]).rename(columns=UTILITY_COLUMNS),
            hide_index=True,
            width="stretch",
        )
        download_buttons(
            udf, {"runs": params, **baselines}, f"dpcore-utility-{data}-seed{seed}", key="utility"
        )
    else:
        st.info("No accuracy for the chosen mechanisms and ε on this server (see the notes under the chart).")

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
    return cmp.load_comparison()


@st.cache_data(max_entries=4, max_size="16MB", show_spinner=False)
def live_comparison(mechs: tuple[str, ...], eps: tuple[float, ...], seed: int) -> dict:
    return cmp.compare_mechanisms(
        list(mechs), list(eps), sentences=10, n_train=400, n_test=200, vocab_size=5_000, seed=seed
    )


@st.cache_data(max_entries=1, max_size="1MB", show_spinner=False)
def comparison_ceiling() -> dict | None:
    """The ε = ∞ end of the shipped comparison (precomputed with the default view)."""
    shipped_doc = pv.load_shipped()
    return None if shipped_doc is None else shipped_doc.document["results"].get("comparison_ceiling")


@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def comparison_claim_unit(mech: str, e: float, dataset: str, n: int, vsize: int, seed: int):
    """The claim's shape of one compared mechanism on the comparison's sentences."""
    sents = get_sentences(dataset, n, seed)
    return pv.claim_unit(RES, mech, e, pv.default_parameters(mech), sents, vsize, "glove")


def comparison_claims(shown: tuple[str, ...], rows: list[dict], p: dict) -> dict:
    """mechanism → claim shape, for the shown mechanisms at an ε they are defined at."""
    return {
        m: comparison_claim_unit(m, e, p["dataset"], p["sentences"], p["vocab_size"], p["seed"])
        for m, e in cmp.claim_epsilons(shown, rows).items()
    }


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
    st.caption(cmp.comparison_caption(p))
    cmp_rows = pv.with_comparison_ceiling(cmp_res["rows"], p, comparison_ceiling())
    present = list(dict.fromkeys(r["mechanism"] for r in cmp_rows))
    shown = st.multiselect(
        "Mechanisms shown (one panel each)",
        present,
        default=[m for m in DEFAULT_SHOWN if m in present] or present[:3],
        key="cmp_shown",
    )
    with show_errors():  # the claim's floor of the shown mechanisms (older results lack it)
        cmp_rows = pv.with_comparison_claims(cmp_rows, comparison_claims(tuple(shown), cmp_rows, p))
    if not any(r.get("attacker_top1_unsanitized_mlm") is not None for r in cmp_rows):
        st.caption(
            ":material/info: These results predate the ε = ∞ point (each attacker on unsanitized "
            "text); regenerate them to see it."
        )
    plot(comparison_figure(cmp_rows, shown), key="comparison-figure")
    with more("The comparison's table", icon=":material/table_view:"):
        cdf = pd.DataFrame(comparison_table(cmp_rows))
        st.dataframe(cells_in_words(cdf), hide_index=True, width="stretch")
        download_buttons(
            pd.DataFrame(comparison_table(cmp_rows, claim=True)),
            {**p, "claim_ceiling": pv.claim_view({}, [], p["epsilons"])[2]},
            f"dpcore-mechanism-comparison-seed{p['seed']}",
            key="comparison",
        )
else:
    st.info("No comparison yet: run `python bench/compare_mechanisms.py`, or recompute above.")


# ---- LLM reconstruction (issue 62) -----------------------------------------------------------
st.header("LLM reconstruction")
st.caption(
    "A language model (SmolLM2-135M-Instruct, run locally and greedily) reads the whole sanitized "
    "sentence and writes the original it guesses (Pang et al. 2024, adapted). A word counts as "
    "recovered when the model's word at its place is the original. It runs on 64 famous public "
    "lines the model has almost surely read and 64 lines written after its release, so memory of "
    "the text shows apart from inverting the mechanism. Shipped results: the LLM needs torch, so "
    f"the page does not run it (`{rstudy.COMMAND}` regenerates them; "
    "`python -m dpcore attack --attack llm` runs it on your settings)."
)


@st.cache_data(max_entries=1, max_size="4MB", show_spinner=False)
def shipped_reconstruction() -> dict | None:
    return rstudy.load_study()


rec_doc = shipped_reconstruction()
if rec_doc:
    rec_table = rstudy.study_table(rec_doc)
    st.markdown(rstudy.study_headline(rec_doc))
    plot(reconstruction_figure(rec_table), key="reconstruction-figure")
    st.caption(BOUND_NOTE)
    rw_rows = rstudy.study_rewriter_display(rec_doc)
    if rw_rows:
        st.markdown(
            "**Paraphrasing rewriters** release no word per word, so there is no place to guess at and "
            "no one-word ceiling: the reply is scored as a bag of words, with the words missing from "
            "the paraphrase apart (what the LLM wrote rather than copied)."
        )
        st.dataframe(pd.DataFrame(rw_rows), hide_index=True, width="stretch")
    with more("The reconstruction's table and examples", icon=":material/table_view:"):
        st.dataframe(pd.DataFrame(rstudy.study_display(rec_table)), hide_index=True, width="stretch")
        st.markdown(
            "\n".join(
                f"- **{e['mechanism']}, ε = {epsilon_text(e['epsilon'])}, {e['sentences']}**: "
                f"original *{e['original']}* → released *{e['released']}* → the LLM wrote "
                f"*{e['reconstruction'] or '(nothing)'}*"
                for e in rstudy.study_examples(rec_doc, per_run=1)
            )
        )
        download_buttons(
            pd.DataFrame(rec_table), rec_doc["parameters"], "dpcore-llm-reconstruction", key="reconstruction"
        )
else:
    st.info(f"No reconstruction study is shipped: run `{rstudy.COMMAND}`.")
