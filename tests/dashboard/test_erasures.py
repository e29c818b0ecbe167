"""Erasing a contact from the dashboard: the contact page's "Erase" action, its confirm step,
and the erasure's page following the job's progress."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy import select

from hookline.delivery.erasure import ErasureJob
from hookline.storage.db import Database
from hookline.storage.models import users
from tests.dashboard.conftest import Dash

CONTACT = {"first_name": "Erasmo", "last_name": "Quillfeather", "phone_number": "+14155550166"}


async def _account_id(db: Database, email: str) -> str:
    async with db.read() as conn:
        row = (await conn.execute(select(users.c.account_id).where(users.c.email == email))).one()
    return str(row.account_id)


async def test_erase_is_confirmed_then_its_progress_is_shown(
    signed_in: Dash, other_signed_in: Dash, app: FastAPI, db: Database
) -> None:
    created = await signed_in.post(
        "/dashboard/contacts", CONTACT, token_from="/dashboard/contacts/new"
    )
    path = created.headers["location"]
    assert f'href="{path}/erase"' in (await signed_in.get(path)).text

    confirm = await signed_in.get(f"{path}/erase")
    assert confirm.status_code == 200
    assert "Erase Erasmo Quillfeather everywhere?" in confirm.text
    assert (await other_signed_in.get(f"{path}/erase")).status_code == 404
    refused = await other_signed_in.post(f"{path}/erase", {}, token_from="/dashboard/contacts/new")
    assert refused.status_code == 404

    erased = await signed_in.post(f"{path}/erase", {}, token_from=f"{path}/erase")
    assert erased.status_code == 303
    erasure_path = erased.headers["location"]
    assert erasure_path.startswith("/dashboard/erasures/er_")
    assert (await signed_in.get(path)).status_code == 404
    pending = await signed_in.get(erasure_path)
    assert pending.status_code == 200 and "pending" in pending.text
    assert "Quillfeather" not in pending.text
    assert (await other_signed_in.get(erasure_path)).status_code == 404

    job = ErasureJob(db, app.state.secret_box, "wrk_dashboard_test")
    while await job.run_next():
        pass
    done = await signed_in.get(erasure_path)
    assert 'id="erasure-status"><span class="badge badge-done">done</span></dd>' in done.text
    assert "<dt>Events deleted</dt><dd>1</dd>" in done.text  # its contact.created
