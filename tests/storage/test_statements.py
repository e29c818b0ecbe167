"""``storage.statements``: statements compiled once per dialect and run on the drivers read
and write exactly what SQLAlchemy's processors make of them; a ``Result`` reads like
SQLAlchemy's."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime

import asyncpg
import pytest
from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import NoResultFound

from hookline import ids
from hookline.domain import contacts as contacts_domain
from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT, IntegrityError
from hookline.storage.db import Database, fetch_all, fetch_one
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts, contacts, events
from hookline.storage.queries import accounts as accounts_queries
from hookline.storage.statements import JointInsert, JointRows, Query
from tests.conftest import Account, make_settings
from tests.support.contacts import bare_contact
from tests.support.postgres import PostgresServer

_BY_ID = Query(
    select(contacts.c.id, contacts.c.tags, contacts.c.created_at).where(
        contacts.c.id == bindparam("id")
    )
)
_INSERT = Query(contacts.insert())
# A list parameter (IN), a literal inside the statement (LIMIT 2) and a JSON column.
_BY_IDS = Query(
    select(contacts.c.id, contacts.c.tags, contacts.c.updated_at)
    .where(contacts.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(contacts.c.id)
    .limit(2)
)
_RENAME = Query(
    update(contacts)
    .where(contacts.c.id.in_(bindparam("ids", expanding=True)))
    .values(first_name=bindparam("b_name"), last_name=None)
)
_RENAME_ONE = Query(
    update(contacts)
    .where(contacts.c.id == bindparam("b_id"))
    .values(first_name=bindparam("b_name"))
)


_INSERT_ACCOUNT = accounts_queries.INSERT  # an account's own columns; the rest by default


def _account(account_id: str) -> dict[str, object]:
    return {"id": account_id, "name": "unit", "created_at": datetime.now(UTC)}


def _row(account_id: str, when: datetime) -> dict[str, object]:
    return {**bare_contact(account_id, ids.contact_id(), when), "tags": ["vip", "math"]}


async def test_a_compiled_read_decodes_the_same_in_and_outside_a_transaction(
    db: Database, account: Account
) -> None:
    async with db.begin() as conn:
        contact = await contacts_domain.create_contact(
            conn, account.id, {"first_name": "Ada", "phone_number": "+15551234567", "tags": ["a"]}
        )
    through_driver = await fetch_one(db, _BY_ID, {"id": contact["id"]})
    async with db.read() as conn:
        through_sqlalchemy = await fetch_one(conn, _BY_ID, {"id": contact["id"]})
    assert through_driver is not None and through_sqlalchemy is not None
    assert tuple(through_driver) == tuple(through_sqlalchemy)
    assert through_driver.tags == ["a"]
    assert through_driver.created_at.tzinfo is not None  # aware, in UTC
    assert await fetch_one(db, _BY_ID, {"id": "contact-missing"}) is None


async def test_a_compiled_write_stores_what_a_per_call_read_returns(
    db: Database, account: Account
) -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
    row = _row(account.id, when)
    async with db.begin() as conn:
        await conn.execute(_INSERT, row)
    async with db.read() as conn:
        stored = (await conn.execute(select(contacts).where(contacts.c.id == row["id"]))).one()
    assert stored.created_at == when
    assert stored.tags == ["vip", "math"]
    assert stored.last_name is None


async def test_a_compiled_write_rolls_back_with_its_transaction(
    db: Database, account: Account
) -> None:
    """The outbox depends on it: the contact and its event commit together or not at all."""
    row = _row(account.id, datetime.now(UTC))

    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        async with db.begin() as conn:
            await conn.execute(_INSERT, row)
            raise Abort
    assert await fetch_one(db, _BY_ID, {"id": row["id"]}) is None


async def test_a_one_statement_read_sees_a_commit_at_once(db: Database, account: Account) -> None:
    """SQLite's point reader runs in autocommit mode: no stale snapshot between requests."""
    assert await fetch_one(db, _BY_ID, {"id": "contact-warm-up"}) is None
    row = _row(account.id, datetime.now(UTC))
    async with db.begin() as conn:
        await conn.execute(_INSERT, row)
    found = await fetch_one(db, _BY_ID, {"id": row["id"]})
    assert found is not None and found.id == row["id"]


