"""What each SQLite index of the listings costs a day's writes, and which requests read it.

    python -m toolkit.bench.indexes --db full-demo.db [--per-day 10000] [--random 200]
        [--seed 1] [--work DIR] [--markdown]

A script, not a timed test. It copies the mirror, then:
- **use**: `--random` seeded `/api/domains` requests (as `edt bench --random`) answered by
  the SQLite planner (as when the columnar index is stale, or cannot hold a filter); every
  statement it runs is traced and its plan read (EXPLAIN QUERY PLAN). For each index: the
  share of requests whose plans read it, and how many of those the columnar index cannot
  answer (for them SQLite is the only engine, every time);
- **cost**: a simulated day's writes (`age.day_of_writes`: `--per-day` new listings, bid
  updates on a third as many, as many closings) with every index, then with each one
  dropped in turn (re-created after): the seconds each one adds, against a day with every
  index written just before it (after a warm-up day).
"""

from __future__ import annotations

import re
import sqlite3
import sys
import time
from collections import Counter
from datetime import datetime, timezone

from .scratch import mirror_parser, parse_mirror_args, scratch_copy

__all__ = ["main", "index_use", "index_costs"]


def index_use(path: str, requests: int, seed: int, now: datetime) -> tuple[Counter, Counter, int]:
    """(requests whose SQLite plans read each index, those of them the columnar index cannot
    answer, requests asked)."""
    from ..query import Mirror
    from .engines import PLAN, load_frames
    from .query_suite import random_suite

    frames = load_frames(path, now, "closed_at IS NULL")
    suite = [q for q in random_suite(frames.listings, now.date(), requests, seed) if q.dataset == "domains"]
    del frames
    sqlite_only = Mirror(path, engine="sqlite", clock=lambda: now)
    columnar = Mirror(path, engine="columnar", clock=lambda: now)
    statements: list[str] = []
    sqlite_only.connection().set_trace_callback(statements.append)
    reads: Counter[str] = Counter()
    only_sqlite: Counter[str] = Counter()
    for query in suite:
        statements.clear()
        sqlite_only.search_domains(dict(query.params), plan=PLAN, strict=False)
        columnar.search_domains(dict(query.params), plan=PLAN, strict=False)
        read = set()
        for sql in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            plan = sqlite_only.connection().execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            read |= {m for row in plan for m in re.findall(r"INDEX (\w+)", row[-1])}
        reads.update(read)
        if columnar.answered_by() != "columnar":
            only_sqlite.update(read)
    sqlite_only.close()
    columnar.close()
    return reads, only_sqlite, len(suite)


def index_costs(path: str, per_day: int, seed: int) -> tuple[float, dict[str, float]]:
    """(median seconds of a day's writes with every index, {index: seconds it adds}). For
    each index: a day with it, then a day without it (dropped, and made again after)."""
    from .age import day_of_writes

    conn = sqlite3.connect(path)
    declared = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('listings', 'listing_history') ORDER BY name"
    ).fetchall()
    conn.close()

    def day() -> float:
        return sum(day_of_writes(path, per_day, seed).values())

    day()  # warm-up: the first day reads the pages every later one finds cached
    added, baselines = {}, []
    for name, sql in declared:
        baselines.append(day())  # each index against a day with it, just before (the mirror grows a day a run)
        conn = sqlite3.connect(path)
        conn.execute(f"DROP INDEX {name}")
        conn.close()
        without = day()
        conn = sqlite3.connect(path)
        conn.execute(sql)
        conn.close()
        added[name] = baselines[-1] - without
    return sorted(baselines)[len(baselines) // 2], added


def main(argv: list[str] | None = None) -> int:
    parser = mirror_parser("toolkit.bench.indexes", __doc__, "a mirror (it is copied, never written)")
    parser.add_argument(
        "--per-day", type=int, default=10_000, help="listings new (and closed) in the day (default 10,000)"
    )
    parser.add_argument("--random", type=int, default=200, help="random requests for the use (default 200)")
    parser.add_argument("--work", default=None, help="the folder for the copy (default: a temporary one)")
    if (
        args := parse_mirror_args(parser, argv, "{db}: no mirror there; build one with `edt demo --scale full` first")
    ) is None:
        return 2
    say = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    from ..query import Mirror

    now = datetime.now(timezone.utc).replace(microsecond=0)
    with scratch_copy(args.db, "edt-indexes-", folder=args.work) as path:
        Mirror(path).close()  # brought to this toolkit's schema
        say(f"{args.random} random requests through the SQLite planner ...")
        reads, only_sqlite, asked = index_use(path, args.random, args.seed, now)
        say(f"a day's writes ({args.per_day:,} listings) with each index dropped in turn ...")
        started = time.perf_counter()
        whole, added = index_costs(path, args.per_day, args.seed)
        say(f"  {time.perf_counter() - started:.0f} s")
        conn = sqlite3.connect(path)
        sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
        conn.close()
    head = ["index", "MB", "adds to a day's writes", "read by requests", "of them SQLite only"]
    lines = [
        [
            name,
            f"{sizes.get(name, 0) / 1e6:,.0f}",
            f"{seconds:+.2f} s ({seconds / whole:+.0%})",
            f"{reads[name]} of {asked}",
            str(only_sqlite[name]),
        ]
        for name, seconds in sorted(added.items(), key=lambda kv: -kv[1])
    ]
    print(
        f"a day's writes with every index: {whole:.1f} s for {args.per_day:,} new listings, {args.per_day // 3:,} bid "
        f"updates and {args.per_day:,} closings; {asked} random requests (seed {args.seed})"
    )
    if args.markdown:
        print(
            "\n".join(
                ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                + ["| " + " | ".join(x) + " |" for x in lines]
            )
        )
    else:
        print("\n".join("  ".join(x) for x in [head, *lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
