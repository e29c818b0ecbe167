"""The sender's endpoint auth against real servers on 127.0.0.1: an OAuth2 token endpoint
(tokens cached, fetched once for concurrent attempts, refreshed once on a 401, the token URL
behind the address guard) and a TLS receiver that requires a client certificate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from hookline.delivery.endpoint_auth import (
    AuthFailed,
    MutualTLS,
    OAuth2Credentials,
    ServerTrust,
    Token,
    TokenCache,
    token_from_response,
)
from hookline.delivery.retry import ConnectFailed
from hookline.delivery.sender import Sender
from hookline.settings import Settings
from tests.support.identity import CLIENT_ID, CLIENT_SECRET, Pki, TokenServer, bearer_of
from tests.support.receiver import Receiver

HEADERS = {"content-type": "application/json"}


@pytest.fixture
async def sender() -> AsyncIterator[Sender]:
    sender = Sender(Settings(allow_private_targets=True))
    await sender.start()
    try:
        yield sender
    finally:
        await sender.close()


def _credentials(tokens: TokenServer, scope: str | None = "hooks:write") -> OAuth2Credentials:
    return OAuth2Credentials(tokens.url, CLIENT_ID, CLIENT_SECRET, scope)


async def test_concurrent_attempts_share_one_token_fetch_and_reuse_it(sender: Sender) -> None:
    async with TokenServer() as tokens, Receiver() as receiver:
        credentials = _credentials(tokens)
        results = await asyncio.gather(
            *(sender.send(receiver.url, HEADERS, b"{}", credentials) for _ in range(20))
        )
        assert [r.status_code for r in results] == [204] * 20
        assert tokens.issued == ["tok-1"]
        await sender.send(receiver.url, HEADERS, b"{}", credentials)
        requests = await receiver.wait_for(21)
        assert {bearer_of(r.headers) for r in requests} == {"tok-1"}
        assert tokens.issued == ["tok-1"]
        assert tokens.forms[0] == {"grant_type": "client_credentials", "scope": "hooks:write"}


async def test_a_401_refreshes_the_token_once_and_resends(sender: Sender) -> None:
    async with TokenServer() as tokens, Receiver() as receiver:
        credentials = _credentials(tokens)
        receiver.script([401, 200])
        result = await sender.send(receiver.url, HEADERS, b"{}", credentials)
        assert result.status_code == 200
        first, second = await receiver.wait_for(2)
        assert (bearer_of(first.headers), bearer_of(second.headers)) == ("tok-1", "tok-2")

        receiver.respond(401)  # a receiver refusing every token: one refresh, not a loop
        result = await sender.send(receiver.url, HEADERS, b"{}", credentials)
        assert result.status_code == 401
        assert len(receiver.requests) == 4
        assert tokens.issued == ["tok-1", "tok-2", "tok-3"]


async def test_a_refused_token_request_fails_the_attempt_naming_the_error(
    sender: Sender,
) -> None:
    async with TokenServer() as tokens, Receiver() as receiver:
        wrong = OAuth2Credentials(tokens.url, CLIENT_ID, "not-the-secret", None)
        result = await sender.send(receiver.url, HEADERS, b"{}", wrong)
        assert isinstance(result.error, AuthFailed)
        assert (
            result.error_message == "auth failed: the token endpoint answered 401 (invalid_client)"
        )
        assert "not-the-secret" not in str(result.error_message)
        assert result.error.retryable
        assert receiver.requests == []

        tokens.answer = (200, {"access_token": "t", "token_type": "mac"})
        result = await sender.send(receiver.url, HEADERS, b"{}", _credentials(tokens))
        assert isinstance(result.error, AuthFailed)
        assert receiver.requests == []


async def test_the_token_url_is_behind_the_address_guard() -> None:
    guarded = Sender(Settings(allow_private_targets=False))
    await guarded.start()
    try:
        async with TokenServer() as tokens:
            by_name = OAuth2Credentials(
                f"http://localhost:{tokens.port}/oauth/token", CLIENT_ID, CLIENT_SECRET, None
            )
            for credentials in (_credentials(tokens), by_name):
                result = await guarded.send("https://example.com/hook", HEADERS, b"{}", credentials)
                assert isinstance(result.error, AuthFailed), result.error
                assert "blocked" in str(result.error)
            assert tokens.forms == []  # the token endpoint was never reached
    finally:
        await guarded.close()


async def test_tokens_are_reused_until_shortly_before_they_expire() -> None:
    now = [1000.0]
    fetched: list[str] = []

    async def fetch(_credentials: OAuth2Credentials) -> Token:
        fetched.append(f"tok-{len(fetched) + 1}")
        return Token(fetched[-1], 3600)

    cache = TokenCache(fetch, clock=lambda: now[0])
    credentials = OAuth2Credentials("https://auth.example/token", "id", "secret", None)
    assert await cache.token(credentials) == "tok-1"
    now[0] += 3600 - 31
    assert await cache.token(credentials) == "tok-1"
    now[0] += 2  # inside the margin before expiry: a fresh one
    assert await cache.token(credentials) == "tok-2"
    cache.forget(credentials, "tok-1")  # a late 401 for the old token keeps the new one
    assert await cache.token(credentials) == "tok-2"
    cache.forget(credentials, "tok-2")
    assert await cache.token(credentials) == "tok-3"


async def test_a_client_certificate_opens_a_receiver_that_requires_one(sender: Sender) -> None:
    pki = Pki()
    async with Receiver(tls=pki.server_context(require_client=True)) as receiver:
        auth = MutualTLS(pki.client_certificate, pki.client_key, pki.ca_pem)
        result = await sender.send(receiver.url, HEADERS, b"{}", auth)
        assert result.status_code == 204, result.error

        refused = await sender.send(receiver.url, HEADERS, b"{}", ServerTrust(pki.ca_pem))
        assert refused.status_code is None
        assert isinstance(refused.error, ConnectFailed)
        assert len(receiver.requests) == 1

        stranger = Pki()  # a certificate the receiver's CA never signed
        other = MutualTLS(stranger.client_certificate, stranger.client_key, pki.ca_pem)
        refused = await sender.send(receiver.url, HEADERS, b"{}", other)
        assert refused.status_code is None
        assert len(receiver.requests) == 1


async def test_the_receivers_server_certificate_is_checked_against_the_given_ca(
    sender: Sender,
) -> None:
    pki, other = Pki(), Pki()
    async with Receiver(tls=pki.server_context(require_client=True)) as receiver:
        wrong_anchor = MutualTLS(pki.client_certificate, pki.client_key, other.ca_pem)
        result = await sender.send(receiver.url, HEADERS, b"{}", wrong_anchor)
        assert isinstance(result.error, ConnectFailed)
        assert "certificate" in str(result.error).lower()
        assert receiver.requests == []


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [(3600, 3600.0), ("3600", 3600.0), ("²", None), ("9" * 5000, None), (True, None), (-5, None)],
)
def test_a_token_lifetime_that_is_not_a_number_of_seconds_is_unknown(
    expires_in: object, lifetime: float | None
) -> None:
    payload = {"access_token": "tok", "token_type": "Bearer", "expires_in": expires_in}
    assert token_from_response(payload) == Token("tok", lifetime)
