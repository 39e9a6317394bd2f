"""Adapters that run pyPANTERA's word-level mechanisms *as shipped*, for the text audit.

pyPANTERA 1.0.2 (De Faveri et al., PyPI ``pypantera``; it installs as the top-level package
``src``) reads embeddings from a GloVe-format text file. The adapter writes dpcore's vocabulary
(words and vectors) to such a file in a temporary folder, builds the pyPANTERA object with the
documented keyword dictionary, and calls its own methods:

- embedding mechanisms (``CMP``, ``Mahalanobis``, ``VickreyCMP``, ``VickreyMhl``):
  ``processText(noisyEmb(words))``;
- sampling mechanisms (``SanText``, ``CusText``, ``TEM``): ``processText(words)``.

pyPANTERA draws from NumPy's *global* random state, so each ``sample`` call seeds it from the
audit's generator (``np.random.seed(rng.integers(2**32))``): results are reproducible from the
audit's seed, and the global state is changed. No pyPANTERA code is copied into dpcore.

The claimed guarantee of each is the one its paper states (see :data:`PYPANTERA_MECHANISMS`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.claims import pypantera_claim, words_to_ids
from dpcore.validation import DPCoreError, check_epsilon, check_finite_float, check_int, check_probability

__all__ = ["PYPANTERA_MECHANISMS", "PypanteraSanitizer", "pypantera_available"]

#: Elements of pyPANTERA's (batch, |V|, m) distance broadcast per call (≈ 64 MB of float64).
_BROADCAST_ELEMENTS = 1 << 23


@dataclass(frozen=True)
class _Spec:
    module: str
    cls: str
    family: str  # "embedding" or "sampling"
    guarantee: str
    distance: str  # "euclidean" or "mahalanobis" (for metric claims)
    citation: str
    params: tuple[tuple[str, Any], ...] = ()


#: Class name → how to build, run and state the claim of each pyPANTERA mechanism.
PYPANTERA_MECHANISMS: dict[str, _Spec] = {
    "CMP": _Spec(
        "src.EmbeddingPerturbationMechanism.cmp",
        "CMP",
        "embedding",
        "metric",
        "euclidean",
        "Feyisetan et al. 2020 (WSDM), ε·d_euc metric DP",
    ),
    "Mahalanobis": _Spec(
        "src.EmbeddingPerturbationMechanism.mahalanobis",
        "Mahalanobis",
        "embedding",
        "metric",
        "mahalanobis",
        "Xu et al. 2020 (PrivateNLP), Thm 1: ε·d_R with the regularized Mahalanobis norm",
        (("lam", 0.2),),
    ),
    "VickreyCMP": _Spec(
        "src.EmbeddingPerturbationMechanism.vickrey",
        "VickreyCMP",
        "embedding",
        "metric",
        "euclidean",
        "Xu et al. 2021 (PrivateNLP), Vickrey over CMP: post-processing of ε·d_euc metric DP",
        (("t", 0.75),),
    ),
    "VickreyMhl": _Spec(
        "src.EmbeddingPerturbationMechanism.vickrey",
        "VickreyMhl",
        "embedding",
        "metric",
        "mahalanobis",
        "Xu et al. 2021 (PrivateNLP), Vickrey over Mahalanobis: ε·d_R",
        (("lam", 0.2), ("t", 0.75)),
    ),
    "SanText": _Spec(
        "src.SamplingPerturbationMechanism.santext",
        "SanText",
        "sampling",
        "metric",
        "euclidean",
        "Yue et al. 2021, eq. 1, Thm 1: ε·d_euc MLDP",
    ),
    "CusText": _Spec(
        "src.SamplingPerturbationMechanism.custext",
        "CusText",
        "sampling",
        "ldp",
        "euclidean",
        "Chen et al. 2023 (Findings ACL), §3: ε-LDP between words mapped to the same output set",
        (("k", 20), ("distance", "euclidean")),
    ),
    "TEM": _Spec(
        "src.SamplingPerturbationMechanism.tem",
        "TEM",
        "sampling",
        "metric",
        "euclidean",
        "Carvalho et al. 2023 (SDM), ε·d_euc metric DP",
        (("beta", 0.001),),
    ),
}


def pypantera_available() -> bool:
    """True when pyPANTERA is installed (``pip install pypantera==1.0.2``)."""
    try:
        spec = importlib.util.find_spec("src.AbstractTextObfuscationDPMechanism")
    except (ImportError, ValueError):
        return False
    return spec is not None and "site-packages" in str(spec.origin or "")


def _write_glove(path: str, vocab: Vocabulary) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for w, v in zip(vocab.words, vocab.vectors, strict=True):
            fh.write(str(w) + " " + " ".join(f"{x:.9g}" for x in v) + "\n")


def _check_param(name: str, value: Any) -> Any:
    if name in ("lam", "t"):
        return check_probability(value, name=name)
    if name == "beta":
        return check_probability(value, name="beta", open_low=True, open_high=True)
    if name == "k":
        return check_int(value, name="k", min_value=1, max_value=10_000)
    if name == "distance":
        if value not in ("euclidean", "cosine"):
            raise DPCoreError("distance must be 'euclidean' or 'cosine'")
        return value
    return check_finite_float(value, name=name)


_POOL_LOCK = threading.Lock()


class _InProcessPool:
    """A stand-in for ``multiprocessing.Pool`` that maps in this process, in order."""

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes

    def __enter__(self) -> _InProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, func: Any, iterable: Any) -> list[Any]:
        return [func(item) for item in iterable]


class _InProcessMultiprocessing:
    """The two names pyPANTERA's loader takes from ``multiprocessing``, run in this process."""

    Pool = _InProcessPool

    @staticmethod
    def cpu_count() -> int:
        return 1


