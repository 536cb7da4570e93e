"""`edt serve`: the HTTP replica over httpx's ASGI transport, every contract status, and
one real `edt serve` subprocess on a loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from conftest import fixed_clock  # noqa: E402
from toolkit import ApiError, Mirror  # noqa: E402
from toolkit.serve.ratelimit import KeyStore, SlidingWindow, effective_limits, hash_key, parse_rates  # noqa: E402
from toolkit.serve.server import create_app, is_loopback, startup_lines  # noqa: E402

KEYS = {
    "free-key": "free",
    "pro-key": "pro",
    "authority-key": "authority",
    "aplus-key": "Authority+",
    "business-key": "business",
    "enterprise-key": "enterprise",
}
BASE = "http://testserver"


class FakeTime:
    """A monotonic clock the tests move by hand (the rate limiter's window)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Client:
    """Requests to the app over httpx's ASGI transport, from a chosen client address."""

    def __init__(self, app):
        self.app = app

    def get(
        self,
        url: str,
        key: str | None = None,
        *,
        address: str = "127.0.0.1",
        headers: dict | None = None,
        method: str = "GET",
    ) -> httpx.Response:
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"

        async def go():
            transport = httpx.ASGITransport(app=self.app, client=(address, 50000))
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                return await client.request(method, url, headers=sent)

        return asyncio.run(go())


@pytest.fixture()
def clock() -> FakeTime:
    return FakeTime()


@pytest.fixture()
def app(synthetic_db, clock):
    return create_app(synthetic_db, KEYS, clock=fixed_clock, rate_clock=clock)


@pytest.fixture()
def api(app) -> Client:
    return Client(app)


@pytest.fixture()
def mirror(synthetic_db):
    with Mirror(synthetic_db, clock=fixed_clock, readonly=True) as m:
        yield m


def rate_headers(response) -> tuple[int, int]:
    return int(response.headers["X-RateLimit-Limit"]), int(response.headers["X-RateLimit-Remaining"])


# -- 200: envelope, links, records ------------------------------------------------------------


def test_domains_page_is_the_query_layer_envelope_with_absolute_links(api, mirror):
    params = {"tld": ".fr,.de", "score_min": "10", "per_page": "5", "sort": "-trust_flow", "unknown": "kept"}
    response = api.get("/api/domains?" + "&".join(f"{k}={v}" for k, v in params.items()), "pro-key")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    expected = mirror.search_domains(params, "pro", url=f"{BASE}/api/domains", strict=False)
    assert body == expected
    assert body["meta"]["total"] > 10 and body["meta"]["path"] == f"{BASE}/api/domains"
    # links are absolute and keep every filter of the request
    for name in ("first", "last", "next"):
        link = urlsplit(body["links"][name])
        assert f"{link.scheme}://{link.netloc}{link.path}" == f"{BASE}/api/domains"
        query = dict(parse_qsl(link.query))
        assert {k: v for k, v in query.items() if k != "page"} == params
    assert body["links"]["prev"] is None
    # following `next` gives page 2
    second = api.get(body["links"]["next"], "pro-key").json()
    assert second["meta"]["current_page"] == 2
    assert [r["id"] for r in second["data"]] == [
        r["id"] for r in mirror.search_domains({**params, "page": "2"}, "pro", strict=False)["data"]
    ]


def test_links_follow_the_host_the_client_used(api):
    body = api.get("/api/domains?per_page=1", "pro-key", headers={"Host": "mirror.lan:8123"}).json()
    assert body["links"]["next"].startswith("http://mirror.lan:8123/api/domains?")
    # a malformed Host never lands in a link
    body = api.get("/api/domains?per_page=1", "pro-key", headers={"Host": "evil.test/<x>"}).json()
    assert "evil" not in json.dumps(body["links"]) and body["links"]["first"].startswith("http://")


def test_cursor_mode_has_the_cursor_object_and_a_next_link(api, mirror):
    body = api.get("/api/domains?after_id=0&per_page=3&tld=.com", "pro-key").json()
    assert body["cursor"] == {
        "after_id": 0,
        "next_after_id": body["data"][-1]["id"],
        "has_more": True,
        "order": "id asc",
    }
    ids = [r["id"] for r in body["data"]]
    assert ids == sorted(ids)
    following = dict(parse_qsl(urlsplit(body["links"]["next"]).query))
    assert following == {"after_id": str(ids[-1]), "per_page": "3", "tld": ".com"}
    nxt = api.get(body["links"]["next"], "pro-key").json()
    assert nxt["data"][0]["id"] > ids[-1]


def test_get_domain_and_pending_delete(api, mirror):
    some = mirror.search_domains({"per_page": "1"})["data"][0]
    response = api.get(f"/api/domains/{some['id']}", "pro-key")
    assert response.status_code == 200 and response.json() == mirror.get_domain(some["id"])
    assert api.get(f"/api/domains/{some['id']}/", "pro-key").json() == response.json()  # a trailing slash is ignored
    page = api.get("/api/pending-delete?per_page=2&sort=domain", "aplus-key").json()
    assert page == mirror.search_pending_delete({"per_page": "2", "sort": "domain"}, url=f"{BASE}/api/pending-delete")
    domain = page["data"][0]["domain"]
    one = api.get(f"/api/pending-delete/{domain.upper()}", "aplus-key")
    assert one.status_code == 200 and one.json()["data"]["domain"] == domain


def test_openapi_and_home_page(api):
    doc = api.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and doc["servers"][0]["url"] == BASE
    home = api.get("/")
    assert home.status_code == 200 and "text/html" in home.headers["content-type"]
    assert 'href="/openapi.json"' in home.text and "/api/domains" in home.text


# -- 401 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": "Bearer "},
        {"Authorization": "Token pro-key"},
        {"Authorization": "pro-key"},
        {"Authorization": "Basic cHJvLWtleTo="},
        {"X-API-Key": "pro-key"},
    ],
)
def test_missing_or_unknown_key_is_401(api, headers):
    for path in ("/api/domains", "/api/domains/3", "/api/pending-delete", "/api/pending-delete/x.fr", "/api/export"):
        response = api.get(path, headers=headers)
        body = response.json()
        assert (
            response.status_code == 401 and list(body) == ["message"] and body["message"].startswith("Unauthenticated.")
        )
        assert "Authorization: Bearer KEY" in body["message"] and "pro-key" not in body["message"]
        assert "X-RateLimit-Limit" not in response.headers


