"""Less data per webhook and per account: a webhook's ``redact`` paths and ``payload``
(``full`` or ``thin``).

Plain ADD COLUMNs (and DROP COLUMNs down): no copy of the table on SQLite.

Revision ID: 0016_retention
Revises: 0015_erasure
Create Date: 2026-12-10 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016_retention"
down_revision = "0015_erasure"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("webhooks", sa.Column("redact", Json, nullable=True))
    op.add_column(
        "webhooks",
        sa.Column("payload", sa.String(8), nullable=False, server_default=sa.text("'full'")),
    )


def downgrade() -> None:
    op.drop_column("webhooks", "payload")
    op.drop_column("webhooks", "redact")
