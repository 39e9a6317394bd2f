"""FENCED: word-level sanitizers whose claims are false, for the text audit to catch.

Nothing here is private at its claimed ε. Each class reproduces one documented defect, in our
own code:

- :class:`OverclaimedRandomizedResponse` — k-ary randomized response whose keep probability is
  computed at ``factor``·ε (default 3) while ε is claimed: the accounting mistake of charging ε
  where more is spent (the pattern Habernal 2021 found in ADePT and Lyu et al. 2020a).
- :class:`BottomFallbackTEM` — the Truncated Exponential Mechanism (Carvalho et al., SDM 2023,
  Algorithm 1) whose ⊥ branch returns the *input word* instead of a uniform word outside the
  γ-ball. pyPANTERA 1.0.2 ships this behaviour: in
  ``SamplingPerturbationMechanism/tem.py``, ``_processWord`` calls ``np.random.choice`` on a
  list of embedding vectors (which raises), and its ``except`` branch returns ``word``.
- :class:`InputAwareVickrey` — the Vickrey mechanism (Xu et al., PrivateNLP 2021, Algorithm 1)
  that, after the noise step, looks at the input again and drops the input word from the two
  candidates when it is the noisy vector's nearest neighbour, as the MLDP library
  (sjmeis/MLDP, ``MLDP.py``, class ``VickreyMechanism``) does. Reading the private input after
  the noise step voids the post-processing argument.
- :class:`OneWordCalibratedTruncatedGumbel` — the Truncated Gumbel mechanism (Carvalho et al.,
  FLAIRS 2021) calibrated from the distances of *one* word to the others, as sjmeis/MLDP's
  ``TruncatedGumbel`` does (one ``random.sample`` word). The calibration needs Δ_min, the
  smallest distance between *any* two words; one word's nearest neighbour is farther than that
  for almost every word, so a and 1/b come out too large and less noise is added than the proof
  assumes (the premise Δ_min ≤ d(w, w′) for all pairs fails). Here the word is drawn with a
  recorded seed so that the audit is reproducible.

They satisfy the :class:`~dpcore.textaudit.interface.TextSanitizer` protocol and are offered by
the text audit under the ``flawed:`` prefix, never by the Sanitize page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore.text.nearest import POSITION_CHUNK, nearest_k
from dpcore.text.sampling import iter_chunks
from dpcore.text.truncated_gumbel import TruncatedGumbel
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.interface import DpcoreSanitizer
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.validation import DPCoreError, check_epsilon, check_finite_float, check_probability

__all__ = [
    "FLAWED_TEXT_SANITIZERS",
    "BottomFallbackTEM",
    "InputAwareVickrey",
    "OneWordCalibratedTruncatedGumbel",
    "OverclaimedRandomizedResponse",
]


#: Elements per step of InputAwareVickrey's random stream (its steps of ⌊2²²/|V|⌋ draws; kept so
#: that seeded audits reproduce).
_STREAM_STEP = 1 << 22


class OverclaimedRandomizedResponse(KaryRandomizedResponse):
    """k-ary RR that claims ε but keeps with probability e^{fε}/(e^{fε} + k − 1) (f = ``factor``)."""

    def __init__(self, *, epsilon: float, words: Sequence[str], factor: float = 3.0) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.factor = check_finite_float(factor, name="factor", min_value=1.0, max_value=100.0)
        self.name = "flawed:krr-overclaimed"

    @property
    def sampling_epsilon(self) -> float:
        return self.factor * self.epsilon

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"flawed": True, "true_epsilon": self.sampling_epsilon}


class _EmbeddingSanitizer:
    """Shared plumbing: a vocabulary, word ↔ id, Euclidean distances in chunks."""

    guarantee = "metric"

    def __init__(self, *, vocab: Vocabulary, epsilon: float) -> None:
        if not isinstance(vocab, Vocabulary):
            raise DPCoreError("vocab must be a dpcore.text.vocab.Vocabulary")
        self.vocab = vocab
        self.epsilon = check_epsilon(epsilon)
        self._index = pd.Index(vocab.words)

    def _ids(self, words: Sequence[str]) -> np.ndarray:
        ids = self._index.get_indexer(np.asarray(words, dtype=object)).astype(np.int64)
        if ids.size and ids.min() < 0:
            raise DPCoreError("every word must be in the vocabulary")
        return ids

    def _dist_rows(self, rows: np.ndarray) -> np.ndarray:
        v, sq = self.vocab.vectors, self.vocab.sq_norms
        d = v[rows] @ v.T
        d *= -2.0
        d += sq[rows][:, None]
        d += sq[None, :]
        np.maximum(d, 0.0, out=d)
        np.sqrt(d, out=d)
        d[np.arange(len(rows)), rows] = 0.0
        return d

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        ids = self._ids(words)
        out = np.empty(ids.size, dtype=np.int64)
        uniq, inv = np.unique(ids, return_inverse=True)
        for u_k, u in enumerate(uniq):  # one loop step per *distinct* input word
            sel = np.flatnonzero(inv == u_k)
            out[sel] = self._draw_word(int(u), sel.size, rng)
        return self.vocab.words[out]

    def _draw_word(self, wid: int, n: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def sample_ids(self, word_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return self._draw_word(int(word_id), n, rng)


class BottomFallbackTEM(_EmbeddingSanitizer):
    """TEM (Carvalho et al. 2023, Alg. 1) with pyPANTERA's ⊥ fallback to the input word.

    Correct TEM: L_w = {y : d(w, y) ≤ γ}; scores −d(w, y) for y ∈ L_w and
    −γ + (2/ε)·ln|V \\ L_w| for ⊥; add Gumbel(0, 2/ε) noise, take the arg-max; ⊥ becomes a
    uniform word of V \\ L_w. γ = (2/ε)·ln((1 − β)(|V| − 1)/β) (§4). Here ⊥ returns w itself.
    """

    def __init__(self, *, vocab: Vocabulary, epsilon: float, beta: float = 0.001) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.beta = check_probability(beta, name="beta", open_low=True, open_high=True)
        self.gamma = (2.0 / self.epsilon) * math.log((1 - self.beta) * (len(vocab) - 1) / self.beta)
        self.name = "flawed:tem-bottom-returns-input"

    def _draw_word(self, wid: int, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self._dist_rows(np.array([wid]))[0]
        inside = np.flatnonzero(d <= self.gamma)
        n_out = len(self.vocab) - inside.size
        scores = np.append(
            -d[inside], -self.gamma + (2.0 / self.epsilon) * math.log(n_out) if n_out else -np.inf
        )
        out = np.empty(n, dtype=np.int64)
        for sl in iter_chunks(n, scores.size, 1 << 22):  # Gumbel-max, a chunk of draws at a time
            g = rng.gumbel(0.0, 2.0 / self.epsilon, size=(sl.stop - sl.start, scores.size))
            g += scores
            pick = np.argmax(g, axis=1)
            bottom = pick == inside.size
            res = inside[np.minimum(pick, inside.size - 1)]
            res[bottom] = wid  # the flaw: ⊥ → the input word
            out[sl] = res
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "flawed": True,
            "mechanism": self.name,
            "epsilon": self.epsilon,
            "beta": self.beta,
            "gamma": self.gamma,
        }


class InputAwareVickrey(_EmbeddingSanitizer):
    """Vickrey-CMP (Xu et al. 2021, Alg. 1) that removes the input from the candidates.

    Correct: z = φ(w) + noise (density ∝ exp(−ε‖z‖), Feyisetan et al. 2020); with y₁, y₂ the
    nearest and second-nearest words to z at distances d₁ ≤ d₂, output y₂ with probability
    t·d₁ / (t·d₁ + (1 − t)·d₂), else y₁. Flawed: when y₁ = w, w is dropped and the next two
    words are used instead, so w is (almost) never released.
    """

    def __init__(self, *, vocab: Vocabulary, epsilon: float, t: float = 0.75) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.t = check_probability(t, name="t")
        self.name = "flawed:vickrey-drops-input"

    def _steps(self) -> tuple[int, int]:
        """Draws per step of the random stream, and per search block (whole steps)."""
        step = max(1, _STREAM_STEP // len(self.vocab))
        return step, step * max(1, POSITION_CHUNK // step)

    def _noise(self, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``k`` draws' noise vectors and choice uniforms.

        The random stream is drawn in the steps it always had (per step: directions, radii, then
        the uniforms of the choice, which do not depend on the search), so seeded runs are
        unchanged.
        """
        m = self.vocab.vectors.shape[1]
        step, _ = self._steps()
        z = np.empty((k, m))
        u = np.empty(k)
        for s0 in range(0, k, step):  # over steps of thousands of draws, not over draws
            s1 = min(k, s0 + step)
            zs = rng.standard_normal((s1 - s0, m))
            zs *= (rng.gamma(m, 1.0 / self.epsilon, size=s1 - s0) / np.linalg.norm(zs, axis=1))[:, None]
            z[s0:s1] = zs
            u[s0:s1] = rng.random(s1 - s0)
        return z, u

    def _choose(self, wid: int | np.ndarray, z: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The outputs for noisy points ``z`` of inputs ``wid`` (one id, or one per row)."""
        top, d2 = nearest_k(z, self.vocab, 3)  # float64 decisions, row by row (dpcore.text.nearest)
        drop = top[:, 0] == wid  # the flaw: inspects the private input after the noise step
        first = np.where(drop, top[:, 1], top[:, 0])
        second = np.where(drop, top[:, 2], top[:, 1])
        d1 = np.sqrt(np.where(drop, d2[:, 1], d2[:, 0]))
        d2b = np.sqrt(np.where(drop, d2[:, 2], d2[:, 1]))
        den = self.t * d1 + (1 - self.t) * d2b
        p2 = np.where(den > 0, self.t * d1 / np.where(den > 0, den, 1.0), 0.0)
        return np.where(u < p2, second, first)

    def _draw_word(self, wid: int, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(n, dtype=np.int64)
        _, block = self._steps()  # the nearest-word search runs on a block of draws at once
        for start in range(0, n, block):
            k = min(block, n - start)
            z, u = self._noise(k, rng)
            z += self.vocab.vectors[wid]
            out[start : start + k] = self._choose(wid, z, u)
        return out

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """As every embedding sanitizer here: one segment of the stream per distinct input word,
        in id order, so outputs are those of :meth:`sample_ids` word by word. The search, the
        costly part, runs once per block of draws of many words (a sentence's words each come
        once or twice), not once per word: nearest-word results do not depend on which other
        points are searched with them (:func:`dpcore.text.nearest.exact_sq_distances`)."""
        ids = self._ids(words)
        out = np.empty(ids.size, dtype=np.int64)
        uniq, inv, counts = np.unique(ids, return_inverse=True, return_counts=True)
        by_word = np.split(np.argsort(inv, kind="stable"), np.cumsum(counts)[:-1])
        _, block = self._steps()
        v = self.vocab.vectors
        pending: list[tuple[np.ndarray, int, np.ndarray, np.ndarray]] = []
        rows = 0

        def flush() -> None:
            if pending:
                at = np.concatenate([p[0] for p in pending])
                wid = np.concatenate([np.full(p[0].size, p[1]) for p in pending])
                z = np.concatenate([p[2] for p in pending])
                u = np.concatenate([p[3] for p in pending])
                out[at] = self._choose(wid, z, u)
                pending.clear()

        for u_k, wid in enumerate(uniq):  # one loop step per *distinct* input word: its noise only
            sel = by_word[u_k]
            if sel.size > block:
                out[sel] = self._draw_word(int(wid), sel.size, rng)
                continue
            z, u = self._noise(sel.size, rng)
            z += v[wid]
            pending.append((sel, int(wid), z, u))
            rows += sel.size
            if rows >= POSITION_CHUNK:
                flush()
                rows = 0
        flush()
        return self.vocab.words[out]

    def describe(self) -> dict[str, Any]:
        return {"flawed": True, "mechanism": self.name, "epsilon": self.epsilon, "t": self.t}


class OneWordCalibratedTruncatedGumbel(TruncatedGumbel):
    """Truncated Gumbel whose Δ_min, Δ_max come from one word's distances (MLDP behaviour).

    Everything else is :class:`dpcore.text.truncated_gumbel.TruncatedGumbel`. The word is drawn
    from ``calibration_seed`` (recorded in :meth:`params`).
    """

    name = "flawed:truncated-gumbel-one-word"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, calibration_seed: int = 0) -> None:
        self.calibration_seed = int(calibration_seed)
        super().__init__(vocab=vocab, epsilon=epsilon)

    def _distance_range(self) -> tuple[float, float]:
        w = int(np.random.default_rng(self.calibration_seed).integers(len(self.vocab)))
        d = np.linalg.norm(self.vocab.vectors - self.vocab.vectors[w], axis=1)
        d = d[d > 0]
        self.calibration_word = str(self.vocab.words[w])
        return float(d.min()), float(d.max())

    def params(self) -> dict[str, Any]:
        return super().params() | {
            "flawed": True,
            "calibration_word": self.calibration_word,
            "calibration_seed": self.calibration_seed,
        }


#: Name → (factory, one line). Factories take ``epsilon`` and ``vocab`` (a Vocabulary).
FLAWED_TEXT_SANITIZERS: dict[str, tuple[Any, str]] = {
    "flawed:krr-overclaimed": (
        lambda *, epsilon, vocab: OverclaimedRandomizedResponse(epsilon=epsilon, words=vocab.words),
        "k-ary randomized response over V whose keep probability uses 3ε while claiming ε",
    ),
    "flawed:tem-bottom-returns-input": (
        lambda *, epsilon, vocab: BottomFallbackTEM(epsilon=epsilon, vocab=vocab),
        "TEM whose ⊥ branch returns the input word (pyPANTERA 1.0.2 tem.py behaviour)",
    ),
    "flawed:vickrey-drops-input": (
        lambda *, epsilon, vocab: InputAwareVickrey(epsilon=epsilon, vocab=vocab),
        "Vickrey-CMP that drops the input from the candidates after the noise step (MLDP behaviour)",
    ),
    "flawed:truncated-gumbel-one-word": (
        lambda *, epsilon, vocab: DpcoreSanitizer(
            OneWordCalibratedTruncatedGumbel(epsilon=epsilon, vocab=vocab)
        ),
        "Truncated Gumbel calibrated from one word's distances, not all pairs (MLDP behaviour)",
    ),
}
