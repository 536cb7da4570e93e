"""How records become flat files (CSV, Parquet) in every shell that writes them. In Parquet,
moments are timestamps (UTC) and days dates, so every engine compares them as they are."""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from .errors import BadInput

__all__ = [
    "csv_cell",
    "csv_chunks",
    "OutputRefused",
    "output_target",
    "replace_atomically",
    "not_a_folder",
    "file_in_the_way",
    "format_of",
    "parquet_schema",
    "parquet_table",
    "moments_array",
    "write_csv",
    "write_jsonl",
    "write_parquet",
]

log = logging.getLogger("toolkit.export")


def csv_cell(value: Any) -> Any:
    """A record value as one flat cell: arrays and objects as JSON text, the rest as is."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value


def parquet_schema(columns: Mapping[str, str]) -> Any:
    """The Arrow schema of records whose fields have these kinds (docs/reference/fields.md):
    moments as timestamps in UTC, days as dates, arrays and objects as JSON text."""
    import pyarrow as pa

    types = {
        "int": pa.int64(),
        "num": pa.float64(),
        "str": pa.string(),
        "bool": pa.bool_(),
        "date": pa.date32(),
        "datetime": pa.timestamp("ms", tz="UTC"),
        "array": pa.string(),
        "object": pa.string(),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns.items()])


def parquet_table(rows: Sequence[Mapping[str, Any]], schema: Any) -> Any:
    """Records (moments as the API's text, `2026-01-14T16:00:00Z`) as an Arrow table of `schema`."""
    import pyarrow as pa

    arrays = []
    for field in schema:
        values = [csv_cell(row.get(field.name)) for row in rows]
        if pa.types.is_timestamp(field.type) or pa.types.is_date(field.type):
            arrays.append(
                moments_array(values, field.type, field.name, "correct that value in the mirror, or export CSV or JSON")
            )
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def moments_array(
    values: Sequence[str | None], kind: Any, column: str, fix: str = "correct that value in the mirror"
) -> Any:
    """Moments as the mirror writes them (`2026-01-14T16:00:00Z`; a fraction of a second, as
    feeds loaded before wrote it, is kept to the millisecond) or days, as an Arrow array of
    `kind` (a timestamp or a date); a value that is neither: BadInput naming it and `fix`."""
    import pyarrow as pa

    text = pa.array(values, type=pa.string())
    try:
        return text.cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        if pa.types.is_timestamp(kind):  # more digits than the unit holds: read finer, then cut
            return text.cast(pa.timestamp("us", tz=kind.tz)).cast(kind, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    for value in values:
        try:
            pa.array([value], type=pa.string()).cast(
                pa.timestamp("us", tz="UTC") if pa.types.is_timestamp(kind) else kind
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            shape = "a UTC moment like 2026-01-14T16:00:00Z" if pa.types.is_timestamp(kind) else "a day like 2026-01-14"
            raise BadInput(f"{column} holds {value!r}, not {shape}: {fix}") from None
    raise BadInput(f"{column}: its values cannot be written as {kind}")


def csv_chunks(
    rows: Iterator[Mapping[str, Any]], empty_header: Sequence[str], *, chunk_bytes: int = 64 * 1024
) -> Iterator[bytes]:
    """Records as UTF-8 CSV in pieces of about `chunk_bytes`, for a response or a file
    streamed in constant memory. The header is the first record's fields (`empty_header`
    when there is none). An error while reading is logged and raised again, so the
    connection is cut: a client never mistakes a truncated export for a whole one. The
    rows' iterator is closed at the end (its connection with it)."""
    buffer = io.StringIO()
    writer: csv.DictWriter | None = None
    try:
        for row in rows:
            if writer is None:
                writer = csv.DictWriter(buffer, fieldnames=list(row), extrasaction="ignore")
                writer.writeheader()
            writer.writerow({k: csv_cell(v) for k, v in row.items()})
            if buffer.tell() >= chunk_bytes:
                yield buffer.getvalue().encode("utf-8")
                buffer.seek(0)
                buffer.truncate()
        if writer is None:
            csv.writer(buffer).writerow(empty_header)
        if buffer.tell():
            yield buffer.getvalue().encode("utf-8")
    except Exception:
        log.exception("export stream failed")
        raise
    finally:
        close = getattr(rows, "close", None)
        if close:
            close()


# What `edt export --out FILE` writes when no --format is given: the file's extension.
EXTENSION_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def format_of(out: str) -> str | None:
    """The export format `out`'s extension names (csv, jsonl, parquet), or None."""
    return EXTENSION_FORMATS.get(Path(out).suffix.lower()) if out != "-" else None


class OutputRefused(BadInput):
    """`--out` names something export must not replace (a device, a FIFO, a folder...)."""


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def output_target(out: str, *, mirror: str | os.PathLike[str] | None = None) -> tuple[Path | None, str | None]:
    """Where `--out OUT` writes: (None, None) for `-` (standard output), else the regular file
    to replace atomically and, when OUT is a symbolic link, a note saying it was followed.

    Only regular files are written: a device, FIFO, socket or folder at OUT (or at the end of
    the link) raises `OutputRefused`, as does a missing folder, or the `mirror` file itself or
    one beside it that is its own (`mirror.db-wal`, `mirror.db.archive/...`). A link is
    followed (its target is replaced, the link stays), never replaced by a file."""
    if out == "-":
        return None, None
    path = Path(out)
    note = None
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        note = f"--out {out} is a symbolic link: writing to its target {target}"
        path = target
    if mirror is not None:
        own = Path(os.path.realpath(mirror))
        written = Path(os.path.realpath(path))
        for place in (written, *written.parents):
            if place.parent == own.parent and (
                place.name == own.name or place.name.startswith((own.name + "-", own.name + "."))
            ):
                raise OutputRefused(f"--out {out}: that is the mirror's own file ({place}); export to another path")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:  # a folder on the way is a file
        raise OutputRefused(not_a_folder("--out", out)) from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise OutputRefused(
            f"--out {out}: {kind}; export writes regular files only (--out - streams to standard output)"
        )
    if not path.parent.is_dir():
        raise OutputRefused(f"--out {out}: folder {path.parent} does not exist; create it or choose another path")
    return path, note


def file_in_the_way(path: str | os.PathLike[str], *, itself: bool = False) -> Path | None:
    """The first of `path`'s folders (and `path` itself, with `itself`: a folder to be) that is
    a file (`x.txt` in `x.txt/out.csv`), else None."""
    chain = [*reversed(Path(path).parents), *([Path(path)] if itself else [])]
    return next((p for p in chain if p.exists() and not p.is_dir()), None)


def not_a_folder(option: str, out: str | os.PathLike[str]) -> str:
    """The line for a path one of whose folders is a regular file (`x.txt/out.csv`): which
    one, and the fix; said where Python would say `[Errno 20] Not a directory`."""
    blocker = file_in_the_way(out) or Path(out).parent
    return (
        f"{option} {out}: {blocker} is a file, not a folder; choose a path in an existing folder "
        f"(or move {blocker} away)"
    )


def replace_atomically(target: Path, write: Callable[[Path], int]) -> int:
    """Calls `write(partial)` on a hidden file beside `target`, then renames it over `target`
    (keeping the replaced file's permissions): readers see the old file or the new one, never
    half of one. An unwritable folder raises `OutputRefused` saying so."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.touch()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputRefused(
            f"--out {target}: cannot write in folder {target.parent} ({reason}); "
            "choose a writable folder, or --out - for standard output"
        ) from None
    try:
        count = write(partial)
        if target.exists():
            shutil.copymode(target, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return count


def write_csv(rows: Iterable[Mapping[str, Any]], columns: list[str], out: TextIO) -> int:
    """Records to CSV with a header, cells as `csv_cell` writes them; returns how many."""
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow({k: csv_cell(row.get(k)) for k in columns})
        count += 1
    return count


def write_jsonl(rows: Iterable[Mapping[str, Any]], out: TextIO) -> int:
    """Records as JSON Lines, one a line; returns how many."""
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_parquet(rows: Iterator[dict[str, Any]], columns: Mapping[str, str], path: Any) -> int:
    """Records to Parquet (typed by `columns`), written 10,000 rows at a time; returns how many."""
    import pyarrow.parquet as pq

    schema = parquet_schema(columns)
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == 10000:
                writer.write_table(parquet_table(batch, schema))
                count += len(batch)
                batch = []
        if batch or count == 0:
            writer.write_table(parquet_table(batch, schema))
            count += len(batch)
    return count
