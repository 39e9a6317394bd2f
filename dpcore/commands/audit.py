"""``python -m dpcore audit``: Habernal's reconstruction sanity check on the command line."""

from __future__ import annotations

import argparse
import sys

from dpcore.commands.common import emit_json, stderr_progress
from dpcore.formatting import epsilon_text
from dpcore.limits import AUDIT_MAX_TRIALS as MAX_TRIALS
from dpcore.limits import AUDIT_METHODS as METHODS
from dpcore.limits import MAX_DIM
from dpcore.validation import DPCoreError, parse_int_list


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="empirical privacy loss of a mechanism (Habernal 2022 sanity check)",
        description=(
            "Audit a registered mechanism on the neighbours 0^n and 1^n: threshold at 0.5, "
            "majority vote, loss = max_y |ln P(D|y) - ln P(D'|y)|; plus the optimal "
            "likelihood-ratio attack. 'exact' is closed-form from the mechanism's declared "
            "probabilities; 'mc' runs the mechanism's real sampler and gives Clopper-Pearson "
            "bounds (--model-based: draw from the declared probabilities instead, after a "
            "cross-check)."
        ),
    )
    p.add_argument("--mechanism", required=True, help="registered name (see `list`)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--dim", help=f"dimension n (1..{MAX_DIM})")
    g.add_argument("--dims", help="comma-separated dimensions, e.g. 1,2,8,32 (prints a list)")
    p.add_argument("--epsilon", required=True, help="claimed ε (> 0)")
    p.add_argument("--method", default="exact", choices=METHODS, help="default: exact")
    p.add_argument("--trials", default="1000000", help=f"mc trials per neighbour (10..{MAX_TRIALS:.0e})")
    p.add_argument("--seed", default=None, help="mc seed (default: fresh, recorded in output)")
    p.add_argument("--confidence", default="0.95", help="confidence of the bounds (default 0.95)")
    p.add_argument("--delta", default=None, help="δ of the gaussian mechanism (default 1e-5)")
    s = p.add_mutually_exclusive_group()
    s.add_argument(
        "--model-based",
        action="store_true",
        help=(
            "mc: draw the count of ones from the mechanism's DECLARED per-coordinate "
            "probabilities (Binomial shortcut; fast at any n) instead of running its sampler. "
            "Checked first against 1e6 real single-coordinate draws per input; refused if they "
            "disagree. Agrees with 'exact' by construction, so it cannot catch a sampler bug"
        ),
    )
    s.add_argument(
        "--blackbox",
        action="store_true",
        help="mc: run the real sampler (the default; kept for compatibility)",
    )
    p.add_argument(
        "--workers",
        default=None,
        help=(
            "mc: threads running the 4 independent random streams (1..64; default: this machine's "
            "cores). The result for a seed does not depend on it"
        ),
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dpcore.audit import audit_grid
    from dpcore.audit.tradeoffs import observer_line
    from dpcore.parallel import resolve_workers

    workers = resolve_workers(args.workers)
    if (args.model_based or args.blackbox) and args.method != "mc":
        raise DPCoreError("--model-based and --blackbox apply only to --method mc")
    if args.dims is not None:
        dims = parse_int_list(args.dims, name="dims", min_value=1, max_value=MAX_DIM)
    else:
        dims = parse_int_list(args.dim, name="dim", min_value=1, max_value=MAX_DIM, max_items=1)
    options = {}
    if args.delta is not None:
        if args.mechanism != "gaussian":
            raise DPCoreError("--delta applies only to the gaussian mechanism")
        options = {args.mechanism: {"delta": args.delta}}
    seed = None if args.seed is None else args.seed
    if seed is not None:
        from dpcore.validation import check_int

        seed = check_int(seed, name="seed", min_value=0, max_value=2**63 - 1)
    progress = stderr_progress("audit", enabled=args.method == "mc" and sys.stderr.isatty())
    results = audit_grid(
        [args.mechanism],
        dims=dims,
        epsilons=[args.epsilon],
        method=args.method,
        trials=args.trials,
        seed=seed,
        confidence=args.confidence,
        blackbox=args.blackbox or None,
        model_based=args.model_based,
        options=options,
        progress=progress,
        workers=workers,
    )
    if args.json:
        dicts = [r.to_dict() for r in results]
        emit_json(dicts if args.dims is not None else dicts[0])
        return 0
    for r in results:
        lb = "" if r.lower_bound is None else f"  lower={r.lower_bound:.4g}"
        print(
            f"{r.mechanism} n={r.dim} ε={epsilon_text(r.epsilon)} {r.method}"
            f"{'' if r.sampler is None else ' (' + r.sampler + ' sampler)'}: "
            f"empirical={r.empirical_epsilon:.4g}{lb}  lr={r.lr_epsilon:.4g}  "
            f"claimed={r.claimed_epsilon:g}  → {r.verdict_text}"
        )
        obs = r.observer()
        if obs is not None:
            print("  " + observer_line(obs["tpr_at_fpr"][0], confidence=r.confidence))
    return 0
