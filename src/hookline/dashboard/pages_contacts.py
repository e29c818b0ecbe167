"""Contacts: searchable list, detail, create/edit/delete through the same domain code as the API
(so the same validation applies and the same events fire)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

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
)
from hookline.domain import calls as calls_domain
from hookline.domain import contacts as domain
from hookline.errors import ValidationFailed
from hookline.schemas.contacts import ContactCreate, ContactUpdate

router = APIRouter(prefix=f"{PREFIX}/contacts")
FIELDS = ("first_name", "last_name", "phone_number", "email", "company", "tags", "notes")


def _form_values(form: Any) -> dict[str, str]:
    return {name: text(form, name) for name in FIELDS}


def _as_fields(values: dict[str, str], *, keep_empty: bool) -> dict[str, Any]:
    """Form strings as API fields: tags comma-separated; an empty box is absent on create and
    ``null`` (clear it) on edit, as in the API's merge-patch."""
    fields: dict[str, Any] = {}
    for name, value in values.items():
        if name == "tags":
            tags = [t for t in (part.strip() for part in value.split(",")) if t]
            fields[name] = tags if tags or keep_empty else None
        elif value:
            fields[name] = value
        elif keep_empty:
            fields[name] = None
    return {k: v for k, v in fields.items() if v is not None or keep_empty}


def _contact_values(contact: dict[str, Any]) -> dict[str, str]:
    values = {name: contact.get(name) or "" for name in FIELDS}
    values["tags"] = ", ".join(contact["tags"])
    return values


@router.get("")
async def list_contacts(
    request: Request,
    session: CurrentSession,
    search: str = "",
    tag: str = "",
    cursor: str | None = None,
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
    }
    return render(request, "contacts.html", context)


@router.get("/new")
async def new_contact(request: Request, session: CurrentSession) -> HTMLResponse:
    return render(request, "contact_form.html", {"contact": None, "values": {}, "errors": {}})


@router.post("")
async def create_contact(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    values = _form_values(form)
    try:
        body = ContactCreate.model_validate(_as_fields(values, keep_empty=False))
    except ValidationError as exc:
        return _form_again(request, None, values, field_errors(exc))
    async with database(request).begin() as conn:
        contact = await domain.create_contact(conn, session.account_id, body.provided())
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
