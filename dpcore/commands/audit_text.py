"""``python -m dpcore audit-text``: audit any word-level sanitizer as a black box."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpcore.commands.common import (
    add_full_vocabulary_argument,
    emit_json,
    stderr_progress,
    stdout_reserved,
    vocabulary_line,
)
from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit-text",
        help="audit a word-level text sanitizer: empirical ε per pair of words, with bounds",
        description=(
            "Without --words, first screen the whole vocabulary (every word drawn --screen-budget / |V| "
            "times) and propose the --pairs most suspicious pairs; then, for each pair, "
            "draw many outputs of M(x) and M(x') on fresh samples, choose the output event with "
            "the largest likelihood ratio on half the samples, and bound its privacy loss on the "
            "other half (one-sided Clopper–Pearson, Bonferroni over pairs). A pair 'violates' only "
            "when that lower bound exceeds its claimed bound (ε for LDP, ε·d(x,x') for metric LDP). "
            "NAME is a dpcore text mechanism, krr, flawed:…, pypantera:KIND, or your own code as "
            "path/to/file.py:factory or package.module:factory, called as "
            "factory(epsilon=E, vocab=WORDS) and returning an object with name, epsilon, guarantee "
            "and sample(words, rng). Before any verdict the sanitizer's rng contract is checked (the same "
            "seed gives the same outputs, different seeds different ones, also in forked workers): one "
            "that reads NumPy's or Python's global random state is reseeded from the audit's rng, one "
            "that cannot be made reproducible is refused. Then how it may be called is checked: a word's "
            "draws within one call must be independent and the same in large, single-word and "
            "sentence-sized calls; one that fails is audited one output per 16-word sentence call (or "
            "refused in one line when that would take too long), never as if its draws were "
            "independent. Exit status 0 when the audit ran (whatever "
            "its verdict), 2 on bad input (including a sanitizer that breaks the rng contract); exit "
            "status 3: nothing could be tested (verdict 'untested': every word's sampling failed, too "
            "few words were sampled, or the claim covers none of the pairs found, unless the claim's "
            "premise was shown broken, which is a result). With --json, stdout "
            "holds only the JSON: anything the sanitizer "
            "prints goes to stderr. Its tpr_at_fpr says how often an observer of one sanitized word tells "
            "the worst pair apart at 1% and 5% false positives, and tradeoff holds "
            "each pair's event boxes against the claim's trade-off curve."
        ),
    )
    p.add_argument(
        "--mechanism",
        required=True,
        help="a text mechanism, krr, flawed:…, pypantera:KIND (see `list`) or file.py:factory",
    )
    p.add_argument("--epsilon", required=True, help="ε > 0 given to the sanitizer")
    p.add_argument(
        "--embedding", default="glove", help="glove (default), bert or bert-wordpiece: vocabulary, distance"
    )
    p.add_argument(
        "--vocab-size", default=None, help="the N most frequent words (glove default 15000; bert: all)"
    )
    add_full_vocabulary_argument(p)
    p.add_argument("--words", default=None, help="comma-separated words to audit (with their neighbours)")
    p.add_argument(
        "--pairs",
        default=None,
        help="number of pairs to test (default 50; 1..500); with --words, a pilot keeps the best of "
        "more candidates",
    )
    p.add_argument(
        "--strategy",
        default=None,
        help="screen (default without --words), adaptive (default with --words), neighbors or random",
    )
    p.add_argument(
        "--screen-budget",
        default=None,
        help=(
            "screen: total draws over all screened words (each word gets budget/|V|); default: fitted to "
            "--screen-minutes from the sanitizer's probed speed, at most 2e7"
        ),
    )
    p.add_argument(
        "--screen-minutes",
        default=None,
        help=(
            "without --screen-budget: the time the screen, and the confirmation when --samples is not "
            "given, should each take (default 3); the plan and its estimate are printed before it starts"
        ),
    )
    p.add_argument(
        "--screen-words",
        default=None,
        help="screen: only these comma-separated words, or @FILE with one word per line (default: all of V)",
    )
    p.add_argument(
        "--engine", default="local", choices=("local", "ray"), help="where to draw (default local)"
    )
    p.add_argument("--workers", default=None, help="processes or Ray CPUs (default: this machine's cores)")
    p.add_argument(
        "--address", default=None, help="--engine ray: a Ray cluster to join (default: a local Ray)"
    )
    p.add_argument("--neighbors", default="2", help="nearest neighbours per word (default 2)")
    p.add_argument(
        "--samples",
        default=None,
        help="draws per word, T (default 1e5; fitted to --screen-minutes without --screen-budget; 100..1e7)",
    )
    p.add_argument(
        "--pilot-samples", default=None, help="draws per word in the pilot (default max(1000, T/10))"
    )
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a mechanism parameter")
    p.add_argument("--seed", default=None, help="seed (default: fresh, recorded in the output)")
    p.add_argument("--confidence", default="0.95", help="family-wise confidence (default 0.95)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _params(items: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise DPCoreError(f"--param takes KEY=VALUE, got {item!r}")
        v = value.strip()
        try:
            out[key] = int(v) if v.lstrip("-").isdigit() else float(v)
        except ValueError:
            out[key] = v
    return out


def _screen_words(value: str | None) -> list[str] | None:
    """``a,b,c`` or ``@FILE`` (one word per line) → words; None for the whole vocabulary."""
    if value is None:
        return None
    text = str(value)
    if text.startswith("@"):
        from pathlib import Path

        path = Path(text[1:]).expanduser()
        if not path.is_file():
            raise DPCoreError(f"--screen-words: no such file {text[1:]!r}")
        if path.stat().st_size > 50_000_000:
            raise DPCoreError("--screen-words: the file is larger than 50 MB")
        words = [w.strip() for w in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    else:
        words = [w.strip() for w in text.split(",")]
    words = [w for w in words if w]
    if not words:
        raise DPCoreError("--screen-words must list at least two words")
    return words


#: Exit status when no pair could be tested (verdict ``untested``).
EXIT_UNTESTED = 3


def run(args: argparse.Namespace) -> int:
    """Run the audit; print text or JSON. Exit status 0, or 3 when nothing could be tested."""
    if args.json:
        with stdout_reserved():  # the real stdout is for the JSON alone
            result = _audit(args)
        emit_json(result.to_dict() | result.observer())
    else:
        result = _audit(args)
        _print_text(result)
    if result.verdict == "untested" and (result.premise or {}).get("status") != "broken":
        _print_untested(result)
        return EXIT_UNTESTED
    return 0  # a broken premise, shown with its evidence, is a result


def _print_untested(result: Any) -> None:
    """One line on stderr: why the exit status is 3."""
    import sys

    failures = getattr(result, "failures", None) or {}
    msg = "dpcore: nothing could be tested (exit status 3)"
    uncovered = int((getattr(result, "execution", None) or {}).get("pairs_not_covered", 0) or 0)
    premise = getattr(result, "premise", None) or {}
    if premise.get("status") == "broken":
        msg += f": the premise of its claim does not hold: it needs {premise.get('premise')}"
    if uncovered:
        msg += f"; the claim covers none of the {uncovered:,} candidate pair(s) found"
    if failures:
        word, why = next(iter(failures.items()))
        msg += f"; the sanitizer failed on {len(failures):,} word(s); first {word!r}: {why}"
    elif not uncovered:
        msg += "; no pair could be tested"
    print(msg.replace("\n", " ").replace("(exit status 3); ", "(exit status 3): "), file=sys.stderr)


def _audit(args: argparse.Namespace) -> Any:
    from dpcore.commands.sanitize import DEFAULT_VOCAB_SIZE
    from dpcore.text.embeddings import check_embedding_name
    from dpcore.validation import check_epsilon, check_int

    embedding = check_embedding_name(args.embedding)
    epsilon = check_epsilon(args.epsilon)
    size = DEFAULT_VOCAB_SIZE[embedding]
    if args.vocab_size is not None:
        size = check_int(args.vocab_size, name="--vocab-size", min_value=2, max_value=10_000_000)
    seed = None if args.seed is None else check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1)
    words = None
    if args.words is not None:
        words = [w.strip() for w in str(args.words).split(",") if w.strip()]
        if not words:
            raise DPCoreError("--words must list at least one word")
    pairs = 50 if args.pairs is None else check_int(args.pairs, name="--pairs", min_value=1, max_value=500)
    samples = None
    if args.samples is not None:
        samples = check_int(args.samples, name="--samples", min_value=100, max_value=10_000_000)
    neighbors = check_int(args.neighbors, name="--neighbors", min_value=0, max_value=20)
    pilot = None
    if args.pilot_samples is not None:
        pilot = check_int(args.pilot_samples, name="--pilot-samples", min_value=100, max_value=10_000_000)
    params = _params(args.param)
    from dpcore.parallel import resolve_workers
    from dpcore.textaudit.screen import DEFAULT_SCREEN_BUDGET
    from dpcore.textaudit.timing import DEFAULT_SCREEN_MINUTES
    from dpcore.validation import check_finite_float

    screening = words is None and args.strategy in (None, "screen")
    budget: int | None = None if screening else DEFAULT_SCREEN_BUDGET
    if args.screen_budget is not None:
        budget = check_int(args.screen_budget, name="--screen-budget", min_value=1, max_value=2_000_000_000)
    minutes = DEFAULT_SCREEN_MINUTES
    if args.screen_minutes is not None:
        if args.screen_budget is not None:
            raise DPCoreError("--screen-minutes fits the budget itself: give it or --screen-budget, not both")
        minutes = check_finite_float(
            args.screen_minutes, name="--screen-minutes", min_value=0.05, max_value=600
        )
    if samples is None and budget is not None:
        samples = 100_000
    screen_words = _screen_words(args.screen_words)
    workers = resolve_workers(args.workers)
    if args.address is not None and args.engine != "ray":
        raise DPCoreError("--address is for --engine ray")

    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import audit_text
    from dpcore.textaudit.loaders import load_sanitizer

    vocab = build_vocabulary(embedding, size=size, full=args.full_vocabulary)
    try:
        sanitizer = load_sanitizer(
            args.mechanism, epsilon=epsilon, vocab=vocab, params=params, allow_user_code=True
        )
    except SystemExit as exc:  # user code that calls sys.exit while it is imported or built
        code = "" if exc.code is None else repr(exc.code)
        raise DPCoreError(f"loading {args.mechanism} called sys.exit({code})") from None
    return audit_text(
        sanitizer,
        vocab=vocab,
        words=words,
        pairs=pairs,
        strategy=args.strategy,
        neighbors=neighbors,
        samples=samples,
        pilot_samples=pilot,
        screen_budget=budget,
        screen_words=screen_words,
        screen_minutes=minutes,
        on_plan=lambda text: print(f"audit-text: {text}", file=sys.stderr, flush=True),
        seed=seed,
        confidence=args.confidence,
        progress=stderr_progress("audit-text", enabled=True),
        engine=args.engine,
        workers=workers,
        address=args.address,
    )


def _print_text(result: Any) -> None:
    print(
        f"{result.mechanism}: ε = {epsilon_text(result.epsilon)} ({result.guarantee}), "
        f"{result.embedding} |V| = "
        f"{result.vocab_size:,}, seed {result.seed}"
    )
    if getattr(result, "vocabulary", ""):
        print(vocabulary_line(result))
    print(f"{'x':<16} {'x′':<16} {'d(x,x′)':>8} {'claimed':>8} {'ε̂':>8} {'lower':>8} {'detect':>8}  verdict")
    for r in sorted(result.pairs, key=lambda r: -r.ratio if r.error is None else 1e300):
        if r.error is not None:
            print(
                f"{r.x:<16} {r.x_prime:<16} {r.distance:>8.3g} {r.claimed_bound:>8.3g}  not tested: {r.error}"
            )
            continue
        flag = "VIOLATES" if r.violates else "-"
        det = (r.detectable_violation or {}).get("loss", float("nan"))
        print(
            f"{r.x:<16} {r.x_prime:<16} {r.distance:>8.3g} {r.claimed_bound:>8.3g} "
            f"{r.empirical_epsilon:>8.3g} {r.lower_bound:>8.3g} {det:>8.3g}  {flag}"
        )
    if result.screen is not None:
        sc = result.screen
        print(
            f"screen: {sc['words_screened']:,} words × {sc['draws_per_word']:,} draws, "
            f"{sc['candidates_scored']:,} candidate pairs scored, {sc['proposed']} confirmed, "
            f"{sc['failed_words']} word(s) failed"
        )
        worst = ", ".join(f"{w['word']} ({w['score']:+.2f})" for w in sc["top_words"][:8])
        print(f"worst words (pilot lower bound − claim): {worst}")
    for t in result.pooled:
        print(t["text"])
    contract = getattr(result, "rng_contract", None)
    if callable(getattr(contract, "to_dict", None)):
        contract = contract.to_dict()
    if isinstance(contract, dict) and contract.get("text"):
        print(f"rng contract: {contract.get('status')} — {contract['text']}")
    shape = getattr(result, "calls", None) or {}
    if shape.get("text"):
        print(f"calls: {shape.get('status')} ({shape.get('audited_as')}) — {shape['text']}")
    if result.declaration is not None:
        print(f"declaration: {result.declaration['status']} — {result.declaration['text']}")
    if result.failures:
        word, why = next(iter(result.failures.items()))
        print(f"failed words: {len(result.failures):,} (first {word!r}: {why})")
    from dpcore.verdicts.document import outcome

    print(f"verdict: {outcome(result.verdict, result.premise)} — {result.verdict_text}")
    if result.exact_verdict is not None:
        print(f"exact distribution: {result.exact_verdict} (max exact loss per pair shown in --json)")
    from dpcore.textaudit.observer import text_line

    line = text_line(result.tradeoff_pairs)
    if line is not None:
        print(line)
