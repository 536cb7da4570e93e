"""The set-based write: a big file's records normalised once into a table beside the mirror
(`staging`), then merged by the row-by-row writer's rules (`toolkit.store.writer`) in a few
statements inside the caller's transaction, a changed row rewriting only the columns that
changed (`StagedWrite`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..signals.inflation import METRICS, flag_metric_jumps
from .fields import SQL_TYPES
from .meta import bump_generation
from .reflag import current_spam_flags
from .schema import without_trigger
from .tables import SEEN_TRIGGERS
from .rows import HISTORY_FIELDS, LISTING_KIND, PENDING_KIND, SIGNAL_COLUMNS, WriteCounts, unknown_fields

__all__ = ["StagedWrite", "staging", "SLICE_ROWS"]

_KINDS = {kind.table: kind for kind in (LISTING_KIND, PENDING_KIND)}
SLICE_ROWS = 256  # rows one statement of a set-based write changes at most (`StagedWrite._sliced`)
_LAST = (1 << 63) - 1  # above every id and place
_HISTORY_INSERT = (
    f"INSERT INTO main.listing_history (listing_id, observed_at, {', '.join(HISTORY_FIELDS)}) "
    f"SELECT {{id}}, :stamp, {', '.join('{t}.' + f for f in HISTORY_FIELDS)} FROM {{source}}"
)


@contextmanager
def staging(conn: sqlite3.Connection, name: str = "stage") -> Iterator[str]:
    """A database attached for the set-based writes of one load, yielding its name: a temporary
    file (a named one: SQLite keeps a nameless one in memory when temp_store is MEMORY, as the
    mirror's connections have it), so that a big file's staged rows take disk, not memory.
    Attach it before the load's transaction begins; it is removed when the block ends."""
    _forget_stages_of_the_dead()
    folder = tempfile.mkdtemp(prefix=f"{_STAGE_PREFIX}{os.getpid()}-")
    conn.execute(f"ATTACH DATABASE ? AS {name}", [os.path.join(folder, "stage.db")])
    try:
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-16384"):
            conn.execute(f"PRAGMA {name}.{pragma}")
        yield name
    finally:
        try:
            if conn.in_transaction:  # the load's transaction ended; only an error leaves one open
                conn.rollback()
            conn.execute(f"DETACH DATABASE {name}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


_STAGE_PREFIX = "edt-stage-"


def _forget_stages_of_the_dead() -> None:
    """Remove the staging folders of loads that were killed (`kill -9` runs no `finally`):
    each is named by its process, which is gone."""
    for entry in Path(tempfile.gettempdir()).glob(f"{_STAGE_PREFIX}*-*"):
        pid = entry.name[len(_STAGE_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except OSError:  # alive, another user's
            continue


def _literal(value: Any, sql_type: str) -> str | None:
    """`value` as SQL text, when it can be written into a statement once for every row (NULL,
    a whole number of an INTEGER column, a text of a TEXT column); None: it is bound."""
    if value is None:
        return "NULL"
    if type(value) is int and sql_type == "INTEGER":
        return str(value)
    if type(value) is str and sql_type == "TEXT" and "\x00" not in value:
        return "'" + value.replace("'", "''") + "'"
    return None


def _insert(
    conn: sqlite3.Connection,
    into: str,
    names: Sequence[str],
    types: Sequence[str],
    rows: list[tuple],
    conflict: str = "",
) -> None:
    """INSERT `rows` (tuples in `names` order) into `into`. A column that holds the same value in
    every row is written into the statement once; only the others are bound row by row (binding
    is most of an insert's cost, and a feed's rows share most of their columns: origin, times,
    empty fields)."""
    if not rows:
        return
    columns = list(zip(*rows))
    bound, values = [], []
    for column, sql_type, name in zip(columns, types, names):
        first = column[0]
        literal = _literal(first, sql_type) if column[-1] == first and column.count(first) == len(column) else None
        values.append(literal or "?")
        if literal is None:
            bound.append(column)
    conn.executemany(
        f"INSERT INTO {into} ({', '.join(names)}) VALUES ({', '.join(values)}) {conflict}",
        zip(*bound) if bound else [()] * len(rows),
    )


def _same(columns: Iterable[str], a: str = "s", b: str = "o") -> str:
    return " AND ".join(f"{a}.{c} IS {b}.{c}" for c in columns) or "1"


class StagedWrite:
    """Records of one table (`listings`, `pending_delete`) written set-based, by the rules of
    `save_listings` / `save_pending`, inside the caller's transaction:

        with staging(conn) as stage:        # before the transaction
            ... begin it ...
            staged = StagedWrite(conn, "listings", stage, origin=..., observed_at=..., tags={"line": "INTEGER"})
            refused = staged.add(records, tags)     # each normalised once (listing_row), staged
            staged.seen(ids, tags)                  # rows the caller knows unchanged: only seen again
            dropped = staged.repeats()              # an id staged twice keeps its first row
            counts = staged.write(sticky=("created_at",), changed_at="updated_at")

    A stage row keeps the caller's `tags` (where it came from) beside the table's columns, in
    the order added (`_seq`). Into a table holding no rows yet, `add` writes each row straight
    into the mirror (the first of an id kept) and stages its id and tags alone.

    `write` merges what is staged: new rows inserted; a stored row rewritten in the columns that
    changed only (a column no index holds costs a row's write, one an index holds that index's
    too), a stored row's kept columns kept (`Kind`); history for each new row and each change
    of a price field or metric, the metric jumps flagged again for rises; raw records written
    where they changed; the rows only seen again get their last sighting."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        stage: str,
        *,
        origin: str,
        observed_at: str,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.conn, self.kind, self.origin, self.observed_at = conn, _KINDS[table], origin, observed_at
        self.table = f"{stage}.{table}"  # the stage table, for the caller's own reads of its tags
        self.tags = dict(tags or {})
        self._types = [SQL_TYPES[t] for t in self.kind.columns.values()]
        self._values = itemgetter(*self.kind.names)
        self._seq = 0
        self._deduped = False
        self._staged: list[list[Any]] = [[], [], []]  # the ids, places and only-seen flags staged, as arrays
        # Straight into the mirror when it holds no row of the table (nor a raw record of its kind) yet.
        self.direct = (
            conn.execute(f"SELECT 1 FROM main.{table} LIMIT 1").fetchone() is None
            and conn.execute("SELECT 1 FROM main.raw_records WHERE kind = ? LIMIT 1", [self.kind.raw_kind]).fetchone()
            is None
        )
        columns = [f"{c} {t}" for c, t in zip(self.kind.names, self._types)]
        conn.execute(
            f"CREATE TABLE {self.table} (_seq INTEGER PRIMARY KEY, {', '.join(columns)}, _raw TEXT, "
            f"{''.join(f'_{t} {sql}, ' for t, sql in self.tags.items())}_seen INTEGER, _present INTEGER, "
            "_mask TEXT, _history INTEGER, _rose INTEGER)"
        )
        if table == "listings":
            current_spam_flags(conn)

    def _next(self, count: int) -> range:
        start = self._seq + 1
        self._seq += count
        return range(start, start + count)

    def next(self, count: int) -> range:
        """The places of the next `count` rows in the load (see `add`)."""
        return self._next(count)

    def add(
        self, records: list[dict[str, Any]], tags: list[tuple] | None = None, order: Sequence[int] | None = None
    ) -> list[tuple[int, str]]:
        """Normalise each record (`listing_row` / `pending_row`, records of stored types) and stage
        it with its tags (a tuple in `tags` order, one a record) at its place in the load (`order`,
        rising numbers; default: after what is staged). Returns (index, reason) of each record the
        normalisation refuses; the others are staged."""
        kind, names = self.kind, self.kind.names
        order = order if order is not None else self._next(len(records))
        rows, raws, kept_tags, seqs, refused = [], [], [], [], []
        for index, record in enumerate(records):
            try:
                row = self._values(
                    kind.to_row(record, origin=self.origin, observed_at=self.observed_at, canonical=True)
                )
            except (ValueError, TypeError) as exc:
                refused.append((index, str(exc)))
                continue
            rows.append(row)
            raws.append(unknown_fields(record, kind))
            kept_tags.append(tags[index] if tags else ())
            seqs.append(order[index])
        self._note([row[0] for row in rows], seqs, seen=False)
        tag_names = [f"_{t}" for t in self.tags]
        tag_types = list(self.tags.values())
        if self.direct:
            _insert(self.conn, f"main.{kind.table}", names, self._types, rows, "ON CONFLICT(id) DO NOTHING")
            _insert(
                self.conn,
                "main.raw_records",
                ("kind", "id", "raw"),
                ("TEXT", "INTEGER", "TEXT"),
                [(kind.raw_kind, row[0], raw) for row, raw in zip(rows, raws) if raw is not None],
                "ON CONFLICT(kind, id) DO NOTHING",
            )
            _insert(
                self.conn,
                self.table,
                ("_seq", "id", names[1], *tag_names),
                ("INTEGER", "INTEGER", "TEXT", *tag_types),
                [(seq, row[0], row[1], *tag) for seq, row, tag in zip(seqs, rows, kept_tags)],
            )
        else:
            _insert(
                self.conn,
                self.table,
                ("_seq", *names, "_raw", *tag_names),
                ("INTEGER", *self._types, "TEXT", *tag_types),
                [(seq, *row, raw, *tag) for seq, row, raw, tag in zip(seqs, rows, raws, kept_tags)],
            )
        return refused

    def seen(self, ids: Sequence[int], tags: list[tuple] | None = None, order: Sequence[int] | None = None) -> None:
        """Stage rows the mirror holds unchanged (by id, with their tags, at their place in the
        load: see `add`): `write` moves only their last sighting."""
        if self.direct and ids:
            raise ValueError(f"{self.kind.table} holds no rows: none can be seen again")
        tag_names = [f"_{t}" for t in self.tags]
        order = order if order is not None else self._next(len(ids))
        self._note(ids, order, seen=True)
        self.conn.executemany(
            f"INSERT INTO {self.table} (_seq, id, _seen{''.join(', ' + t for t in tag_names)}) "
            f"VALUES (?, ?, 1{', ?' * len(tag_names)})",
            [(seq, row_id, *tag) for seq, row_id, tag in zip(order, ids, tags or [()] * len(ids))],
        )

    def _note(self, ids: Sequence[int], order: Sequence[int], *, seen: bool) -> None:
        """Keep the staged ids and places as arrays (17 bytes a row, where SQLite would sort them
        in memory): `repeats` and the last sightings read them."""
        import numpy as np

        if len(ids):
            for kept, values in zip(
                self._staged, (np.array(ids, dtype=np.int64), np.array(order, dtype=np.int64), np.full(len(ids), seen))
            ):
                kept.append(values)

    def _arrays(self) -> list[Any]:
        """The staged ids, places and only-seen flags, one array each."""
        import numpy as np

        if any(len(kept) != 1 for kept in self._staged):
            empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))
            self._staged = [[np.concatenate(kept) if kept else none] for kept, none in zip(self._staged, empty)]
        return [kept[0] for kept in self._staged]

    def repeats(self) -> list[tuple[Any, ...]]:
        """Drop every staged row whose id an earlier one holds (the first is kept); returns each
        dropped row as (its name, the first's tags, its tags), the name read from the mirror for
        a row only seen again."""
        import numpy as np

        if self._deduped:
            return []
        self._deduped = True
        ids, places, seen = self._arrays()
        order = np.lexsort((places, ids))  # by id, then place
        ids, places = ids[order], places[order]
        repeated = np.flatnonzero(ids[1:] == ids[:-1]) + 1
        if not len(repeated):
            return []
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        firsts = places[starts[np.searchsorted(starts, repeated, side="right") - 1]].tolist()
        later = places[repeated].tolist()
        keep = np.ones(len(ids), dtype=bool)
        keep[repeated] = False
        self._staged = [[ids[keep]], [places[keep]], [seen[order][keep]]]
        name, tags = self.kind.names[1], ", ".join(f"_{t}" for t in self.tags) or "NULL"
        found = {
            row[0]: row[1:]
            for row in self.conn.execute(
                f"SELECT _seq, coalesce(s.{name}, (SELECT m.{name} FROM main.{self.kind.table} m WHERE m.id = s.id)), {tags} "
                f"FROM {self.table} s WHERE _seq IN (SELECT value FROM json_each(?))",
                [json.dumps(later + firsts)],
            )
        }
        self.conn.execute(
            f"DELETE FROM {self.table} WHERE _seq IN (SELECT value FROM json_each(?))", [json.dumps(later)]
        )
        dropped = sorted(zip(later, firsts))
        return [(found[seq][0], found[first][1:], found[seq][1:]) for seq, first in dropped]

    def foreign(self) -> list[tuple[Any, ...]]:
        """Drop every staged row whose id the mirror holds under another name (a hash collision);
        returns each as (its id, its name, the holder's name, its tags)."""
        if self.direct:
            return []
        name = self.kind.names[1]
        tags = ", ".join(f"s._{t}" for t in self.tags) or "NULL"
        found = self.conn.execute(
            f"SELECT s._seq, s.id, s.{name}, m.{name}, {tags} FROM {self.table} s "
            f"JOIN main.{self.kind.table} m ON m.id = s.id "
            f"WHERE s._seen IS NULL AND m.{name} IS NOT s.{name}"
        ).fetchall()
        self.conn.executemany(f"DELETE FROM {self.table} WHERE _seq = ?", [(row[0],) for row in found])
        return [(row[1], row[2], row[3], row[4:]) for row in found]

    def _slices(self, where: str, params: dict[str, Any], rows: int, order: str = "_seq") -> list[dict[str, int]]:
        """Bounds (`low` <= `order` < `high`) of the stage rows matching `where`, `rows` at a time."""
        starts = [
            r[0]
            for r in self.conn.execute(
                f"SELECT {order} FROM (SELECT {order}, row_number() OVER (ORDER BY {order}) AS n FROM {self.table} "
                f"WHERE {where}) WHERE n % {rows} = 1",
                params,
            )
        ]
        return [{"low": low, "high": high} for low, high in zip(starts, [*starts[1:], _LAST])]

    def _sliced(
        self, sql: str, where: str, params: dict[str, Any], rows: int = SLICE_ROWS, order: str = "_seq"
    ) -> None:
        """Run `sql` (whose stage rows are those `where` picks, within `:low` and `:high`) a slice
        of `rows` at a time: SQLite journals in memory each page a statement changes until the
        statement ends, and a listing changes a page of each of its two dozen indexes."""
        for bounds in self._slices(where, params, rows, order):
            self.conn.execute(sql, {**params, **bounds})

    def write(
        self, *, sticky: tuple[str, ...] = (), changed_at: str | None = None, flag_jumps: bool = True
    ) -> WriteCounts:
        """Write what is staged into the mirror; returns the counts. `sticky`: columns a stored
        row keeps whatever the record says; `changed_at`: a column stamped with `observed_at`
        only when the row changed (any column but the sightings, the signals and itself, or its
        raw record), else kept."""
        if not self._deduped:
            self.repeats()
        conn, kind, stage = self.conn, self.kind, self.table
        main, at = f"main.{kind.table}", {"stamp": self.observed_at, "raw_kind": kind.raw_kind}
        history = kind is LISTING_KIND
        within = "_seq >= :low AND _seq < :high"
        counts = WriteCounts(seen=conn.execute(f"SELECT count(*) FROM {stage}").fetchone()[0])
        bump_generation(conn)  # what this write notes for the columnar index is newer than any index read before it
        if self.direct:
            counts.new = counts.seen
            if history:
                self._sliced(
                    _HISTORY_INSERT.format(id="m.id", t="m", source=f"{stage} s JOIN {main} m ON m.id = s.id")
                    + f" WHERE s.{within} ORDER BY s._seq",
                    "1",
                    at,
                    SLICE_ROWS * 16,
                )
            return counts
        # A stored row's kept columns, as `_save` keeps them, and the caller's sticky ones.
        rules = {c: f"o.{c}" for c in sticky}
        rules.update({c: f"coalesce(o.{c}, s.{c})" for c in kind.kept})
        rules.update({c: f"coalesce(s.{c}, o.{c})" for c in kind.kept_unless_given})
        for column, sources in kind.kept_while_same:
            rules[column] = f"CASE WHEN o.{column} IS NOT NULL AND {_same(sources)} THEN o.{column} ELSE s.{column} END"
        rules["_present"] = "1"
        conn.execute(
            f"UPDATE {stage} AS s SET {', '.join(f'{c} = {e}' for c, e in rules.items())} FROM {main} AS o "
            f"WHERE o.id = s.id AND s._seen IS NULL"
        )
        if changed_at:
            compared = [
                c for c in kind.names if c not in ("first_seen_at", "last_seen_at", changed_at, *SIGNAL_COLUMNS)
            ]
            conn.execute(
                f"UPDATE {stage} AS s SET {changed_at} = CASE WHEN {_same(compared)} AND s._raw IS "
                f"(SELECT r.raw FROM main.raw_records r WHERE r.kind = :raw_kind AND r.id = s.id) "
                f"THEN o.{changed_at} ELSE s.{changed_at} END FROM {main} AS o WHERE o.id = s.id AND s._present",
                at,
            )
        written = [c for c in kind.names if c not in ("id", "first_seen_at")]  # an upsert's columns
        flags = {"_mask": " || ".join(f"(s.{c} IS NOT o.{c})" for c in written)}
        if history:
            flags["_history"] = f"NOT ({_same(HISTORY_FIELDS)})"
            flags["_rose"] = " OR ".join(
                f"(o.{m} IS NOT NULL AND s.{m} IS NOT NULL AND s.{m} > o.{m})" for m in METRICS
            )
        conn.execute(
            f"UPDATE {stage} AS s SET {', '.join(f'{c} = {e}' for c, e in flags.items())} FROM {main} AS o "
            "WHERE o.id = s.id AND s._present"
        )
        new = "_seen IS NULL AND _present IS NULL"
        counts.new = conn.execute(f"SELECT count(*) FROM {stage} WHERE {new}").fetchone()[0]
        masks = [m for (m,) in conn.execute(f"SELECT DISTINCT _mask FROM {stage} WHERE _present")]
        seen_at = written.index("last_seen_at")
        moved = [m for m in masks if "1" in m[:seen_at] + m[seen_at + 1 :]]
        counts.updated = conn.execute(
            f"SELECT count(*) FROM {stage} WHERE _mask IN (SELECT value FROM json_each(?))", [json.dumps(moved)]
        ).fetchone()[0]
        names = ", ".join(kind.names)
        self._sliced(
            f"INSERT INTO {main} ({names}) SELECT {names} FROM {stage} WHERE {new} AND {within} ORDER BY id", new, at
        )
        for mask in masks:  # each set of changed columns in one statement a slice
            changed = [c for c, bit in zip(written, mask) if bit == "1"]
            if changed:
                self._sliced(
                    f"UPDATE {main} AS o SET ({', '.join(changed)}) = ({', '.join('s.' + c for c in changed)}) "
                    f"FROM {stage} AS s WHERE s._mask = :mask AND s.{within} AND s.id = o.id",
                    "_mask = :mask",
                    {**at, "mask": mask},
                )
        if history:
            self._sliced(
                _HISTORY_INSERT.format(id="id", t=stage, source=stage)
                + f" WHERE {stage}.{within} AND _seen IS NULL AND (_present IS NULL OR _history) ORDER BY _seq",
                "_seen IS NULL AND (_present IS NULL OR _history)",
                at,
            )
        self._sliced(
            f"INSERT INTO main.raw_records (kind, id, raw) SELECT :raw_kind, s.id, s._raw FROM {stage} s "
            f"WHERE s.{within} AND s._seen IS NULL AND s._raw IS NOT NULL AND s._raw IS NOT "
            "(SELECT r.raw FROM main.raw_records r WHERE r.kind = :raw_kind AND r.id = s.id) ORDER BY s.id "
            "ON CONFLICT(kind, id) DO UPDATE SET raw = excluded.raw",
            "_seen IS NULL AND _raw IS NOT NULL",
            at,
        )
        # Only seen again: the last sighting, in id order (each page of the table rewritten once),
        # the generation bumped once above rather than by a trigger a row.
        import numpy as np

        ids, _, seen = self._arrays()
        ids = np.sort(ids[seen])
        with without_trigger(conn, SEEN_TRIGGERS[kind.table]):
            for start in range(0, len(ids), SLICE_ROWS * 16):
                conn.execute(
                    f"UPDATE {main} SET last_seen_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                    [self.observed_at, json.dumps(ids[start : start + SLICE_ROWS * 16].tolist())],
                )
        if history and flag_jumps:
            rising = [row[0] for row in conn.execute(f"SELECT id FROM {stage} WHERE _rose ORDER BY _seq")]
            if rising:
                flag_metric_jumps(conn, rising)
        return counts