async def test_compiled_statements_in_a_transaction_match_per_call_ones(
    db: Database, account: Account
) -> None:
    """What the delivery worker relies on: lists, literals, executemany and row counts."""
    when = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
    rows = [_row(account.id, when) for _ in range(3)]
    async with db.begin() as conn:
        await conn.execute_many(_INSERT, rows)
        ids_ = sorted(str(r["id"]) for r in rows)
        through_driver = await fetch_all(conn, _BY_IDS, {"ids": ids_})
        through_sqlalchemy = (await conn.execute(_BY_IDS.statement, {"ids": ids_})).all()
        changed = (await conn.execute(_RENAME, {"ids": ids_[:2], "b_name": "Grace"})).rowcount
        await conn.execute_many(_RENAME_ONE, [{"b_id": ids_[2], "b_name": "Edsger"}])
    assert [tuple(r) for r in through_driver] == [tuple(r) for r in through_sqlalchemy]
    assert [r.id for r in through_driver] == ids_[:2]  # LIMIT 2 applied
    assert through_driver[0].tags == ["vip", "math"] and through_driver[0].updated_at == when
    assert changed == 2
    async with db.read() as conn:
        names = (
            await conn.execute(
                select(contacts.c.id, contacts.c.first_name).where(contacts.c.id.in_(ids_))
            )
        ).all()
    assert sorted(names) == [(ids_[0], "Grace"), (ids_[1], "Grace"), (ids_[2], "Edsger")]


def _contact_with_event(account_id: str) -> JointRows:
    _contact, rows = contacts_domain.contact_creation(
        account_id, {"first_name": "Ada", "phone_number": "+15551234567", "tags": ["a"]}
    )
    return rows


async def test_a_joint_insert_stores_every_row_as_sqlalchemy_reads_it(
    db: Database, account: Account
) -> None:
    joint = _contact_with_event(account.id)
    contact_row, event_row = joint.rows
    async with db.begin() as conn:
        await conn.insert_joint(joint)
    async with db.read() as conn:
        contact = (
            await conn.execute(select(contacts).where(contacts.c.id == contact_row["id"]))
        ).one()
        event = (await conn.execute(select(events).where(events.c.id == event_row["id"]))).one()
    assert contact._asdict() == contact_row
    assert event._asdict() == event_row
    assert event.data["id"] == contact.id and event.data["tags"] == ["a"]


async def test_a_joint_insert_rolls_back_with_its_transaction(
    db: Database, account: Account
) -> None:
    joint = _contact_with_event(account.id)

    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        async with db.begin() as conn:
            await conn.insert_joint(joint)
            raise Abort
    async with db.read() as conn:
        assert (
            await conn.execute(select(events.c.id).where(events.c.id == joint.rows[1]["id"]))
        ).first() is None
    assert await fetch_one(db, _BY_ID, {"id": joint.rows[0]["id"]}) is None


def test_a_joint_insert_is_one_statement_on_postgresql() -> None:
    """Data-modifying CTEs: one round trip, atomic without BEGIN (see ``Database.commit_rows``)."""
    joint = JointInsert(contacts, events)
    compiled = joint.combined.compiled(POSTGRES_DIALECT)
    assert compiled.sql.startswith("WITH t0 AS \n(INSERT INTO contacts")
    assert "INSERT INTO events" in compiled.sql
    assert len(compiled.names) == len(contacts.columns) + len(events.columns)


