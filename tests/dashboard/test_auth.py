"""Accounts: sign-up, log-in, log-out, cookies, throttling and CSRF, over HTTP in process."""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from datetime import timedelta
from statistics import median

import pytest
from fastapi import FastAPI
from markupsafe import escape
from sqlalchemy import select

from hookline.app import create_app
from hookline.crypto import SecretBox
from hookline.dashboard import users as people
from hookline.dashboard.auth import LOGIN_FAILED
from hookline.dashboard.csrf import ANON_CSRF_COOKIE
from hookline.dashboard.sessions import SESSION_COOKIE
from hookline.dashboard.throttle import Limit, Throttle, Throttled, ThrottlePolicy
from hookline.storage.db import Database
from hookline.storage.models import dashboard_sessions, users
from hookline.timeutil import utcnow
from tests.conftest import make_settings
from tests.dashboard.conftest import (
    PASSWORD,
    Dash,
    csrf_from,
    new_dash,
    unique_address,
    unique_email,
)


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
        {"email": "not-an-email", "password": "short", "password_confirm": "shorter"},
        token_from="/dashboard/signup",
    )
    assert bad.status_code == 422
    # Every mistake at once, not one per round trip.
    for field in ("email", "password", "password_confirm"):
        assert f'id="e-{field}"' in bad.text, field
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


@pytest.mark.parametrize(
    ("password", "email_label"),
    [("password1234", ""), ("1234567890", ""), ("zephyrinequill1", "zephyrine.quill")],
)
async def test_signup_refuses_guessable_passwords_with_advice(
    dash: Dash, password: str, email_label: str
) -> None:
    # A password made of the e-mail's own words is refused too.
    email = f"{email_label}@{uuid.uuid4().hex}.example.com" if email_label else unique_email()
    refused = await dash.post(
        "/dashboard/signup",
        {"email": email, "password": password, "password_confirm": password},
        token_from="/dashboard/signup",
    )
    assert refused.status_code == 422
    assert "too easy to guess" in refused.text and 'id="e-password"' in refused.text
    assert "hl_session" not in str(refused.headers.get_list("set-cookie"))


async def test_password_advice_names_what_is_wrong() -> None:
    assert await people.password_problem("short") == "Use at least 10 characters."
    advice = await people.password_problem("password1234")
    assert advice is not None and "common password" in advice
    assert await people.password_problem("x" * 2000) == "Use at most 1024 characters."
    assert await people.password_problem(PASSWORD) is None
    # zxcvbn looks at 72 characters at most (its cost grows with length): a long good one passes.
    assert await people.password_problem(PASSWORD * 30) is None


async def test_signup_is_throttled_per_address(dash: Dash, app: FastAPI) -> None:
    app.state.dashboard_throttle = Throttle(
        ThrottlePolicy(signup_per_address=Limit(3, timedelta(hours=1)))
    )
    address = unique_address()
    for expected in (422, 422, 303, 429):
        visitor = await new_dash(app, address=address)
        async with visitor.http:
            password = PASSWORD if expected == 303 else "too short"
            answer = await visitor.post(
                "/dashboard/signup",
                {"email": unique_email(), "password": password, "password_confirm": password},
                token_from="/dashboard/signup",
            )
        assert answer.status_code == expected
    assert int(answer.headers["retry-after"]) > 0 and "Too many sign-ups" in answer.text
    elsewhere = await new_dash(app)
    async with elsewhere.http:
        await elsewhere.signup()


