"""Sign up, log in, log out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

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
from hookline.dashboard.throttle import Throttle, Throttled
from hookline.dashboard.web import PREFIX, Flash, PageError, database, redirect, render
from hookline.storage.connector import IntegrityError

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


def anonymous_page(
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
    return anonymous_page(
        request, "login.html", {"next": safe_next(next), "signup_open": _signup_open(request)}
    )


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def throttle_of(request: Request) -> Throttle:
    throttle: Throttle = request.app.state.dashboard_throttle
    return throttle


def too_many(title: str, message: str, wait: Throttled) -> PageError:
    minutes = max(1, round(wait.retry_after / 60))
    return PageError(
        429,
        title,
        f"{message} Try again in about {minutes} minute{'s' if minutes != 1 else ''}.",
        headers={"Retry-After": str(wait.retry_after)},
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
    db = database(request)
    try:
        attempt = await throttle_of(request).start_login(db, client_address(request), email)
    except Throttled as wait:
        raise too_many(
            "Too many failed log-in attempts",
            "For your account's safety, log-in from your network is paused.",
            wait,
        ) from None
    async with db.read() as conn:
        user = await users.find_user(conn, email)
    if not await users.verify_password(user.password_hash if user else None, password):
        context = {
            "error": LOGIN_FAILED,
            "email": raw_email,
            "next": next_path,
            "signup_open": _signup_open(request),
        }
        return anonymous_page(request, "login.html", context, status_code=401)
    assert user is not None
    await throttle_of(request).login_succeeded(db, attempt)
    async with db.begin() as conn:
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
        return anonymous_page(request, "signup.html", {"closed": True}, status_code=403)
    return anonymous_page(request, "signup.html", {"errors": {}, "values": {}})


PASSWORDS_DIFFER = "The two passwords differ; type the same one twice."


async def new_password_errors(password: str, confirm: str, email: str) -> dict[str, str]:
    """The password fields' errors (sign-up, invitation, reset); empty when they will do."""
    problem = await users.password_problem(password, email)
    # Both at once: every mistake is shown on one round trip.
    return {
        **({"password": problem} if problem else {}),
        **({"password_confirm": PASSWORDS_DIFFER} if password != confirm else {}),
    }


async def _signup_errors(raw_email: str, password: str, confirm: str) -> tuple[str, dict[str, str]]:
    errors: dict[str, str] = {}
    email = ""
    try:
        email = users.canonical_email(raw_email)
    except ValueError as exc:
        errors["email"] = str(exc).removeprefix("email ").capitalize()
    return email, errors | await new_password_errors(password, confirm, email)


# Sign-up logs the new user in at once, so it cannot hide that an e-mail is taken; it reveals no
# more than that, only for a request that is otherwise valid, and at the sign-up throttle's pace
# (docs/security.md, "Sign-up and e-mail enumeration").
EMAIL_TAKEN = "An account with this email already exists. Log in, or reset its password."


@router.post("/signup")
async def signup(request: Request, form: AnonymousForm) -> Response:
    if not _signup_open(request):
        raise PageError(
            403, "Sign-up is closed", "Ask the operator of this service for an account."
        )
    db = database(request)
    try:
        # Before anything that costs: the zxcvbn estimate, the look-up and the Argon2 hash.
        await throttle_of(request).count_signup(db, client_address(request))
    except Throttled as wait:
        raise too_many(
            "Too many sign-ups", "Your network has tried to sign up many times.", wait
        ) from None
    raw_email = str(form.get("email", ""))
    password = str(form.get("password", ""))
    email, errors = await _signup_errors(raw_email, password, str(form.get("password_confirm", "")))
    if not errors:
        # The cheap check first: a taken e-mail never costs a hash.
        async with db.read() as conn:
            if await users.find_user(conn, email) is not None:
                errors["email"] = EMAIL_TAKEN
    if not errors:
        password_hash = await users.hash_password(password)
        try:
            async with db.begin() as conn:
                user = await users.create_user_with_account(conn, email, password_hash)
                cookie_value = await create_session(conn, user.id)
        except IntegrityError:  # the same e-mail signed up concurrently
            errors["email"] = EMAIL_TAKEN
    if errors:
        context = {"errors": errors, "values": {"email": raw_email}}
        return anonymous_page(request, "signup.html", context, status_code=422)
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
async def logout(request: Request, session: CurrentSession, form: CheckedForm) -> RedirectResponse:
    """Ends the session; ``next`` (a dashboard path) is where to go then, the log-in page else."""
    async with database(request).begin() as conn:
        await end_session(conn, session.id)
    target = safe_next(form.get("next")) or f"{PREFIX}/login"
    response = redirect(request, target, Flash("info", "You're logged out."))
    clear_session_cookie(response)
    return response
