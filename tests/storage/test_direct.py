"""``storage.direct``: driver-level statements read and write exactly what SQLAlchemy does."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import asyncpg
import pytest
from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import make_url

from hookline import ids
from hookline.domain import contacts as contacts_domain
from hookline.storage import direct
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts, contacts, events
from tests.conftest import Account, make_settings
from tests.support.postgres import PostgresServer

_BY_ID = direct.DirectStatement(
    select(contacts.c.id, contacts.c.tags, contacts.c.created_at).where(
        contacts.c.id == bindparam("id")
    )
)
_INSERT = direct.DirectStatement(contacts.insert())
# A list parameter (IN), a literal inside the statement (LIMIT 2) and a JSON column.
_BY_IDS = direct.DirectStatement(
    select(contacts.c.id, contacts.c.tags, contacts.c.updated_at)
    .where(contacts.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(contacts.c.id)
    .limit(2)
)
_RENAME = direct.DirectStatement(
    update(contacts)
    .where(contacts.c.id.in_(bindparam("ids", expanding=True)))
    .values(first_name=bindparam("b_name"), last_name=None)
)
_RENAME_ONE = direct.DirectStatement(
    update(contacts)
    .where(contacts.c.id == bindparam("b_id"))
    .values(first_name=bindparam("b_name"))
)


_INSERT_ACCOUNT = direct.DirectStatement(accounts.insert())


def _account(account_id: str) -> dict[str, object]:
    return {"id": account_id, "name": "unit", "created_at": datetime.now(UTC)}


def _row(account_id: str, when: datetime) -> dict[str, object]:
    return {
        "id": ids.contact_id(),
        "account_id": account_id,
        "first_name": "Ada",
        "last_name": None,
        "phone_number": "+15551234567",
        "email": None,
        "company": None,
        "tags": ["vip", "math"],
        "notes": None,
        "created_at": when,
        "updated_at": when,
    }


async def test_a_direct_read_decodes_like_sqlalchemy(db: Database, account: Account) -> None:
    async with db.begin() as conn:
        contact = await contacts_domain.create_contact(
            conn, account.id, {"first_name": "Ada", "phone_number": "+15551234567", "tags": ["a"]}
        )
    through_driver = await direct.fetch_one(db, _BY_ID, {"id": contact["id"]})
    async with db.read() as conn:
        through_sqlalchemy = await direct.fetch_one(conn, _BY_ID, {"id": contact["id"]})
    assert through_driver is not None and through_sqlalchemy is not None
    assert tuple(through_driver) == tuple(through_sqlalchemy)
    assert through_driver.tags == ["a"]
    assert through_driver.created_at.tzinfo is not None  # aware, in UTC
    assert await direct.fetch_one(db, _BY_ID, {"id": "contact-missing"}) is None


async def test_a_direct_write_stores_what_sqlalchemy_reads_back(
    db: Database, account: Account
) -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
    row = _row(account.id, when)
    async with db.begin() as conn:
        await direct.execute(conn, _INSERT, row)
    async with db.read() as conn:
        stored = (await conn.execute(select(contacts).where(contacts.c.id == row["id"]))).one()
    assert stored.created_at == when
    assert stored.tags == ["vip", "math"]
    assert stored.last_name is None


async def test_a_direct_write_rolls_back_with_its_transaction(
    db: Database, account: Account
) -> None:
    """The outbox depends on it: the contact and its event commit together or not at all."""
    row = _row(account.id, datetime.now(UTC))

    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        async with db.begin() as conn:
            await direct.execute(conn, _INSERT, row)
            raise Abort
    assert await direct.fetch_one(db, _BY_ID, {"id": row["id"]}) is None


async def test_a_direct_read_sees_a_commit_at_once(db: Database, account: Account) -> None:
    """SQLite's point reader runs in autocommit mode: no stale snapshot between requests."""
    assert await direct.fetch_one(db, _BY_ID, {"id": "contact-warm-up"}) is None
    row = _row(account.id, datetime.now(UTC))
    async with db.begin() as conn:
        await direct.execute(conn, _INSERT, row)
    found = await direct.fetch_one(db, _BY_ID, {"id": row["id"]})
    assert found is not None and found.id == row["id"]


async def test_direct_statements_in_a_transaction_match_sqlalchemy(
    db: Database, account: Account
) -> None:
    """What the delivery worker relies on: lists, literals, executemany and row counts."""
    when = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
    rows = [_row(account.id, when) for _ in range(3)]
    async with db.begin() as conn:
        await direct.execute_many(conn, _INSERT, rows)
        ids_ = sorted(str(r["id"]) for r in rows)
        through_driver = await direct.fetch_all(conn, _BY_IDS, {"ids": ids_})
        through_sqlalchemy = (await conn.execute(_BY_IDS.statement, {"ids": ids_})).all()
        changed = await direct.execute(conn, _RENAME, {"ids": ids_[:2], "b_name": "Grace"})
        await direct.execute_many(conn, _RENAME_ONE, [{"b_id": ids_[2], "b_name": "Edsger"}])
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


def _contact_with_event(account_id: str) -> direct.JointRows:
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
        await direct.insert_joint(conn, joint)
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
            await direct.insert_joint(conn, joint)
            raise Abort
    async with db.read() as conn:
        assert (
            await conn.execute(select(events.c.id).where(events.c.id == joint.rows[1]["id"]))
        ).first() is None
    assert await direct.fetch_one(db, _BY_ID, {"id": joint.rows[0]["id"]}) is None


def test_a_joint_insert_is_one_statement_on_postgresql() -> None:
    """Data-modifying CTEs: one round trip, atomic without BEGIN (see ``Database.commit_rows``)."""
    joint = direct.JointInsert(contacts, events)
    compiled = joint.combined.compiled(make_url("postgresql+asyncpg://").get_dialect()())
    assert compiled.sql.startswith("WITH t0 AS \n(INSERT INTO contacts")
    assert "INSERT INTO events" in compiled.sql
    assert len(compiled.names) == len(contacts.columns) + len(events.columns)


async def test_a_statement_interrupted_after_its_begin_leaves_no_transaction_behind(
    pg_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker cancelled in the window where PostgreSQL has run BEGIN but SQLAlchemy's adapter
    has not yet recorded it: the next transaction on the pool must still really commit."""
    url = pg_server.create_database()
    database = Database(make_settings(url, db_pool_size=1))  # one pooled connection: reused
    await upgrade_to_head(database)
    begun = asyncio.Event()
    start = asyncpg.transaction.Transaction.start

    async def start_then_wait(transaction: asyncpg.transaction.Transaction) -> None:
        await start(transaction)
        begun.set()
        await asyncio.Event().wait()  # the cancellation lands here, BEGIN already run

    monkeypatch.setattr(asyncpg.transaction.Transaction, "start", start_then_wait)

    async def interrupted() -> None:
        async with database.begin() as conn:
            await direct.execute(conn, _INSERT_ACCOUNT, _account("account-interrupted"))

    try:
        task = asyncio.create_task(interrupted())
        await begun.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        monkeypatch.undo()

        async with database.begin() as conn:
            await direct.execute(conn, _INSERT_ACCOUNT, _account("account-next"))
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        outside = await asyncpg.connect(dsn)
        try:
            committed = await outside.fetch("SELECT id FROM accounts ORDER BY id")
        finally:
            await outside.close()
        assert [row["id"] for row in committed] == ["account-next"]
    finally:
        await database.dispose()
