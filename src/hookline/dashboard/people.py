"""The people of an account: invitations (from ``hookline users add`` and the Team page) and
password resets, and the mails that carry their one-time links.

Used by the dashboard's pages and by the CLI, so nothing here knows about HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass

from hookline.dashboard import links, users
from hookline.dashboard.web import PREFIX
from hookline.settings import Settings
from hookline.storage.connector import Connection
from hookline.storage.queries import accounts as account_queries


class NoSuchAccount(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Mail:
    to: str
    subject: str
    text: str
    console_line: str
    """What the operator's console shows instead when no mail server is configured."""
    link: str | None = None
    """The one-time link the mail carries, if it carries a usable one."""


async def account_name(conn: Connection, account_id: str) -> str | None:
    name = await conn.scalar(account_queries.NAME_OF, {"account_id": account_id})
    return None if name is None else str(name)


async def invite(conn: Connection, settings: Settings, account_id: str, email: str) -> Mail:
    """The mail with a one-time link (24 h) where ``email`` sets a password and joins the
    account. ``email`` must be canonical (users.canonical_email).

    An address that has a login already gets a link too (it will not work) and a mail saying
    why, so the inviter sees the same answer and the same pending invitation either way: the
    Team page does not tell who uses hookline elsewhere. The CLI checks first and says so.
    """
    name = await account_name(conn, account_id)
    if name is None:
        raise NoSuchAccount(account_id)
    token = await links.issue(conn, links.INVITE, account_id, email)
    link = links.url_for(settings, links.INVITE, token)
    if await users.find_user(conn, email) is not None:
        return _already_a_user_mail(settings, email, name)
    text = (
        f'You have been invited to the hookline account "{name}".\n\n'
        "Choose your password here to join it (the link works once, for 24 hours):\n\n"
        f"{link}\n\n"
        "If you did not expect this invitation, ignore this mail: nothing happens without you.\n"
    )
    console_line = (
        f'invitation link for {email} to join "{name}": {link} '
        f"(no SMTP configured; valid {links.validity(links.INVITE)})"
    )
    return Mail(email, f"You're invited to hookline ({name})", text, console_line, link)


def _already_a_user_mail(settings: Settings, email: str, name: str) -> Mail:
    text = (
        "Someone invited this address to another hookline account, but it already has a "
        "hookline login, and one address belongs to one account.\n\n"
        "If you want to join, ask them to invite another address of yours. If you did not "
        f"expect this, ignore this mail. Log in at {settings.public_url}{PREFIX}/login\n"
    )
    console_line = (
        f'invitation for {email} to join "{name}" not usable: that address already has a '
        "hookline login (no SMTP configured)"
    )
    return Mail(email, "An invitation to hookline", text, console_line)


async def reset_mail(conn: Connection, settings: Settings, email: str) -> Mail | None:
    """The reset mail with a one-time link (1 h), or None when no user has that e-mail."""
    user = await users.find_user(conn, email)
    if user is None:
        return None
    token = await links.issue(conn, links.RESET, user.account_id, email)
    link = links.url_for(settings, links.RESET, token)
    text = (
        "Someone (we hope you) asked to reset the password of your hookline login.\n\n"
        "Choose a new password here (the link works once, for one hour):\n\n"
        f"{link}\n\n"
        "If you did not ask, ignore this mail: your password stays as it is.\n"
    )
    console_line = (
        f"reset link for {email}: {link} (no SMTP configured; valid {links.validity(links.RESET)})"
    )
    return Mail(email, "Reset your hookline password", text, console_line, link)
