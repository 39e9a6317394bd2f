"""Rewriter calibration: the same nominal ε, a different distinguishability for each rewriter.

The shipped file (``dpcore/data/rewriter_calibration.json``, written by
``python -m dpcore calibrate-rewriters --save …``: :mod:`dpcore.rewriter.calibrate`) → the one-sentence
headline (:func:`dpcore.viz.calibration_figure.page_headline`), the figure, the table and the sample
rewrites of :mod:`dpcore.viz.calibration_figure`. The table shows the columns a room reads first
(they fit a 1280-px projector with the sidebar open); the estimate and the meaning retained are in a second
table under an expander. Rewrites are shown as words (:mod:`dpcore.rewriter.words`). The page computes
nothing and loads no model: it reads the file once per version of it (cached by path, modification
time and size) and shows it. The URL carries the cell whose sample rewrites are shown (``rw``,
``eps``). Without the file, the page says so and shows the command that makes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

import dpcore.rewriter.calibrate as calibrate
from dpcore.formatting import epsilon_text, percent
from dpcore.reproduce import shell_command
from dpcore.rewriter.words import LEFT_OUT, NON_LATIN, shown_text
from dpcore.validation import DPCoreError
from dpcore.viz.calibration_figure import (
    ESTIMATE_WORDS,
    FIRST_COLUMNS,
    MORE_COLUMNS,
    calibration_figure,
    calibration_table,
    check_calibration,
    headline_epsilon,
    meaning_of,
    page_headline,
    pair_examples,
    per_unit,
    rewriter_title,
    samples_of,
    shown_table,
    tpr_cap,
)
from pages._shared import (
    Param,
    apply_query_params,
    choice_param,
    download_buttons,
    ensure_navigation,
    escape_markdown,
    more,
    page_intro,
    plot,
    show_table,
    sync_query_params,
    talk_mode,
)

ensure_navigation()

TITLE = "Rewriter calibration"
#: The figure's height (px): the title, the headline and the figure share a 1280×720 screen.
HEIGHT, HEIGHT_TALK = 440, 430


def calibration_path() -> Path:
    """The file the page reads: the shipped one (tests point ``dpcore.rewriter.calibrate.SHIPPED_PATH``
    at another)."""
    return Path(calibrate.SHIPPED_PATH)


@st.cache_data(max_entries=4, max_size="8MB", show_spinner=False)
def read_calibration(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """The calibration record, checked (:func:`dpcore.viz.calibration_figure.check_calibration`).
    Keyed by the file's path, modification time and size: a new file is read again."""
    return check_calibration(calibrate.load_shipped(Path(path)))


def _plain(text: Any) -> str:
    return escape_markdown(str(text))


def _epsilon_param(default: float, options: list[float]) -> Param:
    """A nominal ε of the file, written as it is shown (``10``, ``0.5``)."""
    lookup = {f"{e:g}": e for e in options}

    def parse(text: str) -> float:
        if text not in lookup:
            raise ValueError(f"must be one of {', '.join(lookup)}")
        return lookup[text]

    return Param(default, parse, lambda v: f"{v:g}")


# ---- the file -----------------------------------------------------------------------------------
path = calibration_path()
try:
    stat = path.stat()
    calib = read_calibration(str(path), stat.st_mtime_ns, stat.st_size)
except (OSError, DPCoreError, ValueError) as exc:
    reason = str(exc) if isinstance(exc, DPCoreError) else "it is not a calibration record"
    if isinstance(exc, OSError):
        reason = "the calibration has not been made yet"
    st.title(TITLE)
    st.error(
        f"The calibration cannot be shown: {_plain(reason)}. The command below makes it (11 to 50 minutes "
        "on 2 CPU cores; it writes `dpcore/data/rewriter_calibration.json`, which this page reads).",
        icon=":material/error:",
    )
    st.code(shell_command(calibrate.SHIPPED_COMMAND), language="bash")
    st.stop()

names = [str(r) for r in calib["rewriters"]]
epsilons = sorted(float(e) for e in calib["epsilons"])
fpr = float(calib.get("fpr", 0.01))
rewrites = int(calib["rewrites_per_input"])
conf = percent(float(calib["confidence"]), exact=True)
alarms = percent(fpr, exact=True)
cap = tpr_cap(calib)
x, x_prime = (str(s) for s in calib["pair"])
units = "; ".join(f"{rewriter_title(calib, n)}: ε {per_unit(calib, n)}" for n in names)
meaning = meaning_of(calib)
bounds = (
    ""
    if meaning is None
    else f" It runs from {float(meaning['floor']):.2f}, two unrelated sentences (the floor, "
    f"{_plain(meaning.get('floor_of', ''))}), to {float(meaning['ceiling']):.2f}, x′ against x (the ceiling: "
    "a rewrite above it is closer to x than the neighbouring sentence is, so it keeps what tells them apart)."
)

