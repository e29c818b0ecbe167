"""Webhook signing secrets at rest: encrypted with a key from ``HOOKLINE_SECRET_KEY``.

On SQLite, when the setting is unset, a key is generated once and kept beside the database file
(``<db>.key``, mode 0600), with a warning: losing it makes stored webhook secrets unreadable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from hookline.settings import Settings

log = logging.getLogger("hookline.crypto")


class SecretBox:
    """Encrypts and decrypts short secrets (Fernet: AES-128-CBC + HMAC-SHA256), and signs
    short values (HMAC-SHA256) with a key of its own derived from the same material."""

    def __init__(self, key_material: str) -> None:
        # Any string is accepted as key material; it is stretched to a Fernet key.
        digest = hashlib.sha256(key_material.encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))
        # A signature must never be usable as (or reveal) the encryption key: a separate key.
        self._signing_key = hashlib.sha256(b"hookline signing\0" + key_material.encode()).digest()

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken:
            raise ValueError("stored secret cannot be decrypted with HOOKLINE_SECRET_KEY") from None

    def sign(self, purpose: str, value: str) -> str:
        """The HMAC of ``value`` for ``purpose`` (URL-safe base64): a signature made for one
        purpose never verifies for another."""
        message = purpose.encode() + b"\0" + value.encode()
        mac = hmac.new(self._signing_key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def key_file_for(settings: Settings) -> Path | None:
    if settings.sqlite_path is None:
        return None
    return settings.sqlite_path.with_name(settings.sqlite_path.name + ".key")


def resolve_secret_key(settings: Settings) -> str:
    if settings.secret_key:
        return settings.secret_key
    key_file = key_file_for(settings)
    assert key_file is not None, "Settings refuses PostgreSQL without a secret key"
    if key_file.exists():
        return key_file.read_text().strip()
    key = base64.urlsafe_b64encode(os.urandom(32)).decode()
    key_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    log.warning(
        "HOOKLINE_SECRET_KEY is unset: generated one and stored it in %s; back it up with the "
        "database, or set HOOKLINE_SECRET_KEY",
        key_file,
    )
    return key
