"""``python -m dpcore calibrate-rewriters``: rewriters side by side at the same nominal ε."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpcore.commands.common import emit_json, stdout_reserved
from dpcore.validation import DPCoreError

#: dpcore.rewriter.calibrate's defaults, written out so that ``--help`` imports nothing heavy
#: (tests/test_rewriter_calibrate.py checks they agree).
DEFAULT_REWRITERS = "santext-words,dp-mlm,dp-prompt"
DEFAULT_EPSILONS = "1,10,30,100"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate-rewriters",
        help="same nominal ε, different distinguishability: rewriters side by side",
        description=(
            "For each rewriter at each nominal ε (each rewriter's own ε), audit it on one pair of "
            "neighbouring sentences (audit-rewriter) and report the claim for the pair, the certified "
            "lower bound on its privacy loss (with the exact loss where dpcore knows it), the best "
            "distinguisher's TPR at 1% FPR (a lower bound and the point estimate), the meaning retained "
            "(the mean MiniLM cosine similarity of a rewrite to its input, between two unrelated sentences "
            "and x′ against x), and sample "
            "rewrites of public sentences. The default (santext-words, dp-mlm, dp-prompt at ε = 1, 10, 30, "
            "100; 400 rewrites per input) takes 11 to 50 minutes on 2 CPU cores, most of it DP-Prompt; "
            "--save dpcore/data/rewriter_calibration.json regenerates the dashboard's view."
        ),
    )
    p.add_argument("--rewriters", default=DEFAULT_REWRITERS, help="comma-separated registered names")
    p.add_argument("--epsilons", default=DEFAULT_EPSILONS, help="comma-separated nominal ε")
    p.add_argument("--x", default=None, help="the first sentence of the pair (default: a diagnosis)")
    p.add_argument("--x-prime", default=None, help="the second sentence (needs --x)")
    p.add_argument("--rewrites", default="400", help="rewrites per input and audit (default 400)")
    p.add_argument("--confidence", default="0.95", help="confidence of each audit (default 0.95)")
    p.add_argument("--seed", default="0", help="seed of every audit (default 0)")
    p.add_argument(
        "--max-new-tokens", default="32", help="DP-Prompt: most tokens per paraphrase (default 32)"
    )
    p.add_argument("--device", default="cpu", help="DP-Prompt: cpu (default), cuda, cuda:N or auto")
    p.add_argument(
        "--lm",
        action="store_true",
        help=(
            "also read each audit's rewrites with the LM distinguisher (SmolLM2's reconstruction score; "
            "needs torch; a few minutes per 1,000 distinct rewrites on 2 cores)"
        ),
    )
    p.add_argument("--save", default=None, help="also write the JSON result to this file")
    p.add_argument(
        "--json", action="store_true", help="print the result as JSON (stdout holds only the JSON)"
    )
    p.set_defaults(func=run)


def _calibrate(args: argparse.Namespace) -> Any:
    from dpcore.commands.audit_rewriter import _text
    from dpcore.commands.common import stderr_progress
    from dpcore.models.devices import check_device_name
    from dpcore.rewriter.calibrate import PAIR, calibrate_rewriters
    from dpcore.rewriter.dpprompt import MAX_NEW_TOKENS
    from dpcore.validation import check_finite_float, check_int, check_probability

    names = [n.strip() for n in str(args.rewriters).split(",") if n.strip()]
    try:
        eps = [check_finite_float(e, name="--epsilons") for e in str(args.epsilons).split(",") if e.strip()]
    except (TypeError, ValueError) as exc:
        raise DPCoreError(f"--epsilons must be comma-separated numbers: {exc}") from None
    x, xp = _text(args.x, "--x"), _text(args.x_prime, "--x-prime")
    if (x is None) != (xp is None):
        raise DPCoreError("give both --x and --x-prime, or neither")
    save = None if args.save is None else Path(args.save)
    if save is not None and save.exists() and save.is_dir():
        raise DPCoreError(f"--save {save} is a folder; give a file name")
    from dpcore.rewriter.registry import available_rewriters

    if args.lm or any(c.needs_torch for c in available_rewriters() if c.name in names):
        from dpcore.models.causal_lm import loading_message

        try:
            print(f"calibrate-rewriters: {loading_message()}", file=sys.stderr)
        except DPCoreError:
            pass  # not installed: the calibration itself says what to install
    bar = stderr_progress("calibrate-rewriters", enabled=True)
    label = {"last": ""}

    def progress(cell: str, done: int, total: int) -> None:
        if cell != label["last"]:
            print(f"calibrate-rewriters: {cell}", file=sys.stderr)
            label["last"] = cell
        if bar is not None:
            bar(done, total)

    command = (
        ["python", "-m", "dpcore", "calibrate-rewriters", *sys.argv[2:]]
        if sys.argv[1:2] == ["calibrate-rewriters"]
        else []
    )
    return calibrate_rewriters(
        rewriters=names,
        epsilons=eps,
        pair=PAIR if x is None else (x, xp),
        rewrites=check_int(args.rewrites, name="--rewrites", min_value=20, max_value=100_000),
        confidence=check_probability(
            check_finite_float(args.confidence, name="--confidence"), name="--confidence",
            open_low=True, open_high=True,
        ),
        seed=check_int(args.seed, name="--seed", min_value=0, max_value=2**63 - 1),
        max_new_tokens=check_int(
            args.max_new_tokens, name="--max-new-tokens", min_value=1, max_value=MAX_NEW_TOKENS
        ),
        device=check_device_name(args.device),
        progress=progress,
        command=command,
        lm=bool(args.lm),
    ), save  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the calibration; print the table or JSON; optionally save the JSON."""
    from dpcore.jsonutil import dumps

    if args.json:
        with stdout_reserved():
            result, save = _calibrate(args)
        emit_json(result.to_dict())
    else:
        result, save = _calibrate(args)
        print(result.text())
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"calibrate-rewriters: wrote {save}", file=sys.stderr)
    return 0
