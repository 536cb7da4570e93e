"""The MCP server (toolkit.serve.mcp_server): the live server card's five tools over the SDK's
in-memory client, their input schemas (derived from the parameter definitions), plan gating
and errors with the REST API's messages; streamable HTTP through `create_app` (in-process
ASGI, and once on a real loopback port); stdio through `python -m toolkit mcp`; and the
toolkit without `mcp` installed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

import httpx  # noqa: E402  - the toolkit's own HTTP client, for the REST side only
import httpx2  # noqa: E402  - the SDK's HTTP client, for the MCP side only
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from conftest import REFERENCE, small_demo  # noqa: E402
from toolkit import ApiError, Mirror  # noqa: E402
from toolkit.demo import demo_day  # noqa: E402
from toolkit.demo.clock import anchor_of  # noqa: E402
from toolkit.serve.mcp_server import (  # noqa: E402
    COMPACT_FIELDS,
    GET_DOMAIN_ALIASES,
    MAX_RESULT_WINDOW,
    MCP_ALIASES,
    MCP_FREE_PATH,
    MCP_PATH,
    TOOL_NAMES,
    EXTENSION_TOOLS,
    build_server,
)
from toolkit.query.params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS  # noqa: E402
from toolkit.serve.mcp_tools import SORT_ALIASES  # noqa: E402
from toolkit.plans import PLANS  # noqa: E402
from toolkit.serve.server import BackgroundServer, create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# One frozen "now" for the tools and the oracle: on the demo's day (`demo_day`: yesterday before
# 07:00 UTC), an hour after its morning fetch, so "today" holds the demo's newest listings.
NOW = anchor_of(demo_day()) + timedelta(hours=1)
KEYS = {"pro-key": "pro", "authority-key": "authority", "aplus-key": "authority_plus", "free-key": "free"}
NO_LIMITS = {plan: 1_000_000 for plan in PLANS}
JSON_TYPES = {
    "int": "integer",
    "number": "number",
    "flag": "boolean",
    "choice": "string",
    "date": "string",
    "week": "string",
    "text": "string",
}


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> Path:

    path = tmp_path_factory.mktemp("mcp") / "demo.db"
    small_demo(path, 9)
    return path


@pytest.fixture(scope="module")
def mirror(demo_db) -> Mirror:
    return Mirror(demo_db, readonly=True, clock=lambda: NOW)


@pytest.fixture(scope="module")
def servers(mirror):
    """One server per plan (and the free endpoint's), over the same frozen mirror."""
    built = {plan: build_server(mirror, plan) for plan in PLANS}
    built["free-endpoint"] = build_server(mirror, free=True)
    return built


def session(server, *calls: tuple[str, dict]) -> list:
    """Call tools in order over one in-memory client session; the CallToolResults."""

    async def go():
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(go())


def call(server, name: str, args: dict | None = None):
    return session(server, (name, args or {}))[0]


def tools_of(server) -> dict:
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools

    return {tool.name: tool for tool in asyncio.run(go())}


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content  # text and data agree
    return result.structured_content


def refused(result) -> tuple[str, dict]:
    assert result.is_error
    return result.content[0].text, result.structured_content


def api_error(fn, *args, **kwargs) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args, **kwargs)
    return info.value


def ids(rows: list[dict]) -> list[int]:
    return [row["id"] for row in rows]


# -- the tools and their schemas -------------------------------------------------------------------


def test_tools_are_the_live_server_cards(servers):
    card_file = REFERENCE / "well-known" / "catchdoms-mcp-server-card.json"
    # The live card's tools: the names contract section 9 gives.
    expected = [tool["name"] for tool in json.loads(card_file.read_text())["capabilities"]["tools"]]
    assert expected == ["search_domains", "search_pending_delete_domains", "get_domain", "list_filters", "get_stats"]
    assert list(TOOL_NAMES) == expected
    for plan, server in servers.items():
        tools = tools_of(server)
        # the card's, then the toolkit's own (documented as extensions), never on the free endpoint
        assert list(tools) == expected + ([] if plan == "free-endpoint" else list(EXTENSION_TOOLS))
        for tool in tools.values():
            assert len(tool.description) > 40
            assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
            assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
            assert not tool.input_schema.get("required")  # every argument is optional
            assert tool.output_schema["type"] == "object"


def _check_property(prop: dict, param) -> None:
    assert param.description in prop["description"]
    schema = prop["anyOf"][0] if param.kind == "list" else prop
    if param.kind == "list":
        assert prop["anyOf"][1] == {"type": "array", "items": {"type": "string"}}
        assert schema["type"] == "string"
    else:
        assert schema["type"] == JSON_TYPES[param.kind], param.name
    if param.minimum is not None:
        assert schema["minimum"] == param.minimum, param.name
    if param.maximum is not None:
        assert schema["maximum"] == param.maximum, param.name
    if param.kind == "choice" or (param.kind == "text" and param.choices):
        extra = [f"{sign}{a}" for sign in ("", "-") for a in SORT_ALIASES] if param is DOMAIN_PARAMS["sort"] else []
        assert schema["enum"] == [*param.choices, *extra], param.name  # sort: the live card's short names too
    if param.kind == "list" and param.choices:
        assert all(choice in prop["description"] for choice in param.choices)
    if param.kind == "date":
        assert schema["format"] == "date"


def test_search_domains_takes_every_api_filter_with_its_definition(servers):
    props = tools_of(servers["pro"])["search_domains"].input_schema["properties"]
    filters = [name for name in DOMAIN_PARAMS if name not in ("per_page", "limit", "page", "after_id")]
    assert list(props) == filters + ["added_on", "page", "limit", "fields"]
    for name in filters:
        _check_property(props[name], DOMAIN_PARAMS[name])
    assert (
        props["sort"]["enum"][: len(DOMAIN_PARAMS["sort"].choices)] == list(DOMAIN_PARAMS["sort"].choices)
        and "-score" in props["sort"]["enum"]
    )
    assert props["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 50,
        "description": DOMAIN_PARAMS["per_page"].description,
    }
    assert (
        props["page"]["type"] == "integer" and props["page"]["minimum"] == 1 and "2,000" in props["page"]["description"]
    )
    assert props["fields"]["enum"] == ["full", "compact"]
    assert props["added_on"]["format"] == "date"


