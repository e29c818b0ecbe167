"""The transaction does the bookkeeping: a commit that recorded an event (or made a delivery
due) wakes the delivery workers once, after the COMMIT; nothing else does."""

from __future__ import annotations

import asyncio

import pytest

from hookline.domain import contacts as contacts_domain
from hookline.storage.db import Database
from hookline.storage.outbox import record_event
from tests.conftest import Account
from tests.storage.test_hold import committed, insert_account, new_ids, nothing_first
from tests.support.wakeups import wake_ups


class Abort(Exception):
    pass


async def test_a_commit_that_recorded_an_event_wakes_once_after_it(
    db: Database, account: Account
) -> None:
    with wake_ups(db) as woken:
        async with db.begin() as conn:
            await record_event(conn, account.id, "contact.created", {"id": "c"})
            await record_event(conn, account.id, "contact.updated", {"id": "c"})
            assert woken == []  # not before the COMMIT
        assert len(woken) == 1


async def test_a_commit_without_events_or_a_rollback_wakes_nobody(
    db: Database, account: Account
) -> None:
    [plain] = new_ids(1)
    with wake_ups(db) as woken:
        async with db.begin() as conn:
            await insert_account(conn, plain)
        with pytest.raises(Abort):
            async with db.begin() as conn:
                await record_event(conn, account.id, "contact.created", {"id": "c"})
                raise Abort
    assert woken == []


async def test_units_sharing_a_batch_wake_only_for_their_own_events(
    db: Database, account: Account
) -> None:
    """On SQLite concurrent units share one connection and one COMMIT: a unit's mark must not
    leak into the next unit's, nor be cleared by it."""

    async def unit(with_event: bool) -> None:
        async with db.begin() as conn:
            await insert_account(conn, new_ids(1)[0])
            if with_event:
                await record_event(conn, account.id, "contact.created", {"id": "c"})

    with wake_ups(db) as woken:
        await asyncio.gather(*(unit(n % 3 == 0) for n in range(12)))
    assert len(woken) == 4


async def test_inside_hold_the_wake_up_waits_for_the_holders_commit(
    db: Database, account: Account
) -> None:
    with wake_ups(db) as woken:
        async with db.hold(nothing_first):
            async with db.begin() as conn:
                await record_event(conn, account.id, "contact.created", {"id": "c"})
            async with db.begin() as conn:  # a later block without events keeps the mark
                await insert_account(conn, new_ids(1)[0])
            assert woken == []
        assert len(woken) == 1

        ids = new_ids(1)
        with pytest.raises(Abort):
            async with db.hold(nothing_first):
                async with db.begin() as conn:
                    await insert_account(conn, ids[0])
                    await record_event(conn, account.id, "contact.created", {"id": "c"})
                raise Abort
        assert len(woken) == 1 and await committed(db, ids) == set()


async def test_committed_rows_with_their_event_wake_once(db: Database, account: Account) -> None:
    _contact, joint = contacts_domain.contact_creation(
        account.id, {"first_name": "Ada", "phone_number": "+15551234567"}
    )
    with wake_ups(db) as woken:
        await db.commit_rows(joint)  # one statement in autocommit on PostgreSQL
    assert len(woken) == 1
