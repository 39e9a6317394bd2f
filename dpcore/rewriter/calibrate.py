"""Same nominal ε, different distinguishability: rewriters side by side at each ε.

Practitioners compare rewriters by their nominal ε, but ε means another thing for each: DP-MLM's
is per WordPiece, DP-Prompt's per generated token, SanText's per unit of embedding distance per
word. TeDA (Li et al., arXiv 2603.22968, 2026) showed that similar nominal ε give very different
distinguishability. :func:`calibrate_rewriters` measures it, with dpcore's rewriter audit
(:func:`dpcore.rewriter.audit.audit_rewriter`), on one pair of neighbouring sentences, for each
rewriter at each nominal ε:

- **the claim for the pair**: what the rewriter's paper promises for these two sentences (n·ε for
  DP-MLM's n WordPieces, n·ε for DP-Prompt's n generated tokens, ε·Σd for SanText);
- **the certified lower bound** on the privacy loss (Clopper–Pearson, the audit's confidence);
- **the best distinguisher's TPR at 1% FPR**: an observer who sees one rewrite and must say
  which sentence it came from, wrongly naming x′ for at most 1 in 100 rewrites of x
  (:meth:`dpcore.tradeoff.TradeoffPair.tpr_at_fpr` on the audit's events: a lower bound that
  holds with the boxes, and the point estimate of the best measured test);
- **the exact loss** for the pair where dpcore can compute it (SanText on every word:
  :meth:`dpcore.rewriter.wordlevel.WordSanitizerRewriter.exact_loss`), beside the certified bound;
- **meaning retained**: the mean cosine similarity between each rewrite and its input in the
  shipped all-MiniLM-L6-v2 sentence embedding (:func:`dpcore.models.minilm.encode_sentences`),
  read against its floor and its ceiling (:func:`meaning_reference`): two unrelated sentences
  (about 0.08) and x′ against x (0.80: a rewrite above it is closer to x than x′ is);
- a few **sample rewrites** of public sentences (the Lee corpus).

The headline (:func:`headline`) gives, at one nominal ε, the claims for the pair first, then what
the audit certified (with the exact loss where known), then the best test's estimates.

DP-MLM here is dpcore's variant (:data:`dpcore.text.dpmlm.VARIANT`): BERT WordPieces and the
MiniLM masked LM with dpcore's clip, where the paper used RoBERTa's; its title says so.

The shipped view (``dpcore/data/rewriter_calibration.json``, shown by the dashboard's
calibration page) is made by one command, :data:`SHIPPED_COMMAND`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.formatting import as_number, epsilon_text, percent
from dpcore.prose import and_list
from dpcore.validation import DPCoreError, check_epsilon, check_int, check_probability

__all__ = [
    "DEFAULT_EPSILONS",
    "DEFAULT_REWRITERS",
    "FPR",
    "PAIR",
    "SHIPPED_COMMAND",
    "SHIPPED_PATH",
    "CalibrationCell",
    "CalibrationResult",
    "calibrate_rewriters",
    "headline",
    "load_shipped",
    "loss",
    "meaning_reference",
]

#: The rewriters compared by default: a word-level sanitizer on every word, DP-MLM, DP-Prompt.
DEFAULT_REWRITERS = ("santext-words", "dp-mlm", "dp-prompt")
#: Nominal ε values (each rewriter's own ε).
DEFAULT_EPSILONS = (1.0, 10.0, 30.0, 100.0)
#: One word changed, a diagnosis: one WordPiece and one GloVe word each, so every claim's premise
#: (same length, every word in V) holds.
PAIR = ("my neighbour anna was diagnosed with diabetes", "my neighbour anna was diagnosed with cancer")
#: The false-positive rate the TPR is read at.
FPR = 0.01
#: Public sentences whose rewrites are shown (Lee corpus indices) and rewrites of each.
SAMPLE_SENTENCES = (0, 3, 5)
SAMPLES_EACH = 2
#: Limits (one calibration is rewriters × ε audits).
MAX_REWRITERS, MAX_EPSILONS = 6, 8
#: Display names.
TITLES = {
    "santext-words": "SanText (every word)",
    "dp-mlm": "DP-MLM (dpcore variant)",
    "dp-prompt": "DP-Prompt",
}
#: The floor of "meaning retained": the mean similarity of two different sentences among the first
#: this many of the Lee corpus (public, unrelated to one another and to the pair).
FLOOR_SENTENCES = 100
#: What each rewriter's nominal ε is per.
NOMINAL = {
    "santext-words": "ε per unit of GloVe distance, per word",
    "dp-mlm": "ε per WordPiece",
    "dp-prompt": "ε per generated token",
}
SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "rewriter_calibration.json"
SHIPPED_COMMAND = [
    "python", "-m", "dpcore", "calibrate-rewriters", "--lm",
    "--save", "dpcore/data/rewriter_calibration.json",
]  # fmt: skip


def title(name: str) -> str:
    return TITLES.get(name, name)


def tpr_reach(rewrites: int, confidence: float) -> float:
    """The largest lower bound on the TPR at :data:`FPR` that an audit of ``rewrites`` per input
    can give (one pair): an event seen in every held-out rewrite of x and in none of x′.

    With n held-out rewrites per input, 0 false alarms still leave the false-positive rate's upper
    bound at about ln(8/α)/n, above 1% unless n is several hundred, so the bound read at 1% FPR
    is capped well below 100% even for a perfect test.

    Examples
    --------
    >>> round(tpr_reach(400, 0.95), 2)
    0.39
    """
    from dpcore.tradeoff import Box, TradeoffPair

    n = int(rewrites) - int(rewrites) // 2
    from dpcore.pairtest.budget import per_test

    alpha = per_test(1.0 - float(confidence), 2)  # one pair, two directions (the audit's Bonferroni)
    box = Box.many_from_counts([0], n, [n], n, alpha=alpha, labels=["perfect"])
    pair = TradeoffPair(null="x′", alt="x", epsilon=1.0, boxes=tuple(box))
    return float(pair.tpr_at_fpr([FPR], exact=False)[0]["lower"])


@dataclass(frozen=True)
class CalibrationCell:
    """One rewriter at one nominal ε (module docstring)."""

    rewriter: str
    epsilon: float
    claimed_bound: float
    lower_bound: float
    estimate: float
    verdict: str
    reach: float
    tpr: float | None
    tpr_lower: float | None
    tpr_upper: float | None
    tpr_ceiling: float | None
    similarity: float | None
    exact_loss: float | None
    event: str | None
    #: Which distinguisher family chose the best test (:data:`dpcore.rewriter.distinguish.TITLES`).
    family: str | None
    examples_x: tuple[str, ...]
    examples_x_prime: tuple[str, ...]
    samples: tuple[tuple[str, tuple[str, ...]], ...]
    parameters: dict[str, Any]
    seconds: float
    #: The LM distinguisher's reading of the same rewrites (``lm=True``; :func:`lm_reading`).
    lm: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        from dpcore.rewriter.distinguish import TITLES as FAMILIES

        return {
            "rewriter": self.rewriter,
            "title": title(self.rewriter),
            "epsilon": self.epsilon,
            "nominal": NOMINAL.get(self.rewriter, "ε"),
            "claimed_bound": self.claimed_bound,
            "lower_bound": self.lower_bound,
            "point_estimate": self.estimate,
            "verdict": self.verdict,
            "largest_certifiable_bound": self.reach,
            "tpr_at_fpr": {
                "fpr": FPR,
                "tpr": self.tpr,
                "lower": self.tpr_lower,
                "upper": self.tpr_upper,
                "claim_ceiling": self.tpr_ceiling,
            },
            "similarity": self.similarity,
            "exact_loss": self.exact_loss,
            "event": self.event,
            "family": self.family,
            "family_title": None if self.family is None else FAMILIES.get(self.family, self.family),
            "lm": self.lm,
            "examples": {"x": list(self.examples_x), "x_prime": list(self.examples_x_prime)},
            "samples": [{"text": t, "rewrites": list(r)} for t, r in self.samples],
            "parameters": self.parameters,
            "seconds": self.seconds,
        }


@dataclass
class CalibrationResult:
    """Every cell, with the settings that made them."""

    cells: list[CalibrationCell]
    pair: tuple[str, str]
    rewriters: tuple[str, ...]
    epsilons: tuple[float, ...]
    rewrites: int
    confidence: float
    seed: int
    max_new_tokens: int
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    meaning: dict[str, Any] | None = None
    lm: bool = False

    def to_dict(self) -> dict[str, Any]:
        from dpcore import __version__

        cells = [c.to_dict() for c in self.cells]
        cap = tpr_reach(self.rewrites, self.confidence)
        return {
            "headline": headline(
                cells,
                self.epsilons,
                self.rewriters,
                tpr_cap=cap,
                confidence=self.confidence,
                rewrites=self.rewrites,
            ),
            "pair": list(self.pair),
            "rewriters": list(self.rewriters),
            "epsilons": list(self.epsilons),
            "rewrites_per_input": self.rewrites,
            "confidence": self.confidence,
            "fpr": FPR,
            "tpr_reach": cap,
            "seed": self.seed,
            "max_new_tokens": self.max_new_tokens,
            "lm": self.lm,
            "meaning": self.meaning,
            "cells": cells,
            "command": self.command,
            "seconds": self.seconds,
            "dpcore_version": __version__,
        }

    def text(self) -> str:
        return render_text(self.to_dict())


def headline_epsilon_of(cells: Sequence[dict[str, Any]], epsilons: Sequence[float]) -> float:
    """The nominal ε a headline speaks of: where the rewriters' certified TPRs at :data:`FPR` differ
    most; the largest ε when none differ."""
    best, spread = None, -1.0
    for e in epsilons:
        lows = [as_number(c["tpr_at_fpr"].get("lower")) for c in cells if float(c["epsilon"]) == float(e)]
        lows = [v for v in lows if not math.isnan(v)]
        if len(lows) >= 2 and max(lows) - min(lows) > spread:
            best, spread = float(e), max(lows) - min(lows)
    return best if best is not None else max(float(e) for e in epsilons)


def loss(value: Any) -> str:
    """A privacy loss (nats) as the calibration writes it (headline, page, table): 3 significant
    digits below 1,000, whole numbers with thousands separators from there (``3,200``, never
    ``3.2e+03``); ``∞``, ``none`` for −∞, and "" for a missing one."""
    v = as_number(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "∞" if v > 0 else "none"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def headline(
    cells: Sequence[dict[str, Any]],
    epsilons: Sequence[float],
    rewriters: Sequence[str],
    *,
    tpr_cap: float | None = None,
    confidence: float | None = None,
    rewrites: int | None = None,
    titles: dict[str, str] | None = None,
    estimates: bool = True,
) -> str:
    """What the calibration shows at one nominal ε (:func:`headline_epsilon_of`), in the order a
    reader must weigh it: the claim each rewriter's paper makes for this pair, then what the audit
    certified (the exact loss beside it where dpcore knows it), then, with ``estimates``, the best
    measured test's estimates (biased upward). ``tpr_cap`` (:func:`tpr_reach`) says when a
    certified rate is the most the audit's size can certify. A certified loss of 0 reads "none",
    never "private"."""
    names = [str(r) for r in rewriters]
    titles = {n: (titles or {}).get(n) or title(n) for n in names}
    eps = headline_epsilon_of(cells, epsilons)
    by = {str(c["rewriter"]): c for c in cells if float(c["epsilon"]) == eps}
    names = [n for n in names if n in by]
    if not names:
        return "No rewriter was measured."
    claims = [f"{loss(by[n]['claimed_bound'])} nats under {titles[n]}" for n in names[:1]]
    claims += [f"{loss(by[n]['claimed_bound'])} under {titles[n]}" for n in names[1:]]
    shown, none = [], []
    for n in names:
        c = by[n]
        lb = as_number(c["lower_bound"])
        if not lb > 0:
            none.append(titles[n])
            continue
        exact = as_number(c.get("exact_loss"))
        beside = "" if math.isnan(exact) else f" (exact {loss(exact)})"
        shown.append(f"≥ {loss(lb)} nats under {titles[n]}{beside}")
    size = ", ".join(
        p
        for p in (
            f"{int(rewrites):,} rewrites each" if rewrites else "",
            f"{percent(confidence, exact=True)} confidence" if confidence is not None else "",
        )
        if p
    )
    if shown:
        certified = "; ".join(shown)
        if none:
            others = "the other" if len(none) == 1 else "the others"
            certified += f"; none above 0 under {others if len(shown) == 1 else and_list(none)}"
    else:
        certified = "no loss above 0 under any of them, which does not show that any of them is private"
    text = (
        f"At nominal ε = {epsilon_text(eps)} the claim for this pair is {and_list(claims)}; certified"
        + (f" ({size})" if size else "")
        + f": {certified}."
    )
    if not estimates:
        return text
    parts = []
    for n in names:
        t = by[n]["tpr_at_fpr"]
        low, est = as_number(t.get("lower")), as_number(t.get("tpr"))
        if math.isnan(est):
            continue
        if not math.isnan(low) and low > FPR + 1e-12:
            capped = tpr_cap is not None and low >= tpr_cap - 1e-9
            cert = f"certified ≥ {percent(low)}" + (", the most this size can certify" if capped else "")
        else:
            cert = "no better than chance certified"
        parts.append(f"{percent(est)} under {titles[n]} ({cert})")
    if parts:
        text += (
            f" Estimates (the best measured test, biased upward): one rewrite gives the sentence away at "
            f"{percent(FPR)} false alarms " + "; ".join(parts) + "."
        )
    return text


def render_text(d: dict[str, Any]) -> str:
    """The CLI's human summary of a calibration (a ``to_dict`` or the shipped file)."""
    x, xp = d["pair"]
    lines = [
        d["headline"],
        f"pair: x = {x!r}, x′ = {xp!r}; {d['rewrites_per_input']:,} rewrites per input, "
        f"{percent(d['confidence'], exact=True)} confidence per audit, seed {d['seed']}",
        "",
        f"{'rewriter':<25}{'nominal ε':>10}{'claim':>12}{'certified ≥':>13}{'exact':>9}"
        f"{'TPR@1%FPR ≥':>13}{'(estimate)':>12}{'meaning':>9}  verdict",
    ]
    for c in d["cells"]:
        t = c["tpr_at_fpr"]
        lb, claim = float(c["lower_bound"]), float(c["claimed_bound"])  # "inf" strings in JSON
        sim = "—" if c["similarity"] is None else f"{c['similarity']:.2f}"
        exact = as_number(c.get("exact_loss"))
        lines.append(
            f"{c['title']:<25}{c['epsilon']:>10g}{claim:>12.4g}"
            f"{(f'{lb:.3g}' if math.isfinite(lb) else '—'):>13}"
            f"{('—' if math.isnan(exact) else loss(exact)):>9}"
            f"{percent(t['lower']):>13}{percent(t['tpr']):>12}"
            f"{sim:>9}  {c['verdict']}"
        )
    lines += ["", "the family that chose each best test" + (
        ", and the LM distinguisher's reading of the same rewrites (TPR@1%FPR ≥, estimate):"
        if d.get("lm") else ":"
    )]  # fmt: skip
    for c in d["cells"]:
        line = f"  {c['title']} at ε = {epsilon_text(c['epsilon'])}: {c.get('family_title') or '—'}"
        reading = c.get("lm")
        if reading:
            t = reading["tpr_at_fpr"]
            line += f"; LM {percent(t['lower'])} ({percent(t['tpr'])})"
        lines.append(line)
    lines += ["", "nominal ε is each rewriter's own: " + "; ".join(
        f"{title(r)}: {NOMINAL.get(r, 'ε')}" for r in d["rewriters"]
    )]  # fmt: skip
    lines.append(meaning_words(d.get("meaning")))
    lines.append("exact: the pair's exact privacy loss, where dpcore can compute it")
    lines.append("samples (public Lee-corpus sentences):")
    for c in d["cells"]:
        for s in c["samples"][:1]:
            lines.append(
                f"  {c['title']} at ε = {epsilon_text(c['epsilon'])}: {s['text']!r} → {s['rewrites'][0]!r}"
            )
    return "\n".join(lines)


