"""Corpus files in and out: Parquet, CSV, JSONL; a file, a folder or a glob of them.

Reading
-------
:func:`plan_input` finds the files, checks them all before any work (format, the text column,
its type, rows) and counts the rows of each, so every row gets its index in the whole corpus.
:func:`read_chunk` then streams one file (or a run of Parquet row groups) as pyarrow tables of at
most ``batch_size`` rows, with the internal row-index column :data:`~dpcore.corpus.core.ROW_COLUMN`.

- Parquet: read as stored; the text column must be a string column.
- CSV: every column is read as text (so ``007`` stays ``007``, empty cells stay empty strings)
  and written back as text.
- JSONL: one JSON object per line. Each line is kept as it was read and written back with only
  the text field replaced, so every other field (numbers, nested objects) is carried through
  exactly. Blank lines are skipped.

Writing
-------
:class:`OutputFolder` writes ``part-NNNNN.<ext>`` files (one per input file) and the manifest
``_dpcore_manifest.json`` into a hidden temporary folder next to the output, and renames it to
the output folder only when everything has been written. On an error, Ctrl-C or SIGTERM the
temporary folder is removed: no partial output is left that looks complete.
"""

from __future__ import annotations

import glob as globmod
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.corpus.core import ROW_COLUMN
from dpcore.files import check_path_length, same_file
from dpcore.validation import DPCoreError

__all__ = [
    "FORMATS",
    "MANIFEST_NAME",
    "RAW_COLUMN",
    "Chunk",
    "InputPlan",
    "OutputFolder",
    "plan_input",
    "read_chunk",
]

MANIFEST_NAME = "_dpcore_manifest.json"
#: Internal column holding a JSONL line as read (never written out as a column).
RAW_COLUMN = "__dpcore_json"
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
EXTENSION = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}
_CSV_BLOCK = 1 << 22


@dataclass(frozen=True)
class Chunk:
    """A unit of reading: one file, or a run of row groups of a Parquet file."""

    file_index: int
    path: str
    start_row: int
    n_rows: int
    row_groups: tuple[int, ...] | None = None


@dataclass(frozen=True)
class InputPlan:
    """The checked input: files in order, their format and row counts, the reading chunks."""

    files: tuple[str, ...]
    format: str
    text_column: str
    rows_per_file: tuple[int, ...]
    chunks: tuple[Chunk, ...]
    columns: tuple[str, ...]

    @property
    def total_rows(self) -> int:
        return int(sum(self.rows_per_file))


def find_files(spec: str | os.PathLike[str]) -> list[str]:
    """The input files of ``spec``: a file, a folder (its corpus files, sorted) or a glob."""
    s = os.fspath(spec)
    p = Path(s)
    if p.is_dir():
        files = sorted(
            str(f)
            for f in p.iterdir()
            if f.is_file() and f.suffix.lower() in FORMATS and not f.name.startswith(("_", "."))
        )
        if not files:
            raise DPCoreError(f"input folder {s!r} holds no .parquet, .csv or .jsonl file")
        return files
    if p.is_file():
        return [s]
    if any(c in s for c in "*?["):
        files = sorted(f for f in globmod.glob(s, recursive=True) if os.path.isfile(f))
        if not files:
            raise DPCoreError(f"input pattern {s!r} matches no file")
        return files
    raise DPCoreError(f"input {s!r} does not exist (give a file, a folder or a glob)")


def file_format(path: str) -> str:
    """``parquet``, ``csv`` or ``jsonl`` from the file's extension."""
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise DPCoreError(
            f"input file {path!r}: unknown format {ext or '(no extension)'!r}; use .parquet, .csv or .jsonl"
        )
    return FORMATS[ext]


def _is_text_type(t: Any) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or getattr(pa.types, "is_string_view", lambda _: False)(t)
    )


def _missing_column(path: str, column: str, names: list[str]) -> DPCoreError:
    shown = ", ".join(repr(n) for n in names[:20]) + (" …" if len(names) > 20 else "")
    return DPCoreError(f"input file {path!r} has no column {column!r} (columns: {shown or 'none'})")