def test_bearer_scheme_is_case_insensitive_and_key_is_exact(api):
    assert api.get("/api/domains?per_page=1", headers={"Authorization": "bearer pro-key"}).status_code == 200
    assert api.get("/api/domains?per_page=1", headers={"Authorization": "Bearer  pro-key "}).status_code == 200
    assert api.get("/api/domains?per_page=1", headers={"Authorization": "Bearer PRO-KEY"}).status_code == 401
    assert api.get("/api/domains?per_page=1", headers={"Authorization": "Bearer pro-key2"}).status_code == 401


# -- 403 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, key, plan, call",
    [
        ("/api/domains", "free-key", "free", lambda m, plan: m.search_domains({}, plan)),
        ("/api/domains/3", "free-key", "free", lambda m, plan: m.get_domain(3, plan)),
        (
            "/api/domains?source=Regfree",
            "pro-key",
            "pro",
            lambda m, plan: m.search_domains({"source": "Regfree"}, plan),
        ),
        ("/api/pending-delete", "authority-key", "authority", lambda m, plan: m.search_pending_delete({}, plan)),
        ("/api/pending-delete/x.fr", "pro-key", "pro", lambda m, plan: m.get_pending_delete("x.fr", plan)),
        ("/api/export", "aplus-key", "authority_plus", lambda m, plan: m.export_rows({}, plan)),
    ],
)
def test_plan_required_is_the_query_layers_403(api, mirror, path, key, plan, call):
    response = api.get(path, key)
    with pytest.raises(ApiError) as expected:
        call(mirror, plan)
    assert response.status_code == 403 == expected.value.status
    # the query layer's body, plus the link the live service's plan error carries
    assert response.json() == {**expected.value.body, "upgrade_url": "http://testserver/#plans"}
    assert response.json()["error"] == "plan_required"
    assert rate_headers(response)[0] == effective_limits()[plan]


