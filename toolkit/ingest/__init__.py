"""Public feed files into the mirror: `ingest_file(mirror, feed, path)`.

Each adapter reads one kind of public file and yields records in the API's shapes (listing,
pending-delete: docs/reference/fields.md); `ingest_file` is the one save step:

    from toolkit import Mirror
    from toolkit.ingest import ingest_file
    report = ingest_file(Mirror("data/mirror.db"), "droplist", "deleted_domains_2025-08-19.txt")
    print(report.summary())
    for problem in report.skipped:      # file:line: reason
        print(problem)

| feed | file | records |
|---|---|---|
| `godaddy` | GoDaddy Auctions inventory, zipped JSON `{"meta", "data"}` or CSV | listings, source `godaddy`, USD |
| `namecheap` | Namecheap Market's sales CSV (auctions) or its buy-now CSV | listings, source `namecheap`, USD |
| `bardate` | Internetstiftelsen's .se/.nu release list, JSON or TXT | pending-delete, official drop date |
| `droplist` | registry deletion / drop list: a name a line, or CSV with date columns | pending-delete, file date or lifecycle prediction |
| `zonediff` | two zone files / name lists of one TLD (`previous=` the older), or a folder / glob of daily snapshots (a replay) | pending-delete candidates with a drop window; `regfree` listings only for names `is_available` confirms |

A file is all or nothing: every good row is written in ONE transaction (`file_ingest.py`).
A file that cannot be read as the feed (wrong format, truncated) raises `IngestError` naming
the file, the line and the fix, and writes nothing. A bad row in a valid file is skipped and
reported; every good row is kept. Re-ingesting an unchanged file changes nothing but
`last_seen_at`.

- `file_ingest.py`  `ingest_file`, `ingest_url`, `IngestReport`: a file into the mirror
- `adapters.py`     `ADAPTERS`: the table of feeds, each adapter's rows, options and URL
- `common.py`       what the adapters share: errors, ids, names, money, dates and rows
- `feed_file.py`    a feed file read as a stream within its `Bounds`, its JSON and CSV, `fetch`
- `godaddy.py`, `namecheap.py`, `bardate.py`, `droplist.py`, `zonediff.py`: one adapter a feed
- `sales.py`        sales reported elsewhere (`edt ingest sales`)
- `lifecycle.py`    registry policies: the drop date and window of a name in a status
- `feed_runner.py`  the declared feeds (`toolkit.store.feed_catalog`) run as sync jobs

The names below are imported when first used: `toolkit.ingest.lifecycle` alone loads no
adapter.
"""

from __future__ import annotations

from .. import lazy_exports

__all__ = [
    "ADAPTERS",
    "Adapter",
    "Bounds",
    "DEFAULT_BOUNDS",
    "INGEST_ID_BASE",
    "INGEST_PENDING_SOURCES",
    "IngestError",
    "IngestReport",
    "Row",
    "Skipped",
    "fetch",
    "fetch_bardate",
    "fetch_droplist",
    "fetch_godaddy",
    "fetch_namecheap",
    "ingest_file",
    "ingest_id",
    "ingest_url",
    "parse_bardate",
    "parse_droplist",
    "parse_godaddy",
    "parse_namecheap",
    "parse_zonediff",
    "replay_rows",
    "snapshot_files",
    "zone_names",
]

_LAZY = {
    "ADAPTERS": ".adapters",
    "Adapter": ".adapters",
    "Bounds": ".feed_file",
    "DEFAULT_BOUNDS": ".feed_file",
    "INGEST_ID_BASE": ".common",
    "INGEST_PENDING_SOURCES": ".adapters",
    "IngestError": ".common",
    "IngestReport": ".file_ingest",
    "Row": ".common",
    "Skipped": ".common",
    "fetch": ".feed_file",
    "fetch_bardate": ".adapters",
    "fetch_droplist": ".adapters",
    "fetch_godaddy": ".adapters",
    "fetch_namecheap": ".adapters",
    "ingest_file": ".file_ingest",
    "ingest_id": ".common",
    "ingest_url": ".file_ingest",
    "parse_bardate": ".adapters",
    "parse_droplist": ".adapters",
    "parse_godaddy": ".adapters",
    "parse_namecheap": ".adapters",
    "parse_zonediff": ".adapters",
    "replay_rows": ".zonediff",
    "snapshot_files": ".zonediff",
    "zone_names": ".zonediff",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
