"""``python -m dpcore accounting dpnr|binary``: claimed and exact budgets (Lai et al. 2022, appendix)."""

from __future__ import annotations

import argparse

from dpcore.accounting import BINARY_NOTE, binary_encoding_costs, dpnr_report
from dpcore.commands.common import emit_json
from dpcore.formatting import epsilon_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "accounting",
        help="DPNR's claimed vs true ε; binary-encoding RR's claim, exact LDP loss and place-value figure",
        description=(
            "Corrected privacy accounting of Lyu et al. (2020a, b), as revisited by Lai et al. (2022)."
        ),
    )
    acc = p.add_subparsers(dest="scheme", metavar="SCHEME", parser_class=type(p))
    acc.required = True

    d = acc.add_parser(
        "dpnr",
        help="DPNR: true kε and ε' = ln((1-μ)e^{kε} + μ) with dropout μ",
        description="Lai et al. (2022), appendix: corrected Theorems 1 and 2 (eq. 11).",
    )
    d.add_argument("--k", required=True, help="embedding dimension k")
    d.add_argument("--epsilon", required=True, help="claimed per-coordinate ε (> 0)")
    d.add_argument("--dropout", default="0", help="word dropout rate μ in [0, 1] (default 0)")
    d.add_argument("--json", action="store_true", help="print JSON")
    d.set_defaults(func=run_dpnr)

    b = acc.add_parser(
        "binary",
        help="binary encoding + randomized response: claim, exact LDP loss, place-value figure",
        description=(
            "Lai et al. (2022), eqs. 13-19: integer bit i costs 2^(i-1)·ε_i, the sign bit 2^(m+1)·ε_i, "
            "fraction bit i 2^(-i)·ε_i; the claim is Σ ε_i."
        ),
    )
    b.add_argument("--sign-bits", default="1", help="0 or 1 (default 1)")
    b.add_argument("--int-bits", required=True, help="integer bits m (0..64)")
    b.add_argument("--frac-bits", required=True, help="fraction bits (0..64)")
    b.add_argument("--bit-epsilon", required=True, help="ε_i of every bit (> 0)")
    b.add_argument("--features", default="1", help="number of encoded features r (default 1)")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.set_defaults(func=run_binary)


def run_dpnr(args: argparse.Namespace) -> int:
    rep = dpnr_report(args.k, args.epsilon, args.dropout)
    if args.json:
        emit_json(rep.to_dict())
        return 0
    print(f"DPNR, k = {rep.k}, ε = {epsilon_text(rep.epsilon)}, dropout μ = {rep.dropout:g}")
    print(f"  claimed ε:                      {rep.claimed_epsilon:.6g}")
    print(f"  true ε = kε (corr. Thm 1):      {epsilon_text(rep.true_epsilon, digits=6)}")
    print(f"  with dropout ε' (corr. Thm 2):  {rep.true_epsilon_dropout:.6g}")
    return 0


def run_binary(args: argparse.Namespace) -> int:
    rep = binary_encoding_costs(
        sign_bits=args.sign_bits,
        int_bits=args.int_bits,
        frac_bits=args.frac_bits,
        bit_epsilon=args.bit_epsilon,
        features=args.features,
    )
    if args.json:
        emit_json(rep.to_dict())
        return 0
    print(f"bits per feature: {rep.sign_bits} sign, {rep.int_bits} integer, {rep.frac_bits} fraction")
    print("kind\tindex\tclaimed ε_i\tdistance\tplace-value ε_i\t(equation)")
    for r in rep.rows():
        print(
            f"{r['kind']}\t{r['index']}\t{r['claimed_epsilon']:.6g}\t{r['distance_bound']:.6g}\t"
            f"{r['place_value_epsilon']:.6g}\t({r['equation']})"
        )
    print(
        f"per feature: claimed {rep.claimed_per_feature:.6g}; exact worst-case LDP loss "
        f"{rep.exact_ldp_per_feature:.6g}; place-value figure of Lai et al. 2022 (eqs. 16-19) "
        f"{rep.place_value_per_feature:.6g}"
    )
    if rep.features > 1:
        print(
            f"{rep.features} features: claimed {rep.claimed_total:.6g}, exact LDP {rep.exact_ldp_total:.6g}, "
            f"place-value figure {rep.place_value_total:.6g}"
        )
    print(BINARY_NOTE)
    return 0
