"""AppTest: the "Audit a text rewriter" page.

Its default settings are the shipped view of dpcore's DP-MLM, shown with no computation; the flawed
DP-MLM that keeps stopwords (the control built to fail) is the other shipped view, one click away
(a button under the figure, one in the sidebar); any other setting runs on a button press (here the
planted copy rewriter, a few hundred rewrites: well under a second). The headline is one sentence
that says what a room should conclude; rewrites are shown as words (dpcore.rewriter.words).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.reproduce import shell_command
from dpcore.rewriter.views import VIEWS, shipped_view, view_command
from dpcore.rewriter.words import LEFT_OUT, NON_LATIN, drawable
from dpcore.text.offensive import is_offensive, left_out_words
from dpcore.viz.rewriter_figure import headline
from pages._shared import escape_markdown

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "audit_rewriter.py")
#: A live run: the planted rewriter that copies its input half the time, caught at once.
LIVE = {
    "rw": "planted:copy",
    "eps": "1",
    "x": "the cat sat on the mat",
    "xp": "the dog sat on the mat",
    "rewrites": "100",
    "dist": "exact,words",
}


pytestmark = pytest.mark.usefixtures("clear_page_caches")


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every audit the page computes (the settings it asked for), still computed."""
    import dpcore.rewriter.views as views

    calls: list[dict] = []
    real = views.compute_view

    def counting(settings: dict, progress=None) -> dict:
        calls.append(dict(settings))
        return real(settings, progress=progress)

    monkeypatch.setattr(views, "compute_view", counting)
    return calls


