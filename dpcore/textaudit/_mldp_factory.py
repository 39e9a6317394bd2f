"""Builds mldp-text's mechanisms *as shipped*, inside mldp-text's own environment.

dpcore's worker (:mod:`dpcore.textaudit._subprocess_worker`) loads this file by path with the
managed environment's interpreter and calls :func:`build`. It imports only the standard library
and ``mldp_text``; no mldp-text code is copied here, and nothing of it is changed: the object
returned wraps the library's own instance and exposes its own ``replace_word``.

The library's GloVe loading is pointed at dpcore's table: ``embed=`` is the word2vec text file
dpcore wrote for the audited vocabulary, ``dim`` its dimension, and ``vocab`` its words (TEM
reads |V| from it). SynTF takes no embedding; its ``data`` (the corpus of its TF-IDF weights) is
the vocabulary's words.
"""

from __future__ import annotations

#: dpcore's name → the key of ``mldp_text.MECHANISMS``.
KEYS = {
    "CMP": "multivariate_calibrated",
    "Mahalanobis": "mahalanobis",
    "Vickrey": "vickrey",
    "TEM": "tem",
    "TruncatedGumbel": "truncated_gumbel",
    "SynTF": "syntf",
}


def describe_library():
    """Name, version and mechanisms of the installed mldp-text (the worker's hello)."""
    import mldp_text

    return {
        "library": "mldp-text",
        "version": getattr(mldp_text, "__version__", None),
        "mechanisms": sorted(mldp_text.MECHANISMS),
        "classes": {k: v.__name__ for k, v in mldp_text.MECHANISMS.items()},
    }


class Shipped:
    """mldp-text's own object, with the three attributes the audit needs."""

    def __init__(self, mechanism, name, epsilon, guarantee):
        self.mechanism = mechanism
        self.name = name
        self.epsilon = epsilon
        self.guarantee = guarantee
        self.replace_word = mechanism.replace_word


def build(epsilon, vocab, embeddings, kind, guarantee, **params):
    """``mldp_text.MECHANISMS[KEYS[kind]]`` built on dpcore's vocabulary."""
    import mldp_text

    if kind not in KEYS:
        raise ValueError(f"unknown mldp mechanism {kind!r}; choose one of: {', '.join(KEYS)}")
    cls = mldp_text.MECHANISMS[KEYS[kind]]
    if kind == "SynTF":
        obj = cls(epsilon=epsilon, data=list(vocab), **params)
    else:
        with open(embeddings, encoding="utf-8") as fh:
            dim = int(fh.readline().split()[1])
        obj = cls(epsilon=epsilon, embed=embeddings, dim=dim, vocab=set(vocab), **params)
    return Shipped(obj, f"mldp:{kind}", epsilon, guarantee)
