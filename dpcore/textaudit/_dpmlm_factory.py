"""Builds dpmlm 1.3.0's DP-MLM *as shipped*, inside its own environment.

dpcore's worker (:mod:`dpcore.textaudit._subprocess_worker`) loads this file by path with the
managed environment's interpreter and calls :func:`build` (a rewriter: ``build_rewriter``). It
imports only the standard library and ``dpmlm``; no dpmlm code is copied here and nothing of it
is changed. The object returned calls the package's own entry point,
``DPMLM.dpmlm_rewrite(sentence, epsilon)``, with the package's defaults (``REPLACE=False``,
``STOP=False``, ``CONCAT=True``, no PII or IPI tagging).

Offline substitutes (:mod:`dpcore.textaudit.substitutes`): the model is dpcore's shipped MiniLM
masked LM in place of ``FacebookAI/roberta-base`` (its weights are stored in float16 and are
computed in float32, as roberta-base's are); NLTK's data comes from the folder ``NLTK_DATA``
names. The clipping bounds are the package's defaults (its ``calibration=None``).

Randomness: the package draws with NumPy's global state (``np.random.choice`` in
``DPMLM.privatize``); the worker seeds that state from the audit's rng before every call.
"""

from __future__ import annotations


def describe_library():
    """Name, version and entry points of the installed dpmlm (the worker's hello)."""
    from importlib import metadata

    import dpmlm  # noqa: F401  (the import is the check: NLTK's stopwords are read here)

    return {"library": "dpmlm", "version": metadata.version("dpmlm"), "mechanisms": ["rewrite"]}


class Shipped:
    """dpmlm's own ``DPMLM`` instance, rewriting one text per call of its ``dpmlm_rewrite``."""

    def __init__(self, model, epsilon):
        self.model = model
        self.epsilon = float(epsilon)
        self.name = "dpmlm:rewrite"

    def rewrite(self, texts, rng):
        # rng is unused: the package draws from NumPy's global state, seeded by the worker.
        out = []
        for text in texts:
            released = self.model.dpmlm_rewrite(text, self.epsilon)
            out.append(released[0] if isinstance(released, tuple) else released)
        return out

    def count_tokens(self, text):
        """The package's tokens: ``nltk.word_tokenize`` of the line, as ``dpmlm_rewrite`` splits it."""
        import nltk

        return len(nltk.word_tokenize(" ".join(str(text).split("\n"))))


def build(epsilon, model):
    """``dpmlm.DPMLM(MODEL=model)`` with its other defaults, computed in float32."""
    from dpmlm import DPMLM

    obj = DPMLM(MODEL=model)
    obj.lm_model = obj.lm_model.float()
    return Shipped(obj, epsilon)