def test_pending_and_free_and_get_domain_schemas(servers):
    pending = tools_of(servers["pro"])["search_pending_delete_domains"].input_schema["properties"]
    assert list(pending) == [n for n in PENDING_PARAMS if n not in ("per_page", "page")] + ["page", "limit"]
    for name in pending:
        _check_property(pending[name], PENDING_PARAMS["per_page" if name == "limit" else name])
    assert pending["limit"]["maximum"] == 200 and pending["status"]["anyOf"][0]["type"] == "string"

    free = tools_of(servers["free-endpoint"])["search_domains"].input_schema["properties"]
    assert list(free) == list(FREE_PARAMS)  # no page, sort, TF/CF or categories on the free tier
    for name in free:
        _check_property(free[name], FREE_PARAMS[name])
    assert free["limit"]["maximum"] == 50 and "sedo" not in free["source"]["enum"]

    get = tools_of(servers["pro"])["get_domain"].input_schema
    assert get["properties"]["id"]["type"] == "integer" and get["properties"]["id"]["minimum"] == 1
    assert get["properties"]["name"]["type"] == "string"
    for name in ("list_filters", "get_stats"):
        assert tools_of(servers["pro"])[name].input_schema["properties"] == {}


def test_the_schema_follows_a_changed_definition(monkeypatch, mirror):
    changed = dataclasses.replace(DOMAIN_PARAMS["tf_min"], description="Changed on purpose.", maximum=50)
    monkeypatch.setitem(DOMAIN_PARAMS, "tf_min", changed)
    prop = tools_of(build_server(mirror, "pro"))["search_domains"].input_schema["properties"]["tf_min"]
    assert prop["maximum"] == 50 and prop["description"] == "Changed on purpose."


# -- search_domains: the query layer's answer ------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"tld": ".fr", "limit": 20},
        {"tld": ["de", ".AT"], "score_min": 30, "sort": "-trust_flow", "page": 2, "limit": 10},
        {"has_bids": True, "price_max": 200, "sort": "auction_end_date"},
        {"categories": "business,health", "language": "en", "tf_min": 10},
        {"contains": "shop", "type": "auction", "include_closed": True},
    ],
)
def test_search_domains_is_the_query_layers_page(servers, mirror, args):
    answer = ok(call(servers["pro"], "search_domains", args))
    params = {("per_page" if k == "limit" else k): v for k, v in args.items()}
    expected = mirror.search_domains(params, "pro")
    assert expected["meta"]["total"] > 0
    assert answer["meta"] == expected["meta"]
    assert answer["data"] == expected["data"]
    assert "links" not in answer  # REST URLs mean nothing over MCP


def test_search_domains_carries_both_ranges_and_sorts_by_the_live_deal(servers, mirror):
    answer = ok(call(servers["pro"], "search_domains", {"has_bids": True, "sort": "-deal", "limit": 20}))
    assert answer["data"] == mirror.search_domains({"has_bids": "1", "sort": "-deal", "per_page": "20"}, "pro")["data"]
    assert answer["data"] and all(
        {"value_low", "value_mid", "value_high", "live_low", "live_mid", "live_high"} <= set(r) for r in answer["data"]
    )


def test_compact_fields_and_added_on(servers, mirror):
    full, compact = session(
        servers["pro"],
        ("search_domains", {"tld": ".com", "limit": 30}),
        ("search_domains", {"tld": ".com", "limit": 30, "fields": "compact"}),
    )
    full, compact = ok(full), ok(compact)
    assert ids(compact["data"]) == ids(full["data"]) and len(compact["data"]) == 30
    assert all(list(row) == list(COMPACT_FIELDS) for row in compact["data"])
    assert len(full["data"][0]) > len(COMPACT_FIELDS) + 20

    day = NOW.date().isoformat()
    added = ok(call(servers["pro"], "search_domains", {"added_on": day, "limit": 100}))
    expected = mirror.search_domains(
        {"created_after": day, "created_before": (NOW.date() + timedelta(days=1)).isoformat(), "per_page": 100}, "pro"
    )
    assert added["meta"]["total"] == expected["meta"]["total"] > 0 and ids(added["data"]) == ids(expected["data"])


def test_page_times_limit_is_at_most_2000(servers, mirror):
    last, too_far, wide = session(
        servers["pro"],
        ("search_domains", {"page": 40, "limit": 50}),
        ("search_domains", {"page": 41, "limit": 50}),
        ("search_domains", {"page": 21, "limit": 100}),
    )
    assert ok(last)["meta"]["current_page"] == 40
    assert ids(ok(last)["data"]) == ids(mirror.search_domains({"page": 40, "per_page": 50}, "pro")["data"])
    for result, product in ((too_far, "2,050"), (wide, "2,100")):
        message, body = refused(result)
        assert message.startswith(f"page × limit must be at most {MAX_RESULT_WINDOW:,}") and product in message
        assert body["status"] == 422 and list(body["errors"]) == ["page"]


