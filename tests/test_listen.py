"""``GET /v1/events/stream`` and ``hookline listen`` against a real server: events created
while ``listen`` runs, and while its connection is cut, all reach a local receiver once each,
verified with ``standardwebhooks`` against the printed secret; the stream's resume, filter,
heartbeat and errors."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from standardwebhooks import Webhook

from tests.api.test_calls import CALL
from tests.conftest import TEST_SECRET_KEY
from tests.support.receiver import Receiver
from tests.support.server import CLI, arun_cli, async_running_server, cli_env, free_port
from tests.support.waiting import eventually


class Proxy:
    """A TCP proxy to the server that the test can cut (every connection dropped, new ones
    refused) and restore; it remembers what the server sent."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.downstream = b""
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, down: bool) -> None:
            try:
                while chunk := await src.read(65536):
                    if down:
                        self.downstream += chunk
                    dst.write(chunk)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer, False), pipe(up_reader, writer, True))


ENV = {
    "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
    "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    "HOOKLINE_RATE_LIMIT": "100000/second",
    "HOOKLINE_STREAM_POLL_SECONDS": "0.05",
    "HOOKLINE_STREAM_HEARTBEAT_SECONDS": "0.5",
    "HOOKLINE_DELIVERY_POLL_SECONDS": "0.2",
}


@dataclass(frozen=True)
class Live:
    """A running server and its account."""

    base_url: str
    port: int
    key: str
    pid: int
    account_id: str
    env: dict[str, str]

    async def new_key(self, *scopes: str) -> tuple[str, str]:
        """Another key of the account, with ``scopes``: (key, its id)."""
        created = await arun_cli(
            "keys",
            "create",
            "--account",
            self.account_id,
            "--scopes",
            ",".join(scopes),
            env=self.env,
        )
        assert created.returncode == 0, created.stderr
        record = json.loads(created.stdout)
        return record["api_key"], record["id"]

    async def revoke(self, key_id: str) -> None:
        revoked = await arun_cli(
            "keys", "revoke", key_id, "--account", self.account_id, env=self.env
        )
        assert revoked.returncode == 0, revoked.stderr


