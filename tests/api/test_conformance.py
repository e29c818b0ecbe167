"""``POST /v1/webhooks/{id}/conformance`` against real receivers on 127.0.0.1: one that verifies
correctly passes, one that accepts anything fails naming the checks; probes are not
deliveries and never disable a webhook; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError

from tests.conftest import Account, new_account
from tests.support.receiver import Receiver

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