async def test_a_transaction_interrupted_inside_leaves_no_transaction_behind(
    pg_server: PostgresServer,
) -> None:
    """A worker cancelled while its transaction is open (BEGIN sent, work done): the
    connection goes back to the pool rolled back, and the next transaction on it commits."""
    url = pg_server.create_database()
    database = Database(make_settings(url, db_pool_size=1))
    await upgrade_to_head(database)
    begun = asyncio.Event()

    async def interrupted() -> None:
        async with database.begin() as conn:
            await conn.execute(_INSERT_ACCOUNT, _account("account-interrupted"))
            begun.set()
            await asyncio.Event().wait()  # the cancellation lands here, inside the transaction

    try:
        task = asyncio.create_task(interrupted())
        await begun.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

        async with database.begin() as conn:
            await conn.execute(_INSERT_ACCOUNT, _account("account-next"))
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        outside = await asyncpg.connect(dsn)
        try:
            committed = await outside.fetch("SELECT id FROM accounts ORDER BY id")
        finally:
            await outside.close()
        assert [row["id"] for row in committed] == ["account-next"]
    finally:
        await database.dispose()


async def test_a_result_reads_like_sqlalchemys(db: Database, account: Account) -> None:
    """The surface callers use: scalar, scalars, mappings, one/first, rowcount, iteration."""
    by_account = select(accounts.c.id, accounts.c.name).where(accounts.c.id == account.id)
    async with db.read() as conn:
        name = (await conn.execute(by_account)).one().name
        result = await conn.execute(by_account)
        assert result.one() == (account.id, name)
        assert (await conn.execute(by_account)).scalar() == account.id
        assert (await conn.execute(by_account)).scalars().all() == [account.id]
        [mapping] = (await conn.execute(by_account)).mappings()
        assert mapping == {"id": account.id, "name": name}
        missing = await conn.execute(select(accounts.c.id).where(accounts.c.id == "none"))
        assert missing.first() is None and missing.scalar_one_or_none() is None
        with pytest.raises(NoResultFound):
            missing.one()
    async with db.begin() as conn:
        renamed = await conn.execute(
            update(accounts).where(accounts.c.id == account.id).values(name="renamed")
        )
        assert renamed.rowcount == 1


async def test_a_constraint_violation_is_one_error_on_both_backends(
    db: Database, account: Account
) -> None:
    with pytest.raises(IntegrityError) as refused:
        async with db.begin() as conn:
            await conn.execute(_INSERT_ACCOUNT, {**_account(account.id)})
    assert isinstance(refused.value.__cause__, (sqlite3.IntegrityError, asyncpg.PostgresError))


async def test_a_statement_built_per_call_matches_its_compiled_once_form(
    db: Database, account: Account
) -> None:
    row = _row(account.id, datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC))
    async with db.begin() as conn:
        await conn.execute(contacts.insert().values(**row))
        inline = (await conn.execute(select(contacts).where(contacts.c.id == row["id"]))).one()
        compiled_once = await fetch_one(conn, _BY_ID, {"id": row["id"]})
    assert inline._mapping == row
    assert compiled_once is not None
    assert (compiled_once.tags, compiled_once.created_at) == (inline.tags, inline.created_at)


def test_rows_are_decoded_column_by_column_as_each_processor_reads_its_value() -> None:
    """``Compiled.rows`` maps each column's processor over that column: every row gets its own
    values decoded, in its own order, and no rows give no rows."""
    compiled = _BY_ID.compiled(SQLITE_DIALECT)
    stored = [
        ("c1", '["a"]', "2026-11-22 15:04:05.123000"),
        ("c2", "[]", "1999-12-31 23:59:59.999999"),
        ("c3", '["b","c"]', "2026-11-22 15:04:05"),
    ]
    rows = compiled.rows(stored, list)
    assert [tuple(row) for row in rows] == [
        ("c1", ["a"], datetime(2026, 11, 22, 15, 4, 5, 123000, tzinfo=UTC)),
        ("c2", [], datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
        ("c3", ["b", "c"], datetime(2026, 11, 22, 15, 4, 5, tzinfo=UTC)),
    ]
    assert rows[2].tags == ["b", "c"] and rows[2]._mapping["id"] == "c3"
    assert compiled.rows([], list) == []
