"""Rewrites as a room reads them (issue 58: "Raw WordPieces ('##tier') appear, and a Bengali letter
shows as a box"): :mod:`dpcore.rewriter.words`, and the rewriter audit's headline in one sentence
that names the rewriter, its test's size and confidence (:mod:`dpcore.viz.rewriter_figure`)."""

from __future__ import annotations

import copy
import re

import pytest

from dpcore.rewriter.views import VIEWS, shipped_view
from dpcore.rewriter.words import (
    LEFT_OUT,
    NON_LATIN,
    drawable,
    join_wordpieces,
    shown_event,
    shown_text,
    shown_word,
    shown_words,
)
from dpcore.text.offensive import is_offensive, left_out_words
from dpcore.viz.rewriter_figure import (
    bound,
    headline,
    kept_words,
    rewriter_name,
    shown_tests_table,
    tradeoff_pair,
)
from dpcore.viz.rewriter_figure import tests_table as table_of_tests

#: One sentence: a capital first letter, one full stop at the end and none before it (a decimal
#: point is followed by a digit, not a space).
ONE_SENTENCE = re.compile(r"^[A-Zd][^\n]*[^.!?\n]\.$")


def _one_sentence(text: str) -> bool:
    return bool(ONE_SENTENCE.match(text)) and not re.search(r"[.!?]\s", text)


def _listed_split() -> tuple[str, str, str]:
    """A word of the left-out list made of two pieces that are not listed themselves (chosen, not
    written here): (word, first piece, second piece)."""
    for w in sorted(left_out_words()):
        if (
            w.isascii()
            and w.isalpha()
            and len(w) >= 6
            and not is_offensive(w[:3])
            and not is_offensive(w[3:])
        ):
            return w, w[:3], w[3:]
    raise AssertionError("no listed word splits into two unlisted pieces")


# ---- WordPieces joined into words ---------------------------------------------------------------
def test_continuation_pieces_are_joined_to_the_word_before() -> None:
    assert join_wordpieces("composition 1924 ##iere pisa ##tures") == ["composition", "1924iere", "pisatures"]
    assert join_wordpieces("gra ##ce ##ful ##ly done") == ["graceful" + "ly", "done"]
    # nothing to join to: the piece is shown alone, without its ##; a lone ## stays as written
    assert join_wordpieces("##tier is here") == ["tier", "is", "here"]
    assert join_wordpieces("a ## b") == ["a", "##", "b"]
    assert join_wordpieces("") == []


def test_a_word_kept_from_the_input_takes_no_piece() -> None:
    # the flawed DP-MLM keeps "was" verbatim and replaces the next token by a piece: "washard" would
    # hide the kept word the audit's event counts
    assert join_wordpieces("my was ##hard with", keep="my neighbour anna was ill".split()) == [
        "my",
        "was",
        "hard",
        "with",
    ]
    assert join_wordpieces("my was ##hard") == ["my", "washard"]
    assert join_wordpieces("Was. ##hard", keep=["was"]) == ["Was.", "hard"]  # by core, any case


def test_no_shown_word_is_a_wordpiece() -> None:
    view = shipped_view(VIEWS["dp-mlm"])
    assert view is not None
    rewrites = [r for rows in view["pairs"][0]["examples"].values() for r in rows]
    assert any("##" in r for r in rewrites)  # the shipped rewrites hold pieces ...
    for r in rewrites:
        words = shown_words(r)
        assert not [w for w in words if w.startswith("##")], words  # ... the page shows words
        assert all(drawable(w) for w in words), words


# ---- characters the page's font cannot draw -----------------------------------------------------
@pytest.mark.parametrize(
    "token",
    ["ব", "リ", "清", "ж", "ᅯ", "⊗", "∇", "ر", "snailsय", "\ufffdoverflow", "a\u202eb", "zero\u200bwidth"],
)
def test_a_word_outside_the_latin_script_is_a_placeholder(token: str) -> None:
    assert not drawable(token)
    assert shown_word(token) == NON_LATIN
    assert shown_word(f"'{token}'.") == f"'{NON_LATIN}'."  # the punctuation around it stays


