"""How soon a write by another program is seen: from its commit to the first answer that
holds it, for `edt serve` and for the app's cached state, and until the columnar index has
caught up (so queries are fast again).

    python -m toolkit.bench.seen --db /path/to/mirror.db [--writes 20] [--seed 1] [--markdown]

A script, not a timed test. It copies the mirror (SQLite's backup API) into a scratch file
and brings its index up to date, then starts three processes on the copy: `edt serve` on a
loopback port, a reader of the app's state layer (`toolkit.ui.state.search`, what every
rerun of a page calls) and a writer holding a plain `sqlite3` connection, as a notebook
would. For each of `--writes` rounds the writer commits one write drawn from the seed (a new
listing, a Trust Flow change, a rename, a delete, a pending-delete row) at a moment drawn
from the seed; each reader asks, as fast as it can, a question whose answer that write
changes, and notes when it first sees the new answer. The index is current again when the
file beside the mirror is of the mirror's generation (the server refreshes it in the
background once a listing query finds it stale: the bench goes on asking one meanwhile). The peer is the time of one request
asked with nothing changing (its median), measured in the same run.

Checks, any failure makes the exit status 1: every write was seen by both readers.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import time

from .app_server import free_port
from .scratch import mirror_parser, parse_mirror_args, scratch_copy

__all__ = ["main"]

KEY = "seen-bench-key"
# The app's reader, in a process of its own: asked a question on standard input, it answers
# when the app's state layer first gives the awaited total, with that moment (time.time()).
_APP_READER = """
import json, sys, time
from toolkit.ui import state
print("ready", flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    while True:
        found = state.search(ask["params"], pending=ask["pending"])["meta"]["total"]
        if found == ask["total"]:
            print(json.dumps({"seen": time.time()}), flush=True)
            break
        time.sleep(0.001)
"""


def _write(conn: sqlite3.Connection, rnd: random.Random, round_: int) -> tuple[str, str, dict[str, str], bool, int]:
    """One write through plain SQL; returns (kind, the question's path, its parameters,
    pending-delete?, the total the question has after the write)."""
    kind = rnd.choice(["new listing", "Trust Flow change", "rename", "delete", "pending-delete row"])
    mark = f"zzseen{round_}x{rnd.randrange(10**6)}"
    if kind == "pending-delete row":
        columns = [d[0] for d in conn.execute("SELECT * FROM pending_delete LIMIT 0").description]
        row = list(conn.execute("SELECT * FROM pending_delete ORDER BY random() LIMIT 1").fetchone())
        row[columns.index("id")] = conn.execute("SELECT max(id) + 1 FROM pending_delete").fetchone()[0]
        row[columns.index("domain")] = mark + ".fr"
        conn.execute(f"INSERT INTO pending_delete VALUES ({','.join('?' * len(columns))})", row)
        conn.commit()
        return kind, "/api/pending-delete", {"contains": mark, "include_past": "1"}, True, 1
    target, name = conn.execute(
        "SELECT id, name FROM listings WHERE source != 'regfree' AND closed_at IS NULL ORDER BY random() LIMIT 1"
    ).fetchone()
    if kind == "new listing":
        columns = [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description]
        select = ", ".join(
            "(SELECT max(id) + 1 FROM listings)" if c == "id" else "?" if c == "name" else c for c in columns
        )
        conn.execute(
            f"INSERT INTO listings ({', '.join(columns)}) SELECT {select} FROM listings WHERE id = ?",
            [mark + ".com", target],
        )
        params, total = {"contains": mark, "include_closed": "1"}, 1
    elif kind == "rename":
        conn.execute("UPDATE listings SET name = ? WHERE id = ?", [mark + ".com", target])
        params, total = {"contains": mark, "include_closed": "1"}, 1
    elif kind == "Trust Flow change":
        conn.execute("UPDATE listings SET trust_flow = 100, name = ? WHERE id = ?", [mark + ".com", target])
        params, total = {"contains": mark, "tf_min": "100", "include_closed": "1"}, 1
    else:
        conn.execute("UPDATE listings SET name = ? WHERE id = ?", [mark + ".com", target])
        conn.commit()  # named first, so the question can find it; the delete is what is timed
        params, total = {"contains": mark, "include_closed": "1"}, 0
        conn.execute("DELETE FROM listings WHERE id = ?", [target])
    conn.commit()
    return kind, "/api/domains", params, False, total


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = mirror_parser("toolkit.bench.seen", __doc__, "the mirror to copy (it is never written)")
    parser.add_argument("--writes", type=int, default=20)
    if (
        args := parse_mirror_args(parser, argv, "--db: no mirror at {db}; build one with `edt demo --db {db}`")
    ) is None:
        return 2

    import httpx

    from ..query import Mirror
    from ..query.columnar import index_path, load_index

    rnd = random.Random(args.seed)
    started = time.perf_counter()
    with scratch_copy(args.db, "edt-seen-") as path:
        Mirror(path).refresh_index()
        print(f"copied and indexed {args.db} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        port = free_port()
        env = {**os.environ, "EDT_DB": path}
        server = subprocess.Popen(
            [sys.executable, "-m", "toolkit", "serve", "--db", path, "--port", str(port), "--key", f"{KEY}=enterprise"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        app = subprocess.Popen(
            [sys.executable, "-c", _APP_READER],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        asks, answers = app.stdin, app.stdout
        if asks is None or answers is None:  # both are pipes (PIPE above)
            raise RuntimeError("the app's reader has no pipes")
        writer = sqlite3.connect(path, timeout=30)
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {KEY}"})
        lags: dict[str, list[float]] = {"edt serve": [], "the app's state": [], "index current": []}
        kinds: list[str] = []
        missed = 0
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.get("/api/domains", params={"per_page": 1}).raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise RuntimeError("edt serve did not start") from None
                    time.sleep(0.1)
            assert answers.readline().strip() == "ready"
            quiet = []
            for _ in range(30):  # the peer: one request with nothing changing
                begun = time.perf_counter()
                client.get("/api/domains", params={"contains": "zzseen", "include_closed": "1"}).raise_for_status()
                quiet.append(time.perf_counter() - begun)
            for round_ in range(args.writes):
                time.sleep(rnd.uniform(0.2, 2.5))
                kind, route, params, pending, total = _write(writer, rnd, round_)
                committed = time.time()
                kinds.append(kind)
                asks.write(json.dumps({"params": params, "pending": pending, "total": total}) + "\n")
                asks.flush()
                seen_serve = None
                give_up = time.monotonic() + 30
                while seen_serve is None and time.monotonic() < give_up:
                    if client.get(route, params=params).json()["meta"]["total"] == total:
                        seen_serve = time.time()
                seen_app = json.loads(answers.readline())["seen"]
                current = None
                while current is None and time.monotonic() < give_up:
                    index = load_index(index_path(path))
                    generation = writer.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()
                    if index is not None and str(index.generation) == generation[0]:
                        current = time.time()
                    else:  # a user goes on asking: a listing query starts the index's refresh
                        client.get("/api/domains", params={"per_page": 1})
                        time.sleep(0.01)
                if seen_serve is None or current is None:
                    missed += 1
                    continue
                lags["edt serve"].append(seen_serve - committed)
                lags["the app's state"].append(seen_app - committed)
                lags["index current"].append(current - committed)
        finally:
            client.close()
            writer.close()
            asks.close()
            for process in (server, app):
                process.terminate()
                process.wait(10)
    rows = [(name, statistics.median(v), _percentile(v, 0.95), max(v)) for name, v in lags.items() if v]
    peer = statistics.median(quiet)
    mix = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
    print(f"{platform.machine()}, {os.cpu_count()} cores; {args.writes} writes (seed {args.seed}): {mix}")
    print(f"peer: one request with nothing changing, median {peer * 1000:.1f} ms")
    header = ("from the commit to", "median", "p95", "max")
    table = [(name, f"{a * 1000:.0f} ms", f"{b * 1000:.0f} ms", f"{c * 1000:.0f} ms") for name, a, b, c in rows]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---:|---:|")
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        for row in (header, *table):
            print(f"{row[0]:<22}{row[1]:>10}{row[2]:>10}{row[3]:>10}")
    if missed:
        print(f"FAILED: {missed} writes were not seen within 30 s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
