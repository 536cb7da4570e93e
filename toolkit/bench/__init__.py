"""The measuring tools, apart from the product (the product imports nothing from here).

- `query.py`    the query benchmark: the query layer against DuckDB and pandas (`edt bench`,
                `python -m toolkit.bench`); its names are also this package's, as before
- `sync.py`     the sync benchmark (`python -m toolkit.bench.sync`)
- `load.py`     the served replica under load, against Datasette (`python -m toolkit.bench.load`)
- `app.py`      the app's pages, timed through AppTest (`python -m toolkit.bench.app`)
- `browser.py`  the app in headless Chromium, a screenshot a page (`python -m toolkit.bench.browser`)
"""

from .query import (
    TARGET_MAX_MS,
    BenchQuery,
    BenchReport,
    QueryTiming,
    bench,
    build_suite,
    compare,
    format_report,
    load_frames,
    main,
    random_suite,
    run_bench,
    summarize,
)

__all__ = [
    "BenchQuery",
    "QueryTiming",
    "BenchReport",
    "build_suite",
    "random_suite",
    "run_bench",
    "bench",
    "main",
    "TARGET_MAX_MS",
    "compare",
    "format_report",
    "load_frames",
    "summarize",
]
