"""Contacts: searchable list, detail, create/edit/delete through the same domain code as the API
(so the same validation applies and the same events fire)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.responses import StreamingResponse

from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.listing import PAGE_SIZE, cursor_id, field_errors, paginate, text
from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import (
    PREFIX,
    Flash,
    confirm_page,
    database,
    not_found,
    redirect,
    render,
    templates,
)
from hookline.domain import calls as calls_domain
from hookline.domain import contacts as domain
from hookline.domain import contacts_bulk
from hookline.errors import ValidationFailed
from hookline.schemas.contacts import (
    MAX_BULK_CONTACTS,
    ContactCreate,
    ContactUpdate,
    MatchOn,
    bulk_row,
)
from hookline.schemas.contacts_csv import IMPORTED_COLUMNS, export_csv, read_csv

router = APIRouter(prefix=f"{PREFIX}/contacts")
FIELDS = tuple(name for name in IMPORTED_COLUMNS if name != "do_not_call")
"""The form's text fields (its do-not-call checkbox aside)."""
MATCH_ON: tuple[MatchOn, ...] = ("phone_number", "email")
_REPORT_SLOT = "<!--import-report-->"


def _form_values(form: Any) -> dict[str, str]:
    values = {name: text(form, name) for name in FIELDS}
    values["do_not_call"] = "true" if form.get("do_not_call") == "true" else ""
    return values


def _as_fields(values: dict[str, str], *, keep_empty: bool) -> dict[str, Any]:
    """Form strings as API fields: tags comma-separated; an empty box is absent on create and
    ``null`` (clear it) on edit, as in the API's merge-patch."""
    fields: dict[str, Any] = {}
    for name, value in values.items():
        if name == "tags":
            tags = [t for t in (part.strip() for part in value.split(",")) if t]
            fields[name] = tags if tags or keep_empty else None
        elif name == "do_not_call":
            fields[name] = value == "true"
        elif value:
            fields[name] = value
        elif keep_empty:
            fields[name] = None
    return {k: v for k, v in fields.items() if v is not None or keep_empty}


def _contact_values(contact: dict[str, Any]) -> dict[str, str]:
    values = {name: contact.get(name) or "" for name in FIELDS}
    values["tags"] = ", ".join(contact["tags"])
    values["do_not_call"] = "true" if contact["do_not_call"] else ""
    return values


@router.get("")
async def list_contacts(
    request: Request,
    session: CurrentSession,
    search: str = "",
    tag: str = "",
    cursor: str | None = None,
) -> HTMLResponse:
    return await _contacts_page(request, session, search=search, tag=tag, cursor=cursor)


async def _contacts_page(
    request: Request,
    session: CurrentSession,
    *,
    search: str = "",
    tag: str = "",
    cursor: str | None = None,
    import_errors: dict[str, str] | None = None,
) -> HTMLResponse:
    filters = domain.ContactFilters(
        search=search.strip()[:200] or None, tags=(tag.strip(),) if tag.strip() else ()
    )
    async with database(request).read() as conn:
        rows = await domain.list_contacts(
            conn, session.account_id, filters, limit=PAGE_SIZE + 1, before_id=cursor_id(cursor)
        )
    rows, next_url = paginate(request, rows)
    context = {
        "contacts": rows,
        "next_url": next_url,
        "search": search,
        "tag": tag,
        "first_page": cursor is None,
        "match_on_options": MATCH_ON,
        "import_errors": import_errors or {},
        "max_rows": MAX_BULK_CONTACTS,
    }
    status = 422 if import_errors else 200
    return render(request, "contacts.html", context, status_code=status)


@router.get("/export")
async def export_contacts(request: Request, session: CurrentSession) -> StreamingResponse:
    """The API's CSV export (``GET /v1/contacts/export``), for the signed-in account."""
    return StreamingResponse(
        export_csv(database(request), session.account_id),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="contacts.csv"'},
    )


