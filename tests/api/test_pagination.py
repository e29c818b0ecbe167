"""Paginated lists on SQLite and PostgreSQL: each page is the response itself (no response-model
pass), so each item must already have exactly its schema's fields and validate against it."""

from __future__ import annotations

import httpx
from pydantic import BaseModel

from hookline.schemas.calls import CallOut
from hookline.schemas.contacts import ContactOut
from hookline.schemas.deliveries import DeliveryOut
from hookline.schemas.events import EventOut
from hookline.storage.db import Database
from tests.api.test_calls import CALL
from tests.conftest import Account
from tests.support.fanout import fan_out_everything

ADA = {"first_name": "Ada", "phone_number": "+14155552671", "tags": ["vip"]}


def assert_shaped(items: list[dict[str, object]], schema: type[BaseModel]) -> None:
    assert items, "the list should not be empty"
    for item in items:
        assert set(item) == set(schema.model_fields), schema.__name__
        schema.model_validate(item, strict=False)


async def test_every_list_endpoint_returns_its_schema_exactly(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    headers = account.headers
    hook = await client.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=headers,
    )
    assert hook.status_code == 201, hook.text
    for _ in range(3):
        assert (await client.post("/v1/contacts", json=ADA, headers=headers)).status_code == 201
    assert (await client.post("/v1/calls", json=CALL, headers=headers)).status_code == 201
    await fan_out_everything(db)  # the worker's fan-out, run here

    lists: dict[str, type[BaseModel]] = {
        "/v1/contacts?limit=2": ContactOut,
        "/v1/calls": CallOut,
        "/v1/events?limit=2": EventOut,
        f"/v1/webhooks/{hook.json()['id']}/deliveries?limit=2": DeliveryOut,
    }
    for path, schema in lists.items():
        response = await client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        assert_shaped(response.json(), schema)
        if "limit=2" in path:  # three or more exist: a next page
            assert 'rel="next"' in response.headers["link"], path
