"""``storage.direct``: driver-level statements read and write exactly what SQLAlchemy does."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, select

from hookline import ids
from hookline.domain import contacts as contacts_domain
from hookline.storage import direct
from hookline.storage.db import Database
from hookline.storage.models import contacts
from tests.conftest import Account

_BY_ID = direct.DirectStatement(
    select(contacts.c.id, contacts.c.tags, contacts.c.created_at).where(
        contacts.c.id == bindparam("id")
    )
)
_INSERT = direct.DirectStatement(contacts.insert())


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
