"""AppTest: the "Sanitize text" page renders, reacts to widgets, and refuses bad input clearly."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "sanitize.py")


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _app(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    for k, v in query.items():
        at.query_params[k] = v
    return at


def _sanitized_html(at: AppTest) -> str:
    blocks = [m.value for m in at.markdown if "dp-sanitized" in m.value]
    assert len(blocks) == 1
    return blocks[0]


def test_default_page_renders_everything() -> None:
    at = _app(vsize="2000").run()
    assert not at.exception
    assert not at.error
    assert "<mark" in _sanitized_html(at) or "dp-sanitized" in _sanitized_html(at)
    assert len(at.dataframe) >= 2  # draws and metrics
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    # top panel: each plotted word's chance to be kept; bottom panel (y2): the words it becomes
    kept = [t for t in spec["data"] if t.get("yaxis", "y") == "y"]
    becomes = [t for t in spec["data"] if t.get("yaxis") == "y2"]
    assert 2 <= len(kept) <= 4 and [t["name"] for t in kept] == [
        t["name"].removesuffix(" (S_x)") for t in becomes
    ]
    assert all(0.0 <= y <= 1.0 for t in kept for y in t["y"])
    assert all(y >= 1 for t in becomes for y in t["y"])
    assert at.query_params["mech"] == "santext+"
    # the headline names the mechanism, ε and how many words were replaced
    assert any(m.value.startswith("**SanText+ at ε = 3 replaced ") for m in at.markdown)
    # the per-word table speaks plain words; the notation is in each column's help
    columns = [list(df.value.columns) for df in at.dataframe]
    plain = next(c for c in columns if "Chance kept" in c)
    assert not [c for c in plain if "N_x" in c or "S_y" in c or "S_x" in c], plain


def test_the_headline_names_the_mechanism_by_its_display_name() -> None:
    # issue 58: headlines use the registry's display name, not the machine id ("random")
    at = _app(vsize="2000", mech="random", eps="3").run()
    assert not at.exception
    assert at.query_params["mech"] == "random"  # the URL keeps the machine name
    heads = [m.value for m in at.markdown if " at ε = 3 replaced " in m.value]
    assert len(heads) == 1 and heads[0].startswith("**Random replacement at ε = 3 replaced "), heads


def test_the_plotted_words_draw_different_lines() -> None:
    # SanText+ keeps every word outside its sensitive set with the same chance 1 − p: the figure
    # must not draw four such words on top of each other (issue 50: "four N_x lines overlap at 0.7")
    at = _app(vsize="2000", mech="santext+", eps="3").run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    kept = [t for t in spec["data"] if t.get("yaxis", "y") == "y"]
    curves = {tuple(round(y, 3) for y in t["y"]) for t in kept}
    assert len(curves) == len(kept) >= 2, [t["y"] for t in kept]
    styles = {(t["line"]["color"], t["line"]["dash"], t["marker"]["symbol"]) for t in kept}
    assert len(styles) == len(kept)  # and each in its own colour, dash and marker


def test_pasted_text_and_epsilon_change_the_output() -> None:
    at = _app(source="paste", vsize="2000", mech="santext", eps="0.5").run()
    assert not at.exception
    at.text_area(key="text").set_value("the movie was good\nthe food was bad").run()
    low = _sanitized_html(at)
    at.number_input(key="eps").set_value(1000.0).run()
    assert not at.exception
    high = _sanitized_html(at)
    assert high != low
    assert "<mark" not in high  # ε = 1000 keeps every token
    assert "the movie was good" in high
    assert at.query_params["eps"] == "1000"


def test_user_html_is_escaped() -> None:
    at = _app(source="paste", vsize="2000", mech="santext", eps="1000", oov="keep").run()
    at.text_area(key="text").set_value("<script>alert(1)</script> <b>bold</b>").run()
    assert not at.exception
    for m in at.markdown:
        assert "<script>" not in m.value and "<b>bold" not in m.value
    assert "&lt;" in _sanitized_html(at)


def test_bad_query_params_give_a_warning_not_an_exception() -> None:
    at = _app(eps="-3", mech="nope", p="2", vsize="123").run()
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    for key in ("eps", "mech", "p", "vsize"):
        assert f"`{key}`" in text
    assert at.number_input(key="eps").value == 3.0


def test_too_long_text_gives_a_clear_message() -> None:
    at = _app(source="paste", vsize="2000").run()
    at.text_area(key="text").set_value("word " * 5000).run()
    assert not at.exception
    assert any("limit is 20,000" in e.value for e in at.error)
    assert not [m for m in at.markdown if "dp-sanitized" in m.value]


def test_empty_text_gives_a_clear_message() -> None:
    at = _app(source="paste", vsize="2000").run()
    at.text_area(key="text").set_value("   ").run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


def test_santext_plus_w_outside_the_schema_range_is_a_warning_and_the_default() -> None:
    # w = 0 would mark no word sensitive; the schema's widget range (0.05–1) refuses it from a URL
    at = _app(mech="santext+", w="0", vsize="2000").run()
    assert not at.exception
    assert any("`w` ignored" in x.value for x in at.warning)
    assert at.session_state["w"] == 0.9


def test_parameter_widgets_come_from_the_schema() -> None:
    at = _app(mech="custext", also="vickrey-cmp,santext+", k="7").run()
    assert not at.exception
    labels = {s.label: s.value for s in at.slider}
    assert labels["k (custext)"] == 7 and labels["t (vickrey-cmp)"] == 0.5
    assert labels["p (santext+)"] == 0.3 and "w (santext+)" in labels
    code = at.code[0].value
    assert "--mechanism custext" in code and "--param k=7" in code


def test_page_is_listed() -> None:
    from pages._shared import PAGES

    assert any(p.path == "pages/sanitize.py" and p.url_path == "sanitize" for p in PAGES)


def test_refuted_mechanism_is_flagged_and_its_epsilon_floor_explained() -> None:
    at = _app(mech="truncated-gumbel", eps="3", vsize="2000").run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "not private as claimed" in errors and "calibrated only for ε >" in errors
    at = _app(mech="truncated-gumbel", eps="200", vsize="2000").run(timeout=120)
    assert not at.exception
    assert any("NOT PRIVATE AS CLAIMED" in c.value for c in at.caption)


#: The sentence of issue 50: SanText+ at ε = 1, seed 0 printed a racial slur among its replacements.
ISSUE_50_SENTENCE = "My neighbour Anna was diagnosed with diabetes in Berlin last May."


def _sanitized_words(at: AppTest) -> list[str]:
    blocks = [m for m in at.markdown if "dp-draw" in m.value]
    assert blocks, "no draw shown"
    words = []
    for b in blocks:
        body = b.value.split('class="dp-draw">', 1)[1]
        words += re.sub(r"<[^>]+>", " ", body).split()
    return words


def test_default_vocabulary_leaves_offensive_words_out_and_says_so() -> None:
    from dpcore.text.offensive import is_offensive

    at = _app(source="paste", mech="santext+", eps="1", seed="0", draws="10").run()
    at.text_area(key="text").set_value(ISSUE_50_SENTENCE).run(timeout=180)
    assert not at.exception
    words = _sanitized_words(at)
    assert len(words) >= 10 * 10  # ten draws of the sentence were read back
    assert not [w for w in words if is_offensive(html.unescape(w))]
    captions = [c.value for c in at.caption]
    vocab = [c for c in captions if c.startswith("Vocabulary: ")]
    assert len(vocab) == 1 and "offensive words left out" in vocab[0], captions
    assert at.checkbox(key="fullvocab").value is False
    assert "--full-vocabulary" not in at.code[0].value
    assert at.query_params["fullvocab"] == "false"


def test_full_vocabulary_is_one_click_away_and_reproducible() -> None:
    at = _app(vsize="2000", fullvocab="true").run()
    assert not at.exception
    box = at.checkbox(key="fullvocab")
    assert box.value is True and box.label == "Full vocabulary (research: may output slurs and insults)"
    vocab = [c.value for c in at.caption if "Vocabulary: " in c.value]
    assert len(vocab) == 1 and "full vocabulary (offensive words included)" in vocab[0], vocab
    assert "--full-vocabulary" in at.code[0].value  # the CLI command samples from the same words
    box.uncheck().run()
    assert not at.exception
    assert at.query_params["fullvocab"] == "false"
    assert any("offensive words left out" in c.value for c in at.caption)
    assert "--full-vocabulary" not in at.code[0].value


def _input_words(at: AppTest) -> list[str]:
    """The words of the input the page sanitized (its per-word table's first column)."""
    table = next(df.value for df in at.dataframe if "Chance kept" in df.value.columns)
    return list(table["Word"])


def test_the_seed_changes_the_draw_and_the_sample_number_the_input() -> None:
    """Issue 58: "another draw" re-sampled the input tweets. The input has its own control now."""
    from dpcore.text.offensive import offensive_mask

    base = _app(vsize="2000", seed="0").run()
    other_seed = _app(vsize="2000", seed="23").run()
    other_sample = _app(vsize="2000", seed="0", sample="1").run()
    for at in (base, other_seed, other_sample):
        assert not at.exception and not at.error
    assert _input_words(base) == _input_words(other_seed)
    assert _sanitized_html(base) != _sanitized_html(other_seed)
    assert _input_words(other_sample) != _input_words(base)
    assert other_sample.query_params["sample"] == "1" and base.number_input(key="sample").value == 0
    # every sampled input word is one a default vocabulary keeps
    assert not offensive_mask(_input_words(base) + _input_words(other_sample)).any()
