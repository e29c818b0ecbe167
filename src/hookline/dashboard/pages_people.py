"""Team, invitations and password resets.

- ``/team``: the account's users and pending invitations; invite someone by e-mail, cancel an
  invitation, remove another member (after a confirmation; their sessions end with them).
- ``/join/{token}``: an invited person chooses a password and is logged in.
- ``/forgot``: asks for a reset mail; the answer is the same whether the address exists or not.
- ``/reset/{token}``: chooses a new password (every other session of that user ends).

GET never uses a link up (mail scanners fetch links); only the form's POST does.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import FormData

from hookline import mail
from hookline.background import spawn
from hookline.dashboard import links, people, users
from hookline.dashboard.auth import (
    OptionalSession,
    anonymous_page,
    client_address,
    new_password_errors,
    throttle_of,
    too_many,
)
from hookline.dashboard.csrf import AnonymousForm, CheckedForm
from hookline.dashboard.sessions import (
    CurrentSession,
    DashboardSession,
    create_session,
    set_session_cookie,
)
from hookline.dashboard.throttle import Throttled
from hookline.dashboard.web import (
    PREFIX,
    Flash,
    PageError,
    confirm_page,
    database,
    not_found,
    redirect,
    render,
)
from hookline.settings import Settings
from hookline.storage.connector import Connection
from hookline.storage.db import Database

router = APIRouter(prefix=PREFIX)
log = logging.getLogger("hookline.dashboard")

FORGOT_ANSWER = (
    "If a hookline login uses that address, a mail with a link to choose a new password is on "
    "its way. The link works once, for one hour."
)
REMOVAL_REFUSED = (
    "An account always keeps at least one member, and only a member can remove another: you "
    "were removed from this team while you asked, so nothing was changed."
)
FORGOT_ANSWER_WITHOUT_MAIL = (
    "No mail server is configured: if a hookline login uses that address, the link to choose a "
    "new password was printed in the server's console, for its operator to pass on. The link "
    "works once, for one hour."
)
LINK_UNUSABLE = (
    "This link has expired, was already used, or is not complete. Ask for a new one: a reset "
    "from “Forgot your password?”, an invitation from a member of the account."
)


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def _send(settings: Settings, message: people.Mail) -> None:
    await mail.send(
        settings, [message.to], message.subject, message.text, console_line=message.console_line
    )


def _mail_notice(request: Request) -> str | None:
    return None if mail.is_configured(_settings(request)) else mail.NOT_CONFIGURED_NOTICE


# -- Team -------------------------------------------------------------------------------------


async def _team_page(
    request: Request,
    session: CurrentSession,
    *,
    errors: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    async with database(request).read() as conn:
        members = await users.list_users(conn, session.account_id)
        pending = await links.pending_invitations(conn, session.account_id)
    context = {
        "members": [
            {
                "id": m.id,
                "email": m.email,
                "created_at": m.created_at.isoformat(),
                "you": m.id == session.user_id,
            }
            for m in members
        ],
        "pending": [{"email": p.email, "expires_at": p.expires_at.isoformat()} for p in pending],
        "mail_notice": _mail_notice(request),
        "errors": errors or {},
        "values": values or {},
    }
    return render(request, "team.html", context, status_code=status_code)


@router.get("/team")
async def team(request: Request, session: CurrentSession) -> HTMLResponse:
    return await _team_page(request, session)


@router.post("/team/invite")
async def invite(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    raw_email = str(form.get("email", ""))
    try:
        email = users.canonical_email(raw_email)
    except ValueError as exc:
        errors = {"email": str(exc).removeprefix("email ").capitalize()}
        return await _team_page(
            request, session, errors=errors, values={"email": raw_email}, status_code=422
        )
    try:
        await throttle_of(request).count_invitation(database(request), session.account_id)
    except Throttled as wait:
        raise too_many(
            "Too many invitations", "Your account has sent many invitations lately.", wait
        ) from None
    settings = _settings(request)
    async with database(request).begin() as conn:
        message = await people.invite(conn, settings, session.account_id, email)
    try:
        await _send(settings, message)
    except mail.MailError as exc:
        log.warning("invitation mail failed", extra={"error": str(exc)})
        flash = Flash(
            "error",
            f"The invitation for {email} is ready, but the mail could not be sent ({exc}). "
            "Invite again to send a new link.",
        )
        return redirect(request, f"{PREFIX}/team", flash)
    text = f"Invitation sent to {email}. The link in it works once, for 24 hours."
    if not mail.is_configured(settings):
        text = (
            f"No mail server is configured: the invitation for {email} was printed in the "
            "server's console instead of being mailed."
        )
    return redirect(request, f"{PREFIX}/team", Flash("success", text))


@router.post("/team/invitations/cancel")
async def cancel_invitation(
    request: Request, session: CurrentSession, form: CheckedForm
) -> RedirectResponse:
    try:
        email = users.canonical_email(str(form.get("email", "")))
    except ValueError:
        raise not_found("invitation") from None
    async with database(request).begin() as conn:
        await links.cancel_invitation(conn, session.account_id, email)
    flash = Flash("success", f"The invitation for {email} no longer works.")
    return redirect(request, f"{PREFIX}/team", flash)


async def _other_member(request: Request, session: CurrentSession, user_id: str) -> users.Member:
    """A member of the session's account other than the session's user, or a 404 page."""
    async with database(request).read() as conn:
        member = await users.find_member(conn, session.account_id, user_id)
    if member is None or member.id == session.user_id:
        raise not_found("other member")
    return member


@router.get("/team/members/{user_id}/remove")
async def confirm_remove(request: Request, session: CurrentSession, user_id: str) -> HTMLResponse:
    member = await _other_member(request, session, user_id)
    return confirm_page(
        request,
        title=f"Remove {member.email} from the team?",
        message=(
            f"{member.email} is logged out at once and can no longer log in to this account. "
            "You can invite them again later."
        ),
        action=f"{PREFIX}/team/members/{user_id}/remove",
        button="Remove",
        cancel=f"{PREFIX}/team",
    )


@router.post("/team/members/{user_id}/remove")
async def remove_member(
    request: Request, session: CurrentSession, _form: CheckedForm, user_id: str
) -> RedirectResponse:
    member = await _other_member(request, session, user_id)
    try:
        async with database(request).begin() as conn:
            removed = await users.remove_user(conn, session.account_id, member.id, session.user_id)
    except users.RemovalRefused:
        raise PageError(409, f"{member.email} was not removed", REMOVAL_REFUSED) from None
    if not removed:
        raise not_found("other member")
    flash = Flash("success", f"{member.email} was removed from the team.")
    return redirect(request, f"{PREFIX}/team", flash)


# -- Accepting an invitation --------------------------------------------------------------------


def _link_page(
    request: Request,
    purpose: str,
    token: str,
    target: links.LinkTarget | None,
    errors: dict[str, str] | None = None,
) -> HTMLResponse:
    if target is None:
        return anonymous_page(request, "link_unusable.html", {"message": LINK_UNUSABLE}, 404)
    context = {
        "purpose": purpose,
        "action": f"{links.PATHS[purpose]}{token}",
        "email": target.email,
        "errors": errors or {},
    }
    return anonymous_page(request, "choose_password.html", context, 422 if errors else 200)


def _switches_user(session: DashboardSession | None, target: links.LinkTarget) -> bool:
    """Whether using the link would replace the browser's session with another user's."""
    return session is not None and session.email != target.email


async def _switch_page(
    request: Request,
    session: DashboardSession,
    token: str,
    target: links.LinkTarget,
    status_code: int = 200,
) -> HTMLResponse:
    """Asks before a link logs this browser out of its session: only the log-out's own POST
    (with the session's CSRF token) ends it, and then the link's form shows."""
    async with database(request).read() as conn:
        current = await people.account_name(conn, session.account_id)
        inviting = await people.account_name(conn, target.account_id)
    you = f'You are logged in as {session.email}, in the account "{current}".'
    if target.purpose == links.INVITE:
        title = f'Join "{inviting}" as {target.email}?'
        wants = f'This link invites {target.email} to join the account "{inviting}".'
    else:
        title = f"Choose a new password for {target.email}?"
        wants = f"This link sets a new password for {target.email}."
    return confirm_page(
        request,
        title=title,
        message=f"{you} {wants} To use it, log out first; then choose the password.",
        action=f"{PREFIX}/logout",
        button=f"Log out {session.email} and continue",
        cancel=PREFIX,
        hidden={"next": f"{links.PATHS[target.purpose]}{token}"},
        status_code=status_code,
    )


async def _show_link(
    request: Request, session: DashboardSession | None, purpose: str, token: str
) -> HTMLResponse:
    async with database(request).read() as conn:
        target = await links.look_up(conn, purpose, token)
    if target is not None and session is not None and _switches_user(session, target):
        return await _switch_page(request, session, token, target)
    return _link_page(request, purpose, token, target)


@router.get("/join/{token}")
async def join_page(request: Request, session: OptionalSession, token: str) -> HTMLResponse:
    return await _show_link(request, session, links.INVITE, token)


@router.get("/reset/{token}")
async def reset_page(request: Request, session: OptionalSession, token: str) -> HTMLResponse:
    return await _show_link(request, session, links.RESET, token)


async def _choose_password(
    request: Request,
    session: DashboardSession | None,
    form: FormData,
    purpose: str,
    token: str,
) -> Response:
    """The POST of a link's form: checks the password, then uses the link up and sets it.
    A browser logged in as someone else is asked first, and nothing changes."""
    db = database(request)
    async with db.read() as conn:
        target = await links.look_up(conn, purpose, token)
    if target is None:
        return _link_page(request, purpose, token, None)
    if session is not None and _switches_user(session, target):
        return await _switch_page(request, session, token, target, status_code=409)
    password = str(form.get("password", ""))
    errors = await new_password_errors(
        password, str(form.get("password_confirm", "")), target.email
    )
    if errors:
        return _link_page(request, purpose, token, target, errors)
    password_hash = await users.hash_password(password)
    async with db.begin() as conn:
        used = await links.use(conn, purpose, token)
        user = None if used is None else await _apply(conn, used, password_hash)
        cookie_value = None if user is None else await create_session(conn, user.id)
    if cookie_value is None:
        return _link_page(request, purpose, token, None)
    text = (
        "Welcome to the team! Your password is set and you're logged in."
        if purpose == links.INVITE
        else "Your new password is set; every other session of yours has been logged out."
    )
    response = redirect(request, PREFIX, Flash("success", text))
    set_session_cookie(request, response, cookie_value)
    return response


async def _apply(
    conn: Connection, target: links.LinkTarget, password_hash: str
) -> users.User | None:
    """Sets the password the link was for; None when the link can no longer apply."""
    existing = await users.find_user(conn, target.email)
    if target.purpose == links.INVITE:
        if existing is not None:  # joined another account since the invitation
            return None
        return await users.create_user(conn, target.account_id, target.email, password_hash)
    if existing is None or existing.account_id != target.account_id:
        return None
    await users.replace_password(conn, existing.id, password_hash)
    return existing


@router.post("/join/{token}")
async def join(
    request: Request, session: OptionalSession, token: str, form: AnonymousForm
) -> Response:
    return await _choose_password(request, session, form, links.INVITE, token)


@router.post("/reset/{token}")
async def reset(
    request: Request, session: OptionalSession, token: str, form: AnonymousForm
) -> Response:
    return await _choose_password(request, session, form, links.RESET, token)


# -- Forgot password ----------------------------------------------------------------------------


@router.get("/forgot")
async def forgot_page(request: Request, session: OptionalSession) -> HTMLResponse:
    return anonymous_page(request, "forgot.html", {"errors": {}, "values": {}})


@router.post("/forgot")
async def forgot(request: Request, form: AnonymousForm) -> Response:
    raw_email = str(form.get("email", ""))
    try:
        email = users.canonical_email(raw_email)
    except ValueError as exc:
        errors = {"email": str(exc).removeprefix("email ").capitalize()}
        return anonymous_page(
            request, "forgot.html", {"errors": errors, "values": {"email": raw_email}}, 422
        )
    db = database(request)
    try:
        may_send = await throttle_of(request).count_reset(db, client_address(request), email)
    except Throttled as wait:
        raise too_many(
            "Too many reset requests", "Your network has asked for many reset mails.", wait
        ) from None
    settings = _settings(request)
    if may_send:
        spawn(request, _send_reset_mail(settings, db, email))
    answer = FORGOT_ANSWER if mail.is_configured(settings) else FORGOT_ANSWER_WITHOUT_MAIL
    return anonymous_page(request, "forgot.html", {"sent": answer, "errors": {}, "values": {}})


async def _send_reset_mail(settings: Settings, db: Database, email: str) -> None:
    """After the answer: its time must not tell whether the address has a login."""
    async with db.begin() as conn:
        message = await people.reset_mail(conn, settings, email)
    if message is None:
        return
    try:
        await _send(settings, message)
    except mail.MailError as exc:
        log.warning("password reset mail failed", extra={"error": str(exc)})
