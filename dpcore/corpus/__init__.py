"""Sanitize whole corpora: files, pandas DataFrames, pyarrow Tables and Ray Datasets.

One text column is sanitized token by token with any registered text mechanism
(:mod:`dpcore.text`); every other column is carried through unchanged, and row order and count
are kept. Row ``i`` (0-based, over the whole corpus) draws its noise from
``default_rng(SeedSequence([seed, i]))``, so the output is the same whatever the engine, the
number of workers or the batch size (:mod:`dpcore.corpus.core`).

>>> from dpcore.corpus import sanitize_dataframe                      # doctest: +SKIP
>>> res = sanitize_dataframe(df, text_column="text", mechanism="santext", epsilon=3, seed=0)
>>> res.data, res.manifest                                            # doctest: +SKIP

- :func:`sanitize_files` — Parquet / CSV / JSONL (a file, folder or glob) to an output folder
  with ``_dpcore_manifest.json``, written atomically (what ``python -m dpcore sanitize-corpus``
  runs); engines ``local`` (``workers`` processes) and ``ray`` (Ray Data).
- :func:`sanitize_dataframe`, :func:`sanitize_table` — in memory, in batches.
- :func:`sanitize_ray_dataset` — a lazy Ray Dataset, mapped by an actor pool.

The seed is recorded in the manifest only when the caller gave one; otherwise it is drawn from
the operating system, used, and never written anywhere (the manifest says so).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore import __version__
from dpcore.corpus.core import (
    COUNT_COLUMNS,
    ROW_COLUMN,
    BatchSanitizer,
    MechanismSpec,
    privacy_statement,
    vocabulary_digest,
)
from dpcore.validation import DPCoreError, check_int

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "CorpusResult",
    "MechanismSpec",
    "sanitize_dataframe",
    "sanitize_files",
    "sanitize_ray_dataset",
    "sanitize_table",
]

#: Rows per batch. Larger batches amortise the mechanism's per-distinct-word work (SanText
#: computes one |V|-long row per distinct word of a batch); memory per batch is the batch's text
#: plus the sampler's bounded chunks.
DEFAULT_BATCH_SIZE = 20_000
MAX_WORKERS = 256

SEED_NOT_RECORDED = (
    "no seed was given: one was drawn from the operating system for this run and written nowhere, "
    "so the noise cannot be re-derived from this manifest"
)
SEED_RECORDED = "the seed was given by the user; anyone holding it can re-derive every row's noise"


@dataclass
class CorpusResult:
    """Sanitized data (same type as the input) and its manifest."""

    data: Any
    manifest: dict[str, Any] = field(default_factory=dict)


class _Counts:
    def __init__(self) -> None:
        self.rows = self.null_rows = self.tokens = self.oov = self.replaced = 0
        self.max_tokens = 0

    def add(self, table: Any, text_column: str) -> int:
        tok, oov, rep = (table.column(c).to_numpy() for c in COUNT_COLUMNS)
        self.rows += table.num_rows
        self.null_rows += table.column(text_column).null_count
        t = int(tok.sum())
        self.tokens += t
        self.oov += int(oov.sum())
        self.replaced += int(rep.sum())
        known = tok - oov
        if known.size:
            self.max_tokens = max(self.max_tokens, int(known.max()))
        return t

    def as_dict(self) -> dict[str, int]:
        return {
            "rows": self.rows,
            "null_rows": self.null_rows,
            "tokens": self.tokens,
            "in_vocabulary_tokens": self.tokens - self.oov,
            "oov_tokens": self.oov,
            "replaced_tokens": self.replaced,
        }


def make_spec(
    mechanism: str | MechanismSpec,
    epsilon: float | None = None,
    *,
    embedding: str = "glove",
    p: float | None = None,
    w: float | None = None,
    vocab_size: int | None = None,
    vocab_words: list[str] | tuple[str, ...] | None = None,
    oov: str = "mask",
) -> MechanismSpec:
    """A validated :class:`MechanismSpec` from keyword options (or one given as is)."""
    if isinstance(mechanism, MechanismSpec):
        return mechanism.validate()
    if epsilon is None:
        raise DPCoreError("epsilon is required")
    return MechanismSpec(
        mechanism=mechanism,
        epsilon=float(epsilon),
        embedding=embedding,
        p=p,
        w=w,
        vocab_size=vocab_size,
        vocab_words=None if vocab_words is None else tuple(vocab_words),
        oov=oov,
    ).validate()


def _resolve_seed(seed: int | None) -> tuple[int, bool]:
    if seed is None:
        return secrets.randbits(63), False
    return check_int(seed, name="seed", min_value=0, max_value=2**63 - 1), True


def build_manifest(
    sanitizer: BatchSanitizer,
    *,
    seed: int,
    seed_given: bool,
    counts: dict[str, int],
    max_tokens: int,
    text_column: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest: what was run, on what, what it released and the privacy it spent."""
    mech = sanitizer.mech
    vocab = mech.vocab
    out: dict[str, Any] = {
        "dpcore_version": __version__,
        "text_column": text_column,
        "mechanism": mech.name,
        "parameters": mech.params(),
        "embedding": vocab.embedding,
        "tokenizer": sanitizer.tokenizer.name,
        "vocabulary": {
            "size": len(vocab),
            "label": vocab.label,
            "digest": vocabulary_digest(vocab),
            "frequency_source": vocab.frequency_source,
        },
        "oov_policy": sanitizer.spec.oov,
        "seed": seed if seed_given else None,
        "seed_recorded": seed_given,
        "seed_note": SEED_RECORDED if seed_given else SEED_NOT_RECORDED,
        "row_seeding": "row i draws from numpy default_rng(SeedSequence([seed, i])), i over the whole corpus",
        "counts": counts,
        "privacy": privacy_statement(mech, max_tokens=max_tokens, oov=sanitizer.spec.oov),
    }
    if extra:
        out.update(extra)
    return out