@pytest.mark.parametrize(
    "token", ["café", "naïve", "Ångström", "1,924", "x′", "“quoted”", "non-profit", "[UNK]"]
)
def test_latin_words_digits_and_punctuation_are_shown_as_written(token: str) -> None:
    assert drawable(token) and shown_word(token) == token


def test_a_piece_that_is_not_drawn_stays_apart_from_its_neighbours() -> None:
    assert join_wordpieces("pisa ##リ ##tures") == ["pisa", "リ", "tures"]
    assert shown_text("with ##リ stitch") == f"with {NON_LATIN} stitch"
    assert shown_text("清 ##tier") == f"{NON_LATIN} tier"  # a drawn piece is not swallowed either


# ---- listed words, joined ones included ---------------------------------------------------------
def test_a_joined_word_on_the_left_out_list_is_left_out() -> None:
    word, head, tail = _listed_split()
    raw = f"the {head} ##{tail} came."
    assert not is_offensive(head) and not is_offensive(tail)  # no piece is listed ...
    assert shown_words(raw) == ["the", LEFT_OUT, "came."]  # ... the word they make is
    assert word not in shown_text(raw)
    assert shown_text(f"{word.upper()}!") == f"{LEFT_OUT}!"  # any case, punctuation kept around it
    # a rewriter that copies its input copies a listed word of it: left out too, and still "kept"
    assert kept_words(f"my {word} aunt", f"my {head} ##{tail} aunt")[1] == (LEFT_OUT, True)
    assert kept_words("my aunt", f"my {head} ##{tail} aunt")[1] == (LEFT_OUT, False)
    assert kept_words(f"my {word} aunt", f"my {word} aunt")[1] == (LEFT_OUT, True)


def test_an_event_is_made_safe_but_never_joined() -> None:
    word, _, _ = _listed_split()
    assert shown_event("output contains the word n-gram '##ema'") == "output contains the word n-gram '##ema'"
    assert shown_event("output is exactly 'my ##uve'") == "output is exactly 'my ##uve'"
    assert (
        shown_event("output contains the word n-gram 'ব'") == f"output contains the word n-gram '{NON_LATIN}'"
    )
    assert shown_event(f"output contains the word n-gram '{word}'") == (
        f"output contains the word n-gram '{LEFT_OUT}'"
    )


def test_kept_words_are_the_shown_words_with_what_came_from_the_input() -> None:
    assert kept_words("my aunt was ill", "my cousin was tired.") == [
        ("my", True),
        ("cousin", False),
        ("was", True),
        ("tired.", False),
    ]
    got = kept_words("my neighbour anna was diagnosed", "my ⊗ 1924 was ##hard pisa ##tures ##リ")
    assert got == [
        ("my", True),
        (NON_LATIN, False),
        ("1924", False),
        ("was", True),
        ("hard", False),
        ("pisatures", False),
        (NON_LATIN, False),
    ]


def test_the_shipped_stopword_view_keeps_was_visible_in_every_rewrite_of_x() -> None:
    view = shipped_view(VIEWS["stopwords"])
    assert view is not None
    pair = view["pairs"][0]
    for r in pair["examples"]["x"]:
        assert ("was", True) in kept_words(pair["x"], r), r


# ---- the tables and the figure show the events safely; the downloads keep them as written ---------
def test_the_shown_table_makes_events_safe_and_reads_a_bound_at_or_below_zero_as_none() -> None:
    view = copy.deepcopy(shipped_view(VIEWS["dp-mlm"]))
    assert view is not None
    tests = view["pairs"][0]["tests"]
    tests[0]["event"] = "output contains the word n-gram 'ব'"
    raw, shown = table_of_tests(view), shown_tests_table(view)
    assert raw["event"].iloc[0] == "output contains the word n-gram 'ব'"  # the downloads: as written
    assert shown["event"].iloc[0] == f"output contains the word n-gram '{NON_LATIN}'"
    assert all(float(t["lower_bound"]) <= 0 for t in tests)
    assert list(shown["lower bound"]) == ["none"] * len(tests)  # issue 58: never "−0.0219"
    tp = tradeoff_pair(view["pairs"][0])
    assert tp is not None and NON_LATIN in tp.boxes[0].label and "ব" not in tp.boxes[0].label


