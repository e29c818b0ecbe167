"""Room on ``deliveries``' pages for the lease: ``fillfactor = 50`` on PostgreSQL.

A claim's lease sets ``leased_by``, ``leased_until`` and ``updated_at``, none of them indexed
nor in a partial index's predicate, so PostgreSQL can write it as a HOT update (no index entry)
when the row's page has room for the new version. The fan-out's INSERT of 500 rows filled its
pages, so ~78% of the leases were written to another page with an entry in each of the table's
five indexes. At 50 the INSERT leaves half of each page for them: in a 10,000-event drain 92%
of the leases were HOT, the claim's time a delivery 47 -> 27 µs and its WAL 846 -> 258 B
(docs/benchmarks.md, 182); drains ran 1.09-1.16x main's (184). Only ``deliveries``: 0007's
first form also set it on ``events`` and raised commit-to-receipt's p50 at a light load (115);
the event's numbering writes an indexed column, so no room makes it HOT. At a light load the
leases were HOT already (a round leases the rows it just wrote, on the last page, which has
room) and the half-empty pages cost PostgreSQL a few per cent more CPU per event, with the
p99 ~1 ms higher (185): the cost where PostgreSQL has room, the gain where it is the bound.

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
