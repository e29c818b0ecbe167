"""The peer: the ``POST /contacts`` a user would write in an afternoon with FastAPI and aiosqlite.

A pydantic model for the body, one aiosqlite connection, the contact and an outbox row inserted in
one transaction, the contact returned with 201. No authentication, no rate limit, no idempotency,
no phone or e-mail validation, no metrics or access log: what hookline adds is what the ratio
against this peer prices. It runs at ``synchronous=FULL`` in WAL mode, the durability hookline
acknowledges with (an answered write survives power loss), so the comparison is like for like.

    python -m bench.peer --port 8002 --database /tmp/peer.db
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import aiosqlite
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from hookline.cli import server_options

SCHEMA = """
CREATE TABLE IF NOT EXISTS contacts (
    id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT, phone_number TEXT NOT NULL,
    email TEXT, company TEXT, tags TEXT NOT NULL, notes TEXT, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, payload TEXT NOT NULL
);
"""


class ContactIn(BaseModel):
    first_name: str
    last_name: str | None = None
    phone_number: str
    email: str | None = None
    company: str | None = None
    tags: list[str] = []
    notes: str | None = None


class ContactOut(ContactIn):
    id: str
    created_at: str


def make_app(database: str) -> FastAPI:
    state: dict[str, aiosqlite.Connection] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        conn = await aiosqlite.connect(database)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=FULL")
        await conn.executescript(SCHEMA)
        state["conn"] = conn
        yield
        await conn.close()

    app = FastAPI(lifespan=lifespan)

    @app.post("/contacts", status_code=201)
    async def create_contact(body: ContactIn) -> ContactOut:
        contact = ContactOut(
            id=str(uuid.uuid4()), created_at=datetime.now(UTC).isoformat(), **body.model_dump()
        )
        conn = state["conn"]
        await conn.execute(
            "INSERT INTO contacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                contact.id,
                contact.first_name,
                contact.last_name,
                contact.phone_number,
                contact.email,
                contact.company,
                json.dumps(contact.tags),
                contact.notes,
                contact.created_at,
            ),
        )
        await conn.execute(
            "INSERT INTO outbox (type, payload) VALUES (?, ?)",
            ("contact.created", contact.model_dump_json()),
        )
        await conn.commit()
        return contact

    @app.get("/ready")
    async def ready() -> dict[str, bool]:
        return {"ok": True}

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database", required=True)
    args = parser.parse_args()
    # The same server settings as `hookline serve`, so only the application differs.
    uvicorn.run(make_app(args.database), host="127.0.0.1", port=args.port, **server_options())


if __name__ == "__main__":
    main()
