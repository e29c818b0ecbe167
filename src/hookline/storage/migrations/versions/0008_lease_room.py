"""Room on ``deliveries``' pages for the lease: ``fillfactor = 50`` on PostgreSQL.

A claim's lease sets ``leased_by``, ``leased_until`` and ``updated_at``, none of them indexed
nor in a partial index's predicate, so PostgreSQL can write it as a HOT update (no index entry)
when the row's page has room for the new version. The fan-out's INSERTs fill their pages, so
most leases were written to another page with an entry in each of the table's indexes. At 50
the INSERT leaves half of each page for them (docs/performance.md, "HOT leases"). Only
``deliveries``: on ``events`` it raised commit-to-receipt at a light load, and the event's
numbering writes an indexed column, so no room makes it HOT.

Storage parameters only: pages written from now on get the room, nothing is rewritten, and
SQLite has no such setting (nothing to do there).

Revision ID: 0008_lease_room
Revises: 0007_delivery_rows
Create Date: 2026-11-28 11:40:00
"""

from __future__ import annotations

from alembic import op

revision = "0008_lease_room"
down_revision = "0007_delivery_rows"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE deliveries SET (fillfactor = 50)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE deliveries RESET (fillfactor)")
