"""The LLM reconstruction attack: a language model reads a whole sanitized sentence and writes
the original it guesses; a position is recovered when the guess put there is the original word.

The attack is that of Pang et al. (2024, arXiv 2410.12443, §3: a prompted LLM asked to restore
word-level DP-sanitized text), adapted to a local model: SmolLM2-135M-Instruct, the model
dpcore already ships for DP-Prompt, run greedily (no sampling, so a run reproduces) on the prompt
:data:`PROMPT`. It reads the sanitized sentence and nothing else: not the mechanism, not ε.

Scoring, position by position
-----------------------------
The sanitizers dpcore attacks release one token per original token (:mod:`dpcore.attack.experiment`),
so every position i has an original word xᵢ and a released word yᵢ. The reconstruction is split
into the same tokens and aligned to the *released* tokens (:func:`aligned_guesses`: a longest
matching blocks alignment, ``difflib.SequenceMatcher``; inside a replaced span of different
lengths, the k-th released token faces the k-th reconstructed one). The token facing yᵢ is the
attacker's guess for xᵢ, and a hit is a guess equal to xᵢ. The guess is a function of what the
attacker sees (the release and its own output), never of xᵢ, so the rate is a top-1 success rate
like the masked-LM and Bayesian attackers': the rows have their fields
(:func:`dpcore.attack.bayes.defense_counts`) and the defense rate is 1 − the success.

Kept words apart: a position whose released word is its original (``kept``) is recovered by
copying it; the rows give the success on the replaced positions apart (``recovered_replaced`` of
``replaced``, :func:`share_interval`), which is what inversion is.

What bounds it
--------------
The claim's ceiling (:mod:`dpcore.attack.ceiling`) bounds an attacker that sees one sanitized
word. This attacker reads the whole sentence. For a sanitizer whose released word yᵢ depends on
xᵢ alone (SanText, CusText, TEM), the claim bounds its success at position i by
e^{ε·r}·V(xᵢ | the other released words) ≤ e^{ε·r}·V(xᵢ | the other original words): the claim's
factor times how guessable the word is from its context, which has no closed form (:data:`BOUND_NOTE`).
For DP-MLM every released token is drawn reading the whole original line, so a line of n tokens
is n·ε-DP and the per-token claim bounds a whole-sentence attacker by nothing useful. The
context-free ceiling is drawn beside the attack as the claim's bound for one word, and is not a
bound on this attacker: a rate above it does not contradict the claim.

Rewriters, word by word
-----------------------
A paraphrasing rewriter (DP-Prompt) releases a text with no word-to-word correspondence to its
input, so there is no position to guess at and no one-word ceiling. For rewriters the attack is
scored on words as a bag (:func:`bag_recovery`, :func:`rewriter_reconstruction`): the share of the
original's words (lower-cased, counted with multiplicity) that the reply contains, and apart, the
share of the original's words *missing from the release* that the reply contains: what the model
restored rather than copied. A bag is more lenient than a position (any place counts), and the
reply is one sentence of at most twice its input's tokens plus 8 (:data:`MAX_NEW_TOKENS`).

Memorisation
------------
Part of a model's recovery on public text is its memory of that text, not an inversion of the
mechanism. dpcore ships two sentence sets (:data:`SENTENCE_SETS`, :func:`sentence_set`;
``attack --dataset public-lines`` or ``unseen-lines``): 64 famous public-domain lines the model
has almost surely read, and 64 lines written for dpcore in December 2026, after SmolLM2's release
(November 2024), which it cannot have read. The rates are reported apart. The sets differ in
style too (verse and scripture against plain narrative), which the comparison cannot remove.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpcore.validation import DPCoreError

__all__ = [
    "BOUND_NOTE",
    "MAX_NEW_TOKENS",
    "MIN_OVERLAP",
    "PROMPT",
    "SENTENCE_SETS",
    "LMReconstructor",
    "Reconstructor",
    "aligned_guesses",
    "attacker_guesses",
    "bag_recovery",
    "clean_reply",
    "detokenize",
    "reconstruction_hits",
    "rewriter_reconstruction",
    "sentence_set",
    "share_interval",
]

#: The two sentence sets (module docstring): name → what it is.
SENTENCE_SETS: dict[str, str] = {
    "public-lines": "64 famous public-domain lines a language model has almost surely read",
    "unseen-lines": "64 lines written for dpcore in December 2026, after SmolLM2's release",
}
_SETS_FILE = Path(__file__).resolve().parents[1] / "data" / "reconstruction_sentences.json"


@functools.lru_cache(maxsize=2)
def sentence_set(name: str) -> tuple[str, ...]:
    """The sentences of one of :data:`SENTENCE_SETS` (``dpcore/data/reconstruction_sentences.json``).

    Raises
    ------
    DPCoreError
        An unknown name.
    """
    if name not in SENTENCE_SETS:
        raise DPCoreError(f"unknown sentence set {name!r}; choose one of: {', '.join(SENTENCE_SETS)}")
    doc = json.loads(_SETS_FILE.read_text(encoding="utf-8"))
    return tuple(" ".join(str(t).split()) for t in doc[name]["sentences"])


#: The instruction the model answers (the sanitized sentence replaces ``{text}``).
PROMPT = (
    "Some words in this sentence were replaced with other words to hide the original. "
    "Write the original sentence. Reply with the sentence only.\n\nSentence: {text}"
)
#: A reply sharing less than this share of tokens with the release (difflib's ratio) is not read
#: as a reconstruction (:func:`attacker_guesses`).
MIN_OVERLAP = 0.5
#: Most tokens the model may write for one sentence.
MAX_NEW_TOKENS = 96
#: What bounds a whole-sentence attacker, in one sentence (the page and the CLI print it).
BOUND_NOTE = (
    "The claim's ceiling bounds an attacker that sees one sanitized word; the LLM reads the whole "
    "sentence. For SanText (each released word depends on its own word only) the claim bounds it "
    "by e^(ε·r) times how guessable the word is from the rest of the sentence, which has no closed "
    "form; for DP-MLM (each token drawn reading the whole line) a line of n tokens is n·ε-DP and "
    "the per-token claim bounds it by nothing useful. A rate above the one-word ceiling does not "
    "contradict the claim."
)

Progress = Callable[[int, int], None] | None


@runtime_checkable
class Reconstructor(Protocol):
    """What the attack needs of a model: ``reconstruct(texts)`` gives one guessed original per
    sanitized text (plain text), deterministically; ``name`` is recorded in the rows."""

    name: str

    def reconstruct(self, texts: Sequence[str], *, progress: Progress = None) -> list[str]: ...


_QUOTED = re.compile(r"[\"“]([^\"”]{2,})[\"”]")
_LABEL = re.compile(r"^\s*(?:the\s+)?(?:original(?:\s+sentence)?(?:\s+(?:was|is))?|sentence)\s*:\s*", re.I)


def clean_reply(reply: str) -> str:
    """The sentence in a model's reply: the first quoted span when it quotes one (a small model
    often answers 'The original sentence was: "…"'), else its first non-empty line, without a
    leading 'Original:' label.

    Examples
    --------
    >>> clean_reply('The original sentence was: "It was the best of times." Here is more')
    'It was the best of times.'
    >>> clean_reply("Original: call me Ishmael\\nThat is all.")
    'call me Ishmael'
    """
    text = str(reply)
    m = _QUOTED.search(text)
    if m:
        return m.group(1).strip()
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return _LABEL.sub("", line).strip()


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens as the text the attacker reads: words joined by spaces, WordPiece continuations
    (``##…``) joined to the piece before them."""
    return " ".join(tokens).replace(" ##", "")


