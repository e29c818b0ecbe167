"""The statements of API keys (``domain.keys``)."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update

from hookline.storage.models import api_keys
from hookline.storage.queries.common import of_account, owned, this_row
from hookline.storage.statements import Query, SharedLookup

INSERT = Query(api_keys.insert())
"""A new key (every column)."""

LIVE_BY_HASH = SharedLookup(
    select(api_keys.c.id, api_keys.c.account_id, api_keys.c.scopes, api_keys.c.last_used_at).where(
        api_keys.c.revoked_at.is_(None)
    ),
    api_keys.c.key_hash,
)
"""What authenticating a request needs of its key (``key_hash``): every request runs it, so on
PostgreSQL concurrent requests' look-ups share a statement (``SharedLookup``)."""

TOUCH = Query(
    update(api_keys)
    .where(this_row(api_keys))
    .values(last_used_at=bindparam("last_used_at", type_=api_keys.c.last_used_at.type))
)
"""Sets ``last_used_at`` of key ``b_id``."""

OF_ACCOUNT = Query(select(api_keys).where(of_account(api_keys)).order_by(api_keys.c.id))

REVOKE = Query(
    update(api_keys)
    .where(*owned(api_keys, prefix="b_"), api_keys.c.revoked_at.is_(None))
    .values(revoked_at=bindparam("revoked_at", type_=api_keys.c.revoked_at.type))
)
"""Revokes the account's live key ``b_id`` (``b_account_id``) at ``revoked_at``; a row count
of 0: no such live key."""
