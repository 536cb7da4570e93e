"""What a new user trips on (issue 15): each report reproduced, and the careful behaviour checked.

Numbers are the issue's: 1 export --out, 2 locks, 3 network waits, 4 read-only places,
5 silent overwrites and dropped input, 6 the watchlist's "new", 7 the table's width,
8 cron and systemd lines, 9 hidden drop lists, 10 edt app's address, 11 the smaller ones;
12 a second report: typos, empty answers, export formats and paths, the 401, spam counts,
readers during a load, config paths, read-only watchlists, full disks, outside pointers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conftest import as_synced, small_demo
from toolkit import ApiError, Mirror
from toolkit.cli import cli

EDT = [sys.executable, "-m", "toolkit"]


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    return small_demo(tmp_path_factory.mktemp("rough") / "mirror.db", seed=15)


@pytest.fixture()
def db(demo_template, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "mirror.db"
    shutil.copy(demo_template, path)
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.delenv("EDT_API_KEY", raising=False)
    monkeypatch.delenv("EDT_TIMEOUT", raising=False)
    return path


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def edt(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """`edt` as a user runs it: a process of its own (main()'s one-line failures included)."""
    root = Path(__file__).resolve().parents[1]
    full_env = {**os.environ, "PYTHONPATH": str(root), **(env or {})}
    return subprocess.run([*EDT, *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@contextlib.contextmanager
def read_only(folder: Path):
    """`folder` made read-only the way a user meets it: a read-only bind mount as root (root
    writes through file modes), file modes otherwise. Fails where neither is possible."""
    if os.geteuid() == 0:
        if not shutil.which("mount"):
            pytest.fail("no mount(8) to make a read-only place")
        bound = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
        if bound.returncode != 0:
            pytest.fail(f"cannot bind-mount here: {bound.stderr.decode().strip()}")
        try:
            ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True)
            if ro.returncode != 0:
                pytest.fail(f"cannot remount read-only here: {ro.stderr.decode().strip()}")
            yield
        finally:
            subprocess.run(["umount", str(folder)], capture_output=True)
    else:
        modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)


# -- 1. edt export --out: regular files only ----------------------------------------------------


def test_export_refuses_a_fifo_and_leaves_it_a_fifo(db, tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    result = run("export", "--format", "csv", "--out", str(fifo), "tld=.fr")
    assert result.exit_code == 2
    assert "FIFO" in result.output and "regular files only" in result.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    folder = run("export", "--format", "csv", "--out", str(tmp_path), "tld=.fr")
    assert folder.exit_code == 2 and "folder" in folder.output


def test_export_refuses_a_device_node(db, tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.fail(f"cannot make a device node here ({exc})")
    result = run("export", "--format", "csv", "--out", str(node), "tld=.fr")
    assert result.exit_code == 2 and "character device" in result.output
    assert stat.S_ISCHR(node.lstat().st_mode)


def test_export_follows_a_symlink_says_so_and_keeps_the_link(db, tmp_path):
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = edt("export", "--format", "csv", "--out", str(link), "tld=.fr")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("id,name,")
    assert f"symbolic link: writing to its target {target}" in result.stderr


def test_export_replaces_a_regular_file_atomically_keeping_its_mode(db, tmp_path):
    out = tmp_path / "fr.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    result = run("export", "--format", "csv", "--out", str(out), "tld=.fr")
    assert result.exit_code == 0
    assert out.read_text().startswith("id,name,") and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert not list(tmp_path.glob(".*.partial"))


def test_export_dash_streams_to_standard_output(db, tmp_path):
    result = edt("export", "--format", "jsonl", "--out", "-", "tld=.fr", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and all(r["tld"] == ".fr" for r in rows)
    assert not (tmp_path / "-").exists()
    assert f"Wrote {len(rows):,} listings to standard output" in result.stderr


def test_export_into_a_read_only_folder_says_why(db, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        result = edt("export", "--format", "csv", "--out", str(folder / "x.csv"), "tld=.fr")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert f"cannot write in folder {folder}" in line and "Errno" not in line


# -- 2. writers wait for readers; a lasting lock is named ---------------------------------------


def test_demo_loads_while_a_server_reads_the_mirror(db):
    from toolkit.serve.server import BackgroundServer, create_app

    with BackgroundServer(create_app(str(db), {"k": "pro"})) as server:
        with httpx.Client(base_url=server.url, headers={"Authorization": "Bearer k"}) as client:
            assert client.get("/api/domains", params={"tld": ".fr"}).status_code == 200
            result = edt("demo", "--force", "--db", str(db))
            assert result.returncode == 0, result.stderr
            assert client.get("/api/domains", params={"tld": ".fr"}).status_code == 200


def test_a_lasting_lock_is_one_line_naming_the_holder_and_the_fix(db):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(db)!r}, isolation_level=None); c.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        result = edt("watch", "add", "locked", "tld=.fr", "--db", str(db))
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert "stayed locked for 10 s" in line and f"pid {holder.pid} (python" in line and "wait for it to finish" in line


# -- 3. network failures: said as they happen, given up within --timeout ------------------------


def test_sync_against_an_unreachable_host_says_each_retry_and_gives_up_within_timeout(db, tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    result = edt(  # a mirror of its own: a sync refuses the demo's
        "sync",
        "--db",
        str(tmp_path / "synced.db"),
        "--jobs",
        "bids",
        "--timeout",
        "3",
        env={"EDT_API_KEY": "x", "EDT_BASE_URL": f"http://127.0.0.1:{port}"},
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert elapsed < 20
    retries = [line for line in result.stderr.splitlines() if "; retry " in line]
    assert retries and all(
        f"127.0.0.1:{port}" in line and re.search(r"retry \d+ of \d+ in \d+ s", line) for line in retries
    )
    last = result.stderr.strip().splitlines()[-1]
    assert (
        last.startswith("edt: sync stopped:")
        and f"127.0.0.1:{port} unreachable" in last
        and "--timeout or EDT_TIMEOUT: 3 s" in last
    )


def test_the_default_bound_is_a_minute_and_settable(monkeypatch):
    from toolkit.sync.remote import DEFAULT_GIVE_UP, network_bound

    assert DEFAULT_GIVE_UP <= 60 and network_bound() == DEFAULT_GIVE_UP
    monkeypatch.setenv("EDT_TIMEOUT", "7")
    assert network_bound() == 7 and network_bound(2.5) == 2.5
    with pytest.raises(ValueError):
        network_bound(0)


def test_enrich_offline_stops_within_the_bound_naming_the_host(db):
    """A DNS failure for every request: the run stops after at most `give_up_after` seconds of
    (virtual) waiting, instead of retrying each row in silence."""
    from toolkit.enrich.listings import enrich
    from toolkit.sync.remote import HostUnreachable

    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    failed_at: list[float] = []

    def offline(request: httpx.Request) -> httpx.Response:
        now[0] += 1.5  # a resolver that takes its time to fail
        failed_at.append(now[0])
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)

    said: list[str] = []
    with Mirror(db) as mirror, pytest.raises(HostUnreachable) as info:
        enrich(
            mirror,
            rdap=False,
            params={"tld": ".fr"},
            limit=3,
            transport=httpx.MockTransport(offline),
            sleep=sleep,
            clock=lambda: now[0],
            give_up_after=20,
            say=said.append,
        )
    # Down since its first failure: no wait past 20 s from it, so the last failure comes at most
    # one attempt (1.5 s) later, whatever the backoff's random jitter drew; then no more waiting.
    assert len(failed_at) >= 3 and failed_at[-1] - failed_at[0] <= 20 + 1.5
    assert now[0] == failed_at[-1]
    assert "web.archive.org unreachable" in str(info.value) and "EDT_TIMEOUT: 20 s" in str(info.value)
    assert said and all(line.startswith("web.archive.org: ConnectError") and "retry" in line for line in said)


def test_enrich_cli_gives_up_with_one_line(db, monkeypatch):
    import toolkit.enrich.listings as run_module

    def offline(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    real = run_module.polite_client
    monkeypatch.setattr(
        run_module,
        "polite_client",
        lambda transport=None, **kw: real(httpx.MockTransport(offline), **{**kw, "backoff": 0.1}),
    )
    result = CliRunner().invoke(cli, ["enrich", "tld=.fr", "--limit", "3", "--no-rdap", "--timeout", "1"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("edt: enrich stopped: web.archive.org unreachable")
    assert all("web.archive.org" in line for line in lines)


# -- 4. a read-only mirror opens read-only, and says so -----------------------------------------


def test_a_mirror_on_a_read_only_place_can_be_queried(db, tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    copy = folder / "mirror.db"
    shutil.copy(db, copy)
    with read_only(folder):
        query = edt("query", "tld=.fr", "--format", "json", "--db", str(copy))
        export = edt("export", "--format", "csv", "--out", "-", "tld=.fr", "--db", str(copy))
        demo = edt("demo", "--db", str(copy))
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["meta"]["total"] > 0
    note = one_line(query.stderr)
    assert note.startswith(f"edt: {copy} is ") and "opened read-only" in note
    assert export.returncode == 0 and export.stdout.startswith("id,name,")
    assert demo.returncode == 2 and "writes to the mirror" in one_line(demo.stderr)


def test_read_only_uri_is_immutable_only_where_sqlite_cannot_keep_its_shm(tmp_path):
    from toolkit.store.access import read_only_uri

    path = tmp_path / "m.db"
    sqlite3.connect(path).close()
    assert read_only_uri(path).endswith("?mode=ro")


# -- 5. silent overwrites and dropped input -----------------------------------------------------


def test_watch_add_refuses_an_existing_name_unless_replace(db):
    assert run("watch", "add", "fr", "tld=.fr").exit_code == 0
    again = run("watch", "add", "fr", "tld=.de")
    assert again.exit_code == 2 and "already named 'fr'" in again.output and "--replace" in again.output
    with Mirror(db) as mirror:
        from toolkit.sync.saved_searches import saved_searches

        assert saved_searches(mirror)[0]["params"] == {"tld": ".fr"}
    assert run("watch", "add", "fr", "tld=.de", "--replace").exit_code == 0
    with Mirror(db) as mirror:
        assert saved_searches(mirror)[0]["params"] == {"tld": ".de"}


def test_a_repeated_list_filter_merges_in_the_cli(db):
    both = json.loads(run("query", "tld=.fr", "tld=.de", "--format", "json").output)
    comma = json.loads(run("query", "tld=.fr,.de", "--format", "json").output)
    assert both["meta"]["total"] == comma["meta"]["total"] > 0
    assert {r["tld"] for r in both["data"]} <= {".fr", ".de"}
    assert (
        len(
            {
                r["tld"]
                for r in json.loads(run("query", "tld=.fr", "tld=.de", "per_page=100", "--format", "json").output)[
                    "data"
                ]
            }
        )
        == 2
    )


def test_a_repeated_one_value_filter_is_refused_in_the_cli(db):
    result = run("query", "tf_min=20", "tf_min=30")
    assert result.exit_code == 2 and "tf_min was given 2 times" in result.output


def test_repeats_in_http_merge_or_are_refused_alike(db):
    from starlette.testclient import TestClient

    from toolkit.serve.server import create_app

    with TestClient(create_app(str(db), {"k": "enterprise"})) as client:
        headers = {"Authorization": "Bearer k"}
        both = client.get("/api/domains?tld=.fr&tld=.de", headers=headers).json()
        comma = client.get("/api/domains?tld=.fr,.de", headers=headers).json()
        assert both["meta"]["total"] == comma["meta"]["total"] > 0
        refused = client.get("/api/domains?tf_min=20&tf_min=30", headers=headers)
        assert refused.status_code == 422 and "tf_min was given 2 times" in refused.json()["message"]
        export = client.get("/api/export?format=csv&format=ndjson", headers=headers)
        assert export.status_code == 422 and "format was given 2 times" in export.json()["message"]


def test_repeats_in_mcp_merge_or_are_refused_alike(db):
    from mcp import Client

    from toolkit.serve.mcp_server import build_server

    server = build_server(Mirror(db, readonly=True), "enterprise")

    async def go(args):
        async with Client(server) as client:
            return await client.call_tool("search_domains", args)

    both = asyncio.run(go({"tld": [".fr", ".de"]}))
    comma = asyncio.run(go({"tld": ".fr,.de"}))
    assert not both.is_error and both.structured_content["meta"]["total"] == comma.structured_content["meta"]["total"]
    refused = asyncio.run(go({"tf_min": [20, 30]}))
    assert refused.is_error and "tf_min was given 2 times" in refused.content[0].text


def test_the_python_api_follows_the_same_rule(db):
    with Mirror(db) as mirror:
        assert (
            mirror.search_domains({"tld": [".fr", ".de"]})["meta"]["total"]
            == mirror.search_domains({"tld": ".fr,.de"})["meta"]["total"]
        )
        with pytest.raises(ApiError) as info:
            mirror.search_domains({"tf_min": ["20", "30"]})
        assert info.value.status == 422 and "tf_min was given 2 times (20, 30)" in info.value.body["message"]


# -- 6. the watchlist explains "new since saved" and shows the current matches -------------------


def test_watch_list_explains_new_and_show_all_lists_current_matches(db):
    added = run("watch", "add", "fr", "tld=.fr")
    assert "first seen from now on" in added.output and "--all" in added.output
    listed = run("watch", "list").output
    assert re.search(r"fr: tld=\.fr \([\d,]+ matches now, 0 new since saved ", listed)
    assert "first seen after" in listed
    shown = run("watch", "show", "fr").output
    assert "0 new since" in shown and "--all lists them" in shown
    everything = run("watch", "show", "fr", "--all").output
    with Mirror(db) as mirror:
        total = mirror.search_domains({"tld": ".fr"})["meta"]["total"]
    assert f"{total:,} current matches" in everything
    assert len([line for line in everything.splitlines() if line.startswith("  ")]) == total


# -- 7. the table fits the terminal -------------------------------------------------------------


def test_the_quickstart_table_fits_80_columns_without_cut_cells(db):
    result = run("query", "tld=.fr", "tf_min=20", "sort=-trust_flow", env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "…" not in result.output
    header = next(line for line in lines if "name" in line)
    assert "age" in header and "TF/CF" in header and "score" in header
    assert "Hidden to fit 80 columns:" in result.output
    wide = run("query", "tld=.fr", env={"COLUMNS": "200"})
    assert "Hidden" not in wide.output and "bids" in wide.output and "source" in wide.output


# -- 8. cron and systemd lines run as pasted ----------------------------------------------------


def test_crontab_lines_are_absolute_and_the_printed_command_runs(db, tmp_path):
    as_synced(db)  # a sync refuses the demo's mirror before it reaches the network
    result = edt("schedule", "--crontab", "--db", "mirror.db", cwd=db.parent)
    assert result.returncode == 0, result.stderr
    line = result.stdout.splitlines()[1]
    fields = line.split(" ", 5)
    command = fields[5]
    assert command.startswith(f"cd {shlex.quote(str(db.parent))} && /")
    assert f"--db {db}" in command and f">> {db}.sync.log" in command
    executable = shlex.split(command.split("&&", 1)[1])[0]
    assert os.path.isabs(executable) and os.access(executable, os.X_OK)
    # cron's environment: a bare PATH, another working folder, no virtual environment
    cron_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SHELL": "/bin/sh",
        "EDT_API_KEY": "k",
        "EDT_BASE_URL": "http://127.0.0.1:9",
        "EDT_TIMEOUT": "1",
        "EDT_CONFIG": str(tmp_path / "none.toml"),
        "EDT_BUDGET_FILE": str(tmp_path / "budget.sqlite"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    ran = subprocess.run(["/bin/sh", "-c", command], cwd="/", env=cron_env, capture_output=True, text=True, timeout=120)
    log = Path(f"{db}.sync.log").read_text()
    assert "not found" not in log and "edt: " in log
    assert "127.0.0.1:9" in log  # it reached the sync: the program, the mirror and the settings were found
    assert ran.returncode == 1


def test_systemd_unit_has_absolute_paths_and_a_working_folder(db):
    result = edt("schedule", "--systemd", "--db", "mirror.db", cwd=db.parent)
    unit = result.stdout
    assert f"WorkingDirectory={db.parent}" in unit
    exec_start = re.search(r"^ExecStart=(.*)$", unit, flags=re.M).group(1)
    assert os.path.isabs(shlex.split(exec_start)[0]) and f"--db {db}" in exec_start


# -- 9. ingested drop lists are not hidden without a word ---------------------------------------


def test_past_drops_are_hinted(db, tmp_path):
    feed = tmp_path / "20260101.txt"
    feed.write_text("alpha-rough.pl\nbeta-rough.pl\n")
    assert edt("ingest", "droplist", "--file", str(feed), "--date", "2026-01-01").returncode == 0
    result = edt("query", "--pending", "tld=pl", "source=droplist")
    assert result.returncode == 0
    assert "no rows match" in result.stdout
    assert "2 more rows match with include_past=1" in one_line(result.stderr)
    shown = edt("query", "--pending", "tld=pl", "source=droplist", "include_past=1", "--format", "json")
    assert json.loads(shown.stdout)["meta"]["total"] == 2 and not shown.stderr


# -- 10. edt app binds 127.0.0.1 unless --host ---------------------------------------------------


def test_app_binds_loopback_unless_told(db, monkeypatch):
    calls = []

    def run_streamlit(program, command, env=None):  # os.execve, where Streamlit would take the process's place
        calls.append(command)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", run_streamlit)
    monkeypatch.setattr(subprocess, "call", lambda command, env=None: calls.append(command) or 0)
    local = run("app", "--port", "18501")
    assert local.exit_code == 0
    command = calls[-1]
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert "only this machine can connect" in local.output
    shared = run("app", "--host", "0.0.0.0", "--port", "18502")
    assert calls[-1][calls[-1].index("--server.address") + 1] == "0.0.0.0"
    assert "WARNING" in shared.output and "other machines can connect" in shared.output


# -- 11. the smaller ones -----------------------------------------------------------------------


def _busy_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock, sock.getsockname()[1]


def test_serve_on_a_busy_port_is_one_line(db):
    sock, port = _busy_port()
    with sock:
        result = edt("serve", "--port", str(port))
    assert result.returncode == 2
    line = one_line(result.stderr.split("\n", 0)[0])
    assert f"--port {port}: already in use" in line


def test_app_on_a_busy_port_is_one_line(db):
    sock, port = _busy_port()
    with sock:
        result = run("app", "--port", str(port))
    assert result.exit_code == 2 and f"--port {port}: already in use" in result.output


def test_a_wrong_key_names_the_setting(db):
    from toolkit.sync.remote import RemoteClient, RemoteRefused
    from toolkit.serve.server import create_app

    app = create_app(str(db), {"right": "pro"})

    async def go():
        async with RemoteClient(
            "http://testserver", "wrong", limiter=None, transport=httpx.ASGITransport(app=app)
        ) as client:
            await client.get_json("/api/domains", {})

    with pytest.raises(RemoteRefused) as info:
        asyncio.run(go())
    assert "EDT_API_KEY" in str(info.value) and "--api-key" in str(info.value)


def test_schedule_once_names_the_unknown_job_first(db):
    result = run("schedule", "--once", "nosuchjob")
    assert result.exit_code == 2 and "unknown job nosuchjob" in result.output and "API key" not in result.output


def test_demo_refusal_names_the_cli_flags(db, tmp_path):
    feed = tmp_path / "20260101.txt"
    feed.write_text("gamma-rough.pl\n")
    assert run("ingest", "droplist", "--file", str(feed)).exit_code == 0
    result = run("demo")
    assert result.exit_code == 2
    assert "--force" in result.output and "--db PATH" in result.output and "force=True" not in result.output


def test_ingest_help_names_no_missing_argument():
    text = " ".join(run("ingest", "--help").output.split())
    assert "SOURCE" not in text and "(--file is the newer)" in text


def test_a_page_past_the_last_says_so(db):
    result = run("query", "tld=.fr", "page=999")
    assert result.exit_code == 0
    assert "page 999 is past the last page" in result.output and "rows 0-0" not in result.output


def test_query_help_lists_the_filters():
    from toolkit.query.params import DOMAIN_PARAMS, PENDING_PARAMS

    text = run("query", "--help").output
    for name in [*DOMAIN_PARAMS, *PENDING_PARAMS]:
        assert re.search(rf"^\s+{re.escape(name)}\s", text, flags=re.M), name


# -- 12. a second report ------------------------------------------------------------------------


def test_an_unknown_parameter_names_the_closest_ones_everywhere(db):
    from mcp import Client
    from starlette.testclient import TestClient

    from toolkit.serve.mcp_server import build_server
    from toolkit.serve.server import create_app

    cli_said = run("query", "tf_mn=20")
    assert cli_said.exit_code == 2 and "unknown parameter 'tf_mn': did you mean tf_min" in one_line(cli_said.output)
    with pytest.raises(ApiError) as info:
        Mirror(db).search_domains({"tf_mn": 20})
    assert info.value.status == 422 and list(info.value.body["errors"]) == ["tf_mn"]
    assert "did you mean tf_min" in info.value.body["message"] and "use one of" in info.value.body["message"]
    with TestClient(create_app(str(db), {"k": "enterprise"})) as client:  # an HTTP 422: a webhook's filters
        refused = client.post(
            "/api/webhooks",
            headers={"Authorization": "Bearer k"},
            json={"url": "https://hooks.example.com/in", "filters": {"tf_mn": 20}},
        )
    assert refused.status_code == 422 and list(refused.json()["errors"]) == ["tf_mn"]
    assert "did you mean tf_min" in refused.json()["message"] and refused.json()["errors"]["tf_mn"] == [
        refused.json()["message"]
    ]

    async def tool(args):
        async with Client(build_server(Mirror(db, readonly=True), "enterprise")) as client:
            return await client.call_tool("search_domains", args)

    called = asyncio.run(tool({"tf_mn": 20}))
    assert (
        called.is_error and "unknown argument 'tf_mn' for search_domains: did you mean tf_min" in called.content[0].text
    )
    assert "did you mean" not in run("query", "zzzzzz=1").output  # nothing close: the list alone


def test_an_empty_mirror_s_empty_page_says_where_rows_come_from(tmp_path):
    Mirror(tmp_path / "m.db", create=True).close()
    for args, what in ((["query"], "no listing yet"), (["query", "--pending"], "no pending-delete domain yet")):
        said = edt(*args, "--db", str(tmp_path / "m.db"))
        assert (
            said.returncode == 0
            and f"edt: nothing matches: the mirror holds {what}: `edt sync --feeds` fetches" in (one_line(said.stderr))
        )


def test_an_empty_page_says_why_when_it_can(db):
    reversed_bounds = edt("query", "tf_min=30", "tf_max=10")  # no row can match: bad input, not an empty page
    assert reversed_bounds.returncode == 2 and reversed_bounds.stdout == ""
    assert one_line(reversed_bounds.stderr) == (
        "edt: tf_min=30 is above tf_max=10, so no row can match; lower tf_min or raise the other."
    )
    no_tld = edt("query", "tld=.notatld")
    assert one_line(no_tld.stderr) == "edt: nothing matches: no listing in the mirror has TLD .notatld"
    dates = edt("query", "created_after=2026-03-01", "created_before=2026-03-01", "--format", "json")
    assert dates.returncode == 2 and dates.stdout == ""
    assert "created_after=2026-03-01 is not before created_before=2026-03-01" in one_line(dates.stderr)
    exported = edt("export", "--format", "csv", "--out", "-", "price_min=50", "price_max=10")
    assert exported.returncode == 2 and "price_min=50 is above price_max=10, so no row can match" in exported.stderr
    plain = edt("query", "tld=.fr", "tf_min=100", "tf_max=100", "score_min=100")  # empty, for no reason it can tell
    assert "nothing matches" not in plain.stderr
    with Mirror(db) as mirror:
        assert mirror.explain_empty({"tld": ".fr", "tf_min": 20}) == []
        assert mirror.explain_empty(
            {"tld": "zz", "drop_date_from": "2026-02-01", "drop_date_to": "2026-01-01"}, pending=True
        ) == [
            "drop_date_from=2026-02-01 is after drop_date_to=2026-01-01",
            "no pending-delete row in the mirror has TLD .zz",
        ]
        only_regfree = (
            mirror.connection()
            .execute(
                "SELECT tld FROM listings WHERE source = 'regfree' EXCEPT SELECT tld FROM listings WHERE source != 'regfree' "
                "ORDER BY 1 LIMIT 1"
            )
            .fetchone()[0]
        )
        assert mirror.explain_empty({"tld": only_regfree}) == [
            f"only regfree rows (the deleted-ccTLD database) have TLD {only_regfree}: add source=regfree to see them"
        ]
        assert mirror.search_domains({"tld": only_regfree, "source": "regfree"})["meta"]["total"] > 0
        mirror.connection().execute(
            "UPDATE listings SET closed_at = '2026-01-01T00:00:00Z', "
            "live_until = '2026-01-01T00:00:00Z' WHERE tld = '.it'"
        )
        mirror.connection().commit()
        assert mirror.explain_empty({"tld": ".it"}) == [
            "only closed listings in the mirror have TLD .it: add include_closed=1 to see them"
        ]
    with Mirror(db) as mirror:  # every listing ended (a feed's file not fetched for weeks)
        mirror.connection().execute("UPDATE listings SET live_until = '2026-01-01T00:00:00Z'")
        mirror.connection().commit()
        assert mirror.search_domains({})["meta"]["total"] == 0
        assert mirror.explain_empty({}) == [
            "every listing in the mirror has ended: add include_closed=1 (Include closed) to see them, or run "
            "a sync (or `edt sync --feeds`) for today's"
        ]
    from starlette.testclient import TestClient

    from toolkit.serve.server import create_app

    with TestClient(create_app(str(db), {"k": "pro"})) as client:  # the API answers as the live service: 200, empty
        answer = client.get("/api/domains?tf_min=30&tf_max=10", headers={"Authorization": "Bearer k"})
    assert answer.status_code == 200 and answer.json()["data"] == [] and answer.json()["meta"]["total"] == 0


def test_export_takes_its_format_from_the_extension(db, tmp_path):
    import pyarrow.parquet as pq

    for name, check in (
        ("fr.csv", lambda p: p.read_text().startswith("id,name,")),
        ("fr.ndjson", lambda p: json.loads(p.read_text().splitlines()[0])["tld"] == ".fr"),
        ("fr.JSONL", lambda p: json.loads(p.read_text().splitlines()[0])["tld"] == ".fr"),
        ("fr.parquet", lambda p: pq.read_table(p).num_rows > 0),
    ):
        result = run("export", "--out", str(tmp_path / name), "tld=.fr")
        assert result.exit_code == 0 and check(tmp_path / name), (name, result.output)
    unknown = run("export", "--out", str(tmp_path / "fr.txt"), "tld=.fr")
    assert unknown.exit_code == 2 and not (tmp_path / "fr.txt").exists()
    line = one_line(unknown.output)
    assert "cannot tell the format from its extension (.txt)" in line and "--format csv, jsonl or parquet" in line
    dash = run("export", "--out", "-", "tld=.fr")
    assert dash.exit_code == 2 and "--out - (standard output)" in dash.output and "--format" in dash.output
    told = run("export", "--out", str(tmp_path / "fr.txt"), "--format", "jsonl", "tld=.fr")  # --format wins
    assert told.exit_code == 0 and json.loads((tmp_path / "fr.txt").read_text().splitlines()[0])["tld"] == ".fr"


def test_writing_under_a_file_is_one_line_naming_it(db, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder\n")
    export = edt("export", "--format", "csv", "--out", str(blocker / "x.csv"), "tld=.fr")
    assert export.returncode == 2
    line = one_line(export.stderr)
    assert f"{blocker} is a file, not a folder" in line and "Errno" not in line
    backtest = run(
        "backtest", "--zones", str(tmp_path / "zones"), "--official", "bardate=x.csv", "--db", str(blocker / "kept.db")
    )  # refused before any file is read
    assert (
        backtest.exit_code == 2 and f"--db {blocker / 'kept.db'}: {blocker} is a file, not a folder" in backtest.output
    )


def test_an_alerts_file_that_cannot_be_written_is_said_and_kept_for_the_next_run(db, tmp_path):
    from toolkit.sync.alerts import AlertConfig, run_alerts
    from toolkit.sync.saved_searches import save_search

    mirror = Mirror(db)
    save_search(mirror, "french", {"tld": ".fr"})
    with mirror.connection() as conn:  # saved long ago: every .fr listing is news
        conn.execute("UPDATE saved_searches SET created_at = '2000-01-01T00:00:00Z'")
    blocker = tmp_path / "notes.txt"
    blocker.write_text("")
    report = run_alerts(mirror, AlertConfig(file=str(blocker / "alerts.jsonl")), sleep=lambda s: None)
    assert report.queued == 1 and report.filed == 0 and report.pending == 1
    assert f"alerts file {blocker / 'alerts.jsonl'}: {blocker} is a file, not a folder" in report.line()
    assert "Errno" not in report.line() and "kept" in report.line()
    later = run_alerts(mirror, AlertConfig(file=str(tmp_path / "alerts.jsonl")), sleep=lambda s: None)
    assert later.filed == 1 and later.pending == 0 and (tmp_path / "alerts.jsonl").read_text().count("\n") > 0


def test_the_csv_carries_historical_traffic_when_asked_and_filled(db, tmp_path, monkeypatch):
    import csv as csv_module
    import io

    import pyarrow.parquet as pq

    # One moment for every count below: a demo auction ending between two of them was off by one.
    monkeypatch.setenv("EDT_NOW", datetime.now(timezone.utc).isoformat())
    with Mirror(db) as mirror:  # the demo holds the object for the listings with traffic data, as a sync does
        held = sum(1 for r in mirror.export_rows({"include_historical_traffic": "1"}) if r["historical_traffic"])
    assert held > 0
    plain = list(csv_module.DictReader(io.StringIO(run("query", "per_page=100", "--format", "csv").output)))
    assert plain and "historical_traffic" not in plain[0]  # not asked: no always-empty column
    asked = list(
        csv_module.DictReader(
            io.StringIO(
                run(
                    "query",
                    "per_page=100",
                    "sort=-historical_traffic_etv",
                    "include_historical_traffic=1",
                    "--format",
                    "csv",
                ).output
            )
        )
    )
    assert any(json.loads(r["historical_traffic"] or "null") for r in asked)
    assert run("export", "--out", str(tmp_path / "t.csv"), "include_historical_traffic=1").exit_code == 0
    exported = list(csv_module.DictReader((tmp_path / "t.csv").open()))
    assert sum(1 for r in exported if r["historical_traffic"]) == held
    assert run("export", "--out", str(tmp_path / "t.parquet")).exit_code == 0
    assert "historical_traffic" not in pq.read_table(tmp_path / "t.parquet").column_names
    assert run("export", "--out", str(tmp_path / "h.parquet"), "include_historical_traffic=1").exit_code == 0
    table = pq.read_table(tmp_path / "h.parquet")
    assert table.num_rows - table.column("historical_traffic").null_count == held


def test_a_401_says_to_send_the_key_as_a_bearer_and_never_echoes_it(db):
    from starlette.testclient import TestClient

    from toolkit.serve.mcp_server import MCP_PATH
    from toolkit.serve.server import create_app

    secret = "s3cr3t-key-value"
    with TestClient(create_app(str(db), {secret: "pro"})) as client:
        for path in ("/api/domains", MCP_PATH):
            send = client.post if path == MCP_PATH else client.get
            said = {}
            for how, kwargs in {
                "none": {},
                "api_key": {"params": {"api_key": secret}},
                "apikey": {"params": {"apikey": secret}},
                "key": {"params": {"key": secret}},
                "header": {"headers": {"X-API-Key": secret}},
                "wrong": {"headers": {"Authorization": "Bearer not-it"}},
            }.items():
                response = send(path, **kwargs)
                body = response.json()
                assert response.status_code == 401 and list(body) == ["message"], (path, how)
                assert body["message"].startswith("Unauthenticated.") and "Authorization: Bearer KEY" in body["message"]
                assert secret not in body["message"] and "not-it" not in body["message"]
                said[how] = body["message"]
            assert said["none"] == "Unauthenticated. Send your API key in the header Authorization: Bearer KEY."
            for name in ("api_key", "apikey", "key"):
                assert f"A key in the {name} query parameter is not read" in said[name], path
            assert "A key in the X-API-Key header is not read" in said["header"]
            assert "not one this server knows" in said["wrong"]
        assert client.get("/api/domains?per_page=1", headers={"Authorization": f"Bearer {secret}"}).status_code == 200


def test_spam_show_counts_listings_and_regfree_rows_apart(db):
    with Mirror(db) as mirror:
        conn = mirror.connection()
        (listings, flagged), (regfree, regfree_flagged) = (
            conn.execute(f"SELECT count(*), sum(spam_count > 0) FROM listings WHERE source {op} 'regfree'").fetchone()
            for op in ("!=", "=")
        )
    assert regfree > 0
    shown = run("spam", "show").output
    assert (
        f"mirror: {flagged:,} of {listings:,} listings flagged, {regfree_flagged:,} of {regfree:,} regfree rows"
        in shown
    )


def test_a_reader_started_during_a_bulk_load_waits_for_it_then_answers(db):
    """`edt demo` on a mirror nobody has open loads in rollback-journal mode; a reader started
    meanwhile used to stop at once (`PRAGMA journal_mode=WAL` is refused without waiting)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from toolkit.store.schema import connect\nfrom toolkit.store.transaction import one_transaction\n"
            "conn = connect(sys.argv[1])\nwith one_transaction(conn, bulk=True) as load:\n"
            "    load.execute('UPDATE listings SET price = price WHERE id = (SELECT min(id) FROM listings)')\n"
            "    print(load.execute('PRAGMA journal_mode').fetchone()[0], flush=True)\n    time.sleep(2.5)\n",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        assert holder.stdout.readline().strip() == "delete"  # the load holds the file in rollback-journal mode
        started = time.monotonic()
        result = edt("query", "tld=.fr", "--format", "json")
        waited = time.monotonic() - started
    finally:
        holder.wait(30)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["meta"]["total"] > 0 and waited > 1.5


def test_paths_in_the_config_file_expand_the_home_folder(tmp_path, monkeypatch):
    from toolkit.config import load_settings
    from toolkit.signals.fx import _configured_path
    from toolkit.sync.alerts import alert_config

    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "config.toml"
    config.write_text('db = "~/m.db"\necb_file = "~/ecb.csv"\n[alerts]\nfile = "~/edt-alerts.jsonl"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EDT_CONFIG", str(config))
    for name in ("EDT_ALERT_FILE", "EDT_DB", "EDT_ECB_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert alert_config().file == str(home / "edt-alerts.jsonl")
    assert load_settings().db == str(home / "m.db")
    assert _configured_path() == str(home / "ecb.csv")


def test_saving_a_search_on_a_read_only_mirror_says_so(db, tmp_path, monkeypatch):
    """The app opens a mirror in a read-only place read-only (`access.read_only_place`, which
    this test answers for the file: an in-process app keeps it open, so a read-only mount of
    it could not be taken down); a save is then refused by SQLite and said in one message."""
    from streamlit.testing.v1 import AppTest

    import toolkit.store.access as access

    copy = tmp_path / "shared" / "mirror.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    monkeypatch.setenv("EDT_DB", str(copy))
    real = access.read_only_place
    monkeypatch.setattr(
        access, "read_only_place", lambda path: "a read-only file" if Path(path) == copy else real(path)
    )
    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[1] / "toolkit" / "ui" / "script" / "page_script.py"), default_timeout=60
    )
    at.query_params["view"] = "watchlist"
    at.run()
    at.text_input(key="search_name").input("french")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert errors == [
        f"The mirror {copy} is a read-only file: the watchlist and the shortlist cannot be saved in it. "
        "Copy it to a writable place and start the app on the copy (edt app --db PATH); reading works "
        "as it is."
    ]
    assert sqlite3.connect(copy).execute("SELECT count(*) FROM saved_searches").fetchone()[0] == 0


def test_a_full_disk_is_one_line_naming_the_mirror_and_keeps_it_whole(db):
    import resource

    from conftest import mirror_digest

    before = mirror_digest(db)

    def small_disk() -> None:  # files of this process cannot grow past 256 KiB: its writes fail as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))

    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [*EDT, "demo", "--force", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
        preexec_fn=small_disk,
    )
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert line.startswith(f"edt: {db}: ") and "Free some space" in line and "the write under way was not kept" in line
    assert mirror_digest(db) == before


def test_nothing_a_user_reads_from_edt_points_outside_the_repository(db, tmp_path):
    from toolkit.serve.ratelimit import KeyStore
    from toolkit.serve.server import startup_lines

    said = [
        run("status", "--help").output,
        run("schedule", "--help").output,
        run("schedule", "--crontab").output,
        run("sync", "--help").output,
        "\n".join(startup_lines(str(db), "127.0.0.1", 8000, KeyStore({"k": "enterprise"}), None)),
    ]
    for text in said:
        assert not re.search(r"contract|\.\./shared|ARCHITECTURE|CONTRACT", text), text
    assert "docs/reference/freshness.md" in said[0] and "docs/reference/freshness.md" in said[2]


def test_settings_a_sync_reads_are_checked_by_name_before_anything_is_written(tmp_path):
    db = tmp_path / "m.db"
    config = tmp_path / "config.toml"
    url = ["--base-url", "http://127.0.0.1:9"]  # nothing answers there: a check that passes would fail later
    cases = [
        ("api_key = 12345\n", url, {}, f"{config}: api_key must be text in quotes"),
        ('apikey = "k"\n', url, {}, f"{config}: unknown setting 'apikey': did you mean api_key?"),
        ('base_url = "ftp://x"\n', [], {"EDT_API_KEY": "k"}, f"{config}: base_url: 'ftp://x' is not an http://"),
        ("", [], {"EDT_API_KEY": "k", "EDT_BASE_URL": "127.0.0.1:9"}, "EDT_BASE_URL: '127.0.0.1:9' is not an http://"),
        ("", url, {"EDT_API_KEY": "k", "EDT_PLAN": "gold"}, "EDT_PLAN: unknown plan 'gold'"),
        ("", url, {"EDT_API_KEY": "k", "EDT_BUDGET_FILE": str(tmp_path)}, "EDT_BUDGET_FILE: "),
    ]
    for text, args, env, said in cases:
        config.write_text(text)
        result = edt("sync", "--db", str(db), *args, env={"EDT_CONFIG": str(config), **env})
        problems = [line for line in result.stderr.splitlines() if line.startswith("edt:")]
        assert result.returncode == 2 and len(problems) == 1 and said in problems[0], (text, env, result.stderr)
        assert not db.exists() or not sqlite3.connect(db).execute("SELECT count(*) FROM sync_runs").fetchone()[0]
