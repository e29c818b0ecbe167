"""Contacts: every change writes its event in the same transaction (see ``events.record_event``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import orjson

from hookline import ids
from hookline.domain.events import event_row, record_event
from hookline.errors import DoNotCall, ValidationFailed
from hookline.storage.db import Connection, Database, fetch_one
from hookline.storage.queries import contacts as queries
from hookline.storage.statements import JointRows, QueryShapes
from hookline.timeutil import iso, utcnow

REQUIRED_FIELDS = ("first_name", "phone_number")
OPTIONAL_FIELDS = ("last_name", "email", "company", "tags", "notes", "do_not_call_reason")
# Fields whose blank text is stored as null.
_BLANK_IS_NULL = ("last_name", "company", "notes", "do_not_call_reason")


def contact_out(row: Any) -> dict[str, Any]:
    """The contact object exactly as the API returns it and events carry it, from a row of
    ``queries.OUT`` (its timestamps already spelled)."""
    return {
        "id": row.id,
        "first_name": row.first_name,
        "last_name": row.last_name,
        "phone_number": row.phone_number,
        "email": row.email,
        "company": row.company,
        "tags": list(row.tags or []),
        "notes": row.notes,
        "do_not_call": bool(row.do_not_call),
        "do_not_call_reason": row.do_not_call_reason,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


CONTACT_FIELDS = (*queries.FIELDS, "created_at", "updated_at")
"""The contact object's fields, in ``contact_out``'s order."""


def _empty_as_none(value: str | None) -> str | None:
    return value if value else None


def _refuse_lone_reason(do_not_call: bool, reason: str | None) -> None:
    """A reason describes the flag: a contact that may be called carries none."""
    if reason is not None and not do_not_call:
        raise ValidationFailed.for_field(
            "do_not_call_reason", "do_not_call_reason needs do_not_call set to true"
        )


def contact_creation(account_id: str, fields: dict[str, Any]) -> tuple[dict[str, Any], JointRows]:
    """A new contact as the API returns it, and the rows that create it with its
    ``contact.created`` event: for the caller to run in its transaction or to commit."""
    do_not_call = bool(fields.get("do_not_call"))
    reason = _empty_as_none(fields.get("do_not_call_reason"))
    _refuse_lone_reason(do_not_call, reason)
    now = utcnow()
    row = {
        "id": ids.contact_id(),
        "account_id": account_id,
        "first_name": fields["first_name"],
        "last_name": _empty_as_none(fields.get("last_name")),
        "phone_number": fields["phone_number"],
        "email": fields.get("email"),
        "company": _empty_as_none(fields.get("company")),
        "tags": fields.get("tags") or [],
        "notes": _empty_as_none(fields.get("notes")),
        "do_not_call": do_not_call,
        "do_not_call_reason": reason,
        "created_at": now,
        "updated_at": now,
    }
    spelled = iso(now)
    # A namespace's attributes are read in C, where ``_Row``'s ``__getattr__`` runs Python.
    contact = contact_out(SimpleNamespace(**{**row, "created_at": spelled, "updated_at": spelled}))
    event = event_row(account_id, "contact.created", contact)
    return contact, queries.INSERT_WITH_EVENT.rows(row, event)


async def create_contact(
    conn: Connection, account_id: str, fields: dict[str, Any]
) -> dict[str, Any]:
    contact, rows = contact_creation(account_id, fields)
    await conn.insert_joint(rows)
    return contact


async def get_contact(
    source: Database | Connection, account_id: str, contact_id: str
) -> dict[str, Any] | None:
    row = await fetch_one(source, queries.BY_ID, {"id": contact_id, "account_id": account_id})
    return contact_out(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class ContactFilters:
    search: str | None = None
    tags: tuple[str, ...] = ()
    phone_number: str | None = None
    email: str | None = None
    do_not_call: bool | None = None


# Tag filtering reads the SQL-filtered rows in chunks of this many (keyset, newest first).
_TAG_SCAN_CHUNK = 500


async def _list_page(
    conn: Connection,
    account_id: str,
    filters: ContactFilters,
    *,
    limit: int,
    before_id: str | None,
    offset: int | None,
    shapes: QueryShapes = queries.LIST,
) -> list[Any]:
    shape = queries.ListShape(
        phone_number=filters.phone_number is not None,
        email=filters.email is not None,
        search=bool(filters.search),
        before_id=before_id is not None,
        offset=bool(offset),
        do_not_call=filters.do_not_call is not None,
    )
    params = {
        "account_id": account_id,
        "phone_number": filters.phone_number,
        "email": filters.email,
        "do_not_call": filters.do_not_call,
        "pattern": queries.search_pattern(filters.search) if filters.search else None,
        "before_id": before_id,
        "limit": limit,
        "offset": offset,
    }
    return (await conn.execute(shapes.get(shape), params)).all()


async def list_contacts(
    conn: Connection,
    account_id: str,
    filters: ContactFilters,
    *,
    limit: int,
    before_id: str | None = None,
    offset: int | None = None,
) -> list[dict[str, Any]]:
    """Newest first. Tag filtering happens in Python after the SQL filters so that it means the
    same thing on SQLite and PostgreSQL (JSON containment differs); the SQL-filtered rows are
    read in chunks until the page is full."""
    if not filters.tags:
        rows = await _list_page(
            conn, account_id, filters, limit=limit, before_id=before_id, offset=offset
        )
        return [contact_out(r) for r in rows]
    wanted = set(filters.tags)
    matched: list[dict[str, Any]] = []
    skipped = 0
    while True:
        chunk = await _list_page(
            conn, account_id, filters, limit=_TAG_SCAN_CHUNK, before_id=before_id, offset=None
        )
        for row in chunk:
            if not wanted.issubset(row.tags or []):
                continue
            if offset and skipped < offset:
                skipped += 1
                continue
            matched.append(contact_out(row))
            if len(matched) >= limit:
                return matched
        if len(chunk) < _TAG_SCAN_CHUNK:
            return matched
        before_id = chunk[-1].id


EXPORT_PAGE = 500
"""Contacts read per transaction by an export."""


async def every_contact(db: Database, account_id: str) -> AsyncIterator[list[dict[str, Any]]]:
    """The account's contacts, newest first, a page at a time: each page a read of its own
    (keyset on the id), so a long export holds no transaction open while it is sent."""
    before_id: str | None = None
    while True:
        async with db.read() as conn:
            rows = await _list_page(
                conn,
                account_id,
                ContactFilters(),
                limit=EXPORT_PAGE,
                before_id=before_id,
                offset=None,
            )
        if rows:
            yield [contact_out(row) for row in rows]
        if len(rows) < EXPORT_PAGE:
            return
        before_id = rows[-1].id


@dataclass(frozen=True, slots=True)
class ContactPage:
    """A page of ``GET /v1/contacts`` as the API answers it."""

    items: list[dict[str, Any]] | list[orjson.Fragment]
    """The contacts, each as ``contact_out`` has it: its dict, or the same object's JSON text as
    SQLite wrote it (an ``orjson.Fragment``, which orjson writes as it is)."""
    last_id: str | None
    """The last item's id when more contacts follow (the next page's cursor), else None."""


async def contacts_page(
    conn: Connection,
    account_id: str,
    filters: ContactFilters,
    *,
    limit: int,
    before_id: str | None = None,
    offset: int | None = None,
) -> ContactPage:
    """``list_contacts``' first ``limit`` contacts for a response. Without a tag filter, where
    the database writes each contact's JSON (``queries.list_json``), each is read as that text:
    no row decoded, no dict built, nothing for orjson to encode; if it could not write every row
    so, the page is read again the long way."""
    as_json = None if filters.tags else queries.list_json(conn)
    if as_json is not None:
        rows = await _list_page(
            conn,
            account_id,
            filters,
            limit=limit + 1,
            before_id=before_id,
            offset=offset,
            shapes=as_json,
        )
        texts = [row.json for row in rows[:limit]]
        if None not in texts:
            last_id = rows[limit - 1].id if len(rows) > limit else None
            return ContactPage(list(map(orjson.Fragment, texts)), last_id)
    found = await list_contacts(
        conn, account_id, filters, limit=limit + 1, before_id=before_id, offset=offset
    )
    return ContactPage(found[:limit], found[limit - 1]["id"] if len(found) > limit else None)


async def update_contact(
    conn: Connection, account_id: str, contact_id: str, changes: dict[str, Any]
) -> dict[str, Any] | None:
    """Merge-patch ``changes`` (already validated); None when the contact doesn't exist.

    Bumps ``updated_at`` and fires ``contact.updated`` only when a value actually changed.
    """
    row = await fetch_one(
        conn, queries.BY_ID_FOR_UPDATE, {"id": contact_id, "account_id": account_id}
    )
    if row is None:
        return None
    return await apply_changes(conn, account_id, contact_out(row), changes)


def changed_fields(before: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``changes`` (a merge-patch, already validated) whose values differ from
    ``before``, normalised as stored; ``ValidationFailed`` for a change the rules refuse."""
    for field in (*REQUIRED_FIELDS, "do_not_call"):
        if field in changes and changes[field] is None:
            raise ValidationFailed.for_field(field, f"{field} cannot be null (it is required)")
    normalized = {
        field: ([] if field == "tags" and value is None else value)
        for field, value in changes.items()
    }
    for field in _BLANK_IS_NULL:
        if field in normalized:
            normalized[field] = _empty_as_none(normalized[field])
    if normalized.get("do_not_call") is False and "do_not_call_reason" not in normalized:
        normalized["do_not_call_reason"] = None  # lifting the flag drops its reason
    merged = {**before, **normalized}
    _refuse_lone_reason(merged["do_not_call"], merged["do_not_call_reason"])
    return {f: v for f, v in normalized.items() if before[f] != v}


