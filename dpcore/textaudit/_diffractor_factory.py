"""Builds dp-diffractor 0.2.1's 1-Diffractor *as shipped*, inside its own environment.

dpcore's worker (:mod:`dpcore.textaudit._subprocess_worker`) loads this file by path with the
managed environment's interpreter and calls :func:`build`. It imports only the standard library,
NumPy and ``diffractor``; no Diffractor code is copied here. Each word is released by the
package's own ``Diffractor.rewrite([word])`` with its default configuration (the geometric
mechanism, ε = 1, sensitivity 1, stopwords not replaced), except:

- **embeddings** (a substitute, :mod:`dpcore.textaudit.substitutes`): ``Diffractor.__init__``
  fetches five embedding files from Zenodo through ``diffractor.core.ensure_embeddings``; that one
  function is pointed at dpcore's vocabulary file, so the package builds its sorted list (its own
  ``EmbeddingManager``: a greedy nearest-neighbour walk with faiss) from dpcore's GloVe vectors.
  One list, not five.
- **the process pool**: ``rewrite`` sends each token to a ``multiprocessing`` pool whose workers
  hold their random generators, seeded once from ``config.seed`` (42 by default). The audit needs
  every call to draw from the rng it is handed, and a restarted pool gives its workers the wrong
  lists (``_worker_initializer`` indexes the lists by the process counter, which keeps counting),
  so the pool is replaced by an in-process stand-in running the same
  ``apply_privacy_mechanism`` on the same resources (the dictionary ``_worker_initializer``
  builds), with generators seeded from the audit's rng on every call.
- ``verbose=False``: no progress bar per call (it changes nothing else).

The claim (1-Diffractor, Meisenbacher et al. 2024): the geometric mechanism on the index of the
word in the sorted list, ε·|i − i′| metric DP (``claimed_bound``: the list's indices, computed by
the package itself).
"""

from __future__ import annotations


def describe_library():
    """Name, version and mechanisms of the installed dp-diffractor (the worker's hello)."""
    from importlib import metadata

    import diffractor  # noqa: F401

    version = metadata.version("dp-diffractor")
    return {"library": "dp-diffractor", "version": version, "mechanisms": ["geometric"]}


class _InProcessPool:
    """Stands in for ``multiprocessing.Pool`` with one worker: ``starmap`` runs here."""

    def starmap(self, fn, args):
        return [fn(*a) for a in args]

    def close(self):
        pass

    def join(self):
        pass


class Shipped:
    """The package's own ``Diffractor`` instance; one word released per ``rewrite`` text."""

    def __init__(self, obj, core, epsilon):
        self.obj = obj
        self.core = core
        self.epsilon = float(epsilon)
        self.name = "diffractor:geometric"
        self.guarantee = "metric"
        self.citation = "Meisenbacher et al. 2024 (IWSPA), 1-Diffractor: ε·|i − i′| metric DP (list index)"
        self._index = obj.mgr.word_to_idx[0]

    def sample(self, words, rng):
        import numpy as np

        seeds = np.random.SeedSequence(rng.getrandbits(64)).spawn(2)
        obj = self.obj
        self.core._RESOURCES = {
            "list": obj.mgr.lists[0],
            "mapping": obj.mgr.word_to_idx[0],
            "config": obj.config,
            "rng": np.random.default_rng(seeds[0]),
        }
        obj._rng = np.random.default_rng(seeds[1])
        obj._pool = _InProcessPool()
        return obj.rewrite(list(words))

    def claimed_bound(self, x, x_prime, distance):
        """ε·|i − i′|/sensitivity, i and i′ the words' places in the package's sorted list."""
        i, j = self._index.get(x), self._index.get(x_prime)
        if i is None or j is None:
            return float("inf")  # outside the list: outside the claim
        return self.epsilon * abs(int(i) - int(j)) / float(self.obj.config.sensitivity)


def build(epsilon, vocab, embeddings):
    """``diffractor.Diffractor(DiffractorConfig(epsilon=ε, verbose=False))`` on dpcore's vectors."""
    import diffractor.core as core
    from diffractor import Diffractor, DiffractorConfig

    core.ensure_embeddings = lambda model_names=None: [embeddings]
    obj = Diffractor(DiffractorConfig(epsilon=float(epsilon), verbose=False))
    if len(obj.mgr.lists) != 1:
        raise RuntimeError("expected one sorted list (dpcore's vectors)")
    return Shipped(obj, core, epsilon)
