"""Does the rewriter audit's power statement hold for the whole pipeline? And its false alarms?

For each planted rewriter (:mod:`dpcore.rewriter.planted`) and each size N (rewrites per input),
q is set so that the rewriter sits exactly at the power statement's 90% point: a marker of
probability p = q + (1 − q)/K under x whose exact loss ln(1 + qK/(1 − q)) the held-out test
flags with probability 0.9 (:func:`dpcore.rewriter.power.stated_power`) against the claim ε = 1.
The whole audit (contract check off; selection over every distinguisher given, both directions,
Bonferroni) then runs on many seeds, and the caught rate is judged by a one-sided binomial test:
"caught rate ≥ stated" is rejected when Pr[Bin(runs, stated) ≤ caught] < 0.05.

- ``copy``: copies its input with probability q, else one of K = 20 public sentences (x and x′
  are two of them);
- ``leak-word``: a public sentence and one word, the input's last word with probability q, else
  one of K = 100 public words (x and x′ differ in their last word);
- ``leak-suffix``: a public sentence and a public word with one letter glued to it, the input's
  last letter with probability q, else one of K = 26 letters: a marker only in characters, which
  the statement does **not** cover (:data:`dpcore.rewriter.power.NOT_COVERED`). Its cells are
  reported, not judged: they show why the statement leaves such markers out;
- the side channels ``tokens``, ``characters``, ``capitals``, ``punctuation``, ``digits`` and
  ``positions`` (:data:`dpcore.rewriter.planted.SIDE_CHANNEL_CASES`): the output carries the
  input's count (or the place of its word "storm") with probability q, else one of K values, and
  nothing else of the input; the marker is "the output's count is the input's".

With ``--distinguishers lm`` (the SmolLM2 reconstruction score, :mod:`dpcore.rewriter.lmscore`)
the same cells check the LM distinguisher's own statement: its threshold event is a marker when
the score separates the leak from the rest. The model's scores are kept per distinct rewrite
across runs (the planted rewriters' outputs repeat), which changes no score.

False alarms: the copy rewriter audited against its own exact loss (a claim that holds with
equality); at most 1 − confidence of the runs may flag it.

Prints one line per cell and the command that reproduces it::

    python bench/rewriter_power.py [--runs 400] [--sizes 200,1000]
        [--distinguishers exact,words,chars,side,minilm]
        [--kinds copy,leak-word,leak-suffix,tokens,characters,capitals,punctuation,digits,positions,
                 false-alarms]

400 runs per cell tell a caught rate of 0.90 from 0.87 (the default distinguishers, MiniLM
included, are the audit's own defaults).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy.stats import binom

from dpcore.rewriter.audit import audit_rewriter
from dpcore.rewriter.distinguish import DISTINGUISHERS
from dpcore.rewriter.pairs import _replacement_words, corpus_sentences
from dpcore.rewriter.planted import (
    SIDE_CHANNEL_CASES,
    CopyRewriter,
    LeakSuffixRewriter,
    LeakWordRewriter,
    planted_loss,
    side_channel_case,
)
from dpcore.rewriter.power import stated_power
from dpcore.stats import cp_lower, cp_upper

CLAIM = 1.0
CONFIDENCE = 0.95
TARGET = 0.9


def _make(kind: str, q: float, claim: float):
    pool = corpus_sentences()[:20]
    if kind == "copy":
        return CopyRewriter(epsilon=claim, q=q, pool=pool), (pool[0], pool[1]), 20
    if kind in SIDE_CHANNEL_CASES:
        rw, pair = side_channel_case(kind, q=q, epsilon=claim)
        return rw, pair, K[kind]
    words = _replacement_words()[:100]
    if kind == "leak-suffix":
        rw = LeakSuffixRewriter(epsilon=claim, q=q, pool=pool, words=words)
        return rw, ("the storm hit the coast", "the storm hit the town"), 26
    rw = LeakWordRewriter(epsilon=claim, q=q, pool=pool, words=words)
    return rw, (f"the storm hit {words[0]}", f"the storm hit {words[1]}"), 100


K = {"copy": 20, "leak-word": 100, "leak-suffix": 26} | {
    kind: int(options["k"]) for kind, (options, _) in SIDE_CHANNEL_CASES.items()
}
SIDE = tuple(SIDE_CHANNEL_CASES)


def _stated(kind: str, q: float, n: int) -> float:
    k = K[kind]
    alpha = (1 - CONFIDENCE) / 2
    return stated_power(n - n // 2, alpha, CLAIM, q + (1 - q) / k, planted_loss(q, k))


def q_at(kind: str, n: int, target: float = TARGET) -> float:
    """The q whose stated power is ``target`` (bisection; the stated power grows with q)."""
    lo, hi = 1e-4, 0.999
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if _stated(kind, mid, n) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _rate(k: int, runs: int) -> str:
    lo, hi = float(cp_lower(k, runs, 0.025)), float(cp_upper(k, runs, 0.025))
    return f"{k}/{runs} = {k / runs:.3f} (95% CI {lo:.3f}–{hi:.3f})"


class _KeptScores:
    """The shipped model, its log-likelihoods kept per (prompt, answers) across the runs."""

    def __init__(self, model) -> None:  # type: ignore[no-untyped-def]
        self.model, self.name, self.kept = model, model.name, {}

    def prompt_ids(self, prompt):  # type: ignore[no-untyped-def]
        return self.model.prompt_ids(prompt)

    def answer_ids(self, text):  # type: ignore[no-untyped-def]
        return self.model.answer_ids(text)

    def log_likelihoods(self, prompts, answers):  # type: ignore[no-untyped-def]
        import numpy as np

        key_a = tuple(a.tobytes() for a in answers)
        todo = [p for p in prompts if (p.tobytes(), key_a) not in self.kept]
        if todo:
            for p, row in zip(todo, self.model.log_likelihoods(todo, answers), strict=True):
                self.kept[(p.tobytes(), key_a)] = row
        return np.asarray([self.kept[(p.tobytes(), key_a)] for p in prompts])


def _keep_lm_scores() -> None:
    from dpcore.rewriter import lmscore

    kept = _KeptScores(lmscore.default_model())
    lmscore.default_model = lambda: kept


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--sizes", default="200,1000")
    ap.add_argument("--distinguishers", default=",".join(DISTINGUISHERS))
    ap.add_argument("--kinds", default=",".join(("copy", "leak-word", "leak-suffix", *SIDE, "false-alarms")))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    dist = tuple(args.distinguishers.split(","))
    kinds = args.kinds.split(",")
    if "lm" in dist:
        _keep_lm_scores()
    print(
        f"# python bench/rewriter_power.py --runs {args.runs} --sizes {args.sizes} "
        f"--distinguishers {args.distinguishers} --kinds {args.kinds}"
    )
    print(f"# claim ε = {CLAIM:g} per document, confidence {CONFIDENCE:g}, one pair (2 tests)")
    print('# rule: "caught rate ≥ stated" is rejected when Pr[Bin(runs, stated) ≤ caught] < 0.05')
    failed = 0
    cells = [
        (kind, n, args.runs, dist)
        for kind in ("copy", "leak-word", "leak-suffix", *SIDE)
        if kind in kinds
        for n in sizes
    ]
    for kind, n, runs, ds in cells:
        if runs <= 0:
            continue
        q = q_at(kind, n)
        rw, pair, k = _make(kind, q, CLAIM)
        stated = _stated(kind, q, n)
        t0 = time.perf_counter()
        caught = sum(
            audit_rewriter(rw, [pair], rewrites=n, seed=s, distinguishers=ds, check=False).verdict
            == "violates"
            for s in range(runs)
        )
        p_value = float(binom.cdf(caught, runs, stated))
        covered = kind != "leak-suffix"
        ok = p_value >= 0.05 or not covered
        failed += not ok
        judged = (
            ("holds" if ok else "REJECTED") if covered else "not covered by the statement (reported only)"
        )
        print(
            f"{kind:<12} N = {n:>5,} q = {q:.4f} (K = {k}, marker p = {q + (1 - q) / k:.3f}, exact loss "
            f"{planted_loss(q, k):.3f}) distinguishers {','.join(ds)}: at the statement's 90% point "
            f"{stated:.3f}, caught {_rate(caught, runs)}; binomial p = {p_value:.3g}: "
            f"{judged} [{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )
    for n in sizes if "false-alarms" in kinds else ():
        q = q_at("copy", n)
        loss = planted_loss(q, 20)
        rw, pair, _ = _make("copy", q, loss)
        t0 = time.perf_counter()
        flagged = sum(
            audit_rewriter(rw, [pair], rewrites=n, seed=10_000 + s, distinguishers=dist, check=False).verdict
            == "violates"
            for s in range(args.runs)
        )
        allowed = 1 - CONFIDENCE
        p_value = float(binom.sf(flagged - 1, args.runs, allowed)) if flagged else 1.0
        ok = p_value >= 0.05
        failed += not ok
        print(
            f"false alarms, copy at its exact loss {loss:.3f} (claim = loss), N = {n:,}: flagged "
            f"{_rate(flagged, args.runs)}, allowed {allowed:g}: {'holds' if ok else 'REJECTED'} "
            f"[{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )
    print("EXIT", 1 if failed else 0)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
