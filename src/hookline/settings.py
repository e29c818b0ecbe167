"""One validated settings object, read from ``HOOKLINE_*`` environment variables.

A bad value stops start-up with a message naming the variable (see ``cli.load_settings``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from email.utils import parseaddr
from functools import cached_property
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_RETRY_SCHEDULE = "5,300,1800,7200,18000,36000,36000"
_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)s?\s*$")
_RATE_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
# scheme -> (TLS from the first byte, STARTTLS, default port)
_SMTP_SCHEMES = {
    "smtp": (False, False, 25),
    "smtp+starttls": (False, True, 587),
    "smtps": (True, False, 465),
}


@dataclass(frozen=True, slots=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool
    starttls: bool
    username: str | None
    password: str | None

    @property
    def encrypted(self) -> bool:
        return self.implicit_tls or self.starttls


def parse_smtp_url(url: str) -> SmtpServer:
    """``smtp://host:port``, ``smtp+starttls://user:pass@host:port`` or ``smtps://...``."""
    parts = urlsplit(url)
    if parts.scheme not in _SMTP_SCHEMES:
        raise ValueError("must start with smtp://, smtp+starttls:// or smtps://")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("must be scheme://[user:password@]host[:port] with nothing after")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("has an invalid port") from None
    if not parts.hostname:
        raise ValueError("names no host")
    implicit_tls, starttls, default_port = _SMTP_SCHEMES[parts.scheme]
    server = SmtpServer(
        host=parts.hostname,
        port=port or default_port,
        implicit_tls=implicit_tls,
        starttls=starttls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
    )
    if server.username is not None and not server.encrypted:
        # Credentials over a plain connection would cross the network readable by anyone on it.
        raise ValueError("sends a password only over smtp+starttls:// or smtps://")
    return server


MAX_WORKERS = 256


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which containers and ``taskset``
    narrow), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def parse_workers(value: str) -> int:
    """``auto`` or a whole number of processes, 1 to ``MAX_WORKERS``."""
    text = value.strip().lower()
    if text == "auto":
        return usable_cores()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_WORKERS:
        raise ValueError(f"must be auto or a whole number from 1 to {MAX_WORKERS}")
    return int(text)


