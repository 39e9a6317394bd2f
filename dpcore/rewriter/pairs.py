"""Neighbouring inputs for the rewriter audit: given, or built from public text.

``one-word``
    A sentence and the same sentence with one word changed (the neighbouring relation of
    document-level DP for a single edit). The word and its replacement are drawn with the seed:
    the replacement is an ordinary English word (a whole-word token of the shipped
    bert-base-uncased vocabulary, offensive words left out) and, for a per-token claim whose
    premise is equal length, one with as many tokens as the word it replaces.
``unrelated``
    Two unrelated sentences of the public corpus (of equal token count when the claim's premise
    asks for it): the largest change a document-level claim covers.

Sentences are drawn from the Lee news corpus shipped with gensim
(:func:`dpcore.text.corpora.load_corpus`), 6 to 16 words long, or are the user's ``--x``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np

from dpcore.rng import make_rng
from dpcore.validation import DPCoreError

__all__ = ["PAIR_KINDS", "build_pairs", "corpus_sentences", "one_word_neighbour"]

PAIR_KINDS = ("one-word", "unrelated")
_WORD = re.compile(r"^[a-z]{3,}$")


@functools.lru_cache(maxsize=1)
def _replacement_words() -> tuple[str, ...]:
    """Ordinary words: whole-word entries of the shipped WordPiece vocabulary, ids 2,000–12,000
    (the vocabulary is roughly in frequency order there), not stopwords, not offensive."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from dpcore.models.minilm import minilm_file
    from dpcore.text.offensive import offensive_mask

    vocab = minilm_file("vocab.txt").read_text(encoding="utf-8").split("\n")[2000:12000]
    words = [w for w in vocab if _WORD.match(w) and w not in ENGLISH_STOP_WORDS]
    bad = offensive_mask(np.asarray(words, dtype=object))
    return tuple(w for w, b in zip(words, bad, strict=True) if not b)


@functools.lru_cache(maxsize=1)
def corpus_sentences() -> tuple[str, ...]:
    """Lee-corpus sentences of 6–16 words (public text for built pairs)."""
    from dpcore.text.corpora import load_corpus

    out = []
    for line in load_corpus("lee"):
        words = line.split()
        if 6 <= len(words) <= 16:
            out.append(" ".join(words))
    return tuple(dict.fromkeys(out))


def one_word_neighbour(
    text: str, rng: np.random.Generator, count_tokens: Callable[[str], int] | None = None
) -> str:
    """``text`` with one word (drawn with ``rng``) replaced by an ordinary word.

    With ``count_tokens``, the replacement keeps the text's token count.
    """
    words = str(text).split()
    if not words:
        raise DPCoreError("an empty text has no word to change")
    pool = _replacement_words()
    target = count_tokens(str(text)) if count_tokens is not None else None
    for pos in rng.permutation(len(words)):
        for w in rng.choice(len(pool), size=min(200, len(pool)), replace=False):
            new = pool[int(w)]
            if new == words[pos].lower():
                continue
            cand = " ".join([*words[:pos], new, *words[pos + 1 :]])
            if target is None or count_tokens(cand) == target:  # type: ignore[misc]
                return cand
    raise DPCoreError(f"no one-word neighbour of {text!r} keeps its token count")


def build_pairs(
    *,
    kind: str,
    n_pairs: int,
    seed: int,
    x: str | None = None,
    count_tokens: Callable[[str], int] | None = None,
) -> list[tuple[str, str]]:
    """``n_pairs`` pairs of the given kind, seeded (``x``: the first input of every pair).

    Parameters
    ----------
    kind:
        ``"one-word"`` or ``"unrelated"``.
    n_pairs:
        How many pairs.
    seed:
        The audit's seed (the pairs are drawn from their own stream of it).
    x:
        The user's sentence (default: sentences of the public corpus).
    count_tokens:
        The rewriter's token count, when its claim's premise is equal length.
    """
    from dpcore.rng import cell_seed_sequence

    if kind not in PAIR_KINDS:
        raise DPCoreError(f"pair kind must be one of {', '.join(PAIR_KINDS)}, got {kind!r}")
    rng = make_rng(np.random.default_rng(cell_seed_sequence(int(seed), "rewriter-audit", "pairs")))
    sentences = corpus_sentences()
    out: list[tuple[str, str]] = []
    order = rng.permutation(len(sentences))
    if kind == "one-word":
        firsts = [x] * n_pairs if x is not None else [sentences[i] for i in order[:n_pairs]]
        for first in firsts:
            out.append((first, one_word_neighbour(first, rng, count_tokens)))
        return out
    lengths: dict[int, list[str]] = {}
    for i in order:
        s = sentences[i]
        key = count_tokens(s) if count_tokens is not None else 0
        lengths.setdefault(key, []).append(s)
    firsts = [x] * n_pairs if x is not None else [sentences[i] for i in order[:n_pairs]]
    for first in firsts:
        key = count_tokens(first) if count_tokens is not None else 0
        partners = [s for s in lengths.get(key, []) if s != first and all(s != p for _, p in out)]
        if not partners:
            raise DPCoreError(f"no unrelated sentence of the corpus matches {first!r}'s token count")
        out.append((first, partners[int(rng.integers(len(partners)))]))
    return out
