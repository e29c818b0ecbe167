"""No secret at rest in clear: stored idempotent responses are encrypted, and the SQLite files
are private to their owner."""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from alembic import command
from sqlalchemy import select

from hookline.crypto import SecretBox
from hookline.domain import keys
from hookline.guards.idempotency import request_hash
from hookline.storage.db import Database
from hookline.storage.migrate import alembic_config, run_sync, upgrade_to_head
from hookline.storage.models import idempotency_keys
from hookline.timeutil import utcnow
from tests.conftest import BACKENDS, TEST_SECRET_KEY, Account, make_database_url, make_settings
from tests.guards.conftest import running_app, sqlite_url


async def _create_and_rotate(client: httpx.AsyncClient, account: Account) -> list[str]:
    """An idempotent webhook creation and rotation, each replayed once: the secrets shown."""

    async def twice(url: str, body: object = None) -> httpx.Response:
        headers = {**account.headers, "Idempotency-Key": f"secret-{uuid.uuid4()}"}
        first = await client.post(url, json=body, headers=headers)
        replay = await client.post(url, json=body, headers=headers)
        assert first.status_code in (200, 201), first.text
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.json() == first.json()
        return first

    created = await twice(
        "/v1/webhooks", {"url": "http://127.0.0.1:9/h", "events": ["contact.created"]}
    )
    webhook = created.json()
    rotated = await twice(f"/v1/webhooks/{webhook['id']}/rotate-secret")
    secrets = [webhook["secret"], rotated.json()["secret"]]
    assert all(secret.startswith("whsec_") for secret in secrets)
    return secrets


async def test_stored_responses_hold_no_secret_in_clear(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    secrets = await _create_and_rotate(client, account)
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(idempotency_keys.c.response_body).where(
                    idempotency_keys.c.account_id == account.id
                )
            )
        ).all()
    assert len(rows) == 2
    box = SecretBox(TEST_SECRET_KEY)
    opened = [box.decrypt(row.response_body) for row in rows]
    for secret in secrets:
        assert not any(secret in row.response_body or "whsec_" in row.response_body for row in rows)
        assert any(secret in body for body in opened), "the replayable body must keep the secret"


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_sqlite_files_are_private_and_hold_no_secret_in_clear(tmp_path: Path) -> None:
    database = tmp_path / "hookline.db"
    # A umask that would leave SQLite's own default (0644) readable by every local user.
    with _umask(0o022):
        async with running_app(make_settings(sqlite_url(tmp_path))) as running:
            account = await running.account()
            secrets = await _create_and_rotate(running.client, account)
            files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
            assert all(path.exists() for path in files)
            assert {path.name: _mode(path) for path in files} == {p.name: 0o600 for p in files}
            # Read while the app runs: the WAL still holds every page written since start-up.
            contents = b"".join(path.read_bytes() for path in files[:2])
    assert secrets[0].encode() not in contents
    assert b"whsec_" not in contents
    assert b"hl_live_" in contents, "keys' display prefixes are stored: the scan reads the data"
    assert account.key.encode() not in contents
    assert account.key[len("hl_live_") :].encode() not in contents


async def test_an_existing_database_file_keeps_its_mode(tmp_path: Path) -> None:
    database = tmp_path / "hookline.db"
    database.touch(mode=0o640)
    database.chmod(0o640)
    async with running_app(make_settings(sqlite_url(tmp_path))):
        pass
    assert _mode(database) == 0o640


async def test_a_row_stored_in_clear_by_an_older_version_still_replays(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    body = b'{"first_name":"Ada","phone_number":"+14155550100"}'
    async with db.begin() as conn:
        await conn.execute(
            idempotency_keys.insert().values(
                account_id=account.id,
                key="from-an-older-version",
                request_hash=request_hash("POST", "/v1/contacts", body),
                response_status=201,
                response_headers=[["content-type", "application/json"]],
                response_body='{"id":"con_older"}',
                created_at=utcnow(),
            )
        )
    headers = {
        **account.headers,
        "Idempotency-Key": "from-an-older-version",
        "content-type": "application/json",
    }
    response = await client.post("/v1/contacts", content=body, headers=headers)
    assert response.status_code == 201
    assert response.headers["idempotent-replayed"] == "true"
    assert response.json() == {"id": "con_older"}


@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_the_migration_forgets_rows_that_hold_a_secret_in_clear(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = Database(make_settings(make_database_url(backend_name, tmp_path, request)))
    bodies = {
        "webhook": '{"id":"wh_1","secret":"whsec_c2VjcmV0"}',
        "api-key": '{"key":"hl_live_0123456789"}',
        "contact": '{"id":"con_1","first_name":"Ada"}',
    }
    try:
        await run_sync(db, lambda sync: command.upgrade(alembic_config(sync), "0002"))
        async with db.begin() as conn:
            account_id = await keys.create_account(conn, "older")
            for key, body in bodies.items():
                await conn.execute(
                    idempotency_keys.insert().values(
                        account_id=account_id, key=key, request_hash="0" * 64,
                        response_status=201, response_headers=[], response_body=body,
                        created_at=utcnow(),
                    )
                )  # fmt: skip
        await upgrade_to_head(db)
        async with db.read() as conn:
            left = await conn.scalars(select(idempotency_keys.c.key))
            assert set(left) == {"contact"}
    finally:
        await db.dispose()
