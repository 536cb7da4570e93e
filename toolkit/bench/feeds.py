"""What a day of a big public feed costs: a Namecheap-sized auction file fetched and ingested,
fetched again unchanged (the publisher answers 304), and fetched the next day with changes.

    python -m toolkit.bench.feeds [--rows 200000] [--seed 1] [--markdown]

A script, not a timed test. It writes a seeded random file in Namecheap Market's auction CSV
format (`--rows` rows, names and prices drawn from `--seed`), serves it from a loopback HTTP
server that answers conditional requests as S3 does (ETag, 304), and runs the
`namecheap-auctions` feed three times into a fresh mirror: day 1 (every row new), day 1
again (304), day 2 (a seeded 5% of the prices and bids changed, 2% of the auctions gone,
2% new). Each run's wall time and this process's peak anonymous memory (RssAnon) are
printed. The peer, measured in the same run, is Python's `csv` module reading the same
file and doing nothing with it: the floor of any ingest.

Checks, any failure makes the exit status 1: the 304 run wrote nothing (the mirror's
generation is unchanged); day 2 updated, closed and added exactly the rows changed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import http.server
import os
import platform
import random
import re
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["main"]

HEADER = ("url,name,startDate,endDate,price,startPrice,renewPrice,bidCount,ahrefsDomainRating,umbrellaRanking,"
          "cloudflareRanking,estibotValue,extensionsTaken,keywordSearchCount,registeredDate,lastSoldPrice,"
          "lastSoldYear,isPartnerSale,semrushAScore,majesticCitation,ahrefsBacklinks,semrushBacklinks,"
          "majesticBacklinks,majesticTrustFlow,goValue")  # fmt: skip
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_TLDS = ("com", "net", "org", "io", "co", "xyz", "info", "pro", "cc", "me")


def _row(rnd: random.Random, index: int, name: str) -> list[str]:
    bids = rnd.choice((0, 0, 0, 1, 2, 5))
    return [f"https://www.namecheap.com/market/sale/S{index:07d}x/", name, f"2026-11-{rnd.randint(1, 25):02d}T08:38:08Z",
            f"2026-12-{rnd.randint(1, 28):02d}T16:00:00Z", f"{rnd.randint(1, 500)}.00", "1.00", "13.98", str(bids),
            str(rnd.randint(0, 40)), "", "", f"{rnd.randint(0, 3000)}.00", str(rnd.randint(0, 400)),
            str(rnd.randint(0, 900_000)), f"20{rnd.randint(0, 24):02d}-01-15T00:00:00Z", "", "", str(rnd.randint(0, 1)),
            str(rnd.randint(0, 30)), str(rnd.randint(0, 50)), str(rnd.randint(0, 500)), "", str(rnd.randint(0, 900)),
            str(rnd.randint(0, 40)), f"{rnd.randint(0, 9000)}.00"]  # fmt: skip


def _days(rows: int, seed: int) -> tuple[list[list[str]], list[list[str]], dict[str, int]]:
    """Day 1's rows, day 2's (changed, gone, new), and how many of each."""
    rnd = random.Random(seed)
    names: set[str] = set()
    while len(names) < rows * 1.03:
        names.add("".join(rnd.choice(_LETTERS) for _ in range(rnd.randint(5, 12))) + "." + rnd.choice(_TLDS))
    ordered = sorted(names)
    rnd.shuffle(ordered)
    first = [_row(rnd, i, n) for i, n in enumerate(ordered[:rows])]
    second, changed, gone = [], 0, 0
    for row in first:
        draw = rnd.random()
        if draw < 0.02:
            gone += 1
            continue
        if draw < 0.07:
            row = [*row[:4], f"{float(row[4]) + rnd.randint(1, 50):.2f}", *row[5:7], str(int(row[7]) + 1), *row[8:]]
            changed += 1
        second.append(row)
    new = [_row(rnd, rows + i, n) for i, n in enumerate(ordered[rows : rows + int(rows * 0.02)])]
    return first, second + new, {"changed": changed, "gone": gone, "new": len(new)}


def _write(path: Path, rows: list[list[str]]) -> bytes:
    with path.open("w", newline="") as out:
        out.write(HEADER + "\n")
        csv.writer(out, lineterminator="\n").writerows(rows)
    return path.read_bytes()


class _Publisher:
    def __init__(self) -> None:
        self.body = b""
        publisher = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                etag = '"' + hashlib.sha1(publisher.body).hexdigest() + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(publisher.body)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(publisher.body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/reports/Namecheap_Market_Sales.csv"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class _PeakMemory:
    """This process's peak RssAnon (Linux), sampled every 50 ms while in the block."""

    def __enter__(self) -> "_PeakMemory":
        self.peak, self._stop = self._now(), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def _now() -> int:
        try:
            text = Path("/proc/self/status").read_text()
        except OSError:
            return 0
        found = re.search(r"RssAnon:\s+(\d+)", text)
        return int(found.group(1)) * 1024 if found else 0

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._now())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._now())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.feeds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("EDT_BUDGET_FILE", os.path.join(tempfile.gettempdir(), "edt-bench-feeds-budget.sqlite"))
    from ..ingest.feeds import FeedClient, run_feeds
    from ..store.feeds import FEEDS

    work = Path(tempfile.mkdtemp(prefix="edt-bench-feeds-"))
    first, second, counts = _days(args.rows, args.seed)
    publisher = _Publisher()
    publisher.body = _write(work / "day1.csv", first)
    _write(work / "day2.csv", second)
    rows = len(first)
    del first, second  # the bench's own copies: the memory measured is the feed's
    started = time.perf_counter()
    with (work / "day1.csv").open(newline="") as fh:
        parsed = sum(1 for _ in csv.reader(fh)) - 1
    peer = time.perf_counter() - started

    db = work / "mirror.db"
    config = {"feeds": {**{n: {"enabled": False} for n in FEEDS}, "namecheap-auctions": {"url": publisher.url}}}
    results, failures = [], []

    def generation() -> str:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()[0]

    for label, body in (("day 1: every row new", None), ("day 1 again: 304", None), ("day 2: changes", "day2")):
        if body:
            publisher.body = (work / "day2.csv").read_bytes()
        before = generation() if db.exists() else None
        with _PeakMemory() as memory:
            clock = time.perf_counter()
            (report,) = run_feeds(db, ["namecheap-auctions"], config=config, client=FeedClient(limiter=None),
                                  alerts=False)  # fmt: skip
            seconds = time.perf_counter() - clock
        results.append((label, report, seconds, memory.peak))
        if "304" in label and (report.status != "not_modified" or generation() != before):
            failures.append(f"{label}: expected nothing written, got {report.status}")
    day1, day2 = results[0][1], results[2][1]
    if day1.ingest is None or day1.ingest.new != rows:
        failures.append(f"day 1: expected {rows:,} new rows, got {day1.line()}")
    if day2.ingest is None or (day2.ingest.updated, day2.closed, day2.ingest.new) != (counts["changed"], counts["gone"], counts["new"]):
        failures.append(f"day 2: expected {counts['changed']:,} updated, {counts['gone']:,} closed, {counts['new']:,} "
                        f"new; got {day2.line()}")  # fmt: skip

    size = (work / "day1.csv").stat().st_size
    print(f"# a Namecheap-sized feed: {rows:,} rows ({size / 1e6:.1f} MB CSV), seed {args.seed}; "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"peer: csv.reader alone reads the file in {peer:.2f} s ({parsed:,} rows)")
    if args.markdown:
        print("\n| run | result | wall time | vs csv.reader alone | peak memory (anon) |\n|---|---|---:|---:|---:|")
    for label, report, seconds, peak in results:
        if args.markdown:
            print(f"| {label} | {report.line().split(': ', 1)[1]} | {seconds:.2f} s | {seconds / peer:.1f}x | "
                  f"{peak / 2**20:,.0f} MB |")
        else:
            print(f"{label:<22} {seconds:8.2f} s  {seconds / peer:6.1f}x  {peak / 2**20:7,.0f} MB  {report.line()}")
    for problem in failures:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
