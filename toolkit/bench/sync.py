"""The sync benchmark: `python -m toolkit.bench.sync [--remote DB] [--rate N] [--windows K] [--new N]`.

Against the replica on a loopback socket (its limit raised to `--rate` requests a minute):

1. Throughput. A full `listings` pass paced by the product's own limiter (the shared SQLite
   bucket, a 61 s window). Steady state is measured from the first request to the first
   request after `K` whole windows: rows per minute against the ceiling (rate x page size),
   and the 429s met (target: at least 0.95 of the ceiling, zero 429s).
2. Incremental cost. The remote gains `N` new listings; an incremental `listings` run is
   compared with a full re-sweep, in requests.

The remote defaults to a fresh `small` demo mirror in a temporary folder. Prints figures; it
asserts nothing (run it, read it, put the table in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx

from ..sync.remote import RemoteClient, shared_limiter
from ..serve.server import BackgroundServer, create_app
from ..store.fields import LISTING_FIELDS
from ..store.schema import connect
from ..store.writer import save_listings
from ..sync.engine import sync

KEY = "syncbench-key"


class Stamps(httpx.AsyncBaseTransport):
    """Notes when each request left and what came back."""

    def __init__(self, inner: httpx.AsyncBaseTransport):
        self.inner = inner
        self.sent: list[float] = []
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(time.monotonic())
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _listings(
    url: str, local: Path, *, per_minute: int, budget: Path | None, full: bool, stamps: Stamps | None = None
):
    limiter = shared_limiter(KEY, per_minute, path=budget) if budget else None
    inner = stamps if stamps is not None else httpx.AsyncHTTPTransport()
    client = RemoteClient(url, KEY, plan="business", per_minute=per_minute, limiter=limiter, transport=inner)
    async with client:
        return (await sync(local, client, plan="business", jobs=["listings"], full=full))[0]


def _add_listings(remote: Path, n: int) -> None:
    conn = connect(str(remote))
    template = dict(
        zip(
            LISTING_FIELDS,
            conn.execute(
                f"SELECT {', '.join(LISTING_FIELDS)} FROM listings WHERE source != 'regfree' LIMIT 1"
            ).fetchone(),
        )
    )
    for field in ("historical_tech", "use_cases", "historical_traffic", "ref_domains_by_tld", "anchors", "topics"):
        template.pop(field, None)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    top = conn.execute("SELECT max(id) FROM listings").fetchone()[0]
    fresh = [
        {**template, "id": top + 1 + i, "name": f"benchnew{i}.com", "created_at": now, "auction_end_date": None}
        for i in range(n)
    ]
    save_listings(conn, fresh, origin="demo", observed_at=now, keep_raw=False)
    conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.sync", description=__doc__.split("\n\n")[0])
    parser.add_argument("--remote", help="the replica's mirror (default: a fresh small demo)")
    parser.add_argument("--rate", type=int, default=20, help="requests per minute (replica limit and pacing)")
    parser.add_argument("--windows", type=int, default=2, help="whole pacing windows to measure over")
    parser.add_argument("--new", type=int, default=200, help="listings the remote gains before the incremental run")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="edt-syncbench-"))
    remote = Path(args.remote) if args.remote else work / "remote.db"
    if not args.remote:
        from ..demo import load_demo

        conn = connect(str(remote))
        load_demo(conn, scale="small", seed=3)
        conn.close()
    app = create_app(remote, keys={KEY: "business"}, rates={"business": args.rate})
    with BackgroundServer(app) as server:
        stamps = Stamps(httpx.AsyncHTTPTransport())
        started = time.monotonic()
        report = asyncio.run(
            _listings(
                server.url,
                work / "local.db",
                per_minute=args.rate,
                budget=work / "budget.sqlite",
                full=True,
                stamps=stamps,
            )
        )
        elapsed = time.monotonic() - started
        needed = args.windows * args.rate + 1
        print(
            f"Full listings pass: {report.seen:,} rows, {report.requests} requests in {elapsed:.1f} s, "
            f"{stamps.statuses.count(429)} answers 429, paced at {args.rate}/min"
        )
        if len(stamps.sent) >= needed:
            span = stamps.sent[needed - 1] - stamps.sent[0]
            rows = (needed - 1) * 100
            per_minute = rows / span * 60
            ceiling = args.rate * 100
            print(
                f"Steady state over {args.windows} windows: {per_minute:,.0f} rows/min against a ceiling of "
                f"{ceiling:,} ({args.rate} requests/min x 100 rows): {per_minute / ceiling:.3f} of the ceiling"
            )
        else:
            print(
                f"(too few requests for {args.windows} windows: need {needed}; lower --rate or use a larger --remote)"
            )
        _add_listings(remote, args.new)
        app_fast = create_app(remote, keys={KEY: "business"}, rates={"business": 100_000})
    with BackgroundServer(app_fast) as fast:
        incremental = asyncio.run(_listings(fast.url, work / "local.db", per_minute=100_000, budget=None, full=False))
        resweep = asyncio.run(_listings(fast.url, work / "local.db", per_minute=100_000, budget=None, full=True))
    print(
        f"After the remote gained {args.new} listings: incremental run {incremental.requests} requests "
        f"({incremental.new} new rows), full re-sweep {resweep.requests} requests: "
        f"{incremental.requests / max(resweep.requests, 1):.2f} of a re-sweep"
    )
    print(
        f"(created_after takes whole days, so an incremental run re-reads the listings added since the day "
        f"before its newest; at the plan's 15/min a re-sweep of {report.seen:,} rows takes "
        f"{math.ceil(report.seen / 100) / 15:.0f} min)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
