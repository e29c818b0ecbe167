"""A real, throw-away PostgreSQL server for the test session.

The cluster is built with the installed server binaries (Debian's ``postgresql`` package puts them
in ``/usr/lib/postgresql/<version>/bin``; the newest version found is used). PostgreSQL refuses to
run as root; when the tests run as root (as in CI) the data directory is handed to the unprivileged
``postgres`` user and ``initdb``/``pg_ctl`` run as that user (``subprocess``'s ``user=``/``group=``,
i.e. a plain setuid/setgid in the child, no PAM or ``runuser`` needed).

    with running_postgres() as pg:
        url = pg.create_database("t1")   # postgresql://postgres@127.0.0.1:PORT/t1

Settings favour speed over durability (``fsync=off``, ``synchronous_commit=off``,
``full_page_writes=off``): the cluster lives only as long as the ``with`` block, and its directory
is deleted on exit, on failure too.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text

from hookline.storage.db import Database
from tests.support.files import delete_tree
from tests.support.server import free_port

PG_ROOT = Path("/usr/lib/postgresql")
SUPERUSER = "postgres"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
_MISSING = (
    "PostgreSQL server binaries not found: install Debian's postgresql package (make test does)"
)
_DBNAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# sun_path is 108 bytes on Linux; "<dir>/.s.PGSQL.65535" must fit.
_MAX_SOCKET_DIR = 90

SERVER_SETTINGS: Mapping[str, str] = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "200",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "'128MB'",
    "log_min_messages": "warning",
    "log_min_duration_statement": "-1",
    "logging_collector": "off",
    "timezone": "'UTC'",
}


def _version_key(path: Path) -> tuple[int, ...]:
    parts = re.findall(r"\d+", path.parent.name)
    return tuple(int(p) for p in parts) or (-1,)


def find_pg_bindir(root: Path = PG_ROOT) -> Path:
    """The ``bin`` directory of the newest installed PostgreSQL with ``initdb`` and ``pg_ctl``.

    ``HOOKLINE_TEST_PG_BINDIR`` overrides the search (a directory holding those binaries).
    Raises :class:`RuntimeError` when none is found: the suite needs a real server, never skips.
    """
    override = os.environ.get("HOOKLINE_TEST_PG_BINDIR")
    candidates = (
        [Path(override)] if override else sorted(root.glob("*/bin"), key=_version_key, reverse=True)
    )
    for bindir in candidates:
        if all(os.access(bindir / tool, os.X_OK) for tool in ("initdb", "pg_ctl", "postgres")):
            return bindir
    raise RuntimeError(_MISSING)


def _clean_env() -> dict[str, str]:
    """os.environ without ``PG*`` variables (PGDATA, PGHOST, PGOPTIONS...) that would interfere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    return env


@dataclass
class _RunAs:
    """Who runs the server binaries: the current user, or ``postgres`` when we are root."""

    uid: int | None = None
    gid: int | None = None
    home: str | None = None

    @classmethod
    def detect(cls) -> _RunAs:
        if os.geteuid() != 0:
            return cls()
        try:
            entry = pwd.getpwnam(SUPERUSER)
        except KeyError:
            raise RuntimeError(
                "running as root, but there is no unprivileged 'postgres' user to run the "
                "PostgreSQL server as (Debian's postgresql package creates it)"
            ) from None
        return cls(uid=entry.pw_uid, gid=entry.pw_gid, home=entry.pw_dir)

    @property
    def switches(self) -> bool:
        return self.uid is not None

    def popen_kwargs(self) -> dict[str, Any]:
        if self.uid is None:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def chown(self, path: Path) -> None:
        if self.uid is not None and self.gid is not None:
            os.chown(path, self.uid, self.gid)

    def can_use(self, directory: Path, cwd: Path) -> bool:
        """Whether the server user can create files in ``directory`` (every parent traversable)."""
        if self.uid is None:
            return True
        probe = subprocess.run(
            ["test", "-w", str(directory), "-a", "-x", str(directory)],
            cwd=cwd,
            env=_clean_env(),
            capture_output=True,
            check=False,
            **self.popen_kwargs(),
        )
        return probe.returncode == 0


