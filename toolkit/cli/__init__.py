"""`edt`: the command line, a thin shell over the toolkit's Python API.

- `shell.py`  the `edt` group, the shared options and checks, failures as one line
- `load.py`   bringing rows in: demo, sync, enrich
- `ingest.py` reading files in: ingest (a feed, a sales CSV), backtest (the drop dates they predict)
- `read.py`   reading the mirror: query, export, status
- `watch.py`  keeping watch: watch (saved searches), schedule
- `serve.py`  serving it: serve, mcp, app
- `signals.py` judging signals: spam (the spam dictionary), fx (the ECB table)
- `tools.py`  the measuring tools: bench
- `doctor.py` a damaged mirror's file: doctor (what is sound, repair, salvage)
- `archive.py` listings closed long ago: archive (to Parquet beside the mirror, and back)

Each command imports what it needs when it runs, so `edt --help` starts at once.
"""

from . import archive, doctor, ingest, load, read, serve, signals, tools, watch  # noqa: F401  (each registers its commands on the group)
from .shell import cli, main

__all__ = ["main", "cli"]
