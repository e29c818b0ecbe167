"""Databases and server environments shared by the phases."""

from __future__ import annotations

from pathlib import Path

from tests.support.postgres import PostgresServer

from bench.procs import LOAD_CORE, pin_process_tree

SECRET_KEY = "bench-secret-key-not-for-production"
CONTACT_BODY = (
    b'{"first_name":"Ada","last_name":"Lovelace","phone_number":"+15551234567",'
    b'"email":"ada@example.com","company":"Analytical Engines","tags":["vip","math"],'
    b'"notes":"Met at the conference."}'
)


def hookline_env(database_url: str, *, worker: bool = False, **extra: str) -> dict[str, str]:
    """A benchmark ``hookline serve``/``worker``: no rate limit in the way, warnings only."""
    env = {
        "HOOKLINE_DATABASE_URL": database_url,
        "HOOKLINE_SECRET_KEY": SECRET_KEY,
        "HOOKLINE_RATE_LIMIT": "10000000/second",
        "HOOKLINE_LOG_LEVEL": "WARNING",
        "HOOKLINE_WORKER_IN_PROCESS": "true" if worker else "false",
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
        # One process unless a phase asks for more (bench/scale.py): auto would follow pinning.
        "HOOKLINE_WORKERS": "1",
    }
    env.update(extra)
    return env


def sqlite_url(directory: Path, name: str) -> str:
    return f"sqlite:///{directory / name}.db"


def pin_postgres(pg: PostgresServer) -> None:
    """PostgreSQL gets the load core, like a database on its own host."""
    try:
        pid = int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, IndexError, ValueError):
        return
    pin_process_tree(pid, LOAD_CORE)


def auth_headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
