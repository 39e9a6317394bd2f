"""Tokenizers matching each embedding's vocabulary.

- ``glove``: lower-case, Penn-Treebank-like word splitting (GloVe 6B was trained on
  lower-cased, Stanford-tokenized Wikipedia + Gigaword, so ``don't`` → ``do n't`` and
  ``it's`` → ``it 's``). Sanitized tokens are joined with single spaces, as in the SanText
  paper's examples (Yue et al. 2021, Appendix A.3).
- ``bert``: the WordPiece tokenizer of all-MiniLM-L6-v2 (bert-base-uncased vocabulary, shipped
  in ``dpcore/data/minilm``), loaded from its ``tokenizer.json`` with the ``tokenizers``
  package: no torch, no transformers, no hub access. Sanitized pieces are joined with the
  WordPiece decoder (``##`` pieces glue to the previous token).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["BertTokenizer", "GloveTokenizer", "TextTokenizer"]


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
    sanitized, however long the line.
    """

    name = "bert"

    def __init__(self, tokenizer_json: str | Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_json))
        self._tok.no_padding()
        self._tok.no_truncation()

    def tokenize(self, text: str) -> list[str]:
        return list(self._tok.encode(text, add_special_tokens=False).tokens)

    def detokenize(self, tokens: list[str]) -> str:
        if not tokens:
            return ""
        return str(self._tok.decoder.decode(list(tokens)))
