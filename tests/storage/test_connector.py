"""``storage.connector``: SQLite reads run inline, but each lets the tasks already waiting run
first, so one read-only request cannot hold the others until it has answered. Concurrent
``commit_rows`` share one commit (on PostgreSQL one round trip), each caller's rows still all or
nothing, and concurrent key look-ups one statement; PostgreSQL's pool serves waiting callers in
order."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import select, text

from hookline.delivery.wakeup import make_wakeup
from hookline.domain import contacts as contacts_domain
from hookline.domain import keys as keys_domain
from hookline.storage import connector as connector_module
from hookline.storage.connector import IntegrityError, PostgresConnector, SQLiteConnector
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts, contacts, events
from hookline.storage.queries import keys as key_queries
from hookline.storage.statements import JointInsert, JointRows, Query
from tests.conftest import Account, make_settings, new_account
from tests.support.commits import sqlite_commits_held
from tests.support.postgres import PostgresServer, client_backends
from tests.support.wakeups import wake_ups

_ANY_ACCOUNT = Query(select(accounts.c.id).limit(1))


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(make_settings(f"sqlite:///{tmp_path / 'reads.db'}"))
    await upgrade_to_head(database)
    yield database
    await database.dispose()


async def _one_row(database: Database) -> None:
    await database.fetch_one(_ANY_ACCOUNT, {})


async def _read_block(database: Database) -> None:
    async with database.read() as conn:
        await conn.execute(_ANY_ACCOUNT)


@pytest.mark.parametrize("read", [_one_row, _read_block], ids=["fetch_one", "read"])
async def test_a_read_lets_the_waiting_tasks_run_first(
    sqlite_db: Database, read: Callable[[Database], Awaitable[None]]
) -> None:
    order: list[str] = []

    async def waiting() -> None:
        order.append("waiting task")

    task = asyncio.create_task(waiting())  # ready, but runs only when this task suspends
    await read(sqlite_db)
    order.append("read done")
    await task
    assert order == ["waiting task", "read done"]


# PostgreSQL: concurrent commit_rows share a round trip; the pool serves callers in order.


@pytest.fixture(params=["sqlite", "postgres"])
async def rows_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'rows.db'}"
    else:
        url = request.getfixturevalue("pg_server").create_database()
    database = Database(make_settings(url, db_pool_size=2))
    await upgrade_to_head(database)
    yield database
    await database.dispose()


def _creation(account_id: str, n: int) -> JointRows:
    _contact, joint = contacts_domain.contact_creation(
        account_id, {"first_name": f"Ada {n}", "phone_number": "+15551234567"}
    )
    return joint


def _stored_contacts(database: Database) -> Callable[[], Awaitable[set[str]]]:
    async def stored() -> set[str]:
        async with database.read() as conn:
            rows = await conn.execute(select(contacts.c.id))
            events_of = await conn.execute(
                select(events.c.data).where(events.c.type == "contact.created")
            )
        contact_ids = {row.id for row in rows}
        assert contact_ids == {event.data["id"] for event in events_of}  # each with its event
        return contact_ids

    return stored


@pytest.fixture
async def rows_account(rows_db: Database) -> Account:
    return await new_account(rows_db)


@pytest.fixture
def commits(rows_db: Database, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per commit of ``commit_rows`` callers' rows (on PostgreSQL, the number of
    callers in it; on SQLite, the batch's units)."""
    counted: list[int] = []
    if rows_db.is_sqlite:
        commit = connector_module._Batch.commit

        async def counted_commit(batch: connector_module._Batch) -> None:
            counted.append(batch.units)
            await commit(batch)

        monkeypatch.setattr(connector_module._Batch, "commit", counted_commit)
        return counted
    insert_all = connector_module._JointGroupCommit._insert_all

    async def counted_insert(
        self: connector_module._JointGroupCommit, joints: list[JointRows]
    ) -> None:
        counted.append(len(joints))
        await insert_all(self, joints)

    monkeypatch.setattr(connector_module._JointGroupCommit, "_insert_all", counted_insert)
    return counted