# -- plans and errors: the REST API's -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan, tool, args, mirror_call",
    [
        ("pro", "search_domains", {"source": "regfree"}, lambda m: m.search_domains({"source": "regfree"}, "pro")),
        ("free", "search_domains", {}, lambda m: m.search_domains({}, "free")),
        ("authority", "search_pending_delete_domains", {}, lambda m: m.search_pending_delete({}, "authority")),
        ("pro", "search_pending_delete_domains", {"limit": 500}, lambda m: m.search_pending_delete({}, "pro")),
        ("free", "get_domain", {"id": 1}, lambda m: m.get_domain(1, "free")),
        # the plan is checked before the arguments, as the API does
        (
            "free",
            "search_domains",
            {"page": 41, "tf_min": "abc"},
            lambda m: m.search_domains({"tf_min": "abc"}, "free"),
        ),
        ("free", "get_domain", {"id": "abc"}, lambda m: m.get_domain("abc", "free")),
        (
            "pro",
            "search_pending_delete_domains",
            {"status": "gone"},
            lambda m: m.search_pending_delete({"status": "gone"}, "pro"),
        ),
    ],
)
def test_plan_gating_gives_the_apis_refusal(servers, mirror, plan, tool, args, mirror_call):
    expected = api_error(mirror_call, mirror)
    message, body = refused(call(servers[plan], tool, args))
    assert expected.status == 403
    assert message == expected.body["message"]
    assert body == {"status": 403, **expected.body}


def test_regfree_and_pending_open_at_their_plans(servers, mirror):
    regfree = mirror.search_domains({"source": "regfree", "per_page": 5}, "authority")["data"]
    assert regfree and all(row["source"] == "regfree" for row in regfree)
    # get_domain of a regfree row: 403 below Authority (the API's message), the record at Authority
    message, body = refused(call(servers["pro"], "get_domain", {"id": regfree[0]["id"]}))
    assert message == "Authority plan required to access source=regfree" and body["required_plan"] == "authority"
    assert ok(call(servers["authority"], "get_domain", {"id": regfree[0]["id"]})) == mirror.get_domain(
        regfree[0]["id"], "authority"
    )
    got = ok(call(servers["authority"], "search_domains", {"source": "regfree", "limit": 5}))
    assert ids(got["data"]) == ids(regfree)

    args = {"status": "pendingDelete,redemptionPeriod", "drops_within": 30, "sort": "domain"}
    pending = ok(call(servers["authority_plus"], "search_pending_delete_domains", {**args, "limit": 25}))
    expected = mirror.search_pending_delete({**args, "per_page": 25}, "authority_plus")
    assert pending["meta"]["total"] == expected["meta"]["total"] > 0
    assert pending["data"] == expected["data"]


@pytest.mark.parametrize(
    "tool, args, field, fragment",
    [
        ("search_domains", {"tf_min": "abc"}, "tf_min", "tf_min must be a whole number from 0 to 100"),
        ("search_domains", {"tf_min": 101}, "tf_min", "from 0 to 100"),
        ("search_domains", {"type": "foo"}, "type", "must be one of auction, closeout, backorder"),
        ("search_domains", {"categories": "Nope"}, "categories", "unknown: Nope"),
        ("search_domains", {"has_bids": "maybe"}, "has_bids", "must be 1 or true"),
        ("search_domains", {"created_after": "yesterday"}, "created_after", "YYYY-MM-DD"),
        ("search_domains", {"limit": 0}, "limit", "limit must be a whole number from 1 to 100"),
        ("search_domains", {"page": 0}, "page", "page must be a whole number of at least 1"),
        ("search_domains", {"fields": "tiny"}, "fields", "must be one of full, compact"),
        ("search_domains", {"added_on": "monday"}, "added_on", "added_on must be a date"),
        ("search_domains", {"added_on": "2026-01-01", "created_after": "2025-01-01"}, "added_on", "cannot be combined"),
        ("search_domains", {"keyword": "shop"}, "keyword", "unknown argument 'keyword' for search_domains"),
        ("search_domains", {"source": "nowhere"}, "source", "source must be one of"),
        ("search_pending_delete_domains", {"limit": 201}, "limit", "limit must be a whole number from 1 to 200"),
        ("search_pending_delete_domains", {"status": "gone"}, "status", "unknown: gone"),
        ("get_domain", {}, "id", "Give either id"),
        ("get_domain", {"id": 1, "name": "a.com"}, "id", "Give either id"),
        ("get_domain", {"id": "abc"}, "id", "id must be a whole number"),
        ("list_filters", {"tld": ".fr"}, "tld", "unknown argument 'tld' for list_filters: use one of none"),
    ],
)
def test_bad_arguments_are_a_clear_tool_error(servers, tool, args, field, fragment):
    message, body = refused(call(servers["enterprise"], tool, args))
    assert fragment in message
    assert body["status"] == 422 and list(body["errors"]) == [field] and body["message"] in message


def test_the_422_message_is_the_apis(servers, mirror):
    for params in ({"tf_min": "abc"}, {"categories": "Nope"}, {"use_cases": "gaming"}, {"price_min": -1}):
        expected = api_error(mirror.search_domains, params, "pro")
        message, body = refused(call(servers["pro"], "search_domains", params))
        assert message == expected.body["message"] and body == {"status": 422, **expected.body}


def test_a_failure_is_an_error_result_and_the_session_goes_on(monkeypatch, mirror):
    server = build_server(mirror, "pro")
    real = Mirror.search_domains
    answers = iter([sqlite3.OperationalError("database is locked"), RuntimeError("boom")])

    def flaky(self, *args, **kwargs):
        error = next(answers, None)
        if error is not None:
            raise error
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Mirror, "search_domains", flaky)
    busy, bug, fine = session(server, *[("search_domains", {"limit": 3})] * 3)
    message, body = refused(busy)
    assert body["status"] == 503 and "busy" in message
    message, body = refused(bug)
    assert body["status"] == 400 and "boom" not in message and "could not be processed" in message
    assert len(ok(fine)["data"]) == 3


# -- get_domain, list_filters, get_stats ---------------------------------------------------------------------------


