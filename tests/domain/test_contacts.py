"""``domain.contacts.list_contacts``: one compiled statement per filter shape; tag filtering
reads the SQL-filtered rows in chunks, so a match far down the list is still found."""

from __future__ import annotations

from hookline.domain import contacts as domain
from hookline.domain.contacts import _TAG_SCAN_CHUNK, ContactFilters
from hookline.storage.db import Database
from tests.conftest import Account


async def _create(db: Database, account: Account, count: int, tags: list[str]) -> list[str]:
    made = []
    async with db.begin() as conn:
        for n in range(count):
            contact = await domain.create_contact(
                conn,
                account.id,
                {"first_name": f"N{n}", "phone_number": "+15551234567", "tags": tags},
            )
            made.append(contact["id"])
    return made


async def test_a_tag_far_past_the_first_chunk_is_found(db: Database, account: Account) -> None:
    tagged = await _create(db, account, 3, ["vip"])  # the oldest
    await _create(db, account, _TAG_SCAN_CHUNK + 20, ["other"])
    wanted = ContactFilters(search=None, tags=("vip",), phone_number=None, email=None)
    async with db.read() as conn:
        page = await domain.list_contacts(conn, account.id, wanted, limit=2)
        rest = await domain.list_contacts(conn, account.id, wanted, limit=5, offset=2)
        after = await domain.list_contacts(
            conn, account.id, wanted, limit=5, before_id=page[-1]["id"]
        )
    newest_first = list(reversed(tagged))
    assert [c["id"] for c in page] == newest_first[:2]
    assert [c["id"] for c in rest] == newest_first[2:]
    assert [c["id"] for c in after] == newest_first[2:]


async def test_filters_of_every_shape_select_the_same_rows_as_their_values_say(
    db: Database, other_account: Account
) -> None:
    [ada] = await _create(db, other_account, 1, [])
    async with db.read() as conn:
        for filters, expected in (
            (ContactFilters(search="n0", tags=(), phone_number=None, email=None), [ada]),
            (ContactFilters(search="zz", tags=(), phone_number=None, email=None), []),
            (ContactFilters(search=None, tags=(), phone_number="+15551234567", email=None), [ada]),
            (ContactFilters(search=None, tags=(), phone_number="+15550000000", email=None), []),
        ):
            found = await domain.list_contacts(conn, other_account.id, filters, limit=10)
            assert [c["id"] for c in found] == expected, filters
