"""Test helpers for the delivery engine: rows inserted with plain Core statements (the domain
layer is not needed). Waiting for a condition: ``tests.support.waiting.eventually``."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import insert, select, update

from hookline import ids
from hookline.crypto import SecretBox
from hookline.delivery.worker import Worker
from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.storage.models import deliveries, delivery_attempts, events, webhooks
from hookline.timeutil import utcnow
from tests.conftest import new_account
from tests.support.waiting import eventually

T = TypeVar("T")

CONTACT = {
    "id": "0190a0c4-0000-7000-8000-000000000001",
    "first_name": "Ada",
    "last_name": "Lovelace",
    "phone_number": "+15551234567",
    "email": "ada@example.com",
    "company": None,
    "tags": ["vip"],
    "notes": None,
    "do_not_call": False,
    "do_not_call_reason": None,
    "created_at": "2026-11-22T15:04:05.123Z",
    "updated_at": "2026-11-22T15:04:05.123Z",
}


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


@dataclass
class Env:
    """A migrated database with the base settings of a test; builds rows and workers."""

    base: dict[str, Any]
    db: Database
    box: SecretBox
    workers: list[Worker] = field(default_factory=list)

    def settings(self, **overrides: Any) -> Settings:
        return Settings(**{**self.base, **overrides})

    async def worker(self, **overrides: Any) -> Worker:
        worker = Worker(self.settings(**overrides), self.db, secret_box=self.box)
        self.workers.append(worker)
        await worker.start()
        return worker

    async def account(self) -> str:
        return (await new_account(self.db)).id

    async def webhook(
        self,
        account_id: str,
        url: str,
        events: list[str] | None = None,
        *,
        is_active: bool = True,
        secret: str | None = None,
        previous_secret: str | None = None,
        previous_expires_at: datetime | None = None,
        failing_since: datetime | None = None,
    ) -> tuple[str, str]:
        webhook_id = ids.webhook_id()
        secret = secret or new_secret()
        now = utcnow()
        async with self.db.begin() as conn:
            await conn.execute(
                insert(webhooks).values(
                    id=webhook_id,
                    account_id=account_id,
                    url=url,
                    name=None,
                    events=events if events is not None else ["contact.created"],
                    is_active=is_active,
                    secret_enc=self.box.encrypt(secret),
                    previous_secret_enc=self.box.encrypt(previous_secret)
                    if previous_secret
                    else None,
                    previous_secret_expires_at=previous_expires_at,
                    disabled_reason=None,
                    failing_since=failing_since,
                    created_at=now,
                    updated_at=now,
                )
            )
        return webhook_id, secret

    async def event(
        self,
        account_id: str,
        event_type: str = "contact.created",
        data: Mapping[str, Any] | None = None,
        *,
        previous_attributes: Mapping[str, Any] | None = None,
        target_webhook_id: str | None = None,
        created_at: datetime | None = None,
        dispatched: bool = False,
    ) -> str:
        event_id = ids.event_id()
        async with self.db.begin() as conn:
            await conn.execute(
                insert(events).values(
                    id=event_id,
                    account_id=account_id,
                    type=event_type,
                    data=dict(data if data is not None else CONTACT),
                    previous_attributes=dict(previous_attributes)
                    if previous_attributes is not None
                    else None,
                    created_at=created_at or utcnow(),
                    dispatched=dispatched,
                    target_webhook_id=target_webhook_id,
                )
            )
        return event_id

    async def deliveries(self, **where: Any) -> list[Any]:
        stmt = select(deliveries).order_by(deliveries.c.id)
        for column, value in where.items():
            stmt = stmt.where(deliveries.c[column] == value)
        async with self.db.read() as conn:
            return list((await conn.execute(stmt)).all())

    async def attempts(self, delivery_id: str) -> list[Any]:
        async with self.db.read() as conn:
            stmt = (
                select(delivery_attempts)
                .where(delivery_attempts.c.delivery_id == delivery_id)
                .order_by(delivery_attempts.c.id)
            )
            return list((await conn.execute(stmt)).all())

    async def webhook_row(self, webhook_id: str) -> Any:
        async with self.db.read() as conn:
            return (await conn.execute(select(webhooks).where(webhooks.c.id == webhook_id))).first()

    async def delivery_where(self, predicate: Callable[[Any], bool], **where: Any) -> Any:
        """The first delivery matching ``predicate`` once there is one (waits)."""

        async def check() -> Any:
            return next((row for row in await self.deliveries(**where) if predicate(row)), None)

        return await eventually(check, what=f"a delivery matching {where}")

    async def set_delivery(self, delivery_id: str, **values: Any) -> None:
        async with self.db.begin() as conn:
            await conn.execute(
                update(deliveries).where(deliveries.c.id == delivery_id).values(**values)
            )


def ago(seconds: float) -> datetime:
    return utcnow() - timedelta(seconds=seconds)
