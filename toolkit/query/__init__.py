"""The query layer: every read of the mirror goes through here.

- `mirror.py`    `Mirror`, the public API: validation, plan rules, the envelope
- `sqlplan.py`   the SQLite planner: filters as SQL, the cheapest index plan per request
- `columnar.py`  the columnar filter index: masks, counts and pages from NumPy arrays
- `aggregates.py` the chart pages' counts over every match (`Mirror.chart_counts`), from either engine
- `records.py`   output fields and how a stored row becomes a record
- `envelope.py`  the paged envelope (contract section 4)
"""

from .mirror import ENGINES, Mirror
from .records import FREE_FIELDS, FREE_VISIBLE_NAMES, LISTING_EXPORT, LISTING_OUTPUT, PENDING_OUTPUT

__all__ = ["Mirror", "ENGINES", "LISTING_OUTPUT", "LISTING_EXPORT", "PENDING_OUTPUT", "FREE_FIELDS", "FREE_VISIBLE_NAMES"]
