"""Acceptance: the real `hookline` CLI and `hookline serve` as subprocesses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.support.server import run_cli, running_server


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}


def test_bad_setting_stops_start_up_naming_it(tmp_path: Path) -> None:
    result = run_cli("migrate", env={**_env(tmp_path), "HOOKLINE_RETRY_SCHEDULE": "soon"})
    assert result.returncode == 2
    assert "HOOKLINE_RETRY_SCHEDULE" in result.stderr
    result = run_cli("migrate", env={"HOOKLINE_DATABASE_URL": "mysql://x"})
    assert result.returncode == 2 and "HOOKLINE_DATABASE_URL" in result.stderr


def test_postgres_without_secret_key_is_refused() -> None:
    result = run_cli("migrate", env={"HOOKLINE_DATABASE_URL": "postgresql://u@127.0.0.1:1/x"})
    assert result.returncode == 2 and "HOOKLINE_SECRET_KEY" in result.stderr


def test_accounts_and_keys_lifecycle_against_a_running_server(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    created = run_cli("accounts", "create", "acme", env=env)
    assert created.returncode == 0, created.stderr
    account = json.loads(created.stdout)
    assert set(account) == {"account_id", "api_key"}
    assert account["api_key"].startswith("hl_live_")

    with running_server(env) as server, httpx.Client(base_url=server.base_url) as http:
        headers = {"Authorization": f"Bearer {account['api_key']}"}
        contact = http.post(
            "/v1/contacts",
            json={"first_name": "Ada", "phone_number": "+14155552671"},
            headers=headers,
        )
        assert contact.status_code == 201
        contact_id = contact.json()["id"]
        deleted = http.delete(f"/v1/contacts/{contact_id}", headers=headers)
        assert deleted.json() == {"success": True, "message": f"Contact {contact_id} deleted"}

        second = run_cli(
            "keys",
            "create",
            "--account",
            account["account_id"],
            "--name",
            "reporting",
            "--scopes",
            "contacts:read",
            env=env,
        )
        assert second.returncode == 0, second.stderr
        key = json.loads(second.stdout)
        read_only = {"Authorization": f"Bearer {key['api_key']}"}
        assert http.get("/v1/contacts", headers=read_only).status_code == 200
        assert http.post("/v1/contacts", json={}, headers=read_only).status_code == 403

        listed = run_cli("keys", "list", "--account", account["account_id"], env=env)
        records = [json.loads(line) for line in listed.stdout.splitlines()]
        assert {r["name"] for r in records} == {"default", "reporting"}
        assert all(account["api_key"] not in line for line in listed.stdout.splitlines())

        revoked = run_cli("keys", "revoke", key["id"], "--account", account["account_id"], env=env)
        assert revoked.returncode == 0
        assert http.get("/v1/contacts", headers=read_only).status_code == 401
        assert http.get("/v1/contacts", headers=headers).status_code == 200
        logs = server.logs()
    assert account["api_key"] not in logs and key["api_key"] not in logs
    access = [json.loads(line) for line in logs.splitlines() if '"hookline.access"' in line]
    assert access, "one structured line per request"
    assert {"request_id", "account_id", "method", "path", "status", "duration_ms"} <= set(access[0])


@pytest.mark.parametrize("argv", [["keys", "create", "--account", "x", "--scopes", "nope"]])
def test_cli_refuses_bad_arguments(tmp_path: Path, argv: list[str]) -> None:
    result = run_cli(*argv, env=_env(tmp_path))
    assert result.returncode == 2
    assert "unknown scope" in result.stderr


def test_users_add_prints_a_one_time_link_that_opens_the_dashboard(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "HOOKLINE_PUBLIC_URL": "http://hooks.example.test/"}
    assert run_cli("migrate", env=env).returncode == 0
    account = json.loads(run_cli("accounts", "create", "acme", env=env).stdout)
    email = "Grace@Example.com"
    added = run_cli("users", "add", "--account", account["account_id"], "--email", email, env=env)
    assert added.returncode == 0, added.stderr
    link = added.stdout.strip()
    assert link.startswith("http://hooks.example.test/dashboard/join/"), link
    assert "\n" not in link and "24 hours" in added.stderr and "grace@example.com" in added.stderr
    path = link.removeprefix("http://hooks.example.test")
    password = "seventeen purple lighthouses"
    with running_server(env) as server, httpx.Client(base_url=server.base_url) as http:
        page = http.get(path)
        assert page.status_code == 200 and "grace@example.com" in page.text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert token
        form = {"password": password, "password_confirm": password, "csrf_token": token.group(1)}
        joined = http.post(path, data=form)
        assert joined.status_code == 303
        # The account made by the CLI is the one the dashboard shows: its key is listed.
        keys_page = http.get("/dashboard/keys")
        assert keys_page.status_code == 200 and account["api_key"][:14] in keys_page.text
        assert http.post(path, data=form).status_code == 404  # used once
    again = run_cli("users", "add", "--account", account["account_id"], "--email", email, env=env)
    assert again.returncode == 1 and "already has a dashboard login" in again.stderr


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--account", "acc_missing", "--email", "a@example.com"], 1, "no account acc_missing"),
        (["--account", "acc_missing", "--email", "not an email"], 2, "--email"),
    ],
)
def test_users_add_refuses_in_one_line(
    tmp_path: Path, argv: list[str], code: int, message: str
) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    result = run_cli("users", "add", *argv, env=env)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
