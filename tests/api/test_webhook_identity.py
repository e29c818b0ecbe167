"""A webhook's identity through the API and the in-process worker, with real receivers on
127.0.0.1: Ed25519 (`v1a`) deliveries verified with ``cryptography`` by the Standard Webhooks
text, key rotation and a switch of scheme with the overlap, OAuth2 tokens from a real token
endpoint, a TLS receiver that requires a client certificate, secrets encrypted at rest and
masked on every read, the 422s, and the receiver check with each; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from fastapi import FastAPI
from sqlalchemy import select
from standardwebhooks import Webhook

from hookline.crypto import SecretBox
from hookline.delivery.signing import public_key_of
from hookline.storage.models import webhooks
from tests.conftest import Account
from tests.support.identity import (
    CLIENT_SECRET,
    Pki,
    TokenServer,
    bearer_of,
    oauth2_auth,
    verify_v1a,
)
from tests.support.receiver import Receiver
from tests.support.waiting import eventually

MASK = "********"
CHECKS = ["valid", "bad_signature", "stale_timestamp", "tampered_body", "duplicate_id"]


async def subscribe(http: httpx.AsyncClient, owner: Account, url: str, **fields: Any) -> Any:
    body = {"url": url, "events": ["contact.created"], **fields}
    response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def new_contact(http: httpx.AsyncClient, owner: Account) -> None:
    body = {"first_name": "Ada", "phone_number": "+14155552671"}
    response = await http.post("/v1/contacts", json=body, headers=owner.headers)
    assert response.status_code == 201, response.text


async def stored(app: FastAPI, webhook_id: str) -> Any:
    async with app.state.db.read() as conn:
        return (await conn.execute(select(webhooks).where(webhooks.c.id == webhook_id))).one()


async def reads(http: httpx.AsyncClient, owner: Account, webhook_id: str) -> list[Any]:
    """The webhook as every API read shows it: GET by id and in the list."""
    one = (await http.get(f"/v1/webhooks/{webhook_id}", headers=owner.headers)).json()
    listed = (await http.get("/v1/webhooks", headers=owner.headers)).json()
    return [one, next(w for w in listed if w["id"] == webhook_id)]


# -- Ed25519 ------------------------------------------------------------------------------------


async def test_an_ed25519_webhook_shows_only_its_public_key_and_deliveries_verify_by_it(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    async with Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url, signing="ed25519")
        assert webhook["signing"] == "ed25519"
        assert webhook["secret"] is None
        public_key = webhook["public_key"]
        assert public_key.startswith("whpk_")
        for shown in await reads(http, owner, webhook["id"]):
            assert (shown["signing"], shown["public_key"], shown["secret"]) == (
                "ed25519",
                public_key,
                None,
            )
        row = await stored(worker_app, webhook["id"])
        box: SecretBox = worker_app.state.secret_box
        signing_key = box.decrypt(row.secret_enc)
        assert signing_key.startswith("whsk_") and public_key_of(signing_key) == public_key
        assert signing_key not in row.secret_enc  # encrypted at rest

        await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        assert request.headers["webhook-signature"].startswith("v1a,")
        assert " " not in request.headers["webhook-signature"]
        assert verify_v1a(public_key, request.body, request.headers)


async def test_rotating_an_ed25519_key_signs_with_both_keys_during_the_overlap(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url, signing="ed25519")
        response = await http.post(
            f"/v1/webhooks/{webhook['id']}/rotate-secret", headers=owner.headers
        )
        assert response.status_code == 200, response.text
        rotated = response.json()
        assert rotated["secret"] is None
        assert rotated["public_key"].startswith("whpk_")
        assert rotated["public_key"] != webhook["public_key"]
        [shown, _] = await reads(http, owner, webhook["id"])
        assert shown["public_key"] == rotated["public_key"]

        await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        assert len(request.headers["webhook-signature"].split(" ")) == 2
        assert verify_v1a(rotated["public_key"], request.body, request.headers)
        assert verify_v1a(webhook["public_key"], request.body, request.headers)


async def test_switching_the_scheme_keeps_the_old_signature_for_the_overlap(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url)
        path = f"/v1/webhooks/{webhook['id']}"
        switched = (
            await http.patch(path, json={"signing": "ed25519"}, headers=owner.headers)
        ).json()
        assert (switched["signing"], switched["secret"]) == ("ed25519", None)
        await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        Webhook(webhook["secret"]).verify(request.body, request.headers)  # v1, still
        assert verify_v1a(switched["public_key"], request.body, request.headers)

        again = await http.patch(path, json={"signing": "ed25519"}, headers=owner.headers)
        assert again.json()["public_key"] == switched["public_key"]  # no change, no new key

        back = (await http.patch(path, json={"signing": "hmac"}, headers=owner.headers)).json()
        assert back["signing"] == "hmac" and back["public_key"] is None
        assert back["secret"].startswith("whsec_") and back["secret"] != "whsec_" + MASK
        [shown, _] = await reads(http, owner, webhook["id"])
        assert shown["secret"] == "whsec_" + MASK
        await new_contact(http, owner)
        [_, second] = await receiver.wait_for(2)
        Webhook(back["secret"]).verify(second.body, second.headers)
        assert verify_v1a(switched["public_key"], second.body, second.headers)


def _documented_verifier(public_key: str) -> Callable[[bytes, dict[str, str]], bool]:
    """docs/webhooks.md's Python `v1a` verifier, run as a receiver would copy it."""
    text = (Path(__file__).parents[2] / "docs" / "webhooks.md").read_text()
    block = text.split("<!-- verify-v1a-python")[1].split("```python\n")[1].split("```")[0]
    assert block.count('"whpk_..."') == 1
    namespace: dict[str, Any] = {}
    exec(block.replace('"whpk_..."', repr(public_key)), namespace)  # noqa: S102 (the doc's code)
    verifier: Callable[[bytes, dict[str, str]], bool] = namespace["verify_v1a"]
    return verifier


