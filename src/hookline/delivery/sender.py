"""The HTTP side of an attempt: one shared aiohttp session, one POST, a typed result.

aiohttp rather than httpx: its connection pool stays cheap with many concurrent requests (see
/work/shared/perf-facts.md: ~10x the deliveries per core). One session for the process keeps
connections to busy endpoints alive between deliveries.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

import aiohttp
import orjson
from yarl import URL

from hookline.caches import remember
from hookline.delivery.endpoint_auth import (
    AuthFailed,
    EndpointAuth,
    MutualTLS,
    OAuth2Credentials,
    ServerTrust,
    Token,
    TokenCache,
    tls_context,
    token_from_response,
)
from hookline.delivery.retry import (
    AttemptTimedOut,
    BlockedTarget,
    ConnectFailed,
    DeliveryError,
    InvalidTarget,
)
from hookline.delivery.ssrf import (
    BLOCKED_MESSAGE,
    BlockedAddressError,
    GuardedResolver,
    blocked_reason,
    parse_ip_lenient,
)
from hookline.settings import Settings
from hookline.timeutil import utcnow

RESPONSE_BODY_LIMIT = 4096
# A token endpoint's answer is a small JSON object; more is refused unread.
TOKEN_RESPONSE_LIMIT = 64 * 1024
# Parsed URLs (and the literal-address verdict) of recent webhooks: parsing every attempt's
# URL again cost as much as signing it. Cleared whole when full (a few hundred bytes each).
URL_CACHE_SIZE = 4096
KEEPALIVE_SECONDS = 30.0
DNS_CACHE_SECONDS = 10


@dataclass(slots=True)  # not frozen: made per attempt, and nothing changes it (as ``Claim``)
class AttemptResult:
    """What one POST did. Exactly one of ``status_code`` / ``error`` is set."""

    started_at: datetime
    duration_ms: int
    status_code: int | None = None
    error: DeliveryError | None = None
    response_body: str | None = None
    retry_after: str | None = None
    """The raw ``Retry-After`` header, interpreted by the retry policy."""

    @property
    def error_message(self) -> str | None:
        return str(self.error) if self.error is not None else None


async def _read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """Up to ``limit`` bytes of the body: a receiver streaming megabytes must not cost us
    memory or time beyond what we store."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = await response.content.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _literal_host_error(url: str) -> DeliveryError | None:
    """aiohttp skips the resolver for IP-literal hosts, so the guard checks them here."""
    try:
        host = URL(url).raw_host
    except (ValueError, TypeError):
        return InvalidTarget("cannot parse the url")
    if not host:
        return InvalidTarget("the url has no host")
    address = parse_ip_lenient(host)
    if address is None:
        return None
    reason = blocked_reason(address)
    if reason is not None:
        return BlockedTarget(f"{address} is {reason}")
    return None