def test_regfree_row_by_id_needs_authority(api, mirror):
    regfree = mirror.search_domains({"source": "regfree", "per_page": "1"})["data"][0]
    assert api.get(f"/api/domains/{regfree['id']}", "pro-key").json()["required_plan"] == "authority"
    assert api.get(f"/api/domains/{regfree['id']}", "authority-key").status_code == 200
    assert api.get("/api/domains?source=regfree&per_page=2", "authority-key").json()["data"][0]["source"] == "regfree"


def test_cursor_with_regfree_is_403_cursor_not_available(api):
    response = api.get("/api/domains?after_id=0&source=regfree", "enterprise-key")
    assert response.status_code == 403 and response.json()["error"] == "cursor_not_available"
    assert response.json()["docs"] == "http://testserver/#cursor"  # as the live body: error, message, docs
    assert "X-RateLimit-Remaining" in response.headers


def test_the_403_links_point_at_sections_of_the_home_page(api):
    home = api.get("/").text
    for path, key, field in (
        ("/api/pending-delete", "pro-key", "upgrade_url"),
        ("/api/domains?after_id=0&source=regfree", "enterprise-key", "docs"),
    ):
        link = api.get(path, key).json()[field]
        assert link.startswith("http://testserver/#") and f'id="{link.rsplit("#", 1)[1]}"' in home
    assert "edt serve --key KEY=PLAN" in home and "access /api/pending-delete" in home


# -- 404 -----------------------------------------------------------------------------------------


# Paths of a record that is not there (or of no id at all): a JSON 404.
NO_SUCH_RECORD = [
    *(f"/api/domains/{id_}" for id_ in ("4", "abc", "-3", "1e3", "99999999999999999999999", "%00", "1_000")),
    *(f"/api/pending-delete/{name}" for name in ("no-such.fr", "%E2%80%A2")),
]


@pytest.mark.parametrize("path", NO_SUCH_RECORD)
def test_not_found(api, path):
    response = api.get(path, "enterprise-key")
    assert response.status_code == 404 and response.json() == {"message": "Not found."}
    assert rate_headers(response) == (300, 299)


@pytest.mark.parametrize(
    "path", ["/nope", "/api", "/api/domains/1/2", "/api/free", "/openapi.yaml", "/api/pending-delete/a/b"]
)
def test_unknown_paths_are_json_404(api, path):
    response = api.get(path, "pro-key")
    assert response.status_code == 404 and response.json() == {"message": "Not found."}


def test_other_methods_are_json_405(api):
    response = api.get("/api/domains", "pro-key", method="POST")
    assert response.status_code == 405 and response.json()["message"].startswith("Method not allowed")
    assert api.get("/api/domains?per_page=1", "pro-key", method="HEAD").status_code == 200


# -- 422 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, field",
    [
        ("tf_min=abc", "tf_min"),
        ("tf_min=101", "tf_min"),
        ("per_page=0", "per_page"),
        ("type=foo", "type"),
        ("categories=Nope", "categories"),
        ("has_bids=maybe", "has_bids"),
        ("created_after=yesterday", "created_after"),
        ("source=nosuch", "source"),
        ("sort=-nope", "sort"),
        ("page=0", "page"),
        ("price_min=nan", "price_min"),
    ],
)
def test_malformed_parameter_is_422_naming_the_field(api, query, field):
    response = api.get(f"/api/domains?{query}", "pro-key")
    assert response.status_code == 422
    body = response.json()
    assert set(body) == {"message", "errors"} and list(body["errors"]) == [field] and body["errors"][field][0]
    assert rate_headers(response) == (15, 14)


