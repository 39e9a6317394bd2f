"""Word-level sanitization with BERT embeddings outputs whole words by default (issue 29 item 6).

The ``bert`` embedding keeps the 22,748 whole-word tokens of bert-base-uncased (letters and
digits, or one ASCII punctuation mark) and splits input into whole words; ``bert-wordpiece``
keeps the paper's full WordPiece vocabulary (29,523 tokens) and renders its output token by
token, so a replaced ``##`` piece is never glued to a neighbour.
"""

from __future__ import annotations

import re

import pytest

import dpcore
from dpcore.text.embeddings import load_tokenizer
from dpcore.text.vocab import build_vocabulary

SENTENCES = [
    "the patient was diagnosed with cancer in boston last weekners",
    "my flight was cancelled and the airline lost my luggage !",
    "unbelievably , the characterization of tokenizers remains underappreciated",
]


def test_the_whole_word_vocabulary_has_no_pieces_and_no_reserved_tokens() -> None:
    words = list(build_vocabulary("bert", full=True).words)
    assert len(words) == 22_748
    assert all(re.fullmatch(r"[a-z0-9]+|[!-/:-@\[-`{-~]", w) for w in words)
    pieces = list(build_vocabulary("bert-wordpiece", full=True).words)
    assert len(pieces) == 29_523 and any(w.startswith("##") for w in pieces)
    # the default vocabularies are the same less their offensive words
    default = build_vocabulary("bert")
    assert set(default.words) < set(words) and len(default) == 22_748 - default.offensive_removed


def test_input_is_split_into_whole_words() -> None:
    toks = load_tokenizer("bert").tokenize("The patient's théâtre, weekners!")
    assert toks == ["the", "patient", "'", "s", "theatre", ",", "weekners", "!"]
    assert not any(t.startswith("##") for t in toks)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0, 10.0])
def test_no_output_token_is_a_wordpiece_continuation(epsilon: float) -> None:
    out = dpcore.sanitize(SENTENCES, mechanism="santext", embedding="bert", epsilon=epsilon, seed=0)
    tokens = [t for line in out.lines for t in line.split()]
    assert tokens and not any(t.startswith("##") or t.startswith("[unused") for t in tokens)
    assert sum(len(s.split()) for s in SENTENCES) == len(tokens)  # one output word per input word


def test_the_wordpiece_option_draws_pieces_and_shows_them_token_by_token() -> None:
    # control: the paper's vocabulary does draw ## pieces at ε = 1, and they stay separate tokens
    out = dpcore.sanitize(SENTENCES, mechanism="santext", embedding="bert-wordpiece", epsilon=1.0, seed=0)
    tokens = [t for line in out.lines for t in line.split()]
    assert any(t.startswith("##") for t in tokens)
    assert all(t.startswith("##") or "##" not in t for t in tokens)  # never glued to a neighbour
