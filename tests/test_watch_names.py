"""Watched names (`edt watch name`, the `names` job): a local RDAP server, on a real socket,
plays each name's registry answers through a scripted lifecycle over simulated days.

The answers are the real RDAP responses of tests/fixtures/real/rdap/ (Verisign .com, CZ.NIC
.cz). No real response shows a name expiring, in redemption or pending delete (SOURCES.md
says where we looked), so for those stages a real response is played with only its
`status` and `events` changed; each such day says so below. The .nu name is played with
CZ.NIC's response (RDAP's domain object is the same across registries; .nu's registry
publishes no RDAP answer we could copy), its status and events changed the same way."""

from __future__ import annotations

import copy
import http.server
import json
import threading
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import QuietHandler, listing_records, serve_in_background
from toolkit import Mirror
from toolkit.cli import cli
from toolkit.enrich.name_checks import check_names
from toolkit.ingest.lifecycle import predict_drop_window
from toolkit.sync.alerts import AlertConfig, sign
from toolkit.sync.watched_names import name_stages, watch_names, watched_names
from toolkit.store.writer import save_listings

RDAP = Path(__file__).parent / "fixtures" / "real" / "rdap"
MARQUETRY = json.loads((RDAP / "verisign_com_themarquetry.com_2022-01.json").read_text())  # expires 2022-03-16
EXAMPLE = json.loads((RDAP / "verisign_com_example.com_2021-06.json").read_text())  # registered 1995-08-14
CZ = json.loads((RDAP / "cznic_cz_example.cz.json").read_text())

# The simulated days: the moment of each day's run (UTC).
DAYS = [
    datetime(2022, 3, 10, 6, 30),
    datetime(2022, 3, 20, 6, 30),
    datetime(2022, 3, 21, 6, 30),
    datetime(2022, 4, 30, 6, 30),
    datetime(2022, 5, 1, 6, 30),
    datetime(2022, 6, 6, 6, 30),
    datetime(2022, 6, 12, 6, 30),
]


def edited(real: dict, status: list[str] | None = None, **events: str) -> dict:
    """A real response with only its `status` and event dates changed (and an event added
    when it had none of that action)."""
    answer = copy.deepcopy(real)
    if status is not None:
        answer["status"] = status
    for action, when in events.items():
        action = action.replace("_", " ")
        found = [e for e in answer.setdefault("events", []) if e.get("eventAction") == action]
        if found:
            found[0]["eventDate"] = when
        else:
            answer["events"].append({"eventAction": action, "eventDate": when})
    return answer


NOT_FOUND = (404, {"errorCode": 404, "title": "Not Found"}, {})
THROTTLED = (429, {"errorCode": 429, "title": "Too Many Requests"}, {"Retry-After": "7"})
# edited: caught the day it dropped, before any run saw it available: a new registration
REREGISTERED = (
    200,
    edited(
        EXAMPLE, ["client transfer prohibited"], registration="2022-06-05T17:02:11Z", expiration="2023-06-05T17:02:11Z"
    ),
    {},
)
# Each name's answer on each day (index into DAYS); a list plays its answers in turn that day.
SCRIPT = {
    "themarquetry.com": [
        (200, MARQUETRY, {}),  # the real answer: registered, expires 2022-03-16
        (200, edited(MARQUETRY, ["auto renew period", "client transfer prohibited"]), {}),  # edited: expired, in grace
        (200, edited(MARQUETRY, ["auto renew period", "client transfer prohibited"]), {}),  # the same again
        (200, edited(MARQUETRY, ["redemption period", "pending delete"]), {}),  # edited: deleted by the registrar
        [THROTTLED, (200, edited(MARQUETRY, ["redemption period", "pending delete"]), {})],  # throttled, then the same
        (200, edited(MARQUETRY, ["pending delete"]), {}),  # edited: redemption over
        NOT_FOUND,  # purged: anyone may register it
    ],
    "example.com": [
        (200, EXAMPLE, {}),  # the real answer (expires 2021-08-13: played with its expiry moved on a year)
        (200, EXAMPLE, {}),
        (200, EXAMPLE, {}),
        (200, edited(EXAMPLE, ["redemption period", "pending delete"]), {}),  # edited
        (200, edited(EXAMPLE, ["redemption period", "pending delete"]), {}),
        REREGISTERED,
        REREGISTERED,
    ],
    "kettleharbor.nu": [
        (200, edited(CZ, ["active"], expiration="2022-03-15T00:00:00Z"), {}),  # CZ.NIC's answer, edited: live
        (200, edited(CZ, ["active"], expiration="2022-03-15T00:00:00Z"), {}),  # expiry passed: still in the zone
        (200, edited(CZ, ["server hold"], expiration="2022-03-15T00:00:00Z"), {}),  # edited: deactivated
        (200, edited(CZ, ["server hold"], expiration="2022-03-15T00:00:00Z"), {}),
        (200, edited(CZ, ["server hold"], expiration="2022-03-15T00:00:00Z"), {}),
        (200, edited(CZ, ["server hold"], expiration="2022-03-15T00:00:00Z"), {}),
        (200, edited(CZ, ["server hold"], expiration="2022-03-15T00:00:00Z"), {}),
    ],
}
SCRIPT["example.com"][0] = (200, edited(EXAMPLE, expiration="2022-08-13T04:00:00Z"), {})
for day in (1, 2, 3, 4):
    status = None if day < 3 else ["redemption period", "pending delete"]
    SCRIPT["example.com"][day] = (200, edited(EXAMPLE, status, expiration="2022-08-13T04:00:00Z"), {})


