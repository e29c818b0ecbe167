"""Dashboard fixtures: a cookie-keeping HTTP client per test on the shared in-process app.

The app (and its database, SQLite or PostgreSQL) comes from ``tests/conftest.py``; each test gets
its own client (so its own cookies, and its own client address: the throttles count per address,
in the database the whole session shares) and the default throttle policy.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from hookline.dashboard.throttle import Throttle

PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_counter = itertools.count()
_addresses = itertools.count(1)


def unique_email(label: str = "user") -> str:
    return f"{label}-{next(_counter)}-{uuid.uuid4().hex[:8]}@example.com"


def unique_address() -> str:
    """A client address no other client of this test session has (10.0.0.0/8, made up)."""
    n = next(_addresses)
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


def csrf_from(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "no CSRF field on the page"
    return match.group(1)


@dataclass
class Dash:
    """A person's browser, minus the rendering: keeps cookies, reads CSRF tokens from pages."""

    http: httpx.AsyncClient
    email: str = ""

    async def get(self, path: str) -> httpx.Response:
        return await self.http.get(path)

    async def post(
        self, path: str, data: Mapping[str, object], *, token_from: str
    ) -> httpx.Response:
        """Post ``data`` as a form with the CSRF token of the page at ``token_from``."""
        page = await self.http.get(token_from)
        assert page.status_code == 200, (token_from, page.status_code)
        return await self.http.post(path, data={**data, "csrf_token": csrf_from(page.text)})

    async def signup(self, email: str | None = None, password: str = PASSWORD) -> httpx.Response:
        self.email = email or unique_email()
        response = await self.post(
            "/dashboard/signup",
            {"email": self.email, "password": password, "password_confirm": password},
            token_from="/dashboard/signup",
        )
        assert response.status_code == 303, response.text
        return response

    async def login(self, email: str, password: str = PASSWORD) -> httpx.Response:
        return await self.post(
            "/dashboard/login",
            {"email": email, "password": password},
            token_from="/dashboard/login",
        )

    async def create_key(self, name: str = "test key", scopes: list[str] | None = None) -> str:
        data: dict[str, object] = {"name": name}
        if scopes is not None:
            data["scopes"] = scopes
        else:
            data["scopes"] = ["contacts:read", "contacts:write", "webhooks:read"]
        created = await self.post("/dashboard/keys", data, token_from="/dashboard/keys")
        assert created.status_code == 303, created.text
        page = await self.get("/dashboard/keys")
        match = re.search(r'id="shown-secret"[^>]*value="(hl_live_[A-Za-z0-9]+)"', page.text)
        assert match, "the new key is not on the page"
        return match.group(1)


async def new_dash(
    app: FastAPI, base_url: str = "http://hookline.test", address: str | None = None
) -> Dash:
    transport = httpx.ASGITransport(app=app, client=(address or unique_address(), 50000))
    return Dash(httpx.AsyncClient(transport=transport, base_url=base_url))


@pytest.fixture
async def dash(app: FastAPI) -> AsyncIterator[Dash]:
    app.state.dashboard_throttle = Throttle()
    client = await new_dash(app)
    async with client.http:
        yield client


@pytest.fixture
async def signed_in(dash: Dash) -> Dash:
    await dash.signup()
    return dash


@pytest.fixture
async def other_signed_in(app: FastAPI) -> AsyncIterator[Dash]:
    other = await new_dash(app)
    async with other.http:
        await other.signup()
        yield other
