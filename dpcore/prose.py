"""Lists in dpcore's sentences: one home for "a, b and c" (headlines, captions, verdicts)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["and_list"]


def and_list(items: Sequence[str]) -> str:
    """``items`` as a sentence lists them: ``"a"``, ``"a and b"``, ``"a, b and c"`` (``""`` for none).

    >>> and_list(["ADePT"]), and_list(["ADePT", "DPText"]), and_list(["a", "b", "c"])
    ('ADePT', 'ADePT and DPText', 'a, b and c')
    """
    items = [str(i) for i in items]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
