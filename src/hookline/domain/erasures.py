"""Erasing a contact: the request's part. The contact row goes in the request's transaction,
with the ``erasures`` row that the delivery workers' job (``delivery.erasure``) carries out:
the contact's data in its calls, events, delivery attempts and stored responses, and a
``contact.erased`` event to each webhook that received any of it."""

from __future__ import annotations

from typing import Any

from hookline import ids
from hookline.storage.db import Connection, fetch_all, fetch_one
from hookline.storage.queries import erasures as queries
from hookline.timeutil import iso, utcnow

COUNT_NAMES = ("calls", "events", "deliveries", "attempts", "idempotent_responses")


async def request_erasure(
    conn: Connection, account_id: str, contact_id: str, *, deleted_before: bool = False
) -> str | None:
    """The id of the contact's erasure: an earlier one if it was erased already, else a new
    one (the contact deleted now). None when the account has no such contact, unless
    ``deleted_before`` (``had_contact`` found its events: it was deleted earlier)."""
    scope = {"account_id": account_id, "contact_id": contact_id}
    earlier = await fetch_one(conn, queries.OF_CONTACT, scope)
    if earlier is not None:
        return str(earlier.id)
    call_ids = list(await conn.scalars(queries.CALLS_OF_CONTACT, scope))
    deleted = await conn.execute(queries.DELETE_CONTACT, {"id": contact_id, **scope})
    if not deleted.rowcount and not deleted_before:
        return None
    erasure_id = ids.erasure_id()
    await conn.execute(
        queries.INSERT,
        {
            "id": erasure_id,
            **scope,
            "status": "pending",
            "phase": "calls",
            "position": None,
            "call_ids": call_ids,
            "counts": dict.fromkeys(COUNT_NAMES, 0),
            "received": {},
            "notices": [],
            "leased_by": None,
            "leased_until": None,
            "created_at": utcnow(),
            "finished_at": None,
        },
    )
    return erasure_id


async def had_contact(conn: Connection, account_id: str, contact_id: str) -> bool:
    """Whether the account's events tell of that contact (one deleted earlier). A scan of the
    account's events: run it in a read, never inside a write transaction."""
    scope = {"account_id": account_id, "contact_id": contact_id}
    return await conn.scalar(queries.EVENT_ABOUT_CONTACT, scope) is not None


async def get_erasure(conn: Connection, account_id: str, erasure_id: str) -> dict[str, Any] | None:
    """The account's erasure as the API shows it, with what each webhook acknowledged."""
    row = await fetch_one(conn, queries.BY_ID, {"id": erasure_id, "account_id": account_id})
    if row is None:
        return None
    sent = [n["event_id"] for n in row.notices if n["event_id"] is not None]
    states = {
        state.event_id: state.status
        for state in await fetch_all(
            conn, queries.NOTICE_STATES, {"account_id": account_id, "ids": sent}
        )
    }
    return erasure_out(row, states)


def erasure_out(row: Any, states: dict[str, str]) -> dict[str, Any]:
    return {
        "id": row.id,
        "contact_id": row.contact_id,
        "status": row.status,
        "step": row.phase,
        "counts": {name: int(row.counts.get(name, 0)) for name in COUNT_NAMES},
        "webhooks": [
            {
                "webhook_id": notice["webhook_id"],
                "event_id": notice["event_id"],
                "status": (
                    states.get(notice["event_id"], "pending")
                    if notice["event_id"] is not None
                    else "not_sent"
                ),
            }
            for notice in row.notices
        ],
        "created_at": iso(row.created_at),
        "finished_at": iso(row.finished_at) if row.finished_at is not None else None,
    }