@pytest.fixture
def no_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any audit the page would run fails the test."""
    import dpcore.rewriter
    import dpcore.rewriter.views as views

    def fail(*args, **kwargs):
        raise AssertionError("the page computed an audit")

    monkeypatch.setattr(views, "compute_view", fail)
    monkeypatch.setattr(dpcore.rewriter, "audit_rewriter", fail)


def _page(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _charts(at: AppTest) -> dict[str, dict]:
    return {c.proto.id.split("-", 2)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _names(at: AppTest) -> list[str]:
    return [t.get("name") or "" for t in _charts(at)["rewriter-tradeoff"]["data"]]


def _text(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in (*at.error, *at.warning, *at.info, *at.markdown, *at.caption))


def _one_sentence(text: str) -> bool:
    """One sentence: no full stop (or ! ?) followed by a space, one at the end, no line break."""
    return text.endswith(".") and "\n" not in text and not re.search(r"[.!?]\s", text)


def _rewrites(at: AppTest) -> list[str]:
    """The numbered rewrites the page lists (Markdown lists), one per line."""
    return [
        line.removeprefix("1. ")
        for m in at.markdown
        for line in str(m.value).splitlines()
        if line.startswith("1. ")
    ]


def test_default_is_dpcores_dp_mlm_shown_without_computing(no_compute: None) -> None:
    at = _page()
    assert not at.exception, at.exception
    view = VIEWS["dp-mlm"]
    assert at.query_params["rw"] == "dp-mlm" and at.query_params["rewrites"] == "400"
    assert not at.error and not at.success  # never a green "verified" banner
    (head,) = [i.value for i in at.info]
    # what a room should conclude: no leak shown, by this test, at this size and confidence
    result = shipped_view(view)
    assert result is not None and head == escape_markdown(headline(result))
    assert head.startswith("No leak shown for dpcore's DP-MLM variant\\: this test found no event")
    assert "400 rewrites per sentence, 95% confidence" in head and "it claims 1.75" in head
    assert head.endswith("which does not show it is private.") and _one_sentence(head)
    # issue 58: a lower bound at or below 0 reads "no leak shown", never as a negative privacy loss
    assert max(float(p["lower_bound"]) for p in result["pairs"]) <= 0
    assert "−0." not in head and "-0." not in head
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Lower bound on the loss"] == "none" and metrics["Claimed bound"] == "1.75"
    assert not any("violation" in n for n in _names(at))
    (table,) = [d.value for d in at.dataframe]
    assert list(table["lower bound"]) == ["none", "none"]
    # the rewrites are words: no WordPiece, nothing the font cannot draw
    rewrites = _rewrites(at)
    assert len(rewrites) == 10
    raw = [r for rows in result["pairs"][0]["examples"].values() for r in rows]
    assert any("##" in r for r in raw) and any(not drawable(r) for r in raw)
    for line in rewrites:
        assert "##" not in line and all(drawable(w) for w in line.split()), line
    assert any(escape_markdown(NON_LATIN) in line for line in rewrites)
    assert any("1924iere" in line for line in rewrites)  # "1924 ##iere", joined
    assert "Shown as words" in _text(at)
    assert [c.value for c in at.code] == [shell_command(view_command(view))]
    assert "Reproduce this from the command line" in [e.label for e in at.expander]


def test_the_flawed_control_is_one_click_away_and_back(no_compute: None) -> None:
    at = _page()
    switch = at.button(key="switch-stopwords")
    assert "flawed control" in switch.label and "built to fail" in switch.label
    switch.click().run()
    assert not at.exception, at.exception
    view = VIEWS["stopwords"]
    assert at.query_params["rw"] == "flawed:dp-mlm-stopwords" and at.query_params["rewrites"] == "400"
    (head,) = [e.value for e in at.error]
    assert head == escape_markdown(
        "The flawed DP-MLM that keeps stopwords leaks more than it claims: on this pair its privacy loss "
        "is at least 3.81, above the 1.75 it claims (400 rewrites per sentence, 95% confidence)."
    )
    assert _one_sentence(head) and not at.success
    assert any("flawed reproduction" in w.value for w in at.warning)  # built to be caught, said below
    # the main figure: the claim's curve at the pair's bound and the events beyond it
    names = _names(at)
    assert "claim's ceiling, ε = 1.75 (no test reaches the shaded region)" in names
    assert "x′ vs x: violation (whole box outside)" in names
    # the kept stopword shows in every rewrite of x (never glued to the piece after it)
    md = _text(at)
    assert "output lacks the word n-gram 'was'" in md
    rewrites = _rewrites(at)
    assert sum("**was**" in line for line in rewrites) == 5
    assert all("##" not in line for line in rewrites)
    assert {m.label: m.value for m in at.metric} == {
        "Lower bound on the loss": "3.81",
        "Point estimate ε̂": "∞",
        "Claimed bound": "1.75",
        "Largest certifiable bound": "3.81",
    }
    assert "The rewriter's contract: passed." in md and "What this run could have caught" in md
    assert "The bounds rest on this: copies within one rewrite call are independent" in md
    assert [c.value for c in at.code] == [shell_command(view_command(view))]
    assert any("FLAWED" in o for o in at.selectbox(key="rw").options)
    # and back, in one click
    at.button(key="switch-dp-mlm").click().run()
    assert at.query_params["rw"] == "dp-mlm" and not at.error and at.info


def test_the_sidebar_opens_either_shipped_view(no_compute: None) -> None:
    at = _page()
    at.button(key="view-stopwords").click().run()
    assert not at.exception, at.exception
    assert at.query_params["rw"] == "flawed:dp-mlm-stopwords" and at.error
    at.button(key="view-dp-mlm").click().run()
    assert at.query_params["rw"] == "dp-mlm" and not at.error
    assert at.info[0].value.startswith("No leak shown for dpcore's DP-MLM")


def test_off_a_shipped_view_there_is_no_switch_under_the_figure() -> None:
    at = _page(**LIVE)
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    keys = {b.key for b in at.button}
    assert not {"switch-stopwords", "switch-dp-mlm"} & keys and {"view-stopwords", "view-dp-mlm"} <= keys


def _listed_split() -> tuple[str, str, str]:
    """A listed word made of two unlisted pieces (chosen, not written here)."""
    for w in sorted(left_out_words()):
        head, tail = w[:3], w[3:]
        if w.isascii() and w.isalpha() and len(w) >= 6 and not is_offensive(head) and not is_offensive(tail):
            return w, head, tail
    raise AssertionError("no listed word splits into two unlisted pieces")


def test_rewrites_that_join_into_a_listed_word_are_shown_left_out(
    no_compute: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Joining WordPieces can make a word of the left-out list that no piece is: it is left out, and
    so is an event about a listed word; other scripts are placeholders."""
    import dpcore.rewriter.views as views

    word, head, tail = _listed_split()
    result = copy.deepcopy(shipped_view(VIEWS["dp-mlm"]))
    assert result is not None
    pair = result["pairs"][0]
    pair["examples"] = {"x": [f"my {head} ##{tail} ব was"], "x_prime": [f"清 {word.upper()}."]}
    pair["event"] = f"output contains the word n-gram '{word}'"
    for t in pair["tests"]:  # the chosen event (the pair's direction) and the other one
        t["event"] = pair["event"]
    real = views.shipped_view
    monkeypatch.setattr(views, "shipped_view", lambda s: result if s == VIEWS["dp-mlm"] else real(s))
    at = _page()
    assert not at.exception, at.exception
    shown = _text(at) + "\n" + "\n".join(str(v) for d in at.dataframe for v in d.value["event"])
    assert word not in shown.lower()
    left_out, non_latin = escape_markdown(LEFT_OUT), escape_markdown(NON_LATIN)
    assert _rewrites(at) == [f"**my** {left_out} {non_latin} **was**", f"{non_latin} {left_out}."]
    assert f"output contains the word n-gram '{left_out}'" in _text(at)
    (table,) = [d.value for d in at.dataframe]
    assert list(table["event"]) == [f"output contains the word n-gram '{LEFT_OUT}'"] * 2


