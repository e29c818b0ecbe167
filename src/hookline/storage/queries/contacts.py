"""The statements of contacts (``domain.contacts``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Select,
    String,
    Update,
    bindparam,
    delete,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from hookline.storage.connector import Connection
from hookline.storage.lists import in_list
from hookline.storage.models import SpelledTime, contacts, events
from hookline.storage.queries.common import (
    column_values,
    newest_first,
    of_account,
    owned,
    this_row,
)
from hookline.storage.statements import JointInsert, Query, QueryShapes

INSERT_WITH_EVENT = JointInsert(contacts, events)
"""A new contact (every column) and its ``contact.created`` event."""


class spelled(FunctionElement[str]):
    """A timestamp column read in the contract's spelling (``timeutil.iso``: UTC, milliseconds
    truncated, ``Z``). On PostgreSQL the statement spells it (``to_char`` of the instant in UTC,
    whatever the session's time zone), cheaper there than asyncpg's ``datetime`` and ``iso`` of
    it in the server. On SQLite the column as stored, which ``SpelledTime`` slices as it is
    read (cheaper than spelling it in SQL there)."""

    name = "spelled"
    inherit_cache = True
    # The text comes spelled from PostgreSQL: no result processor there.
    type = SpelledTime().with_variant(String(), "postgresql")

    def __init__(self, column: Column[Any]) -> None:
        super().__init__(column)


# to_char's MS is the microseconds divided by 1,000, truncated, as ``iso`` truncates them.
_CONTRACT_SPELLING = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'


@compiles(spelled)
def _as_stored(element: spelled, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)


@compiles(spelled, "postgresql")
def _by_postgresql(element: spelled, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.clauses, **kw)
    return f"to_char({column} AT TIME ZONE 'UTC', '{_CONTRACT_SPELLING}')"


FIELDS = (
    "id",
    "first_name",
    "last_name",
    "phone_number",
    "email",
    "company",
    "tags",
    "notes",
    "do_not_call",
    "do_not_call_reason",
)
OUT = (
    *(contacts.c[name] for name in FIELDS),
    spelled(contacts.c.created_at).label("created_at"),
    spelled(contacts.c.updated_at).label("updated_at"),
)
"""What a read of contacts selects: the API's fields (``domain.contacts.contact_out``), the
timestamps already in the contract's spelling (``spelled``)."""


class contact_json(FunctionElement[str]):
    """A contact's JSON text exactly as the API writes it (``contact_out`` through orjson),
    written by SQLite's ``json_object`` from ``OUT``'s columns, in their order; NULL when the
    database cannot write it so (the caller then reads the rows the long way, ``OUT``).

    On SQLite, fetching the ten columns, decoding them and building the dict a row cost more than
    having SQLite write the row as JSON, which the driver returns as one text that goes into the
    response as it is (``orjson.Fragment``). The timestamps are spelled as ``SpelledTime`` slices
    them, from text of the shape ``_sqlite_text`` stores, which the ``GLOB`` checks (its ``?``
    matches a character, as Python's indexing counts them; ``[0-9]`` is stricter than ``isdigit``,
    so text it refuses is still read the long way); any other text, or tags that are JSON ``null``
    (``contact_out`` reads them as ``[]``), makes the row NULL. PostgreSQL's JSON functions space
    their output (``{"id" : ...}``): NULL there, and the list reads ``OUT`` on PostgreSQL."""

    name = "contact_json"
    inherit_cache = True
    type = String()

    def __init__(self) -> None:
        # The columns of OUT, in its order: the object's keys are their names.
        super().__init__(*(contacts.c[str(column.name)] for column in OUT))


_STORED_SHAPE = "????-??-?? ??:??:??." + "[0-9]" * 6  # _sqlite_text's, as _sqlite_spelled checks


@compiles(contact_json)
def _json_by_sqlite(element: contact_json, compiler: SQLCompiler, **kw: Any) -> str:
    column = {
        str(c.key): compiler.process(c, **kw) for c in element.clauses if isinstance(c, Column)
    }
    created, updated, tags = column["created_at"], column["updated_at"], column["tags"]

    def value(name: str) -> str:
        if name == "tags":
            return f"json({tags})"
        if name == "do_not_call":  # SQLite stores a boolean as 0 or 1
            return f"json(CASE WHEN {column[name]} THEN 'true' ELSE 'false' END)"
        if name in ("created_at", "updated_at"):
            # "2026-11-22 15:04:05.123456" -> "2026-11-22T15:04:05.123Z", as _sqlite_spelled.
            at = column[name]
            return f"substr({at}, 1, 10) || 'T' || substr({at}, 12, 12) || 'Z'"
        return column[name]

    pairs = ", ".join(f"'{name}', {value(name)}" for name in column)
    return (
        f"CASE WHEN {created} GLOB '{_STORED_SHAPE}' AND {updated} GLOB '{_STORED_SHAPE}'"
        f" AND {tags} <> 'null' THEN json_object({pairs}) END"
    )


@compiles(contact_json, "postgresql")
def _not_by_postgresql(element: contact_json, compiler: SQLCompiler, **kw: Any) -> str:
    return "CAST(NULL AS TEXT)"


BY_ID = Query(select(*OUT).where(*owned(contacts)))
BY_ID_FOR_UPDATE = Query(select(*OUT).where(*owned(contacts)).with_for_update())

DELETE = Query(delete(contacts).where(*owned(contacts)).returning(*OUT))
"""Deletes the contact, returning it (no row: none of the account's)."""

_CALL_TARGET = (contacts.c.id, contacts.c.do_not_call)
LATEST_WITH_PHONE = Query(
    select(*_CALL_TARGET)
    .where(of_account(contacts), contacts.c.phone_number == bindparam("phone_number"))
    .order_by(contacts.c.id.desc())
    .limit(1)
)
"""The account's most recent contact with ``phone_number``: its id and do-not-call flag."""

BY_PHONE_NUMBERS_FOR_UPDATE = Query(
    select(*OUT)
    .where(of_account(contacts), in_list(contacts.c.phone_number, "keys"))
    .order_by(contacts.c.id)
    .with_for_update()
)
"""The account's contacts whose phone number is one of ``keys`` (a bulk upsert's matches)."""

BY_EMAILS_FOR_UPDATE = Query(
    select(*OUT)
    .where(of_account(contacts), in_list(contacts.c.email, "keys"))
    .order_by(contacts.c.id)
    .with_for_update()
)
"""The account's contacts whose email is one of ``keys``."""

LOCK_FOR_BULK = Query(select(func.pg_advisory_xact_lock(bindparam("lock", type_=BigInteger))))
"""PostgreSQL: the account's bulk-upsert lock (``lock``), held to the end of the transaction."""


async def take_bulk_turn(conn: Connection, lock: int) -> None:
    """Bulk upserts of one account take turns, so two never create the same contact twice:
    PostgreSQL's transaction-scoped advisory lock; SQLite's one writer already runs them in
    turn."""
    if conn.dialect.name == "postgresql":
        await conn.execute(LOCK_FOR_BULK, {"lock": lock})


CALL_TARGET = Query(select(*_CALL_TARGET).where(*owned(contacts)))
"""The contact's id and do-not-call flag (no row: none of the account's)."""


def _update(columns: frozenset[str]) -> Update:
    # b_id: a parameter named like a column would clash with that column's SET parameter.
    return (
        update(contacts)
        .where(this_row(contacts))
        .values(column_values(contacts, columns | {"updated_at"}))
    )


UPDATE = QueryShapes(_update)
"""``UPDATE.get(frozenset(changed))``: sets those columns and ``updated_at`` of ``b_id``; one
statement per set of changed fields (a PATCH changes a few of nine)."""


@dataclass(frozen=True, slots=True)
class ListShape:
    """Which parts a contacts list query has: one compiled statement per shape. Parameters:
    ``account_id``, ``limit`` and, when their part is there, ``phone_number``, ``email``,
    ``do_not_call``, ``pattern`` (``search_pattern``), ``before_id``, ``offset``."""

    phone_number: bool
    email: bool
    search: bool
    before_id: bool
    offset: bool
    do_not_call: bool = False


_LIKE_ESCAPE = "\\"


def search_pattern(text: str) -> str:
    """The ``pattern`` parameter for a search: ``text`` anywhere, case-insensitive, its ``%``
    and ``_`` taken literally."""
    escaped = (
        text.lower()
        .replace(_LIKE_ESCAPE, _LIKE_ESCAPE * 2)
        .replace("%", _LIKE_ESCAPE + "%")
        .replace("_", _LIKE_ESCAPE + "_")
    )
    return f"%{escaped}%"


def _list(shape: ListShape, columns: tuple[Any, ...] = OUT) -> Select[Any]:
    clauses = [of_account(contacts)]
    if shape.phone_number:
        clauses.append(contacts.c.phone_number == bindparam("phone_number"))
    if shape.email:
        clauses.append(contacts.c.email == bindparam("email"))
    if shape.do_not_call:
        clauses.append(contacts.c.do_not_call == bindparam("do_not_call"))
    if shape.search:
        pattern = bindparam("pattern", type_=String())
        full_name = func.lower(
            contacts.c.first_name + " " + func.coalesce(contacts.c.last_name, "")
        )
        clauses.append(
            or_(
                full_name.like(pattern, escape=_LIKE_ESCAPE),
                func.lower(func.coalesce(contacts.c.email, "")).like(pattern, escape=_LIKE_ESCAPE),
                contacts.c.phone_number.like(pattern, escape=_LIKE_ESCAPE),
            )
        )
    return newest_first(
        contacts, clauses, before_id=shape.before_id, offset=shape.offset, columns=columns
    )


LIST = QueryShapes(_list)
"""``LIST.get(ListShape(...))``: a page of the account's contacts, newest first."""

JSON_COLUMNS = (contacts.c.id, contact_json().label("json"))
LIST_JSON = QueryShapes(lambda shape: _list(shape, JSON_COLUMNS))
"""``LIST`` as ``(id, json)`` rows: each contact's JSON written by SQLite (``contact_json``)."""


def list_json(conn: Connection) -> QueryShapes | None:
    """``LIST_JSON`` where the database writes each contact's JSON exactly as ``contact_out``
    would (SQLite); None where it cannot (PostgreSQL spaces its JSON): the list reads ``OUT``."""
    return LIST_JSON if conn.dialect.name == "sqlite" else None
