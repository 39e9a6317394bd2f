"""Audit a text sanitizer: empirical privacy loss per pair of words, against the claimed bound.

Widgets → dpcore.textaudit.audit_text → dpcore.viz.textaudit_figure. Results are cached per
configuration; the URL carries it. The page audits registered sanitizers only: it never loads
or runs user code (the CLI does, with ``file.py:factory``).
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from dpcore.formatting import percent, sentence
from dpcore.reproduce import audit_text_command, shell_command
from dpcore.text.embeddings import EMBEDDINGS
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text
from dpcore.textaudit.loaders import available_sanitizers, load_sanitizer
from dpcore.textaudit.plan import AuditPlan
from dpcore.validation import DPCoreError
from dpcore.viz.audit_words import WARNING_STATUSES
from dpcore.viz.textaudit_figure import (
    checks_table,
    headline,
    pairs_in_words,
    pairs_table,
    pooled_pairs_table,
    pooled_table,
    power_table,
    screen_figure,
    textaudit_figure,
    worst_words_table,
)
from dpcore.viz.tradeoff_figure import tradeoff_figure
from pages._shared import (
    Param,
    apply_query_params,
    bar_updater,
    choice_param,
    download_buttons,
    ensure_navigation,
    escape_markdown,
    float_param,
    int_param,
    more,
    page_intro,
    plot,
    show_errors,
    show_table,
    sync_query_params,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
VOCAB_SIZES = [500, 1_000, 2_000, 5_000, 15_000]
SAMPLES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000]
CONFIDENCES = [0.9, 0.95, 0.99]
STRATEGIES = ["words", "screen", "adaptive", "neighbors", "random"]
STRATEGY_LABELS = {"screen": "scan the whole vocabulary"}
SCREEN_BUDGETS = [500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000]
MAX_DRAWS = 40_000_000  # per request, dpcore's vectorised sanitizers
MAX_DRAWS_THIRD_PARTY = 60_000  # pyPANTERA loops in Python: ~1,000 draws/s
MAX_WORDS = 20
MAX_WORD_CHARS = 400
#: The main figure's height in talk mode (px): whole on a 1280×720 first screen under the
#: larger headline (tests/e2e/test_first_screen.py).
TALK_HEIGHT = 330
TRADEOFF_PAIRS = 4  # pairs drawn in the observer's chart (the strongest evidence first)

CHOICES = {c.name: c for c in available_sanitizers()}
NAMES = list(CHOICES)


#: Characters a word list may hold (letters, digits and the punctuation of GloVe tokens such as
#: "u.s.", "n't", "e-mail"); anything else is refused before it reaches a message, where it
#: would be rendered as Markdown.
_WORDS_OK = re.compile(r"^[\w\s,.'\-]*$")


def _plain(text: str) -> str:
    return escape_markdown(text)


def _check_words(text: str) -> str:
    if len(text) > MAX_WORD_CHARS:
        raise ValueError(f"must be at most {MAX_WORD_CHARS} characters")
    if not _WORDS_OK.match(text):
        raise ValueError("must be words separated by commas (letters, digits, . ' -)")
    return text


def _words_param() -> Param:
    def parse(text: str) -> str:
        return _check_words(text)

    return Param("privacy, secret, hospital, cancer", parse, str)


SPECS = {
    "mech": choice_param("santext", NAMES),
    "eps": float_param(1.0, 0.01, 100.0),
    "emb": choice_param("glove", list(EMBEDDINGS)),
    "vsize": choice_param(5_000, VOCAB_SIZES),
    "how": choice_param("words", STRATEGIES),
    "words": _words_param(),
    "nn": int_param(2, 0, 10),
    "pairs": int_param(20, 1, 100),
    "samples": choice_param(20_000, SAMPLES),
    "budget": choice_param(2_000_000, SCREEN_BUDGETS),
    "conf": choice_param(0.95, CONFIDENCES),
    "seed": int_param(0, 0, 2**31 - 1),
}


def _label(name: str) -> str:
    return CHOICES[name].label if name in CHOICES else name


@st.cache_data(max_entries=256, max_size="1MB", show_spinner=False)
def estimated_draws(
    emb: str,
    vsize: int | None,
    words: tuple[str, ...] | None,
    how: str,
    nn: int,
    pairs: int,
    samples: int,
    conf: float,
    seed: int,
    budget: int,
) -> int:
    """The draws the audit would make (the library's plan: its checks, its pairs, its estimate)."""
    plan = AuditPlan.create(
        vocab=build_vocabulary(emb, size=vsize),
        words=None if words is None else list(words),
        strategy="adaptive" if how == "words" else how,
        neighbors=nn,
        pairs=pairs,
        samples=samples,
        seed=seed,
        confidence=conf,
        screen_budget=max(1, budget),
    )
    return plan.estimated_draws


@st.cache_data(max_entries=64, max_size="16MB", show_spinner=False)
def run_audit(
    name: str,
    eps: float,
    emb: str,
    vsize: int | None,
    words: tuple[str, ...] | None,
    strategy: str,
    nn: int,
    pairs: int,
    samples: int,
    conf: float,
    seed: int,
    budget: int = 2_000_000,
    _progress=None,
) -> dict:
    vocab = build_vocabulary(emb, size=vsize)
    sanitizer = load_sanitizer(name, epsilon=eps, vocab=vocab)
    res = audit_text(
        sanitizer,
        vocab=vocab,
        words=None if words is None else list(words),
        strategy=strategy,
        neighbors=nn,
        pairs=pairs,
        samples=samples,
        seed=seed,
        confidence=conf,
        screen_budget=max(1, budget),
        progress=_progress,
        workers=1,  # a shared server: one process per request
    )
    return {"result": res}


page_intro(
    "Audit a text sanitizer",
    "We give a text sanitizer the same two words many times and check whether its outputs "
    "reveal which word went in more often than its privacy promise allows.",
    "Give a word-level sanitizer pairs of words. dpcore draws many outputs of M(x) and M(x′), "
    "picks the output event with the largest likelihood ratio on half of them, and bounds its "
    "privacy loss on the other half (one-sided Clopper–Pearson, Bonferroni over pairs). A pair "
    "*violates* its claim only when that lower bound exceeds ε (LDP) or ε·d(x, x′) + ε₀ (metric LDP; "
    "ε₀ = 0 except UMLDP).",
)

apply_query_params(SPECS, page="audit_text")

with st.sidebar:
    st.header("Sanitizer")
    st.selectbox(
        "Mechanism",
        NAMES,
        key="mech",
        format_func=_label,
        help="dpcore's own, the k-RR reference, labelled flawed reproductions, and third-party "
        "libraries run as shipped. Your own code: `python -m dpcore audit-text --mechanism "
        "file.py:factory` (the dashboard never runs uploaded code).",
    )
    st.number_input("Claimed ε", min_value=0.01, max_value=100.0, step=0.1, key="eps")
    c1, c2 = st.columns(2)
    c1.selectbox(
        "Embedding", list(EMBEDDINGS), key="emb", help="Vocabulary and the distance d of metric claims"
    )
    c2.selectbox("Vocabulary size", VOCAB_SIZES, key="vsize", format_func=lambda v: f"{v:,}")
    st.header("Pairs")
    st.radio(
        "Choose pairs by",
        STRATEGIES,
        key="how",
        horizontal=True,
        format_func=lambda h: STRATEGY_LABELS.get(h, h),
        help="words: the words below, each pair among them and each with its nearest neighbours; "
        "scan the whole vocabulary: every word is drawn (screen budget / |V| times), and the most "
        "suspicious pairs are confirmed on fresh samples; adaptive: a pilot over neighbour and "
        "random pairs, then the most promising on fresh samples; neighbors / random: over the "
        "vocabulary.",
    )
    if st.session_state["how"] == "words":
        st.text_input("Words (comma-separated)", key="words")
    st.slider("Nearest neighbours per word", 0, 10, key="nn")
    st.slider("Pairs to test", 1, 100, key="pairs", disabled=st.session_state["how"] == "words")
    if st.session_state["how"] == "screen":
        st.select_slider(
            "Screen budget (draws over all words)",
            SCREEN_BUDGETS,
            key="budget",
            format_func=lambda b: f"{b:,}",
            help="Each word of the vocabulary gets budget / |V| draws in the screen (at least 200).",
        )
    st.header("Test")
    st.select_slider("Samples per word (T)", SAMPLES, key="samples", format_func=lambda t: f"{t:,}")
    st.select_slider("Confidence (family-wise)", CONFIDENCES, key="conf")
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")

sync_query_params(SPECS)

name = st.session_state["mech"]
eps = float(st.session_state["eps"])
emb = st.session_state["emb"]
vsize = int(st.session_state["vsize"])
how = st.session_state["how"]
nn = int(st.session_state["nn"])
pairs = int(st.session_state["pairs"])
samples = int(st.session_state["samples"])
conf = float(st.session_state["conf"])
seed = int(st.session_state["seed"])
budget = int(st.session_state["budget"])

words: tuple[str, ...] | None = None
if how == "words":
    try:
        _check_words(st.session_state["words"])
    except ValueError as exc:
        st.error(f"Words {exc}.")
        st.stop()
    words = tuple(dict.fromkeys(w.strip() for w in st.session_state["words"].split(",") if w.strip()))
    if not words:
        st.info("Type at least one word in the sidebar, or choose pairs another way.")
        st.stop()
    if len(words) > MAX_WORDS:
        st.error(f"At most {MAX_WORDS} words per request on this server; {len(words)} were given.")
        st.stop()
    n_pairs_est = len(words) * (len(words) - 1) // 2 + len(words) * nn
    pairs = min(100, max(1, n_pairs_est))
third_party = CHOICES[name].kind == "third-party"
cap = MAX_DRAWS_THIRD_PARTY if third_party else MAX_DRAWS
try:
    draws = estimated_draws(
        emb, vsize if emb == "glove" else None, words, how, nn, pairs, samples, conf, seed, budget
    )
except DPCoreError as exc:
    st.error(sentence(exc))
    st.stop()
if draws > cap:
    st.error(
        f"This audit would draw about {draws:,} samples; this server allows {cap:,} per request"
        + (" for third-party libraries, which sample in Python loops" if third_party else "")
        + ". Lower the samples per word, the pairs or the neighbours, or run it from the CLI."
    )
    st.stop()

bar = st.progress(0.0, text="Auditing…")
with show_errors():
    out = run_audit(
        name,
        eps,
        emb,
        vsize if emb == "glove" else None,
        words,
        "adaptive" if how == "words" else how,
        nn,
        pairs,
        samples,
        conf,
        seed,
        budget if how == "screen" else 0,
        _progress=bar_updater(bar, lambda d, t: f"Drawing samples: {d:,} of about {t:,}"),
    )
bar.empty()
res = out["result"]

# ---- the story: the verdict in one sentence, then the figure -----------------------------------
flawed = CHOICES[name].flawed
story = ("A flawed reproduction, built to be caught. " if flawed else "") + headline(res)
if res.verdict == "violates":
    st.error(_plain(story), icon=":material/error:")
elif res.verdict == "untested":
    st.warning(
        _plain(story + " " + sentence(res.verdict_text)),
        icon=":material/block:",
    )
else:
    st.info(_plain(story), icon=":material/info:")

plot(textaudit_figure(res), key="textaudit-figure", talk_height=TALK_HEIGHT)
st.caption(
    "Each point is a pair of words: its claimed bound (across) against a lower confidence bound on "
    "its real privacy loss (up). A point above the dashed diagonal is a violation."
    + (" The shaded band is what this run could have missed." if res.detectable_violation else "")
    + (f" Vocabulary: {_plain(res.vocabulary)}." if res.vocabulary else "")
)
if flawed:
    st.warning(
        "This is a flawed reproduction, fenced in `dpcore.flawed`: "
        "it exists to be caught, never to sanitize.",
        icon=":material/science:",
    )

with more(
    "The verdict in full, the checks and what this run could have caught", icon=":material/rule:"
):
    if res.verdict != "untested":
        st.markdown("**The verdict in full.** " + _plain(sentence(res.verdict_text)))
    if res.exact_verdict == "declaration-mismatch":
        st.caption(
            "The sanitizer declares its exact output distribution, but its sampler does not follow it "
            "(see the checks below): the declared rows were not used, and no exact verdict is given."
        )
    elif res.exact_verdict is not None:
        st.caption(
            "Exact output distribution available: the exact worst-case loss of every pair is "
            + (
                "**above** its claim for some pair."
                if res.exact_verdict == "violates"
                else "within its claim."
            )
            + " The open rings in the figure show it."
        )

    st.subheader("Checks before the verdict")
    checks = checks_table(res)
    for row in checks.to_dict(orient="records"):
        line = f"**{row['check']}: {row['result']}.** {_plain(sentence(row['what was found']))}"
        if row["status"] in WARNING_STATUSES:
            st.warning(line, icon=":material/warning:")
        else:
            st.markdown(line)

    power = power_table(res)
    if res.verdict != "untested" and len(power):
        st.markdown(
            f"**What this run could have caught**, each with probability ≥ {res.power.get('power', 0.9):g} "
            "(the whole pipeline, its own selection included):"
        )
        lines = [
            f"- {_plain(f)}: {_plain('; '.join(g['caught when']))}."
            for f, g in power.groupby("flaw", sort=False)
        ]
        st.markdown("\n".join(lines))
        st.caption("What it does not cover is listed under “How to read this”, at the bottom of the page.")

observer = res.observer()
if res.tradeoff_pairs:
    with more("What an observer of one sanitized word can do", icon=":material/visibility:"):
        partial = any(p.covers == "events" for p in res.tradeoff_pairs)
        st.markdown(
            "If the promise holds, nobody who sees one sanitized word can tell two words apart well enough "
            "to land in the shaded area, and a red cross is a test this run measured there."
            + (
                " This sanitizer's promise covers only some outputs, so the shaded area is drawn for tests "
                "made of those outputs only (the ratio lines), and only they are tested."
                if partial
                else ""
            )
        )
        plot(
            tradeoff_figure(
                res.tradeoff_pairs,
                max_pairs=TRADEOFF_PAIRS,
                title="What an observer of one sanitized word can do, against what the claim allows",
            ),
            key="textaudit-tradeoff",
        )
        with st.expander("How to read this chart"):
            levels = " ".join(_plain(e["meaning"]) for e in observer["tpr_at_fpr"]["levels"])
            st.markdown(
                f"""
    - The observer sees one sanitized word and must say which of two words x, x′ went in. Naming x′
      when the output falls in an event S is a test. **FPR** (horizontal): how often it names x′ when x
      went in; **TPR** (vertical): how often it names x′ when x′ did. Both axes are logarithmic.
    - **Dashed line, shaded above**: the claim's ceiling TPR ≤ min(1, e^ε·FPR, 1 − e^(−ε)·(1 − FPR)) for
      the pair's claimed ε (ε·d(x, x′) + ε₀ for metric claims, ε₀ = 0 except UMLDP): no test reaches
      the shaded region while the claim holds (Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022).
      The steep part, TPR ≤ e^ε·FPR, is the claim on the event S itself; the flat part near the top
      is the claim on the outputs outside S. The lower dashed line, shaded below, is its mirror image:
      an event that favours x instead of x′ lands there.
    - **Claims that cover only some outputs** (SanText+'s sensitive words, a sanitizer's protected
      outputs): every event is made of covered outputs, but the outputs outside it are not all
      covered, so only the steep part is drawn and tested, TPR ≤ e^ε·FPR and its mirror; no test made
      of covered outputs reaches the shaded region while the claim holds, and nothing is claimed of
      the others.
    - **Points with bars**: the events this run tested, with Clopper–Pearson intervals on both rates at
      the verdict's per-test level, so every box of every pair holds together at the confirmation's
      share of the family-wise confidence. **Red crosses**: boxes wholly in the shaded region, violations
      (the hover text says which part: beyond the steep part, the claim on that event itself is broken,
      and the verdict's own ratio test of it exceeds the claim too unless its label says the event was
      chosen for the other word; beyond only the flat part, it is the outputs outside the event that
      break it, which the verdict's test does not count).
    - **Solid lines**: the best tests possible, from the exact output distribution, where the sanitizer
      declares one and the audit's check of it passed.
    - The pair with the strongest evidence, at 1% and 5% false positives: {levels}
    - The numbers (`tpr_at_fpr`, with every symbol's definition) are in the JSON and CSV downloads;
      `python -m dpcore audit-text --json` also gives each pair's boxes (`tradeoff`).
    """
            )

if res.screen is not None:
    with more("The screen and the pooled tests over the vocabulary", icon=":material/travel_explore:"):
        sc = res.screen
        st.subheader("The screen: every word of the vocabulary")
        st.caption(
            f"{sc['words_screened']:,} words × {sc['draws_per_word']:,} draws each; "
            f"{sc['candidates_scored']:,} candidate pairs scored; the {sc['proposed']} most suspicious "
            "were confirmed on fresh samples (the screen proposes, only the confirmation decides)."
            + (f" {sc['failed_words']} word(s) failed to sample." if sc["failed_words"] else "")
        )
        plot(screen_figure(res), key="screen-figure")
        st.markdown("**Worst words in the screen**")
        worst = worst_words_table(res)
        show_table(worst, {c: c for c in worst.columns}, key="worst-words")

        st.subheader("Pooled tests over the vocabulary")
        pooled = pooled_table(res)
        if len(pooled):
            st.caption(
                "The screen's words, matched in disjoint pairs (x, x′), pooled per family: how often each "
                "word's event came out of the word, weighted by e^(−claim), against how often it came out "
                "of its partner. The claims imply the first sum is at most the second in expectation; a "
                "family *violates its claim* when the first's lower bound exceeds the second's upper bound "
                "(conservative Chernoff bounds, each test at its share of α): then some pair of the family "
                "exceeds its claim by at least ln(lower bound / upper bound) nats, as the verdict states. "
                "This sees a flaw shared by the vocabulary that no single pair's draws can show. The tests "
                "use the screen's draws."
            )
            show_table(
                pooled,
                {
                    "event": "event",
                    "pairing": "pairing",
                    "pairs": "pairs",
                    "Σ e^(−claim)·count": "Σ e^(−claim)·count",
                    "lower bound": "lower bound",
                    "Σ partner count": "Σ partner count",
                    "upper bound": "upper bound",
                    "verdict": "verdict",
                },
                key="pooled-tests",
            )
            carriers = pooled_pairs_table(res)
            if len(carriers):
                st.markdown("**Pairs that carry the excess of the rejecting tests**")
                show_table(
                    carriers, {c: c for c in carriers.columns if c != "draws per word"}, key="pooled-pairs"
                )
                st.caption(
                    "Excess carried: e^(−claim)·(count from x) − (count from x′), this pair's share of the "
                    "gap between the two sums. Each rejecting test names its largest; they join the proposed "
                    "pairs and are confirmed on fresh draws (the Pairs table)."
                )
        else:
            st.caption("No pooled test could be run: no screened word could be paired and sampled.")

table = pd.DataFrame(pairs_table(res))  # the downloads: every column, numbers as numbers
with more("Pairs: every pair tested, its bounds and its verdict", icon=":material/table:"):
    st.subheader("Pairs")
    shown_pairs = pairs_in_words(res)
    show_table(shown_pairs, {c: c for c in shown_pairs.columns})
    infinite = bool(shown_pairs["point estimate ε̂"].str.startswith("∞").any())
    st.caption(
        "A pair violates its claim when its lower bound is above its claimed bound; that alone decides."
        + (
            " A point estimate of ∞ (never from x′) means that the pair's event never came out of the "
            "other word in its draws: the ratio of the observed frequencies is then infinite, but a "
            "finite number of draws bounds the loss only from below, and that bound can stay under the "
            "claim."
            if infinite
            else ""
        )
        + " The event size |S|, its counts for x and x′, each pair's detectable loss and where its event "
        "came from (the selection half, the screen's output or the declared distribution) are in the "
        "CSV/JSON downloads."
    )

    # The download: the library's record of the run (the pairs are the table), and how the page
    # chose its pairs.
    params = {k: v for k, v in res.to_dict().items() if k != "pairs"}
    params |= {"pairs_by": how, "words": list(words) if words else None, "neighbors": nn}
    params |= {"tpr_at_fpr": observer["tpr_at_fpr"]}
    download_buttons(table, params, f"dpcore-audit-text-{name.replace(':', '-')}-eps{eps:g}", key="textaudit")

with st.expander("Reproduce this from the command line"):
    try:
        cmd = audit_text_command(
            name,
            eps,
            embedding=emb,
            vocab_size=vsize if emb == "glove" else None,
            words=words,
            strategy="adaptive" if how == "words" else how,
            pairs=pairs,
            neighbors=nn,
            samples=samples,
            screen_budget=budget if how == "screen" else None,
            confidence=conf,
            seed=seed,
        )
    except DPCoreError as exc:
        st.caption(_plain(sentence(exc)))
    else:
        st.code(shell_command(cmd), language="bash")

with st.expander("How to read this"):
    st.markdown(
        f"""
- **Each point is a pair of words.** Horizontal: the bound the mechanism claims for it
  (ε for LDP, ε·d(x, x′) + ε₀ for metric LDP). Vertical: a lower confidence bound on its real privacy
  loss. **Above the dashed diagonal** = a violation at {percent(conf, exact=True)} family-wise confidence.
- **Dotted line** (or, when it lies far above every pair, the note above the chart): the largest
  loss {samples:,} samples per word can ever show. Claims above it cannot be refuted by this run;
  more samples raise it (about ln T).
- **Shaded band** above the diagonal: what this run could have missed. A pair whose loss exceeds
  its claim by more than the band's height, on an event as likely as the tests' median event,
  would have been flagged with probability ≥ 0.9; a violation inside the band may go unflagged.
- **Green rings**: the exact loss, for sanitizers whose output distribution is known in closed form.
- **Pooled tests** (scan the whole vocabulary): a family *violates its claim* when, summed over
  hundreds of pairs, words produce their event more often than their claims allow against their
  partners. It proves that some pair of the family violates, by at least the stated nats.
- **Checks before the verdict**: the sanitizer must draw from the random generator it is handed
  (the rng contract, and one word of every stage drawn again from its seed); a word's draws within
  one call must be independent and the same in large, single-word and sentence calls, or it is
  audited one output per call; a declared output distribution only adds planned events.
- "No violation detected" means this test, at this size, found none. It does not make a
  mechanism private. "Untested" means nothing could be tested at all.
- α = 1 − confidence is split before any draw between the declaration test, the pooled tests and
  the confirmation (`alpha_accounting` in the JSON download).
"""
    )
    not_covered = res.power.get("not_covered") or []
    if not_covered:
        st.markdown(
            "**Not covered by this run's power statement:**\n"
            + "\n".join(f"- {_plain(t)}." for t in not_covered)
        )