async def test_signup_checks_the_cheap_things_before_the_password_hash(
    dash: Dash, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[str] = []
    real_hash = people.hash_password

    async def counting_hash(password: str) -> str:
        hashed.append(password)
        return await real_hash(password)

    monkeypatch.setattr(people, "hash_password", counting_hash)
    await dash.signup()
    assert len(hashed) == 1
    cases = [
        ("not-an-email", PASSWORD, PASSWORD),
        (unique_email(), "password1234", "password1234"),
        (unique_email(), PASSWORD, PASSWORD + " typo"),
        (dash.email, PASSWORD, PASSWORD),  # taken: found before hashing
    ]
    for email, password, confirm in cases:
        visitor = await new_dash(app)
        async with visitor.http:
            answer = await visitor.post(
                "/dashboard/signup",
                {"email": email, "password": password, "password_confirm": confirm},
                token_from="/dashboard/signup",
            )
        assert answer.status_code == 422
    assert len(hashed) == 1


async def test_a_taken_email_shows_only_on_an_otherwise_valid_signup(
    signed_in: Dash, app: FastAPI
) -> None:
    visitor = await new_dash(app)
    async with visitor.http:
        weak = await visitor.post(
            "/dashboard/signup",
            {"email": signed_in.email, "password": "short", "password_confirm": "short"},
            token_from="/dashboard/signup",
        )
        fresh = await visitor.post(
            "/dashboard/signup",
            {"email": unique_email(), "password": "short", "password_confirm": "short"},
            token_from="/dashboard/signup",
        )
    assert weak.status_code == fresh.status_code == 422
    assert "already exists" not in weak.text
    assert 'id="e-email"' not in weak.text and 'id="e-email"' not in fresh.text


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


async def test_five_wrong_passwords_pause_that_address_not_the_owner(
    signed_in: Dash, app: FastAPI
) -> None:
    email = signed_in.email
    attacker = await new_dash(app)
    async with attacker.http:
        for _ in range(5):
            assert (await attacker.login(email, "guess guess guess")).status_code == 401
        blocked = await attacker.login(email, PASSWORD)  # even the right password
    assert blocked.status_code == 429
    assert 0 < int(blocked.headers["retry-after"]) <= 15 * 60
    assert "Too many failed log-in attempts" in blocked.text
    assert "hl_session" not in str(blocked.headers.get_list("set-cookie"))
    owner = await new_dash(app)  # another address, which has not failed
    async with owner.http:
        assert (await owner.login(email, PASSWORD)).status_code == 303


async def test_the_owner_is_not_locked_out_by_many_addresses(signed_in: Dash, app: FastAPI) -> None:
    app.state.dashboard_throttle = Throttle(
        ThrottlePolicy(login_per_email=Limit(3, timedelta(minutes=15)))
    )
    email = signed_in.email
    addresses = [unique_address() for _ in range(4)]
    for address in addresses:
        attacker = await new_dash(app, address=address)
        async with attacker.http:
            assert (await attacker.login(email, "guess guess guess")).status_code == 401
    # The e-mail is under attack from many addresses: one that failed for it is paused...
    attacker = await new_dash(app, address=addresses[0])
    async with attacker.http:
        assert (await attacker.login(email, PASSWORD)).status_code == 429
    # ...one that never failed is not.
    owner = await new_dash(app)
    async with owner.http:
        assert (await owner.login(email, PASSWORD)).status_code == 303


async def test_a_right_password_clears_that_address_failures(signed_in: Dash, app: FastAPI) -> None:
    person = await new_dash(app)
    async with person.http:
        for _ in range(4):
            assert (await person.login(signed_in.email, "typo typo typo")).status_code == 401
        assert (await person.login(signed_in.email, PASSWORD)).status_code == 303
        await person.http.post("/dashboard/logout")  # no token: refused, still signed in
        person.http.cookies.delete("hl_session", path="/dashboard")
        for _ in range(4):  # four more mistakes are allowed again, not one
            assert (await person.login(signed_in.email, "typo typo typo")).status_code == 401
        assert (await person.login(signed_in.email, PASSWORD)).status_code == 303


async def test_throttle_per_address(signed_in: Dash, app: FastAPI) -> None:
    app.state.dashboard_throttle = Throttle(
        ThrottlePolicy(login_per_address=Limit(3, timedelta(minutes=15)))
    )
    spray = await new_dash(app)
    async with spray.http:
        for _ in range(3):
            assert (await spray.login(unique_email("spray"), "password123")).status_code == 401
        # A different account from the same address is now refused too.
        assert (await spray.login(signed_in.email, PASSWORD)).status_code == 429


async def test_throttle_window_expires(db: Database) -> None:
    now = [utcnow()]
    policy = ThrottlePolicy(login_per_pair=Limit(2, timedelta(seconds=60)))
    throttle = Throttle(policy, clock=lambda: now[0])
    address, email = unique_address(), unique_email()
    for _ in range(2):
        await throttle.start_login(db, address, email)  # counted as failures
    with pytest.raises(Throttled) as refused:
        await throttle.start_login(db, address, email)
    assert refused.value.retry_after == 60
    await throttle.start_login(db, address, unique_email())  # another e-mail: allowed
    now[0] += timedelta(seconds=61)
    await throttle.start_login(db, address, email)


async def test_the_throttle_holds_across_processes(signed_in: Dash, app: FastAPI) -> None:
    """Two Throttle objects are two processes: they share the counts through the database."""
    email = signed_in.email
    address = unique_address()
    for _ in range(5):
        app.state.dashboard_throttle = Throttle()  # a fresh "process" for every attempt
        attacker = await new_dash(app, address=address)
        async with attacker.http:
            assert (await attacker.login(email, "guess guess guess")).status_code == 401
    app.state.dashboard_throttle = Throttle()
    attacker = await new_dash(app, address=address)
    async with attacker.http:
        assert (await attacker.login(email, PASSWORD)).status_code == 429


async def test_concurrent_guesses_never_exceed_the_limit(
    signed_in: Dash, app: FastAPI, db: Database
) -> None:
    address = unique_address()
    clients = [await new_dash(app, address=address) for _ in range(12)]
    pages = [await c.get("/dashboard/login") for c in clients]
    answers = await asyncio.gather(
        *(
            c.http.post(
                "/dashboard/login",
                data={
                    "email": signed_in.email,
                    "password": "guess guess guess",
                    "csrf_token": csrf_from(page.text),
                },
            )
            for c, page in zip(clients, pages, strict=True)
        )
    )
    for c in clients:
        await c.http.aclose()
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {401, 429}
    assert statuses.count(401) <= 5, statuses  # at most five guesses were checked


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


async def test_an_anonymous_token_the_server_did_not_sign_is_refused(
    signed_in: Dash, app: FastAPI, db: Database
) -> None:
    """Login CSRF where cookies can be planted: a cookie and a field the attacker picks (the
    same value, as a bare double submit wants, or a signature under another key) are refused;
    the page's own pair works."""
    nonce = secrets.token_urlsafe(32)
    foreign = SecretBox("another server's key").sign("dashboard anonymous form", nonce)
    signup_form = {"email": unique_email("planted"), "password": PASSWORD}
    signup_form["password_confirm"] = PASSWORD
    login_form = {"email": signed_in.email, "password": PASSWORD}
    for path, form in (("/dashboard/login", login_form), ("/dashboard/signup", signup_form)):
        for field in (nonce, foreign):
            victim = await new_dash(app)
            async with victim.http:
                victim.http.cookies.set(ANON_CSRF_COOKIE, nonce)
                refused = await victim.http.post(path, data={**form, "csrf_token": field})
            assert refused.status_code == 403, (path, field)
            assert "This form has expired" in refused.text
            assert SESSION_COOKIE not in str(refused.headers.get_list("set-cookie"))
    async with db.read() as conn:
        assert await people.find_user(conn, signup_form["email"]) is None
    # The real flow: the page's token is a signature of the cookie's nonce, not the nonce.
    visitor = await new_dash(app)
    async with visitor.http:
        page = await visitor.get("/dashboard/login")
        assert csrf_from(page.text) != visitor.http.cookies[ANON_CSRF_COOKIE]
        assert (await visitor.login(signed_in.email)).status_code == 303


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
