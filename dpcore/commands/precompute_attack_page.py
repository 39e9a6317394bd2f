"""``python -m dpcore precompute-attack-page``: the Attack page's shipped views, computed once.

Writes ``dpcore/data/attack_page_default.json`` (the page's default view) and, beside it,
``dpcore/data/attack_page_paper_fig4.json`` (the view after its "Paper's Fig. 4 setting" button)
and ``attack_page_grid.json`` (every mechanism at every ε of the page, the other settings at
their defaults: an ε or a mechanism added on stage opens at once)
(:mod:`dpcore.attack.page_view`, :data:`~dpcore.attack.page_view.SHIPPED_VIEWS`): the results of
every unit of each view, with the view, its seed, the dpcore version, the SHA-256 of the shipped
attacker's ONNX graph and the label of the vocabulary the units used. ``--view`` picks one view;
``--check`` recomputes and compares instead.
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
        help="compute the Attack page's shipped views and ship them (or --check the shipped ones)",
        description=(
            "Run every unit of the Attack & utility page's shipped views (its default view and its "
            '"Paper\'s Fig. 4 setting": Bayesian and masked-LM attacks, utility, baselines) and '
            "write each, with the view, seed, dpcore version, the SHA-256 of the shipped attacker's "
            "ONNX graph and the vocabulary used, to dpcore/data/attack_page_default.json and "
            "attack_page_paper_fig4.json, and every mechanism at every ε of the page (the other "
            "settings at their defaults) to attack_page_grid.json. The page shows these results when "
            "its view shares their parameters, the attacker on disk has that SHA-256 and its "
            "vocabulary that label. --check recomputes and compares (exit 1 when a file is stale). "
            "About 20 s (default view), 2 min (Fig. 4 setting: utility over the BERT vocabulary) "
            "and 3 min (grid) on 2 cores."
        ),
    )
    p.add_argument(
        "--view",
        choices=("all", "default", "paper-fig4", "grid"),
        default="all",
        help="which shipped view to compute (default: all)",
    )
    p.add_argument("--check", action="store_true", help="recompute and compare; exit 1 if stale")
    p.add_argument(
        "--output",
        default=None,
        help="the default view's file to write or check (default: the shipped file); the other "
        "views go beside it (…_paper_fig4.json, …_grid.json)",
    )
    p.add_argument("--json", action="store_true", help="print a summary as one JSON object")
    p.set_defaults(func=run)


def _summary(
    doc: dict, path: Path, *, mode: str, stale: list[str] | None, seconds: float, written: bool = False
) -> dict:
    res = doc["results"]
    return {
        "view": doc.get("name"),
        "path": str(path),
        "mode": mode,
        "current": None if stale is None else not stale,
        "written": written,
        "differences": [] if stale is None else stale[:20],
        "attack_units": len(res["attack_units"]),
        "utility_units": len(res["utility_units"]),
        "attacker_sha256": doc["attacker"]["sha256"],
        "vocabulary": res.get("vocabulary"),
        "dpcore_version": doc["dpcore_version"],
        "parameters": doc["parameters"],
        "seconds": round(seconds, 1),
    }


#: Each view's results computed in this process, keyed by (view, the attacker graph's SHA-256, the
#: computing function): a write and a --check in one process compute them once.
_COMPUTED: dict[tuple[Any, str, int], dict[str, Any]] = {}


def _one(name: str, path: Path, args: argparse.Namespace) -> tuple[dict, str, bool]:
    """Compute (or reuse) one view, then write or check its file: (summary, text line, stale)."""
    from dpcore.attack.page_view import (
        attacker_sha256,
        compare_documents,
        compute_view,
        load_shipped,
        shipped_view,
        view_document,
    )
    from dpcore.jsonutil import dumps

    if args.check and not path.is_file():
        raise DPCoreError(f"no such file: {path}")
    old = load_shipped(path, check_attacker=False) if path.is_file() else None
    if args.check and old is None:
        raise DPCoreError(f"{path} is not a precomputed Attack page view")
    t0 = time.monotonic()
    view = shipped_view(name)
    key = (view, attacker_sha256(), id(compute_view))
    if key not in _COMPUTED:  # units are deterministic in their parameters: once per process
        while len(_COMPUTED) >= 4:
            _COMPUTED.pop(next(iter(_COMPUTED)))
        _COMPUTED[key] = compute_view(
            view, progress=stderr_progress(f"computing the {name} view", enabled=True)
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
            stale.append(f"the page's {name} view changed")
        stale += compare_documents(old.document["results"], doc["results"])
    if args.check:
        assert stale is not None
        if stale:
            line = (
                f"{path} is stale: {stale[0]}"
                + (f" (and {len(stale) - 1} more)" if len(stale) > 1 else "")
                + "; rerun python -m dpcore precompute-attack-page"
            )
        else:
            line = f"{path} is current ({len(results['attack_units'])} attack units, {seconds:.0f} s)"
        return _summary(doc, path, mode="check", stale=stale, seconds=seconds), line, bool(stale)
    # Write mode: a file that is already current is left as it is (no needless rewrite).
    written = stale is None or bool(stale)
    if written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(doc, indent=1) + "\n", encoding="utf-8")
        line = (
            f"wrote {path}: {len(results['attack_units'])} attack units, "
            f"{len(results['utility_units'])} utility units in {seconds:.0f} s "
            f"(attacker SHA-256 {doc['attacker']['sha256'][:12]}…)"
        )
    else:
        line = f"{path} is already current: left unchanged ({seconds:.0f} s to recompute)"
    return _summary(doc, path, mode="write", stale=stale, seconds=seconds, written=written), line, False


def run(args: argparse.Namespace) -> int:
    from dpcore.attack.page_view import SHIPPED_VIEWS, shipped_path
    from dpcore.models.masked_lm import default_mlm_available

    if not default_mlm_available():
        raise DPCoreError("the shipped masked-LM attacker is not installed (python -m dpcore train-attacker)")
    names = list(SHIPPED_VIEWS) if args.view == "all" else [args.view]
    base = Path(args.output) if args.output else None
    if args.check:  # every file must be there before any minute of computation
        for name in names:
            if not shipped_path(name, base).is_file():
                raise DPCoreError(f"no such file: {shipped_path(name, base)}")
    done = [_one(name, shipped_path(name, base), args) for name in names]
    stale = any(s for _, _, s in done)
    if args.json:
        if len(done) == 1:
            emit_json(done[0][0])
        else:
            summaries = [d for d, _, _ in done]
            emit_json(
                {
                    "views": summaries,
                    "current": None if any(d["current"] is None for d in summaries) else not stale,
                    "written": any(d["written"] for d in summaries),
                    "differences": [x for d in summaries for x in d["differences"]][:20],
                }
            )
    else:
        for _, line, _ in done:
            print(line)
    return 1 if stale else 0