@dataclass
class PostgresServer:
    """A running cluster. Connect as the ``postgres`` superuser, no password (trust)."""

    port: int
    bindir: Path
    base_dir: Path
    run_as: _RunAs = field(repr=False)
    host: str = "127.0.0.1"

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base_dir / "sock"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "postgres.log"

    def url(self, dbname: str = "postgres") -> str:
        """``postgresql://postgres@127.0.0.1:PORT/dbname``, as ``HOOKLINE_DATABASE_URL`` takes."""
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{dbname}"

    def logs(self) -> str:
        """The server log so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def create_database(self, name: str | None = None, *, template: str = "template0") -> str:
        """Create a fresh database, a copy of ``template`` (empty by default), and return its URL.

        Without a name a unique one is made up. Blocking (``psql``); from async code use
        :meth:`acreate_database`.
        """
        name = _checked_name(name)
        self.psql(_create_statement(name, template))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        name = _checked_name(name)
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def acreate_database(
        self, name: str | None = None, *, template: str = "template0"
    ) -> str:
        """:meth:`create_database` over asyncpg, for async tests."""
        import asyncpg

        name = _checked_name(name)
        conn = await asyncpg.connect(self.url("postgres"))
        try:
            await conn.execute(_create_statement(name, template))
        finally:
            await conn.close()
        return self.url(name)

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run one SQL command with ``psql`` over TCP and return its unaligned output."""
        result = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                SUPERUSER,
                "-d",
                dbname,
                "-c",
                sql,
            ],
            env=_clean_env(),
            cwd=self.base_dir,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({sql!r}): {result.stderr.strip()}")
        return result.stdout.strip()

    def stop(self) -> None:
        """Shut the server down (an outage; the data stays): :meth:`start` brings it back."""
        _stop(self)

    def start(self) -> None:
        """Start a server that :meth:`stop` shut down, on the same port; returns once ready."""
        result = _pg_ctl_start(self)
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed:\n{result.stderr}\n{self.logs()}")
        _wait_ready(self, time.monotonic() + START_TIMEOUT)

    def is_ready(self) -> bool:
        result = subprocess.run(
            [
                str(self.bindir / "pg_isready"),
                "-q",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                SUPERUSER,
                "-d",
                "postgres",
                "-t",
                "2",
            ],
            env=_clean_env(),
            cwd=self.base_dir,
            capture_output=True,
            check=False,
        )
        return result.returncode == 0


def _create_statement(name: str, template: str) -> str:
    return f'CREATE DATABASE "{name}" TEMPLATE "{_checked_name(template)}" ENCODING \'UTF8\''


def _checked_name(name: str | None) -> str:
    if name is None:
        return f"test_{uuid.uuid4().hex[:16]}"
    if not _DBNAME_RE.match(name):
        raise ValueError(f"database name must match {_DBNAME_RE.pattern}: {name!r}")
    return name


def _make_base_dir(run_as: _RunAs) -> Path:
    """A private temp dir the server user owns, short enough for the unix socket path."""
    parents = [Path(tempfile.gettempdir())]
    if parents[0] != Path("/tmp"):
        parents.append(Path("/tmp"))
    for parent in parents:
        base = Path(tempfile.mkdtemp(prefix="hookline-pg-", dir=parent))
        if len(str(base / "sock")) <= _MAX_SOCKET_DIR:
            run_as.chown(base)
            if run_as.can_use(base, cwd=base):
                return base
        shutil.rmtree(base, ignore_errors=True)
    tried = ", ".join(map(str, parents))
    raise RuntimeError(f"no temp directory usable by the PostgreSQL server user (tried {tried})")


def _run_tool(
    server: PostgresServer, args: list[str], *, timeout: float
) -> subprocess.CompletedProcess[str]:
    env = _clean_env()
    if server.run_as.home:
        env["HOME"] = server.run_as.home
    return subprocess.run(
        args,
        env=env,
        cwd=server.base_dir,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **server.run_as.popen_kwargs(),
    )


