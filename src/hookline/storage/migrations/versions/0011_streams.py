"""``event_streams``: the open event streams of each key, counted across processes.

Revision ID: 0011_streams
Revises: 0010_cel
Create Date: 2026-12-08 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_streams"
down_revision = "0010_cel"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "event_streams",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_event_streams_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["api_keys.id"],
            name=op.f("fk_event_streams_key_id_api_keys"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_streams")),
    )
    op.create_index(op.f("ix_event_streams_key_id"), "event_streams", ["key_id"])
    op.create_index(op.f("ix_event_streams_expires_at"), "event_streams", ["expires_at"])


def downgrade() -> None:
    op.drop_table("event_streams")
