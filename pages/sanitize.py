"""Sanitize text: SanText, SanText+ and baselines over real word embeddings (Yue et al. 2021).

Widgets → dpcore.text (mechanisms, sanitize, metrics) → dpcore.viz.sanitize_figure. Embeddings
and vocabularies are cached by the library within the server's memory budget
(:mod:`dpcore.models.resident`), results per input (st.cache_data).
The URL carries every setting except the text itself.

The first screen tells the story (issue 50): one headline sentence (the mechanism, ε, how many
words it replaced), the sanitized text with the vocabulary it drew from, and beside it the figure
of each word's chance to be kept. Comparisons, draws, downloads and the per-word table come after
it (collapsed in talk mode). The vocabulary leaves out slurs and insults unless the sidebar's
"Full vocabulary" box (``fullvocab``) is ticked.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.commands.sanitize import DEFAULT_VOCAB_SIZE
from dpcore.formatting import epsilon_text
from dpcore.jsonutil import dumps
from dpcore.reproduce import sanitize_command, shell_command
from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
from dpcore.text.corpora import CORPORA, sample_sentences
from dpcore.text.embeddings import EMBEDDINGS
from dpcore.text.metrics import metrics_over_epsilons, token_metrics
from dpcore.text.registry import required_embedding
from dpcore.text.sanitize import (
    MAX_PAGE_CHARS,
    check_text,
    decode_text,
    draw_rng,
    sanitize_lines,
    split_lines,
)
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.viz.highlight import highlight
from dpcore.viz.sanitize_figure import plot_words, sanitize_figure
from pages._shared import (
    apply_query_params,
    bar_updater,
    bool_param,
    choice_param,
    download_buttons,
    ensure_navigation,
    float_param,
    int_param,
    mechanism_param_url_specs,
    mechanism_param_widgets,
    more,
    multi_param,
    page_intro,
    params_key,
    plot,
    resend_to_unmounted_widgets,
    show_errors,
    sync_query_params,
    talk_mode,
    vocab_size_widget,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
VOCAB_SIZES = [2_000, 5_000, 10_000, 15_000]
#: ε values offered for the side-by-side comparison (at most 3 extra panels of each kind).
COMPARE_EPS = ["0.5", "1", "2", "3", "5", "10", "20", "50"]
MAX_METRIC_WORDS = 25
MAX_PLOT_WORDS = 4
POPULATION = 2_000  # inputs sampled for S_y*
MAX_SAMPLE = 10_000  # sample numbers offered for the input sentences (each a seeded draw of lines)
_BERT_GRID = [1, 2, 4, 8, 12, 16, 24, 32]
EPS_GRID = {"glove": [0.5, 1, 2, 3, 5, 8, 12, 20], "bert": _BERT_GRID, "bert-wordpiece": _BERT_GRID}
SOURCES = ["sample", "paste", "upload"]
DEFAULT_TEXT = (
    "The patient was diagnosed with cancer in Boston last week.\nIt's a charming and often affecting journey."
)
SOURCE_LABELS = {"sample": "Sample sentences", "paste": "Paste text", "upload": "Upload a file"}
PASTED_KEY = "_dpcore_pasted_text"  # the pasted text, kept for this session across pages

SPECS = {
    "mech": choice_param("santext+", TEXT_MECHANISMS.names()),
    "emb": choice_param("glove", list(EMBEDDINGS)),
    "eps": float_param(3.0, 0.01, 1000.0),
    # every mechanism's own parameters (p, w, k, beta, lam, t, …), from the registry's schema
    **mechanism_param_url_specs(),
    "vsize": choice_param(DEFAULT_VOCAB_SIZE["glove"], VOCAB_SIZES),
    "seed": int_param(0, 0, 2**31 - 1),
    "nsent": int_param(3, 1, 20),
    "sample": int_param(0, 0, MAX_SAMPLE),
    "also": multi_param([], TEXT_MECHANISMS.names(), max_items=3, allow_empty=True),
    "also_eps": multi_param([], COMPARE_EPS, max_items=3, allow_empty=True),
    "draws": int_param(5, 1, 10),
    "source": choice_param("sample", SOURCES),
    "corpus": choice_param("tweets", list(CORPORA)),
    "oov": choice_param("mask", ["mask", "keep"]),
    "fullvocab": bool_param(False),
}


#: The first screen: the sanitized text (and the input above it) beside the figure.
STORY_COLUMNS = [5, 6]
#: The figure's height in talk mode (px): its larger text leaves less of a 720-px screen to it.
TALK_HEIGHT = 390

#: The per-word table in plain words: machine column → (shown name, its definition on hover,
#: number format). The notation is in "How to read this" and in each column's help.
PLAIN_COLUMNS: dict[str, tuple[str, str, str | None]] = {
    "word": ("Word", "A word of the text (the first 25 distinct ones in the vocabulary).", None),
    "sensitive": (
        "Sensitive",
        "In SanText+'s sensitive set V_S, the rarest w·|V| words, which it always replaces by "
        "sampling; blank for mechanisms that treat every word alike.",
        None,
    ),
    "N_x": ("Chance kept", "N_x = Pr[M(x) = x]: the chance the word comes through unchanged.", "percent"),
    "S_x": (
        "Becomes one of",
        "S_x: the fewest different output words that hold 95% of the word's probability.",
        "localized",
    ),
    "S_y_star_mc": (
        "Could come from",
        f"S_y* (Monte-Carlo): how many different input words, over {POPULATION:,} sampled ones, "
        "give the same outputs as this word; more is more deniable.",
        "localized",
    ),
    "S_y_star_expected": ("Could come from (expected)", "The expected value of S_y*.", "%.1f"),
}
#: The same words for researchers: the entropies and the Monte-Carlo counts.
RESEARCH_COLUMNS: dict[str, tuple[str, str, str | None]] = {
    "word": ("Word", "A word of the text.", None),
    "method": ("Computed", "exact: from the closed form; mc: Monte-Carlo only.", None),
    "S_x_mc": ("Outputs in 1,000 runs", "S_x (MC): distinct outputs over 1,000 runs.", "localized"),
    "H0": ("H₀ (nats)", "H₀ = ln S_x.", "%.3f"),
    "H_inf": ("H∞ (nats)", "H∞ = −ln of the largest output probability (min-entropy).", "%.3f"),
}


def word_table(df: pd.DataFrame, columns: dict[str, tuple[str, str, str | None]]) -> None:
    """Show the listed columns of ``df`` under their plain names, each with its definition on hover.

    Parameters
    ----------
    df
        One row per word (:func:`dpcore.text.metrics.token_metrics`).
    columns
        Machine column → (shown name, definition, number format or None); missing columns are
        skipped. The downloads keep every column under its machine name.
    """
    keep = [c for c in columns if c in df.columns]
    config = {
        columns[c][0]: (
            st.column_config.NumberColumn(help=columns[c][1], format=columns[c][2])
            if columns[c][2]
            else st.column_config.Column(help=columns[c][1])
        )
        for c in keep
    }
    st.dataframe(
        df[keep].rename(columns={c: columns[c][0] for c in keep}),
        hide_index=True,
        width="stretch",
        column_config=config,
    )


def mechanism_title(name: str) -> str:
    """The mechanism's name as a sentence writes it ("santext+" → "SanText+"): the registry's
    display name (:meth:`dpcore.registry.Registry.display_name`)."""
    return TEXT_MECHANISMS.display_name(name)


#: Which vocabulary of an embedding: (GloVe's size, whether offensive words are kept).
VocabKey = tuple[int, bool]


def get_vocab(emb: str, vkey: VocabKey) -> Vocabulary:
    """The embedding's vocabulary: GloVe cut to its size, offensive words left out unless full.
    Cached by the library within the server's memory budget (:mod:`dpcore.models.resident`), so
    the page keeps no copy of its own."""
    vsize, full = vkey
    with st.spinner("Loading the embedding…"):  # shown only when a load takes over 0.5 s
        return build_vocabulary(emb, size=vsize if emb == "glove" else None, full=full)


Params = tuple[tuple[str, float | int], ...]


def _mechanism(mech: str, emb: str, eps: float, params: Params, vkey: VocabKey):
    return create_text_mechanism(mech, vocab=get_vocab(emb, vkey), epsilon=eps, **dict(params))


@st.cache_data(max_entries=64, max_size="16MB", show_spinner=False)
def run_sanitize(
    text: str,
    mech: str,
    emb: str,
    eps: float,
    params: Params,
    vkey: VocabKey,
    seed: int,
    draws: int,
    oov: str,
    _progress=None,
) -> dict:
    m = _mechanism(mech, emb, eps, params, vkey)
    lines = split_lines(text)
    results = []
    for k in range(draws):
        # Draw 1 = the seed itself, as the CLI and the library (dpcore.text.sanitize.draw_rng).
        results.append(sanitize_lines(lines, m, seed=draw_rng(seed, k + 1), oov=oov))
        if _progress is not None:  # a widget change stops the run between draws
            _progress(k + 1, draws)
    first = results[0]
    return {
        "original_tokens": first.original_tokens,
        "oov": [o.tolist() for o in first.oov],
        "draws": [{"lines": r.lines, "tokens": r.sanitized_tokens, "summary": r.summary()} for r in results],
        "parameters": {
            **first.parameters,
            "seed": seed,
            "draws": draws,
            "draw_seeds": "draw 1: seed; draw k: SeedSequence(seed, spawn_key=(k-1,)) (draw_rng)",
        },
    }


@st.cache_data(max_entries=64, max_size="16MB", show_spinner="Computing privacy metrics…")
def run_metrics(
    words: tuple[str, ...], mech: str, emb: str, eps: float, params: Params, vkey: VocabKey, seed: int
) -> list[dict]:
    m = _mechanism(mech, emb, eps, params, vkey)
    return token_metrics(m, list(words), seed=seed, population=POPULATION)


@st.cache_data(max_entries=32, max_size="16MB", show_spinner="Computing N_x and S_x across ε…")
def run_curves(
    words: tuple[str, ...], mech: str, emb: str, params: Params, vkey: VocabKey, seed: int
) -> list[dict]:
    # ε at or below a mechanism's own floor (truncated-gumbel's calibration) is left out
    floor = TEXT_MECHANISMS.get(mech).factory.minimum_epsilon(get_vocab(emb, vkey))
    grid = [e for e in EPS_GRID[emb] if e > floor] or [round(floor * f, 1) for f in (1.1, 2, 5, 10)]
    return metrics_over_epsilons(
        lambda e: _mechanism(mech, emb, e, params, vkey), list(words), grid, seed=seed, trials=200
    )


page_intro(
    "Sanitize text",
    "Which words a privacy mechanism replaces, and each word's chance to come through unchanged.",
    "Yue et al. (2021): every token x is replaced by a word y sampled with probability ∝ "
    "exp(−½·ε·d(x, y)), d the Euclidean distance of their embeddings (SanText, eq. 1, "
    "ε·d-MLDP: ε·d + ε₀ with ε₀ = 0). "
    "SanText+ (Algorithm 2) protects only the rarest w·|V| words (its sensitive set V_S) and keeps "
    "the others with probability 1 − p (UMLDP, ε₀ = ln 1/p). Baselines: Feyisetan et al. (2020) and "
    "uniform random replacement.\n\n"
    "**The figure and the table, in the paper's notation** (Yue et al. 2021, §5.5): the chance a "
    "word is kept is N_x = Pr[M(x) = x]; the words it becomes are its effective support S_x, the "
    "smallest set of outputs holding 95% of the probability (H₀ = ln S_x, in nats); the words its "
    "output could come from are S_y*, counted over sampled inputs; H∞ = −ln of the largest output "
    "probability is the min-entropy (nats). N_x and S_x are exact where the mechanism has a closed "
    "form, Monte-Carlo otherwise.",
)

apply_query_params(SPECS, page="sanitize")

with st.sidebar:
    st.header("Mechanism")
    st.selectbox("Mechanism", TEXT_MECHANISMS.names(), key="mech")
    st.selectbox("Embedding", list(EMBEDDINGS), key="emb", format_func=lambda e: EMBEDDINGS[e].title)
    st.number_input("ε", min_value=0.01, max_value=1000.0, step=0.5, key="eps")
    # the selected mechanisms' own parameters, generated from the registry's schema
    mech_params = mechanism_param_widgets(
        list(dict.fromkeys([st.session_state["mech"], *st.session_state["also"]]))
    )
    vocab_size_widget(
        VOCAB_SIZES,
        "The most frequent GloVe words by public frequency (wordfreq). BERT uses every token "
        "it allows: its whole words (bert), or the paper's WordPieces (bert-wordpiece).",
    )
    st.checkbox(
        "Full vocabulary (research: may output slurs and insults)",
        key="fullvocab",
        help="By default the vocabulary leaves out slurs and insults (a maintained public word "
        "list), so no mechanism can output them, and the guarantee holds over that vocabulary. "
        "Tick to sample from every word of the embedding, as the papers did.",
    )
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")
    st.number_input("Draws (repeat the sampling)", min_value=1, max_value=10, step=1, key="draws")
    st.header("Side by side")
    st.multiselect("Also with mechanisms (same ε)", TEXT_MECHANISMS.names(), key="also", max_selections=3)
    st.multiselect("Also at ε (same mechanism)", COMPARE_EPS, key="also_eps", max_selections=3)
    st.radio(
        "Out-of-vocabulary tokens",
        ["mask", "keep"],
        key="oov",
        format_func=lambda o: "mask as [UNK] (private)" if o == "mask" else "keep (not private)",
    )

sync_query_params(SPECS)
mech, emb = st.session_state["mech"], st.session_state["emb"]
needed = required_embedding(mech)
if needed is not None and needed != emb:
    st.caption(
        f"{mechanism_title(mech)} samples the tokens of its own model: it runs over the {needed} embedding."
    )
    emb = needed
#: A masked-LM mechanism runs one forward pass per token (~40 tokens/s on 2 cores).
LM_MAX_CHARS = 600
eps = float(st.session_state["eps"])
mparams = params_key(mech_params[mech])
if "refuted" in TEXT_MECHANISMS.get(mech).tags:
    st.error(
        f"**{mechanism_title(mech)} is not private as claimed.** dpcore refutes its published guarantee "
        "with an exact bound (see its guarantee line and docs/mechanisms). It is here to compare and audit.",
        icon=":material/dangerous:",
    )
vsize, seed = int(st.session_state["vsize"]), int(st.session_state["seed"])
full_vocab = bool(st.session_state["fullvocab"])
vkey: VocabKey = (vsize, full_vocab)
draws, oov = int(st.session_state["draws"]), st.session_state["oov"]

# ---- the first screen: headline; the sanitized text beside the figure --------------------------
headline = st.empty()
text_col, fig_col = st.columns(STORY_COLUMNS, gap="medium")
source = st.session_state["source"]
text = ""
with text_col, show_errors():
    with more("Input: sample sentences or your own text", icon=":material/input:"):
        st.radio("Input", SOURCES, key="source", horizontal=True, format_func=SOURCE_LABELS.get)
        source = st.session_state["source"]
        if source == "sample":
            c1, c2, c3 = st.columns([3, 1, 1])
            c1.selectbox("Corpus", list(CORPORA), key="corpus", format_func=lambda c: CORPORA[c].title)
            n_sent = c2.number_input("Sentences", 1, 20, key="nsent")
            # the input has its own control: the seed changes the draw, never the sentences
            sample_no = c3.number_input(
                "Sample", 0, MAX_SAMPLE, key="sample", help="which sentences: another number, another sample"
            )
            text = "\n".join(sample_sentences(st.session_state["corpus"], int(n_sent), seed=int(sample_no)))
            st.caption(
                ":material/filter_alt: Samples come only from lines that hold no word a default vocabulary "
                "leaves out (dpcore.text.corpora.clean_corpus)."
            )
        elif source == "paste":
            # Streamlit drops a widget's value when the visitor opens another page; the text is
            # kept under a key of its own, so coming back to this page shows it again.
            if "text" not in st.session_state:
                st.session_state["text"] = st.session_state.get(PASTED_KEY, DEFAULT_TEXT)
            resend_to_unmounted_widgets(["text"])
            text = st.text_area(
                f"Text (one sentence per line, at most {MAX_PAGE_CHARS:,} characters)",
                key="text",
                height=120,
            )
            st.session_state[PASTED_KEY] = text
            st.caption(
                ":material/link_off: Pasted text never goes into the page's link (it may be private "
                "and URLs are logged): a shared link opens with the example text."
            )
        else:
            up = st.file_uploader("UTF-8 text file", type=["txt"], key="upload")
            if up is None:
                st.info("Choose a text file to sanitize.")
                st.stop()
            text = decode_text(up.getvalue(), what="the uploaded file", max_bytes=4 * MAX_PAGE_CHARS)
    text = check_text(text, max_chars=MAX_PAGE_CHARS)
    if needed is not None and len(text) > LM_MAX_CHARS:
        st.warning(
            f"{mechanism_title(mech)} runs one masked-LM forward pass per token: this page sanitizes the "
            f"first {LM_MAX_CHARS} characters (use `python -m dpcore sanitize` for longer text)."
        )
        text = text[:LM_MAX_CHARS]
    bar = st.progress(0.0, text="Sanitizing…")
    tick = bar_updater(bar, lambda d, t: f"Sanitized {d} of {t} draws")
    try:
        res = run_sanitize(text, mech, emb, eps, mparams, vkey, seed, draws, oov, _progress=tick)
    finally:
        bar.empty()

params = res["parameters"]
orig = res["original_tokens"]
first = res["draws"][0]
changed = [[a != b for a, b in zip(o, s, strict=True)] for o, s in zip(orig, first["tokens"], strict=True)]
in_vocab = sum(1 for u in res["oov"] for unk in u if not unk)


def words_replaced(tokens: list[list[str]]) -> int:
    """In-vocabulary tokens a draw replaced: the headline's count (an out-of-vocabulary token that
    became [UNK] is counted apart, as "outside the vocabulary")."""
    return sum(
        1
        for o, t, u in zip(orig, tokens, res["oov"], strict=True)
        for a, b, unk in zip(o, t, u, strict=True)
        if a != b and not unk
    )


replaced = words_replaced(first["tokens"])
n_unknown = sum(1 for u in res["oov"] for unk in u if unk)
n_lines = len(orig)
what = {
    "sample": f"{n_lines} sample {'sentence' if n_lines == 1 else 'sentences'}",
    "paste": "your text",
    "upload": "the uploaded file",
}[source]
unknown = (
    f"; {n_unknown} {'word' if n_unknown == 1 else 'words'} outside its vocabulary "
    f"{'became' if oov == 'mask' else 'stayed as written, not private'}"
    f"{' [UNK]' if oov == 'mask' else ''}"
    if n_unknown
    else ""
)
headline.markdown(
    f"**{mechanism_title(mech)} at ε = {epsilon_text(eps)} replaced {replaced} of {in_vocab} "
    f"{'word' if in_vocab == 1 else 'words'}** in {what}{unknown}."
)

with text_col:
    st.markdown(f"**Sanitized** (draw 1, seed {seed})")
    sanitized_slot = st.empty()
    san_html = "<br>".join(
        highlight(s, c, u) for s, c, u in zip(first["tokens"], changed, res["oov"], strict=True)
    )
    sanitized_slot.markdown(f'<div class="dp-sanitized">{san_html}</div>', unsafe_allow_html=True)
    st.caption(
        "Highlighted: replaced. Outlined in red: a sensitive word that came through (hover for its "
        "chance). Grey: not in the vocabulary."
    )
    vocab_line = f"Vocabulary: {get_vocab(emb, vkey).label}."
    st.caption(f":material/warning: {vocab_line}" if full_vocab else vocab_line)
    st.caption(f"Guarantee: {params['privacy']}, over this vocabulary.")
    st.markdown("**Original**")
    orig_html = "<br>".join(highlight(o, [False] * len(o), u) for o, u in zip(orig, res["oov"], strict=True))
    st.markdown(f'<div class="dp-orig">{orig_html}</div>', unsafe_allow_html=True)

# ---- the figure: each plotted word's chance to be kept and the words it becomes, across ε --------
flat = [
    t for line, u in zip(orig, res["oov"], strict=True) for t, unk in zip(line, u, strict=True) if not unk
]
words = tuple(dict.fromkeys(flat))[:MAX_METRIC_WORDS]
if not words:
    fig_col.info("No token of this text is in the vocabulary.")
    st.stop()
with show_errors():
    metrics = run_metrics(words, mech, emb, eps, mparams, vkey, seed)
    plot_set = tuple(plot_words(metrics, MAX_PLOT_WORDS))
    curves = run_curves(plot_set, mech, emb, mparams, vkey, seed)
fig = sanitize_figure(pd.DataFrame(curves), epsilon=eps)
plot(
    fig.update_layout(height=TALK_HEIGHT) if talk_mode() else fig, key="sanitize-figure", slot=fig_col.empty()
)
fig_col.caption(
    "One line per word of the text, chosen so that their chances differ: top, the chance it comes "
    "through unchanged; bottom, how many different words it becomes in 95% of draws. Dotted: your ε."
)
# Redraw draw 1 with the kept sensitive words outlined, now that their N_x is known.
# Sensitive = SanText+'s V_S ("sensitive" is None for mechanisms that treat every word alike).
kept = {str(r["word"]): (r["sensitive"] is True, float(r["N_x"])) for r in metrics}
san_html = "<br>".join(
    highlight(s_, c, u, kept) for s_, c, u in zip(first["tokens"], changed, res["oov"], strict=True)
)
sanitized_slot.markdown(f'<div class="dp-sanitized">{san_html}</div>', unsafe_allow_html=True)

# ---- after the story: comparisons, draws, downloads, every word's numbers ----------------------
summary = first["summary"]
also = [m for m in st.session_state["also"] if m != mech]
also_eps = [float(e) for e in st.session_state["also_eps"] if float(e) != eps]
with more("Side by side and every draw", icon=":material/compare:"):
    st.caption(
        f"{summary['tokens']} tokens: {in_vocab} in the vocabulary, {replaced} of them replaced (draw 1); "
        f"{summary['oov']} outside it "
        f"({'masked as [UNK]' if oov == 'mask' else 'kept as written — not private'})."
    )
    if also or also_eps:
        st.subheader("Side by side (draw 1, same seed)")
        panels = [(mech, eps)] + [(m, eps) for m in also] + [(mech, e) for e in also_eps]
        cols = st.columns(len(panels))
        with show_errors():
            for col, (pm, pe) in zip(cols, panels, strict=True):
                other = (
                    res
                    if (pm, pe) == (mech, eps)
                    else run_sanitize(text, pm, emb, pe, params_key(mech_params[pm]), vkey, seed, 1, oov)
                )
                toks = other["draws"][0]["tokens"]
                ch = [[a != b for a, b in zip(o, t_, strict=True)] for o, t_ in zip(orig, toks, strict=True)]
                body = "<br>".join(
                    highlight(t_, c, u) for t_, c, u in zip(toks, ch, other["oov"], strict=True)
                )
                col.markdown(f"**{mechanism_title(pm)}, ε = {epsilon_text(pe)}**")
                col.markdown(f'<div class="dp-side">{body}</div>', unsafe_allow_html=True)
                col.caption(other["parameters"]["privacy"])

    st.subheader(f"Variability over {draws} draws")
    st.dataframe(
        pd.DataFrame(
            {
                "Draw": [i + 1 for i in range(draws)],
                "Sanitized text (first line; every line below)": [
                    d["lines"][0] if d["lines"] else "" for d in res["draws"]
                ],
                f"Words replaced (of {in_vocab})": [words_replaced(d["tokens"]) for d in res["draws"]],
            }
        ),
        hide_index=True,
        width="stretch",
    )
# An expander of its own (Streamlit does not nest expanders, and talk mode's more() is one).
with st.expander("Every draw, full lines", expanded=draws <= 3 and not talk_mode()):
    for k, d in enumerate(res["draws"]):
        ch = [[a != b for a, b in zip(o, t_, strict=True)] for o, t_ in zip(orig, d["tokens"], strict=True)]
        body = "<br>".join(highlight(t_, c, u) for t_, c, u in zip(d["tokens"], ch, res["oov"], strict=True))
        st.markdown(f'**Draw {k + 1}**<div class="dp-draw">{body}</div>', unsafe_allow_html=True)

with more("Downloads and the command that reproduces this", icon=":material/terminal:"):
    payload = dumps({"parameters": params, "draws": [d["lines"] for d in res["draws"]]}, indent=2)
    c1, c2 = st.columns(2)
    c1.download_button(
        "Download sanitized text (draw 1)",
        "\n".join(first["lines"]) + "\n",
        file_name=f"sanitized-{mech}-eps{eps:g}-seed{seed}.txt",
        mime="text/plain",
        key="dl-text",
        on_click="ignore",
    )
    c2.download_button(
        "Download all draws + parameters (JSON)",
        payload,
        file_name=f"sanitized-{mech}-eps{eps:g}-seed{seed}.json",
        mime="application/json",
        key="dl-json",
        on_click="ignore",
    )
    with st.container(border=True):
        st.markdown("**Reproduce this** with the CLI (draw 1 = the seed itself; `--draw K` gives draw K)")
        cmd = sanitize_command(
            mech, eps, embedding=emb, params=mparams, vocab_size=vsize, seed=seed, oov=oov,
            full_vocabulary=full_vocab,
        )  # fmt: skip
        st.code(shell_command(cmd), language="bash")
        st.caption(
            "Save the original text as `input.txt` first (one sentence per line). The library call "
            "`sanitize_lines(lines, mechanism, seed=SEED)` gives the same draw 1."
        )
        st.download_button(
            "Download input.txt", text if text.endswith("\n") else text + "\n", file_name="input.txt",
            mime="text/plain", key="dl-input", on_click="ignore",
        )  # fmt: skip

with more("Every word's numbers", icon=":material/table:"):
    st.subheader("How private is each word?")
    mdf = pd.DataFrame(metrics)
    word_table(mdf, PLAIN_COLUMNS)
    st.caption(
        "Notation and method under **How to read this** at the top; hover a column's name for its "
        "definition. The numbers behind the entropies and the Monte-Carlo counts:"
    )
    word_table(mdf, RESEARCH_COLUMNS)
    st.caption(
        f"Counts over 1,000 runs per word (Yue et al. §5.5), S_y* over {POPULATION:,} sampled inputs. "
        "Mechanisms without a closed form (Computed = mc) have Monte-Carlo numbers only. "
        + (
            f"Numbers are shown for the first {MAX_METRIC_WORDS} distinct tokens."
            if len(words) == MAX_METRIC_WORDS
            else ""
        )
    )
    download_buttons(
        mdf, {**params, "population": POPULATION}, f"dpcore-sanitize-metrics-{mech}-eps{eps:g}", key="metrics"
    )

with st.expander("Sources and licences"):
    if source == "sample":
        info = CORPORA[st.session_state["corpus"]]
        st.markdown(f"The sample sentences: {info.source}. Package: {info.package}. Licence: {info.licence}.")
    for e in EMBEDDINGS.values():
        st.markdown(f"- **{e.title}** — package `{e.package}`; {e.licence}; {e.citation}.")
    for c in CORPORA.values():
        st.markdown(f"- **{c.title}** — {c.source}; package `{c.package}`; licence: {c.licence}.")
    st.markdown(
        "- **Word frequencies** — `wordfreq` 3.1 (code Apache-2.0, data CC BY-SA 4.0), computed once "
        "into tables that ship with dpcore (`dpcore/data/glove/NOTICE.md`)."
    )
    st.markdown(
        "Out-of-vocabulary tokens have no output distribution: *mask* replaces each by `[UNK]` "
        "(only the fact that a word outside V stood there is released); *keep* copies them and is "
        "not private. The guarantee covers in-vocabulary tokens."
    )
