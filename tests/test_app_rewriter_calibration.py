"""AppTest: the "Rewriter calibration" page (``pages/rewriter_calibration.py``).

The page reads the shipped calibration (``dpcore/data/rewriter_calibration.json``, written by
``python -m dpcore calibrate-rewriters --lm --save …``) and computes nothing. Its headline is one sentence
(``page_headline``); its first table has the columns a room reads first (``FIRST_COLUMNS``: they fit
a 1280-px projector, ``tests/e2e/test_tables_fit.py``), the rest in a second table under an
expander; rewrites are shown as words (``dpcore.rewriter.words``). The tests take their
expectations from that file, whatever its rewriters, ε and numbers, and point the page at a
temporary copy (``dpcore.rewriter.calibrate.SHIPPED_PATH``) where they need a changed file, a
missing one or a broken one.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import dpcore.rewriter.calibrate as calibrate
from dpcore.reproduce import shell_command
from dpcore.rewriter.words import NON_LATIN, drawable, shown_text
from dpcore.viz.calibration_figure import (
    ESTIMATE_WORDS,
    FIRST_COLUMNS,
    MORE_COLUMNS,
    SHOWN_COLUMNS,
    VERDICT_WORDS,
    calibration_figure,
    headline_epsilon,
    page_headline,
    shown_table,
    tpr_cap,
)
from dpcore.viz.palette import colour
from pages._shared import escape_markdown
from tests.blocked_imports import run_blocked

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "rewriter_calibration.py")
MACHINE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
RW, NOMINAL, CLAIM, BOUND, TPR, ESTIMATE, SIMILARITY, VERDICT, FAMILY, LM_TPR = SHOWN_COLUMNS
HOSTILE = "[click](https://evil.example) <script>alert(1)</script> **bold** $x$ :red[red]"


pytestmark = pytest.mark.usefixtures("clear_page_caches")


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return calibrate.load_shipped()


@pytest.fixture
def no_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any audit, calibration or sentence encoding the page would run fails the test."""
    import dpcore.models.minilm
    import dpcore.rewriter
    import dpcore.rewriter.audit

    def fail(*args, **kwargs):
        raise AssertionError("the page computed something")

    monkeypatch.setattr(calibrate, "calibrate_rewriters", fail)
    # the package first: its lazy attribute is resolved (and kept) from the audit module when first
    # read, so reading it after the module's patch kept ``fail`` there for every later test
    monkeypatch.setattr(dpcore.rewriter, "audit_rewriter", fail)
    monkeypatch.setattr(dpcore.rewriter.audit, "audit_rewriter", fail)
    monkeypatch.setattr(dpcore.models.minilm, "encode_sentences", fail)


