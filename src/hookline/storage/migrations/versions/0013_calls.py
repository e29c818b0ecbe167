"""Calls end exactly once: account settings, call deadlines, call analysis schemas.

``accounts.retention_days`` and ``accounts.max_call_seconds`` (constant defaults: no table is
rebuilt on SQLite); ``calls.deadline_at``, filled for the calls in progress from their start and
the default ``max_call_seconds``, so the sweeper ends those too; ``call_analysis_schemas``.

Revision ID: 0013_calls
Revises: 0012_bulk
Create Date: 2026-12-09 00:00:00
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision = "0013_calls"
down_revision = "0012_bulk"
branch_labels = None
depends_on = None

DEFAULT_MAX_CALL_SECONDS = 3600


def upgrade() -> None:
    op.add_column(
        "accounts",
        sa.Column("retention_days", sa.Integer(), nullable=False, server_default=sa.text("30")),
    )
    op.add_column(
        "accounts",
        sa.Column("max_call_seconds", sa.Integer(), nullable=False, server_default=sa.text("3600")),
    )
    op.add_column("calls", sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        op.f("ix_calls_call_status_deadline_at"), "calls", ["call_status", "deadline_at"]
    )
    _set_deadlines_of_calls_in_progress()
    op.create_table(
        "call_analysis_schemas",
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column(
            "schema",
            sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_call_analysis_schemas_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("account_id", "version", name=op.f("pk_call_analysis_schemas")),
    )


def _set_deadlines_of_calls_in_progress() -> None:
    # In Python, one row at a time: the same on both databases, and calls in progress are few.
    calls = sa.table(
        "calls",
        sa.column("id", sa.String()),
        sa.column("call_status", sa.String()),
        sa.column("call_started_at", sa.DateTime(timezone=True)),
        sa.column("deadline_at", sa.DateTime(timezone=True)),
    )
    bind = op.get_bind()
    started = bind.execute(
        sa.select(calls.c.id, calls.c.call_started_at).where(calls.c.call_status == "in-progress")
    ).all()
    for call_id, started_at in started:
        bind.execute(
            calls.update()
            .where(calls.c.id == call_id)
            .values(deadline_at=started_at + timedelta(seconds=DEFAULT_MAX_CALL_SECONDS))
        )


def downgrade() -> None:
    op.drop_table("call_analysis_schemas")
    op.drop_index(op.f("ix_calls_call_status_deadline_at"), table_name="calls")
    op.drop_column("calls", "deadline_at")
    op.drop_column("accounts", "max_call_seconds")
    op.drop_column("accounts", "retention_days")
