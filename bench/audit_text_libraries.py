"""Audit third-party word-level sanitizers as shipped, next to dpcore's, and print a Markdown table.

    python bench/audit_text_libraries.py            # the named-words table (about 10 minutes)
    python bench/audit_text_libraries.py --quick    # fewer samples, a smoke run
    python bench/audit_text_libraries.py --screen --minutes 30   # the whole-vocabulary table

``--screen``: every pyPANTERA mechanism and every flawed reproduction gets the default screen
(stage 1 over the whole vocabulary, K = 50 pairs confirmed at T = 10⁴ per word) at the largest
GloVe |V| its measured speed allows in about ``--minutes`` per row (a short probe measures its
draws per second first; |V| is at most 50,000, the shipped table, and at least 500), with
at least 1,000 screen draws per word (more where |V| reaches 50,000 with time to spare).
Each row states its |V|, the screen's draws per word, the verdict, the pooled tests' verdicts
(family/pairing, over the screen's draws), the whole pipeline's power statements with
probability ≥ 0.9 (``result.power``: the smallest Δ of a flaw shared by the vocabulary that the
pooled tests catch, and per claim level the smallest probability of one output whose loss
exceeds its claim by 1 nat that the screen proposes and the confirmation flags), and the
confirmed pairs' own detectable excess at the tests' median event probability.

Every sanitizer gets the same audit: GloVe 6B 50d cut to the 2,000 most frequent words, ε = 1,
the same words (every pair among them and each with its nearest neighbour), the same samples
per word, seed 0, 95% family-wise confidence. pyPANTERA 1.0.2 is imported and run as installed
(``pip install pypantera==1.0.2``); nothing of it is copied into dpcore. The table says what the
test showed and no more: "no violation detected" is not "private". A second table repeats dpcore's
own (vectorised) sanitizers at ten times the samples, where that is cheap.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text
from dpcore.textaudit.loaders import load_sanitizer
from dpcore.textaudit.pypantera import PYPANTERA_MECHANISMS, pypantera_available
from dpcore.validation import DPCoreError

WORDS = ["of", "it", "was", "this", "world", "money"]
OURS = ["santext", "feyisetan", "krr", "flawed:krr-overclaimed"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 samples per word")
    ap.add_argument("--samples", type=int, default=4_000, help="samples per word (default 4000)")
    ap.add_argument(
        "--custext-failures",
        action="store_true",
        help="only count the 300 most frequent words on which pyPANTERA's CusText sample() raises",
    )
    ap.add_argument("--screen", action="store_true", help="the whole-vocabulary screen table")
    ap.add_argument("--minutes", type=float, default=30.0, help="--screen: minutes per row (default 30)")
    ap.add_argument("--only", default=None, help="--screen: comma-separated sanitizer names")
    ap.add_argument("--workers", type=int, default=2, help="--screen: processes (default 2)")
    args = ap.parse_args()
    if args.screen:
        _screen_table(args.minutes, None if args.only is None else args.only.split(","), args.workers)
        return
    if args.custext_failures:
        _custext_failures()
        return
    samples = 500 if args.quick else args.samples
    if not pypantera_available():
        raise SystemExit("pyPANTERA is not installed: pip install -r requirements.txt")
    vocab = build_vocabulary("glove", size=2_000)
    names = [f"pypantera:{k}" for k in PYPANTERA_MECHANISMS] + OURS
    print(
        f"GloVe |V| = {len(vocab):,}, ε = 1, words {','.join(WORDS)} + 1 nearest neighbour each, "
        f"{samples:,} samples per word, seed 0, confidence 95% (family-wise)\n"
    )
    _table(vocab, names, samples)
    big = 10 * samples
    print(f"\nThe same for dpcore's vectorised sanitizers at {big:,} samples per word:\n")
    _table(vocab, OURS, big)


def _custext_failures() -> None:
    import numpy as np

    vocab = build_vocabulary("glove", size=2_000)
    s = load_sanitizer("pypantera:CusText", epsilon=1.0, vocab=vocab)
    failed: dict[str, int] = {}
    for w in vocab.words[:300]:
        try:
            s.sample([str(w)] * 5, np.random.default_rng(0))
        except Exception as exc:  # pyPANTERA's own error, counted by message
            failed[str(exc)] = failed.get(str(exc), 0) + 1
    print(
        f"pyPANTERA CusText (K = 20, ε = 1): sample() raised on {sum(failed.values())} "
        "of the 300 most frequent words"
    )
    for msg, n in failed.items():
        print(f"  {n}× {msg}")


def _table(vocab, names: list[str], samples: int) -> None:  # type: ignore[no-untyped-def]
    head = "| sanitizer | claim | pairs tested | verdict | max lower bound / claim | sample() failed on | s |"
    print(head)
    print("|---|---|---|---|---|---|---|")
    for name in names:
        t0 = time.perf_counter()
        s = load_sanitizer(name, epsilon=1.0, vocab=vocab)
        r = audit_text(s, vocab=vocab, words=WORDS, neighbors=1, samples=samples, seed=0)
        claim = getattr(s, "citation", None) or ("ε-LDP" if s.guarantee == "ldp" else "ε·d metric LDP")
        failed = f"{len(r.failures)} of {len({w for p in r.pairs for w in (p.x, p.x_prime)})}"
        if r.failures:
            failed += f" ({next(iter(r.failures.values())).split(': ', 1)[-1]})"
        print(
            f"| `{name}` | {claim} | {r.pairs_tested} of {len(r.pairs)} | {_VERDICT[r.verdict]} | "
            f"{r.max_lower_bound_ratio:.3g} | {failed} | {time.perf_counter() - t0:.0f} |",
            flush=True,
        )


SCREEN_DRAWS = 1_000  # per word in stage 1
CONFIRM_T = 10_000  # per word in stage 2
CONFIRM_K = 50


def _probe_rate(name: str) -> float:
    """Draws per second of a sanitizer's own sample path on 20 words of a 2,000-word vocabulary."""
    from dpcore.textaudit.engine import DrawPlan, draw_words

    vocab = build_vocabulary("glove", size=2_000)
    s = load_sanitizer(name, epsilon=1.0, vocab=vocab)
    t0 = time.perf_counter()
    draw_words(s, vocab.words, list(range(20)), 0, DrawPlan("probe", (500,)), workers=1)
    return 20 * 500 / (time.perf_counter() - t0)


