"""CLI sub-commands: one module each, exposing ``register(subparsers)``.

Each ``register`` adds a parser and sets ``func`` (a callable taking the parsed namespace and
returning an exit status). Keep command modules thin: parse, call dpcore, print.
"""

#: Modules under ``dpcore.commands``, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "listing",
    "audit",
    "audit_text",
    "audit_rewriter",
    "calibrate_rewriters",
    "adapters",
    "sensitivity",
    "adept_sim",
    "accounting",
    "train_attacker",
    "export_onnx",
    "export_tables",
    "mask_attack",
    "sanitize",
    "sanitize_corpus",
    "text_metrics",
    "attack",
    "utility",
    "precompute_attack_page",
    "verdicts",
)
