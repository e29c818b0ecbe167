"""Sign up, log in, log out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.exc import IntegrityError

from hookline.dashboard import users
from hookline.dashboard.csrf import (
    AnonymousForm,
    CheckedForm,
    prepare_anonymous_token,
    set_anonymous_cookie,
)
from hookline.dashboard.sessions import (
    CurrentSession,
    DashboardSession,
    clear_session_cookie,
    create_session,
    end_session,
    optional_session,
    set_session_cookie,
)
from hookline.dashboard.throttle import LoginThrottle
from hookline.dashboard.web import PREFIX, Flash, PageError, database, redirect, render

router = APIRouter(prefix=PREFIX)

# One message for an unknown email and a wrong password: the form must not reveal who has an
# account (and users.verify_password makes both take the same time).
LOGIN_FAILED = "That email and password don't match an account. Check both and try again."

OptionalSession = Annotated[DashboardSession | None, Depends(optional_session)]


def safe_next(value: object) -> str | None:
    """Only a path inside the dashboard may be a redirect target (no open redirect)."""
    if not isinstance(value, str) or not value.startswith(PREFIX):
        return None
    if value.startswith("//") or "\\" in value or "\n" in value or "\r" in value:
        return None
    return value


def _anonymous_page(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    new_token = prepare_anonymous_token(request)
    response = render(request, template, context, status_code=status_code)
    set_anonymous_cookie(request, response, new_token)
    return response


def _signup_open(request: Request) -> bool:
    return bool(request.app.state.settings.signup == "open")


@router.get("/login")
async def login_page(
    request: Request, session: OptionalSession, next: str | None = None
) -> Response:
    if session is not None:
        return redirect(request, safe_next(next) or PREFIX)
    return _anonymous_page(
        request, "login.html", {"next": safe_next(next), "signup_open": _signup_open(request)}
    )


@router.post("/login")
async def login(request: Request, form: AnonymousForm) -> Response:
    raw_email = str(form.get("email", ""))
    password = str(form.get("password", ""))
    next_path = safe_next(form.get("next"))
    try:
        email = users.canonical_email(raw_email)
    except ValueError:
        email = raw_email.strip().lower()
    address = request.client.host if request.client else "unknown"
    throttle: LoginThrottle = request.app.state.dashboard_throttle
    wait = throttle.retry_after(email, address)
    if wait is not None:
        minutes = max(1, round(wait / 60))
        raise PageError(
            429,
            "Too many failed log-in attempts",
            f"For your account's safety, log-in is paused. Try again in about {minutes} "
            f"minute{'s' if minutes != 1 else ''}.",
            headers={"Retry-After": str(wait)},
        )
    async with database(request).read() as conn:
        user = await users.find_user(conn, email)
    if not await users.verify_password(user.password_hash if user else None, password):
        throttle.record_failure(email, address)
        context = {
            "error": LOGIN_FAILED,
            "email": raw_email,
            "next": next_path,
            "signup_open": _signup_open(request),
        }
        return _anonymous_page(request, "login.html", context, status_code=401)
    assert user is not None
    throttle.record_success(email)
    async with database(request).begin() as conn:
        if users.needs_rehash(user.password_hash):
            await users.replace_hash(conn, user.id, await users.hash_password(password))
        cookie_value = await create_session(conn, user.id)
    response = redirect(request, next_path or PREFIX, Flash("success", "You're logged in."))
    set_session_cookie(request, response, cookie_value)
    return response


@router.get("/signup")
async def signup_page(request: Request, session: OptionalSession) -> Response:
    if session is not None:
        return redirect(request, PREFIX)
    if not _signup_open(request):
        return _anonymous_page(request, "signup.html", {"closed": True}, status_code=403)
    return _anonymous_page(request, "signup.html", {"errors": {}, "values": {}})


def _signup_errors(raw_email: str, password: str, confirm: str) -> tuple[str, dict[str, str]]:
    errors: dict[str, str] = {}
    email = ""
    try:
        email = users.canonical_email(raw_email)
    except ValueError as exc:
        errors["email"] = str(exc).removeprefix("email ").capitalize()
    problem = users.password_problem(password)
    if problem:
        errors["password"] = problem
    elif password != confirm:
        errors["password_confirm"] = "The two passwords differ; type the same one twice."  # noqa: S105
    return email, errors


@router.post("/signup")
async def signup(request: Request, form: AnonymousForm) -> Response:
    if not _signup_open(request):
        raise PageError(
            403, "Sign-up is closed", "Ask the operator of this service for an account."
        )
    raw_email = str(form.get("email", ""))
    password = str(form.get("password", ""))
    email, errors = _signup_errors(raw_email, password, str(form.get("password_confirm", "")))
    if not errors:
        password_hash = await users.hash_password(password)
        try:
            async with database(request).begin() as conn:
                if await users.find_user(conn, email) is not None:
                    raise IntegrityError("users.email", None, ValueError("taken"))
                user = await users.create_user_with_account(conn, email, password_hash)
                cookie_value = await create_session(conn, user.id)
        except IntegrityError:
            errors["email"] = "An account with this email already exists. Log in instead."
    if errors:
        context = {"errors": errors, "values": {"email": raw_email}}
        return _anonymous_page(request, "signup.html", context, status_code=422)
    response = redirect(
        request,
        PREFIX,
        Flash(
            "success", "Welcome to hookline! Your account is ready: start by creating an API key."
        ),
    )
    set_session_cookie(request, response, cookie_value)
    return response


@router.post("/logout")
async def logout(request: Request, session: CurrentSession, _form: CheckedForm) -> RedirectResponse:
    async with database(request).begin() as conn:
        await end_session(conn, session.id)
    response = redirect(request, f"{PREFIX}/login", Flash("info", "You're logged out."))
    clear_session_cookie(response)
    return response
