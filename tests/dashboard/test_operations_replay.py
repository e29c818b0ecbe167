""" "Recover…" with filters: backfilling a new webhook with one contact's history, counted in
the confirm step before anything is queued."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select

from hookline import ids
from hookline.delivery import manager
from hookline.domain.events import record_event
from hookline.storage.db import Database
from hookline.storage.models import deliveries, users
from hookline.timeutil import utcnow
from tests.dashboard.conftest import Dash


async def _account_id(db: Database, email: str) -> str:
    async with db.read() as conn:
        row = (await conn.execute(select(users.c.account_id).where(users.c.email == email))).one()
    return str(row.account_id)


async def test_backfill_one_contacts_history_after_counting_it(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    ada, grace = ids.contact_id(), ids.contact_id()
    async with db.begin() as conn:
        for contact_id, name in ((ada, "Ada"), (grace, "Grace")):
            data = {"id": contact_id, "first_name": name}
            await record_event(conn, account_id, "contact.created", data)
    await manager.dispatch_events(db, now=utcnow())  # before the webhook: nobody gets them
    created = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        token_from="/dashboard/webhooks/new",
    )
    path = created.headers["location"]
    webhook_id = path.rsplit("/", 1)[1]

    form = await signed_in.get(f"{path}/recover")
    assert 'name="object_id"' in form.text and 'name="backfill"' in form.text
    since = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    plain = await signed_in.get(f"{path}/recover?since={since}")
    assert re.search(r'id="recover-count"><strong>0</strong> deliveries', plain.text)
    preview_url = f"{path}/recover?since={since}&object_id={ada}&backfill=on&statuses=missed"
    preview = await signed_in.get(preview_url)
    assert re.search(r'id="recover-count"><strong>1</strong> delivery', preview.text)
    assert f'name="object_id" value="{ada}"' in preview.text

    fields = {"since": since, "until": "", "object_id": ada, "backfill": "on"}
    done = await signed_in.post(
        f"{path}/recover", {**fields, "statuses": ["missed"]}, token_from=preview_url
    )
    assert done.status_code == 303
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(deliveries.c.event_id).where(deliveries.c.webhook_id == webhook_id)
            )
        ).all()
    assert len(rows) == 1

    bad = await signed_in.get(f"{path}/recover?since={since}&object_id=a%20b")
    assert bad.status_code == 422 and 'id="e-object_id"' in bad.text