def meaning_reference(pair: tuple[str, str]) -> dict[str, Any]:
    """The floor and the ceiling "meaning retained" is read against, in the same embedding.

    ``floor``: the mean cosine similarity of two different sentences among the first
    :data:`FLOOR_SENTENCES` of the Lee corpus (what a rewrite unrelated to its input scores);
    ``ceiling``: x′ against x (a rewrite scoring above it is closer to x than the neighbouring
    sentence is, so it keeps what tells the two apart).
    """
    from dpcore.models.minilm import encode_sentences
    from dpcore.rewriter.pairs import corpus_sentences

    public = corpus_sentences()[:FLOOR_SENTENCES]
    e = encode_sentences(public)
    iu = np.triu_indices(len(public), 1)
    floor = float(np.mean((e @ e.T)[iu]))
    p = encode_sentences([pair[0], pair[1]])
    return {
        "floor": floor,
        "floor_of": f"two different sentences among the first {len(public)} of the Lee corpus",
        "ceiling": float(p[0] @ p[1]),
        "ceiling_of": "x′ against x",
    }


def meaning_words(meaning: dict[str, Any] | None) -> str:
    """What "meaning retained" is, with its floor and ceiling where the record has them."""
    text = "meaning retained: mean cosine of a rewrite and its input (all-MiniLM-L6-v2; 1 = the same text)"
    if not meaning:
        return text
    return (
        f"{text}; floor {float(meaning['floor']):.2f} ({meaning.get('floor_of', 'unrelated sentences')}), "
        f"ceiling {float(meaning['ceiling']):.2f} ({meaning.get('ceiling_of', 'x′ against x')})"
    )


