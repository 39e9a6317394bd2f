"""DP-Prompt (Utpala, Hooker and Chen, Findings of EMNLP 2023, §3): a language model paraphrases
the document, and the paraphrase is sampled at a temperature set from ε over clipped logits.

The model reads a zero-shot prompt that holds the private document x (:data:`PROMPT`, in the
model's chat format) and writes the paraphrase y₁ y₂ … one token at a time. At step t, with
ℓ_v(x, y_<t) the model's logit for token v of its vocabulary V (all 49,152 tokens, the end
token included):

(1) clip:         u_v = min(max(ℓ_v(x, y_<t), b₁), b₂),            Δu = b₂ − b₁;
(2) sample:       Pr[y_t = v] = exp(u_v / T) / Σ_w exp(u_w / T);
(3) temperature:  T = 2Δu / ε,   i.e. ε = 2(b₂ − b₁) / T per generated token;
(4) composition:  a paraphrase of at most n tokens is (n·ε)-LDP for the whole document.

(1)–(3) are the exponential mechanism (McSherry and Talwar 2007) with the clipped logit as the
utility: every u_v lies in [b₁, b₂] *whatever the document is*, so for any two documents x, x′
each weight changes by at most e^{Δu/T} = e^{ε/2} and the normaliser by at most as much, and each
token is ε-LDP with respect to the whole document, given the tokens before it. The paper states
this as its privacy theorem for DP-Prompt (ε = 2(b₂ − b₁)/T per token, §3); (4) is sequential
composition over the generated tokens (Dwork and Roth 2014, Thm 3.16): **the paper's theorem is
per token, and the n·ε per document is dpcore's accounting**, which the claim dpcore audits states
as **n·ε per document** with n = ``max_new_tokens`` (the generation may stop earlier at the end
token; stopping is a function of the released tokens). The authors' released generation script
samples at temperature T without clipping the logits, so (1) is dpcore's, as the theorem requires.
The draw (2) is exact: float64, Gumbel-max over all of V
(:func:`sample_tokens`), with no top-k or top-p truncation, which would break (1)–(3).

**The model and the clip.** The model is SmolLM2-135M-Instruct (:mod:`dpcore.models.causal_lm`).
The paper used larger models and gives no clip for this one, so dpcore calibrates its own on
public text (:func:`calibrate_clip`, as :mod:`dpcore.text.dpmlm` does for DP-MLM: over the first
steps of greedy paraphrases of the first 50 Lee-corpus sentences, b₁ = the median of each step's
1st percentile over V and b₂ = the 95th percentile of each step's maximum: a causal LM's top
logits carry the paraphrase, and a b₂ at their median flattened them into noise). Any fixed,
public (b₁, b₂) gives the guarantee; the calibration only affects utility.
``python bench/dpprompt_calibration.py`` recomputes :data:`DEFAULT_CLIP`.

**What to expect.** The guarantee is strong only when T is large, and a large T makes the model
sample almost uniformly from V: with Δu = 40, ε = 10 per token is T = 8, noise. At the
temperatures that give paraphrases (T ≤ 1, ε ≥ 80 per token), a 32-token paraphrase claims
ε ≥ 2,560: far beyond what any finite audit can certify (:mod:`dpcore.rewriter.power`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpcore.models.causal_lm import MODEL_NAME
from dpcore.parameters import ParameterSpec
from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import DPCoreError, check_epsilon, check_finite_float, check_int

__all__ = [
    "CITATION",
    "DEFAULT_CLIP",
    "DEFAULT_MAX_NEW_TOKENS",
    "PROMPT",
    "DPPromptRewriter",
    "calibrate_clip",
    "sample_tokens",
    "temperature",
    "token_log_probs",
]

CITATION = (
    "Utpala et al. 2023, DP-Prompt §3: each generated token ε-LDP with ε = 2(b₂ − b₁)/T (the paper's "
    "theorem, per token); a paraphrase of n tokens n·ε is dpcore's composition"
)
#: The zero-shot prompt (the user turn of the model's chat template).
PROMPT = "Paraphrase the following text. Reply with the paraphrase only.\n\nText: {text}"
#: (b₁, b₂) for SmolLM2-135M-Instruct, from :func:`calibrate_clip` on the Lee corpus.
DEFAULT_CLIP = (-5.6, 34.4)
#: Most tokens generated per rewrite (the n of the claim n·ε).
DEFAULT_MAX_NEW_TOKENS = 32
#: Most tokens generated per rewrite that the API accepts.
MAX_NEW_TOKENS = 512
#: Longest input, in the model's tokens.
MAX_INPUT_TOKENS = 512
#: Rewrites generated together (one forward pass per step).
BATCH = 50


def _check_clip(clip: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = (check_finite_float(v, name="clip") for v in clip)
    except (TypeError, ValueError):
        raise DPCoreError(f"clip must be two numbers (b₁, b₂), got {clip!r}") from None
    if not hi > lo:
        raise DPCoreError(f"clip must have b₁ < b₂, got ({lo:g}, {hi:g})")
    return float(lo), float(hi)


def temperature(epsilon: float, clip: Sequence[float]) -> float:
    """T = 2(b₂ − b₁)/ε, equation (3).

    Examples
    --------
    >>> temperature(10.0, (-5.6, 34.4))
    8.0
    """
    lo, hi = _check_clip(clip)
    return 2.0 * (hi - lo) / check_epsilon(epsilon)


def _scaled(logits: np.ndarray, epsilon: float, clip: Sequence[float]) -> np.ndarray:
    lo, hi = _check_clip(clip)
    u = np.clip(np.asarray(logits, dtype=np.float64), lo, hi)  # (1)
    return u / temperature(epsilon, (lo, hi))  # u / T, (2)–(3)


def token_log_probs(logits: np.ndarray, epsilon: float, clip: Sequence[float]) -> np.ndarray:
    """ln Pr[y_t = v] of equation (2) for each row of ``logits`` (float64, rows sum to 1)."""
    from dpcore.logspace import logsumexp

    s = _scaled(logits, epsilon, clip)
    return s - logsumexp(s, axis=-1, keepdims=True)


def sample_tokens(
    logits: np.ndarray, epsilon: float, clip: Sequence[float], rng: np.random.Generator
) -> np.ndarray:
    """One draw of equation (2) per row: argmax_v (u_v/T + G_v), G_v i.i.d. Gumbel (Gumbel-max)."""
    s = _scaled(logits, epsilon, clip)
    return np.argmax(s + rng.gumbel(size=s.shape), axis=-1).astype(np.int64)


@REWRITERS.register(
    "dp-prompt",
    summary="DP-Prompt: SmolLM2-135M paraphrases at T = 2Δu/ε (ε per token, n tokens n·ε)",
    citation=CITATION,
    tags=("kind:dpcore", "needs-torch"),
    display="dpcore's DP-Prompt",
)
class DPPromptRewriter:
    """DP-Prompt on a local causal LM (module docstring): a :class:`~dpcore.rewriter.interface.TextRewriter`.

    Parameters
    ----------
    epsilon:
        ε per generated token (the paper's ε); T = 2(b₂ − b₁)/ε.
    max_new_tokens:
        Most tokens per paraphrase, n: the claim is n·ε per document.
    clip:
        (b₁, b₂), public constants (default :data:`DEFAULT_CLIP`).
    device:
        Where the shipped model runs (``cpu``, ``cuda``, ``auto``).
    lm:
        A :class:`~dpcore.models.causal_lm.CausalLM` to use instead of the shipped one (tests).
    batch_size:
        Rewrites generated together.
    """

    name = "dp-prompt"
    #: runs a torch model: the dashboard shows it from shipped results only
    NEEDS_TORCH = True
    PARAMETERS = (
        ParameterSpec(
            "max_new_tokens", DEFAULT_MAX_NEW_TOKENS, "int", 1, MAX_NEW_TOKENS,
            "most tokens per paraphrase, n: the claim is n·ε per document",
        ),
    )  # fmt: skip
    #: where it runs, not what it computes: passed on by the registry, checked here
    RUN_OPTIONS = ("device",)

    def __init__(
        self,
        *,
        epsilon: float,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        clip: Sequence[float] = DEFAULT_CLIP,
        device: str = "cpu",
        lm: Any = None,
        batch_size: int = BATCH,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.max_new_tokens = check_int(
            max_new_tokens, name="max_new_tokens", min_value=1, max_value=MAX_NEW_TOKENS
        )
        self.clip = _check_clip(clip)
        self.temperature = temperature(self.epsilon, self.clip)
        self.batch_size = check_int(batch_size, name="batch_size", min_value=1, max_value=10_000)
        if lm is None:
            from dpcore.models.devices import check_device_name

            self.device = check_device_name(device)
        else:
            self.device = "given"
        self._lm = lm
        self.claim = self._claim()

    def _claim(self) -> RewriterClaim:
        return RewriterClaim(self.max_new_tokens * self.epsilon, unit="document", citation=CITATION)

    def __getstate__(self) -> dict[str, Any]:
        # the shipped model is loaded again where the rewriter is unpickled (a worker)
        state = dict(self.__dict__)
        if self.device != "given":
            state["_lm"] = None
        return state

    @property
    def lm(self) -> Any:
        """The causal LM (the shipped SmolLM2, loaded on first use: :mod:`dpcore.models.causal_lm`)."""
        if self._lm is None:
            from dpcore.models.causal_lm import load_smollm2

            self._lm = load_smollm2(self.device)
        return self._lm

    def _prompt(self, text: str) -> np.ndarray:
        text = str(text)
        if not text.strip():
            raise DPCoreError("DP-Prompt cannot paraphrase an empty text")
        n = int(self.lm.count_tokens(text))
        if n > MAX_INPUT_TOKENS:
            raise DPCoreError(f"the text has {n:,} tokens; DP-Prompt here takes at most {MAX_INPUT_TOKENS}")
        return self.lm.prompt_ids(PROMPT.format(text=text))

    def generate_ids(self, text: str, count: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``count`` independent paraphrases of ``text`` as token ids (the end token excluded).

        All rows advance together, one forward pass per step; the loop is over the (at most
        ``max_new_tokens``) steps, never over rows or V.
        """
        prompt = self._prompt(text)
        eos = np.asarray(self.lm.eos_ids, dtype=np.int64)
        out: list[np.ndarray] = []
        for start in range(0, int(count), self.batch_size):
            b = min(self.batch_size, int(count) - start)
            state, logits = self.lm.start(prompt, b)
            ids = np.full((b, self.max_new_tokens), -1, dtype=np.int64)
            done = np.zeros(b, dtype=bool)
            for t in range(self.max_new_tokens):
                tok = sample_tokens(logits, self.epsilon, self.clip, rng)
                tok[done] = eos[0]
                ids[:, t] = np.where(done, -1, tok)
                done |= np.isin(tok, eos)
                if done.all() or t + 1 == self.max_new_tokens:
                    break
                logits = self.lm.step(state, tok)
            for row in ids:
                row = row[row >= 0]
                stop = np.flatnonzero(np.isin(row, eos))
                out.append(row[: stop[0]] if stop.size else row)
        return out

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """One paraphrase per text. Copies of one text are generated together."""
        texts = [str(t) for t in texts]
        result: list[str] = [""] * len(texts)
        order: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            order.setdefault(t, []).append(i)
        for text, where in order.items():
            for i, ids in zip(where, self.generate_ids(text, len(where), rng), strict=True):
                result[i] = self.lm.decode(ids)
        return result

    def describe(self) -> dict[str, Any]:
        return {
            "rewriter": self.name,
            "model": getattr(self._lm, "name", None) or MODEL_NAME,
            "epsilon_per_token": self.epsilon,
            "max_new_tokens": self.max_new_tokens,
            "epsilon_per_document": self.claim.epsilon,
            "clip": list(self.clip),
            "temperature": self.temperature,
            "prompt": PROMPT,
        }


def calibrate_clip(
    lm: Any, sentences: Sequence[str], *, steps: int = 16, percentile: float = 1.0, top: float = 0.95
) -> tuple[float, float]:
    """(b₁, b₂) from public text (module docstring): over the first ``steps`` steps of a greedy
    paraphrase of each sentence, the median of each step's ``percentile``-th percentile of the
    logits over V, and the ``top`` quantile of each step's maximum."""
    lows, highs = [], []
    for s in sentences:
        state, logits = lm.start(lm.prompt_ids(PROMPT.format(text=str(s))), 1)
        for _ in range(int(steps)):
            row = logits[0]
            lows.append(float(np.percentile(row, percentile)))
            highs.append(float(row.max()))
            nxt = np.asarray([int(np.argmax(row))], dtype=np.int64)
            if int(nxt[0]) in lm.eos_ids:
                break
            logits = lm.step(state, nxt)
    if not lows:
        raise DPCoreError("calibrate_clip needs at least one sentence")
    return float(np.median(lows)), float(np.quantile(highs, top))


def _round_clip(clip: tuple[float, float]) -> tuple[float, float]:
    """Round outwards to 0.1 (the shipped constants are round numbers)."""
    return math.floor(clip[0] * 10) / 10, math.ceil(clip[1] * 10) / 10
