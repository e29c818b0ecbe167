"""CSRF protection for every state-changing form.

Signed-in forms carry the session's token (stored in its row). The sign-up, log-in, forgot and
link forms, which have no session yet, carry a token bound to the browser: a random nonce in an
HttpOnly cookie, and in the form the server's signature of that nonce (an HMAC keyed from
``HOOKLINE_SECRET_KEY``). A bare double submit would accept any cookie and field that match,
so whoever can plant a cookie (a sibling subdomain, a plain-HTTP page) could log a victim in to
an account of theirs; a field the server did not sign is refused. Either way a cross-site post
can't know the token and gets a 403 page before the handler does anything. (SameSite=Lax
cookies are a second, independent line of defence.)
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request, Response
from starlette.datastructures import FormData

from hookline.crypto import SecretBox
from hookline.dashboard.links import has_token_shape
from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import PREFIX, PageError

CSRF_FIELD = "csrf_token"
ANON_CSRF_COOKIE = "hl_csrf"
_SIGNED_FOR = "dashboard anonymous form"


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


async def session_form(request: Request, session: CurrentSession) -> AsyncIterator[FormData]:
    """The posted form of a signed-in user, once its CSRF token is checked; its uploaded files
    closed once the request is answered, or refused."""
    form = await request.form()
    try:
        if not tokens_match(form.get(CSRF_FIELD), session.csrf_token):
            raise csrf_refused()
        yield form
    finally:
        await form.close()


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


def _nonce_of(request: Request) -> str | None:
    """The browser's nonce from its cookie, when the cookie holds one."""
    nonce = request.cookies.get(ANON_CSRF_COOKIE)
    return nonce if nonce is not None and has_token_shape(nonce) else None


async def anonymous_form(request: Request) -> FormData:
    """The posted form of a visitor without a session, once its signed token is checked."""
    form = await request.form()
    nonce = _nonce_of(request)
    expected = None if nonce is None else _box(request).sign(_SIGNED_FOR, nonce)
    if not tokens_match(form.get(CSRF_FIELD), expected):
        raise csrf_refused()
    return form


def prepare_anonymous_token(request: Request) -> str | None:
    """Expose the form's signed token to the page; returns the nonce when it is new (to be set
    as the cookie)."""
    existing = _nonce_of(request)
    nonce = existing or secrets.token_urlsafe(32)
    request.state.csrf_token = _box(request).sign(_SIGNED_FOR, nonce)
    return None if existing else nonce


def set_anonymous_cookie(request: Request, response: Response, nonce: str | None) -> None:
    if nonce is None:
        return
    response.set_cookie(
        ANON_CSRF_COOKIE,
        nonce,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=request.app.state.settings.secure_cookies,
    )


CheckedForm = Annotated[FormData, Depends(session_form)]
AnonymousForm = Annotated[FormData, Depends(anonymous_form)]
