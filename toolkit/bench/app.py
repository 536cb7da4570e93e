"""The app's speed: `python -m toolkit.bench.app --db FULL_MIRROR`.

Each page of the Streamlit app is run through `streamlit.testing.v1.AppTest` (the same
script the browser gets, without the browser): its first render with empty caches, then one
filter change. Target: every figure under 2 s on the `full` demo mirror. Prints a table.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["main"]

APP = Path(__file__).resolve().parents[1] / "ui" / "script" / "page_script.py"
TARGET_S = 2.0


def _opened(at, group: str):
    """A sidebar group opened (its widgets are drawn only while open), not timed."""
    at.session_state[group] = True
    return at.run()


def _in_sidebar(group: str, widget: str, key: str, value: object) -> Callable[[Any], Any]:
    """The change: in the sidebar `group` (opened), the `widget` of `key` set to `value`."""
    return lambda at: getattr(_opened(at, group).sidebar, widget)(key=key).set_value(value)


def _timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.app", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db", required=True, help="the mirror (a full demo mirror for the figures of docs/benchmarks.md)"
    )
    args = parser.parse_args(argv)
    os.environ["EDT_DB"] = args.db
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ..query import Mirror

    Mirror(args.db, create=True).close()  # create or upgrade before the app opens it read-only
    some_name = Mirror(args.db, readonly=True).search_domains({"sort": "-bids_count", "per_page": 2})["data"][1]["name"]
    other_name = Mirror(args.db, readonly=True).search_domains({"per_page": 1})["data"][0]["name"]
    tf_min = ("tf_min = 20", _in_sidebar("f:group:seo", "number_input", "f:tf_min", 20))
    changes = {
        "explore": tf_min,
        "pending": ("tld = uk", _in_sidebar("p:group:source", "text_input", "p:tld", "uk")),
        "detail": ("another name", lambda at: at.text_input(key="detail_name").set_value(other_name)),
        "trust-flow": tf_min,
        "archive": ("language = FR", _in_sidebar("f:group:archive", "text_input", "f:language", "FR")),
        "calendar": ("pending drops", lambda at: at.radio(key="cal_kind").set_value("drops")),
        "watchlist": ("rerun", lambda at: at),
        "sync": ("rerun", lambda at: at),
    }
    rows = []
    for view, (what, change) in changes.items():
        st.cache_data.clear()
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params["view"] = view
        if view == "detail":
            at.query_params["name"] = some_name
        first = _timed(at.run)
        failed = [e.value for e in at.exception]
        change(at)
        again = _timed(at.run)
        failed += [e.value for e in at.exception]
        rows.append((view, first, what, again, failed))
    print(f"App pages on {args.db} (AppTest, caches cleared before each page):\n")
    print("| page | first render s | change | after change s | under 2 s |")
    print("|---|---:|---|---:|---|")
    for view, first, what, again, failed in rows:
        verdict = (
            "EXCEPTION: " + failed[0].splitlines()[0] if failed else ("yes" if max(first, again) < TARGET_S else "NO")
        )
        print(f"| {view} | {first:.2f} | {what} | {again:.2f} | {verdict} |")
    return 0 if all(not f and max(a, b) < TARGET_S for _, a, _, b, f in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
