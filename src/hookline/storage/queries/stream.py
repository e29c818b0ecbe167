"""The reads of ``GET /v1/events/stream`` (``domain.stream``): events in commit order
(``stream_seq``, numbered by the delivery dispatcher)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, Select, bindparam, func, select

from hookline.storage.lists import in_list
from hookline.storage.models import events
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
