"""Per-webhook due index for claims.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 17:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

PENDING = "status = 'pending'"


def upgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_deliveries_webhook_due",
            ["webhook_id", "next_attempt_at"],
            unique=False,
            sqlite_where=sa.text(PENDING),
            postgresql_where=sa.text(PENDING),
        )


def downgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_webhook_due")