async def test_concurrent_rows_share_a_commit_and_return_once_committed(
    rows_db: Database, rows_account: Account, commits: list[int]
) -> None:
    joints = [_creation(rows_account.id, n) for n in range(40)]
    stored = _stored_contacts(rows_db)

    async def commit_then_look(joint: JointRows) -> None:
        await rows_db.commit_rows(joint)
        assert joint.rows[0]["id"] in await stored()  # returned: committed, event and all

    await asyncio.gather(*(commit_then_look(joint) for joint in joints))
    assert await stored() == {joint.rows[0]["id"] for joint in joints}
    assert sum(commits) == 40 and len(commits) <= 3  # 40 callers queued together


async def test_a_refused_row_fails_its_caller_only(
    rows_db: Database, rows_account: Account
) -> None:
    joints = [_creation(rows_account.id, n) for n in range(6)]
    contact_row, event_row = joints[3].rows
    joints[3] = joints[3].insert.rows(contact_row, {**event_row, "account_id": "account-missing"})
    results = await asyncio.gather(
        *(rows_db.commit_rows(joint) for joint in joints), return_exceptions=True
    )
    assert [n for n, result in enumerate(results) if result is not None] == [3]
    assert isinstance(results[3], IntegrityError)
    assert await _stored_contacts(rows_db)() == {
        joint.rows[0]["id"] for n, joint in enumerate(joints) if n != 3
    }


async def test_a_cancelled_caller_does_not_fail_the_batch(
    rows_db: Database, rows_account: Account
) -> None:
    joints = [_creation(rows_account.id, n) for n in range(8)]
    tasks = [asyncio.ensure_future(rows_db.commit_rows(joint)) for joint in joints]
    await asyncio.sleep(0)  # every caller queued
    tasks[0].cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    assert results[1:] == [None] * 7
    await rows_db.commit_rows(_creation(rows_account.id, 8))  # a batch after theirs
    stored = await _stored_contacts(rows_db)()
    assert {joint.rows[0]["id"] for joint in joints} <= stored  # the cancelled caller's too


