"""Enrichment: Wayback CDX and RDAP parsers on recorded real answers, and `enrich()` end to
end through httpx.MockTransport serving those answers (with throttling, outages and a
cut-off body among them). The recorded answers are in tests/fixtures/real (its SOURCES.md
says where each came from)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from conftest import REAL
from toolkit import Mirror
from toolkit.errors import BadInput
from toolkit.enrich.rdap import (
    AVAILABLE,
    BOOTSTRAP_META_KEY,
    Bootstrap,
    NoRdapService,
    RdapError,
    epp_status,
    load_bootstrap,
    parse_rdap_domain,
    pending_status,
)
from toolkit.enrich.listings import PROGRESS_KEY, enrich
from toolkit.enrich.polite import MIN_INTERVAL, HostPacer, polite_client
from toolkit.enrich.score import quality_score
from toolkit.enrich.wayback import (
    CDX_FIELDS,
    WaybackError,
    check_cdx_body,
    fetch_cdx_pages,
    parse_cdx_json,
    parse_cdx_text,
    summarize,
)
from toolkit.sync.remote import Traffic
from toolkit.store.writer import close_listings, save_listings

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
NOW_TS = "2026-11-22T12:00:00Z"


def real(relative: str) -> bytes:
    return (REAL / relative).read_bytes()


def cdx(name: str) -> bytes:
    return real(f"wayback_cdx/{name}")


def rdap_fixture(name: str) -> bytes:
    return real(f"rdap/{name}")


def bootstrap_bytes() -> bytes:
    return real("rdap_bootstrap/dns_2021-05-11.json")


def no_sleep(seconds: float) -> None:
    pass


# -- Wayback CDX parsers ----------------------------------------------------------------


def test_cdx_json_limit3():
    page = parse_cdx_json(cdx("archive.org_output-json_limit3.json"))
    assert [c.timestamp for c in page.captures] == ["19970126045828", "19971011050034", "19971211122953"]
    assert page.resume_key is None and page.malformed == 0
    assert page.captures[0].original == "http://www.archive.org:80/" and page.captures[0].length == 1415
    summary = summarize("archive.org", [page])
    assert (summary.snapshots, summary.first_date, summary.last_date) == (3, "1997-01-26", "1997-12-11")


def test_cdx_json_and_text_resume_key_agree():
    as_json = parse_cdx_json(cdx("archive.org_limit5_showResumeKey_output-json.json"))
    as_text = parse_cdx_text(cdx("archive.org_limit5_showResumeKey.txt"))
    assert as_json.resume_key == as_text.resume_key == "org%2Carchive%29%2F+19980109140106%21"
    assert as_json.captures == as_text.captures and len(as_json.captures) == 5
    summary = summarize("archive.org", [as_json])
    # one capture is listed twice (19971211122953): counted once
    assert (summary.snapshots, summary.duplicates) == (4, 1)
    assert (summary.first_date, summary.last_date) == ("1997-01-26", "1998-01-09")


def test_cdx_text_pages_with_resume_keys():
    nasa = parse_cdx_text(cdx("edgi_cassette_nasa.gov_prefix_2022-01_limit10.txt"))
    assert len(nasa.captures) == 10 and nasa.resume_key == "gov%2Cnasa%29%2F+20220101013953"
    assert [c.statuscode for c in nasa.captures].count("301") == 4
    dw = parse_cdx_text(cdx("edgi_cassette_dw.com_2019-10_2020-03_page1.txt"))
    assert len(dw.captures) == 1000 and dw.malformed == 0 and dw.resume_key == "com%2Cdw%29%2F+20191218145126"
    assert sum(c.statuscode == "-" for c in dw.captures) == 2  # warc/revisit rows are captures too
    summary = summarize("dw.com", [dw])
    assert (summary.first_date, summary.last_date) == ("2019-10-01", "2019-12-18")
    assert summary.snapshots + summary.duplicates == 1000 and summary.duplicates == 3


def test_cdx_identical_rows_count_once():
    page = parse_cdx_text(cdx("edgi_cassette_nasa.gov_1996-10_1997-02_showResumeKey.txt"))
    assert len(page.captures) == 3 and page.resume_key is None
    summary = summarize("nasa.gov", [page])
    assert (summary.snapshots, summary.duplicates, summary.first_date) == (1, 2, "1996-12-31")


def test_cdx_malformed_rows_skipped_and_counted():
    page = parse_cdx_text(cdx("edgi_malformed_cdx.txt"))
    # the mailto: row, the row with a data: URL glued to its key and the "some/not/even/url" row
    assert page.malformed == 3
    assert [c.original for c in page.captures] == ["https://www.epa.gov/", "https://www.epa.gov/"]
    assert summarize("epa.gov", [page]).malformed == 3


def test_cdx_bad_timestamps_counted_not_guessed():
    page = parse_cdx_text(cdx("edgi_bad_timestamp_cdx.txt"))
    assert page.bad_timestamps == 2 and page.malformed == 0
    assert [c.when is None for c in page.captures] == [False, False, False, True, True]
    summary = summarize("usatoday.com", [page])
    # the captures exist (5), but only valid timestamps give dates
    assert (summary.snapshots, summary.bad_timestamps) == (5, 2)
    assert (summary.first_date, summary.last_date) == ("2000-01-25", "2001-11-20")


def test_cdx_zero_length():
    page = parse_cdx_text(cdx("edgi_zero_length_cdx.txt"))
    assert len(page.captures) == 5 and page.malformed == 0
    assert [c.length for c in page.captures] == [24186, 24028, 24116, 24217, None]


def test_cdx_empty_and_broken_bodies():
    assert parse_cdx_json(b"[]").captures == [] and parse_cdx_json(b"").captures == []
    assert parse_cdx_text(b"").captures == []
    assert summarize("x.com", [parse_cdx_json(b"[]")]).fields() == {
        "wayback_snapshots": 0,
        "wayback_first_date": None,
        "wayback_last_date": None,
        "age": None,
        "archive_years": None,
        "archive_longest_gap": None,
        "archive_redirect_share": None,
        "archive_parked": None,
        "archive_parked_reason": None,
        "archive_continuity": None,
    }
    body = cdx("archive.org_output-json_limit3.json")
    with pytest.raises(WaybackError):
        parse_cdx_json(body[: len(body) // 2])
    with pytest.raises(ValueError):
        check_cdx_body(body[: len(body) // 2], "json")
    text = cdx("edgi_cassette_nasa.gov_prefix_2022-01_limit10.txt")
    check_cdx_body(text, "text")
    with pytest.raises(ValueError, match="mid-line"):
        check_cdx_body(text[:-40], "text")


# -- RDAP parser and bootstrap ----------------------------------------------------------


def test_rdap_com_answers():
    example = parse_rdap_domain(rdap_fixture("verisign_com_example.com_2021-06.json"))
    assert example.name == "example.com"
    assert example.statuses == ["clientDeleteProhibited", "clientTransferProhibited", "clientUpdateProhibited"]
    assert example.pending_status is None and not example.dropping  # prohibited-only: not dropping
    assert example.expires_at == "2021-08-13T04:00:00Z" and example.registered_at == "1995-08-14T04:00:00Z"
    assert example.registrar == "RESERVED-Internet Assigned Numbers Authority"
    assert example.nameservers == ["a.iana-servers.net", "b.iana-servers.net"]

    google = parse_rdap_domain(rdap_fixture("verisign_com_google.com_2021-06.json"))  # has a duplicate key
    assert len(google.statuses) == 6 and google.pending_status is None
    assert (google.registrar, google.expires_at) == ("MarkMonitor Inc.", "2028-09-14T04:00:00Z")

    parked = parse_rdap_domain(rdap_fixture("verisign_com_themarquetry.com_2022-01.json"))
    assert parked.statuses == ["clientTransferProhibited"]
    assert (parked.registrar, parked.expires_at) == ("Hosting Concepts B.V. d/b/a Registrar.eu", "2022-03-16T17:07:37Z")

    joker = parse_rdap_domain(rdap_fixture("verisign_com_20c.com.json"))
    assert joker.statuses == [] and joker.last_changed_at == "2024-06-25T03:31:37Z"
    assert (joker.registrar, joker.expires_at) == (
        "CSL Computer Service Langenbach GmbH d/b/a joker.com",
        "2025-06-28T18:28:14Z",
    )


def test_rdap_cz_and_no_answers():
    cz = parse_rdap_domain(rdap_fixture("cznic_cz_example.cz.json"))
    assert cz.rdap_statuses == ["active"] and cz.statuses == ["ok"] and not cz.dropping
    assert cz.expires_at == "2019-08-30T12:00:00Z"  # +00:00 offset normalised
    assert cz.registrar == "REG-INTERNET-CZ"  # no vCard: the registrar's handle
    no = parse_rdap_domain(rdap_fixture("norid_no_norway.no_2021.json"))
    assert no.statuses == [] and no.expires_at is None  # Norid gives neither
    assert (no.registrar, no.last_changed_at) == ("Domeneshop AS", "2021-01-14T05:16:59Z")
    fields = no.fields(NOW_TS)
    assert fields["whois_checked_at"] == NOW_TS and fields["whois_registrar"] == "Domeneshop AS"


def test_rdap_rejects_non_domain_answers():
    with pytest.raises(RdapError):
        parse_rdap_domain(b'{"errorCode": 404, "title": "Not Found"}')
    with pytest.raises(RdapError):
        parse_rdap_domain(rdap_fixture("cznic_cz_example.cz.json")[:500])


@pytest.mark.parametrize(
    "statuses, expected",
    [
        (["client hold", "pending delete", "redemption period", "server hold"], "redemptionPeriod"),
        (["pending delete"], "pendingDelete"),
        (["server hold", "client transfer prohibited"], "serverHold"),
        (["client hold", "auto renew period"], "clientHold"),
        (["transition"], "transition"),
        (["quarantine", "inactive"], "quarantine"),
        (["active"], None),
        (["client delete prohibited", "server transfer prohibited"], None),
        ([], None),
    ],
)
def test_pending_status_mapping(statuses, expected):
    assert pending_status([epp_status(s) for s in statuses]) == expected


def test_epp_names():
    assert epp_status("client transfer prohibited") == "clientTransferProhibited"
    assert epp_status("active") == "ok" and epp_status("auto renew period") == "autoRenewPeriod"
    assert epp_status("serverHold") == "serverHold"


def test_bootstrap_lookups():
    boot = Bootstrap.from_json(json.loads(bootstrap_bytes()))
    assert boot.publication == "2021-05-11T21:00:02Z"
    assert boot.base_url("com") == "https://rdap.verisign.com/com/v1/"
    assert boot.base_url(".cz") == "https://rdap.nic.cz/"
    assert boot.domain_url("norway.no") == "https://rdap.norid.no/domain/norway.no"
    assert boot.domain_url("EXAMPLE.COM") == "https://rdap.verisign.com/com/v1/domain/example.com"
    with pytest.raises(NoRdapService, match=r"no RDAP service for \.de"):
        boot.domain_url("beispiel.de")
    with pytest.raises(NoRdapService, match=r"no RDAP service for \.uk"):
        boot.domain_url("example.co.uk")


def test_bootstrap_cached_in_mirror_meta(tmp_path):
    body = bootstrap_bytes()
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})

    mirror = Mirror(tmp_path / "m.db", create=True)
    conn = mirror.connection()
    with polite_client(httpx.MockTransport(handler), sleep=no_sleep) as client:
        boot, origin = load_bootstrap(conn, client, now=NOW)
        assert (origin, len(calls)) == ("fetched", 1) and calls[0] == "https://data.iana.org/rdap/dns.json"
        stored = json.loads(
            conn.execute("SELECT value FROM mirror_meta WHERE key = ?", (BOOTSTRAP_META_KEY,)).fetchone()[0]
        )
        assert stored["fetched_at"] == NOW_TS and stored["data"]["publication"] == "2021-05-11T21:00:02Z"
        assert load_bootstrap(conn, client, now=NOW + timedelta(days=29))[1] == "cached" and len(calls) == 1
        assert load_bootstrap(conn, client, now=NOW + timedelta(days=31))[1] == "fetched" and len(calls) == 2

    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500)

    with polite_client(httpx.MockTransport(down), sleep=no_sleep, retries=0) as client:
        boot, origin = load_bootstrap(conn, client, now=NOW + timedelta(days=90))
    assert origin == "stale" and boot.base_url("cz") == "https://rdap.nic.cz/"


# -- the HTTP stack ---------------------------------------------------------------------


def test_host_pacing_per_host():
    clock = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    pacer = HostPacer(
        httpx.MockTransport(lambda r: httpx.Response(200)), Traffic(), sleep=sleep, clock=lambda: clock[0]
    )
    for url in (
        "https://web.archive.org/a",
        "https://web.archive.org/b",
        "https://rdap.nic.cz/x",
        "https://web.archive.org/c",
    ):
        pacer.handle_request(httpx.Request("GET", url))
    assert slept == [MIN_INTERVAL["web.archive.org"]] * 2  # the other host was not held back
    assert pacer.traffic.requests == 4


def test_a_200_page_that_is_no_cdx_index_is_a_failed_lookup_not_no_captures():
    """A maintenance page sent with 200 (text output): a failed lookup, which leaves the row's
    archive figures as they were, not 'no captures', which would wipe them."""
    page = b"<!DOCTYPE html>\n<html><head><title>Wayback Machine</title></head>\n<body>offline</body></html>\n"
    with polite_client(httpx.MockTransport(lambda r: httpx.Response(200, content=page)), sleep=no_sleep) as client:
        with pytest.raises(WaybackError, match="not a CDX index"):
            list(fetch_cdx_pages(client, "example.com", output="text"))
    with polite_client(httpx.MockTransport(lambda r: httpx.Response(200, content=b"")), sleep=no_sleep) as client:
        assert [p.captures for p in fetch_cdx_pages(client, "example.com", output="text")] == [[]]  # truly none


def test_cdx_walk_follows_resume_keys():
    first = cdx("archive.org_limit5_showResumeKey.txt")
    second = cdx("edgi_cassette_nasa.gov_1996-10_1997-02_showResumeKey.txt")
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, content=second if "resumeKey" in request.url.params else first)

    with polite_client(httpx.MockTransport(handler), sleep=no_sleep) as client:
        pages = list(fetch_cdx_pages(client, "archive.org", output="text"))
    assert [len(p.captures) for p in pages] == [5, 3]
    assert seen[0].params["url"] == "archive.org" and seen[0].params["showResumeKey"] == "true"
    assert "output" not in seen[0].params
    assert seen[1].params["resumeKey"] == "org,archive)/ 19980109140106!"  # decoded once, encoded by httpx


# -- enrich() end to end ----------------------------------------------------------------


def _json_from_text(body: bytes) -> bytes:
    """A JSON-form CDX body with the rows of a recorded text-form body (no resume key)."""
    rows = []
    for line in body.decode().splitlines():
        if not line.strip():
            break
        rows.append(line.split())
    return json.dumps([list(CDX_FIELDS), *rows]).encode()


class FakeWeb:
    """Serves queued responses by (host, path, url param, resumeKey); the last one repeats.
    An unknown request fails the test."""

    def __init__(self, routes: dict[tuple, list[httpx.Response]]):
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def key(self, request: httpx.Request) -> tuple:
        params = request.url.params
        return (request.url.host, request.url.path, params.get("url"), params.get("resumeKey"))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.routes.get(self.key(request))
        assert queue, f"unexpected request {request.url}"
        response = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(response.status_code, headers=response.headers, content=response.content)


def ok(body: bytes, kind: str = "application/json") -> httpx.Response:
    return httpx.Response(200, content=body, headers={"Content-Type": kind})


def cdx_route(domain: str, resume: str | None = None) -> tuple:
    return ("web.archive.org", "/cdx/search/cdx", domain, resume)


def rdap_route(host: str, path: str) -> tuple:
    return (host, path, None, None)


LISTINGS = [
    {
        "id": 1,
        "name": "example.com",
        "source": "sedo",
        "type": "auction",
        "trust_flow": 30,
        "citation_flow": 35,
        "domain_authority": 40,
        "referring_domains": 120,
        "backlinks_count": 3000,
        "ref_domains_edu": 1,
        "score": 1,
    },
    {"id": 2, "name": "example.cz", "source": "sedo", "type": "closeout", "trust_flow": 12, "citation_flow": 14},
    {
        "id": 3,
        "name": "norway.no",
        "source": "sedo",
        "type": "auction",
        "domain_authority": 20,
        "wayback_snapshots": 99,
        "wayback_first_date": "2001-05-05",
    },
    {"id": 4, "name": "gone-domain.com", "source": "dynadot", "type": "backorder", "referring_domains": 4},
    {"id": 5, "name": "beispiel.de", "source": "sedo", "type": "auction"},
]


def record(mirror: Mirror, listing_id: int) -> dict:
    return mirror.get_domain(listing_id)["data"]


def make_mirror(tmp_path: Path, records=LISTINGS, clock=lambda: NOW) -> Mirror:
    mirror = Mirror(tmp_path / "m.db", clock=clock, create=True)
    save_listings(mirror.connection(), records, origin="sync", observed_at="2026-11-20T08:00:00Z")
    return mirror


def full_web() -> FakeWeb:
    limit5 = cdx("archive.org_limit5_showResumeKey_output-json.json")
    limit3 = cdx("archive.org_output-json_limit3.json")
    cz = rdap_fixture("cznic_cz_example.cz.json")
    return FakeWeb(
        {
            ("data.iana.org", "/rdap/dns.json", None, None): [ok(bootstrap_bytes())],
            # example.com: throttled, then a page with a resume key; the next page after a 503
            cdx_route("example.com"): [
                httpx.Response(429, headers={"Retry-After": "7"}, text="Too Many Requests"),
                ok(limit5),
            ],
            cdx_route("example.com", "org,archive)/ 19980109140106!"): [
                httpx.Response(503, headers={"Retry-After": "3"}),
                ok(_json_from_text(cdx("edgi_cassette_nasa.gov_prefix_2022-01_limit10.txt"))),
            ],
            # example.cz: the first answer is cut off in transit
            cdx_route("example.cz"): [ok(limit3[: len(limit3) // 2]), ok(limit3)],
            cdx_route("norway.no"): [ok(b"[]")],
            cdx_route("gone-domain.com"): [ok(_json_from_text(cdx("edgi_malformed_cdx.txt")))],
            cdx_route("beispiel.de"): [ok(_json_from_text(cdx("edgi_bad_timestamp_cdx.txt")))],
            rdap_route("rdap.verisign.com", "/com/v1/domain/example.com"): [
                ok(rdap_fixture("verisign_com_example.com_2021-06.json"), "application/rdap+json")
            ],
            rdap_route("rdap.nic.cz", "/domain/example.cz"): [ok(cz[:700]), ok(cz, "application/rdap+json")],
            rdap_route("rdap.norid.no", "/domain/norway.no"): [ok(rdap_fixture("norid_no_norway.no_2021.json"))],
            rdap_route("rdap.verisign.com", "/com/v1/domain/gone-domain.com"): [
                httpx.Response(404, json={"errorCode": 404, "title": "Not Found"})
            ],
        }
    )


def test_enrich_end_to_end(tmp_path):
    web = full_web()
    mirror = make_mirror(tmp_path)
    history_before = mirror.connection().execute("SELECT COUNT(*) FROM listing_history").fetchone()[0]
    report = enrich(mirror, transport=httpx.MockTransport(web), sleep=no_sleep)

    assert report.errors == [] and report.finished and (report.processed, report.updated) == (5, 5)
    assert (report.wayback_fetched, report.rdap_fetched, report.bootstrap) == (5, 4, "fetched")
    assert report.available == ["gone-domain.com"] and dict(report.no_rdap) == {".de": 1}
    # 1 bootstrap + 4 + 2 + 1 + 1 + 1 CDX + 1 + 2 + 1 + 1 RDAP
    assert len(web.requests) == report.traffic.requests == 15
    assert report.traffic.throttled == 1 and report.traffic.retried == 4  # 429, 503, two cut-off bodies
    assert report.traffic.waited >= 10  # Retry-After 7 + 3 honoured
    assert all(r.headers["User-Agent"] == "expired-domains-toolkit/0.1.0" for r in web.requests)
    assert web.requests[1].url.params["output"] == "json" and web.requests[1].url.params["showResumeKey"] == "true"

    com = record(mirror, 1)
    # page 1: 4 distinct 1997-98 captures; page 2 (after the resume key): 10 captures of 2022-01-01
    assert (com["wayback_snapshots"], com["wayback_first_date"], com["wayback_last_date"]) == (
        14,
        "1997-01-26",
        "2022-01-01",
    )
    assert com["age"] == 29
    assert com["whois_status"] == ["clientDeleteProhibited", "clientTransferProhibited", "clientUpdateProhibited"]
    assert com["whois_registrar"] == "RESERVED-Internet Assigned Numbers Authority"
    assert com["whois_expires_at"] == "2021-08-13T04:00:00Z" and com["whois_checked_at"] == NOW_TS
    links = dict(trust_flow=30, citation_flow=35, domain_authority=40, referring_domains=120, backlinks_count=3000)
    expected = quality_score(
        **links, ref_domains_edu=1, ref_domains_gov=None, age=29, wayback_snapshots=14, is_spammy=False
    )
    assert com["score"] == expected and expected != 1

    cz = record(mirror, 2)
    assert (cz["wayback_snapshots"], cz["wayback_last_date"], cz["age"]) == (3, "1997-12-11", 29)
    assert (cz["whois_status"], cz["whois_registrar"], cz["whois_expires_at"]) == (
        ["ok"],
        "REG-INTERNET-CZ",
        "2019-08-30T12:00:00Z",
    )

    no = record(mirror, 3)  # archived before: zero captures now overwrite 99
    assert (no["wayback_snapshots"], no["wayback_first_date"], no["age"]) == (0, None, None)
    # Norid publishes no status nor expiry: none is written (a known one would be kept)
    assert (no["whois_registrar"], no["whois_status"], no["whois_expires_at"]) == ("Domeneshop AS", None, None)

    gone = record(mirror, 4)  # RDAP 404: available
    assert gone["whois_status"] == [AVAILABLE] and gone["whois_registrar"] is None
    assert gone["whois_checked_at"] == NOW_TS and gone["wayback_snapshots"] == 2

    de = record(mirror, 5)  # no RDAP service: whois untouched, never guessed
    assert de["whois_checked_at"] is None and de["whois_status"] is None
    assert (de["wayback_snapshots"], de["wayback_first_date"], de["age"]) == (5, "2000-01-25", 26)

    conn = mirror.connection()
    assert conn.execute("SELECT COUNT(*) FROM listing_history").fetchone()[0] == history_before
    assert conn.execute("SELECT COUNT(*) FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,)).fetchone()[0] == 0
    assert any("no RDAP service for .de" in line for line in report.lines())


def test_second_run_uses_the_cache(tmp_path):
    mirror = make_mirror(tmp_path)
    enrich(mirror, transport=httpx.MockTransport(full_web()), sleep=no_sleep)
    before = [record(mirror, i) for i in range(1, 6)]

    silent = FakeWeb({})  # any request fails the test
    report = enrich(mirror, transport=httpx.MockTransport(silent), sleep=no_sleep)
    assert silent.requests == [] and report.traffic.requests == 0
    assert (report.wayback_cached, report.rdap_cached, report.bootstrap) == (5, 4, "cached")
    assert report.available == ["gone-domain.com"] and report.updated == 5
    assert [record(mirror, i) for i in range(1, 6)] == before

    # three days later RDAP answers are stale (2 days), Wayback figures are not (30 days)
    later = Mirror(mirror.path, clock=lambda: NOW + timedelta(days=3))
    again = full_web()
    report = enrich(later, transport=httpx.MockTransport(again), sleep=no_sleep)
    hosts = {r.url.host for r in again.requests}
    assert hosts == {"rdap.verisign.com", "rdap.nic.cz", "rdap.norid.no"}
    assert (report.rdap_fetched, report.wayback_cached) == (4, 5)
    assert record(later, 2)["whois_checked_at"] == "2026-11-25T12:00:00Z"


def test_rdap_404_marks_available(tmp_path):
    mirror = make_mirror(
        tmp_path,
        [
            {
                "id": 9,
                "name": "gone-domain.com",
                "source": "sedo",
                "type": "auction",
                "whois_status": ["redemptionPeriod"],
                "whois_registrar": "Old Registrar",
            }
        ],
    )
    web = FakeWeb(
        {
            ("data.iana.org", "/rdap/dns.json", None, None): [ok(bootstrap_bytes())],
            rdap_route("rdap.verisign.com", "/com/v1/domain/gone-domain.com"): [httpx.Response(404)],
        }
    )
    report = enrich(mirror, wayback=False, transport=httpx.MockTransport(web), sleep=no_sleep)
    row = record(mirror, 9)
    assert row["whois_status"] == ["available"] and row["whois_registrar"] is None
    assert report.available == ["gone-domain.com"] and not report.pending
    cached = mirror.connection().execute("SELECT outcome FROM enrich_cache WHERE kind = 'rdap'").fetchone()
    assert cached == ("available",)


def test_resumes_after_the_last_batch(tmp_path):
    mirror = make_mirror(tmp_path)
    asked: list[str] = []

    def empty(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params["url"])
        return ok(b"[]")

    first = enrich(mirror, rdap=False, limit=2, transport=httpx.MockTransport(empty), sleep=no_sleep)
    assert (first.processed, first.finished, first.selected) == (2, False, 5)
    assert asked == ["example.com", "example.cz"]
    assert record(mirror, 3)["wayback_snapshots"] == 99  # not reached yet
    progress = json.loads(
        mirror.connection().execute("SELECT value FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,)).fetchone()[0]
    )
    assert progress["after_id"] == 2
    # `edt status` says the exact command that resumes it (its filters and switches)
    assert "an enrichment stopped midway; `edt enrich --no-rdap` resumes it" in mirror.status()["problems"]
    (tmp_path / "other").mkdir()
    other = make_mirror(tmp_path / "other")
    enrich(
        other,
        params={"tld": ".com,.cz,.no", "length_max": "20"},
        rdap=False,
        limit=1,
        transport=httpx.MockTransport(lambda r: ok(b"[]")),
    )
    said = [p for p in other.status()["problems"] if "enrichment" in p]
    assert said == ["an enrichment stopped midway; `edt enrich length_max=20 tld=.com,.cz,.no --no-rdap` resumes it"]

    second = enrich(mirror, rdap=False, transport=httpx.MockTransport(empty), sleep=no_sleep)
    assert second.resumed_after == 2 and (second.processed, second.finished) == (3, True)
    assert asked == ["example.com", "example.cz", "norway.no", "gone-domain.com", "beispiel.de"]
    assert record(mirror, 3)["wayback_snapshots"] == 0
    assert (
        mirror.connection().execute("SELECT value FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,)).fetchone() is None
    )


def test_params_select_rows_and_closed_listings_stay_closed(tmp_path):
    records = [*LISTINGS, {"id": 7, "name": "closed-one.com", "source": "sedo", "type": "auction", "price": 50}]
    mirror = make_mirror(tmp_path, records)
    conn = mirror.connection()
    close_listings(conn, [7], closed_at="2026-11-21T00:00:00Z")
    seen_before = conn.execute("SELECT last_seen_at, closed_at, price, origin FROM listings WHERE id = 7").fetchone()
    asked: list[str] = []

    def empty(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params["url"])
        return ok(b"[]")

    report = enrich(
        mirror,
        rdap=False,
        params={"tld": ".com", "include_closed": "1"},
        transport=httpx.MockTransport(empty),
        sleep=no_sleep,
    )
    assert asked == ["example.com", "gone-domain.com", "closed-one.com"] and report.processed == 3
    row = conn.execute(
        "SELECT last_seen_at, closed_at, price, origin, wayback_snapshots FROM listings WHERE id = 7"
    ).fetchone()
    assert row == (*seen_before, 0)  # enriched, still closed, last seen unchanged


def test_persistent_throttling_is_reported_not_written(tmp_path):
    mirror = make_mirror(tmp_path, LISTINGS[:2])
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.params["url"])
        if request.url.params["url"] == "example.com":
            return httpx.Response(429, headers={"Retry-After": "1"})
        return ok(cdx("archive.org_output-json_limit3.json"))

    report = enrich(mirror, rdap=False, retries=2, transport=httpx.MockTransport(handler), sleep=no_sleep)
    assert calls.count("example.com") == 3  # first try + 2 retries
    assert [(k, d) for k, d, _ in report.errors] == [("wayback", "example.com")] and "429" in report.errors[0][2]
    assert record(mirror, 1)["wayback_snapshots"] is None and record(mirror, 1)["score"] == 1
    assert record(mirror, 2)["wayback_snapshots"] == 3
    assert mirror.connection().execute("SELECT COUNT(*) FROM enrich_cache").fetchone()[0] == 1  # failures not cached


def test_user_agent_names_the_toolkit_and_your_contact(monkeypatch):
    from toolkit.enrich.polite import user_agent_header

    monkeypatch.delenv("EDT_USER_AGENT", raising=False)
    monkeypatch.delenv("EDT_CONTACT", raising=False)
    assert user_agent_header() == "expired-domains-toolkit/0.1.0"
    monkeypatch.setenv("EDT_CONTACT", "mailto:me@example.org")
    assert user_agent_header() == "expired-domains-toolkit/0.1.0 (+mailto:me@example.org)"
    monkeypatch.setenv("EDT_USER_AGENT", "my-agent/1")
    assert user_agent_header() == "my-agent/1"


def test_a_registered_names_answer_without_events_entities_or_nameservers_keeps_what_was_known():
    from toolkit.enrich.rdap import parse_rdap_domain

    full = json.loads(rdap_fixture("verisign_com_example.com_2021-06.json"))
    trimmed = {k: v for k, v in full.items() if k not in ("events", "entities", "nameservers", "status")}
    known = parse_rdap_domain(full).fields("2026-11-25T12:00:00Z")
    fields = parse_rdap_domain(trimmed).fields("2026-11-25T12:00:00Z")
    assert fields == {"whois_checked_at": "2026-11-25T12:00:00Z"}  # nothing it does not hold is cleared
    assert known["whois_registrar"] and known["whois_nameservers"]


def test_a_local_copy_of_the_bootstrap_is_read_and_a_changed_address_is_fetched_again(tmp_path, monkeypatch):
    from toolkit.enrich.rdap import load_bootstrap

    copy = tmp_path / "dns.json"
    copy.write_bytes(bootstrap_bytes())
    monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", str(copy))
    mirror = make_mirror(tmp_path)
    web = FakeWeb({("example.org", "/dns.json", None, None): [ok(bootstrap_bytes())]})
    with polite_client(httpx.MockTransport(web), sleep=no_sleep) as client:
        conn = mirror.connection()
        assert load_bootstrap(conn, client, now=NOW)[1] == "fetched" and web.requests == []  # read from the file
        assert load_bootstrap(conn, client, now=NOW)[1] == "cached"
        monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", "https://example.org/dns.json")
        assert load_bootstrap(conn, client, now=NOW)[1] == "fetched" and len(web.requests) == 1
    for wrong in ("dns.jsn", "https:/data.iana.org/rdap/dns.json"):  # the second: a slash short, no host
        monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", wrong)
        with pytest.raises(BadInput, match=f"EDT_RDAP_BOOTSTRAP_URL: '{wrong}' is neither"):
            load_bootstrap(mirror.connection(), None, now=NOW + timedelta(days=60))


def test_rows_enriched_while_rdap_was_unavailable_are_looked_up_by_the_next_run(tmp_path):
    mirror = make_mirror(tmp_path)
    web = full_web()
    web.routes[("data.iana.org", "/rdap/dns.json", None, None)] = [httpx.Response(500)]
    first = enrich(mirror, transport=httpx.MockTransport(web), sleep=no_sleep)
    assert first.skipped_a_source and not first.finished and "looks these rows up again" in first.lines()[0]
    second = enrich(mirror, transport=httpx.MockTransport(full_web()), sleep=no_sleep)
    assert second.resumed_after is None and second.rdap_fetched == 4 and second.finished


def test_a_retry_line_names_the_host_that_asked_to_wait():
    answers = iter([httpx.Response(429, headers={"Retry-After": "1"}), httpx.Response(200, content=b"{}")])
    said: list[str] = []
    with polite_client(httpx.MockTransport(lambda r: next(answers)), sleep=no_sleep, say=said.append) as client:
        assert client.get("https://rdap.verisign.com/com/v1/domain/example.com").status_code == 200
    assert said and said[0].startswith("rdap.verisign.com: HTTP 429; retry 1 of"), said


def test_nameservers_at_a_parking_service_mark_a_name_parked_without_the_archive(tmp_path):
    """An RDAP-only run (or a name the archive never captured) still learns the parking
    service from the nameservers: `exclude_parked` leaves the name out."""
    body = json.loads(rdap_fixture("verisign_com_example.com_2021-06.json"))
    body["ldhName"] = "PARKEDNAME.COM"
    body["nameservers"] = [
        {"objectClassName": "nameserver", "ldhName": host} for host in ("NS1.SEDOPARKING.COM", "NS2.SEDOPARKING.COM")
    ]
    mirror = make_mirror(tmp_path, [{"id": 21, "name": "parkedname.com", "source": "sedo", "type": "auction"}])
    web = FakeWeb(
        {
            ("data.iana.org", "/rdap/dns.json", None, None): [ok(bootstrap_bytes())],
            rdap_route("rdap.verisign.com", "/com/v1/domain/parkedname.com"): [
                ok(json.dumps(body).encode(), "application/rdap+json")
            ],
        }
    )
    enrich(mirror, wayback=False, transport=httpx.MockTransport(web), sleep=no_sleep)
    row = record(mirror, 21)
    assert row["whois_nameservers"] == ["ns1.sedoparking.com", "ns2.sedoparking.com"]
    assert (row["archive_parked"], row["archive_parked_reason"]) == (1, "nameservers at sedoparking.com")
    assert mirror.search_domains({"exclude_parked": "1", "contains": "parkedname"})["meta"]["total"] == 0
