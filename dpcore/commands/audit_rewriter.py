"""``python -m dpcore audit-rewriter``: audit a sentence- or document-level text rewriter."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpcore.commands.common import emit_json, stderr_progress, stdout_reserved
from dpcore.validation import DPCoreError

#: Exit status when no pair could be tested (verdict ``untested``), as ``audit-text``.
EXIT_UNTESTED = 3
#: Longest input text accepted (characters).
MAX_TEXT_CHARS = 5_000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit-rewriter",
        help="audit a sentence- or document-level text rewriter: a lower bound on its privacy loss",
        description=(
            "Rewrite each of two neighbouring inputs x and x′ --rewrites times; on the first half of the "
            "rewrites choose one event per direction (a set of whole outputs, a word 1–2-gram, or a "
            "threshold on a naive-Bayes score over word or character n-grams or on a MiniLM score, the "
            "scores cross-fitted), and bound its "
            "privacy loss on the second half with Clopper–Pearson bounds, Bonferroni over both directions "
            "of every pair. A pair violates its claim when that lower bound exceeds the claimed bound: ε "
            "per document, ε per token times the text's tokens, or ε·d summed over the words. NAME is "
            "dp-mlm, dp-prompt, santext-words, flawed:…, planted:…, a published package run as shipped in "
            "its own environment (dpmlm:rewrite, after `adapters install dpmlm`) "
            "(see `list`) or your own code as path/to/file.py:factory or package.module:factory, called "
            "as factory(epsilon=E) and returning an object with name, claim (a dpcore.rewriter."
            "RewriterClaim) and rewrite(texts, rng). Before any verdict its contract is checked: the rng "
            "it is handed is its only randomness, calls of other sizes draw alike, and copies within a call "
            "are independent, checked on their content (a rewriter that fails either of the last two, or "
            "sets independent_copies = False, is drawn one copy per call; the result says which). Every "
            "result says the largest bound its size could certify; a claim above it is 'out-of-reach', "
            "never 'no violation found'. Exit status 0 when the audit ran (whatever its verdict), 2 on bad "
            "input, 3 when no pair was within the claim's premise."
        ),
    )
    p.add_argument(
        "--rewriter",
        required=True,
        help="dp-mlm, dp-prompt, santext-words, flawed:…, planted:…, dpmlm:rewrite or file.py:factory",
    )
    p.add_argument(
        "--epsilon",
        required=True,
        help="ε > 0 given to the rewriter (DP-MLM, DP-Prompt: per token; santext-words: per unit distance)",
    )
    p.add_argument("--x", default=None, help="the first input (default: sentences of the Lee corpus)")
    p.add_argument("--x-prime", default=None, help="the second input (default: built, see --pair-kind)")
    p.add_argument(
        "--pair-kind",
        default="one-word",
        help="one-word (default: a sentence and the same with one word changed) or unrelated",
    )
    p.add_argument("--pairs", default=None, help="pairs to build (default 1 with --x, else 4; at most 100)")
    p.add_argument(
        "--rewrites", default="1000", help="rewrites per input, half select and half bound (default 1000)"
    )
    p.add_argument("--confidence", default="0.95", help="family-wise confidence (default 0.95)")
    p.add_argument(
        "--distinguishers",
        default=None,
        help=(
            "comma-separated: exact, words, chars, side, minilm (default: these), and lm "
            "(a SmolLM2 reconstruction score; needs torch)"
        ),
    )
    p.add_argument("--q", default=None, help="planted rewriters: the leak probability (default 0.5)")
    p.add_argument(
        "--full-vocabulary",
        action="store_true",
        help="DP-MLM, santext-words: keep the offensive words in V",
    )
    p.add_argument(
        "--max-new-tokens",
        default=None,
        help="DP-Prompt: most tokens per paraphrase, n (the claim is n·ε per document; default 32)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rewriter option (repeatable; --q, --full-vocabulary and --max-new-tokens are shorthands); "
        "`list` shows each rewriter's options, their ranges and defaults",
    )
    p.add_argument(
        "--device", default=None, help="DP-Prompt: where the model runs: cpu (default), cuda, cuda:N or auto"
    )
    p.add_argument("--seed", default="0", help="seed of the pairs and of every rewrite (default 0)")
    p.add_argument("--workers", default="1", help="local worker processes (default 1)")
    p.add_argument("--engine", default="local", choices=["local", "ray"], help="local (default) or ray")
    p.add_argument("--address", default=None, help="a Ray cluster to join (--engine ray)")
    p.add_argument(
        "--json", action="store_true", help="print the result as JSON (stdout holds only the JSON)"
    )
    p.set_defaults(func=run)


def _text(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    if not text:
        raise DPCoreError(f"{what} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise DPCoreError(f"{what} has {len(text):,} characters; at most {MAX_TEXT_CHARS:,}")
    return text


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The rewriter's options (shorthands and ``--param NAME=VALUE``), each checked against the
    rewriter's :class:`~dpcore.parameters.ParameterSpec` by the registry."""
    options: dict[str, Any] = {}
    if args.q is not None:
        options["q"] = args.q
    if args.full_vocabulary:
        options["full_vocabulary"] = True
    if args.max_new_tokens is not None:
        options["max_new_tokens"] = args.max_new_tokens
    for item in args.param or []:
        name, sep, value = str(item).partition("=")
        name = name.strip()
        if not sep or not name:
            raise DPCoreError(f"--param takes NAME=VALUE, got {item!r}")
        if name in options:
            raise DPCoreError(f"{name} is given twice")
        options[name] = value.strip()
    if args.device is not None:
        from dpcore.models.devices import check_device_name

        options["device"] = check_device_name(args.device)
    from dpcore.rewriter.registry import check_options

    return check_options(args.rewriter, options)


