"""A live ``hookline serve`` (on a fresh SQLite file) and an API key, for the clients' smoke
tests; and where the clients live."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import TEST_SECRET_KEY, Account
from tests.support.server import run_cli, running_server

REPOSITORY = Path(__file__).resolve().parents[2]
CLIENTS = REPOSITORY / "clients"


@dataclass(frozen=True)
class Live:
    base_url: str
    account: Account


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    directory = tmp_path_factory.mktemp("clients")
    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{directory / 'hookline.db'}",
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        # The smoke tests' webhook points at 127.0.0.1 (nothing is delivered: no worker).
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    }
    migrated = run_cli("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    created = run_cli("accounts", "create", "clients", env=env)
    assert created.returncode == 0, created.stderr
    with running_server(env, worker=False) as server:
        output = json.loads(created.stdout)
        yield Live(server.base_url, Account(output["account_id"], output["api_key"]))
