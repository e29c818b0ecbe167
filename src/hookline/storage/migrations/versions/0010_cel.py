"""``webhooks.filter_errors``: evaluations of a webhook's CEL filter cut by the limits.

An added column with a constant default: no table is rebuilt on SQLite.

Revision ID: 0010_cel
Revises: 0009_outbound
Create Date: 2026-12-08 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_cel"
down_revision = "0009_outbound"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "webhooks",
        sa.Column("filter_errors", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    op.drop_column("webhooks", "filter_errors")
