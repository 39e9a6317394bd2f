"""The registry of token-level text sanitization mechanisms (sibling of ``VECTOR_MECHANISMS``).

Mechanisms register in :mod:`dpcore.text.mechanisms`; the CLI (``list``, ``sanitize``,
``metrics``) and the "Sanitize text" page read their names from here.
"""

from __future__ import annotations

from dpcore.registry import Registry

__all__ = ["TEXT_MECHANISMS"]

#: Name → text mechanism class (keyword-only constructors: ``vocab``, ``epsilon``, …).
TEXT_MECHANISMS: Registry = Registry("text mechanism")
