"""A sanitized line as HTML (:func:`dpcore.viz.highlight.highlight`, moved out of the Sanitize
text page: issue 60 item 8)."""

from __future__ import annotations

from dpcore.viz.highlight import highlight


def test_every_token_is_escaped_and_replaced_ones_are_marked() -> None:
    out = highlight(["<script>", "flu", "&"], [False, True, False], [False, False, False])
    assert "<script>" not in out and "&lt;script&gt;" in out and "&amp;" in out
    assert '<mark style="background:#ffe08a;padding:0 2px" title="replaced">flu</mark>' in out


def test_out_of_vocabulary_tokens_are_grey_and_kept_sensitive_words_outlined() -> None:
    out = highlight(["zyx", "hiv"], [False, False], [True, False], kept={"hiv": (True, 0.25)})
    assert '<span style="color:#888" title="out of vocabulary">zyx</span>' in out
    assert 'class="dp-kept"' in out and "N_x = Pr[M(x) = x] = 0.25" in out
    assert highlight([], [], []) == "&nbsp;"


def test_wordpieces_are_joined_until_one_is_replaced() -> None:
    kept = highlight(["play", "##ing"], [False, False], [False, False])
    assert ">playing</span>" in kept and "WordPiece: play · ##ing" in kept
    split = highlight(["play", "##ing"], [False, True], [False, False])
    assert "playing" not in split and split.startswith("play <mark") and "##ing</mark>" in split