async def test_the_documented_python_verifier_accepts_a_delivery_and_nothing_else(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url, signing="ed25519")
        await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        verify = _documented_verifier(webhook["public_key"])
        assert verify(request.body, request.headers)
        assert not verify(request.body + b" ", request.headers)
        stale = {**request.headers, "webhook-timestamp": str(int(time.time()) - 600)}
        assert not verify(request.body, stale)
        stranger = await subscribe(http, owner, receiver.url, signing="ed25519")
        assert not _documented_verifier(stranger["public_key"])(request.body, request.headers)


# -- OAuth2 -------------------------------------------------------------------------------------


async def test_oauth2_deliveries_carry_one_cached_token_and_the_secret_never_shows(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    async with TokenServer() as tokens, Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url, auth=oauth2_auth(tokens, scope="a b"))
        expected = {
            "type": "oauth2_client_credentials",
            "token_url": tokens.url,
            "client_id": "hookline-client",
            "client_secret": MASK,
            "scope": "a b",
        }
        assert webhook["auth"] == expected
        for shown in await reads(http, owner, webhook["id"]):
            assert shown["auth"] == expected
        row = await stored(worker_app, webhook["id"])
        assert CLIENT_SECRET not in row.auth_enc and CLIENT_SECRET not in json.dumps(row.auth_shown)

        for _ in range(3):
            await new_contact(http, owner)
        requests = await receiver.wait_for(3)
        assert [bearer_of(r.headers) for r in requests] == ["tok-1"] * 3
        assert tokens.issued == ["tok-1"]
        assert all(r.headers["webhook-signature"].startswith("v1,") for r in requests)

        # A masked secret sent back keeps the stored one (the token endpoint still accepts it).
        patched = await http.patch(
            f"/v1/webhooks/{webhook['id']}",
            json={"auth": {**expected, "scope": "c"}},
            headers=owner.headers,
        )
        assert patched.status_code == 200, patched.text
        assert patched.json()["auth"] == {**expected, "scope": "c"}
        await new_contact(http, owner)
        [*_, fourth] = await receiver.wait_for(4)
        assert bearer_of(fourth.headers) == "tok-2"  # new credentials, new token
        assert tokens.forms[-1]["scope"] == "c" and tokens.refusals == 0


