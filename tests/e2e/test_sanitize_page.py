"""The "Sanitize text" page in a real browser: paste a sentence, see it sanitized, download it."""

from __future__ import annotations

import itertools
import math
import os
import time
from pathlib import Path

import pytest

from tests.e2e.cancellation import LongRunWatch, expect_recompute

pytestmark = pytest.mark.e2e


def _wait_idle(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".dp-sanitized", state="visible", timeout=90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=90_000)
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')',
        timeout=90_000,
    )


def _paste(page, text: str, *, shown: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Type ``text`` into the paste box and submit it; then, if given, wait until the tokenized
    original shows ``shown`` (the page has rerun on the new text)."""
    if shown is not None:  # else the wait below would not prove that the page reran
        assert not page.evaluate(_ORIGINAL_HAS, shown), f"{shown!r} is in the original before the paste"
    box = page.get_by_label("Text (one sentence per line", exact=False)
    box.fill(text)
    box.press("Control+Enter")
    if shown is not None:
        _wait_original(page, shown)


_ORIGINAL_HAS = "(s) => !!(document.querySelector('.dp-orig') || {}).innerText?.includes(s)"


def _wait_original(page, text: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the tokenized original on the page includes ``text``."""
    page.wait_for_function(_ORIGINAL_HAS, arg=text, timeout=90_000)


def test_sanitize_a_sentence_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sanitize?source=paste&mech=santext&eps=1000&vsize=2000&seed=1")
    _wait_idle(page)
    _paste(page, "the movie was good and the food was bad")
    page.wait_for_function(
        "() => (document.querySelector('.dp-sanitized') || {}).innerText?.includes('the movie was good')",
        timeout=90_000,
    )
    _wait_idle(page)
    assert "the movie was good and the food was bad" in page.locator(".dp-sanitized").inner_text()
    # A link cannot carry pasted text: the page says so.
    assert "Pasted text never goes into the page's link" in page.locator("body").inner_text()
    # Three downloads in a row: none cancels another (no rerun in between), none names a server path.
    got = {}
    for name in (
        "Download sanitized text (draw 1)",
        "Download all draws + parameters (JSON)",
        "Download input.txt",
    ):
        with page.expect_download() as dl:
            page.get_by_role("button", name=name).click()
        got[name] = Path(dl.value.path()).read_text(encoding="utf-8")
        assert dl.value.failure() is None, (name, dl.value.failure())
    assert got["Download sanitized text (draw 1)"].strip() == "the movie was good and the food was bad"
    assert got["Download input.txt"].strip() == "the movie was good and the food was bad"
    assert '"draws"' in got["Download all draws + parameters (JSON)"]
    for text in got.values():
        assert str(Path(__file__).resolve().parents[2]) not in text and "/root/" not in text
    path = artifacts / "sanitize-download.txt"
    path.write_text(got["Download sanitized text (draw 1)"], encoding="utf-8")
    page.screenshot(path=str(artifacts / "sanitize.png"), full_page=True)


# S_x data and the right axis's computed ticks (value, label) of the metrics figure.
SX_AXIS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].pop();
  const sx = gd._fullData.map((d, i) => [d, i]).filter(([d]) => d.yaxis === 'y2')
                .flatMap(([d, i]) => gd.calcdata[i].map((c) => c.y));
  const ax = gd._fullLayout.yaxis2;
  return {sx, ticks: ax._vals.map((t) => ({x: t.x, text: t.text})), range: ax.range};
}"""


def test_sanitize_default_page_highlights_replacements(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sanitize?mech=santext%2B&eps=2&vsize=5000&nsent=4&draws=2&also=random&also_eps=20")
    _wait_idle(page)
    # Side by side: the chosen setting, another mechanism, another ε — each with every line.
    heads = page.locator("strong", has_text=", ε = ").all_inner_texts()
    assert {"SanText+, ε = 2", "Random replacement, ε = 2", "SanText+, ε = 20"} <= set(heads), heads
    sides = page.locator(".dp-side").all_inner_texts()
    assert len(sides) == 3 and all(s_.strip().count("\n") + 1 >= 4 for s_ in sides), sides
    assert sides[1] != sides[0]  # random replacement differs from SanText+ on the same text
    # Each draw's full lines (two draws, four lines each).
    draws = page.locator(".dp-draw").all_inner_texts()
    assert len(draws) == 2 and all(d.strip().count("\n") + 1 >= 4 for d in draws), draws
    assert page.locator(".dp-sanitized mark").count() > 0
    # The sentence count is a URL parameter: nsent=4 gives four sampled lines.
    assert page.locator(".dp-sanitized").first.inner_text().strip().count("\n") + 1 >= 4
    # S_x right axis: distinct, increasing decade labels that match their values and cover the data.
    ax = page.evaluate(SX_AXIS)
    sx = [v for v in ax["sx"] if v is not None and v > 0]
    assert sx, "no S_x data drawn"
    vals = [10 ** t["x"] for t in ax["ticks"]]  # log axis: tick positions are log10 values
    labels = [t["text"] for t in ax["ticks"]]
    assert len(vals) >= 1 and len(set(labels)) == len(labels), labels
    assert all(b > a for a, b in itertools.pairwise(vals)), vals
    for v, lab in zip(vals, labels, strict=True):
        assert abs(v - float(lab.replace(",", ""))) < 1e-6 * v, (v, lab)
        assert abs(round(math.log10(v)) - math.log10(v)) < 1e-9, f"{lab} is not a decade"
    lo, hi = 10 ** ax["range"][0], 10 ** ax["range"][1]
    assert lo <= min(sx) * 1.0001 and hi >= max(sx) * 0.9999, (lo, hi, min(sx), max(sx))
    page.screenshot(path=str(artifacts / "sanitize-default.png"), full_page=True)


def test_a_widget_change_cancels_a_long_sanitization(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    # 10,000 characters, BERT embedding (30k WordPieces), Feyisetan, 10 draws: several seconds
    # of sampling on 2 cores, reported after each draw. Switching to uniform random replacement
    # mid-run must bring its result in seconds and stop the Feyisetan draws (proved through the
    # cache below, not by a clock). The text is first sanitized with random replacement, whose
    # metrics are exact and quick, so the test spends its time on the run it cancels.
    watch = LongRunWatch(page, done=r"Sanitized (\d+) of \1 draws")  # the ten draws are one cached unit
    page.goto(f"{app_url}/sanitize?source=paste&emb=bert&mech=random&draws=10&eps=10&seed=2")
    _wait_idle(page)
    text = ("the patient was diagnosed with cancer in boston last week .\n" * 200)[:10_000]
    _paste(page, text)
    page.get_by_text("Guarantee: 0-LDP", exact=False).first.wait_for(timeout=120_000)
    _wait_idle(page)

    def choose(name: str) -> None:
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=name, exact=True).click()
        page.wait_for_function(f"() => location.search.includes('mech={name}')", timeout=60_000)

    choose("feyisetan")
    # under way: the server has sent a draw's progress (what the browser drew may skip it)
    assert watch.wait_sent(page, r"Sanitized [1-9] of 10 draws", 120_000), watch.sent[-5:]
    t0 = time.monotonic()
    watch.change()
    choose("random")
    page.get_by_text("Guarantee: 0-LDP", exact=False).first.wait_for(timeout=120_000)
    _wait_idle(page)
    elapsed = time.monotonic() - t0
    print(f"random-replacement rerun after cancelling Feyisetan: {elapsed:.1f} s")
    assert "of 10 draws" not in page.locator("body").inner_text()
    page.screenshot(path=str(artifacts / "sanitize-cancelled.png"), full_page=True)
    # The proof that the draws stopped: finished draws are cached per input, so had the ten
    # Feyisetan draws gone on to the end, choosing Feyisetan again would show them at once.
    # They must be drawn again instead.
    seen = watch.result()
    choose("feyisetan")
    expect_recompute(page, watch, "Sanitized [0-9]+ of 10 draws", "Feyisetan sanitization", seen)
    choose("random")  # stop the draws we restarted
    _wait_idle(page)


def test_reproduce_box_matches_cli_and_library(app_url: str, page, artifacts: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Draw 1 (and draw 2) on the page = the page's CLI command (`--draw 2`) = the library."""
    import json
    import shlex
    import subprocess
    import sys

    page.goto(f"{app_url}/sanitize?source=paste&mech=santext%2B&eps=3&seed=7&draws=2")
    _wait_idle(page)
    text = "the patient in boston was diagnosed with hiv last week\nwe loved the food but not the service"
    _paste(page, text, shown="hiv")  # not "boston": the example text has it too
    _wait_idle(page)
    command = page.locator('[data-testid="stCode"] code').first.inner_text().strip()
    assert command.startswith("python -m dpcore sanitize ") and "--seed 7" in command, command
    assert "--vocab-size 15000" in command, command  # the CLI's default vocabulary size
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download all draws + parameters (JSON)").click()
    shown = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))["draws"]

    (tmp_path / "input.txt").write_text(text + "\n", encoding="utf-8")
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "dpcore"]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for draw in (1, 2):
        args = [sys.executable, *argv[1:]]
        args[args.index("--draw") + 1] = str(draw)
        subprocess.run(args, cwd=tmp_path, check=True, env=env, capture_output=True, timeout=180)
        cli = (tmp_path / "sanitized.txt").read_text(encoding="utf-8").splitlines()
        assert cli == shown[draw - 1], (draw, cli, shown[draw - 1])

    from dpcore.text import create_text_mechanism
    from dpcore.text.sanitize import sanitize_lines
    from dpcore.text.vocab import build_vocabulary

    mech = create_text_mechanism(
        "santext+", vocab=build_vocabulary("glove", size=15_000), epsilon=3.0, p=0.3, w=0.9
    )
    assert sanitize_lines(text.splitlines(), mech, seed=7, oov="mask").lines == shown[0]
    assert shown[0] != shown[1]  # two draws really differ (else the comparison above proves little)


