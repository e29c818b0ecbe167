"""``hookline``: serve, worker, migrate, accounts, keys and users."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError

from hookline import listen
from hookline.settings import Settings

T = TypeVar("T")


def load_settings() -> Settings:
    """Settings from HOOKLINE_*; a bad value stops start-up with a message naming it."""
    try:
        return Settings()
    except ValidationError as exc:
        for error in exc.errors():
            loc = "_".join(str(part) for part in error["loc"]).upper()
            name = f"HOOKLINE_{loc}" if loc else "settings"
            print(f"hookline: invalid setting {name}: {error['msg']}", file=sys.stderr)
        raise SystemExit(2) from None


def _print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value).decode() + "\n")
    sys.stdout.flush()


def _with_db(settings: Settings, action: Callable[[Any], Awaitable[T]]) -> T:
    from hookline.storage.db import Database
    from hookline.storage.migrate import upgrade_to_head

    async def run() -> T:
        db = Database(settings)
        try:
            await upgrade_to_head(db)
            return await action(db)
        finally:
            await db.dispose()

    return asyncio.run(run())


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hookline.app import create_app
    from hookline.logs import configure_logging
    from hookline.runtime import settle_heap

    settings = load_settings()
    configure_logging(settings.log_level)
    app = create_app(settings)
    settle_heap()
    uvicorn.run(app, host=args.host, port=args.port, **server_options())
    return 0


def server_options() -> dict[str, Any]:
    """uvicorn's settings for ``hookline serve``; bench/baseline.py runs the ceilings on them."""
    from hookline.limits.http import BoundedHttpToolsProtocol

    return {
        "log_config": None,
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        "timeout_graceful_shutdown": 10,
        # httptools with a bound on the request head (it has none of its own): limits/http.py.
        "http": BoundedHttpToolsProtocol,
        # No WebSocket endpoints: an Upgrade request is answered by the app like any other (the
        # WebSocket protocol would refuse it with a bare 403, outside the contract's body).
        "ws": "none",
    }


def cmd_worker(_args: argparse.Namespace) -> int:
    from hookline.delivery.worker import run_worker
    from hookline.logs import configure_logging
    from hookline.runtime import settle_heap
    from hookline.storage.db import Database
    from hookline.storage.migrate import upgrade_to_head

    settings = load_settings()
    configure_logging(settings.log_level)
    settle_heap()

    async def work() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        db = Database(settings)
        try:
            await upgrade_to_head(db)
            await run_worker(settings, db, stop)
        finally:
            await db.dispose()

    _run(work())
    return 0


def _run(main: Coroutine[Any, Any, None]) -> None:
    """Run on uvloop when it is installed (it comes with uvicorn[standard])."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
        asyncio.run(main)
    else:
        uvloop.run(main)


def cmd_migrate(_args: argparse.Namespace) -> int:
    settings = load_settings()

    async def done(_db: Any) -> None:
        return None

    _with_db(settings, done)
    print("hookline: database is at the latest schema", file=sys.stderr)
    return 0


def cmd_accounts_create(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def create(db: Any) -> dict[str, str]:
        async with db.begin() as conn:
            account_id = await keys.create_account(conn, args.name)
            api_key, _record = await keys.create_key(conn, account_id, "default")
        return {"account_id": account_id, "api_key": api_key}

    _print_json(_with_db(load_settings(), create))
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    scopes = [s.strip() for s in args.scopes.split(",")] if args.scopes else None
    try:
        keys.normalize_scopes(scopes)
    except ValueError as exc:
        print(f"hookline: {exc}", file=sys.stderr)
        return 2

    async def create(db: Any) -> dict[str, Any]:
        async with db.begin() as conn:
            api_key, record = await keys.create_key(conn, args.account, args.name, scopes)
        return {"api_key": api_key, **record}

    _print_json(_with_db(load_settings(), create))
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def listing(db: Any) -> list[dict[str, Any]]:
        async with db.read() as conn:
            return await keys.list_keys(conn, args.account)

    for record in _with_db(load_settings(), listing):
        _print_json(record)
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def revoke(db: Any) -> bool:
        async with db.begin() as conn:
            return await keys.revoke_key(conn, args.account, args.key_id)

    if not _with_db(load_settings(), revoke):
        print(f"hookline: no live key {args.key_id} in account {args.account}", file=sys.stderr)
        return 1
    _print_json({"id": args.key_id, "revoked": True})
    return 0


def cmd_users_add(args: argparse.Namespace) -> int:
    """Prints a one-time link (24 h) where the person chooses a password and joins the account."""
    from hookline.dashboard import links, people, users

    try:
        email = users.canonical_email(args.email)
    except ValueError as exc:
        print(f"hookline: --email: {exc}", file=sys.stderr)
        return 2
    settings = load_settings()

    async def add(db: Any) -> str | None:
        async with db.begin() as conn:
            if await users.find_user(conn, email) is not None:
                print(f"hookline: {email} already has a dashboard login", file=sys.stderr)
                return None
            try:
                link, _mail = await people.invite(conn, settings, args.account, email)
            except people.NoSuchAccount:
                print(f"hookline: no account {args.account}", file=sys.stderr)
                return None
        return link

    link = _with_db(settings, add)
    if link is None:
        return 1
    hours = int(links.LIFETIMES[links.INVITE].total_seconds() // 3600)
    print(
        f"hookline: send this link to {email}; it works once, for {hours} hours:", file=sys.stderr
    )
    print(link)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the API, dashboard and delivery worker")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(func=cmd_serve)

    commands.add_parser("worker", help="run a delivery worker only").set_defaults(func=cmd_worker)
    commands.add_parser("migrate", help="bring the database to the latest schema").set_defaults(
        func=cmd_migrate
    )

    accounts = commands.add_parser("accounts", help="manage accounts").add_subparsers(
        dest="action", required=True
    )
    create_account = accounts.add_parser("create", help="create an account and its first key")
    create_account.add_argument("name")
    create_account.set_defaults(func=cmd_accounts_create)

    key_commands = commands.add_parser("keys", help="manage API keys").add_subparsers(
        dest="action", required=True
    )
    create_key = key_commands.add_parser("create", help="create a key (printed once)")
    create_key.add_argument("--account", required=True)
    create_key.add_argument("--name", default="cli")
    create_key.add_argument("--scopes", help="comma-separated; default: all scopes")
    create_key.set_defaults(func=cmd_keys_create)
    list_keys = key_commands.add_parser("list", help="list an account's keys")
    list_keys.add_argument("--account", required=True)
    list_keys.set_defaults(func=cmd_keys_list)
    revoke_key = key_commands.add_parser("revoke", help="revoke a key at once")
    revoke_key.add_argument("key_id")
    revoke_key.add_argument("--account", required=True)
    revoke_key.set_defaults(func=cmd_keys_revoke)
    listen.add_parser(commands)

    user_commands = commands.add_parser(
        "users", help="manage the people who use an account's dashboard"
    ).add_subparsers(dest="action", required=True)
    add_user = user_commands.add_parser(
        "add",
        help="print a one-time link (valid 24 h) where someone sets a password for the dashboard",
        description="Print a one-time link (valid 24 hours) where this person chooses a password "
        "and joins the account's dashboard. Links start with HOOKLINE_PUBLIC_URL.",
    )
    add_user.add_argument("--account", required=True, help="the account id (acc_...)")
    add_user.add_argument("--email", required=True, help="the person's e-mail address")
    add_user.set_defaults(func=cmd_users_add)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result
