"""Every statement the API's requests run is a named query of ``storage.queries``, compiled
once per dialect, so a request compiles nothing once each statement has run once."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from hookline.storage import statements
from tests.conftest import Account

_ROUND = itertools.count()
CONTACT = {"first_name": "Ada", "phone_number": "+14155552671", "tags": ["vip"]}


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The SQL of every statement compiled while the test runs (``storage.statements`` compiles
    each ``Query`` once per dialect, and any other statement on every call)."""
    seen: list[str] = []
    compile_statement: Callable[..., statements.Compiled] = statements.compile_statement

    def counting(statement: Any, *args: Any, **kwargs: Any) -> statements.Compiled:
        result = compile_statement(statement, *args, **kwargs)
        seen.append(result.sql)
        return result

    monkeypatch.setattr(statements, "compile_statement", counting)
    yield seen


async def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, (response.request.url, response.text)
    return response.json() if response.content else None


async def _contacts_calls_and_events(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    contact = await _ok(await client.post("/v1/contacts", json=CONTACT, headers=headers), 201)
    path = f"/v1/contacts/{contact['id']}"
    await _ok(await client.get(path, headers=headers))
    await _ok(await client.patch(path, json={"notes": f"round {next(_ROUND)}"}, headers=headers))
    await _ok(await client.get("/v1/contacts?limit=2", headers=headers))
    await _ok(await client.get("/v1/contacts?limit=2&search=ada", headers=headers))
    await _ok(await client.get("/v1/contacts?limit=2&tags=vip", headers=headers))
    call_body = {"call_type": "inbound", "customer_phone_number": CONTACT["phone_number"]}
    call = await _ok(await client.post("/v1/calls", json=call_body, headers=headers), 201)
    assert call["contact_id"] == contact["id"]  # found by its phone number
    linked = {**call_body, "contact_id": contact["id"]}
    await _ok(await client.post("/v1/calls", json=linked, headers=headers), 201)
    await _ok(await client.get(f"/v1/calls/{call['id']}", headers=headers))
    done = {"call_status": "completed", "analysis": {"lead_qualification": "qualified"}}
    await _ok(await client.post(f"/v1/calls/{call['id']}/complete", json=done, headers=headers))
    await _ok(await client.get(f"/v1/calls?contact_id={contact['id']}", headers=headers))
    events = await _ok(await client.get("/v1/events?limit=2", headers=headers))
    await _ok(await client.get(f"/v1/events/{events[0]['id']}", headers=headers))
    await _ok(await client.get("/v1/events?limit=2&type=contact.created", headers=headers))
    await _ok(await client.delete(path, headers=headers))


async def _webhooks(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    body = {"url": f"http://127.0.0.1:9/{next(_ROUND)}", "events": ["contact.created"]}
    hook = await _ok(await client.post("/v1/webhooks", json=body, headers=headers), 201)
    path = f"/v1/webhooks/{hook['id']}"
    await _ok(await client.get("/v1/webhooks", headers=headers))
    await _ok(await client.get(path, headers=headers))
    await _ok(await client.patch(path, json={"name": f"n{next(_ROUND)}"}, headers=headers))
    await _ok(await client.post(f"{path}/rotate-secret", headers=headers))
    await _ok(await client.delete(path, headers=headers))


async def _idempotent_post(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    keyed = {**headers, "Idempotency-Key": f"key-{next(_ROUND)}"}
    for _ in range(2):  # the request, then its replay
        await _ok(await client.post("/v1/contacts", json=CONTACT, headers=keyed), 201)


@pytest.mark.parametrize("requests", [_contacts_calls_and_events, _webhooks, _idempotent_post])
async def test_requests_compile_no_statement_once_warm(
    app: FastAPI,
    client: httpx.AsyncClient,
    account: Account,
    compiled: list[str],
    requests: Callable[[httpx.AsyncClient, dict[str, str]], Any],
) -> None:
    await requests(client, account.headers)  # the first time, each statement compiles once
    # With what the requests started after answering (last_used_at, the idempotency sweep).
    await asyncio.gather(*app.state.background_tasks)
    compiled.clear()
    await requests(client, account.headers)
    await asyncio.gather(*app.state.background_tasks)
    assert compiled == [], "compiled per call, not once: a statement outside storage.queries?"
