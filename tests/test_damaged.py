"""A damaged mirror's file: every command says so in one line naming the file and `edt
doctor` (exit 2), the bulk loaders refuse it before writing a byte, a write that meets the
damage mid-batch keeps no part of it, the server and the MCP tools answer 503 (the log names
the file, once, without a traceback), and `edt doctor` tells sound from damaged, repairs
index-only damage in place and salvages the readable rows of damaged tables.

The damaged files are small demo mirrors with pages overwritten by zeros, built once per
module and copied per test; every command runs as a real process (`python -m toolkit`)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import as_synced, small_demo

from toolkit import Mirror
from toolkit.store.doctor import DAMAGED_MESSAGE, check_sound, damage_in, damaged_line, diagnose

KEY = "damaged-test-key"


# -- damaged files ------------------------------------------------------------------------------


def _conn(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _root(path: Path, name: str) -> int:
    with _conn(path) as conn:
        return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [name]).fetchone()[0]


def _leaves(path: Path, name: str) -> list[int]:
    """The leaf pages of a b-tree: from dbstat where this SQLite has it, else the root's
    children read from the page itself (the demo's tables are two levels deep)."""
    conn = _conn(path)
    try:
        try:
            return [
                p
                for (p,) in conn.execute(
                    "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", [name]
                )
            ]
        except sqlite3.OperationalError:  # no dbstat: an interior page lists its children
            size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    root = _root(path, name)
    page = path.read_bytes()[(root - 1) * size : root * size]
    assert page[0] in (2, 5), "expected an interior root page"
    cells = int.from_bytes(page[3:5], "big")
    pointers = [int.from_bytes(page[12 + 2 * i : 14 + 2 * i], "big") for i in range(cells)]
    return [int.from_bytes(page[p : p + 4], "big") for p in pointers] + [int.from_bytes(page[8:12], "big")]


def _zero(path: Path, pages: list[int]) -> None:
    with _conn(path) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\0" * size)


def _copy(template: Path, tmp_path: Path, name: str = "mirror.db") -> Path:
    target = tmp_path / name
    shutil.copyfile(template, target)
    return target


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(path: Path, table: str) -> list[tuple]:
    """Every row of `table` read through the table's own pages (never an index)."""
    with _conn(path) as conn:
        return conn.execute(f"SELECT * FROM {table} NOT INDEXED ORDER BY rowid").fetchall()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """One sound small demo mirror (with a saved search) and its damaged copies."""
    folder = tmp_path_factory.mktemp("damaged")
    sound = small_demo(folder / "sound.db", 5)
    mirror = Mirror(sound)
    from toolkit.sync.saved_searches import save_search

    save_search(mirror, "fr", {"tld": ".fr"})
    mirror.close()
    with sqlite3.connect(sound) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out = {"sound": sound}

    def damaged(name: str, pages: list[int]) -> None:
        out[name] = folder / f"{name}.db"
        shutil.copyfile(sound, out[name])
        _zero(out[name], pages)

    # the root pages of the tables every command reads (opens, then fails at its first query)
    damaged("tables", [_root(sound, t) for t in ("listings", "listing_history", "pending_delete", "saved_searches")])
    leaves = _leaves(sound, "listings")
    damaged("torn", leaves[len(leaves) // 2 :][:16])  # 64 KiB of zeros over the listings table's middle
    damaged("indexes", [_root(sound, "idx_listings_name"), _leaves(sound, "listings_fts_data")[0]])
    damaged("filters_index", [_root(sound, "idx_listings_filters")])  # every listing write meets it
    damaged("pending_index", [_root(sound, "idx_pending_domain")])  # every pending-delete write meets it
    out["header"] = folder / "header.db"  # its first page (which says "SQLite") zeroed
    shutil.copyfile(sound, out["header"])
    with out["header"].open("r+b") as fh:
        fh.write(b"\0" * 100)
    out["truncated"] = folder / "truncated.db"
    shutil.copyfile(sound, out["truncated"])
    with out["truncated"].open("r+b") as fh:
        fh.truncate(sound.stat().st_size // 2)
    out["text"] = folder / "notes.db"
    out["text"].write_text("not a database, only notes\n" * 300)
    with _conn(sound) as conn:
        out["name"] = conn.execute("SELECT name FROM listings ORDER BY id LIMIT 1").fetchone()[0]  # type: ignore[assignment]
    return out


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDT_")}
    env.update(
        EDT_CONFIG=str(tmp_path / "none.toml"),
        EDT_TIMEOUT="2",
        EDT_BUDGET_FILE=str(tmp_path / "budget.sqlite"),
        EDT_RDAP_BOOTSTRAP_URL="http://127.0.0.1:9/dns.json",
        COLUMNS="200",
    )
    return env


def edt(
    tmp_path: Path, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "toolkit", *args],
        cwd=tmp_path,
        env=env or _env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _the_line(db: Path, words: str = "database disk image is malformed") -> str:
    if words == "file is not a database":  # a stray file as likely as a mirror whose first page is gone
        return (
            f"edt: {db}: cannot open as a mirror: not a SQLite file, or the mirror's file is damaged ({words}); "
            f"run `edt doctor --db {db}` to see what can be saved"
        )
    return f"edt: {db}: the mirror's file is damaged ({words}); run `edt doctor --db {db}` to see what can be saved"


def _assert_damaged_line(
    result: subprocess.CompletedProcess, db: Path, *, words: str | None = None, others: bool = False
) -> None:
    """Exit 2 and one `edt:` line on stderr naming the file, SQLite's words and `edt doctor`;
    no traceback. `others`: a command's own progress lines may come first (`edt bench`)."""
    lines = result.stderr.splitlines()
    ours = [line for line in lines if line.startswith("edt:")]
    assert result.returncode == 2, result.stderr + result.stdout[-500:]
    assert "Traceback" not in result.stderr
    assert len(ours) == 1 and (others or lines == ours), lines
    line = ours[0]
    if words is not None:
        assert line == _the_line(db, words)
    else:  # quick_check's words: the first problem it names
        head, tail = _the_line(db, "\0").split("\0")
        assert line.startswith(head) and line.endswith(tail) and len(line) > len(head) + len(tail), line


# -- every command ------------------------------------------------------------------------------

COMMANDS = {
    "query": ["query", "--db", "{db}", "tld=.fr"],
    "query --pending": ["query", "--db", "{db}", "--pending"],
    "export": ["export", "--db", "{db}", "--format", "csv", "--out", "out.csv"],
    "status": ["status", "--db", "{db}"],
    "watch add": ["watch", "add", "--db", "{db}", "de", "tld=.de"],
    "watch list": ["watch", "list", "--db", "{db}"],
    "watch show": ["watch", "show", "--db", "{db}", "fr"],
    "watch rm": ["watch", "rm", "--db", "{db}", "fr"],
    "spam show": ["spam", "show", "--db", "{db}"],
    "spam check": ["spam", "check", "--db", "{db}", "{name}"],
    "spam reflag": ["spam", "reflag", "--db", "{db}", "--force"],
    "fx": ["fx", "--db", "{db}"],
    "enrich": ["enrich", "--db", "{db}", "tld=.fr", "--timeout", "1"],
    "ingest": ["ingest", "--db", "{db}", "droplist", "--file", "drop.txt"],
    "sync": [
        "sync",
        "--db",
        "{db}",
        "--api-key",
        "k",
        "--base-url",
        "http://127.0.0.1:9",
        "--plan",
        "pro",
        "--timeout",
        "1",
    ],
    "bench": ["bench", "--db", "{db}", "--repeat", "1", "--only", "tld"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_on_a_damaged_mirror_says_so_in_one_line(files, tmp_path, command):
    """The mirror opens (its schema is sound); the first query meets the damage."""
    db = _copy(files["tables"], tmp_path)
    (tmp_path / "drop.txt").write_text("first-name.se\nsecond-name.nu\n")
    result = edt(tmp_path, *(a.format(db=db, name=files["name"]) for a in COMMANDS[command]))
    # `edt bench` prints its progress on stderr first
    _assert_damaged_line(result, db, words="database disk image is malformed", others=command == "bench")


@pytest.mark.parametrize(
    "command,damage",
    [
        (["demo"], "tables"),
        (["demo"], "torn"),
        (["demo", "--clear"], "tables"),
        (["demo", "--clear"], "torn"),
        (["ingest", "droplist", "--file", "drop.txt"], "tables"),
    ],
)
def test_the_loaders_refuse_a_damaged_mirror_before_writing_a_byte(files, tmp_path, command, damage):
    """demo and demo --clear run SQLite's quick_check first (its words in the line); ingest
    fails on the table it writes to and rolls back."""
    db = _copy(files[damage], tmp_path)
    (tmp_path / "drop.txt").write_text("first-name.se\nsecond-name.nu\n")
    before = _digest(db)
    result = edt(tmp_path, command[0], "--db", str(db), *command[1:])
    _assert_damaged_line(result, db, words=None if command[0] == "demo" else "database disk image is malformed")
    assert _digest(db) == before
    assert not Path(f"{db}-journal").exists()
    with _conn(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # not switched out of WAL


@pytest.mark.parametrize(
    "damage,words",
    [
        ("header", "file is not a database"),
        ("truncated", "database disk image is malformed"),
        ("text", "file is not a database"),
    ],
)
@pytest.mark.parametrize("command", [["serve", "--port", "1"], ["mcp"], ["status"], ["demo"], ["query"]])
def test_a_file_that_cannot_be_opened_is_refused_at_start(files, tmp_path, damage, words, command):
    db = _copy(files[damage], tmp_path)
    before = _digest(db)
    result = edt(tmp_path, command[0], "--db", str(db), *command[1:], timeout=60)
    _assert_damaged_line(result, db, words=words)
    assert _digest(db) == before


def test_commands_that_never_read_the_mirror_leave_it_alone(files, tmp_path):
    db = _copy(files["tables"], tmp_path)
    before = _digest(db)
    assert edt(tmp_path, "schedule", "--next", "--db", str(db)).returncode == 0
    kept = edt(tmp_path, "backtest", "--zones", str(tmp_path / "zones"), "--official", "bardate=none", "--db", str(db))
    assert kept.returncode == 2 and f"--db {db}: the file exists" in kept.stderr
    assert _digest(db) == before


def test_edt_debug_shows_the_traceback_instead(files, tmp_path):
    db = _copy(files["tables"], tmp_path)
    debug = edt(tmp_path, "status", "--db", str(db), env={**_env(tmp_path), "EDT_DEBUG": "1"})
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "DatabaseError" in debug.stderr


def test_main_keeps_clicks_own_exits(tmp_path):
    assert edt(tmp_path, "--help").returncode == 0
    usage = edt(tmp_path, "query", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr


# -- writes that meet the damage mid-batch ------------------------------------------------------


def test_a_sync_that_meets_damage_mid_page_keeps_no_part_of_it(files, tmp_path):
    from toolkit.serve.server import BackgroundServer, create_app

    db = as_synced(_copy(files["filters_index"], tmp_path))  # a sync refuses the demo's: origin is in no damaged index
    before = {t: _rows(db, t) for t in ("listings", "listing_history", "pending_delete")}
    env = {**_env(tmp_path), "EDT_API_KEY": KEY}
    remote = create_app(_copy(files["sound"], tmp_path, "remote.db"), {KEY: "business"}, rates={"business": 100_000})
    with BackgroundServer(remote) as server:
        result = edt(
            tmp_path,
            "sync",
            "--db",
            str(db),
            "--base-url",
            server.url,
            "--plan",
            "business",
            "--jobs",
            "listings",
            "--rate",
            "6000",
            env=env,
        )
    _assert_damaged_line(result, db, words="database disk image is malformed")
    assert {t: _rows(db, t) for t in before} == before  # the page's rows, history and checkpoint: none of it


def test_an_ingest_that_meets_damage_mid_file_keeps_no_part_of_it(files, tmp_path):
    db = _copy(files["pending_index"], tmp_path)
    (tmp_path / "drop.txt").write_text("".join(f"released-name-{i}.se\n" for i in range(50)))
    rows, before = _rows(db, "pending_delete"), _digest(db)
    result = edt(tmp_path, "ingest", "--db", str(db), "droplist", "--file", "drop.txt")
    _assert_damaged_line(result, db, words="database disk image is malformed")
    assert _rows(db, "pending_delete") == rows and _digest(db) == before


def test_an_enrich_batch_that_meets_damage_is_rolled_back(files, tmp_path):
    from toolkit.enrich.listings import enrich

    db = _copy(files["filters_index"], tmp_path)
    rows = _rows(db, "listings")
    asked = []

    def web(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.host)
        body = [
            ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"],
            ["fr,x)/", "20100101000000", "http://x.fr/", "text/html", "200", "AAAA", "100"],
        ]
        return httpx.Response(200, json=body)

    mirror, transport = Mirror(db), httpx.MockTransport(web)
    with pytest.raises(sqlite3.DatabaseError) as raised:
        enrich(mirror, rdap=False, params={"tld": ".fr"}, limit=30, transport=transport, sleep=lambda seconds: None)
    mirror.close()
    assert damage_in(raised.value) is not None
    assert asked and set(asked) == {"web.archive.org"}  # it got as far as writing what it learnt
    assert _rows(db, "listings") == rows


# -- the server and the MCP tools ---------------------------------------------------------------

ROUTES = [
    "/api/domains?tld=.fr",
    "/api/domains/{id}",
    "/api/pending-delete",
    "/api/pending-delete/{domain}",
    "/api/free/domains",
    "/api/export",
    "/api/export?format=csv",
]


def _warnings(caplog, logger: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == logger and r.levelno >= logging.WARNING]


def test_the_server_answers_503_and_logs_one_line(files, tmp_path, caplog):
    from toolkit.serve.server import create_app

    db = _copy(files["tables"], tmp_path)
    with _conn(files["sound"]) as conn:
        some_id = conn.execute("SELECT id FROM listings LIMIT 1").fetchone()[0]
        domain = conn.execute("SELECT domain FROM pending_delete LIMIT 1").fetchone()[0]
    app = create_app(db, {KEY: "business"})

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get(path, headers={"Authorization": f"Bearer {KEY}"})

    for route in ROUTES:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            response = asyncio.run(get(route.format(id=some_id, domain=domain)))
        assert response.status_code == 503, (route, response.text)
        assert response.json() == {"error": "damaged", "message": DAMAGED_MESSAGE}
        assert "edt doctor" in response.text and str(db) not in response.text and db.name not in response.text
        logged = _warnings(caplog, "toolkit.serve.server")
        assert [r.levelno for r in logged] == [logging.WARNING], (route, [r.getMessage() for r in logged])
        assert logged[0].getMessage().startswith(damaged_line(db, "database disk image is malformed"))
        assert all(r.exc_info is None for r in caplog.records) and "Traceback" not in caplog.text


def test_the_server_answers_503_over_a_real_socket(files, tmp_path, caplog):
    from toolkit.serve.server import BackgroundServer, create_app

    db = _copy(files["tables"], tmp_path)
    with BackgroundServer(create_app(db, {KEY: "business"})) as server, caplog.at_level(logging.INFO):
        response = httpx.get(f"{server.url}/api/domains", headers={"Authorization": f"Bearer {KEY}"})
        again = httpx.get(f"{server.url}/api/export", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == again.status_code == 503
    assert response.json()["message"] == DAMAGED_MESSAGE
    assert len(_warnings(caplog, "toolkit.serve.server")) == 2 and "Traceback" not in caplog.text


def test_an_export_cut_by_damage_is_cut_and_logged_once(files, tmp_path, caplog):
    """Damage met after the first rows went out: the stream is cut (the client cannot take
    it for a whole export), one warning line, no traceback."""
    from toolkit.serve.server import BackgroundServer, create_app

    app = create_app(_copy(files["sound"], tmp_path), {KEY: "business"})
    mirror = app.state.mirror
    rows = mirror.export_rows({}, "business")
    first = next(rows)
    rows.close()

    def broken(*args, **kwargs):
        yield first
        raise sqlite3.DatabaseError("database disk image is malformed")

    mirror.export_rows = broken
    with (
        BackgroundServer(app) as server,
        caplog.at_level(logging.INFO),
        pytest.raises(httpx.HTTPError),
        httpx.stream("GET", f"{server.url}/api/export", headers={"Authorization": f"Bearer {KEY}"}) as answer,
    ):
        assert answer.status_code == 200
        answer.read()
    assert len(_warnings(caplog, "toolkit.serve.server")) == 1
    assert all(r.exc_info is None for r in caplog.records) and "Traceback" not in caplog.text


def test_the_mcp_tools_answer_503(files, tmp_path, caplog):
    from mcp import Client

    from toolkit.serve.mcp_server import build_server

    db = _copy(files["tables"], tmp_path)
    server = build_server(Mirror(db, readonly=True), "business")

    async def go():
        async with Client(server) as client:
            return [await client.call_tool(name, {}) for name in ("search_domains", "get_stats")]

    with caplog.at_level(logging.INFO):
        results = asyncio.run(go())
    for result in results:
        assert result.is_error
        assert result.structured_content == {"status": 503, "error": "damaged", "message": DAMAGED_MESSAGE}
        assert result.content[0].text == DAMAGED_MESSAGE
    logged = _warnings(caplog, "toolkit.mcp")
    assert len(logged) == 2 and all(str(db) in r.getMessage() and "edt doctor" in r.getMessage() for r in logged)
    assert all(r.exc_info is None for r in caplog.records)


# -- edt doctor ---------------------------------------------------------------------------------


def _doctor(tmp_path: Path, db: Path, *args: str) -> tuple[int, dict]:
    result = edt(tmp_path, "doctor", "--db", str(db), "--json", *args)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else {}


def test_doctor_on_a_sound_mirror(files, tmp_path):
    db = _copy(files["sound"], tmp_path)
    code, report = _doctor(tmp_path, db)
    assert code == 0 and report["sound"] and report["integrity_check"] == ["ok"]
    with _conn(db) as conn:
        for table in report["tables"]:
            assert table["rows"] == conn.execute(f"SELECT count(*) FROM {table['name']}").fetchone()[0]
    assert {t["name"] for t in report["tables"]} >= {"listings", "listing_history", "pending_delete", "saved_searches"}
    words = edt(tmp_path, "doctor", "--db", str(db))
    assert words.returncode == 0 and f"{db} is sound" in words.stdout and "6,508" in words.stdout


def test_doctor_repairs_damaged_indexes_with_no_row_lost(files, tmp_path):
    db = _copy(files["indexes"], tmp_path)
    sound = {t: _rows(files["sound"], t) for t in ("listings", "pending_delete", "listing_history")}
    code, report = _doctor(tmp_path, db)
    assert code == 1 and not report["sound"] and report["repairable"]
    listings = next(t for t in report["tables"] if t["name"] == "listings")
    assert listings["rows_sound"] and listings["lost"] == 0 and listings["rows"] == len(sound["listings"])
    assert {p["name"] for p in listings["parts"] if p["problem"]} == {"idx_listings_name", "listings_fts"}
    words = edt(tmp_path, "doctor", "--db", str(db))
    assert words.returncode == 1 and "--repair` rebuilds them, no row lost" in words.stdout

    repaired = edt(tmp_path, "doctor", "--db", str(db), "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "sound now (integrity_check: ok)" in repaired.stdout
    with _conn(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        matched = conn.execute("SELECT count(*) FROM listings_fts WHERE listings_fts MATCH 'shop'").fetchone()[0]
        assert matched == conn.execute("SELECT count(*) FROM listings WHERE name LIKE '%shop%'").fetchone()[0] > 0
    assert {t: _rows(db, t) for t in sound} == sound
    assert _doctor(tmp_path, db)[0] == 0
    query = edt(tmp_path, "query", "--db", str(db), "sort=name", "contains=shop", "--format", "json")
    assert query.returncode == 0 and json.loads(query.stdout)["meta"]["total"] > 0


def test_doctor_salvages_the_rows_of_damaged_tables(files, tmp_path):
    db = _copy(files["torn"], tmp_path)
    before = _digest(db)
    original = {row[0]: row for row in _rows(files["sound"], "listings")}
    code, report = _doctor(tmp_path, db)
    assert code == 1 and not report["repairable"]
    listings = next(t for t in report["tables"] if t["name"] == "listings")
    lost = listings["lost"]
    assert not listings["rows_sound"] and 0 < lost < len(original) and listings["rows"] == len(original) - lost
    refused = edt(tmp_path, "doctor", "--db", str(db), "--repair")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--salvage NEW_FILE" in refused.stderr

    saved = tmp_path / "saved.db"
    result = edt(tmp_path, "doctor", "--db", str(db), "--salvage", str(saved))
    assert result.returncode == 0, result.stderr
    assert f"mv {saved} {db} && rm -f {db}-wal {db}-shm {db}.colidx" in result.stdout
    assert f"{len(original) - lost:,} saved, {lost:,} lost" in result.stdout
    copied = {row[0]: row for row in _rows(saved, "listings")}
    assert len(copied) == len(original) - lost
    assert all(original[i] == row for i, row in copied.items())  # every saved row as it was
    for table in ("pending_delete", "listing_history", "saved_searches"):
        assert _rows(saved, table) == _rows(files["sound"], table)
    assert _digest(db) == before  # the damaged file is only read
    with _conn(saved) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    status = edt(tmp_path, "status", "--db", str(saved), "--json")
    assert status.returncode == 0
    datasets = json.loads(status.stdout)["datasets"]
    assert datasets["listings"]["rows"] + datasets["regfree"]["rows"] == len(original) - lost
    query = edt(tmp_path, "query", "--db", str(saved), "--format", "json", "per_page=100")
    assert query.returncode == 0 and json.loads(query.stdout)["meta"]["total"] > 0
    again = edt(tmp_path, "doctor", "--db", str(db), "--salvage", str(saved))
    assert again.returncode == 2 and again.stderr.startswith(f"edt: --salvage {saved}: the file exists")


def test_doctor_on_files_it_cannot_read(files, tmp_path):
    text = _copy(files["text"], tmp_path, "notes.db")
    result = edt(tmp_path, "doctor", "--db", str(text))
    assert result.returncode == 2 and result.stderr.splitlines() == [
        (
            f"edt: {text}: not a SQLite database (file is not a database): nothing `edt doctor` can read; if it was a "
            "mirror, its first page is gone: restore a backup, or build a new mirror with `edt sync` or `edt demo` "
            "(--db NEW_FILE)"
        )
    ]
    truncated = _copy(files["truncated"], tmp_path, "truncated.db")
    said = edt(tmp_path, "doctor", "--db", str(truncated))
    assert said.returncode == 1 and "no table can be read through SQLite" in said.stdout
    salvage = edt(tmp_path, "doctor", "--db", str(truncated), "--salvage", str(tmp_path / "new.db"))
    assert salvage.returncode == 1 and len(salvage.stderr.splitlines()) == 1 and not (tmp_path / "new.db").exists()


# -- the library ------------------------------------------------------------------------------------


def test_damage_is_told_from_other_sqlite_errors(files, tmp_path):
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as bad_json:
        conn.execute("SELECT json_extract('{', '$')")
    assert "malformed" in str(bad_json.value) and damage_in(bad_json.value) is None  # a bad value, not a bad file
    with pytest.raises(sqlite3.DatabaseError) as corrupt:
        _conn(_copy(files["tables"], tmp_path)).execute("SELECT count(*) FROM listing_history NOT INDEXED").fetchone()
    assert damage_in(corrupt.value) is corrupt.value
    try:
        try:
            raise corrupt.value
        except sqlite3.DatabaseError:
            raise RuntimeError("wrapped") from None
    except RuntimeError as wrapped:
        assert damage_in(wrapped) is corrupt.value  # found in what it was raised while handling


def test_check_sound_and_diagnose(files, tmp_path):
    assert check_sound(files["sound"]) is None
    assert check_sound(files["torn"]) and check_sound(files["tables"]).startswith("Page ")
    assert check_sound(files["header"]) == "file is not a database"
    diagnosis = diagnose(files["torn"])
    listings = next(t for t in diagnosis.tables if t.name == "listings")
    assert not diagnosis.sound and listings.unreadable and listings.expected == len(_rows(files["sound"], "listings"))