def test_other_settings_run_on_a_press_and_stay_shown(computed: list[dict]) -> None:
    at = _page(**LIVE)
    assert not at.exception, at.exception
    assert not computed and not at.get("plotly_chart")
    assert any("not a shipped view" in i.value for i in at.info)
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    assert len(computed) == 1 and computed[0]["rewriter"] == "planted:copy"
    assert computed[0]["distinguishers"] == ["exact", "words"]
    (head,) = [e.value for e in at.error]
    assert head.startswith("The planted rewriter that copies its input leaks more than it claims\\:")
    assert "(100 rewrites per sentence, 95% confidence)." in head and _one_sentence(head)
    assert "x′ vs x: violation (whole box outside)" in _names(at)
    assert not any("not a shipped view" in i.value for i in at.info)
    (cmd,) = [c.value for c in at.code]
    assert "--rewriter planted:copy" in cmd and "--rewrites 100" in cmd
    assert "--distinguishers exact,words" in cmd
    at.run()  # a rerun (another widget, a download) shows it again without a press or a recomputation
    assert at.get("plotly_chart") and len(computed) == 1


def test_a_claim_beyond_the_runs_reach_is_out_of_reach() -> None:
    at = _page(**{**LIVE, "eps": "20"})
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    (head,) = [i.value for i in at.info]
    assert head.startswith(
        "Out of reach for the planted rewriter that copies its input\\: the claimed bound 20 is"
    )
    assert "shows nothing either way" in head and _one_sentence(head)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("x", "", "x is empty"),
        ("xp", "the cat sat on the mat", "x and x′ are the same sentence"),
        ("xp", "[click](https://evil.example)", "x′ must be a sentence of letters"),
    ],
    ids=["empty", "same", "markup"],
)
def test_bad_sentences_are_one_clear_error_and_keep_the_settings(
    key: str, value: str, message: str, no_compute: None
) -> None:
    at = _page(**LIVE)
    at.text_input(key=key).set_value(value).run()
    assert not at.exception, at.exception
    shown = " ".join(e.value for e in at.error)
    assert message in shown and "evil.example" not in shown
    assert not at.get("plotly_chart")
    assert at.selectbox(key="rw").value == "planted:copy" and at.query_params["rewrites"] == "100"


def test_the_url_round_trips_and_refuses_what_it_cannot_take(no_compute: None) -> None:
    at = _page(**LIVE, conf="0.99", seed="7")
    assert at.text_input(key="x").value == LIVE["x"] and at.text_input(key="xp").value == LIVE["xp"]
    assert at.selectbox(key="rw").value == "planted:copy" and at.number_input(key="eps").value == 1.0
    assert at.multiselect(key="dist").value == ["exact", "words"]
    assert at.select_slider(key="conf").value == 0.99 and at.number_input(key="seed").value == 7
    at.select_slider(key="rewrites").set_value(1000).run()
    assert {k: at.query_params[k] for k in LIVE} == {**LIVE, "rewrites": "1000"}
    # too long, user code, too many rewrites: each ignored with a warning, never echoed
    at = _page(x="a" * 301, rw="evil.py:make", rewrites="5000")
    assert not at.exception, at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in ("x", "rw", "rewrites"):
        assert f"URL parameter `{key}` ignored" in warned
    assert "must be at most 300 characters" in warned and "evil.py" not in warned
    assert at.query_params["rw"] == "dp-mlm"  # the shipped view again
    assert shipped_view(VIEWS["dp-mlm"]) is not None and at.info  # its verdict, at once


def test_a_pair_outside_the_claims_premise_is_untested() -> None:
    # DP-MLM claims n·ε for sentences of one length n: 4 and 5 tokens are outside it (no rewrite drawn)
    at = _page(rw="dp-mlm", x="my aunt was ill", xp="my aunt was very ill", rewrites="100")
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    (head,) = [w.value for w in at.warning]
    assert head.startswith(
        "Untested for dpcore's DP-MLM variant\\: the pair is outside its claim's premise — the "
    )
    assert "have 4 and 5" in head and _one_sentence(head)
    assert not at.get("plotly_chart") and not at.error


def test_the_rewriters_options_are_widgets_from_the_registry(computed: list[dict]) -> None:
    """Each rewriter's options (its ParameterSpec) are its widgets and URL keys; an option off its
    default is never a shipped view, and its command carries it."""
    at = _page(**LIVE, q="0.2")
    assert not at.exception, at.exception
    assert at.slider(key="q").value == 0.2 and not at.get("toggle")  # planted: q only
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    assert len(computed) == 1 and computed[0]["options"] == {"q": 0.2}
    (cmd,) = [c.value for c in at.code]
    assert "--param q=0.2" in cmd
    at.slider(key="q").set_value(0.5).run()  # back to the default: no option in the settings
    at.button(key="run").click().run()
    assert "options" not in computed[-1] and at.query_params["q"] == "0.5"
    dp_mlm = _page(rw="dp-mlm")
    assert [t.label for t in dp_mlm.get("toggle")] == ["full vocabulary"] and not dp_mlm.get("slider")
    assert at.get("toggle") == [] and dp_mlm.info  # DP-MLM's default is still its shipped view
