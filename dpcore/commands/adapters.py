"""``python -m dpcore adapters``: libraries installed in their own environments (mldp-text, dpmlm,
dp-diffractor, preempt, dp-fusion-lib)."""

from __future__ import annotations

import argparse
import sys

from dpcore.commands.common import emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "adapters",
        help=(
            "install and list libraries that run in their own environment (mldp, dpmlm, diffractor, "
            "preempt, dpfusion)"
        ),
        description=(
            "Some libraries pin dependencies dpcore cannot share (mldp-text needs numpy<2), or are audited "
            "as their authors ship them (dpmlm 1.3.0, dp-diffractor 0.2.1, preempt 0.1.27, dp-fusion-lib "
            "0.1.0: built on this "
            "Python's torch, transformers and nltk, with offline substitutes for what they download). "
            "`adapters install NAME` builds a virtualenv for NAME with the library's own pins under "
            "dpcore's cache folder ($DPCORE_CACHE_DIR, else $XDG_CACHE_HOME/dpcore, else ~/.cache/dpcore); "
            "dpcore's environment is not touched. audit-text then runs NAME:Mechanism there (mldp:CMP, "
            "diffractor:geometric), audit-rewriter its rewriters (dpmlm:rewrite, preempt:money, "
            "preempt:age, dp-fusion:generate). "
            "`adapters list` shows what is installed."
        ),
    )
    subs = p.add_subparsers(dest="adapters_command", metavar="{install,list}", required=True)
    i = subs.add_parser(
        "install",
        help="build a library's own virtualenv (needs a package index); without NAME, list the choices",
    )
    i.add_argument(
        "name",
        nargs="?",
        default=None,
        help="the environment to build (mldp, dpmlm, diffractor, preempt, dpfusion)",
    )
    i.add_argument(
        "--python", default=None, help="interpreter to build the virtualenv from (default: this one)"
    )
    i.add_argument("--index-url", default=None, help="package index (default: pip's own configuration)")
    i.add_argument("--force", action="store_true", help="rebuild an installed environment")
    i.add_argument("--json", action="store_true", help="print JSON")
    i.set_defaults(func=run_install)
    ls = subs.add_parser("list", help="the managed environments and whether each is installed")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=run_list)


def _print_rows(rows: list[dict[str, object]]) -> None:
    from dpcore.cache_folder import cache_dir

    print(f"dpcore cache folder: {cache_dir()}")
    for r in rows:
        if r["installed"]:
            mech = ", ".join(map(str, r.get("mechanisms") or []))
            print(
                f"{r['name']}: installed at {r['path']} — {r.get('library')} {r.get('version')} on Python "
                f"{r.get('python_version')}, built in {r.get('install_seconds')} s on "
                f"{r.get('installed_at')}; mechanisms: {mech}"
            )
        else:
            print(f"{r['name']}: not installed — {r['summary']}; install with: {r['install']}")


def run_list(args: argparse.Namespace) -> int:
    from dpcore.textaudit.envs import list_envs

    rows = list_envs()
    if args.json:
        emit_json(rows)
    else:
        _print_rows(rows)
    return 0


def run_install(args: argparse.Namespace) -> int:
    from dpcore.textaudit.envs import install_env, list_envs

    if args.name is None:  # nothing named: what could be installed
        rows = list_envs()
        if args.json:
            emit_json(rows)
        else:
            _print_rows(rows)
            print("name one: python -m dpcore adapters install NAME")
        return 0

    def say(line: str) -> None:
        print(f"adapters install {args.name}: {line}", file=sys.stderr, flush=True)

    rec = install_env(args.name, python=args.python, index_url=args.index_url, force=args.force, say=say)
    if args.json:
        emit_json(rec)
        return 0
    if rec.get("already"):
        print(
            f"{args.name} is already installed at {rec['path']} ({rec.get('library')} {rec.get('version')}); "
            "--force rebuilds it"
        )
        return 0
    mech = ", ".join(f"{args.name}:{m}" for m in _dpcore_names(args.name))
    print(
        f"installed {rec['requirement']} ({rec.get('library')} {rec.get('version')}, Python "
        f"{rec.get('python_version')}) at {rec['path']} in {rec['install_seconds']:.1f} s"
    )
    if mech:
        print(f"audit its mechanisms with audit-text --mechanism NAME: {mech}")
    elif rewriters := _rewriter_names(args.name):
        print(f"audit it with audit-rewriter --rewriter NAME: {', '.join(rewriters)}")
    return 0


def _rewriter_names(name: str) -> list[str]:
    """The registered rewriters that run in environment ``name`` (``name:…``)."""
    from dpcore.rewriter.registry import rewriters

    return [n for n in rewriters().names() if n.startswith(f"{name}:")]


def _dpcore_names(name: str) -> list[str]:
    if name == "mldp":
        from dpcore.textaudit.mldp import MLDP_MECHANISMS

        return list(MLDP_MECHANISMS)
    if name == "diffractor":
        from dpcore.textaudit.diffractor import DIFFRACTOR_MECHANISMS

        return list(DIFFRACTOR_MECHANISMS)
    return []
