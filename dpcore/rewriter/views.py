"""The rewriter audits the dashboard opens with, computed once and shipped.

A page must show its story at once (the page-speed rule), and a rewriter audit of 400 rewrites
per input with the MiniLM distinguisher takes about half a minute on two cores. The views below
are computed by ``python -m dpcore.rewriter.views --write`` into
``dpcore/data/rewriter_views.json``; the page shows a shipped view when its settings are exactly
a view's, and computes anything else live. ``--check`` recomputes every view and compares
(``tests/test_rewriter_views.py`` recomputes one).

Each view is also one CLI command (:func:`view_command`), which prints the same result.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError

__all__ = ["SHIPPED_PATH", "VIEWS", "compute_view", "find_view", "shipped_view", "view_command"]

SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "rewriter_views.json"

#: A stopword ("was") against a non-stopword ("felt"): 7 WordPieces each, so DP-MLM's per-token
#: ε = 0.25 is a line claim of 1.75, within reach of 400 rewrites per input.
PAIR = ("my neighbour anna was diagnosed with diabetes", "my neighbour anna felt diagnosed with diabetes")
_COMMON: dict[str, Any] = {
    "epsilon": 0.25,
    "x": PAIR[0],
    "x_prime": PAIR[1],
    "rewrites": 400,
    "seed": 0,
    "distinguishers": ["exact", "words", "chars", "side", "minilm"],
    "confidence": 0.95,
}
#: key → settings (rewriter, ε, the pair, size, seed, distinguishers, confidence).
VIEWS: dict[str, dict[str, Any]] = {
    "stopwords": {"rewriter": "flawed:dp-mlm-stopwords", **_COMMON},
    "dp-mlm": {"rewriter": "dp-mlm", **_COMMON},
}


def view_command(settings: dict[str, Any]) -> list[str]:
    """The ``python -m dpcore audit-rewriter`` arguments that compute ``settings``
    (:func:`dpcore.reproduce.audit_rewriter_command`, the one builder of that command)."""
    from dpcore.reproduce import audit_rewriter_command

    return audit_rewriter_command(**settings)  # a view's settings are the builder's keywords


def compute_view(settings: dict[str, Any], progress: Any = None) -> dict[str, Any]:
    """Run the audit of ``settings``; its JSON record (without the run's seconds)."""
    from dpcore.rewriter import audit_rewriter, load_rewriter

    options = settings.get("options", {})
    rw = load_rewriter(settings["rewriter"], epsilon=float(settings["epsilon"]), **options)
    res = audit_rewriter(
        rw,
        [(settings["x"], settings["x_prime"])],
        rewrites=int(settings["rewrites"]),
        seed=int(settings["seed"]),
        distinguishers=tuple(settings["distinguishers"]),
        confidence=float(settings["confidence"]),
        progress=progress,
    )
    out = json.loads(_dumps(res.to_dict()))
    out.pop("seconds", None)
    return out


def _dumps(obj: Any) -> str:
    from dpcore.jsonutil import dumps

    return dumps(obj, indent=1)


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    if not SHIPPED_PATH.is_file():
        return {}
    return json.loads(SHIPPED_PATH.read_text(encoding="utf-8"))


def find_view(settings: dict[str, Any]) -> str | None:
    """The key of the view with exactly these settings (None: none; a view runs the rewriter's
    default options, so settings with ``options`` are never a view)."""
    for key, view in VIEWS.items():
        if all(settings.get(k) == view.get(k) for k in set(view) | set(settings)):
            return key
    return None


def shipped_view(settings: dict[str, Any]) -> dict[str, Any] | None:
    """The shipped result for exactly these settings, or None (then compute it)."""
    key = find_view(settings)
    if key is None:
        return None
    entry = _shipped().get("views", {}).get(key)
    if entry is None or entry.get("settings") != VIEWS[key]:
        return None
    return entry["result"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dpcore.rewriter.views", description=__doc__)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help="compute every view into the shipped file")
    g.add_argument("--check", action="store_true", help="recompute every view and compare with the file")
    args = ap.parse_args(argv)
    fresh = {
        k: {"settings": v, "command": view_command(v), "result": compute_view(v)} for k, v in VIEWS.items()
    }
    if args.write:
        SHIPPED_PATH.write_text(_dumps({"views": fresh}) + "\n", encoding="utf-8")
        print(f"wrote {SHIPPED_PATH}")
        return 0
    stale = [k for k in VIEWS if _shipped().get("views", {}).get(k) != json.loads(_dumps(fresh[k]))]
    if stale:
        print(f"stale views: {', '.join(stale)}: python -m dpcore.rewriter.views --write", file=sys.stderr)
        return 1
    print("every shipped view is current")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except DPCoreError as exc:
        print(f"dpcore: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