def aligned_guesses(released: Sequence[str], reconstruction: Sequence[str]) -> list[str | None]:
    """The reconstructed token facing each released token (None where the reconstruction has
    none): matching blocks are aligned (``difflib.SequenceMatcher``, no junk heuristic), and inside
    a replaced span the k-th released token faces the k-th reconstructed one.

    A function of the release and the reconstruction only, so a guess never reads the original.

    Examples
    --------
    >>> aligned_guesses(["the", "cat", "sat"], ["the", "dog", "sat", "down"])
    ['the', 'dog', 'sat']
    >>> aligned_guesses(["a", "b", "c"], ["a", "c"])
    ['a', None, 'c']
    """
    rel, rec = list(released), list(reconstruction)
    return _aligned(difflib.SequenceMatcher(a=rel, b=rec, autojunk=False), rel, rec)


def _aligned(matcher: difflib.SequenceMatcher, rel: list[str], rec: list[str]) -> list[str | None]:
    out: list[str | None] = [None] * len(rel)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(min(i2 - i1, j2 - j1)):
                out[i1 + k] = rec[j1 + k]
    return out


def attacker_guesses(released: Sequence[str], reconstruction: Sequence[str]) -> list[str]:
    """The attacker's guess at each released position: the aligned reconstructed token
    (:func:`aligned_guesses`), and the released token itself where there is none, or where the
    reply is not a version of the sentence at all (it shares less than :data:`MIN_OVERLAP` of its
    tokens with the release, as when a small model repeats the instruction). Copying is always
    open to an attacker, so the guess never does worse than the release where the model fails.

    Examples
    --------
    >>> attacker_guesses(["a", "b", "c"], ["a", "c"])
    ['a', 'b', 'c']
    >>> attacker_guesses(["the", "cat", "sat"], ["please", "write", "it"])
    ['the', 'cat', 'sat']
    """
    rel, rec = list(released), list(reconstruction)
    matcher = difflib.SequenceMatcher(a=rel, b=rec, autojunk=False)  # one alignment for both
    if matcher.ratio() < MIN_OVERLAP:
        return rel
    return [r if g is None else g for r, g in zip(rel, _aligned(matcher, rel, rec), strict=True)]


