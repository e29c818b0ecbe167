"""Shared fixtures: the same API suite runs against SQLite and a real PostgreSQL.

The app, its database and the PostgreSQL server are started once per session and backend; each
test gets fresh accounts. Every query is scoped to an account, so tests can't see each other's
rows, which is itself part of what the suite checks.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import hypothesis
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser

from hookline.app import create_app
from hookline.domain import keys
from hookline.settings import Settings
from hookline.storage.db import Database
from tests.support.browser import launched_chromium
from tests.support.files import delete_tree
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.templates import MigratedDatabases

# No per-example deadline: the suite shares 2 cores with live servers, and a property test that
# took 200 ms for one example under that load failed for its timing, not its property.
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")

BACKENDS = ("sqlite", "postgres")
TEST_SECRET_KEY = "test-secret-key-not-for-production"


MEMORY_DISK = Path("/dev/shm")
_SCRATCH = pytest.StashKey[str]()
NEEDED = 8 * 2**30
"""Free space the suite's temporary files need (~11 MB for each PostgreSQL database, hundreds): a
container's small /dev/shm (Docker's is 64 MB) leaves them on the disk."""


def pytest_configure(config: pytest.Config) -> None:
    """Temporary files in memory (``MEMORY_DISK``, a tmpfs) unless ``TMPDIR`` names a place.

    Everything a test writes is temporary: its SQLite files, the session's PostgreSQL cluster
    (every PostgreSQL test creates a database of ~11 MB, ~300 files), the servers' logs. On the
    CI machine's disk, deleting the cluster at the end of the session took 11 s, and 119 s for
    200 databases on a busy machine; on tmpfs, milliseconds. Nothing durable is given up: the
    suite's crashes are SIGKILLs of processes, never of the machine, so what was fsynced and
    what was written are the same file contents. ``TMPDIR`` reaches the servers the tests start.
    """
    if os.environ.get("TMPDIR") or not _is_tmpfs(MEMORY_DISK) or _free_bytes(MEMORY_DISK) < NEEDED:
        return
    scratch = tempfile.mkdtemp(prefix="hl-", dir=MEMORY_DISK)
    config.stash[_SCRATCH] = scratch
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    # Short paths: a Unix socket's must fit in 107 bytes (tests bind some in ``tmp_path``).
    if config.option.basetemp is None:
        config.option.basetemp = os.path.join(scratch, "t")


def pytest_unconfigure(config: pytest.Config) -> None:
    scratch = config.stash.get(_SCRATCH, None)
    if scratch is not None:
        os.environ.pop("TMPDIR", None)
        tempfile.tempdir = None
        delete_tree(scratch, wait=False)


def _free_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def _is_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(
        fields[1] == str(path) and fields[2] == "tmpfs"
        for fields in (line.split() for line in mounts)
        if len(fields) > 2
    ) and os.access(path, os.W_OK)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first (SIGKILL crash tests, the fuzzer, browsers).

    ``make test`` runs the suite in two processes (pytest-xdist, ``--dist loadfile
    --no-loadscope-reorder``): a file's tests stay in one process, so its module-scoped fixtures
    start once, and the files go out in this order as a process comes free. A slow file handed
    out last would keep one process busy for a minute or more after the other ran out of work.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--screenshots-dir",
        type=Path,
        default=None,
        help="keep the browser tests' screenshots here (make screenshots: docs/screenshots)",
    )


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests put screenshots: a temporary folder unless --screenshots-dir."""
    chosen: Path | None = request.config.getoption("--screenshots-dir")
    if chosen is None:
        return tmp_path_factory.mktemp("screenshots")
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with launched_chromium() as launched:
        yield launched


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    with running_postgres(wait_for_deletion=False) as server:
        yield server


@pytest.fixture(scope="session")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> MigratedDatabases:
    """New databases at the schema's head, copied from a template (tests/support/templates.py)."""
    return MigratedDatabases(tmp_path_factory.mktemp("templates"), make_settings)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_database_url(backend: str, directory: Path, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database on ``backend``."""
    if backend == "sqlite":
        return f"sqlite:///{directory / 'hookline.db'}"
    server: PostgresServer = request.getfixturevalue("pg_server")
    return server.create_database()


def make_settings(database_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": database_url,
        "allow_private_targets": True,
        "secret_key": TEST_SECRET_KEY,
        "worker_in_process": False,
        "rate_limit": "100000/second",
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


# One settings and one app per backend for the whole session, whatever order the tests come in:
# ``settings`` and ``app`` below are parametrized by ``backend``, and pytest tears a parametrized
# fixture down whenever the next test wants the other parameter. In one process it orders the
# tests so that this happens once; under xdist (make test) a process runs a module's tests at a
# time, sqlite then postgres, and each switch would make a new app and a new PostgreSQL database.
# The per-backend fixtures are not parametrized, so they live until the session ends.


@pytest.fixture(scope="session")
def sqlite_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(f"sqlite:///{tmp_path_factory.mktemp('db-sqlite') / 'hookline.db'}")


@pytest.fixture(scope="session")
def postgres_settings(pg_server: PostgresServer) -> Settings:
    return make_settings(pg_server.create_database())


@pytest.fixture(scope="session")
def settings(backend: str, request: pytest.FixtureRequest) -> Settings:
    chosen: Settings = request.getfixturevalue(f"{backend}_settings")
    return chosen


async def _serving(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture(scope="session")
async def sqlite_app(sqlite_settings: Settings) -> AsyncIterator[FastAPI]:
    async for application in _serving(sqlite_settings):
        yield application


@pytest.fixture(scope="session")
async def postgres_app(postgres_settings: Settings) -> AsyncIterator[FastAPI]:
    async for application in _serving(postgres_settings):
        yield application


@pytest.fixture(scope="session")
def app(backend: str, request: pytest.FixtureRequest) -> FastAPI:
    chosen: FastAPI = request.getfixturevalue(f"{backend}_app")
    return chosen


@pytest.fixture(scope="session")
def db(app: FastAPI) -> Database:
    database: Database = app.state.db
    return database


@pytest.fixture(scope="session")
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
        yield c


@dataclass(frozen=True)
class Account:
    id: str
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


async def new_account(db: Database, name: str = "test", scopes: list[str] | None = None) -> Account:
    async with db.begin() as conn:
        account_id = await keys.create_account(conn, name)
        key, _ = await keys.create_key(conn, account_id, "test", scopes)
    return Account(account_id, key)


@pytest.fixture
async def account(db: Database) -> Account:
    return await new_account(db, "primary")


@pytest.fixture
async def other_account(db: Database) -> Account:
    return await new_account(db, "other")


@pytest.fixture
def auth_headers(account: Account) -> dict[str, str]:
    return account.headers


@pytest.fixture
def other_auth_headers(other_account: Account) -> dict[str, str]:
    return other_account.headers


@pytest.fixture
def api_key(account: Account) -> str:
    return account.key
