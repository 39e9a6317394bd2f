"""AppTest: the "Do public sanitizers keep their claims?" page (``pages/verdicts.py``).

The page reads the shipped verdict file (``dpcore/data/verdicts.json``); the tests take their
expectations from that file, whatever its rows, and point the page at a temporary copy
(``dpcore.verdicts.document.SHIPPED_PATH``) where they need a row it may not have, a changed
file, a missing one or a broken one.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpcore.verdicts.document as verdict_file
from dpcore.verdicts import page_view as view
from dpcore.verdicts.document import normalised
from dpcore.verdicts.wording import largest_violation, power_summary
from dpcore.viz.verdicts_figure import OPENED, row_label
from dpcore.viz.verdicts_table import claim_cell, headline_sentence, verdict_cell
from pages._shared import escape_markdown

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "verdicts.py")
COLUMNS = ["library", "mechanism", "claim", "verdict (nats above the claim)", "|V|", "draws", "seconds"]
VERDICT = "verdict (nats above the claim)"
CANNOT_RUN_WHY = "the library is not installed here: pip install imaginary==0.1"


pytestmark = pytest.mark.usefixtures("clear_page_caches")


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return verdict_file.load_shipped()


def _first(doc: dict[str, Any], verdict: str) -> dict[str, Any]:
    rows = [r for r in doc["rows"] if verdict_file.verdict_of(r) == verdict]
    if not rows:
        pytest.skip(f"the shipped verdict file has no {verdict!r} row")
    return rows[0]


def _page(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _point_at(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(verdict_file, "SHIPPED_PATH", path)


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def _with_cannot_run_row(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` and one more row, in the last group, that could not run."""
    out = copy.deepcopy(doc)
    last = out["rows"][-1]
    extra = copy.deepcopy(last) | {
        "name": "test:imaginary",
        "status": "cannot-run",
        "why": CANNOT_RUN_WHY,
        "plan": None,
        "command": None,
        "audit": None,
        "tpr_at_fpr": None,
        "check": None,
        "claim": None,
        "guarantee": None,
        "expected": None,
        "seconds": 0.0,
    }
    out["rows"].append(extra)
    assert verdict_file.validate(out) == []
    return out


def _table_data(at: AppTest) -> dict[str, Any]:
    """What the page's table (an HTML table drawn by a component, key ``verdicts-table``) is given."""
    (el,) = [e for e in at.get("bidi_component") if e.proto.id.endswith("-verdicts-table")]
    return json.loads(el.proto.json)


def _table(at: AppTest) -> pd.DataFrame:
    """The table's cells as the page shows them, one line per row."""
    data = _table_data(at)
    assert data["columns"] == COLUMNS
    return pd.DataFrame([r["cells"] for r in data["rows"]], columns=COLUMNS)


def _tooltips(at: AppTest) -> pd.DataFrame:
    """The table's tooltips: each cell in full."""
    data = _table_data(at)
    return pd.DataFrame([r["titles"] for r in data["rows"]], columns=COLUMNS)


