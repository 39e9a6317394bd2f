"""Do public sanitizers keep their claims? The verdict table, read from the shipped file.

Widgets (filters, the opened row) → the verdict file (``dpcore.verdicts``: the rows, in words) →
``dpcore.viz.verdicts_figure`` and ``dpcore.viz.verdicts_table``. The page runs no audit:
``python -m dpcore verdicts`` wrote the file (``dpcore/data/verdicts.json``), and each row's
``audit-text`` command, shown with it, reproduces it. The URL carries the filters and the opened
row (``lib``, ``verdict``, ``q``, ``row``).

On a 1280×720 projector the first screen holds the page's answer in one sentence and the figure
(every row, in two columns). The opened row's evidence follows the figure, and opening a row (a
click on its line in the table, the sidebar's "Open a row", or a link) scrolls it into view with
its line marked in the figure. The table is an HTML table whose cells wrap, so nothing in it is
cut off at 1280 px; a click on a column's name sorts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

import dpcore.verdicts.document as verdict_file
from dpcore.formatting import sentence
from dpcore.jsonutil import dumps
from dpcore.reproduce import shell_command
from dpcore.validation import DPCoreError
from dpcore.verdicts import page_view as view
from dpcore.verdicts.wording import (
    power_summary,
    test_sentence,
)
from dpcore.viz.verdicts_figure import (
    LINE_PX,
    MAX_HEIGHT_PX,
    TALK_LINE_PX,
    TALK_MAX_HEIGHT_PX,
    verdicts_figure,
)
from dpcore.viz.verdicts_table import headline_sentence, table_cells
from pages._shared import (
    Param,
    cells_in_words,
    download_buttons,
    ensure_navigation,
    escape_markdown,
    init_query_state,
    more,
    multi_param,
    page_intro,
    plot,
    show_table,
    sync_query_params,
    talk_mode,
)

ensure_navigation()

TITLE = "Do public sanitizers keep their claims?"
MAX_QUERY_CHARS = 80
#: The table's Streamlit key (its element carries the class ``st-key-verdicts-table``).
TABLE_KEY = "verdicts-table"
#: The opened row whose evidence was last scrolled into view, and a counter of openings.
_SCROLLED = "_verdicts_scrolled_row"
_NONCE = "_verdicts_scroll_nonce"

#: The table: rows built from ``data`` with textContent (no markup from the file is interpreted);
#: a click (or Enter) on a row sends its name back, a click on a column's name sorts by it.
_TABLE_JS = """
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  let box = parentElement.querySelector("div.dpv-box");
  if (!box) {
    box = document.createElement("div");
    box.className = "dpv-box";
    parentElement.appendChild(box);
  }
  const sort = box.__dpvSort || (box.__dpvSort = { col: -1, dir: 1 });
  const widths = [11, 19, 18, 25, 8, 10, 9];
  const cmp = (a, b) => {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const c = cmp(a[i], b[i]);
        if (c) return c;
      }
      return a.length - b.length;
    }
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    return a < b ? -1 : 1;
  };
  const open = (name) => setTriggerValue("opened", name);
  const render = () => {
    const table = document.createElement("table");
    table.className = "dpv-table";
    const cols = document.createElement("colgroup");
    data.columns.forEach((_, i) => {
      const c = document.createElement("col");
      c.style.width = widths[i] + "%";
      cols.appendChild(c);
    });
    table.appendChild(cols);
    const head = document.createElement("thead");
    const hr = document.createElement("tr");
    data.columns.forEach((name, i) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name + (sort.col === i ? (sort.dir > 0 ? " ▲" : " ▼") : "");
      th.title = "Sort by " + name;
      if (data.numeric.includes(name)) th.className = "dpv-num";
      th.onclick = () => {
        sort.dir = sort.col === i ? -sort.dir : 1;
        sort.col = i;
        render();
      };
      hr.appendChild(th);
    });
    head.appendChild(hr);
    table.appendChild(head);
    const body = document.createElement("tbody");
    const rows = data.rows.slice();
    if (sort.col >= 0) rows.sort((a, b) => sort.dir * cmp(a.keys[sort.col], b.keys[sort.col]));
    for (const row of rows) {
      const tr = document.createElement("tr");
      tr.tabIndex = 0;
      tr.dataset.name = row.name;
      tr.setAttribute("role", "button");
      tr.setAttribute("aria-label", "Open the evidence of " + row.name);
      if (row.name === data.opened) tr.className = "dpv-opened";
      row.cells.forEach((text, i) => {
        const td = document.createElement("td");
        td.textContent = text;
        if (row.titles[i]) td.title = row.titles[i];
        if (data.numeric.includes(data.columns[i])) td.className = "dpv-num";
        if (i === 3) {
          td.style.color = row.colour;
          if (row.verdict === "violates") td.style.fontWeight = "600";
        }
        tr.appendChild(td);
      });
      tr.onclick = () => open(row.name);
      tr.onkeydown = (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          open(row.name);
        }
      };
      body.appendChild(tr);
    }
    table.appendChild(body);
    box.replaceChildren(table);
  };
  render();
}
"""

_TABLE_CSS = """
.dpv-table { width: 100%; table-layout: fixed; border-collapse: collapse; font-size: 0.9rem;
  line-height: 1.3; color: #1f1f1f; }
.dpv-table th, .dpv-table td { padding: 0.3rem 0.4rem; text-align: left; vertical-align: top;
  white-space: normal; overflow-wrap: anywhere; border-bottom: 1px solid #dedede; }
.dpv-table th { font-weight: 600; cursor: pointer; user-select: none; border-bottom: 2px solid #999; }
.dpv-table .dpv-num { text-align: right; font-variant-numeric: tabular-nums; }
.dpv-table tbody tr { cursor: pointer; }
.dpv-table tbody tr:hover { background: #f2f2f2; }
.dpv-table tbody tr:focus-visible { outline: 2px solid #1f5fa0; outline-offset: -2px; }
.dpv-table tbody tr.dpv-opened { background: rgba(255, 196, 0, 0.28); }
.dpv-table tbody tr.dpv-opened td:nth-child(2) { font-weight: 700; }
"""

#: Scrolls the opened row's evidence into view once per opening (``nonce``), with the figure above
#: it when both fit the window (the figure marks the row), after the page has laid it out.
_SCROLL_JS = """
export default function (component) {
  const { data } = component;
  const done = (window.__dpcoreScrolled = window.__dpcoreScrolled || new Set());
  if (!data || !data.nonce || done.has(data.nonce)) return;
  done.add(data.nonce);
  const go = () => {
    const target = document.querySelector(data.target);
    if (!target) return false;
    const figure = document.querySelector(data.figure);
    const alert = target.querySelector('[data-testid="stAlert"]') || target;
    const margin = 60;  // Streamlit's header
    const t = target.getBoundingClientRect();
    const a = alert.getBoundingClientRect();
    const f = figure ? figure.getBoundingClientRect() : t;
    target.style.scrollMarginTop = margin + "px";
    if (figure) figure.style.scrollMarginTop = margin + "px";
    alert.style.scrollMarginBottom = "12px";
    if (figure && a.bottom - f.top + margin + 12 <= window.innerHeight) {
      figure.scrollIntoView({ block: "start" });  // the marked figure and the verdict, together
    } else if (a.bottom - t.top + margin + 12 <= window.innerHeight) {
      alert.scrollIntoView({ block: "end" });  // the verdict, with the figure's last lines above
    } else {
      target.scrollIntoView({ block: "start" });
    }
    return true;
  };
  let tries = 0;
  const tick = () => {
    if (!go() && tries++ < 100) setTimeout(tick, 100);
  };
  requestAnimationFrame(tick);
  setTimeout(go, 700);
}
"""


@st.cache_resource(max_entries=1, show_spinner=False)
def _components() -> tuple[Any, Any]:
    """The table and the scroller (registered once per server)."""
    table = st.components.v2.component(
        "dpcore_verdicts_table", js=_TABLE_JS, css=_TABLE_CSS, isolate_styles=False
    )
    scroller = st.components.v2.component("dpcore_verdicts_scroll", js=_SCROLL_JS, isolate_styles=False)
    return table, scroller


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


def _opened_in_table() -> None:
    """A click on a table row opens it (before the page runs again, so that the figure marks it)."""
    name = (st.session_state.get(TABLE_KEY) or {}).get("opened")
    if name:
        st.session_state["row"] = name


HOW_TO_READ = (
    "Each row is one public text sanitizer, audited as it ships against the privacy it claims: "
    "either a test certified a privacy loss above its claim, or the row says how small a flaw its "
    "run would have caught. The controls are dpcore's flawed reproductions, built to be caught.\n\n"
    + "\n".join(f"- **{k}**: {v}." for k, v in verdict_file.DEFINITIONS.items())
    + "\n- **“No violation found” is not “private”**: it says that this run, at its size, certified "
    "no loss above the claim, and what it would have caught. A flaw smaller than that, or of a kind "
    "listed as not covered, may be there unseen.\n"
    "- **The claim**: ε-LDP, or ε·d + ε₀ metric LDP: a pair's privacy loss at most ε·d(x, x′) + ε₀, "
    "d the distance the claim names; ε₀ is 0 except where the claim adds one (SanText+'s UMLDP: "
    "ε₀ = ln 1/p). The table's claim cell names the kind and the papers; its tooltip and the opened "
    "row give the claim in full.\n"
    "- **One scale, nats above the claim**: the figure's axis and the table's verdicts. A violating "
    "row's number is how far above its claim the loss is certified to be (“≥ 1.25” above: its "
    "largest violating pair's lower bound minus the claimed bound, or the pooled test's certified "
    "excess, at the row's confidence); a row without a violation gives the smallest flaw shared by "
    "the vocabulary that its run would have caught with probability 0.9 (“would catch ≥ 0.0171”).\n"
    "- **The figure**: one line per mechanism, grouped by library (the group's name heads it, so a "
    "line drops the library's prefix: `pypantera:CMP` is `CMP`). A red diamond is a violating row's "
    "certified excess; a grey ring the smallest flaw its run would have caught. The axis is "
    "logarithmic. Rows without a marker say why on their line. The opened row is marked (▶, a band "
    "and its number)."
)

# ---- the file ---------------------------------------------------------------------------------
path = verdict_path()
try:
    stat = path.stat()
    doc, raw = read_verdicts(str(path), stat.st_mtime_ns, stat.st_size)
except (OSError, DPCoreError) as exc:
    reason = str(exc) if isinstance(exc, DPCoreError) else f"no such verdict file: {path}"
    st.title(TITLE)
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

SPECS = {
    "lib": multi_param(groups, groups, max_items=len(groups), allow_empty=True),
    "verdict": multi_param(list(view.VERDICT_KINDS), view.VERDICT_KINDS, allow_empty=True),
    "q": _query_param(),
    "row": _row_param(list(by_name)),
}
ignored = init_query_state(SPECS, page="verdicts")

with st.sidebar:
    st.header("Filter the table")
    st.multiselect("Library", groups, key="lib", format_func=lambda g: view.group_label(g, rows))
    st.multiselect("Verdict", view.VERDICT_KINDS, key="verdict", format_func=view.VERDICT_WORDS.get)
    st.text_input(
        "Mechanism contains",
        key="q",
        max_chars=MAX_QUERY_CHARS,
        help="Part of a mechanism's name, summary or claim (e.g. santext, pypantera, Feyisetan).",
    )

query = str(st.session_state["q"])
query_ok = _query_ok(query)
if not query_ok:
    query = ""
shown = view.filter_rows(
    rows, groups=list(st.session_state["lib"]), verdicts=list(st.session_state["verdict"]), query=query
)

options = [""] + [r["name"] for r in shown]
if st.session_state["row"] not in options:  # opened from the URL or before a filter hid it
    options.append(st.session_state["row"])
with st.sidebar:
    st.selectbox(
        "Open a row",
        options,
        key="row",
        format_func=lambda n: (
            "— none —" if not n else f"{n} ({view.VERDICT_WORDS[verdict_file.verdict_of(by_name[n])]})"
        ),
        help="Or click the row's line in the table.",
    )
sync_query_params(SPECS)
opened: str = st.session_state["row"]

# ---- the story: one sentence and the figure ----------------------------------------------------
page_intro(TITLE, _plain(headline_sentence(rows)), HOW_TO_READ)
if ignored:  # one line: what was ignored, and that the default is shown instead
    st.caption(" ".join(ignored) + " The page shows its default instead.")
if not query_ok:
    st.warning("The mechanism filter takes letters, digits and : . + - _ ( ) / ' only; it is ignored.")

talk = talk_mode()
plot(
    verdicts_figure(
        shown,
        opened=opened or None,
        line_px=TALK_LINE_PX if talk else LINE_PX,
        max_height=TALK_MAX_HEIGHT_PX if talk else MAX_HEIGHT_PX,
    ),
    key="verdicts-figure",
)
st.caption(
    (f"{len(shown)} of {len(rows)} rows (the sidebar's filters). " if len(shown) < len(rows) else "")
    + "A grey ring is the smallest flaw shared by the vocabulary that the row's run would have caught "
    "(probability 0.9): a row without a violation is not shown to be private. A red diamond is a "
    "certified loss above the claim (a lower bound at the row's confidence), the table's number. "
    "Privacy loss is counted like ε, in nats (natural logarithms of probability ratios): the "
    "headline's amounts are the figure's and the table's."
)


# ---- the opened row -------------------------------------------------------------------------------
def show_row(row: dict[str, Any]) -> None:
    """One row's evidence: its verdict in words, the largest certified violation, the pairs, the
    pooled tests, the power, the contract checks, the plan, the check and the command."""
    v = verdict_file.verdict_of(row)
    st.subheader(_plain(row["name"]))
    text = _plain(sentence(view.safe_headline(row)))
    if v == "violates":
        st.error(text, icon=":material/error:")
    elif v in ("not-detected", "out-of-reach"):
        st.info(text, icon=":material/info:")
    else:
        st.warning(text, icon=":material/block:")
    st.caption(_plain(view.row_caption(row)))
    if row["status"] != "ran":
        st.caption(
            "A row that cannot run stays in the table with the one line that says why; it shows "
            "neither a violation nor its absence."
        )
        _row_download(row)
        return
    a = row["audit"]
    st.markdown(_plain(sentence(test_sentence(row))))
    for line in view.claim_lines(row):
        st.markdown(_plain(line))

    st.markdown("**Largest certified violation**")
    st.markdown(_plain(view.largest_violation_text(row)))

    with more("The evidence in full: pairs, pooled tests, power, checks, plan and command"):
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
        st.markdown(_plain(view.uniform_flaw_text(row)))
        singles = view.single_output(row)
        if len(singles):
            st.markdown("One output whose loss is its claim + 1 nat, per claim level:")
            show_table(singles, {c: c for c in singles.columns}, key="verdicts-single-output")
        if p["text"]:
            with st.expander("The power statement in full"):
                st.markdown(_plain(sentence(p["text"])))
        if p["not_covered"]:
            with st.expander(f"Not covered ({len(p['not_covered'])})"):
                st.markdown("\n".join(f"- {_plain(t)}." for t in p["not_covered"]))

        st.markdown("**Checks before the verdict**")
        for c in view.checks(row):
            line = f"**{c['check']}: {_plain(c['result'])}.**" + (
                f" {_plain(sentence(c['text']))}" if c["text"] else ""
            )
            if c["status"] in view.WARNING_STATUSES:
                st.warning(line, icon=":material/warning:")
            else:
                st.markdown(line)

        st.markdown("**Plan** — " + _plain(sentence(view.plan_sentence(row))))
        st.markdown(
            "**Check** (what `python -m dpcore verdicts --check` reruns) — "
            + _plain(sentence(view.check_sentence(row)))
        )
        argv = view.command_argv(row)
        if argv is not None:
            st.markdown(
                "**Reproduce this row** (the same JSON, timings apart, on any machine and any workers)"
            )
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


# ---- the opened row's evidence, then the table ---------------------------------------------------
table_component, scroller = _components()
if opened:
    with st.container(key="verdicts-evidence"):
        show_row(by_name[opened])
    if st.session_state.get(_SCROLLED) != opened:  # a row opened now: bring its evidence into view
        st.session_state[_NONCE] = st.session_state.get(_NONCE, 0) + 1
    nonce = st.session_state[_NONCE]
    scroller(
        data={
            "nonce": f"{nonce}-{opened}",
            "target": ".st-key-verdicts-evidence",
            "figure": ".st-key-verdicts-figure",
        },
        key=f"verdicts-scroll-{nonce}",
    )
st.session_state[_SCROLLED] = opened

with more("The table: every row, its claim, its verdict and its run", icon=":material/table:"):
    st.subheader("The table")
    st.caption(f"From `{command}`: {_plain(view.header_sentence(header))}")
    if not opened:
        st.info(
            "Click a row in the table, or choose one under “Open a row” in the sidebar, to see its evidence.",
            icon=":material/touch_app:",
        )
    st.caption(
        f"{len(shown)} of {len(rows)} rows; click a column's name to sort. A cell's tooltip gives it in "
        "full; the downloads keep every number."
    )
    table_component(data=table_cells(shown, opened), key=TABLE_KEY, on_opened_change=_opened_in_table)
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
    st.download_button(
        "Download the whole verdict file (JSON)",
        raw,
        file_name="dpcore-verdicts.json",
        mime="application/json",
        key="verdicts-file-json",
        on_click="ignore",
    )
