"""Drawing many outputs of a black-box sanitizer and counting them, in bounded memory.

A word's samples are drawn in chunks (one ``sample`` call per chunk) and reduced at once to
counts per output word, so memory depends on the chunk and the number of distinct outputs, not
on the number of samples (10⁷ per word is fine). Outputs are mapped to integer codes through an
:class:`OutputCodebook` that starts with the vocabulary and grows with any other output a
sanitizer returns (a ``⊥`` placeholder, ``[UNK]``, an out-of-vocabulary word passed through).

Outputs outside V that never repeat
-----------------------------------
A sanitizer may return outputs that are all different: a word passed through with a fresh tag
appended (``"cat#7305…"``). Counted one by one, each is seen once, so no count could show that
only ``cat`` produces them, and the codebook would grow with every draw. So an output outside V
that *begins* with a vocabulary word w followed by a separator (a character that is neither a
letter nor a digit) and at least one more character is counted in w's **tag class**
``w⟨+tag⟩`` (the longest such w; :data:`TAG_AFTER`), and one that *ends* with w after a separator
in ``⟨tag+⟩w`` (:data:`TAG_BEFORE`); any other output keeps its own code (:func:`tag_classes`).
The rule is fixed in advance and looks at the output alone, so the audit tests M followed by a
fixed relabelling, whose privacy loss is at most M's (post-processing): every bound stays valid,
and a tag that reveals its input word becomes an event, {cat⟨+tag⟩}, that M(cat) produces and
M(dog) never does.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpcore.text.vocab import index_positions
from dpcore.validation import DPCoreError

__all__ = [
    "BLACKBOX_CHUNK",
    "FAST_CHUNK",
    "TAG_AFTER",
    "TAG_BEFORE",
    "OutputCodebook",
    "SanitizerRaised",
    "SegmentCounts",
    "draw_counts",
    "output_keys",
    "tag_classes",
]

#: Inputs per ``sample`` call for a black-box sanitizer (its outputs are Python strings).
BLACKBOX_CHUNK = 1 << 16
#: Draws per call on the id fast path of dpcore's own mechanisms.
FAST_CHUNK = 1 << 20


class SanitizerRaised(DPCoreError):
    """The sanitizer's own ``sample`` raised an exception (a finding, reported per word)."""


#: :meth:`SegmentCounts.from_codes` counts with one ``bincount`` where the keys (codes × segments)
#: number at most this many per draw, else by sorting the draws.
_DENSE_KEYS_PER_DRAW = 4


