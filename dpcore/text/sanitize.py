"""Text in, sanitized text out: tokenize, map every token with a mechanism, detokenize.

Every line is sanitized independently and token by token (Yue et al. 2021, Algorithms 1–2), so
line count and order are kept. The whole input is mapped in one vectorised pass: tokens become
ids by one hash lookup, the mechanism samples all positions at once.

Out-of-vocabulary policy
------------------------
A token that is not in V has no output distribution. ``oov="mask"`` (the default) replaces every
such token by the fixed string ``[UNK]``: nothing about *which* OOV word was written is released
(the output only reveals that some word outside V stood there). ``oov="keep"`` copies OOV tokens
unchanged, which releases them in clear: it exists for inspection only. Either way OOV tokens
are counted and reported, and the privacy guarantee covers the in-vocabulary tokens only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore import __version__
from dpcore.files import check_output_path, write_atomic
from dpcore.rng import make_rng
from dpcore.text.embeddings import load_tokenizer
from dpcore.text.mechanisms import TextMechanism
from dpcore.text.tokenize import TextTokenizer
from dpcore.validation import DPCoreError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PAGE_CHARS",
    "OOV_POLICIES",
    "OOV_TOKEN",
    "SanitizedText",
    "check_output_path",
    "check_text",
    "draw_rng",
    "read_text_file",
    "sanitize_lines",
    "split_lines",
    "write_atomic",
]

#: Largest input file the CLI accepts.
MAX_FILE_BYTES = 5_000_000
#: Largest text the dashboard accepts.
MAX_PAGE_CHARS = 20_000
OOV_POLICIES = ("mask", "keep")
OOV_TOKEN = "[UNK]"


def check_text(text: object, *, max_chars: int = MAX_PAGE_CHARS, what: str = "text") -> str:
    """Validate text from a user: a non-empty str of at most ``max_chars`` characters."""
    if not isinstance(text, str):
        raise DPCoreError(f"{what} must be a string")
    if "\x00" in text:
        raise DPCoreError(f"{what} contains NUL bytes; it looks like a binary file, not text")
    if not text.strip():
        raise DPCoreError(f"{what} is empty")
    if len(text) > max_chars:
        raise DPCoreError(f"{what} has {len(text):,} characters; the limit is {max_chars:,}")
    return text


def decode_text(data: bytes, *, what: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Decode user bytes as UTF-8 text (a BOM is allowed) with clear errors."""
    if len(data) > max_bytes:
        raise DPCoreError(f"{what} is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:g} MB")
    if not data.strip():
        raise DPCoreError(f"{what} is empty")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DPCoreError(f"{what} is UTF-16 text; save it as UTF-8")
    if b"\x00" in data:
        raise DPCoreError(f"{what} looks binary (it contains NUL bytes); give UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DPCoreError(f"{what} is not UTF-8 text (bad byte at offset {exc.start})") from None


def read_text_file(
    path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, kind: str = "input file"
) -> str:
    """Read a user's UTF-8 text file, refusing empty, binary, non-UTF-8 or too-large files.

    ``kind`` names the file in error messages (``"input file"``, ``"vocabulary file"``).
    """
    p = Path(path)
    what = f"{kind} {str(p)!r}"
    try:
        st = p.stat()
    except OSError:
        raise DPCoreError(f"{what} does not exist or cannot be read") from None
    if not p.is_file():
        raise DPCoreError(f"{what} is not a regular file")
    if st.st_size > max_bytes:
        raise DPCoreError(f"{what} is {st.st_size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:g} MB")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DPCoreError(f"{what} cannot be read: {exc.strerror}") from None
    return decode_text(data, what=what, max_bytes=max_bytes)


def split_lines(text: str) -> list[str]:
    """Split text into lines at ``\n``, ``\r\n`` and ``\r`` only.

    ``str.splitlines`` also breaks at form feeds, vertical tabs, U+0085, U+2028 and U+2029, so
    a file holding one of them would come back with more lines than it had. A final line break
    does not start an empty last line (as with ``splitlines``).
    """
    parts = _LINE_BREAK.split(text)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class SanitizedText:
    """The result of :func:`sanitize_lines`, with per-token alignment for inspection.

    Attributes
    ----------
    lines:
        Sanitized lines, one per input line.
    original_tokens, sanitized_tokens:
        Tokens per line, aligned position by position.
    oov:
        Per line, a boolean mask of out-of-vocabulary positions.
    parameters:
        Mechanism parameters, seed, OOV policy and dpcore version.
    """

    lines: list[str]
    original_tokens: list[list[str]]
    sanitized_tokens: list[list[str]]
    oov: list[np.ndarray]
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def n_tokens(self) -> int:
        return sum(len(t) for t in self.original_tokens)

    @property
    def n_oov(self) -> int:
        return int(sum(int(m.sum()) for m in self.oov))

    @property
    def n_replaced(self) -> int:
        return sum(
            sum(a != b for a, b in zip(o, s, strict=True))
            for o, s in zip(self.original_tokens, self.sanitized_tokens, strict=True)
        )

    def summary(self) -> dict[str, Any]:
        """Counts for reports: lines, tokens, replaced tokens, OOV tokens."""
        return {
            "lines": len(self.lines),
            "tokens": self.n_tokens,
            "replaced": self.n_replaced,
            "oov": self.n_oov,
        }


def draw_rng(seed: int, draw: int) -> np.random.Generator:
    """The generator of draw ``draw`` (1-based) of a repeated sanitization with ``seed``.

    Draw 1 is ``np.random.default_rng(seed)``: exactly what :func:`sanitize_lines` with
    ``seed=seed`` and ``python -m dpcore sanitize --seed SEED`` use, so the dashboard's "draw 1,
    seed S" is the library's and the CLI's output. Draw k ≥ 2 is the independent child stream
    ``SeedSequence(seed, spawn_key=(k - 1,))`` (``--draw K`` on the CLI).

    Parameters
    ----------
    seed
        A non-negative integer seed.
    draw
        The draw number, from 1.
    """
    if int(draw) < 1:
        raise DPCoreError(f"draw must be at least 1, got {draw}")
    if int(draw) == 1:
        return np.random.default_rng(int(seed))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(draw) - 1,)))


