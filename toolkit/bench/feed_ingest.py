"""What a day of a big public feed costs, in whole processes, against its peers in the same run.

    python -m toolkit.bench.feed_ingest [--rows 1100000] [--godaddy 590000] [--bomb] [--seed 1]
                                  [--work DIR] [--markdown]

A script, not a timed test. It writes seeded random files in the real feeds' formats and sizes
(not committed; into `--work`, default a temporary folder): Namecheap Market's 25-column
auction CSV (`--rows` rows: the real file holds about 1.1 million, 194 MB) for two days (day 2:
a seeded 5% of the prices and bids moved, 2% of the auctions gone, 2% new), and, with
`--godaddy N`, GoDaddy's zipped all-listings JSON of N records (the real one: about 590,000,
450 MB unzipped). A loopback HTTP server serves them with ETag and Last-Modified, and each
step is one whole process, its own peak memory read as VmHWM when it exits:

- `edt sync --feeds namecheap-auctions` into a fresh mirror: day 1 (every row new), day 1
  again (the publisher answers 304), day 2;
- the peers on the same day-1 file: `sqlite-utils insert --csv` into a fresh database, and
  the floor, Python's `csv` with one `executemany` into a plain table;
- `edt sync --feeds godaddy-all` of the JSON into a fresh mirror (with `--godaddy`);
- with `--bomb`: a GoDaddy zip of a few MB whose JSON holds one 3 GB field, and one whose
  archive declares 3 GB, each refused (exit 2) by `edt ingest godaddy --file`.

Checks, any failure makes the exit status 1: the 304 wrote nothing; day 2 updated, closed and
added exactly the rows that moved; each refusal exited 2.
"""

from __future__ import annotations

import argparse
import csv
import email.utils
import functools
import hashlib
import http.server
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["main", "loopback_server", "folder_server"]

