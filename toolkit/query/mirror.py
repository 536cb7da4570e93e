"""`Mirror`: the local mirror, the public Python API every shell uses (CLI, HTTP replica, MCP,
app, notebooks). It holds the connections and hands out the mirror's reads:

- rows, as sqlite-utils' `rows_where` yields them: `listings(tld=".fr", tf_min=20,
  sort="-trust_flow", limit=50)` and `pending(...)` yield records (dicts) for typed keywords;
- DataFrames for the notebooks and charts: `domains_df`, `results_df`, `pending_df`,
  `listing_history` (`dataframes.py`);
- the service's API answers, page by page in their envelope, with the plan's rules:
  `search_domains`, `get_domain`, `free_domains`, `search_pending_delete`, ... (the functions of
  `replica.py`, which the REST replica, the MCP server and `edt query` share);
- what the app's charts count (`chart_counts`, `day_counts`), `status` (`mirror_status.py`).

How matches are found (the columnar index when current, else the SQLite planner) is
`listing_search.py`; the columnar index's life, `index_keeper.py`. Nothing here speaks HTTP:
plan rules and errors come back as `ApiError` with the status and body the REST API answers
(docs/reference/semantics.md, plans.md and errors.md).
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from ..names import ascii_name
from ..config import load_settings
from ..errors import MirrorMissing
from ..sources import REGFREE
from ..store.access import opens_read_only
from ..store.fields import iso_timestamp
from ..store.schema import SCHEMA_VERSION, connect, ensure_schema
from . import dataframes, replica
from .aggregates import ChartCounts
from .index_keeper import ENGINES, IndexKeeper
from .listing_search import ListingSearch
from .params import DOMAIN_PARAMS, PENDING_PARAMS
from .records import listing_record

__all__ = ["Mirror", "ENGINES"]

# Parameters that page or order an answer; aggregates count every match whatever they say.
_PAGING = ("sort", "page", "per_page", "limit", "after_id")


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
    `engine` says how listing requests are answered (`index_keeper.ENGINES`; default
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
        self.engine = engine = engine or os.environ.get("EDT_ENGINE") or "auto"
        if engine not in ENGINES:
            raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
        settings = load_settings(db=os.fspath(path) if path is not None else None, plan=plan)
        self.path = settings.db
        self.plan = settings.plan
        readonly = self.readonly = opens_read_only(self.path, readonly)  # a read-only place opens read-only, said once
        self._clock = clock or _clock_from_env()
        self._local = threading.local()
        self._indexes = IndexKeeper(self.path, engine, self.generation)
        self.search = ListingSearch(self, self._indexes)  # how matches are found, by either engine
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

    def refresh_index(self, part: str = "live") -> Any:
        """A part of the columnar index of the mirror as it is now (`live` unless asked): the
        one in use or saved beside the mirror when it is current, else refreshed from it (only
        the rows written since are read again) or built whole, saved and used. Writers call
        this after a load; long-lived readers rebuild by themselves (engine `background`)."""
        return self._indexes.refresh(part)

    def refresh_indexes(self) -> Any:
        """After a write: the live part of the columnar index, and the `all` part when one is
        saved beside the mirror. Returns the live part."""
        return self._indexes.refresh_all()

    def answered_by(self) -> str | None:
        """Which engine answered this thread's last listing request: `columnar` or `sqlite`
        (for benchmarks and tests)."""
        return getattr(self.search.local, "answered_by", None)

    # -- rows, for typed keywords ----------------------------------------------------------
    def listings(
        self, *, plan: str | None = None, limit: int | None = None, **filters: Any
    ) -> Iterator[dict[str, Any]]:
        """Every listing the filters match, as records (dicts), in their order, `limit` at most:
        the `/api/domains` parameters as typed keywords (`tld=".fr"`, `tf_min=20`,
        `include_closed=True`, `sort="-trust_flow"`); a misspelt name or a bad value is an
        `ApiError` (422) naming it. Streamed: a million matches cost no more memory than ten."""
        plan, values = replica.parsed_request(
            self, plan, "domains", DOMAIN_PARAMS, _typed_keywords(filters), strict=True
        )
        replica.check_domain_plan(values, plan)
        today = self.now().date()
        rows = self.search.every_match(values, lambda row: listing_record(row, today))
        return itertools.islice(rows, limit) if limit is not None else rows

    def pending(self, *, plan: str | None = None, limit: int | None = None, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every pending-delete row the filters match (the `/api/pending-delete` parameters as
        typed keywords: `tld="de"`, `drop_date_from="2026-12-01"`), as records, `limit` at most."""
        rows = replica.export_pending_rows(self, _typed_keywords(filters), plan)  # the export's rule, SQL and stream
        return itertools.islice(rows, limit) if limit is not None else rows

    # -- the service's API answers (replica.py) -------------------------------------------
    # These and the DataFrames are those modules' functions, the mirror their first argument:
    # one signature, one docstring each.
    search_domains = replica.search_domains
    get_domain = replica.get_domain
    export_rows = replica.export_rows
    free_domains = replica.free_domains
    search_results = replica.search_results
    search_pending_delete = replica.search_pending_delete
    export_pending_rows = replica.export_pending_rows
    get_pending_delete = replica.get_pending_delete

    # -- DataFrames (dataframes.py) and one auction's result -------------------------------
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

    domains_df = dataframes.domains_df
    results_df = dataframes.results_df
    pending_df = dataframes.pending_df
    listing_history = dataframes.listing_history

    # -- counts for the charts ---------------------------------------------------------------
    def day_counts(
        self, params: Mapping[str, Any] | None = None, plan: str | None = None, *, pending: bool = False
    ) -> dict[date, int]:
        """Matching rows per day: auction end dates of listings (the /api/domains filters), or
        estimated drop dates of pending-delete rows (its filters) with `pending=True`."""
        if not pending:
            plan, values = replica.parsed_request(self, plan, "domains", DOMAIN_PARAMS, params, strict=True)
            replica.check_domain_plan(values, plan)
            return self.search.end_day_counts(values)
        _, values = replica.parsed_request(self, plan, "pending_delete", PENDING_PARAMS, params, strict=True)
        where, args, _ = replica.pending_sql(self, values)
        rows = self.connection().execute(
            f"SELECT substr(estimated_drop_date, 1, 10), count(*) FROM pending_delete WHERE ({where}) "
            "AND estimated_drop_date IS NOT NULL GROUP BY 1",
            list(args),
        )
        return {date.fromisoformat(day): n for day, n in rows}

    def chart_counts(self, params: Mapping[str, Any] | None = None, plan: str | None = None) -> ChartCounts:
        """What the TF/CF and archive charts draw, counted over every listing an `/api/domains`
        request matches (paging and sort are ignored): TF x CF cells, the "CF far above TF"
        zone per topic and per source, ages, first-snapshot years, snapshots x age and
        languages (see `aggregates.ChartCounts`). From the columnar index when it is current,
        else by `GROUP BY` in SQLite; both give the same counts."""
        plan, values = replica.parsed_request(self, plan, "domains", DOMAIN_PARAMS, params, strict=True)
        values = {k: v for k, v in values.items() if k not in _PAGING}
        replica.check_domain_plan(values, plan)
        return self.search.chart_counts(values)

    def live_counts(self) -> dict[str, Any]:
        """Live listings counted per source, TLD (platforms and regfree apart), language and
        topic: what a filter picker or an assistant's `list_filters` shows beside each value."""
        from . import mirror_status

        return mirror_status.live_counts(self)

    def listings_named(self, name: str) -> list[tuple[int, str, bool]]:
        """(id, source, live) of every listing of this exact name: live first, platforms before
        regfree, most recently seen first (a name can be listed on several platforms); an IDN
        in letters or as xn--."""
        try:
            name = ascii_name(name)
        except ValueError:
            return []
        with self.search.snapshot() as conn:
            rows = conn.execute(
                "SELECT id, source, live_until > ? AS live, last_seen_at FROM listings WHERE name = ? "
                "ORDER BY live DESC, source = ?, last_seen_at DESC, id DESC LIMIT 20",
                [iso_timestamp(self.now()), name, REGFREE],
            ).fetchall()
            if self.search.archived(conn):  # archived listings closed long ago: never live
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

    def explain_empty(self, params: Mapping[str, Any] | None = None, *, pending: bool = False) -> list[str]:
        """Why a request matches nothing, when it can be told, one sentence per reason
        (`explain.py`): what the CLI prints under an empty page, for the app to show too."""
        from . import explain

        return explain.explain_empty(self, params, pending=pending)

    # -- about the mirror ----------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The mirror's notes (`mirror_meta`): the generation, the schema, the demo's settings
        when it holds the demo (`demo_scale`, `demo_seed`, `demo_today`, `demo_days`), ..."""
        return dict(self.connection().execute("SELECT key, value FROM mirror_meta").fetchall())

    def is_empty(self) -> bool:
        """True when the mirror holds nothing a user put there: no listing, pending-delete row,
        reported sale or watched name (a first run)."""
        held = " OR ".join(
            f"EXISTS (SELECT 1 FROM {table})"
            for table in ("listings", "pending_delete", "reported_sales", "watched_names")
        )
        return not self.connection().execute(f"SELECT {held}").fetchone()[0]

    def status(self) -> dict[str, Any]:
        """Row counts per dataset, demo or synced, the last sync of each job and each
        dataset's freshness against the service's schedule (docs/reference/freshness.md), each
        public feed's against its publisher's, and what is incomplete (`mirror_status.py`)."""
        from . import mirror_status

        return mirror_status.status(self)


def _typed_keywords(filters: Mapping[str, Any]) -> dict[str, Any]:
    """Typed keywords as the parameter table reads them: True/False as 1/0, a list as a comma list."""
    out: dict[str, Any] = {}
    for name, value in filters.items():
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, (list, tuple, set)):
            value = ",".join(map(str, value))
        out[name] = value
    return out
