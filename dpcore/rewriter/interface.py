"""What a text rewriter needs to be audited: ``rewrite(texts, rng)`` and the claim it makes.

A *rewriter* releases a whole text (a sentence or a document) instead of one word: DP-MLM
(Meisenbacher et al. 2024) rewrites a line token by token, DP-Prompt (Utpala et al. 2023) has a
language model paraphrase it. Any object with these members can be audited
(:class:`TextRewriter`):

``name``
    A label for reports.
``claim``
    A :class:`RewriterClaim`: ε per document, or ε per token with the composition the paper
    states (sequential: a text of n tokens spends n·ε), and its premise.
``rewrite(texts, rng) -> list[str]``
    One independent rewrite per input text, drawn with the ``numpy.random.Generator`` it is
    handed (the only randomness it may use; :mod:`dpcore.rewriter.contract` checks that).

For a claim per token, the rewriter also says how many tokens a text has:
``count_tokens(text) -> int`` (its own tokenizer: the claim is about its tokens).

Nothing here runs user code: :mod:`dpcore.rewriter.registry` resolves names, and only the CLI
loads code from a path the user names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError

__all__ = [
    "UNITS",
    "RewriterClaim",
    "TextRewriter",
    "check_rewriter",
    "quantity_words",
    "same_length_premise",
]

#: What the claim's ε is per: a whole released text, or one released token.
UNITS = ("document", "token")


def quantity_words(order: float | None) -> str:
    """What a claim's ε bounds, in words: "privacy loss" (pure DP), or "Rényi divergence of order 2"
    for a Rényi-DP claim of that order (one home for the verdicts, the table and the page)."""
    return "privacy loss" if order is None else f"Rényi divergence of order {float(order):g}"


@dataclass(frozen=True)
class RewriterClaim:
    """A rewriter's privacy claim, as its paper states it.

    Attributes
    ----------
    epsilon:
        ε per :attr:`unit`.
    unit:
        ``"document"``: the whole rewrite is ε-DP for any two inputs (of the premise);
        ``"token"``: each released token is ε-DP, and a text of n tokens spends n·ε
        (sequential composition, Dwork and Roth 2014, Thm 3.16).
    same_length:
        The premise that the two inputs have the same number of tokens (the length is public:
        the output of a token-by-token rewriter has the input's length). Pairs that break it
        are outside the claim and are not tested.
    citation:
        Where the claim is made (paper and section).
    metric:
        For a metric claim per token (ε·d(xᵢ, x′ᵢ) per position, d this metric): its name. The
        rewriter then gives each pair's bound with ``claimed_bound(x, x_prime)``.
    order:
        None for a pure ε-DP claim (the privacy loss ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S] ≤ ε for
        every event S). A Rényi order α > 1 for a Rényi-DP claim (Mironov 2017, *CSF*, Def. 4):
        D_α(M(x) ‖ M(x′)) ≤ ε, tested as the trade-off region it implies
        (:mod:`dpcore.tradeoff`, ``order``); per document only.
    """

    epsilon: float
    unit: str = "document"
    same_length: bool = False
    citation: str = ""
    metric: str = ""
    order: float | None = None

    def __post_init__(self) -> None:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
            raise DPCoreError(f"the claim's epsilon must be a number, got {type(eps).__name__}")
        if not (math.isfinite(float(eps)) and float(eps) > 0):
            raise DPCoreError(f"the claim's epsilon must be finite and > 0, got {eps!r}")
        if self.unit not in UNITS:
            raise DPCoreError(f"the claim's unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.metric and self.unit != "token":
            raise DPCoreError("a metric claim is per token (ε·d(xᵢ, x′ᵢ) at each position)")
        if self.order is not None:
            o = self.order
            if isinstance(o, bool) or not isinstance(o, (int, float)) or not (math.isfinite(o) and o > 1):
                raise DPCoreError(f"the claim's Rényi order must be a finite number > 1, got {o!r}")
            if self.unit != "document" or self.metric:
                raise DPCoreError("a Rényi claim is stated per document (compose per-token charges into it)")

    @property
    def quantity(self) -> str:
        """What the claim's ε bounds, in words: the privacy loss, or the Rényi divergence of its order."""
        return quantity_words(self.order)

    def bound(self, tokens_x: int | None, tokens_x_prime: int | None) -> float:
        """The claimed bound on the privacy loss between two inputs of these token counts.

        ``document``: ε. ``token``: ε·max(n, n′) (sequential composition over the longer
        text's tokens; with :attr:`same_length`, n = n′ for every pair in the premise).
        """
        if self.unit == "document":
            return float(self.epsilon)
        if self.metric:
            raise DPCoreError("a metric claim's bound depends on the words: use the rewriter's claimed_bound")
        if tokens_x is None or tokens_x_prime is None:
            raise DPCoreError("a per-token claim needs the rewriter's count_tokens(text)")
        return float(self.epsilon) * max(int(tokens_x), int(tokens_x_prime))

    def describe(self) -> str:
        """One line: what is claimed, per what, composed how."""
        if self.order is not None:
            text = (
                f"Rényi DP of order {self.order:g}: D_{self.order:g}(M(x) ‖ M(x′)) ≤ "
                f"{epsilon_text(self.epsilon)} per document"
            )
        elif self.unit == "document":
            text = f"ε = {epsilon_text(self.epsilon)} per document"
        elif self.metric:
            text = (
                f"ε·d = {self.epsilon:g}·d(xᵢ, x′ᵢ) per word (d: {self.metric}), summed over the positions "
                "by sequential composition"
            )
        else:
            text = (
                f"ε = {epsilon_text(self.epsilon)} per token, a text of n tokens (n·ε)-DP by "
                "sequential composition"
            )
        if self.same_length:
            text += "; premise: both texts have the same number of tokens"
        return text + (f" ({self.citation})" if self.citation else "")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self) | {"text": self.describe()}
        if not self.metric:
            del out["metric"]  # only metric claims have one
        if self.order is None:
            del out["order"]  # only Rényi claims have one
        return out


