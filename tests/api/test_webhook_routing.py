"""A webhook's routing fields through the API: ``headers`` (encrypted, masked, merged),
``filter`` (CEL, compile errors named) and ``rate_limit``; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import select

from hookline.crypto import SecretBox
from hookline.delivery.header_rules import RESERVED_HEADERS
from hookline.domain.webhook_routing import unseal
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from tests.conftest import TEST_SECRET_KEY
from tests.support.api import field_errors
from tests.support.filters import nested

HOOK = {"url": "https://example.com/hooks", "events": ["contact.created"]}
MASK = "********"
FILTER = 'event.type == "call.completed" && event.data.call_status == "completed"'


async def create(client: httpx.AsyncClient, auth: dict[str, str], **fields: Any) -> Any:
    response = await client.post("/v1/webhooks", json={**HOOK, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()


async def patch(
    client: httpx.AsyncClient, auth: dict[str, str], webhook_id: str, **fields: Any
) -> httpx.Response:
    return await client.patch(f"/v1/webhooks/{webhook_id}", json=fields, headers=auth)


async def test_routing_fields_default_to_none(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    webhook = await create(client, auth_headers)
    assert (webhook["headers"], webhook["filter"], webhook["rate_limit"]) == ({}, None, None)


async def test_headers_are_masked_everywhere_and_encrypted_at_rest(
    client: httpx.AsyncClient, auth_headers: dict[str, str], db: Database
) -> None:
    secret_value = "sk_live_gateway-key-0123456789"
    webhook = await create(
        client,
        auth_headers,
        headers={"X-Api-Key": secret_value, "Authorization": "Bearer abc def"},
        filter=FILTER,
        rate_limit=25,
    )
    expected = {"X-Api-Key": MASK, "Authorization": MASK}
    assert webhook["headers"] == expected
    assert (webhook["filter"], webhook["rate_limit"]) == (FILTER, 25)
    got = (await client.get(f"/v1/webhooks/{webhook['id']}", headers=auth_headers)).json()
    assert got["headers"] == expected and got["filter"] == FILTER and got["rate_limit"] == 25
    listed = (await client.get("/v1/webhooks", headers=auth_headers)).json()
    assert [w["headers"] for w in listed if w["id"] == webhook["id"]] == [expected]
    async with db.read() as conn:
        row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook["id"]))).one()
    assert row.headers_enc and secret_value not in row.headers_enc
    assert "Bearer" not in row.headers_enc
    for value in row._mapping.values():
        assert secret_value not in str(value)


async def test_patch_merges_headers_and_null_removes_one(
    client: httpx.AsyncClient, auth_headers: dict[str, str], db: Database
) -> None:
    webhook = await create(client, auth_headers, headers={"X-A": "1", "X-B": "2"})
    response = await patch(
        client, auth_headers, webhook["id"], headers={"x-a": None, "X-C": "3", "X-B": "two"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["headers"] == {"X-B": MASK, "X-C": MASK}
    # A PATCH without headers keeps them; removing one that isn't there changes nothing.
    kept = await patch(client, auth_headers, webhook["id"], name="n", headers={"X-Nope": None})
    assert kept.json()["headers"] == {"X-B": MASK, "X-C": MASK}
    async with db.read() as conn:
        row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook["id"]))).one()
    assert unseal(SecretBox(TEST_SECRET_KEY), row.headers_enc) == {"X-B": "two", "X-C": "3"}
    cleared = await patch(client, auth_headers, webhook["id"], headers={"X-B": None, "X-C": None})
    assert cleared.json()["headers"] == {}


async def test_patch_sets_and_clears_filter_and_rate_limit(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    webhook = await create(client, auth_headers)
    response = await patch(client, auth_headers, webhook["id"], filter=FILTER, rate_limit=10000)
    assert (response.json()["filter"], response.json()["rate_limit"]) == (FILTER, 10000)
    response = await patch(client, auth_headers, webhook["id"], filter=None, rate_limit=None)
    assert (response.json()["filter"], response.json()["rate_limit"]) == (None, None)


TOO_MANY = {f"X-H{i}": "v" for i in range(21)}


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"headers": {"Content-Type": "text/plain"}}, "headers", "set by hookline"),
        ({"headers": {"webhook-signature": "v1,x"}}, "headers", "set by hookline"),
        ({"headers": {"Webhook-Custom": "x"}}, "headers", "set by hookline"),
        ({"headers": {"host": "evil"}}, "headers", "set by hookline"),
        ({"headers": {"User-Agent": "x"}}, "headers", "set by hookline"),
        ({"headers": {"Connection": "close"}}, "headers", "set by hookline"),
        ({"headers": {"Transfer-Encoding": "chunked"}}, "headers", "set by hookline"),
        ({"headers": {"Content-Length": "1"}}, "headers", "set by hookline"),
        ({"headers": {"X-A": "a\r\nX-Injected: 1"}}, "headers", "CR, LF"),
        ({"headers": {"X-A": "a\nb"}}, "headers", "CR, LF"),
        ({"headers": {"X-A": "a\x00b"}}, "headers", "control"),
        ({"headers": {"X-A": "a\tb"}}, "headers", "visible ASCII"),
        ({"headers": {"X-A": "café"}}, "headers", "non-ASCII"),
        ({"headers": {"X-A": "a\x7fb"}}, "headers", "control"),
        ({"headers": {"Expect": "100-continue"}}, "headers", "Expect controls how"),
        ({"headers": {"TE": "trailers"}}, "headers", "TE controls how"),
        ({"headers": {"Trailer": "X-A"}}, "headers", "Trailer controls how"),
        ({"headers": {"Upgrade": "websocket"}}, "headers", "Upgrade controls how"),
        ({"headers": {"Keep-Alive": "timeout=5"}}, "headers", "Keep-Alive controls how"),
        ({"headers": {"Proxy-Authorization": "x"}}, "headers", "Proxy-Authorization controls"),
        ({"headers": {"Content-Encoding": "gzip"}}, "headers", "Content-Encoding controls"),
        ({"headers": {"content-language": "en"}}, "headers", "content-language controls"),
        ({"headers": {"X A": "a"}}, "headers", "token"),
        ({"headers": {"": "a"}}, "headers", "token"),
        ({"headers": {"X-Ü": "a"}}, "headers", "token"),
        ({"headers": {"X-A": "v" * 1025}}, "headers", "1024"),
        ({"headers": {"X-A": 5}}, "headers.X-A", "string"),
        ({"headers": {"X-A": "1", "x-a": "2"}}, "headers", "twice"),
        ({"headers": TOO_MANY}, "headers", "20"),
        ({"headers": ["X-A"]}, "headers", "dictionary"),
        ({"filter": "event.type =="}, "filter", "Syntax error"),
        ({"filter": "event.type == 'a' &&"}, "filter", "Syntax error"),
        ({"filter": ""}, "filter", "blank"),
        ({"filter": "true || " * 200 + "true"}, "filter", "1024"),
        ({"filter": 5}, "filter", "string"),
        ({"rate_limit": 0}, "rate_limit", "greater than or equal to 1"),
        ({"rate_limit": 10001}, "rate_limit", "less than or equal to 10000"),
        ({"rate_limit": "10"}, "rate_limit", "integer"),
        ({"rate_limit": 10.0}, "rate_limit", "integer"),
        ({"rate_limit": True}, "rate_limit", "integer"),
        ({"rate_limit": 10**30}, "rate_limit", "less than or equal"),
    ],
)
async def test_bad_routing_fields_are_named_on_create_and_patch(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    fields: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    created = field_errors(
        await client.post("/v1/webhooks", json={**HOOK, **fields}, headers=auth_headers)
    )
    assert fragment.lower() in created[field].lower(), created
    webhook = await create(client, auth_headers)
    patched = field_errors(await patch(client, auth_headers, webhook["id"], **fields))
    assert fragment.lower() in patched[field].lower(), patched
    after = (await client.get(f"/v1/webhooks/{webhook['id']}", headers=auth_headers)).json()
    assert after == webhook | {"secret": "whsec_********"}


async def test_filter_compile_error_carries_the_parsers_position(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.post(
        "/v1/webhooks", json={**HOOK, "filter": "event.type == "}, headers=auth_headers
    )
    message = field_errors(response)["filter"]
    assert "1:15" in message and "mismatched input" in message


# The filter: eight nested ranges, 10^8 iterations, minutes of the interpreter.
COSTLY_FILTER = nested(8)


async def test_a_filter_over_the_cost_budget_is_a_422_on_create_and_patch(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    refused = await client.post(
        "/v1/webhooks", json={**HOOK, "filter": COSTLY_FILTER}, headers=auth_headers
    )
    assert "exceeds the budget" in field_errors(refused)["filter"]
    webhook = await create(client, auth_headers, filter='"vip" in event.data.tags')
    response = await patch(client, auth_headers, webhook["id"], filter=COSTLY_FILTER)
    assert "exceeds the budget" in field_errors(response)["filter"]
    kept = await client.get(f"/v1/webhooks/{webhook['id']}", headers=auth_headers)
    assert kept.json()["filter"] == '"vip" in event.data.tags'


async def test_a_merge_past_twenty_headers_is_refused(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    webhook = await create(client, auth_headers, headers={f"X-{i}": "v" for i in range(20)})
    response = await patch(client, auth_headers, webhook["id"], headers={"X-Extra": "v"})
    assert "20" in field_errors(response)["headers"]
    replaced = await patch(client, auth_headers, webhook["id"], headers={"X-0": None, "X-N": "v"})
    assert replaced.status_code == 200 and len(replaced.json()["headers"]) == 20


async def test_headers_cannot_be_null_on_patch(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    webhook = await create(client, auth_headers)
    assert "headers" in field_errors(await patch(client, auth_headers, webhook["id"], headers=None))


# Names hookline sets (never storable) and names that steer the connection (refused, but a
# webhook may hold one stored before they were, so PATCH may remove it), in three spellings,
# and names that only resemble them.
SET_BY_HOOKLINE = [*sorted(RESERVED_HEADERS), "webhook-x"]
CONTROL = ["expect", "te", "trailer", "upgrade", "keep-alive", "proxy-authorization"]
CONTROL += ["proxy-connection", "http2-settings", "content-encoding", "content-x"]
NAMES = [
    spelling
    for name in [*SET_BY_HOOKLINE, *CONTROL]
    for spelling in (name, name.upper(), name.title())
] + ["X-Api-Key", "Hosts", "X-Host", "Contents", "Webhook", "Xwebhook-id", "Authorization"]
NAMES += ["X-Expect", "Tea", "Upgrades", "Proxy", "X-Proxy-Id", "Content", "X-Content-Id"]


def _is_set_by_hookline(name: str) -> bool:
    return name.lower() in RESERVED_HEADERS or name.lower().startswith("webhook-")


def _is_control(name: str) -> bool:
    lowered = name.lower()
    return lowered in CONTROL or lowered.startswith(("proxy-", "content-"))


@pytest.mark.parametrize("name", NAMES)
async def test_the_openapi_schema_refuses_exactly_the_names_the_api_refuses(
    client: httpx.AsyncClient, auth_headers: dict[str, str], name: str
) -> None:
    """The refusals are in the schema (case-insensitive ``propertyNames`` ``not`` patterns),
    so a generated client or a fuzzer knows what the validator enforces, on create and on
    PATCH, where a control header may still be removed."""
    document = (await client.get("/v1/openapi.json")).json()
    schemas = document["components"]["schemas"]
    create_schema = Draft202012Validator(schemas["WebhookCreate"]["properties"]["headers"])
    patch_schema = Draft202012Validator(schemas["WebhookUpdate"]["properties"]["headers"])
    reserved = _is_set_by_hookline(name)
    refused = reserved or _is_control(name)
    assert create_schema.is_valid({name: "v"}) is not refused
    assert patch_schema.is_valid({name: "v"}) is not refused
    assert patch_schema.is_valid({name: None}) is not reserved
    created = await client.post(
        "/v1/webhooks", json={**HOOK, "headers": {name: "v"}}, headers=auth_headers
    )
    assert created.status_code == (422 if refused else 201), created.text
    webhook = await create(client, auth_headers)
    removed = await patch(client, auth_headers, webhook["id"], headers={name: None})
    assert removed.status_code == (422 if reserved else 200), removed.text
    set_one = await patch(client, auth_headers, webhook["id"], headers={name: "v"})
    assert set_one.status_code == (422 if refused else 200), set_one.text