async def test_webhook_events_carry_the_auth_masked(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with TokenServer() as tokens, Receiver() as receiver:
        receiver.respond(410)  # the receiver asks to stop: webhook.disabled is recorded
        webhook = await subscribe(http, owner, receiver.url, auth=oauth2_auth(tokens))
        await new_contact(http, owner)

        async def disabled() -> list[Any]:
            events = (await http.get("/v1/events", headers=owner.headers)).json()
            return [e for e in events if e["type"] == "webhook.disabled"]

        [event] = await eventually(disabled, what="webhook.disabled")
        assert event["data"]["id"] == webhook["id"]
        assert event["data"]["auth"]["client_secret"] == MASK
        assert CLIENT_SECRET not in json.dumps(event)


# -- mTLS ---------------------------------------------------------------------------------------


async def test_mtls_deliveries_reach_a_receiver_that_requires_a_client_certificate(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    pki = Pki()
    async with Receiver(tls=pki.server_context(require_client=True)) as receiver:
        webhook = await subscribe(http, owner, receiver.url, auth=pki.mtls_auth())
        shown = {"type": "mtls", "certificate": MASK, "private_key": MASK, "ca": MASK}
        assert webhook["auth"] == shown
        for read in await reads(http, owner, webhook["id"]):
            assert read["auth"] == shown
        row = await stored(worker_app, webhook["id"])
        assert "PRIVATE KEY" not in row.auth_enc and "BEGIN" not in json.dumps(row.auth_shown)

        await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        Webhook(webhook["secret"]).verify(request.body, request.headers)


async def test_identity_fields_are_validated_naming_each(
    http: httpx.AsyncClient, owner: Account
) -> None:
    pki, other = Pki(), Pki()
    https = "https://127.0.0.1:9/hook"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"auth": pki.mtls_auth(certificate="not a pem")}, "auth.certificate"),
        ({"auth": pki.mtls_auth(private_key=other.client_key)}, "auth.private_key"),
        (
            {"auth": pki.mtls_auth(private_key="-----BEGIN PRIVATE KEY-----\nxx")},
            "auth.private_key",
        ),
        ({"auth": pki.mtls_auth(ca="junk")}, "auth.ca"),
        ({"auth": {"type": "mtls", "private_key": pki.client_key}}, "auth.certificate"),
        ({"auth": pki.mtls_auth(), "url": "http://127.0.0.1:9/hook"}, "auth"),
        ({"auth": pki.mtls_auth(certificate=MASK)}, "auth.certificate"),
        ({"auth": {"type": "basic", "user": "u"}}, "auth"),
        (
            {
                "auth": {
                    "type": "oauth2_client_credentials",
                    "token_url": "https://a.example/t",
                    "client_id": "c",
                }
            },
            "auth.client_secret",
        ),
        (
            {
                "auth": {
                    "type": "oauth2_client_credentials",
                    "token_url": "not a url",
                    "client_id": "c",
                    "client_secret": "s",
                }
            },
            "auth.token_url",
        ),
        (
            {
                "auth": {
                    "type": "oauth2_client_credentials",
                    "token_url": "https://a.example/t",
                    "client_id": "c",
                    "client_secret": MASK,
                }
            },
            "auth.client_secret",
        ),
        (
            {
                "auth": {
                    "type": "oauth2_client_credentials",
                    "token_url": "https://a.example/t",
                    "client_id": "c",
                    "client_secret": "s",
                    "extra": 1,
                }
            },
            "auth.extra",
        ),
        ({"signing": "rsa"}, "signing"),
        ({"public_key": "whpk_x"}, "public_key"),
    ]
    for fields, field in cases:
        body = {"url": https, "events": ["contact.created"], **fields}
        response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
        assert response.status_code == 422, (field, response.text)
        named = [f["field"] for f in response.json()["error"]["details"]["fields"]]
        assert named == [field], (fields, response.text)

    webhook = await subscribe(http, owner, https)
    for patch, field in [
        ({"signing": None}, "signing"),
        ({"auth": pki.mtls_auth(ca=MASK)}, "auth.ca"),
    ]:
        response = await http.patch(
            f"/v1/webhooks/{webhook['id']}", json=patch, headers=owner.headers
        )
        assert response.status_code == 422, response.text
        assert response.json()["error"]["details"]["fields"][0]["field"] == field