def test_422_on_every_listing_endpoint(api):
    assert api.get("/api/pending-delete?drops_within=61", "aplus-key").json()["errors"].keys() == {"drops_within"}
    assert api.get("/api/free/domains?limit=51").json()["errors"].keys() == {"limit"}
    assert api.get("/api/export?format=xml", "business-key").json()["errors"].keys() == {"format"}
    assert api.get("/api/export?tf_min=x", "business-key").json()["errors"].keys() == {"tf_min"}


# -- 429 and the rate-limit headers ---------------------------------------------------------------------


def test_rate_limit_per_key_sliding_window(api, clock):
    for expected_remaining in range(14, -1, -1):
        response = api.get("/api/domains?per_page=1", "pro-key")
        assert response.status_code == 200 and rate_headers(response) == (15, expected_remaining)
        clock.now += 1  # 15 requests over 15 seconds
    refused = api.get("/api/domains?per_page=1", "pro-key")
    assert refused.status_code == 429 and refused.json() == {"message": "Too Many Attempts."}
    assert refused.headers["Retry-After"] == "60" and rate_headers(refused) == (15, 0)
    # another key, another bucket
    assert rate_headers(api.get("/api/domains?per_page=1", "authority-key")) == (60, 59)
    # a refused request does not count; the first request leaves the window 60 s after it was made
    clock.now = 1000.0 + 60.5
    response = api.get("/api/domains?per_page=1", "pro-key")
    assert response.status_code == 200 and rate_headers(response) == (15, 0)
    assert api.get("/api/domains?per_page=1", "pro-key").status_code == 429
    clock.now += 1
    assert api.get("/api/domains?per_page=1", "pro-key").status_code == 200


def test_every_keyed_answer_counts_and_carries_the_headers(api):
    statuses = [
        api.get(path, "pro-key").status_code
        for path in (
            "/api/domains?per_page=1",
            "/api/domains?tf_min=x",
            "/api/domains/4",
            "/api/pending-delete",
            "/api/export",
        )
    ]
    assert statuses == [200, 422, 404, 403, 403]
    assert rate_headers(api.get("/api/domains?per_page=1", "pro-key")) == (15, 9)


def test_rate_overrides(synthetic_db, caplog):
    with caplog.at_level(logging.WARNING, logger="toolkit.serve.server"):
        app = create_app(synthetic_db, KEYS, {"pro": 2, "free": 1}, clock=fixed_clock)
    assert "overridden: pro 2" in caplog.text  # never silently
    client = Client(app)
    assert [client.get("/api/domains?per_page=1", "pro-key").status_code for _ in range(3)] == [200, 200, 429]
    assert [client.get("/api/free/domains").status_code for _ in range(2)] == [200, 429]
    assert effective_limits({"enterprise": 5000})["enterprise"] == 5000 and effective_limits()["business"] == 300
    assert parse_rates(["pro=600", "Authority+=90"]) == {"pro": 600, "authority_plus": 90}
    for bad in (["pro"], ["pro=x"], ["pro=0"], ["gold=5"]):
        with pytest.raises(ValueError):
            parse_rates(bad)


