"""`Mirror`: the public Python API every shell uses (CLI, HTTP replica, MCP, app, notebooks).

It validates a request against the parameter tables, applies the plan rules, and answers
from the columnar index (`columnar.py`) when the index is of the mirror's current
generation, else through the SQLite planner (`sqlplan.py`); both give the same answers. It
knows nothing of HTTP: plan rules and errors come back as `ApiError` with the status and
body the REST API answers (docs/reference/semantics.md, plans.md and errors.md).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..config import load_settings
from ..errors import MirrorMissing, cursor_not_available, invalid, not_found
from ..plans import normalize_plan, require
from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.feed_catalog import feed_freshness
from ..store.jobs import freshness
from ..store.schema import DEAL_RATIO, OPEN, SCHEMA_VERSION, connect, ensure_schema
from ..store.access import opens_read_only
from .params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS, RESULT_PARAMS, Context, contradictions, parse_params
from . import aggregates, sqlplan
from .aggregates import ChartCounts
from .envelope import envelope as _envelope
from .envelope import query_string as _query_string
from .records import (
    FREE_FIELDS,
    FREE_VISIBLE_NAMES,
    LISTING_OUTPUT,
    LISTING_SELECT,
    LISTING_STORED,
    PENDING_OUTPUT,
    PENDING_SELECT,
    listing_record,
    pending_record,
    select_columns,
)

__all__ = ["Mirror", "ENGINES"]

# How a Mirror answers `/api/domains` requests:
#   auto        the columnar index when the one saved beside the mirror is current, else SQLite
#   background  as auto, and a stale index is rebuilt in a background thread (long-lived
#               processes: edt serve, the app)
#   columnar    a stale index is rebuilt before answering (benchmarks, tests)
#   sqlite      never the columnar index
ENGINES = ("auto", "background", "columnar", "sqlite")
# A background refresh starts at most this often. It reads only the rows written since
# (about half a second at full scale); a sync commits a page every few seconds.
REBUILD_INTERVAL = 2.0
# Parameters that page or order an answer; aggregates count every match whatever they say.
_PAGING = ("sort", "page", "per_page", "limit", "after_id")


# Background rebuilds still running (a process may end during one: `edt mcp` when its client
# hangs up, a server stopped): waited for at exit, so the interpreter's shutdown never cuts
# their native code (Arrow, NumPy) off mid-call, which aborts the process.
_REBUILDS: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


@atexit.register
def _finish_rebuilds() -> None:
    for thread in list(_REBUILDS):
        thread.join(timeout=60)


def _clock_from_env() -> Callable[[], datetime]:
    """The real clock, or the moment `EDT_NOW` names (`config.frozen_now`)."""
    from ..config import frozen_now

    moment = frozen_now()
    return (lambda: moment) if moment is not None else (lambda: datetime.now(timezone.utc))


class Mirror:
    """The local mirror: opens (and creates or upgrades) a SQLite database.

    `plan` is the plan answers are given as when a call names none: `EDT_PLAN`, else the
    top plan (it is your own mirror). `clock` returns the current UTC time (tests freeze it).
    Connections are per thread; a `readonly` mirror never writes and never takes a lock.
    `engine` says how `/api/domains` requests are answered (see ENGINES; default
    `EDT_ENGINE`, else `auto`). Without a `clock`, `EDT_NOW` (an ISO 8601 moment) answers as
    of that moment: what was live then, dates relative to it. Without a `path`, the mirror
    the commands open (`config.mirror_path`: `EDT_DB`, the config file, else `data/mirror.db`
    here or in the nearest folder above holding one). A missing mirror is `MirrorMissing`
    (a reader never makes one); `create=True` makes an empty one there, as a load does.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        plan: str | None = None,
        readonly: bool = False,
        clock: Callable[[], datetime] | None = None,
        engine: str | None = None,
        create: bool = False,
    ):
        engine = engine or os.environ.get("EDT_ENGINE") or "auto"
        if engine not in ENGINES:
            raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
        self.engine = engine
        # The columnar index in use, by part (`columnar.PARTS`), shared by this Mirror's threads,
        # and the (mtime, size) of each part's file when it was last read.
        self._columnar: dict[str, Any] = {}
        self._columnar_lock = threading.Lock()
        self._columnar_seen: dict[str, tuple[int, int] | None] = {}
        # Background rebuilds, one at a time per part (a slow `all` never holds the live one up).
        self._rebuilding: dict[str, threading.Thread] = {}
        self._rebuilt_at: dict[str, float] = {}
        settings = load_settings(db=os.fspath(path) if path is not None else None, plan=plan)
        self.path = settings.db
        self.plan = settings.plan
        readonly = self.readonly = opens_read_only(self.path, readonly)  # a read-only place opens read-only, said once
        self._clock = clock or _clock_from_env()
        self._local = threading.local()
        if not Path(self.path).is_file() and (readonly or not create):
            raise MirrorMissing(self.path)
        if readonly:
            version = self.connection().execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path}: schema version {version}, this toolkit reads {SCHEMA_VERSION}; "
                    "open it once read-write (any edt command, e.g. `edt status`) to upgrade it"
                )
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            ensure_schema(self.connection())

    # -- plumbing ------------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the mirror."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, readonly=self.readonly)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __enter__(self) -> "Mirror":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        now = self._clock()
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)

    def generation(self) -> int:
        """Changes with every committed write: a cache key for readers."""
        row = self.connection().execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def _plan(self, plan: str | None) -> str:
        try:
            return normalize_plan(plan or self.plan)
        except ValueError as exc:
            raise invalid("plan", str(exc)) from None

    # -- the columnar index --------------------------------------------------------------
    def refresh_index(self, part: str = "live") -> Any:
        """A part of the columnar index of the mirror as it is now (`live` unless asked): the
        one in use or saved beside the mirror when it is current, else refreshed from it (only
        the rows written since are read again) or built whole, saved (kept in memory only
        where that folder cannot be written) and used. Writers call this after a load;
        long-lived readers rebuild by themselves (engine `background`)."""
        from .columnar import index_path, update_index

        generation = self.generation()
        current = self._known_index(part)
        if current is not None and current.generation == generation:
            return current
        index, path = update_index(self.path, current, part=part), index_path(self.path, part)
        try:
            index.save(path)
        except OSError:
            pass  # a read-only folder: this process keeps it in memory
        with self._columnar_lock:
            held = self._columnar.get(part)
            if held is None or held.generation <= index.generation:
                self._columnar[part] = index
                with contextlib.suppress(OSError):  # the file just written need not be read back
                    stat = path.stat()
                    self._columnar_seen[part] = (stat.st_mtime_ns, stat.st_size)
        return index

    def refresh_indexes(self) -> Any:
        """After a write: the live part of the columnar index, and the `all` part when one is
        saved beside the mirror (someone asked for closed rows: it stays current for them).
        Returns the live part."""
        from .columnar import index_path

        live = self.refresh_index()
        if index_path(self.path, "all").exists():
            self.refresh_index("all")
        return live

    def _known_index(self, part: str) -> Any:
        """The newest index part this Mirror knows: the one in use, or the saved one when the
        file changed since it was last read."""
        from .columnar import index_path, load_index

        with self._columnar_lock:
            path = index_path(self.path, part)
            try:
                stat = path.stat()
                seen = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                seen = None
            if seen is not None and seen != self._columnar_seen.get(part):
                self._columnar_seen[part] = seen
                loaded = load_index(path, part)
                held = self._columnar.get(part)
                if loaded is not None and (held is None or loaded.generation >= held.generation):
                    self._columnar[part] = loaded
            return self._columnar.get(part)

    def _current_index(self, generation: int, part: str = "live") -> Any:
        """The columnar index part of `generation` if there is one to use now, else None."""
        if self.engine == "sqlite":
            return None
        index = self._columnar.get(part)
        if index is None or index.generation != generation:
            index = self._known_index(part)
        if index is not None and index.generation == generation:
            return index
        if self.engine == "columnar":
            try:
                index = self.refresh_index(part)
            except RuntimeError:  # the mirror kept changing while it was read: SQLite answers
                return None
            return index if index.generation == generation else None
        if self.engine == "background":
            self._rebuild_in_background(part)
        return None

    def _rebuild_in_background(self, part: str) -> None:
        with self._columnar_lock:
            running = part in self._rebuilding and self._rebuilding[part].is_alive()
            if running or time.monotonic() - self._rebuilt_at.get(part, 0.0) < REBUILD_INTERVAL:
                return
            self._rebuilt_at[part] = time.monotonic()

            def rebuild() -> None:
                try:
                    self.refresh_index(part)
                except Exception:  # noqa: BLE001 - the SQLite planner keeps answering
                    pass
                finally:
                    self._rebuilt_at[part] = time.monotonic()

            thread = self._rebuilding[part] = threading.Thread(
                target=rebuild, name=f"edt-columnar-rebuild-{part}", daemon=True
            )
            thread.start()
            _REBUILDS.add(thread)

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection inside one read transaction: everything read in it
        (the generation, the trigram matches, the page's rows) is of one generation."""
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    @staticmethod
    def _trigram_ids(conn: sqlite3.Connection) -> Callable[[str, str, int, int], Any]:
        import numpy as np

        def ids(table: str, match: str, low: int, high: int) -> Any:
            rows = conn.execute(
                f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? AND rowid BETWEEN ? AND ?", [match, low, high]
            ).fetchall()
            return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

        return ids

    # -- /api/domains --------------------------------------------------------------------
    def answered_by(self) -> str | None:
        """Which engine answered this thread's last `/api/domains` request: `columnar` or
        `sqlite` (for benchmarks and tests)."""
        return getattr(self._local, "answered_by", None)

    @staticmethod
    def _check_domain_plan(values: Mapping[str, Any], plan: str, *, cursor: bool = False) -> None:
        if values.get("source") == REGFREE:
            if cursor:
                raise cursor_not_available()
            require(plan, "regfree")

    def _domain_sql(self, values: Mapping[str, Any], plan: str, *, cursor: bool = False) -> sqlplan.DomainSql:
        self._check_domain_plan(values, plan, cursor=cursor)
        return self._sql(values, self.now())

    def _sql(self, values: Mapping[str, Any], now: datetime) -> sqlplan.DomainSql:
        return sqlplan.domain_sql(values, now, closed_after_now=self._closed_after(now))

    def _closed_after(self, now: datetime) -> bool:
        """Whether a listing closed after `now` (a clock set in the past): then a live request
        may match closed rows, and neither the live part nor the open-only index serve it."""
        row = (
            self.connection()
            .execute("SELECT 1 FROM listings WHERE closed_at > ? LIMIT 1", [iso_timestamp(now)])
            .fetchone()
        )
        return row is not None

    def _open_term(self, now: datetime) -> str:
        """`closed_at IS NULL AND ` when it is implied by "live" (no listing closed after
        `now`): stated, it lets the listing indexes (open listings only) serve."""
        return "" if self._closed_after(now) else f"{OPEN} AND "

    def _part(self, values: Mapping[str, Any], now: datetime) -> str:
        """The index part a request reads: `live` unless closed rows may match it."""
        return "all" if values.get("include_closed") or self._closed_after(now) else "live"

    def _scope_rows(self, conn: sqlite3.Connection) -> int:
        cached = getattr(self._local, "scope", None)
        generation = self.generation()
        if cached is None or cached[0] != generation:
            cached = (generation, conn.execute("SELECT count(*) FROM listings").fetchone()[0] or 1)
            self._local.scope = cached
        return cached[1]

    def _matches(self, conn: sqlite3.Connection, values: Mapping[str, Any], now: datetime) -> tuple[Any, Any]:
        """(index, mask) of the request from the columnar index, or (None, None) when the
        SQLite planner must answer (no current index, or a filter it cannot hold)."""
        from .columnar import Unsupported

        part = self._part(values, now)
        index = self._current_index(self.generation(), part)
        if index is None and part == "all" and self._archived(conn):
            index = self.refresh_index("all")  # SQLite alone no longer holds every closed row
        if index is None:
            return None, None
        try:
            return index, index.mask(values, now, self._trigram_ids(conn))
        except Unsupported:
            return None, None

    # -- the archive (toolkit/store/parquet_archive.py): closed listings moved out, read back as one ---------
    def _archived(self, conn: sqlite3.Connection) -> bool:
        """Whether listings have been moved to the archive or packed (then closed rows are read from both)."""
        return (
            conn.execute(
                "SELECT EXISTS (SELECT 1 FROM archive_parts WHERE tbl = 'listings') "
                "OR EXISTS (SELECT 1 FROM packed_listings)"
            ).fetchone()[0]
            == 1
        )

    def _rows_by_id(self, conn: sqlite3.Connection, ids: list[int]) -> list[tuple]:
        """The listings of these ids (LISTING_SELECT), in the order given: from SQLite, and
        from the archive those it no longer holds."""
        from ..store.parquet_archive import archived_rows

        return sqlplan.rows_by_id(
            conn,
            ids,
            lambda missing: archived_rows(self.path, "listings", "id", missing, list(LISTING_STORED), conn=conn),
        )

    def _total_and_page(self, values: Mapping[str, Any], plan: str, limit: int, offset: int) -> tuple[int, list[tuple]]:
        """The total of matches and the page's rows (LISTING_SELECT)."""
        self._check_domain_plan(values, plan)
        now = self.now()
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, now)
            self._local.answered_by = "sqlite" if mask is None else "columnar"
            if mask is not None:
                ids = index.page(mask, values.get("sort"), offset, limit)
                return int(mask.sum()), self._rows_by_id(conn, ids.tolist())
            sql = self._sql(values, now)
            return sqlplan.count_and_page(conn, sql, limit, offset, lambda: self._scope_rows(conn))

    def _cursor_page(self, values: Mapping[str, Any], plan: str, after_id: int, limit: int) -> tuple[int, list[tuple]]:
        """The total of matches and up to `limit` rows with id > after_id, by id."""
        self._check_domain_plan(values, plan, cursor=True)
        now = self.now()
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, now)
            self._local.answered_by = "sqlite" if mask is None else "columnar"
            if mask is not None:
                start = int(index.arrays["id"].searchsorted(after_id, side="right"))
                ids = index.arrays["id"][start + mask[start:].nonzero()[0][:limit]]
                return int(mask.sum()), self._rows_by_id(conn, ids.tolist())
            sql = self._sql(values, now)
            rows = conn.execute(
                f"SELECT {LISTING_SELECT} FROM listings WHERE {sql.where} AND id > ? ORDER BY id LIMIT ?",
                [*sql.args, after_id, limit],
            ).fetchall()
            return sqlplan.count(conn, sql), rows

    def search_domains(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        url: str = "/api/domains",
        strict: bool = True,
    ) -> dict[str, Any]:
        """One page of listings with `/api/domains` semantics, in its envelope (docs/reference/semantics.md)."""
        plan = self._plan(plan)
        require(plan, "domains")
        values = parse_params(DOMAIN_PARAMS, params, strict=strict)
        per_page = values.get("per_page") or values.get("limit") or DOMAIN_PARAMS["per_page"].default
        page = values.get("page", 1)
        today = self.now().date()
        ht = bool(values.get("include_historical_traffic"))
        if "after_id" in values:
            after_id = values["after_id"]
            total, rows = self._cursor_page(values, plan, after_id, per_page + 1)
            has_more = len(rows) > per_page
            data = [listing_record(r, today, historical_traffic=ht) for r in rows[:per_page]]
            envelope = _envelope(data, total=total, page=1, per_page=per_page, url=url, raw=params)
            next_after_id = data[-1]["id"] if data else None
            envelope["links"]["next"] = f"{url}?{_query_string(params, after_id=next_after_id)}" if has_more else None
            envelope["cursor"] = {
                "after_id": after_id,
                "next_after_id": next_after_id,
                "has_more": has_more,
                "order": "id asc",
            }
            return envelope
        total, rows = self._total_and_page(values, plan, per_page, (page - 1) * per_page)
        data = [listing_record(r, today, historical_traffic=ht) for r in rows]
        return _envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)

    def get_domain(self, domain_id: int | str, plan: str | None = None) -> dict[str, Any]:
        """`{"data": record}` for one listing by id (closed ones too), or a 404."""
        plan = self._plan(plan)
        require(plan, "domains")
        text = str(domain_id).strip()
        if not re.fullmatch(r"[0-9]{1,18}", text):  # ids are positive 64-bit integers
            raise not_found()
        key = int(text)
        with self._snapshot() as conn:
            found = self._rows_by_id(conn, [key])
        if not found:
            raise not_found()
        row = found[0]
        record = listing_record(row, self.now().date(), historical_traffic=True)
        if record["source"] == REGFREE:
            require(plan, "regfree")
        return {"data": record}

    def export_rows(
        self, params: Mapping[str, Any] | None = None, plan: str | None = None, *, strict: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Every matching listing (the `/api/domains` filters, no paging), streamed (Business)."""
        plan = self._plan(plan)
        require(plan, "export")
        values = parse_params(DOMAIN_PARAMS, params, strict=strict)
        return self._iter_listings(values, plan)

    def _iter_listings(self, values: Mapping[str, Any], plan: str) -> Iterator[dict[str, Any]]:
        sql = self._domain_sql(values, plan)
        today = self.now().date()
        ht = bool(values.get("include_historical_traffic"))
        if not sql.open_only and self._archived(self.connection()):
            return self._iter_with_archive(values, lambda row: listing_record(row, today, historical_traffic=ht))
        return self._stream(
            f"SELECT {LISTING_SELECT} FROM listings WHERE {sql.where} ORDER BY {sql.order}",
            sql.args,
            lambda row: listing_record(row, today, historical_traffic=ht),
        )

    def domains_df(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        columns: Iterable[str] | None = None,
        sample: int | None = None,
        **filters: Any,
    ):
        """Every matching listing as a pandas DataFrame (the `/api/domains` filters, no paging).

        `columns` picks fields (default all; `age` needs `wayback_first_date`, which is added).
        `sample=N` keeps about N rows when more match: every k-th by id, the same rows each
        time (charts over a broad filter need the shape, not all 500,000 points)."""
        import pandas as pd

        plan = self._plan(plan)
        require(plan, "domains")
        values = parse_params(DOMAIN_PARAMS, {**(params or {}), **filters}, strict=True)
        sql = self._domain_sql(values, plan)
        chosen = select_columns(columns, LISTING_OUTPUT)
        if "age" in chosen and "wayback_first_date" not in chosen:
            chosen.append("wayback_first_date")
        where, args = sql.where, list(sql.args)
        read = [f"{DEAL_RATIO} AS deal" if c == "deal" else c for c in chosen]  # a derived field, as SQL
        sampled = self._sampled_ids(values, sample) if sample else None
        if sampled is not None:  # the columnar index picked (and ordered) the rows `id % step = 0` keeps
            read = read if "id" in chosen else ["id", *read]
            frame = pd.read_sql_query(
                f"SELECT {', '.join(read)} FROM listings WHERE id IN (SELECT value FROM json_each(?))",
                self.connection(),
                params=[json.dumps(sampled)],
            )
            frame = frame.set_index("id", drop=False).loc[sampled].reset_index(drop=True)[chosen]
        else:
            if sample:
                total = self.search_domains({**(params or {}), **filters, "per_page": 1}, plan)["meta"]["total"]
                step = -(-total // sample)
                if step > 1:
                    where, args = f"({where}) AND id % ? = 0", [*args, step]
            frame = pd.read_sql_query(
                f"SELECT {', '.join(read)} FROM listings WHERE {where} ORDER BY {sql.order}",
                self.connection(),
                params=args,
            )
        today = self.now().date()
        for name, kind in LISTING_OUTPUT.items():
            if name not in frame.columns:
                continue
            if kind == "bool":
                frame[name] = frame[name].astype("boolean")
            elif kind in ("array", "object"):
                frame[name] = frame[name].map(lambda v: json.loads(v) if isinstance(v, str) else None)
            elif kind == "int":
                frame[name] = frame[name].astype("Int64")
        if "age" in frame.columns:
            first = frame["wayback_first_date"].astype("string")
            birthday_ahead = (first.str.slice(5) > f"{today.month:02d}-{today.day:02d}").astype("Int64")
            frame["age"] = (today.year - first.str.slice(0, 4).astype("Int64") - birthday_ahead).astype("Int64")
        if not values.get("include_historical_traffic") and "historical_traffic" in frame.columns and columns is None:
            frame = frame.drop(columns=["historical_traffic"])
        return frame

    def results_df(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        ended_after: str | None = None,
        ended_before: str | None = None,
        sold: bool | None = None,
        **filters: Any,
    ):
        """The result of every auction the mirror saw end (`auction_results`, store/results.py)
        as a DataFrame, newest end first: final price (native and EUR), bids, sold, where the
        name went next. The `/api/domains` filters (`params`, `filters`) choose the listings,
        closed or not; `ended_after` / `ended_before` (ISO dates or moments) and `sold` the results."""
        import pandas as pd

        where, args = ["1"], []
        if ended_after:
            where.append("r.ended_at >= ?")
            args.append(str(ended_after))
        if ended_before:
            where.append("r.ended_at < ?")
            args.append(str(ended_before))
        if sold is not None:
            where.append("r.sold = ?")
            args.append(int(bool(sold)))
        frame = pd.read_sql_query(
            f"SELECT r.* FROM auction_results r WHERE {' AND '.join(where)} ORDER BY r.ended_at DESC, r.listing_id",
            self.connection(),
            params=args,
        )
        chosen = {k: v for k, v in {**(params or {}), **filters}.items() if v not in (None, "")}
        if chosen:
            listings = self.domains_df({**chosen, "include_closed": "1"}, plan, columns=["id"])
            frame = frame[frame["listing_id"].isin(listings["id"])].reset_index(drop=True)
        frame["sold"] = frame["sold"].astype(bool)
        for column in ("bids", "next_id"):
            frame[column] = frame[column].astype("Int64")
        return frame

    def auction_result(self, listing_id: int | str) -> dict[str, Any] | None:
        """The result of one auction the mirror saw end (a row of `results_df`): its final
        price, bids, sold or not, where the name went next; None while none is known."""
        cursor = self.connection().execute("SELECT * FROM auction_results WHERE listing_id = ?", [int(listing_id)])
        row = cursor.fetchone()
        if row is None:
            return None
        found = dict(zip([d[0] for d in cursor.description], row))
        found["sold"] = bool(found["sold"])
        return found

    def search_results(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        url: str = "/api/results",
        strict: bool = True,
    ) -> dict[str, Any]:
        """One page of `results_df` as the API's envelope (`GET /api/results`, an extension):
        the listing filters of `/api/domains`, `ended_after`, `ended_before`, `sold`, paging."""
        plan = self._plan(plan)
        require(plan, "domains")
        raw = dict(params or {})
        values = parse_params(RESULT_PARAMS, raw, strict=strict)
        listing = {k: v for k, v in raw.items() if k in values and k in DOMAIN_PARAMS and k not in ("per_page", "page")}
        frame = self.results_df(
            listing,
            plan,
            ended_after=values.get("ended_after"),
            ended_before=values.get("ended_before"),
            sold=True if values.get("sold") else None,
        )
        page, per_page = values.get("page", 1), values.get("per_page", 50)
        chosen = frame.iloc[(page - 1) * per_page : page * per_page]
        data = json.loads(chosen.to_json(orient="records"))
        return _envelope(
            data,
            total=len(frame),
            page=page,
            per_page=per_page,
            url=url,
            raw={k: v for k, v in raw.items() if k in values},
        )

    def _sampled_ids(self, values: Mapping[str, Any], sample: int) -> list[int] | None:
        """The ids `domains_df(sample=...)` keeps (matches with `id % step = 0`, step =
        ceil(total / sample)) in the query's order, from the columnar index; None when SQLite
        must answer. Reading those rows by id then costs milliseconds, not a scan of the mirror."""
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, self.now())
        if mask is None:
            return None
        step = max(1, -(-int(mask.sum()) // sample))
        if step > 1:
            mask = mask & (index.arrays["id"] % step == 0)
        return index.page(mask, values.get("sort"), 0, int(mask.sum())).tolist()

    # -- /api/free/domains ---------------------------------------------------------------
    def free_domains(self, params: Mapping[str, Any] | None = None, *, strict: bool = True) -> dict[str, Any]:
        """The free endpoint: no key, the first names shown, the rest masked, premium metrics omitted."""
        values = parse_params(FREE_PARAMS, params, strict=strict)
        limit = values.get("limit", FREE_PARAMS["limit"].default)
        # Every free filter is one of /api/domains' own (only the source list is shorter),
        # so the same SQL and plans serve; the free tier never reaches regfree rows.
        total, rows = self._total_and_page(values, "enterprise", limit, 0)
        now = self.now()
        data = []
        for index, row in enumerate(rows):
            record = listing_record(row, now.date())
            free = {name: record[name] for name in FREE_FIELDS}
            if index >= FREE_VISIBLE_NAMES:
                free["name"] = "••••••••" + (record["tld"] or "")
                free["purchase_url"] = None
            data.append(free)
        return {
            "data": data,
            "meta": {
                "count": len(data),
                "total_available": total,
                "visible_names": FREE_VISIBLE_NAMES,
                "free_tier": True,
            },
            "note": f"Free tier: the first {FREE_VISIBLE_NAMES} names are shown; Trust Flow, Citation Flow, "
            "topics and Google Business data need a key.",
            "upsell": {
                "message": "Use /api/domains with a Pro key for every name, every metric and 20+ filters.",
                "signup_url": "https://catchdoms.com/register",
                "pro_url": "https://catchdoms.com/pricing",
            },
        }

    # -- /api/pending-delete -------------------------------------------------------------
    def search_pending_delete(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        url: str = "/api/pending-delete",
        strict: bool = True,
    ) -> dict[str, Any]:
        """One page of the pending-delete inventory (Authority+), the reference's semantics."""
        plan = self._plan(plan)
        require(plan, "pending_delete")
        values = parse_params(PENDING_PARAMS, params, strict=strict)
        where, args, order = self._pending_sql(values)
        per_page = values.get("per_page", PENDING_PARAMS["per_page"].default)
        page = values.get("page", 1)
        conn = self.connection()
        total = conn.execute(f"SELECT count(*) FROM pending_delete WHERE {where}", args).fetchone()[0]
        rows = conn.execute(
            f"SELECT {PENDING_SELECT} FROM pending_delete WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, per_page, (page - 1) * per_page],
        ).fetchall()
        data = [pending_record(r) for r in rows]
        return _envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)

    def _pending_sql(self, values: Mapping[str, Any]) -> tuple[str, list[Any], str]:
        """(where, args, order) of a pending-delete query: the one place its SQL is built."""
        today = self.now().date()
        clauses = list(
            sqlplan.filter_clauses(PENDING_PARAMS, values, Context(today=today, table="pending_delete")).values()
        )
        week = values.get("week_end", "all")
        if week != "all":
            clauses.append(("week_end = ?", [week]))
        elif not values.get("include_past"):
            clauses.append(("estimated_drop_date IS NULL OR estimated_drop_date >= ?", [today.isoformat()]))
        where, args = sqlplan.where(clauses)
        order = {
            "drop_date": "(estimated_drop_date IS NULL), estimated_drop_date, id",
            "drop_date_desc": "(estimated_drop_date IS NOT NULL), estimated_drop_date DESC, id",
            "domain": "domain, id",
        }[values.get("sort", "drop_date")]
        return where, args, order

    def export_pending_rows(
        self, params: Mapping[str, Any] | None = None, plan: str | None = None, *, strict: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Every matching pending-delete row (its filters, no paging), streamed (Authority+):
        the records `search_pending_delete` pages through, in its order."""
        plan = self._plan(plan)
        require(plan, "pending_delete")
        where, args, order = self._pending_sql(parse_params(PENDING_PARAMS, params, strict=strict))
        return self._stream(
            f"SELECT {PENDING_SELECT} FROM pending_delete WHERE {where} ORDER BY {order}", args, pending_record
        )

    def _iter_with_archive(
        self, values: Mapping[str, Any], record: Callable[[tuple], dict[str, Any]]
    ) -> Iterator[dict[str, Any]]:
        """Every match, closed ones in the archive too, in the request's order: the order from
        the `all` index, the rows read a thousand at a time."""
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, self.now())
            ids = index.page(mask, values.get("sort"), 0, int(mask.sum())).tolist()

        def rows() -> Iterator[dict[str, Any]]:
            for start in range(0, len(ids), 1000):
                with self._snapshot() as conn:
                    yield from map(record, self._rows_by_id(conn, ids[start : start + 1000]))

        return rows()

    def _stream(self, sql: str, args: Any, record: Callable[[tuple], dict[str, Any]]) -> Iterator[dict[str, Any]]:
        # A connection of its own, so a slow consumer never holds this thread's connection;
        # a sort with no index spills to disk there, so memory stays flat for any export.
        conn = connect(self.path, readonly=True)
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

    def pending_df(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        columns: Iterable[str] | None = None,
        **filters: Any,
    ):
        """Every matching pending-delete row (the /api/pending-delete filters, no paging) as a
        DataFrame; `columns` picks fields (default all)."""
        import pandas as pd

        plan = self._plan(plan)
        require(plan, "pending_delete")
        values = parse_params(PENDING_PARAMS, {**(params or {}), **filters}, strict=True)
        where, args, order = self._pending_sql(values)
        chosen = select_columns(columns, PENDING_OUTPUT)
        return pd.read_sql_query(
            f"SELECT {', '.join(chosen)} FROM pending_delete WHERE {where} ORDER BY {order}",
            self.connection(),
            params=args,
        )

    def day_counts(
        self, params: Mapping[str, Any] | None = None, plan: str | None = None, *, pending: bool = False
    ) -> dict[date, int]:
        """Matching rows per day: auction end dates of listings (the /api/domains filters), or
        estimated drop dates of pending-delete rows (its filters) with `pending=True`."""
        plan = self._plan(plan)
        if pending:
            require(plan, "pending_delete")
            where, args, _ = self._pending_sql(parse_params(PENDING_PARAMS, params, strict=True))
            table, column = "pending_delete", "estimated_drop_date"
        else:
            require(plan, "domains")
            values = parse_params(DOMAIN_PARAMS, params, strict=True)
            counted = self._end_day_counts(values, plan)
            if counted is not None:
                return counted
            sql = self._domain_sql(values, plan)
            where, args, table, column = sql.where, sql.args, "listings", "auction_end_date"
        rows = self.connection().execute(
            f"SELECT substr({column}, 1, 10), count(*) FROM {table} WHERE ({where}) AND {column} IS NOT NULL GROUP BY 1",
            list(args),
        )
        return {date.fromisoformat(day): n for day, n in rows}

    def _end_day_counts(self, values: Mapping[str, Any], plan: str) -> dict[date, int] | None:
        """Matching listings per auction-end day (UTC, as `substr(auction_end_date, 1, 10)`)
        from the columnar index, or None when SQLite must answer."""
        import numpy as np

        self._check_domain_plan(values, plan)
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, self.now())
        ends = None if index is None else index.arrays.get("auction_end_date")
        usable = mask is not None and ends is not None and "auction_end_date" not in index.meta["unusable"]
        self._local.answered_by = "columnar" if usable else "sqlite"
        if not usable:
            return None
        seconds = ends[mask]
        seconds = seconds[seconds != np.iinfo(seconds.dtype).min].astype(np.int64)  # NULL: no end date
        days, counts = np.unique(seconds // 86400, return_counts=True)
        epoch = date(1970, 1, 1)
        return {epoch + timedelta(days=int(d)): int(n) for d, n in zip(days, counts)}

    def chart_counts(self, params: Mapping[str, Any] | None = None, plan: str | None = None) -> ChartCounts:
        """What the TF/CF and archive charts draw, counted over every listing an `/api/domains`
        request matches (paging and sort are ignored): TF x CF cells, the "CF far above TF"
        zone per topic and per source, ages, first-snapshot years, snapshots x age and
        languages (see `aggregates.ChartCounts`). From the columnar index when it is current,
        else by `GROUP BY` in SQLite; both give the same counts."""
        plan = self._plan(plan)
        require(plan, "domains")
        values = parse_params(DOMAIN_PARAMS, params, strict=True)
        values = {k: v for k, v in values.items() if k not in _PAGING}
        self._check_domain_plan(values, plan)
        now = self.now()
        with self._snapshot() as conn:
            index, mask = self._matches(conn, values, now)
            if mask is not None and aggregates.index_holds(index):
                self._local.answered_by = "columnar"
                return aggregates.from_index(index, mask, now.date())
            self._local.answered_by = "sqlite"
            sql = self._sql(values, now)
            return aggregates.from_sql(conn, sql.where, list(sql.args), now.date())

    def live_counts(self) -> dict[str, Any]:
        """Live listings counted per source, TLD (platforms and regfree apart), language and
        topic: what a filter picker or an assistant's `list_filters` shows beside each value."""
        conn = self.connection()
        now = iso_timestamp(self.now())
        live = f"FROM listings WHERE {self._open_term(self.now())}live_until > ?"

        def pairs(sql: str, *args: Any) -> list[tuple[Any, int]]:
            return conn.execute(sql, [now, *args]).fetchall()

        by_tld = f"SELECT tld, count(*) {live} AND source {{}} ? GROUP BY tld ORDER BY 2 DESC, 1"
        return {
            "sources": dict(pairs(f"SELECT source, count(*) {live} GROUP BY source")),
            "tlds": pairs(by_tld.format("!="), REGFREE),
            "regfree_tlds": pairs(by_tld.format("="), REGFREE),
            "languages": pairs(
                f"SELECT language, count(*) {live} AND source != ? AND language IS NOT NULL "
                "GROUP BY language ORDER BY 2 DESC, 1",
                REGFREE,
            ),
            "topics": pairs(
                f"SELECT ttf_topic, count(*) {live} AND source != ? AND ttf_topic IS NOT NULL GROUP BY ttf_topic",
                REGFREE,
            ),
        }

    def listings_named(self, name: str) -> list[tuple[int, str, bool]]:
        """(id, source, live) of every listing of this exact name: live first, platforms before
        regfree, most recently seen first (a name can be listed on several platforms)."""
        name = str(name).strip().lower().rstrip(".")
        with self._snapshot() as conn:
            rows = conn.execute(
                "SELECT id, source, live_until > ? AS live, last_seen_at FROM listings WHERE name = ? "
                "ORDER BY live DESC, source = ?, last_seen_at DESC, id DESC LIMIT 20",
                [iso_timestamp(self.now()), name, REGFREE],
            ).fetchall()
            if self._archived(conn):  # archived listings closed long ago: never live
                from ..store.parquet_archive import archived_rows

                closed = archived_rows(
                    self.path, "listings", "name", [name], ["id", "source", "last_seen_at"], conn=conn
                )
                held = {r[0] for r in rows}  # a listing listed again after it was packed: its plain row
                rows += [(i, source, 0, seen) for i, source, seen in closed if i not in held]
        # The SQL's order over both: stable sorts, the last key first.
        rows.sort(key=lambda r: r[0], reverse=True)
        rows.sort(key=lambda r: r[3] or "", reverse=True)
        rows.sort(key=lambda r: (-r[2], r[1] == REGFREE))
        return [(r[0], r[1], bool(r[2])) for r in rows[:20]]

    def listing_history(self, listing_id: int | str, plan: str | None = None):
        """A listing's price, bid and metric history (`listing_history`), oldest first, as a DataFrame."""
        import pandas as pd

        self.get_domain(listing_id, plan)  # 404 / 403 as the API
        columns = [
            "observed_at",
            "price",
            "max_bid",
            "bids_count",
            "effective_price",
            "auction_end_date",
            "trust_flow",
            "citation_flow",
            "domain_authority",
            "referring_domains",
            "backlinks_count",
        ]
        with self._snapshot() as conn:
            frame = pd.read_sql_query(
                f"SELECT {', '.join(columns)} FROM listing_history WHERE listing_id = ? ORDER BY observed_at, id",
                conn,
                params=[int(listing_id)],
            )
            held = conn.execute("SELECT 1 FROM listings WHERE id = ?", [int(listing_id)]).fetchone()
            if held is None and self._archived(conn):  # an archived listing: its history went with it
                from ..store.parquet_archive import archived_rows

                rows = archived_rows(
                    self.path, "listing_history", "listing_id", [int(listing_id)], ["id", *columns], conn=conn
                )
                rows.sort(key=lambda r: (r[1], r[0]))
                frame = pd.DataFrame([r[1:] for r in rows], columns=columns)
        return frame

    def get_pending_delete(self, domain: str, plan: str | None = None) -> dict[str, Any]:
        """The most recent snapshot row of a domain still in an actionable state, or a 404."""
        plan = self._plan(plan)
        require(plan, "pending_delete")
        today = self.now().date().isoformat()
        row = (
            self.connection()
            .execute(
                f"SELECT {PENDING_SELECT} FROM pending_delete WHERE domain = ? COLLATE NOCASE "
                "AND (estimated_drop_date IS NULL OR estimated_drop_date >= ?) ORDER BY week_end DESC, id DESC LIMIT 1",
                [str(domain).strip(), today],
            )
            .fetchone()
        )
        if row is None:
            raise not_found()
        return {"data": pending_record(row)}

    # -- why an answer is empty -----------------------------------------------------------
    def explain_empty(self, params: Mapping[str, Any] | None = None, *, pending: bool = False) -> list[str]:
        """Why a request (`/api/domains` parameters, or `/api/pending-delete` ones with
        `pending`) matches nothing, when it can be told: a lower bound above its upper bound
        (tf_min=30 tf_max=10, dates from/to), or a TLD or source no row of the mirror has.
        One sentence per reason; an empty list when none is found. What the CLI prints under
        an empty page, for the app to show too; the HTTP API answers its empty page as the
        service does."""
        table = PENDING_PARAMS if pending else DOMAIN_PARAMS
        values = parse_params(table, params, strict=False)
        reasons = contradictions(table, values)
        ctx = Context(today=self.now().date(), table="pending_delete" if pending else "listings", now=self.now())
        conn = self.connection()

        def held(param_name: str, wanted: tuple[Any, ...], extra: str = "") -> bool:
            """Whether a row has one of `wanted` (the parameter's own condition, one value at a time)."""
            for value in wanted:
                sql, args = table[param_name].clause(value, ctx)
                if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {ctx.table} WHERE ({sql}){extra})", args).fetchone()[0]:
                    return True
            return False

        # Listings are platform rows unless source=regfree asks for the deleted-ccTLD database.
        regfree = values.get("source") == REGFREE
        scope = f" AND source {'=' if regfree else '!='} '{REGFREE}'"
        for name, label in (("tld", "TLD"), ("source", "source")):
            if name not in values:
                continue
            several = isinstance(values[name], tuple)  # a list filter (tld): its condition takes a tuple
            wanted = tuple((v,) for v in values[name]) if several else (values[name],)
            shown = " or ".join(("." if pending and name == "tld" else "") + (v[0] if several else v) for v in wanted)
            if pending:
                if not held(name, wanted):
                    reasons.append(f"no pending-delete row in the mirror has {label} {shown}")
            elif held(name, wanted, f"{scope} AND {OPEN}"):
                continue
            elif held(name, wanted, scope):
                if not values.get("include_closed"):
                    reasons.append(
                        f"only closed listings in the mirror have {label} {shown}: add include_closed=1 to see them"
                    )
            elif not held(name, wanted):
                reasons.append(f"no listing in the mirror has {label} {shown}")
            elif regfree:
                reasons.append(
                    f"no regfree row in the mirror has {label} {shown} (platform listings do: leave out source=regfree)"
                )
            else:
                reasons.append(
                    f"only regfree rows (the deleted-ccTLD database) have {label} {shown}: add "
                    "source=regfree to see them"
                )
        return reasons

    # -- about the mirror ----------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The mirror's notes (`mirror_meta`): the generation, the schema, the demo's settings
        when it holds the demo (`demo_scale`, `demo_seed`, `demo_today`, `demo_days`), ..."""
        return dict(self.connection().execute("SELECT key, value FROM mirror_meta").fetchall())

    def is_empty(self) -> bool:
        """True when the mirror holds no listing and no pending-delete row (a first run)."""
        row = (
            self.connection()
            .execute("SELECT EXISTS (SELECT 1 FROM listings) OR EXISTS (SELECT 1 FROM pending_delete)")
            .fetchone()
        )
        return not row[0]

    def status(self) -> dict[str, Any]:
        """Row counts per dataset, demo or synced, the last sync of each job and each
        dataset's freshness against the service's schedule (docs/reference/freshness.md), and
        each public feed's against its publisher's (`feeds`, docs/guides/feeds.md)."""
        conn = self.connection()
        now = iso_timestamp(self.now())
        count = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
        datasets = {
            "listings": {
                "rows": count("SELECT count(*) FROM listings WHERE source != ?", REGFREE),
                "live": count(
                    f"SELECT count(*) FROM listings WHERE {self._open_term(self.now())}source != ? AND live_until > ?",
                    REGFREE,
                    now,
                ),
            },
            "regfree": {"rows": count("SELECT count(*) FROM listings WHERE source = ?", REGFREE)},
            "pending_delete": {"rows": count("SELECT count(*) FROM pending_delete")},
            "listing_history": {"rows": count("SELECT count(*) FROM listing_history")},
        }
        origins = dict(conn.execute("SELECT origin, count(*) FROM listings GROUP BY origin").fetchall())
        for origin, n in conn.execute("SELECT origin, count(*) FROM pending_delete GROUP BY origin"):
            origins[origin] = origins.get(origin, 0) + n
        runs = {}
        for job, started, finished, status, rows_seen, error in conn.execute(
            "SELECT job, started_at, finished_at, status, rows_seen, error FROM sync_runs "
            "WHERE id IN (SELECT max(id) FROM sync_runs GROUP BY job)"
        ):
            runs[job] = {
                "started_at": started,
                "finished_at": finished,
                "status": status,
                "rows_seen": rows_seen,
                "error": error,
            }
        meta = dict(conn.execute("SELECT key, value FROM mirror_meta").fetchall())
        return {
            "path": self.path,
            "datasets": datasets,
            "origins": origins,
            "last_sync": runs,
            "meta": meta,
            "freshness": freshness(conn, self.now()),
            "feeds": feed_freshness(conn, self.now()),
            "put_away": self._put_away(conn),
            "results": self._results_status(conn),
            "ranges": self._ranges_status(conn, now, meta),
            "watched_names": self._watched_status(conn),
            "problems": self._problems(conn, runs, meta),
        }

    def _put_away(self, conn: sqlite3.Connection) -> dict[str, int]:
        """Closed listings kept out of the plain table: packed in the mirror, archived beside it."""
        archived = conn.execute("SELECT coalesce(sum(rows), 0) FROM archive_parts WHERE tbl = 'listings'").fetchone()[0]
        return {"packed": conn.execute("SELECT count(*) FROM packed_listings").fetchone()[0], "archived": archived}

    @staticmethod
    def _results_status(conn: sqlite3.Connection) -> dict[str, Any]:
        ended, sold, last = conn.execute(
            "SELECT count(*), coalesce(sum(sold), 0), max(ended_at) FROM auction_results"
        ).fetchone()
        return {"auctions": ended, "sold": sold, "last_ended_at": last}

    def _ranges_status(self, conn: sqlite3.Connection, now: str, meta: Mapping[str, str]) -> dict[str, Any]:
        """The live listings with a price range, and the last training's summary (`edt appraise`)."""
        valued, live = conn.execute(
            f"SELECT coalesce(sum(value_mid IS NOT NULL), 0), count(*) FROM listings WHERE {self._open_term(self.now())}"
            "source != ? AND live_until > ?",
            [REGFREE, now],
        ).fetchone()
        return {
            "valued": valued,
            "live": live,
            "model": json.loads(meta["value_model"]) if "value_model" in meta else None,
        }

    @staticmethod
    def _watched_status(conn: sqlite3.Connection) -> dict[str, Any]:
        stages = dict(conn.execute("SELECT coalesce(stage, ''), count(*) FROM watched_names GROUP BY 1").fetchall())
        checked = conn.execute("SELECT max(checked_at) FROM watched_names").fetchone()[0]
        return {"names": sum(stages.values()), "stages": stages, "checked_at": checked}

    def _problems(self, conn: sqlite3.Connection, runs: Mapping[str, Any], meta: Mapping[str, str]) -> list[str]:
        """What is incomplete in the mirror, each with its fix: a load at work now, a sync or an
        enrichment that stopped midway, demo rows without a finished demo load, missing indexes."""
        from ..store.lock import current_holder
        from ..store.schema import missing_parts

        problems = []
        holder = current_holder(self.path)
        if holder:
            problems.append(f"a load is writing to this mirror now ({holder}); these counts are from before it")
        for job, run in runs.items():
            if run["status"] in ("running", "interrupted") and not holder:
                problems.append(
                    f"sync job {job} stopped midway (started {run['started_at']}); the pages it wrote are "
                    "kept: `edt sync` resumes it"
                )
        if "enrich_progress" in meta and not holder:
            problems.append("an enrichment stopped midway; `edt enrich` with the same filters resumes it")
        if (
            "demo_scale" not in meta
            and conn.execute("SELECT EXISTS (SELECT 1 FROM listings WHERE origin = 'demo')").fetchone()[0]
        ):
            problems.append(
                "demo rows without a finished demo load (an older toolkit's load was stopped midway): "
                "`edt demo` loads it whole, `edt demo --clear` removes them"
            )
        missing = missing_parts(conn)
        if missing:
            fix = (
                "open it once read-write (any edt command) to rebuild them"
                if self.readonly
                else "`edt doctor --repair` rebuilds them"
            )
            problems.append(f"missing: {', '.join(missing)}; {fix}")
        return problems
