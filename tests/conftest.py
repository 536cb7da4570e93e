"""Shared fixtures: a fixed clock, a synthetic mirror with every edge the contract names,
and a plain-Python oracle of the contract's filter semantics."""

from __future__ import annotations

import http.server
import json
import os
import random
import socketserver
import sys
import threading
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolkit import ApiError, Mirror
from toolkit.query.aggregates import ChartCounts
from toolkit.sources import PLATFORM_SLUGS, source_by_slug
from toolkit.store.results import save_live, save_values
from toolkit.store.writer import close_listings, save_listings, save_pending

if TYPE_CHECKING:
    import pandas as pd

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
# Real files the tests read, kept in the repository (each folder's SOURCES.md: where from, licence).
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL = FIXTURES / "real"
REFERENCE = FIXTURES / "reference" / "catchdoms"


# -- a repository that stands alone, and skips only for a missing browser -----------------------
# The tests read real files from tests/fixtures only. A folder beside the checkout (`shared`) once
# held them; any file opened under it during the run fails the run (an audit hook sees every open
# of this process; tests/test_fixtures.py greps the sources, for the processes tests start). And a
# test may skip for one reason only: the real-browser check (tests/test_appcheck.py) without
# Debian's chromium and chromedriver, or selenium. Any other skip fails the run, named.

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ROOT.parent / "shared"
BROWSER_SKIP_REASON = (
    "needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver) and selenium"
)
_outside_opened: list[str] = []
_unexpected_skips: list[str] = []


def _watch_opens(event: str, args: tuple) -> None:
    if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path == str(OUTSIDE) or path.startswith(str(OUTSIDE) + os.sep):
            _outside_opened.append(path)


sys.addaudithook(_watch_opens)


