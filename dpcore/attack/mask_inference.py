"""Mask-token inference attack on sanitized text (SanText, Yue et al. 2021, §5.3).

For each sanitized sentence, every position in turn is replaced by the mask token and a masked
language model predicts it from the *sanitized* context. The attack succeeds at a position when
the top-1 prediction equals the *original* token. The **defense rate** is the fraction of
positions where the attack fails; at ε → ∞ (sanitized = original) it is 1 − the attacker's
top-1 accuracy on clean text, the attacker's own strength.

Input
-----
Pairs of aligned token lists ``(original, sanitized)`` with ``len(original) == len(sanitized)``:
exactly what a token-level sanitizer (``dpcore.text``: SanText, SanText+, …) produces, one
output token per input token.

Units
-----
``unit="word"`` (default; tokens are words, e.g. GloVe-tokenized text)
    Each word of the sanitized sentence is masked **as a whole by a single mask token**; the
    other words keep all their WordPieces. The prediction is the top-1 *word-initial* piece
    (``##`` continuation pieces, special and ``[unused]`` tokens are excluded) and it is compared
    with the original word at **word level** (after the tokenizer's normalisation, i.e.
    lower-casing for an uncased model). An original word that is not a single word-initial
    piece of the model's vocabulary can never be predicted by one mask: those positions count
    as defended, and are reported separately (``n_unrepresentable`` and
    ``defense_rate_representable``), so the headline rate is not silently inflated. This unit
    assumes a WordPiece vocabulary (BERT family: word-initial pieces are bare words, ``##``
    marks continuations); for other tokenizers use ``unit="wordpiece"`` with the model's own
    tokens.
``unit="wordpiece"`` (tokens are the model's WordPieces, e.g. text sanitized with the ``bert``
    embedding)
    Each piece is masked by one mask token and the top-1 piece (any non-special piece) is
    compared with the original piece. Original pieces outside the vocabulary are
    unrepresentable, as above.

Batching
--------
All masked variants of a sentence, and of many sentences, are packed into forward passes of at
most ``batch_size`` variants (sorted by length to limit padding). Results do not depend on
``batch_size``. For BERT models the output head is computed only at the masked position.
Inference is deterministic (eval mode, no sampling), so results record no seed.

Confidence interval
-------------------
Two-sided Clopper–Pearson interval for the defense rate at level ``confidence``, treating the
positions as independent Bernoulli trials (positions within a sentence are correlated, so the
interval is optimistic about precision; it still says how many tokens were measured).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.memory import trim_after
from dpcore.models.masked_lm import DEFAULT_BATCH_SIZE, MaskedLM, masked_position_logits
from dpcore.stats import cp_lower, cp_upper
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = [
    "MAX_SENTENCES",
    "MAX_TOKENS_PER_SENTENCE",
    "UNITS",
    "MaskInferenceResult",
    "attacker_strength",
    "mask_token_inference",
]

#: Most sentences one call accepts (the dashboard and CLI pass samples, not whole corpora).
MAX_SENTENCES = 5_000
#: Most tokens of one sentence; longer lines should be split first.
MAX_TOKENS_PER_SENTENCE = 256
#: Comparison units (see the module docstring).
UNITS = ("word", "wordpiece")
#: Upper bound on ``batch_size`` (memory: batch × length × vocabulary logits for generic models).
MAX_BATCH_SIZE = 4096


@dataclass
class MaskInferenceResult:
    """Outcome of :func:`mask_token_inference` (SanText §5.3).

    Attributes
    ----------
    defense_rate
        Fraction of positions where the top-1 prediction differs from the original token.
    ci_low, ci_high
        Two-sided Clopper–Pearson bounds on the defense rate at ``confidence``.
    n_tokens, n_defended, n_sentences
        Positions attacked, positions defended, sentences.
    n_kept
        Positions whose sanitized token equals the original (the sanitizer kept it).
    n_unrepresentable
        Positions whose original token the model cannot output as one prediction.
    defense_rate_representable
        Defense rate over the other positions (NaN if there are none).
    predictions
        Top-1 prediction per position, per sentence (``None`` unless requested).
    """

    defense_rate: float
    ci_low: float
    ci_high: float
    confidence: float
    n_tokens: int
    n_defended: int
    n_sentences: int
    n_kept: int
    n_unrepresentable: int
    defense_rate_representable: float
    unit: str
    model: str
    precision: str
    batch_size: int
    forward_passes: int
    seconds: float
    predictions: list[list[str]] | None = field(default=None, repr=False)
    hits: list[list[bool]] | None = field(default=None, repr=False)

    @property
    def attack_success_rate(self) -> float:
        """1 − defense rate: at ε → ∞ this is the attacker's top-1 accuracy."""
        return 1.0 - self.defense_rate

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (predictions and per-position hits left out)."""
        return {
            "defense_rate": self.defense_rate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "confidence": self.confidence,
            "attack_success_rate": self.attack_success_rate,
            "n_tokens": self.n_tokens,
            "n_defended": self.n_defended,
            "n_sentences": self.n_sentences,
            "n_kept": self.n_kept,
            "n_unrepresentable": self.n_unrepresentable,
            "defense_rate_representable": self.defense_rate_representable,
            "unit": self.unit,
            "model": self.model,
            "precision": self.precision,
            "batch_size": self.batch_size,
            "forward_passes": self.forward_passes,
            "seconds": self.seconds,
        }


def _check_pairs(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[tuple[list[str], list[str]]]:
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise DPCoreError("pairs must be a list of (original tokens, sanitized tokens)")
    if len(pairs) == 0:
        raise DPCoreError("no sentences to attack: the input is empty")
    if len(pairs) > MAX_SENTENCES:
        raise DPCoreError(f"too many sentences: {len(pairs):,} (at most {MAX_SENTENCES:,} per call)")
    out: list[tuple[list[str], list[str]]] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise DPCoreError(f"sentence {i}: expected a pair (original tokens, sanitized tokens)")
        orig, san = pair
        if isinstance(orig, str) or isinstance(san, str):
            raise DPCoreError(f"sentence {i}: give token lists, not strings (tokenize first)")
        orig, san = [str(t) for t in orig], [str(t) for t in san]
        if len(orig) != len(san):
            raise DPCoreError(
                f"sentence {i}: original has {len(orig)} tokens but sanitized has {len(san)}; "
                "tokens must be aligned one to one"
            )
        if len(orig) > MAX_TOKENS_PER_SENTENCE:
            raise DPCoreError(
                f"sentence {i} has {len(orig)} tokens (at most {MAX_TOKENS_PER_SENTENCE}); split long lines"
            )
        if any(not t.strip() for t in orig) or any(not t.strip() for t in san):
            raise DPCoreError(f"sentence {i}: tokens must be non-empty strings")
        out.append((orig, san))
    if sum(len(o) for o, _ in out) == 0:
        raise DPCoreError("no tokens to attack: every sentence is empty")
    return out


def word_piece_ids(tokenizer: Any, words: list[str]) -> list[list[int]]:
    """WordPiece ids of each word (the word split as the tokenizer would split it alone)."""
    enc = tokenizer(words, is_split_into_words=True, add_special_tokens=False)
    groups: list[list[int]] = [[] for _ in words]
    for tid, w in zip(enc["input_ids"], enc.word_ids(), strict=True):
        if w is not None:
            groups[w].append(int(tid))
    return groups


def allowed_mask(tokenizer: Any, vocab_size: int, unit: str) -> np.ndarray:
    """Which output ids the attacker may predict (word unit: word-initial pieces only)."""
    allowed = np.ones(vocab_size, dtype=bool)
    vocab = tokenizer.get_vocab()
    for tok, i in vocab.items():
        if i >= vocab_size:
            continue
        if (
            i in tokenizer.all_special_ids
            or (tok.startswith("[") and tok.endswith("]"))
            or (unit == "word" and tok.startswith("##"))
        ):
            allowed[i] = False
    return allowed


def normalise_word(tokenizer: Any, text: str) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and backend.normalizer is not None:
        return str(backend.normalizer.normalize_str(text)).strip()
    return text.strip()


def context_window(ids: list[int], centre: int, width: int) -> tuple[list[int], int]:
    """At most ``width`` ids around ``centre``; returns the window and the centre's new index."""
    if len(ids) <= width:
        return ids, centre
    start = min(max(0, centre - width // 2), len(ids) - width)
    return ids[start : start + width], centre - start


@dataclass(frozen=True)
class VariantBuilder:
    """Builds the masked inputs of a sentence for one model: special tokens and window width."""

    mask_id: int
    prefix: list[int]
    suffix: list[int]
    inner: int

    @classmethod
    def for_model(cls, mlm: MaskedLM) -> VariantBuilder:
        tok = mlm.tokenizer
        cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        prefix = [int(cls_id)] if cls_id is not None else []
        suffix = [int(sep_id)] if sep_id is not None else []
        return cls(int(tok.mask_token_id), prefix, suffix, mlm.max_length - len(prefix) - len(suffix))

    def masked(self, groups: Sequence[Sequence[int]], j: int) -> tuple[list[int], int]:
        """Piece ids with token ``j`` (all its pieces) replaced by one mask, and the mask index."""
        ids: list[int] = []
        centre = 0
        for k, g in enumerate(groups):
            if k == j:
                centre = len(ids)
                ids.append(self.mask_id)
            else:
                ids.extend(g)
        ids, centre = context_window(ids, centre, self.inner)
        return self.prefix + ids + self.suffix, centre + len(self.prefix)


def target_id(tok: Any, token: str, vocab_size: int, allowed: Any) -> int:
    """The id the attacker must predict for ``token``, or -1 if one mask can never produce it."""
    tid = tok.convert_tokens_to_ids(token)
    ok = tid is not None and tid != tok.unk_token_id and 0 <= tid < vocab_size and bool(allowed[tid])
    return int(tid) if ok else -1


def _forward_top1(mlm: MaskedLM, variants: list[tuple[list[int], int]], allowed: np.ndarray) -> np.ndarray:
    """Top-1 allowed id at the mask position of each variant, in one forward pass."""
    logits = masked_position_logits(mlm, variants)
    n = min(logits.shape[-1], allowed.shape[0])
    logits = np.where(allowed[None, :n], logits[:, :n], -np.inf)
    return np.argmax(logits, axis=-1)


def mask_token_inference(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    mlm: MaskedLM,
    *,
    unit: str = "word",
    batch_size: int = DEFAULT_BATCH_SIZE,
    confidence: float = 0.95,
    keep_predictions: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> MaskInferenceResult:
    """Run the mask-token inference attack (SanText, Yue et al. 2021, §5.3).

    Parameters
    ----------
    pairs
        ``(original tokens, sanitized tokens)`` per sentence, aligned one to one.
    mlm
        The attacker (:func:`dpcore.models.masked_lm.load_mlm`).
    unit
        ``"word"`` or ``"wordpiece"``; see the module docstring.
    batch_size
        Most masked variants per forward pass (1..4096). Results do not depend on it.
    confidence
        Level of the two-sided Clopper–Pearson interval (0.5..0.999999).
    keep_predictions
        Also return the top-1 prediction and hit/miss of every position.
    progress
        Called as ``progress(done_variants, total_variants)``.

    Returns
    -------
    MaskInferenceResult

    Raises
    ------
    DPCoreError
        Empty input, more than :data:`MAX_SENTENCES` sentences, misaligned or over-long
        sentences, an unknown unit or a bad batch size.

    Examples
    --------
    >>> from dpcore.attack.mask_inference import mask_token_inference
    >>> from dpcore.models.masked_lm import load_mlm
    >>> words = "i went to the store to buy some milk .".split()
    >>> res = mask_token_inference([(words, words)], load_mlm())
    >>> res.n_tokens, 0.0 <= res.defense_rate <= 1.0
    (10, True)
    """
    if unit not in UNITS:
        raise DPCoreError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    bs = check_int(batch_size, name="batch_size", min_value=1, max_value=MAX_BATCH_SIZE)
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    data = _check_pairs(pairs)
    t0 = time.monotonic()
    tok = mlm.tokenizer
    vocab_size = int(mlm.vocab_size)
    allowed_np = allowed_mask(tok, vocab_size, unit)
    builder = VariantBuilder.for_model(mlm)

    # Targets: the id the attacker must predict at each position (-1: unrepresentable).
    variants: list[tuple[list[int], int]] = []
    owners: list[tuple[int, int]] = []
    targets: list[list[int]] = []
    kept = 0
    for s, (orig, san) in enumerate(data):
        kept += sum(o == z for o, z in zip(orig, san, strict=True))
        if unit == "word":
            groups = word_piece_ids(tok, san)
            tgt = [target_id(tok, normalise_word(tok, w), vocab_size, allowed_np) for w in orig]
        else:
            groups = [[int(i)] for i in tok.convert_tokens_to_ids(san)]
            tgt = [target_id(tok, t, vocab_size, allowed_np) for t in orig]
        targets.append(tgt)
        for j in range(len(san)):
            variants.append(builder.masked(groups, j))
            owners.append((s, j))

    order = sorted(range(len(variants)), key=lambda v: len(variants[v][0]))
    pred = np.empty(len(variants), dtype=np.int64)
    passes = 0
    with trim_after():  # one trim after the passes, not one per pass (dpcore.memory)
        for b in range(0, len(order), bs):
            idx = order[b : b + bs]
            pred[idx] = _forward_top1(mlm, [variants[v] for v in idx], allowed_np)
            passes += 1
            if progress is not None:
                progress(min(b + bs, len(order)), len(order))

    hits: list[list[bool]] = [[False] * len(t) for t in targets]
    for v, (s, j) in enumerate(owners):
        hits[s][j] = bool(targets[s][j] >= 0 and pred[v] == targets[s][j])
    n = len(owners)
    n_hit = sum(sum(h) for h in hits)
    n_def = n - n_hit
    n_unrep = sum(sum(t < 0 for t in tg) for tg in targets)
    n_rep = n - n_unrep
    alpha = (1.0 - conf) / 2.0
    predictions = None
    if keep_predictions:
        predictions = [[""] * len(t) for t in targets]
        for v, (s, j) in enumerate(owners):
            predictions[s][j] = str(tok.convert_ids_to_tokens(int(pred[v])))
    return MaskInferenceResult(
        defense_rate=n_def / n,
        ci_low=float(cp_lower(n_def, n, alpha)),
        ci_high=float(cp_upper(n_def, n, alpha)),
        confidence=conf,
        n_tokens=n,
        n_defended=n_def,
        n_sentences=len(data),
        n_kept=kept,
        n_unrepresentable=n_unrep,
        defense_rate_representable=(n_rep - n_hit) / n_rep if n_rep else float("nan"),
        unit=unit,
        model=mlm.name,
        precision=mlm.precision,
        batch_size=bs,
        forward_passes=passes,
        seconds=round(time.monotonic() - t0, 3),
        predictions=predictions,
        hits=hits if keep_predictions else None,
    )


def attacker_strength(
    sentences: Sequence[Sequence[str]],
    mlm: MaskedLM,
    *,
    unit: str = "word",
    batch_size: int = DEFAULT_BATCH_SIZE,
    confidence: float = 0.95,
) -> MaskInferenceResult:
    """The attack on *unsanitized* sentences: the ε → ∞ end of the defense-rate curve.

    Its ``attack_success_rate`` is the attacker's top-1 accuracy on clean text, i.e.
    ``1 − defense_rate`` at ε → ∞ (SanText §5.3).
    """
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise DPCoreError("sentences must be a list of token lists")
    pairs = [(list(s), list(s)) for s in sentences]
    return mask_token_inference(pairs, mlm, unit=unit, batch_size=batch_size, confidence=confidence)