def test_sliding_window_unit():
    now = [0.0]
    window = SlidingWindow(clock=lambda: now[0])
    assert [window.hit("a", 2).allowed for _ in range(3)] == [True, True, False]
    now[0] = 59.9
    assert not window.hit("a", 2).allowed
    now[0] = 60.01
    decision = window.hit("a", 2)
    assert (
        decision.allowed
        and decision.remaining == 1
        and decision.headers() == {"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1"}
    )
    assert window.hit("a", 2).remaining == 0
    assert window.hit("a", 2).headers() == {"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "Retry-After": "60"}
    assert window.hit("b", 2).allowed


# -- the free endpoint ------------------------------------------------------------------------------------


def test_free_endpoint_masks_names_and_omits_premium_metrics(api, mirror):
    response = api.get("/api/free/domains?limit=8")
    assert response.status_code == 200 and response.headers["Access-Control-Allow-Origin"] == "*"
    body = response.json()
    assert body == mirror.free_domains({"limit": "8"})
    names = [row["name"] for row in body["data"]]
    assert len(names) == 8 and all("•" not in n for n in names[:3])
    assert all(n.startswith("••••••••.") for n in names[3:]) and all(
        r["purchase_url"] is None for r in body["data"][3:]
    )
    for row in body["data"]:
        assert not {"trust_flow", "citation_flow", "ttf_topic", "has_gmb"} & set(row)
    assert rate_headers(response) == (3, 2)


def test_free_endpoint_is_limited_per_client_address(api):
    assert [api.get("/api/free/domains?limit=1", address="10.0.0.1").status_code for _ in range(3)] == [200] * 3
    refused = api.get("/api/free/domains?limit=1", address="10.0.0.1")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert refused.json() == {"message": "Too Many Attempts."} and refused.headers["Access-Control-Allow-Origin"] == "*"
    # a key does not lift it, a forwarded-for header does not dodge it; another address is fresh
    assert api.get("/api/free/domains", "enterprise-key", address="10.0.0.1").status_code == 429
    assert api.get("/api/free/domains", address="10.0.0.1", headers={"X-Forwarded-For": "1.2.3.4"}).status_code == 429
    assert api.get("/api/free/domains?limit=1", address="10.0.0.2").status_code == 200


def test_free_endpoint_cors_preflight(api):
    response = api.get(
        "/api/free/domains",
        method="OPTIONS",
        headers={"Origin": "https://x.test", "Access-Control-Request-Method": "GET"},
    )
    assert response.status_code == 204 and response.headers["Access-Control-Allow-Origin"] == "*"


# -- export ----------------------------------------------------------------------------------------------------


def test_export_ndjson_is_every_matching_row(api, mirror):
    response = api.get("/api/export?tld=.com,.fr&include_closed=1&per_page=3", "business-key")
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    assert rate_headers(response) == (300, 299) and "attachment" in response.headers["content-disposition"]
    rows = [json.loads(line) for line in response.text.splitlines()]
    assert rows == list(mirror.export_rows({"tld": ".com,.fr", "include_closed": "1"}, "business"))
    assert len(rows) > 100  # no paging
    # Paging is not the export's: the API ignores it as any unknown name, the Python API refuses it.
    for paging in ("page=0", "after_id=-5", f"after_id={rows[len(rows) // 2]['id']}", "limit=2"):
        ignored = api.get(f"/api/export?tld=.com,.fr&include_closed=1&{paging}", "business-key")
        assert ignored.status_code == 200 and len(ignored.text.splitlines()) == len(rows), paging
    with pytest.raises(ApiError) as refused:
        list(mirror.export_rows({"tld": ".com", "after_id": "5"}, "business"))
    assert refused.value.status == 422 and list(refused.value.body["errors"]) == ["after_id"]


def test_a_long_suffix_list_on_pending_delete_is_an_answer(api, mirror):
    many = ",".join(f"t{n}" for n in range(1000))
    response = api.get(f"/api/pending-delete?tld={many},uk&per_page=1", "aplus-key")
    assert response.status_code == 200, response.text
    assert (
        response.json()["meta"]["total"]
        == mirror.search_pending_delete({"tld": "uk"}, "authority_plus")["meta"]["total"]
    )


def test_export_csv(api, mirror):
    response = api.get("/api/export?format=csv&source=sedo", "enterprise-key")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(response.text)))
    expected = list(mirror.export_rows({"source": "sedo"}, "enterprise"))
    assert [int(r["id"]) for r in table] == [r["id"] for r in expected]
    assert "historical_traffic" not in table[0] and "name" in table[0]
    with_tech = next(i for i, r in enumerate(expected) if r["historical_tech"])
    assert json.loads(table[with_tech]["historical_tech"]) == expected[with_tech]["historical_tech"]
    empty = api.get("/api/export?format=csv&contains=zzzzzz", "enterprise-key")
    assert empty.status_code == 200 and empty.text.startswith("id,name,") and len(empty.text.splitlines()) == 1


