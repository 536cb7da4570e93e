"""Load check: `edt serve` under concurrent keyed clients, next to Datasette on the same file.

    python -m toolkit.bench.load --db /path/to/full-demo.db [--clients 8] [--requests 250] [--markdown]

A script, not a timed test. It starts `edt serve` (one uvicorn process) with one Business
key per client, and Datasette (`datasette serve --immutable`, facet suggestions off and a
30 s SQL time limit so that it answers every query of the suite; its defaults otherwise) on
the same SQLite file, each on a free loopback port. Then, for each server in turn, N
clients with one keep-alive connection each send a bounded number of requests, cycling
through the same suite of filtered first pages (`/api/domains?...` and the equivalent
Datasette table filters: `tld=.fr` <-> `tld=.fr&live_until__gt=...&source__not=regfree`,
and so on).

Checks, any failure makes the exit status 1:
- the suite is equivalent: each query's total on the replica equals Datasette's count
  (Datasette's own errors are reported, they do not fail the check);
- zero errors: every replica answer is a 200 JSON envelope or a correct 429 (body
  `{"message": "Too Many Attempts."}`, `Retry-After: 60`, `X-RateLimit-Remaining: 0`, and
  only once the key made its limit of requests within 60 seconds); every 200 carries
  `X-RateLimit-Limit` and the exact `X-RateLimit-Remaining`;
- a limit probe: one more Business key sends limit + 10 requests: exactly `limit` pass and
  the rest are correct 429s; the free endpoint passes 3 requests from one address, then 429s.

The report: requests per second and latency percentiles per server, and whether the
replica reaches Datasette's throughput (the target). The client is a minimal asyncio
HTTP/1.1 client (no dependency), the same for both servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from .app_server import free_port, stop_process

__all__ = ["main", "suite", "LoadResult"]

LIMIT_BODY = {"message": "Too Many Attempts."}


# -- the suite: replica parameters and the equivalent Datasette table filters --------------------


def suite(now: datetime) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(name, /api/domains params, Datasette filters) for first pages of 50 rows."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    tomorrow = (now + timedelta(days=1)).date().isoformat()
    ten_years = f"{now.year - 10:04d}-{now.month:02d}-{now.day:02d}"
    live = {"live_until__gt": stamp, "source__not": "regfree"}  # what "live, not regfree" is in SQL

    def case(name: str, params: dict[str, str], **filters: str) -> tuple[str, dict[str, str], dict[str, str]]:
        sort = params.get("sort", "-score")  # Datasette's order: the same sort
        return name, params, {**live, **filters, **({"_sort_desc": sort[1:]} if sort[0] == "-" else {"_sort": sort})}

    return [
        case("default order", {}),
        case("tld=.fr", {"tld": ".fr"}, tld=".fr"),
        case("tld=.de tf>=20", {"tld": ".de", "tf_min": "20"}, tld=".de", trust_flow__gte="20"),
        case("has_bids, most bids", {"has_bids": "1", "sort": "-bids_count"}, bids_count__gt="0"),
        case("dynadot <= 50", {"source": "dynadot", "price_max": "50"}, source="dynadot", effective_price__lte="50"),
        case("score>=50 by TF", {"score_min": "50", "sort": "-trust_flow"}, score__gte="50"),
        case(
            "cheapest closeouts",
            {"type": "closeout", "price_min": "0", "sort": "effective_price"},
            type="closeout",
            effective_price__gte="0",
        ),
        case("contains shop", {"contains": "shop"}, name__contains="shop"),
        case(
            "ending by tomorrow",
            {"ends_before": tomorrow, "sort": "auction_end_date"},
            auction_end_date__lt=tomorrow,
            auction_end_date__gt=stamp,
        ),
        case("has_gmb", {"has_gmb": "1"}, has_gmb="1"),
        case("age>=10 .com", {"age_min": "10", "tld": ".com"}, wayback_first_date__lte=ten_years, tld=".com"),
        case("100 rows .com", {"tld": ".com", "per_page": "100"}, tld=".com", _size="100"),
    ]


# -- a minimal keep-alive HTTP/1.1 client ---------------------------------------------------------------


class Http:
    def __init__(self, port: int, headers: dict[str, str] | None = None):
        self.port = port
        self.headers = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{self.headers}\r\n"
        self.writer.write(request.encode("ascii"))
        await self.writer.drain()
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        else:
            body = await self.reader.read()
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, headers, body

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None


# -- servers -------------------------------------------------------------------------------------------------


def _wait_ready(port: int, process: subprocess.Popen, path: str, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited:\n{log.read_text()[-2000:]}")
        try:
            status, _, _ = asyncio.run(Http(port).get(path))
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server on port {port} did not answer within {timeout:.0f} s:\n{log.read_text()[-2000:]}")


# -- the load --------------------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    server: str
    clients: int
    per_client: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


Validator = Callable[[int, dict[str, str], bytes, list[float], float], str | None]


def _replica_validator(limit: int) -> Callable[[], Validator]:
    """A fresh per-client validator: 200 envelopes with exact remaining counts, correct 429s."""

    def make() -> Validator:
        allowed: list[float] = []  # when this key's allowed requests were sent

        def check(status: int, headers: dict[str, str], body: bytes, _lat: list[float], sent: float) -> str | None:
            window = [t for t in allowed if t > sent - 60.0]
            if status == 429:
                if json.loads(body) != LIMIT_BODY or headers.get("retry-after") != "60":
                    return f"429 with body {body[:80]!r}, Retry-After {headers.get('retry-after')}"
                if headers.get("x-ratelimit-remaining") != "0":
                    return "429 without X-RateLimit-Remaining: 0"
                if len(window) < limit - 1:  # one of slack for the window's edge
                    return f"429 after only {len(window)} allowed requests in 60 s (limit {limit})"
                return None
            if status != 200:
                return f"status {status}: {body[:120]!r}"
            envelope = json.loads(body)
            if not isinstance(envelope.get("data"), list) or "total" not in envelope.get("meta", {}):
                return "200 without an envelope"
            allowed.append(sent)
            if headers.get("x-ratelimit-limit") != str(limit):
                return f"X-RateLimit-Limit {headers.get('x-ratelimit-limit')}"
            expected = limit - len(window) - 1
            remaining = int(headers.get("x-ratelimit-remaining", "-1"))
            if sent - allowed[0] < 59.0 and remaining != expected:
                return f"X-RateLimit-Remaining {remaining}, expected {expected}"
            if not 0 <= remaining < limit:
                return f"X-RateLimit-Remaining {remaining} out of range"
            return None

        return check

    return make


def _datasette_validator() -> Validator:
    def check(status: int, headers: dict[str, str], body: bytes, _lat: list[float], sent: float) -> str | None:
        if status != 200:
            return f"status {status}: {body[:120]!r}"
        data = json.loads(body)
        if not isinstance(data.get("rows"), list):
            return "200 without rows"
        return None

    return check


async def _run_load(
    name: str,
    port: int,
    paths: list[str],
    clients: int,
    per_client: int,
    headers_for: Callable[[int], dict[str, str]],
    validator_for: Callable[[], Validator],
) -> LoadResult:
    result = LoadResult(name, clients, per_client)

    async def client(index: int) -> None:
        http = Http(port, headers_for(index))
        check = validator_for()
        try:
            for n in range(per_client):
                path = paths[(index + n) % len(paths)]
                sent = time.monotonic()
                try:
                    status, headers, body = await http.get(path)
                except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                    result.errors.append(f"{path}: {type(exc).__name__}: {exc}")
                    await http.close()
                    continue
                result.latencies.append(time.monotonic() - sent)
                result.statuses[status] = result.statuses.get(status, 0) + 1
                try:
                    problem = check(status, headers, body, result.latencies, sent)
                except (ValueError, KeyError) as exc:
                    problem = f"unreadable answer ({exc})"
                if problem:
                    result.errors.append(f"{path}: {problem}")
        finally:
            await http.close()

    start = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    result.seconds = time.perf_counter() - start
    return result


async def _limit_probe(port: int, limit: int) -> list[str]:
    """limit + 10 requests on a fresh key: exactly `limit` pass, the rest are correct 429s."""
    problems = []
    connections = [Http(port, {"Authorization": "Bearer loadcheck-probe"}) for _ in range(4)]
    outcomes: list[tuple[int, dict[str, str], bytes]] = []

    async def worker(http: Http, count: int) -> None:
        for _ in range(count):
            outcomes.append(await http.get("/api/domains?per_page=1&tld=.fr"))

    total = limit + 10
    start = time.monotonic()
    await asyncio.gather(*(worker(h, total // 4 + (i < total % 4)) for i, h in enumerate(connections)))
    elapsed = time.monotonic() - start
    for http in connections:
        await http.close()
    passed = [o for o in outcomes if o[0] == 200]
    refused = [o for o in outcomes if o[0] == 429]
    if elapsed < 59 and (len(passed), len(refused)) != (limit, 10):
        problems.append(f"limit probe: {len(passed)} passed and {len(refused)} refused, expected {limit} and 10")
    remaining = sorted(int(o[1]["x-ratelimit-remaining"]) for o in passed)
    if remaining != list(range(limit - len(passed), limit)):
        problems.append("limit probe: X-RateLimit-Remaining values are not limit-1 down to 0")
    for status, headers, body in refused:
        if json.loads(body) != LIMIT_BODY or headers.get("retry-after") != "60":
            problems.append("limit probe: a 429 without the documented body or Retry-After: 60")
            break
    # the free endpoint: 3 a minute per address
    free = Http(port)
    statuses = [(await free.get("/api/free/domains?limit=1"))[0] for _ in range(5)]
    await free.close()
    if statuses != [200, 200, 200, 429, 429]:
        problems.append(f"free endpoint from one address: {statuses}, expected 3 x 200 then 429")
    return problems


async def _fetch_all(port: int, paths: list[str], headers: dict[str, str] | None = None) -> list[tuple[int, Any]]:
    """Each path once, in order, on one connection: (status, parsed JSON or None)."""
    http = Http(port, headers)
    answers = []
    try:
        for path in paths:
            status, _, body = await http.get(path)
            try:
                answers.append((status, json.loads(body)))
            except ValueError:
                answers.append((status, None))
    finally:
        await http.close()
    return answers


# -- main ----------------------------------------------------------------------------------------------------------


def _summary(errors: list[str], most: int = 10) -> list[str]:
    counts: dict[str, int] = {}
    for error in errors:
        counts[error] = counts.get(error, 0) + 1
    return [f"{error} (x{n})" if n > 1 else error for error, n in list(counts.items())[:most]]


def _table(results: list[LoadResult], markdown: bool) -> str:
    header = ["server", "clients x requests", "requests", "200", "429", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms"]
    rows = [
        [
            r.server,
            f"{r.clients} x {r.per_client}",
            str(r.requests),
            str(r.statuses.get(200, 0)),
            str(r.statuses.get(429, 0)),
            str(len(r.errors)),
            f"{r.rps:.0f}",
            f"{r.percentile(0.5):.1f}",
            f"{r.percentile(0.95):.1f}",
            f"{r.percentile(0.99):.1f}",
        ]
        for r in results
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return "\n".join([fmt(header), *(fmt(r) for r in rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db", default=os.environ.get("EDT_DB", "data/mirror.db"), help="a (full demo) mirror; read only"
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=250, help="requests per client")
    parser.add_argument("--no-datasette", action="store_true", help="load the replica only")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    db = Path(args.db)
    if not db.is_file():
        print(f"loadcheck: {db}: no mirror there (build one with `edt demo --scale full --db {db}`)", file=sys.stderr)
        return 2
    from ..plans import RATE_LIMITS

    limit = RATE_LIMITS["business"] or 300
    now = datetime.now(timezone.utc)
    queries = suite(now)
    replica_paths = ["/api/domains" + ("?" + urlencode(p) if p else "") for _, p, _ in queries]
    table = db.stem
    datasette_paths = [
        f"/{table}/listings.json?" + urlencode({**d, "_shape": "objects", "_size": d.get("_size", "50")})
        for _, _, d in queries
    ]
    problems: list[str] = []
    notes: list[str] = []
    results: list[LoadResult] = []
    workdir = Path(tempfile.mkdtemp(prefix="edt-loadcheck-"))

    # the replica
    port = free_port()
    keys = [arg for i in range(args.clients) for arg in ("--key", f"loadcheck-{i}=business")]
    keys += ["--key", "loadcheck-probe=business", "--key", "loadcheck-warm=enterprise", "--rate", "enterprise=100000"]
    log = workdir / "replica.log"
    with log.open("w") as out:
        replica = subprocess.Popen(
            [sys.executable, "-m", "toolkit", "serve", "--db", str(db), "--port", str(port), *keys],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_ready(port, replica, "/openapi.json", 60, log)
        answers = asyncio.run(_fetch_all(port, replica_paths, {"Authorization": "Bearer loadcheck-warm"}))
        totals = {
            name: body["meta"]["total"] if status == 200 else f"status {status}"
            for (name, _, _), (status, body) in zip(queries, answers)
        }
        print(
            f"replica: edt serve on 127.0.0.1:{port}; {args.clients} clients x {args.requests} requests ...", flush=True
        )
        results.append(
            asyncio.run(
                _run_load(
                    "replica (edt serve)",
                    port,
                    replica_paths,
                    args.clients,
                    args.requests,
                    lambda i: {"Authorization": f"Bearer loadcheck-{i}"},
                    _replica_validator(limit),
                )
            )
        )
        problems += [f"replica: {e}" for e in _summary(results[-1].errors)]
        problems += asyncio.run(_limit_probe(port, limit))
    finally:
        stop_process(replica, 15)

    # Datasette
    if not args.no_datasette:
        datasette = shutil.which("datasette") or str(Path(sys.executable).with_name("datasette"))
        if not Path(datasette).exists():
            print(
                "loadcheck: datasette is not installed (pip install 'expired-domains-toolkit[bench]')", file=sys.stderr
            )
            return 2
        port = free_port()
        log = workdir / "datasette.log"
        with log.open("w") as out:
            server = subprocess.Popen(
                [
                    datasette,
                    "serve",
                    "-i",
                    str(db),
                    "--port",
                    str(port),
                    "--setting",
                    "suggest_facets",
                    "off",
                    "--setting",
                    "sql_time_limit_ms",
                    "30000",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_ready(port, server, f"/{table}.json", 120, log)
            for (name, _, _), (status, body) in zip(queries, asyncio.run(_fetch_all(port, datasette_paths))):
                count = body.get("filtered_table_rows_count") if status == 200 and body else f"status {status}"
                if count != totals[name]:
                    problems.append(f"suite: {name}: replica total {totals[name]}, Datasette count {count}")
            print(f"Datasette on 127.0.0.1:{port}; {args.clients} clients x {args.requests} requests ...", flush=True)
            version = (
                subprocess.run([datasette, "--version"], capture_output=True, text=True).stdout.strip().split()[-1]
            )
            results.append(
                asyncio.run(
                    _run_load(
                        f"Datasette {version}",
                        port,
                        datasette_paths,
                        args.clients,
                        args.requests,
                        lambda i: {},
                        lambda: _datasette_validator(),
                    )
                )
            )
            notes += [f"Datasette: {e}" for e in _summary(results[-1].errors)]
        finally:
            stop_process(server, 15)

    print()
    print(
        f"{db} ({db.stat().st_size / 1e9:.2f} GB), {len(queries)} filtered first pages, loopback, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(_table(results, args.markdown))
    if len(results) == 2:
        ratio = results[0].rps / results[1].rps if results[1].rps else float("inf")
        verdict = "reached" if ratio >= 1 else "MISSED"
        print(f"\nreplica / Datasette throughput: {ratio:.2f}x (target >= 1: {verdict})")
    for note in notes:
        print("note:", note)
    for problem in problems:
        print("PROBLEM:", problem)
    if not problems:
        equivalent = "" if args.no_datasette else "suite equivalent to Datasette's filters, "
        print(f"checks: {equivalent}zero errors, every 429 correct, limit probe and free endpoint as documented")
    shutil.rmtree(workdir, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
