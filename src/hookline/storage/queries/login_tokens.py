"""The statements of one-time links: invitations and password resets (``dashboard.links``)."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, select

from hookline.storage.models import login_tokens
from hookline.storage.statements import Query

INSERT = Query(login_tokens.insert())
"""A new link (every column)."""

_LIVE = login_tokens.c.expires_at > bindparam("now")
_OF_PURPOSE = login_tokens.c.purpose == bindparam("purpose")

LIVE = Query(select(login_tokens).where(login_tokens.c.id == bindparam("id"), _OF_PURPOSE, _LIVE))
"""Link ``id`` (the token's hash) of this ``purpose``, unless it had expired at ``now``."""

PENDING = Query(
    select(login_tokens.c.email, login_tokens.c.expires_at)
    .where(login_tokens.c.account_id == bindparam("account_id"), _OF_PURPOSE, _LIVE)
    .order_by(login_tokens.c.created_at)
)
"""The account's live links of this ``purpose`` (email, expires_at), oldest first."""

DELETE = Query(delete(login_tokens).where(login_tokens.c.id == bindparam("id")))
DELETE_EXPIRED = Query(delete(login_tokens).where(login_tokens.c.expires_at <= bindparam("now")))
"""Every link (of anyone) expired at ``now``."""
FORGET = Query(
    delete(login_tokens).where(
        _OF_PURPOSE,
        login_tokens.c.account_id == bindparam("account_id"),
        login_tokens.c.email == bindparam("email"),
    )
)
"""Every link of this ``purpose`` for ``email`` in the account."""
