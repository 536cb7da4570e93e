"""Refresh check: how long the columnar index takes to catch up after a write, against
building it whole, on a copy of a mirror.

    python -m toolkit.bench.refresh --db /path/to/full-demo.db [--rounds 12] [--seed 1] [--markdown]

A script, not a timed test. It copies the mirror (SQLite's backup API) into a scratch
file, builds the index whole, then for each round draws a write at random (seeded): a
sync page of new listings, a sync page of changed bids and prices, an enrichment batch of
changed metrics, closes, deletes, or a large mixed batch, each of a random size around its
usual one, with rows the mirror already holds as templates. The write goes through plain
SQL (the change log is kept by triggers, whatever the write path). After each write the
index is refreshed from the change log and saved, as `edt sync` or `edt serve` do; the
time of that is what a reader waits for. The peer is a whole build of the final mirror,
measured in the same run (median of three).

Checks, any failure makes the exit status 1: every round was a refresh (never a fallback
to a whole build), and the refreshed index holds exactly what the whole build holds.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .scratch import mirror_parser, parse_mirror_args, scratch_copy

if TYPE_CHECKING:  # NumPy and the query layer load when the bench runs, not when it is imported
    import numpy as np

    from ..query.columnar import ColumnarIndex

__all__ = ["main", "WRITES"]


def _new_listings(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    """A sync page of listings the mirror has not seen: copies of held rows, new ids and names."""
    columns = [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description]
    top = conn.execute("SELECT max(id) FROM listings").fetchone()[0] or 0
    rows = conn.execute(f"SELECT * FROM listings WHERE source != 'regfree' ORDER BY random() LIMIT {size}").fetchall()
    at_id, at_name = columns.index("id"), columns.index("name")
    fresh = []
    for n, row in enumerate(rows):
        row = list(row)
        row[at_id], row[at_name] = top + 1 + n, f"{rnd.choice('abcdefghijklmnopqrstuvwxyz')}{n}{row[at_name]}"
        fresh.append(row)
    conn.executemany(f"INSERT INTO listings ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", fresh)
    return len(fresh)


def _ids(conn: sqlite3.Connection, size: int) -> list[int]:
    return [
        r[0] for r in conn.execute(f"SELECT id FROM listings WHERE source != 'regfree' ORDER BY random() LIMIT {size}")
    ]


def _changed_bids(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    ids = _ids(conn, size)
    conn.executemany(
        "UPDATE listings SET bids_count = coalesce(bids_count, 0) + 1, max_bid = coalesce(max_bid, price, 1) * ?, "
        "effective_price = coalesce(max_bid, price, 1) * ? WHERE id = ?",
        [(f := 1 + rnd.random() / 4, f, i) for i in ids],
    )
    return len(ids)


def _changed_metrics(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    ids = _ids(conn, size)
    conn.executemany(
        "UPDATE listings SET trust_flow = ?, citation_flow = ?, referring_domains = ?, wayback_snapshots = ?, "
        "score = ? WHERE id = ?",
        [
            (rnd.randint(0, 60), rnd.randint(0, 80), rnd.randint(0, 5000), rnd.randint(0, 9000), rnd.randint(0, 100), i)
            for i in ids
        ],
    )
    return len(ids)


def _closes(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    from ..store.writer import close_listings, utc_now

    return close_listings(conn, _ids(conn, size), closed_at=utc_now(), commit=False)


def _deletes(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    ids = _ids(conn, size)
    conn.executemany("DELETE FROM listings WHERE id = ?", [(i,) for i in ids])
    return len(ids)


def _mixed(conn: sqlite3.Connection, rnd: random.Random, size: int) -> int:
    return _new_listings(conn, rnd, size // 2) + _changed_metrics(conn, rnd, size // 2)


# (what the write stands for, its usual size, the write)
WRITES: list[tuple[str, int, Callable[[sqlite3.Connection, random.Random, int], int]]] = [
    ("sync page: new listings", 100, _new_listings),
    ("sync page: bids and prices", 100, _changed_bids),
    ("enrichment batch: metrics", 1000, _changed_metrics),
    ("closes", 50, _closes),
    ("deletes", 20, _deletes),
    ("large mixed batch", 20000, _mixed),
]


def main(argv: list[str] | None = None) -> int:
    parser = mirror_parser("toolkit.bench.refresh", __doc__, "the mirror to copy (it is never written)")
    parser.add_argument("--rounds", type=int, default=12)
    if (
        args := parse_mirror_args(
            parser, argv, "--db: no mirror at {db}; build one with `edt demo --scale full --db {db}`"
        )
    ) is None:
        return 2

    from ..query import columnar
    from ..store.schema import connect, ensure_schema

    rnd = random.Random(args.seed)
    started = time.perf_counter()
    with scratch_copy(args.db, "edt-refresh-") as path:
        conn = connect(path)
        ensure_schema(conn)  # the change log's triggers, on a mirror from an older toolkit
        print(f"copied {args.db} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        index = columnar.build_index(path)
        rows = index.rows
        timings: dict[str, list[tuple[int, float]]] = {name: [] for name, _, _ in WRITES}
        fallbacks = 0
        for round_ in range(args.rounds):
            name, usual, write = rnd.choice(WRITES)
            size = max(1, int(usual * rnd.uniform(0.5, 1.5)))
            with conn:  # plain SQL: the triggers log the change and bump the generation
                changed = write(conn, rnd, size)
            started = time.perf_counter()
            refreshed = columnar._refresh(path, index)
            if refreshed is None:
                fallbacks += 1
                refreshed = columnar.build_index(path)
            refreshed.save(columnar.index_path(path))
            elapsed = time.perf_counter() - started
            timings[name].append((changed, elapsed))
            index = refreshed
            print(f"round {round_ + 1}: {name}, {changed:,} rows: {elapsed:.2f} s", file=sys.stderr)
        whole_times = []
        for _ in range(3):
            started = time.perf_counter()
            whole = columnar.build_index(path)
            whole_times.append(time.perf_counter() - started)
        conn.close()
        same = _same(index, whole)
    whole_time = statistics.median(whole_times)
    _report(timings, whole_time, rows, args, fallbacks, same)
    return 0 if same and not fallbacks else 1


def _same(refreshed: ColumnarIndex, whole: ColumnarIndex) -> bool:
    """Whether two indexes hold the same values (codes compared as texts, NULL as NULL)."""
    import numpy as np

    if refreshed.arrays.keys() != whole.arrays.keys() or refreshed.meta["nonnull"] != whole.meta["nonnull"]:
        return False
    for name, values in whole.arrays.items():
        mine = refreshed.arrays[name]
        if name.startswith("values:"):
            continue  # a real's distinct values (a refresh may keep one no row holds): rows compared below
        if f"values:{name}" in whole.arrays:
            if not np.array_equal(_reals(whole, name), _reals(refreshed, name), equal_nan=True):
                return False
        elif name in whole.meta["codes"]:
            a = np.array(whole.meta["codes"][name] + [None], dtype=object)[values]
            b = np.array(refreshed.meta["codes"][name] + [None], dtype=object)[mine]
            if not (a == b).all():
                return False
        elif name in whole.meta["whole"]:
            null_a, null_b = np.iinfo(values.dtype).min, np.iinfo(mine.dtype).min
            if not np.array_equal(np.where(values == null_a, 0, values), np.where(mine == null_b, 0, mine)) or not (
                np.array_equal(values == null_a, mine == null_b)
            ):
                return False
        elif not np.array_equal(values, mine, equal_nan=values.dtype.kind == "f"):
            return False
    return True


def _reals(index: ColumnarIndex, name: str) -> np.ndarray:
    """A real column's values from its ranks (NaN for NULL)."""
    import numpy as np

    ranks, distinct = index.arrays[name], index.arrays[f"values:{name}"]
    values = distinct[np.clip(ranks, 0, None)] if len(distinct) else np.zeros(len(ranks))
    return np.where(ranks == np.iinfo(ranks.dtype).min, np.nan, values)


def _report(timings: dict, whole_time: float, rows: int, args: argparse.Namespace, fallbacks: int, same: bool) -> None:
    head = (
        f"Index refresh after a write, {rows:,} listings, seed {args.seed}, {args.rounds} rounds, "
        f"{platform.machine()} with {os.cpu_count()} cores"
    )
    lines = [
        head,
        "",
        "| write | rounds | rows changed | refresh + save, median | max | vs whole build |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, done in timings.items():
        if not done:
            continue
        median = statistics.median(t for _, t in done)
        changed = statistics.median(n for n, _ in done)
        lines.append(
            f"| {name} | {len(done)} | {changed:,.0f} | {median:.2f} s | {max(t for _, t in done):.2f} s | "
            f"{median / whole_time:.2f}x |"
        )
    lines.append(f"| whole build (the peer) | 3 | all | {whole_time:.2f} s | | 1.00x |")
    lines += [
        "",
        f"refreshes that fell back to a whole build: {fallbacks}",
        f"refreshed index identical to the whole build: {'yes' if same else 'NO'}",
    ]
    text = "\n".join(lines)
    print(text if args.markdown else text.replace("|---|---:|---:|---:|---:|---:|\n", ""))


if __name__ == "__main__":
    raise SystemExit(main())