def test_get_domain_by_id_and_by_name(servers, mirror):
    first = mirror.search_domains({"tld": ".de", "per_page": 1}, "pro")["data"][0]
    by_id, by_name, shouted, missing_name, missing_id = session(
        servers["pro"],
        ("get_domain", {"id": first["id"]}),
        ("get_domain", {"name": first["name"]}),
        ("get_domain", {"name": " " + first["name"].upper() + ". "}),
        ("get_domain", {"name": "no-such-name-here.de"}),
        ("get_domain", {"id": 999_999_999_999}),
    )
    assert ok(by_id) == mirror.get_domain(first["id"], "pro")
    assert ok(by_name)["data"] == ok(by_id)["data"] and ok(shouted)["data"]["id"] == first["id"]
    for result in (missing_name, missing_id):
        assert refused(result) == ("Not found.", {"status": 404, "message": "Not found."})


def test_get_domain_by_name_prefers_the_live_listing_this_plan_may_see(demo_db, tmp_path, mirror):
    import shutil

    copy = tmp_path / "dupes.db"
    shutil.copy(demo_db, copy)
    live = mirror.search_domains({"tld": ".com", "per_page": 1}, "pro")["data"][0]
    regfree_only = mirror.search_domains({"source": "regfree", "per_page": 1}, "authority")["data"][0]
    conn = sqlite3.connect(copy)
    past = (NOW - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for new_id, source, closed in ((9_000_000_001, "sedo", past), (9_000_000_002, "regfree", None)):
        conn.execute("CREATE TEMP TABLE copy AS SELECT * FROM listings WHERE id = ?", [live["id"]])
        conn.execute(
            "UPDATE copy SET id = ?, source = ?, closed_at = ?, live_until = coalesce(?, live_until)",
            [new_id, source, closed, closed],
        )
        conn.execute("INSERT INTO listings SELECT * FROM copy")
        conn.execute("DROP TABLE copy")
    conn.commit()
    conn.close()
    dupes = Mirror(copy, readonly=True, clock=lambda: NOW)
    pro = ok(call(build_server(dupes, "pro"), "get_domain", {"name": live["name"]}))
    assert pro["data"]["id"] == live["id"]
    assert pro["also_listed"] == [{"id": 9_000_000_001, "source": "sedo", "live": False}]  # regfree unseen at Pro
    authority = ok(call(build_server(dupes, "authority"), "get_domain", {"name": live["name"]}))
    assert authority["data"]["id"] == live["id"]
    assert {o["id"] for o in authority["also_listed"]} == {9_000_000_001, 9_000_000_002}
    message, _ = refused(call(build_server(dupes, "pro"), "get_domain", {"name": regfree_only["name"]}))
    assert message == "Authority plan required to access source=regfree"
    assert (
        ok(call(build_server(dupes, "authority"), "get_domain", {"name": regfree_only["name"]}))["data"]["id"]
        == (regfree_only["id"])
    )


def test_list_filters_counts_are_the_query_layers(servers, mirror):
    filters = ok(call(servers["pro"], "list_filters"))
    total = lambda **p: mirror.search_domains({**p, "per_page": 1}, "enterprise")["meta"]["total"]  # noqa: E731
    sources = {s["slug"]: s for s in filters["sources"]}
    assert sum(s["live"] for slug, s in sources.items() if slug != "regfree") == total()
    for slug in ("godaddy", "sedo", "regfree"):
        assert sources[slug]["live"] == total(source=slug) > 0
    assert sources["sedo"]["available"] is True and sources["regfree"]["available"] is False
    tlds = {t["tld"]: t["count"] for t in filters["tlds"]}
    assert tlds[".de"] == total(tld=".de") > 0 and sum(tlds.values()) == total()
    regfree_tlds = {t["tld"]: t["count"] for t in filters["regfree_tlds"]}
    first = next(iter(regfree_tlds))
    assert regfree_tlds[first] == total(source="regfree", tld=first) > 0
    languages = {entry["language"]: entry["count"] for entry in filters["languages"]}
    assert languages["EN"] == total(language="EN") > 0
    categories = {entry["category"]: entry["count"] for entry in filters["categories"]}
    assert categories and all(categories[c] == total(categories=c) for c in list(categories)[:4])
    assert filters["pending_delete"]["available"] is False
    assert filters["types"] == ["auction", "closeout", "backorder"] and "-score" in filters["sorts"]

    at_authority_plus = ok(call(servers["authority_plus"], "list_filters"))
    assert {s["slug"]: s["available"] for s in at_authority_plus["sources"]}["regfree"] is True
    assert at_authority_plus["pending_delete"]["available"] is True
    free = {s["slug"]: s["available"] for s in ok(call(servers["free-endpoint"], "list_filters"))["sources"]}
    assert free["dynadot"] is True and free["sedo"] is False and free["regfree"] is False


def test_get_stats(servers, mirror):
    stats = ok(call(servers["free"], "get_stats"))  # aggregates only: any plan
    status = mirror.status()
    assert stats["listings"] == {
        "live": status["datasets"]["listings"]["live"],
        "rows": status["datasets"]["listings"]["rows"],
        "new_today": mirror.search_domains({"created_after": NOW.date().isoformat()}, "pro")["meta"]["total"],
    }
    assert stats["listings"]["new_today"] > 0
    assert sum(stats["by_source"].values()) == stats["listings"]["live"] and "regfree" not in stats["by_source"]
    assert stats["by_source"]["dropcatch"] == mirror.search_domains({"source": "dropcatch"}, "pro")["meta"]["total"]
    assert stats["regfree"]["rows"] == status["datasets"]["regfree"]["rows"] > 0
    assert stats["pending_delete"]["actionable"] == mirror.search_pending_delete({}, "enterprise")["meta"]["total"] > 0
    assert stats["freshness"] == status["freshness"] and [f["job"] for f in stats["freshness"]] == [
        "listings",
        "bids",
        "regfree",
        "pending",
    ]
    assert stats["demo"] is True and stats["as_of"] == NOW.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the free endpoint --------------------------------------------------------------------------------------------------


def test_free_endpoint_is_the_free_apis_semantics(servers, mirror):
    free = servers["free-endpoint"]
    page, too_many, premium, not_free, detail = session(
        free,
        ("search_domains", {"tld": ".com", "limit": 8}),
        ("search_domains", {"limit": 51}),
        ("search_domains", {"tf_min": 10}),
        ("search_domains", {"source": "sedo"}),
        ("get_domain", {"id": 1}),
    )
    answer = ok(page)
    assert answer == mirror.free_domains({"tld": ".com", "limit": 8})
    names = [row["name"] for row in answer["data"]]
    assert len(names) == 8 and all("•" not in n for n in names[:3]) and all(n == "••••••••.com" for n in names[3:])
    assert all("trust_flow" not in row for row in answer["data"]) and answer["meta"]["free_tier"] is True
    assert "limit must be a whole number from 1 to 50" in refused(too_many)[0]
    assert "unknown argument 'tf_min'" in refused(premium)[0]
    assert "source must be one of" in refused(not_free)[0]
    assert refused(detail)[0] == "Pro plan required to access /api/domains"


# -- streamable HTTP, mounted by create_app ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(mirror):
    return create_app(mirror, KEYS, NO_LIMITS)


def over_http(app, path: str, key: str | None, *calls: tuple[str, dict], address: str = "127.0.0.1") -> list:
    """Tool calls through the SDK's streamable-HTTP client, in process over an ASGI transport."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def go():
        transport = httpx2.ASGITransport(app=app, client=(address, 50000))
        async with httpx2.AsyncClient(transport=transport, headers=headers, base_url="http://testserver") as http:
            async with Client(streamable_http_client("http://testserver" + path, http_client=http)) as client:
                return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(go())


def rest(app, url: str, key: str) -> dict:
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get(url, headers={"Authorization": f"Bearer {key}"})

    response = asyncio.run(go())
    assert response.status_code == 200, response.text
    return response.json()


def test_http_search_is_get_api_domains(app):
    args = {"tld": ".fr,.de", "score_min": 20, "sort": "-domain_authority", "page": 2, "limit": 15}
    (result,) = over_http(app, MCP_PATH, "pro-key", ("search_domains", args))
    expected = rest(app, "/api/domains?tld=.fr,.de&score_min=20&sort=-domain_authority&page=2&per_page=15", "pro-key")
    answer = ok(result)
    assert answer["meta"]["total"] == expected["meta"]["total"] > 15
    assert ids(answer["data"]) == ids(expected["data"]) and len(answer["data"]) == 15


def test_http_the_key_decides_the_plan(app):
    pro, authority = (
        over_http(app, MCP_PATH, key, ("search_domains", {"source": "regfree", "limit": 3}))[0]
        for key in ("pro-key", "authority-key")
    )
    assert refused(pro)[0] == "Authority plan required to access source=regfree"
    assert [row["source"] for row in ok(authority)["data"]] == ["regfree"] * 3
    (free_key,) = over_http(app, MCP_PATH, "free-key", ("search_domains", {}))
    assert refused(free_key)[0] == "Pro plan required to access /api/domains"


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_http_without_a_valid_key_is_401_like_the_api(app, key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def post():
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://testserver") as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            return await http.post(MCP_PATH, json=body, headers=headers)

    response = asyncio.run(post())
    assert response.status_code == 401 and list(response.json()) == ["message"]
    assert (
        response.json()["message"].startswith("Unauthenticated.")
        and "Authorization: Bearer KEY" in response.json()["message"]
    )
    with pytest.raises(Exception) as info:  # the SDK client cannot even connect
        over_http(app, MCP_PATH, key, ("get_stats", {}))
    assert any(isinstance(e, MCPError) for e in _leaves(info.value))


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def test_http_is_stateless_get_and_delete_are_405(app):
    """A streamable-HTTP client's GET (it names the protocol version or a session) and DELETE
    are 405, as is a GET that does not ask for the legacy SSE stream; the body names the
    settings of both transports."""

    async def go():
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://testserver", timeout=10) as http:
            streamable = {
                "Authorization": "Bearer pro-key",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            }
            return [
                await http.get(MCP_PATH, headers=streamable),
                await http.get(MCP_FREE_PATH, headers={"Accept": "text/event-stream", "Mcp-Session-Id": "abc"}),
                await http.delete(MCP_PATH, headers=streamable),
                await http.get(MCP_FREE_PATH, headers={"Accept": "application/json"}),
                await http.get(MCP_ALIASES[MCP_FREE_PATH]),
            ]

    for response in asyncio.run(asyncio.wait_for(go(), 30)):
        assert response.status_code == 405 and response.headers["allow"] == "GET, POST"
        message = response.json()["message"]
        assert "stateless" in message and '"streamable-http"' in message and '"transport": "sse"' in message


def test_http_free_endpoint_needs_no_key(app, mirror):
    page, gated = over_http(app, MCP_FREE_PATH, None, ("search_domains", {"limit": 6}), ("get_domain", {"id": 1}))
    assert ok(page) == mirror.free_domains({"limit": 6})
    assert refused(gated)[0] == "Pro plan required to access /api/domains"


def test_http_tool_calls_count_against_the_rate_limit(mirror):
    app = create_app(mirror, KEYS, {"pro": 2, "free": 1})
    first, second, third = over_http(app, MCP_PATH, "pro-key", *[("get_stats", {})] * 3)
    assert not first.is_error and not second.is_error
    assert refused(third) == ("Too Many Attempts.", {"status": 429, "message": "Too Many Attempts."})
    # the free endpoint: per client address, as /api/free/domains
    one, two = over_http(app, MCP_FREE_PATH, None, *[("search_domains", {"limit": 1})] * 2, address="10.0.0.7")
    assert not one.is_error and refused(two)[0] == "Too Many Attempts."
    (other,) = over_http(app, MCP_FREE_PATH, None, ("search_domains", {"limit": 1}), address="10.0.0.8")
    assert not other.is_error


def test_http_on_a_real_loopback_port(mirror):
    with BackgroundServer(create_app(mirror, KEYS, NO_LIMITS)) as server:

        async def go():
            headers = {"Authorization": "Bearer authority-key"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with Client(streamable_http_client(server.url + MCP_PATH, http_client=http)) as client:
                    listed = await client.list_tools()
                    return [t.name for t in listed.tools], await client.call_tool("search_domains", {"tld": ".nl"})

        names, result = asyncio.run(go())
    assert names == [*TOOL_NAMES, *EXTENSION_TOOLS]
    expected = mirror.search_domains({"tld": ".nl"}, "authority")
    assert ok(result)["meta"]["total"] == expected["meta"]["total"] > 0
    assert ids(ok(result)["data"]) == ids(expected["data"])


# -- the live service's paths, argument names and legacy SSE transport ---------------------------------------------


def test_the_live_paths_are_the_same_endpoints(app, mirror):
    from toolkit.serve.server import MCP_PATHS

    assert MCP_PATHS == {False: (MCP_PATH, MCP_ALIASES[MCP_PATH]), True: (MCP_FREE_PATH, MCP_ALIASES[MCP_FREE_PATH])}
    card_file = REFERENCE / "well-known" / "catchdoms-mcp-server-card.json"
    # the live card's transports, their host changed: served here
    card_paths = [httpx.URL(t["url"]).path for t in json.loads(card_file.read_text())["transports"]]
    assert card_paths == list(MCP_ALIASES.values())
    args = {"tld": ".de", "score_min": 20, "limit": 7}
    (ours,) = over_http(app, MCP_PATH, "authority-key", ("search_domains", args))
    (live,) = over_http(app, MCP_ALIASES[MCP_PATH], "authority-key", ("search_domains", args))
    assert ok(live) == ok(ours) and ok(live)["meta"]["total"] > 7
    (free,) = over_http(app, MCP_ALIASES[MCP_FREE_PATH], None, ("search_domains", {"limit": 5}))
    assert ok(free) == mirror.free_domains({"limit": 5})
    (refused_,) = over_http(app, MCP_ALIASES[MCP_PATH], "pro-key", ("search_domains", {"source": "regfree"}))
    assert refused(refused_)[0] == "Authority plan required to access source=regfree"
    with pytest.raises(Exception) as info:  # the same keys: no key, no session
        over_http(app, MCP_ALIASES[MCP_PATH], None, ("get_stats", {}))
    assert any(isinstance(e, MCPError) for e in _leaves(info.value))


def test_get_domain_takes_the_live_argument_names(servers, mirror):
    first = mirror.search_domains({"tld": ".fr", "per_page": 1}, "pro")["data"][0]
    by_id, by_name, both, bad = session(
        servers["pro"],
        ("get_domain", {"domain_id": first["id"]}),
        ("get_domain", {"domain_name": first["name"].upper()}),
        ("get_domain", {"id": first["id"], "domain_id": first["id"]}),
        ("get_domain", {"domain_id": "abc"}),
    )
    assert ok(by_id) == ok(by_name) == mirror.get_domain(first["id"], "pro")
    message, body = refused(both)
    assert body["status"] == 422 and list(body["errors"]) == ["id"] and "domain_id" in message
    assert body["status"] == 422 and "id must be a whole number" in refused(bad)[0]
    # the schema lists the canonical names, says which aliases it takes, and takes them (a client may check)
    tool = tools_of(servers["pro"])["get_domain"]
    assert list(tool.input_schema["properties"]) == ["id", "name", *GET_DOMAIN_ALIASES]
    assert tool.input_schema["additionalProperties"] is False
    assert tool.input_schema["properties"]["domain_id"]["type"] == tool.input_schema["properties"]["id"]["type"]
    assert all(alias in tool.description for alias in GET_DOMAIN_ALIASES)
    for alias, name in GET_DOMAIN_ALIASES.items():
        assert tool.input_schema["properties"][name]["description"].endswith(f"Alias: {alias}.")


def over_sse(url: str, key: str | None, *calls: tuple[str, dict]) -> tuple[list[str], list]:
    """Tool names and call results through the SDK's own (legacy) SSE client."""
    from mcp.client.sse import sse_client

    headers = {"Authorization": f"Bearer {key}"} if key else None

    async def go():
        async with Client(sse_client(url, headers=headers, timeout=30)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(asyncio.wait_for(go(), 60))


def test_legacy_sse_transport_on_both_paths(mirror):
    """Older public configs set "transport": "sse": the SDK's SSE client works on the live
    path and on ours, the key deciding the plan and counting the calls, as over streamable HTTP."""
    app = create_app(mirror, KEYS, {**NO_LIMITS, "authority": 3})
    args = {"tld": ".nl", "sort": "-score"}
    expected = mirror.search_domains(args, "authority")
    with BackgroundServer(app) as server:
        for path in (MCP_ALIASES[MCP_PATH], MCP_PATH):
            names, results = over_sse(
                server.url + path,
                "aplus-key",
                ("search_domains", args),
                ("get_domain", {"domain_name": expected["data"][0]["name"]}),
                ("search_pending_delete_domains", {"limit": 3}),
            )
            assert names == [*TOOL_NAMES, *EXTENSION_TOOLS]
            found, detail, pending = map(ok, results)
            assert found["meta"]["total"] == expected["meta"]["total"] > 0
            assert ids(found["data"]) == ids(expected["data"])
            assert detail["data"]["id"] == expected["data"][0]["id"] and len(pending["data"]) == 3
        _, (regfree,) = over_sse(server.url + MCP_PATH, "pro-key", ("search_domains", {"source": "regfree"}))
        assert refused(regfree)[0] == "Authority plan required to access source=regfree"
        # every call of the session counts against the key that opened it
        _, results = over_sse(server.url + MCP_ALIASES[MCP_PATH], "authority-key", *[("get_stats", {})] * 4)
        assert [r.is_error for r in results] == [False, False, False, True]
        assert refused(results[3])[0] == "Too Many Attempts."
        _, (free,) = over_sse(server.url + MCP_ALIASES[MCP_FREE_PATH], None, ("search_domains", {"limit": 4}))
        assert ok(free) == mirror.free_domains({"limit": 4})
        with pytest.raises(Exception) as info:  # no key: 401 before any stream
            over_sse(server.url + MCP_ALIASES[MCP_PATH], None)
        assert "401" in " ".join(str(e) for e in _leaves(info.value))


def test_an_sse_session_takes_messages_only_from_its_key(mirror):
    """The endpoint event names this path and a session; a POST there with another key, or
    none, is refused; with the opener's key it is accepted (202) and answered on the stream."""
    with BackgroundServer(create_app(mirror, KEYS, NO_LIMITS)) as server:

        async def go():
            url = server.url + MCP_ALIASES[MCP_PATH]
            async with httpx2.AsyncClient(timeout=30) as http:
                headers = {"Authorization": "Bearer pro-key", "Accept": "text/event-stream"}
                async with http.stream("GET", url, headers=headers) as stream:
                    lines = stream.aiter_lines()
                    assert (await anext(lines)) == "event: endpoint"
                    endpoint = (await anext(lines)).removeprefix("data: ").strip()
                    target = server.url + endpoint
                    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                    other = await http.post(target, json=ping, headers={"Authorization": "Bearer authority-key"})
                    nobody = await http.post(target, json=ping)
                    mine = await http.post(target, json=ping, headers={"Authorization": "Bearer pro-key"})
                    return endpoint, other.status_code, nobody.status_code, mine.status_code

        endpoint, other, nobody, mine = asyncio.run(asyncio.wait_for(go(), 60))
    assert endpoint.startswith(MCP_ALIASES[MCP_PATH] + "?session_id=")
    assert (other, nobody, mine) == (404, 401, 202)


# -- stdio: `python -m toolkit mcp` ------------------------------------------------------------------------------------------


def test_stdio_search_is_the_query_layers(demo_db):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolkit", "mcp", "--db", str(demo_db), "--plan", "authority"],
        cwd=str(ROOT),
    )
    args = {"type": "closeout", "score_min": 35, "sort": "-score"}  # no auction end: clock-independent

    async def go():
        async with Client(params) as client:
            return (
                client.server_info,
                await client.call_tool("search_domains", {**args, "limit": 40}),
                await client.call_tool("search_pending_delete_domains", {}),
            )

    info, result, pending = asyncio.run(go())
    expected = Mirror(demo_db, readonly=True).search_domains({**args, "per_page": 40}, "authority")
    assert info.name == "expired-domains-toolkit"
    assert ok(result)["meta"]["total"] == expected["meta"]["total"] > 40
    assert ids(ok(result)["data"]) == ids(expected["data"])
    assert refused(pending)[0] == "Authority+ plan required to access /api/pending-delete"


def test_stdio_stdout_carries_only_the_protocol(demo_db):
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_domain", "arguments": {"id": "x"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_stats", "arguments": {}}},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "mcp", "--db", str(demo_db)],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        lines = [process.stdout.readline() for _ in range(3)]  # the three answers, then end the session
        process.stdin.close()
        lines += process.stdout.readlines()
        assert process.wait() == 0, process.stderr.read()
    finally:
        watchdog.cancel()
        process.kill()
    # Every line on stdout is JSON-RPC; concurrent calls may be answered in any order.
    answers = sorted((json.loads(line) for line in lines), key=lambda a: a["id"])
    assert [a["id"] for a in answers] == [1, 2, 3] and all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[0]["result"]["serverInfo"]["name"] == "expired-domains-toolkit"
    assert (
        answers[1]["result"]["isError"] is True
        and "id must be a whole number" in answers[1]["result"]["content"][0]["text"]
    )
    assert answers[2]["result"]["structuredContent"]["listings"]["rows"] == 5001


