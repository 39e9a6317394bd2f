"""Attack experiments over ε: sanitize sentences, run the attacks, report defense rates.

Used by ``python -m dpcore attack``, the "Attack & utility" page and
``bench/attack_utility_sweep.py``.

Attacks
-------
``mlm``
    The paper's mask-token inference (Yue et al. 2021, §5.3), word unit
    (:func:`dpcore.attack.mask_inference.mask_token_inference`).
``bayes-unigram``
    The mechanism-aware attack with a unigram prior (:func:`dpcore.attack.bayes.bayes_attack`);
    needs no model and no torch.
``bayes-mlm``
    The mechanism-aware attack with the masked LM's contextual prior
    (:func:`dpcore.attack.bayes.mlm_bayes_attack`). When it runs, the ``mlm`` numbers come from
    the same forward passes (identical predictions; tested).
``llm``
    LLM reconstruction (:mod:`dpcore.attack.reconstruction`): a causal LM reads the whole
    sanitized sentence and writes the original it guesses; needs a ``reconstructor``. Its rows
    add the success on the replaced positions alone (``recovered_replaced`` of ``replaced``).

Positions scored: those whose original token is in V (see :mod:`dpcore.attack.bayes`).

The ε → ∞ reference (``attacker_top1_unsanitized``)
---------------------------------------------------
The attackers are also run on the text the pipeline releases at ε = ∞: every in-vocabulary
token kept, out-of-vocabulary tokens ``[UNK]`` as at any ε. The defense rate at ε → ∞ is then
exactly 1 − this top-1. For the Bayesian attacks it is 1 (the channel is the identity: the
attacker reads the word); their ``prior_top1_unsanitized`` is the prior alone, the ε → 0 end.

Seeds
-----
Sentences are drawn with ``cell_seed_sequence(seed, "sentences")`` and each ε is sanitized with
``cell_seed_sequence(seed, "attack", mechanism, ε)``, so one ε of a sweep reproduces alone.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpcore.attack.bayes import (
    bayes_attack,
    defense_counts,
    mlm_bayes_attack,
    prepare_channels,
    unigram_log_prior,
)
from dpcore.attack.datasets import LabelledData
from dpcore.models.masked_lm import DEFAULT_BATCH_SIZE
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.text.mechanisms import TextMechanism
from dpcore.text.sanitize import OOV_TOKEN, sanitize_lines
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = [
    "ATTACKS",
    "MAX_ATTACK_SENTENCES",
    "MAX_ATTACK_TOKENS",
    "MLM_ATTACKS",
    "PROGRESS_UNITS",
    "attack_at_epsilon",
    "attack_pool",
    "attack_reference",
    "attack_sweep",
    "sample_attack_sentences",
    "scored_original_ids",
]

ATTACKS = ("mlm", "bayes-unigram", "bayes-mlm", "llm")
#: Attacks that need the masked LM (one group: they share forward passes).
MLM_ATTACKS = ("mlm", "bayes-mlm")
#: Most sentences one attack run accepts.
MAX_ATTACK_SENTENCES = 5_000
#: Longer sentences are cut to their first tokens (the attacked positions, not the text).
MAX_ATTACK_TOKENS = 128
#: Progress units per attack run reported by :func:`attack_sweep`.
PROGRESS_UNITS = 1000

Progress = Callable[[int, int], None] | None


@functools.lru_cache(maxsize=4)
def _pool_of(name: str, texts: tuple[str, ...]) -> tuple[str, ...]:
    from dpcore.attack.tweet_split import evaluation_texts

    return tuple(evaluation_texts(texts))


def attack_pool(data: LabelledData | Sequence[str]) -> tuple[str, ...]:
    """The sentences an attack may draw from ``data``.

    For the built-in tweet datasets (``tweets``, ``tweets3``) this is their part of the
    evaluation pool (:mod:`dpcore.attack.tweet_split`): the shipped attacker was trained on the
    public side, so it never saw a sentence it is evaluated on. A user's own data is used whole.
    """
    if isinstance(data, LabelledData):
        from dpcore.attack.tweet_split import TWEET_DATASETS

        if data.name in TWEET_DATASETS:
            return _pool_of(data.name, data.texts)
        return data.texts
    return tuple(data)


def sample_attack_sentences(data: LabelledData | Sequence[str], n: int, *, seed: int) -> list[str]:
    """``n`` distinct sentences drawn uniformly (``cell_seed_sequence(seed, "sentences")``) from
    :func:`attack_pool` (for the built-in tweets: the evaluation pool only).

    Raises
    ------
    DPCoreError
        ``n`` out of range, or more sentences asked for than the pool holds (the message names it).
    """
    texts = attack_pool(data)
    if isinstance(data, LabelledData) and texts is not data.texts:
        n = check_int(n, name="sentences", min_value=1, max_value=MAX_ATTACK_SENTENCES)
        if n > len(texts):
            raise DPCoreError(
                f"dataset {data.name!r} has {len(texts):,} sentences in its attack evaluation pool "
                f"(tweets the shipped attacker never trained on); ask for at most {len(texts):,}"
            )
    n = check_int(n, name="sentences", min_value=1, max_value=min(MAX_ATTACK_SENTENCES, max(1, len(texts))))
    rng = np.random.default_rng(cell_seed_sequence(seed, "sentences"))
    idx = np.sort(rng.choice(len(texts), size=n, replace=False))
    return [texts[i] for i in idx]


def _pairs(
    mech: TextMechanism, sentences: list[str], rng: np.random.Generator | None
) -> tuple[list[tuple[list[str], list[str]]], list[np.ndarray]]:
    """Aligned (original, released) token lists and the scored mask (original in V).

    ``rng=None`` gives the ε = ∞ release: in-V tokens kept, OOV tokens ``[UNK]``.
    """
    if rng is None:
        from dpcore.text.embeddings import load_tokenizer

        tok = load_tokenizer(mech.vocab.embedding)
        orig = [tok.tokenize(s)[:MAX_ATTACK_TOKENS] for s in sentences]
        rel = [[t if i >= 0 else OOV_TOKEN for t, i in zip(o, mech.vocab.ids(o), strict=True)] for o in orig]
    else:
        res = sanitize_lines(sentences, mech, seed=rng, oov="mask")
        orig = [o[:MAX_ATTACK_TOKENS] for o in res.original_tokens]
        rel = [s[:MAX_ATTACK_TOKENS] for s in res.sanitized_tokens]
    pairs, scored = [], []
    for o, s in zip(orig, rel, strict=True):
        if o:
            pairs.append((o, s))
            scored.append(mech.vocab.ids(o) >= 0)
    if not pairs:
        raise DPCoreError("every sentence is empty after tokenization")
    return pairs, scored


def _flat_ids(
    mech: TextMechanism, pairs: list[tuple[list[str], list[str]]], scored: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([mech.vocab.ids(o)[m] for (o, _), m in zip(pairs, scored, strict=True)])
    y = np.concatenate([mech.vocab.ids(s)[m] for (_, s), m in zip(pairs, scored, strict=True)])
    return x, y


def scored_original_ids(sentences: Sequence[str], mechanism: TextMechanism) -> np.ndarray:
    """The original word ids (in V) of the positions every attack scores on ``sentences``, in
    order: the secrets whose distribution ρ sets the claim's ceiling
    (:mod:`dpcore.attack.ceiling`). They depend on V and the sentences, not on ε or the seed
    (the ε = ∞ release of :func:`attack_reference`, the same positions as every ε)."""
    pairs, scored = _pairs(mechanism, _check_sentences(sentences), None)
    return _flat_ids(mechanism, pairs, scored)[0]


def _mlm_hits(
    pairs: list[tuple[list[str], list[str]]],
    scored: list[np.ndarray],
    mlm: Any,
    batch_size: int,
    progress: Progress,
) -> np.ndarray:
    from dpcore.attack.mask_inference import mask_token_inference

    res = mask_token_inference(
        pairs, mlm, unit="word", batch_size=batch_size, keep_predictions=True, progress=progress
    )
    assert res.hits is not None
    return np.concatenate([np.asarray(h, dtype=bool)[m] for h, m in zip(res.hits, scored, strict=True)])


def _check_attacks(attacks: Sequence[str], mlm: Any, reconstructor: Any = None) -> list[str]:
    atk = list(dict.fromkeys(attacks))
    bad = [a for a in atk if a not in ATTACKS]
    if not atk or bad:
        raise DPCoreError(f"attacks must be among {', '.join(ATTACKS)}; got {', '.join(bad) or 'none'}")
    if any(a in MLM_ATTACKS for a in atk) and mlm is None:
        raise DPCoreError("the mlm and bayes-mlm attacks need a masked LM")
    if "llm" in atk and reconstructor is None:
        raise DPCoreError("the llm attack needs a reconstructor (dpcore.attack.reconstruction)")
    return atk


def _llm_hits(
    mech: TextMechanism,
    pairs: list[tuple[list[str], list[str]]],
    scored: list[np.ndarray],
    reconstructor: Any,
    progress: Progress,
) -> tuple[np.ndarray, list[dict[str, str]]]:
    from dpcore.attack.reconstruction import reconstruction_hits
    from dpcore.text.embeddings import load_tokenizer

    tok = load_tokenizer(mech.vocab.embedding)
    return reconstruction_hits(
        pairs, scored, reconstructor, lambda t: tok.tokenize(t)[:MAX_ATTACK_TOKENS], progress=progress, keep=3
    )


def _replaced_fields(hits: np.ndarray, kept: np.ndarray, confidence: float) -> dict[str, Any]:
    """The success on the positions the sanitizer replaced, with its two-sided Clopper–Pearson
    interval (the kept positions are recovered by copying)."""
    from dpcore.attack.reconstruction import share_interval

    hit = np.asarray(hits, dtype=bool)[~np.asarray(kept, dtype=bool)]
    n, k = int(hit.size), int(hit.sum())
    rate, low, high = share_interval(k, n, confidence)
    return {
        "replaced": n,
        "recovered_replaced": k,
        "recovery_replaced": rate,
        "recovery_replaced_ci_low": low,
        "recovery_replaced_ci_high": high,
    }


def _check_sentences(sentences: Sequence[str]) -> list[str]:
    sents = [str(s) for s in sentences]
    if not sents:
        raise DPCoreError("no sentences to attack")
    if len(sents) > MAX_ATTACK_SENTENCES:
        raise DPCoreError(f"too many sentences: {len(sents):,} (at most {MAX_ATTACK_SENTENCES:,})")
    return sents


def attack_reference(
    sentences: Sequence[str],
    mechanism: TextMechanism,
    *,
    attacks: Sequence[str] = ("bayes-unigram",),
    mlm: Any = None,
    reconstructor: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress = None,
) -> dict[str, dict[str, Any]]:
    """The ε = ∞ reference of each attack (module docstring): one unit of :func:`attack_sweep`.

    Depends on the vocabulary of ``mechanism`` (not on its ε) and on the sentences; a caller that
    caches per unit computes it once per (vocabulary, sentences, attack group).

    Parameters
    ----------
    sentences
        The private sentences.
    mechanism
        Any mechanism over the vocabulary V (only V is used).
    attacks, mlm, reconstructor, batch_size
        As in :func:`attack_sweep`.
    progress
        ``progress(done, total)`` after every batch of masked-LM forward passes.

    Returns
    -------
    dict
        attack → ``{"attacker_top1_unsanitized", ["prior_top1"]}``.
    """
    atk = _check_attacks(attacks, mlm, reconstructor)
    sents = _check_sentences(sentences)
    log_u = unigram_log_prior(mechanism.vocab)
    pairs, scored = _pairs(mechanism, sents, None)
    x, y = _flat_ids(mechanism, pairs, scored)
    unsanitized: dict[str, dict[str, Any]] = {}
    if "bayes-unigram" in atk:
        unsanitized["bayes-unigram"] = {
            "attacker_top1_unsanitized": float(np.mean(x == y)),
            "prior_top1": float(np.mean(x == np.argmax(log_u))),
        }
    if any(a in MLM_ATTACKS for a in atk):
        if "bayes-mlm" in atk:
            out = mlm_bayes_attack(
                pairs,
                scored,
                mechanism,
                mlm,
                log_unigram=log_u,
                batch_size=batch_size,
                use_channel=False,
                progress=progress,
            )
            mlm_hit = out.mlm_hit
            unsanitized["bayes-mlm"] = {
                "attacker_top1_unsanitized": float(np.mean(x == y)),
                "prior_top1": float(np.mean(out.prior_hit)),
            }
        else:
            mlm_hit = _mlm_hits(pairs, scored, mlm, batch_size, progress)
        if "mlm" in atk:
            unsanitized["mlm"] = {"attacker_top1_unsanitized": float(np.mean(mlm_hit))}
    if "llm" in atk:
        llm_hit, _ = _llm_hits(mechanism, pairs, scored, reconstructor, progress)
        unsanitized["llm"] = {"attacker_top1_unsanitized": float(np.mean(llm_hit))}
    return unsanitized


def attack_at_epsilon(
    sentences: Sequence[str],
    mechanism: TextMechanism,
    unsanitized: dict[str, dict[str, Any]],
    *,
    attacks: Sequence[str] = ("bayes-unigram",),
    mlm: Any = None,
    reconstructor: Any = None,
    seed: int = 0,
    confidence: float = 0.95,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress = None,
) -> dict[str, Any]:
    """One (mechanism, ε, attack group) unit of :func:`attack_sweep`: identical rows.

    The sanitization stream is ``cell_seed_sequence(seed, "attack", mechanism.name, ε)``, so a
    unit computed alone equals the same ε inside a sweep; a caller can cache units and reuse
    them when an ε or a mechanism is added or removed.

    Parameters
    ----------
    sentences
        The private sentences.
    mechanism
        The sanitizer at this ε.
    unsanitized
        :func:`attack_reference` for these sentences, V and attacks.
    attacks, mlm, reconstructor, confidence, batch_size
        As in :func:`attack_sweep`.
    seed
        The resolved sanitization seed (an int).
    progress
        ``progress(done, total)`` after every batch of masked-LM forward passes.

    Returns
    -------
    dict
        ``{"rows": [one per attack], "sentences", "scored_positions", "parameters"}``.
    """
    atk = _check_attacks(attacks, mlm, reconstructor)
    sents = _check_sentences(sentences)
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    eps = float(mechanism.epsilon)
    log_u = unigram_log_prior(mechanism.vocab)
    rng = np.random.default_rng(cell_seed_sequence(int(seed), "attack", mechanism.name, eps))
    pairs, scored = _pairs(mechanism, sents, rng)
    x, y = _flat_ids(mechanism, pairs, scored)
    found: dict[str, Any] = {}
    if "bayes-unigram" in atk:
        found["bayes-unigram"] = bayes_attack(mechanism, x, y, log_prior=log_u, confidence=conf)
    if any(a in MLM_ATTACKS for a in atk):
        if "bayes-mlm" in atk:
            out = mlm_bayes_attack(
                pairs, scored, mechanism, mlm, log_unigram=log_u, batch_size=batch_size, progress=progress
            )
            found["bayes-mlm"] = defense_counts(
                "bayes-mlm", out.bayes_hit, out.kept, confidence=conf, seconds=out.seconds
            )
            found["bayes-mlm"].prior_top1 = float(np.mean(out.prior_hit))
            if "mlm" in atk:
                found["mlm"] = defense_counts(
                    "mlm", out.mlm_hit, out.kept, confidence=conf, seconds=out.seconds
                )
        else:
            t1 = time.monotonic()
            hits = _mlm_hits(pairs, scored, mlm, batch_size, progress)
            found["mlm"] = defense_counts("mlm", hits, x == y, confidence=conf, seconds=time.monotonic() - t1)
    extra: dict[str, Any] = {}
    if "llm" in atk:
        t1 = time.monotonic()
        hits, examples = _llm_hits(mechanism, pairs, scored, reconstructor, progress)
        found["llm"] = defense_counts("llm", hits, x == y, confidence=conf, seconds=time.monotonic() - t1)
        extra = {
            **_replaced_fields(hits, x == y, conf),
            "reconstructor": str(getattr(reconstructor, "name", "")),
            "examples": examples,
        }
    rows: list[dict[str, Any]] = []
    for a in atk:
        r = found[a]
        row = {"epsilon": eps, **r.to_dict(), **unsanitized[a]}
        if a == "bayes-mlm":
            row["prior_top1_sanitized"] = r.prior_top1
            row["prior_top1"] = unsanitized[a]["prior_top1"]
        if a == "llm":
            row.update(extra)
        rows.append(row)
    return {
        "rows": rows,
        "sentences": len(pairs),
        "scored_positions": int(x.size),
        "parameters": mechanism.params(),
    }


def attack_sweep(
    sentences: Sequence[str],
    make_mechanism: Callable[[float], TextMechanism],
    epsilons: Sequence[float],
    *,
    attacks: Sequence[str] = ("bayes-unigram",),
    mlm: Any = None,
    reconstructor: Any = None,
    seed: int | None = 0,
    confidence: float = 0.95,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress = None,
    references: dict[Any, dict[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Defense rates of the chosen attacks at each ε (module docstring).

    Parameters
    ----------
    sentences
        The private sentences (raw text, one per item).
    make_mechanism
        ε ↦ the sanitizer.
    epsilons
        ε values.
    attacks
        Any of :data:`ATTACKS`.
    mlm
        A :class:`dpcore.models.masked_lm.MaskedLM`; required for ``mlm`` and ``bayes-mlm``.
    reconstructor
        A :class:`dpcore.attack.reconstruction.Reconstructor`; required for ``llm``.
    seed
        Sanitization seed (recorded; None draws a fresh one).
    progress
        ``progress(done, total)`` in units of 1/:data:`PROGRESS_UNITS` of an attack run (one run
        per ε and attack group, plus the ε = ∞ reference); masked-LM runs report after every
        batch of forward passes, so a caller can stop between batches.
    references
        A dict the caller keeps across sweeps on the same sentences: each ε = ∞ reference
        (:func:`attack_reference`, which depends on V, the sentences and the attack group only)
        is kept there under (V, sentences, attack group, models) and reused by a later sweep over
        the same V object, as the mechanism comparison does for its mechanisms over one vocabulary.

    Returns
    -------
    dict
        ``{"parameters", "rows": [one per (ε, attack)], "unsanitized": {attack: {...}}}``.
    """
    t0 = time.monotonic()
    atk = _check_attacks(attacks, mlm, reconstructor)
    uses_mlm = any(a in MLM_ATTACKS for a in atk)
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    sents = _check_sentences(sentences)
    eps_list = [float(e) for e in epsilons]
    if not eps_list:
        raise DPCoreError("give at least one ε")
    s = resolve_seed(seed)
    groups = [
        g for g in (["bayes-unigram"], [a for a in atk if a in MLM_ATTACKS], ["llm"]) if set(g) & set(atk)
    ]
    total, done = (len(eps_list) + 1) * len(groups) * PROGRESS_UNITS, 0

    def tick() -> None:
        nonlocal done
        done += PROGRESS_UNITS
        if progress is not None:
            progress(done, total)

    def within(d: int, t: int) -> None:  # batches of a masked-LM run: a caller can stop between them
        if progress is not None:
            progress(done + (PROGRESS_UNITS * d) // max(t, 1), total)

    mech_ref = make_mechanism(eps_list[0])
    mechs = [make_mechanism(e) for e in eps_list]
    if any(a.startswith("bayes") for a in atk):
        prepare_channels(mechs)  # one distance pass for all ε

    unsanitized: dict[str, dict[str, Any]] = {}
    digest = hashlib.sha256("\n".join(sents).encode("utf-8")).hexdigest()
    for g in groups:
        key = (id(mech_ref.vocab), digest, tuple(g), id(mlm), id(reconstructor))
        ref = None if references is None else references.get(key)
        if ref is None:
            ref = attack_reference(
                sents, mech_ref, attacks=g, mlm=mlm, reconstructor=reconstructor, batch_size=batch_size,
                progress=within,
            )  # fmt: skip
            if references is not None:
                references[key] = ref
        unsanitized.update(ref)
        tick()

    rows: list[dict[str, Any]] = []
    mech_params: dict[str, Any] = {}
    n_sentences = n_scored = 0
    for mech in mechs:
        mech_params = mech.params()
        found: dict[str, dict[str, Any]] = {}
        for g in groups:
            unit = attack_at_epsilon(
                sents,
                mech,
                unsanitized,
                attacks=g,
                mlm=mlm,
                reconstructor=reconstructor,
                seed=s,
                confidence=conf,
                batch_size=batch_size,
                progress=within,
            )
            n_sentences, n_scored = unit["sentences"], unit["scored_positions"]
            found.update({r["attack"]: r for r in unit["rows"]})
            tick()
        rows += [found[a] for a in atk]
    params = {
        **{k: v for k, v in mech_params.items() if k not in {"epsilon", "privacy"}},
        "epsilons": eps_list,
        "attacks": atk,
        "mlm": getattr(mlm, "name", None) if uses_mlm else None,
        **({"reconstructor": str(getattr(reconstructor, "name", ""))} if "llm" in atk else {}),
        "unit": "word",
        "sentences": n_sentences,
        "scored_positions_per_run": n_scored,
        "sentences_digest": digest[:16],
        "seed": s,
        "seed_streams": "cell_seed_sequence(seed, 'attack', mechanism, ε)",
        "confidence": conf,
        "oov_policy": "mask",
        "prior": "wordfreq unigram over V (+ smallest positive frequency)",
        "seconds": round(time.monotonic() - t0, 3),
    }
    return {"parameters": params, "rows": rows, "unsanitized": unsanitized}