def _screen_table(minutes: float, only: list[str] | None, workers: int) -> None:
    import os

    from dpcore.flawed.text import FLAWED_TEXT_SANITIZERS

    names = [f"pypantera:{k}" for k in PYPANTERA_MECHANISMS] + list(FLAWED_TEXT_SANITIZERS)
    names = [n for n in names if only is None or n in only]
    print(
        f"Whole-vocabulary screen, ε = 1, GloVe, at least {SCREEN_DRAWS:,} screen draws per word, "
        f"K = {CONFIRM_K} pairs confirmed at T = {CONFIRM_T:,}, seed 0, 95% family-wise, "
        f"{workers} worker(s); "
        f"|V| chosen for "
        f"about {minutes:g} min per row; load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| sanitizer | claim | |V| | screen draws/word | verdict | max lower bound / claim | pooled tests | "
        "shared flaw caught (90%) | one output caught (90%) | detectable (90%) | failed words | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        try:
            rate = _probe_rate(name) * workers
        except DPCoreError:
            rate = 1e4
        budget_draws = rate * minutes * 60 - 2 * CONFIRM_K * CONFIRM_T
        size = int(min(50_000, max(500, budget_draws // SCREEN_DRAWS)))
        per_word = int(min(1_000_000, max(SCREEN_DRAWS, budget_draws // size)))  # time left: more draws
        vocab = build_vocabulary("glove", size=size)
        try:
            s = load_sanitizer(name, epsilon=1.0, vocab=vocab)
        except DPCoreError as exc:  # e.g. a calibration that has no noise scale at ε = 1
            print(f"| `{name}` | | {size:,} | | cannot be built at ε = 1: {exc} | | | | | | | |", flush=True)
            continue
        t0 = time.perf_counter()
        r = audit_text(
            s,
            vocab=vocab,
            pairs=CONFIRM_K,
            samples=CONFIRM_T,
            screen_budget=size * per_word,
            seed=0,
            workers=workers,
        )
        claim = getattr(s, "citation", None) or ("ε-LDP" if s.guarantee == "ldp" else "ε·d metric LDP")
        det = r.detectable_violation
        det_text = (
            f"claim + {det['excess']:.3g} at p ≥ {det['event_probability']:.2g}"
            if det.get("event_probability") and det["excess"] != float("inf")
            else "none at the tests' events"
        )
        uniform, single = _power_cells(r.power)
        print(
            f"| `{name}` | {claim} | {size:,} | {r.screen['draws_per_word']:,} | {_VERDICT[r.verdict]} | "
            f"{r.max_lower_bound_ratio:.3g} | {_pooled_cell(r.pooled)} | {uniform} | {single} | {det_text} | "
            f"{len(r.failures)} | {time.perf_counter() - t0:.0f} |",
            flush=True,
        )


_VERDICT = {"violates": "**violates**", "not-detected": "no violation detected", "untested": "untested"}


def _pooled_cell(pooled: list[dict]) -> str:  # type: ignore[type-arg]
    """The pooled tests' verdicts: ``family/pairing`` of each rejecting test (with the excess it
    proves), else how many ran and found nothing."""
    run = [t for t in pooled if t["terms"] > 0]
    if not run:
        return "none run"
    bad = [t for t in run if t["rejects"]]
    if not bad:
        return f"0 of {len(run)} reject"
    return f"**{len(bad)} of {len(run)} reject**: " + ", ".join(
        f"{t['family']}/{t['pairing']} (≥ {t['excess_lower_bound']:.2g} nats)" for t in bad
    )


def _power_cells(power: dict) -> tuple[str, str]:  # type: ignore[type-arg]
    """From ``result.power``: the uniform Δ (the smallest over the pooled 'self' tests) and the
    single-output probability per claim level."""
    sts = power.get("statements", [])
    unif = [s for s in sts if s["class"] == "uniform" and s["excess"] != float("inf")]
    uniform = "none stated"
    if unif:
        b = min(unif, key=lambda s: s["excess"])
        uniform = f"Δ ≥ {b['excess']:.2g} nats ({b['pairing']})"
    singles = [s for s in sts if s["class"] == "single-output"]
    single = (
        "; ".join(
            f"p ≥ {s['output_probability']:.2g} at claim {s['claim']:.3g}"
            if s["output_probability"] <= 1
            else f"never at claim {s['claim']:.3g}"
            for s in singles
        )
        or "none stated"
    )
    return uniform, single


if __name__ == "__main__":
    main()
