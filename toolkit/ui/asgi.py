"""What `streamlit run app.py` and `edt app` serve (Streamlit's `st.App`, an ASGI app): the
app's page script (`script/page_script.py`), and beside it the CSV download routes (`exports.py`),
the page's front-end code named in its HTML (`assets.PagePreload`), Streamlit's front end
and the charts' library (`assets.ECHARTS_FILE`) sent from memory (`assets.FromMemory`),
plus a warm-up when the server starts.

The warm-up (a background thread, so the server answers at once) imports the pages'
libraries, pays Streamlit's own once-per-process costs of a first run, and opens the mirror
with its columnar index, all of which the first visitor would otherwise wait for.

`streamlit run toolkit/ui/script/page_script.py` (and `AppTest`) runs the script alone: the pages
then offer the CSV through Streamlit's own download button, held in memory.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.middleware import Middleware

from . import exports
from .assets import FromMemory, PagePreload, mark_served

__all__ = ["SCRIPT", "ROUTES", "MIDDLEWARE", "lifespan", "load_libraries", "warm_up"]

SCRIPT = str(Path(__file__).with_name("script") / "page_script.py")  # not beside pages/
log = logging.getLogger("toolkit.ui")
MIDDLEWARE = [Middleware(FromMemory), Middleware(PagePreload)]
ROUTES = exports.ROUTES


def _streamlit_first_run() -> None:
    """What Streamlit does once per process, in the first script run of the first visitor:
    compile its emoji pattern for the page icon (0.3 s) and look whether it runs in a REPL
    (a walk of the stack, 0.15 s). Private names, so each is skipped if it has moved."""
    from streamlit import delta_generator, string_util

    getattr(string_util, "is_emoji", lambda text: None)("🔎")
    getattr(delta_generator, "_maybe_print_use_warning", lambda: None)()


def load_libraries() -> None:
    """Before the server answers: the pages' modules and the libraries some pages draw with
    (pandas, Plotly and the charts' conversion: a chart of each kind made once; the public
    suffix list and the word splitter the domain page's comparables read), and Streamlit's own
    once-per-process work. The server answers that much later (one to two seconds on a loaded
    machine), and no visitor's page waits for them, nor shares the processor with them."""
    from ..analysis import charts, comps  # noqa: F401 - pandas, Plotly
    from ..names import split_domain
    from ..signals.spam import name_words
    from . import echarts
    from .pages import PAGES, domain_signals  # noqa: F401 - the domain page's, imported as it draws them

    for page in PAGES.values():
        page.load()
    echarts.warm_options()
    split_domain("example.co.uk")
    name_words("example")
    _streamlit_first_run()


def warm_up() -> None:
    """Open the mirror with its columnar index (read from disk, or built when it is missing or
    stale) and read its sold results for the comparables, in a background thread: the server
    answers at once whatever the mirror's size, and the first visitor seldom waits for them."""
    try:
        from .state import db_path, reader

        if Path(db_path()).is_file():
            mirror = reader()
            mirror.search_domains({"per_page": "1"})  # loads (or starts building) the index
            from ..analysis.comps import comparables

            comparables(mirror, "example.com", limit=1)  # reads the sold results once (the domain page's)
    except Exception:  # noqa: BLE001 - the first visitor sees the real error on the page
        log.exception("warm-up failed")


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    mark_served()
    try:
        load_libraries()
    except Exception:  # noqa: BLE001 - the page that needs it shows the real error
        log.exception("loading the pages' libraries failed")
    threading.Thread(target=warm_up, name="edt-warm-up", daemon=True).start()
    yield None
