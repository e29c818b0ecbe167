"""The API's statements of webhook subscriptions (``domain.webhooks``); the delivery engine's
are in ``storage.queries.deliveries``."""

from __future__ import annotations

from sqlalchemy import Update, bindparam, delete, func, select, update

from hookline.storage.models import webhooks
from hookline.storage.queries.common import column_values, of_account, owned, this_row
from hookline.storage.statements import Query, QueryShapes

INSERT = Query(webhooks.insert().returning(*webhooks.c))
"""A new subscription (every column), returned as stored."""

COUNT_OF_ACCOUNT = Query(select(func.count()).select_from(webhooks).where(of_account(webhooks)))

OF_ACCOUNT = Query(select(webhooks).where(of_account(webhooks)).order_by(webhooks.c.id))
"""Every subscription of the account, oldest first."""

BY_ID = Query(select(webhooks).where(*owned(webhooks)))
BY_ID_FOR_UPDATE = Query(select(webhooks).where(*owned(webhooks)).with_for_update())

DELETE = Query(delete(webhooks).where(*owned(webhooks)))
"""Deletes one of the account's subscriptions; a row count of 0: none."""


def _update(columns: frozenset[str]) -> Update:
    return (
        update(webhooks)
        .where(this_row(webhooks))
        .values(column_values(webhooks, columns))
        .returning(*webhooks.c)
    )


UPDATE = QueryShapes(_update)
"""``UPDATE.get(frozenset(columns))``: sets those columns of subscription ``b_id`` and returns
it; one statement per set of columns."""

ADD_FILTER_ERRORS = Query(
    update(webhooks)
    .where(webhooks.c.id == bindparam("webhook_id"))
    .values(filter_errors=webhooks.c.filter_errors + bindparam("cut"))
)
"""The fan-out's evaluations of a webhook's filter that the limits cut: ``cut`` more."""