def test_edt_mcp_refuses_a_missing_mirror_on_stderr(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "toolkit", "mcp", "--db", str(tmp_path / "none.db")],
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert done.returncode == 2 and done.stdout == "" and "no mirror there" in done.stderr


# -- the extra stays optional ---------------------------------------------------------------------------------------------------


def test_toolkit_and_serve_work_without_mcp(demo_db):
    script = f"""
import sys
sys.modules["mcp"] = None  # as if the extra were not installed
import toolkit, toolkit.serve.server, toolkit.cli
from starlette.testclient import TestClient
app = toolkit.serve.server.create_app({str(demo_db)!r}, {{"k": "pro"}})
paths = [getattr(r, "path", "") for r in app.routes]
assert not any(p.startswith("/mcp") for p in paths), paths
client = TestClient(app)
assert client.get("/api/domains?per_page=1", headers={{"Authorization": "Bearer k"}}).status_code == 200
assert client.post("/mcp/expired-domains").status_code == 404
from click.testing import CliRunner
result = CliRunner().invoke(toolkit.cli.cli, ["mcp", "--db", {str(demo_db)!r}])
assert result.exit_code == 1 and "pip install 'expired-domains-toolkit[mcp]'" in result.output, result.output
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_create_app_does_not_import_mcp(demo_db):
    script = f"""