@contextlib.contextmanager
def _in_process_pools() -> Iterator[None]:
    """Run pyPANTERA's embedding loader in this process, as one chunk, without a process pool.

    Its ``Vocab.loadParallel`` (``src/utils/vocab.py``) reads the embedding file in
    ``cpu_count()`` chunks with ``multiprocessing.Pool``. Both start methods fail a user:

    - *fork*, the default on Linux, from a process that runs other threads (a Streamlit server,
      a browser driver, Ray, tqdm's monitor) can copy a lock that one of them holds into the
      child, which then waits for it forever (seen under ``ci-like --load 1``: a pool child in
      ``futex_wait`` for 14 minutes);
    - *spawn* imports the user's script again in each child, so a script without
      ``if __name__ == "__main__":`` hangs: every child dies starting the pool again and the pool
      replaces it, forever.

    The file is dpcore's own (9 MB at |V| = 15,000, written just before, read here in 0.4 s),
    and the words loaded no longer depend on the machine's core count (a chunk's
    reader skips the line at its start, which is lost when a boundary falls exactly on one).
    The module's ``mp`` is swapped while the constructor runs (one constructor at a time).
    """
    try:
        vocab_module = importlib.import_module("src.utils.vocab")
    except ImportError:  # another pyPANTERA layout: nothing to swap
        yield
        return
    with _POOL_LOCK:
        original = vocab_module.mp
        vocab_module.mp = _InProcessMultiprocessing
        try:
            yield
        finally:
            vocab_module.mp = original


