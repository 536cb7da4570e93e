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

from .page_table import PAGES, Page

__all__ = ["Page", "PAGES"]