import sys, toolkit.serve.server
app = toolkit.serve.server.create_app({str(demo_db)!r}, {{"k": "pro"}})
assert any(getattr(r, "path", "") == "/mcp/expired-domains" for r in app.routes)
print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "toolkit.serve.mcp_server"))))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_auction_results_are_a_documented_extension_tool_answering_as_the_rest_route(servers, tmp_path):
    """search_auction_results: what GET /api/results answers, page for page, with its filters
    from the parameter table; the plan's rules and a bad value are the API's."""
    from toolkit.demo import load_demo
    from toolkit.store.schema import connect

    db = tmp_path / "lapse.db"
    conn = connect(str(db))
    load_demo(conn, scale="small", days=7)
    conn.close()
    lapse = Mirror(db, readonly=True)
    server = build_server(lapse, "pro")
    tool = tools_of(server)["search_auction_results"]
    assert tool.description.startswith("Toolkit extension (not on the live service)")
    for name in ("ended_after", "sold", "tld", "value_min", "limit", "page"):
        assert name in tool.input_schema["properties"], name
    args = {"sold": True, "tld": ".com", "limit": 7, "page": 2}
    found = ok(call(server, "search_auction_results", args))
    expected = lapse.search_results({"sold": "1", "tld": ".com", "per_page": "7", "page": "2"}, "pro")
    assert found["meta"]["total"] == expected["meta"]["total"] > 14
    assert [r["listing_id"] for r in found["data"]] == [r["listing_id"] for r in expected["data"]]
    assert all(r["sold"] and r["final_price"] is not None for r in found["data"])
    text, body = refused(call(server, "search_auction_results", {"ended_after": "soon"}))
    assert body["status"] == 422 and "ended_after" in text
    assert "search_auction_results" not in tools_of(servers["free-endpoint"])