def _similarity(x: str, rewrites: list[str]) -> float:
    from dpcore.models.minilm import encode_sentences

    e = encode_sentences([x, *rewrites])
    return float(np.mean(e[1:] @ e[0]))


def _options(name: str, max_new_tokens: int, device: str) -> dict[str, Any]:
    from dpcore.rewriter.dpprompt import DPPromptRewriter
    from dpcore.rewriter.registry import load_rewriter

    probe = load_rewriter(name, epsilon=1.0)
    if isinstance(probe, DPPromptRewriter):
        return {"max_new_tokens": max_new_tokens, "device": device}
    return {}


def _cell(
    name: str,
    epsilon: float,
    pair: tuple[str, str],
    *,
    rewrites: int,
    confidence: float,
    seed: int,
    options: dict[str, Any],
    samples: Sequence[str],
    progress: Callable[[int, int], None] | None,
    lm: bool = False,
    lm_progress: Callable[[int, int], None] | None = None,
) -> CalibrationCell:
    from dpcore.rewriter.audit import audit_rewriter
    from dpcore.rewriter.registry import load_rewriter
    from dpcore.rng import cell_seed_sequence

    t0 = time.perf_counter()
    rw = load_rewriter(name, epsilon=epsilon, **options)
    res = audit_rewriter(
        rw, [pair], rewrites=rewrites, confidence=confidence, seed=seed, keep_rewrites=True, progress=progress
    )
    (p,) = res.pairs
    tpr, lower, upper, ceiling = _tpr(p)
    sim = None
    if res.drawn:
        sim = 0.5 * (_similarity(pair[0], res.drawn[(0, 0)]) + _similarity(pair[1], res.drawn[(0, 1)]))
    rng = np.random.default_rng(cell_seed_sequence(seed, "calibration-samples", name, float(epsilon)))
    texts = [s for s in samples for _ in range(SAMPLES_EACH)]
    out = rw.rewrite(texts, rng) if texts else []
    shown = tuple((s, tuple(out[i * SAMPLES_EACH : (i + 1) * SAMPLES_EACH])) for i, s in enumerate(samples))
    best = p.best
    return CalibrationCell(
        rewriter=name,
        epsilon=float(epsilon),
        claimed_bound=float(p.claimed_bound),
        lower_bound=float(p.lower_bound),
        estimate=float(p.estimate),
        verdict=res.verdict,
        reach=float(res.reach),
        tpr=tpr,
        tpr_lower=lower,
        tpr_upper=upper,
        tpr_ceiling=ceiling,
        similarity=sim,
        exact_loss=None if p.exact_loss is None else float(p.exact_loss),
        event=None if best is None else best.description,
        family=None if best is None else best.distinguisher,
        examples_x=p.examples_x,
        examples_x_prime=p.examples_x_prime,
        samples=shown,
        parameters=res.described,
        seconds=time.perf_counter() - t0,
        lm=lm_reading(res, progress=lm_progress) if lm else None,
    )


