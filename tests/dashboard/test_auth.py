"""Accounts: sign-up, log-in, log-out, cookies, throttling and CSRF, over HTTP in process."""

from __future__ import annotations

import time
from statistics import median

from fastapi import FastAPI
from markupsafe import escape
from sqlalchemy import select

from hookline.app import create_app
from hookline.dashboard.auth import LOGIN_FAILED
from hookline.dashboard.throttle import LoginThrottle
from hookline.storage.db import Database
from hookline.storage.models import dashboard_sessions, users
from tests.conftest import make_settings
from tests.dashboard.conftest import PASSWORD, Dash, csrf_from, new_dash, unique_email


async def test_pages_redirect_to_login_when_signed_out(dash: Dash) -> None:
    for path in ("/dashboard", "/dashboard/keys", "/dashboard/webhooks/wh-x", "/dashboard/events"):
        response = await dash.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/dashboard/login?next=")
    login = await dash.get("/dashboard/login")
    assert login.status_code == 200
    assert 'for="f-email"' in login.text and 'for="f-password"' in login.text


async def test_signup_creates_account_user_and_session(dash: Dash, db: Database) -> None:
    response = await dash.signup()
    assert response.headers["location"] == "/dashboard"
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("hl_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/dashboard" in cookie
    assert "Secure" not in cookie
    async with db.read() as conn:
        row = (await conn.execute(select(users).where(users.c.email == dash.email))).one()
    assert row.password_hash.startswith("$argon2id$")
    assert PASSWORD not in row.password_hash
    overview = await dash.get("/dashboard")
    assert overview.status_code == 200
    assert dash.email in overview.text
    assert "Welcome to hookline" in overview.text  # the flash after sign-up


async def test_signup_field_errors_and_duplicate_email(dash: Dash, app: FastAPI) -> None:
    bad = await dash.post(
        "/dashboard/signup",
        {"email": "not-an-email", "password": "short", "password_confirm": "short"},
        token_from="/dashboard/signup",
    )
    assert bad.status_code == 422
    assert 'id="e-email"' in bad.text and 'id="e-password"' in bad.text
    await dash.signup()
    again = await new_dash(app)
    async with again.http:
        taken = await again.post(
            "/dashboard/signup",
            {"email": dash.email.upper(), "password": PASSWORD, "password_confirm": PASSWORD},
            token_from="/dashboard/signup",
        )
    assert taken.status_code == 422
    assert "already exists" in taken.text


async def test_secure_cookies_behind_https(tmp_path: object) -> None:
    settings = make_settings(f"sqlite:///{tmp_path}/secure.db", secure_cookies=True)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        dash = await new_dash(app, base_url="https://hookline.test")
        async with dash.http:
            response = await dash.signup()
    cookies = response.headers.get_list("set-cookie")
    assert all("Secure" in c for c in cookies), cookies


async def test_wrong_password_and_unknown_email_look_the_same(
    signed_in: Dash, app: FastAPI
) -> None:
    email = signed_in.email
    visitor = await new_dash(app)
    async with visitor.http:
        wrong = await visitor.login(email, "not the password at all")
        unknown = await visitor.login(unique_email("nobody"), "not the password at all")
    assert wrong.status_code == unknown.status_code == 401
    message = str(escape(LOGIN_FAILED))
    assert message in wrong.text and message in unknown.text
    assert "hl_session" not in str(wrong.headers.get_list("set-cookie"))


async def _login_seconds(app: FastAPI, email: str) -> float:
    visitor = await new_dash(app)
    async with visitor.http:
        page = await visitor.get("/dashboard/login")
        token = csrf_from(page.text)
        started = time.perf_counter()
        response = await visitor.http.post(
            "/dashboard/login",
            data={"email": email, "password": "wrong password here", "csrf_token": token},
        )
        elapsed = time.perf_counter() - started
    assert response.status_code == 401
    return elapsed


async def test_unknown_email_costs_a_password_hash_too(signed_in: Dash, app: FastAPI) -> None:
    app.state.dashboard_throttle = LoginThrottle(per_account=100, per_address=100)
    known = median([await _login_seconds(app, signed_in.email) for _ in range(3)])
    unknown = median([await _login_seconds(app, unique_email("ghost")) for _ in range(3)])
    # Without the dummy hash an unknown email answers ~50x faster; with it, about as fast.
    assert unknown > known * 0.4, (known, unknown)


async def test_login_and_logout(signed_in: Dash, app: FastAPI, db: Database) -> None:
    email = signed_in.email
    person = await new_dash(app)
    async with person.http:
        response = await person.login(email.upper(), PASSWORD)  # emails are case-insensitive
        assert response.status_code == 303
        assert response.headers["location"] == "/dashboard"
        assert (await person.get("/dashboard/keys")).status_code == 200
        session_cookie = person.http.cookies["hl_session"]
        logout = await person.post("/dashboard/logout", {}, token_from="/dashboard")
        assert logout.status_code == 303
        assert logout.headers["location"] == "/dashboard/login"
        assert "logged out" in (await person.get("/dashboard/login")).text
        # The old cookie is dead on the server, not just forgotten by the browser.
        person.http.cookies.set("hl_session", session_cookie, path="/dashboard")
        assert (await person.get("/dashboard/keys")).status_code == 303
    async with db.read() as conn:
        remaining = (await conn.execute(select(dashboard_sessions.c.id))).all()
    assert all(r.id != session_cookie for r in remaining)


async def test_login_redirects_back_to_the_page_asked_for(signed_in: Dash, app: FastAPI) -> None:
    person = await new_dash(app)
    async with person.http:
        response = await person.post(
            "/dashboard/login",
            {"email": signed_in.email, "password": PASSWORD, "next": "/dashboard/events"},
            token_from="/dashboard/login?next=/dashboard/events",
        )
        assert response.headers["location"] == "/dashboard/events"
    person = await new_dash(app)
    async with person.http:
        evil = await person.post(
            "/dashboard/login",
            {"email": signed_in.email, "password": PASSWORD, "next": "https://evil.example/"},
            token_from="/dashboard/login",
        )
    assert evil.headers["location"] == "/dashboard"


async def test_throttle_per_account(signed_in: Dash, app: FastAPI) -> None:
    email = signed_in.email
    attacker = await new_dash(app)
    async with attacker.http:
        for _ in range(5):
            assert (await attacker.login(email, "guess guess guess")).status_code == 401
        blocked = await attacker.login(email, PASSWORD)  # even the right password
    assert blocked.status_code == 429
    assert int(blocked.headers["retry-after"]) > 0
    assert "Too many failed log-in attempts" in blocked.text
    assert "hl_session" not in str(blocked.headers.get_list("set-cookie"))


async def test_throttle_per_address(signed_in: Dash, app: FastAPI) -> None:
    app.state.dashboard_throttle = LoginThrottle(per_address=3)
    spray = await new_dash(app)
    async with spray.http:
        for _ in range(3):
            assert (await spray.login(unique_email("spray"), "password123")).status_code == 401
        # A different account from the same address is now refused too.
        assert (await spray.login(signed_in.email, PASSWORD)).status_code == 429


def test_throttle_window_expires() -> None:
    now = [1000.0]
    throttle = LoginThrottle(per_account=2, per_address=10, window=60, clock=lambda: now[0])
    throttle.record_failure("a@x", "1.2.3.4")
    throttle.record_failure("a@x", "1.2.3.4")
    assert throttle.retry_after("a@x", "1.2.3.4") == 60
    assert throttle.retry_after("b@x", "1.2.3.4") is None
    now[0] += 61
    assert throttle.retry_after("a@x", "1.2.3.4") is None


async def test_login_without_csrf_token_is_refused(signed_in: Dash, app: FastAPI) -> None:
    visitor = await new_dash(app)
    async with visitor.http:
        # No token at all, and a token the visitor's cookie doesn't match: both refused.
        bare = await visitor.http.post(
            "/dashboard/login", data={"email": signed_in.email, "password": PASSWORD}
        )
        await visitor.get("/dashboard/login")
        forged = await visitor.http.post(
            "/dashboard/login",
            data={"email": signed_in.email, "password": PASSWORD, "csrf_token": "forged"},
        )
    for response in (bare, forged):
        assert response.status_code == 403
        assert "text/html" in response.headers["content-type"]
        assert "hl_session" not in str(response.headers.get_list("set-cookie"))


async def test_signup_closed(tmp_path: object) -> None:
    app = create_app(make_settings(f"sqlite:///{tmp_path}/closed.db", signup="closed"))
    async with app.router.lifespan_context(app):
        visitor = await new_dash(app)
        async with visitor.http:
            page = await visitor.get("/dashboard/signup")
            token = csrf_from((await visitor.get("/dashboard/login")).text)
            post = await visitor.http.post(
                "/dashboard/signup",
                data={
                    "email": unique_email(),
                    "password": PASSWORD,
                    "password_confirm": PASSWORD,
                    "csrf_token": token,
                },
            )
            login = await visitor.get("/dashboard/login")
    assert page.status_code == 403 and "Sign-up is closed" in page.text
    assert post.status_code == 403
    assert "/dashboard/signup" not in login.text


async def test_unknown_dashboard_path_is_an_html_404(signed_in: Dash) -> None:
    response = await signed_in.get("/dashboard/no/such/page")
    assert response.status_code == 404
    assert "text/html" in response.headers["content-type"]
    assert signed_in.email in response.text  # still signed in: navigation kept


async def test_security_headers_and_self_hosted_assets(signed_in: Dash) -> None:
    page = await signed_in.get("/dashboard")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    # Nothing is loaded from another origin: the page works offline.
    assert 'src="http' not in page.text and 'href="http' not in page.text.replace(
        'href="http://hookline.test', ""
    )
    for asset in ("/dashboard/static/app.css", "/dashboard/static/app.js"):
        assert (await signed_in.get(asset)).status_code == 200
