"""The toolkit against the live service's public description (tests/fixtures/reference/catchdoms)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from conftest import REFERENCE
from toolkit.query.params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS, PENDING_STATUSES
from toolkit.sources import SOURCES
from toolkit.store.fields import LISTING_FIELDS, PENDING_FIELDS

KIND_TYPES = {
    "int": "integer",
    "num": "number",
    "str": "string",
    "bool": "boolean",
    "date": "string",
    "datetime": "string",
    "array": "array",
    "object": "object",
}


def _schema(name: str) -> dict:
    return json.loads((REFERENCE / "json-schema" / f"catchdoms-{name}-schema.json").read_text())


def _openapi(name: str) -> dict:
    return yaml.safe_load((REFERENCE / "openapi" / f"catchdoms-{name}-api-openapi.yml").read_text())


@pytest.mark.parametrize("schema, fields", [("domain", LISTING_FIELDS), ("pending-delete-domain", PENDING_FIELDS)])
def test_every_reference_field_is_a_column_of_its_type(schema, fields):
    properties = _schema(schema)["properties"]
    assert set(properties) == set(fields)
    for name, prop in properties.items():
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        assert KIND_TYPES[fields[name]] in types, name
        if prop.get("format") == "date":
            assert fields[name] == "date", name
        if prop.get("format") == "date-time":
            assert fields[name] == "datetime", name


def test_sources_are_the_reference_enum():
    assert [s.slug for s in SOURCES] == _schema("domain")["properties"]["source"]["enum"]


def test_every_reference_parameter_is_defined_with_its_range():
    operations = {
        "domains": (_openapi("domains")["paths"]["/domains"]["get"], DOMAIN_PARAMS),
        "pending": (_openapi("pending-delete")["paths"]["/pending-delete"]["get"], PENDING_PARAMS),
        "free": (_openapi("free")["paths"]["/free/domains"]["get"], FREE_PARAMS),
    }
    for label, (operation, table) in operations.items():
        for ref in operation["parameters"]:
            param = table.get(ref["name"])
            assert param is not None, f"{label}: {ref['name']}"
            schema = ref["schema"]
            if "minimum" in schema:
                assert param.minimum == schema["minimum"], ref["name"]
            if "maximum" in schema:
                assert param.maximum == schema["maximum"], ref["name"]
            if "enum" in schema and ref["name"] != "source":
                assert set(param.choices) == set(schema["enum"]), ref["name"]
    pending_status = _schema("pending-delete-domain")["properties"]["whois_status"]["enum"]
    assert list(PENDING_STATUSES) == pending_status
    assert FREE_PARAMS["source"].choices == tuple(
        _openapi("free")["paths"]["/free/domains"]["get"]["parameters"][0]["schema"]["enum"]
    )


def _validator(name: str):
    return jsonschema.Draft202012Validator(_schema(name), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def test_records_validate_against_the_reference_schemas(mirror):
    domain = _validator("domain")
    for params in ({"per_page": "100"}, {"source": "regfree", "per_page": "100"}, {"include_historical_traffic": "1"}):
        for record in mirror.search_domains(params)["data"]:
            domain.validate(record)
    pending = _validator("pending-delete-domain")
    for record in mirror.search_pending_delete({"per_page": "200", "include_past": "1"})["data"]:
        pending.validate(record)
    free = _validator("free-domain")
    for record in mirror.free_domains({"limit": "50"})["data"]:
        free.validate(record)


def test_envelope_meta_and_links_validate(mirror):
    meta, links = _validator("pagination-meta"), _validator("pagination-links")
    for params in ({}, {"page": "9999"}, {"after_id": "0"}):
        envelope = mirror.search_domains(params)
        meta.validate(envelope["meta"])
        links.validate(envelope["links"])
    assert set(envelope["meta"]) >= set(_schema("pagination-meta")["properties"])