# --- in memory ----------------------------------------------------------------------------------


def _table_batches(table: Any, batch_size: int, start_row: int) -> Iterator[tuple[int, Any]]:
    import pyarrow as pa

    for a in range(0, table.num_rows, batch_size):
        t = table.slice(a, batch_size)
        yield (
            0,
            t.append_column(
                ROW_COLUMN, pa.array(np.arange(start_row + a, start_row + a + t.num_rows, dtype=np.int64))
            ),
        )


def sanitize_table(
    table: Any,
    *,
    text_column: str,
    mechanism: str | MechanismSpec,
    epsilon: float | None = None,
    seed: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    start_row: int = 0,
    **options: Any,
) -> CorpusResult:
    """Sanitize a pyarrow Table's ``text_column`` (row i of the table is corpus row ``start_row + i``).

    ``options`` are :class:`MechanismSpec` fields (``embedding``, ``p``, ``w``, ``vocab_size``,
    ``vocab_words``, ``oov``). Returns a Table with the same columns in the same order.
    """
    import pyarrow as pa

    from dpcore.corpus.engines import iter_local
    from dpcore.corpus.io import _is_text_type

    if not isinstance(table, pa.Table):
        raise DPCoreError("sanitize_table needs a pyarrow.Table")
    spec = make_spec(mechanism, epsilon, **options)
    if text_column not in table.column_names:
        raise DPCoreError(
            f"the table has no column {text_column!r} (columns: {', '.join(table.column_names)})"
        )
    if not _is_text_type(table.schema.field(text_column).type):
        raise DPCoreError(f"column {text_column!r} holds {table.schema.field(text_column).type}, not text")
    batch_size = check_int(batch_size, name="batch size", min_value=1, max_value=10_000_000)
    workers = check_int(workers, name="workers", min_value=1, max_value=MAX_WORKERS)
    seed, given = _resolve_seed(seed)
    sanitizer = BatchSanitizer(spec, seed)
    counts = _Counts()
    parts = []
    for _, t in iter_local(
        _table_batches(table, batch_size, start_row), sanitizer, text_column, workers=workers
    ):
        counts.add(t, text_column)
        parts.append(t.drop_columns([ROW_COLUMN, *COUNT_COLUMNS]))
    out = pa.concat_tables(parts) if parts else table
    manifest = build_manifest(
        sanitizer,
        seed=seed,
        seed_given=given,
        counts=counts.as_dict(),
        max_tokens=counts.max_tokens,
        text_column=text_column,
    )
    return CorpusResult(out, manifest)


def sanitize_dataframe(df: Any, *, text_column: str, **kwargs: Any) -> CorpusResult:
    """Sanitize a pandas DataFrame's ``text_column``; other columns and the index are kept.

    Takes the options of :func:`sanitize_table`; returns a DataFrame.
    """
    import pandas as pd
    import pyarrow as pa

    if not isinstance(df, pd.DataFrame):
        raise DPCoreError("sanitize_dataframe needs a pandas.DataFrame")
    if text_column not in df.columns:
        raise DPCoreError(f"the DataFrame has no column {text_column!r}")
    col = df[text_column]
    bad = col[~col.map(lambda v: v is None or isinstance(v, str) or (isinstance(v, float) and np.isnan(v)))]
    if len(bad):
        raise DPCoreError(
            f"column {text_column!r} is not text: row {bad.index[0]!r} holds a {type(bad.iloc[0]).__name__}"
        )
    texts = pa.array([None if not isinstance(v, str) else v for v in col], type=pa.string())
    res = sanitize_table(pa.table({text_column: texts}), text_column=text_column, **kwargs)
    out = df.copy()
    out[text_column] = pd.Series(
        res.data.column(text_column).to_pylist(),
        index=df.index,
        dtype=col.dtype if col.dtype != object else object,
    )
    res.data = out
    return res