@runtime_checkable
class TextRewriter(Protocol):
    """A sentence- or document-level rewriter as the audit sees it (a black box)."""

    name: str
    claim: RewriterClaim

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """One independent rewrite per input text."""
        ...


def check_rewriter(obj: object) -> TextRewriter:
    """Validate that ``obj`` has the rewriter interface; raise one clear :class:`DPCoreError`."""
    missing = [a for a in ("name", "claim", "rewrite") if not hasattr(obj, a)]
    if missing:
        raise DPCoreError(
            f"the rewriter ({type(obj).__name__}) lacks {', '.join(missing)}; it needs name, claim "
            "(a dpcore.rewriter.RewriterClaim) and rewrite(texts, rng) -> list of str"
        )
    if not callable(obj.rewrite):
        raise DPCoreError("the rewriter's rewrite must be callable: rewrite(texts, rng) -> list of str")
    if not isinstance(obj.claim, RewriterClaim):
        raise DPCoreError(
            f"the rewriter's claim must be a dpcore.rewriter.RewriterClaim, got {type(obj.claim).__name__}"
        )
    if obj.claim.unit == "token" and not callable(getattr(obj, "count_tokens", None)):
        raise DPCoreError("a rewriter with a per-token claim needs count_tokens(text) -> int")
    if obj.claim.metric and not callable(getattr(obj, "claimed_bound", None)):
        raise DPCoreError("a rewriter with a metric claim needs claimed_bound(x, x_prime) -> float")
    return obj  # type: ignore[return-value]


def call_rewrite(rewriter: TextRewriter, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
    """``rewriter.rewrite(texts, rng)``, checked: a list of as many strings as inputs."""
    try:
        out = rewriter.rewrite(list(texts), rng)
    except DPCoreError:
        raise
    except Exception as exc:
        raise DPCoreError(f"{rewriter.name}: rewrite raised {type(exc).__name__}: {exc}") from None
    if isinstance(out, str) or not isinstance(out, Sequence | np.ndarray):
        raise DPCoreError(f"{rewriter.name}: rewrite must return a list of strings, got {type(out).__name__}")
    out = list(out)
    if len(out) != len(texts):
        raise DPCoreError(f"{rewriter.name}: rewrite returned {len(out)} texts for {len(texts)} inputs")
    bad = next((o for o in out if not isinstance(o, str)), None)
    if bad is not None:
        raise DPCoreError(f"{rewriter.name}: rewrite returned a {type(bad).__name__}, not a string")
    return out


def same_length_premise(
    tokens_x: Sequence[str], tokens_x_prime: Sequence[str], vocab: Any, *, unit: str, texts: str = "texts"
) -> str | None:
    """The premise of a token-by-token rewriter's claim (DP-MLM, SanText on every word): both
    texts have the same number of tokens (the output's length is the input's) and every token is
    in V (one outside V is released as ``[UNK]``). Returns why a pair is outside it, or None.

    ``unit`` names the tokens in the message ("tokens", "words"), ``texts`` the texts ("lines").
    """
    tx, txp = list(tokens_x), list(tokens_x_prime)
    if len(tx) != len(txp):
        return f"the {texts} have {len(tx)} and {len(txp)} {unit} (the claim is for {texts} of one length)"
    ids = vocab.ids(np.asarray([*tx, *txp], dtype=object))
    if ids.size and ids.min() < 0:
        bad = [t for t, i in zip([*tx, *txp], ids, strict=True) if i < 0][:3]
        return f"{unit} outside V ({', '.join(bad)}) are released as [UNK], outside the claim"
    return None
