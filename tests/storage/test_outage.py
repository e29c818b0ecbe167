"""A database that cannot be reached is a 503 ``service_unavailable`` with ``Retry-After``, the
connection stays usable, and hookline serves again as soon as the database is back."""

from __future__ import annotations

import asyncio
import logging
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import literal_column, select, text

from hookline.delivery.worker import ERROR_BACKOFF_SECONDS, Worker
from hookline.errors import ServiceUnavailable
from hookline.storage.db import PG_CONNECT_TIMEOUT_SECONDS, Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.outage import is_store_unavailable
from hookline.storage.statements import Query
from tests.conftest import TEST_SECRET_KEY, make_settings
from tests.guards.conftest import running_app
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.rawhttp import RawConnection, RawResponse, raw_connection
from tests.support.server import ServerProcess, run_cli, running_server
from tests.support.waiting import eventually

CONTACT = orjson.dumps({"first_name": "Ada", "phone_number": "+15551234567"})


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A cluster of this module's own: the tests stop it, which the shared one must never be."""
    with running_postgres() as server:
        yield server


def post_contact(conn: RawConnection, key: str) -> RawResponse:
    conn.send(
        b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + key.encode() + b"\r\n"
        b"Content-Length: %d\r\n\r\n" % len(CONTACT) + CONTACT
    )
    return conn.response()


def list_contacts(conn: RawConnection, key: str) -> RawResponse:
    conn.request("GET", "/v1/contacts", {"Authorization": f"Bearer {key}"})
    return conn.response()


def readiness(conn: RawConnection) -> RawResponse:
    conn.request("GET", "/readyz")
    return conn.response()


def assert_unavailable(answer: RawResponse) -> None:
    assert answer.status == 503, answer
    assert answer.headers["retry-after"] == str(ServiceUnavailable.retry_after_seconds)
    assert "connection" not in answer.headers  # the connection stays usable
    error = answer.json()["error"]
    assert error["code"] == "service_unavailable"
    assert error["request_id"] == answer.headers["x-request-id"]


