"""``python -m dpcore list``: print the mechanism registry."""

from __future__ import annotations

import argparse
from typing import Any

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
                "parameter_specs": _spec_rows(specs),
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

    for c in available_rewriters():  # audit-rewriter --rewriter NAME [--param NAME=VALUE]
        defaults = {sp.name: sp.default for sp in c.parameters}
        shown = ", ".join(f"{sp.name}={_default(sp)}" for sp in c.parameters)
        out.append(
            {
                "name": c.name,
                "family": "rewriter",
                "flawed": c.flawed,
                "summary": c.summary + (f". Options: {shown}." if shown else ""),
                "citation": c.citation,
                "available": True,
                "parameters": defaults,
                "parameter_specs": _spec_rows(c.parameters),
            }
        )
    return out


def _default(sp: Any) -> str:
    """A parameter's default as ``list`` prints it: ``0.5``, ``32``, ``off``."""
    if sp.kind == "bool":
        return "on" if sp.default else "off"
    return f"{sp.default:g}"


def _spec_rows(specs: Any) -> list[dict[str, Any]]:
    """The schema of a mechanism's parameters or a rewriter's options, for ``list --json``."""
    return [
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
    ]


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