def test_export_streams_in_bounded_chunks(app, mirror):
    """Straight at the ASGI interface: several body messages, each bounded, sent as produced."""
    sent: list[dict] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/export",
        "raw_path": b"/api/export",
        "query_string": b"include_closed=1",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"authorization", b"Bearer business-key")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }

    async def receive():
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    bodies = [m["body"] for m in sent[1:] if m["body"]]
    assert len(bodies) > 5 and max(map(len, bodies)) < 80 * 1024
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    lines = b"".join(bodies).decode().splitlines()
    assert len(lines) == sum(1 for _ in mirror.export_rows({"include_closed": "1"}))


# -- robustness ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/api/domains?tld=%00",
        "/api/domains?contains=%22%27%2A%28%29%00",
        "/api/domains?contains=%FF%FE",
        "/api/domains?tld=" + "x" * 20000,
        "/api/domains?per_page=1&per_page=2",
        "/api/domains?page=99999999999999999999",
        "/api/domains?tf_min=%EF%BC%91",
        "/api/domains?price_max=1e309",
        "/api/domains?created_after=2026-02-30",
        "/api/domains?&&&=&==",
        "/api/domains?tld[]=.fr",
        "/api/domains?contains=NEAR(a%20b)",
        "/api/domains?contains=a*",
        "/api/domains?sort=",
        "/api/pending-delete?week_end=%00",
        "/api/pending-delete/%27%20OR%201%3D1--",
        "/api/free/domains?contains=%25%25%25",
        "/api/export?format=%00",
        "/api/domains?after_id=-1",
        "/api/domains?after_id=99999999999999999999",
        "/api/domains?language=%F0%9F%98%80",
    ],
)
def test_odd_requests_get_a_json_2xx_or_4xx(api, url):
    response = api.get(url, "enterprise-key")
    assert 200 <= response.status_code < 500, (url, response.status_code, response.text[:200])
    assert response.headers["content-type"].split(";")[0] in ("application/json", "application/x-ndjson")
    if response.headers["content-type"] == "application/json":
        response.json()


def test_odd_headers(api, synthetic_db):
    for headers in (
        {"Authorization": "Bearer \u00e9t\u00e9".encode()},
        {"Authorization": b"Bearer \xff\xfe"},
        {"Authorization": "Bearer " + "k" * 10000},
        {"Cookie": b"\x80"},
        {"Host": ""},
        {"Host": "[::1]:99"},
        {"Authorization": "Bearer"},
        {"Accept": "text/html"},
    ):
        response = api.get("/api/domains?per_page=1", headers=headers)
        assert response.status_code in (200, 401) and response.json()
    utf8 = Client(create_app(synthetic_db, {"cl\u00e9": "pro"}, clock=fixed_clock))
    assert utf8.get("/api/domains?per_page=1", headers={"Authorization": "Bearer cl\u00e9".encode()}).status_code == 200


def test_unexpected_errors_are_logged_without_the_key_and_answered_400(app, caplog, monkeypatch):
    def boom(*args, **kwargs):
        raise ValueError("something odd")

    monkeypatch.setattr(app.state.mirror, "search_domains", boom)
    with caplog.at_level(logging.DEBUG):
        response = Client(app).get("/api/domains", "pro-key")
    assert response.status_code == 400 and set(response.json()) == {"message"}
    assert "Traceback" not in response.text and "something odd" not in response.text
    assert "something odd" in caplog.text and "pro-key" not in caplog.text
    assert rate_headers(response) == (15, 14)

    def crash(*args, **kwargs):
        raise RuntimeError("deeper")

    monkeypatch.setattr(app.state.mirror, "search_domains", crash)
    response = Client(app).get("/api/domains", "pro-key")
    assert response.status_code == 400 and "deeper" not in response.text and rate_headers(response) == (15, 13)

    async def broken(scope, receive, send):  # outside the query layer: the guard answers
        raise KeyError("routing")

    monkeypatch.setattr(app.router.routes[0], "app", broken)
    with caplog.at_level(logging.ERROR):
        response = Client(app).get("/")
    assert "routing" in caplog.text
    assert response.status_code == 400 and response.json() == {"message": response.json()["message"]}


