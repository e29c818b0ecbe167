"""Acceptance: the real `hookline` CLI and `hookline serve` as subprocesses."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from alembic import command
from sqlalchemy import create_engine

from hookline.storage.migrate import alembic_config, head_revision
from tests.support.postgres import PostgresServer
from tests.support.server import CLI, cli_env, free_port, run_cli, running_server


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}


def test_bad_setting_stops_start_up_naming_it(tmp_path: Path) -> None:
    result = run_cli("migrate", env={**_env(tmp_path), "HOOKLINE_RETRY_SCHEDULE": "soon"})
    assert result.returncode == 2
    assert "HOOKLINE_RETRY_SCHEDULE" in result.stderr
    result = run_cli("migrate", env={"HOOKLINE_DATABASE_URL": "mysql://x"})
    assert result.returncode == 2 and "HOOKLINE_DATABASE_URL" in result.stderr


@pytest.mark.parametrize("workers", ["0", "two", "-1", "257", "1.5", "\u0661"])
def test_a_bad_number_of_workers_stops_serve_naming_it(tmp_path: Path, workers: str) -> None:
    result = run_cli(
        "serve", "--port", str(free_port()), env={**_env(tmp_path), "HOOKLINE_WORKERS": workers}
    )
    assert result.returncode == 2 and "HOOKLINE_WORKERS" in result.stderr, result.stderr
    result = run_cli("serve", "--port", str(free_port()), "--workers", workers, env=_env(tmp_path))
    assert result.returncode == 2 and "--workers" in result.stderr, result.stderr
    assert not (tmp_path / "cli.db").exists()


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


# -- where the CLI is, and what it says (contract: "Running") ------------------------------------


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line.lower()]


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = _error_lines(result.stderr)
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["accounts", "create", "acme"],
        ["keys", "create", "--account", "acct_x"],
        ["keys", "list", "--account", "acct_x"],
        ["keys", "revoke", "key_x", "--account", "acct_x"],
        ["worker"],
    ],
)
def test_commands_refuse_a_database_that_does_not_exist(tmp_path: Path, argv: list[str]) -> None:
    database = tmp_path / "cli.db"
    result = run_cli(*argv, env=_env(tmp_path))
    assert result.returncode == 1
    _assert_one_line_error(result, str(database), "hookline migrate")
    assert f"hookline: database {database}" in result.stderr
    assert list(tmp_path.iterdir()) == [], "nothing is created as a side effect"


def test_a_relative_database_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [*CLI, "accounts", "create", "acme"],
        env=cli_env({"HOOKLINE_DATABASE_URL": "sqlite:///./hookline.db"}),
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=False,
    )
    _assert_one_line_error(result, str(elsewhere / "hookline.db"))
    assert not (elsewhere / "hookline.db").exists()


def test_migrate_says_created_then_current_naming_the_file(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    first = run_cli("migrate", env=_env(tmp_path))
    assert first.returncode == 0, first.stderr
    assert f"created {database}" in first.stderr
    second = run_cli("migrate", env=_env(tmp_path))
    assert second.returncode == 0, second.stderr
    assert f"{database} is already at the latest schema" in second.stderr
    assert f"created {database}" not in second.stderr


def test_migrate_says_upgraded_from_which_schema(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    engine = create_engine(f"sqlite:///{database}")
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
    engine.dispose()
    result = run_cli("migrate", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"upgraded {database} from schema 0001 to {head_revision()}" in result.stderr


def test_a_database_without_hookline_schema_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cli.db").touch()
    result = run_cli("keys", "list", "--account", "acct_x", env=_env(tmp_path))
    _assert_one_line_error(result, "has no hookline schema", "hookline migrate")


def test_unknown_account_is_one_line_error_for_every_keys_command(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    for argv in (
        ["keys", "create", "--account", "acct_nope"],
        ["keys", "list", "--account", "acct_nope"],
        ["keys", "revoke", "key_x", "--account", "acct_nope"],
    ):
        result = run_cli(*argv, env=env)
        assert result.returncode == 1, argv
        assert result.stdout == ""
        _assert_one_line_error(result, "no account acct_nope")


def test_unknown_key_to_revoke_is_an_error(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    account = json.loads(run_cli("accounts", "create", "acme", env=env).stdout)["account_id"]
    result = run_cli("keys", "revoke", "key_nope", "--account", account, env=env)
    _assert_one_line_error(result, "no live key key_nope")


def test_unreachable_postgresql_is_one_line_naming_it_without_password() -> None:
    url = "postgresql://someone:hunter2@127.0.0.1:1/nowhere"
    result = run_cli("migrate", env={"HOOKLINE_DATABASE_URL": url, "HOOKLINE_SECRET_KEY": "k"})
    _assert_one_line_error(result, "someone:***@127.0.0.1:1/nowhere")
    assert "hunter2" not in result.stderr


def test_bad_arguments_are_one_line(tmp_path: Path) -> None:
    for argv in (["keys", "create"], ["serve", "--port", "99999"], ["accounts", "create", " "]):
        result = run_cli(*argv, env=_env(tmp_path))
        assert result.returncode == 2, argv
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "--help" in result.stderr


def test_unknown_hookline_variables_are_named_in_a_warning(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "HOOKLINE_DATABSE_URL": "x", "HOOKLINE_NONSENSE": "1"}
    result = run_cli("migrate", env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert any(
        "HOOKLINE_DATABSE_URL" in w and "did you mean HOOKLINE_DATABASE_URL" in w for w in warnings
    )
    assert any("HOOKLINE_NONSENSE" in w for w in warnings)
    known = run_cli("migrate", env={**_env(tmp_path), "HOOKLINE_RETENTION_DAYS": "3"})
    assert "warning" not in known.stderr


def test_every_help_has_descriptions_and_defaults() -> None:
    commands = [
        ["serve"],
        ["worker"],
        ["migrate"],
        ["accounts", "create"],
        ["keys", "create"],
        ["keys", "list"],
        ["keys", "revoke"],
        ["users", "add"],
        ["users", "reset"],
        ["accounts", "list"],
    ]
    for argv in commands:
        result = run_cli(*argv, "--help")
        assert result.returncode == 0, argv
        assert "HOOKLINE_DATABASE_URL" in result.stdout, argv
        options = [line for line in result.stdout.splitlines() if line.startswith("  -")]
        assert all(len(line.split(None, 2)) >= 2 for line in options), result.stdout
    create = run_cli("keys", "create", "--help").stdout
    assert "(default: cli)" in create and "default: every scope" in create
    serve = " ".join(run_cli("serve", "--help").stdout.split())  # as one line, wrapping aside
    assert "HOOKLINE_HOST, else 127.0.0.1" in serve and "HOOKLINE_PORT, else 8000" in serve
    assert "--workers N|auto" in serve and "HOOKLINE_WORKERS, else auto" in serve


def test_serve_listens_where_hookline_host_and_port_say(tmp_path: Path) -> None:
    with running_server(_env(tmp_path), address_from_env=True) as server:
        assert httpx.get(server.base_url + "/healthz").status_code == 200
        assert f"database {tmp_path / 'cli.db'} (new: creating it)" in server.logs()


def test_serve_on_a_busy_port_fails_at_once_before_migrating(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--port", str(port), env=_env(tmp_path))
    _assert_one_line_error(result, f"port {port}", "--port")
    assert not (tmp_path / "cli.db").exists(), "it failed before migrating"


def test_serve_refuses_a_database_in_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/nowhere/h.db"}
    result = run_cli("serve", "--port", str(free_port()), env=env)
    _assert_one_line_error(result, f"folder {tmp_path / 'nowhere'} does not exist")


def test_serve_closes_its_socket_when_the_server_does_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this process, to see the socket: a server whose start-up failed never handed the
    listener to a loop that would close it, so ``serve`` closes it itself."""
    import uvicorn

    from hookline import cli, logs
    from hookline.supervisor import NOT_STARTED

    handed: list[socket.socket] = []
    monkeypatch.setenv("HOOKLINE_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("HOOKLINE_WORKERS", "1")
    monkeypatch.setattr(logs, "configure_logging", lambda _level, **_options: None)

    def fail_to_start(_server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        handed.extend(sockets)  # and server.started stays False, as after a failed lifespan

    monkeypatch.setattr(uvicorn.Server, "run", fail_to_start)
    assert cli.main(["serve", "--port", str(free_port())]) == NOT_STARTED
    assert [sock.fileno() for sock in handed] == [-1]  # closed


def test_postgresql_database_without_schema_is_refused_until_migrated(
    pg_server: PostgresServer,
) -> None:
    env = {"HOOKLINE_DATABASE_URL": pg_server.create_database(), "HOOKLINE_SECRET_KEY": "k"}
    refused = run_cli("accounts", "create", "acme", env=env)
    _assert_one_line_error(refused, "has no hookline schema", "hookline migrate")
    migrated = run_cli("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    assert "created postgresql://postgres@" in migrated.stderr
    assert run_cli("accounts", "create", "acme", env=env).returncode == 0
    missing = {**env, "HOOKLINE_DATABASE_URL": pg_server.url("no_such_database")}
    _assert_one_line_error(run_cli("migrate", env=missing), "no_such_database")


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
        # `users reset` prints a link where the user chooses a new password.
        reset = run_cli("users", "reset", "--email", email, env=env)
        assert reset.returncode == 0, reset.stderr
        assert "grace@example.com" in reset.stderr and "1 hour" in reset.stderr
        reset_path = reset.stdout.strip().removeprefix("http://hooks.example.test")
        assert reset_path.startswith("/dashboard/reset/"), reset.stdout
        http.cookies.clear()
        page = http.get(reset_path)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert page.status_code == 200 and token
        new_password = "nine copper kites over harbours"
        form = {"password": new_password, "password_confirm": new_password}
        assert http.post(reset_path, data=form | {"csrf_token": token.group(1)}).status_code == 303
        assert http.get("/dashboard/keys").status_code == 200
    again = run_cli("users", "add", "--account", account["account_id"], "--email", email, env=env)
    assert again.returncode == 1 and "already has a dashboard login" in again.stderr
    (listed,) = [
        json.loads(line) for line in run_cli("accounts", "list", env=env).stdout.splitlines()
    ]
    assert listed == {
        "id": account["account_id"],
        "name": "acme",
        "created_at": listed["created_at"],
        "members": 1,
        "live_keys": 1,
    }


def test_accounts_list_prints_every_account_oldest_first(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    empty = run_cli("accounts", "list", env=env)
    assert empty.returncode == 0 and empty.stdout == ""
    made = [json.loads(run_cli("accounts", "create", name, env=env).stdout) for name in "ab"]
    revoked_key = json.loads(
        run_cli("keys", "list", "--account", made[1]["account_id"], env=env).stdout
    )
    revoke = ("keys", "revoke", revoked_key["id"], "--account", made[1]["account_id"])
    assert run_cli(*revoke, env=env).returncode == 0
    listed = [json.loads(line) for line in run_cli("accounts", "list", env=env).stdout.splitlines()]
    assert [(a["id"], a["name"], a["live_keys"], a["members"]) for a in listed] == [
        (made[0]["account_id"], "a", 1, 0),
        (made[1]["account_id"], "b", 0, 0),
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", a["created_at"]) for a in listed)


@pytest.mark.parametrize(
    ("email", "code", "message"),
    [
        ("nobody@example.com", 1, "no dashboard login uses nobody@example.com"),
        ("x\x01@y", 2, "--email"),
    ],
)
def test_users_reset_refuses_in_one_line(
    tmp_path: Path, email: str, code: int, message: str
) -> None:
    env = _env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    result = run_cli("users", "reset", "--email", email, env=env)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


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