# -- the receiver check -------------------------------------------------------------------------


@asynccontextmanager
async def strict_receiver(
    *, public_key: str | None = None, tokens: TokenServer | None = None, pki: Pki | None = None
) -> AsyncIterator[dict[str, Any]]:
    """A receiver done right for an identity: verifies `v1a` with the public key (or `v1`
    with the secret), a fresh timestamp, and, with ``tokens``, a valid bearer token (401
    without); with ``pki``, https requiring a client certificate."""
    state: dict[str, Any] = {"public_key": public_key, "secret": None, "requests": 0}

    async def handle(request: web.Request) -> web.Response:
        state["requests"] += 1
        body = await request.read()
        headers = {name.lower(): value for name, value in request.headers.items()}
        if tokens is not None and not tokens.is_valid(bearer_of(headers) or ""):
            return web.Response(status=401)
        if state["public_key"] is not None:
            fresh = abs(int(headers["webhook-timestamp"]) - time.time()) < 300
            ok = fresh and verify_v1a(state["public_key"], body, headers)
        else:
            try:
                Webhook(state["secret"]).verify(body, headers)
                ok = True
            except Exception:
                ok = False
        return web.Response(status=200 if ok else 400)

    app = web.Application()
    app.router.add_post("/hook", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tls = pki.server_context(require_client=True) if pki is not None else None
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    port = runner.addresses[0][1]
    state["url"] = f"{'https' if pki else 'http'}://127.0.0.1:{port}/hook"
    try:
        yield state
    finally:
        await runner.cleanup()


async def _check(http: httpx.AsyncClient, owner: Account, webhook_id: str) -> Any:
    response = await http.post(f"/v1/webhooks/{webhook_id}/conformance", headers=owner.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_receiver_check_passes_an_ed25519_receiver_done_right(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with strict_receiver() as receiver:
        webhook = await subscribe(http, owner, receiver["url"], signing="ed25519")
        receiver["public_key"] = webhook["public_key"]
        report = await _check(http, owner, webhook["id"])
        assert [c["name"] for c in report["checks"]] == CHECKS
        assert report["passed"] is True, report
        assert [c["status_code"] for c in report["checks"]] == [200, 400, 400, 400, 200]


async def test_the_receiver_check_reports_whether_the_receiver_enforces_oauth2(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with TokenServer() as tokens, strict_receiver(tokens=tokens) as receiver:
        webhook = await subscribe(http, owner, receiver["url"], auth=oauth2_auth(tokens))
        receiver["secret"] = webhook["secret"]
        report = await _check(http, owner, webhook["id"])
        assert [c["name"] for c in report["checks"]] == [*CHECKS, "auth_enforced"]
        assert report["passed"] is True, report
        assert report["checks"][-1]["detail"] == "enforces auth: yes (refused with 401)"
    async with TokenServer() as tokens, Receiver() as lax:
        lax_webhook = await subscribe(http, owner, lax.url, auth=oauth2_auth(tokens))
        report = await _check(http, owner, lax_webhook["id"])
        last = report["checks"][-1]
        assert (last["name"], last["passed"]) == ("auth_enforced", False)
        assert last["detail"].startswith("enforces auth: no")
        assert bearer_of(lax.requests[-1].headers) is None
        assert bearer_of(lax.requests[0].headers) == "tok-1"


async def test_the_receiver_check_sees_a_receiver_requiring_a_client_certificate(
    http: httpx.AsyncClient, owner: Account
) -> None:
    pki = Pki()
    async with strict_receiver(pki=pki) as receiver:
        webhook = await subscribe(http, owner, receiver["url"], auth=pki.mtls_auth())
        receiver["secret"] = webhook["secret"]
        report = await _check(http, owner, webhook["id"])
        assert report["passed"] is True, report
        last = report["checks"][-1]
        assert last["name"] == "auth_enforced" and last["status_code"] is None
        assert last["detail"].startswith("enforces auth: yes (refused: connection failed")
        assert receiver["requests"] == 5  # the probe without a certificate never got in