async def test_a_caller_cancelled_during_the_commit_leaves_the_others_theirs(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: each caller waits for the COMMIT on a future of its own; cancelling one while
    the COMMIT runs neither cancels the others' wait nor takes its rows out of the batch."""
    account = await new_account(sqlite_db)
    with sqlite_commits_held(monkeypatch) as (started, go_on):
        joints = [_creation(account.id, n) for n in range(6)]
        tasks = [asyncio.ensure_future(sqlite_db.commit_rows(joint)) for joint in joints]
        assert await asyncio.to_thread(started.wait, 10)  # the rows ran; the COMMIT is under way
        tasks[2].cancel()
        await asyncio.sleep(0)
        assert tasks[2].cancelled() and not any(t.done() for n, t in enumerate(tasks) if n != 2)
        go_on.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(results[2], asyncio.CancelledError)
        assert results[:2] + results[3:] == [None] * 5
        assert await _stored_contacts(sqlite_db)() == {joint.rows[0]["id"] for joint in joints}


async def test_a_failed_commit_reaches_every_caller_of_the_batch(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = await new_account(sqlite_db)

    def failing_commit(batch: connector_module._Batch) -> None:
        batch.raw.rollback()
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(connector_module._Batch, "_commit_and_hand_over", failing_commit)
    joints = [_creation(account.id, n) for n in range(5)]
    results = await asyncio.wait_for(
        asyncio.gather(*(sqlite_db.commit_rows(j) for j in joints), return_exceptions=True), 10
    )
    assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
    monkeypatch.undo()
    assert await _stored_contacts(sqlite_db)() == set()


async def test_rows_and_units_share_the_sqlite_writer(tmp_path: Path) -> None:
    """``commit_rows`` callers and ``begin()`` blocks queued together: each block's work and
    each caller's rows are committed, and a failing block rolls back alone."""
    database = Database(make_settings(f"sqlite:///{tmp_path / 'mixed.db'}"))
    await upgrade_to_head(database)
    try:
        account = await new_account(database)
        joints = [_creation(account.id, n) for n in range(10)]

        async def block(n: int) -> None:
            async with database.begin() as conn:
                await contacts_domain.create_contact(
                    conn, account.id, {"first_name": f"Block {n}", "phone_number": "+15551234567"}
                )
                if n % 2:
                    raise RuntimeError("this block fails after its write")

        results = await asyncio.gather(
            *(database.commit_rows(joint) for joint in joints[:5]),
            *(block(n) for n in range(4)),
            *(database.commit_rows(joint) for joint in joints[5:]),
            return_exceptions=True,
        )
        assert [type(result).__name__ for result in results] == ["NoneType"] * 5 + [
            "NoneType",
            "RuntimeError",
            "NoneType",
            "RuntimeError",
        ] + ["NoneType"] * 5
        async with database.read() as conn:
            names = {row.first_name for row in await conn.execute(select(contacts.c.first_name))}
        assert names == {f"Ada {n}" for n in range(10)} | {"Block 0", "Block 2"}
        assert len(await _stored_contacts(database)()) == 12  # and each with its event
    finally:
        await database.dispose()


async def test_an_unreachable_database_fails_every_caller_of_the_batch() -> None:
    """Nobody waits for ever on a batch that could not be sent; each caller gets the error
    (the API turns it into a 503, ``storage.outage``)."""
    database = Database(make_settings("postgresql+asyncpg://hookline@127.0.0.1:9/nowhere"))
    try:
        joints = [_creation("account-any", n) for n in range(5)]
        results = await asyncio.wait_for(
            asyncio.gather(*(database.commit_rows(j) for j in joints), return_exceptions=True),
            timeout=10,
        )
        assert all(isinstance(result, OSError) for result in results), results
    finally:
        await database.dispose()


async def test_the_pool_serves_waiting_callers_in_order(pg_server: PostgresServer) -> None:
    """A caller that asks for a connection while one is being given back goes behind the
    callers already waiting: asyncpg's own pool hands it to whichever asks first after the
    release, and a waiter that lost that race waited again at the back of its queue. The
    newcomer asks after 0-5 turns of the loop, to land in every step of the release."""
    database = Database(make_settings(pg_server.create_database(), db_pool_size=1))
    await upgrade_to_head(database)
    connector = database.connector
    assert isinstance(connector, PostgresConnector)

    async def read(
        served: list[str], name: str, turns: int = 0, hold: asyncio.Event | None = None
    ) -> None:
        for _ in range(turns):
            await asyncio.sleep(0)
        async with connector.read() as conn:
            served.append(name)
            if hold is not None:
                await hold.wait()
            await conn.execute(_ANY_ACCOUNT)

    try:
        for turns in range(6):
            served: list[str] = []
            go = asyncio.Event()
            holders = [connector.read(), connector.read()]  # both of the pool's connections
            for holder in holders:
                await holder.__aenter__()
            waiting = [
                asyncio.ensure_future(read(served, f"waiter {n}", hold=go)) for n in range(3)
            ]
            await asyncio.sleep(0.02)
            assert served == []
            releasing = asyncio.ensure_future(holders[0].__aexit__(None, None, None))
            newcomer = asyncio.ensure_future(read(served, "newcomer", turns))
            await releasing
            await holders[1].__aexit__(None, None, None)
            # The served waiters hold their connections until the newcomer has surely asked
            # (its ``turns`` and one step more): then it can only be served by a hand-off, and
            # a hand-off must go to waiter 2 first. Without the hold, a newcomer that asked
            # after the queue had emptied took an idle connection and could append its name
            # before waiter 2's task had woken (it failed that way under load).
            for _ in range(turns + 2):
                await asyncio.sleep(0)
            go.set()
            await asyncio.gather(*waiting, newcomer)
            assert served == ["waiter 0", "waiter 1", "waiter 2", "newcomer"], turns
    finally:
        await database.dispose()


async def test_queued_rows_are_written_back_to_back_in_one_step_of_the_loop(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite the ``commit_rows`` callers queued together are written by one task in one
    step: no other task runs between two of them while the writer (and, with several
    processes, the turnstile) is held. Run one per turn of the loop, every turn ran the other
    requests' work with the lock held (docs/benchmarks.md, change 50)."""
    account = await new_account(sqlite_db)
    turns = 0
    written_at: list[int] = []
    run_together = connector_module.SQLiteConnection.run_together

    def counted(self: connector_module.SQLiteConnection, joints: Any) -> None:
        written_at.extend([turns] * len(joints))
        run_together(self, joints)

    monkeypatch.setattr(connector_module.SQLiteConnection, "run_together", counted)

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    counter = asyncio.create_task(count_turns())
    joints = [_creation(account.id, n) for n in range(30)]
    try:
        await asyncio.gather(*(sqlite_db.commit_rows(joint) for joint in joints))
    finally:
        counter.cancel()
    assert len(written_at) == 30
    assert len(set(written_at)) == 1, written_at  # all in the same turn
    assert len(await _stored_contacts(sqlite_db)()) == 30


async def test_queued_rows_of_different_statements_are_all_written(
    sqlite_db: Database,
) -> None:
    """Callers that all run the same statements share each statement's ``executemany``; a run
    that mixes statements runs each caller's in turn. Both kinds queued together, all there."""
    account = await new_account(sqlite_db)
    joints = [_creation(account.id, n) for n in range(6)]
    events_only = JointInsert(events)
    lone = [
        events_only.rows({**_creation(account.id, n).rows[1], "type": "contact.deleted"})
        for n in range(2)
    ]
    await asyncio.gather(*(sqlite_db.commit_rows(j) for j in [*joints[:3], *lone, *joints[3:]]))
    assert await _stored_contacts(sqlite_db)() == {joint.rows[0]["id"] for joint in joints}
    async with sqlite_db.read() as conn:
        deleted = await conn.execute(select(events.c.id).where(events.c.type == "contact.deleted"))
    assert {row.id for row in deleted} == {joint.rows[0]["id"] for joint in lone}


async def test_concurrent_key_look_ups_share_a_statement_each_reading_its_own_key(
    pg_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request's key look-up (``SharedLookup``): on PostgreSQL the callers queued together
    share one statement, and each gets its own key's row, or None for a key that is unknown or
    was revoked before it asked."""
    database = Database(make_settings(pg_server.create_database(), db_pool_size=2))
    await upgrade_to_head(database)
    try:
        live = [await new_account(database, f"live {n}") for n in range(3)]
        revoked = await new_account(database, "revoked")
        async with database.begin() as conn:
            (key_id,) = [key["id"] for key in await keys_domain.list_keys(conn, revoked.id)]
            assert await keys_domain.revoke_key(conn, revoked.id, key_id)
        sent: list[int] = []
        send = connector_module._SharedLookups._send

        async def counted_send(self: Any, group: Any) -> None:
            sent.append(len(group))
            await send(self, group)

        monkeypatch.setattr(connector_module._SharedLookups, "_send", counted_send)
        asked = [*live, revoked, Account("unknown", keys_domain.generate_key())] * 8
        found = await asyncio.gather(*(keys_domain.authenticate(database, a.key) for a in asked))
        expected = [a.id if a in live else None for a in asked]
        assert [context and context.account_id for context in found] == expected
        assert sum(sent) == len(asked) and len(sent) <= 2  # 40 callers queued together
    finally:
        await database.dispose()


# SQLite: the key look-ups asked in one turn of the loop are read in one statement.


@contextlib.contextmanager
def _key_reads(database: Database) -> Iterator[list[str]]:
    """The SQL of the reads of ``api_keys`` run on ``database``'s SQLite reader meanwhile."""
    connector = database.connector
    assert isinstance(connector, SQLiteConnector)
    raw = connector.reader()._raw
    reads: list[str] = []
    raw.set_trace_callback(lambda sql: reads.append(sql) if "FROM api_keys" in sql else None)
    try:
        yield reads
    finally:
        raw.set_trace_callback(None)


def _single_form(database: Database, key: str) -> Any | None:
    connector = database.connector
    assert isinstance(connector, SQLiteConnector)
    params = {"key_hash": keys_domain.hash_key(key)}
    return connector.reader().run(key_queries.LIVE_BY_HASH, params).first()


async def _look_up(database: Database, key: str) -> Any | None:
    return await database.fetch_one(
        key_queries.LIVE_BY_HASH, {"key_hash": keys_domain.hash_key(key)}
    )


async def test_sqlite_key_look_ups_of_one_turn_share_one_read_each_its_own_row(
    sqlite_db: Database,
) -> None:
    """Different keys asked in one turn: one statement for all, each caller its own key's row,
    the very row the single look-up reads (without the key column the joint form adds); None
    for a key that is unknown, or one whose hash differs from a live key's only in case, as
    the single form finds none."""
    live = [await new_account(sqlite_db, f"live {n}") for n in range(5)]
    unknown = keys_domain.generate_key()
    with _key_reads(sqlite_db) as reads:
        found = await asyncio.gather(*(_look_up(sqlite_db, a.key) for a in live))
        wrong_case = {"key_hash": keys_domain.hash_key(live[0].key).upper()}
        none_found = await asyncio.gather(
            _look_up(sqlite_db, unknown),
            sqlite_db.fetch_one(key_queries.LIVE_BY_HASH, wrong_case),
        )
    assert len(reads) == 2, reads  # one per turn
    assert list(none_found) == [None, None]
    for account, row in zip(live, found, strict=True):
        single = _single_form(sqlite_db, account.key)
        assert single is not None and row is not None
        assert {name: getattr(row, name) for name in single._fields} == single._asdict()
        assert row.account_id == account.id


async def test_sqlite_a_key_asked_twice_in_a_turn_is_read_once_by_the_single_form(
    sqlite_db: Database,
) -> None:
    """One key asked by several callers of one turn: read once, by the look-up's own
    statement (no list), and each gets that row; with a second key, both in one statement."""
    one, other = await new_account(sqlite_db, "one"), await new_account(sqlite_db, "other")
    with _key_reads(sqlite_db) as reads:
        alone = await asyncio.gather(*(_look_up(sqlite_db, one.key) for _ in range(3)))
    assert len(reads) == 1 and "json_each" not in reads[0], reads
    assert alone == [_single_form(sqlite_db, one.key)] * 3
    with _key_reads(sqlite_db) as reads:
        both = await asyncio.gather(*(_look_up(sqlite_db, a.key) for a in [one, other, one]))
    assert len(reads) == 1 and "json_each" in reads[0], reads
    assert [row and row.account_id for row in both] == [one.id, other.id, one.id]
    assert both[0] == both[2]


async def test_sqlite_a_key_revoked_between_two_turns_is_refused_in_the_second(
    sqlite_db: Database,
) -> None:
    """Each turn's callers read after they asked: a key revoked (committed) after one turn's
    joint read is refused by the next turn's, the other keys still found."""
    revoked, kept = await new_account(sqlite_db, "revoked"), await new_account(sqlite_db, "kept")
    with _key_reads(sqlite_db) as reads:
        before = await asyncio.gather(*(_look_up(sqlite_db, a.key) for a in [revoked, kept]))
        async with sqlite_db.begin() as conn:
            (key_id,) = [key["id"] for key in await keys_domain.list_keys(conn, revoked.id)]
            assert await keys_domain.revoke_key(conn, revoked.id, key_id)
        after = await asyncio.gather(*(_look_up(sqlite_db, a.key) for a in [revoked, kept]))
    assert len(reads) == 2, reads
    assert [row and row.account_id for row in before] == [revoked.id, kept.id]
    assert [row and row.account_id for row in after] == [None, kept.id]


async def test_sqlite_a_cancelled_key_look_up_leaves_the_others_of_its_turn_answered(
    sqlite_db: Database,
) -> None:
    """A caller cancelled (its client gone) after it asked: the turn's read answers the others
    and skips its future."""
    accounts_ = [await new_account(sqlite_db, f"a {n}") for n in range(3)]
    with _key_reads(sqlite_db) as reads:
        tasks = [asyncio.create_task(_look_up(sqlite_db, a.key)) for a in accounts_]
        await asyncio.sleep(0)  # one yield: each task runs to its look-up and asks
        tasks[1].cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    assert len(reads) == 1, reads
    assert isinstance(results[1], asyncio.CancelledError)
    assert [getattr(results[n], "account_id", None) for n in (0, 2)] == [
        accounts_[0].id,
        accounts_[2].id,
    ]


async def test_sqlite_a_failing_key_read_fails_its_turn_s_callers_only(
    sqlite_db: Database,
) -> None:
    """The joint read refused (SQLite's authorizer denies reading ``api_keys``): every caller
    of that turn gets the error, from one attempt; the next turn's callers read as before."""
    accounts_ = [await new_account(sqlite_db, f"a {n}") for n in range(3)]
    connector = sqlite_db.connector
    assert isinstance(connector, SQLiteConnector)
    raw = connector.reader()._raw
    attempts: list[str] = []

    def deny_api_keys(action: int, table: str | None, *args: Any) -> int:
        if action == sqlite3.SQLITE_READ and table == "api_keys":
            attempts.append(f"{table}.{args[0]}")
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    raw.set_authorizer(deny_api_keys)
    try:
        failed = await asyncio.gather(
            *(_look_up(sqlite_db, a.key) for a in accounts_), return_exceptions=True
        )
    finally:
        raw.set_authorizer(None)
    assert all(isinstance(result, sqlite3.DatabaseError) for result in failed), failed
    assert attempts == ["api_keys.id"]  # one statement tried (denied at its first column)
    found = await asyncio.gather(*(_look_up(sqlite_db, a.key) for a in accounts_))
    assert [row and row.account_id for row in found] == [a.id for a in accounts_]


async def test_sqlite_key_look_ups_asked_before_the_database_closes_are_answered_first(
    tmp_path: Path,
) -> None:
    """A look-up asked in the turn the database closes is read before the reader is closed, not
    by a reader its turn's read would open again (a connection nobody closes)."""
    database = Database(make_settings(f"sqlite:///{tmp_path / 'closing.db'}"))
    await upgrade_to_head(database)
    connector = database.connector
    assert isinstance(connector, SQLiteConnector)
    account = await new_account(database)
    asking = asyncio.create_task(_look_up(database, account.key))
    await asyncio.sleep(0)  # one yield: the task asks
    await database.dispose()
    row = await asking
    assert row is not None and row.account_id == account.id
    assert connector._reader is None  # not opened again after the close


async def test_prepare_opens_the_connections_side_by_side_and_parses_on_each(
    pg_server: PostgresServer,
) -> None:
    """``prepare`` opens as many pooled connections as asked (the idle one first), has each
    parse the statements (a statement PostgreSQL cannot parse fails it), and leaves them idle
    in the pool for the work to come."""
    database = Database(make_settings(pg_server.create_database()))
    connector = database.connector
    assert isinstance(connector, PostgresConnector)
    try:
        assert await client_backends(database) == 1  # one connection open, idle after it
        await database.prepare([text("SELECT 1"), text("SELECT now()")], connections=3)
        assert await client_backends(database) == 3  # one of the three: none opened for it
        with pytest.raises(asyncpg.PostgresSyntaxError):
            await database.prepare([text("SELEC 1")], connections=1)
    finally:
        await database.dispose()


async def test_prepare_on_sqlite_does_nothing(tmp_path: Path) -> None:
    database = Database(make_settings(f"sqlite:///{tmp_path / 'prepare.db'}"))
    try:
        await database.prepare([text("SELEC 1")], connections=3)  # not even parsed
    finally:
        await database.dispose()


def _temporary_files_open() -> list[str]:
    """SQLite's temporary files this process has open (unlinked at once, so named
    ``etilqs_... (deleted)``): a statement journal spilled past its 64 KiB in memory."""
    fds = Path("/proc/self/fd")
    targets = []
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            targets.append(os.readlink(fd))
    return [target for target in targets if "etilqs_" in target]


async def test_a_batch_of_rows_alone_keeps_no_statement_journal_after_each_statement(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queued rows that are their batch's only work run with no SAVEPOINT around them: each
    statement's journal ends with it. In a SAVEPOINT SQLite kept the original of every page
    the batch changed to the RELEASE, and rows spread over a table's index pages (e-mails and
    phone numbers in no order) took it past 64 KiB: a temporary file, made and unlinked each
    batch."""
    account = await new_account(sqlite_db)

    def spread(n: int) -> JointRows:
        _contact, joint = contacts_domain.contact_creation(
            account.id,
            {
                "first_name": f"Ada {n}",
                "phone_number": f"+1555{random.randrange(10**7):07d}",
                "email": f"{random.randrange(10**9)}@example.com",
            },
        )
        return joint

    for _ in range(10):  # pages for the rows to land among
        await asyncio.gather(*(sqlite_db.commit_rows(spread(n)) for n in range(200)))
    spilled: list[list[str]] = []
    run_together = connector_module.SQLiteConnection.run_together

    def looked(self: connector_module.SQLiteConnection, joints: Any) -> None:
        run_together(self, joints)
        spilled.append(_temporary_files_open())  # before any RELEASE or COMMIT

    monkeypatch.setattr(connector_module.SQLiteConnection, "run_together", looked)
    joints = [spread(n) for n in range(60)]
    await asyncio.gather(*(sqlite_db.commit_rows(joint) for joint in joints))
    assert spilled and all(files == [] for files in spilled), spilled
    assert {joint.rows[0]["id"] for joint in joints} <= await _stored_contacts(sqlite_db)()


@pytest.mark.parametrize(
    ("scheduler", "held"),
    [("none", False), ("asleep", True), ("woken already", False)],
)
async def test_rows_of_an_event_hold_the_writer_a_turn_only_for_a_sleeping_scheduler(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch, scheduler: str, held: bool
) -> None:
    """SQLite: a batch holding rows of an event stays open one turn of the loop, for the round
    of the scheduler its wake-up woke (``_GroupCommit._let_the_round_join``), only if that
    wake-up found this process's scheduler asleep. Otherwise (an API without a worker, or a
    scheduler woken already, by a batch earlier in the turn) its COMMIT is handed to its thread
    in the very step that wrote the rows: a turn with the writer held is a turn in which every
    other process's writer waits at the turnstile (docs/benchmarks.md, change 50)."""
    account = await new_account(sqlite_db)
    wakeup = make_wakeup(make_settings(sqlite_db.url), sqlite_db)
    subscriber = wakeup.subscribe()
    if scheduler == "woken already":
        subscriber.set()
    order: list[str] = []
    run_together = connector_module.SQLiteConnection.run_together
    commit = connector_module._Batch.commit

    def written(self: connector_module.SQLiteConnection, joints: Any) -> None:
        run_together(self, joints)
        asyncio.get_running_loop().call_soon(order.append, "the next turn")

    async def committed(batch: connector_module._Batch) -> None:
        order.append("COMMIT")
        await commit(batch)

    monkeypatch.setattr(connector_module.SQLiteConnection, "run_together", written)
    monkeypatch.setattr(connector_module._Batch, "commit", committed)
    joint = _creation(account.id, 0)
    try:
        with contextlib.ExitStack() as stack, wake_ups(sqlite_db) as woken:
            if scheduler != "none":
                stack.enter_context(wakeup.asleep(subscriber))
            await sqlite_db.commit_rows(joint)
    finally:
        await wakeup.close()
    assert order == (["the next turn", "COMMIT"] if held else ["COMMIT", "the next turn"])
    assert len(woken) == 1 and subscriber.is_set()  # woken once, before the COMMIT or after
    assert await _stored_contacts(sqlite_db)() == {joint.rows[0]["id"]}
