"""``python -m dpcore adept-sim``: Habernal (2021) §6, Fig. 1 — pairs that break ADePT's bound."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json, stderr_progress
from dpcore.sensitivity import DISTRIBUTIONS, MAX_DIM, MAX_PAIRS, adept_violation_fractions, parse_dims
from dpcore.validation import DPCoreError, check_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "adept-sim",
        help="fraction of clipped pairs whose L1 distance exceeds ADePT's claimed 2C",
        description=(
            "Habernal (2021) §6, Fig. 1: draw pairs of unclipped vectors (uniform on "
            "(-spread·C, spread·C)^n or N(0, σ²)), clip each to L2 norm C, and count the pairs "
            "with L1 distance > 2C, for each n."
        ),
    )
    p.add_argument("--dist", default="uniform", choices=DISTRIBUTIONS, help="default: uniform")
    p.add_argument("--clip", default="10", help="clipping constant C (> 0, default 10)")
    p.add_argument(
        "--dims", required=True, help=f"dimensions: 1,2,8 or a range 1-255 or a mix (1..{MAX_DIM})"
    )
    p.add_argument("--pairs", default="10000", help=f"pairs per dimension (1..{MAX_PAIRS:.0e})")
    p.add_argument("--seed", default=None, help="seed (default: fresh, recorded in output)")
    p.add_argument("--spread", default="1", help="uniform: half-width in units of C (default 1)")
    p.add_argument("--std", default=None, help="normal: standard deviation σ (default 0.1·C)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    dims = parse_dims(args.dims)
    seed = None if args.seed is None else check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1)
    if args.dist == "uniform" and args.std is not None:
        raise DPCoreError("--std applies only to --dist normal")
    if args.dist == "normal" and args.spread != "1":
        raise DPCoreError("--spread applies only to --dist uniform")
    res = adept_violation_fractions(
        dims,
        clip=args.clip,
        dist=args.dist,
        pairs=args.pairs,
        seed=seed,
        spread=args.spread,
        std=args.std,
        progress=stderr_progress("adept-sim", enabled=True),
    )
    if args.json:
        emit_json(res.to_dict())
        return 0
    params = ", ".join(f"{k}={v}" for k, v in res.parameters().items() if k != "citation")
    print(f"# {params}")
    print("n\tviolations\tfraction\ttheoretical_max_l1=2C√n")
    for row in res.rows():
        print(f"{row['dim']}\t{row['violations']}\t{row['fraction']:.4f}\t{row['theoretical_max_l1_distance']:.6g}")
    return 0
