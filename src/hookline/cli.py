"""``hookline``: serve, worker, migrate, accounts, keys and users.

Every command names the database it uses on stderr. Only ``migrate`` and ``serve`` create one:
the others refuse a database that does not exist, so a command run from the wrong directory can
never start a second, empty ``hookline.db`` whose keys the server has never heard of. A failure
is one line on stderr (``hookline: error: ...``), never a traceback (HOOKLINE_LOG_LEVEL=DEBUG
adds it).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import errno
import os
import signal
import socket
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import orjson
from pydantic import ValidationError

from hookline import listen
from hookline.settings import Settings
from hookline.supervisor import (
    NOT_STARTED,
    Supervisor,
    listeners_per_process,
    metrics_shared_across_processes,
)

if TYPE_CHECKING:
    from hookline.storage.db import Database

T = TypeVar("T")

DATABASE_HELP = (
    "The database is HOOKLINE_DATABASE_URL (default: sqlite:///./hookline.db, a file in the "
    "current directory)."
)
# HOOKLINE_* variables read by a command rather than by Settings.
_COMMAND_VARIABLES = frozenset({"HOOKLINE_API_KEY"})


class CliError(Exception):
    """A failure the person can act on: printed as one line, exit status ``status``."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


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


def _note(message: str) -> None:
    print(f"hookline: {message}", file=sys.stderr)


def known_variables() -> frozenset[str]:
    settings = {f"HOOKLINE_{name.upper()}" for name in Settings.model_fields}
    return frozenset(settings) | _COMMAND_VARIABLES


def warn_unknown_variables(environ: Mapping[str, str]) -> None:
    """A misspelt setting is otherwise silently ignored: name it (and the likely intent)."""
    known = known_variables()
    for name in sorted(environ):
        if not name.upper().startswith("HOOKLINE_") or name.upper() in known:
            continue
        close = difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        _note(f"warning: ignoring unknown variable {name}{hint}")


# -- the database --------------------------------------------------------------------------------


def database_label(settings: Settings) -> str:
    """Where the database is, for people: an absolute path, or the URL without its password."""
    if settings.sqlite_path is not None:
        return str(settings.sqlite_path.resolve())
    from hookline.storage.db import describe_database

    return describe_database(settings.database_url)


def _refuse_missing_file(settings: Settings, label: str) -> None:
    if settings.sqlite_path is not None and not settings.sqlite_path.exists():
        raise CliError(
            f"no database at {label}; create it with `hookline migrate`, or set "
            "HOOKLINE_DATABASE_URL to the one you meant"
        )


async def _bring_to_head(db: Database, label: str, *, may_create: bool) -> str:
    """Migrate to the latest schema; says and returns "created", "upgraded" or "current"."""
    from hookline.storage.migrate import head_revision, schema_revision, upgrade_to_head

    before = await schema_revision(db)
    if before is None and not may_create:
        raise CliError(f"{label} has no hookline schema; create it with `hookline migrate`")
    head = head_revision()
    if before == head:
        return "current"
    await upgrade_to_head(db)
    if before is None:
        _note(f"created {label} (schema {head})")
        return "created"
    _note(f"upgraded {label} from schema {before} to {head}")
    return "upgraded"


@asynccontextmanager
async def opened_database(
    settings: Settings, *, may_create: bool = False, outcome: list[str] | None = None
) -> AsyncIterator[Database]:
    """The database, named on stderr and at the latest schema; refused when it does not exist
    unless ``may_create``. ``outcome`` receives what migrating did."""
    from hookline.storage.db import DATABASE_ERRORS, Database

    label = database_label(settings)
    _note(f"database {label}")
    if not may_create:
        _refuse_missing_file(settings, label)
    db = Database(settings)
    try:
        try:
            done = await _bring_to_head(db, label, may_create=may_create)
        except DATABASE_ERRORS as exc:
            raise CliError(f"cannot use the database {label}: {_first_line(exc)}") from None
        if outcome is not None:
            outcome.append(done)
        yield db
    finally:
        await db.dispose()


def _with_db(settings: Settings, action: Callable[[Database], Awaitable[T]]) -> T:
    """Run ``action`` on an existing database (see :func:`opened_database`)."""

    async def run() -> T:
        async with opened_database(settings) as db:
            return await action(db)

    return asyncio.run(run())


