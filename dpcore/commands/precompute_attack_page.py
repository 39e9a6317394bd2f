"""``python -m dpcore precompute-attack-page``: the Attack page's default view, computed once.

Writes ``dpcore/data/attack_page_default.json`` (:mod:`dpcore.attack.page_view`): the results of
every unit of the page's default view, with the view, its seed, the dpcore version and the
SHA-256 of the shipped attacker's ONNX graph. ``--check`` recomputes and compares instead.
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path
from typing import Any

from dpcore.commands.common import emit_json, stderr_progress
from dpcore.validation import DPCoreError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "precompute-attack-page",
        help="compute the Attack page's default view and ship it (or --check the shipped one)",
        description=(
            "Run every unit of the Attack & utility page's default view (Bayesian and masked-LM "
            "attacks, utility, baselines) and write them, with the view, seed, dpcore version and "
            "the SHA-256 of the shipped attacker's ONNX graph, to dpcore/data/"
            "attack_page_default.json. The page shows these results when its view is exactly the "
            "default and the attacker on disk has that SHA-256. --check recomputes and compares "
            "(exit 1 when the file is stale). About a minute on 2 cores."
        ),
    )
    p.add_argument("--check", action="store_true", help="recompute and compare; exit 1 if stale")
    p.add_argument("--output", default=None, help="file to write or check (default: the shipped file)")
    p.add_argument("--json", action="store_true", help="print a summary as one JSON object")
    p.set_defaults(func=run)


def _summary(
    doc: dict, path: Path, *, mode: str, stale: list[str] | None, seconds: float, written: bool = False
) -> dict:
    res = doc["results"]
    return {
        "path": str(path),
        "mode": mode,
        "current": None if stale is None else not stale,
        "written": written,
        "differences": [] if stale is None else stale[:20],
        "attack_units": len(res["attack_units"]),
        "utility_units": len(res["utility_units"]),
        "attacker_sha256": doc["attacker"]["sha256"],
        "dpcore_version": doc["dpcore_version"],
        "parameters": doc["parameters"],
        "seconds": round(seconds, 1),
    }


#: The default view's results computed in this process, keyed by (view, the attacker graph's
#: SHA-256, the computing function): a write and a --check in one process compute them once.
_COMPUTED: dict[tuple[Any, str, int], dict[str, Any]] = {}


def run(args: argparse.Namespace) -> int:
    from dpcore.attack.mlm import default_mlm_available
    from dpcore.attack.page_view import (
        SHIPPED_PATH,
        attacker_sha256,
        compare_documents,
        compute_view,
        default_view,
        load_shipped,
        view_document,
    )
    from dpcore.jsonutil import dumps

    path = Path(args.output) if args.output else SHIPPED_PATH
    if not default_mlm_available():
        raise DPCoreError("the shipped masked-LM attacker is not installed (python -m dpcore train-attacker)")
    if args.check and not path.is_file():
        raise DPCoreError(f"no such file: {path}")
    old = load_shipped(path, check_attacker=False) if path.is_file() else None
    if args.check and old is None:
        raise DPCoreError(f"{path} is not a precomputed Attack page view")
    t0 = time.monotonic()
    view = default_view()
    key = (view, attacker_sha256(), id(compute_view))
    if key not in _COMPUTED:  # units are deterministic in their parameters: once per process
        while len(_COMPUTED) >= 4:
            _COMPUTED.pop(next(iter(_COMPUTED)))
        _COMPUTED[key] = compute_view(
            view, progress=stderr_progress("computing the default view", enabled=True)
        )
    results = copy.deepcopy(_COMPUTED[key])
    seconds = time.monotonic() - t0
    doc = view_document(view, results)
    stale = None
    if old is not None:
        stale = []
        if old.document.get("attacker", {}).get("sha256") != doc["attacker"]["sha256"]:
            stale.append("the attacker's ONNX graph changed (SHA-256 differs)")
        if old.view != view:
            stale.append("the page's default view changed")
        stale += compare_documents(old.document["results"], doc["results"])
    if args.check:
        assert stale is not None
        if args.json:
            emit_json(_summary(doc, path, mode="check", stale=stale, seconds=seconds))
        elif stale:
            print(
                f"{path} is stale: {stale[0]}"
                + (f" (and {len(stale) - 1} more)" if len(stale) > 1 else "")
                + "; rerun python -m dpcore precompute-attack-page"
            )
        else:
            print(f"{path} is current ({len(results['attack_units'])} attack units, {seconds:.0f} s)")
        return 1 if stale else 0
    # Write mode: a file that is already current is left as it is (no needless rewrite).
    written = stale is None or bool(stale)
    if written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(doc, indent=1) + "\n", encoding="utf-8")
    if args.json:
        emit_json(_summary(doc, path, mode="write", stale=stale, seconds=seconds, written=written))
    elif written:
        print(
            f"wrote {path}: {len(results['attack_units'])} attack units, "
            f"{len(results['utility_units'])} utility units in {seconds:.0f} s "
            f"(attacker SHA-256 {doc['attacker']['sha256'][:12]}…)"
        )
    else:
        print(f"{path} is already current: left unchanged ({seconds:.0f} s to recompute)")
    return 0
