"""Receivers: call analysis, webhook headers, filter and rate limit, the stream's order.

Revision ID: 0004_receivers
Revises: 0003_ops
Create Date: 2026-11-23 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004_receivers"
down_revision = "0003_ops"
branch_labels = None
depends_on = None

RATE_LIMITED = "rate_limit IS NOT NULL"
Json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("analysis", Json, nullable=True))
        batch_op.add_column(sa.Column("assistant_id", sa.String(length=200), nullable=True))
        batch_op.create_index(
            "ix_calls_account_id_assistant_id_id", ["account_id", "assistant_id", "id"]
        )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stream_seq", sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_events_account_id_stream_seq", ["account_id", "stream_seq"])
        batch_op.create_index("ix_events_stream_seq", ["stream_seq"])
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("headers_enc", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("header_names", Json, nullable=True))
        batch_op.add_column(sa.Column("filter", sa.String(length=1024), nullable=True))
        batch_op.add_column(sa.Column("rate_limit", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("rate_starts", Json, nullable=True))
        batch_op.create_index(
            "ix_webhooks_rate_limited",
            ["id"],
            sqlite_where=sa.text(RATE_LIMITED),
            postgresql_where=sa.text(RATE_LIMITED),
        )


def downgrade() -> None:
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_index("ix_webhooks_rate_limited")
        for column in ("rate_starts", "rate_limit", "filter", "header_names", "headers_enc"):
            batch_op.drop_column(column)
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_stream_seq")
        batch_op.drop_index("ix_events_account_id_stream_seq")
        batch_op.drop_column("stream_seq")
    with op.batch_alter_table("calls", schema=None) as batch_op:
        batch_op.drop_index("ix_calls_account_id_assistant_id_id")
        batch_op.drop_column("assistant_id")
        batch_op.drop_column("analysis")