def _note_skip(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if BROWSER_SKIP_REASON not in reason:
            _unexpected_skips.append(f"{report.nodeid or report.fspath}: {reason}")


@pytest.fixture(autouse=True)
def _stands_alone():
    """A test that opened a file under the folder beside the checkout fails, named (each test
    runs in a worker process of its own with pytest-xdist: the session's check alone would not see it)."""
    before = len(_outside_opened)
    yield
    if len(_outside_opened) > before:
        pytest.fail(f"opened outside the repository, under {OUTSIDE}: {sorted(set(_outside_opened[before:]))}")


def pytest_collectreport(report) -> None:
    _note_skip(report)


def pytest_runtest_logreport(report) -> None:
    _note_skip(report)


def pytest_sessionfinish(session, exitstatus) -> None:
    passed = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    if passed and (_unexpected_skips or _outside_opened):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if _unexpected_skips:
        terminalreporter.section("skipped, and only the browser check may skip", red=True)
        for line in _unexpected_skips:
            terminalreporter.line(line, red=True)
        terminalreporter.line(
            f"{len(_unexpected_skips)} skipped for another reason than a missing browser: "
            "the run fails. Install the [dev] extras (pip install -e '.[dev]'); the data the "
            "tests read is in tests/fixtures.",
            red=True,
        )
    if _outside_opened:
        terminalreporter.section(f"files opened outside the repository, under {OUTSIDE}", red=True)
        for path in sorted(set(_outside_opened)):
            terminalreporter.line(path, red=True)
        terminalreporter.line("the tests read their files from tests/fixtures only: the run fails.", red=True)


def default_sigint() -> None:
    """For `subprocess.Popen(preexec_fn=...)`: Ctrl-C as a terminal gives it. A pytest-xdist
    worker ignores SIGINT, and a child would inherit that (Python then never raises
    KeyboardInterrupt in it, as in a `nohup` job)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def refusal(call, *args, **kwargs) -> ApiError:
    """The ApiError `call(*args, **kwargs)` raises; the test fails if it raises none."""
    with pytest.raises(ApiError) as raised:
        call(*args, **kwargs)
    return raised.value


def pending_row(row_id: int, domain: str, week_end: str, drops: str, status: str = "serverHold", **extra) -> dict:
    """A pending-delete record as the oi-diff feed gives it, to `save_pending`."""
    record = {"id": row_id, "domain": domain, "source": "oi-diff", "week_end": week_end, "whois_status": status}
    return {**record, "estimated_drop_date": drops, **extra}


def chart_history() -> "pd.DataFrame":
    """A listing's history as the domain page's charts take it: three sightings, bids rising."""
    import pandas as pd

    return pd.DataFrame(
        {
            "observed_at": ["2026-11-01T07:00:00Z", "2026-11-05T07:00:00Z", "2026-11-20T07:00:00Z"],
            "price": [10.0, 12.0, 30.0],
            "max_bid": [None, 11.0, 25.0],
            "bids_count": [0, 1, 7],
            "trust_flow": [8, 9, 31],
            "citation_flow": [20, 22, 22],
            "domain_authority": [None, None, None],
            "referring_domains": [0, 95, 120],
            "backlinks_count": [400, 900, 4000],
        }
    )


def empty_counts(total: int = 0, languages: dict | None = None) -> ChartCounts:
    """Chart counts of `total` listings with nothing to draw: no TF/CF, zone, age or snapshots."""
    nothing = ("tf_cf", "zone_by_topic", "zone_by_source", "ages", "first_years", "snapshots_by_age")
    return ChartCounts(total=total, languages=languages or {}, **{name: {} for name in nothing})


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler for a loopback test server: it logs nothing."""

    def log_message(self, *args) -> None:
        pass


def serve_in_background(server: socketserver.BaseServer) -> int:
    """Serve from a daemon thread, each request in a daemon thread where the server threads: its port."""
    setattr(server, "daemon_threads", True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def fixed_clock() -> datetime:
    return NOW


def ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


TOPICS = [
    "Health",
    "Health/Fitness",
    "Healthcare/Misc",
    "Recreation/Travel",
    "Recreation/Travel/Cruises",
    "Business/Marketing",
    "Computers/Internet",
    "Arts/Music",
    "news/Media",
    None,
]
TLDS = [".com", ".fr", ".de", ".co.uk", ".uk", ".net", ".io", ".com.au", ".it"]
WORDS = ["shop", "car", "auto", "green", "bio", "maison", "ai", "cloud", "100%off", "a_b", "travel", "health"]


def listing_records(n: int = 700, seed: int = 7) -> list[dict]:
    """Records shaped as the reference Domain schema, with every edge case the filters meet."""
    rnd = random.Random(seed)
    records = []
    for i in range(1, n + 1):
        source = "regfree" if i % 9 == 0 else rnd.choice(PLATFORM_SLUGS)
        tld = rnd.choice(TLDS)
        serial = str(i) if i % 3 else "q" + "".join(chr(97 + int(d)) for d in str(i))  # every third label digit-free
        name = f"{rnd.choice(WORDS)}{rnd.choice(['', '-', ''])}{rnd.choice(WORDS)}{serial}{tld}"
        if i % 23 == 0:  # a spam word (the built-in list) between words of the name
            name = name.replace(serial, f"poker{serial}", 1)
        enriched = rnd.random() < 0.7
        tf = rnd.randint(0, 60) if enriched else None
        cf = min(100, tf + rnd.randint(-5, 40)) if enriched else None
        price = round(rnd.uniform(5, 900), 2) if source != "regfree" and rnd.random() < 0.9 else None
        bids = rnd.choice([None, 0, 0, 1, 3, 12]) if source != "regfree" else None
        kind = rnd.choice(["auction", "auction", "closeout", "backorder"])
        end = None
        if kind == "auction":
            end = ts(NOW + timedelta(hours=rnd.randint(-72, 240)))
        first = None
        if rnd.random() < 0.8:
            first = (date(1998, 1, 1) + timedelta(days=rnd.randint(0, 365 * 28))).isoformat()
        if i % 50 == 0 and first:  # birthdays that fall exactly on today's date
            first = f"{NOW.year - rnd.randint(1, 20)}-{NOW.month:02d}-{NOW.day:02d}"
        records.append(
            {
                "id": i * 3,  # gaps, as real ids have
                "name": name,
                "tld": tld,
                "source": source,
                "type": kind,
                "auction_type": "Bid" if kind == "auction" else None,
                "price": price,
                "max_bid": round(price + rnd.uniform(1, 300), 2) if price and bids else None,
                "currency": source_by_slug(source).currency,
                "bids_count": bids,
                "auction_end_date": end,
                "score": rnd.randint(0, 100) if enriched or rnd.random() < 0.3 else None,
                "is_spammy": rnd.random() < 0.05,
                "wayback_snapshots": rnd.randint(0, 5000) if first else None,
                "wayback_first_date": first,
                "domain_authority": rnd.randint(0, 70) if enriched else None,
                "backlinks_count": int(rnd.paretovariate(1.2) * 10) if enriched else None,
                "referring_domains": rnd.choice([0, 1, 5, 40, 300]) if enriched else None,
                "trust_flow": tf,
                "citation_flow": cf,
                "ttf_topic": rnd.choice(TOPICS) if enriched else None,
                "ref_domains_edu": rnd.choice([0, 0, 1]) if enriched else None,
                "ref_domains_gov": rnd.choice([0, 0, 0, 2]) if enriched else None,
                "historical_tech": rnd.choice([None, [], ["WordPress"], ["Shopify", "Stripe"], ["wordpress"]]),
                "use_cases": rnd.choice([None, [], ["ecommerce"], ["saas", "news"]]),
                "historical_traffic_etv": rnd.choice([None, 0, 150, 4000]),
                "language": rnd.choice(["EN", "fr", "DE", None]),
                "has_gmb": rnd.random() < 0.1,
                "purchase_url": f"https://example.test/{name}",
                "created_at": ts(NOW - timedelta(days=rnd.randint(0, 60), minutes=rnd.randint(0, 1440))),
                "updated_at": ts(NOW - timedelta(days=rnd.randint(0, 3))),
                **_archive_fields(random.Random(seed * 1009 + i), first),
            }
        )
    return records


def _archive_fields(rnd: random.Random, first: str | None) -> dict:
    """The archive signals `edt enrich` writes, for rows with a first snapshot (its own random
    stream, so the fields above are those they always were)."""
    if not first or rnd.random() < 0.2:
        return {}
    span = NOW.year - int(first[:4]) + 1
    years = rnd.randint(1, span)
    parked = rnd.random() < 0.15
    return {
        "archive_years": years,
        "archive_longest_gap": rnd.choice([0, 0, 1, 3, max(0, span - years)]),
        "archive_redirect_share": rnd.choice([0.0, 0.1, 0.5, 1.0]),
        "archive_parked": parked,
        "archive_parked_reason": "the same page in 40 of 44 captures" if parked else None,
        "archive_continuity": rnd.randint(0, 100),
    }


def value_rows(records: list[dict], seed: int = 13) -> list[tuple]:
    """Price ranges as `edt appraise` writes them: most listings a range, some none with the
    reason, some never valued (a listing a sync brought since); a few ranges sit exactly at a
    price, so that value / price is a whole ratio."""
    rnd = random.Random(seed)
    rows = []
    for r in records:
        draw = rnd.random()
        if draw < 0.1:
            continue  # not valued yet
        if draw < 0.2 or r["source"] == "regfree":
            rows.append((r["id"], None, None, None, "a deleted ccTLD name: not for sale"))
            continue
        mid = round(rnd.choice([r["price"] or 10, r["price"] or 10, 1]) * rnd.choice([0.5, 1, 1, 2, 3.7, 10]), 2)
        rows.append((r["id"], round(mid * 0.4, 2), mid, round(mid * 2.5, 2), None))
    return rows


def live_rows(records: list[dict], seed: int = 17) -> list[tuple]:
    """Live estimates as `edt appraise` writes them: for most auctions with bids (some not
    estimated yet), never below the bid; a few at exactly twice the bid."""
    rnd = random.Random(seed)
    rows = []
    for r in records:
        if r.get("type") != "auction" or not r.get("bids_count") or not r.get("max_bid") or rnd.random() < 0.2:
            continue
        mid = round(r["max_bid"] * rnd.choice([1, 1.3, 2, 2, 5]), 2)
        rows.append((r["id"], round(r["max_bid"], 2), mid, round(mid * 1.5, 2)))
    return rows


def deal_value(r: dict) -> float | None:
    """The deal ratio: the live estimate's middle (an auction with bids) or the range's, over
    the effective EUR price, when both (and a price above 0)."""
    mid, eur = r["live_mid"] if r["live_mid"] is not None else r["value_mid"], r["effective_price_eur"]
    return mid / eur if mid is not None and eur is not None and eur > 0 else None


def inflated_later_states(records: list[dict]) -> list[dict]:
    """A later state of every 11th enriched listing, Trust Flow 15 higher: those whose TF was
    at most 30 (a rise of x1.5 or more) and whose auction had not ended are flagged."""
    return [{**r, "trust_flow": r["trust_flow"] + 15} for r in records[::11] if r["trust_flow"] is not None]


STATUSES = ["pendingDelete", "redemptionPeriod", "serverHold", "clientHold", "transition", "quarantine"]


def pending_records(n: int = 300, seed: int = 11) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for i in range(1, n + 1):
        tld = rnd.choice(["fr", "de", "com", "co.uk", "se", "net"])
        label = rnd.choice(WORDS).replace("%", "").replace("_", "") + rnd.choice(["", "-x", "9", ""]) + str(i)
        drop = NOW.date() + timedelta(days=rnd.randint(-10, 50)) if rnd.random() < 0.85 else None
        week = NOW.date() - timedelta(days=NOW.weekday() + 7 * rnd.randint(0, 3))
        out.append(
            {
                "id": i,
                "domain": f"{label}.{tld}",
                "tld": tld,
                "source": "czds-daily" if tld in ("com", "net") else "oi-diff",
                "week_end": week.isoformat(),
                "first_disappeared_at": ts(NOW - timedelta(days=rnd.randint(1, 30))),
                "whois_status": rnd.choice(STATUSES),
                "dns_status": rnd.choice(["NXDOMAIN", "ok", None]),
                "estimated_drop_date": drop.isoformat() if drop else None,
                "whois_checked_at": ts(NOW - timedelta(days=1)),
                "is_idn": False,
                "sld_length": len(label),
                "created_at": ts(NOW - timedelta(days=5)),
                "updated_at": ts(NOW - timedelta(days=1)),
            }
        )
    return out


@pytest.fixture(scope="module")
def engines(synthetic_db):
    """The synthetic mirror read by the columnar index and by SQLite, to compare answers."""
    columnar = Mirror(synthetic_db, clock=fixed_clock, engine="columnar")
    sqlite = Mirror(synthetic_db, clock=fixed_clock, engine="sqlite")
    yield columnar, sqlite
    columnar.close()
    sqlite.close()


@pytest.fixture(scope="session")
def synthetic_db(tmp_path_factory) -> Path:
    """A mirror of synthetic records; a few listings closed (left their source)."""
    path = tmp_path_factory.mktemp("mirror") / "synthetic.db"
    mirror = Mirror(path, clock=fixed_clock, create=True)
    conn = mirror.connection()
    records = listing_records()
    save_listings(conn, records, origin="sync", observed_at=ts(NOW - timedelta(days=2)))
    save_listings(
        conn,
        inflated_later_states(records),
        origin="sync",
        observed_at=ts(NOW - timedelta(days=2) + timedelta(hours=1)),
    )
    with conn:
        save_values(conn, value_rows(records), ts(NOW - timedelta(days=1, hours=12)))
        save_live(conn, live_rows(records))
    close_listings(conn, [30, 60, 93, 150], closed_at=ts(NOW - timedelta(days=1)))
    save_pending(conn, pending_records(), origin="sync", observed_at=ts(NOW - timedelta(days=2)))
    mirror.close()
    return path


@pytest.fixture(params=["columnar", "sqlite"])
def mirror(synthetic_db, request) -> Mirror:
    """The synthetic mirror, answered by each engine in turn: the columnar index (rebuilt
    whenever a test writes) and the SQLite planner."""
    m = Mirror(synthetic_db, clock=fixed_clock, engine=request.param)
    yield m
    m.close()


def all_rows(mirror: Mirror, table: str) -> list[dict]:
    cursor = mirror.connection().execute(f"SELECT * FROM {table}")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


# -- the oracle: the contract's semantics, written plainly -------------------------------


def _dt(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def whole_years(first: str | None, today: date) -> int | None:
    if not first:
        return None
    d = date.fromisoformat(first)
    return today.year - d.year - ((today.month, today.day) < (d.month, d.day))


def _terms(value: str) -> list[str]:
    return [t.strip() for t in str(value).split(",") if t.strip()]


# The bounds on one column, param -> column (`deal`: deal_value): a `_min` at least, a `_max` at most.
_WHOLE_BOUNDS = {
    "score_min": "score",
    "tf_min": "trust_flow",
    "cf_min": "citation_flow",
    "da_min": "domain_authority",
    "rd_min": "referring_domains",
    "snapshots_min": "wayback_snapshots",
    "traffic_min": "historical_traffic_etv",
    "tf_max": "trust_flow",
    "cf_max": "citation_flow",
    "da_max": "domain_authority",
    "archive_gap_max": "archive_longest_gap",
    "continuity_min": "archive_continuity",
}
_DECIMAL_BOUNDS = {
    "price_min": "effective_price",
    "price_max": "effective_price",
    "price_eur_min": "effective_price_eur",
    "price_eur_max": "effective_price_eur",
    "value_min": "value_mid",
    "value_max": "value_mid",
    "deal_min": "deal",
}


def _within(value: float | None, bound: float, at_least: bool) -> bool:
    return value is not None and (value >= bound if at_least else value <= bound)


def oracle_domains(rows: list[dict], params: dict, now: datetime = NOW) -> tuple[list[int], int]:
    """(ids of the requested page in order, total) per contract section 3."""
    today = now.date()
    wanted_regfree = str(params.get("source", "")).strip().lower() == "regfree"
    flag = lambda name: str(params.get(name, "0")).lower() in ("1", "true")  # noqa: E731

    def keep(r: dict) -> bool:
        if not flag("include_closed"):
            if r["closed_at"] is not None:
                return False
            if r["auction_end_date"] is not None and _dt(r["auction_end_date"]) <= now:
                return False
        if (r["source"] == "regfree") != wanted_regfree:
            return False
        p = params
        if "source" in p and r["source"] != p["source"].strip().lower():
            return False
        if "tld" in p and r["tld"] not in {"." + t.lower().lstrip(".") for t in _terms(p["tld"])}:
            return False
        if "type" in p and r["type"] != p["type"].lower():
            return False
        if flag("has_bids") and not (r["bids_count"] is not None and r["bids_count"] > 0):
            return False
        if flag("has_backlinks") and not (r["referring_domains"] is not None and r["referring_domains"] > 0):
            return False
        if flag("has_gmb") and not r["has_gmb"]:
            return False
        if flag("has_edu_gov") and not (
            r["ref_domains_edu"] is not None
            and r["ref_domains_gov"] is not None
            and r["ref_domains_edu"] + r["ref_domains_gov"] > 0
        ):
            return False
        values = {**r, "deal": deal_value(r)}
        for number, bounds in ((int, _WHOLE_BOUNDS), (float, _DECIMAL_BOUNDS)):
            for param, column in bounds.items():
                if param in p and not _within(values[column], number(p[param]), at_least=param.endswith("_min")):
                    return False
        if "age_min" in p:
            age = whole_years(r["wayback_first_date"], today)
            if age is None or age < int(p["age_min"]):
                return False
        if flag("exclude_spam") and json.loads(r["spam_terms"]):
            return False
        if flag("exclude_inflated") and r["metrics_jumped"]:
            return False
        if flag("exclude_parked") and r["archive_parked"] != 0:
            return False
        if "categories" in p:
            topic = (r["ttf_topic"] or "").lower()
            if not r["ttf_topic"] or not any(
                topic == c.lower() or topic.startswith(c.lower() + "/") for c in _terms(p["categories"])
            ):
                return False
        if "contains" in p and not any(t.lower() in r["name"].lower() for t in _terms(p["contains"])):
            return False
        if "language" in p and r["language"] != p["language"].upper():
            return False
        label = r["name"][: len(r["name"]) - len(r["tld"] or "")].rpartition(".")[2]
        if "length_min" in p and not len(label) >= int(p["length_min"]):
            return False
        if "length_max" in p and not len(label) <= int(p["length_max"]):
            return False
        if flag("no_dashes") and "-" in label:
            return False
        if flag("no_numbers") and any(c.isdigit() for c in label):
            return False
        if "not_contains" in p and any(t.lower() in r["name"].lower() for t in _terms(p["not_contains"])):
            return False
        if "age_max" in p:
            age = whole_years(r["wayback_first_date"], today)
            if age is None or age > int(p["age_max"]):
                return False
        tf, cf = r["trust_flow"], r["citation_flow"]
        has_ratio = tf is not None and cf is not None and cf > 0  # a CF of 0 or below has no ratio
        if "tf_cf_ratio_min" in p and not (has_ratio and Fraction(tf, cf) >= Fraction(p["tf_cf_ratio_min"])):
            return False
        if "tf_cf_ratio_max" in p and not (  # the ratio cut to two decimals
            has_ratio and Fraction(100 * tf // cf, 100) <= Fraction(p["tf_cf_ratio_max"])
        ):
            return False
        if "techs" in p and not set(_terms(p["techs"])) & set(json.loads(r["historical_tech"] or "[]")):
            return False
        if "use_cases" in p and not set(_terms(p["use_cases"])) & set(json.loads(r["use_cases"] or "[]")):
            return False
        day = lambda s: datetime.fromisoformat(s).replace(tzinfo=timezone.utc)  # noqa: E731
        if "created_after" in p and not _dt(r["created_at"]) >= day(p["created_after"]):
            return False
        if "created_before" in p and not _dt(r["created_at"]) < day(p["created_before"]):
            return False
        if "ends_after" in p and not (r["auction_end_date"] and _dt(r["auction_end_date"]) >= day(p["ends_after"])):
            return False
        if "ends_before" in p and not (r["auction_end_date"] and _dt(r["auction_end_date"]) < day(p["ends_before"])):
            return False
        if "ends_within" in p:
            soon = now + timedelta(hours=int(p["ends_within"]))
            if not (r["auction_end_date"] and now < _dt(r["auction_end_date"]) <= soon):
                return False
        if "seen_after" in p:
            after = datetime.fromisoformat(p["seen_after"].replace("Z", "+00:00"))
            after = after if after.tzinfo else after.replace(tzinfo=timezone.utc)
            if not _dt(r["first_seen_at"]) > after:
                return False
        if "after_id" in p and not r["id"] > int(p["after_id"]):
            return False
        return True

    matched = [r for r in rows if keep(r)]
    if "after_id" in params:
        matched.sort(key=lambda r: r["id"])
        per_page = int(params.get("per_page") or params.get("limit") or 50)
        return [r["id"] for r in matched[:per_page]], None
    sort = params.get("sort", "-score")
    field = sort.lstrip("-")
    desc = sort.startswith("-")
    if field == "age":  # contract: age sorts by the exact first-snapshot date (older = greater age)
        field, desc = "wayback_first_date", not desc

    def value(r):
        if field == "deal":
            return deal_value(r)
        return r[field]

    present = [r for r in matched if value(r) is not None]
    missing = [r for r in matched if value(r) is None]
    present.sort(key=lambda r: r["id"])
    present.sort(key=value, reverse=desc)  # stable: ties stay by id ascending
    missing.sort(key=lambda r: r["id"])
    ordered = present + missing
    per_page = int(params.get("per_page") or params.get("limit") or 50)
    page = int(params.get("page", 1))
    return [r["id"] for r in ordered[(page - 1) * per_page : page * per_page]], len(ordered)


def oracle_pending(rows: list[dict], params: dict, now: datetime = NOW) -> tuple[list[int], int]:
    today = now.date()
    p = params
    flag = lambda name: str(p.get(name, "0")).lower() in ("1", "true")  # noqa: E731

    def keep(r):
        drop = r["estimated_drop_date"]
        week = p.get("week_end", "all")
        if week != "all":
            if r["week_end"] != week:
                return False
        elif not flag("include_past") and drop is not None and drop < today.isoformat():
            return False
        families = {t.lower().lstrip(".") for t in _terms(p.get("tld", ""))}  # uk: uk, co.uk, org.uk, ...
        if "tld" in p and not any(r["tld"] == t or r["tld"].endswith("." + t) for t in families):
            return False
        if "status" in p and r["whois_status"] not in _terms(p["status"]):
            return False
        if "source" in p and r["source"] != p["source"]:
            return False
        if "drops_within" in p:
            end = (today + timedelta(days=int(p["drops_within"]))).isoformat()
            if drop is None or not (today.isoformat() <= drop <= end):
                return False
        if "contains" in p and not any(t.lower() in r["domain"].lower() for t in _terms(p["contains"])):
            return False
        label = r["domain"].split(".")[0]
        if flag("no_dashes") and "-" in label:
            return False
        if flag("no_numbers") and any(ch.isdigit() for ch in label):
            return False
        if "drop_date_from" in p and not (drop and drop >= p["drop_date_from"]):
            return False
        if "drop_date_to" in p and not (drop and drop <= p["drop_date_to"]):
            return False
        return True

    matched = sorted((r for r in rows if keep(r)), key=lambda r: r["id"])
    sort = p.get("sort", "drop_date")
    if sort == "domain":
        matched.sort(key=lambda r: r["domain"])
    else:
        dated = [r for r in matched if r["estimated_drop_date"]]
        undated = [r for r in matched if not r["estimated_drop_date"]]
        dated.sort(key=lambda r: r["estimated_drop_date"], reverse=sort == "drop_date_desc")
        matched = dated + undated if sort == "drop_date" else undated + dated
    per_page = int(p.get("per_page", 50))
    page = int(p.get("page", 1))
    return [r["id"] for r in matched[(page - 1) * per_page : page * per_page]], len(matched)


# -- mirrors built once per run ------------------------------------------------------------------
# A demo takes seconds to make and milliseconds to copy. A mirror several modules start from is
# made once per run, by whichever worker asks first (a file lock holds the others), and copied.

_shared: list[Path] = []  # the folder every worker of this run sees


@pytest.fixture(scope="session", autouse=True)
def _run_folder(tmp_path_factory) -> None:
    base = tmp_path_factory.getbasetemp()
    _shared[:] = [base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base]


def built_once(key: str, build, path: Path) -> Path:
    """`path` (and its price model beside it) as `build(path)` makes it, made once per run for
    every worker: `key` names what `build` makes. A columnar index is built again from the copy."""
    import fcntl
    import shutil

    if not _shared:  # outside a test run: made here
        build(path)
        return path
    folder = _shared[0] / "built-once"
    folder.mkdir(exist_ok=True)
    made = folder / key
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.is_dir():
            partial = folder / f"{key}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            build(partial / "mirror.db")
            os.rename(partial, made)
    for suffix in ("", ".value-model"):
        if (made / f"mirror.db{suffix}").exists():
            shutil.copyfile(made / f"mirror.db{suffix}", f"{path}{suffix}")
    return path


def lived_demo(path: Path) -> Path:
    """At `path`, what `edt demo --days 21` leaves (today's): results, a price model, saved
    searches and their alerts."""
    from click.testing import CliRunner

    from toolkit.cli import cli
    from toolkit.demo.clock import demo_today

    def build(at: Path) -> None:
        done = CliRunner().invoke(cli, ["demo", "--db", str(at), "--days", "21"])
        assert done.exit_code == 0, done.output

    return built_once(f"edt-demo-21-{demo_today(None)}", build, path)


LAPSE_TODAY = date(2026, 12, 5)


def lapse_now() -> datetime:
    """The moment the time-lapse demo's app tests answer as of: 09:00 UTC on LAPSE_TODAY."""
    from toolkit.demo.clock import anchor_of

    return anchor_of(LAPSE_TODAY) + timedelta(hours=2)


@pytest.fixture(scope="session")
def lapse_template(tmp_path_factory) -> Path:
    """A time-lapse demo (the 14 days to LAPSE_TODAY: auctions that sold, went unsold, run
    with bids), appraised: the mirror the domain page is judged on (the app's and the
    browser's tests)."""
    from toolkit.analysis.appraise import appraise

    def appraised(path: Path) -> None:
        lapse_demo(path)
        with Mirror(path, clock=lapse_now) as mirror:
            appraise(mirror)
            mirror.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    return built_once("lapse-appraised", appraised, tmp_path_factory.mktemp("lapse") / "lapse.db")


def demo_file(path: Path, **load: Any) -> Path:
    """At `path`, `load_demo(**load)` (scale `small` unless said), checkpointed so that it can be
    copied as a file."""
    from toolkit.demo import load_demo
    from toolkit.store.schema import connect

    conn = connect(str(path))
    load_demo(conn, **{"scale": "small", **load})
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def lapse_demo(path: Path) -> Path:
    """At `path`, the time-lapse demo of the 14 days to LAPSE_TODAY (small, seed 7)."""
    return built_once("lapse", lambda at: demo_file(at, seed=7, today=LAPSE_TODAY, days=14), path)


def small_demo(path: Path, seed: int, today: date | None = None) -> Path:
    """A `small` demo mirror at `path` (checkpointed, so it can be copied as a file)."""
    from toolkit.demo.clock import demo_today

    return built_once(f"small-{seed}-{demo_today(today)}", lambda at: demo_file(at, seed=seed, today=today), path)


@contextmanager
def writer_lock_held(path: Path, command: str = "edt sync"):
    """Another process holding the mirror's writer lock (as a running load does) for the block."""
    import subprocess
    import sys

    code = (
        "import sys; from toolkit.store.lock import writer_lock\n"
        "with writer_lock(sys.argv[1], sys.argv[2]):\n    print('held', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(path), command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        holder.stdin.close()
        holder.wait(10)


def mirror_digest(path: Path) -> dict[str, str]:
    """What a mirror holds, table by table (a digest of every row in key order), and its shape
    (every index and trigger): equal digests, the same mirror. Read-only."""
    import hashlib
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = {}
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                "'%_fts%' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        for table in tables:
            digest = hashlib.sha256()
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
                digest.update(repr(row).encode())
            out[table] = digest.hexdigest()[:16]
        out["shape"] = repr(
            conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') ORDER BY name"
            ).fetchall()
        )
        out["fts"] = repr(
            [conn.execute(f"SELECT count(*) FROM {t}_fts").fetchone() for t in ("listings", "pending_delete")]
        )
        return out
    finally:
        conn.close()


def feeds_only_mirror(folder: Path) -> Path:
    """A mirror a user without a key fills: the free feeds, in their real formats and a few
    rows each (no link metrics but Namecheap's, no archive data, no auction ended yet), and
    reported sales."""
    import csv
    import json
    import zipfile
    from datetime import datetime, timedelta, timezone

    from toolkit import Mirror
    from toolkit.bench.feed_ingest import HEADER
    from toolkit.ingest import ingest_file
    from toolkit.ingest.sales import ingest_sales

    today = datetime.now(timezone.utc).date()
    day = lambda n: (today + timedelta(days=n)).isoformat()  # noqa: E731
    real = Path(__file__).parent / "fixtures" / "real"
    items = [
        {"domainName": "GreenKettle.net", "auctionType": "Bid", "auctionEndTime": f"{day(2)}T16:00:00Z",
         "price": "$1,234", "numberOfBids": 7, "domainAge": 16, "valuation": "$2,400"},
        {"domainName": "PPN57.COM", "auctionType": "BuyNow", "auctionEndTime": f"{day(14)}T16:00:00Z",
         "price": "$5", "numberOfBids": 0, "domainAge": 7, "valuation": "$1,067"},
    ]  # fmt: skip
    with zipfile.ZipFile(folder / "all_listings.json.zip", "w") as archive:
        archive.writestr("all_listings.json", json.dumps({"meta": {}, "data": items}))
    cells = HEADER.split(",")
    with (folder / "Namecheap_Market_Sales.csv").open("w", newline="") as out:
        out.write(HEADER + "\n")
        for n, (name, tf, cf) in enumerate(
            [("solarpanda.io", "18", "25"), ("oakmeadow.com", "", ""), ("zip.xyz", "0", "0")]
        ):
            row = dict.fromkeys(cells, "")
            row.update(url=f"https://www.namecheap.com/market/sale/S{n}/", name=name, price="45.00", bidCount="1")
            row.update(startDate=f"{day(-3)}T08:00:00Z", endDate=f"{day(3 + n)}T16:00:00Z")
            row.update(majesticTrustFlow=tf, majesticCitation=cf)
            csv.writer(out, lineterminator="\n").writerow([row[c] for c in cells])
    releases = [{"name": "fjallstuga.se", "release_at": day(2)}, {"name": "norrsken.nu", "release_at": day(5)}]
    (folder / "bardate_domains.json").write_text(json.dumps({"data": releases}))
    deleted = (real / "registry_drop_lists" / "dnspl_deleted_domains_2025-08-19.txt").read_text().splitlines()[:40]
    (folder / f"pl_{day(0)}.txt").write_text("\n".join(deleted) + "\n")
    (folder / "sales.csv").write_text(
        "Domain,Price,Date,Venue\nkettlehouse.com,1200,2025-05-10,NameJet\nsolarpanel.io,2500,2024-11-01,Sedo\n"
    )
    path = folder / "mirror.db"
    with Mirror(path, create=True) as mirror:
        ingest_file(mirror, "godaddy", folder / "all_listings.json.zip")
        ingest_file(mirror, "namecheap", folder / "Namecheap_Market_Sales.csv")
        ingest_file(mirror, "bardate", folder / "bardate_domains.json")
        ingest_file(mirror, "droplist", folder / f"pl_{day(0)}.txt")
        zones = sorted((real / "ee_zone").glob("*.txt"))
        ingest_file(mirror, "zonediff", zones[1], previous=zones[0])
        ingest_sales(mirror, folder / "sales.csv")
    return path


def as_synced(path: Path) -> Path:
    """A demo mirror made to stand for a synced one (its rows of origin `sync`, no demo notes),
    for tests of what a sync does to a mirror it filled: a sync refuses a mirror holding the demo."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        for table in ("listings", "pending_delete"):
            conn.execute(f"UPDATE {table} SET origin = 'sync' WHERE origin = 'demo'")
        conn.execute("DELETE FROM mirror_meta WHERE key LIKE 'demo\\_%' ESCAPE '\\'")
    conn.close()
    return path
