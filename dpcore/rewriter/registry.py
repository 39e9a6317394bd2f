"""Names to rewriters for ``audit-rewriter`` (the CLI and the dashboard read this table).

====================================  ========================================================================
name                                  what is built
====================================  ========================================================================
``dp-mlm``                            dpcore's DP-MLM on whole lines (:mod:`dpcore.rewriter.dpmlm`)
``dp-prompt``                         DP-Prompt on SmolLM2-135M-Instruct (:mod:`dpcore.rewriter.dpprompt`)
``santext-words``                     SanText applied to every word (:mod:`dpcore.rewriter.wordlevel`)
``flawed:dp-mlm-stopwords``           FLAWED: DP-MLM keeping stopwords verbatim (dpcore.flawed.rewriters)
``flawed:dp-mlm-line-epsilon``        FLAWED: DP-MLM reporting its per-token ε as the line's
``flawed:dp-prompt-keeps-last-word``  FLAWED: DP-Prompt appending the input's last word (planted leak)
``planted:copy``                      test instrument: copies its input with probability ``q``
``planted:leak-word``                 test instrument: leaks the input's last word with probability ``q``
``path/file.py:factory``              the user's own code (CLI only, ``allow_user_code=True``)
``package.module:factory``            likewise, from an installed module
====================================  ========================================================================

User factories are called as ``factory(epsilon=E)`` and must return an object with the
:class:`~dpcore.rewriter.interface.TextRewriter` interface. The dashboard never passes
``allow_user_code``: it cannot load or run code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpcore.rewriter.interface import TextRewriter, check_rewriter
from dpcore.validation import DPCoreError, check_epsilon

__all__ = ["DISPLAY_NAMES", "RewriterChoice", "available_rewriters", "display_name", "load_rewriter"]

#: Planted rewriters' public pool: this many corpus sentences
#: (:func:`dpcore.rewriter.pairs.corpus_sentences`).
PLANTED_POOL = 20
#: The leak-word rewriter's public word list: this many ordinary words.
PLANTED_WORDS = 100


#: A registered rewriter as a sentence names it, mid-sentence (:func:`display_name`); the machine
#: name (CLI argument, URL, JSON key) never changes. The rewriters' counterpart of the mechanisms'
#: :attr:`dpcore.registry.RegistryEntry.display`.
DISPLAY_NAMES = {
    "dp-mlm": "dpcore's DP-MLM",
    "dp-prompt": "dpcore's DP-Prompt",
    "santext-words": "dpcore's SanText on every word",
    "flawed:dp-mlm-stopwords": "the flawed DP-MLM that keeps stopwords",
    "flawed:dp-mlm-line-epsilon": "the flawed DP-MLM that reports its per-token ε as the line's",
    "flawed:dp-prompt-keeps-last-word": "the flawed DP-Prompt that keeps the input's last word",
    "planted:copy": "the planted rewriter that copies its input",
    "planted:leak-word": "the planted rewriter that leaks its input's last word",
}


def display_name(name: str) -> str:
    """A rewriter as a sentence names it, mid-sentence: ``"dpcore's DP-MLM"``, ``"the flawed DP-MLM
    that keeps stopwords"``; any other name (your own code, from the CLI) as ``"the rewriter NAME"``.

    >>> display_name("flawed:dp-mlm-stopwords")
    'the flawed DP-MLM that keeps stopwords'
    """
    return DISPLAY_NAMES.get(name, f"the rewriter {name}")


@dataclass(frozen=True)
class RewriterChoice:
    """One selectable rewriter (for dropdowns and ``list``)."""

    name: str
    summary: str
    kind: str  # "dpcore", "flawed", "planted"
    flawed: bool = False
    #: Needs torch and the causal LM (DP-Prompt): a CLI and bench feature; the dashboard, which
    #: stays torch-free, shows such rewriters from shipped results only.
    needs_torch: bool = False

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
    from dpcore.flawed.rewriters import FLAWED_REWRITERS

    out = [
        RewriterChoice("dp-mlm", "DP-MLM on whole lines (ε per token, a line of n tokens n·ε)", "dpcore"),
        RewriterChoice(
            "dp-prompt",
            "DP-Prompt: SmolLM2-135M paraphrases at T = 2Δu/ε (ε per token, n tokens n·ε)",
            "dpcore",
            needs_torch=True,
        ),
        RewriterChoice(
            "santext-words", "SanText applied to every word (ε·d per word, summed over the words)", "dpcore"
        ),
    ]
    out += [
        RewriterChoice(n, s, "flawed", True, getattr(c, "NEEDS_TORCH", False))
        for n, (c, s) in FLAWED_REWRITERS.items()
    ]
    out += [
        RewriterChoice("planted:copy", "test instrument: copies its input with probability q", "planted"),
        RewriterChoice(
            "planted:leak-word", "test instrument: leaks the input's last word with probability q", "planted"
        ),
    ]
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
        ``full_vocabulary`` (DP-MLM, SanText), ``max_new_tokens`` and ``device`` (DP-Prompt),
        ``q`` (planted rewriters).

    Raises
    ------
    DPCoreError
        Unknown name, user code without ``allow_user_code``, an unknown option, a factory that
        fails or returns an object without the interface.
    """
    if not isinstance(name, str) or not name.strip():
        raise DPCoreError("give a rewriter name")
    name = name.strip()
    epsilon = check_epsilon(epsilon)
    options = {k: v for k, v in options.items() if v is not None}

    def take(*allowed: str) -> dict[str, Any]:
        extra = sorted(set(options) - set(allowed))
        if extra:
            raise DPCoreError(f"{name} takes no option {', '.join(extra)}")
        return options

    if name == "dp-mlm":
        from dpcore.rewriter.dpmlm import DPMLMRewriter

        return DPMLMRewriter(epsilon=epsilon, **take("full_vocabulary"))
    if name == "dp-prompt":
        from dpcore.rewriter.dpprompt import DPPromptRewriter

        return DPPromptRewriter(epsilon=epsilon, **take("max_new_tokens", "device"))
    if name == "santext-words":
        from dpcore.rewriter.wordlevel import WordSanitizerRewriter

        return WordSanitizerRewriter(epsilon=epsilon, **take("full_vocabulary"))
    if name.startswith("flawed:"):
        from dpcore.flawed.rewriters import FLAWED_REWRITERS

        if name not in FLAWED_REWRITERS:
            raise DPCoreError(
                f"unknown flawed rewriter {name!r}; choose one of: {', '.join(FLAWED_REWRITERS)}"
            )
        cls = FLAWED_REWRITERS[name][0]
        return cls(epsilon=epsilon, **take(*cls.OPTIONS))
    if name in ("planted:copy", "planted:leak-word"):
        from dpcore.rewriter.pairs import _replacement_words, corpus_sentences
        from dpcore.rewriter.planted import CopyRewriter, LeakWordRewriter

        opts = take("q")
        q = opts.get("q", 0.5)
        pool = corpus_sentences()[:PLANTED_POOL]
        if name == "planted:copy":
            return CopyRewriter(epsilon=epsilon, q=q, pool=pool)
        return LeakWordRewriter(epsilon=epsilon, q=q, pool=pool, words=_replacement_words()[:PLANTED_WORDS])
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
    valid = ", ".join(c.name for c in available_rewriters())
    raise DPCoreError(f"unknown rewriter {name!r}; choose one of: {valid}, or path/to/file.py:factory")
