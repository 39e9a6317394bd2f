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

from dpcore.rewriter.audit import RewriterAuditResult, audit_rewriter
from dpcore.rewriter.interface import RewriterClaim, TextRewriter, check_rewriter
from dpcore.rewriter.registry import available_rewriters, load_rewriter

__all__ = [
    "RewriterAuditResult",
    "RewriterClaim",
    "TextRewriter",
    "audit_rewriter",
    "available_rewriters",
    "check_rewriter",
    "load_rewriter",
]