class PypanteraSanitizer:
    """One pyPANTERA mechanism, run as shipped, behind the text-audit interface.

    Parameters
    ----------
    kind:
        A key of :data:`PYPANTERA_MECHANISMS` (``CMP``, ``Mahalanobis``, ``VickreyCMP``,
        ``VickreyMhl``, ``SanText``, ``CusText``, ``TEM``).
    epsilon:
        ε passed to pyPANTERA and claimed.
    vocab:
        dpcore's vocabulary, written to a GloVe-format file for pyPANTERA to read.
    **params:
        The mechanism's own parameters (defaults in :data:`PYPANTERA_MECHANISMS`).
    """

    def __init__(self, *, kind: str, epsilon: float, vocab: Vocabulary, **params: Any) -> None:
        if kind not in PYPANTERA_MECHANISMS:
            raise DPCoreError(
                f"unknown pyPANTERA mechanism {kind!r}; choose one of: {', '.join(PYPANTERA_MECHANISMS)}"
            )
        if not pypantera_available():
            raise DPCoreError("pyPANTERA is not installed: pip install pypantera==1.0.2")
        spec = PYPANTERA_MECHANISMS[kind]
        self.spec = spec
        self.name = f"pypantera:{kind}"
        self.epsilon = check_epsilon(epsilon)
        self.guarantee = spec.guarantee
        self.citation = spec.citation
        self.vocab = vocab
        known = dict(spec.params)
        unknown = set(params) - set(known)
        if unknown:
            raise DPCoreError(
                f"{self.name} takes {', '.join(known) or 'no parameters'}, not {', '.join(sorted(unknown))}"
            )
        self.params = {k: _check_param(k, params.get(k, v)) for k, v in known.items()}
        module = importlib.import_module(spec.module)
        cls = getattr(module, spec.cls)
        with tempfile.TemporaryDirectory(prefix="dpcore-pypantera-") as tmp:
            path = os.path.join(tmp, "vectors.txt")
            _write_glove(path, vocab)
            with _in_process_pools():
                self._mech = cls({"embPath": path, "epsilon": self.epsilon, **self.params})
        loaded = list(self._mech.vocab.embeddings.keys())
        self.lost_words = sorted(set(map(str, vocab.words)) - set(loaded))
        self._m = int(vocab.dim)
        self._n_loaded = len(loaded)
        self.claim = pypantera_claim(
            kind,
            epsilon=self.epsilon,
            vocab=vocab,
            params=self.params,
            citation=spec.citation,
            output_set=self._custext_output_set if kind == "CusText" else None,
        )

    def _custext_output_set(self, word_id: int) -> np.ndarray | None:
        """The output set pyPANTERA's CusText maps a word to (its own ``_getCustomizedMapping``:
        the word's K nearest words), as sorted vocabulary ids; None for a word its loader lost."""
        w = str(self.vocab.words[int(word_id)])
        if w not in self._mech.vocab.embeddings:
            return None
        sim, _ = self._mech._getCustomizedMapping(w)
        return words_to_ids(self.vocab, sim[w])

    def claimed_bound(self, x: str, x_prime: str, distance: float) -> float:
        """The pair's claimed bound (:attr:`claim`, :func:`dpcore.textaudit.claims.pypantera_claim`)."""
        ids = self.vocab.ids([x, x_prime])
        if ids.min() < 0:
            return self.epsilon if self.guarantee == "ldp" else self.epsilon * float(distance)
        return float(self.claim.bounds(ids[:1], ids[1:], np.array([float(distance)]))[0])

    def claimed_bounds_ids(self, x: np.ndarray, x_prime: np.ndarray, distance: np.ndarray) -> np.ndarray:
        """:meth:`claimed_bound` for many pairs of vocabulary ids at once."""
        return self.claim.bounds(x, x_prime, distance)

    def _batch(self) -> int:
        return max(1, _BROADCAST_ELEMENTS // max(1, self._n_loaded * self._m))

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """pyPANTERA's own obfuscation of each word (global NumPy state seeded from ``rng``)."""
        words = [str(w) for w in words]
        out: list[str] = []
        step = self._batch()
        for start in range(0, len(words), step):  # one call per batch; pyPANTERA loops inside
            np.random.seed(int(rng.integers(0, 2**32)))  # noqa: NPY002  (pyPANTERA reads the global state)
            batch = words[start : start + step]
            if self.spec.family == "embedding":
                text = self._mech.processText(self._mech.noisyEmb(batch))
            else:
                text = self._mech.processText(batch)
            res = text.split(" ")
            if len(res) != len(batch):
                raise DPCoreError(f"{self.name} returned {len(res)} words for {len(batch)}")
            out.extend(res)
        return np.asarray(out, dtype=object)

    def describe(self) -> dict[str, Any]:
        return {
            "adapter": "dpcore.textaudit.pypantera (pyPANTERA 1.0.2, run as shipped)",
            "mechanism": self.name,
            "epsilon": self.epsilon,
            "claim": self.citation,
            **self.params,
            "words_lost_by_pypantera_loader": self.lost_words[:20],
            "words_lost_count": len(self.lost_words),
        }
