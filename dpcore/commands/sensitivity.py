"""``python -m dpcore sensitivity``: the L1 sensitivity of L2 and L1 clipping (Habernal 2021)."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json
from dpcore.formatting import epsilon_text
from dpcore.sensitivity import MAX_DIM, sensitivity_report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sensitivity",
        help="exact L1 sensitivity of L2 clipping (2C√n) vs ADePT's claimed 2C",
        description=(
            "Habernal (2021), Theorem 5.1: clipping to L2 norm C in n dimensions has L1 "
            "sensitivity 2C√n, attained by x = (C/√n)·1 and x' = -x; L1 clipping has 2C. "
            "With --epsilon, also ADePT's true ε = ε√n."
        ),
    )
    p.add_argument("--clip", required=True, help="clipping constant C (> 0)")
    p.add_argument("--dim", required=True, help=f"dimension n (1..{MAX_DIM})")
    p.add_argument("--epsilon", default=None, help="claimed ε of ADePT (optional)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rep = sensitivity_report(args.clip, args.dim, args.epsilon)
    if args.json:
        emit_json(rep.to_dict())
        return 0
    print(f"C = {rep.clip:g}, n = {rep.dim}")
    print(f"  L1 sensitivity of L2 clipping: 2C√n = {rep.l1_sensitivity_l2_clip:.6g}")
    print(f"  L1 sensitivity of L1 clipping: 2C   = {rep.l1_sensitivity_l1_clip:.6g}")
    print(
        f"  ADePT's claimed sensitivity:   2C   = {rep.claimed_sensitivity:.6g} (×{rep.ratio:.4g} too small)"
    )
    if rep.dim <= 8:
        xs = ", ".join(f"{v:.4g}" for v in rep.extreme_x)
        print(f"  extreme pair: x = ({xs}), x' = -x, ‖x - x'‖₁ = {rep.extreme_l1_distance:.6g}")
    else:
        print(f"  extreme pair: x = (C/√n)·1 = {rep.extreme_x[0]:.4g}·1, x' = -x")
    if rep.true_epsilon is not None:
        print(
            f"  claimed ε = {epsilon_text(rep.epsilon)} → true ε = ε√n = "
            f"{epsilon_text(rep.true_epsilon, digits=6)}"
        )
    return 0
