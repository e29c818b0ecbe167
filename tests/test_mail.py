"""Mail against a real SMTP server (aiosmtpd): plain, STARTTLS and SMTPS with a verified
certificate, authentication, failures, the log fallback, and an event loop that keeps running."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from hookline import mail
from hookline.dashboard import users
from hookline.settings import Settings
from hookline.storage.db import Database
from tests.conftest import make_settings
from tests.dashboard.conftest import unique_email
from tests.support.server import free_port
from tests.support.smtp import MailCatcher, TlsFiles, running_smtp, tls_files

SENDER = "hookline <alerts@hookline.test>"


def mail_settings(tmp_path: Path, smtp_url: str, **extra: object) -> Settings:
    return make_settings(
        f"sqlite:///{tmp_path / 'unused.db'}", smtp_url=smtp_url, mail_from=SENDER, **extra
    )


@pytest.fixture
def tls(tmp_path: Path) -> TlsFiles:
    return tls_files(tmp_path)


async def test_plain_smtp_gives_each_recipient_its_own_copy(tmp_path: Path) -> None:
    with running_smtp() as smtp:
        settings = mail_settings(tmp_path, smtp.url)
        await mail.send(settings, ["a@example.com", "b@example.com", "a@example.com"], "Hi", "Body")
        first = await smtp.catcher.wait_for("a@example.com")
        second = await smtp.catcher.wait_for("b@example.com")
    assert len(smtp.catcher.messages) == 2  # the repeated address got one mail
    for received, address in ((first[0], "a@example.com"), (second[0], "b@example.com")):
        assert received.envelope_to == [address]
        assert received.message["To"] == address
        assert received.message["From"] == SENDER
        assert received.message["Subject"] == "Hi"
        assert received.message["Auto-Submitted"] == "auto-generated"
        assert received.message["Message-ID"].endswith("@hookline.test>")
        assert received.text.strip() == "Body"
        assert received.envelope_from == "alerts@hookline.test"


async def test_starttls_with_a_password_over_a_verified_certificate(
    tmp_path: Path, tls: TlsFiles
) -> None:
    with running_smtp(mode="starttls", tls=tls, credentials=("mailer", "s3cret:p@ss")) as smtp:
        url = smtp.url.replace("s3cret:p@ss", "s3cret%3Ap%40ss")  # percent-encoded in the URL
        settings = mail_settings(tmp_path, url, smtp_ca_file=tls.ca_file)
        await mail.send(settings, ["ops@example.com"], "Alert", "A webhook was disabled.")
        (received,) = await smtp.catcher.wait_for("ops@example.com")
    assert received.over_tls
    assert received.authenticated_as == "mailer"


async def test_smtps_verifies_the_certificate(tmp_path: Path, tls: TlsFiles) -> None:
    with running_smtp(mode="smtps", tls=tls) as smtp:
        settings = mail_settings(tmp_path, smtp.url, smtp_ca_file=tls.ca_file)
        await mail.send(settings, ["ops@example.com"], "Alert", "text")
        assert await smtp.catcher.wait_for("ops@example.com")
        # Without the CA file the system's CAs are used, and they do not know this one.
        untrusting = mail_settings(tmp_path, smtp.url)
        with pytest.raises(mail.MailError, match="CERTIFICATE_VERIFY_FAILED"):
            await mail.send(untrusting, ["ops@example.com"], "Alert", "text")


async def test_starttls_refuses_an_untrusted_certificate(tmp_path: Path, tls: TlsFiles) -> None:
    (tmp_path / "other").mkdir()
    other_ca = tls_files(tmp_path / "other")
    with running_smtp(mode="starttls", tls=tls) as smtp:
        settings = mail_settings(tmp_path, smtp.url, smtp_ca_file=other_ca.ca_file)
        with pytest.raises(mail.MailError, match="CERTIFICATE_VERIFY_FAILED"):
            await mail.send(settings, ["ops@example.com"], "Alert", "text")
    assert smtp.catcher.messages == []


async def test_a_wrong_password_is_a_mail_error_that_names_no_password(
    tmp_path: Path, tls: TlsFiles
) -> None:
    with running_smtp(mode="starttls", tls=tls, credentials=("mailer", "right-one")) as smtp:
        url = smtp.url.replace("right-one", "wrong-one")
        settings = mail_settings(tmp_path, url, smtp_ca_file=tls.ca_file)
        with pytest.raises(mail.MailError) as failed:
            await mail.send(settings, ["ops@example.com"], "Alert", "text")
    assert "535" in str(failed.value) or "Authentication" in str(failed.value)
    assert "wrong-one" not in str(failed.value) and "wrong-one" not in repr(settings)
    assert smtp.catcher.messages == []


async def test_an_unreachable_server_is_a_mail_error(tmp_path: Path) -> None:
    settings = mail_settings(tmp_path, f"smtp://127.0.0.1:{free_port()}")
    with pytest.raises(mail.MailError, match="refused"):
        await mail.send(settings, ["ops@example.com"], "Alert", "text")


async def test_sending_does_not_block_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def slow_data(self: MailCatcher, *args: object) -> str:
        await asyncio.sleep(0.5)  # in the SMTP server's own thread and loop
        return "250 OK"

    monkeypatch.setattr(MailCatcher, "handle_DATA", slow_data)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with running_smtp() as smtp:
        settings = mail_settings(tmp_path, smtp.url)
        counting = asyncio.create_task(ticker())
        started = time.monotonic()
        await mail.send(settings, ["ops@example.com"], "Alert", "text")
        elapsed = time.monotonic() - started
        counting.cancel()
    assert elapsed >= 0.5
    assert ticks >= 20, ticks  # the loop kept running while the server took its time


async def test_without_smtp_the_mail_goes_to_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(f"sqlite:///{tmp_path / 'unused.db'}")
    assert not mail.is_configured(settings)
    with caplog.at_level(logging.WARNING, logger="hookline.mail"):
        await mail.send(settings, ["ops@example.com"], "Reset", "https://x.test/reset/abc")
    (record,) = [r for r in caplog.records if r.name == "hookline.mail"]
    assert record.mail_to == "ops@example.com"  # type: ignore[attr-defined]
    assert record.mail_subject == "Reset"  # type: ignore[attr-defined]
    assert record.mail_text == "https://x.test/reset/abc"  # type: ignore[attr-defined]
    # Only the URL is not enough: mail needs a sender too.
    half = make_settings(f"sqlite:///{tmp_path / 'unused.db'}", smtp_url="smtp://127.0.0.1:1")
    assert not mail.is_configured(half)


async def test_without_smtp_a_console_line_replaces_the_mail_and_its_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(f"sqlite:///{tmp_path / 'unused.db'}")
    line = "reset link for ops@example.com: https://x.test/reset/abc \x1b[2Jcleared\r(1 hour)"
    with caplog.at_level(logging.DEBUG, logger="hookline.mail"):
        await mail.send(settings, ["ops@example.com"], "Reset", "the text", console_line=line)
    assert [r for r in caplog.records if r.name == "hookline.mail"] == []
    printed = capsys.readouterr().err
    assert printed == "hookline: reset link for ops@example.com: https://x.test/reset/abc " \
        "?[2Jcleared?(1 hour)\n"  # fmt: skip


async def test_with_smtp_the_console_line_is_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_smtp() as smtp:
        settings = mail_settings(tmp_path, smtp.url)
        await mail.send(settings, ["ops@example.com"], "Reset", "the text", console_line="secret")
        (received,) = await smtp.catcher.wait_for("ops@example.com")
    assert received.text.strip() == "the text" and "secret" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("smtp_url", "http://mail.example.com", "must start with smtp://"),
        ("smtp_url", "smtp://user:pw@mail.example.com", "only over smtp+starttls"),
        ("smtp_url", "smtp://mail.example.com:99999", "invalid port"),
        ("smtp_url", "smtps://", "names no host"),
        ("smtp_url", "smtp://mail.example.com/path?x=1", "nothing after"),
        ("mail_from", "not an address", "must be an e-mail address"),
        ("mail_from", "a@example.com\r\nBcc: victim@example.com", "must be an e-mail address"),
        ("smtp_ca_file", "/no/such/ca.pem", "no such file"),
        ("public_url", "ftp://example.com", "http(s) URL"),
    ],
)
def test_mail_settings_are_validated(
    tmp_path: Path, variable: str, value: str, reason: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(reason)) as refused:
        make_settings(f"sqlite:///{tmp_path / 'unused.db'}", **{variable: value})
    assert "pw@" not in str(refused.value)  # a refused URL's password is not echoed


def test_a_smtp_password_stays_out_of_the_settings_repr(tmp_path: Path) -> None:
    settings = mail_settings(tmp_path, "smtps://mailer:hunter2hunter2@mail.example.com")
    assert "hunter2hunter2" not in repr(settings) and "hunter2hunter2" not in str(settings)
    server = settings.smtp_server
    assert server is not None and server.password == "hunter2hunter2"
    assert (server.host, server.port, server.implicit_tls) == ("mail.example.com", 465, True)


async def test_account_user_emails_lists_only_that_account(db: Database) -> None:
    hash_ = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"  # never verified here
    emails = [unique_email("team"), unique_email("team")]
    async with db.begin() as conn:
        first = await users.create_user_with_account(conn, emails[0], hash_)
        await users.create_user(conn, first.account_id, emails[1], hash_)
        await users.create_user_with_account(conn, unique_email("stranger"), hash_)
    async with db.read() as conn:
        assert await mail.account_user_emails(conn, first.account_id) == emails
