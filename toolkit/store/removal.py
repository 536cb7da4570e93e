"""Taking every row of one origin out of the mirror, wherever it lives: plain, packed and
archived listings with their history and raw records, pending-delete rows, and the auction
results derived from those listings. Rows of any other origin stay as they were; a result
that named a removed listing as where its name went next looks again.

    from toolkit.store.removal import remove_origin
    removal = remove_origin(conn, "data/mirror.db", "demo")   # inside the caller's transaction
    ...commit...
    removal.finish()                                            # the archive files it unlisted

This is what `edt demo --clear`, `edt sync --feeds --clear-demo` and a second `edt demo` use
to remove the demo (toolkit/demo/), which adds the demo's own notes to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .parquet_archive import drop_unlisted, remove_archived_origin
from .packed import forget_packed, packed_origins
from .results import place_next
from .schema import connect

__all__ = ["Removal", "holds_origin", "other_origins", "remove_origin"]

_REMOVED = "temp.removed_listings"


@dataclass
class Removal:
    """What `remove_origin` took out; `finish()` after the commit removes the archive files."""

    mirror_path: str
    counts: dict[str, int] = field(default_factory=dict)
    unlisted: list[Path] = field(default_factory=list)

    def finish(self) -> None:
        drop_unlisted(self.mirror_path, self.unlisted)


def _archived_origins(conn: sqlite3.Connection, mirror_path: str) -> dict[str, int]:
    from .parquet_archive import archive_dir, manifest

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    found: dict[str, int] = {}
    for part in manifest(conn):
        if part["table"] == "listings":
            origins = pq.read_table(archive_dir(mirror_path) / part["path"], columns=["origin"]).column("origin")
            for row in pc.value_counts(origins).to_pylist():
                found[row["values"] or "unknown"] = found.get(row["values"] or "unknown", 0) + row["counts"]
    return found


def holds_origin(path: str, origin: str) -> bool:
    """Whether the mirror's file holds any listing of `origin`, read without writing (and
    unmapped: a scan of a big mirror, mapped, would count as the reader's memory)."""
    with contextlib.closing(connect(path, readonly=True)) as conn:
        conn.execute("PRAGMA mmap_size=0")
        return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM listings WHERE origin = ?)", [origin]).fetchone()[0])


def other_origins(conn: sqlite3.Connection, mirror_path: str, origin: str) -> dict[str, int]:
    """Rows not of `origin`, per place and origin ("listings (sync)": n, "packed listings
    (ingest)": n, ...): empty when the mirror holds nothing else."""
    found: dict[str, int] = {}
    for table in ("listings", "pending_delete"):
        for other, count in conn.execute(
            f"SELECT coalesce(origin, 'unknown'), count(*) FROM {table} WHERE origin IS NOT ? GROUP BY 1", [origin]
        ):
            found[f"{table} ({other})"] = count
    for other, ids in packed_origins(conn).items():
        if other != origin:
            found[f"packed listings ({other})"] = len(ids)
    for other, count in _archived_origins(conn, mirror_path).items():
        if other != origin:
            found[f"archived listings ({other})"] = count
    return found