def sanitize_ray_dataset(
    ds: Any,
    *,
    text_column: str,
    row_index_column: str,
    mechanism: str | MechanismSpec,
    epsilon: float | None = None,
    seed: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 2,
    **options: Any,
) -> Any:
    """A lazy Ray Dataset with ``text_column`` sanitized by an actor pool of ``workers``.

    A Ray Dataset has no global row numbering, so the caller names ``row_index_column``: a
    distinct non-negative integer per row (an id), which seeds that row's noise. ``seed`` is
    required here (the caller keeps or discards it). Counts and the manifest come with
    :func:`sanitize_files`; here they are left to the caller.
    """
    from dpcore.corpus.engines import ray_sanitize_dataset

    spec = make_spec(mechanism, epsilon, **options)
    seed, _ = _resolve_seed(seed)
    if row_index_column not in ds.columns():
        raise DPCoreError(f"the dataset has no column {row_index_column!r}")
    if text_column not in ds.columns():
        raise DPCoreError(f"the dataset has no column {text_column!r}")

    def rename_in(t: Any) -> Any:
        return t.append_column(ROW_COLUMN, t.column(row_index_column).cast("int64"))

    ds = ds.map_batches(rename_in, batch_format="pyarrow", batch_size=batch_size)
    ds = ray_sanitize_dataset(
        ds,
        spec,
        seed,
        text_column,
        batch_size=batch_size,
        workers=check_int(workers, name="workers", min_value=1, max_value=MAX_WORKERS),
    )
    return ds.drop_columns([ROW_COLUMN, *COUNT_COLUMNS])


# --- files --------------------------------------------------------------------------------------


def sanitize_files(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    text_column: str,
    mechanism: str | MechanismSpec,
    epsilon: float | None = None,
    seed: int | None = None,
    engine: str = "local",
    workers: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    address: str | None = None,
    output_format: str = "same",
    progress: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Sanitize Parquet / CSV / JSONL files into the folder ``output``; return the manifest.

    ``output`` must not exist: it is created atomically, holding ``part-NNNNN.<ext>`` (one per
    input file, in order) and ``_dpcore_manifest.json``.
    """
    import time

    from dpcore.corpus.engines import ENGINES, Progress, file_batches, iter_local, iter_ray
    from dpcore.corpus.io import MANIFEST_NAME, OutputFolder, plan_input
    from dpcore.files import terminate_as_exception

    if engine not in ENGINES:
        raise DPCoreError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if output_format not in ("same", "parquet"):
        raise DPCoreError("output format must be 'same' or 'parquet'")
    if address is not None and engine != "ray":
        raise DPCoreError("--address applies to --engine ray only")
    spec = make_spec(mechanism, epsilon, **options)
    batch_size = check_int(batch_size, name="batch size", min_value=1, max_value=10_000_000)
    workers = check_int(workers, name="workers", min_value=1, max_value=MAX_WORKERS)
    seed, given = _resolve_seed(seed)
    plan = plan_input(input, text_column)
    out_format = plan.format if output_format == "same" else "parquet"
    folder = OutputFolder(output, inputs=list(plan.files), fmt=plan.format, out_format=out_format)
    sanitizer = BatchSanitizer(spec, seed)  # loads V once here (checks it before any work)
    counts = _Counts()
    bar = Progress(plan.total_rows, enabled=progress)
    t0 = time.perf_counter()
    with terminate_as_exception(), folder:
        if engine == "local":
            stream = iter_local(file_batches(plan, batch_size), sanitizer, plan.text_column, workers=workers)
        else:
            stream = iter_ray(plan, spec, seed, batch_size=batch_size, workers=workers, address=address)
        current = -1
        first: tuple[float, int] | None = None  # (time, tokens) when the first batch was in
        for idx, t in stream:
            while current < idx:
                current += 1
                folder.start_part(current)
            bar.update(t.num_rows, counts.add(t, plan.text_column))
            folder.write(t, plan.text_column)
            if first is None:
                first = (time.perf_counter() - t0, counts.tokens)
        bar.close()
        if counts.rows != plan.total_rows:
            raise DPCoreError(f"internal error: wrote {counts.rows} rows of {plan.total_rows}")
        elapsed = time.perf_counter() - t0
        manifest = build_manifest(
            sanitizer,
            seed=seed,
            seed_given=given,
            counts=counts.as_dict(),
            max_tokens=counts.max_tokens,
            text_column=plan.text_column,
            extra={
                "input_format": plan.format,
                "output_format": out_format,
                "files": [
                    {"input": f, "rows": n, "output": part}
                    for f, n, part in zip(plan.files, plan.rows_per_file, folder.parts, strict=True)
                ],
                "run": {
                    "engine": engine,
                    "workers": workers,
                    "batch_size": batch_size,
                    "seconds": round(elapsed, 3),
                    # start-up (a local Ray, actors loading V) and the first batch, apart
                    "first_batch_seconds": round(first[0], 3) if first else None,
                    "first_batch_tokens": first[1] if first else 0,
                    "note": "engine, workers and batch size do not change the output",
                },
                "manifest": MANIFEST_NAME,
            },
        )
        folder.commit(manifest)
    return manifest
