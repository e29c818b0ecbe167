"""Tells a database that is unreachable (or locked too long) from a bug.

An exception for which :func:`is_store_unavailable` is true means the request could not reach
its data, not that hookline is broken: the API answers 503 ``service_unavailable`` with
``Retry-After`` instead of 500 (``api.errors``), and the same request works again once the
database is back, without restarting hookline.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import asyncpg

# SQLite result codes (the low byte of an extended code) that say "not now" rather than "wrong".
_SQLITE_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY,  # another process held the write lock past busy_timeout
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_CANTOPEN,  # the file or its directory cannot be opened
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_FULL,  # disk full: nothing was written
}

# asyncpg's errors for a server that is gone, going or not there yet, or out of connections.
_POSTGRES_UNAVAILABLE: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08, e.g. the connection does not exist
    asyncpg.CannotConnectNowError,  # starting up or shutting down
    asyncpg.AdminShutdownError,  # terminated by a shutdown or pg_terminate_backend
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__


def _unavailable(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True  # refused, reset, a connect that timed out, or no pooled connection free
    if isinstance(exc, _POSTGRES_UNAVAILABLE):
        return True
    if isinstance(exc, asyncpg.InterfaceError) and "connection is closed" in str(exc):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in _SQLITE_UNAVAILABLE
    return False


def is_store_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the database cannot be used right now."""
    return any(_unavailable(cause) for cause in _causes(exc))


# PostgreSQL rolled the transaction back to break a conflict with another one: nothing it did
# was kept, so running it again is safe and usually succeeds.
_POSTGRES_CONFLICTS: tuple[type[BaseException], ...] = (
    asyncpg.DeadlockDetectedError,
    asyncpg.SerializationError,
)


def is_transaction_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a deadlock or serialization failure: the
    transaction was rolled back whole and may simply be run again."""
    return any(isinstance(cause, _POSTGRES_CONFLICTS) for cause in _causes(exc))