def _chart(at: AppTest) -> dict:
    charts = {c.proto.id.split("-", 2)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert list(charts) == ["verdicts-figure"]
    return charts["verdicts-figure"]


def _text(at: AppTest) -> str:
    parts = [e.value for e in (*at.warning, *at.error, *at.info, *at.markdown, *at.caption, *at.subheader)]
    return "\n".join(str(p) for p in parts)


def _plain(s: str) -> str:
    """Markdown shown as text: the page escapes punctuation with a backslash."""
    return s.replace("\\", "")


# ---- the table --------------------------------------------------------------------------------
def test_the_page_shows_the_shipped_table_header_and_figure(shipped: dict[str, Any]) -> None:
    at = _page()
    assert not at.exception, at.exception
    assert not at.error and not at.warning
    table = _table(at)
    rows = shipped["rows"]
    assert list(table["mechanism"]) == [r["name"] for r in rows]
    # short cells on one scale (nats above the claim), each in full as its tooltip
    assert list(table[VERDICT]) == [verdict_cell(normalised(r)) for r in rows]
    assert list(_tooltips(at)[VERDICT]) == [view.safe_headline(normalised(r)) for r in rows]
    assert list(table["claim"]) == [claim_cell(normalised(r)) for r in rows]
    assert list(_tooltips(at)["claim"]) == list(view.table(rows)["claim"])
    # the page's answer in one sentence, first under the title
    assert _plain(at.markdown[0].value) == headline_sentence([normalised(r) for r in rows])
    # the file's header: its command, dates, machine and minutes per row, in one caption
    header = shipped["header"]
    caption = next(c.value for c in at.caption if c.value.startswith("From `"))
    assert f"`{header['command']}`" in caption
    assert header["started"] in _plain(caption) and header["machine"] in _plain(caption)
    assert f"{header['minutes']:g} minutes per fitted row" in caption
    # the figure, and no row opened until one is chosen
    assert _chart(at)["layout"]["xaxis"]["title"]["text"] == "loss above the claim (nats)"
    assert not [s for s in _chart(at)["layout"].get("shapes", []) if s.get("name") == OPENED]
    assert any("Click a row in the table" in i.value for i in at.info)
    assert not at.code
    assert at.query_params["row"] == ""
    # never the word "private" as a verdict: it appears only to say what a result is not
    assert "is private" not in _text(at).replace("does not show the mechanism is private", "")


def test_the_headline_counts_the_unaudited_apart_and_leaves_nats_to_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: dict[str, Any]
) -> None:
    """Issue 58: the headline counted sanitizers never audited against their claim inside "None …
    was caught", and spoke in nats. It now counts them apart, in plain words; the caption says what
    the table's and the figure's nats are."""
    doc = _with_cannot_run_row(shipped)
    _point_at(monkeypatch, _write(tmp_path / "verdicts.json", doc))
    at = _page()
    assert not at.exception, at.exception
    head = _plain(at.markdown[0].value)
    others = [r for r in doc["rows"] if r["group"] != "control"]
    kinds = [verdict_file.verdict_of(r) for r in others]
    never = sum(k in ("cannot-run", "premise-broken", "untested") for k in kinds)
    lead = f"{len(others) - never} of the {len(others)} sanitizers were audited against their claims"
    assert never >= 1 and lead in head, head
    assert f"; {never} were never audited (" in head, head
    assert f"{kinds.count('cannot-run')} could not run" in head, head
    assert "nats" not in head and not head.startswith("None of the"), head
    assert any("in nats" in c.value for c in at.caption)
    assert VERDICT in _table(at).columns  # the exact numbers stay in the table, in nats


def test_filters_narrow_the_table_and_go_into_the_url(shipped: dict[str, Any]) -> None:
    violating = [r["name"] for r in shipped["rows"] if verdict_file.verdict_of(r) == "violates"]
    at = _page(verdict="violates")
    assert not at.exception and not at.warning
    assert list(_table(at)["mechanism"]) == violating
    spec = _chart(at)
    assert all(t["name"].startswith("certified excess") for t in spec["data"])  # no grey markers
    # the library filter and the text filter, through their widgets
    group = shipped["rows"][0]["group"]
    at.multiselect(key="verdict").set_value(list(view.VERDICT_KINDS))
    at.multiselect(key="lib").set_value([group]).run()
    assert set(_table(at)["mechanism"]) == {r["name"] for r in shipped["rows"] if r["group"] == group}
    assert at.query_params["lib"] == group
    word = shipped["rows"][0]["name"].split(":")[-1][:4]
    at.text_input(key="q").set_value(word).run()
    assert not at.exception
    names = list(_table(at)["mechanism"])
    want = [r["name"] for r in shipped["rows"] if r["group"] == group and view.matches(r, word)]
    assert names == want and len(names) >= 1
    assert at.query_params["q"] == word
    at.text_input(key="q").set_value("zzzz-no-such-mechanism").run()
    assert len(_table(at)) == 0 and any(c.value.startswith("0 of ") for c in at.caption)


