"""The app's CSV downloads: two routes that stream every matching row from the query layer.

- `GET /export/listings.csv?<the /api/domains filters>&plan=...&at=...` and
  `GET /export/pending-delete.csv?<the /api/pending-delete filters>&plan=...&at=...`: every
  matching row, written as it is read (constant memory, whatever the count), with exactly
  the rows the page counted: `at` stops the export's clock at the moment of that count, so
  an auction ending in between cannot change it. A bad filter is a 422 naming it, as the
  REST API answers; never a 500.

`app.py` serves them beside the page script (`toolkit/ui/asgi.py`); a page links to them only
when they are served (`exports_served`), else it offers Streamlit's in-memory download.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

__all__ = ["ROUTES", "exports_served", "mark_served", "export_url"]

_served = threading.Event()


def mark_served() -> None:
    """Called when the server that serves ROUTES starts."""
    _served.set()


def exports_served() -> bool:
    """True when this process serves the CSV routes (the app started through `st.App`)."""
    return _served.is_set()


def export_url(params: Mapping[str, str], *, plan: str, at: datetime, pending: bool) -> str:
    """The link that downloads every row of a search (its filters, no paging) as counted at `at`."""
    name = "pending-delete.csv" if pending else "listings.csv"
    query = {**{k: v for k, v in params.items() if k not in ("page", "per_page")}, "plan": plan, "at": at.isoformat()}
    return f"/export/{name}?{urlencode(query)}"


def _export(request: Request, *, pending: bool) -> Response:
    from ..errors import ApiError, invalid
    from ..formats import csv_chunks
    from ..plans import normalize_plan
    from ..query import LISTING_OUTPUT, PENDING_OUTPUT, Mirror
    from ..web import json_response
    from .state import db_path

    params = dict(request.query_params)
    try:
        at_text = params.pop("at", "")
        try:
            at = datetime.fromisoformat(at_text) if at_text else None
        except ValueError:
            raise invalid("at", "at: an ISO timestamp (2026-11-23T15:00:00+00:00), or leave it out") from None
        if at is not None and at.tzinfo is None:
            raise invalid("at", "at: give the timestamp's UTC offset (2026-11-23T15:00:00+00:00)")
        mirror = Mirror(db_path(), readonly=True, engine="sqlite", clock=(lambda: at) if at else None)
        plan_text = params.pop("plan", "") or mirror.plan
        try:
            plan = normalize_plan(plan_text)
        except ValueError as exc:
            raise invalid("plan", f"plan: {exc}") from None
        if pending:
            rows, header = mirror.export_pending_rows(params, plan=plan), list(PENDING_OUTPUT)
        else:
            rows, header = mirror.export_rows(params, plan=plan), [c for c in LISTING_OUTPUT if c != "historical_traffic"]
    except ApiError as exc:
        return json_response(exc.status, exc.body)
    name = "pending-delete.csv" if pending else "listings.csv"
    return StreamingResponse(csv_chunks(rows, header), media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": f'attachment; filename="{name}"'})  # fmt: skip


async def _listings_csv(request: Request) -> Response:
    return _export(request, pending=False)


async def _pending_csv(request: Request) -> Response:
    return _export(request, pending=True)


ROUTES = [
    Route("/export/listings.csv", _listings_csv, methods=["GET"]),
    Route("/export/pending-delete.csv", _pending_csv, methods=["GET"]),
]