class LMReconstructor:
    """A causal LM as the attacker: :data:`PROMPT` per sanitized text, greedy reply, cleaned
    (:func:`clean_reply`).

    Parameters
    ----------
    lm
        A model with ``prompt_ids``, ``greedy`` and ``decode``
        (:class:`dpcore.models.causal_lm.SmolLM2`).
    batch_size
        Prompts per forward pass.
    """

    def __init__(self, lm: Any, *, batch_size: int = 16) -> None:
        self.lm = lm
        self.name = str(getattr(lm, "name", "lm"))
        self.batch_size = int(batch_size)
        self._seen: dict[str, str] = {}

    def reconstruct(self, texts: Sequence[str], *, progress: Progress = None) -> list[str]:
        """One cleaned greedy reply per text; each distinct text runs once (kept across calls)."""
        todo = [t for t in dict.fromkeys(str(t) for t in texts) if t not in self._seen]
        step = max(1, self.batch_size)
        for lo in range(0, len(todo), step):
            chunk = todo[lo : lo + step]
            prompts = [self.lm.prompt_ids(PROMPT.format(text=t)) for t in chunk]
            budget = min(MAX_NEW_TOKENS, 2 * max(self.lm.count_tokens(t) for t in chunk) + 8)
            for t, ids in zip(chunk, self.lm.greedy(prompts, max_new_tokens=budget, batch=step), strict=True):
                self._seen[t] = clean_reply(self.lm.decode([int(i) for i in ids]))
            if progress is not None:
                progress(min(lo + step, len(todo)), len(todo))
        return [self._seen[str(t)] for t in texts]


def reconstruction_hits(
    pairs: Sequence[tuple[list[str], list[str]]],
    scored: Sequence[np.ndarray],
    reconstructor: Reconstructor,
    tokenize: Callable[[str], list[str]],
    *,
    progress: Progress = None,
    keep: int = 0,
) -> tuple[np.ndarray, list[dict[str, str]]]:
    """Hits of the reconstruction attack at the scored positions (module docstring).

    Parameters
    ----------
    pairs
        (original tokens, released tokens) per sentence, aligned.
    scored
        Per sentence, the positions scored (original word in V).
    reconstructor
        The attacker.
    tokenize
        The tokenizer that made ``pairs`` (the reconstruction is split with it).
    progress
        ``progress(done, total)`` over the distinct sentences.
    keep
        How many (original, released, reconstruction) examples to return, first sentences first.

    Returns
    -------
    tuple
        The hits (bool, concatenated over the scored positions in order) and the examples.
    """
    if len(pairs) != len(scored):
        raise DPCoreError("pairs and scored masks must be aligned")
    texts = [detokenize(s) for _, s in pairs]
    replies = reconstructor.reconstruct(texts, progress=progress)
    if len(replies) != len(texts):
        raise DPCoreError(f"the reconstructor gave {len(replies)} replies for {len(texts)} texts")
    hits = []
    for (orig, rel), mask, reply in zip(pairs, scored, replies, strict=True):
        guess = attacker_guesses(rel, tokenize(reply))
        hits.append(np.asarray([g == o for g, o in zip(guess, orig, strict=True)], dtype=bool)[mask])
    examples = [
        {"original": detokenize(o), "released": t, "reconstruction": r}
        for (o, _), t, r in list(zip(pairs, texts, replies, strict=True))[: int(keep)]
    ]
    return (np.concatenate(hits) if hits else np.zeros(0, dtype=bool)), examples


