"""One validated settings object, read from ``HOOKLINE_*`` environment variables.

A bad value stops start-up with a message naming the variable (see ``cli.load_settings``).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_RETRY_SCHEDULE = "5,300,1800,7200,18000,36000,36000"
_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)s?\s*$")
_RATE_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HOOKLINE_", extra="ignore", frozen=True)

    database_url: str = "sqlite:///./hookline.db"
    allow_private_targets: bool = False
    retry_schedule: str = DEFAULT_RETRY_SCHEDULE
    disable_after_hours: float = Field(default=120, gt=0)
    rate_limit: str = "100/second"
    redis_url: str | None = None
    retention_days: int = Field(default=30, ge=1)
    signup: Literal["open", "closed"] = "open"
    secret_key: str | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # Run the delivery worker inside `hookline serve` (the single-process default).
    worker_in_process: bool = True
    # Cookies get the Secure flag; set when served behind https.
    secure_cookies: bool = False
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    max_webhooks_per_account: int = Field(default=100, ge=1)
    # Delivery tuning; defaults follow the contract.
    delivery_connect_timeout: float = Field(default=5.0, gt=0)
    delivery_total_timeout: float = Field(default=15.0, gt=0)
    delivery_concurrency: int = Field(default=64, ge=1)
    delivery_per_endpoint_concurrency: int = Field(default=8, ge=1)
    delivery_lease_seconds: float = Field(default=60.0, gt=0)
    delivery_poll_seconds: float = Field(default=1.0, gt=0)
    db_pool_size: int = Field(default=10, ge=1)
    # GET /v1/events/stream: how often a process looks for new events (one query for all its
    # streams), and the longest silence before a comment line.
    stream_poll_seconds: float = Field(default=0.25, gt=0)
    stream_heartbeat_seconds: float = Field(default=15.0, gt=0, le=15.0)

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

    @model_validator(mode="after")
    def _postgres_needs_secret_key(self) -> Settings:
        if self.is_postgres and not self.secret_key:
            raise ValueError(
                "HOOKLINE_SECRET_KEY is required with PostgreSQL "
                "(several processes must share it to read webhook secrets)"
            )
        return self

    @property
    def is_postgres(self) -> bool:
        return not self.database_url.startswith("sqlite")

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