def test_the_table_download_is_the_filtered_table_with_the_header(
    shipped: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pages._shared as shared

    given: list[tuple[pd.DataFrame, dict]] = []
    monkeypatch.setattr(
        shared, "download_buttons", lambda df, params, name, *, key: given.append((df, params))
    )
    at = _page(verdict="violates,cannot-run")
    assert not at.exception
    ((df, params),) = given
    want = [r for r in shipped["rows"] if verdict_file.verdict_of(r) in ("violates", "cannot-run")]
    assert list(df["mechanism"]) == [r["name"] for r in want]
    assert list(df["verdict code"]) == [verdict_file.verdict_of(r) for r in want]
    assert [c if isinstance(c, str) else None for c in df["command"]] == [r["command"] for r in want]
    assert params["verdict_file"]["command"] == shipped["header"]["command"]
    assert params["filters"]["verdicts"] == ["violates", "cannot-run"]


# ---- one row ---------------------------------------------------------------------------------
def test_a_violating_row_opens_from_the_url_with_its_evidence_and_command(shipped: dict[str, Any]) -> None:
    row = _first(shipped, "violates")
    at = _page(row=row["name"])
    assert not at.exception, at.exception
    assert at.query_params["row"] == row["name"]
    assert at.selectbox(key="row").value == row["name"]
    headline = view.safe_headline(row)
    assert [_plain(e.value) for e in at.error] == [headline[:1].upper() + headline[1:] + "."]
    text = _plain(_text(at))
    w = largest_violation(normalised(row))
    assert "Largest certified violation" in text
    if w["kind"] == "pair":
        assert (
            f"The pair ({w['x']}, {w['x_prime']})" in text and f"at least {w['lower_bound']:.3g} nats" in text
        )
        pairs = next(d.value for d in at.dataframe if "word x′" in d.value.columns)
        flagged = [p for p in row["audit"]["pairs"] if p["violates"]]
        assert list(pairs["word x"]) == [p["x"] for p in flagged]
        assert (pairs.iloc[:, 4].astype(float) > pairs["claimed bound"].astype(float)).all()
    else:
        assert f"by at least {w['excess_lower_bound']:.3g} nats" in text
    assert "Checks before the verdict" in text and "Random generator (rng contract)" in text
    assert "Plan" in text and "Check" in text
    assert [c.value for c in at.code] == [row["command"]]  # the exact command that reproduces it


def test_a_row_without_a_violation_says_what_it_would_have_caught(shipped: dict[str, Any]) -> None:
    row = _first(shipped, "not-detected")
    at = _page(row=row["name"])
    assert not at.exception
    assert not at.error
    info = " ".join(_plain(i.value) for i in at.info)
    assert "No violation found" in info
    p = power_summary(normalised(row))
    text = _plain(_text(at))
    assert "What this run would have caught" in text
    if p["uniform_delta"] is not None:
        assert f"Δ ≥ {p['uniform_delta']:.3g} nats" in text
    assert "None: no test certified a privacy loss above the claim." in text
    assert [c.value for c in at.code] == [row["command"]]


def test_a_row_that_cannot_run_opens_with_its_one_line(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _point_at(monkeypatch, _write(tmp_path / "v.json", _with_cannot_run_row(shipped)))
    at = _page(row="test:imaginary")
    assert not at.exception, at.exception
    assert any(_plain(w.value) == f"Cannot run: {CANNOT_RUN_WHY}." for w in at.warning)
    assert not at.code and not at.error
    assert _table(at)["mechanism"].iloc[-1] == "test:imaginary"
    # listed in the figure without a marker: a note on its line, marked as the opened row
    spec = _chart(at)
    ticks = spec["layout"]["yaxis"]["ticktext"] + spec["layout"].get("yaxis2", {}).get("ticktext", [])
    last = shipped["rows"][-1]  # the extra row joins the last group (a package is labelled by its library)
    label = row_label({"name": "test:imaginary", "group": last["group"], "library": last["library"]})
    assert f"<b>▶ {label}</b>" in ticks
    (note,) = [a for a in spec["layout"]["annotations"] if a.get("name") == "test:imaginary"]
    assert note["text"] == "cannot run"
    assert all("test:imaginary" not in (t.get("customdata") or []) for t in spec["data"])


def _scroller(at: AppTest) -> dict[str, Any] | None:
    found = [e for e in at.get("bidi_component") if e.proto.component_name == "dpcore_verdicts_scroll"]
    return json.loads(found[0].proto.json) if found else None


def test_the_opened_row_is_marked_in_the_figure_and_brought_into_view(shipped: dict[str, Any]) -> None:
    row = _first(shipped, "violates")
    at = _page(row=row["name"])
    assert not at.exception, at.exception
    spec = _chart(at)
    (band,) = [s for s in spec["layout"]["shapes"] if s.get("name") == OPENED]
    axis = spec["layout"]["yaxis" if band["yref"] == "y" else "yaxis2"]
    line = axis["tickvals"][axis["ticktext"].index(f"<b>▶ {row_label(row)}</b>")]
    assert band["y0"] < line < band["y1"]
    (ring,) = [t for t in spec["data"] if t.get("name") == OPENED]
    assert ring["customdata"] == [row["name"]] and ring["y"] == [line]
    assert ring["x"][0] == pytest.approx(view.certified_excess(normalised(row)))
    assert _table_data(at)["opened"] == row["name"]
    # the evidence is scrolled into view once per opening: not again when the page reruns
    first = _scroller(at)
    assert first is not None and first["target"] == ".st-key-verdicts-evidence"
    at.run()
    assert _scroller(at) == first
    other = _first(shipped, "not-detected")
    at.selectbox(key="row").set_value(other["name"]).run()
    assert _scroller(at)["nonce"] != first["nonce"] and other["name"] in _scroller(at)["nonce"]
    at.selectbox(key="row").set_value("").run()
    assert _scroller(at) is None and not [
        s for s in _chart(at)["layout"].get("shapes", []) if s.get("name") == OPENED
    ]


def test_a_row_hidden_by_the_filters_stays_open(shipped: dict[str, Any]) -> None:
    row = _first(shipped, "not-detected")
    at = _page(row=row["name"], verdict="violates")
    assert not at.exception
    assert row["name"] not in list(_table(at)["mechanism"])
    assert at.selectbox(key="row").value == row["name"]
    assert [c.value for c in at.code] == [row["command"]]


def test_choosing_a_row_in_the_box_opens_it_and_writes_the_url(shipped: dict[str, Any]) -> None:
    row = _first(shipped, "violates")
    at = _page()
    at.selectbox(key="row").set_value(row["name"]).run()
    assert not at.exception
    assert at.query_params["row"] == row["name"]
    assert [c.value for c in at.code] == [row["command"]]
    at.selectbox(key="row").set_value("").run()
    assert at.query_params["row"] == "" and not at.code


# ---- the URL ----------------------------------------------------------------------------------
def test_an_unknown_row_falls_back_to_none_with_one_caption() -> None:
    at = _page(row="no-such-sanitizer")
    assert not at.exception and not at.error and not at.warning
    ignored = [c.value for c in at.caption if "ignored" in c.value]
    assert ignored == [
        "URL parameter `row` ignored: must name a row of this table. The page shows its default instead."
    ]
    assert at.query_params["row"] == ""
    assert any("Click a row in the table" in i.value for i in at.info)


@pytest.mark.parametrize(
    "payload",
    ["<script>alert(1)</script>", "[click me](https://evil.example)", "9" * 100_000, "%00%ff\x00\u202e"],
    ids=["html-script", "markdown-link", "100k-chars", "garbage-bytes"],
)
def test_malformed_params_fall_back_without_echo(payload: str) -> None:
    at = _page(lib=payload, verdict=payload, q=payload, row=payload)
    assert not at.exception
    (line,) = [c.value for c in at.caption if "ignored" in c.value]
    for key in ("lib", "verdict", "q", "row"):
        assert f"URL parameter `{key}` ignored: must" in line
        assert at.query_params[key] != payload
    shown = _text(at)
    assert "evil.example" not in shown and "<script>" not in shown and "9" * 200 not in shown


def test_a_typed_filter_with_markup_is_ignored_not_echoed(shipped: dict[str, Any]) -> None:
    at = _page()
    at.text_input(key="q").set_value("[x](https://evil.example)").run()
    assert not at.exception
    assert [w.value for w in at.warning] == [
        "The mechanism filter takes letters, digits and : . + - _ ( ) / ' only; it is ignored."
    ]
    assert len(_table(at)) == len(shipped["rows"]) and "evil.example" not in _text(at)


# ---- the file ---------------------------------------------------------------------------------
def test_a_missing_file_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _point_at(monkeypatch, tmp_path / "nowhere.json")
    at = _page(row="anything")
    assert not at.exception
    assert len(at.error) == 1 and "no such verdict file" in at.error[0].value
    assert not at.dataframe and not at.get("plotly_chart")


@pytest.mark.parametrize(
    "content",
    [
        '{"schema": "dpcore-verdicts/1", "rows": [',
        '{"schema": "dpcore-verdicts/1", "header": {}, "rows": []}',
    ],
    ids=["not-json", "not-a-verdict-file"],
)
def test_an_invalid_file_is_one_error_line(
    content: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    _point_at(monkeypatch, path)
    at = _page()
    assert not at.exception
    assert len(at.error) == 1 and "verdict file" in at.error[0].value
    assert not at.dataframe and not at.get("plotly_chart")


def test_a_new_file_is_read_again(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "v.json", shipped)
    _point_at(monkeypatch, path)
    assert len(_table(_page())) == len(shipped["rows"])
    _write(path, _with_cannot_run_row(shipped))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert len(_table(_page())) == len(shipped["rows"]) + 1


def test_the_page_reads_the_audit_words_without_loading_the_text_audit() -> None:
    """The verdict page shares the text-audit page's words (dpcore.viz.audit_words) without
    importing dpcore.textaudit (about a second) to get them."""
    import subprocess
    import sys

    code = (
        "import sys, dpcore.verdicts.page_view; "
        "print(any(m.startswith('dpcore.textaudit') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert view.WARNING_STATUSES >= {"mismatch", "not-reproducible", "failed"}


def test_infinities_in_the_file_are_numbers_again_but_words_stay_words() -> None:
    doc = {"excess": "inf", "x": "nan", "words": ["inf", "("], "p": ["-inf", "nan"], "word": "inf"}
    out = normalised(doc)
    assert out["excess"] == float("inf") and out["x"] == "nan" and out["words"] == ["inf", "("]
    assert out["p"][0] == float("-inf") and out["p"][1] != out["p"][1] and out["word"] == "inf"


# ---- the first screen (issue 50) ----------------------------------------------------------------
def _opening(at: AppTest) -> list[tuple[str, str]]:
    """(type, text or chart key) of the main column's elements up to its first chart."""
    out: list[tuple[str, str]] = []
    for node in at.main.children.values():
        if node.type == "plotly_chart":
            out.append(("plotly_chart", node.proto.id.split("-", 2)[-1]))
            break
        value = getattr(node, "value", "")
        out.append((node.type, value if isinstance(value, str) else ""))
    return out


@pytest.mark.parametrize("talk", [False, True], ids=["plain", "talk"])
def test_the_page_opens_with_its_answer_then_the_figure(shipped: dict[str, Any], talk: bool) -> None:
    """Title, the answer in one sentence with its numbers, the notation one click away, the figure;
    the table comes after (collapsed in talk mode)."""
    at = _page(**({"talk": "1"} if talk else {}))
    assert not at.exception, at.exception
    opening = _opening(at)
    if talk:  # the title with the notation in a popover beside it, one row (pages._shared.page_intro)
        (row, head, chart) = opening
        first = next(iter(at.main.children.values()))
        cells = [[g.type for g in col.children.values()] for col in first.children.values()]
        assert row[0] == "flex_container" and cells == [["title"], ["popover"]], cells
        assert at.title[0].value == "Do public sanitizers keep their claims?"
    else:
        (title, head, notation, chart) = opening
        assert title == ("title", "Do public sanitizers keep their claims?") and notation[0] == "expander"
    assert head == ("markdown", escape_markdown(headline_sentence([normalised(r) for r in shipped["rows"]])))
    assert chart == ("plotly_chart", "verdicts-figure")
    labels = [e.label for e in at.expander]
    assert ("The table: every row, its claim, its verdict and its run" in labels) is talk
