"""Server-side request forgery guard: webhooks may only reach public addresses.

Two checks, as in svix:

1. ``validate_webhook_url`` at create/patch time gives the user a clear 422 early.
2. ``GuardedResolver`` at connect time is the one that matters: it drops blocked addresses from
   the DNS answer *that the connection then uses*, so a name that resolved to a public address at
   create time and to 127.0.0.1 now (DNS rebinding) is still refused, without a second lookup
   that could answer differently.

aiohttp never calls the resolver for an IP-literal host, so ``sender`` checks those itself with
``blocked_reason`` before sending.

``HOOKLINE_ALLOW_PRIVATE_TARGETS=true`` lifts all of this (local development and tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Final

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH: Final = 2048
ALLOWED_SCHEMES: Final = frozenset({"http", "https"})
# Resolution at create time is a courtesy check; a slow resolver must not hang the API request.
VALIDATION_DNS_TIMEOUT: Final = 3.0
BLOCKED_MESSAGE: Final = "blocked: resolves to a private address"

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
# Deprecated 6to4 relay anycast: traffic there is forwarded to wherever the embedded v4 says.
_6TO4_RELAY = ipaddress.IPv4Network("192.88.99.0/24")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class UnsafeURL(ValueError):
    """A webhook URL we refuse; the message is fit for the API's 422 response."""


class BlockedAddressError(OSError):
    """Every address of a host is blocked. An ``OSError`` so that aiohttp reports it as a
    connection error (``ClientConnectorError``) carrying this message."""

    def __init__(self, host: str) -> None:
        super().__init__(f"{BLOCKED_MESSAGE} ({host})")
        self.host = host


# -- parsing hosts that are IP addresses ------------------------------------------------------


def _parse_ipv4_part(part: str) -> int | None:
    """One dotted part as inet_aton reads it: 0x.. hex, 0.. octal, else decimal."""
    if not part:
        return None
    try:
        if part[:2].lower() == "0x":
            return int(part[2:], 16) if len(part) > 2 else 0
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        if part.isdigit():
            return int(part, 10)
    except ValueError:
        return None
    return None


def parse_ipv4_lenient(host: str) -> ipaddress.IPv4Address | None:
    """``host`` as an IPv4 address with inet_aton's leniency, or None.

    ``127.1``, ``0x7f.1``, ``2130706433`` and ``0177.0.0.1`` all mean 127.0.0.1 to the C
    library, so they must mean it to the guard too.
    """
    text = host.removesuffix(".")
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = [_parse_ipv4_part(part) for part in parts]
    if any(value is None for value in values):
        return None
    numbers = [value for value in values if value is not None]
    # All parts but the last are single bytes; the last fills the remaining bytes.
    head, last = numbers[:-1], numbers[-1]
    if any(value > 0xFF for value in head) or last >= 256 ** (4 - len(head)):
        return None
    packed = 0
    for value in head:
        packed = (packed << 8) | value
    packed = (packed << (8 * (4 - len(head)))) | last
    return ipaddress.IPv4Address(packed)


def parse_ip_lenient(host: str) -> IPAddress | None:
    """``host`` (optionally ``[bracketed]``) as an IP address, or None when it is a name."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text)
        except ValueError:
            return None
    return parse_ipv4_lenient(text)


# -- the address policy -----------------------------------------------------------------------


def _ipv4_reason(ip: ipaddress.IPv4Address) -> str | None:
    checks = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip in _CGNAT, "carrier-grade NAT"),
        (ip.is_multicast, "multicast"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (ip in _6TO4_RELAY, "6to4 relay"),
        (not ip.is_global, "not globally routable"),
    )
    return next((reason for blocked, reason in checks if blocked), None)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address forwards to (mapped, NAT64, 6to4, Teredo client)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def _ipv6_reason(ip: ipaddress.IPv6Address) -> str | None:
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        inner = _ipv4_reason(embedded)
        if inner is not None:
            return f"{inner} (embedded {embedded})"
        if ip.ipv4_mapped is not None or ip in _NAT64:
            # Python flags these ranges as reserved, but they reach the (public) embedded v4.
            return None
    checks = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_site_local, "site-local"),
        (ip.is_multicast, "multicast"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "not globally routable"),
    )
    return next((reason for blocked, reason in checks if blocked), None)


def blocked_reason(ip: IPAddress) -> str | None:
    """Why webhooks may not connect to ``ip`` (e.g. ``"loopback"``), or None if it is public."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_reason(ip)
    return _ipv6_reason(ip)


def is_blocked(ip: IPAddress) -> bool:
    return blocked_reason(ip) is not None


def _address_of(result_host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(result_host.split("%", 1)[0])
    except ValueError:
        return None


# -- create/patch-time validation -------------------------------------------------------------


def _parse_url(url: str) -> URL:
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURL(f"url must be at most {MAX_URL_LENGTH} characters")
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        raise UnsafeURL("url is not a valid URL") from None
    if parsed.scheme.lower() not in ALLOWED_SCHEMES:
        raise UnsafeURL("url must use http or https")
    if not parsed.raw_host:
        raise UnsafeURL("url must include a host")
    return parsed


# A developer pointing a webhook at their own machine needs to know the switch exists.
_ALLOW_HINT = (
    " (for local development, the server can allow it: HOOKLINE_ALLOW_PRIVATE_TARGETS=true)"
)


def _refuse(host: str, ip: IPAddress, reason: str) -> UnsafeURL:
    return UnsafeURL(
        (
            f"url must point to a public address; {host} resolves to {ip} ({reason})"
            if host != str(ip)
            else f"url must point to a public address; {ip} is {reason}"
        )
        + _ALLOW_HINT
    )


async def _resolve_all(host: str, port: int) -> list[IPAddress]:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), VALIDATION_DNS_TIMEOUT
        )
    except (OSError, TimeoutError):
        # Unresolvable now is not unsafe: the connect-time guard decides when we actually send.
        return []
    addresses = (_address_of(str(info[4][0])) for info in infos)
    return [address for address in addresses if address is not None]


async def validate_webhook_url(url: str, allow_private: bool) -> None:
    """Raise :class:`UnsafeURL` unless ``url`` is an http(s) URL of a public host.

    A name is refused when ANY of its addresses is blocked (an attacker controls which one a
    client picks). A name that does not resolve is accepted: deliveries check again at connect
    time, against the address actually connected to.
    """
    parsed = _parse_url(url)
    if allow_private:
        return
    host = parsed.raw_host or ""
    literal = parse_ip_lenient(host)
    if literal is not None:
        reason = blocked_reason(literal)
        if reason is not None:
            raise _refuse(host, literal, reason)
        return
    if host.rstrip(".").lower() == "localhost" or host.rstrip(".").lower().endswith(".localhost"):
        raise UnsafeURL("url must point to a public address; localhost is loopback" + _ALLOW_HINT)
    port = parsed.port or (443 if parsed.scheme.lower() == "https" else 80)
    for address in await _resolve_all(host, port):
        reason = blocked_reason(address)
        if reason is not None:
            raise _refuse(host, address, reason)


# -- connect-time guard -----------------------------------------------------------------------


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that drops blocked addresses from every answer.

    The connector connects to what this returns, so the address checked is the address used.
    """

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner if inner is not None else ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        answers = await self._inner.resolve(host, port, family)
        allowed = []
        for answer in answers:
            address = _address_of(answer["host"])
            if address is not None and not is_blocked(address):
                allowed.append(answer)
        if not allowed:
            raise BlockedAddressError(host)
        return allowed

    async def close(self) -> None:
        await self._inner.close()
