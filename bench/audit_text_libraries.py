"""Audit third-party word-level sanitizers as shipped, next to dpcore's, and print a Markdown table.

    python bench/audit_text_libraries.py            # the named-words table (about 10 minutes)
    python bench/audit_text_libraries.py --quick    # fewer samples, a smoke run
    python bench/audit_text_libraries.py --custext-failures   # words on which pyPANTERA's CusText raises
    python bench/audit_text_libraries.py --screen --minutes 10  # the verdict table's third-party rows

The named-words table: every sanitizer gets the same audit: GloVe 6B 50d cut to the 2,000 most
frequent words, ε = 1, the same words (every pair among them and each with its nearest
neighbour), the same samples per word, seed 0, 95% family-wise confidence. pyPANTERA 1.0.2 is
imported and run as installed (``pip install pypantera==1.0.2``); nothing of it is copied into
dpcore. The table says what the test showed and no more: "no violation detected" is not
"private". A second table repeats dpcore's own (vectorised) sanitizers at ten times the samples,
where that is cheap.

``--screen`` runs ``python -m dpcore verdicts --only control,pyPANTERA,mldp-text`` (docs/verdicts.md):
the verdict table's control and third-party rows, each fitted to ``--minutes`` (a control at its
fixed setting). ``python -m dpcore verdicts --output FILE`` writes the table, ``--markdown``
prints it as Markdown and ``--check`` reruns it.
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

WORDS = ["of", "it", "was", "this", "world", "money"]
OURS = ["santext", "feyisetan", "krr", "flawed:krr-overclaimed"]
#: ``--screen``'s rows by default: the verdict table's groups other than dpcore's own mechanisms.
SCREEN_GROUPS = ["control", "pyPANTERA", "mldp-text"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 samples per word")
    ap.add_argument("--samples", type=int, default=4_000, help="samples per word (default 4000)")
    ap.add_argument(
        "--custext-failures",
        action="store_true",
        help="only count the 300 most frequent words on which pyPANTERA's CusText sample() raises",
    )
    ap.add_argument(
        "--screen",
        action="store_true",
        help="the verdict table's control and third-party rows (dpcore.verdicts)",
    )
    ap.add_argument(
        "--minutes", type=float, default=10.0, help="--screen: minutes per fitted row (default 10)"
    )
    ap.add_argument(
        "--only",
        default=None,
        help="--screen: comma-separated row names or groups (default: control,pyPANTERA,mldp-text)",
    )
    ap.add_argument("--workers", type=int, default=2, help="--screen: processes per row (default 2)")
    args = ap.parse_args()
    if args.screen:
        only = SCREEN_GROUPS if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
        _screen(args.minutes, only, args.workers)
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


def _screen(minutes: float, only: list[str], workers: int) -> None:
    """``--screen``: ``python -m dpcore verdicts`` on the rows ``only`` (names or groups), its text
    table on stdout and its progress on stderr."""
    from dpcore.cli import main as dpcore_main

    argv = ["verdicts", "--only", ",".join(only), "--minutes", f"{minutes:g}", "--workers", str(workers)]
    raise SystemExit(dpcore_main(argv))


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
            f"| `{name}` | {claim} | {r.pairs_tested} of {len(r.pairs)} | {_outcome(r)} | "
            f"{r.max_lower_bound_ratio:.3g} | {failed} | {time.perf_counter() - t0:.0f} |",
            flush=True,
        )


def _words(verdict: str) -> str:
    """A verdict in the table's words (dpcore.pairtest.verdicts), a violation in bold."""
    from dpcore.pairtest.verdicts import VIOLATES, label

    return f"**{label(verdict)}**" if verdict == VIOLATES else label(verdict)


def _outcome(r) -> str:  # type: ignore[no-untyped-def]
    """The verdict, led by a broken premise (the claim then covers only some pairs)."""
    if (r.premise or {}).get("status") == "broken":
        return f"**premise broken** (covered pairs: {_words(r.verdict)})"
    return _words(r.verdict)


if __name__ == "__main__":
    main()
