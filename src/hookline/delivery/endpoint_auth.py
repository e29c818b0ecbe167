"""How a webhook proves who is calling, beside the signature: an OAuth2 client-credentials
token (RFC 6749 4.4) or a client certificate (mutual TLS).

A webhook's ``auth`` is stored encrypted (``webhooks.auth_enc``, a JSON object sealed by
``crypto.SecretBox``) and opened here, in memory, for the sender. Tokens live in a
``TokenCache`` per sender: reused until shortly before they expire, fetched once for every
attempt waiting on them (single-flight), and dropped when the receiver answers 401 with one,
so that the next attempt fetches a fresh one. Client certificates become ``ssl.SSLContext``s,
made once per certificate.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from hookline.caches import remember
from hookline.delivery.retry import DeliveryError

OAUTH2 = "oauth2_client_credentials"
MTLS = "mtls"
# A token is refreshed this long before the expiry the token endpoint announced (at most half
# its lifetime), so that no attempt carries one the receiver already considers expired.
EXPIRY_MARGIN_SECONDS = 30.0
# A token endpoint that does not say how long a token lives: reuse it this long (or until a 401).
DEFAULT_TOKEN_SECONDS = 300.0
TOKEN_CACHE_SIZE = 4096


class AuthFailed(DeliveryError):
    """The credentials for the receiver could not be obtained (the token endpoint refused, was
    unreachable or answered nonsense). Retryable: the webhook's owner may fix them."""

    label = "auth failed"


@dataclass(frozen=True, slots=True)
class OAuth2Credentials:
    token_url: str
    client_id: str
    client_secret: str
    scope: str | None


@dataclass(frozen=True, slots=True)
class ServerTrust:
    """TLS that trusts ``ca`` (PEM; the system's roots when None) for the receiver's server
    certificate, and shows no certificate of its own."""

    ca: str | None


@dataclass(frozen=True, slots=True)
class MutualTLS:
    certificate: str
    private_key: str
    ca: str | None

    def without_client_certificate(self) -> ServerTrust:
        return ServerTrust(self.ca)


EndpointAuth = OAuth2Credentials | MutualTLS | ServerTrust


@functools.lru_cache(maxsize=1024)
def auth_from_plain(plain: str) -> OAuth2Credentials | MutualTLS:
    """The ``auth`` of a webhook from its decrypted ``auth_enc``; ``ValueError`` when it is
    not one (the attempt fails as a signing failure does)."""
    opened = orjson.loads(plain)
    try:
        if opened.get("type") == OAUTH2:
            return OAuth2Credentials(
                opened["token_url"],
                opened["client_id"],
                opened["client_secret"],
                opened.get("scope"),
            )
        if opened.get("type") == MTLS:
            return MutualTLS(opened["certificate"], opened["private_key"], opened.get("ca"))
    except (KeyError, AttributeError):
        pass
    raise ValueError("the stored auth cannot be read")


# -- TLS ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def tls_context(auth: MutualTLS | ServerTrust) -> ssl.SSLContext:
    """The client TLS context of ``auth``: the receiver's certificate checked against ``ca``
    (or the system's roots) and its host name; with ``MutualTLS``, the client's certificate
    offered. ``ssl.SSLError`` when OpenSSL refuses the PEMs."""
    context = (
        ssl.create_default_context(cadata=auth.ca) if auth.ca else ssl.create_default_context()
    )
    if isinstance(auth, MutualTLS):
        load_client_certificate(context, auth.certificate, auth.private_key)
    return context


def load_client_certificate(context: ssl.SSLContext, certificate: str, private_key: str) -> None:
    """``context.load_cert_chain`` from PEM text. The ``ssl`` module reads only files: the PEMs
    go to an anonymous in-memory file (``memfd``) where there is one, else to a private
    temporary directory that is removed at once; never to a named file that stays."""
    pem = f"{certificate.strip()}\n{private_key.strip()}\n".encode()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("hookline-client-certificate", os.MFD_CLOEXEC)
        try:
            _write_all(fd, pem)
            context.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="hookline-") as directory:  # mode 0700
        path = Path(directory) / "client.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _write_all(fd, pem)
        finally:
            os.close(fd)
        context.load_cert_chain(path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- OAuth2 tokens -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    expires_in: float | None
    """Seconds, as the token endpoint said; None when it did not."""


TokenFetcher = Callable[[OAuth2Credentials], Awaitable[Token]]


def token_from_response(payload: Any) -> Token:
    """The token of a successful token response (RFC 6749 5.1), or ``AuthFailed``."""
    if not isinstance(payload, dict) or not isinstance(payload.get("access_token"), str):
        raise AuthFailed("the token endpoint's answer has no access_token")
    token_type = payload.get("token_type", "Bearer")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise AuthFailed(f"the token endpoint gave a {token_type!r} token, not a Bearer one")
    expires_in = payload.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isascii() and expires_in.isdigit():
        # Some servers send it as a string; one too long for a number of seconds is unknown.
        expires_in = int(expires_in) if len(expires_in) <= 10 else None
    lifetime = None
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
        lifetime = float(expires_in)
    value = payload["access_token"]
    if not value or not value.isascii() or not value.isprintable() or " " in value:
        raise AuthFailed("the token endpoint's access_token cannot be sent in a header")
    return Token(value, lifetime if lifetime is not None and lifetime > 0 else None)


def _retrieve(task: asyncio.Task[Token]) -> None:
    # Every waiter may have gone (cancelled): the failure is theirs, not an unretrieved one.
    if not task.cancelled():
        task.exception()


def _reuse_seconds(token: Token) -> float:
    if token.expires_in is None:
        return DEFAULT_TOKEN_SECONDS
    return max(token.expires_in - EXPIRY_MARGIN_SECONDS, token.expires_in / 2)


class TokenCache:
    """OAuth2 access tokens by credentials: cached until shortly before expiry, fetched once
    for all the attempts that need one at the same time."""

    def __init__(self, fetch: TokenFetcher, clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._clock = clock
        self._tokens: dict[OAuth2Credentials, tuple[str, float]] = {}
        self._fetching: dict[OAuth2Credentials, asyncio.Task[Token]] = {}

    async def token(self, credentials: OAuth2Credentials) -> str:
        cached = self._tokens.get(credentials)
        if cached is not None and cached[1] > self._clock():
            return cached[0]
        task = self._fetching.get(credentials)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._fetch_and_keep(credentials))
            task.add_done_callback(_retrieve)
            self._fetching[credentials] = task
        # Shielded: one waiter cancelled (its attempt timed out) must not cancel the others'.
        return (await asyncio.shield(task)).value

    def forget(self, credentials: OAuth2Credentials, token: str) -> None:
        """The receiver refused ``token``: drop it, unless a newer one replaced it already
        (then the attempts that got the old one all reuse the new one)."""
        cached = self._tokens.get(credentials)
        if cached is not None and cached[0] == token:
            del self._tokens[credentials]

    async def _fetch_and_keep(self, credentials: OAuth2Credentials) -> Token:
        try:
            token = await self._fetch(credentials)
            until = self._clock() + _reuse_seconds(token)
            remember(self._tokens, credentials, (token.value, until), limit=TOKEN_CACHE_SIZE)
            return token
        finally:
            self._fetching.pop(credentials, None)
