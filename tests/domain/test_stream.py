"""``domain.stream``: the event stream's reads, in commit order, filtered by type, on both
backends (the type filter is one list parameter: ``= ANY`` on PostgreSQL, ``json_each`` on
SQLite)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from hookline.delivery import manager
from hookline.domain import contacts, keys, stream
from hookline.domain.events import readable_types, record_event
from hookline.errors import RateLimited, Unauthenticated
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


async def _key(db: Database, account: Account) -> str:
    async with db.begin() as conn:
        _, record = await keys.create_key(conn, account.id, "streams", ["contacts:read"])
    key_id: str = record["id"]
    return key_id


async def _open(db: Database, account: Account, key_id: str, now: datetime) -> str:
    async with db.begin() as conn:
        return await stream.open_stream(conn, account.id, key_id, CAP, now)


CAP = 3


async def test_a_key_holds_at_most_its_cap_of_streams_even_opened_at_once(
    db: Database, account: Account
) -> None:
    key_id = await _key(db, account)
    now = utcnow()
    outcomes = await asyncio.gather(
        *(_open(db, account, key_id, now) for _ in range(CAP * 3)), return_exceptions=True
    )
    opened = [o for o in outcomes if isinstance(o, str)]
    refused = [o for o in outcomes if isinstance(o, RateLimited)]
    assert len(opened) == CAP and len(refused) == CAP * 2, outcomes
    assert refused[0].headers["Retry-After"] == str(stream.RETRY_AFTER_SECONDS)
    async with db.begin() as conn:
        await stream.close_stream(conn, opened[0])
    assert isinstance(await _open(db, account, key_id, now), str)
    other = await _key(db, account)  # another key of the account counts its own
    assert isinstance(await _open(db, account, other, now), str)


async def test_a_stream_whose_process_stopped_renewing_it_expires(
    db: Database, account: Account
) -> None:
    key_id = await _key(db, account)
    start = utcnow()
    opened = [await _open(db, account, key_id, start) for _ in range(CAP)]
    later = start + stream.LEASE / 2
    async with db.begin() as conn:
        assert await stream.renew_streams(conn, opened[:1], later) == {opened[0]}
    # Past the others' lease: they are dropped, the renewed one still counts.
    after = start + stream.LEASE + timedelta(seconds=1)
    assert isinstance(await _open(db, account, key_id, after), str)
    assert isinstance(await _open(db, account, key_id, after), str)
    with pytest.raises(RateLimited):
        await _open(db, account, key_id, after)
    async with db.begin() as conn:
        assert await stream.renew_streams(conn, opened, after) == {opened[0]}


async def test_a_revoked_keys_streams_are_told_and_it_opens_none(
    db: Database, account: Account, other_account: Account
) -> None:
    key_id, kept = await _key(db, account), await _key(db, account)
    await _open(db, account, key_id, utcnow())
    async with db.begin() as conn:
        assert await keys.revoke_key(conn, account.id, key_id)
    async with db.read() as conn:
        assert await stream.live_keys(conn, {key_id, kept, "key_unknown"}) == {kept}
    with pytest.raises(Unauthenticated):
        await _open(db, account, key_id, utcnow())
    with pytest.raises(Unauthenticated):  # another account's key is none of this one's
        await _open(db, other_account, kept, utcnow())


async def test_the_stream_reads_only_the_types_it_is_given(db: Database, account: Account) -> None:
    await _contact_created_updated_deleted(db, account)
    async with db.begin() as conn:
        await record_event(conn, account.id, "webhook.disabled", {"id": "wh-x"})
    await _numbered(db)
    contacts_only = readable_types({"contacts:read"})
    webhooks_only = readable_types({"webhooks:read"})
    assert contacts_only is not None and webhooks_only is not None
    async with db.read() as conn:
        everything = await stream.events_after(conn, account.id, 0, None)
        shown = await stream.events_after(conn, account.id, 0, webhooks_only)
        assert [e.type for e in shown] == ["webhook.disabled"]
        hidden, visible = everything[0], everything[-1]
        assert await stream.position_of(conn, account.id, hidden.id, webhooks_only) is None
        position = await stream.position_of(conn, account.id, visible.id, webhooks_only)
        assert position == visible.stream_seq
        assert await stream.position_of(conn, account.id, hidden.id, contacts_only) is not None