def _plan_parquet(
    path: str, text_column: str, idx: int, start: int, group_rows: int
) -> tuple[list[Chunk], list[str], int]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for damaged files
        raise DPCoreError(
            f"input file {path!r} is not a readable Parquet file (damaged or truncated?): "
            f"{str(exc).splitlines()[0][:200]}"
        ) from None
    names = list(schema.names)
    if text_column not in names:
        raise _missing_column(path, text_column, names)
    t = schema.field(text_column).type
    if not _is_text_type(t):
        raise DPCoreError(
            f"column {text_column!r} of {path!r} holds {t}, not text; "
            "choose the text column with --text-column"
        )
    for reserved in (ROW_COLUMN, RAW_COLUMN):
        if reserved in names:
            raise DPCoreError(f"input file {path!r} has a column named {reserved!r}, which dpcore reserves")
    md = pf.metadata
    chunks: list[Chunk] = []
    groups: list[int] = []
    acc = 0
    row = start
    for g in range(md.num_row_groups):
        groups.append(g)
        acc += md.row_group(g).num_rows
        if acc >= group_rows or g == md.num_row_groups - 1:
            chunks.append(Chunk(idx, path, row, acc, tuple(groups)))
            row += acc
            groups, acc = [], 0
    return chunks, names, row - start


def _csv_names(path: str) -> list[str]:
    import pyarrow.csv as pcsv

    try:
        reader = pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=_CSV_BLOCK))
        names = list(reader.schema.names)
        reader.close()
    except Exception as exc:
        raise DPCoreError(
            f"input file {path!r} is not readable CSV: {str(exc).splitlines()[0][:200]}"
        ) from None
    return names


