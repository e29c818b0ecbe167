"""The receiver check's throttle: ``webhooks.conformance_at``, when its last run started.

A plain ADD COLUMN (and DROP COLUMN down): no copy of the table on SQLite.

Revision ID: 0009_outbound
Revises: 0008_lease_room
Create Date: 2026-12-08 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_outbound"
down_revision = "0008_lease_room"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "webhooks", sa.Column("conformance_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("webhooks", "conformance_at")
