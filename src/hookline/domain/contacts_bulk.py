"""Bulk upsert of contacts (``POST /v1/contacts/bulk`` and the dashboard's CSV import).

Rows are matched on their normalised phone number or email and written in transactions of at
most ``BATCH_ROWS`` rows. The work is paced (``domain.pacing.Pace``): a step of it (validating
rows, or one batch's statements, which hold the writer) ends once it has had its time, and the
upsert then rests a few times as long as that step took, so a request of 1,000 rows takes at
most about a quarter of the event loop and of the writer (SQLite) from the other requests.
Each batch is atomic, the request as a whole is not: a failure or crash mid-way keeps the
batches already committed. Each created or changed row records its event in its batch's
transaction; an unchanged row records none, so sending the same rows again reports them
``unchanged`` and fires nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hookline.domain.contacts import REQUIRED_FIELDS, apply_changes, contact_creation, contact_out
from hookline.domain.pacing import Pace
from hookline.errors import ApiError, ValidationFailed
from hookline.storage.db import Connection, Database
from hookline.storage.queries import contacts as queries

BATCH_ROWS = 25
"""The most rows one transaction writes."""

MatchKey = Literal["phone_number", "email"]
_MATCHES = {
    "phone_number": queries.BY_PHONE_NUMBERS_FOR_UPDATE,
    "email": queries.BY_EMAILS_FOR_UPDATE,
}


@dataclass(frozen=True, slots=True)
class BulkRow:
    """A row as validated by its schema: its fields (as a merge-patch) or why it was refused."""

    index: int
    fields: dict[str, Any] | None
    error: dict[str, Any] | None


def refusal(error: ApiError) -> dict[str, Any]:
    """A row's refusal in the error body's words (without a request id: the request has one)."""
    return {"code": error.code, "message": error.message, "details": error.details}


def _result(
    index: int, status: str, contact_id: str | None = None, error: Any = None
) -> dict[str, Any]:
    return {"index": index, "status": status, "id": contact_id, "error": error}


async def upsert_contacts(
    db: Database,
    account_id: str,
    match_on: MatchKey,
    raw_rows: Sequence[Any],
    parse: Callable[[int, Any], BulkRow],
    *,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every row's result, in order: ``created``, ``updated``, ``unchanged`` or ``refused``.
    ``parse`` validates a raw row (its index, its value), batch by batch as they are written;
    ``progress`` is told the number of rows done after each committed batch."""
    pace = Pace()
    results: list[dict[str, Any]] = []
    pending: list[BulkRow] = []  # validated, not yet written
    while len(results) < len(raw_rows):
        start = len(results) + len(pending)
        chunk = raw_rows[start : len(results) + BATCH_ROWS]
        pending += await _parsed(chunk, start, parse, pace)
        async with db.begin_apart() as conn:
            done = await upsert_batch(conn, account_id, match_on, pending, stop=pace.spent)
        results.extend(done)
        pending = pending[len(done) :]
        if progress is not None:
            progress(len(results))
        await pace.rest()  # the other requests' turn, with the loop and the writer
    return results


async def _parsed(
    chunk: Sequence[Any], start: int, parse: Callable[[int, Any], BulkRow], pace: Pace
) -> list[BulkRow]:
    rows = []
    for offset, raw in enumerate(chunk):
        rows.append(parse(start + offset, raw))
        await pace.rest_if_spent()
    return rows


async def upsert_batch(
    conn: Connection,
    account_id: str,
    match_on: MatchKey,
    rows: Sequence[BulkRow],
    *,
    stop: Callable[[], bool] = lambda: False,
) -> list[dict[str, Any]]:
    """``rows`` upserted in the caller's transaction, matched on ``match_on``: the results of
    the first of them, up to the one after which ``stop()`` said to stop (one row at least)."""
    keys = sorted({row.fields[match_on] for row in rows if row.fields is not None})
    await queries.take_bulk_turn(conn, _lock_id(account_id))
    found = await conn.execute(_MATCHES[match_on], {"account_id": account_id, "keys": keys})
    matches: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        contact = contact_out(row)
        matches.setdefault(contact[match_on], []).append(contact)
    results = []
    for row in rows:
        results.append(await _upsert_or_refuse(conn, account_id, match_on, row, matches))
        if stop():
            break
    return results


async def _upsert_or_refuse(
    conn: Connection,
    account_id: str,
    match_on: MatchKey,
    row: BulkRow,
    matches: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    if row.fields is None:
        return _result(row.index, "refused", error=row.error)
    try:
        matched = matches.setdefault(row.fields[match_on], [])
        return await _upsert_row(conn, account_id, match_on, row, matched)
    except ValidationFailed as failure:
        return _result(row.index, "refused", error=refusal(failure))


async def _upsert_row(
    conn: Connection,
    account_id: str,
    match_on: MatchKey,
    row: BulkRow,
    matched: list[dict[str, Any]],
) -> dict[str, Any]:
    """One row against the contacts that share its key (``matched``, kept current: a later row
    of the same batch with the same key sees what this one wrote)."""
    assert row.fields is not None
    if len(matched) > 1:
        raise ValidationFailed.for_field(
            match_on,
            f"matches {len(matched)} contacts; change them one by one with PATCH",
        )
    if not matched:
        _require_fields_to_create(row.fields)
        contact, joint = contact_creation(account_id, row.fields)
        await conn.insert_joint(joint)
        matched.append(contact)
        return _result(row.index, "created", contact["id"])
    before = matched[0]
    after = await apply_changes(conn, account_id, before, row.fields)
    if after is before:
        return _result(row.index, "unchanged", before["id"])
    matched[0] = after
    return _result(row.index, "updated", after["id"])


def _require_fields_to_create(fields: dict[str, Any]) -> None:
    missing = [name for name in REQUIRED_FIELDS if fields.get(name) is None]
    if missing:
        raise ValidationFailed(
            [
                {"field": name, "message": f"{name} is required to create a contact"}
                for name in missing
            ]
        )


def _lock_id(account_id: str) -> int:
    digest = hashlib.sha256(f"contacts.bulk\0{account_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
