"""``POST /v1/webhooks/{id}/conformance`` against real receivers on 127.0.0.1: one that verifies
correctly passes, one that accepts anything fails naming the checks; probes are not
deliveries and never disable a webhook; a webhook takes one check per 10 s, also when 40
arrive at once and across two processes, and its probes fit its rate limit; on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from sqlalchemy import select, update
from standardwebhooks import Webhook, WebhookVerificationError

from hookline.domain.outbound import CONFORMANCE_INTERVAL
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from hookline.timeutil import utcnow
from tests.conftest import TEST_SECRET_KEY, Account, make_database_url, new_account
from tests.support.receiver import Receiver
from tests.support.server import arun_cli, async_running_server

CHECKS = ["valid", "bad_signature", "stale_timestamp", "tampered_body", "duplicate_id"]


@asynccontextmanager
async def verifying_receiver() -> AsyncIterator[dict[str, Any]]:
    """A receiver done right: verifies with standardwebhooks (signature, body, 5-minute
    tolerance), answers 400 when that fails, and 200 to a redelivered webhook-id."""
    state: dict[str, Any] = {"secret": None, "seen": set(), "requests": []}

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        headers = {name.lower(): value for name, value in request.headers.items()}
        state["requests"].append(headers)
        try:
            Webhook(state["secret"]).verify(body, headers)
        except WebhookVerificationError:
            return web.Response(status=400)
        state["seen"].add(headers["webhook-id"])
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/hook", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    state["url"] = f"http://127.0.0.1:{port}/hook"
    try:
        yield state
    finally:
        await runner.cleanup()


async def _webhook(http: httpx.AsyncClient, owner: Account, url: str, **fields: Any) -> Any:
    response = await http.post(
        "/v1/webhooks",
        json={"url": url, "events": ["contact.created"], **fields},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.text
    return response.json()


async def _check(http: httpx.AsyncClient, owner: Account, webhook_id: str) -> httpx.Response:
    return await http.post(f"/v1/webhooks/{webhook_id}/conformance", headers=owner.headers)


async def test_a_receiver_that_verifies_passes_every_check(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with verifying_receiver() as receiver:
        webhook = await _webhook(http, owner, receiver["url"], headers={"X-Gate": "k1"})
        receiver["secret"] = webhook["secret"]
        response = await _check(http, owner, webhook["id"])
        assert response.status_code == 200, response.text
        report = response.json()
        assert [c["name"] for c in report["checks"]] == CHECKS
        assert report["passed"] is True, report
        codes = [c["status_code"] for c in report["checks"]]
        assert codes == [200, 400, 400, 400, 200]
        # Five requests; the duplicate carries the valid one's webhook-id; custom headers too.
        ids = [r["webhook-id"] for r in receiver["requests"]]
        assert len(ids) == 5 and ids[4] == ids[0] and len(set(ids)) == 4
        assert all(r["x-gate"] == "k1" for r in receiver["requests"])
        assert all(r["user-agent"].startswith("hookline/") for r in receiver["requests"])


async def test_a_receiver_that_accepts_anything_fails_naming_the_checks(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await _webhook(http, owner, receiver.url)
        report = (await _check(http, owner, webhook["id"])).json()
        assert report["passed"] is False
        failed = [c["name"] for c in report["checks"] if not c["passed"]]
        assert failed == ["bad_signature", "stale_timestamp", "tampered_body"]
        for check in report["checks"]:
            assert check["status_code"] == 204
            if not check["passed"]:
                assert "must verify" in check["detail"]
        assert len(receiver.requests) == 5
        # Each probe is a real webhook.conformance body, signed (except the bad signature).
        valid = receiver.requests[0]
        payload = Webhook(webhook["secret"]).verify(valid.body, valid.headers)
        assert payload["type"] == "webhook.conformance"
        assert payload["data"]["webhook_id"] == webhook["id"]


async def test_probes_are_not_deliveries_and_never_disable(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        receiver.respond(410)
        webhook = await _webhook(http, owner, receiver.url)
        report = (await _check(http, owner, webhook["id"])).json()
        assert [c["passed"] for c in report["checks"]] == [False, True, True, True, False]
        assert "expected a 2xx, got 410" in report["checks"][0]["detail"]
        after = (await http.get(f"/v1/webhooks/{webhook['id']}", headers=owner.headers)).json()
        assert after["is_active"] is True and after["disabled_reason"] is None
        deliveries = await http.get(
            f"/v1/webhooks/{webhook['id']}/deliveries", headers=owner.headers
        )
        assert deliveries.json() == []


async def test_an_unreachable_receiver_fails_every_check_with_the_reason(
    http: httpx.AsyncClient, owner: Account
) -> None:
    webhook = await _webhook(http, owner, "http://127.0.0.1:9/nothing-listens")
    report = (await _check(http, owner, webhook["id"])).json()
    assert report["passed"] is False
    for check in report["checks"]:
        assert check["passed"] is False and check["status_code"] is None
        assert check["detail"].startswith("not answered")


async def test_ssrf_rules_apply_to_probes(http: httpx.AsyncClient, owner: Account) -> None:
    """With private targets refused (the default), a URL that became private is not probed."""
    from hookline.delivery.conformance import Target, check_receiver
    from hookline.delivery.sender import Sender
    from hookline.settings import Settings

    async with Receiver() as receiver:
        sender = Sender(Settings(allow_private_targets=False))
        await sender.start()
        try:
            report = await check_receiver(sender, Target("wh-x", receiver.url, ["whsec_AAAA"], {}))
        finally:
            await sender.close()
        assert receiver.requests == []
    assert report["passed"] is False
    assert all("is loopback" in c["detail"] for c in report["checks"])


async def test_another_accounts_webhook_is_404_and_scope_is_enforced(
    http: httpx.AsyncClient, owner: Account, worker_app: Any
) -> None:
    webhook = await _webhook(http, owner, "http://127.0.0.1:9/x")
    stranger = await new_account(worker_app.state.db)
    assert (await _check(http, stranger, webhook["id"])).status_code == 404
    reader = await new_account(worker_app.state.db, scopes=["webhooks:read"])
    assert (await _check(http, reader, "wh-nope")).status_code == 403
    assert (await _check(http, owner, "wh-nope")).status_code == 404


# -- budgets: one check per 10 s, probes inside the webhook's rate limit ---------------------


async def _set_columns(db: Database, webhook_id: str, **values: Any) -> None:
    async with db.begin() as conn:
        await conn.execute(update(webhooks).where(webhooks.c.id == webhook_id).values(**values))


def _refused_for(response: httpx.Response) -> int:
    """The seconds a 429 ``rate_limited`` says to wait."""
    assert response.status_code == 429, response.text
    assert response.json()["error"]["code"] == "rate_limited"
    return int(response.headers["Retry-After"])


async def test_a_webhook_takes_one_check_per_ten_seconds(
    http: httpx.AsyncClient, owner: Account, worker_app: Any
) -> None:
    async with Receiver() as receiver:
        webhook = await _webhook(http, owner, receiver.url)
        assert (await _check(http, owner, webhook["id"])).status_code == 200
        assert 1 <= _refused_for(await _check(http, owner, webhook["id"])) <= 10
        assert len(receiver.requests) == 5
        # Another webhook of the account has its own budget.
        other = await _webhook(http, owner, receiver.url)
        assert (await _check(http, owner, other["id"])).status_code == 200
        # Ten seconds after the last check started (moved back rather than waited for), again.
        ten_ago = utcnow() - CONFORMANCE_INTERVAL
        await _set_columns(worker_app.state.db, webhook["id"], conformance_at=ten_ago)
        assert (await _check(http, owner, webhook["id"])).status_code == 200
        assert len(receiver.requests) == 15


async def test_forty_checks_at_once_send_one_checks_probes(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await _webhook(http, owner, receiver.url)
        responses = await asyncio.gather(*(_check(http, owner, webhook["id"]) for _ in range(40)))
        statuses = [response.status_code for response in responses]
        assert statuses.count(200) == 1 and statuses.count(429) == 39, statuses
        assert len(receiver.requests) == 5


async def test_probes_are_paced_by_the_rate_limit_and_fill_its_window(
    http: httpx.AsyncClient, owner: Account, worker_app: Any
) -> None:
    """With ``rate_limit`` 2 no three probes reach the receiver within a second, and the five
    are recorded in the webhook's window, the one the delivery worker's claims read."""
    async with Receiver() as receiver:
        webhook = await _webhook(http, owner, receiver.url, rate_limit=2)
        report = await _check(http, owner, webhook["id"])
        assert report.status_code == 200 and report.json()["passed"] is False
        arrivals = [request.received_at for request in receiver.requests]
        assert len(arrivals) == 5
        gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[2:], strict=False)]
        assert min(gaps) >= 1.0, arrivals
        async with worker_app.state.db.read() as conn:
            row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook["id"]))).one()
        assert sum(count for _, count in row.rate_starts) == 5


async def test_a_full_window_refuses_the_check_and_takes_nothing(
    http: httpx.AsyncClient, owner: Account, worker_app: Any
) -> None:
    async with Receiver() as receiver:
        webhook = await _webhook(http, owner, receiver.url, rate_limit=2)
        now_us = int(utcnow().timestamp() * 1_000_000)
        full = [[now_us, 2]]
        await _set_columns(worker_app.state.db, webhook["id"], rate_starts=full)
        assert _refused_for(await _check(http, owner, webhook["id"])) == 1
        assert receiver.requests == []
        # The refusal rolled back: the window and the ten-second budget are as they were.
        async with worker_app.state.db.read() as conn:
            row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook["id"]))).one()
        assert row.rate_starts == full and row.conformance_at is None
        await _set_columns(worker_app.state.db, webhook["id"], rate_starts=None)
        assert (await _check(http, owner, webhook["id"])).status_code == 200
        assert len(receiver.requests) == 5


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
async def test_forty_checks_across_two_processes_send_one_checks_probes(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """``serve --workers 2``: the budget is in the database, so it holds across processes."""
    env = {
        "HOOKLINE_DATABASE_URL": make_database_url(backend_name, tmp_path, request),
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    }
    async with (
        Receiver() as receiver,
        async_running_server(env, worker=False, args=("--workers", "2")) as server,
    ):
        created = await arun_cli("accounts", "create", "budget", env=env)
        assert created.returncode == 0, created.stderr
        owner = Account("", json.loads(created.stdout)["api_key"])
        limits = httpx.Limits(max_keepalive_connections=0)  # a new connection each: both processes
        async with httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=60) as http:
            webhook = await _webhook(http, owner, receiver.url)
            responses = await asyncio.gather(
                *(_check(http, owner, webhook["id"]) for _ in range(40))
            )
        statuses = [response.status_code for response in responses]
        assert statuses.count(200) == 1 and statuses.count(429) == 39, statuses
        assert len(receiver.requests) == 5
        pids = {line.get("pid") for line in _access_lines(server.logs(), "conformance")}
        assert len(pids) == 2, pids


def _access_lines(logs: str, fragment: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    return [
        line
        for line in lines
        if line.get("logger") == "hookline.access" and fragment in str(line.get("path"))
    ]
