"""CSRF protection for every state-changing form.

Signed-in forms carry the session's token (stored in its row). The sign-up and log-in forms,
which have no session yet, use a double-submit cookie: a random token in an HttpOnly cookie that
the form must echo. Either way a cross-site post can't know the token and gets a 403 page before
the handler does anything. (SameSite=Lax cookies are a second, independent line of defence.)
"""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Request, Response
from starlette.datastructures import FormData

from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import PREFIX, PageError

CSRF_FIELD = "csrf_token"
ANON_CSRF_COOKIE = "hl_csrf"


def csrf_refused() -> PageError:
    return PageError(
        403,
        "This form has expired",
        "The form was not sent from a current dashboard page, so nothing was changed. "
        "Go back, reload the page and try again.",
    )


def tokens_match(sent: object, expected: str | None) -> bool:
    if not isinstance(sent, str) or not sent or not expected:
        return False
    return secrets.compare_digest(sent.encode(), expected.encode())


async def session_form(request: Request, session: CurrentSession) -> FormData:
    """The posted form of a signed-in user, once its CSRF token is checked."""
    form = await request.form()
    if not tokens_match(form.get(CSRF_FIELD), session.csrf_token):
        raise csrf_refused()
    return form


async def anonymous_form(request: Request) -> FormData:
    """The posted sign-up / log-in form, once its double-submit token is checked."""
    form = await request.form()
    if not tokens_match(form.get(CSRF_FIELD), request.cookies.get(ANON_CSRF_COOKIE)):
        raise csrf_refused()
    return form


def prepare_anonymous_token(request: Request) -> str | None:
    """Expose the double-submit token to the page; returns it when it is new (to be set)."""
    existing = request.cookies.get(ANON_CSRF_COOKIE)
    token = existing or secrets.token_urlsafe(32)
    request.state.csrf_token = token
    return None if existing else token


def set_anonymous_cookie(request: Request, response: Response, token: str | None) -> None:
    if token is None:
        return
    response.set_cookie(
        ANON_CSRF_COOKIE,
        token,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=request.app.state.settings.secure_cookies,
    )


CheckedForm = Annotated[FormData, Depends(session_form)]
AnonymousForm = Annotated[FormData, Depends(anonymous_form)]
