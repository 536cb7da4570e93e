"""A feed file's CSV (or other delimited text) read row by row: its header and rows
(`csv_table`, `CsvRows`), its records with their digests (`csv_records`), never more than the
file's `Bounds` allow (`feed_file`)."""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from .common import UNIT_SEPARATOR, BadRow, IngestError, OnBadRow, Row, bad_line, text_digest
from .feed_file import FeedFile

__all__ = ["header_key", "csv_table", "CsvRows", "csv_records", "MAX_COLUMNS"]


def header_key(name: str) -> str:
    """A header cell compared loosely: `Domain Name`, `domainName`, `domain_name` -> `domainname`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


MAX_COLUMNS = 1_000  # a feed's CSV has a few dozen (Namecheap's 25)
_CELL_BYTES = 64  # what a cell costs in memory beside its text (a str object, its place in a list)


class CsvRows:
    """A CSV's data rows as (line, cells), read as they are used; `cut_line` is the last row's
    line when the file ends without its line end (set when that row is given): a bad row
    there is a truncated file, not a row to skip."""

    def __init__(self, rows: Callable[["CsvRows"], Iterator[tuple[int, list[str]]]]):
        self.cut_line: int | None = None
        self._rows = rows(self)

    def __iter__(self) -> "CsvRows":
        return self

    def __next__(self) -> tuple[int, list[str]]:
        return next(self._rows)


def csv_table(feed: FeedFile, *, delimiters: str = ",;\t|") -> tuple[list[str], CsvRows]:
    """A delimited file's header and its data rows as (line, cells), read as they are used.
    The delimiter is the one of `delimiters` the header line uses most. A last row cut short
    (no line end and fewer cells than the header) means the file is truncated: an
    `IngestError` when the rows reach it (a load in one transaction then writes nothing).
    A field longer than the feed's bounds is refused (the csv module's field limit is set to them)."""
    first = feed.first_line()
    delimiter = max(delimiters, key=first.count)
    state = {"terminated": True}

    def text() -> Iterator[str]:
        for _, lines, complete in feed.blocks():
            yield from map(_with_end, itertools.islice(lines, len(lines) - 1))  # each with its line end, at C speed
            state["terminated"] = complete
            yield lines[-1] + "\n" if complete else lines[-1]

    csv.field_size_limit(feed.bounds.field)
    reader = csv.reader(text(), delimiter=delimiter, skipinitialspace=True)

    def unreadable(exc: csv.Error) -> IngestError:
        if "field larger than field limit" in str(exc):
            return feed.bounds.too_long(feed.name, reader.line_num, "a field")
        return IngestError(feed.name, reader.line_num, f"unreadable CSV ({exc})", "check the file's quoting")

    header: list[str] | None = None
    try:
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                header = [c.strip() for c in cells]
                break
    except csv.Error as exc:
        raise unreadable(exc) from None
    if header is None:
        raise IngestError(feed.name, 1, "no header line", "pass the feed's CSV export with its header")
    width = len(header)
    if width > MAX_COLUMNS:
        raise IngestError(
            feed.name,
            reader.line_num,
            f"the header has {width:,} columns, more than the {MAX_COLUMNS:,} a feed file may have",
            "this is not a feed's export (theirs have a few dozen): check the address",
        )

    def rows(table: CsvRows) -> Iterator[tuple[int, list[str]]]:
        held: tuple[int, list[str]] | None = None  # one row behind: the last is checked before it is given
        try:
            for cells in reader:
                if not cells or not (cells[0].strip() or any(map(str.strip, cells))):  # a blank row
                    continue
                if held is not None:
                    yield held
                held = (reader.line_num, cells)
        except csv.Error as exc:
            raise unreadable(exc) from None
        if held is not None:
            if not state["terminated"] and len(held[1]) < width:
                raise IngestError(
                    feed.name,
                    held[0],
                    f"the last row stops after {len(held[1])} of {width} columns",
                    "the file is truncated: download it again",
                )
            if not state["terminated"]:
                table.cut_line = held[0]
            yield held

    return header, CsvRows(rows)


def _with_end(line: str) -> str:
    return line + "\n"


def csv_records(
    feed: FeedFile,
    header: list[str],
    rows: CsvRows,
    fields: list[str | None],
    kind: str,
    make: Callable[[dict[str, str], dict[str, str]], dict[str, Any]],
    on_bad_row: OnBadRow,
    *,
    key: bytes,
) -> Iterator[Row]:
    """The rows of a CSV whose header cells name `fields` (None: a column without one), each
    with the digest of its cells (`key`: `reading_key`) and its record made when asked
    (`Row.made`): `make(mapped, original)`, `mapped` by field and `original` by header. A row
    of another width is skipped here; one `make` refuses (`BadRow`) where it is made."""
    width, name = len(header), feed.name
    picked = [(i, f) for i, f in enumerate(fields) if f is not None]

    def record(cells: list[str]) -> dict[str, Any]:
        return make({f: cells[i] for i, f in picked}, dict(zip(header, cells)))

    for line, cells in rows:
        cut = line == rows.cut_line
        if len(cells) != width:
            bad_line(name, line, BadRow(f"{len(cells)} fields, the header has {width}"), not cut, on_bad_row)
            continue
        joined = UNIT_SEPARATOR.join(cells)
        yield Row(
            kind,
            name,
            line,
            None,
            digest=text_digest(joined, key),
            make=partial(record, cells),
            cut=cut,
            size=len(joined) + _CELL_BYTES * width,
        )
