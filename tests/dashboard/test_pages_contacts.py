"""Contacts pages for bulk work and do-not-call, over HTTP in process (both databases): the CSV
export download, the CSV import through the API's bulk upsert, the do-not-call flag."""

from __future__ import annotations

import csv
import io

from hookline.domain import contacts as contacts_domain
from hookline.domain.events import list_events
from hookline.storage.db import Database
from tests.dashboard.conftest import Dash, csrf_from
from tests.dashboard.test_pages import _account_id

HEADER = "first_name,last_name,phone_number,email,tags,do_not_call,do_not_call_reason\r\n"


async def _import(dash: Dash, text: str, match_on: str = "phone_number") -> tuple[int, str]:
    token = csrf_from((await dash.get("/dashboard/contacts")).text)
    response = await dash.http.post(
        "/dashboard/contacts/import",
        data={"csrf_token": token, "match_on": match_on},
        files={"file": ("contacts.csv", text.encode(), "text/csv")},
    )
    return response.status_code, response.text


async def test_export_is_the_accounts_contacts_as_csv(
    signed_in: Dash, other_signed_in: Dash
) -> None:
    status, _ = await _import(
        signed_in,
        HEADER + "Ada,Lovelace,+44 20 7946 0958,ada@example.com,vip;math,true,asked\r\n"
        "=cmd,,+14155552671,,,,\r\n",
    )
    assert status == 200
    await _import(other_signed_in, HEADER + "Eve,,+14155550000,,,,\r\n")

    export = await signed_in.get("/dashboard/contacts/export")
    assert export.status_code == 200
    assert export.headers["content-type"] == "text/csv; charset=utf-8"
    assert export.headers["content-disposition"] == 'attachment; filename="contacts.csv"'
    rows = list(csv.DictReader(io.StringIO(export.text)))
    assert [(r["first_name"], r["phone_number"]) for r in rows] == [
        ("'=cmd", "'+14155552671"),
        ("Ada", "'+442079460958"),
    ]
    ada = rows[1]
    assert (ada["tags"], ada["do_not_call"], ada["do_not_call_reason"]) == (
        "vip;math",
        "true",
        "asked",
    )
    assert "Eve" not in export.text  # the other account's contact

    signed_out = Dash(signed_in.http)
    signed_in.http.cookies.clear()
    assert (await signed_out.get("/dashboard/contacts/export")).status_code in (303, 307)


async def test_import_reports_every_row_and_fires_the_api_events(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    status, _ = await _import(signed_in, HEADER + "Ada,,+14155552671,,,,\r\n")
    assert status == 200
    status, page = await _import(
        signed_in,
        HEADER + "Ada,Lovelace,+14155552671,,,,\r\n"  # updated
        "Bob,,+14155550001,,,,\r\n"  # created
        "Bob,,+14155550001,,,,\r\n"  # the same again: unchanged
        "Eve,,555,,,,\r\n"  # refused: not a phone number
        ",,+14155550002,,,maybe,\r\n",  # refused: first_name and do_not_call
    )
    assert status == 200
    assert "1 created, 1 updated, 1 unchanged, 2 refused" in page
    assert page.index("rows done") < page.index("Import done")
    assert "phone_number: " in page and "do_not_call: " in page
    async with db.read() as conn:
        events = await list_events(conn, account_id, limit=10)
    assert [e["type"] for e in events] == ["contact.created", "contact.updated", "contact.created"]

    # Re-importing the export changes nothing.
    export = (await signed_in.get("/dashboard/contacts/export")).text
    status, page = await _import(signed_in, export)
    assert "0 created, 0 updated, 2 unchanged, 0 refused" in page


async def test_import_refuses_a_file_it_cannot_read(signed_in: Dash) -> None:
    for text, message in [
        ("", "the file is empty"),
        ("name,phone\r\nAda,+14155552671\r\n", "the header row names none of"),
        ("first_name,phone_number\r\n" + "A,+14155552671\r\n" * 1001, "at most 1000 rows"),
    ]:
        status, page = await _import(signed_in, text)
        assert status == 422 and message in page
    status, page = await _import(signed_in, HEADER, match_on="id")
    assert status == 422 and "choose phone_number or email" in page
    token = csrf_from((await signed_in.get("/dashboard/contacts")).text)
    bad = await signed_in.http.post(
        "/dashboard/contacts/import",
        data={"csrf_token": token, "match_on": "phone_number"},
        files={"file": ("x.csv", b"\xff\xfe\x00", "text/csv")},
    )
    assert bad.status_code == 422 and "not UTF-8" in bad.text
    forged = await signed_in.http.post(
        "/dashboard/contacts/import",
        data={"csrf_token": "x" * 40, "match_on": "phone_number"},
        files={"file": ("x.csv", (HEADER + "Ada,,+14155552671,,,,\r\n").encode(), "text/csv")},
    )
    assert forged.status_code == 403


async def test_do_not_call_in_the_contact_form_and_detail(signed_in: Dash, db: Database) -> None:
    account_id = await _account_id(db, signed_in.email)
    base = {"first_name": "Ada", "phone_number": "+14155552671"}
    lone = await signed_in.post(
        "/dashboard/contacts",
        {**base, "do_not_call_reason": "asked"},
        token_from="/dashboard/contacts/new",
    )
    assert lone.status_code == 422 and 'id="e-do_not_call_reason"' in lone.text
    created = await signed_in.post(
        "/dashboard/contacts",
        {**base, "do_not_call": "true", "do_not_call_reason": "asked not to be called"},
        token_from="/dashboard/contacts/new",
    )
    assert created.status_code == 303
    path = created.headers["location"]
    detail = await signed_in.get(path)
    assert "<strong>Yes</strong>" in detail.text and "asked not to be called" in detail.text
    edit = await signed_in.get(f"{path}/edit")
    assert 'value="true" checked' in edit.text
    cleared = await signed_in.post(f"{path}/edit", base, token_from=f"{path}/edit")
    assert cleared.status_code == 303
    async with db.read() as conn:
        contact = await contacts_domain.get_contact(conn, account_id, path.rsplit("/", 1)[1])
    assert contact is not None
    assert (contact["do_not_call"], contact["do_not_call_reason"]) == (False, None)
