"""Fixtures for the limits tests: a real ``redis-server`` and apps with their own settings."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from hookline.app import create_app
from hookline.settings import Settings
from tests.conftest import Account, new_account
from tests.support.server import free_port

INSTALL_HINT = "redis-server is missing: run scripts/install-system-deps.sh (make test does)"


@dataclass(frozen=True)
class RedisServer:
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError("redis-server did not start listening")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(INSTALL_HINT)
    workdir = tempfile.mkdtemp(prefix="hookline-redis-")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_port(port, process)
        yield RedisServer(port)
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class RunningApp:
    app: FastAPI
    client: httpx.AsyncClient

    async def account(self, name: str = "limits") -> Account:
        return await new_account(self.app.state.db, name)


@asynccontextmanager
async def running_app(settings: Settings) -> AsyncIterator[RunningApp]:
    """An in-process app with its own settings, lifespan run, behind an httpx client."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
            yield RunningApp(app, c)


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'hookline.db'}"
