"""Engines that map batches through :class:`~dpcore.corpus.core.BatchSanitizer`.

``local``
    In this process (``workers=1``) or in a pool of ``workers`` processes
    (:func:`dpcore.executor.run_tasks`: they die with this process, and a broken pool is
    replaced, its lost batches sanitized again). Batches are read in
    the main process and at most ``2·workers`` of them are in flight, so memory stays bounded
    whatever the corpus size; results are written in input order. On Linux the workers are
    forked after the vocabulary is loaded, so they share it (copy-on-write) and start at once.
``ray``
    Ray Data: a dataset of reading chunks, a reading ``map_batches`` task (a generator: one file
    or run of Parquet row groups, ``batch_size`` rows at a time, in blocks of at most 1 MiB so
    every actor gets work), then ``map_batches`` over an
    actor pool of ``workers`` sanitizers (each actor builds the vocabulary once), executed in
    streaming mode with order preserved; the driver writes the output. ``address`` joins an
    existing cluster; by default a local Ray is started for the run and stopped after it.

Both produce the same rows: every row is seeded by ``[seed, row index]``.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterator
from typing import Any

from dpcore.corpus.core import BatchSanitizer, MechanismSpec
from dpcore.corpus.io import InputPlan, read_chunk
from dpcore.executor import ENGINES
from dpcore.validation import DPCoreError

__all__ = [
    "ENGINES",
    "Progress",
    "file_batches",
    "iter_local",
    "iter_ray",
    "ray_context",
    "ray_sanitize_dataset",
]


# --- progress ---------------------------------------------------------------------------------


class Progress:
    """A progress line on stderr: rows done, rows/s, tokens/s (redrawn at most twice a second)."""

    def __init__(self, total_rows: int, *, enabled: bool = True, stream: Any = None) -> None:
        self.total = total_rows
        self.rows = 0
        self.tokens = 0
        self.start = time.perf_counter()
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0

    def update(self, rows: int, tokens: int) -> None:
        self.rows += rows
        self.tokens += tokens
        now = time.perf_counter()
        if self.enabled and (now - self._last >= (0.5 if self.tty else 10.0) or self.rows >= self.total):
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        dt = max(now - self.start, 1e-9)
        frac = self.rows / self.total if self.total else 1.0
        width = 24
        bar = "█" * int(frac * width) + "·" * (width - int(frac * width))
        line = (
            f"dpcore: [{bar}] {self.rows:,}/{self.total:,} rows, {self.rows / dt:,.0f} rows/s, "
            f"{self.tokens / dt:,.0f} tokens/s, {dt:.0f} s"
        )
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --- local ------------------------------------------------------------------------------------


def _work(state: tuple[BatchSanitizer, str], table: Any) -> Any:
    sanitizer, text_column = state
    return sanitizer.sanitize_table(table, text_column)


def file_batches(plan: InputPlan, batch_size: int) -> Iterator[tuple[int, Any]]:
    """``(file index, table of at most batch_size rows)`` over the whole input, in order."""
    for chunk in plan.chunks:
        for t in read_chunk(plan, chunk, batch_size):
            yield chunk.file_index, t


def iter_local(
    batches: Iterator[tuple[int, Any]],
    sanitizer: BatchSanitizer,
    text_column: str,
    *,
    workers: int = 1,
) -> Iterator[tuple[int, Any]]:
    """Sanitize ``(file index, table)`` batches; yield them in the same order."""
    from dpcore.executor import run_tasks

    files: dict[int, int] = {}

    def tables() -> Iterator[Any]:
        for k, (idx, t) in enumerate(batches):
            files[k] = idx
            yield t

    # forked workers inherit the built sanitizer (V loaded once); a lost batch is sanitized
    # again, to the same rows (every row is seeded by its index)
    for k, t in run_tasks(
        _work,
        tables(),
        workers=workers,
        state=(sanitizer, text_column),
        ordered=True,
        on_lost="retry",
        what="sanitize-corpus",
    ):
        yield files.pop(k), t


# --- ray ----------------------------------------------------------------------------------------


def _read_chunks(batch: dict[str, Any], plan: InputPlan, batch_size: int) -> Iterator[Any]:
    """Ray Data reading step: chunk indices in, tables of ``batch_size`` rows out."""
    for i in batch["chunk"]:
        chunk = plan.chunks[int(i)]
        for t in read_chunk(plan, chunk, batch_size):
            yield _tag_file(t, chunk.file_index)


def _tag_file(table: Any, file_index: int) -> Any:
    import numpy as np
    import pyarrow as pa

    return table.append_column("__dpcore_file", pa.array(np.full(table.num_rows, file_index, dtype=np.int32)))


class _RaySanitizer:
    """Ray Data actor: builds the mechanism (and loads V) once, then sanitizes batches."""

    def __init__(self, spec: MechanismSpec, seed: int, text_column: str) -> None:
        self.sanitizer = BatchSanitizer(spec, seed)
        self.text_column = text_column

    def __call__(self, table: Any) -> Any:
        return self.sanitizer.sanitize_table(table, self.text_column)


def ray_context() -> Any:
    """Ray Data settings for dpcore: order preserved, no Ray progress bars (dpcore draws one)."""
    import logging
    import warnings

    from ray.data import DataContext

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    # Ray Data warns that the sanitizer pool "only received 1 input" when one file is one
    # reading chunk: the reading step is a generator that yields many batches, so all actors work.
    warnings.filterwarnings("ignore", message=".*minimum number of concurrent actors.*")
    ctx = DataContext.get_current()
    ctx.execution_options.preserve_order = True
    # Ray Data packs a generator's output into blocks of up to this size, and an actor task takes
    # whole blocks: with the default (128 MiB) a whole file became one block for one actor. Small
    # blocks spread the batches over all actors (they are re-bundled into batch_size rows).
    ctx.target_max_block_size = 1 << 20
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    return ctx


def ray_sanitize_dataset(
    ds: Any, spec: MechanismSpec, seed: int, text_column: str, *, batch_size: int, workers: int
) -> Any:
    """``map_batches`` over an actor pool of ``workers`` sanitizers (needs :data:`ROW_COLUMN`)."""
    from ray.data import ActorPoolStrategy

    return ds.map_batches(
        _RaySanitizer,
        fn_constructor_kwargs={"spec": spec, "seed": seed, "text_column": text_column},
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ActorPoolStrategy(size=workers),
        num_cpus=1,
        zero_copy_batch=True,
    )


def iter_ray(
    plan: InputPlan,
    spec: MechanismSpec,
    seed: int,
    *,
    batch_size: int,
    workers: int,
    address: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(file index, sanitized table)`` in input order, computed on Ray Data."""
    from dpcore.executor import start_ray

    stop = start_ray(address, workers)
    try:
        import ray.data

        ray_context()
        items = [{"chunk": i} for i in range(len(plan.chunks))]
        ds = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
        ds = ds.map_batches(
            _read_chunks,
            fn_kwargs={"plan": plan, "batch_size": batch_size},
            batch_size=1,
            batch_format="numpy",
            num_cpus=0,  # reading is light; all CPUs go to the sanitizer actors
        )
        ds = ray_sanitize_dataset(ds, spec, seed, plan.text_column, batch_size=batch_size, workers=workers)
        for t in ds.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=2):
            if t.num_rows == 0:
                continue
            files = t.column("__dpcore_file").to_numpy()
            t = t.drop_columns(["__dpcore_file"])
            # a batch never straddles files when produced, but be safe if Ray merged blocks
            cuts = [0] + [i for i in range(1, len(files)) if files[i] != files[i - 1]] + [len(files)]
            for a, b in itertools.pairwise(cuts):
                yield int(files[a]), t.slice(a, b - a)
    except DPCoreError:
        raise
    except Exception as exc:
        # a DPCoreError raised inside an actor arrives wrapped; show its one line
        msg = str(exc)
        for line in msg.splitlines():
            if "DPCoreError" in line or line.startswith("dpcore"):
                raise DPCoreError(line.split("DPCoreError:", 1)[-1].strip()) from None
        raise
    finally:
        stop()
