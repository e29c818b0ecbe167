"""``domain.stream``: the event stream's reads, in commit order, filtered by type, on both
backends (the type filter is one list parameter: ``= ANY`` on PostgreSQL, ``json_each`` on
SQLite)."""

from __future__ import annotations

from hookline.delivery import manager
from hookline.domain import contacts, stream
from hookline.storage.db import Database
from hookline.timeutil import utcnow
from tests.conftest import Account, new_account

ADA = {"first_name": "Ada", "phone_number": "+14155552671"}


async def _numbered(db: Database) -> None:
    """Every committed event numbered, as the worker's dispatcher does."""
    while (await manager.dispatch_events(db, now=utcnow())).events:
        pass


async def _contact_created_updated_deleted(db: Database, account: Account) -> None:
    async with db.begin() as conn:
        contact = await contacts.create_contact(conn, account.id, ADA)
        await contacts.update_contact(conn, account.id, contact["id"], {"notes": "n"})
        await contacts.delete_contact(conn, account.id, contact["id"])


async def test_the_stream_reads_an_accounts_events_in_order_and_by_type(
    db: Database, account: Account, other_account: Account
) -> None:
    await _contact_created_updated_deleted(db, account)
    await _contact_created_updated_deleted(db, other_account)
    await _numbered(db)
    async with db.read() as conn:
        everything = await stream.events_after(conn, account.id, 0, None)
        assert [e.type for e in everything] == [
            "contact.created",
            "contact.updated",
            "contact.deleted",
        ]
        seqs = [e.stream_seq for e in everything]
        assert seqs == sorted(seqs) and len(set(seqs)) == 3
        wanted = ("contact.deleted", "contact.created")
        chosen = await stream.events_after(conn, account.id, 0, wanted)
        assert [e.type for e in chosen] == ["contact.created", "contact.deleted"]
        later = await stream.events_after(conn, account.id, seqs[0], ["contact.created"])
        assert later == []
        assert await stream.latest_seq(conn, account.id) == seqs[-1]
        assert await stream.latest_seq(conn) >= seqs[-1]
        assert await stream.position_of(conn, account.id, everything[1].id) == seqs[1]
        assert await stream.position_of(conn, other_account.id, everything[1].id) is None


async def test_an_account_without_events_starts_at_zero(db: Database) -> None:
    quiet = await new_account(db, "quiet")
    async with db.read() as conn:
        assert await stream.latest_seq(conn, quiet.id) == 0
        assert await stream.events_after(conn, quiet.id, 0, ["contact.created"]) == []
