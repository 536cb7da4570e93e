"""The replica's OpenAPI document: generated from the parameter definitions, compatible with
the live service's reference, valid OpenAPI 3.1, and honoured by the server (schemathesis)."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import jsonschema
import pytest
import yaml

from conftest import REFERENCE, fixed_clock  # noqa: E402
from toolkit.serve.openapi import EXPORT_PARAMS, build_openapi, param_schema  # noqa: E402
from toolkit.query.params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS, RESULT_PARAMS  # noqa: E402
from toolkit.plans import PLANS  # noqa: E402
from toolkit.serve.server import create_app  # noqa: E402

OPERATIONS = {  # operationId -> path
    "listDomains": "/api/domains",
    "getDomain": "/api/domains/{id}",
    "listPendingDeleteDomains": "/api/pending-delete",
    "getPendingDeleteDomain": "/api/pending-delete/{domain}",
    "freeDomains": "/api/free/domains",
    "exportDomains": "/api/export",
    "listAuctionResults": "/api/results",  # an extension: what ended auctions sold for
}
PARAMETER_TABLES = {  # the operations that take query parameters, and their definitions
    "listDomains": DOMAIN_PARAMS,
    "listPendingDeleteDomains": PENDING_PARAMS,
    "freeDomains": FREE_PARAMS,
    "exportDomains": EXPORT_PARAMS,
    "listAuctionResults": RESULT_PARAMS,
}
REFERENCE_OPERATIONS = {  # reference file, path -> our operation
    ("domains", "/domains"): "listDomains",
    ("domains", "/domains/{domain}"): "getDomain",
    ("pending-delete", "/pending-delete"): "listPendingDeleteDomains",
    ("pending-delete", "/pending-delete/{domain}"): "getPendingDeleteDomain",
    ("free", "/free/domains"): "freeDomains",
}


@pytest.fixture(scope="module")
def doc() -> dict:
    return build_openapi("http://testserver")


def operations(doc: dict) -> dict[str, dict]:
    return {op["operationId"]: op for item in doc["paths"].values() for op in item.values()}


def _reference(name: str) -> dict:
    return yaml.safe_load((REFERENCE / "openapi" / f"catchdoms-{name}-api-openapi.yml").read_text())


def _types(schema: dict) -> set[str]:
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


# -- the document ---------------------------------------------------------------------------------------


def test_document_is_valid_openapi_3_1(doc):
    from schemathesis.specs.openapi import definitions

    validator = jsonschema.Draft202012Validator(definitions.OPENAPI_31)
    assert doc["openapi"].startswith("3.1.")
    assert [e.message for e in validator.iter_errors(doc)] == []


def test_operations_are_the_reference_ids_plus_export_and_results(doc):
    ops = operations(doc)
    assert set(ops) == set(OPERATIONS)
    for op_id, path in OPERATIONS.items():
        assert doc["paths"][path]["get"]["operationId"] == op_id
    assert ops["freeDomains"]["security"] == [] and doc["security"] == [{"BearerAuth": []}]


def test_parameters_are_generated_from_the_definitions(doc):
    ops = operations(doc)
    for op_id, table in PARAMETER_TABLES.items():
        documented = {p["name"]: p for p in ops[op_id]["parameters"]}
        assert list(documented) == list(table), op_id
        for name, param in table.items():
            assert documented[name]["schema"] == param_schema(param), (op_id, name)
            assert documented[name].get("x-extension", False) == param.extension, (op_id, name)
            assert documented[name]["description"].startswith(param.description)
    # spot checks that the generated schema states the rules
    domains = {p["name"]: p["schema"] for p in ops["listDomains"]["parameters"]}
    assert domains["tf_min"] == {"type": "integer", "minimum": 0, "maximum": 100}
    assert domains["per_page"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    assert domains["contains"] == {"type": "string", "maxLength": 200}
    assert "regfree" in domains["source"]["enum"] and "-score" in domains["sort"]["enum"]
    assert "page" not in {p["name"] for p in ops["exportDomains"]["parameters"]}


def test_the_document_follows_a_changed_definition(monkeypatch):
    """No copy to drift: a changed range is in the next document."""
    import dataclasses

    import toolkit.serve.openapi as openapi

    monkeypatch.setitem(DOMAIN_PARAMS, "tf_min", dataclasses.replace(DOMAIN_PARAMS["tf_min"], maximum=90))
    monkeypatch.setattr(openapi, "_DOCUMENT", None)
    changed = {p["name"]: p for p in operations(openapi.build_openapi())["listDomains"]["parameters"]}
    assert changed["tf_min"]["schema"]["maximum"] == 90
    monkeypatch.setattr(openapi, "_DOCUMENT", None)


def test_every_reference_parameter_is_documented_compatibly(doc):
    ops = operations(doc)
    for (file, path), op_id in REFERENCE_OPERATIONS.items():
        reference = _reference(file)["paths"][path]["get"]
        assert reference["operationId"] == op_id
        ours = {p["name"]: p for p in ops[op_id]["parameters"]}
        for ref in reference["parameters"]:
            if ref["in"] == "path":
                ours_path = [p for p in ops[op_id]["parameters"] if p["in"] == "path"]
                assert len(ours_path) == 1 and _types(ours_path[0]["schema"]) == _types(ref["schema"])
                continue
            mine = ours[ref["name"]]["schema"]
            assert _types(mine) == _types(ref["schema"]), (op_id, ref["name"])
            for key in ("minimum", "maximum", "maxLength", "format"):
                if key in ref["schema"] and (key != "maxLength" or "maxLength" in mine):
                    assert mine.get(key) == ref["schema"][key], (op_id, ref["name"], key)
            if "enum" in ref["schema"]:
                # every value the live service takes is taken; the one deliberate extension is the
                # pending-delete sources of `edt ingest`'s feeds (rows only a local mirror has)
                extra = (
                    {"bardate", "droplist", "zonediff"}
                    if (op_id, ref["name"]) == ("listPendingDeleteDomains", "source")
                    else set()
                )
                assert set(mine["enum"]) == set(ref["schema"]["enum"]) | extra, (op_id, ref["name"])
            if ref["schema"].get("default") not in (None, False):
                assert mine.get("default") == ref["schema"]["default"], (op_id, ref["name"])


@pytest.mark.parametrize(
    "name, schema",
    [("domain", "Domain"), ("pending-delete-domain", "PendingDeleteDomain"), ("free-domain", "FreeDomain")],
)
def test_record_schemas_carry_every_reference_field_with_its_type(doc, name, schema):
    reference = json.loads((REFERENCE / "json-schema" / f"catchdoms-{name}-schema.json").read_text())["properties"]
    ours = doc["components"]["schemas"][schema]["properties"]
    assert set(reference) <= set(ours)
    for field, ref in reference.items():
        assert _types(ours[field]) == _types(ref), field
        assert ours[field].get("format") == ref.get("format"), field
        if "items" in ref:
            assert ours[field]["items"] == ref["items"], field
    for extra in set(ours) - set(reference):
        assert ours[extra].get("description", "").startswith("Toolkit"), extra


def test_every_keyed_response_documents_the_rate_headers(doc):
    for op_id, op in operations(doc).items():
        for status, response in op["responses"].items():
            headers = response.get("headers", {})
            if status in ("200", "403", "404", "422", "429") and op_id != "freeDomains" or status in ("200", "429"):
                assert {"X-RateLimit-Limit", "X-RateLimit-Remaining"} <= set(headers), (op_id, status)
            if status == "429":
                assert "Retry-After" in headers


# -- the server against its document -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(synthetic_db):
    logging.getLogger("toolkit.serve.server").setLevel(logging.ERROR)  # the overrides below are meant
    return create_app(synthetic_db, {"k": "enterprise", "p": "pro"}, {p: 1_000_000 for p in PLANS}, clock=fixed_clock)


def _get(app, url: str, key: str | None = "k") -> httpx.Response:
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            return await client.get(url, headers={"Authorization": f"Bearer {key}"} if key else {})

    return asyncio.run(go())


def test_served_document_is_the_generated_one(app, doc):
    assert _get(app, "/openapi.json", None).json() == doc


@pytest.mark.parametrize(
    "url, key, status",
    [
        ("/api/domains?per_page=3", "k", 200),
        ("/api/domains?after_id=5&per_page=2", "k", 200),
        ("/api/domains", None, 401),
        ("/api/domains?source=regfree&per_page=2", "k", 200),
        ("/api/domains?source=regfree", "p", 403),
        ("/api/domains?after_id=0&source=regfree", "k", 403),
        ("/api/domains?tf_min=x", "k", 422),
        ("/api/domains/3", "k", 200),
        ("/api/domains/4", "k", 404),
        ("/api/pending-delete?per_page=4&include_past=1", "k", 200),
        ("/api/pending-delete", "p", 403),
        ("/api/free/domains?limit=6", None, 200),
        ("/api/free/domains?limit=0", None, 422),
        ("/api/export?tld=.fr", "p", 403),
        ("/api/export?tf_min=x", "k", 422),
    ],
)
def test_answers_validate_against_the_document(app, doc, url, key, status):
    response = _get(app, url, key)
    assert response.status_code == status
    path = url.split("?")[0]
    template = {"/api/domains/3": "/api/domains/{id}", "/api/domains/4": "/api/domains/{id}"}.get(path, path)
    documented = doc["paths"][template]["get"]["responses"][str(status)]
    schema = {**documented["content"]["application/json"]["schema"], "components": doc["components"]}
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(
        response.json()
    )
    for name, header in documented.get("headers", {}).items():
        if doc["components"]["headers"][header["$ref"].rsplit("/", 1)[1]].get("required"):
            assert name in response.headers, (url, name)


# -- schemathesis ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode, examples", [("positive", 40), ("negative", 25)])
def test_schemathesis_finds_no_server_error_and_no_broken_response(app, mode, examples):
    """Every operation, a bounded number of generated requests each: no 5xx; with valid
    input, every status, content type, header and body as the document says."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    if mode == "positive":
        generation = GenerationMode.POSITIVE
        checks = [
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ]
    else:  # invalid input: anything may be refused, but never with a 5xx
        generation = GenerationMode.NEGATIVE
        checks = [not_a_server_error]
    seen = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        statuses: dict[int, int] = {}

        @given(case=operation.as_strategy(generation_mode=generation))
        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def check(case):
            response = case.call_and_validate(headers={"Authorization": "Bearer k"}, checks=checks)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        check()
        seen[operation.label] = statuses
    assert len(seen) == len(OPERATIONS)
    assert all(status < 500 for statuses in seen.values() for status in statuses)
    if mode == "positive":
        assert seen["GET /api/domains"].get(200) and seen["GET /api/export"].get(200)