def test_bound() -> None:
    assert [bound(v) for v in (-0.0219, 0, "-inf", 3.8098, "inf", None)] == [
        "none",
        "none",
        "none",
        "3.81",
        "∞",
        "",
    ]


# ---- the headline: what a room should conclude, in one sentence -----------------------------------
def _shipped_headline(name: str) -> str:
    """The headline of the shipped view ``name``, checked to be one sentence."""
    view = shipped_view(VIEWS[name])
    assert view is not None
    text = headline(view)
    assert _one_sentence(text), text
    return text


def test_the_dp_mlm_headline_says_no_leak_shown_with_its_size_and_never_private() -> None:
    text = _shipped_headline("dp-mlm")
    assert text == (
        "No leak shown for dpcore's DP-MLM variant: this test found no event that tells its rewrites of "
        "the two sentences apart (400 rewrites per sentence, 95% confidence; it claims 1.75), which does "
        "not show it is private."
    )
    assert "dp-mlm" not in text  # the display name, not the machine id
    assert "−0." not in text and "-0." not in text


def test_the_control_headline_says_it_leaks_by_how_much_against_its_claim() -> None:
    text = _shipped_headline("stopwords")
    assert text == (
        "The flawed DP-MLM that keeps stopwords leaks more than it claims: on this pair its privacy loss "
        "is at least 3.81, above the 1.75 it claims (400 rewrites per sentence, 95% confidence)."
    )
    assert "flawed:" not in text


def _with(view: dict, **pair: object) -> dict:
    out = copy.deepcopy(view)
    out["pairs"][0].update(pair)
    return out


def test_every_verdict_is_one_sentence_that_names_the_rewriter() -> None:
    base = shipped_view(VIEWS["dp-mlm"])
    assert base is not None
    within = {**_with(base, lower_bound=1.2, violates=False), "rewriter": "planted:copy"}
    text = headline(within)
    assert text.startswith("No leak beyond its claim shown for the planted rewriter that copies its input:")
    assert "at least 1.2, within the 1.75 it claims" in text and "does not show it is private" in text
    never = _with(base, lower_bound="-inf")
    assert headline(never).startswith("No leak shown for dpcore's DP-MLM variant:")
    reach = {**base, "verdict": "out-of-reach", "rewriter": "my_file.py:make"}
    text = headline(reach)
    assert text.startswith(
        "Out of reach for the rewriter my_file.py:make: the claimed bound 1.75 is above 3.81"
    )
    assert "shows nothing either way" in text
    untested = {**_with(base, outside_premise="the texts have 4 and 5 tokens"), "verdict": "untested"}
    text = headline(untested)
    assert text == (
        "Untested for dpcore's DP-MLM variant: the pair is outside its claim's premise — the texts have 4 "
        "and 5 tokens — so this run shows neither a violation nor its absence."
    )
    for t in (headline(within), headline(never), headline(reach), headline(untested)):
        assert _one_sentence(t), t
        assert "private" not in t.replace("does not show it is private", "")


def test_rewriter_names() -> None:
    assert rewriter_name("dp-mlm", start=True) == "dpcore's DP-MLM variant"  # the brand keeps its small d
    assert rewriter_name("flawed:dp-mlm-stopwords") == "the flawed DP-MLM that keeps stopwords"
    assert rewriter_name("planted:copy", start=True) == "The planted rewriter that copies its input"
    assert rewriter_name("pkg.mod:make") == "the rewriter pkg.mod:make"
