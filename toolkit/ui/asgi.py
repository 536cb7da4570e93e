"""What `streamlit run app.py` and `edt app` serve (Streamlit's `st.App`, an ASGI app): the
app's script (`run.py`), and beside it the CSV download routes (`exports.py`), the page's
front-end code named in its HTML (`assets.PagePreload`), Streamlit's front end and the
charts' library (`assets.ECHARTS_FILE`) sent from memory (`assets.FromMemory`), plus a
warm-up when the server starts.

The warm-up (a background thread, so the server answers at once) imports the pages'
libraries, pays Streamlit's own once-per-process costs of a first run, and opens the mirror
with its columnar index, all of which the first visitor would otherwise wait for.

`streamlit run toolkit/ui/run.py` (and `AppTest`) runs the script alone: the pages then
offer the CSV through Streamlit's own download button, held in memory.
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
from .assets import FromMemory, PagePreload, first_page_drawn, mark_served

__all__ = ["SCRIPT", "ROUTES", "MIDDLEWARE", "REST_AFTER_S", "lifespan", "warm_up"]

SCRIPT = str(Path(__file__).with_name("run.py"))
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


# How long the warm-up waits for the first visitor's page before it loads the rest anyway.
REST_AFTER_S = 20.0


def warm_up() -> None:
    """First what every page needs: the pages' own modules and the mirror with its columnar
    index (read from disk, or built when it is missing or stale). Then, once the first page is
    drawn (or after `REST_AFTER_S`), what only some pages use: pandas and Plotly (the charts,
    a domain's history), so that loading them neither holds up the first visitor's page nor
    waits for the visitor who opens a chart."""
    try:
        from . import pages  # noqa: F401 - the pages' modules (no pandas, no Plotly)
        from .state import db_path, reader

        _streamlit_first_run()

        if Path(db_path()).is_file():
            mirror = reader()
            mirror.search_domains({"per_page": "1"})  # loads (or starts building) the index
    except Exception:  # noqa: BLE001 - the first visitor sees the real error on the page
        log.exception("warm-up failed")
    first_page_drawn.wait(REST_AFTER_S)
    try:
        from . import echarts, signals  # noqa: F401 - pandas, Plotly, the charts' conversion
    except Exception:  # noqa: BLE001
        log.exception("warm-up failed")


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    mark_served()
    threading.Thread(target=warm_up, name="edt-warm-up", daemon=True).start()
    yield None

