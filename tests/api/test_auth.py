"""Authentication on every /v1 route: missing, malformed, unknown and revoked keys."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI

from hookline.domain import keys
from hookline.storage.db import Database
from tests.conftest import Account


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer not-a-key",
        # Right shape, wrong checksum: refused without a database look-up.
        "Bearer hl_live_" + "A" * 38,
    ],
)
async def test_bad_credentials_are_401_with_www_authenticate(
    client: httpx.AsyncClient, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    response = await client.get("/v1/contacts", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_each_refusal_says_what_is_wrong_with_the_key(client: httpx.AsyncClient) -> None:
    good = keys.generate_key()
    typo = good[:12] + ("B" if good[12] != "B" else "C") + good[13:]
    expected = {
        "not-a-key": "expected hl_live_..., 46 chars",
        good[:-1]: "expected hl_live_..., 46 chars",
        typo: "checksum does not match",
        good: "unknown or was revoked",
    }
    for key, fragment in expected.items():
        response = await client.get("/v1/contacts", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 401
        assert fragment in response.json()["error"]["message"], key


async def test_well_formed_unknown_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.get(
        "/v1/contacts", headers={"Authorization": f"Bearer {keys.generate_key()}"}
    )
    assert response.status_code == 401


async def test_auth_is_checked_before_the_body(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/contacts", content=b"x", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 401


async def test_revocation_is_immediate(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    assert (await client.get("/v1/contacts", headers=account.headers)).status_code == 200
    async with db.read() as conn:
        [record] = await keys.list_keys(conn, account.id)
    async with db.begin() as conn:
        assert await keys.revoke_key(conn, account.id, record["id"])
    assert (await client.get("/v1/contacts", headers=account.headers)).status_code == 401


async def test_last_used_at_is_recorded(
    client: httpx.AsyncClient, db: Database, account: Account, app: FastAPI
) -> None:
    async with db.read() as conn:
        [before] = await keys.list_keys(conn, account.id)
    assert before["last_used_at"] is None
    assert (await client.get("/v1/contacts", headers=account.headers)).status_code == 200
    # The touch runs after the response; wait for the app's background tasks.
    await asyncio.gather(*app.state.background_tasks)
    async with db.read() as conn:
        [after] = await keys.list_keys(conn, account.id)
    assert after["last_used_at"] is not None
