"""The erasure job (delivery.erasure) on both databases: batch by batch, each batch committed
with its progress; a batch that fails leaves nothing half done; a worker that dies mid-way is
taken over once its lease has passed, and the counts come out exact."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from hookline import ids
from hookline.delivery import erasure
from hookline.delivery.erasure import ErasureJob
from hookline.domain.contacts import create_contact
from hookline.domain.erasures import get_erasure, request_erasure
from hookline.storage.models import deliveries, erasures, events
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env

EVENTS = 9  # the contact.created of create_contact and these


async def _history(env: Env) -> tuple[str, str, str]:
    """An account with a contact, its events (each delivered to a webhook), and an erasure."""
    account_id = await env.account()
    webhook_id, _ = await env.webhook(account_id, "http://127.0.0.1:9/hook")
    async with env.db.begin() as conn:
        contact = await create_contact(
            conn, account_id, {"first_name": "Erasmus", "phone_number": "+14155550100"}
        )
    bystander = await env.event(account_id, data={"id": ids.contact_id(), "first_name": "B"})
    for n in range(EVENTS - 1):
        await env.event(
            account_id, "contact.updated", {**contact, "notes": str(n)}, dispatched=True
        )
    async with env.db.begin() as conn:
        for event_id in await conn.scalars(
            select(events.c.id).where(events.c.account_id == account_id)
        ):
            now = utcnow()
            await conn.execute(
                deliveries.insert().values(
                    id=ids.delivery_id(),
                    account_id=account_id,
                    webhook_id=webhook_id,
                    event_id=event_id,
                    event_type="contact.updated",
                    status="succeeded",
                    attempts=1,
                    created_at=now,
                    updated_at=now,
                )
            )
    async with env.db.begin() as conn:
        erasure_id = await request_erasure(conn, account_id, contact["id"])
    assert erasure_id is not None
    return account_id, erasure_id, bystander


async def _state(env: Env, account_id: str, erasure_id: str) -> dict[str, Any]:
    async with env.db.read() as conn:
        found = await get_erasure(conn, account_id, erasure_id)
    assert found is not None
    return found


async def _events_left(env: Env, account_id: str) -> set[str]:
    async with env.db.read() as conn:
        query = select(events.c.id).where(events.c.account_id == account_id)
        return set(await conn.scalars(query))


async def test_a_dead_workers_erasure_is_resumed_and_counted_once(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "BATCH", 2)
    account_id, erasure_id, bystander = await _history(env)
    dying = ErasureJob(env.db, env.box, "wrk_dying", lease_seconds=3600)
    assert await dying.step(erasure_id)  # calls (none)
    assert await dying.step(erasure_id)  # the first two events
    halfway = await _state(env, account_id, erasure_id)
    assert halfway["status"] == "running" and halfway["step"] == "events"
    assert 0 < halfway["counts"]["events"] < EVENTS

    # Held by a live lease: another worker leaves it alone.
    other = ErasureJob(env.db, env.box, "wrk_other")
    assert not await other.step(erasure_id)
    assert await other.run_next() is False
    assert (await _state(env, account_id, erasure_id))["counts"] == halfway["counts"]

    # The dying worker's lease runs out: the other takes over and finishes, counting each once.
    await _expire_lease(env, erasure_id)
    assert await other.run_next() is True
    done = await _state(env, account_id, erasure_id)
    assert done["status"] == "done" and done["finished_at"] is not None
    assert done["counts"]["events"] == EVENTS
    assert done["counts"]["deliveries"] == EVENTS
    assert await _events_left(env, account_id) == {bystander, *_notices(done)}
    assert await other.run_next() is False  # nothing left to do


async def test_a_failing_batch_leaves_nothing_half_done(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    account_id, erasure_id, _ = await _history(env)
    job = ErasureJob(env.db, env.box, "wrk_one", lease_seconds=0)
    before = await _events_left(env, account_id)
    purge = ErasureJob._purge_events

    async def crash_after_deleting(self: ErasureJob, conn: Any, found: Any, doomed: Any) -> None:
        await purge(self, conn, found, doomed)
        raise RuntimeError("crash mid-batch")

    monkeypatch.setattr(ErasureJob, "_purge_events", crash_after_deleting)
    assert await job.step(erasure_id)  # calls
    with pytest.raises(RuntimeError):
        await job.step(erasure_id)
    assert await _events_left(env, account_id) == before
    state = await _state(env, account_id, erasure_id)
    assert state["step"] == "events" and state["counts"]["events"] == 0

    monkeypatch.setattr(ErasureJob, "_purge_events", purge)
    assert await job.run_next() is True
    assert (await _state(env, account_id, erasure_id))["counts"]["events"] == EVENTS


def _notices(erasure_out: dict[str, Any]) -> set[str]:
    return {w["event_id"] for w in erasure_out["webhooks"] if w["event_id"] is not None}


async def _expire_lease(env: Env, erasure_id: str) -> None:
    async with env.db.begin() as conn:
        passed = utcnow() - timedelta(seconds=1)
        await conn.execute(
            erasures.update().where(erasures.c.id == erasure_id).values(leased_until=passed)
        )
