"""The mirror's file: its shape, its one write path, and what keeps it whole.

- `tables.py`          the tables, indexes and triggers, declared once
- `schema.py`          the mirror opened, its declarations re-applied idempotently, bulk loads
- `migrations.py`      the data migrations, by the version that introduced each
- `fields.py`          every field of the two record kinds and how it crosses the SQLite boundary
- `rows.py`            records as received become rows: types, derived fields, what a stored row keeps
- `writer.py`          the only code that writes records into the mirror (row by row)
- `staged_write.py`    the set-based write of a big file's records, by the writer's rules
- `reflag.py`          re-flagging every listing's spam words when the dictionary changes
- `meta.py`            `mirror_meta`: the generation readers cache by
- `jobs.py`            the sync jobs (which table each fills, how fresh the service keeps it) and their freshness
- `feed_catalog.py`    the free public feeds declared (where, how often, which adapter) and their freshness
- `named.py`           a declared table of named things as a dict by name
- `held.py`            which of some keys a table holds
- `picked.py`          some of an object's attributes as a dict (a report's `to_dict`)
- `parquet_archive.py` closed listings moved into Parquet beside the mirror, and read back as one with it
- `packed.py`          closed listings packed as compressed records
- `closing.py`         what archiving and packing share
- `removal.py`         every row of one origin taken out
- `results.py`         each ended auction's result, the reported sales, the price ranges written
- `transaction.py`     a write that is all or nothing, however many steps it takes
- `lock.py`            one load at a time: the writer lock
- `access.py`          how the file may be opened, and who holds it
- `labels.py`          the words people read for each field, status and pipeline
- `damage.py`          a damaged file told from other failures; the quick check
- `page_reader.py`     what a file holds, its rows read through each table's own pages
- `diagnosis.py`       `edt doctor`'s diagnosis
- `doctor.py`          repair in place and salvage into a new mirror
"""