HEADER = (
    "url,name,startDate,endDate,price,startPrice,renewPrice,bidCount,ahrefsDomainRating,umbrellaRanking,"
    "cloudflareRanking,estibotValue,extensionsTaken,keywordSearchCount,registeredDate,lastSoldPrice,"
    "lastSoldYear,isPartnerSale,semrushAScore,majesticCitation,ahrefsBacklinks,semrushBacklinks,"
    "majesticBacklinks,majesticTrustFlow,goValue"
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_TLDS = ("com", "net", "org", "io", "co", "xyz", "info", "pro", "cc", "me")
# The child runs a command's main and prints, as it exits, its own peak resident memory (VmHWM)
# and its largest child's (a whole build of the columnar index forks two workers).
_CHILD = (
    "import atexit, re, resource, runpy, sys\n"
    "atexit.register(lambda: sys.stderr.write('peak-kib %s\\nworkers-kib %s\\n' % (re.search(r'VmHWM:\\s+(\\d+)', "
    "open('/proc/self/status').read()).group(1), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)))\n"
    "target = sys.argv[1]; sys.argv = [target, *sys.argv[2:]]\n"
    "(runpy.run_path if target.endswith('.py') else runpy.run_module)(target, run_name='__main__')\n"
)
_FLOOR = (
    "import csv, sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[2])\n"
    "with open(sys.argv[1], newline='') as fh:\n"
    "    reader = csv.reader(fh); header = next(reader)\n"
    "    conn.execute(f'CREATE TABLE t ({\", \".join(chr(34) + h + chr(34) for h in header)})')\n"
    '    conn.executemany(f\'INSERT INTO t VALUES ({", ".join("?" * len(header))})\', reader)\n'
    "conn.commit()\n"
)


def _name(rnd: random.Random) -> str:
    return "".join(rnd.choice(_LETTERS) for _ in range(rnd.randint(6, 14))) + "." + rnd.choice(_TLDS)


def _row(rnd: random.Random, index: int, name: str) -> list[str]:
    bids = rnd.choice((0, 0, 0, 1, 2, 5))
    return [
        f"https://www.namecheap.com/market/sale/S{index:07d}x/",
        name,
        f"2026-11-{rnd.randint(1, 25):02d}T08:38:08Z",
        f"2026-12-{rnd.randint(1, 28):02d}T16:00:00Z",
        f"{rnd.randint(1, 500)}.00",
        "1.00",
        "13.98",
        str(bids),
        str(rnd.randint(0, 40)),
        "",
        "",
        f"{rnd.randint(0, 3000)}.00",
        str(rnd.randint(0, 400)),
        str(rnd.randint(0, 900_000)),
        f"20{rnd.randint(0, 24):02d}-01-15T00:00:00Z",
        "",
        "",
        str(rnd.randint(0, 1)),
        str(rnd.randint(0, 30)),
        str(rnd.randint(0, 50)),
        str(rnd.randint(0, 500)),
        "",
        str(rnd.randint(0, 900)),
        str(rnd.randint(0, 40)),
        f"{rnd.randint(0, 9000)}.00",
    ]


def write_days(folder: Path, rows: int, seed: int) -> dict[str, int]:
    """Day 1's and day 2's auction files, written as they are drawn; how many rows moved, went, came."""
    rnd = random.Random(seed)
    seen: set[str] = set()
    counts = {"rows": rows, "changed": 0, "gone": 0, "new": 0}
    with (folder / "day1.csv").open("w", newline="") as one, (folder / "day2.csv").open("w", newline="") as two:
        first, second = csv.writer(one, lineterminator="\n"), csv.writer(two, lineterminator="\n")
        one.write(HEADER + "\n")
        two.write(HEADER + "\n")
        for index in range(rows + rows // 50):
            name = _name(rnd)
            while name in seen:
                name = _name(rnd)
            seen.add(name)
            row = _row(rnd, index, name)
            if index >= rows:  # new on day 2
                second.writerow(row)
                counts["new"] += 1
                continue
            first.writerow(row)
            draw = rnd.random()
            if draw < 0.02:
                counts["gone"] += 1
                continue
            if draw < 0.07:
                row = [*row[:4], f"{float(row[4]) + rnd.randint(1, 50):.2f}", *row[5:7], str(int(row[7]) + 1), *row[8:]]
                counts["changed"] += 1
            second.writerow(row)
    return counts


def write_godaddy(path: Path, records: int, seed: int) -> None:
    """GoDaddy's all_listings.json.zip: `{"meta", "data"}` of `records` listings, streamed into the zip."""
    rnd = random.Random(seed)
    kinds = ("Bid", "Bid", "Bid", "BuyNow", "Offer")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("all_listings.json", "w", force_zip64=True) as out:
            out.write(json.dumps({"meta": {"totalRecords": records}})[:-1].encode() + b', "data": [')
            for index in range(records):
                name = f"{_name(rnd)[:-4]}{index}.com"
                item = {
                    "domainName": name,
                    "link": f"https://auctions.godaddy.com/trpItemListing.aspx?miid={index}",
                    "auctionType": rnd.choice(kinds),
                    "auctionEndTime": f"2026-12-{rnd.randint(1, 28):02d}T16:00:00Z",
                    "price": f"${rnd.randint(5, 5000):,}",
                    "numberOfBids": rnd.choice((0, 0, 1, 3, 8)),
                    "domainAge": rnd.randint(0, 25),
                    "pageviews": rnd.randint(0, 500),
                    "valuation": f"${rnd.randint(100, 9000):,}",
                    "isAdult": False,
                    "majesticTf": rnd.randint(0, 40),
                    "majesticCf": rnd.randint(0, 50),
                    "description": "x" * rnd.randint(300, 500),
                }
                out.write((b"," if index else b"") + json.dumps(item).encode())
            out.write(b"]}")


def write_bomb(folder: Path) -> Path:
    """A zip of a few MB whose JSON holds one 3 GB field."""
    field = folder / "field_bomb.json.zip"
    chunk = b"a" * (1 << 24)
    with zipfile.ZipFile(field, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("all_listings.json", "w", force_zip64=True) as out:
            out.write(b'{"meta": {}, "data": [{"domainName": "')
            for _ in range(3 * 64):
                out.write(chunk)
            out.write(b'.com", "auctionType": "Bid", "price": "$5"}]}')
    return field


def loopback_server(handler: Callable[..., http.server.BaseHTTPRequestHandler]) -> tuple[http.server.HTTPServer, str]:
    """`handler` answering on a free loopback port from a daemon thread (until the process
    ends, or `shutdown()`), and its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class _FolderFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def folder_server(folder: str | os.PathLike[str]) -> tuple[http.server.HTTPServer, str]:
    """The files of `folder` served quietly on a free loopback port (`loopback_server`)."""
    return loopback_server(functools.partial(_FolderFiles, directory=os.fspath(folder)))


class _Publisher:
    """Files served from disk on a loopback port, with ETag and Last-Modified (a conditional
    request for an unchanged file gets 304)."""

    def __init__(self) -> None:
        self.files: dict[str, Path] = {}
        publisher = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                path = publisher.files[self.path]
                info = path.stat()
                etag = f'"{info.st_mtime_ns:x}-{info.st_size:x}"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(info.st_size))
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", email.utils.formatdate(info.st_mtime, usegmt=True))
                self.end_headers()
                with path.open("rb") as body:
                    shutil.copyfileobj(body, self.wfile, 1 << 20)

            def log_message(self, *args):
                pass

        self.server, self.url = loopback_server(Handler)

    def publish(self, route: str, path: Path) -> str:
        self.files[route] = path
        return self.url + route


@dataclass
class Run:
    label: str
    seconds: float
    peak_mib: float
    status: int
    output: str
    workers_mib: float = 0.0


def run(label: str, target: str, *args: str, env: dict[str, str] | None = None) -> Run:
    """`python -m TARGET ARGS` (or `python TARGET.py ARGS`) as a whole process: wall time, its own
    peak memory, exit status."""
    started = time.perf_counter()
    ran = subprocess.run(
        [sys.executable, "-c", _CHILD, target, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    seconds = time.perf_counter() - started
    peak = re.search(r"^peak-kib (\d+)$", ran.stderr, flags=re.M)
    workers = re.search(r"^workers-kib (\d+)$", ran.stderr, flags=re.M)
    output = "\n".join(
        line for line in (ran.stdout + ran.stderr).splitlines() if not re.match(r"(peak|workers)-kib \d+$", line)
    )
    return Run(
        label,
        seconds,
        int(peak.group(1)) / 1024 if peak else float("nan"),
        ran.returncode,
        output,
        int(workers.group(1)) / 1024 if workers else 0.0,
    )


def _feed_config(folder: Path, feeds: dict[str, str]) -> dict[str, str]:
    """EDT_CONFIG (only `feeds` on, at these addresses) and a pacing bucket of the bench's own."""
    from ..store.feed_catalog import FEEDS

    text = "".join(f"[feeds.{name}]\nenabled = false\n" for name in FEEDS if name not in feeds)
    text += "".join(f'[feeds.{name}]\nenabled = true\nurl = "{url}"\n' for name, url in feeds.items())
    path = folder / f"config-{hashlib.sha1(text.encode()).hexdigest()[:8]}.toml"
    path.write_text(text)
    return {"EDT_CONFIG": str(path), "EDT_BUDGET_FILE": str(folder / f"budget-{path.stem}.db")}


def _line(run_: Run, feed: str) -> str:
    return next((line for line in run_.output.splitlines() if line.startswith(f"{feed}: ")), run_.output[-200:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.feed_ingest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="auction rows (the real file: about 1.1 million)")
    parser.add_argument("--godaddy", type=int, default=0, metavar="N", help="also a GoDaddy JSON of N records")
    parser.add_argument("--bomb", action="store_true", help="also the 3 GB expansions, refused")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default=None, help="where the files and mirrors go (default: a temporary folder)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="edt-bench-feeds-"))
    work.mkdir(parents=True, exist_ok=True)
    for old in work.glob("*.db*"):
        old.unlink()
    shutil.rmtree(work / "mirror.feeds", ignore_errors=True)
    counts = write_days(work, args.rows, args.seed)
    publisher = _Publisher()
    csv_path = work / "Namecheap_Market_Sales.csv"
    shutil.copyfile(work / "day1.csv", csv_path)
    env = _feed_config(work, {"namecheap-auctions": publisher.publish("/reports/Namecheap_Market_Sales.csv", csv_path)})
    db = str(work / "mirror.db")
    sync = ("toolkit", "sync", "--db", db, "--feeds", "namecheap-auctions")
    (work / "floor.py").write_text(_FLOOR)
    runs = [
        run(
            "peer: `sqlite-utils insert --csv`, fresh database",
            "sqlite_utils",
            "insert",
            str(work / "peer.db"),
            "t",
            str(work / "day1.csv"),
            "--csv",
        ),
        run(
            "floor: `csv` + one `executemany`, plain table",
            str(work / "floor.py"),
            str(work / "day1.csv"),
            str(work / "floor.db"),
        ),
    ]
    runs.append(run("edt sync --feeds: day 1, every row new", *sync, env=env))
    runs.append(run("edt sync --feeds: day 1 again (304)", *sync, env=env))
    time.sleep(0.01)
    shutil.copyfile(work / "day2.csv", csv_path)
    runs.append(run("edt sync --feeds: day 2", *sync, env=env))
    failures = [f"{r.label}: exit {r.status}: {r.output[-300:]}" for r in runs if r.status != 0]
    if "not modified" not in _line(runs[3], "namecheap-auctions"):
        failures.append(f"the 304 run: {_line(runs[3], 'namecheap-auctions')}")
    want = f"({counts['new']:,} new, {counts['changed']:,} updated), {counts['gone']:,} closed"
    if want not in _line(runs[4], "namecheap-auctions"):
        failures.append(f"day 2: expected {want}; got {_line(runs[4], 'namecheap-auctions')}")
    if args.godaddy:
        zipped = work / "all_listings.json.zip"
        write_godaddy(zipped, args.godaddy, args.seed)
        genv = _feed_config(work, {"godaddy-all": publisher.publish("/all_listings.json.zip", zipped)})
        runs.append(
            run(
                f"edt sync --feeds godaddy-all: {args.godaddy:,} records",
                "toolkit",
                "sync",
                "--db",
                str(work / "godaddy.db"),
                "--feeds",
                "godaddy-all",
                env=genv,
            )
        )
        if runs[-1].status != 0:
            failures.append(f"godaddy-all: exit {runs[-1].status}: {runs[-1].output[-300:]}")
    if args.bomb:
        field = write_bomb(work)
        refused = run(
            "edt ingest: a 3 GB field in a zip",
            "toolkit",
            "ingest",
            "godaddy",
            "--file",
            str(field),
            "--db",
            str(work / "bomb.db"),
        )
        runs.append(refused)
        if refused.status != 2:
            failures.append(f"the 3 GB field: exit {refused.status}: {refused.output[-300:]}")

    size = (work / "day1.csv").stat().st_size
    peer = runs[0].seconds
    print(
        f"# feeds in whole processes: {args.rows:,} auction rows ({size / 1e6:.0f} MB CSV), seed {args.seed}; "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    if args.markdown:
        print(
            "\n| process | result | wall time | vs sqlite-utils | peak memory (VmHWM) | its largest child's |"
            "\n|---|---|---:|---:|---:|---:|"
        )
    for r in runs:
        result = (
            _line(r, "namecheap-auctions" if "feeds:" in r.label else "godaddy-all" if "godaddy" in r.label else "edt")
            if r.label.startswith("edt")
            else "exit 0"
            if r.status == 0
            else f"exit {r.status}"
        )
        result = result.split(": ", 1)[1] if result.startswith(("namecheap-auctions: ", "godaddy-all: ")) else result
        if args.markdown:
            workers = f"{r.workers_mib:,.0f} MB" if r.workers_mib > 1 else "-"
            print(
                f"| {r.label} | {result[:140]} | {r.seconds:.1f} s | {r.seconds / peer:.2f}x | {r.peak_mib:,.0f} MB "
                f"| {workers} |"
            )
        else:
            print(
                f"{r.label:<48} {r.seconds:8.1f} s {r.seconds / peer:6.2f}x {r.peak_mib:7,.0f} MB "
                f"{r.workers_mib:7,.0f} MB  {result[:140]}"
            )
    for problem in failures:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
