"""Contacts' do-not-call flag and its reason.

Revision ID: 0012_bulk
Revises: 0011_streams
Create Date: 2026-12-09 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_bulk"
down_revision = "0011_streams"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs: no table rebuild on SQLite.
    op.add_column(
        "contacts",
        sa.Column("do_not_call", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("contacts", sa.Column("do_not_call_reason", sa.String(length=200)))


def downgrade() -> None:
    op.drop_column("contacts", "do_not_call_reason")
    op.drop_column("contacts", "do_not_call")
