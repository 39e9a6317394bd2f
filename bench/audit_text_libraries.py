"""Audit third-party word-level sanitizers as shipped, next to dpcore's, and print a Markdown table.

    python bench/audit_text_libraries.py            # the named-words table (about 10 minutes)
    python bench/audit_text_libraries.py --quick    # fewer samples, a smoke run
    python bench/audit_text_libraries.py --screen --minutes 30   # the whole-vocabulary table

``--screen``: every pyPANTERA and mldp-text mechanism listed by ``python -m dpcore list`` (mldp's
when its environment is installed: ``python -m dpcore adapters install mldp``) and every flawed
reproduction gets the whole-vocabulary screen, with |V| and budget chosen for *power*. The row's
stated class is the uniform one: a flaw shared by the vocabulary of Δ ≤ 1 nat, caught with
probability ≥ 0.9 (``result.power``'s ``uniform`` statement); where a run yields no uniform
statement, the single-output class at p ≤ 0.05 (median claim level). The sanitizer's speed is
probed once (:func:`dpcore.textaudit.timing.probe_speed`), a pilot audit at |V| = 300 and a small
budget measures its partner rate, and for |V| in 15,000, 5,000, 2,000, 1,000, 500, 300 (largest
first) the script predicts whether a run fits in ``--minutes`` and reaches the class
(:func:`dpcore.textaudit.pooled.uniform_power`), then runs the largest size that passes both.
Each row states the class, |V|, the screen's draws per word and T, the verdict, the pooled tests'
verdicts, the measured uniform Δ and single-output p per claim level, the prediction (and
"wrong" when the measured statement disagrees with it), the failed words and the seconds.
``--only NAMES`` (comma-separated) runs some rows.

Every sanitizer gets the same audit: GloVe 6B 50d cut to the 2,000 most frequent words, ε = 1,
the same words (every pair among them and each with its nearest neighbour), the same samples
per word, seed 0, 95% family-wise confidence. pyPANTERA 1.0.2 is imported and run as installed
(``pip install pypantera==1.0.2``); nothing of it is copied into dpcore. The table says what the
test showed and no more: "no violation detected" is not "private". A second table repeats dpcore's
own (vectorised) sanitizers at ten times the samples, where that is cheap.
"""

from __future__ import annotations

import argparse
import math
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


#: Candidate GloVe sizes for a screen row, largest first.
CANDIDATE_SIZES = (15_000, 5_000, 2_000, 1_000, 500, 300)
CONFIRM_K = 50  # pairs confirmed in stage 2
CONFIRM_T_MAX = 10_000  # at most this many draws per confirmed word
#: The row's stated class: a uniform flaw of Δ ≤ 1 nat; fallback: one output of probability ≤ 0.05.
TARGET_DELTA = 1.0
TARGET_P = 0.05
PILOT_MINUTES = 0.1  # the pilot's screen, at the smallest size and budget


def _fit(speed, size: int, minutes: float, workers: int):  # type: ignore[no-untyped-def]
    """m (screen draws per word) and T for a run over ``size`` words in about ``minutes``."""
    from dataclasses import replace

    from dpcore.textaudit.screen import MAX_SCREEN_DRAWS, MIN_SCREEN_DRAWS
    from dpcore.textaudit.timing import WORKER_EFFICIENCY, fit_plan

    cap = min(size * MAX_SCREEN_DRAWS, 1_000_000_000)
    common = dict(screen_words=size, confirm_words=2 * CONFIRM_K, workers=workers, max_budget=cap)
    half = fit_plan(speed, minutes=minutes / 2, samples=None, max_samples=CONFIRM_T_MAX, **common)
    left = 60 * minutes - half.confirm_seconds - 1.0 - 2e-4 * size  # what the screen may use
    plan = fit_plan(
        speed, minutes=max(left, 1.0) / 60, samples=half.samples, max_samples=CONFIRM_T_MAX, **common
    )
    if plan.draws_per_word < MIN_SCREEN_DRAWS:  # the screen's floor: the estimate grows to match
        eff = 1.0 if workers <= 1 else workers * WORKER_EFFICIENCY
        more = size * speed.per_draw * (MIN_SCREEN_DRAWS - plan.draws_per_word) / eff
        plan = replace(
            plan,
            draws_per_word=MIN_SCREEN_DRAWS,
            budget=MIN_SCREEN_DRAWS * size,
            screen_seconds=plan.screen_seconds + more,
            estimate_seconds=plan.estimate_seconds + more,
        )
    return plan


