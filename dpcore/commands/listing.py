"""``python -m dpcore list``: print the mechanism registry."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list the registered mechanisms")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def rows() -> list[dict[str, object]]:
    """One dict per registered mechanism (every registry dpcore has)."""
    from dpcore import flawed as _flawed  # noqa: F401  (registers the flawed reproductions)
    from dpcore.mechanisms import VECTOR_MECHANISMS

    out: list[dict[str, object]] = []
    for e in VECTOR_MECHANISMS:
        out.append(
            {
                "name": e.name,
                "family": "vector",
                "flawed": e.flawed,
                "summary": e.summary,
                "citation": e.citation,
            }
        )
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.mechanisms import mechanism_parameters
    from dpcore.text.parameters import mechanism_parameter_specs

    for e in TEXT_MECHANISMS:
        params = mechanism_parameters(e.name)
        specs = mechanism_parameter_specs(e.name)
        out.append(
            {
                "name": e.name,
                "family": "text",
                "flawed": e.flawed,
                "summary": e.summary
                + (f" Parameters: {', '.join(f'{k}={v:g}' for k, v in params.items())}." if params else ""),
                "citation": e.citation,
                "parameters": params,
                "parameter_specs": [
                    {
                        "name": sp.name,
                        "default": sp.default,
                        "kind": sp.kind,
                        "low": sp.low,
                        "high": sp.high,
                        "open_low": sp.open_low,
                        "open_high": sp.open_high,
                        "help": sp.help,
                    }
                    for sp in specs
                ],
            }
        )
    from dpcore.textaudit.loaders import available_sanitizers

    for c in available_sanitizers():
        if c.kind == "dpcore" or c.name.startswith("mldp:"):
            continue  # listed above, or below
        out.append(
            {
                "name": c.name,
                "family": "text-audit",
                "flawed": c.flawed,
                "summary": c.summary,
                "citation": "",
                "available": True,
            }
        )
    from dpcore.textaudit.mldp import mldp_choice_rows

    for row in mldp_choice_rows():  # listed even when not installed, with available: false
        out.append({"family": "text-audit", "flawed": False, "citation": "", **row})
    from dpcore.rewriter.registry import available_rewriters

    for c in available_rewriters():  # audit-rewriter --rewriter NAME
        out.append(
            {
                "name": c.name,
                "family": "rewriter",
                "flawed": c.flawed,
                "summary": c.summary,
                "citation": "",
                "available": True,
            }
        )
    return out


def run(args: argparse.Namespace) -> int:
    data = rows()
    if args.json:
        emit_json(data)
        return 0
    width = max(len(str(r["name"])) for r in data)
    for r in data:
        flag = "FLAWED " if r["flawed"] else ("  N/A  " if r.get("available") is False else "       ")
        print(f"{r['name']!s:<{width}}  {r['family']!s:<7} {flag}{r['summary']}")
    return 0