class Settings(BaseSettings):
    # hide_input_in_errors: a refused HOOKLINE_SMTP_URL may hold a password.
    model_config = SettingsConfigDict(
        env_prefix="HOOKLINE_", extra="ignore", frozen=True, hide_input_in_errors=True
    )

    database_url: str = "sqlite:///./hookline.db"
    allow_private_targets: bool = False
    retry_schedule: str = DEFAULT_RETRY_SCHEDULE
    disable_after_hours: float = Field(default=120, gt=0)
    rate_limit: str = "100/second"
    redis_url: str | None = None
    # At most a century: "now minus the retention period" stays a representable time.
    retention_days: int = Field(default=30, ge=1, le=36_500)
    # How often each delivery worker ends the calls past their account's max_call_seconds.
    call_sweep_seconds: float = Field(default=15.0, ge=0.05, le=3600)
    signup: Literal["open", "closed"] = "open"
    secret_key: str | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # Log lines as JSON, as text for people, or "auto": text on a terminal, JSON elsewhere.
    log_format: Literal["auto", "json", "text"] = "auto"
    # The defaults of `hookline serve --host/--port`.
    host: str = Field(default="127.0.0.1", min_length=1)
    port: int = Field(default=8000, ge=1, le=65535)
    # Run the delivery worker inside `hookline serve` (in each of its processes).
    worker_in_process: bool = True
    # The default of `hookline serve --workers`: a number of API processes, or "auto" (the cores
    # this process may run on).
    workers: str = "auto"
    # Cookies get the Secure flag; set when served behind https.
    secure_cookies: bool = False
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    max_webhooks_per_account: int = Field(default=100, ge=1)
    # CEL filters (docs/webhooks.md#filters): the largest estimated cost a filter may have, and
    # what one evaluation may take in the filter process (seconds, megabytes of address space).
    filter_cost_limit: int = Field(default=1_000_000, ge=1)
    filter_timeout: float = Field(default=0.25, gt=0, le=10)
    filter_memory_mb: int = Field(default=512, ge=64)
    # Delivery tuning; defaults follow the contract.
    delivery_connect_timeout: float = Field(default=5.0, gt=0)
    delivery_total_timeout: float = Field(default=15.0, gt=0)
    delivery_concurrency: int = Field(default=64, ge=1)
    delivery_per_endpoint_concurrency: int = Field(default=8, ge=1)
    delivery_lease_seconds: float = Field(default=60.0, gt=0)
    delivery_poll_seconds: float = Field(default=1.0, gt=0)
    db_pool_size: int = Field(default=10, ge=1)
    # How long a stop (SIGTERM, SIGINT) may take: answering the requests received, then the
    # delivery worker's sends in flight; what is left after it is cancelled (stopping.py).
    stop_grace_seconds: float = Field(default=10.0, ge=0, le=3600)
    # GET /v1/events/stream: how often a process looks for new events (one query for all its
    # streams), and the longest silence before a comment line.
    stream_poll_seconds: float = Field(default=0.25, gt=0)
    stream_heartbeat_seconds: float = Field(default=15.0, gt=0, le=15.0)
    # The most GET /v1/events/stream a key holds open at once, across every process.
    streams_per_key: int = Field(default=5, ge=1)
    # Mail (invitations, password resets, alerts): without both, mails go to the log (mail.py).
    # A secret: it may carry the SMTP password (SecretStr keeps it out of reprs and logs).
    smtp_url: SecretStr | None = None
    mail_from: str | None = None
    # A PEM file of CAs to trust for the SMTP server's certificate instead of the system's.
    smtp_ca_file: Path | None = None
    # Where people reach the dashboard: the base of the links in mails and `hookline users add`
    # (never taken from a request's Host header, which a client chooses).
    public_url: str = "http://127.0.0.1:8000"

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        if not value.startswith(("sqlite://", "postgresql://", "postgres://", "postgresql+")):
            raise ValueError("must start with sqlite:/// or postgresql://")
        return value

    @field_validator("retry_schedule")
    @classmethod
    def _schedule_is_seconds(cls, value: str) -> str:
        try:
            delays = [float(part) for part in value.split(",")]
        except ValueError:
            raise ValueError("must be comma-separated seconds, e.g. 5,300,1800") from None
        if not delays or any(d < 0 for d in delays):
            raise ValueError("must be comma-separated non-negative seconds")
        return value

    @field_validator("rate_limit")
    @classmethod
    def _rate_is_parsable(cls, value: str) -> str:
        if not _RATE_RE.match(value):
            raise ValueError("must look like 100/second, 6000/minute, ...")
        return value

    @field_validator("workers")
    @classmethod
    def _workers_is_a_count(cls, value: str) -> str:
        parse_workers(value)  # raises ValueError with the reason
        return value.strip().lower()

    @field_validator("smtp_url")
    @classmethod
    def _smtp_url_is_parsable(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            parse_smtp_url(value.get_secret_value())  # raises ValueError with the reason
        return value

    @field_validator("mail_from")
    @classmethod
    def _mail_from_is_an_address(cls, value: str | None) -> str | None:
        if value is None:
            return None
        _name, address = parseaddr(value)
        if "@" not in address or any(ch in value for ch in "\r\n\0"):
            raise ValueError('must be an e-mail address, e.g. "hookline <alerts@example.com>"')
        return value

    @field_validator("smtp_ca_file")
    @classmethod
    def _ca_file_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"no such file: {value}")
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url_is_http(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
            raise ValueError("must be an http(s) URL such as https://hooks.example.com")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _postgres_needs_secret_key(self) -> Settings:
        if self.is_postgres and not self.secret_key:
            raise ValueError(
                "HOOKLINE_SECRET_KEY is required with PostgreSQL "
                "(several processes must share it to read webhook secrets)"
            )
        return self

    @property
    def mail_configured(self) -> bool:
        return self.smtp_url is not None and self.mail_from is not None

    @cached_property
    def smtp_server(self) -> SmtpServer | None:
        return None if self.smtp_url is None else parse_smtp_url(self.smtp_url.get_secret_value())

    @property
    def is_postgres(self) -> bool:
        return not self.database_url.startswith("sqlite")

    @property
    def worker_count(self) -> int:
        """``workers`` as a number of processes (``auto``: the usable cores)."""
        return parse_workers(self.workers)

    @cached_property
    def retry_delays(self) -> tuple[float, ...]:
        return tuple(float(part) for part in self.retry_schedule.split(","))

    @cached_property
    def rate_limit_parts(self) -> tuple[int, int]:
        """(requests, window seconds) of ``rate_limit``."""
        match = _RATE_RE.match(self.rate_limit)
        assert match is not None
        return int(match.group(1)), _RATE_UNIT_SECONDS[match.group(2)]

    @cached_property
    def sqlite_path(self) -> Path | None:
        if self.is_postgres:
            return None
        path = self.database_url.removeprefix("sqlite:///").removeprefix("sqlite+aiosqlite:///")
        return Path(path)
