"""Bringing the remote API in, on schedule: the sync and what runs around it.

- `engine.py`         `edt sync`: the jobs' pages fetched, written and resumed (`sync`, `plan_sync`)
- `remote.py`         the API's client: paced by a shared rate budget, retried as docs/reference/errors.md says
- `schedule.py`       `edt schedule`: the jobs on the service's schedules, then the alerts
- `alerts.py`         saved-search alerts after every sync job (log, file, signed webhook)
- `saved_searches.py` saved searches and the shortlist (the app's Watchlist page, the alerts' input)

The jobs themselves are declared with the tables they fill (`toolkit.store.jobs`). The names
below are the ones `toolkit.sync` has always offered; each is imported when first used.
"""

from __future__ import annotations

from .. import lazy_exports

_LAZY = {
    "JOBS": "..store.jobs",
    "Job": "..store.jobs",
    "JobReport": ".engine",
    "CursorPages": ".engine",
    "NumberedPages": ".engine",
    "SyncBusy": ".engine",
    "SyncStopped": ".engine",
    "sync": ".engine",
    "plan_sync": ".engine",
    "fetch_pages": ".engine",
    "freshness": "..store.jobs",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