def _audit(args: argparse.Namespace) -> Any:
    from dpcore.parallel import resolve_workers
    from dpcore.rewriter import audit_rewriter, load_rewriter
    from dpcore.rewriter.audit import MAX_PAIRS
    from dpcore.rewriter.distinguish import parse_distinguishers
    from dpcore.rewriter.draws import RewriterSource
    from dpcore.rewriter.pairs import build_pairs
    from dpcore.validation import check_epsilon, check_finite_float, check_int, check_probability

    epsilon = check_epsilon(args.epsilon)
    seed = check_int(args.seed, name="--seed", min_value=0, max_value=2**63 - 1)
    rewrites = check_int(args.rewrites, name="--rewrites", min_value=20, max_value=1_000_000)
    confidence = check_probability(
        check_finite_float(args.confidence, name="--confidence"),
        name="--confidence",
        open_low=True,
        open_high=True,
    )
    distinguishers = parse_distinguishers(args.distinguishers)
    workers = resolve_workers(args.workers)
    if args.address is not None and args.engine != "ray":
        raise DPCoreError("--address is for --engine ray")
    x, x_prime = _text(args.x, "--x"), _text(args.x_prime, "--x-prime")
    if x_prime is not None and x is None:
        raise DPCoreError("--x-prime needs --x")
    if x_prime is not None and args.pairs is not None:
        raise DPCoreError("--pairs builds pairs; with --x and --x-prime the pair is given")
    n_pairs = 1 if x is not None else 4
    if args.pairs is not None:
        n_pairs = check_int(args.pairs, name="--pairs", min_value=1, max_value=MAX_PAIRS)
    options = _options(args)
    try:
        rewriter = load_rewriter(args.rewriter, epsilon=epsilon, allow_user_code=True, **options)
    except SystemExit as exc:  # user code that calls sys.exit while it is imported or built
        code = "" if exc.code is None else repr(exc.code)
        raise DPCoreError(f"loading {args.rewriter} called sys.exit({code})") from None
    if getattr(rewriter, "NEEDS_TORCH", False):
        from dpcore.models.causal_lm import loading_message

        print(f"audit-rewriter: {loading_message()}", file=sys.stderr)
        rewriter.lm  # noqa: B018 (load now, so that the message is true)
    elif "lm" in distinguishers:
        from dpcore.models.causal_lm import loading_message

        print(f"audit-rewriter: lm distinguisher: {loading_message()}", file=sys.stderr)
    if x_prime is not None:
        pairs = [(x, x_prime)]
    else:
        count = getattr(rewriter, "count_tokens", None) if rewriter.claim.same_length else None
        pairs = build_pairs(kind=args.pair_kind, n_pairs=n_pairs, seed=seed, x=x, count_tokens=count)
    source = RewriterSource(name=args.rewriter, epsilon=epsilon, options=options, allow_user_code=True)
    from dpcore.rewriter.lmscore import reporting

    # the lm distinguisher scores each distinct rewrite (about 5 a second on 2 cores): say so
    with reporting(
        stderr_progress("audit-rewriter: lm distinguisher scoring", enabled="lm" in distinguishers)
    ):
        return audit_rewriter(
            rewriter,
            pairs,
            rewrites=rewrites,
            confidence=confidence,
            distinguishers=distinguishers,
            seed=seed,
            workers=workers,
            engine=args.engine,
            address=args.address,
            source=source,
            progress=stderr_progress("audit-rewriter", enabled=True),
        )


def run(args: argparse.Namespace) -> int:
    """Run the audit; print text or JSON. Exit status 0, or 3 when nothing could be tested."""
    if args.json:
        with stdout_reserved():  # the real stdout is for the JSON alone
            result = _audit(args)
        emit_json(result.to_dict())
    else:
        result = _audit(args)
        print(result.text())
    if result.verdict == "untested":
        reasons = "; ".join(sorted({str(p.outside) for p in result.pairs if p.outside}))
        print(f"dpcore: nothing could be tested (exit status 3): {reasons}", file=sys.stderr)
        return EXIT_UNTESTED
    return 0
