"""``python -m dpcore metrics``: privacy metrics N_x, S_x, S_y* of a text mechanism (Yue et al. §5.5)."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json, vocabulary_line
from dpcore.commands.sanitize import add_mechanism_arguments, build_mechanism
from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "metrics",
        help="privacy metrics N_x, S_x, S_y* of a text mechanism for given words",
        description=(
            "Exact N_x = Pr[M(x)=x], effective support S_x (smallest set reaching --threshold), "
            "Monte-Carlo distinct counts over --trials runs (S_x and S_y*, as in Yue et al. 2021, "
            "§5.5) with their exact expectations, and an exact check of the privacy bound."
        ),
    )
    add_mechanism_arguments(p)
    p.add_argument("--words", required=True, help="comma-separated words, e.g. privacy,cancer,the")
    p.add_argument("--threshold", default="0.95", help="probability mass of the effective support")
    p.add_argument("--trials", default="1000", help="Monte-Carlo runs per input (default 1000)")
    p.add_argument("--population", default=None, help="S_y*: number of sampled inputs (default: all of V)")
    p.add_argument("--seed", default="0", help="seed of the Monte-Carlo counts (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dpcore.text.metrics import bound_check, token_metrics
    from dpcore.validation import check_int

    words = [w.strip().lower() for w in str(args.words).split(",") if w.strip()]
    if not words:
        raise DPCoreError("--words must list at least one word")
    seed = check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1)
    population = None
    if args.population is not None:
        population = check_int(args.population, name="--population", min_value=1, max_value=10_000_000)
    mech = build_mechanism(args)()
    rows = token_metrics(
        mech, words, threshold=args.threshold, trials=args.trials, seed=seed, population=population
    )
    check = bound_check(mech, seed=seed).to_dict() if mech.has_exact_distribution else None
    out = {"parameters": {**mech.params(), "seed": seed}, "metrics": rows, "bound_check": check}
    if args.json:
        emit_json(out)
        return 0
    print(f"{mech.name} ε={epsilon_text(mech.epsilon)} |V|={len(mech.vocab):,} ({mech.privacy.describe()})")
    print(vocabulary_line(mech.vocab))
    print(f"{'word':<16} {'N_x':>9} {'S_x':>7} {'S_x_mc':>7} {'S_y*_mc':>8}  method")
    for r in rows:
        sy = "" if r["S_y_star_mc"] is None else r["S_y_star_mc"]
        print(f"{r['word']:<16} {r['N_x']:>9.4g} {r['S_x']:>7} {r['S_x_mc']:>7} {sy!s:>8}  {r['method']}")
    if check is not None:
        verdict = "no violation on these triples" if check["passed"] else "VIOLATED on at least one triple"
        print(
            f"exact bound check on {check['triples']:,} sampled triples (x, x', y): {verdict} "
            f"(max excess {check['max_excess']:.3g}); triples not sampled are not checked"
        )
    return 0
