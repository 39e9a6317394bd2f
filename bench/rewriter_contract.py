"""Does the rewriter contract catch copies that share randomness, and only those?

1. **The shared-word rewriter** of issue 60: each ``rewrite`` call draws one word, "alpha" or
   "beta", given to every copy of the call, beside an independent random word per copy. Its
   output ignores its input (its true loss is 0), yet batched 50 copies a call its shared word
   looks like a leak: before the content check it passed the contract in 20 of 20 seeds and was
   flagged "violates" in 37 of 200 audits. Here the whole audit (contract on, claim ε = 0.1 per
   document, N = 1,000 rewrites per input, the default distinguishers) runs on ``--runs`` seeds;
   the contract's content check should send each run to one copy per call, and no run may be
   flagged.
2. **Every registered rewriter** keeps the contract (checked on ``--seeds`` seeds each; DP-Prompt,
   whose rewrites take about a second each, on one) and is batched: a needless fallback to one
   copy per call has probability ≤ 0.003 per check, so none is expected.

Prints one line per cell and the command::

    python bench/rewriter_contract.py [--runs 200] [--seeds 3] [--parts shared-word,registered]

``--parts shared-word`` reruns part 1 alone (about 6 minutes): what a change to the audit's
selection can move; part 2 calls only the contract check (about half an hour, DP-Prompt's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "plugins"))

from rewriter_power import _rate  # noqa: E402 (bench/: the caught-rate line, with its CI)
from rewriters import SharedWord  # noqa: E402 (tests/plugins: the rewriter of the issue)

from dpcore.rewriter import audit_rewriter, available_rewriters, load_rewriter  # noqa: E402
from dpcore.rewriter.contract import check_contract  # noqa: E402
from dpcore.validation import DPCoreError  # noqa: E402

PAIR = ("the storm hit the coast last night", "the storm hit the town last night")
CLAIM = 0.1
REWRITES = 1000
SLOW = ("dp-prompt", "flawed:dp-prompt-keeps-last-word")
PARTS = ("shared-word", "registered")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ", ".join(PARTS))
    args = ap.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if not parts or set(parts) - set(PARTS):
        ap.error(f"--parts takes {' and/or '.join(PARTS)}")
    print(f"# python bench/rewriter_contract.py --runs {args.runs} --seeds {args.seeds} --parts {args.parts}")
    failed = 0
    if "shared-word" in parts:
        t0 = time.perf_counter()
        single = flagged = 0
        for s in range(args.runs):
            res = audit_rewriter(SharedWord(CLAIM), [PAIR], rewrites=REWRITES, seed=s)
            single += res.contract is not None and not res.contract.batched
            flagged += res.verdict == "violates"
        failed += flagged > 0
        print(
            f"shared-word (claim {CLAIM:g}, N = {REWRITES:,}, contract on, default distinguishers): "
            f"drawn one copy per call in {_rate(single, args.runs)}, flagged {_rate(flagged, args.runs)}: "
            f"{'holds' if flagged == 0 else 'FLAGGED'} [{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )
    for choice in available_rewriters() if "registered" in parts else ():
        rw = load_rewriter(choice.name, epsilon=10.0)
        seeds = 1 if choice.name in SLOW else args.seeds
        t0 = time.perf_counter()
        ps, bad = [], []
        for s in range(seeds):
            try:
                r = check_contract(rw, PAIR[0], seed=s)
            except DPCoreError as exc:
                bad.append(f"seed {s}: refused: {exc}")
                continue
            ps.append(min(r.content_p_value, r.distinct_p_value, r.length_p_value))
            if not r.batched:
                bad.append(f"seed {s}: one copy per call: {r.unbatched_because}")
        failed += bool(bad)
        print(
            f"{choice.name:<34} contract kept and batched on {seeds - len(bad)} of {seeds} seed(s); smallest "
            f"p {min(ps) if ps else float('nan'):.3g}{'; ' + '; '.join(bad) if bad else ''} "
            f"[{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )
    print("EXIT", 1 if failed else 0)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