@dataclass(frozen=True)
class SegmentCounts:
    """A word's counts per segment of its draws, over the outputs it drew only.

    The screen draws about a thousand outputs of each word of a vocabulary of tens of
    thousands: counts over the whole vocabulary would be mostly zeros, and each |V|-long array
    costs its allocation's page faults (a fresh 400 KB array per half and per total at
    |V| = 50,000). These hold the same counts, sparse.

    Attributes
    ----------
    ids:
        The distinct output codes drawn, increasing (int64, each ≥ 0).
    counts:
        Shape (segments, ``ids.size``), int64: each segment's count of each code (0 where the
        code was drawn in another segment only).
    """

    ids: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_codes(cls, codes: np.ndarray, bounds: Sequence[int]) -> SegmentCounts:
        """Counts of ``codes[bounds[k]:bounds[k + 1]]`` for each segment k (codes ≥ 0).

        With ``code · K + k`` as each draw's key (K segments): where the keys are few beside the
        draws (:data:`_DENSE_KEYS_PER_DRAW`; many draws of each word of a small vocabulary), one
        ``bincount`` of the keys, O(draws + keys); else one sort, which puts each code's draws
        side by side, by segment, a run's length per segment being its count (O(draws · log),
        and nothing |V|-long). Both give the same counts.
        """
        k = len(bounds) - 1
        key = np.array(codes, dtype=np.int64)  # a copy: sorted in place
        if key.size == 0:
            return cls(np.zeros(0, dtype=np.int64), np.zeros((k, 0), dtype=np.int64))
        if k > 1:
            key *= k
            for j in range(1, k):
                key[bounds[j] : bounds[j + 1]] += j
        top = int(key.max()) // k + 1  # codes 0 … top − 1
        if top * k <= _DENSE_KEYS_PER_DRAW * key.size:
            table = np.bincount(key, minlength=top * k).reshape(top, k)
            ids = np.flatnonzero(table.any(axis=1))
            return cls(ids, np.ascontiguousarray(table[ids].T))
        key.sort()
        if k > 1:
            seg = key % k
            key //= k
        new = np.empty(key.size, dtype=bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        counts = np.empty((k, starts.size), dtype=np.int64)
        runs = counts[0]  # each code's draws in all segments, less the other segments' below
        np.subtract(starts[1:], starts[:-1], out=runs[:-1])
        runs[-1] = key.size - starts[-1]
        for j in range(1, k):
            counts[j] = np.add.reduceat((seg == j).astype(np.int64) if k > 2 else seg, starts)
            runs -= counts[j]
        return cls(key[starts], counts)

    @classmethod
    def from_dense(cls, counts: Sequence[np.ndarray]) -> SegmentCounts:
        """The same counts as dense arrays over codes (one per segment, any lengths)."""
        size = max((c.size for c in counts), default=0)
        full = np.zeros((len(counts), size), dtype=np.int64)
        for j, c in enumerate(counts):
            full[j, : c.size] = c
        ids = np.flatnonzero(full.any(axis=0))
        return cls(ids, full[:, ids])

    def dense(self, size: int) -> list[np.ndarray]:
        """The counts over codes 0…size − 1, one array per segment (codes ≥ size dropped)."""
        sc = self.below(size)
        full = np.zeros((sc.counts.shape[0], size), dtype=np.int64)
        full[:, sc.ids] = sc.counts
        return list(full)

    def below(self, size: int) -> SegmentCounts:
        """Only the codes < ``size`` (the vocabulary's ids)."""
        if self.ids.size == 0 or self.ids[-1] < size:
            return self
        n = int(np.searchsorted(self.ids, size))
        return SegmentCounts(self.ids[:n], self.counts[:, :n])

    def lookup(self, values: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """``values`` (last axis over :attr:`ids`: :attr:`counts`, or a total of the segments) at
        ``codes``, 0 for a code never drawn (any order, any values, negative ones included)."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.ids.size == 0:
            return np.zeros((*values.shape[:-1], codes.size), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, codes), self.ids.size - 1)
        return np.where(self.ids[pos] == codes, values[..., pos], 0)



#: The tag class of the outputs outside V that begin with vocabulary word w: ``w`` + this.
TAG_AFTER = "⟨+tag⟩"
#: The tag class of the outputs outside V that end with vocabulary word w: this + ``w``.
TAG_BEFORE = "⟨tag+⟩"
#: Separators looked past from each end of an output (its vocabulary word may hold some: ``u.s.``).
TAG_BOUNDARIES = 4


_SEPARATOR = re.compile(r"[\W_]")


def _key(label: str, vocab: pd.Index) -> str:
    """One output outside V → its key (:func:`tag_classes`; membership in V: the index's own hash
    table, nothing built per call)."""
    if label.endswith(TAG_AFTER) and label[: -len(TAG_AFTER)] in vocab:
        return label
    if label.startswith(TAG_BEFORE) and label[len(TAG_BEFORE) :] in vocab:
        return label
    cuts = [m.start() for m in _SEPARATOR.finditer(label)]
    cuts = [i for i in cuts if i < len(label) - 1]  # a separator, then at least one more character
    for i in reversed(cuts[:TAG_BOUNDARIES]):  # the longest word first
        if i > 0 and label[:i] in vocab:
            return label[:i] + TAG_AFTER
    cuts = [i for i in cuts if i > 0]  # at least one character before the separator
    for i in cuts[-TAG_BOUNDARIES:]:
        if label[i + 1 :] in vocab:
            return TAG_BEFORE + label[i + 1 :]
    return label


def tag_classes(labels: Sequence[str] | np.ndarray, base: pd.Index) -> np.ndarray:
    """The code key of each output *outside* the vocabulary: its tag class, or itself.

    ``w`` + :data:`TAG_AFTER` for an output that begins with vocabulary word ``w`` followed by a
    separator (neither a letter nor a digit) and at least one more character (the longest such
    ``w``, cut at one of the first :data:`TAG_BOUNDARIES` separators), else :data:`TAG_BEFORE` +
    ``w`` for one that ends with ``w`` after a separator and at least one character, else the
    output itself. A class key maps to itself.

    Parameters
    ----------
    labels:
        Distinct outputs outside the vocabulary, as strings (one look-up per label, not per draw).
    base:
        The vocabulary's index (word → id).

    Returns
    -------
    numpy.ndarray
        Object array of keys, one per label.

    Examples
    --------
    >>> import pandas as pd
    >>> tag_classes(["cat#91", "7_cat", "[UNK]", "cat⟨+tag⟩"], pd.Index(["cat", "dog"])).tolist()
    ['cat⟨+tag⟩', '⟨tag+⟩cat', '[UNK]', 'cat⟨+tag⟩']
    """
    arr = np.asarray(labels, dtype=object).ravel()
    return np.asarray([_key(str(x), base) for x in arr], dtype=object).reshape(arr.shape)


def output_keys(labels: Sequence[str] | np.ndarray, base: pd.Index) -> np.ndarray:
    """Outputs as the audit counts them: words of V as they are, any other output by its key
    (:func:`tag_classes`).

    Examples
    --------
    >>> import pandas as pd
    >>> output_keys(["dog", "dog#5", "⊥"], pd.Index(["cat", "dog"])).tolist()
    ['dog', 'dog⟨+tag⟩', '⊥']
    """
    arr = np.asarray(labels, dtype=object).ravel()
    out = arr.copy()
    miss = np.flatnonzero(index_positions(base, arr) < 0) if arr.size else np.zeros(0, dtype=np.int64)
    if miss.size:
        uniq, inv = np.unique(arr[miss].astype(str), return_inverse=True)
        out[miss] = tag_classes(uniq.astype(object), base)[inv]
    return out


class OutputCodebook:
    """Output word → integer code: the vocabulary first (code = id), then any new output.

    An output outside V is coded by its key (:func:`tag_classes`): outputs that begin or end with
    a vocabulary word after a separator share that word's tag class.
    """

    def __init__(self, words: Sequence[str] | np.ndarray, *, base_index: pd.Index | None = None) -> None:
        self.base = base_index if base_index is not None else pd.Index(np.asarray(words, dtype=object))
        self.n_base = len(self.base)
        self.extra: dict[Any, int] = {}

    def __len__(self) -> int:
        return self.n_base + len(self.extra)

    def label(self, code: int) -> str:
        """The output word of ``code`` (for an output outside V: its key)."""
        if code < self.n_base:
            return str(self.base[code])
        for k, v in self.extra.items():
            if v == code:
                return str(k)
        raise KeyError(code)

    def code(self, label: str) -> int:
        """The code of one output label (a new code for a key not seen before)."""
        at = index_positions(self.base, np.asarray([label], dtype=object))[0]
        if at >= 0:
            return int(at)
        if label in self.extra:
            return self.extra[label]
        return self.extra.setdefault(_key(str(label), self.base), len(self))

    def codes(self, outputs: Sequence[Any] | np.ndarray, expected: int) -> np.ndarray:
        """Codes of ``outputs`` (new keys get new codes); checks there are ``expected`` of them."""
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
        codes = index_positions(self.base, arr)
        miss = np.flatnonzero(codes < 0)
        if miss.size:
            keys = [o if isinstance(o, str) else repr(o) for o in arr[miss]]
            uniq, inv = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
            # distinct outputs outside V → their keys (a fresh tag per draw: one class per word)
            cls, back = np.unique(tag_classes(uniq, self.base), return_inverse=True)
            new = np.empty(len(cls), dtype=np.int64)
            for i, key in enumerate(cls):  # distinct keys only (at most |V| classes besides the others)
                new[i] = self.extra.setdefault(key, len(self))
            codes[miss] = new[back][inv]
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
    sparse: bool = False,
) -> Any:
    """Counts of every output code among ``n`` independent draws of M(``word``).

    dpcore's own mechanisms (with ``sample_ids``) skip the string round trip; anything else goes
    through ``sample(words, rng)`` in chunks of :data:`BLACKBOX_CHUNK`. With ``split`` (segment
    sizes summing to ``n``) the n draws are made as one stream, in the same calls as without it,
    and a list of counts is returned, one per consecutive segment (a stage's halves cost one
    ``sample_ids`` call, not one per half). With ``sparse`` the counts come back as one
    :class:`SegmentCounts` (a segment per element of ``split``), over the codes drawn only.

    Whatever the sanitizer raises, ``SystemExit`` included (a plugin calling ``sys.exit``),
    becomes a :class:`SanitizerRaised` naming it (``KeyboardInterrupt`` goes through). While it
    runs, its Python-level stdout goes to stderr, so a plugin that prints cannot corrupt JSON
    output (in this process and in every worker).
    """
    bounds = [0, *itertools.accumulate(int(s) for s in (split if split is not None else (n,)))]
    if bounds[-1] != n:
        raise ValueError("split must sum to n")
    fast = callable(getattr(sanitizer, "sample_ids", None))
    chunk = FAST_CHUNK if fast else BLACKBOX_CHUNK
    if fast and n <= chunk:  # one call (the screen's words): the same counts, less bookkeeping
        # counted per segment, the draws need not come back in draw order (a block's sampler
        # leaves each segment's sorted, as it searches them)
        by_segment = sparse and callable(getattr(sanitizer, "sample_ids_sorted", None))
        codes = np.asarray(
            _sample_chunk(sanitizer, fast, word, word_id, n, rng, bounds=bounds if by_segment else None)
        )
        if on_progress is not None:
            on_progress(n)
        if sparse:
            return SegmentCounts.from_codes(codes, bounds)
        size = max(len(codebook), int(codes.max()) + 1 if codes.size else 0)
        counts = [np.bincount(codes[lo:hi], minlength=size) for lo, hi in itertools.pairwise(bounds)]
        return counts if split is not None else counts[0]
    # a segment's counts start at its first chunk (no zeros to add to, no copies at the end)
    seg_counts: list[np.ndarray | None] = [None] * (len(bounds) - 1)
    done = 0
    while done < n:
        m = min(chunk, n - done)
        out = _sample_chunk(sanitizer, fast, word, word_id, m, rng)
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
    if sparse:
        return SegmentCounts.from_dense(counts)
    if split is None:
        return counts[0]
    size = max(c.size for c in counts)
    return [c if c.size == size else np.pad(c, (0, size - c.size)) for c in counts]


def _sample_chunk(
    sanitizer: Any,
    fast: bool,
    word: str,
    word_id: int,
    m: int,
    rng: np.random.Generator,
    bounds: Sequence[int] | None = None,
) -> Any:
    """One call of the sanitizer for ``m`` draws of ``word``; whatever it raises is a
    :class:`SanitizerRaised` naming it (see :func:`draw_counts`). With ``bounds``: its
    ``sample_ids_sorted`` (the same draws, each segment's sorted)."""
    from dpcore.textaudit.wrapping import stdout_to_stderr

    what = "sample_ids()" if fast else "sample()"
    try:
        with stdout_to_stderr():
            if bounds is not None:
                return sanitizer.sample_ids_sorted(word_id, bounds, rng)
            return sanitizer.sample_ids(word_id, m, rng) if fast else sanitizer.sample([word] * m, rng)
    except DPCoreError as exc:
        raise SanitizerRaised(f"the sanitizer's {what} refused {word!r}: {exc}") from None
    except SystemExit as exc:
        code = "" if exc.code is None else repr(exc.code)
        raise SanitizerRaised(f"the sanitizer's {what} called sys.exit({code}) on {word!r}") from None
    except Exception as exc:
        raise SanitizerRaised(
            f"the sanitizer's {what} raised {type(exc).__name__} on {word!r}: {exc}"
        ) from None


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
