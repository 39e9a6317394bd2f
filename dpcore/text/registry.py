"""The registry of token-level text sanitization mechanisms (sibling of ``VECTOR_MECHANISMS``).

Mechanisms register in :mod:`dpcore.text.mechanisms`; the CLI (``list``, ``sanitize``,
``metrics``) and the "Sanitize text" page read their names from here.
"""

from __future__ import annotations

from dpcore.registry import Registry

__all__ = ["TEXT_MECHANISMS", "required_embedding"]

#: Name → text mechanism class (keyword-only constructors: ``vocab``, ``epsilon``, …).
TEXT_MECHANISMS: Registry = Registry("text mechanism")


def required_embedding(name: str) -> str | None:
    """The embedding a mechanism needs (its tag ``embedding:NAME``; dp-mlm: ``bert-wordpiece``), or None."""
    for tag in TEXT_MECHANISMS.get(name).tags:
        if tag.startswith("embedding:"):
            return tag.split(":", 1)[1]
    return None
