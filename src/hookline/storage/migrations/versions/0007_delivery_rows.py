"""Fewer writes per delivery on PostgreSQL: room on the pages of deliveries and events, and
one index of deliveries fewer.

A delivery row is written three times (the fan-out's INSERT, the claim's lease, the recorder's
outcome). The lease sets only unindexed columns (``leased_by``, ``leased_until``,
``updated_at``), so it can be a HOT update, one that writes no index entry, but only when the
row's page has room for the new version: at the default fillfactor (100) the fan-out fills
every page, and about three leases in four wrote an entry into each of the table's six indexes.
At fillfactor 50 (a claim leases the rows of a page together, so each needs room for one more
version) 93% of them are HOT (commentary 106). An event is updated once, by the dispatch (its
numbering: ``dispatched`` and ``stream_seq``, both indexed, so never HOT); with room on its
page the new version stays there, and PostgreSQL then logs only the bytes that changed, not
the event's JSON again. ``fillfactor`` applies to pages written from now on (no table is
rewritten); SQLite has no such setting.

``ix_deliveries_created_at`` serves no query (retention deletes events by their own
``created_at`` and the deliveries go by the cascade, through ``ix_deliveries_event_id``), yet
every INSERT and every non-HOT UPDATE of a delivery wrote an entry into it. Dropped on both
databases: an index only, so SQLite rebuilds no table (a rebuild of ``deliveries`` would
cascade deletes to ``delivery_attempts``: commentary 76 (a)).

Revision ID: 0007_delivery_rows
Revises: 0006_claim_order
Create Date: 2026-11-28 01:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_delivery_rows"
down_revision = "0006_claim_order"
branch_labels = None
depends_on = None

FILLFACTOR = 50
ROOMY = ("deliveries", "events")
CREATED_AT = "ix_deliveries_created_at"


def _on_postgres() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def upgrade() -> None:
    # op.drop_index, not batch mode: on SQLite a plain DROP INDEX, no copy of the table.
    op.drop_index(CREATED_AT, table_name="deliveries")
    if _on_postgres():
        for table in ROOMY:
            op.execute(sa.text(f"ALTER TABLE {table} SET (fillfactor = {FILLFACTOR})"))


def downgrade() -> None:
    if _on_postgres():
        for table in ROOMY:
            op.execute(sa.text(f"ALTER TABLE {table} RESET (fillfactor)"))
    op.create_index(CREATED_AT, "deliveries", ["created_at"], unique=False)
