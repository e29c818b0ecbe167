"""``storage.lists``: a list parameter matches like ``IN``, with one SQL text for any length."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, create_engine, select
from sqlalchemy.engine import Dialect

from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT
from hookline.storage.db import Database
from hookline.storage.lists import in_list, not_in_list
from hookline.storage.models import accounts, contacts, metadata
from hookline.storage.statements import Query
from tests.conftest import Account
from tests.support.contacts import bare_contact

_MATCHING = Query(
    select(contacts.c.id).where(in_list(contacts.c.id, "ids")).order_by(contacts.c.id)
)
_OTHERS = Query(
    select(contacts.c.id)
    .where(contacts.c.account_id == bindparam("account"))
    .where(not_in_list(contacts.c.id, "ids"))
    .order_by(contacts.c.id)
)
# Ids a JSON or array encoding must carry intact: quotes, a backslash, a comma, braces, non-ASCII.
_AWKWARD = ['ct_"quoted"', "ct_it's", "ct_back\\slash", "ct_a,b", "ct_{x}", "ct_üñî"]


async def _insert_contacts(db: Database, account: Account, contact_ids: list[str]) -> None:
    now = datetime.now(UTC)
    rows = [bare_contact(account.id, contact_id, now) for contact_id in contact_ids]
    async with db.begin() as conn:
        await conn.execute_many(Query(contacts.insert()), rows)


async def _ids(db: Database, statement: Query, **params: object) -> list[str]:
    async with db.read() as conn:
        return [row.id for row in (await conn.execute(statement, params)).all()]


async def test_a_list_matches_exactly_its_members(db: Database, account: Account) -> None:
    present = sorted(f"{account.id}_{suffix}" for suffix in _AWKWARD)
    await _insert_contacts(db, account, present)
    assert await _ids(db, _MATCHING, ids=present) == present
    assert await _ids(db, _MATCHING, ids=present[:1]) == present[:1]
    assert await _ids(db, _MATCHING, ids=[*present[2:4], "ct_absent"]) == present[2:4]
    assert await _ids(db, _MATCHING, ids=[]) == []


async def test_the_negation_is_the_complement(db: Database, account: Account) -> None:
    present = sorted(f"{account.id}_{suffix}" for suffix in _AWKWARD)
    await _insert_contacts(db, account, present)
    assert await _ids(db, _OTHERS, account=account.id, ids=present[:2]) == present[2:]
    assert await _ids(db, _OTHERS, account=account.id, ids=[]) == present


async def test_sqlalchemys_own_execution_binds_the_list_too(db: Database, account: Account) -> None:
    present = [f"{account.id}_one", f"{account.id}_two"]
    await _insert_contacts(db, account, present)
    async with db.read() as conn:
        result = await conn.execute(_MATCHING.statement, {"ids": present[1:]})
        assert result.scalars().all() == present[1:]


async def test_a_list_longer_than_any_parameter_limit_is_one_parameter(
    db: Database, account: Account
) -> None:
    # 40,000 ids: as IN (...) that is more bind parameters than PostgreSQL accepts (32,767).
    present = [f"{account.id}_near"]
    await _insert_contacts(db, account, present)
    many = [f"ct_absent_{n}" for n in range(40_000)] + present
    assert await _ids(db, _MATCHING, ids=many) == present


@pytest.mark.parametrize("dialect", [POSTGRES_DIALECT, SQLITE_DIALECT], ids=lambda d: d.name)
def test_the_sql_is_the_same_for_any_length(dialect: Dialect) -> None:
    # The point of the module: drivers cache prepared statements by their SQL text.
    compiled = _MATCHING.compiled(dialect)
    short_sql, short_arguments = compiled.render({"ids": ["a"]})
    long_sql, long_arguments = compiled.render({"ids": [str(n) for n in range(64)]})
    assert short_sql == long_sql
    assert len(short_arguments) == len(long_arguments) == 1


def test_sqlite_finds_the_rows_through_the_primary_key() -> None:
    # Rendered as a boolean value, "(id IN (...)) = 1", the condition would scan the table.
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=[accounts, contacts])
    sql = str(_MATCHING.compiled(SQLITE_DIALECT).sql)
    with engine.connect() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", ('["a"]',)).all()
    details = " | ".join(str(step[-1]) for step in plan)
    assert "SEARCH contacts USING" in details, details
    assert "SCAN contacts" not in details, details
