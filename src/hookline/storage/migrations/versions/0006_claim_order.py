"""The per-webhook due index in the claim's full order: (webhook_id, next_attempt_at, id).

A claim takes each webhook's oldest deliveries by (next_attempt_at, id). With the index ending
at next_attempt_at, both databases read and sorted every due row of the webhook to pick a few
(on PostgreSQL a heap visit each, for the lease test): a claim's cost grew with the backlog,
~5 ms at 10,000 due rows. With id in the index, the scan stops after the rows it takes.

Revision ID: 0006_claim_order
Revises: 0005_circuit
Create Date: 2026-11-23 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_claim_order"
down_revision = "0005_circuit"
branch_labels = None
depends_on = None

PENDING = "status = 'pending'"
NAME = "ix_deliveries_webhook_due"


def _create(columns: list[str]) -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index(
            NAME,
            columns,
            unique=False,
            sqlite_where=sa.text(PENDING),
            postgresql_where=sa.text(PENDING),
        )


def _drop() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index(NAME)


def upgrade() -> None:
    _drop()
    _create(["webhook_id", "next_attempt_at", "id"])


def downgrade() -> None:
    _drop()
    _create(["webhook_id", "next_attempt_at"])