def _initdb(server: PostgresServer) -> None:
    result = _run_tool(
        server,
        [
            str(server.bindir / "initdb"),
            "-D",
            str(server.data_dir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ],
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"initdb failed:\n{result.stdout}\n{result.stderr}")
    settings = dict(SERVER_SETTINGS)
    settings["unix_socket_directories"] = f"'{server.socket_dir}'"
    conf = server.data_dir / "postgresql.conf"
    with conf.open("a") as handle:
        handle.write("\n# hookline test settings\n")
        for key, value in settings.items():
            handle.write(f"{key} = {value}\n")


def _pg_ctl_start(server: PostgresServer) -> subprocess.CompletedProcess[str]:
    return _run_tool(
        server,
        [
            str(server.bindir / "pg_ctl"),
            "start",
            "-D",
            str(server.data_dir),
            "-l",
            str(server.log_path),
            "-o",
            f"-p {server.port}",
            "-w",
            "-t",
            str(int(START_TIMEOUT)),
        ],
        timeout=START_TIMEOUT + 10,
    )


def _wait_ready(server: PostgresServer, deadline: float) -> None:
    while not server.is_ready():
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"PostgreSQL on port {server.port} not ready in time; log:\n{server.logs()}"
            )
        time.sleep(0.05)


def _postmaster_pid(server: PostgresServer) -> int | None:
    try:
        first = (server.data_dir / "postmaster.pid").read_text().splitlines()[0]
        return int(first)
    except (OSError, IndexError, ValueError):
        return None


def _stop(server: PostgresServer, modes: tuple[str, ...] = ("fast", "immediate")) -> None:
    if not (server.data_dir / "postmaster.pid").exists():
        return
    for mode in modes:
        try:
            result = _run_tool(
                server,
                [
                    str(server.bindir / "pg_ctl"),
                    "stop",
                    "-D",
                    str(server.data_dir),
                    "-m",
                    mode,
                    "-w",
                    "-t",
                    str(int(STOP_TIMEOUT)),
                ],
                timeout=STOP_TIMEOUT + 10,
            )
        except subprocess.TimeoutExpired:
            continue
        if result.returncode == 0:
            return
    # Last resort: SIGKILL the postmaster this context started.
    pid = _postmaster_pid(server)
    if pid is not None:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


@contextmanager
def running_postgres(
    *, start_attempts: int = 3, wait_for_deletion: bool = True
) -> Iterator[PostgresServer]:
    """Start a fresh PostgreSQL cluster; stop it and delete its files when the block exits
    (in the background without ``wait_for_deletion``: the session's cluster, at its end)."""
    bindir = find_pg_bindir()
    run_as = _RunAs.detect()
    base_dir = _make_base_dir(run_as)
    server = PostgresServer(port=free_port(), bindir=bindir, base_dir=base_dir, run_as=run_as)
    try:
        server.socket_dir.mkdir()
        run_as.chown(server.socket_dir)
        _initdb(server)
        for attempt in range(1, start_attempts + 1):
            deadline = time.monotonic() + START_TIMEOUT
            result = _pg_ctl_start(server)
            if result.returncode == 0:
                _wait_ready(server, deadline)
                break
            log = server.logs()
            _stop(server)
            # Another process grabbed the port between free_port() and bind: try another.
            if "already in use" in log and attempt < start_attempts:
                server.port = free_port()
                continue
            raise RuntimeError(
                f"pg_ctl start failed:\n{result.stdout}\n{result.stderr}\nserver log:\n{log}"
            )
        yield server
    finally:
        try:
            # Its files are deleted next, so no shutdown checkpoint: a fast stop wrote every
            # dirty buffer of the session's ~200 databases first (4-9 s at a suite's end).
            _stop(server, modes=("immediate",))
        finally:
            delete_tree(base_dir, wait=wait_for_deletion)


_CLIENT_BACKENDS = text(
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND backend_type = 'client backend'"
)


async def client_backends(db: Database) -> int:
    """How many client connections are open on ``db``'s database, the one asking included."""
    async with db.read() as conn:
        return int(await conn.scalar(_CLIENT_BACKENDS))


_OTHERS_LAST_STATEMENTS = text(
    "SELECT query FROM pg_stat_activity WHERE datname = current_database() "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


async def others_last_statements(db: Database) -> list[str]:
    """The text of the statement each other client connection on ``db``'s database ran (or
    parsed) last: PostgreSQL reports a Parse message's text as the backend's activity."""
    async with db.read() as conn:
        return [row.query for row in (await conn.execute(_OTHERS_LAST_STATEMENTS)).all()]


async def unanalyzed_tables(db: Database, names: Sequence[str]) -> set[str]:
    """Which of the tables ``names`` PostgreSQL has never analyzed (``reltuples`` still -1)."""
    async with db.read() as conn:
        rows = await conn.execute(
            text("SELECT relname FROM pg_class WHERE relname = ANY(:names) AND reltuples < 0"),
            {"names": list(names)},
        )
        return {row.relname for row in rows.all()}
