"""Acceptance: the real `hookline` CLI and `hookline serve` as subprocesses."""

from __future__ import annotations

import json
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
