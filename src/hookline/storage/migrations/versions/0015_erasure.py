"""``erasures``: a contact's erasure and the progress of the job that carries it out.

Revision ID: 0015_erasure
Revises: 0014_identity
Create Date: 2026-12-09 00:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0015_erasure"
down_revision = "0014_identity"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "erasures",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("contact_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("position", sa.String(length=255), nullable=True),
        sa.Column("call_ids", _json(), nullable=False),
        sa.Column("counts", _json(), nullable=False),
        sa.Column("received", _json(), nullable=False),
        sa.Column("notices", _json(), nullable=False),
        sa.Column("leased_by", sa.String(length=64), nullable=True),
        sa.Column("leased_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_erasures_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_erasures")),
    )
    op.create_index(
        op.f("ix_erasures_account_id_contact_id"), "erasures", ["account_id", "contact_id"]
    )
    op.create_index(
        "ix_erasures_unfinished",
        "erasures",
        ["created_at"],
        sqlite_where=sa.text("status <> 'done'"),
        postgresql_where=sa.text("status <> 'done'"),
    )


def downgrade() -> None:
    op.drop_table("erasures")
