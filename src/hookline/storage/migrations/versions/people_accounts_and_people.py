"""Accounts and people: one-time links (invitations, password resets) and shared throttles.

Revision ID: people
Revises: 0003_idem
Create Date: 2026-11-23 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "people"
down_revision = "0003_idem"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_tokens",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_login_tokens_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_tokens")),
    )
    op.create_index(
        op.f("ix_login_tokens_account_id_email"), "login_tokens", ["account_id", "email"]
    )
    op.create_index(op.f("ix_login_tokens_expires_at"), "login_tokens", ["expires_at"])
    op.create_table(
        "auth_attempts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("address_key", sa.String(length=64), nullable=False),
        sa.Column("email_key", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_attempts")),
    )
    op.create_index(
        op.f("ix_auth_attempts_scope_address_key_created_at"),
        "auth_attempts",
        ["scope", "address_key", "created_at"],
    )
    op.create_index(
        op.f("ix_auth_attempts_scope_email_key_created_at"),
        "auth_attempts",
        ["scope", "email_key", "created_at"],
    )
    op.create_index(op.f("ix_auth_attempts_created_at"), "auth_attempts", ["created_at"])


def downgrade() -> None:
    op.drop_table("auth_attempts")
    op.drop_table("login_tokens")
