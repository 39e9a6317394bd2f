"""Do public sanitizers keep their claims? The verdict table, read from the shipped file.

Widgets (filters, the opened row) → the verdict file (``dpcore.verdicts``: the rows, in words) →
``dpcore.viz.verdicts_figure``. The page runs no audit: ``python -m dpcore verdicts`` wrote the file
(``dpcore/data/verdicts.json``), and each row's ``audit-text`` command, shown with it, reproduces it.
The URL carries the filters and the opened row (``lib``, ``verdict``, ``q``, ``row``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import streamlit as st

import dpcore.verdicts.document as verdict_file
from dpcore.jsonutil import dumps
from dpcore.reproduce import shell_command
from dpcore.validation import DPCoreError
from dpcore.verdicts import page_view as view
from dpcore.verdicts.wording import (
    largest_violation,
    nats,
    power_summary,
    short_claim,
    test_sentence,
    uniform_flaw,
)
from dpcore.viz.verdicts_figure import verdicts_figure
from pages._shared import (
    Param,
    cells_in_words,
    download_buttons,
    ensure_navigation,
    escape_markdown,
    init_query_state,
    multi_param,
    page_intro,
    show_table,
    sync_query_params,
)

ensure_navigation()

TITLE = "Do public sanitizers keep their claims?"
MAX_QUERY_CHARS = 80
#: The table's key carries a generation: a new one (no row highlighted) after a filter or the
#: "Open a row" box changed, so that the highlighted row is always the opened one.
_GEN = "_verdicts_table_generation"
_PICK = "_verdicts_table_pick"


def verdict_path() -> Path:
    """The file the page reads: the shipped one (tests point ``dpcore.verdicts.document.SHIPPED_PATH``
    at another)."""
    return Path(verdict_file.SHIPPED_PATH)


@st.cache_data(max_entries=4, max_size="64MB", show_spinner=False)
def read_verdicts(path: str, mtime_ns: int, size: int) -> tuple[dict[str, Any], str]:
    """The validated file, its numbers read back (:func:`dpcore.verdicts.document.normalised`), and
    its text (the download).
    Keyed by the file's path, modification time and size: a new file is read again."""
    doc = verdict_file.load(path)
    return doc, Path(path).read_text(encoding="utf-8")


def _plain(text: Any) -> str:
    return escape_markdown(str(text))