def _csv_reader(path: str, names: list[str]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    return pcsv.open_csv(
        path,
        read_options=pcsv.ReadOptions(block_size=_CSV_BLOCK),
        convert_options=pcsv.ConvertOptions(
            column_types={n: pa.string() for n in names},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _plan_csv(path: str, text_column: str, idx: int, start: int) -> tuple[list[Chunk], list[str], int]:
    names = _csv_names(path)
    if text_column not in names:
        raise _missing_column(path, text_column, names)
    if ROW_COLUMN in names:
        raise DPCoreError(f"input file {path!r} has a column named {ROW_COLUMN!r}, which dpcore reserves")
    n = 0
    try:
        for b in _csv_reader(path, names):
            n += b.num_rows
    except Exception as exc:
        raise DPCoreError(
            f"input file {path!r} is not readable CSV: {str(exc).splitlines()[0][:200]}"
        ) from None
    return [Chunk(idx, path, start, n)], names, n


def _iter_json_lines(path: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, line, parsed object) for every non-blank line."""
    with open(path, encoding="utf-8-sig") as fh:  # a byte-order mark is allowed
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DPCoreError(f"input file {path!r}, line {i}: not JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise DPCoreError(
                    f"input file {path!r}, line {i}: a JSON {type(obj).__name__}, not an object"
                )
            yield i, line.rstrip("\r\n"), obj


def _check_json_text(path: str, line_no: int, obj: dict[str, Any], text_column: str) -> str | None:
    if text_column not in obj:
        raise _missing_column(f"{path}, line {line_no}", text_column, list(obj))
    v = obj[text_column]
    if v is not None and not isinstance(v, str):
        raise DPCoreError(
            f"column {text_column!r} of {path!r} is not text: line {line_no} holds a JSON "
            f"{type(v).__name__}; choose the text column with --text-column"
        )
    return v


def _plan_jsonl(path: str, text_column: str, idx: int, start: int) -> tuple[list[Chunk], list[str], int]:
    n = 0
    names: list[str] = []
    try:
        for line_no, _line, obj in _iter_json_lines(path):
            if n == 0:
                names = list(obj)
            _check_json_text(path, line_no, obj, text_column)
            n += 1
    except UnicodeDecodeError as exc:
        raise DPCoreError(f"input file {path!r} is not UTF-8 text (bad byte at offset {exc.start})") from None
    return [Chunk(idx, path, start, n)], names, n


def plan_input(
    spec: str | os.PathLike[str], text_column: str, *, parquet_chunk_rows: int = 200_000
) -> InputPlan:
    """Find and check every input file; count rows; cut the reading chunks.

    Raises
    ------
    DPCoreError
        No file, mixed formats, an empty or damaged file, a missing or non-text column.
    """
    if not isinstance(text_column, str) or not text_column:
        raise DPCoreError("--text-column must name a column")
    files = find_files(spec)
    formats = {f: file_format(f) for f in files}
    kinds = sorted(set(formats.values()))
    if len(kinds) > 1:
        raise DPCoreError(f"the input mixes formats ({', '.join(kinds)}); give files of one format")
    fmt = kinds[0]
    chunks: list[Chunk] = []
    rows: list[int] = []
    columns: list[str] | None = None
    start = 0
    for idx, f in enumerate(files):
        try:
            size = os.path.getsize(f)
        except OSError as exc:
            raise DPCoreError(f"input file {f!r} cannot be read: {exc.strerror}") from None
        if size == 0:
            raise DPCoreError(f"input file {f!r} is empty")
        if fmt == "parquet":
            ch, names, n = _plan_parquet(f, text_column, idx, start, parquet_chunk_rows)
        elif fmt == "csv":
            ch, names, n = _plan_csv(f, text_column, idx, start)
        else:
            ch, names, n = _plan_jsonl(f, text_column, idx, start)
        if n == 0:
            raise DPCoreError(f"input file {f!r} has no rows")
        if fmt != "jsonl":
            if columns is None:
                columns = names
            elif names != columns:
                raise DPCoreError(f"input file {f!r} has columns {names}, unlike {files[0]!r} ({columns})")
        chunks.extend(ch)
        rows.append(n)
        start += n
    return InputPlan(tuple(files), fmt, text_column, tuple(rows), tuple(chunks), tuple(columns or ()))


def _with_rows(table: Any, start: int) -> Any:
    import pyarrow as pa

    return table.append_column(ROW_COLUMN, pa.array(np.arange(start, start + table.num_rows, dtype=np.int64)))


def read_chunk(plan: InputPlan, chunk: Chunk, batch_size: int) -> Iterator[Any]:
    """Tables of at most ``batch_size`` rows of ``chunk``, with the row-index column."""
    import pyarrow as pa

    row = chunk.start_row
    if plan.format == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(chunk.path)
        for b in pf.iter_batches(batch_size=batch_size, row_groups=list(chunk.row_groups or ())):
            t = pa.Table.from_batches([b])
            yield _with_rows(t, row)
            row += t.num_rows
    elif plan.format == "csv":
        names = _csv_names(chunk.path)
        buf: list[Any] = []
        n = 0
        for b in _csv_reader(chunk.path, names):
            buf.append(b)
            n += b.num_rows
            while n >= batch_size:
                t = pa.Table.from_batches(buf)
                head, tail = t.slice(0, batch_size), t.slice(batch_size)
                yield _with_rows(head.combine_chunks(), row)
                row += batch_size
                buf, n = tail.to_batches(), tail.num_rows
        if n:
            yield _with_rows(pa.Table.from_batches(buf).combine_chunks(), row)
    else:
        lines: list[str] = []
        texts: list[str | None] = []
        for line_no, line, obj in _iter_json_lines(chunk.path):
            texts.append(_check_json_text(chunk.path, line_no, obj, plan.text_column))
            lines.append(line)
            if len(lines) == batch_size:
                yield _json_table(plan.text_column, texts, lines, row)
                row += len(lines)
                lines, texts = [], []
        if lines:
            yield _json_table(plan.text_column, texts, lines, row)


def _json_table(text_column: str, texts: list[str | None], lines: list[str], start: int) -> Any:
    import pyarrow as pa

    t = pa.table(
        {text_column: pa.array(texts, type=pa.string()), RAW_COLUMN: pa.array(lines, type=pa.string())}
    )
    return _with_rows(t, start)


class OutputFolder:
    """Write part files and the manifest into a temporary folder; publish it by one rename.

    Use as a context manager: leaving the block with an exception (including Ctrl-C) removes the
    temporary folder; :meth:`commit` renames it to the output folder.
    """

    def __init__(self, path: str | os.PathLike[str], *, inputs: list[str], fmt: str, out_format: str) -> None:
        self.path = check_output_folder(path, inputs=inputs)
        self.fmt = fmt
        self.out_format = out_format
        self.tmp: Path | None = None
        self._writer: Any = None
        self._part: str | None = None
        self._fh: Any = None
        self._schema: Any = None
        self.parts: list[str] = []

    def __enter__(self) -> OutputFolder:
        parent = self.path.parent if str(self.path.parent) else Path(".")
        try:
            self.tmp = Path(
                tempfile.mkdtemp(prefix=f".{self.path.name[:200]}.", suffix=".dpcore-tmp", dir=parent)
            )
        except OSError as exc:
            raise DPCoreError(
                f"cannot create the output next to {str(self.path)!r}: {exc.strerror}"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_part()
        if self.tmp is not None and self.tmp.exists():
            shutil.rmtree(self.tmp, ignore_errors=True)

    # --- parts ---------------------------------------------------------------------------
    def start_part(self, index: int) -> None:
        """Begin ``part-{index:05d}.<ext>`` (closing the previous part)."""
        self._close_part()
        assert self.tmp is not None
        name = f"part-{index:05d}.{EXTENSION[self.out_format]}"
        self._part = name
        self.parts.append(name)
        if self.out_format == "jsonl":
            self._fh = open(self.tmp / name, "w", encoding="utf-8", newline="\n")

    def write(self, table: Any, text_column: str) -> None:
        """Write one sanitized batch (internal columns are dropped here)."""
        import pyarrow as pa

        assert self.tmp is not None and self._part is not None
        if self.fmt == "jsonl":
            texts = table.column(text_column).to_pylist()
            raws = table.column(RAW_COLUMN).to_pylist()
            objs = []
            for raw, text in zip(raws, texts, strict=True):
                obj = json.loads(raw)
                obj[text_column] = text
                objs.append(obj)
            if self.out_format == "jsonl":
                self._fh.write("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs))
                return
            try:
                table = pa.Table.from_pylist(objs, schema=self._schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise DPCoreError(
                    "cannot write this JSONL as Parquet: its fields change type between rows "
                    f"({str(exc)[:160]}); "
                    "use --output-format same"
                ) from None
        else:
            drop = [c for c in table.column_names if c.startswith("__dpcore_")]
            table = table.drop_columns(drop)
        if self._writer is None:
            self._schema = table.schema
            target = str(self.tmp / self._part)
            if self.out_format == "parquet":
                import pyarrow.parquet as pq

                self._writer = pq.ParquetWriter(target, table.schema)
            else:
                import pyarrow.csv as pcsv

                self._writer = pcsv.CSVWriter(
                    target, table.schema, write_options=pcsv.WriteOptions(quoting_style="needed")
                )
        elif table.schema != self._schema:
            table = table.cast(self._schema)
        self._writer.write_table(table)

    def _close_part(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self._schema = None

    def commit(self, manifest: dict[str, Any]) -> Path:
        """Write the manifest, flush everything to disk and rename the folder into place."""
        self._close_part()
        assert self.tmp is not None
        (self.tmp / MANIFEST_NAME).write_text(
            json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        for f in self.tmp.iterdir():
            fd = os.open(f, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.chmod(self.tmp, 0o777 & ~_umask())
        try:
            os.rename(self.tmp, self.path)
        except OSError as exc:
            raise DPCoreError(f"cannot create output folder {str(self.path)!r}: {exc.strerror}") from None
        self.tmp = None
        return self.path


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def check_output_folder(path: str | os.PathLike[str], *, inputs: list[str]) -> Path:
    """Refuse an output folder that exists, is (or holds) an input, or has no parent folder."""
    check_path_length(path, what="output")
    target = Path(path)
    for src in inputs:
        if same_file(target, src) or same_file(target, os.path.dirname(os.path.abspath(src))):
            raise DPCoreError(
                f"output {str(target)!r} is the input {src!r} or its folder; "
                "choose another output so the input is not overwritten"
            )
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DPCoreError(f"output's parent folder {str(parent)!r} does not exist")
    if target.exists() or target.is_symlink():
        raise DPCoreError(f"output {str(target)!r} already exists; remove it or choose a new folder name")
    return target
