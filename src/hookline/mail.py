"""Outgoing mail: invitations, password resets and alerts to the people of an account.

With ``HOOKLINE_SMTP_URL`` and ``HOOKLINE_MAIL_FROM`` set, :func:`send` delivers through that
server (``smtp://`` plain, ``smtp+starttls://`` upgraded with STARTTLS, ``smtps://`` TLS from the
first byte; certificates are verified against the system's CAs or ``HOOKLINE_SMTP_CA_FILE``).
Without them a single-machine install still works: a mail that carries a one-time link
(an invitation, a password reset) is replaced by one plain line on stderr for the operator,
naming the address and the link, the only place the link is ever written; any other mail is
written to the log as a warning. Passwords never appear in a mail, so never there either.

The standard library's ``smtplib`` runs in a worker thread (``asyncio.to_thread``): sending never
blocks the event loop, and there is no extra dependency for a few mails an hour.
"""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
import sys
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from hookline.settings import Settings, SmtpServer
from hookline.storage.connector import Connection
from hookline.storage.queries import users as user_queries

log = logging.getLogger("hookline.mail")

# Seconds for connecting and for each SMTP command: a stuck server must not hold a thread forever.
SMTP_TIMEOUT = 15.0

NOT_CONFIGURED_NOTICE = (
    "Mail is not configured on this server (HOOKLINE_SMTP_URL and HOOKLINE_MAIL_FROM), so "
    "invitation and password reset links are printed in the server's console instead of being "
    "mailed."
)


class MailError(Exception):
    """The SMTP server could not be reached or refused the mail (the message names no secret)."""


def is_configured(settings: Settings) -> bool:
    return settings.mail_configured


async def send(
    settings: Settings,
    to: Sequence[str],
    subject: str,
    text: str,
    *,
    console_line: str | None = None,
) -> None:
    """Send one plain-text mail to each address in ``to`` (each gets its own copy, so nobody
    sees the others' addresses). Without SMTP settings ``console_line`` is printed for the
    operator instead (a mail with a one-time link), else the mails are logged.

    Raises :class:`MailError` when the server is unreachable or refuses a recipient.
    """
    recipients = list(dict.fromkeys(to))  # in order, without repeats
    if not recipients:
        return
    server = settings.smtp_server
    if server is None or settings.mail_from is None:
        if console_line is not None:
            print_for_operator(console_line)
            return
        for address in recipients:
            log.warning(
                "mail not sent (no HOOKLINE_SMTP_URL / HOOKLINE_MAIL_FROM); its text follows",
                extra={"mail_to": address, "mail_subject": subject, "mail_text": text},
            )
        return
    messages = [_message(settings.mail_from, address, subject, text) for address in recipients]
    await asyncio.to_thread(_deliver, server, settings, messages)
    log.info("mail sent", extra={"mail_to": recipients, "mail_subject": subject})


def print_for_operator(line: str) -> None:
    """One plain line on stderr, outside the JSON log, for whoever runs the server; characters
    that could steer a terminal are shown as ``?``."""
    shown = "".join(char if char.isprintable() else "?" for char in line)
    sys.stderr.write(f"hookline: {shown}\n")
    sys.stderr.flush()


async def account_user_emails(conn: Connection, account_id: str) -> list[str]:
    """The e-mail address of every dashboard user of the account, oldest user first."""
    rows = await conn.execute(user_queries.EMAILS, {"account_id": account_id})
    return [row.email for row in rows]


def _message(sender: str, address: str, subject: str, text: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = address
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip("> ") or None)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies, please
    message.set_content(text)
    return message


def _tls_context(settings: Settings) -> ssl.SSLContext:
    cafile = str(settings.smtp_ca_file) if settings.smtp_ca_file is not None else None
    return ssl.create_default_context(cafile=cafile)


def _connect(server: SmtpServer, settings: Settings) -> smtplib.SMTP:
    if server.implicit_tls:
        return smtplib.SMTP_SSL(
            server.host, server.port, timeout=SMTP_TIMEOUT, context=_tls_context(settings)
        )
    client = smtplib.SMTP(server.host, server.port, timeout=SMTP_TIMEOUT)
    if server.starttls:
        try:
            client.starttls(context=_tls_context(settings))
        except BaseException:
            client.close()
            raise
    return client


def _deliver(server: SmtpServer, settings: Settings, messages: list[EmailMessage]) -> None:
    """Runs in a worker thread: one connection for all the messages."""
    try:
        with _connect(server, settings) as client:
            if server.username is not None:
                client.login(server.username, server.password or "")
            for message in messages:
                client.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:
        # The reason only (e.g. "Connection refused", "535 authentication failed"); smtplib's
        # exceptions never carry the password.
        raise MailError(
            f"mail to {server.host}:{server.port} failed: {type(exc).__name__}: {exc}"
        ) from None
