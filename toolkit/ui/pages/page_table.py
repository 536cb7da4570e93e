"""`PAGES`, the one table that names the app's pages (see the package's docstring)."""

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
        return importlib.import_module(f"{__package__}.{self.module}")

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
