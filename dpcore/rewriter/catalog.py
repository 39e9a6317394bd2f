"""The registry of text rewriters (sibling of ``TEXT_MECHANISMS`` and ``VECTOR_MECHANISMS``).

Rewriters register where they are defined, with :meth:`dpcore.registry.Registry.register`, and
declare their options as ``PARAMETERS`` (:class:`dpcore.parameters.ParameterSpec`, as text
mechanisms do): the ``audit-rewriter`` options, ``python -m dpcore list`` and the rewriter page's
widgets are built from them, so adding a rewriter takes one file. What a rewriter is for is a tag:

``kind:dpcore``, ``kind:flawed``, ``kind:planted``
    dpcore's own rewriters, the fenced flawed reproductions (``flawed=True`` too), and the test
    instruments with a known loss.
``kind:package``
    A published package run as shipped in its own environment (``dpmlm:rewrite``).
``needs-torch``
    Runs a torch model (DP-Prompt): a CLI and bench feature; the dashboard, which stays
    torch-free, shows it from shipped results only.
``needs-env``
    Runs in a managed environment (``python -m dpcore adapters install NAME``): a CLI feature;
    the dashboard shows it from shipped results only.

A factory may also name ``RUN_OPTIONS``: settings of where it runs, not of what it computes
(DP-Prompt's ``device``), passed on to it unchecked here and checked by it.

:mod:`dpcore.rewriter.registry` loads the modules that register (:data:`MODULES`) and builds
rewriters by name; this module holds only the table, so that a rewriter's module can register
without importing the loader.
"""

from __future__ import annotations

from dpcore.parameters import ParameterSpec
from dpcore.registry import Registry

__all__ = ["FULL_VOCABULARY", "KINDS", "MODULES", "REWRITERS"]

#: Name → rewriter factory (keyword-only: ``epsilon`` and its ``PARAMETERS``).
REWRITERS: Registry = Registry("rewriter")
#: The modules whose rewriters register, in listing order.
MODULES = (
    "dpcore.rewriter.dpmlm",
    "dpcore.rewriter.dpprompt",
    "dpcore.rewriter.wordlevel",
    "dpcore.flawed.rewriters",
    "dpcore.rewriter.planted",
    "dpcore.rewriter.package_dpmlm",
    "dpcore.rewriter.package_preempt",
    "dpcore.rewriter.package_dpfusion",
)
#: What a rewriter is for (its ``kind:`` tag).
KINDS = ("dpcore", "flawed", "planted", "package")

#: The option of every rewriter built on dpcore's vocabularies (DP-MLM's WordPieces, SanText's words).
FULL_VOCABULARY = ParameterSpec(
    "full_vocabulary", False, "bool", 0, 1,
    "keep the offensive words in V (research; by default they are left out, as everywhere in dpcore)",
)  # fmt: skip