SPECS = {
    "rw": choice_param(names[0], names),
    "eps": _epsilon_param(headline_epsilon(calib), epsilons),
}

HOW_TO_READ = f"""
- **The question.** Rewriters are compared by their ε, but each one's ε is per another unit:
  {_plain(units)}. The same number is a different promise for each (TeDA, Li et al. 2026). Here each
  rewriter is audited at each nominal ε on one pair of sentences that differ in one word,
  x = “{_plain(x)}” and x′ = “{_plain(x_prime)}”, {rewrites:,} rewrites of each.
- **The figure, left.** An observer sees one rewrite and must say whether x or x′ went in, naming x′
  wrongly for at most {alarms} of the rewrites of x (the false alarms). Up: how often the best
  distinguisher the audit found names x rightly (its TPR at {alarms} FPR). The **dot** is a lower
  confidence bound ({conf} per audit): the audit vouches for it. The **bar** reaches up to the
  {_plain(ESTIMATE_WORDS)}: the best of the measured tests, so it flatters the observer. The dotted
  line is chance: a guess catches x {alarms} of the time at {alarms} false alarms. The dashed line
  is the most {rewrites:,} rewrites per sentence can certify ({percent(cap)}): even a test that is
  always right gets no higher dot, so a dot on that line says “at least this”, and more rewrites
  would raise it.
- **The figure, right.** Meaning retained: the mean cosine similarity of a rewrite to its input in the
  all-MiniLM-L6-v2 sentence embedding (1 = the same text): what the rewriter keeps of the text.{bounds}
- **The claimed loss** (the claim for the pair) is what the rewriter's paper promises for these two
  sentences: ε per WordPiece times the WordPieces (DP-MLM), ε per generated token times the tokens
  (DP-Prompt), ε times the embedding distances of the words (SanText on every word). The **certified
  loss** is a lower bound on the privacy loss of the event that tells the sentences apart
  (Clopper–Pearson, {conf}), in nats like the claim. Where dpcore can compute the pair's **exact loss**
  (SanText draws each word from a known distribution), it is shown beside the certified bound: what
  the audit could certify at most, and what the claim overstates.
- **Out of reach** means the claim for the pair is above the largest loss {rewrites:,} rewrites per
  input can certify (about ln N): the audit could not have shown a violation, and nothing was
  shown either way. It does not mean the rewriter is private. “No violation found” means this test,
  at this size, on this pair, found none.
"""

# ---- the story: the headline and the figure --------------------------------------------------------
page_intro(TITLE, _plain(page_headline(calib)), HOW_TO_READ)
apply_query_params(SPECS, page="rewriter_calibration")
if st.session_state["rw"] not in names or st.session_state["eps"] not in epsilons:  # a file replaced since
    st.session_state.update(rw=SPECS["rw"].default, eps=SPECS["eps"].default)

plot(calibration_figure(calib, height=HEIGHT_TALK if talk_mode() else HEIGHT), key="calibration-figure")
st.caption(
    f"Each rewriter's nominal ε is per another unit ({_plain(units)}), so one ε means different "
    f"privacy for each. A dot is what the audit certifies ({rewrites:,} rewrites of each sentence, {conf} "
    f"confidence; the dashed line, {percent(cap)}, is the most that size can certify); the bar above it is "
    f"the {_plain(ESTIMATE_WORDS)}. “Out of reach” below means the claim "
    "was beyond what an audit of this size can certify: not that the rewriter is private."
)

