"""One index of deliveries fewer: ``ix_deliveries_created_at``, which no query reads.

Retention deletes events by their own ``created_at`` and the deliveries go by the cascade,
through ``ix_deliveries_event_id``; yet every INSERT and every non-HOT UPDATE of a delivery
wrote an entry into this index. Dropped on both databases: an index only, so SQLite rebuilds no
table (a rebuild of ``deliveries`` would cascade deletes to ``delivery_attempts``).

Revision ID: 0007_delivery_rows
Revises: 0006_claim_order
Create Date: 2026-11-28 01:30:00
"""

from __future__ import annotations

from alembic import op

revision = "0007_delivery_rows"
down_revision = "0006_claim_order"
branch_labels = None
depends_on = None

CREATED_AT = "ix_deliveries_created_at"


def upgrade() -> None:
    # op.drop_index, not batch mode: on SQLite a plain DROP INDEX, no copy of the table.
    op.drop_index(CREATED_AT, table_name="deliveries")


def downgrade() -> None:
    op.create_index(CREATED_AT, "deliveries", ["created_at"], unique=False)
