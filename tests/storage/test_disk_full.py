"""A full disk under a live ``hookline serve`` on SQLite: writes are refused with 503
``service_unavailable`` (never a 500, never half-written), reads keep working, writes work again
as soon as space is freed (no restart), and after a SIGKILL every acknowledged write is there,
each with its outbox event, and nothing that was refused.

The disk is a real one: a small tmpfs mounted for the test (the tests run as root, as in CI), so
SQLite meets the kernel's own ENOSPC, in the WAL as in the main file.
"""

from __future__ import annotations

import errno
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import orjson
import pytest

from tests.conftest import TEST_SECRET_KEY
from tests.storage.test_outage import assert_unavailable, list_contacts, post_contact, readiness
from tests.support.rawhttp import raw_connection
from tests.support.server import run_cli, running_server

DISK_MIB = 8
ACKNOWLEDGED_BEFORE = 20
REFUSALS_IN_A_ROW = 10  # the disk is full for good, not a page that happened to fit
MAX_POSTS_WHILE_FULL = 2_000


@contextmanager
def small_disk(point: Path, mib: int) -> Iterator[Path]:
    point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0700", "tmpfs", str(point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.fail(f"mounting a {mib} MiB tmpfs needs root (as in CI): {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "--lazy", str(point)], check=False)


def fill(path: Path) -> None:
    """Write ``path`` until the disk refuses another byte."""
    with path.open("wb", buffering=0) as filler:
        for chunk in (1 << 16, 1 << 12, 1):
            with suppress(OSError):
                while True:
                    try:
                        filler.write(b"\0" * chunk)
                    except OSError as exc:
                        assert exc.errno == errno.ENOSPC, exc
                        raise


def stored(database: Path) -> tuple[set[str], set[str]]:
    """The contacts' ids and the ids in their ``contact.created`` events, as on disk."""
    with sqlite3.connect(database) as conn:
        contacts = {row[0] for row in conn.execute("SELECT id FROM contacts")}
        events = {
            orjson.loads(row[0])["id"]
            for row in conn.execute("SELECT data FROM events WHERE type = 'contact.created'")
        }
    return contacts, events


def test_a_full_disk_refuses_writes_keeps_what_was_acknowledged_and_recovers(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "disk", DISK_MIB) as disk:
        database = disk / "hookline.db"
        env = {
            "HOOKLINE_DATABASE_URL": f"sqlite:///{database}",
            "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        }
        assert run_cli("migrate", env=env).returncode == 0
        created = run_cli("accounts", "create", "disk-full", env=env)
        assert created.returncode == 0, created.stderr
        key = orjson.loads(created.stdout)["api_key"]
        acknowledged: set[str] = set()
        with running_server(env, worker=True) as server, raw_connection(server.port) as conn:

            def create() -> int:
                answer = post_contact(conn, key)
                assert answer.status in (201, 503), answer  # never a 500
                if answer.status == 201:
                    acknowledged.add(answer.json()["id"])
                else:
                    assert_unavailable(answer)
                return answer.status

            for _ in range(ACKNOWLEDGED_BEFORE):
                assert create() == 201
            fill(disk / "filler")

            refused_in_a_row = posts = 0
            while refused_in_a_row < REFUSALS_IN_A_ROW:
                posts += 1
                assert posts <= MAX_POSTS_WHILE_FULL, "the full disk never refused a write"
                refused_in_a_row = refused_in_a_row + 1 if create() == 503 else 0

            # Reads don't need the disk to grow: the account's data stays readable.
            listed = list_contacts(conn, key)
            assert listed.status == 200
            assert listed.json() and {c["id"] for c in listed.json()} <= acknowledged

            (disk / "filler").unlink()
            assert create() == 201  # space is back: no restart needed
            assert readiness(conn).status == 200
            server.kill()  # a crash, not a shutdown: only what is on disk counts
            logs = server.logs()

        contacts, events = stored(database)
        assert contacts == acknowledged
        assert events == acknowledged  # each acknowledged write with its outbox event
        assert "unhandled" not in logs  # a full disk is not logged as a bug
