"""Rewrites as a room reads them: whole words, characters the page can draw, no listed word.

A rewriter's output is shown on the dashboard as text an audience reads at a glance, not as the
model's tokens. Three rules, applied in this order (:func:`shown_words`):

1. **WordPieces are joined into words.** DP-MLM writes BERT WordPieces separated by spaces; a piece
   that starts with ``##`` continues the word before it (``"pisa ##tures"`` is shown as
   ``"pisatures"``), as BERT's tokenizer writes its tokens out. The joined word is a string the
   rewriter produced, not necessarily an English word. A piece is not joined to a word the
   rewriter kept from its input (``keep``): the flawed DP-MLM keeps "was" verbatim and replaces
   the next token with a piece, and ``"was ##hard"`` shown as "washard" would hide the kept word
   that the audit's events count (they read the words as written). A ``##`` piece with no word to
   join (the first token, after a kept word, or next to a piece that is not drawn: rule 2) is
   shown on its own, without the ``##``.
2. **Characters outside the Latin script are not drawn.** The model's vocabulary holds pieces in
   many scripts (Japanese, Korean, Bengali, Arabic, mathematical symbols, …); the page's font
   draws some of them as empty boxes. A word with any character other than Latin letters (with
   their accents), digits, ASCII punctuation and common typographic punctuation is shown as
   :data:`NON_LATIN` (``[non-Latin]``). Such a piece is never joined: its neighbours keep their own
   words. The leading and trailing ASCII punctuation of a token (quotes, a full stop) stays.
3. **Listed words are left out.** Joining pieces can make a word of dpcore's left-out list
   (:func:`dpcore.text.offensive.is_offensive`: slurs, insults and the reviewed words, in every
   inflection) that no single piece is, and a rewriter that copies its input copies a listed word
   of it; such a word is shown as :data:`LEFT_OUT` (``[left out]``).

Only what is *shown* changes: the audit, its events, its counts and the downloads keep the
rewrites exactly as the rewriter wrote them. An event's text (:func:`shown_event`) goes through
rules 2 and 3 but is never joined: an event is about the tokens as written.

Examples
--------
>>> shown_text("my ##uve gulped was pisa ##tures with ##リ")
'myuve gulped was pisatures with [non-Latin]'
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Iterable

__all__ = [
    "LEFT_OUT",
    "NON_LATIN",
    "drawable",
    "join_wordpieces",
    "shown_event",
    "shown_text",
    "shown_word",
    "shown_words",
]

#: What a word with a character outside the Latin script is shown as.
NON_LATIN = "[non-Latin]"
#: What a word of dpcore's left-out list (:mod:`dpcore.text.offensive`) is shown as.
LEFT_OUT = "[left out]"
#: Punctuation kept around a token's core (``#`` is not: it starts a WordPiece continuation).
_EDGE = set(string.punctuation) - {"#"}


def _drawable_char(ch: str) -> bool:
    cp = ord(ch)
    if unicodedata.category(ch)[0] in "CZ":  # control, format (bidi overrides, zero-width), spaces
        return False
    return (
        cp < 0x250  # ASCII, Latin-1 Supplement, Latin Extended-A and -B
        or 0x300 <= cp < 0x370  # combining accents
        or 0x1E00 <= cp < 0x1F00  # Latin Extended Additional
        or 0x2010 <= cp <= 0x2027  # dashes, quotes, ellipsis
        or 0x2030 <= cp <= 0x205E  # per mille, primes, other punctuation
    )


def drawable(text: str) -> bool:
    """Whether every character of ``text`` is Latin script, a digit or common punctuation.

    >>> drawable("café"), drawable("清"), drawable("x′"), drawable("a\\u202eb")
    (True, False, True, False)
    """
    return all(_drawable_char(ch) for ch in text)


def _split(token: str) -> tuple[str, str, str]:
    """``token`` as (leading punctuation, core, trailing punctuation)."""
    i, j = 0, len(token)
    while i < j and token[i] in _EDGE:
        i += 1
    while j > i and token[j - 1] in _EDGE:
        j -= 1
    return token[:i], token[i:j], token[j:]


def _key(token: str) -> str:
    """A token as words are compared: its core (:func:`_split`), lower case."""
    return _split(token)[1].lower()


def join_wordpieces(text: str, *, keep: Iterable[str] = ()) -> list[str]:
    """The whitespace tokens of ``text`` with ``##`` continuation pieces joined to the word before.

    A piece is joined only when it and the word before are :func:`drawable` (a piece that is not
    drawn stays apart, so it does not take a drawn word with it) and the word before is none of
    ``keep`` (the input's words: a word kept verbatim stays as written; compared by core, in lower
    case); an unjoined piece loses its ``##``. A lone ``##`` is kept as it is.

    Parameters
    ----------
    text
        A rewrite, exactly as the rewriter wrote it.
    keep
        Words that take no continuation (the words of the rewriter's input).

    Examples
    --------
    >>> join_wordpieces("1924 ##iere pisa ##tures ##リ ##ab")
    ['1924iere', 'pisatures', 'リ', 'ab']
    >>> join_wordpieces("##ed the cat"), join_wordpieces("my was ##hard", keep=["Was"])
    (['ed', 'the', 'cat'], ['my', 'was', 'hard'])
    """
    kept = {_key(w) for w in keep} - {""}
    words: list[str] = []
    joinable = False  # whether the last word may take a continuation
    for tok in text.split():
        piece = tok[2:] if tok.startswith("##") and len(tok) > 2 else None
        if piece is None:
            words.append(tok)
            joinable = drawable(tok) and _key(tok) not in kept
        elif joinable and drawable(piece):
            words[-1] += piece
        else:
            words.append(piece)
            joinable = drawable(piece) and _key(piece) not in kept
    return words


def shown_word(token: str) -> str:
    """One token as the page shows it: :data:`NON_LATIN` for a core with a character outside the
    Latin script, :data:`LEFT_OUT` for a core on dpcore's left-out list, else the token; the
    token's leading and trailing ASCII punctuation stays around a placeholder.

    >>> shown_word("'##ema'"), shown_word("ж."), shown_word("cat")
    ("'##ema'", '[non-Latin].', 'cat')
    """
    from dpcore.text.offensive import is_offensive

    lead, core, trail = _split(token)
    if not core:
        return token
    if not drawable(core):
        return lead + NON_LATIN + trail
    if is_offensive(core):
        return lead + LEFT_OUT + trail
    return token


def shown_words(text: str, *, join: bool = True, keep: Iterable[str] = ()) -> list[str]:
    """The words of a rewrite as the page shows them (the module's three rules, in order).

    Parameters
    ----------
    text
        A rewrite, exactly as the rewriter wrote it.
    join
        Join ``##`` WordPiece continuations to the word before (rule 1); False keeps the tokens
        as written (an event's text).
    keep
        The input's words: none of them takes a continuation (:func:`join_wordpieces`).
    """
    tokens = join_wordpieces(text, keep=keep) if join else text.split()
    return [shown_word(t) for t in tokens]


def shown_text(text: str, *, join: bool = True, keep: Iterable[str] = ()) -> str:
    """A rewrite as the page shows it, its words separated by single spaces (:func:`shown_words`)."""
    return " ".join(shown_words(text, join=join, keep=keep))


def shown_event(event: str) -> str:
    """An event's description as the page shows it: rules 2 and 3, never joined (the event is
    about the tokens as written).

    >>> shown_event("output contains the word n-gram '清'")
    "output contains the word n-gram '[non-Latin]'"
    """
    return shown_text(event, join=False)
