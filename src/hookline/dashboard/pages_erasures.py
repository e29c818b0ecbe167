"""Erasing a contact from the dashboard: a confirm step on the contact's page, then the
erasure's progress (the same domain code as ``POST /v1/contacts/{id}/erase``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from hookline.dashboard.csrf import CheckedForm
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
from hookline.domain import contacts as contacts_domain
from hookline.domain import erasures as domain

router = APIRouter(prefix=PREFIX)


@router.get("/contacts/{contact_id}/erase")
async def confirm_erase(request: Request, session: CurrentSession, contact_id: str) -> HTMLResponse:
    async with database(request).read() as conn:
        contact = await contacts_domain.get_contact(conn, session.account_id, contact_id)
    if contact is None:
        raise not_found("contact")
    name = " ".join(filter(None, (contact["first_name"], contact["last_name"])))
    return confirm_page(
        request,
        title=f"Erase {name} everywhere?",
        message=(
            "The contact is deleted now; then its calls lose the customer's number, metadata "
            "and analysis, and every event and delivery about it is deleted. Each webhook that "
            "received any of them gets a contact.erased event listing what to purge. This "
            "cannot be undone."
        ),
        action=f"{PREFIX}/contacts/{contact_id}/erase",
        button="Erase contact",
        cancel=f"{PREFIX}/contacts/{contact_id}",
    )


@router.post("/contacts/{contact_id}/erase")
async def erase_contact(
    request: Request, session: CurrentSession, _form: CheckedForm, contact_id: str
) -> RedirectResponse:
    async with database(request).begin() as conn:
        erasure_id = await domain.request_erasure(conn, session.account_id, contact_id)
    if erasure_id is None:
        raise not_found("contact")
    flash = Flash("success", "Contact erased; its data is being removed.")
    return redirect(request, f"{PREFIX}/erasures/{erasure_id}", flash)


@router.get("/erasures/{erasure_id}")
async def show_erasure(request: Request, session: CurrentSession, erasure_id: str) -> HTMLResponse:
    async with database(request).read() as conn:
        erasure = await domain.get_erasure(conn, session.account_id, erasure_id)
    if erasure is None:
        raise not_found("erasure")
    return render(request, "erasure.html", {"erasure": erasure})