# ---- every cell ----------------------------------------------------------------------------------
table = shown_table(calib)
with more("Every rewriter at every ε: the table", icon=":material/table:"):
    st.subheader("Every rewriter at every nominal ε")
    show_table(table, {c: c for c in FIRST_COLUMNS}, key="calibration-table", height="content")
    st.caption(
        "The claimed loss (what the rewriter's paper promises for this pair) and the certified loss (a "
        f"lower bound, {conf} confidence) are privacy losses in nats ('none': the audit certified no loss "
        "above 0). TPR at 1% FPR ≥: how often one rewrite gives x away while naming x′ wrongly for at most "
        f"1 rewrite in 100, a lower bound at {conf} confidence ('chance': no better than a guess could be "
        f"shown; 'at the cap': {percent(cap)}, the most {rewrites:,} rewrites per sentence can certify). Out "
        f"of reach: the claim was beyond what {rewrites:,} rewrites per sentence can certify, so nothing was "
        "shown either way; no violation found: this test, at this size, on this pair, found none. "
        "'(exact …)': the pair's exact loss, where dpcore can compute it. The estimate and the meaning "
        "retained are in the table below; the downloads have every column."
    )
    params = {k: v for k, v in calib.items() if k != "cells"}
    download_buttons(calibration_table(calib), params, "dpcore-rewriter-calibration", key="calibration")

with st.expander("The estimate and the meaning retained of every cell", icon=":material/table:"):
    show_table(table, {c: c for c in MORE_COLUMNS}, key="calibration-more", height="content")
    st.caption(
        f"TPR estimate: the point estimate of the best measured test at {percent(fpr)} FPR (biased upward: "
        "the best of the tests measured). Meaning retained: the mean cosine of a rewrite and its input in "
        "the all-MiniLM-L6-v2 sentence embedding (1 = the same text)." + bounds + " Best test by: the "
        "distinguisher family that chose the audit's event (whole outputs, word or character n-grams, "
        "side channels such as length and casing, MiniLM). LM reading: the same rewrites read by the "
        "language-model distinguisher (how much likelier SmolLM2-135M-Instruct finds x than x′ as the "
        f"original of a rewrite), its TPR at {percent(fpr)} FPR certified (the estimate in brackets; "
        "'chance': no better than a guess), computed with the shipped file ('—': not read); its bound "
        "holds alone, and the two readings are compared by their estimates."
    )

# ---- sample rewrites -------------------------------------------------------------------------------
with more("Sample rewrites", icon=":material/format_quote:"):
    st.subheader("What the rewrites look like")
    c1, c2 = st.columns(2)
    c1.selectbox("Rewriter", names, key="rw", format_func=lambda n: rewriter_title(calib, n))
    c2.selectbox(
        "Nominal ε",
        epsilons,
        key="eps",
        format_func=lambda e: f"{e:g}",
        help="Each rewriter's own ε: " + units + ".",
    )
    rw, eps = str(st.session_state["rw"]), float(st.session_state["eps"])
    st.caption(
        f"{_plain(rewriter_title(calib, rw))} at nominal ε = {epsilon_text(eps)} "
        f"({_plain(per_unit(calib, rw))}). "
        "Rewrites are shown as plain text, as words: a WordPiece that continues a word (DP-MLM's ##…) is "
        "joined to the word before unless that word was kept from the input, a word in another script is "
        f"shown as {_plain(NON_LATIN)} (the page's font cannot draw every script) and a word on dpcore's "
        f"list of left-out words as {_plain(LEFT_OUT)}; the audit counts the rewrites as written."
    )
    samples = samples_of(calib, rw, eps)
    for text, outs in samples:
        st.markdown("**Public sentence** (Lee corpus):")
        st.text(text)
        st.markdown("**Its rewrites:**")
        for out in outs:
            st.text(shown_text(out, keep=text.split()))
    if not samples:
        st.caption("This cell has no sample rewrites.")
    examples = pair_examples(calib, rw, eps)
    if examples["x"] or examples["x_prime"]:
        st.markdown("**The audited pair's first rewrites:**")
        cols = st.columns(2)
        for col, label, sentence, outs in (
            (cols[0], "x", x, examples["x"]),
            (cols[1], "x′", x_prime, examples["x_prime"]),
        ):
            col.markdown(f"**{label}:**")
            col.text(sentence)
            for out in outs:
                col.text(shown_text(out, keep=sentence.split()))

sync_query_params(SPECS)

# ---- the command that made it ---------------------------------------------------------------------
with st.expander("Reproduce this from the command line"):
    command = [str(a) for a in calib.get("command") or []]
    if command:
        st.code(shell_command(command), language="bash")
        minutes = float(calib.get("seconds") or 0) / 60
        st.caption(
            f"The command that made this file ({minutes:.0f} minutes"
            + (f", dpcore {_plain(calib['dpcore_version'])}" if calib.get("dpcore_version") else "")
            + f", seed {int(calib.get('seed', 0))}). `python -m dpcore calibrate-rewriters --help` lists "
            "its options; the page reads the file and computes nothing."
        )
    else:
        st.caption("This file records no command (it was made through the library, not the CLI).")
