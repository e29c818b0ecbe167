"""Self-tests of the shared test infrastructure in tests/support (real servers, no mocks)."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from hookline.storage.db import Database
from hookline.storage.migrate import head_revision, schema_revision
from hookline.storage.queries import accounts
from tests.conftest import make_settings, new_account
from tests.support import server as server_support
from tests.support.files import delete_tree
from tests.support.postgres import PostgresServer, find_pg_bindir, running_postgres
from tests.support.receiver import Receiver, Reply
from tests.support.templates import MigratedDatabases
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# -- PostgreSQL ------------------------------------------------------------------------------


async def test_postgres_create_database_and_select(pg: PostgresServer) -> None:
    url = pg.create_database("selftest_one")
    assert url == f"postgresql://postgres@127.0.0.1:{pg.port}/selftest_one"
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("SELECT 1") == 1
        assert await conn.fetchval("SELECT current_database()") == "selftest_one"
        assert await conn.fetchval("SHOW max_connections") == "200"
        assert await conn.fetchval("SHOW fsync") == "off"
        assert await conn.fetchval("SHOW synchronous_commit") == "off"
        assert await conn.fetchval("SHOW full_page_writes") == "off"
    finally:
        await conn.close()


async def test_postgres_databases_are_fresh_and_separate(pg: PostgresServer) -> None:
    first = await pg.acreate_database()
    second = pg.create_database()
    assert first != second
    conn = await asyncpg.connect(first)
    try:
        await conn.execute("CREATE TABLE t (x int)")
    finally:
        await conn.close()
    conn = await asyncpg.connect(second)
    try:
        assert await conn.fetchval("SELECT to_regclass('public.t')") is None
    finally:
        await conn.close()
    with pytest.raises(ValueError):
        pg.create_database('bad"name')


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_migrated_copies_are_at_head_and_separate(
    backend: str, migrated: MigratedDatabases, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = Database(make_settings(await migrated.url(backend, tmp_path / "a", request)))
    second = Database(make_settings(await migrated.url(backend, tmp_path / "b", request)))
    try:
        assert await schema_revision(first) == head_revision()
        assert await schema_revision(second) == head_revision()
        account = await new_account(first, "only-in-the-first")
        params = {"account_id": account.id}
        assert await first.fetch_one(accounts.ID_OF, params) is not None
        assert await second.fetch_one(accounts.ID_OF, params) is None
    finally:
        await first.dispose()
        await second.dispose()


def test_postgres_runs_unprivileged(pg: PostgresServer) -> None:
    owner = os.stat(pg.data_dir).st_uid
    if os.geteuid() == 0:
        assert owner != 0
    assert str(pg.socket_dir).startswith(str(pg.base_dir))


def test_postgres_stops_and_cleans_up() -> None:
    with running_postgres() as server:
        base, port = server.base_dir, server.port
        assert _port_open(port)
    assert not base.exists()
    assert not _port_open(port)


def test_postgres_cleans_up_on_failure() -> None:
    holder: list[PostgresServer] = []
    with pytest.raises(KeyError), running_postgres() as server:
        holder.append(server)
        raise KeyError("boom")
    assert not holder[0].base_dir.exists()
    assert not _port_open(holder[0].port)


def test_missing_binaries_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOOKLINE_TEST_PG_BINDIR", raising=False)
    with pytest.raises(RuntimeError, match="PostgreSQL server binaries not found"):
        find_pg_bindir(tmp_path)
    assert (find_pg_bindir() / "initdb").exists()


# -- receiver --------------------------------------------------------------------------------


async def test_receiver_records_a_post() -> None:
    async with Receiver() as r, aiohttp.ClientSession() as client:
        assert r.url == f"http://127.0.0.1:{r.port}/hook"
        before = time.monotonic()
        async with client.post(
            r.url + "?a=1",
            data=b'{"id": "evt_1"}',
            headers={"Content-Type": "application/json", "Webhook-Id": "evt_1"},
        ) as response:
            assert response.status == 204
        [req] = await r.wait_for(1, timeout=5)
        assert req.method == "POST"
        assert req.path == "/hook"
        assert req.query == "a=1"
        assert req.body == b'{"id": "evt_1"}'
        assert req.json() == {"id": "evt_1"}
        assert req.headers["webhook-id"] == "evt_1"
        assert req.headers["content-type"] == "application/json"
        assert all(name == name.lower() for name in req.headers)
        assert before <= req.received_at <= time.monotonic()
        assert r.requests == [req]


async def test_receiver_scripted_statuses_then_default() -> None:
    async with Receiver() as r, aiohttp.ClientSession() as client:
        r.script([500, 500, Reply(status=200, body=b"ok")])
        statuses = []
        for _ in range(4):
            async with client.post(r.url, data=b"x") as response:
                statuses.append(response.status)
        assert statuses == [500, 500, 200, 204]
        assert [req.reply.status for req in await r.wait_for(4, 1)] == statuses


async def test_receiver_headers_and_redirect() -> None:
    async with Receiver() as r, aiohttp.ClientSession() as client:
        r.respond(429, headers={"Retry-After": "7"})
        async with client.post(r.url, data=b"x") as response:
            assert response.status == 429
            assert response.headers["Retry-After"] == "7"
        r.redirect(r.url_for("/elsewhere"))
        async with client.post(r.url, data=b"x", allow_redirects=False) as response:
            assert response.status == 302
            assert response.headers["Location"] == r.url_for("/elsewhere")
        assert len(r.requests) == 2


async def test_receiver_hang_outlasts_client_timeout() -> None:
    async with Receiver() as r, aiohttp.ClientSession() as client:
        r.hang(5)
        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            async with client.post(
                r.url, data=b"x", timeout=aiohttp.ClientTimeout(total=0.3)
            ) as response:
                await response.read()
        assert time.monotonic() - started < 2
        # Recorded on arrival, while the answer was still pending.
        assert len(await r.wait_for(1, timeout=1)) == 1
        r.reset()
        async with client.post(r.url, data=b"y") as response:
            assert response.status == 204
    # Leaving the block cut the 5 s hang short.
    assert time.monotonic() - started < 4


async def test_receiver_wait_for_times_out_clearly() -> None:
    async with Receiver() as r:
        with pytest.raises(AssertionError, match=r"waited 0\.1s for 1 request"):
            await r.wait_for(1, timeout=0.1)


async def test_receiver_wait_for_wakes_on_arrival() -> None:
    async with Receiver() as r, aiohttp.ClientSession() as client:
        waiter = asyncio.create_task(r.wait_for(2, timeout=5))
        for _ in range(2):
            async with client.put(r.url_for("/other"), data=b"z") as response:
                assert response.status == 204
        requests = await waiter
        assert [req.path for req in requests] == ["/other", "/other"]
        assert {req.method for req in requests} == {"PUT"}


# -- server ----------------------------------------------------------------------------------


def test_server_helpers_import() -> None:
    assert callable(server_support.running_server)
    assert callable(server_support.async_running_server)
    assert callable(server_support.run_cli)
    port = server_support.free_port()
    assert 0 < port < 65536
    assert not _port_open(port)


# -- files -----------------------------------------------------------------------------------


def test_delete_tree_removes_everything_and_ignores_what_is_gone(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    for n in range(50):
        (tree / "a" / "b" / f"f{n}").write_bytes(b"x")
    (tree / "top").write_text("y")
    delete_tree(tree)
    assert not tree.exists()
    assert list(tmp_path.iterdir()) == []
    delete_tree(tree)  # already gone: no error


def test_delete_tree_without_waiting_deletes_in_the_background(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "f").write_bytes(b"x")
    delete_tree(tree, wait=False)
    # Not even a zombie: nothing for Popen.__del__ to warn of.
    assert _our_children_named("rm") == []
    wait_until(lambda: not tree.exists(), within=10, message="the tree deleted")


def _our_children_named(command: str) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended while we looked
        name = text[text.index("(") + 1 : text.rindex(")")]
        parent = int(text[text.rindex(")") + 2 :].split()[1])
        if name == command and parent == os.getpid():
            children.append(int(stat.parent.name))
    return children
