"""Keys and secrets never leak: not in logs, error bodies or /metrics; secrets encrypted at rest."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.server import ServerProcess, run_cli, running_server

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
