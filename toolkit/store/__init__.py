"""The mirror's file: its shape, its one write path, and what keeps it whole.

- `schema.py`          the tables and indexes, declared once and re-applied idempotently
- `fields.py`          every field of the two record kinds and how it crosses the SQLite boundary
- `writer.py`          the only code that writes records into the mirror
- `reflag.py`          re-flagging every listing's spam words when the dictionary changes
- `meta.py`            `mirror_meta`: the generation readers cache by
- `jobs.py`            the sync jobs (which table each fills, how fresh the service keeps it) and their freshness
- `feed_catalog.py`    the free public feeds declared (where, how often, which adapter) and their freshness
- `parquet_archive.py` closed listings moved into Parquet beside the mirror, and read back as one with it
- `transaction.py`     a write that is all or nothing, however many steps it takes
- `lock.py`            one load at a time: the writer lock
- `access.py`          how the file may be opened, and who holds it
- `doctor.py`          damaged files: telling damage from other failures, and what can be saved
"""
