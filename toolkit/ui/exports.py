"""The app's CSV downloads: two routes that stream every matching row from the query layer.

- `GET /export/listings.csv?<the /api/domains filters>&plan=...&at=...` and
  `GET /export/pending-delete.csv?<the /api/pending-delete filters>&plan=...&at=...`: every
  matching row, written as it is read (constant memory, whatever the count), with exactly
  the rows the page counted: `at` stops the export's clock at the moment of that count, so
  an auction ending in between cannot change it. A bad filter is a 422 naming it, as the
  REST API answers; never a 500.

`app.py` serves them beside the page script (`toolkit/ui/asgi.py`); a page links to them only
when they are served (`assets.served`), else it offers Streamlit's in-memory download.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

__all__ = ["ROUTES", "export_url", "csv_name", "search_csv"]


def csv_name(pending: bool) -> str:
    """The file a download of listings, or of pending-delete names, is saved as."""
    return "pending-delete.csv" if pending else "listings.csv"


def export_url(params: Mapping[str, str], *, plan: str, at: datetime, pending: bool) -> str:
    """The link that downloads every row of a search (its filters, no paging) as counted at `at`."""
    query = {**{k: v for k, v in params.items() if k not in ("page", "per_page")}, "plan": plan, "at": at.isoformat()}
    return f"/export/{csv_name(pending)}?{urlencode(query)}"


def search_csv(mirror: Any, params: Mapping[str, Any], *, plan: str, pending: bool) -> Iterator[bytes]:
    """Every row of a search (listings, or pending-delete names) as CSV pieces, streamed from
    the query layer. The filters and the plan are checked at once (ApiError), before any piece."""
    from ..formats import csv_chunks
    from ..query import LISTING_EXPORT, PENDING_OUTPUT

    if pending:
        return csv_chunks(mirror.export_pending_rows(params, plan=plan), list(PENDING_OUTPUT))
    return csv_chunks(mirror.export_rows(params, plan=plan), list(LISTING_EXPORT))


def _export(request: Request, *, pending: bool) -> Response:
    from ..errors import ApiError, invalid
    from ..plans import normalize_plan
    from ..serve.web import json_response
    from .state import exporter

    params = dict(request.query_params)
    try:
        at_text = params.pop("at", "")
        try:
            at = datetime.fromisoformat(at_text) if at_text else None
        except ValueError:
            raise invalid("at", "at: an ISO timestamp (2026-11-23T15:00:00+00:00), or leave it out") from None
        if at is not None and at.tzinfo is None:
            raise invalid("at", "at: give the timestamp's UTC offset (2026-11-23T15:00:00+00:00)")
        mirror = exporter(at)
        plan_text = params.pop("plan", "") or mirror.plan
        try:
            plan = normalize_plan(plan_text)
        except ValueError as exc:
            raise invalid("plan", f"plan: {exc}") from None
        chunks = search_csv(mirror, params, plan=plan, pending=pending)
    except ApiError as exc:
        return json_response(exc.status, exc.body)
    return StreamingResponse(
        chunks,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{csv_name(pending)}"'},
    )


async def _listings_csv(request: Request) -> Response:
    return _export(request, pending=False)


async def _pending_csv(request: Request) -> Response:
    return _export(request, pending=True)


ROUTES = [
    Route("/export/listings.csv", _listings_csv, methods=["GET"]),
    Route("/export/pending-delete.csv", _pending_csv, methods=["GET"]),
]