# -- serve and worker ----------------------------------------------------------------------------


def listen_socket(host: str, port: int) -> socket.socket:
    """Bind now, before anything else starts: a busy port fails at once, naming the option."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise CliError(f"cannot listen on {host!r}: {exc.strerror}; check --host") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CliError(
                f"port {port} on {host} is already in use (another hookline serve?); "
                "choose another with --port (or HOOKLINE_PORT)"
            ) from None
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror}; check --host") from None
    return sock


def cmd_serve(args: argparse.Namespace) -> int:
    from hookline.stopping import signals_caught

    # First: a SIGTERM during start-up stops the server once started, with exit status 0.
    with signals_caught():
        return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    from hookline.logs import configure_logging
    from hookline.settings import parse_workers

    settings = load_settings()
    host = args.host or settings.host
    port = args.port or settings.port
    workers = parse_workers(args.workers) if args.workers else settings.worker_count
    # Closed however serving ends: a server that never started (its lifespan failed, the
    # folder below is missing) has not handed the socket to a loop that would close it.
    with listen_socket(host, port) as listener:
        label = database_label(settings)
        path = settings.sqlite_path
        missing = path is not None and not path.exists()
        _note(f"database {label}" + (" (new: creating it)" if missing else ""))
        if path is not None and missing and not path.resolve().parent.is_dir():
            folder = path.resolve().parent
            raise CliError(f"cannot create {label}: the folder {folder} does not exist")
        if workers == 1:
            configure_logging(settings.log_level, log_format=settings.log_format)
            return _serve_in_this_process(settings, listener)
        configure_logging(
            settings.log_level, process_name="supervisor", log_format=settings.log_format
        )
        return _serve_in_processes(settings, listener, workers)


def _serve_in_this_process(settings: Settings, listener: socket.socket) -> int:
    """The API (and the delivery worker, unless turned off) in this process, until SIGTERM or
    SIGINT; then the graceful stop of stopping.py, exit status 0."""
    import uvicorn

    from hookline.app import create_app
    from hookline.runtime import settle_heap
    from hookline.stopping import graceful_server_class, stop_requested

    app = create_app(settings)
    settle_heap()
    if stop_requested():  # signalled while the app was built: nothing to serve or stop
        return 0
    host, port = listener.getsockname()[:2]
    options = server_options(stop_grace=settings.stop_grace_seconds)
    config = uvicorn.Config(app, host=host, port=port, **options)
    server = graceful_server_class()(config)
    server.run(sockets=[listener])
    if not server.started:
        raise CliError("the server did not start; the log above says why", status=NOT_STARTED)
    return 0


def _serve_in_processes(settings: Settings, listener: socket.socket, workers: int) -> int:
    """``workers`` children of a supervisor, each :func:`_serve_in_this_process` on the one
    socket (docs/scaling.md). What must happen once happens here, before they fork."""
    with metrics_shared_across_processes():  # first: before prometheus_client is imported
        return _supervise(settings, listener, workers)


def _supervise(settings: Settings, listener: socket.socket, workers: int) -> int:
    from hookline.crypto import resolve_secret_key
    from hookline.guards.ratelimit import share_windows_across_processes
    from hookline.logs import configure_logging

    asyncio.run(_migrate_for_serve(settings))
    resolve_secret_key(settings)  # on SQLite it may create the key file: once, not N times
    if not settings.redis_url:
        share_windows_across_processes(*settings.rate_limit_parts)

    host, port = listener.getsockname()[:2]
    try:
        listeners = listeners_per_process(listener, workers)
    except OSError as exc:  # another process took the port in between: as listen_socket says
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror}; check --port") from None

    def run_child(slot: int) -> int:
        configure_logging(
            settings.log_level, process_name=f"serve-{slot}", log_format=settings.log_format
        )
        own = listeners[slot - 1]
        for other in listeners:
            if other is not own:
                other.close()
        try:
            return _serve_in_this_process(settings, own)
        except CliError as exc:
            _note(f"error: {exc}")
            return exc.status

    supervisor = Supervisor(
        workers,
        run_child,
        stop_timeout=settings.stop_grace_seconds + STOP_TEARDOWN_SECONDS,
        listeners=listeners,
    )
    try:
        return supervisor.run()
    finally:
        for each in listeners:
            each.close()


STOP_TEARDOWN_SECONDS = 20.0
"""What a server process may take after its grace (the lifespan: handing back unfinished
deliveries, closing the database) before the supervisor kills it."""


async def _migrate_for_serve(settings: Settings) -> None:
    from hookline.storage.db import DATABASE_ERRORS, Database

    label = database_label(settings)
    db = Database(settings)
    try:
        await _bring_to_head(db, label, may_create=True)
    except DATABASE_ERRORS as exc:
        raise CliError(f"cannot use the database {label}: {_first_line(exc)}") from None
    finally:
        await db.dispose()


KEEP_ALIVE_SECONDS = 120
"""How long an idle connection stays open. Longer than any common client's or load balancer's
idle timeout (httpx and Node 5 s, aiohttp 15 s, AWS ALB 60 s, nginx 75 s, Go 90 s), so the
client always gives up on an idle connection first: with uvicorn's default, 5 s, a client
that reuses a connection at that instant sends its request into a socket being closed, and a
POST then fails with a reset the client cannot safely retry (the CI run of 2026-11-24)."""


def server_options(stop_grace: float = 10.0) -> dict[str, Any]:
    """uvicorn's settings for ``hookline serve``; bench/baseline.py runs the ceilings on them.

    Every process drains its listener's queue each time it accepts (``runtime.EagerAcceptLoop``):
    each of ``serve --workers N``'s has a listener of its own (``listeners_per_process``), so it
    takes no waiting connection from a sibling."""
    from hookline.api.protocol import BoundedHttpToolsProtocol

    return {
        "log_config": None,
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        # The HTTP side of the stop's grace (stopping.py); the lifespan gets what is left.
        "timeout_graceful_shutdown": stop_grace,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        # httptools with a bound on the request head (it has none of its own): api/protocol.py.
        "http": BoundedHttpToolsProtocol,
        # No WebSocket endpoints: an Upgrade request is answered by the app like any other (the
        # WebSocket protocol would refuse it with a bare 403, outside the contract's body).
        "ws": "none",
        # uvloop, accepting every waiting connection at once (runtime.py).
        "loop": "hookline.runtime:new_event_loop",
    }


def cmd_worker(_args: argparse.Namespace) -> int:
    from hookline.app import worker_chores
    from hookline.delivery.worker import run_worker
    from hookline.logs import configure_logging
    from hookline.runtime import settle_heap

    settings = load_settings()
    configure_logging(settings.log_level, log_format=settings.log_format)
    settle_heap()

    async def work() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        async with opened_database(settings) as db:
            await run_worker(settings, db, stop, worker_chores(settings))

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


# -- migrate, accounts, keys ---------------------------------------------------------------------


def cmd_migrate(_args: argparse.Namespace) -> int:
    settings = load_settings()
    outcome: list[str] = []

    async def migrate() -> None:
        async with opened_database(settings, may_create=True, outcome=outcome):
            pass

    asyncio.run(migrate())
    if outcome == ["current"]:
        _note(f"{database_label(settings)} is already at the latest schema")
    return 0


def _print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value).decode() + "\n")
    sys.stdout.flush()


def _name(value: str) -> str:
    """argparse type for account and key names: 1-200 printable characters."""
    name = value.strip()
    if not 1 <= len(name) <= 200:
        raise argparse.ArgumentTypeError("must be 1 to 200 characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise argparse.ArgumentTypeError("must not contain control characters")
    return name


def _scopes(value: str) -> list[str]:
    from hookline.domain import keys

    scopes = [s.strip() for s in value.split(",") if s.strip()]
    try:
        return keys.normalize_scopes(scopes)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


async def _require_account(conn: Any, account_id: str) -> None:
    from hookline.domain import keys

    if not await keys.account_exists(conn, account_id):
        raise CliError(
            f"no account {account_id} in this database (see `hookline accounts create`, or "
            "the dashboard's sign-up)"
        )


def cmd_accounts_create(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def create(db: Database) -> dict[str, str]:
        async with db.begin() as conn:
            account_id = await keys.create_account(conn, args.name)
            api_key, _record = await keys.create_key(conn, account_id, "default")
        return {"account_id": account_id, "api_key": api_key}

    _print_json(_with_db(load_settings(), create))
    return 0


def cmd_accounts_list(_args: argparse.Namespace) -> int:
    """Every account, oldest first, one JSON object per line, read a page at a time."""
    from hookline.domain import keys

    async def listing(db: Database) -> None:
        after = ""
        while True:
            async with db.read() as conn:
                page = await keys.accounts_page(conn, after)
            for account in page:
                _print_json(account)
            if len(page) < keys.ACCOUNTS_PAGE:
                return
            after = page[-1]["id"]

    _with_db(load_settings(), listing)
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def create(db: Database) -> dict[str, Any]:
        async with db.begin() as conn:
            await _require_account(conn, args.account)
            api_key, record = await keys.create_key(conn, args.account, args.name, args.scopes)
        return {"api_key": api_key, **record}

    _print_json(_with_db(load_settings(), create))
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def listing(db: Database) -> list[dict[str, Any]]:
        async with db.read() as conn:
            await _require_account(conn, args.account)
            return await keys.list_keys(conn, args.account)

    for record in _with_db(load_settings(), listing):
        _print_json(record)
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from hookline.domain import keys

    async def revoke(db: Database) -> bool:
        async with db.begin() as conn:
            await _require_account(conn, args.account)
            return await keys.revoke_key(conn, args.account, args.key_id)

    if not _with_db(load_settings(), revoke):
        raise CliError(f"no live key {args.key_id} in account {args.account}")
    _print_json({"id": args.key_id, "revoked": True})
    return 0


def _email(value: str) -> str:
    """argparse type for an e-mail address, in its canonical form."""
    from hookline.dashboard import users

    try:
        return users.canonical_email(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_users_add(args: argparse.Namespace) -> int:
    """Prints a one-time link (24 h) where the person chooses a password and joins the account."""
    from hookline.dashboard import links, people, users

    settings = load_settings()

    async def add(db: Database) -> str | None:
        async with db.begin() as conn:
            if await users.find_user(conn, args.email) is not None:
                raise CliError(f"{args.email} already has a dashboard login")
            try:
                message = await people.invite(conn, settings, args.account, args.email)
            except people.NoSuchAccount:
                raise CliError(f"no account {args.account} in this database") from None
        return message.link

    _print_link(args.email, links.INVITE, _with_db(settings, add))
    return 0


def cmd_users_reset(args: argparse.Namespace) -> int:
    """Prints a one-time link (1 h) where the user chooses a new password; nothing is mailed,
    and the password stays as it is until the link is used."""
    from hookline.dashboard import links, people

    settings = load_settings()

    async def reset(db: Database) -> str | None:
        async with db.begin() as conn:
            message = await people.reset_mail(conn, settings, args.email)
        if message is None:
            raise CliError(f"no dashboard login uses {args.email}")
        return message.link

    _print_link(args.email, links.RESET, _with_db(settings, reset))
    return 0


def _print_link(email: str, purpose: str, link: str | None) -> None:
    """The link alone on stdout (for scripts), what to do with it on stderr."""
    from hookline.dashboard import links

    if link is None:
        raise CliError(f"no link was made for {email}")
    _note(f"send this link to {email}; it works once, for {links.validity(purpose)}:")
    print(link)


# -- the parser ----------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse's, with a usage error on one line that points at ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows every option's default after its description (except "no default")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default not in (None, argparse.SUPPRESS, False) and action.option_strings:
            text += " (default: %(default)s)"
        return text


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("must be 1-65535")
    return port


def _workers(value: str) -> str:
    from hookline.settings import parse_workers

    try:
        parse_workers(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _command(
    commands: Any, name: str, summary: str, description: str = DATABASE_HELP
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}.\n\n{description}",
        formatter_class=_HelpFormatter,
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hookline",
        description="Contacts, calls and signed webhook delivery.",
        epilog=f"{DATABASE_HELP} Every setting: docs/operations.md.",
        formatter_class=_HelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = _command(
        commands,
        "serve",
        "run the API, dashboard and delivery worker",
        f"{DATABASE_HELP} serve creates it if it does not exist.",
    )
    serve.add_argument(
        "--host", help="address to listen on (default: HOOKLINE_HOST, else 127.0.0.1)"
    )
    serve.add_argument(
        "--port", type=_port, help="port to listen on (default: HOOKLINE_PORT, else 8000)"
    )
    serve.add_argument(
        "--workers",
        type=_workers,
        metavar="N|auto",
        help="server processes on the one port, each with its delivery worker; auto: one per "
        "usable core (default: HOOKLINE_WORKERS, else auto)",
    )
    serve.set_defaults(func=cmd_serve)

    _command(commands, "worker", "run a delivery worker only").set_defaults(func=cmd_worker)
    _command(
        commands,
        "migrate",
        "create the database, or bring it to the latest schema",
    ).set_defaults(func=cmd_migrate)

    accounts = commands.add_parser(
        "accounts", help="manage accounts", formatter_class=_HelpFormatter
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    create_account = _command(accounts, "create", "create an account and its first key")
    create_account.add_argument("name", type=_name, help="the account's name, e.g. your company")
    create_account.set_defaults(func=cmd_accounts_create)
    _command(
        accounts,
        "list",
        "list every account, one JSON line each (id, name, created_at, members, live_keys)",
    ).set_defaults(func=cmd_accounts_list)

    key_commands = commands.add_parser(
        "keys", help="manage API keys", formatter_class=_HelpFormatter
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    create_key = _command(key_commands, "create", "create a key (printed once)")
    create_key.add_argument("--account", required=True, help="the account's id (acct_...)")
    create_key.add_argument("--name", type=_name, default="cli", help="a label for the key")
    create_key.add_argument(
        "--scopes", type=_scopes, help="comma-separated scopes (default: every scope)"
    )
    create_key.set_defaults(func=cmd_keys_create)
    list_keys = _command(key_commands, "list", "list an account's keys, one JSON line each")
    list_keys.add_argument("--account", required=True, help="the account's id (acct_...)")
    list_keys.set_defaults(func=cmd_keys_list)
    revoke_key = _command(key_commands, "revoke", "revoke a key at once")
    revoke_key.add_argument("key_id", help="the key's id (key_...), from `keys list`")
    revoke_key.add_argument("--account", required=True, help="the account's id (acct_...)")
    revoke_key.set_defaults(func=cmd_keys_revoke)
    listen.add_arguments(_command(commands, "listen", listen.SUMMARY, listen.DESCRIPTION))

    user_commands = commands.add_parser(
        "users",
        help="manage the people who use an account's dashboard",
        formatter_class=_HelpFormatter,
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    add_user = _command(
        user_commands,
        "add",
        "print a one-time link (valid 24 h) where someone sets a password for the dashboard",
        f"The link starts with HOOKLINE_PUBLIC_URL. {DATABASE_HELP}",
    )
    add_user.add_argument("--account", required=True, help="the account's id (acct_...)")
    add_user.add_argument("--email", required=True, type=_email, help="the person's e-mail address")
    add_user.set_defaults(func=cmd_users_add)
    reset_user = _command(
        user_commands,
        "reset",
        "print a one-time link (valid 1 h) where a user chooses a new password",
        f"Nothing is mailed, and the password stays as it is until the link is used. The link "
        f"starts with HOOKLINE_PUBLIC_URL. {DATABASE_HELP}",
    )
    reset_user.add_argument("--email", required=True, type=_email, help="the user's e-mail address")
    reset_user.set_defaults(func=cmd_users_reset)
    return parser


# -- running a command ---------------------------------------------------------------------------


def _first_line(exc: BaseException) -> str:
    # A database driver's error (SQLAlchemy wraps it) says what went wrong in its first line.
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warn_unknown_variables(os.environ)
    try:
        status: int = args.func(args)
    except CliError as exc:
        _note(f"error: {exc}")
        return exc.status
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("HOOKLINE_LOG_LEVEL", "").upper() == "DEBUG":
            traceback.print_exc()
        _note(f"error: {type(exc).__name__}: {_first_line(exc)}")
        return 1
    return status