@router.post("/import")
async def import_contacts(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    """A CSV file through the API's bulk upsert: the page streams the rows done as each batch
    commits, then a report of every row."""
    match_on = next((m for m in MATCH_ON if m == form.get("match_on")), None)
    try:
        if match_on is None:
            raise ValidationFailed.for_field("match_on", "choose phone_number or email")
        raw_rows = read_csv(await _uploaded_text(form.get("file")), max_rows=MAX_BULK_CONTACTS)
    except ValidationFailed as failure:
        return await _contacts_page(request, session, import_errors=field_errors(failure))
    page = render(request, "contacts_import.html", {"total": len(raw_rows)})
    head, tail = bytes(page.body).decode().split(_REPORT_SLOT)
    parse = partial(bulk_row, match_on=match_on)
    db, account_id = database(request), session.account_id

    async def body() -> AsyncIterator[str]:
        done: asyncio.Queue[int] = asyncio.Queue()
        upsert = asyncio.ensure_future(
            contacts_bulk.upsert_contacts(
                db, account_id, match_on, raw_rows, parse, progress=done.put_nowait
            )
        )
        yield head
        while not (upsert.done() and done.empty()):
            waiting = asyncio.ensure_future(done.get())
            await asyncio.wait({waiting, upsert}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                yield f"<p>{waiting.result()} of {len(raw_rows)} rows done…</p>"
            else:
                waiting.cancel()
        results = upsert.result()
        counts = Counter(result["status"] for result in results)
        report = templates.get_template("_import_report.html")
        yield report.render(results=results, counts=counts)
        yield tail

    headers = {name: value for name, value in page.headers.items() if name != "content-length"}
    return StreamingResponse(body(), media_type="text/html; charset=utf-8", headers=headers)


async def _uploaded_text(upload: Any) -> str:
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise ValidationFailed.for_field("file", "choose a CSV file")
    try:
        return (await upload.read()).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationFailed.for_field("file", "the file is not UTF-8 text") from None
    finally:
        await upload.close()


@router.get("/new")
async def new_contact(request: Request, session: CurrentSession) -> HTMLResponse:
    return render(request, "contact_form.html", {"contact": None, "values": {}, "errors": {}})


@router.post("")
async def create_contact(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    values = _form_values(form)
    try:
        body = ContactCreate.model_validate(_as_fields(values, keep_empty=False))
        async with database(request).begin() as conn:
            contact = await domain.create_contact(conn, session.account_id, body.provided())
    except (ValidationError, ValidationFailed) as exc:
        return _form_again(request, None, values, field_errors(exc))
    name = contact["first_name"]
    return redirect(
        request, f"{PREFIX}/contacts/{contact['id']}", Flash("success", f"Contact {name} created.")
    )


def _form_again(
    request: Request, contact: dict[str, Any] | None, values: dict[str, str], errors: dict[str, str]
) -> HTMLResponse:
    context = {"contact": contact, "values": values, "errors": errors}
    return render(request, "contact_form.html", context, status_code=422)


async def _contact(request: Request, session: CurrentSession, contact_id: str) -> dict[str, Any]:
    async with database(request).read() as conn:
        contact = await domain.get_contact(conn, session.account_id, contact_id)
    if contact is None:
        raise not_found("contact")
    return contact


@router.get("/{contact_id}")
async def show_contact(request: Request, session: CurrentSession, contact_id: str) -> HTMLResponse:
    contact = await _contact(request, session, contact_id)
    async with database(request).read() as conn:
        recent_calls = await calls_domain.list_calls(
            conn, session.account_id, calls_domain.CallFilters(contact_id=contact_id), limit=10
        )
    return render(request, "contact_detail.html", {"contact": contact, "calls": recent_calls})


@router.get("/{contact_id}/edit")
async def edit_contact(request: Request, session: CurrentSession, contact_id: str) -> HTMLResponse:
    contact = await _contact(request, session, contact_id)
    context = {"contact": contact, "values": _contact_values(contact), "errors": {}}
    return render(request, "contact_form.html", context)


@router.post("/{contact_id}/edit")
async def update_contact(
    request: Request, session: CurrentSession, form: CheckedForm, contact_id: str
) -> Response:
    contact = await _contact(request, session, contact_id)
    values = _form_values(form)
    try:
        body = ContactUpdate.model_validate(_as_fields(values, keep_empty=True))
        async with database(request).begin() as conn:
            updated = await domain.update_contact(
                conn, session.account_id, contact_id, body.provided()
            )
    except (ValidationError, ValidationFailed) as exc:
        return _form_again(request, contact, values, field_errors(exc))
    if updated is None:
        raise not_found("contact")
    message = "Contact saved." if updated != contact else "Nothing changed."
    return redirect(request, f"{PREFIX}/contacts/{contact_id}", Flash("success", message))


@router.get("/{contact_id}/delete")
async def confirm_delete(
    request: Request, session: CurrentSession, contact_id: str
) -> HTMLResponse:
    contact = await _contact(request, session, contact_id)
    name = " ".join(filter(None, (contact["first_name"], contact["last_name"])))
    return confirm_page(
        request,
        title=f"Delete the contact {name}?",
        message=(
            "The contact is removed for good and your webhooks receive a contact.deleted "
            "event. Calls stay in the call log, no longer linked to a contact."
        ),
        action=f"{PREFIX}/contacts/{contact_id}/delete",
        button="Delete contact",
        cancel=f"{PREFIX}/contacts/{contact_id}",
    )


@router.post("/{contact_id}/delete")
async def delete_contact(
    request: Request, session: CurrentSession, _form: CheckedForm, contact_id: str
) -> RedirectResponse:
    async with database(request).begin() as conn:
        deleted = await domain.delete_contact(conn, session.account_id, contact_id)
    if deleted is None:
        raise not_found("contact")
    return redirect(request, f"{PREFIX}/contacts", Flash("success", "Contact deleted."))
