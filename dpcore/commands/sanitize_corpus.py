"""``python -m dpcore sanitize-corpus``: sanitize a text column of Parquet / CSV / JSONL corpora."""

from __future__ import annotations

import argparse
import sys

from dpcore.commands.common import emit_json
from dpcore.commands.sanitize import add_mechanism_arguments
from dpcore.formatting import epsilon_text
from dpcore.validation import check_epsilon, check_int, check_probability


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sanitize-corpus",
        help="sanitize a text column of Parquet/CSV/JSONL files (local processes or Ray Data)",
        description=(
            "Sanitize one text column of a corpus token by token; every other column is carried "
            "through unchanged, rows keep their order and count. Streams in batches. Writes the "
            "folder OUTPUT (part files + _dpcore_manifest.json) atomically. Row i draws its noise "
            "from SeedSequence([seed, i]), so the output does not depend on the engine, the "
            "number of workers or the batch size."
        ),
    )
    add_mechanism_arguments(p)
    p.add_argument(
        "--input", required=True, help="a .parquet/.csv/.jsonl file, a folder of them, or a glob (quote it)"
    )
    p.add_argument("--output", required=True, help="output folder (must not exist; created atomically)")
    p.add_argument("--text-column", required=True, help="the column to sanitize")
    p.add_argument(
        "--output-format",
        default="same",
        choices=("same", "parquet"),
        help="same as the input (default) or parquet",
    )
    p.add_argument(
        "--oov",
        default="mask",
        choices=("mask", "keep"),
        help="out-of-vocabulary policy (keep is not private)",
    )
    p.add_argument(
        "--seed",
        default=None,
        help="seed, recorded in the manifest (default: drawn from the OS and written nowhere)",
    )
    p.add_argument("--engine", default="local", choices=("local", "ray"), help="local (default) or ray")
    p.add_argument("--workers", default="1", help="processes (local) or sanitizer actors (ray); default 1")
    p.add_argument(
        "--batch-size", default=None, help="rows per batch (default 20000); does not change the output"
    )
    p.add_argument(
        "--address",
        default=None,
        help="ray: address of an existing cluster (default: a local Ray for this run)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dpcore.corpus import DEFAULT_BATCH_SIZE, MAX_WORKERS, MechanismSpec, sanitize_files
    from dpcore.text.sanitize import read_text_file
    from dpcore.text.vocab import MAX_VOCAB_FILE_BYTES, parse_vocab_text

    # cheap checks first, as build_mechanism does; the spec is rebuilt in every worker
    check_epsilon(args.epsilon)
    from dpcore.commands.common import mechanism_params
    from dpcore.text.registry import required_embedding

    params = mechanism_params(args.mechanism, args)
    p = None if "p" not in params else check_probability(params.pop("p"), name="p")
    w = None if "w" not in params else check_probability(params.pop("w"), name="w")
    embedding = args.embedding or required_embedding(args.mechanism) or "glove"
    seed = None if args.seed is None else check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1)
    workers = check_int(args.workers, name="--workers", min_value=1, max_value=MAX_WORKERS)
    batch = (
        DEFAULT_BATCH_SIZE
        if args.batch_size is None
        else check_int(args.batch_size, name="--batch-size", min_value=1, max_value=10_000_000)
    )
    words = None
    size = None
    if args.vocab is not None:
        words = tuple(
            parse_vocab_text(
                read_text_file(args.vocab, max_bytes=MAX_VOCAB_FILE_BYTES, kind="vocabulary file")
            )
        )
    elif args.vocab_size is not None:
        size = check_int(args.vocab_size, name="--vocab-size", min_value=2, max_value=10_000_000)
    spec = MechanismSpec(
        mechanism=args.mechanism,
        epsilon=float(args.epsilon),
        embedding=embedding,
        p=p,
        w=w,
        params=tuple(sorted(params.items())),
        vocab_size=size,
        vocab_words=words,
        oov=args.oov,
        full_vocabulary=args.full_vocabulary,
    ).validate()
    manifest = sanitize_files(
        args.input,
        args.output,
        text_column=args.text_column,
        mechanism=spec,
        seed=seed,
        engine=args.engine,
        workers=workers,
        batch_size=batch,
        address=args.address,
        output_format=args.output_format,
        progress=not args.no_progress,
    )
    if args.json:
        emit_json(manifest)
    else:
        c = manifest["counts"]
        pr = manifest["privacy"]
        seed_text = f"seed {seed}" if seed is not None else "seed drawn from the OS, not recorded"
        print(
            f"dpcore: sanitized {c['rows']:,} rows, {c['tokens']:,} tokens "
            f"({c['replaced_tokens']:,} replaced, "
            f"{c['oov_tokens']:,} out of vocabulary, policy {args.oov}) with {manifest['mechanism']} "
            f"ε={epsilon_text(spec.epsilon)}, {seed_text}; longest document "
            f"{pr['max_tokens_per_document']:,} tokens "
            f"→ {args.output} (manifest _dpcore_manifest.json)",
            file=sys.stderr,
        )
        print(f"dpcore: vocabulary: {manifest['vocabulary']['label']}", file=sys.stderr)
    return 0
