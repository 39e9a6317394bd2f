"""Names to sanitizers for the text audit.

================================  ==================================================================
name                              what is built
================================  ==================================================================
a registered text mechanism       dpcore's own (``santext``, ``santext+``, ``feyisetan``, ``random``…)
``krr``                           k-ary randomized response over the vocabulary (reference, ε-LDP)
``flawed:…``                      a labelled flawed reproduction (:mod:`dpcore.flawed.text`)
``pypantera:KIND``                pyPANTERA's mechanism run as shipped (:mod:`.pypantera`)
``mldp:KIND``                     mldp-text's mechanism run as shipped in its own environment
                                  (:mod:`.mldp`; ``python -m dpcore adapters install mldp``)
``diffractor:geometric``          dp-diffractor's 1-Diffractor run as shipped in its own
                                  environment (:mod:`.diffractor`; ``adapters install diffractor``)
``path/file.py:factory``          the user's own code (CLI only, ``allow_user_code=True``)
``package.module:factory``        likewise, from an installed module
``subprocess:PY::mod:factory``    the user's code run by another interpreter ``PY`` (its own
                                  environment; CLI only, :mod:`.subprocess_adapter`)
================================  ==================================================================

User factories are called as ``factory(epsilon=E, vocab=WORDS)`` with ``WORDS`` the list of
vocabulary words, and must return an object with the
:class:`~dpcore.textaudit.interface.TextSanitizer` interface. The dashboard never passes
``allow_user_code``: it cannot load or run code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.interface import DpcoreSanitizer, check_sanitizer
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.usercode import load_factory
from dpcore.validation import DPCoreError

__all__ = ["SanitizerChoice", "available_sanitizers", "is_user_code", "load_sanitizer"]


@dataclass(frozen=True)
class SanitizerChoice:
    """One selectable sanitizer (for dropdowns and ``list``)."""

    name: str
    label: str
    kind: str  # "dpcore", "reference", "flawed", "third-party"
    flawed: bool = False
    summary: str = ""


def available_sanitizers() -> list[SanitizerChoice]:
    """Every sanitizer the dashboard and the CLI can audit by name (no user code)."""
    from dpcore.flawed.text import FLAWED_TEXT_SANITIZERS
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.textaudit.pypantera import PYPANTERA_MECHANISMS, pypantera_available

    out = [
        SanitizerChoice(e.name, f"{e.name} — {e.summary}", "dpcore", e.flawed, e.summary)
        for e in TEXT_MECHANISMS
    ]
    krr = "k-ary randomized response over V (reference ε-LDP)"
    out.append(SanitizerChoice("krr", f"krr — {krr}", "reference", False, krr))
    out += [
        SanitizerChoice(n, f"{n} — FLAWED reproduction: {s}", "flawed", True, s)
        for n, (_, s) in FLAWED_TEXT_SANITIZERS.items()
    ]
    if pypantera_available():
        for k, spec in PYPANTERA_MECHANISMS.items():
            summary = f"pyPANTERA 1.0.2 as shipped; claim: {spec.citation}"
            out.append(
                SanitizerChoice(f"pypantera:{k}", f"pypantera:{k} — {summary}", "third-party", False, summary)
            )
    from dpcore.textaudit.mldp import mldp_choice_rows

    for row in mldp_choice_rows():
        if row["available"]:  # the environment is installed
            n, s = row["name"], row["summary"]
            out.append(SanitizerChoice(n, f"{n} — {s}", "third-party", False, s))
    from dpcore.textaudit.diffractor import CITATION, DIFFRACTOR_MECHANISMS, diffractor_installed

    if diffractor_installed():
        for k in DIFFRACTOR_MECHANISMS:
            s = f"dp-diffractor 0.2.1 as shipped, in its own environment; claim: {CITATION}"
            out.append(SanitizerChoice(f"diffractor:{k}", f"diffractor:{k} — {s}", "third-party", False, s))
    return out


def is_user_code(name: str) -> bool:
    """True when ``name`` points at user code (``file.py:factory``, ``module:factory`` or
    ``subprocess:PY::target``)."""
    if ":" not in name:
        return False
    if name.startswith("subprocess:"):
        return True
    head = name.rsplit(":", 1)[0]
    return head not in ("flawed", "pypantera", "mldp", "diffractor")


def load_sanitizer(
    name: str,
    *,
    epsilon: float,
    vocab: Vocabulary,
    params: dict[str, Any] | None = None,
    allow_user_code: bool = False,
) -> Any:
    """Build the sanitizer called ``name`` at ``epsilon`` over ``vocab``.

    Raises
    ------
    DPCoreError
        Unknown name, user code without ``allow_user_code``, a factory that fails or returns
        an object without the interface.
    """
    from dpcore.text import TEXT_MECHANISMS, create_text_mechanism

    if not isinstance(name, str) or not name.strip():
        raise DPCoreError("give a mechanism name")
    name = name.strip()
    params = dict(params or {})
    if name in TEXT_MECHANISMS:
        return DpcoreSanitizer(create_text_mechanism(name, vocab=vocab, epsilon=epsilon, **params))
    if name == "krr":
        return KaryRandomizedResponse(epsilon=epsilon, words=list(map(str, vocab.words)))
    if name.startswith("flawed:"):
        from dpcore.flawed.text import FLAWED_TEXT_SANITIZERS

        if name not in FLAWED_TEXT_SANITIZERS:
            raise DPCoreError(
                f"unknown flawed sanitizer {name!r}; choose one of: {', '.join(FLAWED_TEXT_SANITIZERS)}"
            )
        return FLAWED_TEXT_SANITIZERS[name][0](epsilon=epsilon, vocab=vocab)
    if name.startswith("pypantera:"):
        from dpcore.textaudit.pypantera import PypanteraSanitizer

        return PypanteraSanitizer(kind=name.split(":", 1)[1], epsilon=epsilon, vocab=vocab, **params)
    if name.startswith("mldp:"):
        from dpcore.textaudit.mldp import MldpSanitizer

        return MldpSanitizer(kind=name.split(":", 1)[1], epsilon=epsilon, vocab=vocab, **params)
    if name.startswith("diffractor:"):
        from dpcore.textaudit.diffractor import DiffractorSanitizer

        return DiffractorSanitizer(kind=name.split(":", 1)[1], epsilon=epsilon, vocab=vocab, **params)
    if name.startswith("subprocess:"):
        if not allow_user_code:
            raise DPCoreError(
                "user code (subprocess:PYTHON::module:factory) can be audited from the CLI only"
            )
        from dpcore.textaudit.subprocess_adapter import SubprocessSanitizer, parse_subprocess_spec

        python, target = parse_subprocess_spec(name)
        return SubprocessSanitizer(
            python=python, target=target, epsilon=epsilon, vocab=vocab, params=params, label=name
        )
    if is_user_code(name):
        if not allow_user_code:
            raise DPCoreError(
                "user code (file.py:factory or module:factory) can be audited from the CLI only"
            )
        factory = load_factory(name)
        try:
            obj = factory(epsilon=epsilon, vocab=list(map(str, vocab.words)))
        except DPCoreError:
            raise
        except Exception as exc:
            raise DPCoreError(f"{name} raised {type(exc).__name__}: {exc}") from None
        return check_sanitizer(obj)
    valid = ", ".join(c.name for c in available_sanitizers())
    raise DPCoreError(
        f"unknown text sanitizer {name!r}; choose one of: {valid}, or path/to/file.py:factory, "
        "or subprocess:/path/to/python::module:factory"
    )