def test_a_cursor_walks_feed_listings_whose_ids_are_16_digits(tmp_path):
    """A feed's listings get ids from 2**52 up (`ingest/common.py`): the cursor the API hands
    out, and the MCP tool fetching a listing by id, take them back."""
    from starlette.testclient import TestClient

    from toolkit.bench.feed_ingest import HEADER
    from toolkit.ingest import ingest_file

    db = tmp_path / "m.db"
    small_demo(db, 4)
    cells = HEADER.split(",")
    lines = [HEADER]
    for n, name in enumerate(("zzalpha.com", "zzbeta.net", "zzgamma.org")):
        row = dict.fromkeys(cells, "")
        row.update(url=f"https://www.namecheap.com/market/sale/S{n}/", name=name, price="25.00", bidCount="1")
        row.update(startDate="2026-11-20T08:00:00Z", endDate="2030-12-05T16:00:00Z")
        lines.append(",".join(row[c] for c in cells))
    (tmp_path / "nc.csv").write_text("\n".join(lines) + "\n")
    with Mirror(db) as mirror:
        ingest_file(mirror, "namecheap", tmp_path / "nc.csv")
        names = dict(mirror.connection().execute("SELECT id, name FROM listings WHERE name LIKE 'zz%' ORDER BY id"))
    ids = list(names)
    assert len(ids) == 3 and all(i > 2**52 for i in ids)
    walked, url = [], f"/api/domains?after_id={ids[0] - 1}&per_page=1"
    with TestClient(create_app(db, keys={"k": "enterprise"})) as client:
        for _ in range(10):
            page = client.get(url, headers={"Authorization": "Bearer k"})
            assert page.status_code == 200, page.text
            walked += [row["id"] for row in page.json()["data"]]
            if not page.json()["cursor"]["has_more"]:
                break
            url = page.json()["links"]["next"]
    assert walked == ids
    server = build_server(Mirror(db, readonly=True), "enterprise")
    assert {i: ok(call(server, "get_domain", {"id": i}))["data"]["name"] for i in ids} == names


