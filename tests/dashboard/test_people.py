"""The people of an account: the Team page, invitations and password resets, end to end over
HTTP with a real SMTP server catching the mails and the tests following their links."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from markupsafe import escape
from sqlalchemy import select, update

from hookline.app import create_app
from hookline.dashboard import links
from hookline.dashboard import users as users_domain
from hookline.dashboard.pages_people import (
    FORGOT_ANSWER,
    FORGOT_ANSWER_WITHOUT_MAIL,
    LINK_UNUSABLE,
    REMOVAL_REFUSED,
)
from hookline.dashboard.sessions import SESSION_COOKIE, create_session
from hookline.dashboard.throttle import Limit, Throttle, ThrottlePolicy
from hookline.domain import keys
from hookline.mail import NOT_CONFIGURED_NOTICE
from hookline.storage.db import Database
from hookline.storage.models import login_tokens, users
from hookline.timeutil import utcnow
from tests.conftest import make_database_url, make_settings
from tests.dashboard.conftest import (
    PASSWORD,
    Dash,
    csrf_from,
    new_dash,
    unique_address,
    unique_email,
)
from tests.support.smtp import SmtpServer, running_smtp
from tests.support.waiting import eventually

SENDER = "hookline <noreply@hookline.test>"
BASE = "http://hookline.test"
NEW_PASSWORD = "violet kettle marching sideways"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with running_smtp() as server:
        yield server


@pytest.fixture
async def mail_app(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, smtp: SmtpServer
) -> AsyncIterator[FastAPI]:
    """An app whose mail goes to ``smtp``, on a fresh database of the session's backend."""
    settings = make_settings(
        make_database_url(backend, tmp_path, request),
        smtp_url=smtp.url,
        mail_from=SENDER,
        public_url=BASE,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def person(app: FastAPI) -> Dash:
    return await new_dash(app, base_url=BASE)


def path_of(link: str) -> str:
    assert link.startswith(BASE), link
    return link.removeprefix(BASE)


async def the_link(smtp: SmtpServer, email: str, count: int = 1) -> str:
    received = (await smtp.catcher.wait_for(email, count))[count - 1]
    (link,) = received.links
    return link


async def choose_password(
    dash: Dash, link: str, password: str, confirm: str | None = None
) -> httpx.Response:
    path = path_of(link)
    return await dash.post(
        path,
        {"password": password, "password_confirm": confirm or password},
        token_from=path,
    )


async def invite(dash: Dash, email: str) -> httpx.Response:
    return await dash.post("/dashboard/team/invite", {"email": email}, token_from="/dashboard/team")


async def post_anyway(dash: Dash, path: str, password: str) -> httpx.Response:
    """Posts a password to a link's path with a valid CSRF token (from another form)."""
    page = await dash.get("/dashboard/forgot")
    return await dash.http.post(
        path,
        data={
            "password": password,
            "password_confirm": password,
            "csrf_token": csrf_from(page.text),
        },
    )


async def test_invite_from_the_team_page_then_join_through_the_mail(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner = await person(mail_app)
    teammate_email = unique_email("teammate")
    async with owner.http:
        await owner.signup()
        team = await owner.get("/dashboard/team")
        assert team.status_code == 200
        assert owner.email in team.text and "you</span>" in team.text
        assert str(escape(NOT_CONFIGURED_NOTICE)) not in team.text
        await owner.create_key("shared key")
        sent = await owner.post(
            "/dashboard/team/invite",
            {"email": teammate_email.upper()},
            token_from="/dashboard/team",
        )
        assert sent.status_code == 303
        team = await owner.get("/dashboard/team")
        assert f"Invitation sent to {teammate_email}" in team.text
        assert "Invitations not yet accepted" in team.text and teammate_email in team.text

    (mail,) = await smtp.catcher.wait_for(teammate_email)
    assert mail.message["From"] == SENDER
    assert "invited" in mail.message["Subject"]
    link = await the_link(smtp, teammate_email)
    assert link.startswith(f"{BASE}/dashboard/join/")

    teammate = await person(mail_app)
    async with teammate.http:
        page = await teammate.get(path_of(link))
        assert page.status_code == 200 and teammate_email in page.text
        weak = await choose_password(teammate, link, "password1234")
        assert weak.status_code == 422 and "too easy to guess" in weak.text
        joined = await choose_password(teammate, link, NEW_PASSWORD)
        assert joined.status_code == 303
        overview = await teammate.get("/dashboard")
        assert teammate_email in overview.text and "Welcome to the team" in overview.text
        keys_page = await teammate.get("/dashboard/keys")
        assert "shared key" in keys_page.text  # the same account as the owner
        team = await teammate.get("/dashboard/team")
        assert owner.email in team.text and teammate_email in team.text
        assert "Invitations not yet accepted" not in team.text

    again = await person(mail_app)
    async with again.http:
        reused = await again.get(path_of(link))
        assert reused.status_code == 404 and "can't be used" in reused.text
        assert (await again.login(teammate_email, NEW_PASSWORD)).status_code == 303


async def test_reset_by_mail_sets_a_new_password_and_ends_old_sessions(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
        assert (await owner.get("/dashboard")).status_code == 200
        visitor = await person(mail_app)
        async with visitor.http:
            login = await visitor.get("/dashboard/login")
            assert 'href="/dashboard/forgot"' in login.text
            asked = await visitor.post(
                "/dashboard/forgot", {"email": owner.email}, token_from="/dashboard/forgot"
            )
            assert asked.status_code == 200 and FORGOT_ANSWER in asked.text
            link = await the_link(smtp, owner.email)
            assert link.startswith(f"{BASE}/dashboard/reset/")
            differ = await choose_password(visitor, link, NEW_PASSWORD, "something else entirely")
            assert differ.status_code == 422 and "differ" in differ.text
            done = await choose_password(visitor, link, NEW_PASSWORD)
            assert done.status_code == 303
            assert "Your new password is set" in (await visitor.get("/dashboard")).text
        # The session opened with the old password has ended.
        assert (await owner.get("/dashboard")).status_code == 303

    checker = await person(mail_app)
    async with checker.http:
        assert (await checker.login(owner.email, PASSWORD)).status_code == 401
        assert (await checker.login(owner.email, NEW_PASSWORD)).status_code == 303
        assert (await checker.get(path_of(link))).status_code == 404
        used = await post_anyway(checker, path_of(link), "another fine long passphrase")
        assert used.status_code == 404


def _without_tokens(html: str) -> str:
    return re.sub(r'name="csrf_token" value="[^"]+"', "", html)


async def test_forgot_answers_the_same_whether_or_not_the_address_exists(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
    nobody = unique_email("nobody")
    answers = []
    for email in (owner.email, nobody):
        visitor = await person(mail_app)
        async with visitor.http:
            answer = await visitor.post(
                "/dashboard/forgot", {"email": email}, token_from="/dashboard/forgot"
            )
        answers.append(answer)
    assert answers[0].status_code == answers[1].status_code == 200
    assert _without_tokens(answers[0].text) == _without_tokens(answers[1].text)
    assert await smtp.catcher.wait_for(owner.email)
    assert smtp.catcher.to(nobody) == []


async def test_forgot_is_throttled_per_address_and_mails_an_address_only_so_often(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    mail_app.state.dashboard_throttle = Throttle(
        ThrottlePolicy(
            reset_per_address=Limit(2, timedelta(hours=1)),
            reset_per_email=Limit(2, timedelta(hours=1)),
        )
    )
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
    one_place = unique_address()
    for expected in (200, 200, 429):
        visitor = await new_dash(mail_app, base_url=BASE, address=one_place)
        async with visitor.http:
            answer = await visitor.post(
                "/dashboard/forgot", {"email": owner.email}, token_from="/dashboard/forgot"
            )
        assert answer.status_code == expected
    assert int(answer.headers["retry-after"]) > 0
    # Another address may ask, and gets the same answer, but no third mail for that e-mail.
    elsewhere = await person(mail_app)
    async with elsewhere.http:
        answer = await elsewhere.post(
            "/dashboard/forgot", {"email": owner.email}, token_from="/dashboard/forgot"
        )
    assert answer.status_code == 200 and FORGOT_ANSWER in answer.text
    assert len(await smtp.catcher.wait_for(owner.email, 2)) == 2
    await _all_background_work_done(mail_app)
    assert len(smtp.catcher.to(owner.email)) == 2


async def _all_background_work_done(app: FastAPI) -> None:
    import asyncio

    pending = set(app.state.background_tasks)
    if pending:
        await asyncio.gather(*pending)


async def test_links_are_single_use_expire_and_are_stored_hashed(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
        invited = unique_email("invited")
        await invite(owner, invited)
    link = await the_link(smtp, invited)
    token = link.rsplit("/", 1)[1]
    db: Database = mail_app.state.db
    async with db.read() as conn:
        row = (
            await conn.execute(select(login_tokens).where(login_tokens.c.email == invited))
        ).one()
    assert row.id == hashlib.sha256(token.encode()).hexdigest() != token
    assert row.expires_at - row.created_at == timedelta(hours=24)
    assert links.LIFETIMES[links.RESET] == timedelta(hours=1)

    # Expired: refused, on GET and POST alike.
    async with db.begin() as conn:
        await conn.execute(
            update(login_tokens)
            .where(login_tokens.c.id == row.id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    late = await person(mail_app)
    async with late.http:
        assert (await late.get(path_of(link))).status_code == 404
        posted = await post_anyway(late, path_of(link), NEW_PASSWORD)
        assert posted.status_code == 404 and "expired" in posted.text
        # Malformed tokens are simply unusable links.
        for junk in ("x", "%00" * 43, "A" * 43, "a" * 5000):
            assert (await late.get(f"/dashboard/join/{junk}")).status_code == 404
    async with db.read() as conn:
        assert (await conn.execute(select(users).where(users.c.email == invited))).first() is None


async def test_every_new_form_needs_its_csrf_token(mail_app: FastAPI, smtp: SmtpServer) -> None:
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
        invited = unique_email("csrf")
        refused = await owner.http.post("/dashboard/team/invite", data={"email": invited})
        assert refused.status_code == 403
        await invite(owner, invited)
    link = await the_link(smtp, invited)
    visitor = await person(mail_app)
    async with visitor.http:
        await visitor.get(path_of(link))  # has the double-submit cookie now
        for path, data in (
            ("/dashboard/forgot", {"email": owner.email}),
            (path_of(link), {"password": NEW_PASSWORD, "password_confirm": NEW_PASSWORD}),
            ("/dashboard/reset/" + "A" * 43, {"password": NEW_PASSWORD}),
        ):
            for token in (None, "forged"):
                sent = data | ({"csrf_token": token} if token else {})
                response = await visitor.http.post(path, data=sent)
                assert response.status_code == 403, (path, token)
        # The refused posts used nothing up: the link still works.
        assert (await choose_password(visitor, link, NEW_PASSWORD)).status_code == 303
    assert smtp.catcher.to(owner.email) == []  # the refused "forgot" sent nothing


async def test_a_user_of_one_account_never_sees_another(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    alice, bob = await person(mail_app), await person(mail_app)
    async with alice.http, bob.http:
        await alice.signup()
        await bob.signup()
        alices_friend = unique_email("friend")
        await invite(alice, alices_friend)
        await alice.create_key("alice's secret project")
        bobs_team = await bob.get("/dashboard/team")
        assert alice.email not in bobs_team.text and alices_friend not in bobs_team.text
        bobs_keys = await bob.get("/dashboard/keys")
        assert "alice&#39;s secret project" not in bobs_keys.text
    link = await the_link(smtp, alices_friend)
    friend = await person(mail_app)
    async with friend.http:
        await choose_password(friend, link, NEW_PASSWORD)
        keys_page = await friend.get("/dashboard/keys")
        assert "alice&#39;s secret project" in keys_page.text
        team = await friend.get("/dashboard/team")
        assert alice.email in team.text and bob.email not in team.text


async def test_inviting_an_address_with_a_login_looks_the_same_to_the_inviter(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    elsewhere, inviter = await person(mail_app), await person(mail_app)
    async with elsewhere.http, inviter.http:
        await elsewhere.signup()
        await inviter.signup()
        stranger = unique_email("stranger")
        flashes = []
        for email in (elsewhere.email, stranger):
            sent = await invite(inviter, email)
            assert sent.status_code == 303
            page = (await inviter.get("/dashboard/team")).text
            flashes.append(page.replace(email, "EMAIL"))
            assert "Invitations not yet accepted" in page and email in page
        assert _flash(flashes[0]) == _flash(flashes[1])
    (notice,) = await smtp.catcher.wait_for(elsewhere.email)
    assert "already has a hookline login" in notice.text
    assert "/dashboard/join/" not in notice.text  # the mail holds no usable link
    # Whoever owns that address stays in their own account.
    db: Database = mail_app.state.db
    async with db.read() as conn:
        rows = (await conn.execute(select(users).where(users.c.email == elsewhere.email))).all()
    assert len(rows) == 1


def _flash(page: str) -> str:
    match = re.search(r'<div class="flash[^"]*"[^>]*>\s*<p>([^<]*)</p>', page)
    assert match, page
    return match.group(1)


@pytest.mark.parametrize(
    "email", ["not-an-email", "a\x00b@example.com", "x" * 300 + "@example.com", ""]
)
async def test_bad_invitation_addresses_are_field_errors(
    mail_app: FastAPI, smtp: SmtpServer, email: str
) -> None:
    owner = await person(mail_app)
    async with owner.http:
        await owner.signup()
        refused = await invite(owner, email)
        assert refused.status_code == 422 and 'id="e-email"' in refused.text
        forgot = await owner.post(
            "/dashboard/forgot", {"email": email}, token_from="/dashboard/forgot"
        )
        assert forgot.status_code == 422
    assert smtp.catcher.messages == []


async def test_a_mail_server_that_is_down_is_an_error_message_not_a_500(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from tests.support.server import free_port

    settings = make_settings(
        make_database_url(backend, tmp_path, request),
        smtp_url=f"smtp://127.0.0.1:{free_port()}",
        mail_from=SENDER,
        public_url=BASE,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        owner = await person(app)
        async with owner.http:
            await owner.signup()
            sent = await invite(owner, unique_email())
            assert sent.status_code == 303
            page = await owner.get("/dashboard/team")
            assert "the mail could not be sent" in page.text and "refused" in page.text


def _console_links(err: str, label: str, email: str) -> list[str]:
    """The paths of the links printed for the operator for ``email`` (one plain line each)."""
    pattern = rf"^hookline: {label} for {re.escape(email)}[^\n]*?: http://127\.0\.0\.1:8000(\S+) "
    return re.findall(pattern, err, flags=re.MULTILINE)


async def test_without_smtp_each_link_is_one_console_line_and_the_dashboard_says_so(
    app: FastAPI,
    dash: Dash,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await dash.signup()
    team = await dash.get("/dashboard/team")
    assert str(escape(NOT_CONFIGURED_NOTICE)) in team.text
    invited = unique_email("console")
    with caplog.at_level(logging.DEBUG):
        await invite(dash, invited)
        team = await dash.get("/dashboard/team")
        assert "No mail server is configured: the invitation for" in team.text
        assert "printed in the server&#39;s console" in team.text
        (join_path,) = _console_links(capsys.readouterr().err, "invitation link", invited)
        assert join_path.startswith("/dashboard/join/")
        joiner = await new_dash(app)
        async with joiner.http:
            joined = await joiner.post(
                join_path,
                {"password": NEW_PASSWORD, "password_confirm": NEW_PASSWORD},
                token_from=join_path,
            )
            assert joined.status_code == 303
            asked = await joiner.post(
                "/dashboard/forgot", {"email": invited}, token_from="/dashboard/forgot"
            )
            assert str(escape(FORGOT_ANSWER_WITHOUT_MAIL)) in asked.text
            assert str(escape(FORGOT_ANSWER)) not in asked.text
        printed: list[str] = []

        async def reset_printed() -> list[str]:
            printed.append(capsys.readouterr().err)
            return _console_links("".join(printed), "reset link", invited)

        (reset_path,) = await eventually(reset_printed, what="the reset link on the console")
        assert "(no SMTP configured; valid 1 hour)" in "".join(printed)
    # The links are nowhere in the server's log (the records with their fields): the console
    # line is their one place.
    logged = "\n".join(str(r.__dict__) for r in caplog.records if r.name.startswith("hookline"))
    assert "hookline.access" in logged
    for path in (join_path, reset_path):
        token = path.rsplit("/", 1)[1]
        assert token not in logged, path
    assert PASSWORD not in logged and NEW_PASSWORD not in logged


async def test_link_unusable_message_is_shown(mail_app: FastAPI) -> None:
    visitor = await person(mail_app)
    async with visitor.http:
        page = await visitor.get("/dashboard/reset/" + "B" * 43)
    assert page.status_code == 404
    assert "Forgot your password?" in page.text
    assert LINK_UNUSABLE.split(",")[0] in page.text


async def test_removing_a_member_logs_them_out_for_good(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner, teammate, stranger = [await person(mail_app) for _ in range(3)]
    async with owner.http, teammate.http, stranger.http:
        await owner.signup()
        await stranger.signup()
        teammate_email = unique_email("leaver")
        await invite(owner, teammate_email)
        await choose_password(teammate, await the_link(smtp, teammate_email), NEW_PASSWORD)
        team = await owner.get("/dashboard/team")
        (remove_path,) = re.findall(r'href="(/dashboard/team/members/[^"/]+/remove)"', team.text)
        db: Database = mail_app.state.db
        async with db.read() as conn:
            owner_id = (
                await conn.execute(select(users.c.id).where(users.c.email == owner.email))
            ).scalar_one()
        # Another account's member cannot see or remove them; nobody removes themselves.
        assert (await stranger.get(remove_path)).status_code == 404
        assert (
            await stranger.post(remove_path, {}, token_from="/dashboard/team")
        ).status_code == 404
        own_path = f"/dashboard/team/members/{owner_id}/remove"
        assert (await owner.get(own_path)).status_code == 404
        assert (await owner.http.post(remove_path)).status_code == 403  # no CSRF token
        assert (await teammate.get("/dashboard")).status_code == 200  # still a member

        confirm = await owner.get(remove_path)
        assert confirm.status_code == 200 and teammate_email in confirm.text
        assert (await owner.post(remove_path, {}, token_from=remove_path)).status_code == 303
        assert f"{teammate_email} was removed" in (await owner.get("/dashboard/team")).text
        assert (await teammate.get("/dashboard")).status_code == 303  # logged out at once
    again = await person(mail_app)
    async with again.http:
        assert (await again.login(teammate_email, NEW_PASSWORD)).status_code == 401


async def test_a_cancelled_invitation_link_stops_working(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner, other = await person(mail_app), await person(mail_app)
    async with owner.http, other.http:
        await owner.signup()
        await other.signup()
        invited = unique_email("cancelled")
        await invite(owner, invited)
        link = await the_link(smtp, invited)
        # Another account cancelling it does nothing to this account's invitation.
        await other.post(
            "/dashboard/team/invitations/cancel", {"email": invited}, token_from="/dashboard/team"
        )
        visitor = await person(mail_app)
        async with visitor.http:
            assert (await visitor.get(path_of(link))).status_code == 200
        assert (
            await owner.http.post("/dashboard/team/invitations/cancel", data={"email": invited})
        ).status_code == 403
        for junk in ("x" * 60_000, "a\x00@example.com"):  # a page, not a 500 or a huge cookie
            refused = await owner.post(
                "/dashboard/team/invitations/cancel", {"email": junk}, token_from="/dashboard/team"
            )
            assert refused.status_code == 404 and "set-cookie" not in refused.headers
        cancelled = await owner.post(
            "/dashboard/team/invitations/cancel", {"email": invited}, token_from="/dashboard/team"
        )
        assert cancelled.status_code == 303
        assert "Invitations not yet accepted" not in (await owner.get("/dashboard/team")).text
    visitor = await person(mail_app)
    async with visitor.http:
        assert (await visitor.get(path_of(link))).status_code == 404


async def _browser_of(app: FastAPI, db: Database, user_id: str) -> Dash:
    """A client already logged in as ``user_id`` (its session made in the database)."""
    async with db.begin() as conn:
        cookie = await create_session(conn, user_id)
    browser = await new_dash(app)
    browser.http.cookies.set(SESSION_COOKIE, cookie)
    return browser


async def test_two_members_removing_each_other_at_once_always_leave_one(app: FastAPI) -> None:
    db: Database = app.state.db
    refused = 0
    for _ in range(12):
        async with db.begin() as conn:
            account_id = await keys.create_account(conn, "pair")
            pair = [
                await users_domain.create_user(conn, account_id, unique_email(), "unused hash")
                for _ in range(2)
            ]
        browsers = [await _browser_of(app, db, user.id) for user in pair]
        paths = [f"/dashboard/team/members/{user.id}/remove" for user in reversed(pair)]
        tokens = [csrf_from((await b.get(p)).text) for b, p in zip(browsers, paths, strict=True)]
        answers = await asyncio.gather(
            *(
                b.http.post(p, data={"csrf_token": t})
                for b, p, t in zip(browsers, paths, tokens, strict=True)
            )
        )
        for browser in browsers:
            await browser.http.aclose()
        async with db.read() as conn:
            assert len(await users_domain.list_users(conn, account_id)) == 1
        # One removal went through; the other found its remover gone (no session any more),
        # its target gone, or was refused in its transaction with a page saying why.
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses in ([303, 303], [303, 404], [303, 409]), statuses
        for answer in answers:
            if answer.status_code == 409:
                refused += 1
                assert str(escape(REMOVAL_REFUSED)) in answer.text
    assert refused > 0  # the removals did meet in their transactions


async def test_a_link_opened_while_logged_in_asks_before_switching_users(
    mail_app: FastAPI, smtp: SmtpServer
) -> None:
    owner, bob = await person(mail_app), await person(mail_app)
    carol = unique_email("carol")
    db: Database = mail_app.state.db
    async with owner.http, bob.http:
        await owner.signup()
        await invite(owner, carol)
        path = path_of(await the_link(smtp, carol))
        await bob.signup()
        asked = await bob.get(path)
        assert asked.status_code == 200
        # The current login and account, and the inviting account and address, are named.
        for shown in (bob.email, f"&#34;{bob.email}&#34;", f"&#34;{owner.email}&#34;", carol):
            assert shown in asked.text, shown
        assert 'name="password"' not in asked.text
        assert f'name="next" value="{path}"' in asked.text
        # Posting the link's form anyway changes nothing: no user, no new session.
        anyway = await post_anyway(bob, path, NEW_PASSWORD)
        assert anyway.status_code == 409 and 'action="/dashboard/logout"' in anyway.text
        assert SESSION_COOKIE not in str(anyway.headers.get_list("set-cookie"))
        async with db.read() as conn:
            assert await users_domain.find_user(conn, carol) is None
        assert bob.email in (await bob.get("/dashboard/team")).text
        # Logging out without the session's token does nothing either.
        assert (await bob.http.post("/dashboard/logout", data={"next": path})).status_code == 403
        assert (await bob.get("/dashboard")).status_code == 200
        # The explicit POST logs out and goes back to the link, which now asks for a password.
        switched = await bob.http.post(
            "/dashboard/logout", data={"next": path, "csrf_token": csrf_from(asked.text)}
        )
        assert switched.status_code == 303 and switched.headers["location"] == path
        assert (await bob.get("/dashboard")).status_code == 303
        assert (await choose_password(bob, BASE + path, NEW_PASSWORD)).status_code == 303
        team = (await bob.get("/dashboard/team")).text
        assert owner.email in team and carol in team and bob.email not in team


async def test_logout_goes_back_only_inside_the_dashboard(dash: Dash) -> None:
    await dash.signup()
    token = csrf_from((await dash.get("/dashboard/team")).text)
    out = await dash.http.post(
        "/dashboard/logout", data={"next": "https://evil.example/x", "csrf_token": token}
    )
    assert out.status_code == 303 and out.headers["location"] == "/dashboard/login"
