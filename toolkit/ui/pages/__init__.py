"""The app's pages, one module each, and `PAGES`, the one table that names them.

A page is a function that draws it: the sidebar (`ui/__init__.py`) lists the pages in the
table's order under their titles, keeps the one shown in the URL (`?view=`) and calls its
function; `navigation` reads from the same table the settings each page keeps in the URL.

The table names each page's module by its name, imported when the page is first shown: the
pages draw through `navigation`, which reads this table, and a visitor's first page loads
only its own module (the server's warm-up, `asgi.load_libraries`, loads them all).

| view | module | the page |
| --- | --- | --- |
| explore, pending | `search_results` | the searchable table of listings, or of pending-delete names |
| detail | `domain` | one name, built around the bid (its signals: `domain_signals`) |
| trust-flow | `trust_flow` | Trust Flow x Citation Flow counts, a region's domains |
| archive | `archive_age` | ages, first-snapshot years, snapshots, languages |
| calendar | `drop_calendar` | auction ends or pending-delete drops per day, as .ics |
| watchlist | `watchlist_page` | saved searches, the shortlist, watched names |
| sync | `sync_status` | the datasets' freshness, a job or the free feeds run now |

`welcome` is the page of an empty mirror (no sidebar); `shared` holds what several pages use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Page", "PAGES"]


@dataclass(frozen=True)
class Page:
    title: str  # in the sidebar
    module: str  # the module of this package that draws it
    function: str  # the function of `module` that draws it
    # What the page keeps in the URL beside the filters, the plan and `view`: its own settings,
    # which no other page reads or carries (`navigation.move_to`). Explore and Pending-delete
    # name theirs alike (`cols`, `sort`, ...) with other meanings.
    own_keys: tuple[str, ...] = ()

    def load(self) -> ModuleType:
        """The page's module (imported on first use)."""
        return importlib.import_module(f"{__name__}.{self.module}")

    def draw(self) -> None:
        """Draw the page (a Streamlit script run)."""
        getattr(self.load(), self.function)()


_TABLE_KEYS = ("cols", "sort", "page", "per_page")  # a results table's columns, order and page

# view (in the URL) -> the page, in the sidebar's order.
PAGES: dict[str, Page] = {
    "explore": Page("Explore", "search_results", "explore", _TABLE_KEYS),
    "pending": Page("Pending-delete", "search_results", "pending_delete", _TABLE_KEYS),
    "detail": Page("Domain detail", "domain", "detail", ("name", "id", "comps_sort")),
    "trust-flow": Page(
        "Trust Flow / Citation Flow",
        "trust_flow",
        "trust_flow",
        ("tf_range", "cf_range", "zone_by", "points", "color_by"),
    ),
    "archive": Page("Archive age", "archive_age", "archive_age"),
    "calendar": Page(
        "Drop calendar", "drop_calendar", "drop_calendar", ("dates", "month", "cal_tld", "cal_status", "day")
    ),
    "watchlist": Page("Watchlist", "watchlist_page", "watchlist"),
    "sync": Page("Sync", "sync_status", "sync_page"),
}