def _page(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _point_at(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(calibrate, "SHIPPED_PATH", path)


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def _order(node: Any, out: list[tuple[str, Any]] | None = None) -> list[tuple[str, Any]]:
    """The page's elements in the order they are drawn: (type, element)."""
    out = [] if out is None else out
    kids = getattr(node, "children", None)
    if isinstance(kids, dict) and kids:
        for k in sorted(kids):
            _order(kids[k], out)
    else:
        out.append((node.type, node))
    return out


def _chart(at: AppTest) -> dict[str, Any]:
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id.endswith("calibration-figure")]
    return json.loads(chart.proto.spec)


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


def _cells(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return sorted((c for c in doc["cells"] if c["rewriter"] == name), key=lambda c: float(c["epsilon"]))


def _texts(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.text]


def _one_sentence(text: str) -> bool:
    """One sentence: no full stop (or ! ?) followed by a space, one at the end, no line break."""
    return text.endswith(".") and "\n" not in text and not re.search(r"[.!?]\s", text)


def _marked_up(at: AppTest) -> str:
    """Everything the page rendered as Markdown."""
    parts = (*at.markdown, *at.caption, *at.error, *at.warning, *at.info, *at.title, *at.subheader)
    return "\n".join(str(e.value) for e in parts)


# ---- the shipped file ---------------------------------------------------------------------------------
def test_the_page_opens_with_its_title_the_headline_and_the_figure(
    shipped: dict[str, Any], no_compute: None
) -> None:
    at = _page()
    assert not at.exception, at.exception
    order = _order(at.main)
    kinds = [k for k, _ in order]
    assert kinds[:2] == ["title", "markdown"], kinds[:6]
    assert order[0][1].value == "Rewriter calibration"
    assert order[1][1].value == escape_markdown(page_headline(shipped))
    # the figure comes before anything else the page shows (the table, the samples, the command)
    first_chart = kinds.index("plotly_chart")
    assert first_chart < kinds.index("dataframe") < kinds.index("text") < kinds.index("code")
    assert all(k in ("title", "markdown", "expandable") for k in kinds[:first_chart]), kinds[:first_chart]
    assert not at.error and not at.warning and not at.success
    # the caption under the figure: each ε is per its own unit; out of reach is not private
    cap = at.caption[0].value
    for name in shipped["rewriters"]:
        assert escape_markdown(calibrate.NOMINAL.get(name, "ε")) in cap
    assert "Out of reach" in cap and "not that the rewriter is private" in cap
    assert ESTIMATE_WORDS in cap


def test_the_headline_gives_the_claims_then_what_was_certified(shipped: dict[str, Any]) -> None:
    """Issue 61, item 5: the claims for the pair first, then the certified values (the exact loss
    beside them where dpcore knows it), with the audits' size and confidence; the estimates are the
    figure's bars under it, never before the certified values."""
    text = page_headline(shipped)
    assert _one_sentence(text), text
    eps = headline_epsilon(shipped)
    assert text.startswith(f"At nominal ε = {eps:g} the claim for this pair is ")
    assert f"certified ({shipped['rewrites_per_input']:,} rewrites each, 95% confidence): " in text
    for name in shipped["rewriters"]:
        (cell,) = [c for c in shipped["cells"] if c["rewriter"] == name and float(c["epsilon"]) == eps]
        assert cell["title"] in text and name not in text.replace(cell["title"], "")
        # each claim comes before anything certified
        assert text.index(cell["title"]) < text.index("certified")
    assert "estimate" not in text and "private" not in text
    assert len(text) < len(shipped["headline"])  # the file's own headline adds the estimates
    assert text == (
        "At nominal ε = 10 the claim for this pair is 30.9 nats under SanText (every word), 70 under "
        "DP-MLM (dpcore variant) and 320 under DP-Prompt; certified (400 rewrites each, 95% confidence): "
        "≥ 3.81 nats under SanText (every word) (exact 15.5); none above 0 under the others."
    )


def _at(doc: dict[str, Any], eps: float, bounds: dict[str, float]) -> dict[str, Any]:
    """``doc`` with the certified losses at ``eps`` set per rewriter (none elsewhere), and their
    certified TPRs apart at ``eps`` only, so the headline speaks of ``eps``."""
    out = copy.deepcopy(doc)
    for c in out["cells"]:
        at_eps = float(c["epsilon"]) == eps
        c["lower_bound"] = bounds.get(c["rewriter"], -0.02) if at_eps else -0.02
        # distinct certified TPRs at ``eps`` (a tenth of the bound), chance elsewhere
        c["tpr_at_fpr"]["lower"] = bounds[c["rewriter"]] / 10 if at_eps and c["rewriter"] in bounds else 0.01
    return out


@pytest.mark.parametrize(
    ("bounds", "needles"),
    [
        (
            {"santext-words": 3.81, "dp-mlm": 2.0},
            [
                "≥ 3.81 nats under SanText (every word) (exact 15.5); ≥ 2 nats under DP-MLM (dpcore "
                "variant); none above 0 under DP-Prompt."
            ],
        ),
        ({"santext-words": 3.81, "dp-mlm": 2.0, "dp-prompt": 1.5}, ["; ≥ 1.5 nats under DP-Prompt."]),
        ({"santext-words": 3.81}, ["(exact 15.5); none above 0 under the others."]),
    ],
    ids=["two-shown", "all-shown", "one-shown"],
)
def test_every_headline_is_one_sentence(shipped: dict[str, Any], bounds: dict, needles: list[str]) -> None:
    text = page_headline(_at(shipped, 10.0, bounds))
    assert _one_sentence(text), text
    for needle in needles:
        assert needle in text, text


def test_a_headline_with_nothing_shown_never_reads_as_private(shipped: dict[str, Any]) -> None:
    doc = copy.deepcopy(shipped)
    for c in doc["cells"]:
        c["tpr_at_fpr"]["lower"] = 0.01
        c["lower_bound"] = -0.02
    text = page_headline(doc)
    assert _one_sentence(text), text
    assert re.match(r"At nominal ε = [\d.]+ the claim for this pair is ", text)
    tail = "no loss above 0 under any of them, which does not show that any of them is private."
    assert text.endswith(tail)


def test_the_table_has_one_row_per_cell_in_words(shipped: dict[str, Any], no_compute: None) -> None:
    at = _page()
    first, rest = (d.value for d in at.dataframe)  # in the page's order
    # the columns a room reads first (they fit 1280 px); the estimate and the meaning retained below
    assert list(first.columns) == FIRST_COLUMNS and list(rest.columns) == MORE_COLUMNS
    assert set(FIRST_COLUMNS) | set(MORE_COLUMNS) == set(SHOWN_COLUMNS)
    assert "The estimate and the meaning retained of every cell" in [e.label for e in at.expander]
    assert list(first[RW]) == list(rest[RW]) and list(first[NOMINAL]) == list(rest[NOMINAL])
    df = first.join(rest[[ESTIMATE, SIMILARITY, FAMILY, LM_TPR]])
    assert sorted(df.columns) == sorted(SHOWN_COLUMNS)
    assert not [c for c in df.columns if MACHINE.match(str(c))]
    assert len(df) == len(shipped["cells"])
    fpr = float(shipped["fpr"])
    for (_, row), cell in zip(df.iterrows(), shipped["cells"], strict=True):
        assert row[RW] == cell["title"]
        assert row[NOMINAL].startswith(f"{float(cell['epsilon']):g} per ")
        assert row[VERDICT] == VERDICT_WORDS[cell["verdict"]]
        claim = _num(cell["claimed_bound"])
        assert row[CLAIM] == (
            "∞" if claim == math.inf else f"{claim:,.0f}" if claim >= 1000 else f"{claim:.3g}"
        )
        assert "e+" not in row[CLAIM]
        lb, exact = _num(cell["lower_bound"]), _num(cell.get("exact_loss"))
        beside = "" if math.isnan(exact) else f" (exact {exact:.3g})"  # SanText's, beside its bound
        assert row[BOUND] == ("none" if lb <= 0 else f"{lb:.3g}") + beside
        low = cell["tpr_at_fpr"]["lower"]
        if low is not None:
            assert row[TPR].endswith(" (chance)") == (low <= fpr + 1e-12)
            capped = fpr < low and low >= tpr_cap(shipped) - 1e-9
            assert row[TPR].endswith(" (at the cap)") == capped
        sim = cell["similarity"]
        assert row[SIMILARITY] == ("" if sim is None else f"{sim:.2f}")
    assert any(b.label == "Download CSV" for b in at.get("download_button"))


def test_the_figure_draws_the_files_lower_bounds_one_trace_per_rewriter(
    shipped: dict[str, Any], no_compute: None
) -> None:
    spec = _chart(_page())
    main = [t for t in spec["data"] if (t.get("meta") or {}).get("panel") == "tpr"]
    sims = [t for t in spec["data"] if (t.get("meta") or {}).get("panel") == "similarity"]
    assert [t["meta"]["rewriter"] for t in main] == list(shipped["rewriters"])
    assert [t["meta"]["rewriter"] for t in sims] == list(shipped["rewriters"])
    assert len(spec["data"]) == 2 * len(shipped["rewriters"])  # nothing else is drawn as a trace
    colours = set()
    for trace, sim in zip(main, sims, strict=True):
        cells = _cells(shipped, trace["meta"]["rewriter"])
        assert trace["name"] == sim["name"] == cells[0]["title"]
        lows = [c["tpr_at_fpr"]["lower"] for c in cells]
        assert trace["y"] == pytest.approx(lows)  # the dot: the certified lower bound, as in the file
        assert [d[0] for d in trace["customdata"]] == [float(c["epsilon"]) for c in cells]
        ests = [c["tpr_at_fpr"]["tpr"] for c in cells]
        tops = [lo + up for lo, up in zip(lows, trace["error_y"]["array"], strict=True)]
        assert tops == pytest.approx(ests)  # the bar: up to the estimate
        assert trace["error_y"]["arrayminus"] == [0.0] * len(cells)
        assert sim["y"] == pytest.approx([c["similarity"] for c in cells])
        assert sim["x"] == [float(c["epsilon"]) for c in cells]
        # one colour per rewriter, its registered name's, the same in both panels and on every chart
        assert trace["line"]["color"] == sim["line"]["color"] == colour(trace["meta"]["rewriter"])
        colours.add(trace["line"]["color"])
    assert len(colours) == len(main)
    # the chance line at y = FPR and the most the size can certify, the estimate named as biased
    # upward, the ε as the ticks; meaning retained between its floor and its ceiling
    chance, reach, floor, ceiling = spec["layout"]["shapes"]
    assert floor["y0"] == pytest.approx(shipped["meaning"]["floor"]) and floor["xref"] == "x2 domain"
    assert ceiling["y0"] == pytest.approx(shipped["meaning"]["ceiling"]) and ceiling["xref"] == "x2 domain"
    assert chance["y0"] == chance["y1"] == shipped["fpr"]
    assert reach["y0"] == reach["y1"] == pytest.approx(tpr_cap(shipped))
    if "tpr_reach" in shipped:
        assert tpr_cap(shipped) == shipped["tpr_reach"]
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert "chance at 1% false alarms" in notes
    assert f"the most {shipped['rewrites_per_input']:,} rewrites can certify" in notes
    assert f"unrelated sentences: {shipped['meaning']['floor']:.2f}" in notes
    assert f"x′ against x: {shipped['meaning']['ceiling']:.2f}" in notes
    assert ESTIMATE_WORDS in spec["layout"]["title"]["subtitle"]["text"]
    assert spec["layout"]["xaxis"]["type"] == "log"
    assert spec["layout"]["xaxis"]["tickvals"] == sorted(float(e) for e in shipped["epsilons"])


def test_the_command_that_made_it_is_shown(shipped: dict[str, Any], no_compute: None) -> None:
    at = _page()
    assert [c.value for c in at.code] == [shell_command(shipped["command"])]
    assert shipped["command"][:4] == ["python", "-m", "dpcore", "calibrate-rewriters"]
    assert "Reproduce this from the command line" in [e.label for e in at.expander]


def test_the_samples_follow_the_selection_and_the_url(shipped: dict[str, Any], no_compute: None) -> None:
    at = _page()
    eps = headline_epsilon(shipped)
    first = shipped["rewriters"][0]
    assert at.selectbox(key="rw").value == first and at.selectbox(key="eps").value == eps
    assert at.query_params["rw"] == first and at.query_params["eps"] == f"{eps:g}"

    def shown_for(name: str, e: float) -> list[str]:
        """The cell's public sentences, and their rewrites as words (dpcore.rewriter.words)."""
        (cell,) = [c for c in shipped["cells"] if c["rewriter"] == name and float(c["epsilon"]) == e]
        return [
            s
            for sample in cell["samples"]
            for s in (
                sample["text"],
                *(shown_text(r, keep=sample["text"].split()) for r in sample["rewrites"]),
            )
        ]

    assert set(shown_for(first, eps)) <= set(_texts(at))
    # another cell, from the widgets, then from a link
    last, top = shipped["rewriters"][-1], max(float(e) for e in shipped["epsilons"])
    at.selectbox(key="rw").set_value(last).run()
    at.selectbox(key="eps").set_value(top).run()
    assert not at.exception, at.exception
    assert at.query_params["rw"] == last and at.query_params["eps"] == f"{top:g}"
    assert set(shown_for(last, top)) <= set(_texts(at))
    linked = _page(rw=last, eps=f"{top:g}")
    assert linked.selectbox(key="rw").value == last and linked.selectbox(key="eps").value == top
    assert set(shown_for(last, top)) <= set(_texts(linked))


def test_rewrites_are_shown_as_words(shipped: dict[str, Any], no_compute: None) -> None:
    """DP-MLM writes WordPieces in many scripts: the page shows words, and placeholders for what its
    font cannot draw (issue 58: "##tier", a Bengali letter as a box)."""
    cells = [c for c in shipped["cells"] if c["rewriter"] == "dp-mlm"]
    raw = [r for c in cells for s in c["samples"] for r in s["rewrites"]]
    raw += [r for c in cells for r in (*c["examples"]["x"], *c["examples"]["x_prime"])]
    assert any("##" in r for r in raw) and any(not drawable(w) for r in raw for w in r.split())
    for c in cells:
        at = _page(rw="dp-mlm", eps=f"{float(c['epsilon']):g}")
        assert not at.exception, at.exception
        texts = _texts(at)
        outs = [shown_text(r, keep=s["text"].split()) for s in c["samples"] for r in s["rewrites"]]
        outs += [shown_text(r, keep=shipped["pair"][0].split()) for r in c["examples"]["x"]]
        outs += [shown_text(r, keep=shipped["pair"][1].split()) for r in c["examples"]["x_prime"]]
        assert set(outs) <= set(texts)
        for t in texts:
            assert "##" not in t and all(drawable(w) for w in t.split()), t
    assert "as words" in _marked_up(at) and NON_LATIN in _marked_up(at).replace("\\", "")


@pytest.mark.parametrize(("key", "value"), [("rw", "evil.py:make"), ("eps", "0.123"), ("eps", "nan")])
def test_a_bad_link_is_one_warning_and_the_default(
    shipped: dict[str, Any], key: str, value: str, no_compute: None
) -> None:
    at = _page(**{key: value})
    assert not at.exception, at.exception
    (warned,) = [w.value for w in at.warning]
    assert warned.startswith(f"URL parameter `{key}` ignored: must be one of")
    assert value not in _marked_up(at)
    assert at.query_params["rw"] == shipped["rewriters"][0]
    assert at.query_params["eps"] == f"{headline_epsilon(shipped):g}"


def test_talk_mode_keeps_the_story_and_folds_the_rest(no_compute: None) -> None:
    at = _page(talk="1")
    assert not at.exception, at.exception
    labels = [e.label for e in at.expander]
    assert "Every rewriter at every ε: the table" in labels and "Sample rewrites" in labels
    kinds = [k for k, _ in _order(at.main)]
    assert kinds[:2] == ["title", "markdown"] and "plotly_chart" in kinds


# ---- a changed, missing or broken file ------------------------------------------------------------------
def test_markup_in_the_file_is_shown_as_plain_text(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_compute: None
) -> None:
    doc = copy.deepcopy(shipped)
    first = doc["rewriters"][0]
    eps = headline_epsilon(doc)
    (cell,) = [c for c in doc["cells"] if c["rewriter"] == first and float(c["epsilon"]) == eps]
    cell["samples"][0]["rewrites"][0] = HOSTILE
    cell["samples"][0]["text"] = HOSTILE + " (the input)"
    for c in doc["cells"]:  # a rewriter's title, which the headline names
        if c["rewriter"] == first:
            c["title"] = "A title with [a link](https://evil.example) and <b>markup</b>"
    _point_at(monkeypatch, _write(tmp_path / "calibration.json", doc))
    at = _page()
    assert not at.exception, at.exception
    assert HOSTILE in _texts(at) and HOSTILE + " (the input)" in _texts(at)  # as written, not rendered
    shown = _marked_up(at)
    assert "[a link](" not in shown and "[click](" not in shown
    assert "<b>" not in shown and "<script>" not in shown
    assert at.markdown[0].value == escape_markdown(page_headline(doc))
    assert "A title with" in at.markdown[0].value


def test_a_new_file_is_read_again_and_an_unchanged_one_is_not(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[Path] = []
    real = calibrate.load_shipped

    def counting(path=None):
        reads.append(path)
        return real(path)

    monkeypatch.setattr(calibrate, "load_shipped", counting)
    target = _write(tmp_path / "calibration.json", shipped)
    _point_at(monkeypatch, target)
    _page()
    _page()
    assert len(reads) == 1  # cached by path, modification time and size
    doc = copy.deepcopy(shipped)
    for c in doc["cells"]:
        c["title"] = c["title"] + " (renamed)"
    _write(target, doc)
    at = _page()
    assert len(reads) == 2 and "(renamed)" in at.markdown[0].value


def test_a_file_replaced_during_a_visit_falls_back_to_its_own_cells(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, last = shipped["rewriters"][0], shipped["rewriters"][-1]
    at = _page(rw=last)
    assert at.selectbox(key="rw").value == last
    doc = copy.deepcopy(shipped)
    doc["rewriters"] = [first]
    doc["cells"] = [c for c in doc["cells"] if c["rewriter"] == first]
    _point_at(monkeypatch, _write(tmp_path / "calibration.json", doc))
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rw").value == first and at.query_params["rw"] == first
    first, rest = (d.value for d in at.dataframe)
    assert len(first) == len(rest) == len(doc["cells"])


def test_a_missing_file_shows_the_command_that_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _point_at(monkeypatch, tmp_path / "rewriter_calibration.json")
    at = _page()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Rewriter calibration"]
    (err,) = [e.value for e in at.error]
    assert "The calibration cannot be shown" in err and "has not been made yet" in err
    assert [c.value for c in at.code] == [shell_command(calibrate.SHIPPED_COMMAND)]
    assert not at.get("plotly_chart") and not at.dataframe


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "it is not a calibration record"),
        (json.dumps({"headline": "h"}), "the calibration file lacks pair"),
        (json.dumps([1, 2]), "does not hold a JSON object"),
    ],
    ids=["not-json", "no-cells", "a-list"],
)
def test_a_broken_file_is_one_message(
    content: str, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "calibration.json"
    path.write_text(content, encoding="utf-8")
    _point_at(monkeypatch, path)
    at = _page()
    assert not at.exception, at.exception
    (err,) = [e.value for e in at.error]
    assert needle in err
    assert [c.value for c in at.code] == [shell_command(calibrate.SHIPPED_COMMAND)]


def test_untested_cells_and_infinite_bounds_are_drawn_and_written(shipped: dict[str, Any]) -> None:
    doc = copy.deepcopy(shipped)
    cell = doc["cells"][0]
    # an untested pair has no exact loss either (the audit computes it for tested pairs only)
    cell.update(verdict="untested", lower_bound="-inf", claimed_bound="inf", similarity=None, exact_loss=None)
    cell["tpr_at_fpr"] = {"fpr": 0.01, "tpr": None, "lower": None, "upper": None, "claim_ceiling": None}
    table = shown_table(doc)
    row = table.iloc[0]
    assert row[CLAIM] == "∞" and row[BOUND] == "none"
    assert row[TPR] == row[SIMILARITY] == "—"  # a missing number is a dash (dpcore.formatting)
    assert row[VERDICT] == "untested"
    fig = calibration_figure(doc)
    trace = next(t for t in fig.data if t.meta["rewriter"] == cell["rewriter"] and t.meta["panel"] == "tpr")
    assert trace.y[0] is None and trace.error_y.array[0] == 0.0


# ---- no torch, no model -----------------------------------------------------------------------------
def test_the_page_runs_with_torch_and_the_models_unimportable() -> None:
    out = run_blocked(
        f"""
        import json, sys
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({PAGE!r}, default_timeout=120).run()
        heavy = sorted(m for m in ("torch", "transformers", "onnxruntime", "sentence_transformers")
                       if m in sys.modules)
        print(json.dumps({{"exception": [str(e.value) for e in at.exception],
                          "charts": len(at.get("plotly_chart")), "heavy": heavy}}))
        """,
        ("torch", "transformers", "sentence_transformers", "onnxruntime"),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"exception": [], "charts": 1, "heavy": []}


def test_a_bound_at_or_below_zero_reads_no_leak_shown() -> None:
    """Issue 58: a certified lower bound ≤ 0 is "no leak shown", never a negative privacy loss."""
    calib = calibrate.load_shipped()
    fig = calibration_figure(calib)
    hovers = [h for trace in fig.data for h in (trace.hovertext or ())]
    cells = calib["cells"]
    assert any(float(c["lower_bound"]) <= 0 for c in cells) and len(hovers) >= len(cells)
    assert any("no leak shown" in h for h in hovers)
    assert not [h for h in hovers if "certified loss ≥ −" in h or "certified loss ≥ -" in h]