def _tpr(p: Any) -> tuple[float | None, float | None, float | None, float | None]:
    """A pair's TPR at :data:`FPR`: the estimate, its bounds and the claim's ceiling (all None untested)."""
    if not (p.tested and p.tradeoff is not None and p.tradeoff.boxes):
        return None, None, None, None
    entry = p.tradeoff.tpr_at_fpr([FPR], exact=False)[0]
    return entry["tpr"], entry["lower"], entry["upper"], entry["claim_ceiling"]


def lm_reading(res: Any, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The LM distinguisher's reading of an audit's kept rewrites (:func:`dpcore.rewriter.audit.retest`
    with ``lm``): its certified bound, estimate, event and TPR at :data:`FPR`, beside the audit's own.

    A second reading of the same rewrites is a valid test alone; which of the two is larger is
    told by their estimates, and neither bound is raised by having both.
    """
    from dpcore.rewriter.audit import retest
    from dpcore.rewriter.lmscore import reporting

    with reporting(progress):
        (p,) = retest(res, ["lm"]).pairs
    tpr, lower, upper, _ = _tpr(p)
    best = p.best
    return {
        "lower_bound": float(p.lower_bound),
        "point_estimate": float(p.estimate),
        "event": None if best is None else best.description,
        "tpr_at_fpr": {"fpr": FPR, "tpr": tpr, "lower": lower, "upper": upper},
    }


def calibrate_rewriters(
    *,
    rewriters: Sequence[str] = DEFAULT_REWRITERS,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    pair: tuple[str, str] = PAIR,
    rewrites: int = 400,
    confidence: float = 0.95,
    seed: int = 0,
    max_new_tokens: int = 32,
    device: str = "cpu",
    samples: Sequence[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    command: Sequence[str] = (),
    lm: bool = False,
) -> CalibrationResult:
    """Audit each rewriter at each nominal ε on ``pair`` (module docstring).

    Parameters
    ----------
    rewriters:
        Registered names (:func:`dpcore.rewriter.registry.available_rewriters`).
    epsilons:
        Nominal ε values, each rewriter's own ε.
    pair:
        Two neighbouring sentences within every rewriter's premise.
    rewrites, confidence, seed:
        Each audit's size, confidence (per audit) and seed.
    max_new_tokens, device:
        DP-Prompt's n and where its model runs.
    samples:
        Public sentences whose rewrites are shown (default: three Lee-corpus sentences).
    progress:
        ``progress(label, done, total)`` in rewrites, per cell.
    command:
        The command line that made it (recorded).
    lm:
        Also read each audit's rewrites with the LM distinguisher (:func:`lm_reading`; needs torch
        and the shipped SmolLM2; about 5 distinct rewrites a second on two cores).
    """
    from dpcore.rewriter.pairs import corpus_sentences
    from dpcore.rewriter.registry import available_rewriters

    t0 = time.perf_counter()
    known = {c.name for c in available_rewriters()}
    names = tuple(str(r).strip() for r in rewriters)
    if not names or len(names) > MAX_REWRITERS:
        raise DPCoreError(f"give 1 to {MAX_REWRITERS} rewriters, got {len(names)}")
    bad = [r for r in names if r not in known]
    if bad:
        raise DPCoreError(f"unknown rewriter {bad[0]!r}; choose from: {', '.join(sorted(known))}")
    if len(set(names)) != len(names):
        raise DPCoreError("each rewriter once")
    eps = tuple(sorted({check_epsilon(e) for e in epsilons}))
    if not eps or len(eps) > MAX_EPSILONS:
        raise DPCoreError(f"give 1 to {MAX_EPSILONS} values of ε, got {len(eps)}")
    rewrites = check_int(rewrites, name="rewrites", min_value=20, max_value=100_000)
    confidence = check_probability(confidence, name="confidence", open_low=True, open_high=True)
    x, xp = (" ".join(str(t).split()) for t in pair)
    if not x or not xp or x == xp:
        raise DPCoreError("the pair must be two different non-empty sentences")
    if samples is None:
        pool = corpus_sentences()
        samples = [pool[i] for i in SAMPLE_SENTENCES]
    cells = []
    for name in names:
        opts = _options(name, max_new_tokens, device)
        for e in eps:

            def tick(done: int, total: int, _label: str = f"{name} ε={epsilon_text(e)}") -> None:
                if progress is not None:
                    progress(_label, done, total)

            def lm_tick(
                done: int, total: int, _label: str = f"{name} ε={epsilon_text(e)}: LM reading"
            ) -> None:
                if progress is not None:
                    progress(_label, done, total)

            cells.append(
                _cell(name, e, (x, xp), rewrites=rewrites, confidence=confidence, seed=seed,
                      options=opts, samples=samples, progress=tick, lm=lm, lm_progress=lm_tick)
            )  # fmt: skip
    return CalibrationResult(
        cells=cells,
        pair=(x, xp),
        rewriters=names,
        epsilons=eps,
        rewrites=rewrites,
        confidence=confidence,
        seed=seed,
        max_new_tokens=max_new_tokens,
        seconds=time.perf_counter() - t0,
        command=list(command),
        meaning=meaning_reference((x, xp)),
        lm=bool(lm),
    )


def load_shipped(path: Path | None = None) -> dict[str, Any]:
    """The shipped calibration (``dpcore/data/rewriter_calibration.json``), as written."""
    import json

    p = SHIPPED_PATH if path is None else Path(path)
    if not p.is_file():
        raise DPCoreError(f"no calibration at {p}; make it with: {' '.join(SHIPPED_COMMAND)}")
    return json.loads(p.read_text(encoding="utf-8"))
