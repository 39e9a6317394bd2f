"""Audit any text rewriter (sentence or document level) as a black box: lower confidence bounds
on its privacy loss that hold, against the claim its paper makes.

- :mod:`dpcore.rewriter.interface` — what a rewriter is (``rewrite(texts, rng)`` and a
  :class:`RewriterClaim`);
- :mod:`dpcore.rewriter.audit` — :func:`audit_rewriter`, the verdicts;
- :mod:`dpcore.rewriter.distinguish` — the events (whole outputs, n-grams, MiniLM);
- :mod:`dpcore.rewriter.power` — what an audit can show (reach, power);
- :mod:`dpcore.rewriter.pairs`, :mod:`dpcore.rewriter.draws`, :mod:`dpcore.rewriter.contract`;
- :mod:`dpcore.rewriter.registry` — names to rewriters (DP-MLM, the flawed variants of
  :mod:`dpcore.flawed.rewriters`, the planted test rewriters of :mod:`dpcore.rewriter.planted`).

Examples
--------
>>> from dpcore.rewriter import audit_rewriter, load_rewriter
>>> from dpcore.rewriter.pairs import corpus_sentences
>>> copy = load_rewriter("planted:copy", epsilon=1.0, q=0.5)
>>> x, x_prime = corpus_sentences()[:2]
>>> result = audit_rewriter(copy, [(x, x_prime)], rewrites=200, distinguishers=["exact"], seed=0)
>>> result.verdict
'violates'
"""

from __future__ import annotations

#: Public name → (module, attribute): loaded on first use, so that reading the registry (the CLI's
#: options, ``list``) does not load the audit.
_LAZY = {
    "RewriterAuditResult": ("dpcore.rewriter.audit", "RewriterAuditResult"),
    "audit_rewriter": ("dpcore.rewriter.audit", "audit_rewriter"),
    "RewriterClaim": ("dpcore.rewriter.interface", "RewriterClaim"),
    "TextRewriter": ("dpcore.rewriter.interface", "TextRewriter"),
    "check_rewriter": ("dpcore.rewriter.interface", "check_rewriter"),
    "available_rewriters": ("dpcore.rewriter.registry", "available_rewriters"),
    "load_rewriter": ("dpcore.rewriter.registry", "load_rewriter"),
}

__all__ = [
    "RewriterAuditResult",
    "RewriterClaim",
    "TextRewriter",
    "audit_rewriter",
    "available_rewriters",
    "check_rewriter",
    "load_rewriter",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpcore.rewriter' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
