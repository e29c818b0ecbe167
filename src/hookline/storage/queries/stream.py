"""The reads of ``GET /v1/events/stream`` (``domain.stream``): events in commit order
(``stream_seq``, numbered by the delivery dispatcher)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, Select, bindparam, delete, func, select, update

from hookline.storage.lists import in_list
from hookline.storage.models import api_keys, event_streams, events
from hookline.storage.queries.common import of_account, owned
from hookline.storage.statements import Query, QueryShapes


def _highest() -> Select[Any]:
    return select(func.coalesce(func.max(events.c.stream_seq), 0))


LATEST_SEQ = Query(_highest())
"""The highest number handed out to anyone's event; 0 when none."""
LATEST_SEQ_OF_ACCOUNT = Query(_highest().where(of_account(events)))
"""The highest number of the account's events; 0 when none."""


SEQ_OF = Query(select(events.c.stream_seq).where(*owned(events)))
"""The number of one of the account's events (None: not numbered yet)."""
SEQ_OF_TYPES = Query(
    select(events.c.stream_seq).where(*owned(events), in_list(events.c.type, "types"))
)
"""``SEQ_OF``, if the event's type is in ``types`` (a list parameter)."""


def _after(with_types: bool) -> Select[Any]:
    # Targeted events (tests, examples) are for one webhook and never streamed.
    query = (
        select(
            events.c.id,
            events.c.type,
            events.c.created_at,
            events.c.data,
            events.c.previous_attributes,
            events.c.stream_seq,
        )
        .where(
            of_account(events),
            events.c.stream_seq > bindparam("after"),
            events.c.target_webhook_id.is_(None),
        )
        .order_by(events.c.stream_seq)
        .limit(bindparam("limit", type_=Integer()))
    )
    return query.where(in_list(events.c.type, "types")) if with_types else query


AFTER = QueryShapes(_after)
"""``AFTER.get(bool(types))``: the account's next ``limit`` events numbered above ``after``, in
commit order, of the listed ``types`` (a list parameter) when there is a list."""


# The open streams of each key (``event_streams``), counted whatever process serves them.
_EXPIRES = event_streams.c.expires_at.type

LIVE_KEY_FOR_UPDATE = Query(
    select(api_keys.c.id).where(*owned(api_keys), api_keys.c.revoked_at.is_(None)).with_for_update()
)
"""The account's key ``id`` if it is live, locked: a key's streams are counted one opening at
a time (SQLite's writer is one at a time already)."""

DROP_EXPIRED = Query(
    delete(event_streams).where(event_streams.c.expires_at < bindparam("now", type_=_EXPIRES))
)
"""Forgets the streams whose process stopped renewing them before ``now``."""

COUNT_OF_KEY = Query(
    select(func.count())
    .select_from(event_streams)
    .where(of_account(event_streams), event_streams.c.key_id == bindparam("key_id"))
)

OPEN = Query(event_streams.insert())
"""A new open stream (every column)."""

RENEW = Query(
    update(event_streams)
    .where(in_list(event_streams.c.id, "ids"))
    .values(expires_at=bindparam("expires_at", type_=_EXPIRES))
    .returning(event_streams.c.id)
)
"""Pushes ``expires_at`` of the streams ``ids`` (a list parameter); returns those still held."""

CLOSE = Query(delete(event_streams).where(event_streams.c.id == bindparam("id")))

LIVE_KEYS = Query(
    select(api_keys.c.id).where(in_list(api_keys.c.id, "key_ids"), api_keys.c.revoked_at.is_(None))
)
"""Which of ``key_ids`` (a list parameter; keys of any account, a process's open streams) are
still live: neither revoked nor deleted."""
