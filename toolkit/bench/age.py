"""Age check: the mirror after months of daily syncs, against the same mirror fresh.

    python -m toolkit.bench.age --db full-demo.db [--months 0,6,12] [--per-day 35000]
        [--random 40] [--seed 1] [--archive 180d] [--pack-after 30d] [--work DIR] [--markdown]

A script, not a timed test. It copies the mirror (SQLite's backup API) and, stage after
stage, ages the copy: each simulated month adds `--per-day` x 30 closed listings (copies
of the mirror's own platform listings with new ids and names, closed on each day of that
month, three history rows each), written in one bulk transaction as `edt demo` writes
(indexes rebuilt after). At each stage it prints:
- the file's size, and the live columnar index's size and whole-build time;
- a simulated day's writes through plain SQL with every trigger on (new listings in sync
  pages of 100, bid updates, closings), and the index refresh after them;
- live `/api/domains` requests drawn at random (`--random`, `--seed`; `edt bench --random`
  without `include_closed`) answered by the query layer over the aged mirror and by DuckDB
  over the open listings (all a live request can match: the same answers, checked), p50 /
  p95 / max. DuckDB over every row of a year would need some 60 GB here.
After the last stage, with `--archive AGE`, the listings closed before the cut move to the
archive and those closed before `--pack-after` (default 30d) are packed (`edt archive`), and
the figures are taken again, with the archive's size, the time each step took and the
first `include_closed=1` request's (it builds the index part of every listing).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sqlite3
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from .scratch import mirror_parser, parse_mirror_args, scratch_copy

__all__ = ["main", "add_closed_months", "day_of_writes"]

HISTORY_PER_LISTING = 3


def add_closed_months(path: str, first_month: int, months: int, per_day: int, now: datetime, live_from: int = 0) -> int:
    """Add `months` months of closed listings (`per_day` a day), the newest month ending
    `first_month` months before `now`: copies of platform listings, new ids and names,
    closed on each day, with their history. One bulk transaction. The copies are of open
    listings with ids from `live_from` up (the fresh mirror's). Returns rows added."""
    from ..store.schema import bulk_load, connect

    conn = connect(path)
    added = 0
    try:
        columns = [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description]
        templates = conn.execute(
            "SELECT count(*) FROM listings WHERE id >= ? AND source != 'regfree' AND closed_at IS NULL", [live_from]
        ).fetchone()[0]
        with bulk_load(conn, ("listings",)) as writer:
            # Below every id held, oldest first, ascending: the service numbers listings as
            # they come, so those that closed months ago are older, and lower, than the live
            # ones (and a table filled in id order packs its pages as a real one does).
            bottom = writer.execute("SELECT coalesce(min(id), 0) FROM listings").fetchone()[0]
            next_id = bottom - 1 - months * 30 * per_day
            for month in reversed(range(first_month, first_month + months)):
                for day in reversed(range(30)):
                    closed = now - timedelta(days=30 * month + day + 1)
                    made = _one_day(writer, columns, (live_from, templates), per_day, closed, next_id)
                    next_id += made
                    added += made
    finally:
        conn.close()
    return added


def _one_day(
    conn: Any, columns: list[str], templates: tuple[int, int], count: int, closed: datetime, after_id: int
) -> int:
    """`count` closed copies of platform listings, closed at `closed`, ids from `after_id + 1`
    up, with their history."""
    stamp = closed.strftime("%Y-%m-%dT%H:%M:%SZ")
    shifted = {
        "id": f"{after_id} + row_number() OVER ()",
        "name": f"'o{closed:%y%m%d}' || name",
        "closed_at": f"'{stamp}'",
        "live_until": f"'{stamp}'",
        "auction_end_date": f"CASE WHEN auction_end_date IS NULL THEN NULL ELSE '{stamp}' END",
        "first_seen_at": f"'{(closed - timedelta(days=12)):%Y-%m-%dT%H:%M:%SZ}'",
        "last_seen_at": f"'{stamp}'",
        "created_at": f"'{(closed - timedelta(days=12)):%Y-%m-%dT%H:%M:%SZ}'",
    }
    select = ", ".join(shifted.get(c, c) for c in columns)
    live_from, open_rows = templates
    offset = random.Random(stamp).randrange(max(open_rows - count, 1))
    conn.execute(
        f"INSERT INTO listings ({', '.join(columns)}) SELECT {select} FROM (SELECT * FROM listings "
        f"WHERE id >= {live_from} AND source != 'regfree' AND closed_at IS NULL LIMIT {count} OFFSET {offset})"
    )
    made = conn.execute(
        "SELECT count(*) FROM listings WHERE id > ? AND id <= ?", [after_id, after_id + count]
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO listing_history (listing_id, observed_at, price, max_bid, bids_count, effective_price, "
        "auction_end_date, trust_flow, citation_flow, domain_authority, referring_domains, backlinks_count) "
        "SELECT id, strftime('%Y-%m-%dT%H:%M:%SZ', first_seen_at, '+' || (k * 4) || ' days'), price, max_bid, "
        "bids_count, effective_price, auction_end_date, trust_flow, citation_flow, domain_authority, "
        f"referring_domains, backlinks_count FROM listings, ({' UNION ALL '.join(f'SELECT {k} AS k' for k in range(HISTORY_PER_LISTING))}) "
        "WHERE id > ? AND id <= ?",
        [after_id, after_id + made],
    )
    return made


def day_of_writes(path: str, per_day: int, seed: int, live_from: int = 0) -> dict[str, float]:
    """A simulated day's writes through plain SQL, every trigger on, a transaction per sync
    page of 100: `per_day` new listings (copies of live ones), bid updates on a third as
    many, and as many closings (the writer's `close_listings`), drawn from ids from
    `live_from` up (where the live listings are). Seconds per kind."""
    from ..store.writer import close_listings

    rnd = random.Random(seed)
    conn = sqlite3.connect(path, timeout=60)
    spent: dict[str, float] = {}
    try:
        columns = [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description]
        low, high = conn.execute("SELECT max(min(id), ?), max(id) FROM listings", [live_from]).fetchone()

        def live_page() -> list[tuple]:  # 100 live platform listings from a random place (a seek, not a scan)
            return conn.execute(
                "SELECT * FROM listings WHERE id >= ? AND closed_at IS NULL AND source != 'regfree' LIMIT 100",
                [rnd.randint(low, high)],
            ).fetchall()

        started = time.perf_counter()
        top = high
        for _ in range(0, per_day, 100):
            page = [list(row) for row in live_page()]
            for row in page:
                top += 1
                row[0], row[1] = top, f"n{top}{row[1]}"
            conn.executemany(
                f"INSERT INTO listings ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", page
            )
            conn.commit()
        spent["new listings"] = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(0, per_day // 3, 100):
            conn.executemany(
                "UPDATE listings SET bids_count = coalesce(bids_count, 0) + 1, max_bid = coalesce(max_bid, "
                "price, 1) * 1.1, effective_price = coalesce(max_bid, price, 1) * 1.1 WHERE id = ?",
                [(row[0],) for row in live_page()],
            )
            conn.commit()
        spent["bid updates"] = time.perf_counter() - started
        started = time.perf_counter()
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for _ in range(0, per_day, 100):
            close_listings(conn, [row[0] for row in live_page()], closed_at=stamp)
        spent["closings"] = time.perf_counter() - started
    finally:
        conn.close()
    return spent


def _stage(path: str, label: str, args: argparse.Namespace, say: Any, live_from: int) -> dict[str, Any]:
    from ..store.closing import file_bytes
    from ..query.columnar import build_index, index_path, update_index
    from .query import bench, summarize

    figures: dict[str, Any] = {"stage": label}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    figures["rows"], figures["closed"] = conn.execute(  # packed listings are the mirror's too
        "SELECT (SELECT count(*) FROM listings) + (SELECT count(*) FROM packed_listings), "
        "(SELECT count(closed_at) FROM listings) + (SELECT count(*) FROM packed_listings)"
    ).fetchone()
    conn.close()
    figures["file_mb"] = file_bytes(path) / 1e6
    say(f"{label}: building the live index ...")
    started = time.perf_counter()
    index = build_index(path)
    figures["build_s"] = time.perf_counter() - started
    index.save(index_path(path))
    figures["index_mb"] = index_path(path).stat().st_size / 1e6
    if args.per_day:
        say(f"{label}: a day's writes ...")
        writes = day_of_writes(path, args.per_day, args.seed, live_from)
        figures["writes_s"] = sum(writes.values())
        started = time.perf_counter()
        update_index(path, index).save(index_path(path))
        figures["refresh_s"] = time.perf_counter() - started
    say(f"{label}: {args.random} random requests against DuckDB ...")
    # Asked after the day's writes (its closings are in the past then), as a user would.
    asked = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
    report = bench(path, repeat=args.repeat, random=args.random, seed=args.seed, now=asked, live_only=True)
    ql, duck, _ = summarize(report.timings).rows
    figures["layer"], figures["duckdb"] = ql[1:4], duck[1:4]
    figures["agree"] = all(t.agree for t in report.timings)
    for timing in report.timings:
        if not timing.agree:
            say(f"  {label}: {timing.name}: {timing.mismatch}")
    return figures


def _first_closed_request(path: str) -> float:
    """Seconds of the first `include_closed=1` request: it builds the index part that holds
    every listing, archived and packed ones too."""
    from ..query import Mirror

    mirror = Mirror(path)
    try:
        started = time.perf_counter()
        mirror.search_domains({"include_closed": "1", "contains": "shop", "sort": "-score"})
        return time.perf_counter() - started
    finally:
        mirror.close()


def _table(rows: list[dict[str, Any]], markdown: bool) -> str:
    head = [
        "stage",
        "rows",
        "closed",
        "file MB",
        "archive MB",
        "index MB",
        "build s",
        "day's writes s",
        "refresh s",
        "layer p50/p95/max ms",
        "DuckDB p50/p95/max ms",
        "p50 ratio",
        "same answers",
    ]
    lines = []
    for r in rows:
        layer, duck = r["layer"], r["duckdb"]
        lines.append(
            [
                r["stage"],
                f"{r['rows']:,}",
                f"{r['closed']:,}",
                f"{r['file_mb']:,.0f}",
                f"{r.get('archive_mb', 0):,.0f}",
                f"{r['index_mb']:,.0f}",
                f"{r['build_s']:.1f}",
                f"{r.get('writes_s', 0):.1f}",
                f"{r.get('refresh_s', 0):.2f}",
                f"{layer[0]:.1f} / {layer[1]:.1f} / {layer[2]:.1f}",
                f"{duck[0]:.1f} / {duck[1]:.1f} / {duck[2]:.1f}",
                f"{layer[0] / duck[0]:.2f}x",
                "yes" if r["agree"] else "NO",
            ]
        )
    if markdown:
        return "\n".join(
            ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(x) + " |" for x in lines]
        )
    return "\n".join("  ".join(x) for x in [head, *lines])


def main(argv: list[str] | None = None) -> int:
    parser = mirror_parser("toolkit.bench.age", __doc__, "a fresh mirror to age (it is copied, never written)")
    parser.add_argument("--months", default="0,6,12", help="the stages, in months of closings (default 0,6,12)")
    parser.add_argument("--per-day", type=int, default=35_000, help="listings closed (and new) a day (default 35,000)")
    parser.add_argument("--random", type=int, default=40, help="random live requests per stage (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per request (median; default 3)")
    parser.add_argument(
        "--archive", default="180d", help="after the last stage, archive what closed before this (none: skip)"
    )
    parser.add_argument(
        "--pack-after", default="30d", help="after the archive, pack what closed before this (none: skip)"
    )
    parser.add_argument("--work", default=None, help="the folder for the aged copy (default: a temporary one)")
    if (
        args := parse_mirror_args(parser, argv, "{db}: no mirror there; build one with `edt demo --scale full` first")
    ) is None:
        return 2
    try:
        stages = sorted({int(m) for m in args.months.split(",")})
    except ValueError:
        print(f"--months {args.months!r}: write months as 0,6,12", file=sys.stderr)
        return 2
    say = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    from ..store.parquet_archive import archive_closed, parse_age
    from ..store.packed import pack_closed

    now = datetime.now(timezone.utc).replace(microsecond=0)
    rows = []
    with scratch_copy(args.db, "edt-age-", "aged.db", args.work) as path:
        from ..query import Mirror

        Mirror(path).close()  # brought to this toolkit's schema
        conn = sqlite3.connect(path)
        live_from = conn.execute("SELECT coalesce(min(id), 0) FROM listings").fetchone()[0]
        conn.close()
        aged = 0
        for months in stages:
            if months > aged:
                say(f"adding months {aged + 1}-{months} of closings ...")
                started = time.perf_counter()
                add_closed_months(path, aged, months - aged, args.per_day, now, live_from)
                say(f"  added in {time.perf_counter() - started:.0f} s")
                aged = months
            rows.append(_stage(path, "fresh" if months == 0 else f"{months} months", args, say, live_from))
            print(_table(rows[-1:], False), file=sys.stderr, flush=True)
        if args.archive != "none":
            say(f"archiving what closed before {args.archive} ...")
            report = archive_closed(path, now - parse_age(args.archive))
            say(f"  {report.moved:,} listings in {report.seconds:.0f} s")
            label = f"{aged} months, archive {args.archive}"
            if args.pack_after != "none":
                say(f"packing what closed before {args.pack_after} ...")
                packing = pack_closed(path, now - parse_age(args.pack_after))
                say(f"  {packing.listings:,} listings in {packing.seconds:.0f} s")
                label += f", pack {args.pack_after}"
            figures = _stage(path, label, args, say, live_from)
            figures["archive_mb"] = report.archive_bytes / 1e6
            figures["archive_s"] = report.seconds
            if args.pack_after != "none":
                figures["pack_s"], figures["packed"] = packing.seconds, packing.listings
            say(f"{label}: the first include_closed request (builds the index part of every listing) ...")
            figures["all_build_s"] = _first_closed_request(path)
            rows.append(figures)
    print(
        f"{platform.machine()}, {os.cpu_count()} cores; {args.per_day:,} closings a day; {args.random} random live "
        f"requests (seed {args.seed}), median of {args.repeat} each"
    )
    print(_table(rows, args.markdown))
    last = rows[-1]
    if "archive_s" in last:
        fresh = rows[0]["file_mb"] if rows[0]["stage"] == "fresh" else None
        print(
            f"archive {last['archive_s']:.0f} s"
            + (f", pack {last['packed']:,} listings {last['pack_s']:.0f} s" if "pack_s" in last else "")
            + f"; first include_closed request {last['all_build_s']:.1f} s"
            + (f"; file {last['file_mb'] / fresh:.2f}x fresh" if fresh else "")
        )
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
