"""Tokenizers matching each embedding's vocabulary.

- ``glove``: lower-case, Penn-Treebank-like word splitting (GloVe 6B was trained on
  lower-cased, Stanford-tokenized Wikipedia + Gigaword, so ``don't`` → ``do n't`` and
  ``it's`` → ``it 's``). Sanitized tokens are joined with single spaces, as in the SanText
  paper's examples (Yue et al. 2021, Appendix A.3).
- ``bert``: whole words, split by the normalizer and pre-tokenizer of all-MiniLM-L6-v2's
  tokenizer (bert-base-uncased, shipped in ``dpcore/data/minilm``): lower case, accents
  stripped, words and single punctuation marks. A word that is not one token of the vocabulary
  is out of vocabulary (no ``##`` continuation piece is ever drawn or glued to a neighbour).
  Tokens are joined with single spaces.
- ``bert-wordpiece``: the full WordPiece tokenizer (the SanText paper's vocabulary). Tokens are
  joined with single spaces, one token after another: a replaced ``##`` piece is shown as such,
  never glued to its neighbour.

Both load ``tokenizer.json`` with the ``tokenizers`` package: no torch, no transformers, no hub
access.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["BertTokenizer", "BertWordTokenizer", "GloveTokenizer", "TextTokenizer"]


@runtime_checkable
class TextTokenizer(Protocol):
    """Split one line of text into vocabulary tokens, and join tokens back into a line."""

    name: str

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text`` (one line)."""
        ...

    def detokenize(self, tokens: list[str]) -> str:
        """One line of text from ``tokens``."""
        ...


# PTB-style clitics first (they are GloVe tokens), then a word stem before n't, then words,
# then any single non-space, non-word character (punctuation and symbols).
_GLOVE_RE = re.compile(r"n't\b|'(?:s|re|ve|ll|d|m)\b|\w+?(?=n't\b)|\w+|[^\w\s]")


class GloveTokenizer:
    """Lower-case PTB-like tokenizer for GloVe 6B (see module docstring)."""

    name = "glove"

    def tokenize(self, text: str) -> list[str]:
        return _GLOVE_RE.findall(text.lower().replace("’", "'"))

    def detokenize(self, tokens: list[str]) -> str:
        return " ".join(tokens)


class BertTokenizer:
    """WordPiece (bert-base-uncased) from a ``tokenizer.json`` file, via ``tokenizers``.

    Padding and truncation configured in the file are switched off: every token of a line is
    sanitized, however long the line. :meth:`detokenize` joins tokens with spaces, token by token
    (``##`` pieces stay visible): a sanitized continuation piece glued to a replaced neighbour
    would make a word that neither the original nor the mechanism produced.
    """

    name = "bert-wordpiece"

    def __init__(self, tokenizer_json: str | Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_json))
        self._tok.no_padding()
        self._tok.no_truncation()

    def tokenize(self, text: str) -> list[str]:
        return list(self._tok.encode(text, add_special_tokens=False).tokens)

    def detokenize(self, tokens: list[str]) -> str:
        return " ".join(tokens)


class BertWordTokenizer:
    """Whole words with the BERT normalizer and pre-tokenizer of a ``tokenizer.json`` file.

    The words are what bert-base-uncased's WordPiece model would split further; here each is one
    token, in the vocabulary when it is one whole-word token of it (``bert`` embedding), else
    out of vocabulary.
    """

    name = "bert"

    def __init__(self, tokenizer_json: str | Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(tokenizer_json))
        self._normalizer = tok.normalizer
        self._pre = tok.pre_tokenizer

    def tokenize(self, text: str) -> list[str]:
        norm = self._normalizer.normalize_str(text) if self._normalizer is not None else text.lower()
        return [w for w, _ in self._pre.pre_tokenize_str(norm)]

    def detokenize(self, tokens: list[str]) -> str:
        return " ".join(tokens)
