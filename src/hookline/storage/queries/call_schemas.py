"""The statements of call analysis schemas (``domain.call_schemas``)."""

from __future__ import annotations

from sqlalchemy import Integer, bindparam, func, select

from hookline.storage.models import call_analysis_schemas as schemas
from hookline.storage.queries.common import of_account
from hookline.storage.statements import Query

_COLUMNS = (schemas.c.version, schemas.c.schema, schemas.c.created_at)
CURRENT = Query(
    select(*_COLUMNS).where(of_account(schemas)).order_by(schemas.c.version.desc()).limit(1)
)
"""The account's current (highest) version, if any."""
BY_VERSION = Query(
    select(*_COLUMNS).where(
        of_account(schemas), schemas.c.version == bindparam("version", type_=Integer())
    )
)
LATEST_VERSION = Query(select(func.max(schemas.c.version)).where(of_account(schemas)))
INSERT = Query(schemas.insert().returning(*_COLUMNS))
"""A new version (every column); the caller holds the account's row (``accounts.LOCK``)."""
