"""The registry of mechanisms on real vectors, read by the CLI and the dashboard."""

from __future__ import annotations

from dpcore.registry import Registry

__all__ = ["PAPER_FIG2", "VECTOR_MECHANISMS"]

#: Name → mechanism class. Correct mechanisms register in :mod:`dpcore.mechanisms.vector`,
#: fenced flawed reproductions in :mod:`dpcore.flawed.mechanisms`.
VECTOR_MECHANISMS: Registry = Registry("mechanism")

#: The five mechanisms of Habernal (2022), Fig. 2, in the paper's panel order.
PAPER_FIG2: tuple[str, ...] = ("copy", "random", "laplace", "adept", "dptext")