def share_interval(k: int, n: int, confidence: float) -> tuple[float, float, float]:
    """``k / n`` and its two-sided Clopper–Pearson interval at ``confidence`` (NaN when n = 0):
    the LLM's share of replaced words (:mod:`dpcore.attack.experiment`) and of a rewriter's
    words (:func:`rewriter_reconstruction`)."""
    from dpcore.stats import cp_lower, cp_upper

    if not n:
        return float("nan"), float("nan"), float("nan")
    a = (1.0 - float(confidence)) / 2.0
    return k / n, float(cp_lower(k, n, a)), float(cp_upper(k, n, a))


def _words(text: str) -> Counter[str]:
    from dpcore.rewriter.ngrams import WORD

    return Counter(w.lower() for w in WORD.findall(str(text)))


def bag_recovery(original: str, released: str, reply: str) -> dict[str, int]:
    """Word counts of one rewritten text (module docstring), as multisets of lower-cased words.

    Returns
    -------
    dict
        ``words`` (the original's), ``carried`` (of them, in the release), ``recovered`` (in the
        reply), ``missing`` (not in the release) and ``restored`` (missing from the release, in the
        reply).

    Examples
    --------
    >>> bag_recovery("the cat sat on the mat", "a cat sat on a rug", "the cat sat on the rug")
    {'words': 6, 'carried': 3, 'recovered': 5, 'missing': 3, 'restored': 2}
    """
    o, r, y = _words(original), _words(released), _words(reply)
    missing = o - r
    return {
        "words": sum(o.values()),
        "carried": sum((o & r).values()),
        "recovered": sum((o & y).values()),
        "missing": sum(missing.values()),
        "restored": sum((missing & y).values()),
    }


def rewriter_reconstruction(
    rewriter: Any,
    sentences: Sequence[str],
    reconstructor: Reconstructor,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    keep: int = 3,
    progress: Progress = None,
) -> dict[str, Any]:
    """The reconstruction attack on a rewriter's releases, scored as bags of words (module
    docstring).

    Parameters
    ----------
    rewriter
        A :class:`dpcore.rewriter.interface.TextRewriter` (``rewrite(texts, rng)``).
    sentences
        The private sentences (each rewritten once).
    reconstructor
        The attacker.
    seed
        The rewrites' stream is ``cell_seed_sequence(seed, "reconstruction", rewriter.name, ε)``.
    confidence
        Of the two-sided Clopper–Pearson intervals.
    keep
        Examples kept (original, release, reply), first sentences first.
    progress
        ``progress(done, total)`` over the replies.

    Returns
    -------
    dict
        The counts summed over the sentences, ``carried_share`` (what copying recovers),
        ``recovered_share`` and ``restored_share`` with their intervals, the examples and the
        settings.
    """
    from dpcore.rng import cell_seed_sequence

    sents = [str(s) for s in sentences]
    if not sents:
        raise DPCoreError("no sentences to attack")
    eps = float(getattr(getattr(rewriter, "claim", None), "epsilon", float("nan")))
    name = str(getattr(rewriter, "name", "rewriter"))
    rng = np.random.default_rng(cell_seed_sequence(int(seed), "reconstruction", name, eps))
    released = [str(t) for t in rewriter.rewrite(sents, rng)]
    if len(released) != len(sents):
        raise DPCoreError(f"the rewriter gave {len(released)} texts for {len(sents)}")
    replies = reconstructor.reconstruct(released, progress=progress)
    if len(replies) != len(sents):
        raise DPCoreError(f"the reconstructor gave {len(replies)} replies for {len(sents)} texts")
    total = Counter()  # type: Counter[str]
    for o, r, y in zip(sents, released, replies, strict=True):
        total.update(bag_recovery(o, r, y))
    rec = share_interval(total["recovered"], total["words"], confidence)
    res = share_interval(total["restored"], total["missing"], confidence)
    return {
        "rewriter": name,
        "epsilon": eps,
        "unit": str(getattr(getattr(rewriter, "claim", None), "unit", "")),
        "sentences": len(sents),
        **{k: int(total[k]) for k in ("words", "carried", "recovered", "missing", "restored")},
        "carried_share": total["carried"] / total["words"] if total["words"] else float("nan"),
        **dict(zip(("recovered_share", "recovered_ci_low", "recovered_ci_high"), rec, strict=True)),
        **dict(zip(("restored_share", "restored_ci_low", "restored_ci_high"), res, strict=True)),
        "confidence": float(confidence),
        "reconstructor": str(getattr(reconstructor, "name", "")),
        "seed": int(seed),
        "examples": [
            {"original": o, "released": r, "reconstruction": y}
            for o, r, y in list(zip(sents, released, replies, strict=True))[: int(keep)]
        ],
    }