def _sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter (not dpcore's name) and a full stop."""
    first = text if text.startswith("dpcore") else text[:1].upper() + text[1:]
    return first + ("" if text.endswith(".") else ".")


def _bump() -> None:
    st.session_state[_GEN] = st.session_state.get(_GEN, 0) + 1


def _query_ok(text: str) -> bool:
    """A mechanism filter: at most :data:`MAX_QUERY_CHARS` letters, digits and ``: . + - _ ( ) / '``
    (nothing that Markdown or a URL could turn into something else)."""
    return len(text) <= MAX_QUERY_CHARS and all(c.isalnum() or c in " :.+-_()/'" for c in text)


def _query_param() -> Param:
    def parse(text: str) -> str:
        if not _query_ok(text):
            raise ValueError(f"must be at most {MAX_QUERY_CHARS} letters, digits or : . + - _ ( ) / '")
        return text

    return Param("", parse, str)


def _row_param(names: list[str]) -> Param:
    known = set(names)

    def parse(text: str) -> str:
        if text and text not in known:
            raise ValueError("must name a row of this table")
        return text

    return Param("", parse, str)


how_to_read = "\n".join(f"- **{k}**: {v}." for k, v in verdict_file.DEFINITIONS.items())
page_intro(
    TITLE,
    "Each row is one public text sanitizer, audited as it ships against the privacy it claims: "
    "either a test certified a privacy loss above its claim, or the row says how small a flaw "
    "its run would have caught.",
    how_to_read
    + "\n- **“No violation found” is not “private”**: it says that this run, at its size, certified "
    "no loss above the claim, and what it would have caught. A flaw smaller than that, or of a kind "
    "listed as not covered, may be there unseen.\n"
    "- **The claim**: ε-LDP, or ε·d + ε₀ metric LDP: a pair's privacy loss at most ε·d(x, x′) + ε₀, "
    "d the distance the claim names; ε₀ is 0 except where the claim adds one (SanText+'s UMLDP: "
    "ε₀ = ln 1/p), and the column says which, with the paper.\n"
    "- **How much**: always in nats of privacy loss. A violating row's verdict says how far above "
    "its claim the loss is certified to be (“violates its claim by at least … nats”).\n"
    "- **The figure**: one line per mechanism, grouped by library. A red diamond is a violating "
    "row's certified excess, the number its verdict gives (its largest violating pair's lower bound "
    "minus the claimed bound, or the pooled test's certified excess); a grey ring is the smallest "
    "flaw shared by the vocabulary that the run would have caught with probability 0.9, the flaw "
    "its verdict names. Both are in nats (the axis is logarithmic). Rows that could not run are "
    "listed without a marker.",
)

# ---- the file ---------------------------------------------------------------------------------
path = verdict_path()
try:
    stat = path.stat()
    doc, raw = read_verdicts(str(path), stat.st_mtime_ns, stat.st_size)
except (OSError, DPCoreError) as exc:
    reason = str(exc) if isinstance(exc, DPCoreError) else f"no such verdict file: {path}"
    st.error(
        f"The verdict table cannot be shown: {_plain(reason)}. `python -m dpcore verdicts` writes it.",
        icon=":material/error:",
    )
    st.stop()

header = doc["header"]
rows: list[dict[str, Any]] = doc["rows"]
by_name = {r["name"]: r for r in rows}
groups = view.groups(rows)
command = str(header.get("command", "?")).replace("`", "'")
st.caption(f"From `{command}`: {_plain(view.header_sentence(header))}")

SPECS = {
    "lib": multi_param(groups, groups, max_items=len(groups), allow_empty=True),
    "verdict": multi_param(list(view.VERDICT_KINDS), view.VERDICT_KINDS, allow_empty=True),
    "q": _query_param(),
    "row": _row_param(list(by_name)),
}
ignored = init_query_state(SPECS, page="verdicts")
if ignored:  # one line: what was ignored, and that the default is shown instead
    st.caption(" ".join(ignored) + " The page shows its default instead.")

with st.sidebar:
    st.header("Filter the table")
    st.multiselect(
        "Library", groups, key="lib", format_func=lambda g: view.group_label(g, rows), on_change=_bump
    )
    st.multiselect(
        "Verdict", view.VERDICT_KINDS, key="verdict", format_func=view.VERDICT_WORDS.get, on_change=_bump
    )
    st.text_input(
        "Mechanism contains",
        key="q",
        max_chars=MAX_QUERY_CHARS,
        on_change=_bump,
        help="Part of a mechanism's name, summary or claim (e.g. santext, pypantera, Feyisetan).",
    )

query = str(st.session_state["q"])
if not _query_ok(query):
    st.warning("The mechanism filter takes letters, digits and : . + - _ ( ) / ' only; it is ignored.")
    query = ""
shown = view.filter_rows(
    rows, groups=list(st.session_state["lib"]), verdicts=list(st.session_state["verdict"]), query=query
)

# ---- the table ----------------------------------------------------------------------------------
st.subheader("The table")
st.caption(
    f"{len(shown)} of {len(rows)} rows. Select a row (the box at its left) or choose it below to open "
    "its evidence; click a column's name to sort."
)
table = view.table(shown)
key = f"verdicts-table-{st.session_state.get(_GEN, 0)}"
if key not in st.session_state:  # a new table (or the page was left): nothing picked in it yet
    st.session_state[_PICK] = None
event = st.dataframe(
    table,
    key=key,
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    width="stretch",
    column_config={  # 785 px: the table fits a 1280-px window beside the sidebar (818 px)
        "library": st.column_config.TextColumn("library", width=105),
        "mechanism": st.column_config.TextColumn("mechanism", width=205),
        "claim": st.column_config.TextColumn("claim", width=95),
        "verdict": st.column_config.TextColumn("verdict", width=200),
        "|V|": st.column_config.NumberColumn("|V|", width=45, format="localized"),
        "draws": st.column_config.NumberColumn("draws", width=80, format="localized"),
        "seconds": st.column_config.NumberColumn("seconds", width=55, format="%.1f"),
    },
)
picked = event.selection.rows if event is not None else []
now = shown[picked[0]]["name"] if picked and picked[0] < len(shown) else None
if now != st.session_state.get(_PICK):  # the visitor picked (or unpicked) a row in the table
    st.session_state[_PICK] = now
    st.session_state["row"] = now or ""

options = [""] + [r["name"] for r in shown]
if st.session_state["row"] not in options:  # opened from the URL or before a filter hid it
    options.append(st.session_state["row"])
st.selectbox(
    "Open a row",
    options,
    key="row",
    format_func=lambda n: (
        "— none —" if not n else f"{n} ({view.VERDICT_WORDS[verdict_file.verdict_of(by_name[n])]})"
    ),
    on_change=_bump,
)
sync_query_params(SPECS)

filters = {
    "groups": list(st.session_state["lib"]),
    "verdicts": list(st.session_state["verdict"]),
    "mechanism contains": query,
}
download_buttons(
    view.table_for_download(shown),
    {"verdict_file": header, "filters": filters, "definitions": doc.get("definitions")},
    "dpcore-verdicts",
    key="verdicts-table",
)

# ---- the figure ---------------------------------------------------------------------------------
st.plotly_chart(verdicts_figure(shown), width="stretch", key="verdicts-figure")
st.caption(
    "Red: certified privacy loss above the claim, in nats (a lower bound at the row's confidence; "
    "the number the table's verdict gives). Grey: the smallest flaw shared by the vocabulary the run "
    "would have caught with probability 0.9, where it found none (its verdict names the flaw); a "
    "row without a violation is not shown to be private."
)


# ---- the opened row -------------------------------------------------------------------------------
def show_row(row: dict[str, Any]) -> None:
    """One row's evidence: its verdict in words, the largest certified violation, the pairs, the
    pooled tests, the power, the contract checks, the plan, the check and the command."""
    v = verdict_file.verdict_of(row)
    st.subheader(_plain(row["name"]))
    st.caption(
        _plain(
            f"{view.library_label(row)}; ε = {row['epsilon']:g}"
            + (f", {row['embedding']} embedding" if row.get("embedding") else "")
            + f"; claim: {short_claim(row)}. "
            + (
                ""
                if (row.get("claim") or "") in (row.get("summary") or "")
                else str(row.get("summary") or "")
            )
        )
    )
    text = _plain(_sentence(view.safe_headline(row)))
    if v == "violates":
        st.error(text, icon=":material/error:")
    elif v == "not-detected":
        st.info(text, icon=":material/info:")
    else:
        st.warning(text, icon=":material/block:")
    if row["status"] != "ran":
        st.caption(
            "A row that cannot run stays in the table with the one line that says why; it shows "
            "neither a violation nor its absence."
        )
        _row_download(row)
        return
    a = row["audit"]
    conf = f"{100 * float(a['confidence']):g}%"
    st.markdown(_plain(_sentence(test_sentence(row))))
    for line in view.claim_lines(row):
        st.markdown(_plain(line))

    st.markdown("**Largest certified violation**")
    w = largest_violation(row)
    if w is None:
        st.markdown("None: no test certified a privacy loss above the claim.")
    elif w["kind"] == "pair":
        ratio = f" (×{w['ratio']:.3g} the claim)" if math.isfinite(w["ratio"]) else ""
        st.markdown(
            _plain(
                f"The pair ({w['x']}, {w['x_prime']}): its privacy loss is at least {nats(w['lower_bound'])} "
                f"nats at {conf} confidence (family-wise), against a claimed {nats(w['claimed_bound'])}: "
                f"at least {nats(w['excess'])} nats above its claim{ratio}"
                + (
                    f"; event chosen by {view.EVENT_SOURCE_WORDS.get(w['event_source'], w['event_source'])}."
                    if w.get("event_source")
                    else "."
                )
            )
        )
    else:
        st.markdown(
            _plain(
                f"The pooled '{w['family']}' test over {w['terms']:,} {w['pairing']} pairs: some pair's loss "
                f"exceeds its claim by at least {nats(w['excess'])} nats, at {conf} confidence."
            )
        )

    bad = view.violating_pairs(row)
    if len(bad):
        st.markdown(
            f"**Violating pairs** ({len(bad)} kept of {a['violating_pairs_total']:,} flagged, "
            "strongest first)"
        )
        show_table(cells_in_words(bad), {c: c for c in bad.columns}, key="verdicts-violating-pairs")
    others = view.other_pairs(row)
    if len(others):
        with st.expander(f"The strongest pairs that did not violate ({len(others)} kept)"):
            show_table(cells_in_words(others), {c: c for c in others.columns}, key="verdicts-other-pairs")

    pooled = view.pooled_tests(row)
    if len(pooled):
        st.markdown("**Pooled tests over the vocabulary**")
        show_table(pooled, {c: c for c in pooled.columns}, key="verdicts-pooled")

    p = power_summary(row)
    st.markdown(f"**What this run would have caught**, each with probability ≥ {p['power']:g}")
    if p["uniform_delta"] is not None:
        st.markdown(
            _plain(
                f"A flaw shared by the vocabulary, Δ ≥ {nats(p['uniform_delta'])} nats above the claim: "
                f"had {uniform_flaw(p['uniform_family'], p['uniform_pairing'], p['uniform_delta'])}, "
                "it would have been caught."
            )
        )
    else:
        st.markdown("A flaw shared by the vocabulary: no size stated by this run.")
    singles = view.single_output(row)
    if len(singles):
        st.markdown("One output whose loss is its claim + 1 nat, per claim level:")
        show_table(singles, {c: c for c in singles.columns}, key="verdicts-single-output")
    if p["text"]:
        with st.expander("The power statement in full"):
            st.markdown(_plain(_sentence(p["text"])))
    if p["not_covered"]:
        with st.expander(f"Not covered ({len(p['not_covered'])})"):
            st.markdown("\n".join(f"- {_plain(t)}." for t in p["not_covered"]))

    st.markdown("**Checks before the verdict**")
    for c in view.checks(row):
        line = f"**{c['check']}: {_plain(c['result'])}.**" + (
            f" {_plain(_sentence(c['text']))}" if c["text"] else ""
        )
        if c["status"] in view.WARNING_STATUSES:
            st.warning(line, icon=":material/warning:")
        else:
            st.markdown(line)

    st.markdown("**Plan** — " + _plain(_sentence(view.plan_sentence(row))))
    st.markdown(
        "**Check** (what `python -m dpcore verdicts --check` reruns) — "
        + _plain(_sentence(view.check_sentence(row)))
    )
    argv = view.command_argv(row)
    if argv is not None:
        st.markdown("**Reproduce this row** (the same JSON, timings apart, on any machine and any workers)")
        st.code(shell_command(argv), language="bash", wrap_lines=True)
    _row_download(row)


def _row_download(row: dict[str, Any]) -> None:
    st.download_button(
        "Download this row (JSON)",
        dumps(row, indent=2),
        file_name=f"dpcore-verdict-{row['name'].replace(':', '-')}.json",
        mime="application/json",
        key="verdicts-row-json",
        on_click="ignore",
    )


opened = st.session_state["row"]
if opened:
    st.divider()
    show_row(by_name[opened])
else:
    st.info("Select a row in the table, or choose one under “Open a row”, to see its evidence.")

st.download_button(
    "Download the whole verdict file (JSON)",
    raw,
    file_name="dpcore-verdicts.json",
    mime="application/json",
    key="verdicts-file-json",
    on_click="ignore",
)
