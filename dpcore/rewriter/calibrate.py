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
- **utility**: the mean cosine similarity between each rewrite and its input in the shipped
  all-MiniLM-L6-v2 sentence embedding (:func:`dpcore.models.minilm.encode_sentences`; 1 = same meaning);
- a few **sample rewrites** of public sentences (the Lee corpus).

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

from dpcore.formatting import epsilon_text, percent
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
    "dp-mlm": "DP-MLM",
    "dp-prompt": "DP-Prompt",
}
#: What each rewriter's nominal ε is per.
NOMINAL = {
    "santext-words": "ε per unit of GloVe distance, per word",
    "dp-mlm": "ε per WordPiece",
    "dp-prompt": "ε per generated token",
}
SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "rewriter_calibration.json"
SHIPPED_COMMAND = [
    "python", "-m", "dpcore", "calibrate-rewriters", "--save", "dpcore/data/rewriter_calibration.json",
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
    event: str | None
    examples_x: tuple[str, ...]
    examples_x_prime: tuple[str, ...]
    samples: tuple[tuple[str, tuple[str, ...]], ...]
    parameters: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
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
            "event": self.event,
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

    def to_dict(self) -> dict[str, Any]:
        from dpcore import __version__

        cells = [c.to_dict() for c in self.cells]
        cap = tpr_reach(self.rewrites, self.confidence)
        return {
            "headline": headline(
                cells, self.epsilons, self.rewriters, tpr_cap=cap, confidence=self.confidence
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
            "cells": cells,
            "command": self.command,
            "seconds": self.seconds,
            "dpcore_version": __version__,
        }

    def text(self) -> str:
        return render_text(self.to_dict())


def headline(
    cells: Sequence[dict[str, Any]],
    epsilons: Sequence[float],
    rewriters: Sequence[str],
    *,
    tpr_cap: float | None = None,
    confidence: float | None = None,
) -> str:
    """One sentence: at the nominal ε where the rewriters differ most (by the lower bound on the
    TPR at 1% FPR), how often one rewrite gives the sentence away under each. ``tpr_cap``
    (:func:`tpr_reach`) says when a lower bound is the most the audit's size can certify."""
    by = {(c["rewriter"], float(c["epsilon"])): c for c in cells}
    best_eps, spread = None, -1.0
    for e in epsilons:
        lows = [by[(r, float(e))]["tpr_at_fpr"]["lower"] for r in rewriters if (r, float(e)) in by]
        lows = [v for v in lows if v is not None]
        if len(lows) >= 2 and max(lows) - min(lows) > spread:
            best_eps, spread = float(e), max(lows) - min(lows)
    if best_eps is None:
        return "Too few rewriters were measured to compare them."
    parts = []
    for r in rewriters:
        c = by.get((r, best_eps))
        if c is None or c["tpr_at_fpr"]["lower"] is None:
            continue
        t = c["tpr_at_fpr"]
        if t["lower"] <= FPR:
            parts.append(f"{title(r)}: no better than chance could be shown")
            continue
        capped = tpr_cap is not None and t["lower"] >= tpr_cap - 1e-9
        parts.append(
            f"{title(r)}: the best held-out test named the right sentence {percent(t['tpr'])} of the time "
            f"(at least {percent(t['lower'])} at "
            + (
                f"{percent(confidence, exact=True)} confidence"
                if confidence is not None
                else "the stated confidence"
            )
            + (", the most this many rewrites can certify)" if capped else ")")
        )
    return (
        f"At the same nominal ε = {epsilon_text(best_eps)}, one rewrite tells the two sentences apart at "
        f"{percent(FPR)} false alarms very differently by rewriter — " + "; ".join(parts) + "."
    )


def render_text(d: dict[str, Any]) -> str:
    """The CLI's human summary of a calibration (a ``to_dict`` or the shipped file)."""
    x, xp = d["pair"]
    lines = [
        d["headline"],
        f"pair: x = {x!r}, x′ = {xp!r}; {d['rewrites_per_input']:,} rewrites per input, "
        f"{percent(d['confidence'], exact=True)} confidence per audit, seed {d['seed']}",
        "",
        f"{'rewriter':<22}{'nominal ε':>10}{'claim':>12}{'certified ≥':>13}"
        f"{'TPR@1%FPR ≥':>13}{'(estimate)':>12}{'similarity':>12}  verdict",
    ]
    for c in d["cells"]:
        t = c["tpr_at_fpr"]
        lb, claim = float(c["lower_bound"]), float(c["claimed_bound"])  # "inf" strings in JSON
        sim = "—" if c["similarity"] is None else f"{c['similarity']:.2f}"
        lines.append(
            f"{c['title']:<22}{c['epsilon']:>10g}{claim:>12.4g}"
            f"{(f'{lb:.3g}' if math.isfinite(lb) else '—'):>13}"
            f"{percent(t['lower']):>13}{percent(t['tpr']):>12}"
            f"{sim:>12}  {c['verdict']}"
        )
    lines += ["", "nominal ε is each rewriter's own: " + "; ".join(
        f"{title(r)}: {NOMINAL.get(r, 'ε')}" for r in d["rewriters"]
    )]  # fmt: skip
    lines.append("similarity: mean cosine of a rewrite and its input (all-MiniLM-L6-v2; 1 = same meaning)")
    lines.append("samples (public Lee-corpus sentences):")
    for c in d["cells"]:
        for s in c["samples"][:1]:
            lines.append(
                f"  {c['title']} at ε = {epsilon_text(c['epsilon'])}: {s['text']!r} → {s['rewrites'][0]!r}"
            )
    return "\n".join(lines)


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
    tpr = lower = upper = ceiling = sim = None
    if p.tested and p.tradeoff is not None and p.tradeoff.boxes:
        entry = p.tradeoff.tpr_at_fpr([FPR], exact=False)[0]
        tpr, lower, upper, ceiling = entry["tpr"], entry["lower"], entry["upper"], entry["claim_ceiling"]
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
        event=None if best is None else best.description,
        examples_x=p.examples_x,
        examples_x_prime=p.examples_x_prime,
        samples=shown,
        parameters=res.described,
        seconds=time.perf_counter() - t0,
    )


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

            cells.append(
                _cell(name, e, (x, xp), rewrites=rewrites, confidence=confidence, seed=seed,
                      options=opts, samples=samples, progress=tick)
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
    )


def load_shipped(path: Path | None = None) -> dict[str, Any]:
    """The shipped calibration (``dpcore/data/rewriter_calibration.json``), as written."""
    import json

    p = SHIPPED_PATH if path is None else Path(path)
    if not p.is_file():
        raise DPCoreError(f"no calibration at {p}; make it with: {' '.join(SHIPPED_COMMAND)}")
    return json.loads(p.read_text(encoding="utf-8"))
