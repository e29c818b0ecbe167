"""Keys and secrets never leak: not in logs, error bodies or /metrics; secrets encrypted at rest."""

from __future__ import annotations

import re
import sqlite3
import stat
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import orjson
import pytest

from tests.dashboard.conftest import PASSWORD, Dash, unique_email
from tests.support.server import ServerProcess, async_running_server, run_cli, running_server
from tests.support.smtp import running_smtp
from tests.support.waiting import eventually

NOTES = "private-note-6c1f0e"
EMAIL = "secret.person.4d2a@example.com"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    directory = tmp_path_factory.mktemp("secrets")
    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{directory}/h.db",
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
        "HOOKLINE_LOG_LEVEL": "DEBUG",  # the noisiest setting must not leak either
    }
    with running_server(env, worker=True) as server:
        yield server, directory


def test_a_whole_session_leaks_no_key_secret_or_body_value(
    session: tuple[ServerProcess, Path],
) -> None:
    server, directory = session
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{directory}/h.db"}
    created = run_cli("accounts", "create", "leaks", env=env)
    assert created.returncode == 0, created.stderr
    account = orjson.loads(created.stdout)
    second = run_cli("keys", "create", "--account", account["account_id"], env=env)
    second_key = orjson.loads(second.stdout)["api_key"]
    secrets = [account["api_key"], second_key, NOTES, EMAIL]
    bodies: list[str] = []
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        auth = {"Authorization": f"Bearer {account['api_key']}"}
        contact = http.post(
            "/v1/contacts",
            headers=auth,
            json={"first_name": "Ada", "phone_number": "+14155550100", "email": EMAIL,
                  "notes": NOTES},
        )  # fmt: skip
        assert contact.status_code == 201
        webhook = http.post(
            "/v1/webhooks",
            headers={"Authorization": f"Bearer {second_key}"},
            json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        )
        assert webhook.status_code == 201
        secrets.append(webhook.json()["secret"])
        rotated = http.post(f"/v1/webhooks/{webhook.json()['id']}/rotate-secret", headers=auth)
        assert rotated.status_code == 200
        secrets.append(rotated.json()["secret"])
        # Refusals that might echo what they were sent.
        bodies += [
            http.get("/v1/contacts", headers={"Authorization": f"Bearer {second_key}x"}).text,
            http.get("/v1/contacts", headers={"Authorization": second_key}).text,
            http.post("/v1/contacts", headers=auth, json={"email": EMAIL, "notes": NOTES}).text,
            http.post(
                "/v1/contacts", headers={**auth, "content-type": "application/json"},
                content=b'{"notes": "' + NOTES.encode() + b'"',
            ).text,
            http.get(f"/v1/contacts?search={NOTES}&api_key={second_key}", headers=auth).text,
            http.get("/metrics").text,
        ]  # fmt: skip
    server.stop()
    logs = server.logs()
    assert '"logger":"hookline.access"' in logs  # the log really was captured
    for secret in secrets:
        assert secret not in logs
        for body in bodies:
            assert secret not in body


def test_webhook_secrets_are_encrypted_at_rest(tmp_path: Path) -> None:
    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/h.db",
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    }
    assert run_cli("migrate", env=env).returncode == 0
    account = orjson.loads(run_cli("accounts", "create", "rest", env=env).stdout)
    with running_server(env, worker=False) as server:
        created = httpx.post(
            server.base_url + "/v1/webhooks",
            headers={"Authorization": f"Bearer {account['api_key']}"},
            json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        )
        assert created.status_code == 201
        secret = created.json()["secret"]
        logs = server.logs()
    with sqlite3.connect(tmp_path / "h.db") as conn:
        (stored,) = conn.execute("SELECT secret_enc FROM webhooks").fetchone()
        keys = [row[0] for row in conn.execute("SELECT key_hash FROM api_keys")]
    assert stored and secret not in stored and secret.removeprefix("whsec_") not in stored
    assert account["api_key"] not in keys  # only a hash of the key is kept
    key_file = tmp_path / "h.db.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "HOOKLINE_SECRET_KEY is unset" in logs  # the operator was warned
    assert key_file.read_text().strip() not in logs


_LINK_PATH = re.compile(r"/dashboard/(?:join|reset)/[A-Za-z0-9_-]{43}")


@pytest.mark.parametrize("mail", ["smtp", "console"])
async def test_one_time_link_tokens_are_never_in_a_log_line(tmp_path: Path, mail: str) -> None:
    """A real server through an invitation and a password reset, each link opened, used and
    tried again with more after its token: no JSON log line holds a token. Without SMTP each
    link is printed once, on a plain line of its own for the operator, and nowhere else."""
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/h.db", "HOOKLINE_LOG_LEVEL": "DEBUG"}
    with ExitStack() as stack:
        if mail == "smtp":
            smtp = stack.enter_context(running_smtp())
            env |= {"HOOKLINE_SMTP_URL": smtp.url, "HOOKLINE_MAIL_FROM": "noreply@hookline.test"}
        async with async_running_server(env, worker=False) as server:

            async def link_for(email: str, count: int) -> str:
                if mail == "smtp":
                    (received,) = (await smtp.catcher.wait_for(email))[-1:]
                    (link,) = received.links
                    found = _LINK_PATH.search(link)
                    assert found, link
                    return found.group()

                async def printed() -> list[str]:
                    return _LINK_PATH.findall(server.logs())

                return (await eventually(printed, lambda paths: len(paths) == count))[-1]

            paths = await _invite_join_forget_reset(server.base_url, link_for)
            server.stop()
            logs = server.logs()
    assert '"logger":"hookline.access"' in logs and '"path":"/dashboard/join/…"' in logs
    for path in paths:
        token = path.rsplit("/", 1)[1]
        lines = [line for line in logs.splitlines() if token in line]
        if mail == "smtp":
            assert lines == [], lines
        else:
            (line,) = lines
            assert line.startswith("hookline: ") and "(no SMTP configured; valid " in line


async def _invite_join_forget_reset(
    base_url: str, link_for: Callable[[str, int], Awaitable[str]]
) -> list[str]:
    """The dashboard's link flows against ``base_url``; returns the links' paths."""
    owner = Dash(httpx.AsyncClient(base_url=base_url, timeout=30))
    invited = unique_email("invited")
    passwords = {"password": PASSWORD, "password_confirm": PASSWORD}
    async with owner.http:
        await owner.signup()
        sent = await owner.post(
            "/dashboard/team/invite", {"email": invited}, token_from="/dashboard/team"
        )
        assert sent.status_code == 303
        join = await link_for(invited, 1)
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
            joiner = Dash(http)
            # Spellings no route answers, while the token is still valid.
            for spelling in ("//join/", "/JOIN/"):
                mistyped = join.replace("/join/", spelling)
                assert (await http.get(mistyped)).status_code == 404
            assert (await joiner.post(join, passwords, token_from=join)).status_code == 303
            for after in ("/more", "?token=x", ""):
                assert (await http.get(join + after)).status_code == 404
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
            visitor = Dash(http)
            asked = await visitor.post(
                "/dashboard/forgot", {"email": owner.email}, token_from="/dashboard/forgot"
            )
            assert asked.status_code == 200
            reset = await link_for(owner.email, 2)
            assert (await visitor.post(reset, passwords, token_from=reset)).status_code == 303
            assert (await http.get(reset)).status_code == 404
    return [join, reset]
