"""The Accounting page's other tabs and the Sanitize page's paste view tell their story on the
first screen of a projector too (issue 50): at 1280×720, plain and in talk mode, the headline sits
above the figure and at least half of the figure is in the first viewport, with a screenshot of
each in ``tests/artifacts/first-screen-<view>[-talk].png``.

``tests/e2e/test_first_screen.py`` checks every page as first met; this file adds the views of
these two pages that a speaker opens next.
"""

from __future__ import annotations

import pytest

from tests.e2e.idle import wait_idle
from tests.e2e.test_first_screen import GEOMETRY, _check

pytestmark = pytest.mark.e2e

#: (view name for the screenshot, path with query, the figure's key, a phrase of its headline)
VIEWS = [
    ("accounting-binary", "accounting?tab=binary", "binary", "the count holds"),
    ("accounting-sampler", "accounting?tab=sampler&size=10000", "samplers", "never negative"),
    ("sanitize-paste", "sanitize?source=paste", "sanitize-figure", "replaced"),
]

HEADLINE_ABOVE = """([key, phrase]) => {
  const fig = document.querySelector(`[class*="st-key-${key}"]`).getBoundingClientRect();
  const p = [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
      .find((e) => e.innerText.includes(phrase) && e.getBoundingClientRect().height > 0);
  return p ? {top: p.getBoundingClientRect().top, bottom: p.getBoundingClientRect().bottom,
              figure: fig.top} : null;
}"""


@pytest.mark.parametrize("talk", [False, True], ids=["plain", "talk"])
@pytest.mark.parametrize(("name", "path", "key", "phrase"), VIEWS, ids=[v[0] for v in VIEWS])
def test_the_view_tells_its_story_on_the_first_screen(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts, name: str, path: str, key: str, phrase: str, talk: bool
) -> None:
    url = f"{path}&talk=1" if talk else path
    projector.goto(f"{app_url}/{url}")
    projector.wait_for_selector(f'[class*="st-key-{key}"] .js-plotly-plot', timeout=180_000)
    wait_idle(projector, timeout=180_000)
    projector.evaluate("() => window.scrollTo(0, 0)")
    geo = projector.evaluate(GEOMETRY, key)
    projector.screenshot(path=str(artifacts / f"first-screen-{name}{'-talk' if talk else ''}.png"))
    _check(geo, url)
    head = projector.evaluate(HEADLINE_ABOVE, [key, phrase])
    assert head is not None, f"{url}: no headline with {phrase!r}"
    assert 0 <= head["top"] and head["bottom"] <= geo["figure"]["top"] + 1, (url, head, geo)
