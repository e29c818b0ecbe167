"""What a webhook receives of an event (delivery.shaping): every type's thin body is its ids and
a URL, valid against the thin schema the catalogue publishes for that type."""

from __future__ import annotations

import jsonschema
import orjson
import pytest

from hookline.delivery.shaping import shape_of, shaped
from hookline.schemas.catalogue import EventKind, catalogue, thin_schema

API_URL = "https://hooks.example.com"


@pytest.mark.parametrize("kind", catalogue(), ids=lambda kind: kind.event_type)
def test_every_type_thins_to_its_thin_schema(kind: EventKind) -> None:
    body = orjson.dumps(
        {
            "id": "evt_1",
            "type": kind.event_type,
            "timestamp": "2026-01-01T00:00:00Z",
            "data": kind.example,
        }
    )
    thin = orjson.loads(shaped(body, shape_of(None, "thin", API_URL + "/")))
    jsonschema.validate(thin, thin_schema(kind.event_type))
    assert thin["data"]["url"].startswith(API_URL + "/v1/")
    assert thin["data"]["url"].endswith(thin["data"]["id"])
