"""A webhook's identity: ``public_key`` (Ed25519 signing; its signing key is kept encrypted in
``secret_enc``), and ``auth_enc``/``auth_shown`` (OAuth2 client credentials or mTLS).

Plain ADD COLUMNs (and DROP COLUMNs down): no copy of the table on SQLite.

Revision ID: 0014_identity
Revises: 0013_calls
Create Date: 2026-12-09 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014_identity"
down_revision = "0013_calls"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("webhooks", sa.Column("public_key", sa.String(64), nullable=True))
    op.add_column("webhooks", sa.Column("auth_enc", sa.Text(), nullable=True))
    op.add_column("webhooks", sa.Column("auth_shown", Json, nullable=True))


def downgrade() -> None:
    op.drop_column("webhooks", "auth_shown")
    op.drop_column("webhooks", "auth_enc")
    op.drop_column("webhooks", "public_key")
