"""The black-box interface a text sanitizer needs to be audited, and dpcore's own adapters.

Any object with four members can be audited (:class:`TextSanitizer`):

``name``
    A label for reports.
``epsilon``
    The privacy parameter it claims.
``guarantee``
    ``"ldp"``: Pr[M(x) ∈ S] ≤ e^ε·Pr[M(x′) ∈ S] for every pair of words and every event S;
    ``"metric"``: the same with e^{ε·d(x, x′)}, d the Euclidean distance of the chosen
    embedding (metric LDP, Chatzikokolakis et al. 2013; SanText's MLDP, Yue et al. 2021, Def. 2).
``sample(words, rng)``
    One independent output word per input word, drawn with the ``numpy.random.Generator``.

Optional members refine the audit:

``log_prob_row(word) -> (outputs, log_probs)``
    The exact output distribution of one input (:class:`ExactTextSanitizer`); the audit then
    reports the exact worst-case loss of each pair beside the empirical one.
``claimed_bound(x, x_prime, distance) -> float``
    A pair's claimed bound when it is not ε or ε·d (for example SanText+'s ε·d + ε₀, or a
    metric on another distance).
``claim``
    A :class:`~dpcore.textaudit.claims.ClaimModel`: the paper's claim with its scope, covered
    outputs and premise (dpcore's, pyPANTERA's and mldp-text's adapters have one). Pairs it
    does not cover are never confirmed, and a premise it states is checked on the
    implementation (``premise`` in the result).
``protected(outputs) -> bool array``
    Which outputs the guarantee covers (SanText+'s UMLDP protects V_P only, Yue et al. 2021,
    Def. 3); events are built from protected outputs only.

Nothing here runs user code: :mod:`dpcore.textaudit.loaders` resolves names, and only the CLI
loads code from a path the user names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpcore.text.mechanisms import TextMechanism
from dpcore.textaudit.claims import dpcore_claim
from dpcore.validation import DPCoreError

__all__ = [
    "GUARANTEES",
    "DpcoreSanitizer",
    "ExactTextSanitizer",
    "TextSanitizer",
    "check_sanitizer",
]

GUARANTEES = ("ldp", "metric")


@runtime_checkable
class TextSanitizer(Protocol):
    """A word-level sanitizer as the text audit sees it (a black box)."""

    name: str
    epsilon: float
    guarantee: str

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> Sequence[str]:
        """One independent output word per input word."""
        ...


@runtime_checkable
class ExactTextSanitizer(TextSanitizer, Protocol):
    """A sanitizer that also knows its exact output distribution."""

    def log_prob_row(self, word: str) -> tuple[Sequence[str], np.ndarray]:
        """All outputs y with Pr[M(word) = y] > 0 and their natural-log probabilities."""
        ...


def check_sanitizer(obj: object) -> TextSanitizer:
    """Validate that ``obj`` has the audit interface; raise one clear :class:`DPCoreError`."""
    missing = [a for a in ("name", "epsilon", "guarantee", "sample") if not hasattr(obj, a)]
    if missing:
        raise DPCoreError(
            f"the sanitizer ({type(obj).__name__}) lacks {', '.join(missing)}; it needs name, epsilon, "
            "guarantee ('ldp' or 'metric') and sample(words, rng)"
        )
    if not callable(obj.sample):
        raise DPCoreError("the sanitizer's sample must be callable: sample(words, rng) -> list of words")
    guarantee = obj.guarantee
    if guarantee not in GUARANTEES:
        raise DPCoreError(f"the sanitizer's guarantee must be 'ldp' or 'metric', got {guarantee!r}")
    eps = obj.epsilon
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
        raise DPCoreError(f"the sanitizer's epsilon must be a number, got {type(eps).__name__}")
    if not (math.isfinite(float(eps)) and float(eps) >= 0):
        raise DPCoreError(f"the sanitizer's epsilon must be finite and ≥ 0, got {eps!r}")
    return obj  # type: ignore[return-value]


class DpcoreSanitizer:
    """Adapter: a registered dpcore :class:`~dpcore.text.mechanisms.TextMechanism` as a black box.

    Its guarantee is its own privacy map (:attr:`TextMechanism.privacy`): metric for SanText
    (Yue et al. 2021, Thm 1) and Feyisetan et al. (2020); ε·d + ε₀ on protected outputs for
    SanText+ (Thm 2); 0-LDP for the random baseline. Mechanisms with a closed form also give
    their exact rows.

    Parameters
    ----------
    mechanism:
        A dpcore text mechanism.
    """

    def __init__(self, mechanism: TextMechanism) -> None:
        if not isinstance(mechanism, TextMechanism):
            raise DPCoreError("DpcoreSanitizer wraps a dpcore.text TextMechanism")
        self.mechanism = mechanism
        priv = mechanism.privacy
        self.name = mechanism.name
        self.epsilon = float(priv.epsilon)
        self.epsilon0 = float(priv.epsilon0)
        self.guarantee = "ldp" if priv.notion == "LDP" else "metric"
        self.citation = priv.citation
        self._words = mechanism.vocab.words
        self.claim = dpcore_claim(mechanism)
        self._protected_ids = self.claim.protected

    @property
    def exact(self) -> bool:
        return bool(self.mechanism.has_exact_distribution)

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """Draw M(x) for every word (vectorised; every word must be in the vocabulary)."""
        ids = self.mechanism.vocab.ids(words)
        if ids.size and ids.min() < 0:
            bad = [w for w, i in zip(words, ids, strict=True) if i < 0][:3]
            raise DPCoreError(f"not in the {self.mechanism.vocab.embedding} vocabulary: {bad}")
        return self._words[self.mechanism.sample_ids(ids, rng)]

    def sample_ids(self, word_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """Fast path for the audit: ``n`` draws of M(word) as vocabulary ids."""
        return self.mechanism.sample_ids(np.full(n, word_id, dtype=np.int64), rng)

    def row_blocks(self) -> Any | None:
        """The audit engine's block capability (:class:`~dpcore.text.mechanisms.RowBlocks`).

        ``row_blocks().block(ids).sample_ids(word_id, n, rng)`` draws like :meth:`sample_ids`
        (the same uniforms in the same order from ``rng``), the rows of a block's words coming
        from one matrix product. None, and the engine draws word by word, for mechanisms that
        share nothing between words (noisy nearest neighbour: each word's draws are already one
        product of its noisy points with the vocabulary) and for subclasses that override
        :meth:`sample_ids` (their draws are theirs, not the mechanism's).
        """
        if type(self).sample_ids is not DpcoreSanitizer.sample_ids:
            return None
        fn = getattr(self.mechanism, "row_blocks", None)
        return fn() if callable(fn) else None

    def claimed_bound(self, x: str, x_prime: str, distance: float) -> float:
        """ε·d(x, x′) + ε₀ (ε₀ = 0 except for SanText+; LDP: ε): the mechanism's claim model
        (:attr:`claim`, :func:`dpcore.textaudit.claims.dpcore_claim`).

        d is the metric of the mechanism's own claim: the embedding's Euclidean distance, or the
        mechanism's ``privacy_distance`` where it has one (the Mahalanobis mechanisms' d_RM).
        +∞ (no claim) for pairs outside the mechanism's scope, when it has one
        (``pair_in_scope``: CusText claims ε-LDP only within a group).
        """
        ids = self.mechanism.vocab.ids([x, x_prime])
        if ids.min() < 0:
            if self.claim.scope is not None:
                return math.inf
            return self.epsilon if self.guarantee == "ldp" else self.epsilon * distance + self.epsilon0
        return float(self.claim.bounds(ids[:1], ids[1:], np.array([float(distance)]))[0])

    def claimed_bounds_ids(self, x: np.ndarray, x_prime: np.ndarray, distance: np.ndarray) -> np.ndarray:
        """:meth:`claimed_bound` for many pairs of vocabulary ids at once (the screen's candidates).

        A subclass that overrides :meth:`claimed_bound` is asked pair by pair, so its own claim
        is the one used.
        """
        x = np.asarray(x, dtype=np.int64)
        x_prime = np.asarray(x_prime, dtype=np.int64)
        distance = np.asarray(distance, dtype=np.float64)
        if type(self).claimed_bound is not DpcoreSanitizer.claimed_bound:
            w, triples = self._words, zip(x, x_prime, distance, strict=True)
            return np.array([self.claimed_bound(str(w[i]), str(w[j]), float(d)) for i, j, d in triples])
        return self.claim.bounds(x, x_prime, distance)

    def protected_ids(self) -> np.ndarray | None:
        """Mask over vocabulary ids of the outputs the guarantee covers (None: all)."""
        return self._protected_ids

    def log_prob_row(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``log Pr[M(word) = y]`` over the whole vocabulary (closed-form mechanisms)."""
        if not self.mechanism.has_exact_distribution:
            raise DPCoreError(f"{self.name} has no closed-form output distribution")
        wid = self.mechanism.vocab.ids([word])
        if wid[0] < 0:
            raise DPCoreError(f"{word!r} is not in the vocabulary")
        (_, row), *_ = list(self.mechanism.iter_log_rows(wid))
        return self._words, row[0]

    def describe(self) -> dict[str, Any]:
        return {"adapter": "dpcore", **self.mechanism.params()}