class Registry:
    """RDAP over HTTP on 127.0.0.1: the bootstrap names it for .com and .nu (not for .de),
    each domain answers as SCRIPT says for the current day; webhooks are received too."""

    def __init__(self) -> None:
        self.day = 0
        self.requests: list[str] = []
        self.hooks: list[tuple[dict, dict]] = []
        self.played: dict[str, int] = {}
        registry = self

        class Handler(QuietHandler):
            def _send(self, status: int, body: dict, headers: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/rdap+json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                registry.requests.append(self.path)
                if self.path == "/bootstrap.json":
                    base = f"http://127.0.0.1:{registry.port}/rdap/"
                    return self._send(
                        200,
                        {
                            "version": "1.0",
                            "publication": "2022-03-01T00:00:00Z",
                            "services": [[["com"], [base]], [["nu"], [base]]],
                        },
                        {},
                    )
                name = self.path.rsplit("/", 1)[-1]
                answer = SCRIPT.get(name, [NOT_FOUND] * len(DAYS))[registry.day]
                if isinstance(answer, list):
                    key = f"{name}:{registry.day}"
                    turn = registry.played.get(key, 0)
                    registry.played[key] = turn + 1
                    answer = answer[min(turn, len(answer) - 1)]
                self._send(*answer)

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                registry.hooks.append(
                    (
                        json.loads(body),
                        {
                            "signature": self.headers.get("X-EDT-Signature-256"),
                            "event": self.headers.get("X-EDT-Event"),
                            "raw": body,
                        },
                    )
                )
                self.send_response(204)
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = serve_in_background(self.server)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def registry():
    server = Registry()
    yield server
    server.server.shutdown()


def test_each_stage_is_recorded_once_and_alerted_once_in_order(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    now = [DAYS[0].replace(tzinfo=timezone.utc)]
    mirror = Mirror(tmp_path / "m.db", clock=lambda: now[0], create=True)
    watch_names(mirror, ["themarquetry.com", "example.com", "kettleharbor.nu", "kettleharbor.de"], note="bid")
    alerts = AlertConfig(file=str(tmp_path / "alerts.jsonl"), webhook_url=registry.url + "/hook", webhook_secret="s3")
    waits: list[float] = []
    reports = []
    for day, moment in enumerate(DAYS):
        registry.day = day
        now[0] = moment.replace(tzinfo=timezone.utc)
        reports.append(check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=waits.append))

    stages = {
        name: [(s["observed_at"][:10], s["stage"]) for s in name_stages(mirror, name)]
        for name in ("themarquetry.com", "example.com", "kettleharbor.nu")
    }
    assert stages["themarquetry.com"] == [
        ("2022-03-10", "registered"),
        ("2022-03-20", "expired"),
        ("2022-04-30", "redemption"),
        ("2022-06-06", "pending_delete"),
        ("2022-06-12", "available"),
    ]
    # re-registered before any run saw it available: never called "available"
    assert stages["example.com"] == [
        ("2022-03-10", "registered"),
        ("2022-04-30", "redemption"),
        ("2022-06-06", "re_registered"),
    ]
    assert stages["kettleharbor.nu"] == [("2022-03-10", "registered"), ("2022-03-20", "expired")]

    # the 429 was waited out as its Retry-After said, and the day's answer then read
    assert 7.0 in waits and registry.played["themarquetry.com:4"] == 2
    assert not any("themarquetry.com" in e for r in reports for e in r.errors)
    # a TLD without RDAP: said, never guessed, watched through the mirror only
    rows = {r["name"]: r for r in watched_names(mirror)}
    assert rows["kettleharbor.de"]["stage"] is None and rows["kettleharbor.de"]["rdap"] == "no RDAP service for .de"
    assert any("kettleharbor.de: no RDAP service for .de" in line for line in reports[0].lines())

    # alerts: each change once, in order, to the file and to the signed webhook; a first
    # observation of a live name is not news
    told = [json.loads(line) for line in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    marquetry = [(m["first_seen_at"][:10], m["type"]) for m in told if m["name"] == "themarquetry.com"]
    assert marquetry == stages["themarquetry.com"][1:]
    assert [(m["first_seen_at"][:10], m["type"]) for m in told if m["name"] == "example.com"] == stages["example.com"][
        1:
    ]
    hooks = [body for body, _ in registry.hooks]
    assert [(h["name"], h["stage"]) for h in hooks] == [(m["name"], m["type"]) for m in told]
    assert all(
        meta["signature"] == sign("s3", meta["raw"]) and meta["event"] == "name_stage" for _, meta in registry.hooks
    )
    assert hooks[-1]["said"].startswith("pending delete -> available (not registered)")


def test_the_predicted_window_of_a_watched_nu_name_is_the_lifecycle_tables(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    now = [DAYS[0].replace(tzinfo=timezone.utc)]
    mirror = Mirror(tmp_path / "m.db", clock=lambda: now[0], create=True)
    watch_names(mirror, ["kettleharbor.nu"])
    seen = []
    for day in range(4):
        registry.day = day
        now[0] = DAYS[day].replace(tzinfo=timezone.utc)
        check_names(mirror, predict=predict_drop_window, alerts=AlertConfig(), sleep=lambda s: None)
        seen.append({**watched_names(mirror)[0]})
    registered, expired, held, later = seen
    assert (registered["stage"], registered["next_stage"], registered["expected_to"]) == (
        "registered",
        "expired",
        "2022-03-15",
    )
    assert expired["stage"] == "expired" and expired["pending"] is None  # in the zone still: no lifecycle status yet
    # deactivated (serverHold) first seen on day 2, still in the zone on day 1: the window between
    window, reason = predict_drop_window("nu", "serverHold", date(2022, 3, 21), date(2022, 3, 20))
    assert (held["expected_from"], held["expected_to"]) == (window.start.isoformat(), window.end.isoformat())
    assert held["expected_reason"] == reason and held["next_stage"] == "available"
    assert (later["expected_from"], later["expected_to"]) == (held["expected_from"], held["expected_to"])  # kept


def test_a_watched_name_listed_anywhere_is_said_and_alerted_once(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    now = [DAYS[0].replace(tzinfo=timezone.utc)]
    mirror = Mirror(tmp_path / "m.db", clock=lambda: now[0], create=True)
    record = {
        **listing_records(1)[0],
        "name": "themarquetry.com",
        "tld": ".com",
        "source": "dynadot",
        "type": "auction",
        "auction_end_date": "2022-03-25T18:00:00Z",
    }
    watch_names(mirror, ["themarquetry.com"])
    alerts = AlertConfig(file=str(tmp_path / "alerts.jsonl"))
    check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None)
    save_listings(mirror.connection(), [record], origin="sync", observed_at="2022-03-10T07:00:00Z")
    first = check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None)
    again = check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None)
    assert (first.listed, again.listed) == (1, 0)
    told = [json.loads(line) for line in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert [(m["name"], m["source"], m["type"], m["id"]) for m in told] == [
        ("themarquetry.com", "dynadot", "auction", record["id"])
    ]
    end = datetime.fromisoformat(record["auction_end_date"].replace("Z", "+00:00"))
    said = f"Dynadot auction, ends {end.day} {end:%b %Y %H:%M} UTC"  # the platform by name, the end in words
    assert watched_names(mirror)[0]["listed"][0]["where"] == said


def test_the_commands_watch_list_check_and_refuse_bad_names(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    monkeypatch.setenv("EDT_NOW", "2022-04-30T06:30:00Z")
    db = str(tmp_path / "m.db")
    Mirror(db, create=True).close()
    names_file = tmp_path / "names.txt"
    names_file.write_text("# to watch\nthemarquetry.com\n\nkettleharbor.nu  # the .nu one\n")
    runner = CliRunner()
    added = runner.invoke(cli, ["watch", "name", "--db", db, "--file", str(names_file), "--note", "shop"])
    assert added.exit_code == 0 and "Watching 2 names: themarquetry.com, kettleharbor.nu" in added.output
    for bad, said in (
        ("www.example.com", "is a subdomain; watch example.com"),
        ("foo", "is not a domain name"),
        ("example.notatld", ".notatld is not a public suffix"),
    ):
        refused = runner.invoke(cli, ["watch", "name", "--db", db, "themarquetry.com", bad])
        assert refused.exit_code == 2 and said in refused.output and "nothing was added" in refused.output
    registry.day = 3
    checked = runner.invoke(cli, ["watch", "names", "--db", db, "--check"])
    assert checked.exit_code == 0, checked.output
    assert (
        "themarquetry.com: in redemption since 2022-04-30; next: available (not registered) 2022-04-30 - 2022-06-04"
        in checked.output
    )
    assert "(shop)" in checked.output
    history = runner.invoke(cli, ["watch", "names", "--db", db, "--history", "themarquetry.com"])
    assert history.exit_code == 0 and history.output.startswith("2022-04-30T06:30:00Z  in redemption")
    gone = runner.invoke(cli, ["watch", "name", "--db", db, "--rm", "kettleharbor.nu"])
    assert gone.exit_code == 0 and "No longer watched: kettleharbor.nu" in gone.output
    assert runner.invoke(cli, ["watch", "name", "--db", db, "--rm", "kettleharbor.nu"]).exit_code == 2


@pytest.mark.parametrize(
    ("fixture", "edit", "checked_at", "previous", "expected"),
    [
        (
            "norid_no_norway.no_2021.json",
            None,
            "2021-02-01T00:00:00Z",
            None,
            "registered",
        ),  # no status, no expiry at all
        ("cznic_cz_example.cz.json", None, "2019-08-01T00:00:00Z", None, "registered"),  # "active", expiry ahead
        ("cznic_cz_example.cz.json", None, "2019-09-15T00:00:00Z", None, "expired"),  # "active", expiry passed
        ("verisign_com_google.com_2021-06.json", None, "2021-06-09T10:00:00Z", None, "registered"),  # six *Prohibited
        (
            "verisign_com_themarquetry.com_2022-01.json",
            ["redemption period", "pending delete"],
            "2022-04-30T00:00:00Z",
            None,
            "redemption",
        ),  # gTLD redemption shows pendingDelete beside it
        (
            "verisign_com_themarquetry.com_2022-01.json",
            ["client transfer prohibited"],
            "2022-01-20T00:00:00Z",
            {"stage": "redemption", "registered_at": "2021-03-16T17:07:37Z"},
            "renewed",
        ),  # restored by its holder
        ("cznic_cz_example.cz.json", ["quarantine"], "2020-01-01T00:00:00Z", None, "pending_delete"),
    ],
)
def test_each_registrys_answer_reads_as_a_stage(fixture, edit, checked_at, previous, expected):
    from toolkit.enrich.rdap import parse_rdap_domain
    from toolkit.sync.watched_names import Observation, stage_of

    data = json.loads((RDAP / fixture).read_text())
    answer = parse_rdap_domain(edited(data, edit) if edit else data)
    seen = Observation(answer.name, checked_at, False, answer.statuses, answer.registered_at, answer.expires_at)
    assert stage_of(seen, previous) == expected


def test_the_names_job_is_scheduled_daily_without_a_key_and_runs_once_as_cron_calls_it(tmp_path, registry, monkeypatch):
    from toolkit.config import load_settings
    from toolkit.sync.schedule import build_scheduler, names_schedule

    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    monkeypatch.setenv("EDT_NOW", "2022-04-30T06:30:00Z")
    monkeypatch.delenv("EDT_API_KEY", raising=False)
    config = tmp_path / "config.toml"
    config.write_text('[schedule]\nnames = "15 5 * * *"\n')
    monkeypatch.setenv("EDT_CONFIG", str(config))
    db = str(tmp_path / "m.db")
    watch_names(Mirror(db, create=True), ["themarquetry.com"])
    runner = CliRunner()
    shown = runner.invoke(cli, ["schedule", "--db", db, "--next"])
    assert shown.exit_code == 0 and any(
        line.split()[:3] == ["names", "names", "15"] for line in shown.output.splitlines()
    )
    registry.day = 3
    once = runner.invoke(cli, ["schedule", "--db", db, "--once", "names"])
    assert once.exit_code == 0, once.output
    assert "names: 1 checked (1 asked of their registries), 1 changed stage" in once.output
    assert [s["stage"] for s in name_stages(Mirror(db), "themarquetry.com")] == ["redemption"]
    said: list[str] = []
    scheduler = build_scheduler(
        load_settings(db=db),
        names_schedule(),
        stop=threading.Event(),
        say=said.append,
        names_runner=lambda *a, **k: None,
    )
    assert [job.id for job in scheduler.get_jobs()] == ["names"] and not said  # no key needed, nothing skipped


def test_a_registry_that_refuses_leaves_the_stage_as_it_was_and_says_so(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    monkeypatch.setitem(SCRIPT, "refusing.com", [(200, MARQUETRY, {})] + [(403, {"errorCode": 403}, {})] * 6)
    now = [DAYS[0].replace(tzinfo=timezone.utc)]
    mirror = Mirror(tmp_path / "m.db", clock=lambda: now[0], create=True)
    watch_names(mirror, ["refusing.com"])
    check_names(mirror, predict=predict_drop_window, alerts=AlertConfig(), sleep=lambda s: None)
    registry.day, now[0] = 3, DAYS[3].replace(tzinfo=timezone.utc)
    report = check_names(mirror, predict=predict_drop_window, alerts=AlertConfig(), sleep=lambda s: None)
    row = watched_names(mirror)[0]
    assert row["stage"] == "registered" and row["checked_at"] == "2022-03-10T06:30:00Z"  # not guessed, not moved on
    assert row["last_error"] and "403" in row["last_error"]
    assert any(e.startswith("refusing.com: ") and "403" in e and "left as it was" in e for e in report.errors)
    assert [s["stage"] for s in name_stages(mirror, "refusing.com")] == ["registered"]


def test_offline_a_check_gives_up_within_its_timeout_says_so_and_exits_1(tmp_path, monkeypatch):
    import socket
    import time

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: every request is refused, as on a machine offline
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", f"http://127.0.0.1:{port}/bootstrap.json")
    db = str(tmp_path / "m.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["demo", "--db", db]).exit_code == 0
    assert runner.invoke(cli, ["watch", "name", "--db", db, "example.com"]).exit_code == 0
    started = time.monotonic()
    checked = runner.invoke(cli, ["watch", "names", "--db", db, "--check", "--timeout", "1"])
    assert time.monotonic() - started < 15
    assert checked.exit_code == 1, checked.output
    assert "edt: no registry could be asked (the IANA RDAP bootstrap is unavailable" in checked.output
    assert "(--timeout or EDT_TIMEOUT" in checked.output  # the retry lines name a knob this command has
    assert "example.com: not checked yet" in runner.invoke(cli, ["watch", "names", "--db", db]).output
    refused = runner.invoke(cli, ["watch", "names", "--db", db, "--timeout", "1"])
    assert refused.exit_code == 2 and "--timeout: only with --check" in refused.output


def test_names_in_tlds_without_rdap_alone_are_watched_through_the_mirror_not_a_crash(tmp_path, registry, monkeypatch):
    """The bootstrap lists no RDAP service for .de: a check says so per name, exit 0."""
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    db = str(tmp_path / "m.db")
    Mirror(db, create=True).close()
    runner = CliRunner()
    assert runner.invoke(cli, ["watch", "name", "--db", db, "beispiel.de", "kaffee.de"]).exit_code == 0
    checked = runner.invoke(cli, ["watch", "names", "--db", db, "--check"])
    assert checked.exit_code == 0, checked.output
    assert "kaffee.de: no RDAP service for .de; watched through the mirror's listings" in checked.output


def test_a_names_file_saved_with_a_byte_order_mark_and_crlf_reads_as_written(tmp_path):
    db = str(tmp_path / "m.db")
    Mirror(db, create=True).close()
    names = tmp_path / "names.txt"
    names.write_bytes("\ufeffbomname.com\r\nsecond.com\r\n".encode())
    runner = CliRunner()
    assert runner.invoke(cli, ["watch", "name", "--db", db, "--file", str(names)]).exit_code == 0
    gone = runner.invoke(cli, ["watch", "name", "--db", db, "--rm", "bomname.com"])
    assert gone.exit_code == 0 and "No longer watched: bomname.com" in gone.output


def test_an_idn_watched_in_either_spelling_is_one_name_and_matches_its_listing(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    mirror = Mirror(tmp_path / "m.db", clock=lambda: DAYS[0].replace(tzinfo=timezone.utc), create=True)
    assert watch_names(mirror, ["Bücher.com", "xn--bcher-kva.com"]) == ["xn--bcher-kva.com"]
    record = {**listing_records(1)[0], "name": "xn--bcher-kva.com", "tld": ".com", "source": "dynadot"}
    save_listings(mirror.connection(), [record], origin="sync", observed_at="2022-03-10T07:00:00Z")
    alerts = AlertConfig(file=str(tmp_path / "alerts.jsonl"))
    assert check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None).listed == 1
    [watched] = watched_names(mirror)
    assert watched["name"] == "xn--bcher-kva.com" and watched["listed"]


def test_a_name_watched_while_listed_says_where_at_once_and_alerts_only_later_places(tmp_path):
    mirror = Mirror(tmp_path / "m.db", clock=lambda: DAYS[0].replace(tzinfo=timezone.utc), create=True)
    record = {**listing_records(1)[0], "name": "solarpanels.net", "tld": ".net", "source": "dynadot"}
    save_listings(mirror.connection(), [record], origin="sync", observed_at="2022-03-10T07:00:00Z")
    watch_names(mirror, ["solarpanels.net"])
    [watched] = watched_names(mirror)
    assert [e["key"] for e in watched["listed"]] == [f"listing:{record['id']}"]  # before any check
    alerts = AlertConfig(file=str(tmp_path / "alerts.jsonl"))
    assert check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None).listed == 0


def test_the_alerts_line_counts_watched_names_newly_listed(tmp_path, registry, monkeypatch):
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
    mirror = Mirror(tmp_path / "m.db", clock=lambda: DAYS[0].replace(tzinfo=timezone.utc), create=True)
    watch_names(mirror, ["themarquetry.com"])
    record = {**listing_records(1)[0], "name": "themarquetry.com", "tld": ".com", "source": "dynadot"}
    save_listings(mirror.connection(), [record], origin="sync", observed_at="2022-03-10T07:00:00Z")
    alerts = AlertConfig(file=str(tmp_path / "alerts.jsonl"))
    report = check_names(mirror, predict=predict_drop_window, alerts=alerts, sleep=lambda s: None)
    assert report.alerts.startswith("alerts: 1 new (1 listings), 1 logged, 1 filed"), report.alerts


def test_the_expected_release_never_starts_before_the_status_was_first_seen():
    import types
    from datetime import date

    from toolkit.sync import watched_names as watched

    seen = watched.Observation(name="lifecycle.com", checked_at="2027-01-22T07:00:00Z", statuses=["pendingDelete"])

    def early(tld, status, first, before):  # a window read from an earlier redemption sighting
        return types.SimpleNamespace(start=date(2026, 12, 25), end=date(2027, 1, 27)), "the table"

    _, start, end, _ = watched._expectation(
        "lifecycle.com", "pending_delete", seen, "pendingDelete", "2027-01-22T07:00:00Z", "2026-12-20T07:00:00Z", early
    )
    assert (start, end) == ("2027-01-22", "2027-01-27")
