"""How the listings a request matches are found: from the columnar index when it is of the
mirror's current generation, else through the SQLite planner (`sqlplan.py`), and the rows
read back from SQLite and from the archive beside it. Both engines give the same answers.
Plans, envelopes and links are the replica's (`replica.py`); this module knows only values
parsed from the parameter table."""

from __future__ import annotations

import sqlite3
import time
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import MirrorBusy
from ..store.fields import iso_timestamp
from ..store.schema import OPEN, connect
from . import aggregates, sqlplan
from .aggregates import ChartCounts
from .index_keeper import IndexKeeper
from .records import LISTING_SELECT, LISTING_STORED

if TYPE_CHECKING:
    from .mirror import Mirror

__all__ = ["ListingSearch", "stream"]


class ListingSearch:
    """The listing reads of one `Mirror`: matches, counts and pages by either engine."""

    def __init__(self, mirror: Mirror, indexes: IndexKeeper):
        self.mirror, self.indexes = mirror, indexes
        self.local = threading.local()  # per thread: which engine answered last, the table's size

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection inside one read transaction: everything read in it
        (the generation, the trigram matches, the page's rows) is of one generation."""
        conn = self.mirror.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def sql(self, values: Mapping[str, Any], now: datetime) -> sqlplan.DomainSql:
        return sqlplan.domain_sql(values, now, closed_after_now=self.closed_after(now))

    def closed_after(self, now: datetime) -> bool:
        """Whether a listing closed after `now` (a clock set in the past): then a live request
        may match closed rows, and neither the live part nor the open-only index serve it."""
        conn = self.mirror.connection()
        row = conn.execute("SELECT 1 FROM listings WHERE closed_at > ? LIMIT 1", [iso_timestamp(now)]).fetchone()
        return row is not None

    def open_term(self, now: datetime) -> str:
        """`closed_at IS NULL AND ` when it is implied by "live" (no listing closed after
        `now`): stated, it lets the listing indexes (open listings only) serve."""
        return "" if self.closed_after(now) else f"{OPEN} AND "

    def _scope_rows(self, conn: sqlite3.Connection) -> int:
        cached = getattr(self.local, "scope", None)
        generation = self.mirror.generation()
        if cached is None or cached[0] != generation:
            cached = (generation, conn.execute("SELECT count(*) FROM listings").fetchone()[0] or 1)
            self.local.scope = cached
        return cached[1]

    def matches(self, conn: sqlite3.Connection, values: Mapping[str, Any], now: datetime) -> tuple[Any, Any]:
        """(index, mask) of the request from the columnar index, or (None, None) when the
        SQLite planner must answer (no current index, or a filter it cannot hold)."""
        from .columnar import Unsupported

        part = "all" if values.get("include_closed") or self.closed_after(now) else "live"
        index = self.indexes.current(self.mirror.generation(), part)
        if index is None and part == "all" and self.archived(conn):
            index = self._index_of_all()  # SQLite alone no longer holds every closed row
        if index is None:
            return None, None
        try:
            return index, index.mask(values, now, _trigram_ids(conn))
        except Unsupported:
            return None, None

    def _index_of_all(self) -> Any:
        """The `all` part, built while an archive or a load may be writing: each of its batches
        spoils a build, so builds are tried again for up to a minute, then MirrorBusy says so."""
        waited = 0.0
        for pause in (0.0, 0.5, 1, 2, 4, 8, 15, 30):
            time.sleep(pause)
            waited += pause
            try:
                return self.indexes.refresh("all")
            except RuntimeError:  # the mirror changed while it was read
                continue
        raise MirrorBusy(
            f"{self.mirror.path}: the closed listings could not be read: the mirror kept changing for "
            f"{waited:.0f} s (an archive or a load is writing); ask again when it is done"
        )

    @staticmethod
    def archived(conn: sqlite3.Connection) -> bool:
        """Whether listings have been moved to the archive or packed (then closed rows are read from both)."""
        found = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM archive_parts WHERE tbl = 'listings') OR EXISTS (SELECT 1 FROM packed_listings)"
        ).fetchone()[0]
        return found == 1

    def rows_by_id(self, conn: sqlite3.Connection, ids: list[int]) -> list[tuple]:
        """The listings of these ids (LISTING_SELECT), in the order given: from SQLite, and
        from the archive those it no longer holds."""
        path = self.mirror.path

        def from_archive(missing: list[int]) -> list[tuple]:
            from ..store.parquet_archive import archived_rows  # only when SQLite lacks some: most reads never do

            return archived_rows(path, "listings", "id", missing, list(LISTING_STORED), conn=conn)

        return sqlplan.rows_by_id(conn, ids, from_archive)

    @contextmanager
    def _answering(self, values: Mapping[str, Any]) -> Iterator[tuple[sqlite3.Connection, datetime, Any, Any]]:
        """Inside one read (`snapshot`): the connection, the moment, and the request's (index,
        mask) (`matches`); which engine answers is noted for `Mirror.answered_by`."""
        now = self.mirror.now()
        with self.snapshot() as conn:
            index, mask = self.matches(conn, values, now)
            self.local.answered_by = "sqlite" if mask is None else "columnar"
            yield conn, now, index, mask

    def total_and_page(self, values: Mapping[str, Any], limit: int, offset: int) -> tuple[int, list[tuple]]:
        """The total of matches and the page's rows (LISTING_SELECT)."""
        with self._answering(values) as (conn, now, index, mask):
            if mask is not None:
                ids = index.page(mask, values.get("sort"), offset, limit)
                return int(mask.sum()), self.rows_by_id(conn, ids.tolist())
            sql = self.sql(values, now)
            return sqlplan.count_and_page(conn, sql, limit, offset, lambda: self._scope_rows(conn))

    def cursor_page(self, values: Mapping[str, Any], after_id: int, limit: int) -> tuple[int, list[tuple]]:
        """The total of matches and up to `limit` rows with id > after_id, by id."""
        with self._answering(values) as (conn, now, index, mask):
            if mask is not None:
                start = int(index.arrays["id"].searchsorted(after_id, side="right"))
                ids = index.arrays["id"][start + mask[start:].nonzero()[0][:limit]]
                return int(mask.sum()), self.rows_by_id(conn, ids.tolist())
            sql = self.sql(values, now)
            rows = conn.execute(
                f"SELECT {LISTING_SELECT} FROM listings WHERE {sql.where} AND id > ? ORDER BY id LIMIT ?",
                [*sql.args, after_id, limit],
            ).fetchall()
            return sqlplan.count(conn, sql), rows

    def every_match(
        self, values: Mapping[str, Any], record: Callable[[tuple], dict[str, Any]]
    ) -> Iterator[dict[str, Any]]:
        """Every matching listing (no paging) in the request's order, as `record` makes it,
        streamed: closed ones in the archive too when the request may reach them."""
        sql = self.sql(values, self.mirror.now())
        if not sql.open_only and self.archived(self.mirror.connection()):
            return self._with_archive(values, record)
        order = f"SELECT {LISTING_SELECT} FROM listings WHERE {sql.where} ORDER BY {sql.order}"
        return stream(self.mirror.path, order, sql.args, record)

    def _with_archive(
        self, values: Mapping[str, Any], record: Callable[[tuple], dict[str, Any]]
    ) -> Iterator[dict[str, Any]]:
        """Every match, closed ones in the archive too, in the request's order: the order from
        the `all` index, the rows read a thousand at a time."""
        with self.snapshot() as conn:
            index, mask = self.matches(conn, values, self.mirror.now())
            ids = index.page(mask, values.get("sort"), 0, int(mask.sum())).tolist()

        def rows() -> Iterator[dict[str, Any]]:
            for start in range(0, len(ids), 1000):
                with self.snapshot() as conn:
                    yield from map(record, self.rows_by_id(conn, ids[start : start + 1000]))

        return rows()

    def sampled_ids(self, values: Mapping[str, Any], sample: int) -> list[int] | None:
        """The ids a sample of about `sample` matches keeps (matches with `id % step = 0`,
        step = ceil(total / sample)) in the query's order, from the columnar index; None when
        SQLite must answer. Reading those rows by id then costs milliseconds, not a scan."""
        with self.snapshot() as conn:
            index, mask = self.matches(conn, values, self.mirror.now())
        if mask is None:
            return None
        step = max(1, -(-int(mask.sum()) // sample))
        if step > 1:
            mask = mask & (index.arrays["id"] % step == 0)
        return index.page(mask, values.get("sort"), 0, int(mask.sum())).tolist()

    def end_day_counts(self, values: Mapping[str, Any]) -> dict[date, int]:
        """Matching listings per auction-end day (UTC, as `substr(auction_end_date, 1, 10)`)."""
        import numpy as np

        now = self.mirror.now()
        with self.snapshot() as conn:
            index, mask = self.matches(conn, values, now)
            ends = None if index is None else index.arrays.get("auction_end_date")
            usable = mask is not None and ends is not None and "auction_end_date" not in index.meta["unusable"]
            self.local.answered_by = "columnar" if usable else "sqlite"
            if not usable:
                sql = self.sql(values, now)
                rows = conn.execute(
                    f"SELECT substr(auction_end_date, 1, 10), count(*) FROM listings WHERE ({sql.where}) "
                    "AND auction_end_date IS NOT NULL GROUP BY 1",
                    list(sql.args),
                )
                return {date.fromisoformat(day): n for day, n in rows}
        assert ends is not None  # usable
        seconds = ends[mask]
        seconds = seconds[seconds != np.iinfo(seconds.dtype).min].astype(np.int64)  # NULL: no end date
        days, counts = np.unique(seconds // 86400, return_counts=True)
        epoch = date(1970, 1, 1)
        return {epoch + timedelta(days=int(d)): int(n) for d, n in zip(days, counts)}

    def chart_counts(self, values: Mapping[str, Any]) -> ChartCounts:
        """`aggregates.ChartCounts` over every match: from the columnar index when it holds
        the request, else by `GROUP BY` in SQLite; both give the same counts."""
        now = self.mirror.now()
        with self.snapshot() as conn:
            index, mask = self.matches(conn, values, now)
            if mask is not None and aggregates.index_holds(index):
                self.local.answered_by = "columnar"
                return aggregates.from_index(index, mask, now.date())
            self.local.answered_by = "sqlite"
            sql = self.sql(values, now)
            return aggregates.from_sql(conn, sql.where, list(sql.args), now.date())


def _trigram_ids(conn: sqlite3.Connection) -> Callable[[str, str, int, int], Any]:
    import numpy as np

    def ids(table: str, match: str, low: int, high: int) -> Any:
        rows = conn.execute(
            f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? AND rowid BETWEEN ? AND ?", [match, low, high]
        ).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    return ids


def stream(path: str, sql: str, args: Any, record: Callable[[tuple], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The rows of `sql` as `record` makes them, a thousand at a time, on a connection of their
    own: a slow consumer never holds the caller's connection, and a sort with no index spills
    to disk there, so memory stays flat for any export."""
    conn = connect(path, readonly=True)
    conn.execute("PRAGMA temp_store=FILE")

    def rows() -> Iterator[dict[str, Any]]:
        try:
            cursor = conn.execute(sql, args)
            while batch := cursor.fetchmany(1000):
                for row in batch:
                    yield record(row)
        finally:
            conn.close()

    return rows()
