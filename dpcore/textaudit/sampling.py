"""Drawing many outputs of a black-box sanitizer and counting them, in bounded memory.

A word's samples are drawn in chunks (one ``sample`` call per chunk) and reduced at once to
counts per output word, so memory depends on the chunk and the number of distinct outputs, not
on the number of samples (10⁷ per word is fine). Outputs are mapped to integer codes through an
:class:`OutputCodebook` that starts with the vocabulary and grows with any other output a
sanitizer returns (a ``⊥`` placeholder, ``[UNK]``, an out-of-vocabulary word passed through).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore.validation import DPCoreError

__all__ = ["BLACKBOX_CHUNK", "FAST_CHUNK", "OutputCodebook", "SanitizerRaised", "draw_counts"]

#: Inputs per ``sample`` call for a black-box sanitizer (its outputs are Python strings).
BLACKBOX_CHUNK = 1 << 16
#: Draws per call on the id fast path of dpcore's own mechanisms.
FAST_CHUNK = 1 << 20


class SanitizerRaised(DPCoreError):
    """The sanitizer's own ``sample`` raised an exception (a finding, reported per word)."""


class OutputCodebook:
    """Output word → integer code: the vocabulary first (code = id), then any new output."""

    def __init__(self, words: Sequence[str] | np.ndarray, *, base_index: pd.Index | None = None) -> None:
        self.base = base_index if base_index is not None else pd.Index(np.asarray(words, dtype=object))
        self.n_base = len(self.base)
        self.extra: dict[Any, int] = {}

    def __len__(self) -> int:
        return self.n_base + len(self.extra)

    def label(self, code: int) -> str:
        """The output word of ``code``."""
        if code < self.n_base:
            return str(self.base[code])
        for k, v in self.extra.items():
            if v == code:
                return str(k)
        raise KeyError(code)

    def code(self, label: str) -> int:
        """The code of one output label (a new code for a label not seen before)."""
        at = self.base.get_indexer([label])[0]
        return int(at) if at >= 0 else self.extra.setdefault(label, len(self))

    def codes(self, outputs: Sequence[Any] | np.ndarray, expected: int) -> np.ndarray:
        """Codes of ``outputs`` (new outputs get new codes); checks there are ``expected`` of them."""
        try:
            arr = np.asarray(outputs, dtype=object)
        except Exception as exc:  # a sanitizer returned something that is not a sequence
            raise SanitizerRaised(
                f"the sanitizer's sample() returned {type(outputs).__name__}: {exc}"
            ) from None
        if arr.ndim != 1 or arr.shape[0] != expected:
            got = arr.shape[0] if arr.ndim == 1 else f"shape {arr.shape}"
            raise SanitizerRaised(
                f"the sanitizer's sample() must return one output per input word: {expected} in, {got} out"
            )
        codes = self.base.get_indexer(arr).astype(np.int64)
        miss = np.flatnonzero(codes < 0)
        if miss.size:
            keys = [o if isinstance(o, str) else repr(o) for o in arr[miss]]
            uniq, inv = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
            new = np.empty(len(uniq), dtype=np.int64)
            for i, key in enumerate(uniq):  # distinct unknown outputs only (few)
                new[i] = self.extra.setdefault(key, len(self))
            codes[miss] = new[inv]
        return codes


def draw_counts(
    sanitizer: Any,
    word: str,
    word_id: int,
    n: int,
    rng: np.random.Generator,
    codebook: OutputCodebook,
    *,
    on_progress: Callable[[int], None] | None = None,
    split: Sequence[int] | None = None,
) -> Any:
    """Counts of every output code among ``n`` independent draws of M(``word``).

    dpcore's own mechanisms (with ``sample_ids``) skip the string round trip; anything else goes
    through ``sample(words, rng)`` in chunks of :data:`BLACKBOX_CHUNK`. With ``split`` (segment
    sizes summing to ``n``) the n draws are made as one stream, in the same calls as without it,
    and a list of counts is returned, one per consecutive segment (a stage's halves cost one
    ``sample_ids`` call, not one per half).

    Whatever the sanitizer raises, ``SystemExit`` included (a plugin calling ``sys.exit``),
    becomes a :class:`SanitizerRaised` naming it (``KeyboardInterrupt`` goes through). While it
    runs, its Python-level stdout goes to stderr, so a plugin that prints cannot corrupt JSON
    output (in this process and in every worker).
    """
    from dpcore.textaudit.contract import stdout_to_stderr

    bounds = np.cumsum([0, *(split if split is not None else (n,))])
    if bounds[-1] != n:
        raise ValueError("split must sum to n")
    # a segment's counts start at its first chunk (no zeros to add to, no copies at the end)
    seg_counts: list[np.ndarray | None] = [None] * (len(bounds) - 1)
    fast = callable(getattr(sanitizer, "sample_ids", None))
    chunk = FAST_CHUNK if fast else BLACKBOX_CHUNK
    what = "sample_ids()" if fast else "sample()"
    done = 0
    while done < n:
        m = min(chunk, n - done)
        try:
            with stdout_to_stderr():
                out = sanitizer.sample_ids(word_id, m, rng) if fast else sanitizer.sample([word] * m, rng)
        except DPCoreError as exc:
            raise SanitizerRaised(f"the sanitizer's {what} refused {word!r}: {exc}") from None
        except SystemExit as exc:
            code = "" if exc.code is None else repr(exc.code)
            raise SanitizerRaised(f"the sanitizer's {what} called sys.exit({code}) on {word!r}") from None
        except Exception as exc:
            raise SanitizerRaised(
                f"the sanitizer's {what} raised {type(exc).__name__} on {word!r}: {exc}"
            ) from None
        codes = np.asarray(out if fast else codebook.codes(out, m))
        size = max(len(codebook), int(codes.max()) + 1 if codes.size else 0)
        for k in range(len(seg_counts)):  # the segments this chunk overlaps
            lo, hi = max(done, int(bounds[k])), min(done + m, int(bounds[k + 1]))
            if lo >= hi:
                continue
            cur = seg_counts[k]
            at_least = size if cur is None else max(size, cur.size)
            got = np.bincount(codes[lo - done : hi - done], minlength=at_least)
            if cur is None:
                seg_counts[k] = got.astype(np.int64, copy=False)
            else:
                if got.size > cur.size:
                    cur = np.pad(cur, (0, got.size - cur.size))
                cur += got
                seg_counts[k] = cur
        done += m
        if on_progress is not None:
            on_progress(m)
    counts = [np.zeros(len(codebook), dtype=np.int64) if c is None else c for c in seg_counts]
    if split is None:
        return counts[0]
    size = max(c.size for c in counts)
    return [c if c.size == size else np.pad(c, (0, size - c.size)) for c in counts]


def eligible_outputs(sanitizer: Any, size: int) -> np.ndarray | None:
    """Mask over output codes of the outputs the sanitizer's guarantee covers (None: all).

    From its ``protected_ids()`` (SanText+'s V_P); outputs outside the vocabulary are never
    protected when the sanitizer names a protected set.
    """
    fn = getattr(sanitizer, "protected_ids", None)
    mask = fn() if callable(fn) else None
    if mask is None:
        return None
    out = np.ones(size, dtype=bool)
    out[: len(mask)] = mask
    out[len(mask) :] = False
    return out