def test_the_live_card_s_short_sort_names_are_taken(servers, mirror):
    for short, field in (
        ("traffic", "historical_traffic_etv"),
        ("-TF", "-trust_flow"),
        ("snapshots", "wayback_snapshots"),
    ):
        got = ok(call(servers["pro"], "search_domains", {"sort": short, "limit": 5}))
        assert [r["id"] for r in got["data"]] == [
            r["id"] for r in mirror.search_domains({"sort": field, "per_page": 5}, "pro")["data"]
        ]
    schema = tools_of(servers["pro"])["search_domains"].input_schema["properties"]["sort"]
    assert {"tf", "-rd", "traffic"} <= set(schema["enum"])
    message, _ = refused(call(servers["pro"], "search_domains", {"sort": "bogus"}))
    assert message.startswith("sort must be one of")


def test_a_pending_name_written_in_letters_is_found_as_its_xn_form(demo_db):
    from starlette.testclient import TestClient

    held = sqlite3.connect(demo_db).execute("SELECT domain FROM pending_delete WHERE domain LIKE 'xn--%'").fetchall()
    mirror = Mirror(demo_db, readonly=True)
    idn = next(d for (d,) in held if mirror.search_pending_delete({"tld": d.rsplit(".", 1)[1], "per_page": "100"}))
    with TestClient(create_app(demo_db, keys={"k": "enterprise"})) as client:
        typed = client.get(
            f"/api/pending-delete/{idn.encode().decode('idna').upper()}", headers={"Authorization": "Bearer k"}
        )
    assert typed.status_code == 200 and typed.json()["data"]["domain"] == idn


def test_the_mcp_paths_answer_errors_in_json_as_the_api_does(demo_db):
    from starlette.testclient import TestClient

    with TestClient(create_app(demo_db, keys={"k": "pro"})) as client:
        answers = [
            client.post(
                "/mcp/expired-domains", content="x", headers={"Content-Type": "text/plain", "Authorization": "Bearer k"}
            ),
            client.post("/mcp/catchdoms/free?session_id=zz", json={}),
        ]
    for answer in answers:
        assert answer.status_code == 400 and answer.headers["content-type"] == "application/json", answer.text
        assert answer.json()["message"] in ("Invalid Content-Type header", "Invalid session ID")
