"""The query layer: every read of the mirror goes through here.

- `mirror.py`     `Mirror`, the public API: connections, rows for typed keywords, and a door to each read below
- `replica.py`    the service's API answers: plan rules, the envelope, links, cursor, free-tier masks
- `listing_search.py` how a request's matches are found: the columnar index or the SQLite planner
- `index_keeper.py`   the columnar index's life: in use, read again, refreshed, rebuilt in the background
- `dataframes.py` the mirror as DataFrames (listings, results, pending-delete rows, a listing's history)
- `mirror_status.py`  `Mirror.status` and the live counts; `explain.py`, why an answer is empty
- `params.py`     every request parameter as data: parsing, validation, its condition
- `conditions.py` a filter's condition, once: as SQL and as a columnar mask
- `sqlplan.py`    the SQLite planner: filters as SQL, the cheapest index plan per request
- `columnar.py`   the columnar filter index: masks, counts and pages from NumPy arrays
- `aggregates.py` the chart pages' counts over every match (`Mirror.chart_counts`), from either engine
- `records.py`    output fields and how a stored row becomes a record
- `envelope.py`   the paged envelope (docs/reference/semantics.md)

The names below are imported when first used: `toolkit.query.params` alone does not load
the planner, the columnar index or NumPy.
"""

from __future__ import annotations

from .. import lazy_exports

__all__ = [
    "Mirror",
    "ENGINES",
    "LISTING_OUTPUT",
    "LISTING_EXPORT",
    "PENDING_OUTPUT",
    "FREE_FIELDS",
    "FREE_VISIBLE_NAMES",
]

_LAZY = {
    "Mirror": ".mirror",
    "ENGINES": ".mirror",
    "LISTING_OUTPUT": ".records",
    "LISTING_EXPORT": ".records",
    "PENDING_OUTPUT": ".records",
    "FREE_FIELDS": ".records",
    "FREE_VISIBLE_NAMES": ".records",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