def test_kept_sensitive_words_and_wordpieces(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    """With the paper's WordPiece vocabulary, an original word's pieces are joined back into it
    (pieces on hover); a kept sensitive word is outlined with its N_x on hover."""
    page.goto(f"{app_url}/sanitize?source=paste&emb=bert-wordpiece&mech=santext%2B&eps=200&seed=3")
    _wait_idle(page)
    _paste(page, "the patient tested positive for hiv unbelievably", shown="hiv")
    _wait_idle(page)
    page.wait_for_selector(".dp-sanitized .dp-kept", timeout=60_000)
    orig = page.locator(".dp-orig").inner_text()
    assert "unbelievably" in orig and "##" not in orig, orig  # pieces joined back into the word
    tips = page.locator(".dp-orig [title^='WordPiece']").evaluate_all("els => els.map(e => e.title)")
    assert any(t.startswith("WordPiece: un") and "##" in t for t in tips), tips
    kept = page.locator(".dp-sanitized .dp-kept", has_text="hiv")
    assert kept.count() == 1
    title = kept.first.get_attribute("title") or ""
    assert title.startswith("kept sensitive word: N_x = Pr[M(x) = x] = "), title
    assert 0.0 < float(title.rsplit("= ", 1)[1]) <= 1.0, title


def test_pasted_text_survives_a_visit_to_another_page(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    # Streamlit forgets a widget's value once another page runs; the pasted text must not be lost
    page.goto(f"{app_url}/sanitize?source=paste&mech=santext&eps=1000&vsize=2000&seed=1")
    _wait_idle(page)
    mine = "the food was good and the movie was long"
    _paste(page, mine, shown=mine)
    _wait_idle(page)
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.locator('a[href$="/sensitivity"]').click()
    page.get_by_role("heading", name="Sensitivity: the geometry ADePT got wrong").wait_for(timeout=60_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=90_000)
    nav.locator('a[href$="/sanitize"]').click()
    page.get_by_role("heading", name="Sanitize text").wait_for(timeout=60_000)
    _wait_idle(page)
    # the sidebar link carries no query: the page opens on its default input; the text is one
    # click away, as pasted
    page.locator('[data-testid="stRadio"]').get_by_text("Paste text").click()
    box = page.get_by_label("Text (one sentence per line", exact=False)
    box.wait_for(timeout=60_000)
    assert box.input_value() == mine
    _wait_original(page, mine)
