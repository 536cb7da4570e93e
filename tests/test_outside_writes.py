"""A write by anything but the toolkit (Python's own sqlite3 in another process, as a
notebook, sqlite-utils or Datasette would write) is seen by the next query of every engine
and every reader: the Python API, `edt query`, `edt serve` over HTTP, MCP and the app's
cached state. Each answer equals the SQLite planner's, which reads the tables as they are."""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from conftest import NOW, fixed_clock, listing_records, small_demo, ts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_columnar import _answer
from test_query import POOLS

from toolkit import Mirror
from toolkit.query.params import DOMAIN_SORTS
from toolkit.serve.server import BackgroundServer, create_app
from toolkit.store.writer import save_listings

KEY = "outside-key"
# Queries whose live set hardly moves with the clock (closeouts, or closed rows included), so
# readers asked a moment apart answer alike.
QUERIES = [
    {"contains": "outside", "include_closed": "1"},
    {"type": "closeout", "tf_min": "90", "sort": "-trust_flow"},
    {"type": "closeout", "sort": "name", "per_page": "20"},
    {"type": "closeout", "sort": "-score"},
    {"type": "closeout", "tld": ".com,.fr", "sort": "id", "per_page": "100"},
]


class OutsideWriter:
    """Another process holding a plain `sqlite3` connection: each `write` is one committed
    transaction of (sql, args) statements."""

    CODE = (
        "import json, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], timeout=30)\n"
        "for line in sys.stdin:\n"
        "    try:\n"
        "        for sql, args in json.loads(line):\n"
        "            con.execute(sql, args)\n"
        "        con.commit()\n"
        "        print(json.dumps({'ok': True}), flush=True)\n"
        "    except Exception as exc:\n"
        "        con.rollback()\n"
        "        print(json.dumps({'ok': False, 'error': str(exc)}), flush=True)\n"
    )

    def __init__(self, path: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.CODE, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def write(self, *statements: tuple[str, list]) -> None:
        self.proc.stdin.write(json.dumps(statements) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["ok"], answer

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def _columns(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[1] for r in conn.execute("PRAGMA table_info(listings)")]


def _one(db: Path, sql: str) -> tuple:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


def _closeout(db: Path, order: str) -> tuple:
    return _one(
        db,
        "SELECT * FROM listings WHERE source != 'regfree' AND type = 'closeout' AND closed_at IS NULL "
        f"ORDER BY {order} LIMIT 1",
    )


def insert(db: Path) -> list[tuple[str, list]]:
    """A copy of a live closeout under a new id and name (as the issue's reproduction)."""
    columns = _columns(db)
    row = dict(zip(columns, _closeout(db, "trust_flow DESC")))
    row["id"] = _one(db, "SELECT max(id) + 1 FROM listings")[0]
    row["name"] = "zzoutsideone" + row["tld"]
    row["sld"] = "zzoutsideone"
    marks = ",".join("?" * len(columns))
    return [(f"INSERT INTO listings ({','.join(columns)}) VALUES ({marks})", [row[c] for c in columns])]


def update(db: Path) -> list[tuple[str, list]]:
    """A filtered and sorted column changed: the weakest closeout gets the top Trust Flow."""
    row_id = _closeout(db, "trust_flow, id")[0]
    return [("UPDATE listings SET trust_flow = 99, score = 100 WHERE id = ?", [row_id])]


def delete(db: Path) -> list[tuple[str, list]]:
    """The best closeout (first on the default page) removed."""
    row_id = _closeout(db, "score DESC, id")[0]
    return [("DELETE FROM listings WHERE id = ?", [row_id])]


def rename(db: Path) -> list[tuple[str, list]]:
    """A listing renamed: it moves to the front of the name order and matches a new term."""
    row_id = _closeout(db, "id DESC")[0]
    return [
        (
            "UPDATE listings SET name = 'aaoutsiderenamed.com', sld = 'aaoutsiderenamed', tld = '.com' WHERE id = ?",
            [row_id],
        )
    ]


WRITES = {"insert": insert, "update": update, "delete": delete, "rename": rename}


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    return small_demo(tmp_path_factory.mktemp("outside") / "demo.db", seed=5)


@pytest.fixture
def demo(demo_template, tmp_path) -> Path:
    path = tmp_path / "m.db"
    shutil.copy(demo_template, path)
    Mirror(path).refresh_index()  # a current index saved beside it, as `edt demo` leaves it
    Mirror(path).refresh_index("all")  # and its `all` part, as an earlier include_closed=1 query leaves it
    return path


def _page(answer: dict) -> tuple:
    return [r["id"] for r in answer["data"]], answer["meta"]["total"]


def _http(server: BackgroundServer, params: dict, path: str = "/api/domains") -> dict:
    response = httpx.get(server.url + path, params=params, headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _cli(db: Path, params: dict) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolkit",
            "query",
            "--db",
            str(db),
            "--format",
            "json",
            *(f"{k}={v}" for k, v in params.items()),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _mcp(server, params: dict) -> dict:
    import asyncio

    from mcp import Client

    args = {k: v for k, v in params.items() if k != "per_page"}
    args["limit"] = int(params.get("per_page", 50))

    async def go():
        async with Client(server) as client:
            return await client.call_tool("search_domains", args)

    result = asyncio.run(go())
    assert not result.is_error, result
    return result.structured_content


@pytest.mark.parametrize("write", list(WRITES))
def test_an_outside_write_is_seen_by_every_engine_and_reader(demo, write, monkeypatch):
    from toolkit.serve.mcp_server import build_server
    from toolkit.ui import state

    monkeypatch.setenv("EDT_DB", str(demo))
    # The real clock, as the CLI and the app read with: the demo is of today.
    sqlite = Mirror(demo, engine="sqlite")
    readers = {engine: Mirror(demo, engine=engine) for engine in ("auto", "columnar", "background")}
    mcp_server = build_server(Mirror(demo, readonly=True, engine="background"), "enterprise")
    before = {}
    with BackgroundServer(create_app(demo, {KEY: "enterprise"})) as server:
        for n, params in enumerate(QUERIES):  # every reader warm, its index and caches of the old generation
            before[n] = _page(sqlite.search_domains(params))
            for engine, reader in readers.items():
                assert _page(reader.search_domains(params)) == before[n], (engine, params)
            assert readers["auto"].answered_by() == "columnar"
            assert _page(_http(server, params)) == before[n]
            assert _page(_mcp(mcp_server, params)) == before[n]
            assert _page(state.search(params)) == before[n]
        generation = sqlite.generation()

        writer = OutsideWriter(demo)
        writer.write(*WRITES[write](demo))
        writer.close()

        assert sqlite.generation() > generation
        changed = 0
        for n, params in enumerate(QUERIES):
            expected = sqlite.search_domains(params)
            changed += _page(expected) != before[n]
            for engine, reader in readers.items():
                assert reader.search_domains(params) == expected, (engine, params)
                if engine == "auto" and n == 0:  # the saved index is stale: SQLite answers, never the index
                    assert reader.answered_by() == "sqlite"
            # refreshed from the change log (and saved: the auto reader then takes it up)
            assert readers["columnar"].answered_by() == "columnar"
            assert _page(_http(server, params)) == _page(expected), params
            assert _page(_mcp(mcp_server, params)) == _page(expected), params
            app = state.search(params)  # the app's cached page (its links list the parameters sorted)
            assert (app["data"], app["meta"]) == (expected["data"], expected["meta"]), params
        assert changed, "the write changed no answer: the check would prove nothing"
        assert _page(_cli(demo, QUERIES[0])) == _page(sqlite.search_domains(QUERIES[0]))

        background = readers["background"]  # catches up with the index within a few seconds
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if (
                background.search_domains(QUERIES[1]) == sqlite.search_domains(QUERIES[1])
                and background.answered_by() == "columnar"
            ):
                break
            time.sleep(0.1)
        assert background.answered_by() == "columnar"


def test_outside_writes_to_pending_delete_and_history_renew_every_cache(demo, monkeypatch):
    """Pending-delete answers, the status counts and the chart counts are cached by
    generation in the app: an outside write to their tables renews each."""
    from toolkit.ui import state

    monkeypatch.setenv("EDT_DB", str(demo))
    sqlite = Mirror(demo, engine="sqlite")
    pending_query = {"contains": "zzoutsidepending", "include_past": "1"}
    chart_query = {"type": "closeout"}
    assert state.search(pending_query, pending=True)["meta"]["total"] == 0
    history_rows = state.status()["datasets"]["listing_history"]["rows"]
    grid = state.chart_counts(chart_query).tf_cf
    columns = [r[1] for r in sqlite3.connect(demo).execute("PRAGMA table_info(pending_delete)")]
    row = dict(zip(columns, _one(demo, "SELECT * FROM pending_delete LIMIT 1")))
    row.update(id=_one(demo, "SELECT max(id) + 1 FROM pending_delete")[0], domain="zzoutsidepending" + row["tld"])
    listing = _closeout(demo, "trust_flow, id")
    writer = OutsideWriter(demo)
    writer.write(
        (
            f"INSERT INTO pending_delete ({','.join(columns)}) VALUES ({','.join('?' * len(columns))})",
            [row[c] for c in columns],
        )
    )
    writer.write(
        (
            "INSERT INTO listing_history (listing_id, observed_at, price) VALUES (?, ?, ?)",
            [listing[0], "2026-11-25T08:00:00Z", 1.0],
        )
    )
    writer.write(("UPDATE listings SET trust_flow = 100, citation_flow = 100 WHERE id = ?", [listing[0]]))
    writer.close()
    found = state.search(pending_query, pending=True)
    assert [r["domain"] for r in found["data"]] == [row["domain"]]
    assert state.status()["datasets"]["listing_history"]["rows"] == history_rows + 1
    after = state.chart_counts(chart_query).tf_cf
    assert after.get((100, 100), 0) == grid.get((100, 100), 0) + 1
    assert after == sqlite.chart_counts(chart_query).tf_cf


# -- the same from a plain writer, at random ----------------------------------------------------

FILTERS = sorted(set(POOLS) - {"page", "per_page", "limit", "sort", "after_id"})
SORTS = list(DOMAIN_SORTS) + ["-" + s for s in DOMAIN_SORTS]
# Columns an outside write sets, with values the synthetic records hold (and some they do not).
COLUMN_VALUES = {
    "trust_flow": [0, 5, 35, 60, None],
    "citation_flow": [0, 20, 50, None],
    "score": [0, 30, 70, 100],
    "price": [1.0, 49.99, 199.5, 5000.0, None],
    "effective_price": [1.0, 199.5, 1000.0],
    "tld": [".com", ".fr", ".zz"],
    "source": ["sedo", "dynadot", "regfree"],
    "type": ["auction", "closeout"],
    "language": ["EN", "FR", None],
    "bids_count": [0, 3, None],
    "created_at": ["2026-11-19T00:00:00Z"],
    "auction_end_date": [None, "2026-11-23T10:00:00Z", "2026-11-20T00:00:00Z"],
    "closed_at": [None, "2026-11-21T00:00:00Z"],
}
write_steps = st.one_of(
    st.tuples(st.just("update"), st.integers(0, 10**6), st.sampled_from(sorted(COLUMN_VALUES)), st.integers(0, 4)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.text("abcxyz", min_size=1, max_size=6)),
    st.tuples(st.just("delete"), st.integers(0, 10**6)),
    st.tuples(st.just("rename"), st.integers(0, 10**6), st.text("abcdeshop", min_size=1, max_size=8)),
)


@pytest.fixture(scope="module")
def plain_template(tmp_path_factory) -> Path:
    """A synthetic mirror with its index saved beside it."""
    path = tmp_path_factory.mktemp("plain") / "template.db"
    mirror = Mirror(path, clock=fixed_clock, create=True)
    save_listings(
        mirror.connection(), listing_records(400, seed=21), origin="sync", observed_at=ts(NOW - timedelta(days=2))
    )
    mirror.refresh_index()
    mirror.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    mirror.close()
    return path


@contextmanager
def plain_mirror(template: Path, folder: Path):
    """A fresh copy of the template (each example starts from the same mirror), its readers
    and a plain-sqlite3 writer in another process."""
    folder.mkdir()
    path = folder / "m.db"
    for suffix in ("", ".colidx"):
        shutil.copy(f"{template}{suffix}", f"{path}{suffix}")
    writer = OutsideWriter(path)
    readers = {engine: Mirror(path, clock=fixed_clock, engine=engine) for engine in ("columnar", "auto", "sqlite")}
    try:
        yield path, writer, readers
    finally:
        writer.close()
        for reader in readers.values():
            reader.close()


def _statement(path: Path, step: tuple) -> tuple[str, list]:
    ids = [
        r[0] for r in sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("SELECT id FROM listings ORDER BY id")
    ]
    target = ids[step[1] % len(ids)]
    if step[0] == "update":
        column, value = step[2], COLUMN_VALUES[step[2]][step[3] % len(COLUMN_VALUES[step[2]])]
        if column == "closed_at":  # live_until follows, as the writer derives it
            return (
                "UPDATE listings SET closed_at = ?1, live_until = COALESCE(?1, auction_end_date, "
                "'9999-12-31T23:59:59Z') WHERE id = ?2",
                [value, target],
            )
        if column == "auction_end_date":
            return (
                "UPDATE listings SET auction_end_date = ?1, live_until = COALESCE(closed_at, ?1, "
                "'9999-12-31T23:59:59Z') WHERE id = ?2",
                [value, target],
            )
        return f"UPDATE listings SET {column} = ? WHERE id = ?", [value, target]
    if step[0] == "insert":
        columns = _columns(path)
        select = ", ".join(
            "(SELECT max(id) + 1 FROM listings)" if c == "id" else ("?" if c == "name" else c) for c in columns
        )
        return (
            f"INSERT INTO listings ({', '.join(columns)}) SELECT {select} FROM listings WHERE id = ?",
            [f"{step[2]}{step[1]}.com", target],
        )
    if step[0] == "delete":
        return "DELETE FROM listings WHERE id = ?", [target]
    return "UPDATE listings SET name = ? WHERE id = ?", [f"{step[2]}{step[1]}.fr", target]


_EXAMPLES = itertools.count()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_outside_writes_and_queries_agree_on_every_engine(plain_template, tmp_path, data):
    with plain_mirror(plain_template, tmp_path / f"example{next(_EXAMPLES)}") as (path, writer, readers):
        for _ in range(data.draw(st.integers(1, 4))):
            for _ in range(data.draw(st.integers(0, 3))):
                writer.write(_statement(path, data.draw(write_steps)))
            names = data.draw(st.lists(st.sampled_from(FILTERS), min_size=1, max_size=3, unique=True))
            params = {name: data.draw(st.sampled_from(POOLS[name])) for name in names}
            params["sort"] = data.draw(st.sampled_from(SORTS))
            params["per_page"] = data.draw(st.sampled_from([5, 50]))
            expected = _answer(readers["sqlite"], params)
            for engine in ("columnar", "auto"):
                assert _answer(readers[engine], params) == expected, (engine, params)


def test_edt_serve_sees_an_outside_commit_on_its_next_request(demo):
    """No polling interval, no cache to expire: the request after the commit answers with the
    row (SQLite answers while the index catches up in the background)."""
    with BackgroundServer(create_app(demo, {KEY: "enterprise"})) as server:
        params = {"contains": "zzoutsideone", "include_closed": "1"}
        assert _http(server, params)["meta"]["total"] == 0
        writer = OutsideWriter(demo)
        writer.write(*insert(demo))
        writer.close()
        assert _http(server, params)["meta"]["total"] == 1
