"""Home, the privacy-loss audit and Sensitivity tell their story first (issue 50).

Each page opens with its title, one plain sentence that carries the main number or verdict, and
its main figure, in that order; what explains or checks the story (the method, the notation, the
values table, the downloads, the page list) comes after the figure, and talk mode (``?talk=1``)
collapses it. The browser test ``tests/e2e/test_first_screen.py`` checks that this fits a
1280×720 screen; these tests check the order and the words, without a browser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _run(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=240)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _opening(at: AppTest) -> list[tuple[str, str]]:
    """(type, text or chart key) of the main column's elements up to its first chart, leaving out
    empty slots (a finished progress bar)."""
    out: list[tuple[str, str]] = []
    for node in at.main.children.values():
        if node.type == "empty":
            continue
        if node.type == "plotly_chart":
            out.append(("plotly_chart", node.proto.id.split("-", 2)[-1]))
            break
        value: Any = getattr(node, "value", "")
        out.append((node.type, value if isinstance(value, str) else ""))
    return out


def test_home_opens_with_its_headline_number_and_figure() -> None:
    from dpcore.audit import audit

    at = _run("home.py")
    peak = audit("adept", dim=128, epsilon=1.0, method="exact").empirical_epsilon
    (title, head, chart) = _opening(at)
    assert title == ("title", "dpcore: an open laboratory for differential privacy in NLP")
    assert head[0] == "markdown" and f"reaches **{peak:.1f}** at n = 128, {peak:.0f}× its promise" in head[1]
    assert chart == ("plotly_chart", "glance-figure")
    # the introduction and the page list follow the figure, shown in place
    text = " ".join(m.value for m in at.markdown)
    assert "Published text-privacy systems have promised" in text and not at.expander
    # issue 58: one number for ADePT, with its reason: the audited version (Fig. 2, unclipped) is
    # n·ε = 128-DP and its loss in the test reaches 13.7; clipped ADePT's ε·√n = 11.31 is the other one
    caption = next(c.value for c in at.caption if "reconstruction check" in c.value)
    assert "Fig. 2 version, unclipped" in caption and "(ε = 128 at n = 128)" in caption
    assert f"in this test its privacy loss reaches {peak:.2f} at n = 128" in caption
    assert "ε·√n = 11.31 at n = 128" in caption
    assert "because its L1 sensitivity is 2C·√n" not in caption


def test_home_in_talk_mode_collapses_the_introduction_and_the_page_list() -> None:
    at = _run("home.py", {"talk": "1"})
    assert [e.label for e in at.expander] == ["What this lab is, and every page"]
    inside = " ".join(m.value for m in at.expander[0].markdown)
    assert "Published text-privacy systems" in inside and "[Sensitivity](/sensitivity)" in inside
    assert _opening(at)[-1] == ("plotly_chart", "glance-figure")


def test_the_audit_page_opens_with_its_verdict_and_figure_and_explains_after() -> None:
    at = _run("audit.py", {"mc": "false"})
    (title, head, chart) = _opening(at)
    assert title == ("title", "Privacy-loss audit")
    assert head == (
        "markdown",
        "##### In this test, ADePT and DPText break the promise of ε = 1: ADePT's privacy loss reaches "
        "13.7 at n = 128 and DPText's privacy loss is infinite; Random and Laplace stay within it; "
        "Copy claims no privacy.",
    )
    assert chart == ("plotly_chart", "audit-figure")
    text = " ".join(m.value for m in at.main.markdown)
    assert "How the test works: we add each mechanism's noise" in text  # after the figure
    assert at.dataframe and not any(e.label == "Values and downloads" for e in at.expander)


def test_the_audit_headline_says_when_nothing_was_found_and_never_claims_privacy() -> None:
    at = _run("audit.py", {"mechs": "laplace,gaussian", "mc": "false"})
    head = _opening(at)[1][1]
    assert head == (
        "##### In this test, no mechanism shown exceeds its promise of ε = 1 (passing one test is not "
        "a proof of privacy)."
    )
    at = _run("audit.py", {"mechs": "copy", "mc": "false"})
    assert _opening(at)[1][1] == "##### Copy claims no privacy: nothing to test."


def test_the_audit_page_in_talk_mode_collapses_the_values_and_downloads() -> None:
    at = _run("audit.py", {"mc": "false", "talk": "1"})
    assert _opening(at)[-1] == ("plotly_chart", "audit-figure")
    values = next(e for e in at.expander if e.label == "Values and downloads")
    assert not values.proto.expanded and values.dataframe
    assert at.get("plotly_chart")[1].proto.id.endswith("-audit-tradeoff")  # the observer's story stays


def test_the_sensitivity_page_opens_with_its_numbers_and_the_curve() -> None:
    at = _run("sensitivity.py", {"pairs": "1000", "nmax": "32"})
    (title, head, chart) = _opening(at)
    assert title == ("title", "Sensitivity: the geometry ADePT got wrong")
    assert head == (
        "markdown",
        "##### ADePT added noise for inputs at most 2C = 20 apart, but in n = 128 dimensions two of "
        "them can be 226.3 apart: its noise is 11.3× too small, and its promise of ε = 1 is really "
        "ε = 11.31.",
    )
    assert chart == ("plotly_chart", "curve")
    metrics = {m.label: m.value for m in at.metric}  # the numbers, in detail, after the curve
    assert metrics["True L1 sensitivity 2C√n"] == "226.3"
    # which ADePT this is, and why the audited one's loss (Home, Audit) exceeds 11.31
    which = next(c.value for c in at.caption if "ADePT as published" in c.value)
    assert "really ε·√n = 11.31" in which and "only n·ε-DP (ε = 128 here)" in which
    at = _run("sensitivity.py", {"pairs": "1000", "nmax": "32", "n": "1"})
    assert "so its promise of ε = 1 holds" in _opening(at)[1][1]


def test_the_sensitivity_page_in_talk_mode_collapses_the_details() -> None:
    at = _run("sensitivity.py", {"pairs": "1000", "nmax": "32", "talk": "1"})
    labels = [e.label for e in at.expander]
    assert "The extreme pair" in labels and "Downloads" in labels
    pair = next(e for e in at.expander if e.label == "The extreme pair")
    assert not pair.proto.expanded and "Appendix B" in pair.markdown[0].value
    assert len(at.get("plotly_chart")) == 2


@pytest.mark.parametrize("page", ["home.py", "audit.py", "sensitivity.py"])
def test_every_chart_of_these_pages_is_legible_in_talk_mode(page: str) -> None:
    """The figure-legibility checks (≥ 14 px, contrast ≥ 4.5 : 1, ≤ 6 legend entries, theme off,
    one colour per name) hold with ``?talk=1`` too, and the text is larger there."""
    from tests.test_figure_legibility import _charts, _check_page

    talk = _charts(page, {}, talk=True)
    _check_page(talk, f"{page} in talk mode")
    plain = _charts(page, {})
    assert talk[0][2]["layout"]["font"]["size"] > plain[0][2]["layout"]["font"]["size"]
