"""Rendering for the dashboard: Jinja2 pages, HTML error pages, flash messages, redirects.

Every page goes through :func:`render`, which adds the signed-in user, the CSRF token and the
pending flash message to the template context, and the security headers to the response.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, select_autoescape

from hookline import __version__
from hookline.crypto import SecretBox
from hookline.storage.db import Database

PREFIX = "/dashboard"
FLASH_COOKIE = "hl_flash"
# A flash lives until the next page view; the expiry only bounds a flash nobody came back for.
FLASH_TTL_SECONDS = 120

# Everything is self-hosted: no inline script, no third-party origin, no framing.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

templates = Jinja2Templates(
    env=Environment(
        loader=PackageLoader("hookline.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
)
templates.env.globals["version"] = __version__
templates.env.globals["prefix"] = PREFIX


class PageError(Exception):
    """Ends a request with an HTML error page (installed as an exception handler)."""

    def __init__(
        self,
        status_code: int,
        title: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.title = title
        self.message = message
        self.headers = headers or {}


def not_found(what: str = "page") -> PageError:
    # The same answer for "doesn't exist" and "belongs to another account": nothing leaks.
    return PageError(404, "Not found", f"There is no such {what} in your account.")


class LoginRequired(Exception):
    """Raised by the session dependency; answered with a redirect to the login page."""


@dataclass(frozen=True, slots=True)
class Flash:
    kind: str  # "success" | "error" | "info"
    text: str
    # A secret shown exactly once (a new API key or webhook signing secret).
    secret: str | None = None
    reveal_label: str | None = None


def _secret_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


def set_flash(request: Request, response: Response, flash: Flash) -> None:
    """Store ``flash`` for the next page in an encrypted (so also signed), short-lived cookie.

    Encrypted, not only signed, because it may carry a new secret through the redirect (so a
    reload of the result page never shows it twice and the secret never appears in a URL).
    """
    payload = {
        "k": flash.kind,
        "t": flash.text,
        "s": flash.secret,
        "l": flash.reveal_label,
        "e": int(time.time()) + FLASH_TTL_SECONDS,
    }
    token = _secret_box(request).encrypt(orjson.dumps(payload).decode())
    settings = request.app.state.settings
    response.set_cookie(
        FLASH_COOKIE,
        token,
        max_age=FLASH_TTL_SECONDS,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=settings.secure_cookies,
    )


def read_flash(request: Request) -> Flash | None:
    token = request.cookies.get(FLASH_COOKIE)
    if not token:
        return None
    try:
        payload = orjson.loads(_secret_box(request).decrypt(token))
    except (ValueError, orjson.JSONDecodeError):
        return None
    if not isinstance(payload, dict) or payload.get("e", 0) < time.time():
        return None
    return Flash(
        kind=str(payload.get("k", "info")),
        text=str(payload.get("t", "")),
        secret=payload.get("s"),
        reveal_label=payload.get("l"),
    )


def redirect(
    request: Request, path: str, flash: Flash | None = None, *, status_code: int = 303
) -> RedirectResponse:
    """Post/redirect/get: every successful form post ends here, usually with a flash."""
    response = RedirectResponse(path, status_code=status_code)
    if flash is not None:
        set_flash(request, response, flash)
    _secure(response)
    return response


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    session = getattr(request.state, "dashboard_session", None)
    flash = read_flash(request)
    full_context: dict[str, Any] = {
        "session": session,
        "csrf_token": getattr(request.state, "csrf_token", ""),
        "flash": flash,
        "path": request.url.path,
        **(context or {}),
    }
    response = templates.TemplateResponse(
        request, template, full_context, status_code=status_code, headers=headers
    )
    if FLASH_COOKIE in request.cookies:
        response.delete_cookie(FLASH_COOKIE, path=PREFIX)
    _secure(response)
    return response


def _secure(response: Response) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


def error_page(request: Request, error: PageError) -> HTMLResponse:
    return render(
        request,
        "error.html",
        {"title": error.title, "message": error.message, "status_code": error.status_code},
        status_code=error.status_code,
        headers=error.headers,
    )


def database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def confirm_page(
    request: Request,
    *,
    title: str,
    message: str,
    action: str,
    button: str,
    cancel: str,
    hidden: dict[str, str] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """The confirmation step before anything that can't be undone (works without JavaScript);
    ``hidden`` fields go with the POST."""
    context = {
        "title": title,
        "message": message,
        "action": action,
        "button": button,
        "cancel": cancel,
        "hidden": hidden or {},
    }
    return render(request, "confirm.html", context, status_code=status_code)
