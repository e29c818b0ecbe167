"""A real SMTP server for tests (aiosmtpd, in its own thread) that keeps what it receives.

    with running_smtp() as smtp:                      # smtp://127.0.0.1:PORT
    with running_smtp(tls=tls_files(tmp_path), mode="starttls", credentials=("u", "p")) as smtp:

``tls_files`` makes a throwaway CA and a certificate it signed for 127.0.0.1 and localhost, so the
client verifies a real chain (against the CA file, as ``HOOKLINE_SMTP_CA_FILE`` says).
"""

from __future__ import annotations

import email
import email.policy
import ipaddress
import re
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.server import free_port
from tests.support.waiting import eventually

Mode = Literal["plain", "starttls", "smtps"]
_LINK = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class TlsFiles:
    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def tls_files(directory: Path) -> TlsFiles:
    """A new CA and a server certificate it signed (for 127.0.0.1 and localhost), as PEM files."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("hookline test CA"))
        .issuer_name(_name("hookline test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@dataclass
class Received:
    envelope_from: str
    envelope_to: list[str]
    message: EmailMessage
    authenticated_as: str | None
    over_tls: bool

    @property
    def text(self) -> str:
        body = self.message.get_body(("plain",))
        assert body is not None
        return str(body.get_content())

    @property
    def links(self) -> list[str]:
        return _LINK.findall(self.text)


@dataclass
class MailCatcher:
    """The aiosmtpd handler: keeps every accepted message."""

    messages: list[Received] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        message = email.message_from_bytes(content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        auth = session.auth_data
        login = auth.login.decode() if isinstance(auth, LoginPassword) else None
        received = Received(
            envelope_from=str(envelope.mail_from),
            envelope_to=list(envelope.rcpt_tos),
            message=message,
            authenticated_as=login,
            over_tls=session.ssl is not None,
        )
        with self._lock:
            self.messages.append(received)
        return "250 OK"

    def to(self, address: str) -> list[Received]:
        with self._lock:
            return [m for m in self.messages if address in m.envelope_to]

    async def wait_for(self, address: str, count: int = 1, within: float = 10.0) -> list[Received]:
        """The messages to ``address``, once there are ``count`` (polled: the server runs in
        another thread; the caller's loop keeps running, e.g. to send the mail)."""

        async def probe() -> list[Received]:
            return self.to(address)

        return await eventually(
            probe,
            lambda found: len(found) >= count,
            within=within,
        )


@dataclass
class SmtpServer:
    url: str
    catcher: MailCatcher
    port: int


class _Authenticator:
    def __init__(self, username: str, password: str) -> None:
        self.username = username.encode()
        self.password = password.encode()

    def __call__(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            self.username,
            self.password,
        )
        return AuthResult(success=ok, handled=False, auth_data=data if ok else None)


@contextmanager
def running_smtp(
    *,
    mode: Mode = "plain",
    tls: TlsFiles | None = None,
    credentials: tuple[str, str] | None = None,
) -> Iterator[SmtpServer]:
    catcher = MailCatcher()
    port = free_port()
    options: dict[str, Any] = {}
    if mode != "plain":
        assert tls is not None, "STARTTLS and SMTPS need tls_files()"
    if mode == "starttls":
        assert tls is not None
        options.update(tls_context=tls.server_context(), require_starttls=True)
    if credentials is not None:
        options.update(
            authenticator=_Authenticator(*credentials), auth_required=True, auth_require_tls=True
        )
    controller = Controller(
        catcher,
        hostname="127.0.0.1",
        port=port,
        ssl_context=tls.server_context() if mode == "smtps" and tls else None,
        server_hostname="localhost",
        **options,
    )
    controller.start()
    scheme = {"plain": "smtp", "starttls": "smtp+starttls", "smtps": "smtps"}[mode]
    userinfo = f"{credentials[0]}:{credentials[1]}@" if credentials else ""
    try:
        yield SmtpServer(f"{scheme}://{userinfo}127.0.0.1:{port}", catcher, port)
    finally:
        controller.stop()
