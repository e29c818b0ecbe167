"""What a receiver's identity checks need: a real OAuth2 token endpoint and TLS contexts from
a test CA (``trustme``), all on 127.0.0.1.

    async with TokenServer() as tokens:
        ... auth = {"type": "oauth2_client_credentials", "token_url": tokens.url, ...}
        tokens.issued            # every token handed out, in order
        tokens.is_valid(token)   # issued and not revoked

    pki = Pki()                  # a CA, the receiver's server certificate, a client's
    Receiver(tls=pki.server_context(require_client=True))
"""

from __future__ import annotations

import base64
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import unquote

import trustme
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

CLIENT_ID = "hookline-client"
CLIENT_SECRET = "s3cret:with/odd chars"


class TokenServer:
    """A client-credentials token endpoint (RFC 6749 4.4, client_secret_basic) over http on
    127.0.0.1, issuing ``tok-1``, ``tok-2``, ... with ``expires_in``."""

    def __init__(self, *, expires_in: int | None = 3600) -> None:
        self.expires_in = expires_in
        self.issued: list[str] = []
        self.revoked: set[str] = set()
        self.forms: list[dict[str, str]] = []
        self.refusals = 0
        self.answer: tuple[int, Mapping[str, Any]] | None = None
        """A fixed answer (status, JSON) instead of a token, e.g. ``(401, {"error": ...})``."""
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/oauth/token"

    def is_valid(self, token: str) -> bool:
        return token in self.issued and token not in self.revoked

    async def _token(self, request: web.Request) -> web.Response:
        form = {key: str(value) for key, value in (await request.post()).items()}
        self.forms.append(form)
        if self.answer is not None:
            return web.json_response(self.answer[1], status=self.answer[0])
        if not _basic_matches(request.headers.get("Authorization", "")):
            self.refusals += 1
            return web.json_response({"error": "invalid_client"}, status=401)
        if form.get("grant_type") != "client_credentials":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        token = f"tok-{len(self.issued) + 1}"
        self.issued.append(token)
        body: dict[str, Any] = {"access_token": token, "token_type": "Bearer"}
        if self.expires_in is not None:
            body["expires_in"] = self.expires_in
        return web.json_response(body)

    async def __aenter__(self) -> TokenServer:
        app = web.Application()
        app.router.add_post("/oauth/token", self._token)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._runner = runner
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(runner, sock).start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def _basic_matches(header: str) -> bool:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return False
    client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
    return unquote(client_id) == CLIENT_ID and unquote(secret) == CLIENT_SECRET


def bearer_of(headers: Mapping[str, str]) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token if scheme.lower() == "bearer" else None


def oauth2_auth(tokens: TokenServer, **fields: Any) -> dict[str, Any]:
    return {
        "type": "oauth2_client_credentials",
        "token_url": tokens.url,
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        **fields,
    }


@dataclass
class Pki:
    """A test CA, the receiver's server certificate for 127.0.0.1, and a client certificate
    the CA signed (PEM text, as a webhook's ``auth`` takes them)."""

    ca: trustme.CA = field(default_factory=trustme.CA)

    def __post_init__(self) -> None:
        self.server = self.ca.issue_cert("127.0.0.1")
        self.client = self.ca.issue_cert("client.example")

    @property
    def ca_pem(self) -> str:
        return self.ca.cert_pem.bytes().decode()

    @property
    def client_certificate(self) -> str:
        return self.client.cert_chain_pems[0].bytes().decode()

    @property
    def client_key(self) -> str:
        return self.client.private_key_pem.bytes().decode()

    def mtls_auth(self, **fields: Any) -> dict[str, Any]:
        return {
            "type": "mtls",
            "certificate": self.client_certificate,
            "private_key": self.client_key,
            "ca": self.ca_pem,
            **fields,
        }

    def server_context(self, *, require_client: bool) -> ssl.SSLContext:
        """The receiver's TLS: its certificate; with ``require_client``, a handshake without a
        client certificate this CA signed fails."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.server.configure_cert(context)
        if require_client:
            context.verify_mode = ssl.CERT_REQUIRED
            self.ca.configure_trust(context)
        return context


def verify_v1a(public_key: str, body: bytes, headers: Mapping[str, str]) -> bool:
    """Standard Webhooks' asymmetric verification, from its text: the signed content is
    ``{webhook-id}.{webhook-timestamp}.{body}``; ``webhook-signature`` holds space-separated
    ``v1a,<base64 Ed25519 signature>`` entries; ``whpk_`` is base64 of the raw public key. True
    when any ``v1a`` entry verifies (``cryptography``'s Ed25519)."""
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key.removeprefix("whpk_")))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    for entry in headers["webhook-signature"].split(" "):
        version, _, signature = entry.partition(",")
        if version != "v1a":
            continue
        try:
            key.verify(base64.b64decode(signature), content)
        except InvalidSignature:
            continue
        return True
    return False