def test_a_locked_mirror_is_503_with_retry_after(app, monkeypatch):
    import sqlite3

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(app.state.mirror, "search_domains", locked)
    response = Client(app).get("/api/domains", "pro-key")
    assert (
        response.status_code == 503 and response.headers["Retry-After"] == "60" and response.json()["error"] == "busy"
    )
    # the pending-delete routes answer with the live service's code for it
    monkeypatch.setattr(app.state.mirror, "search_pending_delete", locked)
    response = Client(app).get("/api/pending-delete", "enterprise-key")
    assert response.status_code == 503 and response.headers["Retry-After"] == "60"
    assert response.json()["error"] == "count_busy"


# -- keys ----------------------------------------------------------------------------------------------------


def test_keys_are_held_hashed_and_compared_in_constant_time(tmp_path):
    store = KeyStore({"s3cret-key": "pro"})
    assert "s3cret-key" not in repr(store) and "s3cret-key" not in repr(vars(store))
    assert store.lookup("s3cret-key").plan == "pro" and store.lookup("s3cret-ke") is None and store.lookup(None) is None
    assert "s3cret" not in repr(store.lookup("s3cret-key"))
    text = tmp_path / "keys.txt"
    text.write_text(
        f"# team keys\nalpha=pro\n\nbeta=Authority+\nsha256:{hash_key('gamma')}=business\nb64key==enterprise\n"
    )
    store = KeyStore()
    store.load_file(text)
    assert {k: store.lookup(k).plan for k in ("alpha", "beta", "gamma", "b64key=")} == {
        "alpha": "pro",
        "beta": "authority_plus",
        "gamma": "business",
        "b64key=": "enterprise",
    }
    assert store.plans() == {"pro": 1, "authority_plus": 1, "business": 1, "enterprise": 1}
    as_json = tmp_path / "keys.json"
    as_json.write_text(json.dumps([{"key": "delta", "plan": "pro"}]))
    store.load_file(as_json)
    assert store.lookup("delta").plan == "pro"
    as_json.write_text(json.dumps({"epsilon": "authority"}))
    store.load_file(as_json)
    assert store.lookup("epsilon").plan == "authority"
    for bad in ("novalue\n", "k=gold\n", "sha256:abc=pro\n", "{not json", '["x"]', "has space=pro\n"):
        text.write_text(bad)
        with pytest.raises(ValueError):
            KeyStore().load_file(text)
    text.write_text(f"a=pro\nb=free\nsha256:{hash_key('a')}=business\n")  # one key, two plans: which?
    with pytest.raises(ValueError) as twice:
        KeyStore().load_file(text)
    assert str(twice.value) == f"{text}: line 3: this key was given already, for pro: give each key one plan"
    text.write_text("a=pro\na=Pro\n")  # the same plan again is the same key
    assert KeyStore().load_file(text) is None


def test_startup_lines_say_where_and_warn():
    keys = KeyStore({"a": "pro"})
    local = "\n".join(startup_lines("m.db", "127.0.0.1", 8000, keys, None))
    assert "only this machine" in local and "1 pro" in local and "WARNING" not in local
    shared = "\n".join(startup_lines("m.db", "0.0.0.0", 8000, KeyStore(), {"pro": 600}))
    assert "WARNING" in shared and "no keys" in shared and "pro 600 (OVERRIDDEN" in shared
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("0.0.0.0")


