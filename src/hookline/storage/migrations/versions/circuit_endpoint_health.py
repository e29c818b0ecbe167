"""Per-endpoint circuit: a webhook's run of failed attempts and when it may next be probed.

Revision ID: 0005_circuit
Revises: 0004_receivers
Create Date: 2026-11-23 17:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_circuit"
down_revision = "0004_receivers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "consecutive_failures", sa.Integer(), server_default=sa.text("0"), nullable=False
            )
        )
        batch_op.add_column(sa.Column("next_probe_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_column("next_probe_at")
        batch_op.drop_column("consecutive_failures")
