"""The measuring tools, apart from the product (the product imports nothing from here).

- `query.py`    the query benchmark: the query layer against DuckDB and pandas (`edt bench`,
                `python -m toolkit.bench`): the run and its report; its names are also this
                package's. Its suite is `query_suite.py`, each query read from the documented
                semantics `query_spec.py`, the three engines `engines.py`
- `sync.py`     the sync benchmark (`python -m toolkit.bench.sync`)
- `load.py`     the served replica under load, against Datasette (`python -m toolkit.bench.load`)
- `app.py`      the app's pages, timed through AppTest (`python -m toolkit.bench.app`)
- `browser.py`  the app in headless Chromium, a screenshot a page (`python -m toolkit.bench.browser`)
"""

from __future__ import annotations

from .. import lazy_exports

_LAZY = {
    "BenchQuery": ".query_suite",
    "QueryTiming": ".query",
    "BenchReport": ".query",
    "build_suite": ".query_suite",
    "random_suite": ".query_suite",
    "run_bench": ".query",
    "bench": ".query",
    "main": ".query",
    "TARGET_MAX_MS": ".query",
    "compare": ".query",
    "format_report": ".query",
    "load_frames": ".engines",
    "summarize": ".query",
}

__all__ = list(_LAZY)  # the query benchmark's names

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