async def apply_changes(
    conn: Connection, account_id: str, before: dict[str, Any], changes: dict[str, Any]
) -> dict[str, Any]:
    """``before`` (a contact read for update in ``conn``'s transaction) merge-patched with
    ``changes``; writes it and its ``contact.updated`` event only when a value changed."""
    changed = changed_fields(before, changes)
    if not changed:
        return before
    now = utcnow()
    await conn.execute(
        queries.UPDATE.get(frozenset(changed)),
        {**changed, "updated_at": now, "b_id": before["id"]},
    )
    after = {**before, **changed, "updated_at": iso(now)}
    previous = {field: before[field] for field in changed}
    await record_event(conn, account_id, "contact.updated", after, previous)
    return after


async def delete_contact(
    conn: Connection, account_id: str, contact_id: str
) -> dict[str, Any] | None:
    row = await fetch_one(conn, queries.DELETE, {"id": contact_id, "account_id": account_id})
    if row is None:
        return None
    contact = contact_out(row)
    await record_event(conn, account_id, "contact.deleted", contact)
    return contact


async def contact_to_call(
    conn: Connection, account_id: str, contact_id: str | None, phone_number: str
) -> str | None:
    """The contact a new call is for: ``contact_id`` (422 on it when it is none of the
    account's), else the account's most recent contact with ``phone_number``, else None;
    ``DoNotCall`` when that contact is marked do-not-call."""
    if contact_id is None:
        params = {"account_id": account_id, "phone_number": phone_number}
        row = await fetch_one(conn, queries.LATEST_WITH_PHONE, params)
    else:
        row = await fetch_one(
            conn, queries.CALL_TARGET, {"id": contact_id, "account_id": account_id}
        )
        if row is None:
            # The same answer whether the id is unknown or another account's: nothing leaks.
            raise ValidationFailed.for_field("contact_id", "contact_id does not match a contact")
    if row is None:
        return None
    if row.do_not_call:
        raise DoNotCall(f"Contact {row.id} is marked do-not-call; no call is created for it.")
    found: str = row.id
    return found
