"""Names to rewriters for ``audit-rewriter``: the CLI, ``list`` and the dashboard read this.

The table is :data:`dpcore.rewriter.catalog.REWRITERS` (one :class:`dpcore.registry.Registry`, like
the mechanisms'); each rewriter registers in its own module with its options as ``PARAMETERS``.

====================================  ========================================================================
name                                  what is built
====================================  ========================================================================
``dp-mlm``                            dpcore's DP-MLM variant on whole lines (:mod:`dpcore.rewriter.dpmlm`)
``dp-prompt``                         DP-Prompt on SmolLM2-135M-Instruct (:mod:`dpcore.rewriter.dpprompt`)
``santext-words``                     SanText applied to every word (:mod:`dpcore.rewriter.wordlevel`)
``flawed:dp-mlm-stopwords``           FLAWED: DP-MLM keeping stopwords verbatim (dpcore.flawed.rewriters)
``flawed:dp-mlm-line-epsilon``        FLAWED: DP-MLM reporting its per-token ε as the line's
``flawed:dp-prompt-keeps-last-word``  FLAWED: DP-Prompt appending the input's last word (planted leak)
``planted:copy``                      test instrument: copies its input with probability ``q``
``planted:leak-word``                 test instrument: leaks the input's last word with probability ``q``
``dpmlm:rewrite``                     dpmlm 1.3.0 as shipped, in its own environment (.package_dpmlm)
``preempt:money``, ``preempt:age``    preempt 0.1.27's metric-DP paths as shipped (.package_preempt)
``dp-fusion:generate``                dp-fusion-lib 0.1.0 as shipped, Rényi claim (.package_dpfusion)
``path/file.py:factory``              the user's own code (CLI only, ``allow_user_code=True``)
``package.module:factory``            likewise, from an installed module
====================================  ========================================================================

User factories are called as ``factory(epsilon=E, **options)`` and must return an object with the
:class:`~dpcore.rewriter.interface.TextRewriter` interface; they are loaded the way a user's
sanitizer is (:func:`dpcore.usercode.load_factory`). The dashboard never passes
``allow_user_code``: it cannot load or run code.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from dpcore.parameters import ParameterSpec, check_parameter
from dpcore.rewriter.catalog import MODULES, REWRITERS
from dpcore.rewriter.interface import TextRewriter, check_rewriter
from dpcore.validation import DPCoreError, check_epsilon

__all__ = [
    "RewriterChoice",
    "available_rewriters",
    "check_options",
    "display_name",
    "load_rewriter",
    "rewriter_parameter_specs",
    "rewriters",
]


def rewriters() -> Any:
    """The rewriter registry, every registering module loaded (:data:`~dpcore.rewriter.catalog.MODULES`)."""
    for mod in MODULES:
        importlib.import_module(mod)
    return REWRITERS


def _in_order() -> list[Any]:
    """The registered rewriters in listing order: by module (:data:`MODULES`), then as registered
    (a module imported early, by a test or a notebook, does not move its rewriters up)."""
    return sorted(rewriters(), key=lambda e: MODULES.index(e.factory.__module__))


def display_name(name: str) -> str:
    """A rewriter as a sentence names it, mid-sentence: ``"dpcore's DP-MLM variant"``, ``"the flawed DP-MLM
    that keeps stopwords"``; any other name (your own code, from the CLI) as ``"the rewriter NAME"``.

    >>> display_name("flawed:dp-mlm-stopwords")
    'the flawed DP-MLM that keeps stopwords'
    """
    table = rewriters()
    return table.display_name(name) if name in table else f"the rewriter {name}"


def rewriter_parameter_specs(name: str) -> tuple[ParameterSpec, ...]:
    """The options of a registered rewriter (:class:`~dpcore.parameters.ParameterSpec`; empty when
    it has none)."""
    return tuple(getattr(rewriters().get(name).factory, "PARAMETERS", ()))


def check_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A registered rewriter's options checked against its :class:`~dpcore.parameters.ParameterSpec`
    (converted: ``"0.3"`` → 0.3, ``"true"`` → True; None dropped); its run options passed on as
    they are. A name that is not registered (a user's factory) gets its options as given.

    Raises
    ------
    DPCoreError
        An option the rewriter does not take, or a value out of its range.
    """
    options = {k: v for k, v in options.items() if v is not None}
    table = rewriters()
    if name not in table:
        return options
    factory = table.get(name).factory
    specs = {sp.name: sp for sp in getattr(factory, "PARAMETERS", ())}
    run = tuple(getattr(factory, "RUN_OPTIONS", ()))
    extra = sorted(set(options) - set(specs) - set(run))
    if extra:
        takes = ", ".join([*specs, *run]) or "none"
        raise DPCoreError(f"{name} takes no option {', '.join(extra)} (its options: {takes})")
    return {k: (check_parameter(specs[k], v) if k in specs else v) for k, v in options.items()}