def _predict(pilot, size: int, m: int, samples: int) -> tuple[str, float]:  # type: ignore[no-untyped-def]
    """The stated class and its predicted figure at ``size`` words and m draws per word, from the
    pilot: the uniform Δ (:func:`~dpcore.textaudit.pooled.uniform_power` at the pilot's partner
    rate, its claims scaled to ``size`` terms), else the single-output p at the median claim level."""
    from dpcore.textaudit.pooled import uniform_power
    from dpcore.textaudit.power import single_output_probability

    best = math.inf
    for t in pilot.pooled:
        if t["family"] != "self" or t["terms"] == 0 or not t["claim_groups"]:
            continue
        q = t["y_sum"] / (t["draws_per_word"] * t["terms"])
        scale = size / pilot.screen["words_screened"]
        groups = [(c, max(1, round(k * scale))) for c, k in t["claim_groups"]]
        best = min(best, uniform_power(groups, q, m, t["alpha"], reps=400))
    if math.isfinite(best):
        return "uniform", best
    singles = [s for s in pilot.power.get("statements", []) if s["class"] == "single-output"]
    if not singles:
        return "single-output", math.inf
    c = singles[len(singles) // 2]["claim"]
    m0 = pilot.screen["draws_per_word"]
    p = single_output_probability(
        m=m,
        threshold=float(pilot.screen["kth_score"]),
        residual=float(pilot.screen["residual_median"]) * m / m0,
        samples=samples,
        alpha=float(pilot.alpha_accounting["per_confirmation_test"]),
        claim=c,
    )
    return "single-output", p


def _measured(cls: str, power: dict) -> float:  # type: ignore[type-arg]
    sts = power.get("statements", [])
    if cls == "uniform":
        return min((s["excess"] for s in sts if s["class"] == "uniform"), default=math.inf)
    singles = [s for s in sts if s["class"] == "single-output"]
    return singles[len(singles) // 2]["output_probability"] if singles else math.inf


def _screen_names(only: list[str] | None) -> list[str]:
    from dpcore.flawed.text import FLAWED_TEXT_SANITIZERS
    from dpcore.textaudit.loaders import available_sanitizers

    listed = [c.name for c in available_sanitizers()]
    names = [n for n in listed if n.startswith(("pypantera:", "mldp:"))]
    names = [n for n in names if n.startswith("mldp:")] + [n for n in names if n.startswith("pypantera:")]
    names += [n for n in FLAWED_TEXT_SANITIZERS if n not in names]
    return [n for n in names if only is None or n in only]


def _screen_table(minutes: float, only: list[str] | None, workers: int) -> None:
    import os

    import numpy as np

    from dpcore.textaudit.timing import probe_speed

    names = _screen_names(only)
    lo = min(CANDIDATE_SIZES)
    print(
        f"Whole-vocabulary screen, ε = 1, GloVe, K = {CONFIRM_K} pairs confirmed at T ≤ {CONFIRM_T_MAX:,}, "
        f"seed 0, 95% family-wise, {workers} worker(s), about {minutes:g} min per row; "
        f"load average {os.getloadavg()[0]:.1f}.\n"
        f"Each row's |V| and budget are chosen for power: the row's stated class is a flaw shared by the "
        f"vocabulary (uniform: every word produces itself e^Δ times more often than its claim allows against "
        f"its partner) with Δ ≤ {TARGET_DELTA:g} nat caught with probability ≥ 0.9; where the run yields no "
        f"uniform statement, one output with loss claim + 1 nat and probability p ≤ {TARGET_P:g} (median "
        f"claim level). The speed is probed once; a pilot audit at |V| = {lo} and a small budget gives the "
        f"partner rate; for |V| in {', '.join(f'{v:,}' for v in CANDIDATE_SIZES)} (largest first) the "
        f"largest that fits the minutes and is predicted to reach the class is run, and the table shows what "
        f"that run stated.\n"
    )
    print(
        "| sanitizer | claim | stated class | \\|V\\| | screen m / T | verdict | pooled tests | "
        "uniform Δ (90%) | single-output p (90%) | prediction | failed words | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        t0 = time.perf_counter()
        try:
            small = build_vocabulary("glove", size=lo)
            s0 = load_sanitizer(name, epsilon=1.0, vocab=small)
            speed = probe_speed(s0, np.asarray(small.words), np.arange(0, lo, lo // 5), 0)
            pplan = _fit(speed, lo, PILOT_MINUTES, workers)
            pilot = audit_text(
                s0,
                vocab=small,
                pairs=CONFIRM_K,
                samples=pplan.samples,
                screen_budget=pplan.budget,
                seed=1,
                workers=workers,
            )
        except DPCoreError as exc:  # e.g. a calibration with no noise scale at ε = 1, a missing resource
            msg = str(exc).splitlines()[0][:160].replace("|", "\\|")
            print(f"| `{name}` | | | | | cannot be audited at ε = 1: {msg} | | | | | | |", flush=True)
            continue
        choice = None
        for size in sorted(CANDIDATE_SIZES, reverse=True):
            plan = _fit(speed, size, minutes, workers)
            if plan.estimate_seconds > 60 * minutes * 1.1:
                continue
            cls, pred = _predict(pilot, size, plan.draws_per_word, plan.samples)
            if (pred <= TARGET_DELTA) if cls == "uniform" else (pred <= TARGET_P):
                choice = (size, plan, cls, pred, True)
                break
        if choice is None:  # nothing passes both: the smallest size, and the row says so
            plan = _fit(speed, lo, minutes, workers)
            cls, pred = _predict(pilot, lo, plan.draws_per_word, plan.samples)
            choice = (lo, plan, cls, pred, False)
        size, plan, cls, pred, ok = choice
        vocab = build_vocabulary("glove", size=size)
        s = load_sanitizer(name, epsilon=1.0, vocab=vocab)
        t1 = time.perf_counter()
        r = audit_text(
            s,
            vocab=vocab,
            pairs=CONFIRM_K,
            samples=plan.samples,
            screen_budget=plan.budget,
            seed=0,
            workers=workers,
        )
        run_s = time.perf_counter() - t1
        claim = getattr(s, "citation", None) or ("ε-LDP" if s.guarantee == "ldp" else "ε·d metric LDP")
        meas = _measured(cls, r.power)
        target = TARGET_DELTA if cls == "uniform" else TARGET_P
        sym = "Δ" if cls == "uniform" else "p"
        pred_text = f"{sym} {_num(pred)} predicted"
        if not ok:
            pred_text += f"; no |V| passes in {minutes:g} min, run at the smallest"
        if (pred <= target) != (meas <= target):
            pred_text += f"; **wrong**: measured {sym} {_num(meas)}"
        cls_text = (
            f"uniform, Δ ≤ {TARGET_DELTA:g}"
            if cls == "uniform"
            else f"single-output, p ≤ {TARGET_P:g} (no uniform statement)"
        )
        uniform, single = _power_cells(r.power)
        print(
            f"| `{name}` | {claim} | {cls_text} | {size:,} | "
            f"{r.screen['draws_per_word']:,} / {plan.samples:,} | "
            f"{_VERDICT[r.verdict]} | {_pooled_cell(r.pooled)} | {uniform} | {single} | {pred_text} | "
            f"{len(r.failures)} | {run_s:.0f} (row {time.perf_counter() - t0:.0f}) |",
            flush=True,
        )


def _num(v: float) -> str:
    return "∞" if not math.isfinite(v) else f"{v:.2g}"


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
