"""``GET/PATCH /v1/account``: the settings, their defaults and bounds, the scopes; on SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from hookline.storage.db import Database
from tests.conftest import Account, new_account
from tests.support.api import field_errors


async def test_a_new_account_has_the_defaults(client: httpx.AsyncClient, account: Account) -> None:
    response = await client.get("/v1/account", headers=account.headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"id", "name", "retention_days", "max_call_seconds", "created_at"}
    assert (body["id"], body["retention_days"], body["max_call_seconds"]) == (
        account.id,
        30,
        3600,
    )


async def test_patch_changes_what_it_names_and_keeps_the_rest(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    response = await client.patch(
        "/v1/account", json={"max_call_seconds": 600}, headers=account.headers
    )
    assert response.status_code == 200, response.text
    assert (response.json()["max_call_seconds"], response.json()["retention_days"]) == (600, 30)
    response = await client.patch(
        "/v1/account", json={"retention_days": 7}, headers=account.headers
    )
    assert (response.json()["max_call_seconds"], response.json()["retention_days"]) == (600, 7)
    fetched = (await client.get("/v1/account", headers=account.headers)).json()
    assert fetched == response.json()
    theirs = (await client.get("/v1/account", headers=other_account.headers)).json()
    assert (theirs["max_call_seconds"], theirs["retention_days"]) == (3600, 30)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"max_call_seconds": 59}, "max_call_seconds"),
        ({"max_call_seconds": 604_801}, "max_call_seconds"),
        ({"max_call_seconds": None}, "max_call_seconds"),
        ({"max_call_seconds": "600"}, "max_call_seconds"),
        ({"max_call_seconds": 600.5}, "max_call_seconds"),
        ({"retention_days": 0}, "retention_days"),
        ({"retention_days": 3651}, "retention_days"),
        ({"retention_days": True}, "retention_days"),
        ({"retention_days": 10**30}, "retention_days"),
        ({"name": "x"}, "name"),
        ({"id": "acct"}, "id"),
    ],
)
async def test_bad_settings_are_refused_by_name(
    client: httpx.AsyncClient, account: Account, body: dict[str, Any], field: str
) -> None:
    response = await client.patch("/v1/account", json=body, headers=account.headers)
    assert response.status_code == 422, response.text
    assert field in field_errors(response)
    fetched = (await client.get("/v1/account", headers=account.headers)).json()
    assert (fetched["max_call_seconds"], fetched["retention_days"]) == (3600, 30)


async def test_any_key_reads_and_only_calls_write_changes(
    client: httpx.AsyncClient, db: Database
) -> None:
    reader = await new_account(db, scopes=["contacts:read"])
    assert (await client.get("/v1/account", headers=reader.headers)).status_code == 200
    response = await client.patch(
        "/v1/account", json={"max_call_seconds": 120}, headers=reader.headers
    )
    assert response.status_code == 403
    assert (await client.get("/v1/account")).status_code == 401