def remove_origin(
    conn: sqlite3.Connection | Any, mirror_path: str | os.PathLike[str], origin: str, *, everything: bool = False
) -> Removal:
    """Delete every row of `origin` inside the caller's transaction and return what went.
    `everything`: the mirror holds no other origin (`other_origins` is empty), so whole
    tables are emptied at once. Counts: listings (platform) and regfree, pending_delete,
    history and raw_records (plain rows), packed and archived (listings put away, their own
    history and raw records with them), results."""
    removal = Removal(os.fspath(mirror_path))
    counts = removal.counts
    counts.update(
        dict(
            zip(
                ("listings", "regfree"),
                conn.execute(
                    "SELECT coalesce(sum(source IS NOT 'regfree'), 0), coalesce(sum(source = 'regfree'), 0) FROM listings "
                    "WHERE origin = ?",
                    [origin],
                ).fetchone(),
            )
        )
    )
    counts["pending_delete"] = conn.execute(
        "SELECT count(*) FROM pending_delete WHERE origin = ?", [origin]
    ).fetchone()[0]
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS removed_listings (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS removed_pending (id INTEGER PRIMARY KEY)")
    conn.execute(f"DELETE FROM {_REMOVED}")
    conn.execute("DELETE FROM temp.removed_pending")
    conn.execute(f"INSERT INTO {_REMOVED} SELECT id FROM listings WHERE origin = ?", [origin])
    conn.execute("INSERT INTO temp.removed_pending SELECT id FROM pending_delete WHERE origin = ?", [origin])

    packed = packed_origins(conn).get(origin, [])
    archived, archived_rows, removal.unlisted = remove_archived_origin(conn, removal.mirror_path, origin)
    put_away = set(packed) | archived
    if put_away:
        conn.executemany(f"INSERT OR IGNORE INTO {_REMOVED} (id) VALUES (?)", [(i,) for i in put_away])
    counts["packed"], counts["archived"] = len(packed), archived_rows["listings"]

    if everything:
        counts["results"] = conn.execute("DELETE FROM auction_results").rowcount
        counts["history"] = conn.execute("DELETE FROM listing_history").rowcount
        counts["raw_records"] = conn.execute(
            "DELETE FROM raw_records WHERE kind IN ('listing', 'pending_delete')"
        ).rowcount
        conn.execute("DELETE FROM listings")
        conn.execute("DELETE FROM pending_delete")
    else:
        counts["results"] = conn.execute(
            f"DELETE FROM auction_results WHERE listing_id IN (SELECT id FROM {_REMOVED})"
        ).rowcount
        counts["history"] = conn.execute(
            f"DELETE FROM listing_history WHERE listing_id IN (SELECT id FROM {_REMOVED})"
        ).rowcount
        counts["raw_records"] = (
            conn.execute(
                f"DELETE FROM raw_records WHERE kind = 'listing' AND id IN (SELECT id FROM {_REMOVED})"
            ).rowcount
            + conn.execute(
                "DELETE FROM raw_records WHERE kind = 'pending_delete' AND id IN (SELECT id FROM temp.removed_pending)"
            ).rowcount
        )
        conn.execute("DELETE FROM listings WHERE origin = ?", [origin])
        conn.execute("DELETE FROM pending_delete WHERE origin = ?", [origin])
        # A result whose name went to a removed row looks again for where it went.
        conn.execute(
            "UPDATE auction_results SET next_kind = NULL, next_id = NULL, next_source = NULL, next_seen_at = NULL "
            f"WHERE next_id IN (SELECT id FROM {_REMOVED}) "
            "OR (next_kind = 'drop' AND next_id IN (SELECT id FROM temp.removed_pending))"
        )
        place_next(conn)
    if packed:
        forget_packed(conn, _REMOVED)
    _forget_watched_places(conn)
    return removal


def _forget_watched_places(conn: sqlite3.Connection | Any) -> None:
    """The places a watched name was seen listed that were removed rows: no longer where it is
    listed (the alert already sent stays in the outbox's history)."""
    for name, listed in conn.execute("SELECT name, listed FROM watched_names WHERE listed IS NOT NULL").fetchall():
        places = json.loads(listed)
        kinds = {"listing": _REMOVED, "pending": "temp.removed_pending"}
        kept = [
            place
            for place in places
            if not conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM {kinds.get(place['key'].split(':')[0], _REMOVED)} WHERE id = ?)",
                [int(place["key"].split(":")[1])],
            ).fetchone()[0]
        ]
        if len(kept) != len(places):
            conn.execute(
                "UPDATE watched_names SET listed = ? WHERE name = ?", [json.dumps(kept) if kept else None, name]
            )