@pytest.fixture
def serving_on_postgres(own_postgres: PostgresServer) -> Iterator[tuple[ServerProcess, str]]:
    env = {
        "HOOKLINE_DATABASE_URL": own_postgres.create_database(),
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
    }
    migrated = run_cli("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    created = run_cli("accounts", "create", "outage", env=env)
    assert created.returncode == 0, created.stderr
    with running_server(env, worker=True) as server:
        yield server, orjson.loads(created.stdout)["api_key"]


def test_postgresql_down_is_a_503_and_back_up_serves_again_without_a_restart(
    own_postgres: PostgresServer, serving_on_postgres: tuple[ServerProcess, str]
) -> None:
    server, key = serving_on_postgres
    with raw_connection(server.port) as conn:
        assert post_contact(conn, key).status == 201
        own_postgres.stop()
        try:
            # Twice each, on the one kept-alive connection: a 503 never costs the connection.
            for _ in range(2):
                assert_unavailable(post_contact(conn, key))
                assert_unavailable(list_contacts(conn, key))
                not_ready = readiness(conn)
                assert not_ready.status == 503
                assert not_ready.json()["database"] == "unreachable"
        finally:
            own_postgres.start()
        assert readiness(conn).status == 200
        assert post_contact(conn, key).status == 201
        listed = list_contacts(conn, key)
        assert listed.status == 200 and len(listed.json()) == 2
    assert server.alive
    logs = server.logs()
    assert "database unavailable" in logs
    assert "unhandled" not in logs  # an outage is not logged as a bug
    # SIGTERM stops it cleanly (exit 0), not the SIGKILL after STOP_TIMEOUT: a stop during the
    # worker's backoff after a round the outage failed used to be forgotten.
    assert server.stop() == 0


async def test_sqlite_locked_past_busy_timeout_is_a_503(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'locked.db'}"
    async with running_app(make_settings(url)) as running:
        headers = {**(await running.account()).headers, "content-type": "application/json"}
        # A first request writes the key's last_used_at (once a minute, after the response):
        # under the lock that write would wait out busy_timeout too, 10 s more for the test.
        assert (await running.client.get("/v1/contacts", headers=headers)).status_code == 200
        blocker = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        try:
            refused = await running.client.post("/v1/contacts", content=CONTACT, headers=headers)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == str(ServiceUnavailable.retry_after_seconds)
        assert refused.json()["error"]["code"] == "service_unavailable"
        # Reads never waited, and writes work again once the lock is gone.
        assert (await running.client.get("/v1/contacts", headers=headers)).json() == []
        created = await running.client.post("/v1/contacts", content=CONTACT, headers=headers)
        assert created.status_code == 201


async def _raised(coroutine: object) -> BaseException:
    try:
        await coroutine  # type: ignore[misc]
    except Exception as exc:
        return exc
    raise AssertionError("expected an exception")


async def _timed_failure(coroutine: object) -> tuple[BaseException, float]:
    started = time.monotonic()
    failure = await _raised(coroutine)
    return failure, time.monotonic() - started


async def test_what_counts_as_unavailable(tmp_path: Path) -> None:
    """Real exceptions from the real drivers, through the connector as the app meets them."""
    closed_port = Database(make_settings("postgresql://postgres@127.0.0.1:1/none"))
    try:
        assert is_store_unavailable(await _raised(closed_port.ping()))
    finally:
        await closed_port.dispose()

    unopenable = tmp_path / "missing-dir" / "h.db"
    with pytest.raises(sqlite3.OperationalError) as cannot_open:
        sqlite3.connect(unopenable)
    assert is_store_unavailable(cannot_open.value)

    # A bug (bad SQL, a missing table) is not an outage: that stays a 500.
    db = Database(make_settings(f"sqlite:///{tmp_path / 'ok.db'}"))

    async def bad_sql() -> None:
        async with db.read() as conn:
            await conn.execute(text("SELECT * FROM no_such_table"))

    try:
        assert not is_store_unavailable(await _raised(bad_sql()))
    finally:
        await db.dispose()
    assert not is_store_unavailable(ValueError("no"))
    assert not is_store_unavailable(asyncio.CancelledError())


async def test_a_postgresql_that_never_answers_fails_fast() -> None:
    """A server that accepts the TCP connection and then says nothing (a hung host): the
    request gets its 503 after the connect timeout, not asyncpg's default minute."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # the kernel completes handshakes; nothing ever answers them
        url = f"postgresql://postgres@127.0.0.1:{silent.getsockname()[1]}/none"
        db = Database(make_settings(url, secret_key=TEST_SECRET_KEY))
        try:
            # Both at once (each on its own connection attempt): the suite waits one timeout.
            for failure, took in await asyncio.gather(
                _timed_failure(db.ping()),
                _timed_failure(db.fetch_one(Query(select(literal_column("1").label("one"))), {})),
            ):
                assert is_store_unavailable(failure)
                assert took < PG_CONNECT_TIMEOUT_SECONDS + 3
        finally:
            await db.dispose()


async def test_the_worker_logs_an_outage_when_it_starts_and_when_it_ends(
    own_postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Not a traceback a second: every loop of the worker fails once a second in an outage."""
    settings = make_settings(own_postgres.create_database())
    db = Database(settings)
    await upgrade_to_head(db)
    worker = Worker(settings, db)
    caplog.set_level(logging.INFO, logger="hookline.delivery")

    async def logged(start: str) -> list[str]:
        return [m for m in (r.getMessage() for r in caplog.records) if m.startswith(start)]

    async def outage_warnings() -> list[str]:
        return await logged(f"{ROUNDS} failed: the database is unavailable")

    await worker.start()
    try:
        await asyncio.to_thread(own_postgres.stop)
        try:
            worker.on_notify("another process")  # a round, which fails; then one a second
            await eventually(outage_warnings, what="the scheduler's outage warning")
            # The outage outlasts two backoffs (ERROR_BACKOFF_SECONDS): rounds fail meanwhile.
            await asyncio.sleep(2.5 * ERROR_BACKOFF_SECONDS)
        finally:
            await asyncio.to_thread(own_postgres.start)
        worker.on_notify("another process")
        back = await eventually(
            lambda: logged(f"{ROUNDS} works again"), what="the scheduler's end-of-outage line"
        )
    finally:
        await worker.stop(grace=0)
        await db.dispose()
    assert len(await outage_warnings()) == 1
    failed_rounds = int(back[0].rsplit("(", 1)[1].split()[0])
    assert failed_rounds >= 2  # rounds kept failing, and were not logged again
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []  # an outage is no bug


ROUNDS = "dispatching or claiming deliveries"
