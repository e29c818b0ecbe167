"""Alerts, recovery, statistics and tracing: events about a webhook and their trace context,
attempts by webhook and time, and the attempt rollups.

Revision ID: 0003_ops
Revises: people
Create Date: 2026-11-23 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_ops"
down_revision = "people"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("about_webhook_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("trace_context", sa.String(length=256), nullable=True))
    with op.batch_alter_table("delivery_attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("webhook_id", sa.String(length=64), nullable=True))
    # Attempts recorded before this migration: their webhook is their delivery's.
    op.execute(
        "UPDATE delivery_attempts SET webhook_id = (SELECT deliveries.webhook_id FROM deliveries "
        "WHERE deliveries.id = delivery_attempts.delivery_id)"
    )
    with op.batch_alter_table("delivery_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_delivery_attempts_webhook_id_started_at"),
            ["webhook_id", "started_at"],
            unique=False,
        )
    op.create_table(
        "attempt_rollups",
        sa.Column("webhook_id", sa.String(length=64), nullable=False),
        sa.Column("span", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("bucket_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("latency_bin", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_attempt_rollups_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "webhook_id",
            "span",
            "bucket_start",
            "status",
            "latency_bin",
            name=op.f("pk_attempt_rollups"),
        ),
    )
    with op.batch_alter_table("attempt_rollups", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_attempt_rollups_bucket_start"), ["bucket_start"], unique=False
        )


def downgrade() -> None:
    op.drop_table("attempt_rollups")
    with op.batch_alter_table("delivery_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_delivery_attempts_webhook_id_started_at"))
        batch_op.drop_column("webhook_id")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("trace_context")
        batch_op.drop_column("about_webhook_id")