@dataclass(frozen=True)
class RewriterChoice:
    """One selectable rewriter (for dropdowns and ``list``), read from the registry."""

    name: str
    summary: str
    kind: str  # "dpcore", "flawed", "planted"
    flawed: bool = False
    #: Needs torch and the causal LM (DP-Prompt), or a managed environment (a published package):
    #: a CLI and bench feature; the dashboard, which stays torch-free and runs no package, shows
    #: such rewriters from shipped results only.
    needs_torch: bool = False
    parameters: tuple[ParameterSpec, ...] = ()
    citation: str = ""

    @property
    def display_name(self) -> str:
        """The name a sentence uses (:func:`display_name`)."""
        return display_name(self.name)

    @property
    def label(self) -> str:
        prefix = "FLAWED reproduction: " if self.flawed else ""
        return f"{self.name} — {prefix}{self.summary}"


def available_rewriters(*, torch: bool = True) -> list[RewriterChoice]:
    """Every rewriter the CLI can audit by name (no user code); ``torch=False``: those the
    dashboard can run (no torch model)."""
    out = []
    for e in _in_order():
        kind = next((t.split(":", 1)[1] for t in e.tags if t.startswith("kind:")), "dpcore")
        out.append(
            RewriterChoice(
                e.name,
                e.summary,
                kind,
                e.flawed,
                "needs-torch" in e.tags or "needs-env" in e.tags,
                tuple(getattr(e.factory, "PARAMETERS", ())),
                e.citation,
            )
        )
    return out if torch else [c for c in out if not c.needs_torch]


def load_rewriter(
    name: str, *, epsilon: float, allow_user_code: bool = False, **options: Any
) -> TextRewriter:
    """Build the rewriter called ``name`` with ``epsilon``.

    Parameters
    ----------
    name:
        A name of :func:`available_rewriters`, or (with ``allow_user_code``) ``file.py:factory``
        or ``package.module:factory``.
    epsilon:
        The ε it is built with (for DP-MLM, ε per token).
    options:
        The rewriter's options (:func:`rewriter_parameter_specs`: ``full_vocabulary`` for DP-MLM
        and SanText, ``max_new_tokens`` for DP-Prompt, ``q`` for the planted rewriters), each
        checked against its range, and its run options (DP-Prompt's ``device``). None means the
        default. A user's factory gets the options as given.

    Raises
    ------
    DPCoreError
        Unknown name, user code without ``allow_user_code``, an unknown option or a value out of
        range, a factory that fails or returns an object without the interface.
    """
    if not isinstance(name, str) or not name.strip():
        raise DPCoreError("give a rewriter name")
    name = name.strip()
    epsilon = check_epsilon(epsilon)
    options = {k: v for k, v in options.items() if v is not None}
    table = rewriters()
    if name in table:
        return table.get(name).factory(epsilon=epsilon, **check_options(name, options))
    if ":" in name and not name.startswith(("flawed:", "planted:")):
        if not allow_user_code:
            raise DPCoreError(
                "user code (file.py:factory or module:factory) can be audited from the CLI only"
            )
        from dpcore.usercode import load_factory

        factory = load_factory(name)
        try:
            obj = factory(epsilon=epsilon, **options)
        except DPCoreError:
            raise
        except Exception as exc:
            raise DPCoreError(f"{name} raised {type(exc).__name__}: {exc}") from None
        return check_rewriter(obj)
    valid = ", ".join(e.name for e in _in_order())
    raise DPCoreError(f"unknown rewriter {name!r}; choose one of: {valid}, or path/to/file.py:factory")
