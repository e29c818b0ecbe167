"""The address guard: which addresses are refused, lenient IP spellings, URL validation, and
the connect-time resolver (with a real aiohttp session against a real local receiver)."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from hookline.delivery.retry import BlockedTarget
from hookline.delivery.sender import Sender
from hookline.delivery.ssrf import (
    BLOCKED_MESSAGE,
    BlockedAddressError,
    GuardedResolver,
    UnsafeURL,
    blocked_reason,
    parse_ip_lenient,
    validate_webhook_url,
)
from hookline.settings import Settings
from tests.support.receiver import Receiver

BLOCKED = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # CGNAT
    "100.127.255.254",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.0.1",
    "192.0.2.1",
    "198.18.0.1",
    "198.51.100.7",
    "203.0.113.9",
    "192.88.99.1",
    "::",
    "::1",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "ff02::1",
    "ff0e::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b:1::1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:db8::1",
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "100::1",  # discard-only
]

ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
]


@pytest.mark.parametrize("address", BLOCKED)
def test_blocked_addresses(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7F000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("169.254.43518", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::1]", "::1"),
        ("::ffff:7f00:1", "::ffff:7f00:1"),
    ],
)
def test_lenient_ip_spellings(host: str, expected: str) -> None:
    assert parse_ip_lenient(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize(
    "host", ["example.com", "1.2.3.4.5", "256.1.1.1", "08.1.1.1", "0xg.1", "1..2", "", "4294967296"]
)
def test_names_are_not_ips(host: str) -> None:
    assert parse_ip_lenient(host) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://127.1/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://017700000001/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "https://169.254.169.254/latest/meta-data/",
        "http://100.64.1.1/",
        "http://0.0.0.0:8000/",
        "http://localhost:8000/",
        "http://LOCALHOST./",
        "http://api.localhost/",
    ],
)
async def test_validate_refuses_private_targets(url: str) -> None:
    with pytest.raises(UnsafeURL, match="public address"):
        await validate_webhook_url(url, allow_private=False)
    await validate_webhook_url(url, allow_private=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/", "http or https"),
        ("javascript:alert(1)", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("example.com/hook", "http or https"),
        ("http:///path", "host"),
        ("https://example.com/" + "a" * 2048, "2048"),
    ],
)
async def test_validate_refuses_malformed_urls(url: str, message: str) -> None:
    for allow_private in (False, True):
        with pytest.raises(UnsafeURL, match=message):
            await validate_webhook_url(url, allow_private=allow_private)


async def test_validate_accepts_public_literals_and_unresolvable_names() -> None:
    await validate_webhook_url("https://8.8.8.8/hook", allow_private=False)
    await validate_webhook_url("https://[2606:4700:4700::1111]/hook", allow_private=False)
    # No answer now is not a reason to refuse: the connect-time guard decides.
    await validate_webhook_url("https://no-such-host.invalid/hook", allow_private=False)


class StaticResolver(AbstractResolver):
    """A resolver answering fixed addresses, standing in for DNS."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in self.addresses
        ]

    async def close(self) -> None:
        return None


async def test_guarded_resolver_drops_blocked_answers() -> None:
    resolver = GuardedResolver(StaticResolver(["10.0.0.1", "8.8.8.8", "::1"]))
    answers = await resolver.resolve("mixed.example", 443)
    assert [a["host"] for a in answers] == ["8.8.8.8"]


async def test_guarded_resolver_refuses_when_all_answers_are_blocked() -> None:
    resolver = GuardedResolver(StaticResolver(["127.0.0.1", "::1"]))
    with pytest.raises(BlockedAddressError, match=BLOCKED_MESSAGE):
        await resolver.resolve("rebind.example", 80)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "0x7f.1"])
async def test_sender_blocks_at_connect_time(host: str) -> None:
    sender = Sender(Settings(allow_private_targets=False))
    await sender.start()
    try:
        async with Receiver() as receiver:
            result = await sender.send(f"http://{host}:{receiver.port}/hook", {}, b"{}")
            assert receiver.requests == []
    finally:
        await sender.close()
    assert result.status_code is None
    assert isinstance(result.error, BlockedTarget)
    assert result.error_message is not None and result.error_message.startswith("blocked:")


async def test_sender_reports_resolver_block_clearly() -> None:
    sender = Sender(Settings(allow_private_targets=False))
    await sender.start()
    try:
        result = await sender.send("http://localhost:9/hook", {}, b"{}")
    finally:
        await sender.close()
    assert result.error_message == BLOCKED_MESSAGE