@asynccontextmanager
async def live(tmp_path: Path, *args: str, **settings: str) -> AsyncIterator[Live]:
    """A server (``serve *args``) on a fresh SQLite file, ``settings`` over ENV."""
    env = {**ENV, **settings, "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'hookline.db'}"}
    migrated = await arun_cli("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    created = await arun_cli("accounts", "create", "listen", env=env)
    assert created.returncode == 0, created.stderr
    account = json.loads(created.stdout)
    async with async_running_server(env, args=args) as server:
        yield Live(
            server.base_url,
            server.port,
            account["api_key"],
            server.process.pid,
            account["account_id"],
            env,
        )


async def _contacts(client: httpx.AsyncClient, key: str, n: int, tag: str) -> list[str]:
    ids = []
    for i in range(n):
        response = await client.post(
            "/v1/contacts",
            json={"first_name": f"{tag}{i}", "phone_number": "+14155552671"},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


async def _event_ids(client: httpx.AsyncClient, key: str) -> set[str]:
    response = await client.get(
        "/v1/events", params={"limit": 100}, headers={"Authorization": f"Bearer {key}"}
    )
    return {event["id"] for event in response.json()}


def _start_listen(forward_to: str, api_url: str, key: str, *more: str) -> subprocess.Popen[bytes]:
    command = [
        *CLI,
        "listen",
        "--forward-to",
        forward_to,
        "--api-url",
        api_url,
        "--key",
        key,
        *more,
    ]
    return subprocess.Popen(
        command,
        env=cli_env({}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


async def test_listen_forwards_every_event_once_across_a_cut_connection(tmp_path: Path) -> None:
    async with live(tmp_path) as server, Receiver() as receiver:
        base_url, key = server.base_url, server.key
        proxy = Proxy(server.port)
        await proxy.start()
        # As a context manager, which closes its pipes once it has exited.
        with _start_listen(receiver.url, f"http://127.0.0.1:{proxy.port}", key) as process:
            try:
                assert process.stdout is not None
                first = await asyncio.to_thread(process.stdout.readline)
                secret = first.decode().strip().rsplit(" ", 1)[1]
                assert secret.startswith("whsec_")
                await eventually(lambda: _async(proxy.downstream), lambda d: b": connected" in d)
                async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
                    await _contacts(client, key, 5, "before")
                    await receiver.wait_for(5, timeout=20)
                    await proxy.cut()
                    proxy.downstream = b""
                    await _contacts(client, key, 5, "cut")
                    await asyncio.sleep(0.3)  # created while listen cannot reach the API
                    assert len(receiver.requests) == 5
                    await proxy.start()
                    await receiver.wait_for(10, timeout=30)
                    await _contacts(client, key, 2, "after")
                    await receiver.wait_for(12, timeout=20)
                    expected = await _event_ids(client, key)
            finally:
                process.send_signal(signal.SIGINT)
                try:
                    code = await asyncio.to_thread(process.wait, 20)
                finally:
                    process.kill()  # a no-op once it has exited; else Popen's exit would hang
                await proxy.cut()  # its listener, and the connections it still holds
            assert code == 0
            out = process.stdout.read().decode() if process.stdout else ""
    verifier = Webhook(secret)
    received = []
    for request in receiver.requests:
        payload = verifier.verify(request.body, request.headers)
        assert payload["id"] == request.headers["webhook-id"]
        received.append(payload["id"])
    assert len(received) == 12 and set(received) == expected  # each once, none missing
    lines = [line for line in out.splitlines() if "contact.created" in line]
    assert len(lines) == 12 and all("204" in line and " ms" in line for line in lines)


async def _async(value: Any) -> Any:
    return value


async def _read_messages(lines: AsyncIterator[str], count: int) -> list[dict[str, str]]:
    """SSE messages until ``count`` events came (comments kept as {"comment": ...})."""
    messages: list[dict[str, str]] = []
    current: dict[str, str] = {}
    async for line in lines:
        if line.startswith(":"):
            messages.append({"comment": line})
        elif line:
            field, _, value = line.partition(": ")
            current[field] = value
        elif current:
            messages.append(current)
            current = {}
        if len([m for m in messages if "id" in m]) >= count:
            return messages
    return messages


async def test_stream_resumes_in_order_filters_and_beats(tmp_path: Path) -> None:
    async with live(tmp_path) as server:
        base_url, key = server.base_url, server.key
        auth = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            contacts = await _contacts(client, key, 3, "s")
            call = await client.post(
                "/v1/calls",
                json={"call_type": "inbound", "customer_phone_number": "+14155552671"},
                headers=auth,
            )
            assert call.status_code == 201
            events = (await client.get("/v1/events", headers=auth)).json()
            oldest_first = [e["id"] for e in reversed(events)]
            assert len(oldest_first) == 4 and len(contacts) == 3

            # Numbered by the worker's dispatcher: wait until the last is streamable.
            async def streamable() -> int:
                params = {"after": oldest_first[-1]}
                async with client.stream(
                    "GET", "/v1/events/stream", params=params, headers=auth
                ) as probe:
                    return probe.status_code

            await eventually(streamable, lambda status: status == 200)
            first = oldest_first[0]
            async with client.stream(
                "GET", "/v1/events/stream", params={"after": first}, headers=auth
            ) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                got = await _read_messages(response.aiter_lines(), 3)
            data = [m for m in got if "id" in m]
            assert [m["id"] for m in data] == oldest_first[1:]
            assert [m["event"] for m in data] == ["contact.created"] * 2 + ["call.started"]
            body = json.loads(data[0]["data"])
            assert body["id"] == data[0]["id"] and body["type"] == "contact.created"
            # Last-Event-ID wins over after; types filters; heartbeats while idle.
            headers = {**auth, "Last-Event-ID": oldest_first[0]}
            async with client.stream(
                "GET", "/v1/events/stream", params={"types": "call.started"}, headers=headers
            ) as response:
                lines = response.aiter_lines()
                got = await _read_messages(lines, 1)
                async for line in lines:  # nothing else comes: a heartbeat within 0.5 s
                    assert not line.startswith(("id:", "data:")), line
                    if line.startswith(": keep-alive"):
                        break
            assert [m["id"] for m in got if "id" in m] == oldest_first[3:]
            # An empty Last-Event-ID is none (the schema allows it): from now on, after wins.
            headers = {**auth, "Last-Event-ID": ""}
            params = {"after": oldest_first[2]}
            async with client.stream(
                "GET", "/v1/events/stream", params=params, headers=headers
            ) as response:
                got = await _read_messages(response.aiter_lines(), 1)
            assert [m["id"] for m in got if "id" in m] == oldest_first[3:]
            for params, status in (
                ({"types": "contact.nope"}, 422),
                ({"after": "evt_x"}, 404),
                ({"colour": "red"}, 422),  # an unknown parameter, before anything streams
            ):
                bad = await client.get("/v1/events/stream", params=params, headers=auth)
                assert bad.status_code == status and next(iter(params)) in bad.text
            malformed = {**auth, "Last-Event-ID": "evt_x"}
            bad = await client.get("/v1/events/stream", headers=malformed)
            assert bad.status_code == 404 and "Last-Event-ID" in bad.text
            assert (await client.get("/v1/events/stream")).status_code == 401


IDLE_STREAMS = 200
# Heartbeats every 4 s here, nearly 4x the default's rate (15 s), so the window can be short and
# still include every stream's heartbeat: a harsher test than the defaults, in a third the time.
IDLE_HEARTBEAT_SECONDS = 4
IDLE_WINDOW = IDLE_HEARTBEAT_SECONDS + 1.0


def _usage(pid: int) -> tuple[int, float]:
    """(resident bytes, CPU seconds used so far) of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert match is not None, status
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime and stime (fields 14 and 15)
    return int(match.group(1)) * 1024, ticks / os.sysconf("SC_CLK_TCK")


async def _idle_cpu(pid: int) -> float:
    """CPU seconds the server uses over IDLE_WINDOW while nothing happens (a measurement
    window: waiting is the point)."""
    _, before = _usage(pid)
    await asyncio.sleep(IDLE_WINDOW)
    return _usage(pid)[1] - before


async def test_hundreds_of_idle_streams_cost_little(tmp_path: Path) -> None:
    """Memory and CPU per idle stream, at the default poll (0.25 s) and a 4 s heartbeat."""
    idle = {
        "HOOKLINE_STREAM_POLL_SECONDS": "0.25",
        "HOOKLINE_STREAM_HEARTBEAT_SECONDS": str(IDLE_HEARTBEAT_SECONDS),
        "HOOKLINE_STREAMS_PER_KEY": str(IDLE_STREAMS + 1),
    }
    async with live(tmp_path, **idle) as server:
        base_url, key, pid = server.base_url, server.key, server.pid
        auth = {"Authorization": f"Bearer {key}"}
        limits = httpx.Limits(max_connections=IDLE_STREAMS + 1)
        async with (
            httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client,
            AsyncExitStack() as streams,
        ):
            kept: list[AsyncIterator[str]] = []  # a dropped line iterator closes its stream

            async def open_stream() -> None:
                response = await streams.enter_async_context(
                    client.stream("GET", "/v1/events/stream", headers=auth)
                )
                assert response.status_code == 200
                kept.append(response.aiter_lines())
                assert await anext(kept[-1]) == ": connected"

            await open_stream()  # the first stream starts the process's poller
            memory_before, _ = _usage(pid)
            cpu_with_one = await _idle_cpu(pid)
            for _ in range(IDLE_STREAMS):
                await open_stream()
            memory_after, _ = _usage(pid)
            cpu_with_all = await _idle_cpu(pid)

    per_stream_kib = (memory_after - memory_before) / IDLE_STREAMS / 1024
    extra_cpu_share = max(0.0, cpu_with_all - cpu_with_one) / IDLE_WINDOW
    print(  # the figures docs/webhooks.md quotes (pytest -s shows them)
        f"{IDLE_STREAMS} idle streams: {per_stream_kib:.1f} KiB each; server CPU "
        f"{cpu_with_one / IDLE_WINDOW:.2%} with one, {cpu_with_all / IDLE_WINDOW:.2%} with all"
    )
    assert per_stream_kib < 100
    assert extra_cpu_share < 0.02  # 200 idle streams add under 2% of one core


@dataclass(frozen=True)
class Opened:
    """A stream the test opened: its response and the one iterator over its lines."""

    response: httpx.Response
    lines: AsyncIterator[str]


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _stop_with_one_line(process: subprocess.Popen[bytes], within: float) -> str:
    """Wait for ``process`` to exit 1 and return the one line it wrote on stderr."""
    code = await asyncio.to_thread(process.wait, within)
    assert process.stderr is not None
    lines = process.stderr.read().decode().strip().splitlines()
    assert code == 1 and len(lines) == 1, (code, lines)
    return lines[0]


async def test_a_stream_and_listen_show_only_what_the_key_may_read(tmp_path: Path) -> None:
    async with live(tmp_path) as server, Receiver() as receiver:
        calls_key, calls_key_id = await server.new_key("calls:read", "contacts:write")
        writer, _ = await server.new_key("contacts:write", "calls:write")
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            refused = await client.get(
                "/v1/events/stream",
                params={"types": "call.started,contact.created"},
                headers=_bearer(calls_key),
            )
            assert refused.status_code == 403, refused.text
            assert "'contacts:read'" in refused.json()["error"]["message"]
            no_read_scope = await client.get("/v1/events/stream", headers=_bearer(writer))
            assert no_read_scope.status_code == 403
            async with client.stream(
                "GET", "/v1/events/stream", headers=_bearer(calls_key)
            ) as response:
                lines = response.aiter_lines()
                assert await anext(lines) == ": connected"
                await _contacts(client, server.key, 2, "hidden")
                call = await client.post("/v1/calls", json=CALL, headers=_bearer(server.key))
                got = await _read_messages(lines, 1)
        # In commit order the contacts' events came first: the first shown is the call's.
        [shown] = [m for m in got if "id" in m]
        assert shown["event"] == "call.started"
        assert json.loads(shown["data"])["data"]["id"] == call.json()["id"]

        with _start_listen(
            receiver.url, server.base_url, calls_key, "--events", "contact.created"
        ) as process:
            line = await _stop_with_one_line(process, 30)
            assert process.stdout is not None and process.stdout.read() == b""
        assert "403 forbidden" in line and "'contacts:read'" in line and "{" not in line

        with _start_listen(receiver.url, server.base_url, calls_key) as process:
            assert process.stdout is not None
            await asyncio.to_thread(process.stdout.readline)  # the secret
            forwarding = await asyncio.to_thread(process.stdout.readline)
            assert forwarding.startswith(b"Forwarding events")
            await server.revoke(calls_key_id)
            code = await asyncio.to_thread(process.wait, 30)
            assert process.stderr is not None
            notes = process.stderr.read().decode().strip().splitlines()
        # The stream ended: one retry, refused (and nothing else, no traceback).
        assert code == 1 and len(notes) == 2, notes
        assert "(the server ended the stream); retrying in 0.5 s" in notes[0]
        assert "refused the stream: 401 unauthenticated" in notes[1]


async def test_a_keys_streams_are_capped_and_end_when_it_is_revoked_in_every_process(
    tmp_path: Path,
) -> None:
    async with (
        live(tmp_path, "--workers", "2", HOOKLINE_STREAMS_PER_KEY="3") as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=30) as client,
        AsyncExitStack() as streams,
    ):
        key, key_id = await server.new_key("contacts:read")

        async def open_stream(with_key: str = key) -> Opened:
            response = await streams.enter_async_context(
                client.stream("GET", "/v1/events/stream", headers=_bearer(with_key))
            )
            # One line iterator per stream: a dropped one closes its response.
            lines = response.aiter_lines()
            if response.status_code == 200:
                assert await anext(lines) == ": connected"
            return Opened(response, lines)

        held = [await open_stream() for _ in range(3)]
        assert all(opened.response.status_code == 200 for opened in held)
        over = (await open_stream()).response
        await over.aread()
        assert over.status_code == 429 and over.json()["error"]["code"] == "rate_limited"
        assert int(over.headers["retry-after"]) >= 1
        assert (await open_stream(server.key)).response.status_code == 200  # its own cap
        await held.pop().response.aclose()  # a closed stream frees its place
        held.append(
            await eventually(
                open_stream, lambda o: o.response.status_code == 200, what="a freed place"
            )
        )

        await server.revoke(key_id)
        revoked = asyncio.get_running_loop().time()

        async def ended(opened: Opened) -> float:
            async for line in opened.lines:
                assert not line.startswith("id:"), line
            return asyncio.get_running_loop().time() - revoked

        async with asyncio.timeout(5):
            waited = await asyncio.gather(*(ended(opened) for opened in held))
        print(f"revoked key's streams ended after {max(waited):.2f} s")
        assert (await open_stream()).response.status_code == 401


async def test_listen_backs_off_names_the_url_and_stops_on_sigint_while_waiting(
    tmp_path: Path,
) -> None:
    async with live(tmp_path) as server, Receiver() as receiver:
        proxy = Proxy(server.port)
        await proxy.start()
        stream_url = f"http://127.0.0.1:{proxy.port}/v1/events/stream"
        with _start_listen(receiver.url, f"http://127.0.0.1:{proxy.port}", server.key) as process:
            try:
                await eventually(lambda: _async(proxy.downstream), lambda d: b": connected" in d)
                await proxy.cut()  # and it stays cut: every retry fails
                assert process.stderr is not None
                retries = [await asyncio.to_thread(process.stderr.readline) for _ in range(3)]
                process.send_signal(signal.SIGINT)  # during the third wait (2 s)
                code = await asyncio.to_thread(process.wait, 10)
            finally:
                process.kill()
        assert code == 0
        notes = [line.decode() for line in retries]
        assert all(f"connection to {stream_url} lost (" in note for note in notes), notes
        assert [note.rsplit("retrying in ", 1)[1].strip() for note in notes] == [
            "0.5 s",
            "1 s",
            "2 s",
        ]
        assert "Connection refused" in notes[-1] and "ssl:default" not in "".join(notes)


async def test_listen_stops_with_one_line_on_a_wrong_key_or_an_unreachable_api(
    tmp_path: Path,
) -> None:
    async with live(tmp_path) as server:
        mistyped = server.key[:-1] + ("a" if server.key[-1] != "a" else "b")
        with _start_listen("http://127.0.0.1:9/hooks", server.base_url, mistyped) as process:
            line = await _stop_with_one_line(process, 30)
            assert process.stdout is not None and process.stdout.read() == b""
        assert line.startswith("hookline: the API at ") and "401 unauthenticated" in line
        assert "checksum" in line and "{" not in line
    port = free_port()
    with _start_listen("http://127.0.0.1:9/hooks", f"http://127.0.0.1:{port}", mistyped) as process:
        line = await _stop_with_one_line(process, 30)
        assert process.stdout is not None and process.stdout.read() == b""
    assert f"http://127.0.0.1:{port}/v1/events/stream: Connection refused" in line
    assert "ssl:default" not in line
