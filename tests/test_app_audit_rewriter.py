"""AppTest: the "Audit a text rewriter" page.

Its default settings are the shipped view of the flawed DP-MLM that keeps stopwords, shown with no
computation; dpcore's DP-MLM is the other shipped view; any other setting runs on a button press
(here the planted copy rewriter, a few hundred rewrites: well under a second).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.reproduce import shell_command
from dpcore.rewriter.views import VIEWS, shipped_view, view_command

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


def test_default_is_the_shipped_stopword_view_shown_without_computing(no_compute: None) -> None:
    at = _page()
    assert not at.exception, at.exception
    view = VIEWS["stopwords"]
    assert at.query_params["rw"] == "flawed:dp-mlm-stopwords" and at.query_params["rewrites"] == "400"
    (head,) = [e.value for e in at.error]
    assert head.startswith("A flawed reproduction, built to be caught.") and "violates its claim" in head
    assert "at least 3.81 where 1.75 is claimed" in head
    assert not at.success  # never a green "verified" banner
    # the main figure: the claim's curve at the pair's bound and the events beyond it
    names = _names(at)
    assert "claim's ceiling, ε = 1.75 (no test reaches the shaded region)" in names
    assert "x′ vs x: violation (whole box outside)" in names
    # the kept stopword shows in the rewrites of x; the chosen event, the numbers, the contract
    md = _text(at)
    assert "**was**" in md and "output lacks the word n-gram 'was'" in md
    assert {m.label: m.value for m in at.metric} == {
        "Lower bound on the loss": "3.81",
        "Point estimate ε̂": "∞",
        "Claimed bound": "1.75",
        "Largest certifiable bound": "3.81",
    }
    assert "The rewriter's contract: passed." in md and "What this run could have caught" in md
    assert [c.value for c in at.code] == [shell_command(view_command(view))]
    assert any("FLAWED" in o for o in at.selectbox(key="rw").options)
    assert "Reproduce this from the command line" in [e.label for e in at.expander]


def test_the_dp_mlm_view_is_shipped_too_and_never_reads_as_private(no_compute: None) -> None:
    at = _page()
    at.button(key="view-dp-mlm").click().run()
    assert not at.exception, at.exception
    assert at.query_params["rw"] == "dp-mlm" and not at.error and not at.success
    (head,) = [i.value for i in at.info]
    assert head.startswith("No violation detected by this test")
    assert "does not show the rewriter is private" in head
    # issue 58: a lower bound at or below 0 reads "no leak shown", never as a negative privacy loss
    view = shipped_view(VIEWS["dp-mlm"])
    assert view is not None and max(float(p["lower_bound"]) for p in view["pairs"]) <= 0
    assert "no leak shown" in head and "−0." not in head and "-0." not in head
    assert not any("violation" in n for n in _names(at))
    # and back: the other shipped view, in one click
    at.button(key="view-stopwords").click().run()
    assert at.query_params["rw"] == "flawed:dp-mlm-stopwords" and at.error


def test_other_settings_run_on_a_press_and_stay_shown(computed: list[dict]) -> None:
    at = _page(**LIVE)
    assert not at.exception, at.exception
    assert not computed and not at.get("plotly_chart")
    assert any("not a shipped view" in i.value for i in at.info)
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    assert len(computed) == 1 and computed[0]["rewriter"] == "planted:copy"
    assert computed[0]["distinguishers"] == ["exact", "words"]
    assert any("planted\\:copy violates its claim" in e.value for e in at.error)
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
    assert head.startswith("Out of reach\\: the claimed bound 20 is above") and "nothing was shown" in head


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
    assert at.query_params["rw"] == "flawed:dp-mlm-stopwords"  # the shipped view again
    assert shipped_view(VIEWS["stopwords"]) is not None and at.error  # its verdict, at once


def test_a_pair_outside_the_claims_premise_is_untested() -> None:
    # DP-MLM claims n·ε for sentences of one length n: 4 and 5 tokens are outside it (no rewrite drawn)
    at = _page(rw="dp-mlm", x="my aunt was ill", xp="my aunt was very ill", rewrites="100")
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    (head,) = [w.value for w in at.warning]
    assert head.startswith("Untested\\: the pair is outside the claim's premise; the lines have 4 and 5")
    assert not at.get("plotly_chart") and not at.error