def sanitize_lines(
    lines: list[str],
    mechanism: TextMechanism,
    *,
    seed: int | np.random.Generator | None,
    oov: str = "mask",
    tokenizer: TextTokenizer | None = None,
) -> SanitizedText:
    """Sanitize each line token by token with ``mechanism`` (Yue et al. 2021, Algorithms 1–2).

    Parameters
    ----------
    lines:
        Input lines (each sanitized independently; empty lines stay empty).
    mechanism:
        A text mechanism (its vocabulary fixes V and the embedding).
    seed:
        Seed or generator; an int (or a fresh one for None) is recorded in ``parameters``.
    oov:
        ``"mask"`` (default) or ``"keep"``; see the module docstring.
    tokenizer:
        Defaults to the tokenizer of the mechanism's embedding.
    """
    if oov not in OOV_POLICIES:
        raise DPCoreError(f"oov must be one of {', '.join(OOV_POLICIES)}, got {oov!r}")
    if isinstance(lines, str | bytes):
        raise DPCoreError("lines must be a list of strings, not one string (split it with .splitlines())")
    lines = list(lines)
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise DPCoreError(f"line {i + 1} is a {type(line).__name__}, not a string")
    if tokenizer is None:
        tokenizer = load_tokenizer(mechanism.vocab.embedding)
    recorded_seed: int | None = None
    if not isinstance(seed, np.random.Generator):
        from dpcore.rng import resolve_seed

        recorded_seed = resolve_seed(seed)
        seed = recorded_seed
    rng = make_rng(seed)
    tok_lines = [tokenizer.tokenize(line) for line in lines]
    lengths = np.fromiter((len(t) for t in tok_lines), dtype=np.int64, count=len(tok_lines))
    flat = np.fromiter((t for ts in tok_lines for t in ts), dtype=object, count=int(lengths.sum()))
    vocab = mechanism.vocab
    ids = vocab.ids(flat)
    known = ids >= 0
    out = flat.copy()
    if known.any() and getattr(mechanism, "contextual", False):
        # Contextual mechanisms (dp-mlm) draw each token given its whole line.
        cut = np.cumsum(lengths)[:-1]
        per_line = [p[k] for p, k in zip(np.split(ids, cut), np.split(known, cut), strict=True)]
        out[known] = vocab.words[np.concatenate(mechanism.sample_lines(per_line, rng))]
    elif known.any():
        out[known] = vocab.words[mechanism.sample_ids(ids[known], rng)]
    if oov == "mask":
        out[~known] = OOV_TOKEN
    cuts = np.cumsum(lengths)[:-1]
    san_lines = [list(part) for part in np.split(out, cuts)] if len(lines) else []
    oov_masks = list(np.split(~known, cuts)) if len(lines) else []
    result = SanitizedText(
        lines=[tokenizer.detokenize(t) for t in san_lines],
        original_tokens=tok_lines,
        sanitized_tokens=san_lines,
        oov=oov_masks,
    )
    result.parameters = {
        **mechanism.params(),
        "seed": recorded_seed,
        "oov_policy": oov,
        "tokenizer": tokenizer.name,
        "dpcore_version": __version__,
    }
    return result