def test_cli_serve_refuses_bad_arguments(synthetic_db, tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    def run(*args):
        return CliRunner().invoke(cli, ["serve", *args])

    assert run("--db", str(tmp_path / "none.db")).exit_code == 2
    assert run("--db", str(synthetic_db), "--key", "novalue").exit_code == 2
    assert run("--db", str(synthetic_db), "--key", "k=gold").exit_code == 2
    assert run("--db", str(synthetic_db), "--rate", "pro=abc").exit_code == 2
    assert run("--db", str(synthetic_db), "--keys-file", str(tmp_path / "missing.txt")).exit_code == 2
    not_a_mirror = tmp_path / "x.db"
    not_a_mirror.write_text("hello")
    assert run("--db", str(not_a_mirror)).exit_code == 2


# -- a real server ----------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_edt_serve_subprocess_on_loopback(synthetic_db, tmp_path):
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolkit",
                "serve",
                "--db",
                str(synthetic_db),
                "--port",
                str(port),
                "--key",
                "k=pro",
                "--rate",
                "free=100",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=Path(__file__).resolve().parents[1],
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(f"{base}/openapi.json", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "edt serve did not answer within 20 s:\n" + log_path.read_text()
                time.sleep(0.2)
            page = httpx.get(
                f"{base}/api/domains?per_page=2&tld=.fr", headers={"Authorization": "Bearer k"}, timeout=10
            )
            assert page.status_code == 200 and page.headers["X-RateLimit-Limit"] == "15"
            body = page.json()
            assert len(body["data"]) == 2 and body["links"]["next"].startswith(f"{base}/api/domains?")
            assert httpx.get(f"{base}/api/domains", timeout=10).status_code == 401
            assert httpx.get(f"{base}/api/free/domains", timeout=10).status_code == 200
            assert (
                httpx.get(f"{base}/api/domains/abc", headers={"Authorization": "Bearer k"}, timeout=10).status_code
                == 404
            )
            # A key sent in the query as well is not read, not written into the links, not logged.
            keyed = httpx.get(
                f"{base}/api/domains?api_key=k&per_page=1&tf_min=5&tf_min=5",
                headers={"Authorization": "Bearer k"},
                timeout=10,
            )
            assert keyed.status_code == 200 and "api_key" not in json.dumps(keyed.json()["links"])
            assert "tf_min=5&page=2" in keyed.json()["links"]["next"]  # one tf_min: the link answers too
            assert httpx.get(keyed.json()["links"]["next"], headers={"Authorization": "Bearer k"}).status_code == 200
            assert httpx.get(f"{base}/api/domains?api%5Fkey=k", timeout=10).status_code == 401
            # A client's text is never a line of its own in the log.
            httpx.post(f"{base}/mcp/catchdoms/free?session_id=zz%0aFORGED-LINE", json={}, timeout=10)
        finally:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
            process.kill()  # only if it is still running after 10 s
            process.wait()
    output = log_path.read_text()
    assert "only this machine" in output and "OVERRIDDEN" in output
    assert "Bearer" not in output and "k=pro" not in output  # the key is never logged
    assert "api_key=k" not in output and "api%5Fkey=k" not in output and "api_key=(left out)" in output
    assert "zz\\x0aFORGED-LINE" in output and not any(line.startswith("FORGED") for line in output.splitlines())


def test_a_pending_delete_tld_is_its_suffix_family_over_http(api, mirror):
    """`uk` means every .uk suffix in the HTTP API as in the query layer (and so the CLI and app)."""
    body = api.get("/api/pending-delete?tld=uk&include_past=1&per_page=200", "aplus-key").json()
    assert body["meta"]["total"] > 0 and {r["tld"] for r in body["data"]} == {"co.uk"}
    exact = mirror.search_pending_delete({"tld": "co.uk", "include_past": "1"})["meta"]["total"]
    assert body["meta"]["total"] == exact