class Sender:
    """Sends attempts. ``start()`` inside the running loop, ``close()`` at shutdown."""

    def __init__(self, settings: Settings) -> None:
        self._allow_private = settings.allow_private_targets
        self._connect_timeout = settings.delivery_connect_timeout
        self._total_timeout = settings.delivery_total_timeout
        self._limit = settings.delivery_concurrency
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[str, URL | DeliveryError] = {}
        self._tokens = TokenCache(self._fetch_token)

    async def start(self) -> None:
        if self._session is not None:
            return
        resolver = None if self._allow_private else GuardedResolver()
        connector = aiohttp.TCPConnector(
            resolver=resolver,
            limit=self._limit,
            keepalive_timeout=KEEPALIVE_SECONDS,
            ttl_dns_cache=DNS_CACHE_SECONDS,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=self._total_timeout,
                connect=self._connect_timeout,
                sock_connect=self._connect_timeout,
            ),
            # Receivers' cookies must never travel to another request.
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(
        self,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        auth: EndpointAuth | None = None,
    ) -> AttemptResult:
        """POST ``body`` to ``url``; with ``auth``, as the receiver requires (a bearer token or
        a client certificate)."""
        started_at = utcnow()
        clock = time.monotonic()
        status: int | None = None
        excerpt: bytes | None = None
        retry_after: str | None = None
        error: DeliveryError | None = None
        try:
            target = self._target(url)
            if isinstance(target, URL):
                status, excerpt, retry_after = await self._post_as(target, headers, body, auth)
            else:
                error = target
        except AuthFailed as exc:
            error = exc
        except aiohttp.ConnectionTimeoutError:
            error = AttemptTimedOut(f"could not connect within {self._connect_timeout:g}s")
        except TimeoutError:
            error = AttemptTimedOut(f"no response within {self._total_timeout:g}s")
        except aiohttp.ClientConnectorError as exc:
            error = _connector_error(exc)
        except aiohttp.InvalidURL as exc:
            error = InvalidTarget(str(exc))
        except (aiohttp.ClientError, OSError) as exc:
            error = ConnectFailed(str(exc) or type(exc).__name__)
        return AttemptResult(
            started_at=started_at,
            duration_ms=int((time.monotonic() - clock) * 1000),
            status_code=status,
            error=error,
            response_body=excerpt.decode("utf-8", errors="replace") if excerpt else None,
            retry_after=retry_after,
        )

    def _target(self, url: str) -> URL | DeliveryError:
        """The parsed URL to POST to, or why not (an IP-literal host the guard refuses, an
        unparseable URL); cached by URL. Names are still resolved and checked per connection
        (``GuardedResolver``): only the literal's verdict, which cannot change, is cached."""
        found = self._urls.get(url)
        if found is None:
            found = remember(self._urls, url, self._parse_target(url), limit=URL_CACHE_SIZE)
        return found

    def _parse_target(self, url: str) -> URL | DeliveryError:
        error = None if self._allow_private else _literal_host_error(url)
        if error is not None:
            return error
        try:
            return URL(url)
        except (ValueError, TypeError) as exc:
            return InvalidTarget(str(exc) or "cannot parse the url")

    async def _post_as(
        self, url: URL, headers: Mapping[str, str], body: bytes, auth: EndpointAuth | None
    ) -> tuple[int, bytes | None, str | None]:
        if isinstance(auth, OAuth2Credentials):
            # The token fetch and a resend after a 401 are within the attempt's own timeout.
            async with asyncio.timeout(self._total_timeout):
                return await self._post_with_token(url, headers, body, auth)
        tls = tls_context(auth) if isinstance(auth, MutualTLS | ServerTrust) else None
        return await self._post(url, headers, body, tls)

    async def _post_with_token(
        self, url: URL, headers: Mapping[str, str], body: bytes, credentials: OAuth2Credentials
    ) -> tuple[int, bytes | None, str | None]:
        """POST with a bearer token; a 401 drops that token and the POST is made once more
        with a fresh one (the receiver may have revoked or expired it early)."""
        token = await self._tokens.token(credentials)
        answer = await self._post(url, _with_bearer(headers, token), body)
        if answer[0] != 401:
            return answer
        self._tokens.forget(credentials, token)
        token = await self._tokens.token(credentials)
        return await self._post(url, _with_bearer(headers, token), body)

    async def _fetch_token(self, credentials: OAuth2Credentials) -> Token:
        """A token from the token endpoint (client_secret_basic, RFC 6749 2.3.1), through the
        same address guard, timeouts and no-redirect rule as deliveries."""
        target = self._target(credentials.token_url)
        if not isinstance(target, URL):
            raise AuthFailed(f"token_url: {target}")
        form = {"grant_type": "client_credentials"}
        if credentials.scope:
            form["scope"] = credentials.scope
        headers = {"Authorization": _basic(credentials), "Accept": "application/json"}
        try:
            async with self._client().post(
                target, data=form, headers=headers, allow_redirects=False
            ) as response:
                payload = await _read_capped(response, TOKEN_RESPONSE_LIMIT + 1)
                status = response.status
        except aiohttp.ClientConnectorError as exc:
            raise AuthFailed(f"token endpoint: {_connector_error(exc)}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise AuthFailed(f"token endpoint: {exc or type(exc).__name__}") from None
        except TimeoutError:
            raise AuthFailed("token endpoint: no answer in time") from None
        return _token_of(status, payload)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("Sender.start() was not called")
        return self._session

    async def _post(
        self,
        url: URL,
        headers: Mapping[str, str],
        body: bytes,
        tls: ssl.SSLContext | None = None,
    ) -> tuple[int, bytes | None, str | None]:
        # Redirects are a failure, never followed: following one could lead anywhere
        # (including past the address guard's intent) and hide a misconfigured URL.
        async with self._client().post(
            url, data=body, headers=headers, allow_redirects=False, ssl=tls if tls else True
        ) as response:
            status = response.status
            retry_after = response.headers.get("Retry-After")
            try:
                excerpt: bytes | None = await _read_capped(response, RESPONSE_BODY_LIMIT)
            except (aiohttp.ClientError, TimeoutError):
                excerpt = None  # the status arrived in time; a broken body does not undo it
            if not response.content.at_eof():
                response.close()  # don't keep a connection with an unread body in the pool
            return status, excerpt, retry_after


def _with_bearer(headers: Mapping[str, str], token: str) -> dict[str, str]:
    """``headers`` with the token as ``Authorization`` (replacing a custom one of any case)."""
    kept = {name: value for name, value in headers.items() if name.lower() != "authorization"}
    return {**kept, "Authorization": f"Bearer {token}"}


def _basic(credentials: OAuth2Credentials) -> str:
    # RFC 6749 2.3.1: the id and the secret are form-encoded before they are joined by ":".
    pair = f"{quote(credentials.client_id, safe='')}:{quote(credentials.client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _token_of(status: int, payload: bytes) -> Token:
    if len(payload) > TOKEN_RESPONSE_LIMIT:
        raise AuthFailed(f"the token endpoint's answer ({status}) is too large")
    try:
        decoded = orjson.loads(payload) if payload else None
    except orjson.JSONDecodeError:
        decoded = None
    if not 200 <= status < 300:
        # RFC 6749 5.2: ``error`` names the reason (invalid_client, ...); it holds no secret.
        code = decoded.get("error") if isinstance(decoded, dict) else None
        reason = f" ({code})" if isinstance(code, str) and code.isprintable() else ""
        raise AuthFailed(f"the token endpoint answered {status}{reason}"[:300])
    return token_from_response(decoded)


def _connector_error(exc: aiohttp.ClientConnectorError) -> DeliveryError:
    if isinstance(exc.os_error, BlockedAddressError):
        return BlockedTarget(BLOCKED_MESSAGE.removeprefix("blocked: "))
    return ConnectFailed(f"{exc.host}:{exc.port}: {exc.os_error.strerror or exc.os_error}")
