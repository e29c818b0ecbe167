"""Forget stored idempotent responses that hold a secret in clear.

Before this revision the Idempotency-Key layer stored response bodies verbatim for 24 h, so a
webhook's creation or rotation left its signing secret (``whsec_...``) readable in
``idempotency_keys``. Stored bodies are now encrypted; the rows written in clear with a secret are
deleted (a retry of such a request with its key runs again), the others stay readable until they
expire.

Revision ID: 0003_idem
Revises: 0002
Create Date: 2026-11-23 11:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_idem"
down_revision = "0002"
branch_labels = None
depends_on = None

_HOLDS_A_SECRET = sa.text(
    "DELETE FROM idempotency_keys WHERE response_body LIKE '%whsec!_%' ESCAPE '!' "
    "OR response_body LIKE '%hl!_live!_%' ESCAPE '!'"
)


def upgrade() -> None:
    op.execute(_HOLDS_A_SECRET)


def downgrade() -> None:
    """Nothing to restore: the deleted rows only served retries."""
