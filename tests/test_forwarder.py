"""``hookline.forwarder``'s retry schedule and its words for failures (the command itself runs
as a subprocess in tests/test_listen.py)."""

from __future__ import annotations

import itertools

import aiohttp
import pytest

from hookline import forwarder
from tests.support.server import free_port


def test_reconnections_wait_twice_as_long_each_time_up_to_a_cap() -> None:
    delays = list(itertools.islice(forwarder.retry_delays(), 9))
    assert delays == [0.5, 1, 2, 4, 8, 16, forwarder.RETRY_MAX_SECONDS, 30, 30]


async def test_a_refused_connection_is_told_in_words_without_aiohttps_ssl_default() -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectorError) as caught:
            await session.get(f"http://127.0.0.1:{free_port()}/")
    assert "ssl:default" in str(caught.value)
    assert forwarder._reason(caught.value) == "Connection refused"
    assert forwarder._reason(TimeoutError()) == "no answer in time"


def test_an_error_body_is_told_on_one_line() -> None:
    body = b'{"success": false, "error": {"code": "forbidden", "message": "No.\\nReally."}}'
    assert forwarder._error_message(body) == "forbidden: No. Really."
    assert (
        forwarder._error_message(b"<html>\n  bad gateway\n</html>") == "<html> bad gateway </html>"
    )
