"""The live service's OpenAPI replayed against the replica: a client written for the live
service, pointed at the mirror with only its host changed, gets answers its schemas accept.

Every operation and every status the live description documents
(`tests/fixtures/reference/catchdoms/openapi/*.yml`) is requested from the replica, in process
through httpx's ASGI transport, at the live server URL with its host changed and nothing else;
list operations are walked parameter by parameter, with values drawn from the live parameter
schemas (every enum value, the bounds, the examples). Each answer must carry a status the live
operation documents and validate against the live response schema and headers (jsonschema,
draft 2020-12, as the live documents are OpenAPI 3.1+). Answers the live description gives no
schema for are held to what its text says: the 403 fields (`upgrade_url`, `docs`), the 429's
wait. A status added to the live description without a replay here fails, so a drift on either
side shows up in CI.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from conftest import REFERENCE, small_demo  # noqa: E402
from toolkit import Mirror  # noqa: E402
from toolkit.serve.openapi import build_openapi  # noqa: E402
from toolkit.plans import PLANS  # noqa: E402
from toolkit.serve.server import create_app  # noqa: E402

OPENAPI = REFERENCE / "openapi"

KEYS = {
    "pro-key": "pro",
    "authority-key": "authority",
    "aplus-key": "authority_plus",
    "free-key": "free",
    "top-key": "enterprise",
}
HOST = "testserver"
# Values for string parameters whose live schema gives neither an enum nor an example.
NAMED_SAMPLES = {"categories": "health,recreation/travel"}


def _live_documents() -> dict[str, dict]:
    return {path.name: yaml.safe_load(path.read_text()) for path in sorted(OPENAPI.glob("*.yml"))}


DOCUMENTS = _live_documents()
# operationId -> (its document, path, method, operation)
OPERATIONS: dict[str, tuple[dict, str, str, dict]] = {
    op["operationId"]: (doc, path, method, op)
    for doc in DOCUMENTS.values()
    for path, item in doc["paths"].items()
    for method, op in item.items()
}
DOCUMENTED = sorted((op_id, int(status)) for op_id, (_, _, _, op) in OPERATIONS.items() for status in op["responses"])


def live_url(op_id: str, **path_params: Any) -> str:
    """The live URL of an operation with only the host changed (scheme and base path kept)."""
    doc, path, _, _ = OPERATIONS[op_id]
    server = httpx.URL(doc["servers"][0]["url"])
    assert server.host == "catchdoms.com"
    return str(server.copy_with(host=HOST)) + path.format(**path_params)


# -- the replica ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> Path:
    return small_demo(tmp_path_factory.mktemp("replay") / "demo.db", 23)


@pytest.fixture(scope="module")
def mirror(demo_db) -> Mirror:
    return Mirror(demo_db, readonly=True)


@pytest.fixture(scope="module")
def app(mirror):
    logging.getLogger("toolkit.serve.server").setLevel(logging.ERROR)  # the rate overrides are meant
    return create_app(mirror, KEYS, {plan: 1_000_000 for plan in PLANS})


def send(
    app, url: str, key: str | None = None, params: dict | None = None, address: str = "127.0.0.1"
) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=app, client=(address, 50000))
        async with httpx.AsyncClient(transport=transport) as client:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            return await client.get(url, params=params, headers=headers)

    return asyncio.run(go())


# -- checking an answer against the live description --------------------------------------------------------


def _validator(doc: dict, schema: dict):
    rooted = {**schema, "components": doc.get("components", {})}  # the live $refs resolve in their document
    return jsonschema.Draft202012Validator(rooted, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def conforms(op_id: str, response: httpx.Response, what: str = "") -> Any:
    """The answer's status is documented for the operation; its body and headers are what the
    live description says for that status. Returns the JSON body."""
    doc, _, _, op = OPERATIONS[op_id]
    label = f"{op_id} {what}".strip()
    documented = op["responses"].get(str(response.status_code))
    assert documented is not None, f"{label}: {response.status_code} is not documented live: {response.text[:300]}"
    assert response.headers["content-type"].startswith("application/json"), label
    body = response.json()
    content = documented.get("content", {})
    if content:
        errors = sorted(_validator(doc, content["application/json"]["schema"]).iter_errors(body), key=str)
        assert not errors, f"{label}: {[f'{list(e.absolute_path)}: {e.message}' for e in errors[:5]]}"
    for name, header in documented.get("headers", {}).items():
        assert name in response.headers, (label, name)
        value = response.headers[name]
        parsed = int(value) if header["schema"].get("type") == "integer" else value
        _validator(doc, header["schema"]).validate(parsed)
    return body


# -- requests from the live parameter schemas --------------------------------------------------------------


def samples(param: dict) -> list[str]:
    """Query values the live schema allows: every enum value, else the bounds, the examples
    and the default, as a generated client would send them."""
    schema = param["schema"]
    if "enum" in schema:
        return [str(v) for v in schema["enum"]]
    kind = schema["type"]
    if kind == "boolean":
        return ["true", "false", "1", "0"]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        values = [low, schema.get("maximum", low + 7), schema.get("default", low)]
        if kind == "number":
            values.append(low + 12.5)
        return list(dict.fromkeys(str(v) for v in values))
    if schema.get("format") == "date":
        return [
            param.get("example", schema.get("example")) or date.today().isoformat(),
            (date.today() - timedelta(days=3)).isoformat(),
        ]
    value = str(
        param.get("example") or schema.get("example") or schema.get("default") or NAMED_SAMPLES.get(param["name"], "a")
    )
    values = [value]
    if "maxLength" in schema:  # the longest value allowed
        n = schema["maxLength"]
        values.append(value.ljust(n, ",") if "," in value else (value * n)[:n])
    return values


def walk(op_id: str) -> list[tuple[str, dict[str, str]]]:
    """(label, query) for every sample of every query parameter of the live operation."""
    _, _, _, op = OPERATIONS[op_id]
    return [
        (f"{p['name']}={value[:40]}", {p["name"]: value})
        for p in op.get("parameters", [])
        if p["in"] == "query"
        for value in samples(p)
    ]


# -- every documented operation and status -------------------------------------------------------------


def _list_domains_200(app, mirror):
    walked = walk("listDomains")
    for label, query in walked + [("no parameters", {}), ("cursor", {"after_id": "0", "per_page": "7"})]:
        body = conforms("listDomains", send(app, live_url("listDomains"), "top-key", query), label)
        if "after_id" in query:
            assert set(body["cursor"]) >= {"next_after_id", "has_more"}, label
    assert len(walked) > 2 * len(OPERATIONS["listDomains"][3]["parameters"])  # every parameter, several values
    # a page with rows in it, and the keyset walk's next step
    page = conforms("listDomains", send(app, live_url("listDomains"), "pro-key", {"per_page": "100"}))
    assert len(page["data"]) == 100 and page["meta"]["total"] > 100
    first = conforms("listDomains", send(app, live_url("listDomains"), "pro-key", {"after_id": "0", "per_page": "5"}))
    step = {"after_id": str(first["cursor"]["next_after_id"]), "per_page": "5"}
    following = conforms("listDomains", send(app, live_url("listDomains"), "pro-key", step))
    assert following["data"][0]["id"] > first["data"][-1]["id"]


def _list_domains_401(app, mirror):
    for key in (None, "not-a-key"):
        assert send(app, live_url("listDomains"), key).status_code == 401
        conforms("listDomains", send(app, live_url("listDomains"), key), f"key {key}")


def _live_403_fields(op_id: str) -> dict[str, set[str]]:
    """The fields the live description says a 403 body carries, per error (from its text)."""
    text = OPERATIONS[op_id][3]["responses"]["403"]["description"]
    fields = {"plan_required": {"error", "message", "upgrade_url"}}  # "response includes upgrade_url" (pending)
    if "cursor_not_available" in text:
        assert "(JSON body: error, message, docs)" in text, text
        fields["cursor_not_available"] = {"error", "message", "docs"}
    return fields


def _forbidden(app, op_id: str, cases: list[tuple[str | None, dict, str]], path_params: dict | None = None):
    fields = _live_403_fields(op_id)
    for key, query, error in cases:
        body = conforms(op_id, send(app, live_url(op_id, **(path_params or {})), key, query), f"{key} {query}")
        assert body["error"] == error and set(body) >= fields[error], (op_id, key, query, body)
        link = body.get("upgrade_url") or body["docs"]
        assert httpx.URL(link).host == HOST  # on the host the client called


def _list_domains_403(app, mirror):
    _forbidden(
        app,
        "listDomains",
        [
            ("free-key", {}, "plan_required"),
            ("pro-key", {"source": "regfree"}, "plan_required"),
            ("top-key", {"source": "regfree", "after_id": "0"}, "cursor_not_available"),
        ],
    )


def _get_domain_200(app, mirror):
    listed = conforms("listDomains", send(app, live_url("listDomains"), "top-key", {"per_page": "3"}))["data"]
    regfree = conforms("listDomains", send(app, live_url("listDomains"), "top-key", {"source": "regfree"}))["data"]
    for row in listed + regfree[:1]:
        body = conforms("getDomain", send(app, live_url("getDomain", domain=row["id"]), "top-key"), str(row["id"]))
        assert body["data"] == mirror.get_domain(row["id"], "enterprise")["data"]


def _get_domain_404(app, mirror):
    for missing in ("999999999", "not-a-number"):
        response = send(app, live_url("getDomain", domain=missing), "top-key")
        assert response.status_code == 404 and conforms("getDomain", response) == {"message": "Not found."}


def _free_domains_200(app, mirror):
    walked = walk("freeDomains")
    for label, query in walked + [("no parameters", {})]:
        conforms("freeDomains", send(app, live_url("freeDomains"), None, query), label)


def _free_domains_429(app, mirror):
    strict = create_app(mirror, KEYS)  # the contract's limits: 3 a minute per address
    answers = [send(strict, live_url("freeDomains"), None, address="10.9.8.7") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    conforms("freeDomains", answers[-1])
    assert int(answers[-1].headers["Retry-After"]) > 0  # "Rate limit exceeded": when to come back


def _list_pending_200(app, mirror):
    walked = walk("listPendingDeleteDomains")
    for label, query in walked + [("no parameters", {})]:
        conforms("listPendingDeleteDomains", send(app, live_url("listPendingDeleteDomains"), "aplus-key", query), label)
    page = conforms(
        "listPendingDeleteDomains",
        send(app, live_url("listPendingDeleteDomains"), "aplus-key", {"per_page": "200", "include_past": "true"}),
    )
    assert len(page["data"]) == 200


def _list_pending_401(app, mirror):
    assert send(app, live_url("listPendingDeleteDomains")).status_code == 401
    conforms("listPendingDeleteDomains", send(app, live_url("listPendingDeleteDomains")))


def _list_pending_403(app, mirror):
    _forbidden(app, "listPendingDeleteDomains", [(key, {}, "plan_required") for key in ("pro-key", "authority-key")])


def _list_pending_503(app, mirror):
    import sqlite3

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    busy = create_app(Mirror(mirror.path, readonly=True), KEYS)  # its own mirror, held by a long write
    busy.state.mirror.search_pending_delete = locked
    response = send(busy, live_url("listPendingDeleteDomains"), "aplus-key", {"tld": "fr"})
    assert response.status_code == 503
    conforms("listPendingDeleteDomains", response)  # the live error codes and the Retry-After header


def _pending_row(app) -> dict:
    return send(app, live_url("listPendingDeleteDomains"), "aplus-key", {"per_page": "1"}).json()["data"][0]


def _get_pending_200(app, mirror):
    row = _pending_row(app)
    for name in (row["domain"], row["domain"].upper()):  # "Case-insensitive lookup by domain name"
        response = send(app, live_url("getPendingDeleteDomain", domain=name), "aplus-key")
        body = conforms("getPendingDeleteDomain", response, name)
        assert body["data"]["id"] == row["id"]


def _get_pending_401(app, mirror):
    url = live_url("getPendingDeleteDomain", domain=_pending_row(app)["domain"])
    assert send(app, url).status_code == 401
    conforms("getPendingDeleteDomain", send(app, url))


def _get_pending_403(app, mirror):
    _forbidden(
        app, "getPendingDeleteDomain", [("authority-key", {}, "plan_required")], {"domain": _pending_row(app)["domain"]}
    )


def _get_pending_404(app, mirror):
    response = send(app, live_url("getPendingDeleteDomain", domain="no-such-name-here.fr"), "aplus-key")
    assert response.status_code == 404
    conforms("getPendingDeleteDomain", response)


REPLAYS = {
    ("listDomains", 200): _list_domains_200,
    ("listDomains", 401): _list_domains_401,
    ("listDomains", 403): _list_domains_403,
    ("getDomain", 200): _get_domain_200,
    ("getDomain", 404): _get_domain_404,
    ("freeDomains", 200): _free_domains_200,
    ("freeDomains", 429): _free_domains_429,
    ("listPendingDeleteDomains", 200): _list_pending_200,
    ("listPendingDeleteDomains", 401): _list_pending_401,
    ("listPendingDeleteDomains", 403): _list_pending_403,
    ("listPendingDeleteDomains", 503): _list_pending_503,
    ("getPendingDeleteDomain", 200): _get_pending_200,
    ("getPendingDeleteDomain", 401): _get_pending_401,
    ("getPendingDeleteDomain", 403): _get_pending_403,
    ("getPendingDeleteDomain", 404): _get_pending_404,
}


def test_the_live_description_is_the_one_replayed():
    assert len(DOCUMENTS) == 3 and len(OPERATIONS) == 5
    assert {doc["info"]["version"] for doc in DOCUMENTS.values()} == {build_openapi()["info"]["x-reference-version"]}
    assert set(REPLAYS) == set(DOCUMENTED), "a documented status without a replay here, or a replay of none"


@pytest.mark.parametrize("op_id, status", DOCUMENTED)
def test_every_documented_status_replays(app, mirror, op_id, status):
    replay = REPLAYS.get((op_id, status))
    assert replay is not None, f"the live description documents {status} for {op_id}: add its replay"
    replay(app, mirror)


def test_our_document_publishes_every_live_status_and_the_422(app):
    """A client generated from our /openapi.json knows every status the live one documents,
    and the 422 the replica answers for a malformed value (the live description documents no
    status for that, so the contract's 422 naming the field stands)."""
    ours = send(app, f"https://{HOST}/openapi.json").json()
    by_id = {op["operationId"]: op for item in ours["paths"].values() for op in item.values()}
    for op_id, status in DOCUMENTED:
        assert str(status) in by_id[op_id]["responses"], (op_id, status)
    for op_id, (_, _, _, op) in OPERATIONS.items():
        if any(p["in"] == "query" for p in op.get("parameters", [])):
            assert "422" in by_id[op_id]["responses"], op_id
            assert not {"400", "422"} & set(op["responses"]), f"{op_id}: the live description now documents it"
    for op_id, key, query in (
        ("listDomains", "pro-key", {"tf_min": "101"}),
        ("listPendingDeleteDomains", "aplus-key", {"drops_within": "61"}),
        ("freeDomains", None, {"limit": "51"}),
    ):
        response = send(app, live_url(op_id), key, query)
        assert response.status_code == 422 and list(response.json()["errors"]) == list(query), (op_id, response.text)
        documented = by_id[op_id]["responses"]["422"]["content"]["application/json"]["schema"]
        jsonschema.Draft202012Validator({**documented, "components": ours["components"]}).validate(response.json())
