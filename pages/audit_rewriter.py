"""Audit a text rewriter: a sentence rewriter's privacy loss on one pair of sentences, black box.

Widgets → dpcore.rewriter (audit_rewriter, through dpcore.rewriter.views.compute_view) →
dpcore.viz.rewriter_figure. The page opens on dpcore's DP-MLM variant, a shipped view
(dpcore/data/rewriter_views.json) shown at once with no computation; the other shipped view, the
flawed DP-MLM that keeps stopwords (the control built to fail), is one click away: a button under
the figure and one in the sidebar. Any other setting is computed on a button press, with a
progress bar, and cached. The headline says in one sentence what a room should conclude
(dpcore.viz.rewriter_figure.headline). Rewrites are shown as words (dpcore.rewriter.words:
WordPieces joined, other scripts and listed words replaced). The URL carries the settings. The
page audits registered rewriters only: it never loads or runs user code (the CLI does, with
``file.py:factory``).
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from dpcore.formatting import as_number, epsilon_text, percent, sentence
from dpcore.reproduce import audit_rewriter_command, shell_command
from dpcore.rewriter.distinguish import DISTINGUISHERS, TITLES
from dpcore.rewriter.power import at_reach
from dpcore.rewriter.registry import available_rewriters
from dpcore.rewriter.views import VIEWS, compute_view, find_view, shipped_view
from dpcore.rewriter.words import LEFT_OUT, NON_LATIN, shown_event
from dpcore.viz.rewriter_figure import (
    bound,
    fmt,
    headline,
    kept_words,
    rewriter_tradeoff_figure,
    shown_tests_table,
    tests_table,
)
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
    multi_param,
    page_intro,
    plot,
    show_errors,
    show_table,
    spec_param,
    spec_value,
    spec_widget,
    sync_query_params,
    talk_mode,
)

ensure_navigation()

# ---- work caps for a shared server ----------------------------------------------------------
REWRITES = [100, 200, 400, 1_000]  # per input: at most 1,000 (two inputs, one pair)
CONFIDENCES = [0.9, 0.95, 0.99]
MAX_CHARS = 300  # per sentence
REMEMBERED = 8  # settings this session has asked to compute, shown again without a press
#: The observer's chart's height (px): the title, the headline and the whole chart share a 1280×720 screen.
FIGURE_HEIGHT = 390
#: In talk mode (px), with the legend lower (its larger axis title needs the room) and a shorter
#: title up the side, which must fit the shorter plot.
TALK_HEIGHT, TALK_LEGEND_Y, TALK_Y_TITLE = 425, -0.3, "rightly naming it (TPR)"

# registered only (no user code), and no torch model: DP-Prompt is shown on the calibration page
CHOICES = {c.name: c for c in available_rewriters(torch=False)}
NAMES = list(CHOICES)
#: Every option of the rewriters offered (their ParameterSpec): one widget and one URL key each.
OPTIONS = {sp.name: sp for c in CHOICES.values() for sp in c.parameters}
#: The page opens on dpcore's DP-MLM variant (a shipped view).
DEFAULT = VIEWS["dp-mlm"]
#: The shipped views the sidebar opens in one click: (key, button label).
QUICK = [("dp-mlm", "dpcore's DP-MLM variant"), ("stopwords", "The flawed control: DP-MLM keeping stopwords")]
#: On a shipped view, the button under the figure opens the other one: view → (other, label).
SWITCH = {
    "dp-mlm": ("stopwords", "Compare: the flawed control, DP-MLM keeping stopwords (built to fail)"),
    "stopwords": ("dp-mlm", "Back to dpcore's DP-MLM variant"),
}

#: Characters a sentence may hold: letters, digits, spaces and ordinary punctuation. Anything
#: else (markup, control characters, bidirectional overrides) is refused before it is shown.
_SENTENCE_OK = re.compile(r"^[\w .,;:'\"!?()&%$/\-’‘“”]*$")


def _check_sentence(text: str) -> str:
    if len(text) > MAX_CHARS:
        raise ValueError(f"must be at most {MAX_CHARS} characters")
    if not _SENTENCE_OK.match(text):
        raise ValueError("must be a sentence of letters, digits, spaces and . , ; : ' \" ! ? ( ) & % $ / -")
    return text


def _sentence_param(default: str) -> Param:
    return Param(default, _check_sentence, str)


SPECS = {
    "rw": choice_param(DEFAULT["rewriter"], NAMES),
    "eps": float_param(DEFAULT["epsilon"], 0.01, 100.0),
    "x": _sentence_param(DEFAULT["x"]),
    "xp": _sentence_param(DEFAULT["x_prime"]),
    "rewrites": choice_param(DEFAULT["rewrites"], REWRITES),
    "conf": choice_param(DEFAULT["confidence"], CONFIDENCES),
    "dist": multi_param(DEFAULT["distinguishers"], list(DISTINGUISHERS)),
    "seed": int_param(DEFAULT["seed"], 0, 2**31 - 1),
    **{name: spec_param(sp) for name, sp in OPTIONS.items()},
}


def _plain(text: str) -> str:
    return escape_markdown(text)


def _open_view(key: str) -> None:
    """Set every widget to the shipped view ``key`` (a button's callback, before the widgets)."""
    view = VIEWS[key]
    st.session_state.update(
        rw=view["rewriter"],
        eps=view["epsilon"],
        x=view["x"],
        xp=view["x_prime"],
        rewrites=view["rewrites"],
        conf=view["confidence"],
        dist=list(view["distinguishers"]),
        seed=view["seed"],
        **{name: sp.default for name, sp in OPTIONS.items()},  # a view runs the defaults
    )


@st.cache_data(max_entries=16, max_size="8MB", show_spinner=False)
def run_audit(
    rewriter: str,
    eps: float,
    x: str,
    x_prime: str,
    rewrites: int,
    seed: int,
    distinguishers: tuple[str, ...],
    conf: float,
    options: tuple[tuple[str, float | int | bool], ...] = (),
    _progress=None,
) -> dict:
    """The audit's JSON record (the shipped views' form), computed here."""
    settings: dict[str, Any] = {
        "rewriter": rewriter,
        "epsilon": eps,
        "x": x,
        "x_prime": x_prime,
        "rewrites": rewrites,
        "seed": seed,
        "distinguishers": list(distinguishers),
        "confidence": conf,
    }
    if options:
        settings["options"] = dict(options)
    return compute_view(settings, progress=_progress)


page_intro(
    "Audit a text rewriter",
    "Can one rewrite tell which of two sentences went in, more often than the rewriter's privacy promise "
    "allows?",
    "Give a rewriter two inputs x and x′. dpcore rewrites each N times; on the first half of the "
    "rewrites it chooses, for each input, the event that best tells it apart (a whole output, a word "
    "or word pair, a side channel such as the output's length, casing, punctuation, digits or the "
    "place of a kept word, or a threshold on a naive-Bayes score over word or character n-grams or on "
    "a MiniLM sentence-embedding score), and on the second half "
    "it bounds that event's privacy loss, ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S], from below with "
    "Clopper–Pearson bounds (Bonferroni over both directions). The pair *violates* its claim when "
    "that lower bound exceeds the claimed bound: ε per document, or for DP-MLM ε per token times the "
    "sentence's tokens (sequential composition; both sentences must have the same number of tokens). "
    "N rewrites can certify a loss of at most about ln N: a claim above that is *out of reach*, "
    "never “no violation”. Before any verdict the rewriter's contract is checked (the random generator "
    "it is handed is its only randomness; calls of other sizes draw alike; copies within a call are "
    "independent, or each rewrite is drawn in its own call).",
)

apply_query_params(SPECS, page="audit_rewriter")

with st.sidebar:
    st.header("Shipped views")
    st.caption("Shown at once, with no computation:")
    for view_key, label in QUICK:
        st.button(label, key=f"view-{view_key}", on_click=_open_view, args=(view_key,), width="stretch")
    st.header("Rewriter")
    st.selectbox(
        "Rewriter",
        NAMES,
        key="rw",
        format_func=lambda n: CHOICES[n].label if n in CHOICES else n,
        help="dpcore's DP-MLM variant, labelled flawed reproductions, and planted test instruments. Your own "
        "code: `python -m dpcore audit-rewriter --rewriter file.py:factory` (the dashboard never runs "
        "uploaded code).",
    )
    st.number_input(
        "ε (per token for DP-MLM)",
        min_value=0.01,
        max_value=100.0,
        step=0.05,
        key="eps",
        help="The ε the rewriter is built with. DP-MLM and its variants: ε per token, so a sentence of "
        "n tokens claims n·ε. Planted rewriters: ε per document.",
    )
    rw_choice = CHOICES.get(str(st.session_state["rw"]))
    for sp in rw_choice.parameters if rw_choice else ():  # its options, from the registry's schema
        spec_widget(sp, label=sp.name.replace("_", " "), key=sp.name)
    st.header("Sentences")
    st.text_input("x: the first sentence", key="x", max_chars=MAX_CHARS)
    st.text_input(
        "x′: the second sentence", key="xp", max_chars=MAX_CHARS, help="Usually x with one word changed."
    )
    st.header("Test")
    st.select_slider("Rewrites per input", REWRITES, key="rewrites", format_func=lambda n: f"{n:,}")
    st.select_slider("Confidence (family-wise)", CONFIDENCES, key="conf")
    st.multiselect(
        "Distinguishers",
        list(DISTINGUISHERS),
        key="dist",
        format_func=lambda d: TITLES.get(d, d),
        help="How events are found on the selection half: whole outputs, word n-grams, character "
        "n-grams, side channels (counts of tokens, characters, capitals, punctuation and digits; the "
        "places of the inputs' words), a MiniLM sentence-embedding score (the slowest: it loads a "
        "model). The language-model distinguisher (SmolLM2) runs from the CLI only: "
        "audit-rewriter --distinguishers lm.",
    )
    st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")

sync_query_params(SPECS)

rewriter = str(st.session_state["rw"])
eps = float(st.session_state["eps"])
x = str(st.session_state["x"])
x_prime = str(st.session_state["xp"])
rewrites = int(st.session_state["rewrites"])
conf = float(st.session_state["conf"])
seed = int(st.session_state["seed"])
chosen = set(st.session_state["dist"])
# the chosen rewriter's options that differ from their defaults (a shipped view runs the defaults)
options = {
    sp.name: spec_value(sp, sp.name)
    for sp in (CHOICES[rewriter].parameters if rewriter in CHOICES else ())
    if spec_value(sp, sp.name) != sp.default
}
distinguishers = [d for d in DISTINGUISHERS if d in chosen]  # one order: the library's

# ---- bad input: one clear message, the settings kept ----------------------------------------
for label, text in (("x", x), ("x′", x_prime)):
    try:
        _check_sentence(text)
    except ValueError as exc:
        st.error(f"{label} {exc}.", icon=":material/error:")
        st.stop()
    if not text.strip():
        st.error(f"{label} is empty: type a sentence in the sidebar.", icon=":material/error:")
        st.stop()
if x.strip() == x_prime.strip():
    st.error("x and x′ are the same sentence: change a word of x′.", icon=":material/error:")
    st.stop()
if not distinguishers:
    st.info("Choose at least one distinguisher in the sidebar.")
    st.stop()

settings: dict[str, Any] = {
    "rewriter": rewriter,
    "epsilon": eps,
    "x": x,
    "x_prime": x_prime,
    "rewrites": rewrites,
    "seed": seed,
    "distinguishers": distinguishers,
    "confidence": conf,
}
if options:
    settings["options"] = options
args = (
    rewriter, eps, x, x_prime, rewrites, seed, tuple(distinguishers), conf, tuple(sorted(options.items())),
)

# ---- the result: shipped (at once), asked for earlier in this session, or on a press ------------
res = shipped_view(settings)
shipped = res is not None
view_key = find_view(settings) if shipped else None
if res is None:
    asked: list[tuple] = st.session_state.setdefault("_dpcore_rewriter_asked", [])
    if args not in asked:
        slot = st.empty()
        with slot.container():
            st.info(
                f"These settings are not a shipped view: the audit rewrites each sentence {rewrites:,} times "
                "(DP-MLM: about a minute at 1,000; the MiniLM distinguisher adds a few seconds to load). "
                "Press the button to run it.",
                icon=":material/play_circle:",
            )
            pressed = st.button("Run the audit", type="primary", key="run")
        if not pressed:
            st.stop()
        slot.empty()
        asked.append(args)
        del asked[:-REMEMBERED]
    bar = st.progress(0.0, text="Checking the rewriter's contract…")
    with show_errors():
        res = run_audit(*args, _progress=bar_updater(bar, lambda d, t: f"Rewriting: {d:,} of {t:,} rewrites"))
    bar.empty()

pair = res["pairs"][0]
tested = pair.get("outside_premise") is None
choice = CHOICES.get(rewriter)
flawed = bool(choice and choice.flawed)

# ---- the story: what to conclude in one sentence, then the observer's trade-off -----------------
story = _plain(headline(res))
if res["verdict"] == "violates":
    st.error(story, icon=":material/error:")
elif res["verdict"] == "untested":
    st.warning(story, icon=":material/block:")
else:
    st.info(story, icon=":material/info:")

fig = rewriter_tradeoff_figure(res, height=FIGURE_HEIGHT)
if fig is not None:
    if talk_mode():
        fig.update_layout(legend_y=TALK_LEGEND_Y, yaxis_title_text=TALK_Y_TITLE)
    plot(fig, key="rewriter-tradeoff", talk_height=TALK_HEIGHT)
    st.caption(
        "An observer sees one rewrite and names x when it falls in the chosen event. Across: how often "
        "that happens when x′ went in (false alarms); up: when x went in. No test reaches the shaded "
        "region while the claim holds; a red cross is a box of confidence wholly inside it."
        + (" A shipped view: computed once, shown without computing." if shipped else "")
    )
if view_key in SWITCH:
    other, label = SWITCH[view_key]
    st.button(label, key=f"switch-{other}", on_click=_open_view, args=(other,), icon=":material/swap_horiz:")
if flawed:
    st.warning(
        "This is a flawed reproduction, fenced in `dpcore.flawed`: it exists to be caught, never to rewrite.",
        icon=":material/science:",
    )

# ---- the evidence ----------------------------------------------------------------------------
with more("The sentences, their rewrites and the chosen event", icon=":material/compare_arrows:"):
    st.subheader("The two sentences and their first rewrites")
    examples = pair.get("examples") or {}
    cols = st.columns(2)
    for col, name, text, rows in (
        (cols[0], "x", pair["x"], examples.get("x", [])),
        (cols[1], "x′", pair["x_prime"], examples.get("x_prime", [])),
    ):
        col.markdown(f"**{name}:** {_plain(text)}")
        lines = [
            " ".join(f"**{_plain(w)}**" if kept else _plain(w) for w, kept in kept_words(text, r))
            for r in rows
        ]
        if lines:
            col.markdown("\n".join(f"1. {line}" for line in lines))
    if any(examples.values()):
        st.caption(
            f"The first evaluation rewrites of each sentence (of {int(res['evaluation_rewrites']):,}); words "
            "of the input a rewrite kept are in bold. Shown as words: a WordPiece that continues a word "
            "(written ##…) is joined to the word before, unless that word was kept from the input; a word "
            f"in another script is shown as {_plain(NON_LATIN)} (the page's font cannot draw every script) "
            f"and a word on dpcore's list of left-out words as {_plain(LEFT_OUT)}. The audit counts the "
            "rewrites as written."
        )
    best = next((t for t in pair.get("tests") or [] if t["direction"] == pair["direction"]), None)
    if not tested:
        st.markdown(f"**Not tested:** {_plain(str(pair['outside_premise']))}.")
    elif best is not None:
        st.markdown(
            f"**The chosen event** ({_plain(TITLES.get(best['distinguisher'], best['distinguisher']))}): "
            f"{_plain(shown_event(str(best['event'])))}: {int(best['count_x']):,} of "
            f"{int(best['samples']):,} rewrites of x, {int(best['count_x_prime']):,} of x′."
        )
    m1, m2, m3, m4 = st.columns(4)
    claim = res["claim"]
    tokens = pair.get("tokens") or [None, None]
    per_token = claim.get("unit") == "token" and tokens[0] is not None
    m1.metric(
        "Lower bound on the loss",
        bound(pair["lower_bound"]),
        help=f"At {percent(conf, exact=True)} family-wise confidence (Clopper–Pearson); 'none': no loss "
        "above 0 was certified (no leak shown).",
    )
    m2.metric(
        "Point estimate ε̂", fmt(pair["point_estimate"]), help="ln of the ratio of the event's frequencies."
    )
    m3.metric(
        "Claimed bound",
        fmt(pair["claimed_bound"]),
        help=(
            f"{tokens[0]} tokens × ε = {epsilon_text(claim['epsilon'], digits=3)} per token"
            if per_token
            else "ε per document"
        ),
    )
    m4.metric(
        "Largest certifiable bound",
        fmt(res["largest_certifiable_bound"]),
        help=f"The largest loss {rewrites:,} rewrites per input can certify at this confidence.",
    )
    if tested and at_reach(as_number(pair["lower_bound"]), as_number(res["largest_certifiable_bound"])):
        st.caption(
            "The lower bound is as large as this run can certify: the real loss may be much larger "
            "(more rewrites raise the ceiling, about ln N)."
        )
    st.markdown(f"**The claim.** {_plain(sentence(claim.get('text', '')))}")
    verdict_text = str(res["verdict_text"])
    if pair.get("event"):  # the event as the page shows it (other scripts, listed words replaced)
        verdict_text = verdict_text.replace(str(pair["event"]), shown_event(str(pair["event"])))
    st.markdown(f"**The verdict in full.** {_plain(sentence(verdict_text))}")
    if res.get("power"):
        st.markdown(
            "**What this run could have caught** (the whole pipeline, its own selection included):\n"
            + "\n".join(f"- {_plain(sentence(s['text']))}" for s in res["power"])
        )
    elif "order" not in claim:
        st.markdown(
            "**What this run could have caught:** no statement is made. It is for markers that whole "
            "outputs, word n-grams or side channels select, and none of those distinguishers ran."
        )
    contract = res.get("contract")
    if contract:
        st.markdown(
            "**The rewriter's contract: passed.** The same seed gives the same rewrites and the global "
            f"random states are left alone. The bounds rest on this: {res.get('independence', '')}."
            + (
                " Two seeds gave the same rewrites: the rewriter is deterministic."
                if contract.get("deterministic")
                else ""
            )
        )

table = tests_table(res)
with more("Every test: both directions, their events and bounds", icon=":material/table:"):
    st.subheader("Tests")
    if len(table):
        show_table(
            shown_tests_table(res),
            {
                "chosen for": "chosen for",
                "found by": "found by",
                "event": "event",
                "rewrites of x in it": "from x",
                "rewrites of x′ in it": "from x′",
                "lower bound": "lower bound",
                "point estimate ε̂": "ε̂",
            },
        )
        st.caption(
            "One event per direction, chosen on the selection half and counted on the "
            f"{int(res['evaluation_rewrites']):,} evaluation rewrites of each sentence (from x, from x′: how "
            "many fell in it); ε̂ is the point estimate. The pair violates its claim when the larger lower "
            f"bound exceeds the claimed bound, {fmt(pair['claimed_bound'])}; 'none': no loss above 0 was "
            "certified. The downloads have every column, and the events as written."
        )
    else:
        st.caption("No test was made (the pair is outside the claim's premise, or no event was ever seen).")
    params = {k: v for k, v in res.items() if k != "pairs"}
    params |= {"x": pair["x"], "x_prime": pair["x_prime"], "shipped_view": shipped}
    download_buttons(
        table, params, f"dpcore-audit-rewriter-{rewriter.replace(':', '-')}-eps{eps:g}", key="rewriter"
    )

with st.expander("Reproduce this from the command line"):
    cmd = audit_rewriter_command(**settings)  # the settings are the builder's keywords, options included
    st.code(shell_command(cmd), language="bash")
    if shipped:
        st.caption(
            "This view is shipped: `python -m dpcore.rewriter.views --write` computed it with this command's "
            "settings into dpcore/data/rewriter_views.json, and `--check` recomputes it."
        )

with st.expander("How to read this"):
    st.markdown(
        f"""
- **The observer's chart.** Someone sees one rewrite and must say whether x or x′ went in; naming x
  when the rewrite falls in an event S is a test. **FPR** (across): how often it names x when x′
  went in; **TPR** (up): how often it names x when x did. Both axes are logarithmic.
- **Dashed line, shaded above** (and its mirror, shaded below): the claim's ceiling for this pair,
  TPR ≤ min(1, e^ε·FPR, 1 − e^(−ε)·(1 − FPR)) at the pair's claimed bound ε (Kairouz, Oh &
  Viswanath 2015): no test reaches the shaded region while the claim holds.
- **Points with bars**: the two chosen events (one chosen for x, one for x′) with Clopper–Pearson
  intervals on both rates at the verdict's level per test. **A red cross** is a box wholly in the
  shaded region: a violation at {percent(conf, exact=True)} family-wise confidence.
- **The verdict** reads the same events as a ratio: a lower bound on ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S]
  above the claimed bound violates it. DP-MLM claims ε per token: a sentence of n WordPieces claims
  n·ε, and sentences of different lengths are outside its claim (untested).
- **Largest certifiable bound**: {rewrites:,} rewrites per input cannot certify a loss above it,
  whatever the rewriter does. A claimed bound above it is *out of reach*: this size could not have
  shown a violation, and nothing is shown either way; more rewrites raise it (about ln N).
- "No violation detected" means this test, at this size, on this pair, found none. It does not make a
  rewriter private.
- The flawed DP-MLM keeps stopwords verbatim (as the authors' published default does): when x and
  x′ differ in a stopword ("was" against "felt"), the word n-gram event gives the input away in every
  rewrite, far beyond n·ε.
"""
    )
